"""The source's worked example and the digest's computed checks (docs/models/hacse_naval.md §5).

Source l.72-75 (Wasserbomben): "Ein Zerstörer wirft eine Wasserbombe auf Tiefe 2 ... Tatsächlich ist
das U-Boot aber auf Tiefe 3 und im benachbarten Hex. Es erleidet also 1W10 - 4 Schaden ... Er erleidet
1W10 - 6 - Geschwindigkeit Schaden, bei einer Geschwindigkeit von 4 oder mehr als gar keinen Schaden."
"""
from fractions import Fraction

import pytest
import yaml

from analyzer.core import scenario as scenario_mod
from analyzer.games.hacse_naval import sighting as sighting_mod
from analyzer.games.hacse_naval.data import hex_distance
from analyzer.games.hacse_naval.torpedo_salvo import torpedo_timeline
from analyzer.run.runner import exact_point, prepare_point
from kernels.hacse_naval.depth_charge import charge_damage
from tests.hacse_naval.helpers import DATA, SCEN, assert_kernel_matches_exact, prepare, run
from analyzer.games.hacse_naval import reference as ref

EXAMPLE = SCEN / "depth_charge_example.yaml"
ONCE = {"fire_repeats": "once_per_threshold"}      # the reading the exact mode plays (the formula examples do not depend on it)


def _example():
    """The worked example's scenario under ONCE (its exact mode refuses the literal default)."""
    doc = {**yaml.safe_load(EXAMPLE.read_text()), "rules": ONCE}
    return scenario_mod.load_dict(doc, directory=EXAMPLE.parent, name=EXAMPLE.name)


def test_reference_scenario_file_is_the_issue_text():
    assert EXAMPLE.read_text() == (
        "game: hacse_naval\nquestion: depth_charge\nseed: 1\ntrials: 200000\nparams:\n"
        "  charges: [{depth_setting: 2, hex_distance_to_sub: 1, hex_distance_to_thrower: 1}]\n"
        "  sub: {depth: 3}\n  thrower: {speed: 4}\n")


def test_worked_example_exact_w10_minus_4_mean_2_1_and_thrower_0():
    sc = _example()
    res = exact_point(sc.points[0], prepare_point(sc, sc.points[0]))
    values, probs = res.distributions["damage"]
    want = {0: Fraction(4, 10), **{v: Fraction(1, 10) for v in range(1, 7)}}   # max(0, W10 - 4)
    assert dict(zip(values.tolist(), probs.tolist())) == pytest.approx({k: float(v) for k, v in want.items()})
    assert res.summaries["damage"].mean == pytest.approx(2.1, abs=1e-12)
    assert res.summaries["thrower_damage"].mean == 0
    assert res.distributions["thrower_damage"][0].tolist() == [0]


def test_worked_example_monte_carlo_matches_exact_within_5_se():
    sc = _example()
    prep = prepare_point(sc, sc.points[0])
    counts, _ = assert_kernel_matches_exact(prep, 200_000, seed=1, what="depth_charge_example")
    assert counts["thrower_damage"][0] == 200_000


@pytest.mark.parametrize("speed,expected", [(0, {0: 6, 1: 1, 2: 1, 3: 1, 4: 1}), (2, {0: 8, 1: 1, 2: 1}),
                                            (3, {0: 9, 1: 1}), (4, {0: 10}), (9, {0: 10})])
def test_thrower_takes_w10_minus_6_minus_speed(speed, expected):
    _, _, prep = prepare("depth_charge", {"charges": [{"depth_setting": 2, "hex_distance_to_sub": 1}],
                                          "sub": {"depth": 3}, "thrower": {"speed": speed}}, ONCE)
    t = prep.exact()["thrower_damage"]
    got = {int(v): round(float(p) * 10) for v, p in zip(t.values, t.probs)}
    assert got == expected


def test_digest_test_vectors_sub_w10_7_gives_3_destroyer_speed_2_w10_10_gives_2():
    assert charge_damage(7, 2, 2) == 3                    # 7 - 2 x (1 depth level + 1 hex)
    assert charge_damage(10, 3, 2) - 2 == 2               # 10 - 2 x (2 levels + 1 hex) - speed 2


@pytest.mark.parametrize("steps", [5, 6, 9])
def test_five_or_more_steps_always_zero(steps):
    assert all(charge_damage(w, steps, 2) == 0 for w in range(1, 11))


def test_edge_cases_of_the_formula():
    assert [charge_damage(w, 0, 2) for w in range(1, 11)] == list(range(1, 11))   # same hex, same depth
    assert [charge_damage(w, 4, 2) for w in range(1, 11)] == [0] * 8 + [1, 2]     # 4 steps: only 9 and 10
    # 5 steps made of depth and hexes together: a charge 3 levels off and 2 hexes away never hurts
    _, _, prep = prepare("depth_charge", {"charges": [{"depth_setting": 0, "hex_distance_to_sub": 2}],
                                          "sub": {"depth": 3}, "thrower": {"speed": 0}}, ONCE)
    assert prep.exact()["damage"].values.tolist() == [0]
    counts = run(prep, 20_000)
    assert counts["damage"][0] == 20_000


def test_passive_sonar_digest_check_plus_7():
    """Own speed 4, depth 2, 3 hex, sub speed 2 -> 4 + 4 + 3 - 4 = +7."""
    p = sighting_mod.SightingParams(sensor="passive_sonar", own_speed=4, sub_depth=2, distance=3, sub_speed=2)
    s = {**DATA["hacse"]["sighting"], "clear_hexes_per_step": 5}
    rules = {"range_steps": "floor", "sonar_terms": "replace", "periscope_difficulty": "added_to_range"}
    assert sighting_mod.net_difficulty(p, rules, s) == 7
    assert ref.sighting_difficulty(p.model_dump(), {**ref.DEFAULT_RULES, **rules}, DATA) == 7


@pytest.mark.parametrize("rounding,net", [("floor", 6), ("ceil", 7)])
def test_asdic_digest_check_plus_6_or_7_by_rounding(rounding, net):
    """Depth 2, 7 hex -> 4 + 2 = +6 (floor) or 4 + 3 = +7 (ceil)."""
    p = sighting_mod.SightingParams(sensor="asdic", own_speed=4, sub_depth=2, distance=7)
    s = {**DATA["hacse"]["sighting"], "clear_hexes_per_step": 5}
    rules = {"range_steps": rounding, "sonar_terms": "replace", "periscope_difficulty": "added_to_range"}
    assert sighting_mod.net_difficulty(p, rules, s) == net
    assert ref.sighting_difficulty(p.model_dump(), {**ref.DEFAULT_RULES, **rules}, DATA) == net
    _, _, prep = prepare("sighting", {"sensor": "asdic", "own_speed": 4, "sub_depth": 2, "distance": 7},
                         {"range_steps": rounding})
    assert any(f"net difficulty +{net}" in n for n in prep.notes)


def test_asdic_needs_speed_6_or_less():
    _, _, fast = prepare("sighting", {"sensor": "asdic", "own_speed": 7, "sub_depth": 1, "distance": 1})
    assert fast.exact()["p_sighted_within"].mean == 0
    _, _, slow = prepare("sighting", {"sensor": "asdic", "own_speed": 6, "sub_depth": 1, "distance": 1})
    assert slow.exact()["p_sighted_within"].mean > 0


def test_periscope_only_at_depth_1_with_periscope_raised():
    _, _, deep = prepare("sighting", {"sensor": "periscope", "sub_depth": 2, "distance": 1})
    assert deep.exact()["p_sighted_round"].mean == 0
    _, _, up = prepare("sighting", {"sensor": "periscope", "sub_depth": 1, "distance": 4})
    assert any("net difficulty +3" in n for n in up.notes)            # +3, 4 hex = 0 clear-weather steps
    _, _, far = prepare("sighting", {"sensor": "periscope", "sub_depth": 1, "distance": 10})
    assert any("net difficulty +5" in n for n in far.notes)           # +3 and 2 steps of 5 hex


@pytest.mark.parametrize("lifetime,expected", [
    ("floor", [(1, 19), (2, 38), (3, 57)]),
    ("ceil", [(1, 19), (2, 38), (3, 57), (4, 60)]),
])
def test_torpedo_timeline_speed_19_range_60(lifetime, expected):
    """Fired in round R: 19 hex at the end of R+1, 38 at R+2, 57 at R+3; 60/19 = 3.16 rounds needs a rounding.
    Speed 19 is the source's typical 'Mittel'; range 60 the placeholder 'Weit'."""
    t = ref.plain(DATA["hacse"]["torpedo"])
    assert (t["typical_speed"], t["max_range"]) == (19, 60)
    assert torpedo_timeline(19, 60, lifetime=lifetime) == expected
    assert ref.torpedo_positions(19, 60, lifetime) == expected


def test_torpedo_timeline_this_round_reading():
    assert torpedo_timeline(19, 60, first_move="this_round") == [(0, 19), (1, 38), (2, 57)]


def test_hex_distance_axial():
    assert hex_distance((0, 0), (1, 0)) == 1 and hex_distance((1, -1), (-1, 1)) == 2
    assert hex_distance((2, -1), (-1, 0)) == ref.hex_steps((2, -1), (-1, 0)) == 3
