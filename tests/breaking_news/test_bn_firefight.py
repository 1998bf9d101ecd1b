"""``firefight``: the numba kernel against the pure-Python reference
(analyzer/games/breaking_news/reference.py) on small teams, every metric's mean within 5 combined standard errors; the Patrulla lists;
determinism across thread counts; caps and validation."""
import math

import numpy as np
import pytest

from analyzer.core.errors import ScenarioError
from analyzer.games.breaking_news.firefight import range_schedule, RangeSchedule
from analyzer.run.runner import CHUNK_TRIALS
from tests.breaking_news.helpers import prepare
from analyzer.games.breaking_news import reference as R
from tests.stat_checks import (FULL_REFERENCE, RESOLVE, assert_two_samples_match, reference_trials, resolvable_shift,
                               run_reference)

DATA = R.load_data()
KERNEL_TRIALS = 200_000
#: reference trials of the other cases in the default run; the designated case is sized by
#: stat_checks.reference_trials to resolve a DEFAULT_RESOLVE shift in every probability, and with
#: ANALYZER_FULL_REFERENCE=1 every case resolves stat_checks.RESOLVE (0.01; ~45 s per case on 2 cores)
REF_TRIALS = 4_000
DEFAULT_RESOLVE = 0.02

SMALL = {
    "vets-vs-militia-closing": ({
        "side_a": {"quality": "veteran", "figures": [{"n": 1, "leadership": 2, "leader": True},
                                                      {"n": 2}, {"n": 1, "weapons": ["lmg"]}]},
        "side_b": {"quality": "militia", "cover": True,
                   "figures": [{"n": 1, "leadership": 1, "leader": True}, {"n": 3},
                               {"n": 1, "weapons": ["rpg"]}]},
        "range": {"start_cm": 60, "closing_cm": 10, "min_cm": 10}}, {}),
    "sf-vs-fanatics-options": ({
        "side_a": {"quality": "special_forces", "figures": [{"n": 1, "leadership": 3, "leader": True},
                                                             {"n": 1, "weapons": ["sniper_rifle"]}]},
        "side_b": {"quality": "fanatic", "extras": ["ambush", "motivation"],
                   "figures": [{"n": 1, "leadership": 2, "leader": True}, {"n": 4}]},
        "range": {"start_cm": 30}, "turn_limit": 8},
        {"morale_casualties": "cumulative", "shock_recovery": "test_every_activation",
         "initiative_ties": "keep_previous", "burst_overflow": "per_modifier"}),
    "recruits-vs-commandos-run": ({
        "side_a": {"quality": "recruit", "figures": [{"n": 1, "leadership": 1, "leader": True}, {"n": 3}]},
        "side_b": {"quality": "commando", "figures": [{"n": 3, "weapons": ["assault_rifle", "grenade_launcher"]}]},
        "range": {"start_cm": 90, "closing_cm": 20, "min_cm": 20}, "fire_mode": "aimed"}, {}),
}
DESIGNATED = "vets-vs-militia-closing"


def kernel_moments(prep, trials, seed=1, key=7):
    hist, moments, counters = prep.run_kernel(seed, key, 0, -(-trials // CHUNK_TRIALS), CHUNK_TRIALS, trials)
    m = moments.sum(axis=0)
    mean = m[:, 0] / trials
    var = np.maximum(m[:, 1] / trials - mean ** 2, 0)
    return mean, np.sqrt(var / trials), counters.sum(axis=0)


@pytest.mark.parametrize("case", list(SMALL))
def test_kernel_matches_reference(case):
    params, rules = SMALL[case]
    _, p, prep = prepare("firefight", params, rules)
    mean, se, _ = kernel_moments(prep, KERNEL_TRIALS)
    names = [m.name for m in prep.metrics]
    probs = [mean[i] for i, m in enumerate(prep.metrics) if m.is_probability]
    if FULL_REFERENCE:
        n_ref = reference_trials(probs, KERNEL_TRIALS)
    elif case == DESIGNATED:
        n_ref = reference_trials(probs, KERNEL_TRIALS, resolve=DEFAULT_RESOLVE)
    else:
        n_ref = REF_TRIALS
    ref = run_reference("analyzer.games.breaking_news.reference", "firefight", p.model_dump(mode="json"), rules, DATA,
                        n_ref, 17)
    for i, name in enumerate(names):
        xs = np.asarray(ref[name], float)
        assert_two_samples_match(mean[i], se[i], xs.mean(), xs.std() / math.sqrt(len(xs)), what=f"{case} {name}")
    if case == DESIGNATED or FULL_REFERENCE:
        assert resolvable_shift(probs, KERNEL_TRIALS, n_ref) <= (RESOLVE if FULL_REFERENCE else DEFAULT_RESOLVE) + 1e-4


def test_patrol_lists_field_the_source_figures():
    _, _, prep = prepare("firefight", {"side_a": {"list": "patrol_marines"}, "side_b": {"list": "patrol_taliban"}})
    n_fig, figs, fire, team, consts = prep.args[:5]
    assert list(n_fig) == [9, 11]
    assert team[1, 2] == 1            # Taliban "Emboscada": +1 to the first initiative
    assert figs[0, 0, 2] == 3 and figs[0, 0, 1] == 1   # Marines' leader L3
    assert figs[1, 0, 4] == 10 and figs[1, 1, 4] == 5  # irregular DP: 10 for the leader, 5 for the others
    assert (figs[0, :9, 4] == 10).all()                # regulars: 10 each


def test_kernel_is_identical_for_any_thread_count():
    import numba
    params, rules = SMALL[DESIGNATED]
    _, _, prep = prepare("firefight", params, rules)
    runs = []
    for threads in (1, numba.config.NUMBA_NUM_THREADS):
        numba.set_num_threads(threads)
        runs.append(prep.run_kernel(5, 3, 0, 4, CHUNK_TRIALS, 4 * CHUNK_TRIALS))
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    for a, b in zip(*runs):
        assert np.array_equal(a, b)


def test_turn_limit_is_counted_and_reported():
    params = {"side_a": {"quality": "elite", "cover": True, "figures": [{"n": 2}]},
              "side_b": {"quality": "elite", "cover": True, "figures": [{"n": 2}]},
              "range": {"start_cm": 140}, "turn_limit": 2}
    _, _, prep = prepare("firefight", params)
    mean, _, counters = kernel_moments(prep, 20_000)
    names = [m.name for m in prep.metrics]
    assert counters[0] == round(mean[names.index("p_turn_limit")] * 20_000) > 0
    assert mean[names.index("turns")] <= 2
    assert any(ph.path == "rules.initiative_ties" for ph in prep.placeholders)


def test_range_schedule():
    assert range_schedule(RangeSchedule(start_cm=60, closing_cm=10, min_cm=35), 4) == \
        ([50, 40, 35, 35], [10, 10, 5, 0])
    assert range_schedule(RangeSchedule(start_cm=40), 2) == ([40, 40], [0, 0])


@pytest.mark.parametrize("params,match", [
    ({"side_a": {"list": "patrol_marine"}, "side_b": {"list": "patrol_taliban"}}, r"side_a\.list.*patrol_marines"),
    ({"side_a": {"quality": "elite", "figures": [{"n": 20}, {"n": 5}]}, "side_b": {"list": "patrol_taliban"}},
     r"side_a.*1 to 24 figures"),
])
def test_validation_names_the_field(params, match):
    with pytest.raises(ScenarioError, match=match):
        prepare("firefight", params)
