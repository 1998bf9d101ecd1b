"""Issue 29 item 12 (strict): every HACSE placeholder rule module (roll model G1, hit_location,
mine_hit_location, the depth charges' row, the extinguishing rule, the torpedo evasion module, mine
avoidance) becomes the player's when data/hacse.yaml describes it (a plain ``procedure:`` in its block,
as U-Boat Leader's modules), so a data folder with every placeholder filled runs ``strict: true``."""
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
from analyzer.games.hacse_naval.rules import MODULE_BLOCKS
from analyzer.run.runner import StrictRefused, prepare_point

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "scenarios" / "hacse_naval"
SCENARIOS = sorted(p.name for p in SHIPPED.glob("*.yaml"))
cli = CliRunner()


def _made_up(x):
    """Every ``{ph: v}`` / ``{ex: v}`` written plainly; a placeholder number moved a little (made-up
    'printed' values, not the shipped guesses), procedures and lists kept."""
    if is_wrapper(x):
        v = _made_up(x["ph"] if "ph" in x else x["ex"])
        if "ph" in x and isinstance(v, int) and not isinstance(v, bool) and v > 2:
            v += 1
        return v
    if isinstance(x, dict):
        return {k: _made_up(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_made_up(v) for v in x]
    return x


def _filled_copy(tmp_path: Path) -> Path:
    mine = tmp_path / "mine"
    shutil.copytree(SHIPPED, mine)
    for f in mine.rglob("*.yaml"):
        doc = yaml.safe_load(f.read_text(encoding="utf-8"))
        if isinstance(doc, dict) and "game" in doc:
            doc["strict"] = True
        doc = _made_up(doc)
        if f.name == "hacse.yaml":   # the shipped fire scenario sweeps both readings of 'überwürfeln'
            doc["hacse"]["fire"]["extinguish_module"]["procedure"] = ["overroll", "roll_under"]
        f.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return mine


def _data_check(folder: Path):
    res = cli.invoke(app, ["data", "check", str(folder), "--json"])
    return res, (json.loads(res.stdout) if res.exit_code in (0, 1) else None)


def test_every_module_block_is_in_the_shipped_data_with_a_placeholder_procedure():
    from analyzer.core.gamedata import load_data
    data, found = load_data(SHIPPED / "data" / "hacse.yaml")
    paths = {ph.path for ph in found}
    for key, block in MODULE_BLOCKS.items():
        assert f"{block}.procedure" in paths, key


@pytest.mark.parametrize("name", SCENARIOS)
def test_shipped_data_is_refused_by_strict_naming_the_modules(name):
    """On the shipped data strict refuses every scenario and names the rule modules it plays."""
    sc = scenario_mod.load(SHIPPED / name)
    with pytest.raises(StrictRefused) as refusal:
        prepare_point(sc, sc.points[0], strict=True)
    refused = {ph.path for ph in refusal.value.refused}
    modules = {"depth_charge": {"rules.hit_location"}, "depth_charge_pattern": {"rules.hit_location"},
               "torpedo_salvo": {"rules.hit_location"}, "mine_field": {"rules.mine_hit_location",
                                                                       "rules.mine_avoidance"},
               "fire": {"rules.fire_extinguish"}, "sighting": {"rules.roll_model"}}[sc.question.name]
    assert modules <= refused, refused


@pytest.mark.parametrize("name", SCENARIOS)
def test_a_filled_copy_runs_every_shipped_scenario_under_strict(tmp_path, name):
    """Used to be impossible (issue 29 item 12): the modules could not be supplied as data, so strict: true
    refused every HACSE run whatever the data. With every placeholder filled and every module's
    procedure written plainly, each shipped scenario runs under strict: true to completion."""
    mine = _filled_copy(tmp_path)
    sc = scenario_mod.load(mine / name, trials=2048)
    assert sc.spec.strict
    _, summary = api.run_to_folder(sc, tmp_path / "results", threads=1, formats=())
    assert summary["placeholders"] == [], summary["placeholders"]


def test_a_module_procedure_other_than_the_run_s_value_keeps_it_listed(tmp_path):
    """A plain procedure naming another value does not make the run's module the player's."""
    mine = _filled_copy(tmp_path)
    f = mine / "data" / "hacse.yaml"
    f.write_text(f.read_text().replace("procedure: hex_then_row", "procedure: uniform_row", 1))
    sc = scenario_mod.load(mine / "torpedo_destroyer_salvo.yaml", trials=1024)
    with pytest.raises(StrictRefused) as refusal:
        prepare_point(sc, sc.points[0])
    (ph,) = refusal.value.refused
    assert ph.path == "rules.hit_location" and "your data describes uniform_row" in ph.note


def test_a_module_with_a_placeholder_left_in_its_block_stays_listed(tmp_path):
    """The torpedo evasion module is the player's only when its chances are filled too."""
    from tests.hacse_naval.helpers import context
    from analyzer.core import questions
    from analyzer.core.questions import Context
    mine = _filled_copy(tmp_path)
    f = mine / "data" / "hacse.yaml"
    doc = yaml.safe_load(f.read_text())
    doc["hacse"]["torpedo_evasion_module"]["hit_if_seen"] = {"ph": 0.4, "note": "still a guess"}
    f.write_text(yaml.safe_dump(doc, sort_keys=False))
    q = questions.get("hacse_naval", "torpedo_salvo")
    p = q.Params.model_validate({"torpedoes": 1, "torpedo_sighting": {"range_hexes": 5, "firer_sighted": True}})
    base = context(q)
    prep = q.prepare(p, Context(rules=base.rules, scenario_dir=mine, game_dir=SHIPPED))
    listed = {ph.path: ph for ph in prep.placeholders}
    assert "hacse.torpedo_evasion_module.hit_if_seen" in listed
    assert "1 of its values are still placeholders" in listed["rules.torpedo_evasion"].note


def test_data_check_exits_1_on_the_shipped_data_and_0_on_the_filled_copy(tmp_path):
    res, doc = _data_check(SHIPPED)
    assert res.exit_code == 1, res.output
    assert doc["counts"]["scenarios_blocked"] == len(SCENARIOS)
    blocking = {b["path"] for s in doc["scenarios"] for b in s["blocking"]}
    assert {"rules.hit_location", "rules.mine_hit_location", "rules.mine_avoidance", "rules.fire_extinguish",
            "rules.roll_model"} <= blocking
    listed = {p["path"] for f in doc["data_files"] for p in f["placeholders"]}
    assert {f"{b}.procedure" for b in MODULE_BLOCKS.values()} <= listed

    mine = _filled_copy(tmp_path)
    res, doc = _data_check(mine)
    assert res.exit_code == 0, res.output
    assert not doc["blocked"] and all(not s["blocking"] for s in doc["scenarios"])
