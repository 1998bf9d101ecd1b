"""Feuer an Bord (source l.53): a fire burns until an extinguishing roll succeeds; the ``fire`` kernel.

"werden SOFORT 2 Schaden an einer zufälligen Zeile des Hexes verursacht, sowie 2 Schaden in
jeder weiteren Runde nach Bewegung des Schiffes, falls vorher kein Fertigkeitswurf zum Löschen
des Schiffes gelingt (dreifache Basiszahl überwürfeln) ... Je Runde kann auf dem ganzen Schiff
nur ein Löschversuch unternommen werden."
"""
from __future__ import annotations

from kernels._jit import jit, parallel_jit, unmanaged_jit
from kernels.driver import run_trials
from kernels.hacse_naval import damage as kd

N_METRICS = 5   # rounds_burning, damage, p_row_destroyed, p_sunk, damage_dealt
#: A fire that no roll can put out (e.g. 3W10 > 3 x Basiszahl 10) on a hex without a hull row
#: would burn for ever: the trial stops after this many rounds and counters[0] counts it.
MAX_FIRE_ROUNDS = 1000
N_COUNTERS = 2   # the round cap; tally T_CUT (fires or follow-up hits the workspace could not hold)


@unmanaged_jit
def extinguished(state, n_dice, threshold, overroll):
    """One Löschversuch: nW10 above ``threshold`` (= 3 x Basiszahl, 'überwürfeln') or at most it."""
    s = 0
    for _ in range(n_dice):
        s += kd.w10(state)
    return s > threshold if overroll == 1 else s <= threshold


@unmanaged_jit
def put_out(tally, fire_rows, all_fires):
    """A successful attempt puts out every fire, or the oldest one (rule extinguish_scope)."""
    if all_fires == 1:
        tally[kd.T_ACTIVE_FIRES] = 0
        return
    n = tally[kd.T_ACTIVE_FIRES]
    for i in range(1, n):
        fire_rows[i - 1] = fire_rows[i]
    tally[kd.T_ACTIVE_FIRES] = n - 1


@unmanaged_jit
def fire_trial(state, values, counters, ws, args):
    """Metrics per trial: rounds_burning, damage (capped at each row's [HP]), p_row_destroyed, p_sunk,
    damage_dealt (spec §4.5). ``per_ship`` (rule fire_damage): a burning ship takes one 2-damage hit a
    round, at the oldest fire's row (fire_row same_row) or a random row of its hex; else every fire does."""
    (start_hex, n_dice, threshold, overroll, all_fires, same_row, per_ship, rows, hex_rows, hex_n, info) = args
    dmg, tally, stack, fire_rows = ws
    kd.reset(dmg, tally)
    dealt = kd.fire_outbreak(state, start_hex, rows, hex_rows, hex_n, info, dmg, tally, stack, fire_rows)
    per_round = info[kd.FIRE_PER_ROUND]
    rounds = 0
    while tally[kd.T_ACTIVE_FIRES] > 0 and tally[kd.T_SUNK] == 0:
        if rounds == MAX_FIRE_ROUNDS:
            counters[0] += 1
            break
        if extinguished(state, n_dice, threshold, overroll):
            put_out(tally, fire_rows, all_fires)
            if tally[kd.T_ACTIVE_FIRES] == 0:
                break
        rounds += 1
        burning = tally[kd.T_ACTIVE_FIRES]   # fires started during this step burn from the next round
        if per_ship == 1:
            burning = 1
        for i in range(burning):
            if tally[kd.T_SUNK] == 1:
                break
            r = fire_rows[i]
            if same_row == 0:
                r = kd.random_row(state, hex_rows, hex_n, rows[r, kd.HEX])
            dealt += kd.hit_row(state, r, per_round, kd.FROM_FIRE, rows, hex_rows, hex_n, info, dmg, tally, stack,
                                fire_rows)
    values[0] = rounds
    values[1] = kd.damage_taken(rows, dmg)
    values[2] = kd.any_row_destroyed(rows, dmg)
    values[3] = tally[kd.T_SUNK]
    values[4] = dealt
    counters[1] += tally[kd.T_CUT]


@jit
def _ws(args):
    """(dmg, tally, stack, fire_rows) for the sheet in ``args[7]`` (see kd.workspace_arrays)."""
    return kd.workspace_arrays(args[7].shape[0])


@parallel_jit
def fire_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """Per-chunk (hist, moments, counters) of the fire metrics (:mod:`kernels.driver`)."""
    return run_trials(fire_trial, _ws, args, seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, N_METRICS,
                      n_bins, N_COUNTERS)
