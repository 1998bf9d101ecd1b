"""Forming a Wolfpack (digest §6.5): join rolls of the boats called in the Area."""
from __future__ import annotations

import numpy as np
from numba import prange

from kernels._jit import jit, parallel_jit
from kernels.record import chunk_trials, record
from kernels.rng import STATE_WORDS, roll_die, seed_stream


@jit
def join_roll(face, attacked, join_min, attacked_modifier, stress_face, stress_fails):
    """One candidate's d10 (§6.5): returns (joins, stress result). The Stress result is read on
    the UNMODIFIED face; under ``stress_fails`` (A6) it also fails the join."""
    stress = stress_face[face] != 0
    joins = face + (attacked_modifier if attacked else 0) >= join_min
    if stress and stress_fails:
        joins = False
    return joins, stress


@parallel_jit
def wolfpack_histogram(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, candidates, attacked,
                       join_min, attacked_modifier, stress_face, stress_fails, stress_per_result,
                       alerted_per_result, n_bins):
    """Metrics per trial: pack_size, alerted, stress_added, so_spent (0: no Radio Call).

    Candidate ``i`` carries an Attacked counter when ``i < attacked``; ``stress_face[f]`` is
    1 for the sheet's Stress faces ``f`` (index 0 unused).
    """
    n_chunks = chunk_hi - chunk_lo
    hist = np.zeros((n_chunks, 4, n_bins), np.int64)
    moments = np.zeros((n_chunks, 4, 3), np.int64)
    for c in prange(n_chunks):
        state = np.empty(STATE_WORDS, np.uint64)
        seed_stream(state, seed, key, chunk_lo + c)
        values = np.zeros(4, np.int64)
        for _ in range(chunk_trials(chunk_lo + c, chunk_size, n_trials)):
            joined = 0
            stress = 0
            for i in range(candidates):
                j, s = join_roll(roll_die(state, 10), i < attacked, join_min, attacked_modifier,
                                 stress_face, stress_fails)
                joined += j
                stress += s
            values[0] = 1 + joined
            values[1] = stress * alerted_per_result
            values[2] = stress * stress_per_result
            values[3] = 0
            record(hist, moments, c, values)
    return hist, moments
