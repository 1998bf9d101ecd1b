"""The one chunk driver of every Monte-Carlo kernel, and the kernel-result contract.

A question's kernel supplies what ONE trial does and what ONE chunk needs as scratch:

- ``workspace(args) -> ws``: per-chunk scratch arrays (a tuple, or one array), allocated
  once per chunk by the driver. State a kernel carries from trial to trial within a chunk
  (memoised plans, a deck) lives here too.
- ``trial(state, values, counters, ws, args)``: play one trial on the stream ``state``
  (``uint64[STATE_WORDS]``, see :mod:`kernels.rng`), write the trial's metric values as
  non-negative integers into ``values[metric]`` and add to ``counters[k]`` (cap hits,
  clips, dice rolled: what column ``k`` means is declared by the question).

and a two-line kernel that names them::

    @parallel_jit
    def gun_shot_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
        return run_trials(gun_shot_trial, gun_shot_workspace, args, seed, key, chunk_lo,
                          chunk_hi, chunk_size, n_trials, N_METRICS, n_bins, N_COUNTERS)

The driver owns the rest: allocation, the ``prange`` over chunks, seeding stream
``(seed, key, chunk)``, the chunk's trial count, recording each trial (one histogram increment
per metric, the moments from the histogram at the chunk's end: :mod:`kernels.record`) and the
counters. A trial of a few dice is compiled inline into the loop
(:func:`kernels._jit.inline_trial`, measured there).
Every kernel therefore returns the same ``(hist[chunk, metric, bin],
moments[chunk, metric, N_MOMENTS], counters[chunk, k])`` that the runner merges.

Why inlined rather than called with the trial function as an argument: numba names a
function-typed argument by its address, so a driver taking ``trial`` as an argument misses
the on-disk cache in every new process (measured: 2.4 s recompiling per kernel and per
process). Inlined at numba-IR level into a kernel that names its trial function as a
global, the kernel caches like any other (0.02 s to load) and runs as fast as the loop it
replaces (measured on ``gun_shot``: 0.88-0.97 of the hand-written loop's time).
"""
from __future__ import annotations

import numpy as np
from numba import prange

from kernels._jit import jit
from kernels.record import N_MOMENTS, chunk_trials, moments_from_histogram, record_histogram, record_trial
from kernels.rng import STATE_WORDS, seed_stream, xoshiro_step

#: Trials per chunk: the unit of work that owns one random stream ``(seed, key, chunk)``.
CHUNK_TRIALS = 4096
#: Chunks per kernel call (~262k trials): bounds memory and sets the progress granularity.
BATCH_CHUNKS = 64


@jit(inline="always")
def run_trials(trial, workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
               n_metrics, n_bins, n_counters):
    """Chunks ``chunk_lo .. chunk_hi - 1`` of ``n_trials`` trials cut into ``chunk_size``
    blocks; chunk ``c`` always draws from stream ``(seed, key, c)`` whatever thread runs it.
    Values above ``n_bins - 1`` land in the last bin and are counted in ``moments[..., 2]``
    (the sums stay exact)."""
    n_chunks = chunk_hi - chunk_lo
    hist = np.zeros((n_chunks, n_metrics, n_bins), np.int64)
    moments = np.zeros((n_chunks, n_metrics, N_MOMENTS), np.int64)
    counters = np.zeros((n_chunks, n_counters), np.int64)
    for c in prange(n_chunks):
        chunk = chunk_lo + c
        state = np.empty(STATE_WORDS, np.uint64)
        seed_stream(state, seed, key, chunk)
        values = np.zeros(n_metrics, np.int64)
        row = np.zeros(n_counters, np.int64)
        # chunk-local sums, copied out once: per-trial writes into rows that neighbouring
        # chunks share cache lines with cost a third of the exploding pool's speed
        local_hist = np.zeros((n_metrics, n_bins), np.int64)
        local_moments = np.zeros((n_metrics, N_MOMENTS), np.int64)
        ws = workspace(args)
        n = chunk_trials(chunk, chunk_size, n_trials)
        # one histogram increment per metric and trial, the moments from the histogram once at the
        # end (n_bins steps): cheaper than three updates a trial whenever the chunk has more trials
        # than bins (every shipped point at 4096 trials a chunk); the same exact sums either way.
        # One call site of the trial (a trial compiled inline is typed once per call site).
        from_histogram = n >= n_bins
        off = np.zeros((n_metrics, N_MOMENTS), np.int64)
        for _ in range(n):
            trial(state, values, row, ws, args)
            if from_histogram:
                record_histogram(local_hist, off, values)
            else:
                record_trial(local_hist, local_moments, values)
        if from_histogram:
            moments_from_histogram(local_hist, off, local_moments)
        hist[c] = local_hist
        moments[c] = local_moments
        for k in range(n_counters):
            counters[c, k] = row[k]
    return hist, moments, counters


@jit
def no_workspace(args):
    """For trials that need no scratch: a placeholder the trial ignores."""
    return np.empty(0, np.int64)


@jit
def add_pair_products(row, offset, values, first, k):
    """A paired group's cross sums (docs/architecture.md "The kernel-result contract"):
    ``row[offset + p] += values[first + i] * values[first + j]`` for every pair ``i < j`` of the
    ``k`` metrics from ``first``, ``p`` counting pairs row by row ((0,1), (0,2), ..., (1,2), ...;
    :func:`analyzer.core.ranking.pair_index`). Call it from a trial after writing ``values``:
    with the metrics' sums and sums of squares the runner gets every pairwise difference's mean,
    variance and "equal in every trial" exactly, in integers (bit-identical for any thread count)."""
    p = offset
    for i in range(k):
        vi = values[first + i]
        if vi == 0:                  # every product of this row is 0 (0/1 metrics: most rows)
            p += k - i - 1
            continue
        for j in range(i + 1, k):
            row[p] += vi * values[first + j]
            p += 1


@jit(inline="always")
def run_trials_profiled(trial, workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                        n_metrics, n_bins, n_counters, record, max_steps):
    """A benchmark's variant of :func:`run_trials` (``analyzer bench``; no question calls it):
    the same trials on the same streams, serially, recording each trial when ``record``; per
    chunk the 64-bit draws the trials took, found by stepping a copy of the chunk's start state
    until it equals the end state (-1 when ``max_steps`` steps do not reach it, 0 when
    ``max_steps`` is 0: not counted). :func:`run_trials` itself is unchanged, so the production
    kernels keep their code and their results; a benchmark builds a second kernel naming this
    driver (:mod:`analyzer.bench.draws`)."""
    n_chunks = chunk_hi - chunk_lo
    draws = np.zeros(n_chunks, np.int64)
    for c in range(n_chunks):
        chunk = chunk_lo + c
        state = np.empty(STATE_WORDS, np.uint64)
        seed_stream(state, seed, key, chunk)
        s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
        values = np.zeros(n_metrics, np.int64)
        row = np.zeros(n_counters, np.int64)
        local_hist = np.zeros((n_metrics, n_bins), np.int64)
        local_moments = np.zeros((n_metrics, N_MOMENTS), np.int64)
        off = np.zeros((n_metrics, N_MOMENTS), np.int64)
        ws = workspace(args)
        n = chunk_trials(chunk, chunk_size, n_trials)
        for _ in range(n):
            trial(state, values, row, ws, args)
            if record:                  # as run_trials records a chunk of more trials than bins
                record_histogram(local_hist, off, values)
        if record:
            moments_from_histogram(local_hist, off, local_moments)
        if max_steps > 0:
            draws[c] = -1
            for k in range(max_steps + 1):
                if s0 == state[0] and s1 == state[1] and s2 == state[2] and s3 == state[3]:
                    draws[c] = k
                    break
                s0, s1, s2, s3, _ = xoshiro_step(s0, s1, s2, s3)
    return draws
