"""Recording per-trial metric values into per-chunk sufficient statistics.

The chunk driver (:mod:`kernels.driver`) ends every trial with :func:`record_trial` on the
trial's metric values as non-negative integers (fractions are scaled to integers by the question, e.g.
a kill split three ways is 840 in units of 1/2520). Per chunk and metric it keeps a
histogram and exact integer moments, so results merge across chunks, batches and
workers in any order with the same totals.

Two ways to the same totals (issue 32): :func:`record_trial` adds every trial to the moments
(sum, sum of squares, clipped) and the histogram; :func:`record_histogram` adds it to the
histogram only (the values outside its bins also to three small sums) and
:func:`moments_from_histogram` forms the moments once at the chunk's end. The driver takes the
second whenever a chunk has at least as many trials as bins (every shipped point: 4096 trials a
chunk, at most ~10^4 bins), the first otherwise (one-trial chunks of a field matchup).
"""
from __future__ import annotations

import numpy as np

from kernels._jit import jit

#: moments[chunk, metric, k]: k = 0 sum, 1 sum of squares, 2 trials whose value was
#: above the histogram's last bin (clipped into it; the sums stay exact).
N_MOMENTS = 3


@jit
def record_trial(hist, moments, values):
    """Add one trial's ``values[metric]`` to one chunk's ``hist[metric, bin]`` and
    ``moments[metric, k]`` (the chunk driver's local sums, when a chunk has fewer trials than
    bins: :func:`record_histogram` is the cheaper path otherwise)."""
    top = hist.shape[1] - 1
    for m in range(values.shape[0]):
        v = values[m]
        moments[m, 0] += v
        moments[m, 1] += v * v
        b = v
        if b > top:
            b = top
            moments[m, 2] += 1
        elif b < 0:
            b = 0
        hist[m, b] += 1


#: columns of the off-histogram sums of :func:`record_histogram`: sum and sum of squares of the
#: values outside ``0 .. top`` (clipped into the top bin, or negative into bin 0), how many were above
OFF_SUM, OFF_SUM_SQ, OFF_ABOVE = 0, 1, 2


@jit
def record_histogram(hist, off, values):
    """Add one trial's ``values[metric]`` to one chunk's ``hist[metric, bin]`` only: one
    increment per metric. A value outside the bins also goes into ``off[metric]`` (its sum, its
    square, and whether it was above the top bin), so :func:`moments_from_histogram` gives the
    exact moments at the chunk's end: the same totals :func:`record_trial` adds up trial by trial,
    for a third of the per-trial work (measured in ``analyzer bench``: the recording share)."""
    top = hist.shape[1] - 1
    for m in range(values.shape[0]):
        v = values[m]
        if v <= top and v >= 0:
            hist[m, v] += 1
        elif v > top:
            hist[m, top] += 1
            off[m, OFF_SUM] += v
            off[m, OFF_SUM_SQ] += v * v
            off[m, OFF_ABOVE] += 1
        else:
            hist[m, 0] += 1
            off[m, OFF_SUM] += v
            off[m, OFF_SUM_SQ] += v * v


@jit
def moments_from_histogram(hist, off, moments):
    """``moments[metric, k]`` (sum, sum of squares, clipped) of a chunk recorded by
    :func:`record_histogram`: the in-range values from the histogram (bin ``b`` holds value
    ``b``; the top bin also holds the ``off[m, OFF_ABOVE]`` clipped values, whose own sums are in
    ``off``), plus the off-histogram sums. Exact integers, equal to :func:`record_trial`'s."""
    top = hist.shape[1] - 1
    for m in range(hist.shape[0]):
        total = off[m, OFF_SUM]
        total_sq = off[m, OFF_SUM_SQ]
        for b in range(1, top):
            h = hist[m, b]
            total += b * h
            total_sq += b * b * h
        if top > 0:
            h = hist[m, top] - off[m, OFF_ABOVE]
            total += top * h
            total_sq += top * top * h
        moments[m, 0] = total
        moments[m, 1] = total_sq
        moments[m, 2] = off[m, OFF_ABOVE]


@jit
def chunk_trials(chunk, chunk_size, n_trials):
    """Number of trials in ``chunk`` when ``n_trials`` are cut into ``chunk_size`` blocks."""
    lo = chunk * chunk_size
    hi = min(lo + chunk_size, n_trials)
    return max(hi - lo, 0)


def chunk_sizes(chunk_lo: int, chunk_hi: int, n_trials: int, chunk_size: int) -> np.ndarray:
    """Trials in each chunk ``chunk_lo .. chunk_hi - 1`` (plain numpy, for the Python side)."""
    lo = np.arange(chunk_lo, chunk_hi, dtype=np.int64) * chunk_size
    return np.clip(np.minimum(lo + chunk_size, n_trials) - lo, 0, None)
