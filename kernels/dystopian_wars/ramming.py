"""Rams and collisions (``shared/rules/dystopian_wars.md`` §10): two pools of 4+ dice, the
second either simultaneous or reduced by the first's damage (the rammed model answers
with its current HP).

One kernel serves both questions:

- ram: first pool = the rammer's RR dice against the rammed model (criticals allowed);
  second pool = the rammed model's HP dice against the rammer, ``reply_after_damage``
  reducing it by the damage just taken;
- collision: first pool = b's dice (or the terrain's) against a, second = a's against b,
  simultaneous; criticals only where ``rules.ram_no_crits`` lets them.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from kernels._jit import parallel_jit
from kernels.dystopian_wars.attack import N_COUNTERS, attack_damage, roll_pool
from kernels.record import chunk_trials, record
from kernels.rng import STATE_WORDS, seed_stream

#: metric order: damage to the first pool's target, to the second's, and whether each is destroyed
N_METRICS = 4


@parallel_jit
def exchange_histogram(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                       hit_value, hit_explodes, hit_n,
                       n_first, first_crits, dr1, cr1, hp1, hp_lost1,
                       n_second, second_crits, reply_after_damage, dr2, cr2, hp2, hp_lost2,
                       small_hp_rule, crit_values, crit_cum, n_bins):
    """Per-chunk (hist, moments, counters) of (damage to model 1, damage to model 2,
    model 1 destroyed, model 2 destroyed). Model 1 is the first pool's target."""
    n_chunks = chunk_hi - chunk_lo
    hist = np.zeros((n_chunks, N_METRICS, n_bins), np.int64)
    moments = np.zeros((n_chunks, N_METRICS, 3), np.int64)
    counters = np.zeros((n_chunks, N_COUNTERS), np.int64)
    remaining1 = hp1 - hp_lost1
    remaining2 = hp2 - hp_lost2
    for c in prange(n_chunks):
        state = np.empty(STATE_WORDS, np.uint64)
        seed_stream(state, seed, key, chunk_lo + c)
        values = np.zeros(N_METRICS, np.int64)
        row = np.zeros(N_COUNTERS, np.int64)
        for _ in range(chunk_trials(chunk_lo + c, chunk_size, n_trials)):
            h1 = roll_pool(state, n_first, hit_value, hit_explodes, hit_n, row)
            d1 = attack_damage(state, h1, dr1, cr1, hp1, hp_lost1, first_crits, small_hp_rule,
                               crit_values, crit_cum)
            n2 = n_second
            if reply_after_damage:
                n2 = n_second - d1
                if n2 < 0:
                    n2 = 0
            h2 = roll_pool(state, n2, hit_value, hit_explodes, hit_n, row)
            d2 = attack_damage(state, h2, dr2, cr2, hp2, hp_lost2, second_crits, small_hp_rule,
                               crit_values, crit_cum)
            values[0] = d1
            values[1] = d2
            values[2] = 1 if d1 >= remaining1 else 0
            values[3] = 1 if d2 >= remaining2 else 0
            record(hist, moments, c, values)
        counters[c, :] = row
    return hist, moments, counters
