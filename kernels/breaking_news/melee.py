"""Kernels of questions ``melee`` (man to man, up to 3 against 1, source §11) and
``building_assault`` (fighting inside a building, §11.1).

melee args = (att_melee[3], att_shocked[3], n_att, def_melee, def_shocked, shock_mod, group_sum,
ties_reroll, max_rolls). Each side rolls 1D6 + Melee (-2 shocked); the highest wins and kills.
Two or three attackers: one die plus the sum of their modifiers (group_sum, A10 default) or each
rolls its own and the best counts. A tie is rolled again (ties_reroll, capped at max_rolls and
counted) or ends with no result.
"""
from __future__ import annotations

from kernels._jit import hot_jit, parallel_jit, unmanaged_jit
from kernels.breaking_news.fire import roll_hits
from kernels.driver import no_workspace, run_trials
from kernels.rng import roll_die

N_METRICS = 3
N_COUNTERS = 1  # ties still unresolved after max_rolls rolls


@hot_jit
def attacker_score(state, att_melee, att_shocked, n_att, shock_mod, group_sum):
    """The attackers' melee score: one die + Σ modifiers, or the best individual die + modifier."""
    if group_sum:
        score = roll_die(state, 6)
        for i in range(n_att):
            score += att_melee[i] + (shock_mod if att_shocked[i] else 0)
        return score
    best = -100
    for i in range(n_att):
        s = roll_die(state, 6) + att_melee[i] + (shock_mod if att_shocked[i] else 0)
        if s > best:
            best = s
    return best


@unmanaged_jit
def melee_trial(state, values, counters, ws, args):
    att_melee, att_shocked, n_att, def_melee, def_shocked, shock_mod, group_sum, ties_reroll, max_rolls = args
    values[0] = 0
    values[1] = 0
    values[2] = 0
    for _ in range(max_rolls):
        a = attacker_score(state, att_melee, att_shocked, n_att, shock_mod, group_sum)
        d = roll_die(state, 6) + def_melee + (shock_mod if def_shocked else 0)
        if a > d:
            values[0] = 1
            return
        if d > a:
            values[1] = 1
            return
        if not ties_reroll:
            values[2] = 1
            return
    values[2] = 1
    counters[0] += 1


@parallel_jit
def melee_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    return run_trials(melee_trial, no_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                      N_METRICS, n_bins, N_COUNTERS)


@unmanaged_jit
def building_trial(state, values, counters, ws, args):
    """§11.1: every figure rolls its Melee value in dice; attackers hit on 6, defenders on 5+."""
    att_dice, att_face, def_dice, def_face = args
    values[0] = roll_hits(state, att_dice, att_face)
    values[1] = roll_hits(state, def_dice, def_face)


@parallel_jit
def building_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    return run_trials(building_trial, no_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                      2, n_bins, 0)

