"""Rout test (``docs/rules/dystopian_wars.md`` §8): roll rout dice (1-3 nothing, 4-5 one
success, 6 two; never exploding) and pass on enough successes."""
from __future__ import annotations

from kernels._jit import parallel_jit, unmanaged_jit
from kernels.driver import no_workspace, run_trials
from kernels.dystopian_wars.attack import N_COUNTERS, roll_pool

#: p_pass, successes
N_METRICS = 2


@unmanaged_jit
def rout_trial(state, values, counters, ws, args):
    """One rout test: (passed, successes)."""
    n_dice, rout_value, rout_explodes, rout_n, needed = args
    s = roll_pool(state, n_dice, rout_value, rout_explodes, rout_n, counters)
    values[0] = 1 if s >= needed else 0
    values[1] = s


@parallel_jit
def rout_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """Per-chunk (hist, moments, counters) of (passed, successes) (:mod:`kernels.driver`)."""
    return run_trials(rout_trial, no_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                      N_METRICS, n_bins, N_COUNTERS)
