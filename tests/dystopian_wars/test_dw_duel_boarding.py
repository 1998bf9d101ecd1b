"""``duel`` with the optional boarding step (spec §7 "Boarding step"): the numba kernel against
the pure-Python reference with boarding on, and boarding off reproducing the duel without
boarding bit for bit."""
import hashlib
import shutil

import numpy as np
import pytest
import yaml
from dw_helpers import (GAME_DIR, assert_two_sample_histograms, prepare, sample_histogram, sample_mean_se,
                        simulate)

from analyzer.games.dystopian_wars.rules import RuleError
from analyzer.games.dystopian_wars import reference as ref
from tests.stat_checks import assert_two_samples_match

METRICS = ("p_win_a", "p_win_b", "p_draw", "turns", "points_destroyed_a", "points_destroyed_b",
           "survivors_a", "survivors_b", "rout_fails_a", "rout_fails_b")
BOARDING_METRICS = METRICS + ("captured_a", "captured_b")

TEST_FLEET = {"profiles": {
    "raider": {"size": "small", "capital": False, "points": 20, "mv": 9, "hp": 2, "dr": 3, "cr": 5, "aa": 1, "cc": 1,
               "ap": 3, "weapons": [{"name": "gun", "type": "secondary", "ad": [2, 2, 1, 0]}]},
    "hulk": {"size": "medium", "capital": False, "points": 5, "mv": 6, "hp": 3, "dr": 9, "cr": 99, "aa": 0, "cc": 0,
             "weapons": []},     # no `ap`: 0 AP, captured automatically when boarded
    "sub": {"size": "medium", "capital": True, "points": 50, "mv": 5, "hp": 4, "dr": 4, "cr": 6, "aa": 0, "cc": 3,
            "ap": 2, "weapons": [{"name": "torps", "type": "torpedo", "ad": [5, 5, 3, 0]}]},
}}

SHIPPED = yaml.safe_load((GAME_DIR / "duel_with_boarding.yaml").read_text())["params"]
CASES = {
    "shipped-rb1": (SHIPPED, {}),
    "closing-half-derelict": ({
        "side_a": {"squadrons": [{"name": "raiders", "models": [{"profile": "raider", "count": 3, "state": "diving"}]},
                                 {"name": "flag", "models": [{"profile": "cruiser", "commodore": True}]}]},
        "side_b": {"squadrons": [{"models": [{"profile": "frigate", "count": 2}, {"profile": "hulk"}]},
                                 {"models": [{"profile": "sub", "state": "submerged"}, {"profile": "cruiser"}]}]},
        "range": {"mode": "closing", "start": 20, "speed_a": 5, "speed_b": 2.5, "min_distance": 1},
        "target_policy": {"a": "random", "b": "spread"}, "max_turns": 5,
        "boarding": {"enabled": True, "ap_committed": "half"}},
        {"both_zero_ap": "derelict", "boarding_defense_dice": "hit_table", "melee_dice": "plain"}),
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("dw-duel-boarding")
    shutil.copytree(GAME_DIR / "data", d / "data")
    shutil.copytree(GAME_DIR / "fleets", d / "fleets")
    (d / "fleets" / "test_fleet.yaml").write_text(yaml.safe_dump(TEST_FLEET))
    return d


@pytest.mark.parametrize("case", list(CASES))
def test_duel_boarding_matches_reference(folder, case):
    params, rules = CASES[case]
    theirs = ref.simulate("duel", params, rules, ref.load_data(folder), 5000, 3)
    prepared, _ = prepare("duel", params, rules, scenario_dir=folder)
    acc = simulate(prepared, 200_000, seed=11)
    names = [m.name for m in prepared.metrics]
    assert tuple(names) == BOARDING_METRICS
    assert set(theirs) == set(BOARDING_METRICS)
    for metric in BOARDING_METRICS:
        m = names.index(metric)
        s = acc.summary(m, prepared.metrics[m].scale, False)
        mean, se = sample_mean_se(theirs[metric])
        assert_two_samples_match(s.mean, s.se, mean, se, what=f"{case} {metric}")
        if metric in ("p_win_a", "p_win_b", "p_draw", "turns", "survivors_a", "survivors_b", "captured_a",
                      "captured_b"):
            assert_two_sample_histograms(acc.hist[m], sample_histogram(theirs[metric]), what=f"{case} {metric}")
    # boarding actually happens in both cases
    assert acc.moments[names.index("captured_b"), 0] > 0 and np.mean(theirs["captured_b"]) > 0


# The shipped closing duel (duel_battleship_vs_cruisers.yaml), seed 5, key 9, chunks 0..3 of 4096
# (last one short): sha256 of hist + moments computed with the committed kernel before boarding existed.
BASELINE_SHA256 = "3a7290eab098331b1047326d41b77f9410e3d645b679dd7909d64e69ac877583"


def _digest(params):
    prepared, _ = prepare("duel", params)
    hist, moments, _ = prepared.run_kernel(5, 9, 0, 3, 4096, 3 * 4096 - 100)
    return prepared, hist, moments, hashlib.sha256(hist.tobytes() + moments.tobytes()).hexdigest()


def test_boarding_off_is_bit_identical_to_the_duel_without_boarding():
    params = yaml.safe_load((GAME_DIR / "duel_battleship_vs_cruisers.yaml").read_text())["params"]
    assert "boarding" not in params
    p0, h0, m0, sha = _digest(params)
    assert tuple(m.name for m in p0.metrics) == METRICS and h0.shape[1] == len(METRICS)
    assert sha == BASELINE_SHA256
    p1, h1, m1, _ = _digest(dict(params, boarding={"enabled": False, "ap_committed": "half"}))
    assert tuple(m.name for m in p1.metrics) == METRICS
    assert np.array_equal(h0, h1) and np.array_equal(m0, m1)


def test_reference_boarding_off_draws_nothing_more(folder):
    params, rules = CASES["closing-half-derelict"]
    off = dict(params, boarding={"enabled": False})
    base = {k: v for k, v in params.items() if k != "boarding"}
    data = ref.load_data(folder)
    assert ref.simulate("duel", off, rules, data, 300, 4) == ref.simulate("duel", base, rules, data, 300, 4)


def test_boarding_fig_md_is_refused():
    with pytest.raises(RuleError, match="fig_md"):
        prepare("duel", SHIPPED, {"boarding_defender_dice": "fig_md"})
