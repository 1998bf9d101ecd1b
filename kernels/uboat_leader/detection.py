"""Escort Detection (digest §7.5) and Silent Running (§7.3): the per-roll rules and the
``escort_detection`` question kernel (one escort against one U-boat).
"""
from __future__ import annotations

from kernels._jit import hot_jit, inline_trial, parallel_jit
from kernels.driver import no_workspace, run_trials
from kernels.rng import roll_die


@hot_jit
def in_detection_range(range_areas, base_range, alerted):
    """§7.5: surfaced U-boats at 0-2 Areas, submerged at 0-1; +1 to both per Alerted counter."""
    return range_areas <= base_range + alerted


@hot_jit
def detection_modifier(alerted, roll_bonus, damage_penalty, chit):
    """§7.5: +1 per Alerted counter, -1 Light / -2 Heavy Damage, +X Tactics counter."""
    return alerted * roll_bonus - damage_penalty + chit


@hot_jit
def detects(roll, modifier, detection_value):
    """§7.5: "Si el resultado del dado modificado es igual o mayor que el número de Detección"."""
    return roll + modifier >= detection_value


@hot_jit
def evades(roll, evasion):
    """§7.3: Silent Running removes the Detected marker on d10 <= EV."""
    return roll <= evasion


@inline_trial
def escort_detection_trial(state, values, counters, ws, args):
    """Metrics per trial: p_detected, p_evaded, stress_added, in_range (spec §3.1).

    A trial draws a Tactics chit uniformly from ``chits`` (one entry per counter), rolls the
    Detection d10 when the U-boat is in range and, if it is detected and ``silent_running``
    applies (a submerged boat), the Silent Running d10 against ``evasion``.
    """
    (detection_value, in_range, alerted, roll_bonus, damage_penalty, chits, silent_running, evasion,
     fail_stress) = args
    n_chits = chits.shape[0]
    chit = chits[0] if n_chits == 1 else chits[roll_die(state, n_chits) - 1]
    values[:] = 0
    values[3] = 1 if in_range else 0
    if in_range:
        mod = detection_modifier(alerted, roll_bonus, damage_penalty, chit)
        if detects(roll_die(state, 10), mod, detection_value):
            values[0] = 1
            if silent_running:
                if evades(roll_die(state, 10), evasion):
                    values[1] = 1
                else:
                    values[2] = fail_stress


@parallel_jit
def escort_detection_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """Per-chunk (hist, moments, counters) of the four detection metrics (:mod:`kernels.driver`)."""
    return run_trials(escort_detection_trial, no_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size,
                      n_trials, 4, n_bins, 0)
