"""Kernel of question ``points_efficiency``: one unit's life trading volleys with the reference sets
(docs/models/breaking_news.md §7).

Each turn the unit fires at a target drawn uniformly from the offence (target, range) set, then takes
one volley from an attacker drawn uniformly from the defence (attacker, cover, range) set; the life
ends when it falls or after ``max_turns`` turns (counter 0). The first turn gives the per-turn metrics.

args = (shots[combo, DICE|FACE], save_face[combo], reconstructed[combo], in_shots[combo, DICE|FACE],
in_save_face[combo], max_turns). Metrics: casualties (0/1), the same per 100 points (value casualties x
100 in units of 1/cost), hits, 1 when the drawn shot rests on a reconstructed (confidence M or L)
table cell, fell to the first volley (0/1), shocked by it (hit, every save passed: 0/1), turns lasted,
casualties inflicted over the life, and those two x 100 (units of 1/cost).
"""
from __future__ import annotations

from kernels._jit import jit, parallel_jit
from kernels.breaking_news.fire import roll_hits, survives_hits
from kernels.driver import no_workspace, run_trials
from kernels.rng import roll_die

N_METRICS = 10
N_COUNTERS = 1


@jit
def kills_target(state, shots, save_face):
    """One volley at a figure drawn uniformly from the combos: (hits, 1 if it fell else 0, combo)."""
    c = roll_die(state, shots.shape[0]) - 1
    hits = roll_hits(state, shots[c, 0], shots[c, 1])
    dead = 0 if survives_hits(state, hits, save_face[c]) else 1
    return hits, dead, c


@jit
def points_efficiency_trial(state, values, counters, ws, args):
    shots, save_face, reconstructed, in_shots, in_save_face, max_turns = args
    # turn 1: the unit's fire, then the volley at it (the per-turn metrics)
    hits, dead, c = kills_target(state, shots, save_face)
    values[0] = dead
    values[1] = 100 * dead
    values[2] = hits
    values[3] = reconstructed[c]
    taken, fell, _ = kills_target(state, in_shots, in_save_face)
    values[4] = fell
    values[5] = 1 if (taken > 0 and fell == 0) else 0
    kills = dead
    turns = 1
    while fell == 0 and turns < max_turns:
        turns += 1
        _, dead, _ = kills_target(state, shots, save_face)
        kills += dead
        _, fell, _ = kills_target(state, in_shots, in_save_face)
    if fell == 0:
        counters[0] += 1
    values[6] = turns
    values[7] = kills
    values[8] = 100 * turns
    values[9] = 100 * kills


@parallel_jit
def points_efficiency_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    return run_trials(points_efficiency_trial, no_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size,
                      n_trials, N_METRICS, n_bins, N_COUNTERS)
