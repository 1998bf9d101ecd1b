"""Rout test (``shared/rules/dystopian_wars.md`` §8): roll rout dice (1-3 nothing, 4-5 one
success, 6 two; never exploding) and pass on enough successes."""
from __future__ import annotations

import numpy as np
from numba import prange

from kernels._jit import parallel_jit
from kernels.dystopian_wars.attack import N_COUNTERS, roll_pool
from kernels.record import chunk_trials, record
from kernels.rng import STATE_WORDS, seed_stream

#: p_pass, successes
N_METRICS = 2


@parallel_jit
def rout_histogram(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                   n_dice, rout_value, rout_explodes, rout_n, needed, n_bins):
    """Per-chunk (hist, moments, counters) of (passed, successes)."""
    n_chunks = chunk_hi - chunk_lo
    hist = np.zeros((n_chunks, N_METRICS, n_bins), np.int64)
    moments = np.zeros((n_chunks, N_METRICS, 3), np.int64)
    counters = np.zeros((n_chunks, N_COUNTERS), np.int64)
    for c in prange(n_chunks):
        state = np.empty(STATE_WORDS, np.uint64)
        seed_stream(state, seed, key, chunk_lo + c)
        values = np.zeros(N_METRICS, np.int64)
        row = np.zeros(N_COUNTERS, np.int64)
        for _ in range(chunk_trials(chunk_lo + c, chunk_size, n_trials)):
            s = roll_pool(state, n_dice, rout_value, rout_explodes, rout_n, row)
            values[0] = 1 if s >= needed else 0
            values[1] = s
            record(hist, moments, c, values)
        counters[c, :] = row
    return hist, moments, counters
