"""Boarding (``docs/rules/dystopian_wars.md`` §12): AA/CC against the boarders, then one
melee round with both sides rolling simultaneously; capture when the defender is left
with 0 AP and the attacker with at least 1."""
from __future__ import annotations

from kernels._jit import inline_trial, parallel_jit
from kernels.driver import no_workspace, run_trials
from kernels.dystopian_wars.attack import N_COUNTERS, roll_pool

#: p_capture, p_derelict, attacker_ap_lost, defender_ap_lost, attacker_ap_left
N_METRICS = 5


@inline_trial
def boarding_trial(state, values, counters, ws, args):
    """One boarding action: the values of the boarding metrics (spec 'boarding' B0-B5)."""
    (attacker_ap, n_defense, def_value, def_explodes, def_n, defender_ap, defender_dice, half_md,
     derelict_rule, melee_value, melee_explodes, melee_n) = args
    captured = 0
    derelict = 0
    if defender_ap == 0:            # a model with 0 AP that is boarded is captured
        a_left = attacker_ap
        d_left = 0
        captured = 1
    else:
        a_now = attacker_ap - roll_pool(state, n_defense, def_value, def_explodes, def_n, counters)
        if a_now < 0:
            a_now = 0
        md = a_now // 2 if half_md else a_now
        attacker_hits = roll_pool(state, md, melee_value, melee_explodes, melee_n, counters)
        defender_hits = roll_pool(state, defender_dice, melee_value, melee_explodes, melee_n, counters)
        d_left = defender_ap - attacker_hits
        if d_left < 0:
            d_left = 0
        a_left = a_now - defender_hits
        if a_left < 0:
            a_left = 0
        if d_left == 0 and a_left >= 1:
            captured = 1
        elif d_left == 0 and a_left == 0 and derelict_rule:
            derelict = 1
    values[0] = captured
    values[1] = derelict
    values[2] = attacker_ap - a_left
    values[3] = defender_ap - d_left
    values[4] = a_left


@parallel_jit
def boarding_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """Per-chunk (hist, moments, counters) of the boarding metrics (:mod:`kernels.driver`)."""
    return run_trials(boarding_trial, no_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                      N_METRICS, n_bins, N_COUNTERS)
