"""Sighting a submerged U-boat (source l.58-64): one roll per round at a net difficulty; the
``sighting`` kernel. "Die Sicht auf ein getauchtes U-Boot geht am Ende jeder Runde verloren!",
so every round is a fresh roll. The chance of one roll comes from the placeholder roll model
(gap G1) as ``success_num / success_den``.
"""
from __future__ import annotations

from kernels._jit import inline_trial, parallel_jit
from kernels.driver import no_workspace, run_trials
from kernels.rng import uniform01, uniform_int

N_METRICS = 4   # p_sighted_within, p_sighted_round, rounds_to_sighting, rounds_to_sighting_if_seen


@inline_trial
def sighting_trial(state, values, counters, ws, args):
    """Up to ``rounds`` rolls; the first success ends the search (spec §4.6).

    ``rounds_to_sighting_if_seen`` is one draw of the first round given a sighting within
    ``rounds``: the trial's own round when it sighted the boat, otherwise a round drawn from that
    conditional law, P(r | seen) = q^(r-1) (1 - q) / (1 - q^rounds) with q = 1 - p (inverse CDF),
    so every trial contributes one sample of it; 0 when p = 0 (no sighting is possible)."""
    success_num, success_den, rounds = args
    first = rounds + 1
    for rnd in range(1, rounds + 1):
        if uniform_int(state, success_den) < success_num:
            first = rnd
            break
    seen_round = first
    if first > rounds:
        seen_round = 0
        if success_num > 0:
            q = (success_den - success_num) / success_den
            u = uniform01(state) * (1.0 - q ** rounds)
            cum = 0.0
            seen_round = rounds
            for rnd in range(1, rounds + 1):
                cum += q ** (rnd - 1) * (1.0 - q)
                if u < cum:
                    seen_round = rnd
                    break
    values[0] = 1 if first <= rounds else 0
    values[1] = 1 if first == 1 else 0
    values[2] = first
    values[3] = seen_round


@parallel_jit
def sighting_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """Per-chunk (hist, moments, counters) of the sighting metrics (:mod:`kernels.driver`)."""
    return run_trials(sighting_trial, no_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                      N_METRICS, n_bins, 0)
