"""Kernel of question ``cover_fire``: one enemy figure in a covered area tries opportunity fire
(source §8.6): it must roll more than the cover-fire value on 2D6 (3D6 in a bunker) or it is hit
before it fires. args = (value, test_dice, hits_if_failed, save_face). Metrics: value,
p_hit, hits, casualties, shocked.
"""
from __future__ import annotations

from kernels._jit import inline_trial, parallel_jit
from kernels.breaking_news.fire import survives_hits
from kernels.driver import no_workspace, run_trials
from kernels.rng import roll_die

N_METRICS = 5
N_COUNTERS = 0


@inline_trial
def cover_fire_trial(state, values, counters, ws, args):
    value, test_dice, hits_if_failed, save_face = args
    total = 0
    for _ in range(test_dice):
        total += roll_die(state, 6)
    hit = total <= value       # "si no saca con 2D6 una puntuación mayor"
    hits = hits_if_failed if hit else 0
    alive = survives_hits(state, hits, save_face)
    values[0] = value
    values[1] = 1 if hit else 0
    values[2] = hits
    values[3] = 0 if alive else 1
    values[4] = 1 if (alive and hits > 0) else 0


@parallel_jit
def cover_fire_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    return run_trials(cover_fire_trial, no_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                      N_METRICS, n_bins, N_COUNTERS)
