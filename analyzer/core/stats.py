"""Statistics over merged sufficient statistics: means, standard errors, intervals that cannot lie.

Kernels return per-chunk histograms and exact integer moments (:mod:`kernels.record`);
:class:`MetricAccumulator` merges them (in any order, with the same totals, in exact
integers that cannot overflow: see :attr:`MetricAccumulator.moments_carry`) and
:class:`PairedAccumulator` keeps what a common-random-numbers comparison needs, both in
memory that does not grow with the number of trials.

The 95% intervals, and why each is honest at every trial count (``tests/test_intervals.py``
checks their coverage over many seeds at n = 2, 3, 10 and 50):

* **n = 1: no interval.** One trial says nothing about the spread: ``se``, ``ci_low`` and
  ``ci_high`` are NaN (printed as "—"), never a zero-width interval around the one value.
* **Proportions** (0/1 metrics, ``Metric.kind == "probability"``): the Wilson score interval
  with continuity correction (Newcombe 1998, method 4). The plain Wilson interval dips to 86%
  coverage at small n and rare events (n = 3, p = 0.05); the corrected one stays at >= 94.8%.
  Exactly 0 at 0 successes, exactly 1 at n of n, and always ``low <= p <= high``.
* **Other metrics:** mean ± t(n - 1)·se (Student t, exact for every dof: see
  :func:`t_quantile_975`), clipped to the metric's possible range, and united with a
  *mode bound* when few trials (at most :data:`FEW_NON_MODAL`) differ from the most common
  value ``v``: if ``k`` of ``n`` trials differ from ``v``, the share ``π`` of trials that differ
  is below ``q`` (the one-sided 95% Clopper-Pearson bound; for ``k = 0`` the rule of three,
  ``q = 1 - 0.05^(1/n) ≈ 3/n``), so the mean lies in ``[v - (v - lo)·q, v + (hi - v)·q]``
  whatever values the differing trials take. That keeps a constant sample (``--trials 1`` of a
  count, every trial 0 criticals in 50) from a zero-width interval, and covers the skewed,
  rare-event samples where mean ± t·se undercovers (1 hit in 50). The range ``[lo, hi]`` is
  the histogram's: ``lo = 0`` (kernels record non-negative integers) and ``hi`` the top bin's
  value (each question sizes its histogram to the metric's range), or the mean of the trials
  clipped above it when there are some.
  A metric whose range has two values (``{0, hi}``: a histogram of two bins, nothing
  clipped) is a proportion in disguise and gets the proportions' interval, scaled by ``hi``.
  Where the distribution is skewed, the t interval is widened on the skewed side by Hall's
  Edgeworth correction ``(2t² + 1)·m3 / (6·s²·n)`` (``m3`` the sample's third central moment
  from the histogram): an O(1/n) term, negligible against se at large n, without which a
  geometric-like metric covered 93% at n = 50.
* **Deterministic by construction** is a metric whose range is one value (a histogram of
  one bin and nothing clipped): only there is a zero-width interval honest. An exact answer
  (``analyzer exact``) is the other zero-width case, built by the runner, not here.
* **Paired differences B - A** (:class:`PairedAccumulator`, ``compare`` and ``sensitivity``):
  the batch-means t interval with ``k - 1`` dof, united with a Newcombe-style interval from
  the two per-arm intervals (method 10: ``d ± sqrt(arm half-widths²)``) when fewer than
  :data:`FEW_NONZERO_BATCHES` batches differ or the batch residuals are all 0 (every paired
  batch equal: rare events). Common random numbers correlate the arms positively, which only
  makes the Newcombe part conservative. A CI that contains 0 is reported as "no detectable
  effect at this trial count", never "no effect".
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np

Z95 = 1.959963984540054

#: A sample with at most this many trials different from its most common value gets the
#: mode bound united with mean ± t·se (see the module docstring): below about 20 differing
#: trials the t interval undercovers skewed and rare-event metrics.
FEW_NON_MODAL = 20
#: A paired difference resting on fewer non-zero batch differences than this gets the
#: Newcombe-style interval united with the batch-means t interval.
FEW_NONZERO_BATCHES = 20


def _t_cdf(t: float, dof: float) -> float:
    """Student t CDF from the regularized incomplete beta function (for t >= 0)."""
    x = dof / (dof + t * t)
    return 1.0 - 0.5 * _betainc(dof / 2, 0.5, x)


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b): Lentz's continued fraction (Numerical Recipes 6.4)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _betainc(b, a, 1.0 - x)
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        for num in (m * (b - m) * x / ((a + m2 - 1) * (a + m2)), -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return front * h / a


@functools.lru_cache(maxsize=512)
def _t_exact_975(dof: float) -> float:
    lo, hi = 0.0, 1000.0                 # t(1) = 12.7; t(0.05) is far beyond 1000, not used here
    for _ in range(200):
        mid = (lo + hi) / 2
        if _t_cdf(mid, dof) < 0.975:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12:
            break
    return (lo + hi) / 2


def t_quantile_975(dof: float) -> float:
    """Two-sided 95% critical value of Student's t with ``dof`` degrees of freedom.

    Exact (bisection on the t CDF, to 1e-10) for ``dof <= 30``: 12.7062 at 1, 4.3027 at 2,
    2.2281 at 10. Above 30 the Cornish-Fisher expansion around the normal quantile
    (Abramowitz & Stegun 26.7.5), within 1e-6 there and tending to the normal 1.95996.
    """
    if not dof > 0:
        raise ValueError("dof must be > 0")
    if dof <= 30:
        return _t_exact_975(float(dof))
    z = Z95
    g1 = (z ** 3 + z) / 4
    g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96
    g3 = (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384
    g4 = (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160
    return z + g1 / dof + g2 / dof ** 2 + g3 / dof ** 3 + g4 / dof ** 4


def wilson_interval(successes: float, n: float, z: float = Z95, continuity: bool = False) -> tuple[float, float]:
    """Wilson score interval for a proportion ``successes / n``; with ``continuity`` the
    continuity-corrected form (Newcombe 1998, method 4: what run summaries use).

    Exactly 0 at 0 successes and exactly 1 at ``n`` of ``n`` (the formula's float error would
    otherwise put the bound just past the estimate), and always ``low <= p <= high``.
    """
    if n <= 0:
        raise ValueError("n must be > 0")
    p = successes / n
    z2 = z * z
    if continuity:
        q = 1.0 - p
        low = (2 * n * p + z2 - 1 - z * math.sqrt(max(z2 - 2 - 1 / n + 4 * p * (n * q + 1), 0.0))) / (2 * (n + z2))
        high = (2 * n * p + z2 + 1 + z * math.sqrt(max(z2 + 2 - 1 / n + 4 * p * (n * q - 1), 0.0))) / (2 * (n + z2))
    else:
        denom = 1.0 + z2 / n
        centre = (p + z2 / (2 * n)) / denom
        half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
        low, high = centre - half, centre + half
    low = 0.0 if successes <= 0 else min(max(0.0, low), p)
    high = 1.0 if successes >= n else max(min(1.0, high), p)
    return low, high


def mean_se(total: float, total_sq: float, n: int) -> tuple[float, float]:
    """Sample mean and its standard error from a sum and a sum of squares (NaN se at n = 1:
    one trial says nothing about the spread)."""
    if n <= 0:
        raise ValueError("n must be > 0")
    mean = total / n
    if n == 1:
        return mean, math.nan
    var = max(total_sq / n - mean * mean, 0.0) * n / (n - 1)
    return mean, math.sqrt(var / n)


def _binom_cdf(k: int, n: int, q: float) -> float:
    """P(Binomial(n, q) <= k) for small ``k`` (a sum of k + 1 terms in logs)."""
    if q <= 0:
        return 1.0
    if q >= 1:
        return 0.0 if k < n else 1.0
    lq, lr = math.log(q), math.log1p(-q)
    lg = math.lgamma(n + 1)
    return min(1.0, sum(math.exp(lg - math.lgamma(j + 1) - math.lgamma(n - j + 1) + j * lq + (n - j) * lr)
                        for j in range(k + 1)))


@functools.lru_cache(maxsize=4096)          # sweeps repeat (k, n) pairs: one bisection each
def share_upper_bound(k: int, n: int, alpha: float = 0.05) -> float:
    """One-sided ``1 - alpha`` upper bound on a share seen ``k`` times in ``n`` trials
    (Clopper-Pearson; ``k = 0`` is the rule of three, ``1 - alpha^(1/n)`` ≈ 3/n)."""
    if k >= n:
        return 1.0
    if k == 0:
        return -math.expm1(math.log(alpha) / n)
    lo, hi = k / n, 1.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if _binom_cdf(k, n, mid) > alpha:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-15:
            break
    return hi


def mean_interval(hist: np.ndarray, total: float, total_sq: float, n: int, scale: int = 1,
                  clipped: int = 0) -> "MetricSummary":
    """Mean, se and 95% interval of a non-proportion metric from its histogram (bins
    ``0 .. len(hist) - 1`` in units of ``1/scale``) and its exact sums (already divided by
    ``scale`` and ``scale²``): mean ± t(n-1)·se within the metric's range, united with the
    mode bound when at most :data:`FEW_NON_MODAL` trials differ from the most common value
    (module docstring). NaN interval at n = 1; zero width only for a one-value range."""
    mean, se = mean_se(total, total_sq, n)
    hist = np.asarray(hist)
    top = len(hist) - 1
    if top == 0 and clipped == 0:                 # deterministic by construction: the range is {0}
        return MetricSummary(mean, 0.0, mean, mean)
    if n == 1:
        return MetricSummary(mean, math.nan, math.nan, math.nan)
    lo, hi = 0.0, top / scale
    if clipped:                                   # trials above the top bin: their mean bounds what we know
        below = float(np.dot(np.arange(top, dtype=np.float64), hist[:top])) / scale
        hi = max(hi, (total - below) / max(int(hist[top]), 1))
    if top == 1 and not clipped:                  # a two-value range {0, hi}: a proportion in disguise
        low, high = wilson_interval(total / hi, n, continuity=True)
        return MetricSummary(mean, se, low * hi, high * hi)
    lo, hi = min(lo, mean), max(hi, mean)
    t = t_quantile_975(n - 1)
    low, high = mean - t * se, mean + t * se
    var = se * se * n
    if var > 0:       # skewness: Hall's Edgeworth correction (2t² + 1)·m3 / (6 s² n), on the skewed side
        x = np.arange(top + 1, dtype=np.float64) / scale - mean
        shift = (2 * t * t + 1) * float(np.dot(hist, x ** 3)) / n / (6 * var * n)
        low, high = min(low, low + shift), max(high, high + shift)
    low, high = max(lo, low), min(hi, high)
    mode = int(np.argmax(hist))
    k = n - int(hist[mode])
    if clipped and mode == top:                   # the top bin mixes values: not one modal value
        k = n
    if k <= FEW_NON_MODAL:
        v = mode / scale
        q = share_upper_bound(k, n)
        low, high = min(low, v - (v - lo) * q), max(high, v + (hi - v) * q)
    return MetricSummary(mean, se, min(low, mean), max(high, mean))


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


#: ``moments_carry`` counts multiples of this (2^62) that ``moments`` does not hold.
MOMENT_WORD = 1 << 62
#: Below this (2^61) two int64 words add without overflow: :meth:`MetricAccumulator.add_chunks`
#: takes the plain int64 sum then (the Python-int path costs ~60 us a batch).
_FAST_LIMIT = 1 << 61


def _split_words(exact: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact Python-int totals as ``(low, carry)`` int64 words, ``exact = carry * 2^62 + low``:
    ``carry`` is 0 and ``low`` the total itself whenever it fits in (-2^62, 2^62)."""
    low = np.zeros(exact.shape, np.int64)
    carry = np.zeros(exact.shape, np.int64)
    for idx, x in np.ndenumerate(exact):
        x = int(x)
        if -MOMENT_WORD < x < MOMENT_WORD:
            low[idx] = x
        else:
            carry[idx], low[idx] = divmod(x, MOMENT_WORD)
    return low, carry


@dataclass
class MetricAccumulator:
    """Merged histogram and exact integer moments of ``n_metrics`` metrics.

    ``moments[m, k]`` (k = 0 sum, 1 sum of squares, 2 clipped trials) are exact: batches are
    summed in Python integers and stored as two int64 words, ``moments`` and
    ``moments_carry`` (the total is ``moments_carry * 2^62 + moments``). ``moments_carry`` is
    0, and ``moments`` the plain total, below ~10^12 trials at scale 2520 (where one int64
    sum of squares would overflow); :meth:`exact_moment` reads the full value. (A batch's
    rows arrive as int64 sums over at most ``BATCH_CHUNKS`` chunks of 4096 trials: exact for
    per-trial values below ~5.8e6 units.) Checkpoints must store both words.
    """

    n_metrics: int
    n_bins: int
    n_counters: int = 0
    hist: np.ndarray = field(init=False)
    moments: np.ndarray = field(init=False)
    moments_carry: np.ndarray = field(init=False)
    counters: np.ndarray = field(init=False)
    trials: int = 0

    def __post_init__(self):
        self.hist = np.zeros((self.n_metrics, self.n_bins), np.int64)
        self.moments = np.zeros((self.n_metrics, 3), np.int64)
        self.moments_carry = np.zeros((self.n_metrics, 3), np.int64)
        self.counters = np.zeros(self.n_counters, np.int64)

    def _exact(self) -> np.ndarray:
        return self.moments_carry.astype(object) * MOMENT_WORD + self.moments.astype(object)

    def exact_moment(self, m: int, k: int) -> int:
        """``moments[m, k]`` as an exact Python integer (both words)."""
        return int(self.moments_carry[m, k]) * MOMENT_WORD + int(self.moments[m, k])

    def add_chunks(self, hist: np.ndarray, moments: np.ndarray, counters: np.ndarray | None = None) -> None:
        """Fold a batch of per-chunk rows (``hist[chunk, metric, bin]``) in. A chunk's own
        int64 sums are bounded by its size; the sum over chunks is taken in Python ints."""
        self.hist += hist.sum(axis=0)
        batch = np.asarray(moments).sum(axis=0)         # int64: bounded by the batch's size (above)
        if not self.moments_carry.any() and (np.abs(self.moments).max(initial=0) < _FAST_LIMIT
                                             and np.abs(batch).max(initial=0) < _FAST_LIMIT):
            self.moments = self.moments + batch         # both below 2^61: the int64 sum is exact
        else:
            self.moments, self.moments_carry = _split_words(self._exact() + batch.astype(object))
        if counters is not None:
            self.counters += counters.sum(axis=0)[: self.n_counters]
        self.trials += int(hist[:, 0, :].sum())

    def merge(self, other: "MetricAccumulator") -> "MetricAccumulator":
        out = MetricAccumulator(self.n_metrics, self.n_bins, self.n_counters)
        out.hist = self.hist + other.hist
        out.moments, out.moments_carry = _split_words(self._exact() + other._exact())
        out.counters = self.counters + other.counters
        out.trials = self.trials + other.trials
        return out

    def clipped(self, m: int) -> int:
        return self.exact_moment(m, 2)

    def summary(self, m: int, scale: int = 1, proportion: bool = False) -> MetricSummary:
        """Mean, se and 95% interval of metric ``m`` (the rules: module docstring)."""
        n = self.trials
        total = self.exact_moment(m, 0) / scale
        total_sq = self.exact_moment(m, 1) / (scale * scale)
        if proportion:
            mean, se = mean_se(total, total_sq, n)
            if n == 1:
                return MetricSummary(mean, math.nan, math.nan, math.nan)
            low, high = wilson_interval(total, n, continuity=True)
            return MetricSummary(mean, se, low, high)
        return mean_interval(self.hist[m], total, total_sq, n, scale, self.clipped(m))

    def distribution(self, m: int, scale: int = 1) -> tuple[np.ndarray, np.ndarray]:
        return histogram_to_distribution(self.hist[m], scale)


@dataclass
class PairedAccumulator:
    """Paired difference B - A of per-chunk sums under common random numbers.

    Chunks are independent, identically seeded blocks for A and B; the difference of
    chunk sums ``D_c`` over chunk sizes ``n_c`` gives the ratio estimator
    ``d = sum D_c / sum n_c`` with variance estimated from the chunk residuals
    ``D_c - n_c d`` (batch means). Kept as running sums, so memory is constant; also how many
    batches differ at all (``nonzero``) and each arm's sum, for the Newcombe-style part of
    :meth:`summary` when few do.
    """

    n_metrics: int
    s_d: np.ndarray = field(init=False)
    s_dd: np.ndarray = field(init=False)
    s_nd: np.ndarray = field(init=False)
    nonzero: np.ndarray = field(init=False)
    s_a: np.ndarray = field(init=False)
    s_b: np.ndarray = field(init=False)
    s_nn: int = 0
    trials: int = 0
    chunks: int = 0

    def __post_init__(self):
        self.s_d = np.zeros(self.n_metrics, np.float64)
        self.s_dd = np.zeros(self.n_metrics, np.float64)
        self.s_nd = np.zeros(self.n_metrics, np.float64)
        self.nonzero = np.zeros(self.n_metrics, np.int64)
        self.s_a = np.zeros(self.n_metrics, np.float64)
        self.s_b = np.zeros(self.n_metrics, np.float64)

    def add_chunks(self, moments_a: np.ndarray, moments_b: np.ndarray, chunk_sizes: np.ndarray):
        d = (moments_b[:, :, 0] - moments_a[:, :, 0]).astype(np.float64)  # [chunk, metric]
        n = chunk_sizes.astype(np.float64)
        self.s_d += d.sum(axis=0)
        self.s_dd += (d * d).sum(axis=0)
        self.s_nd += (n[:, None] * d).sum(axis=0)
        self.nonzero += (d != 0).sum(axis=0)
        self.s_a += moments_a[:, : self.n_metrics, 0].astype(np.float64).sum(axis=0)
        self.s_b += moments_b[:, : self.n_metrics, 0].astype(np.float64).sum(axis=0)
        self.s_nn += int((chunk_sizes.astype(np.int64) ** 2).sum())
        self.trials += int(chunk_sizes.sum())
        self.chunks += int(chunk_sizes.shape[0])

    def summary(self, m: int, scale: int = 1, *, proportion: bool = False,
                arm_a: MetricSummary | None = None, arm_b: MetricSummary | None = None) -> MetricSummary:
        """B - A with its 95% interval: the batch-means t interval (``k - 1`` dof), united
        with a Newcombe-style interval from the per-arm intervals when fewer than
        :data:`FEW_NONZERO_BATCHES` batches differ or every residual is 0 (module docstring).
        The arms are ``arm_a`` / ``arm_b`` (each arm's :meth:`MetricAccumulator.summary`);
        for a proportion they default to the arms' Wilson intervals from the paired sums.
        A non-proportion metric that needs them and has none is refused (ValueError), not
        given a zero-width interval."""
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
        low, high = d - t * se, d + t * se
        if self.nonzero[m] < FEW_NONZERO_BATCHES or se == 0:
            if proportion and arm_a is None:
                arm_a = _wilson_arm(self.s_a[m] / scale, n)
            if proportion and arm_b is None:
                arm_b = _wilson_arm(self.s_b[m] / scale, n)
            if arm_a is None or arm_b is None:
                raise ValueError("a paired CI resting on few differing batches needs the per-arm summaries "
                                 "(arm_a, arm_b)")
            nl, nh = newcombe_interval(arm_a, arm_b)
            low, high = min(low, nl), max(high, nh)
        return MetricSummary(d, se, low, high)


def _wilson_arm(total: float, n: int) -> MetricSummary:
    low, high = wilson_interval(total, n, continuity=True)
    return MetricSummary(total / n, math.nan, low, high)


def newcombe_interval(arm_a: MetricSummary, arm_b: MetricSummary) -> tuple[float, float]:
    """Newcombe's interval (1998, method 10) for ``B - A`` from the two arms' intervals:
    ``d - sqrt((b - b_low)² + (a_high - a)²) .. d + sqrt((b_high - b)² + (a - a_low)²)``.
    Built for independent arms; common random numbers correlate them positively, which
    makes it conservative. Positive width whenever either arm's interval has one."""
    d = arm_b.mean - arm_a.mean
    low = d - math.hypot(arm_b.mean - arm_b.ci_low, arm_a.ci_high - arm_a.mean)
    high = d + math.hypot(arm_b.ci_high - arm_b.mean, arm_a.mean - arm_a.ci_low)
    return low, high


#: what a CI that contains 0 is called in compare and sensitivity outputs (never "no effect":
#: a CI at a modest trial count can contain 0 around a real difference)
NO_DETECTABLE_EFFECT = "no detectable effect at this trial count"


def contains_zero(s) -> bool:
    """Whether a difference's 95% CI (a :class:`MetricSummary` or its dict) contains 0."""
    low, high = (s["ci_low"], s["ci_high"]) if isinstance(s, dict) else (s.ci_low, s.ci_high)
    return bool(low <= 0 <= high)
