"""Kernel of question ``points_efficiency``: one figure's fire in one turn against a reference
target drawn uniformly from the (target, range) set (docs/models/breaking_news.md §7).

args = (shots[combo, DICE|FACE], save_face[combo], reconstructed[combo]). Metrics: casualties
(0/1), the same per 100 points (value casualties x 100 in units of 1/cost), hits, and 1 when the
drawn shot rests on a reconstructed (confidence M or L) table cell.
"""
from __future__ import annotations

from kernels._jit import jit, parallel_jit
from kernels.breaking_news.fire import roll_hits, survives_hits
from kernels.driver import no_workspace, run_trials
from kernels.rng import roll_die

N_METRICS = 4
N_COUNTERS = 0


@jit
def points_efficiency_trial(state, values, counters, ws, args):
    shots, save_face, reconstructed = args
    c = roll_die(state, shots.shape[0]) - 1
    hits = roll_hits(state, shots[c, 0], shots[c, 1])
    dead = 0 if survives_hits(state, hits, save_face[c]) else 1
    values[0] = dead
    values[1] = 100 * dead
    values[2] = hits
    values[3] = reconstructed[c]


@parallel_jit
def points_efficiency_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    return run_trials(points_efficiency_trial, no_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size,
                      n_trials, N_METRICS, n_bins, N_COUNTERS)
