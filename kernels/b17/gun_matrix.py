"""Kernel of the ``gun_matrix`` question: every eligible gun x position cell (spec §2).

Each eligible cell gets one independent shot per trial. For each position, the guns that
would fire together (one per shooter) reuse this trial's cell rolls and their hits are summed:
the combined fighter's final state, ordinary and ``**`` hits alike.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from kernels._jit import parallel_jit
from kernels.b17.shot import D10, MISS, SHOT_DICE, fighter_hits, shot_damage
from kernels.dice import roll_under_identified
from kernels.record import N_MOMENTS, chunk_trials, record
from kernels.rng import STATE_WORDS, seed_stream


@parallel_jit
def gun_matrix_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins,
                      cell_modifier, cell_skill, cell_bonus, damage_per_hit, prior_hits, destroyed_at,
                      position_start, position_cells, face_offset, quality_first):
    """Values per trial: for cell i ``(p_hit, p_destroyed, hits)`` at ``3i..3i+2``, then for
    position p ``(p_destroyed_all, hits_all)`` at ``3 n_cells + 2p``; the guns of position p
    are the cells ``position_cells[position_start[p]:position_start[p + 1]]``."""
    n_chunks = chunk_hi - chunk_lo
    n_cells = cell_modifier.shape[0]
    n_positions = position_start.shape[0] - 1
    n_metrics = 3 * n_cells + 2 * n_positions
    hist = np.zeros((n_chunks, n_metrics, n_bins), np.int64)
    moments = np.zeros((n_chunks, n_metrics, N_MOMENTS), np.int64)
    for c in prange(n_chunks):
        state = np.empty(STATE_WORDS, np.uint64)
        dice = np.empty(SHOT_DICE, np.int64)
        values = np.zeros(n_metrics, np.int64)
        cell_hits = np.zeros(n_cells, np.int64)
        chunk = chunk_lo + c
        seed_stream(state, seed, key, chunk)
        for _ in range(chunk_trials(chunk, chunk_size, n_trials)):
            for i in range(n_cells):
                total = roll_under_identified(state, SHOT_DICE, D10, face_offset, dice)
                damage = shot_damage(total, dice[0], dice[1], dice[2], quality_first, cell_modifier[i],
                                     cell_skill[i], cell_bonus[i])
                h = fighter_hits(damage, damage_per_hit)
                cell_hits[i] = h
                values[3 * i] = 1 if damage != MISS else 0
                values[3 * i + 1] = 1 if prior_hits + h >= destroyed_at else 0
                values[3 * i + 2] = h
            base = 3 * n_cells
            for p in range(n_positions):
                total = 0
                for j in range(position_start[p], position_start[p + 1]):
                    total += cell_hits[position_cells[j]]
                values[base + 2 * p] = 1 if prior_hits + total >= destroyed_at else 0
                values[base + 2 * p + 1] = total
            record(hist, moments, c, values)
    return hist, moments
