"""Boarding (``shared/rules/dystopian_wars.md`` §12): AA/CC against the boarders, then one
melee round with both sides rolling simultaneously; capture when the defender is left
with 0 AP and the attacker with at least 1."""
from __future__ import annotations

import numpy as np
from numba import prange

from kernels._jit import parallel_jit
from kernels.dystopian_wars.attack import N_COUNTERS, roll_pool
from kernels.record import chunk_trials, record
from kernels.rng import STATE_WORDS, seed_stream

#: p_capture, p_derelict, attacker_ap_lost, defender_ap_lost, attacker_ap_left
N_METRICS = 5


@parallel_jit
def boarding_histogram(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                       attacker_ap, n_defense, def_value, def_explodes, def_n,
                       defender_ap, defender_dice, half_md, derelict_rule,
                       melee_value, melee_explodes, melee_n, n_bins):
    """Per-chunk (hist, moments, counters) of the boarding metrics (spec 'boarding' B0-B5)."""
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
            captured = 0
            derelict = 0
            if defender_ap == 0:            # a model with 0 AP that is boarded is captured
                a_left = attacker_ap
                d_left = 0
                captured = 1
            else:
                a_now = attacker_ap - roll_pool(state, n_defense, def_value, def_explodes, def_n, row)
                if a_now < 0:
                    a_now = 0
                md = a_now // 2 if half_md else a_now
                attacker_hits = roll_pool(state, md, melee_value, melee_explodes, melee_n, row)
                defender_hits = roll_pool(state, defender_dice, melee_value, melee_explodes, melee_n, row)
                d_left = defender_ap - attacker_hits
                if d_left < 0:
                    d_left = 0
                a_left = a_now - defender_hits
                if a_left < 0:
                    a_left = 0
                if d_left == 0 and a_left >= 1:
                    captured = 1
                elif d_left == 0 and a_left == 0 and derelict_rule:
                    derelict = 1
            values[0] = captured
            values[1] = derelict
            values[2] = attacker_ap - a_left
            values[3] = defender_ap - d_left
            values[4] = a_left
            record(hist, moments, c, values)
        counters[c, :] = row
    return hist, moments, counters
