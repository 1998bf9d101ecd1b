"""B-17 questions at the edge: placeholders reported and refused by ``strict: true``,
validation messages, a user's own arc table, and the question plots of a run folder."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from analyzer import api
from analyzer.core import scenario as scenario_mod
from analyzer.core.errors import ScenarioError
from analyzer.core.gamedata import DataError
from analyzer.core.questions import SCENARIO_ROOT

SCEN = SCENARIO_ROOT / "b17"
HEADON = {"fighters": [{"type": "Me109", "clock": "12:00", "altitude": "high", "count": 4}]}


def write(tmp_path: Path, doc: dict, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def scenario(tmp_path, question, params, **top):
    return scenario_mod.load(write(tmp_path, {"game": "b17", "question": question, "seed": 3, "trials": 4096,
                                              "params": params, **top}))


# ----------------------------------------------------------------------------- placeholders, strict
def test_fully_given_gun_shot_uses_no_placeholder_and_strict_accepts(tmp_path):
    sc = scenario(tmp_path, "gun_shot", {"skill": 15, "modifier": 0, "damage": "II"}, strict=True)
    (result,) = api.exact(sc)
    assert result.summaries["p_hit"].mean == 0.425 and result.placeholders == []


def test_gun_shot_cell_lookup_reports_exactly_what_it_uses(tmp_path):
    sc = scenario(tmp_path, "gun_shot", {"gun": "tail", "clock": "1:30", "altitude": "high", "skill": 15})
    paths = {p.path for p in api.prepare_point(sc, sc.points[0]).placeholders}
    assert paths == {"gun_arcs.guns[8].arcs.1:30.high", "gun_arcs.guns[8].damage", "crew.intercom_ok"}
    sc = scenario(tmp_path, "gun_shot", {"gun": "ventral", "clock": "6:00", "altitude": "low", "skill": 15,
                                         "damage": "II+2"})
    assert api.prepare_point(sc, sc.points[0]).placeholders == ()      # the SOURCE cell, everything given


@pytest.mark.parametrize("question,params", [
    ("gun_shot", {"gun": "nose", "clock": "12:00", "altitude": "high"}),
    ("gun_matrix", {"fighter": "FW190", "skill": 15, "intercom_ok": True}),
    ("attack_wave", HEADON),
    ("mission", {"waves": [HEADON]}),
])
def test_strict_refuses_placeholders(tmp_path, question, params):
    sc = scenario(tmp_path, question, params, strict=True)
    with pytest.raises(ScenarioError, match="strict: true refuses placeholder values: gun_arcs"):
        api.run(sc)


def test_placeholders_are_reported_in_outputs(tmp_path):
    sc = scenario(tmp_path, "attack_wave", dict(HEADON, position_distribution=None, skills={"engineer": 16}),
                  sweep={"intercom_ok": [True, False]})
    run_dir, summary = api.write_run(sc, api.run(sc), tmp_path / "out", mode="monte_carlo", threads=1,
                                     wall_seconds=1.0)
    paths = {p["path"] for p in summary["placeholders"]}
    assert "gun_arcs.guns[0].arcs.12:00.high" in paths and "fighters.types.Me109.danger_rank" in paths
    assert "crew.skills.bombardier" in paths and "crew.skills.engineer" not in paths   # given for the engineer
    assert "crew.intercom_ok" not in paths                                              # swept, so given
    assert json.loads((run_dir / "summary.json").read_text())["placeholders"] == summary["placeholders"]
    for stem in ("crew_kills_hits", "fighter_fates"):
        assert (run_dir / f"{stem}.png").is_file()


def test_placeholder_fighter_fire_is_reported(tmp_path):
    sc = scenario(tmp_path, "mission", {"waves": [HEADON], "return_probability": 1.0, "return_position": "same",
                                        "fighter_fire": {"model": "placeholder_3d10"}})
    paths = {p.path for p in api.prepare_point(sc, sc.points[0]).placeholders}
    assert {"params.fighter_fire.model", "fighter_fire.placeholder_3d10.skill"} <= paths
    assert "mission.return_probability" not in paths


def test_own_transcribed_table_beside_the_scenario_passes_strict(tmp_path):
    table = yaml.safe_load((SEC := SCEN / "gun_arcs.yaml").read_text())
    from analyzer.core.gamedata import unwrap
    plain, _ = unwrap(table)
    (tmp_path / "gun_arcs.yaml").write_text(yaml.safe_dump(plain, sort_keys=False))
    assert SEC.is_file()
    sc = scenario(tmp_path, "gun_matrix", {"fighter": "Me109", "skill": 15, "intercom_ok": True}, strict=True)
    (result,) = api.exact(sc)
    assert result.placeholders == [] and result.summaries["p_hit__ventral__0600__low"].mean == 0.575


# ----------------------------------------------------------------------------- validation messages
@pytest.mark.parametrize("question,params,match", [
    ("gun_shot", {"skill": 15, "modifier": 0, "clock": "12:00", "altitude": "high", "gun": "nose"}, "not both"),
    ("gun_shot", {"skill": 15}, "give `modifier`"),
    ("gun_shot", {"skill": 15, "gun": "nose", "clock": "1:15", "altitude": "high"}, "allowed clocks"),
    ("gun_shot", {"skill": 15, "modifier": 0, "prior_hits": 3}, "must be <= 2"),
    ("attack_wave", {"fighters": [{"type": "Me109", "clock": "12:00"}]}, "both clock and altitude"),
    ("attack_wave", {"fighters": [{"type": "Me109", "count": 65}]}, "must be <= 64"),
    ("attack_wave", {"fighters": [{"type": "Me109", "count": 40}, {"type": "FW190", "count": 30}]},
     "MAX_FIGHTERS_PER_WAVE"),
    ("attack_wave", {"fighters": [{"type": "Me109"}], "policy": "random"}, "focus_most_dangerous"),
    ("mission", {"waves": []}, "at least 1"),
])
def test_parameter_errors_at_load(tmp_path, question, params, match):
    with pytest.raises(ScenarioError, match=match):
        scenario(tmp_path, question, params)


@pytest.mark.parametrize("question,params,match", [
    ("gun_shot", {"skill": 15, "modifier": 0, "fighter": "Ju88"}, "unknown fighter type 'Ju88'"),
    ("gun_shot", {"gun": "ball", "clock": "6:00", "altitude": "low"}, "unknown gun 'ball'"),
    ("attack_wave", dict(HEADON, gun_ok={"tial": False}), "did you mean 'tail'"),
    ("attack_wave", dict(HEADON, skills={"pilot": 12}), "unknown crew member"),
    ("mission", {"waves": [{"fighters": [{"type": "Me109", "count": 40}]},
                           {"fighters": [{"type": "Me109", "count": 30}]}]}, "may return"),
])
def test_data_dependent_errors_at_prepare(tmp_path, question, params, match):
    sc = scenario(tmp_path, question, params)
    with pytest.raises(ScenarioError, match=match):
        api.prepare_point(sc, sc.points[0])


def test_unknown_rule_value_is_refused(tmp_path):
    with pytest.raises(ScenarioError, match="hitters, shooters"):
        scenario(tmp_path, "attack_wave", HEADON, rules={"kill_credit": "everyone"})


def test_bad_arc_cell_names_file_and_field(tmp_path):
    text = (SCEN / "gun_arcs.yaml").read_text().replace('low: +4}   # SOURCE', 'low: +3}   # SOURCE', 1)
    (tmp_path / "gun_arcs.yaml").write_text(text)
    sc = scenario(tmp_path, "gun_matrix", {"skill": 15})
    with pytest.raises(DataError, match=r"guns\[5\]\.arcs\.12:00\.low: got 3"):
        api.prepare_point(sc, sc.points[0])


def test_exact_needs_fixed_positions(tmp_path):
    sc = scenario(tmp_path, "attack_wave", {"fighters": [{"type": "Me109"}]})
    with pytest.raises(ScenarioError, match="clock and altitude fixed"):
        api.exact(sc)


# ----------------------------------------------------------------------------- showcase plots
def test_gun_matrix_writes_heatmap_and_polar(tmp_path):
    sc = scenario(tmp_path, "gun_matrix", {"fighter": "FW190", "intercom_ok": True}, sweep={"skill": [15]})
    run_dir, _ = api.write_run(sc, api.exact(sc), tmp_path / "out", mode="exact", threads=1, wall_seconds=0.1)
    assert (run_dir / "kill_odds_heatmap_15.png").is_file() and (run_dir / "kill_odds_polar_15.png").is_file()
