"""Kernel of the ``gun_matrix`` question: every eligible gun x position cell (spec §2).

Each eligible cell gets one independent shot per trial. For each position, the guns that
would fire together (one per shooter) reuse this trial's cell rolls and their hits are summed:
the combined fighter's final state, ordinary and ``**`` hits alike, and its state from the
shots that land before it fires (``**`` tail shots land after its attack, §3.1).
"""
from __future__ import annotations

import numpy as np

from kernels._jit import inline_trial, jit, parallel_jit
from kernels.b17.shot import D10, MISS, SHOT_DICE, fighter_hits, shot_damage
from kernels.dice import roll_under_identified
from kernels.driver import run_trials


@jit
def gun_matrix_workspace(args):
    """Per-chunk scratch: the shot's dice and each cell's hits this trial."""
    return np.empty(SHOT_DICE, np.int64), np.zeros(args[0].shape[0], np.int64)


@inline_trial
def gun_matrix_trial(state, values, counters, ws, args):
    """Values per trial: for cell i ``(p_hit, p_destroyed, hits)`` at ``3i..3i+2``, then for
    position p ``(p_destroyed_all, hits_all, p_destroyed_before_fire)`` at ``3 n_cells + 3p``;
    the guns of position p are the cells ``position_cells[position_start[p]:position_start[p + 1]]``
    and ``cell_delayed[i]`` marks a ``**`` cell (its hits land after the fighter fires)."""
    (cell_modifier, cell_skill, cell_bonus, damage_per_hit, prior_hits, destroyed_at,
     position_start, position_cells, face_offset, quality_first, cell_delayed) = args
    dice, cell_hits = ws
    n_cells = cell_modifier.shape[0]
    n_positions = position_start.shape[0] - 1
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
        before = 0
        for j in range(position_start[p], position_start[p + 1]):
            h = cell_hits[position_cells[j]]
            total += h
            if not cell_delayed[position_cells[j]]:
                before += h
        values[base + 3 * p] = 1 if prior_hits + total >= destroyed_at else 0
        values[base + 3 * p + 1] = total
        values[base + 3 * p + 2] = 1 if prior_hits + before >= destroyed_at else 0


@parallel_jit
def gun_matrix_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """Per-chunk (hist, moments, counters): 3 metrics per cell, 3 per position."""
    n_metrics = 3 * args[0].shape[0] + 3 * (args[6].shape[0] - 1)
    return run_trials(gun_matrix_trial, gun_matrix_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size,
                      n_trials, n_metrics, n_bins, 0)
