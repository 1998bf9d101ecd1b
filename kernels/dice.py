"""Dice primitives shared by every game, and their chunked histogram kernels.

Per-roll functions (``pool_total``, ``roll_under_identified`` ...) take a stream state
(``uint64[4]``, see :mod:`kernels.rng`) and are called from game kernels. The
``*_histogram`` kernels run whole chunks of trials in parallel and return one integer
histogram row per chunk, so a result is independent of the thread count and memory does
not grow with the number of trials.

Face tables are indexed by the NATURAL face (index 0 unused): the game layer folds its
to-hit number, modifiers and "a modified 6 does not explode" readings into the table, so
one primitive serves every pool (Dystopian Wars gunnery, AA/CC cancellation, rout tests,
melee dice ...).
"""
from __future__ import annotations

import numpy as np
from numba import prange

from kernels._jit import hot_jit, inline_trial, jit, parallel_jit, unmanaged_jit
from kernels.driver import no_workspace, run_trials
from kernels.record import N_MOMENTS, chunk_trials, moments_from_histogram, record_histogram
from kernels.rng import (_LANES, _LOW16, _S16, _TWO16, _U0, _U1, STATE_WORDS, next_u64,
                         roll_die, seed_stream, uniform_small_locals, xoshiro_step)

#: Longest chain of explosions (generations of extra dice) a pool may roll before the
#: chain is cut and the cut counted. It must never bias a result the questions accept:
#: the most explosive die they allow is a d100 exploding on 2+ (P(explode) = 0.99), whose
#: chain reaches 10,000 generations with probability 0.99**10000 ~ 2e-44 (a d6 exploding
#: on 6: 6**-10000). An earlier cap of 64 cut half of such chains and biased the mean
#: (one d100 die: 24.4 hits instead of 51.0). The cap exists so that a table where every
#: face explodes (an input error refused at the edge) cannot hang a kernel.
EXPLOSION_DEPTH_CAP = 10_000


def pool_table(face_value, face_explodes, max_group_faces=1296):
    """Compile a per-face table into grouped tables for :func:`pool_total`.

    One 16-bit random lane picks a whole group of ``g`` dice at once (an index in
    ``[0, sides**g)`` is ``g`` independent faces), so a pool costs about one lane per
    ``g`` dice. Returns ``(group_value[g, idx], group_explodes[g, idx], group_n[g])`` for
    ``g = 1..k`` with ``sides**k <= max_group_faces``: the total value and the number of
    exploding faces of the group whose faces are the base-``sides`` digits of ``idx``.
    """
    face_value = np.asarray(face_value, dtype=np.int64)
    face_explodes = np.asarray(face_explodes, dtype=np.bool_)
    sides = face_value.shape[0] - 1
    k = 1
    while sides ** (k + 1) <= max_group_faces:
        k += 1
    width = sides ** k
    group_value = np.zeros((k + 1, width), np.int64)
    group_explodes = np.zeros((k + 1, width), np.int64)
    group_n = np.zeros(k + 1, np.int64)
    for g in range(1, k + 1):
        n = sides ** g
        group_n[g] = n
        idx = np.arange(n)
        for _ in range(g):
            face = idx % sides + 1
            group_value[g, :n] += face_value[face]
            group_explodes[g, :n] += face_explodes[face]
            idx = idx // sides
    return group_value, group_explodes, group_n


@hot_jit
def pool_total_locals(s0, s1, s2, s3, buf, lanes, n_dice, group_value, group_explodes, group_n):
    """:func:`pool_total` on a stream state held in scalars (kept in registers by loops
    that roll many pools). Returns ``(s0, s1, s2, s3, buf, lanes, total, rolled, dropped)``.
    """
    k = group_n.shape[0] - 1
    total = 0
    rolled = 0
    dropped = 0
    remaining = n_dice
    generation = 0
    while remaining > 0:
        rolled += remaining
        extra = 0
        while remaining > 0:
            g = k if remaining >= k else remaining
            un = np.uint64(group_n[g])
            while True:  # kernels.rng.uniform_small, inlined on the local state
                if lanes == _U0:
                    s0, s1, s2, s3, buf = xoshiro_step(s0, s1, s2, s3)
                    lanes = _LANES
                m = (buf & _LOW16) * un
                buf = buf >> _S16
                lanes -= _U1
                low = m & _LOW16
                if low >= un or low >= (_TWO16 - un) % un:
                    break
            idx = np.int64(m >> _S16)
            total += group_value[g, idx]
            extra += group_explodes[g, idx]
            remaining -= g
        remaining = extra
        generation += 1
        if generation > EXPLOSION_DEPTH_CAP and remaining > 0:
            dropped = remaining
            break
    return s0, s1, s2, s3, buf, lanes, total, rolled, dropped


@hot_jit
def pool_total(state, n_dice, group_value, group_explodes, group_n, counters):
    """Roll ``n_dice`` and add up the face values (tables from :func:`pool_table`).

    Every exploding face adds one more die; the extra dice of one generation are rolled
    together as the next generation, and may explode again. After
    ``EXPLOSION_DEPTH_CAP`` generations the dice still owed are dropped and counted in
    ``counters[0]``; ``counters[1]`` counts every die rolled.
    """
    s0, s1, s2, s3, buf, lanes, total, rolled, dropped = pool_total_locals(
        state[0], state[1], state[2], state[3], state[4], state[5],
        n_dice, group_value, group_explodes, group_n)
    state[0], state[1], state[2], state[3] = s0, s1, s2, s3
    state[4], state[5] = buf, lanes
    counters[0] += dropped
    counters[1] += rolled
    return total


@jit
def count_at_least(state, n_dice, sides, target):
    """How many of ``n_dice`` natural rolls of a d``sides`` are >= ``target``."""
    count = 0
    for _ in range(n_dice):
        if roll_die(state, sides) >= target:
            count += 1
    return count


@jit
def roll_at_least(state, sides, target, modifier):
    """True when one die + ``modifier`` >= ``target``."""
    return roll_die(state, sides) + modifier >= target


@jit
def roll_at_most(state, sides, target, modifier):
    """True when one die + ``modifier`` <= ``target``."""
    return roll_die(state, sides) + modifier <= target


@jit
def roll_under_identified(state, n_dice, sides, face_offset, out):
    """Roll ``n_dice`` distinguishable dice with faces ``1 + face_offset .. sides + face_offset``.

    Writes the dice in roll order into ``out[:n_dice]`` and returns their sum. Die 0 is the
    distinguished ("Sombra") die; dice 1.. are the fixed "quality" dice (B-17 damage II),
    so damage is always read from the same roll as the hit test.
    """
    total = 0
    for i in range(n_dice):
        d = roll_die(state, sides) + face_offset
        out[i] = d
        total += d
    return total


# ----------------------------------------------------------------------------------
# question kernels on the chunk driver (public API: analyzer.run.dice, analyzer.games.dice)
# ----------------------------------------------------------------------------------

@parallel_jit
def pool_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """Per chunk: ``max(0, pool_total - cancellations)`` (metric 0) and whether it is
    ``>= need`` (metric 1), as ``(hist, moments, counters)`` with counters (explosion chains
    cut at ``EXPLOSION_DEPTH_CAP``, dice rolled).

    Both pools come as :func:`pool_table` tables. With ``n_cancel = 0`` this is the plain
    exploding pool; with a cancellation table (Dystopian Wars AA/CC: a 5 cancels 1 hit, a
    6 cancels 2) it is the net hits after defensive dice. Values above the last bin are
    clipped into it and counted in ``moments[..., 2]``; the mean, its SE and
    ``P(>= need)`` come from exact in-loop sums whatever ``n_bins`` is.

    The one kernel that keeps its own chunk loop instead of :mod:`kernels.driver` (the
    measured exception in :mod:`kernels._jit`): the stream state stays in registers across
    all the chunk's trials and the sums in scalars, which the per-trial call cannot do.
    """
    n_dice, group_value, group_explodes, group_n, n_cancel, cancel_value, cancel_explodes, cancel_n, need = args
    n_chunks = chunk_hi - chunk_lo
    hist = np.zeros((n_chunks, 2, n_bins), np.int64)
    moments = np.zeros((n_chunks, 2, N_MOMENTS), np.int64)
    counters = np.zeros((n_chunks, 2), np.int64)
    top = n_bins - 1
    for c in prange(n_chunks):
        state = np.empty(STATE_WORDS, np.uint64)
        chunk = chunk_lo + c
        seed_stream(state, seed, key, chunk)
        s0, s1, s2, s3, buf, lanes = state[0], state[1], state[2], state[3], state[4], state[5]
        dropped = 0
        rolled = 0
        clipped = 0
        total = 0
        total_sq = 0
        successes = 0
        n = chunk_trials(chunk, chunk_size, n_trials)
        for _ in range(n):
            s0, s1, s2, s3, buf, lanes, hits, r, d = pool_total_locals(
                s0, s1, s2, s3, buf, lanes, n_dice, group_value, group_explodes, group_n)
            rolled += r
            dropped += d
            if n_cancel:
                s0, s1, s2, s3, buf, lanes, cancels, r, d = pool_total_locals(
                    s0, s1, s2, s3, buf, lanes, n_cancel, cancel_value, cancel_explodes, cancel_n)
                rolled += r
                dropped += d
                hits = max(hits - cancels, 0)
            total += hits
            total_sq += hits * hits
            if hits >= need:
                successes += 1
            if hits > top:
                hits = top
                clipped += 1
            hist[c, 0, hits] += 1
        hist[c, 1, 0] = n - successes
        hist[c, 1, 1] = successes
        moments[c, 0, 0] = total
        moments[c, 0, 1] = total_sq
        moments[c, 0, 2] = clipped
        moments[c, 1, 0] = successes
        moments[c, 1, 1] = successes
        counters[c, 0] = dropped
        counters[c, 1] = rolled
    return hist, moments, counters


#: the trials of :func:`dice_chunks`
COUNT, ROLL_UNDER = 0, 1


@jit(inline="always")
def dice_chunks(kind, n_dice, sides, a, b, c, seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins):
    """The dice primitives' own chunk loop (:data:`kernels._jit.OWN_CHUNK_LOOP`): the stream state in
    scalars for the whole chunk, one histogram increment per metric and trial, the moments from the
    histogram at the chunk's end (:func:`kernels.record.record_histogram`). ``kind`` COUNT:
    :func:`count_trial` with ``a`` = target, ``b`` = need; ROLL_UNDER: :func:`roll_under_trial` with
    ``a`` = face offset, ``b`` = skill, ``c`` = modifier. The same draws in the same order as those
    trials on :func:`kernels.driver.run_trials` (their ``*_on_driver`` twins), so the same results
    (tested)."""
    n_chunks = chunk_hi - chunk_lo
    hist = np.zeros((n_chunks, 2, n_bins), np.int64)
    moments = np.zeros((n_chunks, 2, N_MOMENTS), np.int64)
    counters = np.zeros((n_chunks, 0), np.int64)
    for ci in prange(n_chunks):
        chunk = chunk_lo + ci
        state = np.empty(STATE_WORDS, np.uint64)
        seed_stream(state, seed, key, chunk)
        s0, s1, s2, s3, buf, lanes = state[0], state[1], state[2], state[3], state[4], state[5]
        local = np.zeros((2, n_bins), np.int64)
        off = np.zeros((2, N_MOMENTS), np.int64)
        values = np.zeros(2, np.int64)
        for _ in range(chunk_trials(chunk, chunk_size, n_trials)):
            total = 0
            first = 0
            for i in range(n_dice):
                s0, s1, s2, s3, buf, lanes, u = uniform_small_locals(s0, s1, s2, s3, buf, lanes, sides)
                if kind == COUNT:
                    if u + 1 >= a:
                        total += 1
                else:
                    d = u + 1 + a
                    if i == 0:
                        first = d
                    total += d
            if kind == COUNT:
                values[0] = total
                values[1] = 1 if total >= b else 0
            elif total + c <= b:
                values[0] = 1
                values[1] = total - first
            else:
                values[0] = 0
                values[1] = 0
            record_histogram(local, off, values)
        moments_from_histogram(local, off, moments[ci])
        hist[ci] = local
    return hist, moments, counters


@jit
def roll_under_workspace(args):
    """Per-chunk scratch: the identified dice of one roll."""
    return np.empty(args[0], np.int64)


@unmanaged_jit
def roll_under_trial(state, values, counters, dice, args):
    """A roll-under test and its quality-dice damage, read from the same roll: metric 0 is
    1 when ``total + modifier <= skill``, metric 1 the quality dice 1.. (0 on a miss)."""
    n_dice, sides, face_offset, skill, modifier = args
    total = roll_under_identified(state, n_dice, sides, face_offset, dice)
    hit = total + modifier <= skill
    values[0] = 1 if hit else 0
    values[1] = total - dice[0] if hit else 0


@parallel_jit
def roll_under_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """Per-chunk (hist, moments, counters) of (hit, damage): :func:`roll_under_trial` trial by trial on
    the dice primitives' own chunk loop (:func:`dice_chunks`; the same results as on the driver)."""
    n_dice, sides, face_offset, skill, modifier = args
    return dice_chunks(ROLL_UNDER, n_dice, sides, face_offset, skill, modifier, seed, key, chunk_lo, chunk_hi,
                       chunk_size, n_trials, n_bins)


@parallel_jit
def roll_under_kernel_on_driver(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """:func:`roll_under_trial` on the chunk driver: the reference of :func:`roll_under_kernel`'s
    own loop in the tests (the same results)."""
    return run_trials(roll_under_trial, roll_under_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size,
                      n_trials, 2, n_bins, 0)


roll_under_kernel.driver_twin = roll_under_kernel_on_driver       # analyzer.bench.draws profiles the twin


@inline_trial
def roll_under_joint_trial(state, values, counters, dice, args):
    """(sum of all dice, sum of the quality dice 1..) as one value
    ``total * quality_bins + quality`` (the joint histogram of :func:`analyzer.run.dice.simulate_roll_under`)."""
    n_dice, sides, face_offset, quality_bins = args
    total = roll_under_identified(state, n_dice, sides, face_offset, dice)
    values[0] = total * quality_bins + total - dice[0]


@parallel_jit
def roll_under_joint_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """Per-chunk (hist, moments, counters) of :func:`roll_under_joint_trial`."""
    return run_trials(roll_under_joint_trial, roll_under_workspace, args, seed, key, chunk_lo, chunk_hi,
                      chunk_size, n_trials, 1, n_bins, 0)


@unmanaged_jit
def count_trial(state, values, counters, ws, args):
    """How many of ``n_dice`` d``sides`` roll >= ``target`` (metric 0), and whether at least
    ``need`` do (metric 1: "any of N dice >= k" when need = 1, Breaking News morale)."""
    n_dice, sides, target, need = args
    n = count_at_least(state, n_dice, sides, target)
    values[0] = n
    values[1] = 1 if n >= need else 0


@parallel_jit
def count_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """Per-chunk (hist, moments, counters) of :func:`count_trial` on the dice primitives' own chunk loop
    (:func:`dice_chunks`; the same results as on the driver)."""
    n_dice, sides, target, need = args
    return dice_chunks(COUNT, n_dice, sides, target, need, 0, seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                       n_bins)


@parallel_jit
def count_kernel_on_driver(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """:func:`count_trial` on the chunk driver: the reference of :func:`count_kernel`'s own
    loop in the tests (the same results) and in ``analyzer bench dice-count`` (its speed)."""
    return run_trials(count_trial, no_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                      2, n_bins, 0)


count_kernel.driver_twin = count_kernel_on_driver                 # analyzer.bench.draws profiles the twin


@inline_trial
def die_trial(state, values, counters, ws, args):
    """One d``sides`` (metric 0: the natural face - 1)."""
    values[0] = roll_die(state, args[0]) - 1


@parallel_jit
def die_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """Per-chunk (hist, moments, counters) of one die: threshold tests (d10 >= n, d6 tables)
    read their probability from it."""
    return run_trials(die_trial, no_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                      1, n_bins, 0)


@parallel_jit
def raw_draws(seed, key, chunk_lo, chunk_hi, chunk_size, n_draws):
    """XOR of ``n_draws`` raw 64-bit draws per chunk: the RNG's own speed (benchmarks)."""
    n_chunks = chunk_hi - chunk_lo
    out = np.zeros(n_chunks, np.uint64)
    for c in prange(n_chunks):
        state = np.empty(STATE_WORDS, np.uint64)
        chunk = chunk_lo + c
        seed_stream(state, seed, key, chunk)
        acc = np.uint64(0)
        for _ in range(chunk_trials(chunk, chunk_size, n_draws)):
            acc ^= next_u64(state)
        out[c] = acc
    return out
