"""Statistics helpers against textbook values and brute force."""
import math

import numpy as np
import pytest

from analyzer.core.stats import MetricAccumulator, PairedAccumulator, mean_se, wilson_interval, histogram_to_distribution


def test_wilson_known_values():
    # Wilson 95% interval for 8 / 10 (Newcombe 1998, method 3): 0.4902 .. 0.9433
    lo, hi = wilson_interval(8, 10)
    assert lo == pytest.approx(0.4902, abs=1e-4) and hi == pytest.approx(0.9433, abs=1e-4)
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)


def test_mean_se_matches_numpy():
    x = np.random.default_rng(0).integers(0, 9, 1000)
    m, se = mean_se(x.sum(), (x * x).sum(), x.size)
    assert m == pytest.approx(x.mean())
    assert se == pytest.approx(x.std(ddof=1) / math.sqrt(x.size))


def test_histogram_to_distribution():
    v, p = histogram_to_distribution(np.array([0, 3, 0, 1]))
    assert list(v) == [1, 3] and list(p) == [0.75, 0.25]
    v, p = histogram_to_distribution(np.array([2, 0, 2]), scale=2)
    assert list(v) == [0.0, 1.0]


def test_accumulator_merge_is_order_free():
    rng = np.random.default_rng(1)
    hist = rng.integers(0, 50, size=(6, 2, 5))
    moments = rng.integers(0, 1000, size=(6, 2, 3))
    a = MetricAccumulator(2, 5)
    a.add_chunks(hist, moments)
    b1, b2 = MetricAccumulator(2, 5), MetricAccumulator(2, 5)
    b1.add_chunks(hist[3:], moments[3:])
    b2.add_chunks(hist[:3], moments[:3])
    m = b1.merge(b2)
    assert np.array_equal(a.hist, m.hist) and np.array_equal(a.moments, m.moments) and a.trials == m.trials


def test_paired_difference_of_identical_runs_is_zero():
    moments = np.random.default_rng(2).integers(0, 100, size=(10, 3, 3))
    p = PairedAccumulator(3)
    p.add_chunks(moments, moments.copy(), np.full(10, 100))
    for m in range(3):
        # every batch identical: difference 0 with se 0, but never a zero-width CI (issue 25:
        # it used to be [0, 0]); the Newcombe-style bound from the arms (Wilson here) gives width
        s = p.summary(m, proportion=True)
        assert (s.mean, s.se) == (0.0, 0.0) and s.ci_low < 0 < s.ci_high


def test_paired_difference_batch_means():
    """The batch-means SE of a paired difference agrees with the per-trial SE when trials
    within a chunk are independent."""
    rng = np.random.default_rng(3)
    chunks, size = 400, 50
    a = rng.integers(0, 5, size=(chunks, size))
    b = a + rng.integers(0, 2, size=(chunks, size))          # B - A ~ Bernoulli(1/2)
    ma = np.zeros((chunks, 1, 3), np.int64)
    mb = np.zeros((chunks, 1, 3), np.int64)
    ma[:, 0, 0], mb[:, 0, 0] = a.sum(1), b.sum(1)
    p = PairedAccumulator(1)
    p.add_chunks(ma, mb, np.full(chunks, size))
    s = p.summary(0)
    d = (b - a).ravel()
    assert s.mean == pytest.approx(d.mean())
    # the batch-means SE estimate has relative SD 1/sqrt(2(k-1)) = 3.5% for k = 400 chunks;
    # rel=0.15 is about 4 of those
    assert s.se == pytest.approx(d.std(ddof=1) / math.sqrt(d.size), rel=0.15)
