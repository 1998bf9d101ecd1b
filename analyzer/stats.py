"""Statistics over merged sufficient statistics: means, standard errors, Wilson intervals.

Kernels return per-chunk histograms and exact integer moments (:mod:`kernels.record`);
:class:`MetricAccumulator` merges them (in any order, with the same totals) and
:class:`PairedAccumulator` keeps what a common-random-numbers comparison needs, both in
memory that does not grow with the number of trials.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

Z95 = 1.959963984540054


def t_quantile_975(dof: float) -> float:
    """Two-sided 95% critical value of Student's t with ``dof`` degrees of freedom.

    Cornish-Fisher expansion around the normal quantile (Abramowitz & Stegun 26.7.5):
    within 2e-4 of the exact value for dof >= 10 (2.2281 at 10, 1.9983 at 63), and the
    normal 1.95996 as dof grows. Used where a CI rests on few batches (``compare``).
    """
    if dof <= 0:
        raise ValueError("dof must be > 0")
    z = Z95
    g1 = (z ** 3 + z) / 4
    g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96
    g3 = (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384
    g4 = (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160
    return z + g1 / dof + g2 / dof ** 2 + g3 / dof ** 3 + g4 / dof ** 4


def wilson_interval(successes: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion ``successes / n``."""
    if n <= 0:
        raise ValueError("n must be > 0")
    p = successes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_se(total: float, total_sq: float, n: int) -> tuple[float, float]:
    """Sample mean and its standard error from a sum and a sum of squares."""
    if n <= 0:
        raise ValueError("n must be > 0")
    mean = total / n
    if n == 1:
        return mean, 0.0
    var = max(total_sq / n - mean * mean, 0.0) * n / (n - 1)
    return mean, math.sqrt(var / n)


def histogram_to_distribution(counts: np.ndarray, scale: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(values, probabilities) of the non-empty bins of an integer histogram."""
    counts = np.asarray(counts)
    n = counts.sum()
    idx = np.nonzero(counts)[0]
    return idx / scale if scale != 1 else idx.astype(np.int64), counts[idx] / n


@dataclass(frozen=True)
class MetricSummary:
    """One metric at one sweep point."""

    mean: float
    se: float
    ci_low: float
    ci_high: float

    @property
    def half_width(self) -> float:
        return (self.ci_high - self.ci_low) / 2

    def as_dict(self) -> dict:
        return {"mean": self.mean, "se": self.se, "ci_low": self.ci_low, "ci_high": self.ci_high}


@dataclass
class MetricAccumulator:
    """Merged histogram and exact integer moments of ``n_metrics`` metrics."""

    n_metrics: int
    n_bins: int
    n_counters: int = 0
    hist: np.ndarray = field(init=False)
    moments: np.ndarray = field(init=False)
    counters: np.ndarray = field(init=False)
    trials: int = 0

    def __post_init__(self):
        self.hist = np.zeros((self.n_metrics, self.n_bins), np.int64)
        self.moments = np.zeros((self.n_metrics, 3), np.int64)
        self.counters = np.zeros(self.n_counters, np.int64)

    def add_chunks(self, hist: np.ndarray, moments: np.ndarray, counters: np.ndarray | None = None) -> None:
        """Fold a batch of per-chunk rows (``hist[chunk, metric, bin]``) in."""
        self.hist += hist.sum(axis=0)
        self.moments += moments.sum(axis=0)
        if counters is not None:
            self.counters += counters.sum(axis=0)[: self.n_counters]
        self.trials += int(hist[:, 0, :].sum())

    def merge(self, other: "MetricAccumulator") -> "MetricAccumulator":
        out = MetricAccumulator(self.n_metrics, self.n_bins, self.n_counters)
        out.hist = self.hist + other.hist
        out.moments = self.moments + other.moments
        out.counters = self.counters + other.counters
        out.trials = self.trials + other.trials
        return out

    def clipped(self, m: int) -> int:
        return int(self.moments[m, 2])

    def summary(self, m: int, scale: int = 1, proportion: bool = False) -> MetricSummary:
        n = self.trials
        total = float(self.moments[m, 0]) / scale
        total_sq = float(self.moments[m, 1]) / (scale * scale)
        mean, se = mean_se(total, total_sq, n)
        if proportion:
            low, high = wilson_interval(total, n)
        else:
            low, high = mean - Z95 * se, mean + Z95 * se
        return MetricSummary(mean, se, low, high)

    def distribution(self, m: int, scale: int = 1) -> tuple[np.ndarray, np.ndarray]:
        return histogram_to_distribution(self.hist[m], scale)


@dataclass
class PairedAccumulator:
    """Paired difference B - A of per-chunk sums under common random numbers.

    Chunks are independent, identically seeded blocks for A and B; the difference of
    chunk sums ``D_c`` over chunk sizes ``n_c`` gives the ratio estimator
    ``d = sum D_c / sum n_c`` with variance estimated from the chunk residuals
    ``D_c - n_c d`` (batch means). Kept as running sums, so memory is constant.
    """

    n_metrics: int
    s_d: np.ndarray = field(init=False)
    s_dd: np.ndarray = field(init=False)
    s_nd: np.ndarray = field(init=False)
    s_nn: int = 0
    trials: int = 0
    chunks: int = 0

    def __post_init__(self):
        self.s_d = np.zeros(self.n_metrics, np.float64)
        self.s_dd = np.zeros(self.n_metrics, np.float64)
        self.s_nd = np.zeros(self.n_metrics, np.float64)

    def add_chunks(self, moments_a: np.ndarray, moments_b: np.ndarray, chunk_sizes: np.ndarray):
        d = (moments_b[:, :, 0] - moments_a[:, :, 0]).astype(np.float64)  # [chunk, metric]
        n = chunk_sizes.astype(np.float64)
        self.s_d += d.sum(axis=0)
        self.s_dd += (d * d).sum(axis=0)
        self.s_nd += (n[:, None] * d).sum(axis=0)
        self.s_nn += int((chunk_sizes.astype(np.int64) ** 2).sum())
        self.trials += int(chunk_sizes.sum())
        self.chunks += int(chunk_sizes.shape[0])

    def summary(self, m: int, scale: int = 1) -> MetricSummary:
        n = self.trials
        d = self.s_d[m] / n
        resid = self.s_dd[m] - 2 * d * self.s_nd[m] + d * d * self.s_nn
        k = self.chunks
        if k < 2:
            raise ValueError("a paired CI needs at least 2 chunks (see runner.MIN_PAIRED_BATCHES)")
        var_total = max(resid, 0.0) * k / (k - 1)
        se = math.sqrt(var_total) / n
        d, se = d / scale, se / scale
        t = t_quantile_975(k - 1)
        return MetricSummary(d, se, d - t * se, d + t * se)
