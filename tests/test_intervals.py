"""Intervals that cannot lie (issue 25): regressions and a CI calibration test.

The calibration tests simulate the sufficient statistics the accumulators get (histograms,
exact moments, per-chunk sums) with numpy, feed them through the real
``MetricAccumulator.summary`` / ``PairedAccumulator.summary`` / ``runner.paired_summary``
code, and check coverage >= 95% - 4 Monte-Carlo standard errors (or the exact coverage,
enumerated over every outcome, where the outcome space is small).
"""
import math

import numpy as np
import pytest

from analyzer.core import stats
from analyzer.core.questions import Metric
from analyzer.run.runner import paired_summary
from analyzer.core.stats import MetricAccumulator, PairedAccumulator, t_quantile_975, wilson_interval

NOMINAL = 0.95


def _acc(values: np.ndarray, n_bins: int, chunk: int | None = None) -> MetricAccumulator:
    """One metric's accumulator from per-trial integer values (one chunk, or chunks of ``chunk``)."""
    values = np.asarray(values, np.int64)
    chunk = chunk or max(len(values), 1)
    acc = MetricAccumulator(1, n_bins)
    hists, moments = [], []
    for lo in range(0, len(values), chunk):
        v = values[lo:lo + chunk]
        hists.append(np.bincount(np.clip(v, 0, n_bins - 1), minlength=n_bins)[None, :])
        moments.append([[v.sum(), (v * v).sum(), (v > n_bins - 1).sum()]])
    acc.add_chunks(np.array(hists), np.array(moments, np.int64))
    return acc


def _tolerance(reps: int) -> float:
    return 4 * math.sqrt(NOMINAL * (1 - NOMINAL) / reps)


# ---------------------------------------------------------------- regressions, one per item

def test_t_quantile_is_exact_for_small_dof():
    """Used to be a Cornish-Fisher expansion accurate only from dof 10: t(1) came out 8.04
    (exact 12.7062), t(2) 4.03 (exact 4.3027), so mean ± t·se undercovered at small n."""
    exact = {1: 12.7062, 2: 4.3027, 3: 3.1824, 5: 2.5706, 10: 2.2281, 30: 2.0423, 31: 2.0395, 120: 1.9799}
    for dof, t in exact.items():
        assert t_quantile_975(dof) == pytest.approx(t, abs=1e-4), dof


def test_one_trial_gives_no_interval():
    """``--trials 1`` used to give a count metric (3 hits) the CI [3, 3] with se 0: now no CI
    (NaN se and bounds, printed as a dash), for counts and proportions alike."""
    hist = np.zeros((1, 1, 11), np.int64)
    hist[0, 0, 3] = 1
    acc = MetricAccumulator(1, 11)
    acc.add_chunks(hist, np.array([[[3, 9, 0]]], np.int64))
    s = acc.summary(0)
    assert s.mean == 3 and math.isnan(s.se) and math.isnan(s.ci_low) and math.isnan(s.ci_high)
    p = _acc([1], 2).summary(0, proportion=True)
    assert p.mean == 1 and math.isnan(p.ci_low) and math.isnan(p.ci_high)


def test_cli_cells_print_a_dash_for_no_interval():
    """The summary printers used to show 'nan' (and '3' as if exact) for a one-trial run."""
    from analyzer.cli.summary import _cell, _fmt
    one = {"mean": 3.0, "se": math.nan, "ci_low": math.nan, "ci_high": math.nan}
    assert "nan" not in _fmt(one) and "—" in _fmt(one)
    assert "nan" not in _cell(one, True) and "—" in _cell(one, True)
    null = dict(one, se=None, ci_low=None, ci_high=None)       # summary.json writes NaN as null
    assert "—" in _fmt(null) and "—" in _cell(null, True)
    constant = _acc(np.zeros(50, np.int64), 4).summary(0).as_dict()
    assert "[" in _fmt(constant) and "[" in _cell(constant, True)     # se 0, yet a CI is shown


def test_constant_sample_has_a_rule_of_three_interval():
    """Criticals 0 in all of 50 trials used to give CI [0, 0] though the exact mean is
    0.0065: now the rule-of-three bound [0, top · (1 - 0.05^(1/50))]."""
    s = _acc(np.zeros(50, np.int64), 4).summary(0)          # criticals 0..3
    assert s.mean == 0 and s.ci_low == 0
    assert s.ci_high == pytest.approx(3 * (1 - 0.05 ** (1 / 50)))
    assert s.ci_high > 0.0065
    hits = _acc(np.full(20, 3), 11).summary(0)              # every trial 3 hits of 0..10
    assert hits.ci_low < 3 < hits.ci_high


def test_only_a_one_value_range_is_deterministic():
    """A metric whose histogram has one bin (range {0}) is deterministic by construction:
    a zero-width interval is right there, and only there."""
    s = _acc(np.zeros(30, np.int64), 1).summary(0)
    assert (s.ci_low, s.ci_high) == (0.0, 0.0)


def test_wilson_bounds_never_exclude_the_estimate():
    """0 successes used to give ci_low 5.55e-17 > mean 0 and n of n ci_high
    0.9999999999999999 < 1, for 862 of n = 1..1999."""
    bad = [n for n in range(1, 2000) if wilson_interval(0, n)[0] > 0 or wilson_interval(n, n)[1] < 1]
    assert bad == []
    for n in range(1, 2000):
        for continuity in (False, True):
            assert wilson_interval(0, n, continuity=continuity)[0] == 0.0
            assert wilson_interval(n, n, continuity=continuity)[1] == 1.0
            for x in (1, n // 3, n - 1):
                lo, hi = wilson_interval(x, n, continuity=continuity)
                assert lo <= x / n <= hi


def test_paired_all_zero_differences_are_not_a_zero_width_interval():
    """Every paired batch difference 0 (rare events) used to give diff 0 [0, 0] where the
    exact difference was +0.011: now a Newcombe-style interval from the per-arm intervals."""
    chunks = 64
    ma = np.zeros((chunks, 1, 3), np.int64)
    ma[:3, 0, 0] = 1                                        # A and B hit in the same 3 chunks
    p = PairedAccumulator(1)
    p.add_chunks(ma, ma.copy(), np.full(chunks, 1))
    d = p.summary(0, proportion=True)
    assert d.mean == 0 and d.ci_low < -0.011 and d.ci_high > 0.011
    assert stats.contains_zero(d)
    # a count metric takes its arms from the accumulators (runner.paired_summary)
    acc = _acc(ma[:, 0, 0], 4, chunk=1)
    metric = Metric("criticals", "criticals")
    s = paired_summary(p, [metric], acc, acc)["criticals"]
    assert s.ci_low < 0 < s.ci_high
    with pytest.raises(ValueError, match="per-arm"):
        p.summary(0)                                        # no arms, no honest bound: refused


def test_no_effect_wording_is_gone():
    """``sensitivity`` used to call a CI around 0 'no effect' (tornado figure) and compare
    printed no wording at all; both now say 'no detectable effect at this trial count'."""
    import inspect

    from analyzer.cli import compare as cli
    from analyzer.analyses import sensitivity
    assert stats.NO_DETECTABLE_EFFECT == "no detectable effect at this trial count"
    for mod in (cli, sensitivity):
        src = inspect.getsource(mod)
        assert '"  no effect' not in src and "NO_DETECTABLE_EFFECT" in src


def test_tornado_says_no_detectable_effect():
    """The tornado figure used to label variants whose every paired batch was equal "no
    effect"; at a finite trial count that is only "no detectable effect at this trial count"."""
    from analyzer.analyses.sensitivity import Effect, Sensitivity, Variant, tornado_figure
    import matplotlib.pyplot as plt
    v = Variant("dystopian_wars.critical_default.hp_damage", "placeholder", 2, 3)
    res = Sensitivity("s", "p_damage", 0.5, 1000, effects=[Effect(v, "p_damage", 0.0, 0.0, -0.004, 0.004)])
    fig = tornado_figure(res)
    texts = [t.get_text() for t in fig.axes[0].texts]
    plt.close(fig)
    assert any(stats.NO_DETECTABLE_EFFECT in t for t in texts), texts
    assert not any("no effect" in t for t in texts)


def test_merged_moments_cannot_overflow():
    """The int64 sum of squares used to wrap around past 2^63 - 1 (beyond ~1.5e12 trials at
    scale 2520) and give a negative variance: now merged exactly in two int64 words."""
    acc = MetricAccumulator(1, 2)
    v = 2520                                                # one kill at scale 2520
    per_chunk = 4096
    n_chunks = 64
    hist = np.zeros((n_chunks, 1, 2), np.int64)
    hist[:, 0, 1] = per_chunk
    moments = np.zeros((n_chunks, 1, 3), np.int64)
    big = 1 << 56                                           # a chunk sum of squares far beyond one chunk's, to reach 2^63 fast
    moments[:, 0, 0], moments[:, 0, 1] = v * per_chunk, big
    for _ in range(10):
        acc.add_chunks(hist, moments)
    s = acc.summary(0)
    assert s.mean == v and s.se > 0                         # a wrapped sum of squares gave se 0
    total_sq = acc.exact_moment(0, 1)
    assert total_sq == 10 * n_chunks * big > 2 ** 63       # exact, beyond int64
    assert acc.moments_carry[0, 1] > 0 and 0 <= acc.moments[0, 1] < stats.MOMENT_WORD
    merged = acc.merge(acc)
    assert merged.exact_moment(0, 1) == 2 * total_sq and merged.exact_moment(0, 0) == 2 * acc.exact_moment(0, 0)
    # a realistic total keeps carry 0 and moments the plain total (what checkpoints store)
    small = _acc(np.array([2520, 0, 5040]), 5041)
    assert small.moments_carry.sum() == 0 and small.moments[0, 1] == 2520 ** 2 + 5040 ** 2


# ---------------------------------------------------------------- calibration

def _binom_pmf(n: int, p: float) -> np.ndarray:
    x = np.arange(n + 1)
    lc = np.array([math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) for k in x])
    with np.errstate(divide="ignore"):
        return np.exp(lc + x * np.log(p) + (n - x) * np.log1p(-p))


@pytest.mark.parametrize("proportion", [True, False], ids=["proportion", "0-1 count"])
def test_exact_coverage_of_0_1_metrics(proportion):
    """Exact coverage (every outcome x of n enumerated, weighted by its binomial probability)
    of a 0/1 metric as a proportion (Wilson with continuity correction) and as a count
    (mean ± t·se with the mode bound): >= 95% at every p of a grid from 0.001 to 0.5, and
    never zero width. Plain Wilson had 86% at n = 3, p = 0.05; mean ± 1.96·se far less."""
    for n in (2, 3, 10, 50):
        summaries = [_acc(np.r_[np.ones(x, np.int64), np.zeros(n - x, np.int64)], 2).summary(0, proportion=proportion)
                     for x in range(n + 1)]
        lo = np.array([s.ci_low for s in summaries])
        hi = np.array([s.ci_high for s in summaries])
        assert (hi > lo).all(), n
        for p in np.r_[np.geomspace(0.001, 0.5, 60), 1 - np.geomspace(0.001, 0.5, 20)]:
            cover = _binom_pmf(n, p)[(lo <= p) & (p <= hi)].sum()
            assert cover >= NOMINAL - 0.0025, (n, p, cover)     # Wilson-CC's minimum is 0.948


def _truth(values: np.ndarray, probs: np.ndarray) -> float:
    return float(np.dot(values, probs))


#: name: (draw(rng, shape) -> int values, n_bins, true mean)
DISTRIBUTIONS = {
    "bernoulli p=0.02": (lambda r, sh: (r.random(sh) < 0.02).astype(np.int64), 2, 0.02),
    "criticals 0..3 rare": (lambda r, sh: r.binomial(3, 0.0022, sh), 4, 3 * 0.0022),
    "poisson 0.5 (top 12)": (lambda r, sh: np.minimum(r.poisson(0.5, sh), 12), 13,
                             _truth(np.minimum(np.arange(60), 12), [math.exp(-0.5) * 0.5 ** k / math.factorial(k)
                                                                    for k in range(60)])),
    "poisson 3 (top 15)": (lambda r, sh: np.minimum(r.poisson(3.0, sh), 15), 16,
                           _truth(np.minimum(np.arange(80), 15), [math.exp(-3) * 3.0 ** k / math.factorial(k)
                                                                  for k in range(80)])),
    "uniform 0..6": (lambda r, sh: r.integers(0, 7, sh), 7, 3.0),
    "zero-inflated 0 or 1..20": (lambda r, sh: np.where(r.random(sh) < 0.8, 0, r.integers(1, 21, sh)), 21, 2.1),
    "geometric (skewed, top 30)": (lambda r, sh: np.minimum(r.geometric(0.25, sh) - 1, 30), 31,
                                   _truth(np.minimum(np.arange(400), 30), [0.25 * 0.75 ** k for k in range(400)])),
}
REPS = 2000


@pytest.mark.parametrize("name", list(DISTRIBUTIONS))
def test_mean_interval_calibration(name):
    """Non-proportion metrics: coverage >= 95% - 4 SE over REPS seeds at n = 2, 3, 10, 50,
    never zero width; n = 1 gives the no-CI representation."""
    draw, n_bins, truth = DISTRIBUTIONS[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    one = _acc(draw(rng, (1,)), n_bins).summary(0)
    assert math.isnan(one.ci_low) and math.isnan(one.ci_high)
    for n in (2, 3, 10, 50):
        x = draw(rng, (REPS, n))
        covered = 0
        for r in range(REPS):
            s = _acc(x[r], n_bins).summary(0)
            assert s.ci_high > s.ci_low, (name, n, x[r])
            covered += s.ci_low <= truth <= s.ci_high
        assert covered / REPS >= NOMINAL - _tolerance(REPS), (name, n, covered / REPS)


#: name: (p_a, P(B differs from A), proportion?) — common random numbers: B is A with a few trials changed
PAIRED = {
    "proportion, rare events": (0.01, 0.005, True),
    "proportion, common": (0.4, 0.1, True),
    "count, rare": (0.02, 0.01, False),
    "count, common": (0.5, 0.2, False),
}


@pytest.mark.parametrize("name", list(PAIRED))
def test_paired_difference_calibration(name):
    """Paired B - A on correlated (CRN-like) arms, one trial per batch as ``compare`` uses at
    small trial counts: coverage >= 95% - 4 SE at n = 2, 3, 10, 50 and never zero width."""
    p_a, p_flip, proportion = PAIRED[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    metric = Metric("m", "m", kind="probability" if proportion else "count")
    n_bins = 2 if proportion else 4
    for n in (2, 3, 10, 50):
        if proportion:                                      # B: A's outcome, re-drawn in a few trials
            a = (rng.random((REPS, n)) < p_a).astype(np.int64)
            flip = rng.random((REPS, n)) < p_flip
            b = np.where(flip, (rng.random((REPS, n)) < 0.7).astype(np.int64), a)
            truth = (1 - p_flip) * p_a + p_flip * 0.7 - p_a
        else:                                               # counts 0..3: B adds a rare extra
            a = rng.binomial(3, p_a, (REPS, n))
            b = np.minimum(a + (rng.random((REPS, n)) < p_flip), 3)
            truth = float(np.dot(_binom_pmf(3, p_a), np.minimum(np.arange(4) + 1, 3) - np.arange(4)) * p_flip)
        covered = 0
        for r in range(REPS):
            paired = PairedAccumulator(1)
            ma = np.zeros((n, 1, 3), np.int64)
            mb = np.zeros((n, 1, 3), np.int64)
            ma[:, 0, 0], ma[:, 0, 1] = a[r], a[r] ** 2
            mb[:, 0, 0], mb[:, 0, 1] = b[r], b[r] ** 2
            paired.add_chunks(ma, mb, np.ones(n, np.int64))
            s = paired_summary(paired, [metric], _acc(a[r], n_bins, 1), _acc(b[r], n_bins, 1))["m"]
            assert s.ci_high > s.ci_low, (name, n)
            covered += s.ci_low <= truth <= s.ci_high
        assert covered / REPS >= NOMINAL - _tolerance(REPS), (name, n, covered / REPS)
