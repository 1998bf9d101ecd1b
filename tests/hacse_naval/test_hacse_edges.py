"""Validation at the edge, placeholders and strict mode, thread-count independence, the shipped
scenarios through the CLI and their figures."""
import json

import numba
import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from analyzer.core import scenario as scenario_mod
from analyzer.cli.app import app
from analyzer.core.errors import ScenarioError
from analyzer.core.gamedata import is_wrapper, read_yaml
from analyzer.run.runner import CHUNK_TRIALS, prepare_point
from tests.hacse_naval.helpers import SCEN, prepare

runner = CliRunner()


def _write(tmp_path, doc, name="s.yaml"):
    p = tmp_path / name
    p.write_text(yaml.safe_dump(doc))
    return p


def _dc(**over):
    doc = {"game": "hacse_naval", "question": "depth_charge", "seed": 1, "trials": 5000,
           "params": {"charges": [{"depth_setting": 2, "hex_distance_to_sub": 1}], "sub": {"depth": 3},
                      "thrower": {"speed": 4}}}
    doc.update(over)
    return doc


@pytest.mark.parametrize("params,field,words", [
    ({"charges": [{"depth_setting": 2}], "sub": {"depth": 3}, "thrower": {"speed": 4}}, "params.charges[0]",
     "exactly one of hex_distance_to_sub"),
    ({"charges": [{"depth_setting": 2, "hex_distance_to_sub": 1}], "sub": {"depth": 3, "position": "guess_and_ring"},
      "thrower": {"speed": 4}}, "params", "every charge needs `offset`"),
    ({"charges": [{"depth_setting": 2, "hex_distance_to_sub": 1}], "sub": {"depth": [1, 2], "depth_weights": [1]},
      "thrower": {"speed": 4}}, "params.sub", "depth_weights"),
    ({"charges": [{"depth_setting": 2, "hex_distance_to_sub": 1}], "sub": {"depth": 3}, "thrower": {"speed": -1}},
     "params.thrower.speed", ">= 0"),
    ({"charges": [{"depth_setting": 2, "hex_distance_to_sub": 1, "size": 3}], "sub": {"depth": 3},
      "thrower": {"speed": 1}}, "params.charges[0].size", "unknown parameter"),
])
def test_bad_depth_charge_params_name_the_field(tmp_path, params, field, words):
    with pytest.raises(ScenarioError) as e:
        scenario_mod.load(_write(tmp_path, _dc(params=params)))
    assert field in str(e.value) and words in str(e.value)


def test_unknown_sheet_and_bad_rule_value_name_the_allowed_values(tmp_path):
    doc = _dc()
    doc["params"]["sub"]["ship"] = "type_vii"
    sc = scenario_mod.load(_write(tmp_path, doc))
    with pytest.raises(ScenarioError) as e:
        prepare_point(sc, sc.points[0])
    assert "params.sub.ship" in str(e.value) and "type_viic" in str(e.value)
    with pytest.raises(ScenarioError) as e:
        scenario_mod.load(_write(tmp_path, _dc(rules={"half_hp": "round"})))
    assert "rules.half_hp" in str(e.value) and "ceil, floor" in str(e.value)


def test_bad_sheet_row_kind_is_refused_naming_file_and_field(tmp_path):
    (tmp_path / "ships").mkdir()
    (tmp_path / "ships" / "odd.yaml").write_text(
        "ship: {name: Odd, submarine: true, bm: -1, max_speed: 2, max_depth: 3,"
        " hexes: [{rows: [{name: Rumpf, kinds: [rumpf, kessel], hp: 10}]}]}\n")
    doc = _dc()
    doc["params"]["sub"]["ship"] = "odd"
    sc = scenario_mod.load(_write(tmp_path, doc))
    with pytest.raises(ValueError) as e:
        prepare_point(sc, sc.points[0])
    assert "ships/odd.yaml" in str(e.value) and "kinds" in str(e.value)


def test_placeholders_are_reported_and_strict_refuses_them(tmp_path):
    sc = scenario_mod.load(SCEN / "depth_charge_example.yaml")
    prep = prepare_point(sc, sc.points[0])
    paths = {p.path for p in prep.placeholders}
    assert "ships.type_viic.ship.max_depth" in paths and "rules.hit_location" in paths
    assert not any(p.startswith("hacse.roll_model") for p in paths)     # no roll is made
    with pytest.raises(ScenarioError) as e:
        prepare_point(*(lambda s: (s, s.points[0]))(scenario_mod.load(_write(tmp_path, _dc(strict=True)))))
    assert "strict" in str(e.value)


def test_sighting_lists_the_roll_model_as_a_placeholder():
    _, _, prep = prepare("sighting", {"sensor": "asdic", "sub_depth": 1, "distance": 3})
    paths = {p.path for p in prep.placeholders}
    assert {"rules.roll_model", "hacse.roll_model.linear.p0", "hacse.roll_model.linear.step"} <= paths
    assert not any(p.startswith("ships") for p in paths)


def test_per_75m_what_if_is_said_in_the_notes(tmp_path):
    sc = scenario_mod.load(_write(tmp_path, _dc(rules={"depth_unit": "per_75m"})))
    prep = prepare_point(sc, sc.points[0])
    assert any("NOT a reading of the source" in n for n in prep.notes)


@pytest.mark.parametrize("name", ["depth_charge_ring_prior.yaml", "fire_by_base_number.yaml"])
def test_results_do_not_depend_on_the_thread_count(name):
    sc = scenario_mod.load(SCEN / name)
    prep = prepare_point(sc, sc.points[-1])
    n = 20 * CHUNK_TRIALS
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = prep.run_kernel(3, 77, 0, 20, CHUNK_TRIALS, n)
        numba.set_num_threads(max(2, old))
        many = prep.run_kernel(3, 77, 0, 20, CHUNK_TRIALS, n)
    finally:
        numba.set_num_threads(old)
    for a, b in zip(one, many):
        assert np.array_equal(a, b)


#: plain numbers in data/hacse.yaml and where the source gives them (docs/models/hacse_naval.md §1)
SOURCE_VALUES = {
    "hacse.depth_charge.die_sides": 10, "hacse.depth_charge.damage_per_step": 2,
    "hacse.depth_charge.per_thrower_speed": 1, "hacse.depth_charge.thrower_depth": 0,
    "hacse.torpedo.damage_dice": 5, "hacse.torpedo.typical_speed": 19, "hacse.torpedo.reload_rounds_submarine": 20,
    "hacse.torpedo.reload_rounds_ship": 15, "hacse.mine.damage_dice": 3, "hacse.fire.immediate_damage": 2,
    "hacse.fire.damage_per_round": 2, "hacse.fire.base_multiple": 3, "hacse.magazine.explosion_dice": 1,
    "hacse.speed_effects.leak": 1, "hacse.speed_effects.speed_loss": 1,
    "hacse.speed_effects.sub_leak_depth": 1, "hacse.sighting.periscope_difficulty": 3,
    "hacse.sighting.periscope_depth": 1, "hacse.sighting.sonar_per_own_speed": 1,
    "hacse.sighting.sonar_per_depth": 2, "hacse.sighting.sonar_per_hex": 1, "hacse.sighting.sonar_per_sub_speed": 2,
    "hacse.sighting.asdic_per_depth": 2, "hacse.sighting.asdic_hexes_per_step": 3,
    "hacse.sighting.asdic_max_own_speed": 6, "hacse.sighting.rangefinder_range_multiple": 2,
    "hacse.sighting.radar_range_multiple": 3, "hacse.sighting.radar_limit_hexes_per_step": 5,
    "hacse.torpedo.sighting_difficulty": 3, "hacse.mine.sighting_hexes": 10,    # l.87, l.99 (issue 29 items 6, 9)
}


def _plain_numbers(x, path=""):
    if is_wrapper(x):
        return
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _plain_numbers(v, f"{path}.{k}" if path else str(k))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from _plain_numbers(v, f"{path}[{i}]")
    elif isinstance(x, (int, float)) and not isinstance(x, bool):
        yield path, x


def test_every_plain_number_in_the_rule_data_is_a_source_value():
    found = dict(_plain_numbers(read_yaml(SCEN / "data" / "hacse.yaml")))
    assert found == SOURCE_VALUES


def test_ship_sheets_have_no_unlabelled_rule_values():
    for f in sorted((SCEN / "ships").glob("*.yaml")):
        assert list(_plain_numbers(read_yaml(f))) == [], f.name


@pytest.mark.slow     # every shipped HACSE scenario with figures
def test_shipped_scenarios_run_through_the_cli_with_figures(tmp_path):
    files = ["depth_charge_example.yaml", "pattern_six_charges_unknown_depth.yaml", "sighting_asdic_vs_sonar.yaml",
             "fire_by_base_number.yaml", "torpedo_destroyer_salvo.yaml", "mine_field_crossing.yaml",
             "depth_charge_ring_prior.yaml"]
    res = runner.invoke(app, ["run", *[str(SCEN / f) for f in files], "--out", str(tmp_path), "--trials", "8192"])
    assert res.exit_code == 0, res.output
    made = {p.name for p in tmp_path.rglob("*.png")}
    assert {"pattern_ranking_point0.png", "sighting_heatmaps.png", "base_number_lines.png",
            "hit_probability_lines.png", "density_lines.png", "thrower_speed_lines.png"} <= made
    summary = json.loads(next(tmp_path.glob("depth_charge_example/*/summary.json")).read_text())
    assert any(p["path"] == "ships.type_viic.ship.max_depth" for p in summary["placeholders"])


def test_the_row_effect_table_is_data(tmp_path):
    """Editing hacse.row_effects beside a scenario changes the rules the kernels play: without
    'Ab der Hälfte der Treffer bricht ein Feuer aus' the destroyer's torpedo hits start no fire
    (its only other fire source, the Schornstein, is not a row a torpedo may hit)."""
    from analyzer.core.questions import get
    from tests.hacse_naval.helpers import context, exact_probs
    text = (SCEN / "data" / "hacse.yaml").read_text()
    edited = text.replace("maschinenraum: {half: [fire], destroyed: [engine_speed]}",
                          "maschinenraum: {destroyed: [engine_speed]}")
    assert edited != text
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "hacse.yaml").write_text(edited)
    q = get("hacse_naval", "torpedo_salvo")
    params = q.Params.model_validate({"ship": "destroyer", "torpedoes": 1, "hit_probability": 1.0})
    once = {"fire_repeats": "once_per_threshold"}          # the exact mode refuses repeated fires (issue 29)
    shipped = q.prepare(params, context(q, once)).exact()["fires"].mean
    ctx = context(q, once)
    ctx.scenario_dir = tmp_path
    prep = q.prepare(params, ctx)
    assert shipped > 0 and prep.exact()["fires"].mean == 0
    assert exact_probs(prep.exact()["fires"]).tolist() == pytest.approx([1.0])
