"""Wasserbomben (source l.70-75): one charge or a pattern against a U-boat whose depth and hex
are fixed or drawn from a prior; the ``depth_charge`` and ``depth_charge_pattern`` kernels.

Every charge rolls 1W10; a unit ``steps`` depth levels and hexes away takes
``max(0, W10 - 2 x steps)``, the throwing ship also ``- 1 x its speed``. The U-boat's damage
goes to a random row of its sheet (placeholder G11), with the sheet's effects
(:mod:`kernels.hacse_naval.damage`); at the end of the round a boat below its (possibly
reduced) maximum depth takes W10 per level ("W10 Schaden je Lvl Unterschied").

Measured (bench hacse-depth-charge, one thread): drawing the prior from a table of entries
repeated by weight instead of scanning cumulative weights, 10.5M -> 11.4M trials/s; the steps
between every charge and every prior entry precomputed (``steps[c, s]``) instead of
``|setting - depth| // divisor + hexes`` per charge, 11.4M -> 13.6M. The pattern kernel's
trial-local stream per pattern (issue 30: a pattern's values do not depend on which others are
played) against all patterns rolling one after the other on the chunk's stream, one thread, same
process: +0.6% time on 28 patterns of 6 charges, +6.5% on 462.
"""
from __future__ import annotations

import numpy as np

from kernels._jit import hot_jit, jit, parallel_jit, unmanaged_jit
from kernels.driver import add_pair_products, run_trials
from kernels.hacse_naval import damage as kd
from kernels.rng import STATE_WORDS, next_u64, seed_stream, uniform_int

N_METRICS = 6   # damage, p_sunk, p_leaking, thrower_damage, total_damage, damage_dealt
N_COUNTERS = 0


@hot_jit
def charge_damage(roll, steps, per_step):
    """'Je 75m Höhenunterschied oder Hex Abstand werden 2 Schaden abgezogen': 5+ steps is always 0."""
    return max(0, roll - per_step * steps)


@hot_jit
def draw_sub(state, prior_table):
    """Index of the (depth, position) drawn from the prior: ``prior_table`` holds each entry's
    index once per unit of its integer weight, so one uniform integer picks it."""
    return prior_table[uniform_int(state, prior_table.shape[0])]


@hot_jit
def drop_pattern(state, charges, n_charges, s, steps, thrower_steps, thrower_speed,
                 consts, rows, hex_rows, hex_n, info, dmg, tally, stack, fire_rows):
    """The charges ``charges[:n_charges]`` (indices into the charge tables) against a U-boat at
    prior entry ``s``; ``steps[c, s]`` = depth levels + hexes between charge ``c`` and that U-boat
    (precomputed with the depth_unit rule). Returns (the charges' damage to the U-boat by the
    formula, all damage its rows took, the thrower's damage); a sunk boat's rows take no more."""
    per_step, per_speed, one_per_unit = consts[0], consts[2], consts[3]
    n_rows = rows.shape[0]
    sub = 0
    rows_dealt = 0
    thrower = 0
    for i in range(n_charges):
        c = charges[i]
        roll = kd.w10(state)
        a = charge_damage(roll, steps[c, s], per_step)
        sub += a
        if a > 0 and tally[kd.T_SUNK] == 0:
            r = uniform_int(state, n_rows)
            rows_dealt += kd.hit_row(state, r, a, kd.FROM_WEAPON, rows, hex_rows, hex_n, info, dmg, tally, stack,
                              fire_rows)
        if one_per_unit == 1:
            roll = kd.w10(state)
        thrower += max(0, charge_damage(roll, thrower_steps[c], per_step) - per_speed * thrower_speed)
    return sub, rows_dealt, thrower


@hot_jit
def end_of_round_overrun(state, depth, max_depth, consts, rows, hex_rows, hex_n, info, dmg, tally, stack,
                         fire_rows):
    """'Befindet sich das U-Boot unterhalb seiner maximalen Tauchtiefe, erleidet es am Ende der
    Runde W10 Schaden je Lvl Unterschied' (rule overrun_dice); returns the damage dealt."""
    levels = depth - (max_depth - tally[kd.T_DEPTH_LOSS])
    if levels <= 0 or tally[kd.T_SUNK] == 1:
        return 0
    n_rows = rows.shape[0]
    dealt = 0
    if consts[4] == 0:     # per_level: a W10 per level
        for _ in range(levels):
            r = uniform_int(state, n_rows)
            dealt += kd.hit_row(state, r, kd.w10(state), kd.FROM_WEAPON, rows, hex_rows, hex_n, info, dmg, tally,
                                stack, fire_rows)
    else:                  # one_times_levels
        a = kd.w10(state) * levels
        r = uniform_int(state, n_rows)
        dealt += kd.hit_row(state, r, a, kd.FROM_WEAPON, rows, hex_rows, hex_n, info, dmg, tally, stack,
                            fire_rows)
    return dealt


@unmanaged_jit
def depth_charge_trial(state, values, counters, ws, args):
    """Metrics per trial: damage, p_sunk, p_leaking, thrower_damage, total_damage (the rows' damage, each
    capped at its [HP]), damage_dealt (not capped) (spec §4.1)."""
    (prior_depth, prior_table, charges, steps, thrower_steps, thrower_speed, max_depth,
     consts, rows, hex_rows, hex_n, info) = args
    dmg, tally, stack, fire_rows = ws
    kd.reset(dmg, tally)
    s = draw_sub(state, prior_table)
    depth = prior_depth[s]
    sub, total, thrower = drop_pattern(state, charges, charges.shape[0], s, steps, thrower_steps, thrower_speed,
                                       consts, rows, hex_rows, hex_n, info, dmg, tally, stack, fire_rows)
    total += end_of_round_overrun(state, depth, max_depth, consts, rows, hex_rows, hex_n, info, dmg, tally,
                                  stack, fire_rows)
    values[0] = sub
    values[1] = tally[kd.T_SUNK]
    values[2] = 1 if tally[kd.T_LEAKS] > 0 else 0
    values[3] = thrower
    values[4] = rows_took(rows, dmg)
    values[5] = total


@hot_jit
def rows_took(rows, dmg):
    """The damage the rows hold: each row's damage capped at its [HP] (the kernel keeps it uncapped)."""
    took = 0
    for r in range(rows.shape[0]):
        took += min(dmg[r], rows[r, kd.HP])
    return took


@unmanaged_jit
def pattern_trial(state, values, counters, ws, args):
    """One U-boat draw, then every candidate pattern (row ``i`` of ``patterns``) dropped on it:
    ``values[i]`` = 1 when pattern ``i`` sinks the boat (the ``depth_charge_pattern`` question).
    The trial takes two draws from the chunk's stream, the U-boat's prior entry and one 64-bit
    draw; pattern ``i`` rolls its dice from its own trial-local stream seeded by that draw and
    ``pattern_ids[i]`` (its number in the full enumeration, :func:`kernels.rng.seed_stream`), so
    its value in a trial does not depend on which other patterns are played, nor in what order
    (a run of a subset gives each pattern the values the full run gives it). With ``paired`` = 1
    the trial also adds ``values[i] * values[j]`` for every pair of patterns into ``counters``
    (:func:`kernels.driver.add_pair_products`: the ranking's paired differences, the patterns
    sharing the U-boat draw); it draws nothing, so the metrics are unchanged."""
    (prior_depth, prior_table, patterns, steps, thrower_steps, thrower_speed, max_depth,
     consts, rows, hex_rows, hex_n, info, pattern_ids, paired) = args
    dmg, tally, stack, fire_rows, own = ws
    s = draw_sub(state, prior_table)
    depth = prior_depth[s]
    trial_draw = next_u64(state)
    k = patterns.shape[1]
    for i in range(patterns.shape[0]):
        seed_stream(own, trial_draw, pattern_ids[i], 0)
        kd.reset(dmg, tally)
        drop_pattern(own, patterns[i], k, s, steps, thrower_steps, thrower_speed, consts, rows, hex_rows, hex_n,
                     info, dmg, tally, stack, fire_rows)
        end_of_round_overrun(own, depth, max_depth, consts, rows, hex_rows, hex_n, info, dmg, tally, stack,
                             fire_rows)
        values[i] = tally[kd.T_SUNK]
    if paired == 1:
        add_pair_products(counters, 0, values, 0, patterns.shape[0])


@jit
def _ws(args):
    """(dmg, tally, stack, fire_rows) for the sheet in ``args[8]`` (see kd.workspace_arrays)."""
    return kd.workspace_arrays(args[8].shape[0])


@jit
def _pattern_ws(args):
    """The sheet's workspace (:func:`_ws`) and a pattern's trial-local stream state."""
    dmg, tally, stack, fire_rows = kd.workspace_arrays(args[8].shape[0])
    return dmg, tally, stack, fire_rows, np.zeros(STATE_WORDS, np.uint64)


@parallel_jit
def depth_charge_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """Per-chunk (hist, moments, counters) of the four depth-charge metrics (:mod:`kernels.driver`)."""
    return run_trials(depth_charge_trial, _ws, args, seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                      N_METRICS, n_bins, N_COUNTERS)


@parallel_jit
def pattern_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """Per-chunk (hist, moments, counters) of P(sunk) for every pattern played; with ``args[13]``
    (paired) = 1 the counters are the K(K-1)/2 pair sums of the K patterns' values."""
    k = args[2].shape[0]
    return run_trials(pattern_trial, _pattern_ws, args, seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                      k, n_bins, args[13] * (k * (k - 1) // 2))
