"""Monte Carlo against the exact modes (single charges, patterns with priors, torpedoes, mines,
sighting), every metric bin by bin within 5 binomial standard errors (tests/stat_checks.py)."""
import pytest

from tests.hacse_naval.helpers import assert_kernel_matches_exact, prepare

RING = {"depth": [1, 2, 3], "position": "guess_and_ring"}


@pytest.mark.parametrize("params,rules", [
    # one charge on the guessed hex, U-boat uniform over 7 hexes x depths 1-3
    ({"charges": [{"depth_setting": 2, "offset": [0, 0]}], "sub": RING, "thrower": {"speed": 1}}, {}),
    # U-boat already below its maximum depth: end-of-round W10 je Lvl, both readings of H10
    ({"charges": [{"depth_setting": 4, "hex_distance_to_sub": 0}], "sub": {"depth": 5}, "thrower": {"speed": 0}},
     {"overrun_dice": "per_level"}),
    ({"charges": [{"depth_setting": 4, "hex_distance_to_sub": 0}], "sub": {"depth": 5}, "thrower": {"speed": 0}},
     {"overrun_dice": "one_times_levels", "charge_roll": "one_per_unit"}),
    # three charges with a prior, the other readings of H8/H9/H10/H11
    ({"charges": [{"depth_setting": 2, "offset": [0, 0]}, {"depth_setting": 3, "offset": [0, 0]},
                  {"depth_setting": 3, "offset": [1, 0]}],
      "sub": {"depth": [2, 3], "depth_weights": [1, 2], "position": [[0, 0], [1, 0]]}, "thrower": {"speed": 2}},
     {"half_hp": "floor", "sub_hull_rows": "all_at_half", "sub_leak_depth": "once",
      "threshold_less_rows": "any_hit"}),
])
def test_depth_charge_kernel_matches_exact(params, rules):
    rules = {"fire_repeats": "once_per_threshold", **rules}     # the reading the exact mode plays
    _, _, prep = prepare("depth_charge", params, rules)
    assert_kernel_matches_exact(prep, 200_000, seed=3, what=f"depth_charge {rules}")


def test_depth_charge_per_75m_what_if_is_noted_and_differs():
    _, _, prep = prepare("depth_charge", {"charges": [{"depth_setting": 2, "hex_distance_to_sub": 1}],
                                          "sub": {"depth": 3}, "thrower": {"speed": 4}},
                          {"depth_unit": "per_75m", "fire_repeats": "once_per_threshold"})
    assert prep.exact()["damage"].mean == pytest.approx(3.6)   # only the hex counts: W10 - 2


@pytest.mark.parametrize("params,rules", [
    ({"torpedoes": 1, "hit_probability": 1.0}, {}),
    ({"torpedoes": 1, "hit_probability": 0.6}, {"threshold_less_rows": "any_hit", "engine_speed": "damage_share"}),
    ({"torpedoes": 2, "hit_probability": 0.5}, {"fire_spreads": "no"}),
    ({"torpedoes": 1, "hit_difficulty": 3}, {"roll_model": "dice_under"}),
])
def test_torpedo_kernel_matches_exact(params, rules):
    # the exact engine starts a fire only at a threshold crossing (issue 29: fire_repeats refused there)
    _, _, prep = prepare("torpedo_salvo", {"ship": "destroyer", **params}, {**rules, "fire_repeats": "once_per_threshold"})
    assert_kernel_matches_exact(prep, 200_000, seed=5, what=f"torpedo {params} {rules}")


def test_mine_field_kernel_matches_exact():
    _, _, prep = prepare("mine_field", {"ship": "destroyer", "hexes": 2, "density": 0.4}, {"fire_repeats": "once_per_threshold"})
    assert_kernel_matches_exact(prep, 200_000, seed=7, what="mine_field")


@pytest.mark.parametrize("params,rules", [
    ({"sensor": "passive_sonar", "own_speed": 2, "sub_depth": 1, "distance": 2, "sub_speed": 1, "rounds": 4}, {}),
    ({"sensor": "asdic", "own_speed": 4, "sub_depth": 2, "distance": 5, "rounds": 3}, {"roll_model": "dice_under"}),
])
def test_sighting_kernel_matches_exact(params, rules):
    _, _, prep = prepare("sighting", params, rules)
    assert_kernel_matches_exact(prep, 200_000, seed=9, what=f"sighting {params}")


def test_torpedo_exact_single_hit_hand_computed():
    """One sure hit on the destroyer sheet: hex 0 (Rumpf, Magazin) or hex 1 (Rumpf, Maschinenraum,
    Tank), each with probability 1/2, then a row of it. 5W10 = 5 (p = 1e-5) stays 5 unless it
    strikes the Maschinenraum [10] (p = 1/6), whose half (5) starts a fire: 2 more damage."""
    _, _, prep = prepare("torpedo_salvo", {"ship": "destroyer", "torpedoes": 1, "hit_probability": 1.0},
                         {"fire_repeats": "once_per_threshold"})
    ans = prep.exact()
    dist = dict(zip(ans["damage"].values.tolist(), ans["damage"].probs.tolist()))
    assert min(dist) == 5
    assert dist[5] == pytest.approx(1e-5 * 5 / 6, rel=1e-9)
    assert ans["fires"].mean > 0 and ans["p_sunk"].mean > 0
