"""Kernel of the ``gun_shot`` question: one gun, one shot at one fighter (spec §1)."""
from __future__ import annotations

import numpy as np

from kernels._jit import inline_trial, jit, parallel_jit
from kernels.b17.shot import D10, MISS, SHOT_DICE, fighter_hits, shot_damage
from kernels.dice import roll_under_identified
from kernels.driver import run_trials

#: metric order of the kernel's values (the question builds its Metric list in this order)
GUN_SHOT_METRICS = ("p_hit", "damage", "hits", "p_destroyed", "p_damaged_or_worse")


@jit
def shot_workspace(args):
    """Per-chunk scratch: the three identified dice of a shot."""
    return np.empty(SHOT_DICE, np.int64)


@inline_trial
def gun_shot_trial(state, values, counters, dice, args):
    """One shot. A gun that cannot fire (grey cell, masked, ``**`` without intercom, gun
    out) misses in every trial: its state metrics then come from ``prior_hits`` alone."""
    (can_fire, modifier, skill, bonus, damage_per_hit, prior_hits, danado_at, destroyed_at,
     face_offset, quality_first) = args
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


@parallel_jit
def gun_shot_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """Per-chunk (hist, moments, counters) of ``GUN_SHOT_METRICS`` (:mod:`kernels.driver`)."""
    return run_trials(gun_shot_trial, shot_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                      len(GUN_SHOT_METRICS), n_bins, 0)
