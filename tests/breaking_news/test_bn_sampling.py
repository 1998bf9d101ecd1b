"""``sampling: table`` (issue 16) in ``firefight``: a shot's hits, a figure's saves and a morale
test each drawn once (per block of up to 12 dice) from exact integer tables instead of die by
die. The tables against brute-force enumeration of the dice; the draw primitives against the
exact laws (crossing the 12-dice block); the firefight with table against dice (every metric's
mean within 5 combined SE, every histogram bin, Pearson's chi-square). Fixed seeds."""
from __future__ import annotations

import itertools
from math import comb

import numba
import numpy as np
import pytest

from analyzer.games.breaking_news.firefight import sampling_tables
from kernels.breaking_news.fire import drawn_hits, drawn_survives
from kernels.breaking_news.morale import drawn_morale_passes
from kernels.rng import STATE_WORDS, seed_stream
from tests.b17.b17_support import McMetric, assert_chi_square_same_law, assert_same_law, run_kernel
from tests.breaking_news.helpers import prepare
from tests.stat_checks import assert_histogram_matches

SEED = 20261217
HITS_CUM, POWERS = sampling_tables(True)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_tables_count_the_enumerated_rolls(n):
    """Every ordered roll of n D6: hits at each needed score, every die saving at each save
    face: the tables' integer counts are the enumeration's."""
    rolls = list(itertools.product(range(1, 7), repeat=n))
    assert POWERS[6, n] == len(rolls)
    for face in range(1, 7):
        per_h = np.bincount([sum(d >= face for d in r) for r in rolls], minlength=n + 1)
        assert list(HITS_CUM[face, n, :n + 1]) == list(np.cumsum(per_h)), face
        all_save = sum(all(d >= face for d in r) for r in rolls)
        assert POWERS[7 - face, n] == all_save, face


@numba.njit
def _draws(kind, n_draws, a, b, c, hits_cum, powers):
    state = np.empty(STATE_WORDS, np.uint64)
    seed_stream(state, SEED, kind, 0)
    out = np.empty(n_draws, np.int64)
    for i in range(n_draws):
        if kind == 0:
            out[i] = drawn_hits(state, a, b, hits_cum, powers)
        elif kind == 1:
            out[i] = 1 if drawn_survives(state, a, b, powers) else 0
        else:
            out[i] = 1 if drawn_morale_passes(state, a, b, c, powers) else 0
    return out


N_DRAWS = 400_000


@pytest.mark.parametrize("dice,face", [(3, 5), (15, 4), (26, 6)])
def test_drawn_hits_is_binomial(dice, face):
    """Hits of ``dice`` D6 needing ``face``: the binomial law (15 and 26 dice take two and three
    draws of up to TABLE_DICE dice)."""
    got = _draws(0, N_DRAWS, dice, face, 0, HITS_CUM, POWERS)
    p = (7 - face) / 6
    probs = np.array([comb(dice, h) * p ** h * (1 - p) ** (dice - h) for h in range(dice + 1)])
    assert_histogram_matches(np.bincount(got, minlength=dice + 1), probs, what=f"{dice} dice at {face}+")


@pytest.mark.parametrize("hits,save_face", [(1, 4), (5, 3), (14, 2)])
def test_drawn_survives_is_every_save_passed(hits, save_face):
    """A figure with ``hits`` hits survives with P(save)**hits (one draw per 12 saves)."""
    got = _draws(1, N_DRAWS, hits, save_face, 0, HITS_CUM, POWERS)
    p = ((7 - save_face) / 6) ** hits
    assert_histogram_matches(np.bincount(got, minlength=2), np.array([1 - p, p]),
                             what=f"{hits} hits, save {save_face}+")


@pytest.mark.parametrize("n_dice,casualties,half", [(2, 3, False), (3, 7, False), (3, 7, True), (14, 6, False)])
def test_drawn_morale_is_any_die_passing(n_dice, casualties, half):
    """A morale test passes unless every die is below the casualties (a 6 passes unless half the
    team is lost): the enumeration of one die's failing faces, to the n-th power."""
    got = _draws(2, N_DRAWS, n_dice, casualties, half, HITS_CUM, POWERS)
    failing = sum(1 for d in range(1, 7) if d < casualties and not (d == 6 and not half))
    p_fail = (failing / 6) ** n_dice
    assert_histogram_matches(np.bincount(got, minlength=2), np.array([p_fail, 1 - p_fail]),
                             what=f"{n_dice} dice vs {casualties}")


FIREFIGHTS = {
    "patrol-20cm": ({"side_a": {"list": "patrol_marines"}, "side_b": {"list": "patrol_taliban", "cover": True},
                     "range": {"start_cm": 20}}, {}),
    "closing-options": ({"side_a": {"quality": "veteran", "figures": [{"n": 5, "weapons": ["assault_rifle"]},
                                                                      {"n": 1, "weapons": ["lmg"],
                                                                       "leader": True, "leadership": 2}]},
                         "side_b": {"quality": "militia", "figures": [{"n": 10, "weapons": ["assault_rifle"]}]},
                         "range": {"start_cm": 60, "closing_cm": 10, "min_cm": 10, "advancing": "side_a"}},
                        {"morale_casualties": "cumulative", "shock_recovery": "test_every_activation",
                         "initiative_ties": "keep_previous"}),
}


@pytest.mark.parametrize("case", sorted(FIREFIGHTS))
def test_table_matches_dice_firefight(case):
    params, rules = FIREFIGHTS[case]
    _, _, table = prepare("firefight", params, dict(rules, sampling="table"))
    _, _, dice = prepare("firefight", params, dict(rules, sampling="dice"))
    mt = run_kernel(table, 150_000, SEED)
    md = run_kernel(dice, 150_000, SEED + 1)
    assert mt["casualties_a"].mean > 0 and mt["casualties_b"].mean > 0
    for name in mt:
        assert_same_law(mt[name], md[name], f"{case} {name}")
        assert_chi_square_same_law(mt[name], md[name], f"{case} {name}")


def test_chi_square_rejects_a_shifted_law():
    """The chi-square check is not vacuous: two laws 3 points apart at 150,000 trials each fail."""
    a = McMetric(150_000, 0.5, 0.0, {0.0: 0.5, 1.0: 0.5})
    b = McMetric(150_000, 0.53, 0.0, {0.0: 0.47, 1.0: 0.53})
    with pytest.raises(AssertionError):
        assert_chi_square_same_law(a, b)
