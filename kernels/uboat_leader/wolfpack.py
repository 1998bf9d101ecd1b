"""Forming a Wolfpack (digest §6.5): join rolls of the boats called in the Area."""
from __future__ import annotations

from kernels._jit import inline_trial, jit, parallel_jit
from kernels.driver import no_workspace, run_trials
from kernels.rng import roll_die


@jit
def join_roll(face, attacked, join_min, attacked_modifier, stress_face, stress_fails):
    """One candidate's d10 (§6.5): returns (joins, stress result). The Stress result is read on
    the UNMODIFIED face; under ``stress_fails`` (A6) it also fails the join."""
    stress = stress_face[face] != 0
    joins = face + (attacked_modifier if attacked else 0) >= join_min
    if stress and stress_fails:
        joins = False
    return joins, stress


@inline_trial
def wolfpack_trial(state, values, counters, ws, args):
    """Metrics per trial: pack_size, alerted, stress_added, so_spent.

    With a Radio Call every candidate joins without a roll (no random number is drawn) and
    ``so`` SO are spent; otherwise candidate ``i`` rolls its join d10, carrying an Attacked
    counter when ``i < attacked``; ``stress_face[f]`` is 1 for the sheet's Stress faces
    ``f`` (index 0 unused).
    """
    (candidates, attacked, join_min, attacked_modifier, stress_face, stress_fails, stress_per_result,
     alerted_per_result, radio_call, so) = args
    if radio_call:
        values[0] = 1 + candidates
        values[1] = 0
        values[2] = 0
        values[3] = so
        return
    joined = 0
    stress = 0
    for i in range(candidates):
        j, s = join_roll(roll_die(state, 10), i < attacked, join_min, attacked_modifier, stress_face, stress_fails)
        joined += j
        stress += s
    values[0] = 1 + joined
    values[1] = stress * alerted_per_result
    values[2] = stress * stress_per_result
    values[3] = 0


@parallel_jit
def wolfpack_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """Per-chunk (hist, moments, counters) of the four wolfpack metrics (:mod:`kernels.driver`)."""
    return run_trials(wolfpack_trial, no_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                      4, n_bins, 0)
