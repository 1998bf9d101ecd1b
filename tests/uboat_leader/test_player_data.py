"""Issue 27, the player's data path: a player who owns the game enters their copy's procedures
and tables as data (scenarios/uboat_leader/player_copy/) and reaches a ``strict: true`` run.
Rule modules become the player's through their data block's plain ``procedure:``
(docs/models/uboat_leader.md §8); ``analyzer data check DIR`` lists what is left."""
import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from analyzer import api
from analyzer.cli.app import app
from analyzer.core import scenario as scenario_mod
from analyzer.core.gamedata import is_wrapper
from analyzer.games.uboat_leader.campaign import CAMPAIGN_PLACEHOLDER_MODULES
from analyzer.games.uboat_leader.rules import PLACEHOLDER_MODULES
from analyzer.run.runner import StrictRefused, prepare_point

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "scenarios" / "uboat_leader"
COPY = SHIPPED / "player_copy"
cli = CliRunner()


def _plain(x):
    """Every ``{ph: v, ..}`` / ``{ex: v, ..}`` wrapper replaced by ``v``."""
    if is_wrapper(x):
        return _plain(x["ph"] if "ph" in x else x["ex"])
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_plain(v) for v in x]
    return x


def _write(path: Path, doc) -> None:
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")


def _filled_copy(tmp_path: Path) -> Path:
    """player_copy with every wrapper written plainly (the shipped values as made-up 'printed'
    ones) and ``strict: true``."""
    mine = tmp_path / "mine"
    shutil.copytree(COPY, mine)
    for f in mine.rglob("*.yaml"):
        doc = yaml.safe_load(f.read_text(encoding="utf-8"))
        if isinstance(doc, dict) and "game" in doc:
            doc["strict"] = True
        _write(f, _plain(doc))
    return mine


def _points(path: Path):
    sc = scenario_mod.load(path)
    return sc, sc.points[0]


def _data_check(folder: Path):
    res = cli.invoke(app, ["data", "check", str(folder), "--json"])
    return res, (json.loads(res.stdout) if res.exit_code in (0, 1) else None)


def test_player_copy_data_is_a_faithful_copy_of_the_shipped_files():
    """New: player_copy/data and campaigns stay byte-identical to the shipped files of the same
    path (nothing checked this before: the procedure keys are applied to both)."""
    for f in sorted(p for p in COPY.rglob("*.yaml") if p.name != "my_campaign.yaml"):
        rel = f.relative_to(COPY)
        assert f.read_bytes() == (SHIPPED / rel).read_bytes(), rel


def test_a_fully_filled_copy_runs_strict_and_lists_no_placeholder(tmp_path):
    """(a) Used to be impossible: whatever the data, the rule modules (rules.uboat_attack ...,
    campaign_reload, promotion) were listed and strict: true refused every U-Boat Leader run.
    Now a copy with every {ph}/{ex} written plainly (procedure keys included) runs my_campaign.yaml
    under strict: true to completion, and its summary lists no placeholder."""
    mine = _filled_copy(tmp_path)
    sc = scenario_mod.load(mine / "my_campaign.yaml", trials=500)
    assert sc.spec.strict
    run_dir, summary = api.run_to_folder(sc, tmp_path / "results", threads=1, formats=())
    assert summary["placeholders"] == [], summary["placeholders"]
    doc = json.loads((run_dir / "summary.json").read_text())
    assert doc["placeholders"] == []
    notes = " ".join(str(n) for n in doc.get("notes", [])) + json.dumps(doc["points"])
    assert "none of them a placeholder" in notes


def test_data_check_lists_what_strict_refuses_on_the_shipped_copy_and_nothing_on_a_filled_one(tmp_path):
    """(b) New command: on the shipped player_copy ``analyzer data check`` exits 1 and its
    scenario section lists exactly the paths strict: true refuses for my_campaign.yaml
    (prepare_point's refusal), its file section every {ph} of every data file; on the filled
    copy it exits 0."""
    res, doc = _data_check(COPY)
    assert res.exit_code == 1, res.output
    sc, point = _points(COPY / "my_campaign.yaml")
    with pytest.raises(StrictRefused) as refusal:
        prepare_point(sc, point, strict=True)
    refused = {(ph.path, ph.source) for ph in refusal.value.refused}
    (scenario,) = doc["scenarios"]
    assert scenario["file"] == "my_campaign.yaml"
    assert {(b["path"], b["source"]) for b in scenario["blocking"]} == refused
    assert {"rules.uboat_attack", "rules.promotion", "campaign.durations.short.patrols"} <= {p for p, _ in refused}
    from analyzer.core.gamedata import unwrap
    for f in doc["data_files"]:
        _, found = unwrap(yaml.safe_load((COPY / f["file"]).read_text(encoding="utf-8")))
        assert [p["path"] for p in f["placeholders"]] == [ph.path for ph in found if not ph.is_example], f["file"]
    listed = {p["path"] for f in doc["data_files"] for p in f["placeholders"]}
    assert "combat.uboat_attack_module.procedure" in listed
    assert doc["blocked"] and doc["counts"]["scenarios_blocked"] == 1

    mine = _filled_copy(tmp_path)
    res, doc = _data_check(mine)
    assert res.exit_code == 0, res.output
    assert not doc["blocked"] and doc["scenarios"][0]["blocking"] == []
    assert all(f["counts"]["placeholders"] == 0 for f in doc["data_files"])
    text = cli.invoke(app, ["data", "check", str(mine)])
    assert text.exit_code == 0 and "nothing blocks strict: true" in text.output


def test_data_check_errors_exit_2(tmp_path):
    """New command: a folder that is not there, or a malformed data file, is an error (exit 2)."""
    res = cli.invoke(app, ["data", "check", str(tmp_path / "nope")])
    assert res.exit_code == 2 and "error:" in res.output
    (tmp_path / "bad.yaml").write_text("a: [1, 2\n")
    res = cli.invoke(app, ["data", "check", str(tmp_path)])
    assert res.exit_code == 2 and "malformed YAML" in res.output


def _set_procedure(folder: Path, block: str, value) -> None:
    f = folder / "data" / "combat.yaml"
    doc = yaml.safe_load(f.read_text(encoding="utf-8"))
    doc["combat"][block]["procedure"] = value
    _write(f, doc)


def test_a_plain_procedure_other_than_the_selected_option_is_still_listed_and_says_so(tmp_path):
    """(c) New: a block describing another option value than the run selects keeps the module
    listed (it used to be listed whatever the data), with 'your data describes X; the run selects Y'."""
    mine = _filled_copy(tmp_path)
    _set_procedure(mine, "escort_movement_module", "toward_detected")
    sc, point = _points(mine / "my_campaign.yaml")
    with pytest.raises(StrictRefused) as refusal:
        prepare_point(sc, point)
    (ph,) = refusal.value.refused
    assert ph.path == "rules.escort_movement" and ph.value == "toward_detected_or_sweep"
    assert "your data describes toward_detected" in ph.note and "the run selects toward_detected_or_sweep" in ph.note
    res, doc = _data_check(mine)
    assert res.exit_code == 1 and [b["path"] for b in doc["scenarios"][0]["blocking"]] == ["rules.escort_movement"]
    # selecting the value the data describes makes the module the player's
    scenario = yaml.safe_load((mine / "my_campaign.yaml").read_text())
    scenario["rules"]["escort_movement"] = "toward_detected"
    _write(mine / "my_campaign.yaml", scenario)
    sc, point = _points(mine / "my_campaign.yaml")
    assert prepare_point(sc, point).placeholders == ()


def test_a_value_needing_no_numbers_and_a_block_with_placeholders_left(tmp_path):
    """New: 'enemy_attack: none' becomes the player's through procedure: none; a block with a
    plain procedure but a placeholder left is still listed (and the placeholder too); a procedure
    that is no value of its option is an error naming the allowed values."""
    mine = _filled_copy(tmp_path)
    _set_procedure(mine, "enemy_attack_module", "none")
    scenario = yaml.safe_load((mine / "my_campaign.yaml").read_text())
    scenario["rules"]["enemy_attack"] = "none"
    _write(mine / "my_campaign.yaml", scenario)
    sc, point = _points(mine / "my_campaign.yaml")
    assert prepare_point(sc, point).placeholders == ()

    f = mine / "data" / "combat.yaml"
    doc = yaml.safe_load(f.read_text(encoding="utf-8"))
    doc["combat"]["uboat_attack_module"]["gun_range_mod"] = {"ph": [0, -1], "note": "not entered yet"}
    _write(f, doc)
    sc, point = _points(mine / "my_campaign.yaml")
    with pytest.raises(StrictRefused) as refusal:
        prepare_point(sc, point)
    paths = [ph.path for ph in refusal.value.refused]
    assert paths == ["rules.uboat_attack", "combat.uboat_attack_module.gun_range_mod"], paths
    assert "still placeholders" in refusal.value.refused[0].note

    _set_procedure(mine, "uboat_attack_module", "d6_table")
    sc, point = _points(mine / "my_campaign.yaml")
    from analyzer.core.errors import AnalyzerError
    with pytest.raises(AnalyzerError, match="procedure: got 'd6_table'; allowed: placeholder_d10"):
        prepare_point(sc, point, strict=False)


@pytest.mark.parametrize("scenario", ["player_copy/my_campaign.yaml", "convoy37_engagement.yaml"])
def test_the_shipped_data_still_lists_every_module(scenario):
    """(d) Unchanged default: with the shipped data (procedure: {ph: ..}) every rule module in use
    is listed as before, with today's note, and the procedure keys are not listed as data."""
    sc, point = _points(SHIPPED / scenario)
    listed = {ph.path: ph for ph in prepare_point(sc, point, strict=False).placeholders}
    expected = [f"rules.{o.name}" for o in PLACEHOLDER_MODULES]
    if sc.spec.question == "campaign":
        expected += [f"rules.{n}" for n in CAMPAIGN_PLACEHOLDER_MODULES if n != "advanced_torpedoes"]
    for path in expected:
        assert path in listed, path
        assert listed[path].note.endswith("placeholder rule module, not a published rule"), listed[path].note
    assert not any(p.endswith(".procedure") for p in listed)
