"""analyzer/core/ranking.py with planted truths (docs/balance.md "Rankings").

Simulated paired data, integers as a kernel records them: option ``i`` scores
``x_i = C + B_i`` per trial with ``C ~ Binomial(50, 1/2)`` shared by every option (common random
numbers) and ``B_i ~ Bernoulli(p_i)`` its own, so the true mean is ``25 + p_i`` and the true
difference of two options ``p_i - p_j`` exactly. Over 400 seeds the simultaneous CIs must
cover EVERY true difference to the selected best at >= 95% less 5 binomial SE; identical options
(the same ``B`` draw) are tied; a clearly-worse option (detectable only by pairing: the shared
``C`` dwarfs the difference) leaves the best set.
"""
import math

import numpy as np
import pytest

from analyzer.core.ranking import PairedDifferences, PairedGroup, pair_index, rank, simultaneous_multiplier

SEEDS = 400
TRIALS = 200
LEVEL = 0.95
#: fewest seeds of SEEDS whose intervals must all cover: the stated rate less 5 binomial SE
MIN_COVERED = math.floor(SEEDS * LEVEL - 5 * math.sqrt(SEEDS * LEVEL * (1 - LEVEL)))


def simulate(p, n, rng, same_as=None):
    """Per-trial integer values [n, K] of the planted options; ``same_as[i] = j`` copies option j's
    draws (an identical option)."""
    common = rng.binomial(50, 0.5, size=n)
    own = (rng.random((n, len(p))) < np.asarray(p)).astype(np.int64)
    for i, j in (same_as or {}).items():
        own[:, i] = own[:, j]
    return common[:, None] + own


def paired(x):
    """What the runner hands the ranking: exact integer sums, sums of squares and pair sums."""
    n, k = x.shape
    cross = np.zeros(k * (k - 1) // 2, np.int64)
    for i in range(k):
        for j in range(i + 1, k):
            cross[pair_index(i, j, k)] = int((x[:, i] * x[:, j]).sum())
    return PairedDifferences.from_sums(n, x.sum(axis=0), (x * x).sum(axis=0), cross)


def names(k):
    return [f"o{i}" for i in range(k)]


def coverage(p, same_as=None, multiplier=None):
    """Seeds (of SEEDS) where every option's simultaneous CI to the selected best covers the true
    difference ``p_i - p_best``."""
    covered = 0
    for seed in range(SEEDS):
        x = simulate(p, TRIALS, np.random.default_rng(seed), same_as)
        pairs = paired(x)
        r = rank(names(len(p)), x.mean(axis=0), pairs, metric="x", level=LEVEL)
        b = names(len(p)).index(r.best)
        ok = True
        for o in r.options:
            i = names(len(p)).index(o.name)
            true = p[i] - p[b]
            lo, hi = o.diff_low, o.diff_high
            if multiplier is not None:          # the same difference with another multiplier
                half = multiplier * pairs.se[i, b]
                lo, hi = o.diff - half, o.diff + half
            ok &= lo - 1e-12 <= true <= hi + 1e-12
        covered += ok
    return covered


def test_pair_sums_give_the_naive_mean_and_se_of_every_difference():
    x = simulate([0.5, 0.2, 0.7, 0.4], 300, np.random.default_rng(7))
    pairs = paired(x)
    for i in range(4):
        for j in range(4):
            d = x[:, i] - x[:, j]
            assert pairs.diff[i, j] == pytest.approx(d.mean(), abs=1e-12)
            assert pairs.se[i, j] == pytest.approx(d.std(ddof=1) / math.sqrt(len(d)), abs=1e-12)


def test_all_equal_options_every_difference_covered_at_the_stated_rate():
    """The hardest case for a selected best: 8 equal options, the best is pure noise. Measured
    (seeds 0-399): 387 of 400 covered; a plain 95% t interval per difference (no multiplicity)
    covers 204, so the test fails without the simultaneous multiplier (planted mix below: 389)."""
    p = [0.5] * 8
    assert coverage(p) >= MIN_COVERED
    assert coverage(p, multiplier=1.972) < MIN_COVERED     # t(199) 97.5%: the naive interval fails


def test_planted_differences_covered_at_the_stated_rate():
    p = [0.5, 0.45, 0.55, 0.3, 0.52, 0.1]
    assert coverage(p) >= MIN_COVERED


def test_identical_options_tied_and_a_clearly_worse_one_outside_the_best_set():
    """Option 3 plays option 1's draws (identical on common random numbers): same rank, same tie
    group, difference exactly 0. Option 2 (p = 0.1 vs 0.5) is 0.4 worse: paired SE ~0.04, the
    shared noise's SE ~0.35 would hide it; it must leave the best set at every seed."""
    p = [0.5, 0.5, 0.1, 0.5]
    for seed in range(50):
        x = simulate(p, TRIALS, np.random.default_rng(seed), same_as={3: 1})
        r = rank(names(4), x.mean(axis=0), paired(x), metric="x")
        o1, o3, o2 = r.option("o1"), r.option("o3"), r.option("o2")
        assert o1.rank == o3.rank and o1.tie_group == o3.tie_group
        assert o1.diff == o3.diff
        assert [o.name for o in r.options].index("o3") == [o.name for o in r.options].index("o1") + 1
        assert not o2.in_best_set and o2.rank == 4
        assert r.option(r.best).in_best_set and r.option(r.best).diff == 0.0
        ranks = [o.rank for o in r.options]
        assert ranks == sorted(ranks) and len({o.tie_group for o in r.options}) == 3


def test_equal_means_not_identical_keep_the_question_order_and_separate_ranks():
    x = np.array([[1, 2], [2, 1]] * 10)           # equal means, different in every trial
    r = rank(["a", "b"], x.mean(axis=0), paired(x), metric="x")
    assert [o.name for o in r.options] == ["a", "b"] and [o.rank for o in r.options] == [1, 2]
    assert r.best == "a" and r.best_set == ["a", "b"]


def test_exact_differences_and_exact_ties():
    means = [0.25, 0.5, 0.5, 0.125]
    r = rank(names(4), means, PairedDifferences.exact(means), metric="x")
    assert [(o.name, o.rank, o.diff) for o in r.options] == [("o1", 1, 0.0), ("o2", 1, 0.0), ("o0", 3, -0.25),
                                                             ("o3", 4, -0.375)]
    assert r.best_set == ["o1", "o2"] and all(o.diff_low == o.diff_high for o in r.options)
    assert r.method.startswith("exact")


def test_lower_is_better_and_one_trial():
    x = np.array([[3, 1, 5]])
    r = rank(names(3), x.mean(axis=0), paired(x), metric="x", higher_is_better=False)
    assert r.best == "o1" and r.best_set == ["o1", "o0", "o2"]   # one trial: nothing distinguishable
    assert math.isnan(r.option("o0").diff_low)


def test_independent_options_and_the_multiplier():
    d = PairedDifferences.independent(100, [1.0, 2.0], [0.3, 0.4])
    assert d.se[0, 1] == pytest.approx(0.5) and not d.identical[0, 1]
    # one pair: the plain two-sided 95% t quantile; 59 options: Bonferroni over 1711 pairs
    assert simultaneous_multiplier(2, 10 ** 9) == pytest.approx(1.959964, abs=1e-5)
    assert simultaneous_multiplier(2, 11) == pytest.approx(2.228139, abs=1e-5)
    assert simultaneous_multiplier(59, 10 ** 9) == pytest.approx(4.18, abs=0.01)


def test_paired_group_pairs():
    g = PairedGroup(("a", "b", "c", "d"), 5)
    assert g.n_pairs == 6
    assert [pair_index(i, j, 4) for i in range(4) for j in range(i + 1, 4)] == list(range(6))
