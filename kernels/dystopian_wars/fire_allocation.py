"""Fire allocation: one squadron's attacks spread over several targets, every allocation of
the comparison rolled in the same trial on common random numbers.

Common random numbers: each trial draws ONE 64-bit word from the chunk's stream and every
allocation plays from a trial-local stream seeded from that word (:func:`kernels.rng.seed_from_word`),
so the chunk's stream advances by exactly one draw per trial whatever the allocations, no two
trials share numbers, and an allocation's values in a trial depend only on its own attacks and
that word: identical allocations (and allocations the same by symmetry whose dice are consumed
in the same order, e.g. the same attack on either of two identical targets) get identical
values, and a run of a subset of the allocations gives each the values the full run gives it.
With ``paired`` = 1 the trial also adds the pair products of the first ``n_alloc`` metrics (the
ranked objective's) into the counters from ``N_COUNTERS`` (:func:`kernels.driver.add_pair_products`).

Rules: ``docs/rules/dystopian_wars.md`` §11 (linked and split fire, damage). The linked
and split AD of each attack is computed in Python; the kernel only rolls.
"""
from __future__ import annotations

import numpy as np

from kernels._jit import jit, parallel_jit, unmanaged_jit
from kernels.driver import add_pair_products, run_trials
from kernels.dystopian_wars.attack import N_COUNTERS, attack_damage, attack_hits
from kernels.rng import STATE_WORDS, next_u64, seed_from_word


#: metric groups per allocation (analyzer.games.dystopian_wars.fire_allocation.OBJECTIVES)
N_GROUPS = 6
#: position of ``target_dr`` in the kernel's ``args`` (one entry per target)
ARG_TARGET_DR = 10
#: position of ``paired`` (1: record the objective's pair sums) in the kernel's ``args``
ARG_PAIRED = 18


@jit
def fire_allocation_workspace(args):
    """Per-chunk scratch: damage per target, and the trial-local stream state."""
    return np.zeros(args[ARG_TARGET_DR].shape[0], np.int64), np.zeros(STATE_WORDS, np.uint64)


@unmanaged_jit
def fire_allocation_trial(state, values, counters, ws, args):
    """Every allocation once, on common random numbers (module docstring): one word from the
    chunk's stream ``state``, every allocation from a local stream seeded by it.

    Allocation ``a`` owns attacks ``alloc_start[a]:alloc_start[a+1]``; attack ``k`` rolls
    ``attack_ad[k]`` dice at target ``attack_target[k]`` with that target's face table
    ``hit_value[j]`` and defence dice. Damage is judged against each target's initial state
    and summed per target; effective damage is capped at the remaining HP.
    ``metric_slot[g, a]`` is where group g (0 hp_damage, 1 kills, 2 p_kill_all, 3 p_damage:
    some attack reaches its target's DR, 4 p_critical: some attack reaches its CR, 5
    criticals: the sum of floor(hits / CR)) of allocation a goes in the metric vector.
    """
    (alloc_start, attack_ad, attack_target, hit_value, hit_explodes, hit_n,
     target_defense, cancel_value, cancel_explodes, cancel_n,
     target_dr, target_cr, target_hp, target_hp_lost, small_hp_rule, crit_values, crit_cum, metric_slot,
     paired) = args
    dmg, local = ws
    n_alloc = alloc_start.shape[0] - 1
    n_targets = target_dr.shape[0]
    word = next_u64(state)
    for a in range(n_alloc):
        seed_from_word(local, word)
        dmg[:] = 0
        damaged = 0
        critical = 0
        criticals = 0
        for k in range(alloc_start[a], alloc_start[a + 1]):
            j = attack_target[k]
            hits = attack_hits(local, attack_ad[k], hit_value[j], hit_explodes[j], hit_n,
                               target_defense[j], cancel_value, cancel_explodes, cancel_n, counters)
            dmg[j] += attack_damage(local, hits, target_dr[j], target_cr[j], target_hp[j],
                                    target_hp_lost[j], True, small_hp_rule, crit_values, crit_cum)
            if hits >= target_dr[j]:
                damaged = 1
            if hits >= target_cr[j]:
                critical = 1
            criticals += hits // target_cr[j]
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
        values[metric_slot[3, a]] = damaged
        values[metric_slot[4, a]] = critical
        values[metric_slot[5, a]] = criticals
    if paired == 1:
        add_pair_products(counters, N_COUNTERS, values, 0, n_alloc)


@parallel_jit
def fire_allocation_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """Per-chunk (hist, moments, counters) of the allocation metrics, six per allocation
    (:mod:`kernels.driver`); with ``args[ARG_PAIRED]`` = 1 the counters from ``N_COUNTERS`` are the
    K(K-1)/2 pair sums of the K allocations' objective values."""
    k = args[0].shape[0] - 1
    return run_trials(fire_allocation_trial, fire_allocation_workspace, args, seed, key, chunk_lo, chunk_hi,
                      chunk_size, n_trials, N_GROUPS * k, n_bins, N_COUNTERS + args[ARG_PAIRED] * (k * (k - 1) // 2))
