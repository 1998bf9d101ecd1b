"""Fire allocation: one squadron's attacks spread over several targets, every allocation of
the comparison rolled in the same trial (independent dice per allocation).

Rules: ``shared/rules/dystopian_wars.md`` §11 (linked and split fire, damage). The linked
and split AD of each attack is computed in Python; the kernel only rolls.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from kernels._jit import parallel_jit
from kernels.dystopian_wars.attack import N_COUNTERS, attack_damage, attack_hits
from kernels.record import chunk_trials, record
from kernels.rng import STATE_WORDS, seed_stream


@parallel_jit
def fire_allocation_histogram(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                              alloc_start, attack_ad, attack_target,
                              hit_value, hit_explodes, hit_n,
                              target_defense, cancel_value, cancel_explodes, cancel_n,
                              target_dr, target_cr, target_hp, target_hp_lost,
                              small_hp_rule, crit_values, crit_cum,
                              metric_slot, n_bins):
    """Per-chunk (hist, moments, counters) of the allocation metrics.

    Allocation ``a`` owns attacks ``alloc_start[a]:alloc_start[a+1]``; attack ``k`` rolls
    ``attack_ad[k]`` dice at target ``attack_target[k]`` with that target's face table
    ``hit_value[j]`` and defence dice. Damage is judged against each target's initial state
    and summed per target; effective damage is capped at the remaining HP.
    ``metric_slot[g, a]`` is where group g (0 hp_damage, 1 kills, 2 p_kill_all) of
    allocation a goes in the metric vector.
    """
    n_chunks = chunk_hi - chunk_lo
    n_alloc = alloc_start.shape[0] - 1
    n_targets = target_dr.shape[0]
    n_metrics = 3 * n_alloc
    hist = np.zeros((n_chunks, n_metrics, n_bins), np.int64)
    moments = np.zeros((n_chunks, n_metrics, 3), np.int64)
    counters = np.zeros((n_chunks, N_COUNTERS), np.int64)
    for c in prange(n_chunks):
        state = np.empty(STATE_WORDS, np.uint64)
        seed_stream(state, seed, key, chunk_lo + c)
        values = np.zeros(n_metrics, np.int64)
        dmg = np.zeros(n_targets, np.int64)
        row = np.zeros(N_COUNTERS, np.int64)
        for _ in range(chunk_trials(chunk_lo + c, chunk_size, n_trials)):
            for a in range(n_alloc):
                dmg[:] = 0
                for k in range(alloc_start[a], alloc_start[a + 1]):
                    j = attack_target[k]
                    hits = attack_hits(state, attack_ad[k], hit_value[j], hit_explodes[j], hit_n,
                                       target_defense[j], cancel_value, cancel_explodes, cancel_n, row)
                    dmg[j] += attack_damage(state, hits, target_dr[j], target_cr[j], target_hp[j],
                                            target_hp_lost[j], True, small_hp_rule, crit_values, crit_cum)
                effective = 0
                kills = 0
                for j in range(n_targets):
                    remaining = target_hp[j] - target_hp_lost[j]
                    if dmg[j] >= remaining:
                        effective += remaining
                        kills += 1
                    else:
                        effective += dmg[j]
                values[metric_slot[0, a]] = effective
                values[metric_slot[1, a]] = kills
                values[metric_slot[2, a]] = 1 if kills == n_targets else 0
            record(hist, moments, c, values)
        counters[c, :] = row
    return hist, moments, counters
