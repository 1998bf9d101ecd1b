"""Issue 29: fidelity of the fire, torpedo and mine damage model (docs/models/hacse_naval.md §2, §3,
§4.3-4.5, "Issue 29: before -> after"). Each test says what the code did before."""
import numpy as np
import pytest

from analyzer.core.errors import ScenarioError
from analyzer.core.questions import get
from analyzer.core.scenario import validate_rules
from tests.hacse_naval.helpers import SCEN, assert_kernel_matches_exact, barge_fire, prepare, run
from tests.hacse_naval.test_reference_hacse import _compare
from kernels.hacse_naval import damage as kd

ONCE = {"fire_repeats": "once_per_threshold"}
TWO_SURE = {"ship": "destroyer", "torpedoes": 2, "hit_probability": 1.0}


def _paths(prep):
    return {ph.path: ph for ph in prep.placeholders}


# ---------------------------------------------------------------- 1. the fire's placeholders
def test_fire_lists_the_basiszahl_and_the_extinguishing_dice_as_placeholders():
    """Used to: fire.py took its placeholder list before reading hacse.base_number and
    hacse.fire.extinguish_dice, so neither was listed (nor refused by strict, nor moved by
    `analyzer sensitivity`)."""
    _, _, prep = prepare("fire", {"ship": "destroyer", "hex": 1})
    paths = _paths(prep)
    assert paths["hacse.base_number"].value == 5 and paths["hacse.fire.extinguish_dice"].value == 3
    _, _, given = prepare("fire", {"ship": "destroyer", "hex": 1, "base_number": 6})
    assert "hacse.base_number" not in _paths(given) and "hacse.fire.extinguish_dice" in _paths(given)


def test_sensitivity_moves_the_fire_placeholders():
    """Used to: sensitivity found no variant of hacse.base_number or hacse.fire.extinguish_dice."""
    from analyzer.analyses.sensitivity import variants
    from analyzer.core import scenario as scenario_mod
    import yaml
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "fire.yaml"
        f.write_text(yaml.safe_dump({"game": "hacse_naval", "question": "fire", "trials": 1000,
                                     "params": {"ship": "destroyer", "hex": 1}}))
        found, _ = variants(scenario_mod.load(f))
    moved = {v.what for v in found}
    assert {"hacse.base_number", "hacse.fire.extinguish_dice"} <= moved


# ---------------------------------------------------------------- 2. repeated fires
def test_repeated_fires_every_hit_past_half_starts_a_fire():
    """Used to: a row started a fire only when its damage crossed the threshold, so two sure
    torpedoes on the destroyer never started two engine fires. Now (default fire_repeats =
    every_hit_past_threshold, 'Ein Feuer kann in der selben Zeile wiederholt ausbrechen', l.53) a
    second hit on the Maschinenraum at or past half starts another; once_per_threshold keeps the old
    model."""
    _, _, prep = prepare("torpedo_salvo", TWO_SURE)
    fires = run(prep, 100_000, seed=3)["fires"]
    _, _, old = prepare("torpedo_salvo", TWO_SURE, ONCE)
    fires_once = run(old, 100_000, seed=3)["fires"]
    assert fires[2:].sum() > 0 and fires_once[2:].sum() == 0
    assert (np.arange(len(fires)) * fires).sum() > (np.arange(len(fires_once)) * fires_once).sum()


def test_repeat_column_is_the_lowest_fire_threshold():
    """Used to: no REPEAT_AT column; now the engine room [10] repeats from 5, the funnel [6] from 6,
    rows without a fire never (and nothing repeats under once_per_threshold)."""
    for rules, eng, fun in ((None, 5, 6), (ONCE, kd.NEVER, kd.NEVER)):
        _, _, prep = prepare("torpedo_salvo", TWO_SURE, rules)
        rows = prep.args[7]
        assert rows[4, kd.REPEAT_AT] == eng and rows[5, kd.REPEAT_AT] == fun
        assert rows[0, kd.REPEAT_AT] == kd.NEVER and rows[6, kd.REPEAT_AT] == kd.NEVER


def test_fire_that_grows_without_bound_is_cut_and_counted(tmp_path):
    """A hull-less hex with an engine row and a fire no roll puts out: under repeated fires every
    fire hit on the burning engine starts another; the workspace keeps MAX_FIRES and counts the
    rest (counter fire_workspace_cut) instead of writing past its arrays. (Before: no repeats.)"""
    prep = barge_fire(tmp_path, "{name: Kessel, kinds: [maschinenraum], hp: 4}")
    _, _, counters = prep.run_kernel(1, 2, 0, 1, 2, 2)
    assert counters[:, 1].sum() > 0 and prep.counters[1].name == "fire_workspace_cut"


# ---------------------------------------------------------------- 3. fire damage per ship
def test_fire_damage_per_ship_deals_two_a_round_however_many_fires():
    """Used to: always 2 per burning fire (no option). per_ship: a burning ship takes one 2-damage
    hit a round; with repeated fires its damage is lower than per_fire's."""
    params = {"ship": "destroyer", "hex": 1, "base_number": 7}
    _, _, per_fire = prepare("fire", params)
    _, _, per_ship = prepare("fire", params, {"fire_damage": "per_ship"})
    a, b = run(per_fire, 100_000, seed=2), run(per_ship, 100_000, seed=2)
    mean = lambda c: (np.arange(len(c)) * c).sum() / c.sum()  # noqa: E731
    assert mean(b["damage_dealt"]) < mean(a["damage_dealt"]) and b["p_sunk"][1] < a["p_sunk"][1]


# ---------------------------------------------------------------- 4. hit location
def test_hit_location_placeholder_names_what_the_code_draws():
    """Used to: rules.hit_location = 'uniform_row', 'uniform over the eligible rows', while the code
    drew a uniform hex, then a row. Now the label is the rule's value and says so."""
    _, _, prep = prepare("torpedo_salvo", TWO_SURE)
    ph = _paths(prep)["rules.hit_location"]
    assert ph.value == "hex_then_row" and "uniform hex" in ph.note
    _, _, mine = prepare("mine_field", {"ship": "destroyer", "hexes": 3, "density": 1.0}, {"mine_hit_location": "bow_hex"})
    assert _paths(mine)["rules.mine_hit_location"].value == "bow_hex"


@pytest.mark.parametrize("question,params,rules", [
    ("torpedo_salvo", TWO_SURE, {"hit_location": "uniform_row"}),
    ("mine_field", {"ship": "destroyer", "hexes": 3, "density": 1.0}, {"mine_hit_location": "bow_hex"}),
    ("mine_field", {"ship": "destroyer", "hexes": 2, "density": 0.5}, {"mine_hit_location": "uniform_row"}),
])
def test_hit_location_kernel_matches_exact(question, params, rules):
    """Used to: options refused (unknown). Kernel vs exact, every bin within 5 SEs."""
    _, _, prep = prepare(question, params, {**rules, **ONCE})
    assert_kernel_matches_exact(prep, 200_000, seed=11, what=f"{question} {rules}")


def test_uniform_row_and_bow_hex_exact_p_sunk():
    """The auditor's cases: 2 sure torpedoes p_sunk 0.642 (hex_then_row) vs 0.618 (uniform_row);
    3 sure mines 0.496 (hex_then_row) vs 0.694 (bow_hex)."""
    got = {}
    for q, params, rules in (("torpedo_salvo", TWO_SURE, {}), ("torpedo_salvo", TWO_SURE, {"hit_location": "uniform_row"}),
                             ("mine_field", {"ship": "destroyer", "hexes": 3, "density": 1.0}, {}),
                             ("mine_field", {"ship": "destroyer", "hexes": 3, "density": 1.0},
                              {"mine_hit_location": "bow_hex"})):
        _, _, prep = prepare(q, params, {**rules, **ONCE})
        got[(q, tuple(rules.values()))] = prep.exact()["p_sunk"].mean
    assert got[("torpedo_salvo", ())] == pytest.approx(0.642, abs=0.002)
    assert got[("torpedo_salvo", ("uniform_row",))] == pytest.approx(0.618, abs=0.002)
    assert got[("mine_field", ())] == pytest.approx(0.496, abs=0.002)
    assert got[("mine_field", ("bow_hex",))] == pytest.approx(0.694, abs=0.002)


def test_exact_mode_refuses_repeated_fires_naming_the_option():
    """Used to: no such option; now the exact engine (fires at threshold crossings only) is not
    asked to answer a rule it does not play."""
    _, _, prep = prepare("torpedo_salvo", TWO_SURE)
    with pytest.raises(ScenarioError, match="rules.fire_repeats: exact mode does not support"):
        prep.exact()


# ---------------------------------------------------------------- 5. damage capped
def test_damage_is_what_the_rows_took_and_damage_dealt_the_raw_sum():
    """Used to: `damage` summed every point dealt (2 sure torpedoes: 50.05 on a sheet whose
    torpedo rows hold far less); now `damage` caps each row at its [HP] (22.4) and damage_dealt
    keeps the raw sum."""
    _, _, prep = prepare("torpedo_salvo", TWO_SURE, ONCE)
    ans = prep.exact()
    assert ans["damage"].mean == pytest.approx(22.40, abs=0.02)
    assert ans["damage_dealt"].mean == pytest.approx(50.05, abs=0.02)
    total_hp = int(prep.args[7][:, kd.HP].sum())
    counts = run(prep, 50_000, seed=4)
    assert counts["damage"][total_hp + 1:].sum() == 0 and counts["damage_dealt"][total_hp + 1:].sum() > 0


# ---------------------------------------------------------------- 5b. H9 combined rows
def test_sub_hull_rows_combined_rows_at_half_sinks_only_combined_rows_at_half():
    """Used to: two values; all_at_half also sank the pure Rumpf row [12] at 6. combined_rows_at_half:
    Rumpf [12] sinks at 12, Rumpf / Batterie [10] at 5."""
    params = {"charges": [{"depth_setting": 2, "hex_distance_to_sub": 0}], "sub": {"depth": 2}, "thrower": {"speed": 4}}
    sinks = {}
    for value in ("functions_at_half", "all_at_half", "combined_rows_at_half"):
        _, _, prep = prepare("depth_charge", params, {"sub_hull_rows": value})
        rows = prep.args[8]
        sinks[value] = (int(rows[0, kd.SINK_AT]), int(rows[1, kd.SINK_AT]))
    assert sinks == {"functions_at_half": (12, 10), "all_at_half": (6, 5), "combined_rows_at_half": (12, 5)}


# ---------------------------------------------------------------- kernel vs reference on every new value
@pytest.mark.parametrize("question,params,rules", [
    ("fire", {"ship": "destroyer", "hex": 1, "base_number": 7}, {"fire_repeats": "every_hit_past_threshold"}),
    ("fire", {"ship": "destroyer", "hex": 1, "base_number": 7}, {"fire_damage": "per_ship"}),
    ("fire", {"ship": "destroyer", "hex": 1, "base_number": 6},
     {"fire_damage": "per_ship", "fire_repeats": "once_per_threshold", "fire_row": "same_row"}),
    ("fire", {"ship": "destroyer", "base_number": 6},      # default hex (1), repeated fires, no-threshold rows at 1
     {"threshold_less_rows": "any_hit", "extinguish_scope": "one_fire", "fire_repeats": "every_hit_past_threshold"}),
    ("torpedo_salvo", {"ship": "destroyer", "torpedoes": 3, "hit_probability": 0.7}, {"hit_location": "uniform_row"}),
    ("mine_field", {"ship": "destroyer", "hexes": 6, "density": 0.5}, {"mine_hit_location": "bow_hex"}),
    ("mine_field", {"ship": "destroyer", "hexes": 6, "density": 0.5}, {"mine_hit_location": "uniform_row"}),
    ("depth_charge", {"charges": [{"depth_setting": 2, "hex_distance_to_sub": 0}] * 3, "sub": {"depth": [2, 3, 4]},
                      "thrower": {"speed": 4}}, {"sub_hull_rows": "combined_rows_at_half"}),
])
def test_new_rule_values_kernel_matches_reference(question, params, rules):
    """Used to: these rule values were refused (unknown). Every metric within 5 combined SEs."""
    _compare(question, params, rules)


# ---------------------------------------------------------------- 6. labels
def test_speed_lost_says_it_is_averaged_over_sunk_ships_too():
    """Used to: 'speed lost (of 8): leaks, funnel, tank, engine rows', silent about sunk trials."""
    _, _, prep = prepare("torpedo_salvo", TWO_SURE)
    label = {m.name: m.label for m in prep.metrics}["speed_lost"]
    assert "sunk ships included" in label


# ---------------------------------------------------------------- 7. small defects
def test_a_yaml_boolean_for_a_yes_no_option_names_the_quoting():
    """Used to: 'got False; allowed: yes, no' for an unquoted `fire_spreads: no`."""
    q = get("hacse_naval", "fire")
    with pytest.raises(ScenarioError, match=r'rules.fire_spreads: got False .*quote the value, e.g. fire_spreads: "no"'):
        validate_rules("s.yaml", q, {"fire_spreads": False})
    assert validate_rules("s.yaml", q, {"fire_spreads": "no"})["fire_spreads"] == "no"


def test_fire_defaults_to_a_hex_that_can_burn_and_warns_on_one_that_cannot():
    """Used to: hex 0 by default (the destroyer's bow: Rumpf, Magazin, Kommandobrücke, none of which
    starts a fire), silently."""
    _, _, prep = prepare("fire", {"ship": "destroyer"})
    assert prep.args[0] == 1 and not any("WARNING" in n for n in prep.notes)
    _, _, bow = prepare("fire", {"ship": "destroyer", "hex": 0})
    assert any(n.startswith("WARNING: hex 0") and "hexes that can: 1" in n for n in bow.notes)


def test_pattern_notes_map_metric_names_to_patterns_in_table_order_and_note_a_deep_boat():
    """Used to: the table's p_sunk_p000..p027 had no labels in any output, the ranking named
    patterns only by label, and a U-boat below its maximum depth was taken silently."""
    params = {"charges": 2, "depth_settings": [1, 2, 3, 4], "sub": {"depth": [2, 4]}, "thrower": {"speed": 4}}
    _, _, prep = prepare("depth_charge_pattern", params)
    key = next(n for n in prep.notes if n.startswith("patterns: "))
    names = [part.split(" = ")[0] for part in key.removeprefix("patterns: ").split(", ")]
    assert names == [m.name.removeprefix("p_sunk_") for m in prep.metrics]
    assert key.startswith("patterns: p000 = d1x2, p001 = d1x1 d2x1")
    assert any("sub.depth 4 is below the U-boat's maximum depth 3" in n for n in prep.notes)
    summaries = {m.name: _Summary(0.1 * i) for i, m in enumerate(prep.metrics)}
    ranked = prep.derived_notes(summaries, False, prep.derived_ranking(summaries, False, {}, 1000))
    assert ranked[0].startswith(f"pattern ranked 01: d4x2 ({prep.metrics[-1].name})")   # 10 patterns


class _Summary:
    def __init__(self, mean):
        self.mean, self.ci_low, self.ci_high, self.se = mean, mean - 0.01, mean + 0.01, 0.005


def test_shipped_fire_scenario_reads_the_new_options():
    """The shipped scenario still validates with the new options at their defaults."""
    q = get("hacse_naval", "fire")
    rules = validate_rules(str(SCEN / "fire_by_base_number.yaml"), q, {})
    assert rules["fire_repeats"] == "every_hit_past_threshold" and rules["fire_damage"] == "per_fire"


def test_depth_charge_notes_a_u_boat_below_its_maximum_depth():
    """Used to: `depth_charge` accepted a U-boat below its sheet's maximum depth without a word
    (only `depth_charge_pattern` said so), though there it takes W10 per level at the end of the
    round (source l.39): a legal position, but one the user should see."""
    charge = [{"depth_setting": 2, "hex_distance_to_sub": 1, "hex_distance_to_thrower": 1}]
    _, _, deep = prepare("depth_charge", {"charges": charge, "sub": {"depth": 5}, "thrower": {"speed": 4}})
    _, _, shallow = prepare("depth_charge", {"charges": charge, "sub": {"depth": 3}, "thrower": {"speed": 4}})
    assert any("sub.depth 5 is below the U-boat's maximum depth 3" in n for n in deep.notes), deep.notes
    assert not any("below the U-boat's maximum depth" in n for n in shallow.notes), shallow.notes
