"""Kernel of question ``shot``: a figure (or a fire group of identical figures) fires at one
target figure (source §8, §9, §10; docs/models/breaking_news.md §5.1).

args = (target_number, dice, hit_face, save_face, prone). Metrics: target_number, dice, hits,
casualties (the target removed), shocked (hit at least once and passed every save, or ``prone``:
it dodged with no cover in reach and threw itself to the ground, §6.5 "se encontrará,
automáticamente, conmocionada", and survived).
"""
from __future__ import annotations

from kernels._jit import inline_trial, parallel_jit
from kernels.breaking_news.fire import roll_hits, survives_hits
from kernels.driver import no_workspace, run_trials

N_METRICS = 5
N_COUNTERS = 0


@inline_trial
def shot_trial(state, values, counters, ws, args):
    target_number, dice, hit_face, save_face, prone = args
    hits = roll_hits(state, dice, hit_face)
    alive = survives_hits(state, hits, save_face)
    values[0] = target_number
    values[1] = dice
    values[2] = hits
    values[3] = 0 if alive else 1
    # §10: "cuando tenga uno o más impactos y logre pasar el test ... o cuando se tire al suelo"
    values[4] = 1 if (alive and (hits > 0 or prone)) else 0


@parallel_jit
def shot_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    return run_trials(shot_trial, no_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                      N_METRICS, n_bins, N_COUNTERS)
