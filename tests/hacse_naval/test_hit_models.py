"""Issue 29 items 6, 9 and the depth-charge loose ends: the torpedo's hit model as the source gives it
(arming range 'Nah' l.81, maximum range 'Weit' l.83, the first ship in the path l.85, the torpedo
sighting roll at +3 without radar ease l.87) with the evasion idea a placeholder module (G13); mines
seen at 10 hex (l.99) with what the ship does a placeholder module (G14); ``fire_repeats`` offered by
``depth_charge``. Exact chances as fractions, kernel vs the reference at 5 SE, 1 vs 2 threads."""
from fractions import Fraction

import numba
import numpy as np
import pytest

from analyzer.core.errors import ScenarioError
from analyzer.games.hacse_naval import reference as ref
from analyzer.run.runner import CHUNK_TRIALS
from kernels.hacse_naval import damage as kd
from tests.hacse_naval.helpers import DATA, assert_distributions_agree, assert_means_agree, prepare, run


def _p_hit(params, rules=None):
    _, _, prep = prepare("torpedo_salvo", {"torpedoes": 1, **params}, rules)
    return Fraction(int(prep.args[1]), int(prep.args[2])), prep


# --------------------------------------------------------------------------- torpedo hit model (item 6)
def test_torpedo_sighting_roll_is_plus_3_and_the_range_steps_under_the_placeholder_roll_model():
    """l.87 'mit einer Erschwernis von 3': at 12 hex, +3 + 12 // 5 = +5; linear 0.7 - 0.5 = 1/5 seen;
    P(hit) = 1/5 x hit_if_seen 1/2 + 4/5 x hit_if_unseen 1 = 9/10. Under `whole` the +3 alone: 2/5 seen."""
    p, prep = _p_hit({"torpedo_sighting": {"range_hexes": 12}})
    assert p == Fraction(9, 10)
    listed = {ph.path for ph in prep.placeholders}
    assert {"rules.roll_model", "rules.torpedo_evasion", "hacse.torpedo_evasion_module.hit_if_seen",
            "hacse.torpedo_evasion_module.hit_if_unseen"} <= listed
    p, _ = _p_hit({"torpedo_sighting": {"range_hexes": 12}}, {"torpedo_sighting_difficulty": "whole"})
    assert p == Fraction(2, 5) * Fraction(1, 2) + Fraction(3, 5)


def test_radar_gives_no_ease_and_a_sighted_firer_needs_no_roll():
    """'Radar bringt jedoch keine Erleichterung': radar changes nothing; 'Auf das Sichten des Torpedos
    kann verzichtet werden, wenn die ... abfeuernde Einheit ... gesichtet ist': seen for sure, no roll
    model used (not listed)."""
    plain, _ = _p_hit({"torpedo_sighting": {"range_hexes": 12}})
    radar, _ = _p_hit({"torpedo_sighting": {"range_hexes": 12, "radar": True}})
    assert radar == plain
    p, prep = _p_hit({"torpedo_sighting": {"range_hexes": 12, "firer_sighted": True}})
    assert p == Fraction(1, 2)
    assert "rules.roll_model" not in {ph.path for ph in prep.placeholders}


def test_arming_range_max_range_and_a_ship_in_the_path():
    """l.81 'Nah ... Mindestreichweite ... bis zu dieser der Torpedo nicht scharf ist' (placeholder Nah 2):
    at 1 hex no damage; at 2 hex armed under unarmed_below_nah, not under unarmed_through_nah. l.83 'Weit'
    (placeholder 60): at 61 hex not reached. l.85 'trifft das erste Schiff ... in diesem Weg': with a ship
    in the path the target is not hit."""
    assert _p_hit({"hit_probability": 1.0, "range_hexes": 1})[0] == 0
    assert _p_hit({"hit_probability": 1.0, "range_hexes": 2})[0] == 1
    assert _p_hit({"hit_probability": 1.0, "range_hexes": 2}, {"torpedo_arming": "unarmed_through_nah"})[0] == 0
    assert _p_hit({"hit_probability": 1.0, "range_hexes": 60})[0] == 1
    assert _p_hit({"hit_probability": 1.0, "range_hexes": 61})[0] == 0
    assert _p_hit({"hit_probability": 1.0, "range_hexes": 5, "arming_range": 6})[0] == 0
    p, prep = _p_hit({"hit_probability": 1.0, "ships_in_path": 1})
    assert p == 0 and any("trifft das erste Schiff" in n for n in prep.notes)
    _, prep = _p_hit({"hit_probability": 1.0, "range_hexes": 10})
    assert {"hacse.torpedo.arming_range", "hacse.torpedo.max_range"} <= {ph.path for ph in prep.placeholders}


def test_the_evasion_roll_is_labelled_a_placeholder_module():
    """The old model (P(hit) = 1 - P(evasion roll)) is kept for hit_difficulty, now listed as the
    placeholder module rules.torpedo_evasion = evasion_roll (G13)."""
    p, prep = _p_hit({"hit_difficulty": 3})
    assert p == Fraction(3, 5)
    ph = {ph.path: ph for ph in prep.placeholders}["rules.torpedo_evasion"]
    assert ph.value == "evasion_roll" and ph.source == "rule module"


def test_exactly_one_hit_rule():
    from analyzer.core.questions import get
    q = get("hacse_naval", "torpedo_salvo")
    with pytest.raises(ValueError, match="exactly one of hit_probability, torpedo_sighting or hit_difficulty"):
        q.Params.model_validate({"torpedoes": 1, "hit_probability": 0.5, "torpedo_sighting": {"range_hexes": 3}})


# --------------------------------------------------------------------------- mines (item 9)
def test_mine_avoidance_module():
    """l.99: mines are seen at 10 hex; holds_course (default) keeps the density; avoids_seen multiplies it
    by 1 - avoid_if_seen (placeholder 0.5). Both list rules.mine_avoidance; the notes say what is left out
    (minesweeping gear clears beside/behind the sweeper, weather)."""
    _, _, prep = prepare("mine_field", {"hexes": 6, "density": 0.2})
    assert (int(prep.args[1]), int(prep.args[2])) == (1, 5)
    assert "rules.mine_avoidance" in {ph.path for ph in prep.placeholders}
    assert any("seen 10 hex off" in n for n in prep.notes) and any("minesweeping" in n for n in prep.notes)
    _, _, prep = prepare("mine_field", {"hexes": 6, "density": 0.2}, {"mine_avoidance": "avoids_seen"})
    assert Fraction(int(prep.args[1]), int(prep.args[2])) == Fraction(1, 10)
    assert "hacse.mine_avoidance_module.avoid_if_seen" in {ph.path for ph in prep.placeholders}


# --------------------------------------------------------------------------- depth charges (item 4)
DC = {"charges": [{"depth_setting": 2, "hex_distance_to_sub": 0}] * 3, "sub": {"depth": 2}, "thrower": {"speed": 4}}


def test_depth_charge_plays_the_literal_fire_repeats_by_default_and_its_exact_mode_refuses_it():
    """depth_charge and depth_charge_pattern read fire_repeats with the literal default
    every_hit_past_threshold (l.53, like the other HACSE questions); it starts more fires on the Type VIIC's
    Maschinenraum and moves total_damage; the exact modes refuse it at once, naming the option, and answer
    under once_per_threshold."""
    _, _, every = prepare("depth_charge", DC)
    _, _, once = prepare("depth_charge", DC, {"fire_repeats": "once_per_threshold"})
    assert every.args[-1][kd.FIRE_REPEATS] == 1 and once.args[-1][kd.FIRE_REPEATS] == 0
    once.exact()
    with pytest.raises(ScenarioError, match="fire_repeats"):
        every.exact()
    pattern = {"charges": 2, "depth_settings": [1, 2], "sub": {"depth": 2}, "thrower": {"speed": 4}}
    with pytest.raises(ScenarioError, match="fire_repeats"):
        prepare("depth_charge_pattern", pattern)[2].exact()
    prepare("depth_charge_pattern", pattern, {"fire_repeats": "once_per_threshold"})[2].exact()
    a, b = run(once, 200_000, seed=5), run(every, 200_000, seed=5)
    mean = [float(np.arange(len(c)) @ c / c.sum()) for c in (a["damage_dealt"], b["damage_dealt"])]
    assert mean[1] > mean[0] + 0.1, mean


def test_depth_charge_total_damage_is_what_the_rows_hold_and_damage_dealt_the_raw_sum():
    """Item 5 for depth charges: total_damage counts each row at most to its [HP] (what the sheet holds),
    damage_dealt every point dealt, overkill included. Six charges at the boat's depth and hex destroy rows,
    so the two differ; exact (once_per_threshold) vs the kernel within 5 SE, and no state above the sheet's HP."""
    charges = {**DC, "charges": [{"depth_setting": 2, "hex_distance_to_sub": 0}] * 6}
    _, _, prep = prepare("depth_charge", charges, {"fire_repeats": "once_per_threshold"})
    exact = prep.exact().metrics
    hp_total = int(prep.args[8][:, kd.HP].sum())
    assert exact["total_damage"].values.max() <= hp_total < exact["damage_dealt"].values.max()
    assert exact["damage_dealt"].mean > exact["total_damage"].mean + 1.0
    counts = run(prep, 200_000, seed=11)
    for name in ("total_damage", "damage_dealt"):
        c = counts[name]
        values = np.arange(len(c))
        mean = float(values @ c / c.sum())
        se = float(np.sqrt((values ** 2 @ c / c.sum() - mean ** 2) / c.sum()))
        assert abs(mean - exact[name].mean) < 5 * se, (name, mean, exact[name].mean, se)
    assert np.nonzero(counts["total_damage"])[0].max() <= hp_total


# --------------------------------------------------------------------------- kernel vs reference (5 SE)
def _compare(question, params, rules, kernel_trials=200_000, ref_trials=20_000, seed=31):
    _, p, prep = prepare(question, params, rules)
    counts = run(prep, kernel_trials, seed=seed)
    sample = ref.simulate(question, p.model_dump(mode="json", exclude_unset=True), rules, DATA, ref_trials, seed)
    assert set(sample) == set(counts)
    for name, c in counts.items():
        assert_distributions_agree(c, sample[name], what=f"{question} {rules} {name}")
        assert_means_agree(c, sample[name], what=f"{question} {rules} {name} mean")


@pytest.mark.parametrize("question, params, rules", [
    ("torpedo_salvo", {"torpedoes": 3, "torpedo_sighting": {"range_hexes": 12}}, {}),
    ("torpedo_salvo", {"torpedoes": 2, "torpedo_sighting": {"range_hexes": 7}, "range_hexes": 2},
     {"torpedo_sighting_difficulty": "whole", "range_steps": "ceil"}),
    ("mine_field", {"hexes": 4, "density": 0.5}, {"mine_avoidance": "avoids_seen"}),
    ("depth_charge", DC, {"fire_repeats": "every_hit_past_threshold"}),
    ("depth_charge", DC, {"fire_repeats": "every_hit_past_threshold", "sub_hull_rows": "combined_rows_at_half"}),
])
def test_new_options_kernel_matches_reference(question, params, rules):
    _compare(question, params, rules)


# --------------------------------------------------------------------------- 1 vs 2 threads
@pytest.mark.parametrize("question, params, rules", [
    ("torpedo_salvo", {"torpedoes": 3, "hit_probability": 0.75}, {"fire_repeats": "once_per_threshold"}),
    ("torpedo_salvo", {"torpedoes": 3, "hit_probability": 0.75}, {"hit_location": "uniform_row"}),
    ("torpedo_salvo", {"torpedoes": 3, "torpedo_sighting": {"range_hexes": 12}}, {}),
    ("mine_field", {"hexes": 6, "density": 0.3}, {"mine_hit_location": "bow_hex"}),
    ("mine_field", {"hexes": 6, "density": 0.3}, {"mine_avoidance": "avoids_seen"}),
    ("fire", {"ship": "destroyer", "hex": 1, "base_number": 7}, {"fire_damage": "per_ship"}),
    ("fire", {"ship": "destroyer", "hex": 1, "base_number": 7}, {"fire_repeats": "once_per_threshold"}),
    ("depth_charge", DC, {"sub_hull_rows": "combined_rows_at_half"}),
    ("depth_charge", DC, {"fire_repeats": "every_hit_past_threshold"}),
    ("sighting", {"sensor": "periscope", "sub_depth": 1, "distance": 12, "radar": True, "rangefinder": True},
     {"sub_target_bm": "ease"}),
])
def test_new_options_are_bit_identical_on_1_and_2_threads(question, params, rules):
    _, _, prep = prepare(question, params, rules)
    n = 20 * CHUNK_TRIALS
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = prep.run_kernel(3, 77, 0, 20, CHUNK_TRIALS, n)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = prep.run_kernel(3, 77, 0, 20, CHUNK_TRIALS, n)
    finally:
        numba.set_num_threads(old)
    for a, b in zip(one, two):
        assert np.array_equal(a, b)
