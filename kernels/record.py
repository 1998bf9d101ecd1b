"""Recording per-trial metric values into per-chunk sufficient statistics.

The chunk driver (:mod:`kernels.driver`) ends every trial with :func:`record_trial` on the
trial's metric values as non-negative integers (fractions are scaled to integers by the question, e.g.
a kill split three ways is 840 in units of 1/2520). Per chunk and metric it keeps a
histogram and exact integer moments, so results merge across chunks, batches and
workers in any order with the same totals.
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
    ``moments[metric, k]`` (the chunk driver's local sums)."""
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
