"""Kernels of questions ``melee`` (man to man, up to 3 against 1, source §11) and
``building_assault`` (fighting inside a building, §11.1: hits, then the saves they force).

melee args = (att_melee[3], att_shocked[3], n_att, def_melee, def_shocked, shock_mod, group,
ties_reroll, max_rolls). Each side rolls 1D6 + Melee (-2 shocked); the highest wins and kills.
Two or three attackers (``group``, rule option ``melee_group``): 0 one die plus the sum of their
modifiers (A10 default); 1 each rolls its own and the best counts; 2 each rolls its own die and
all dice and modifiers are summed ("tirando 1D6 por cada figura combatiente ... se añaden los
modificadores de cada uno"). A tie is rolled again (ties_reroll, capped at max_rolls and counted)
or ends with no result.

building args = (att_dice, att_face, def_dice, def_face, att_figures, def_figures, att_save,
def_save, pooled). Metrics: attacker_hits, defender_hits, attacker_casualties,
defender_casualties.
"""
from __future__ import annotations

from kernels._jit import hot_jit, inline_trial, parallel_jit, unmanaged_jit
from kernels.breaking_news.fire import roll_hits, survives_hits
from kernels.driver import no_workspace, run_trials
from kernels.rng import roll_die

N_METRICS = 3
N_COUNTERS = 1  # ties still unresolved after max_rolls rolls


@hot_jit
def attacker_score(state, att_melee, att_shocked, n_att, shock_mod, group):
    """The attackers' melee score: one die + Σ modifiers (0), the best individual die + modifier (1),
    or Σ (own die + modifier) (2)."""
    if group == 0:
        score = roll_die(state, 6)
        for i in range(n_att):
            score += att_melee[i] + (shock_mod if att_shocked[i] else 0)
        return score
    if group == 2:
        score = 0
        for i in range(n_att):
            score += roll_die(state, 6) + att_melee[i] + (shock_mod if att_shocked[i] else 0)
        return score
    best = -100
    for i in range(n_att):
        s = roll_die(state, 6) + att_melee[i] + (shock_mod if att_shocked[i] else 0)
        if s > best:
            best = s
    return best


@inline_trial
def melee_trial(state, values, counters, ws, args):
    att_melee, att_shocked, n_att, def_melee, def_shocked, shock_mod, group, ties_reroll, max_rolls = args
    values[0] = 0
    values[1] = 0
    values[2] = 0
    for _ in range(max_rolls):
        a = attacker_score(state, att_melee, att_shocked, n_att, shock_mod, group)
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
def figures_removed(state, hits, figures, save_face, pooled):
    """Figures lost to ``hits`` saves (§9). Per figure (default): the owner spreads the saves as evenly
    as possible (the §11.1 example's "una de las 4 figuras ... tendrá que hacer doble tirada") and a
    figure goes at its first failed save. Pooled: every failed save removes one figure, at most all."""
    if pooled:
        failed = 0
        for _ in range(hits):
            if roll_die(state, 6) < save_face:
                failed += 1
        return min(failed, figures)
    q = hits // figures
    r = hits % figures
    lost = 0
    for i in range(figures):
        if not survives_hits(state, q + 1 if i < r else q, save_face):
            lost += 1
    return lost


@inline_trial
def building_trial(state, values, counters, ws, args):
    """§11.1: every figure rolls its Melee value in dice; attackers hit on 6, defenders on 5+; both
    sides roll at once, then each saves against the other's hits."""
    att_dice, att_face, def_dice, def_face, att_figures, def_figures, att_save, def_save, pooled = args
    att_hits = roll_hits(state, att_dice, att_face)
    def_hits = roll_hits(state, def_dice, def_face)
    values[0] = att_hits
    values[1] = def_hits
    values[2] = figures_removed(state, def_hits, att_figures, att_save, pooled)
    values[3] = figures_removed(state, att_hits, def_figures, def_save, pooled)


@parallel_jit
def building_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    return run_trials(building_trial, no_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                      4, n_bins, 0)

