"""``docs/scenarios.md`` is generated from the scenario model and the question registry
(``python -m analyzer.docgen docs``, ``make docs``): the committed file must equal what the code
generates now, and the generated text must cover every game, question, parameter (type, default,
placeholder default) and rule option (every reading, the default marked)."""
from analyzer import docgen
from analyzer.outputs.catalog import catalog
from analyzer.core.scenario import ScenarioFile


def _section(text: str, game: str, question: str) -> str:
    head = f"### `{game}` / `{question}`"
    assert head in text, f"no section {head}"
    return text.split(head, 1)[1].split("\n### ", 1)[0]


def _row(section: str, first_cell: str) -> str:
    rows = [line for line in section.splitlines() if line.startswith(f"| {first_cell} |")]
    assert len(rows) == 1, f"{first_cell}: {len(rows)} rows"
    return rows[0]


def test_committed_scenarios_md_is_current():
    committed = docgen.SCENARIOS_MD.read_text(encoding="utf-8")
    assert committed == docgen.scenarios_markdown(), \
        "docs/scenarios.md is stale: regenerate it with `make docs` (python -m analyzer.docgen docs)"


def test_every_game_question_parameter_and_rule_option_is_listed():
    text = docgen.scenarios_markdown()
    doc = catalog()
    assert doc, "the registry lists no game"
    for key in ScenarioFile.model_fields:
        assert f"| `{key}` |" in text, f"top-level key {key} missing"
    n_placeholder_defaults = 0
    for game, questions in doc.items():
        assert f"\n## `{game}`\n" in text
        for q in questions:
            section = _section(text, game, q["question"])
            assert ("exact mode: yes" in section) == q["exact"]
            for p in q["params"]:
                row = _row(section, f"`{p['path']}`")
                assert p["type"].replace("|", "\\|") in row
                if p["placeholder"]:
                    n_placeholder_defaults += 1
                    assert "| yes: " in row, row
                else:
                    assert "| yes: " not in row, row
            for o in q["rule_options"]:
                row = _row(section, f"`rules.{o['name']}`")
                for value in o["values"]:
                    shown = f"**`{value}`**" if value == o["default"] else f"`{value}`"
                    assert shown in row, (o["name"], value)
    assert n_placeholder_defaults > 0, "no placeholder default found: the column would be untested"


def test_the_staleness_check_notices_a_changed_file(tmp_path, monkeypatch):
    copy = tmp_path / "scenarios.md"
    copy.write_text(docgen.scenarios_markdown(), encoding="utf-8")
    monkeypatch.setattr(docgen, "SCENARIOS_MD", copy)
    assert copy not in docgen.stale()
    copy.write_text(copy.read_text(encoding="utf-8").replace("| `seed` |", "| `seed (old)` |"), encoding="utf-8")
    assert copy in docgen.stale()
