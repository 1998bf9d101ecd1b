"""The README's commands and tutorial are run as written: the fenced blocks are copied out of
README.md (nothing here duplicates them) and run in order in an empty folder.

* The first block is the project's two entry commands, ``make demo`` and ``make test``. ``make demo``
  runs (in a folder holding links to the Makefile, the scenarios and this virtualenv, with the
  virtualenv's set-up stamp marked up to date: the test run already installed it). ``make test`` is
  skipped by name: it runs this test suite, which cannot run itself.
* A YAML block whose first line is ``# save as: PATH`` is saved to PATH (the tutorial's scenarios).
* Every other ``sh`` or ``python`` block is preceded by ``<!-- readme-test: run -->`` (run here)
  or ``<!-- readme-test: not run (why) -->``: a new block without either fails, so none is
  forgotten.

Also: the generated blocks (CLI reference, gallery table) equal what ``analyzer.docgen``
generates now, the Commands table lists exactly the CLI's commands, the gallery pictures exist
and stay small, and every notebook is listed.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from analyzer import docgen

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
RUN, NOT_RUN = "<!-- readme-test: run -->", re.compile(r"^<!-- readme-test: not run \(.+\) -->$")
SKIPPED_BY_NAME = ("make test",)   # runs this very test suite
#: a picture budget: "a few hundred KB in total"
GALLERY_MAX_BYTES = 600_000


def blocks(text: str) -> list[dict]:
    """Fenced code blocks in order: info string, body, the marker line just before the fence."""
    out, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^(\s*)```(\S*)\s*$", line)
        if m:
            indent, info, body = m.group(1), m.group(2), []
            j = i + 1
            while not lines[j].startswith(indent + "```"):
                body.append(lines[j][len(indent):])
                j += 1
            before = next((lines[k].strip() for k in range(i - 1, -1, -1) if lines[k].strip()), "")
            out.append({"info": info, "body": "\n".join(body) + "\n", "marker": before, "line": i + 1})
            i = j
        i += 1
    return out


TEXT = README.read_text(encoding="utf-8")
BLOCKS = blocks(TEXT)


def _command(line: str) -> str:
    return line.split("#", 1)[0].strip()


def test_readme_starts_with_the_two_commands():
    first = BLOCKS[0]
    assert TEXT.startswith("# Wargame balance analyzer\n\n```sh\nmake demo")
    assert first["info"] == "sh"
    assert [_command(line) for line in first["body"].splitlines()] == ["make demo", "make test"]


def test_every_command_block_is_marked_run_or_not_run():
    unmarked = [b["line"] for b in BLOCKS[1:] if b["info"] in ("sh", "bash", "console", "python")
                and b["marker"] != RUN and not NOT_RUN.match(b["marker"])]
    assert not unmarked, (f"README.md code blocks at lines {unmarked} carry no marker: put '{RUN}' (run by "
                          f"tests/test_readme.py) or '<!-- readme-test: not run (why) -->' on the line before")
    assert any(b["marker"] == RUN for b in BLOCKS), "no block is marked to run"


def test_generated_blocks_are_current():
    assert docgen.readme_text(TEXT) == TEXT, \
        "README.md's generated blocks are stale: run `make docs` (python -m analyzer.docgen docs)"


def test_commands_table_lists_every_cli_command():
    section = TEXT.split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\| `analyzer ([a-z][a-z-]*)", section, flags=re.M)
    assert sorted(listed) == sorted(docgen.cli_commands()), \
        "the Commands table and the CLI disagree: add or remove its rows"


def test_games_table_lists_every_game_and_question():
    from analyzer.core.questions import games_with_questions, questions_of
    section = TEXT.split("\n## Games\n", 1)[1].split("\n## ", 1)[0]
    listed = {}
    for row in re.findall(r"^\| `([a-z_0-9]+)` \| ([^|]*) \|", section, flags=re.M):
        listed[row[0]] = sorted(re.findall(r"`([a-z_0-9]+)`", row[1]))
    assert listed == {g: sorted(q.name for q in questions_of(g)) for g in games_with_questions()}, \
        "the Games table and the question registry disagree"


def test_every_scenario_in_the_readme_validates(tmp_path):
    """A YAML block naming a game and a question is a scenario: it must load and compile."""
    import yaml

    from analyzer.run import runner
    from analyzer.core import scenario
    checked = 0
    for block in BLOCKS:
        if block["info"] != "yaml":
            continue
        doc = yaml.safe_load(block["body"])
        if not (isinstance(doc, dict) and "game" in doc and "question" in doc):
            continue
        path = tmp_path / f"readme_line_{block['line']}.yaml"
        path.write_text(block["body"], encoding="utf-8")
        sc = scenario.load(path)
        for point in sc.points:
            runner.prepare_point(sc, point)
        checked += 1
    assert checked >= 4


def test_gallery_pictures_exist_are_referenced_and_small():
    names = [g.name for g in docgen.GALLERY]
    on_disk = sorted(p.name for p in docgen.GALLERY_DIR.glob("*.png"))
    assert on_disk == sorted(names), "docs/gallery/ differs from analyzer.docgen.GALLERY: run `make gallery`"
    for name in names:
        assert f"(docs/gallery/{name})" in TEXT
    total = sum((docgen.GALLERY_DIR / n).stat().st_size for n in names)
    assert total <= GALLERY_MAX_BYTES, f"gallery pictures take {total:,} bytes"


def test_every_notebook_is_listed():
    for nb in docgen.notebooks():
        assert f"(notebooks/{nb.name})" in TEXT, f"{nb.name} is not listed in the README"


def _sandbox(tmp_path: Path) -> Path:
    """An empty folder in which ``make demo`` finds the Makefile, the scenarios and this
    virtualenv (links), and the tutorial's relative paths and ``results/`` land."""
    work = tmp_path / "readme"
    work.mkdir()
    for name in ("Makefile", "pyproject.toml", "scenarios"):
        (work / name).symlink_to(ROOT / name)
    (work / ".venv").symlink_to(Path(sys.executable).parent.parent)
    return work


@pytest.mark.slow     # every README block, ~70 s
def test_readme_commands_and_tutorial_run_as_written(tmp_path):
    work = _sandbox(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("ANALYZER_QUICK",)}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    # `make` as written, with the virtualenv's set-up step (already done by this test run) marked up to date
    prelude = "set -euo pipefail\nmake() { command make --no-print-directory -o .venv/.installed \"$@\"; }\n"
    ran, skipped, saved = [], [], []
    for i, block in enumerate(BLOCKS):
        body = block["body"]
        if block["info"] == "yaml" and body.startswith("# save as: "):
            target = work / body.splitlines()[0].removeprefix("# save as: ").strip()
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(body, encoding="utf-8")
            saved.append(target.relative_to(work).as_posix())
            continue
        if not (i == 0 or block["marker"] == RUN):
            continue
        if block["info"] in ("sh", "bash"):
            kept = []
            for line in body.splitlines():
                if _command(line) in SKIPPED_BY_NAME:
                    skipped.append(_command(line))
                else:
                    kept.append(line)
            cmd = ["bash", "-c", prelude + "\n".join(kept) + "\n"]
        elif block["info"] == "python":
            cmd = [sys.executable, "-c", body]
        else:
            pytest.fail(f"README.md line {block['line']}: cannot run a '{block['info']}' block")
        res = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=900)
        assert res.returncode == 0, (f"README.md block at line {block['line']} failed ({res.returncode}):\n"
                                     f"{body}\n--- stdout\n{res.stdout[-3000:]}\n--- stderr\n{res.stderr[-3000:]}")
        ran.append(block["line"])
    assert skipped == list(SKIPPED_BY_NAME), skipped
    assert saved, "no '# save as:' block: the tutorial writes no scenario"
    assert len(ran) >= 2
    # what the commands say they write
    assert list((work / "results").glob("attack_ad_grid/*/points.parquet")), "make demo wrote no run folder"
    for name in ("broadside", "broadside_sweep"):
        assert list((work / "results" / name).glob("*/report.html")), f"no run folder for {name}"
    assert list((work / "results").glob("broadside-vs-broadside_linked/*/comparison.json"))
