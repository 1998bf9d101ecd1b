"""Turning one-value-per-trial histograms into the (hist, moments) rows of the runner."""
from __future__ import annotations

import numpy as np

from analyzer.questions import Counter
from kernels.dice import EXPLOSION_DEPTH_CAP
from kernels.record import N_MOMENTS

#: Counter columns 0 and 1 of every kernel that rolls pools through
#: :func:`kernels.dice.pool_total` (its ``counters[0]`` and ``counters[1]``).
EXPLOSION_CAPS = Counter("explosion_caps", f"explosion chains cut at kernels.dice.EXPLOSION_DEPTH_CAP = "
                                           f"{EXPLOSION_DEPTH_CAP} generations (their dice are dropped, "
                                           f"biasing results low)")
DICE_ROLLED = Counter("dice_rolled")
POOL_COUNTERS = (EXPLOSION_CAPS, DICE_ROLLED)


def rows_from_histograms(hists: list[np.ndarray], n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Stack per-chunk histograms ``[chunk, value]`` of several metrics into
    ``hist[chunk, metric, bin]`` and exact integer ``moments[chunk, metric, 3]``."""
    n_chunks = hists[0].shape[0]
    hist = np.zeros((n_chunks, len(hists), n_bins), np.int64)
    moments = np.zeros((n_chunks, len(hists), N_MOMENTS), np.int64)
    for m, h in enumerate(hists):
        values = np.arange(h.shape[1], dtype=np.int64)
        width = min(h.shape[1], n_bins)
        hist[:, m, :width] = h[:, :width]
        if h.shape[1] > n_bins:
            hist[:, m, n_bins - 1] += h[:, n_bins:].sum(axis=1)
            moments[:, m, 2] = h[:, n_bins:].sum(axis=1)
        moments[:, m, 0] = h @ values
        moments[:, m, 1] = h @ (values * values)
    return hist, moments


def threshold_rows(h: np.ndarray, at_least: int) -> np.ndarray:
    """Per-chunk 0/1 histogram of ``value >= at_least`` from a value histogram."""
    out = np.zeros((h.shape[0], 2), np.int64)
    out[:, 1] = h[:, max(at_least, 0):].sum(axis=1)
    out[:, 0] = h.sum(axis=1) - out[:, 1]
    return out
