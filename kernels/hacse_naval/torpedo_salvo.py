"""Torpedos (source l.79-91) and See-Minen (l.93-95): nW10 damage to a ship's eligible rows; the
``torpedo_salvo`` and ``mine_field`` kernels.

"Torpedos verursachen (meist) 5W10 Schaden, jedoch nur an Rumpf, Maschinenraum, Tank oder
Magazin"; a mine deals 3W10 "wie Torpedos". The struck row (placeholder G4, rules hit_location /
mine_hit_location): ``hit_mode`` 0 = a uniform hex of ``elig_hexes`` (the hexes holding such a row;
only the bow hex under bow_hex), then a uniform such row of it; 1 = uniform over ``elig_rows``.
A sunk ship takes no further hit.
"""
from __future__ import annotations

from kernels._jit import jit, parallel_jit, unmanaged_jit
from kernels.driver import run_trials
from kernels.hacse_naval import damage as kd
from kernels.rng import uniform_int

N_TORPEDO_METRICS = 5   # p_sunk, damage, speed_lost, fires, damage_dealt
N_MINE_METRICS = 3      # p_sunk, damage, damage_dealt
N_COUNTERS = 1          # tally T_CUT: fires or follow-up hits the workspace could not hold


@unmanaged_jit
def underwater_hit(state, n_dice, elig_hexes, elig_rows, hit_mode, rows, hex_rows, hex_n, hex_elig, hex_elig_n,
                   info, dmg, tally, stack, fire_rows):
    """nW10 to a row drawn by ``hit_mode`` (module doc); returns the damage dealt (follow-ups
    included, not capped)."""
    if hit_mode == 1:
        r = elig_rows[uniform_int(state, elig_rows.shape[0])]
    else:
        n_h = elig_hexes.shape[0]
        h = elig_hexes[0] if n_h == 1 else elig_hexes[uniform_int(state, n_h)]
        r = kd.random_row(state, hex_elig, hex_elig_n, h)
    a = 0
    for _ in range(n_dice):
        a += kd.w10(state)
    return kd.hit_row(state, r, a, kd.FROM_WEAPON, rows, hex_rows, hex_n, info, dmg, tally, stack, fire_rows)


@unmanaged_jit
def torpedo_salvo_trial(state, values, counters, ws, args):
    """n torpedoes, each hitting with probability hit_num / hit_den (spec §4.3)."""
    (n_torpedoes, hit_num, hit_den, n_dice, elig_hexes, elig_rows, hit_mode, rows, hex_rows, hex_n, hex_elig,
     hex_elig_n, info) = args
    dmg, tally, stack, fire_rows = ws
    kd.reset(dmg, tally)
    dealt = 0
    for _ in range(n_torpedoes):
        if uniform_int(state, hit_den) < hit_num and tally[kd.T_SUNK] == 0:
            dealt += underwater_hit(state, n_dice, elig_hexes, elig_rows, hit_mode, rows, hex_rows, hex_n, hex_elig,
                                    hex_elig_n, info, dmg, tally, stack, fire_rows)
    values[0] = tally[kd.T_SUNK]
    values[1] = kd.damage_taken(rows, dmg)
    values[2] = kd.speed_lost(rows, info, dmg, tally)
    values[3] = tally[kd.T_FIRES]
    values[4] = dealt
    counters[0] += tally[kd.T_CUT]


@unmanaged_jit
def mine_field_trial(state, values, counters, ws, args):
    """A ship crossing ``n_hexes`` hexes, each holding a mine with probability mine_num / mine_den
    ("See-Minen lösen aus, wenn ein Schiff das gleiche Hex betritt"), until it sinks (spec §4.4)."""
    (n_hexes, mine_num, mine_den, n_dice, elig_hexes, elig_rows, hit_mode, rows, hex_rows, hex_n, hex_elig,
     hex_elig_n, info) = args
    dmg, tally, stack, fire_rows = ws
    kd.reset(dmg, tally)
    dealt = 0
    for _ in range(n_hexes):
        if tally[kd.T_SUNK] == 1:
            break
        if uniform_int(state, mine_den) < mine_num:
            dealt += underwater_hit(state, n_dice, elig_hexes, elig_rows, hit_mode, rows, hex_rows, hex_n, hex_elig,
                                    hex_elig_n, info, dmg, tally, stack, fire_rows)
    values[0] = tally[kd.T_SUNK]
    values[1] = kd.damage_taken(rows, dmg)
    values[2] = dealt
    counters[0] += tally[kd.T_CUT]


@jit
def _ws(args):
    """(dmg, tally, stack, fire_rows) for the sheet in ``args[7]`` (see kd.workspace_arrays)."""
    n_rows = args[7].shape[0]
    return kd.workspace_arrays(n_rows)


@parallel_jit
def torpedo_salvo_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """Per-chunk (hist, moments, counters) of p_sunk, damage, speed_lost, fires, damage_dealt (:mod:`kernels.driver`)."""
    return run_trials(torpedo_salvo_trial, _ws, args, seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                      N_TORPEDO_METRICS, n_bins, N_COUNTERS)


@parallel_jit
def mine_field_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """Per-chunk (hist, moments, counters) of p_sunk, damage, damage_dealt (:mod:`kernels.driver`)."""
    return run_trials(mine_field_trial, _ws, args, seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                      N_MINE_METRICS, n_bins, N_COUNTERS)
