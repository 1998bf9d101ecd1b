"""Kernel of the ``gun_shot`` question: one gun, one shot at one fighter (spec §1)."""
from __future__ import annotations

import numpy as np
from numba import prange

from kernels._jit import parallel_jit
from kernels.b17.shot import D10, MISS, SHOT_DICE, fighter_hits, shot_damage
from kernels.dice import roll_under_identified
from kernels.record import N_MOMENTS, chunk_trials, record
from kernels.rng import STATE_WORDS, seed_stream

#: metric order of the kernel's values (the question builds its Metric list in this order)
GUN_SHOT_METRICS = ("p_hit", "damage", "hits", "p_destroyed", "p_damaged_or_worse")


@parallel_jit
def gun_shot_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins,
                    can_fire, modifier, skill, bonus, damage_per_hit, prior_hits,
                    danado_at, destroyed_at, face_offset, quality_first):
    """Per-chunk (hist, moments) of ``GUN_SHOT_METRICS``.

    A gun that cannot fire (grey cell, masked, ``**`` without intercom, gun out) misses in
    every trial: its state metrics then come from ``prior_hits`` alone.
    """
    n_chunks = chunk_hi - chunk_lo
    n_metrics = len(GUN_SHOT_METRICS)
    hist = np.zeros((n_chunks, n_metrics, n_bins), np.int64)
    moments = np.zeros((n_chunks, n_metrics, N_MOMENTS), np.int64)
    for c in prange(n_chunks):
        state = np.empty(STATE_WORDS, np.uint64)
        dice = np.empty(SHOT_DICE, np.int64)
        values = np.zeros(n_metrics, np.int64)
        chunk = chunk_lo + c
        seed_stream(state, seed, key, chunk)
        for _ in range(chunk_trials(chunk, chunk_size, n_trials)):
            damage = MISS
            if can_fire:
                total = roll_under_identified(state, SHOT_DICE, D10, face_offset, dice)
                damage = shot_damage(total, dice[0], dice[1], dice[2], quality_first, modifier, skill, bonus)
            h = fighter_hits(damage, damage_per_hit)
            values[0] = 1 if damage != MISS else 0
            values[1] = max(damage, 0)
            values[2] = h
            values[3] = 1 if prior_hits + h >= destroyed_at else 0
            values[4] = 1 if prior_hits + h >= danado_at else 0
            record(hist, moments, c, values)
    return hist, moments
