"""``analyzer search --policy``: the U-Boat loadout's fleets crossed with campaign-policy variants
(issue 30: "fleets x SO plans x policies"). A policy option plays exactly the trials that
``analyzer run`` gives a fleet whose own ``policy:`` is that variant (loadout FleetPlan.policy);
fields and values the campaign policy does not have are refused naming the allowed ones."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from analyzer.analyses import search as sr
from analyzer.core.errors import ScenarioError

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "scenarios" / "uboat_leader" / "loadout_example_fleets.yaml"
VARIANTS = ["patrol=best", "patrol=spread"]


def _two_fleets(tmp_path: Path) -> tuple[Path, dict]:
    doc = yaml.safe_load(EXAMPLE.read_text())
    example = doc["params"]["fleets"][0]["fleet"]
    doc["params"]["fleets"] = [{"name": "example", "fleet": example},
                               {"name": "lone_u43", "fleet": [{"id": "U-43", "level": "trained"}]}]
    path = tmp_path / "two_fleets.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path, doc


def test_policy_variants_cross_every_fleet_and_refuse_what_the_policy_has_not(tmp_path):
    path, _ = _two_fleets(tmp_path)
    _, space = sr.load(path, policies=VARIANTS)
    assert space.names == ["example--patrol-best", "example--patrol-spread", "lone_u43--patrol-best",
                           "lone_u43--patrol-spread"]
    _, crossed = sr.load(path, so_plans=["none"], policies=["patrol=spread,attack=no_naval"])
    assert crossed.names == ["example--none--patrol-spread+attack-no_naval",
                             "lone_u43--none--patrol-spread+attack-no_naval"]
    for bad, said in (("patrol=sideways", "allowed: best, spread, nearest"), ("colour=red", "FIELD one of patrol"),
                      ("so=none", "--so"), ("patrol=best,patrol=spread", "given twice")):
        with pytest.raises(ScenarioError, match="--policy") as e:
            sr.load(path, policies=[bad])
        assert said in str(e.value), (bad, str(e.value))


def test_a_policy_option_plays_the_trials_run_gives_a_fleet_with_that_policy(tmp_path):
    from analyzer.core import scenario as scenario_mod
    from analyzer.run.runner import prepare_point, simulate_point, summarize
    path, doc = _two_fleets(tmp_path)
    _, space = sr.load(path, policies=VARIANTS)
    n = 2 * space.chunk
    block = space.evaluate(list(range(len(space.names))), 0, n)
    # the same options written by hand: each fleet with its own policy, after the file's first fleet
    shared = doc["params"].get("policy") or {}
    fleets = [dict(doc["params"]["fleets"][0])]
    for f in doc["params"]["fleets"]:
        for v in VARIANTS:
            field, value = v.split("=")
            fleets.append({"name": f"{f['name']}--{field}-{value}", "fleet": f["fleet"],
                           "policy": {**shared, field: value}})
    doc["params"]["fleets"] = fleets
    by_hand = tmp_path / "by_hand.yaml"
    by_hand.write_text(yaml.safe_dump(doc, sort_keys=False))
    full = scenario_mod.load(by_hand, trials=n)
    point = full.points[0]
    prep = prepare_point(full, point)
    res = summarize(point, prep, simulate_point(full, point, prep)[0])
    means = {name: s / n for name, s in zip(space.names, block.sums)}
    for name, mean in means.items():
        assert mean == pytest.approx(res.summaries[f"vp.{name}"].mean, rel=1e-12, abs=1e-12), name
    assert means["example--patrol-best"] != means["example--patrol-spread"]     # the variant is played
    assert any("own policy: patrol spread" in note for note in res.notes)


def test_cli_search_over_policies_reports_them_and_refuses_unknown_values(tmp_path):
    from analyzer.cli.app import build, load_commands
    path, _ = _two_fleets(tmp_path)
    app = build(load_commands({"search"}))
    args = ["search", str(path), "--max-trials", "8192", "--out", str(tmp_path / "out"), "--json", "--no-reestimate"]
    for v in VARIANTS:
        args += ["--policy", v]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["policies"] == VARIANTS and len(doc["option_names"]) == 4
    assert doc["chosen"].startswith("example--")
    bad = CliRunner().invoke(app, ["search", str(path), "--policy", "patrol=sideways", "--out", str(tmp_path / "o2")])
    assert bad.exit_code == 2 and "allowed: best, spread, nearest" in bad.stderr


def test_an_option_of_the_first_fleet_under_another_policy_is_not_taken_for_the_anchor(tmp_path):
    """The file's first fleet plays first in every evaluation (the stream's anchor) unless the first
    option asked for IS that fleet; the same boats under another policy are another fleet."""
    from analyzer.core import scenario as scenario_mod
    from analyzer.run.runner import prepare_point, simulate_point, summarize
    path, doc = _two_fleets(tmp_path)
    _, space = sr.load(path, policies=["patrol=spread"])
    n = 2 * space.chunk
    alone = space.evaluate([space.names.index("example--patrol-spread")], 0, n)
    shared = doc["params"].get("policy") or {}
    doc["params"]["fleets"] = [dict(doc["params"]["fleets"][0]),
                               {"name": "example--patrol-spread", "fleet": doc["params"]["fleets"][0]["fleet"],
                                "policy": {**shared, "patrol": "spread"}}]
    by_hand = tmp_path / "by_hand.yaml"
    by_hand.write_text(yaml.safe_dump(doc, sort_keys=False))
    full = scenario_mod.load(by_hand, trials=n)
    point = full.points[0]
    prep = prepare_point(full, point)
    res = summarize(point, prep, simulate_point(full, point, prep)[0])
    assert alone.sums[0] / n == pytest.approx(res.summaries["vp.example--patrol-spread"].mean, rel=1e-12, abs=1e-12)


def test_a_question_without_an_option_space_is_refused_naming_those_that_have_one():
    with pytest.raises(ScenarioError, match="declare an option space: .*uboat_leader/loadout") as e:
        sr.load(ROOT / "scenarios" / "dice" / "any_of_n.yaml")
    assert "dice/" in str(e.value) and "dystopian_wars/fire_allocation" in str(e.value)
