"""Counter-keyed random streams: xoshiro256** seeded by SplitMix64.

A stream is identified by ``(seed, key, chunk)``:

- ``seed``  the user's seed (recorded in every output);
- ``key``   a 64-bit stream key, e.g. a hash of the sweep point; the same key for two
  scenarios gives common random numbers (``analyzer compare``);
- ``chunk`` the index of a fixed-size block of trials (``CHUNK_TRIALS`` in
  ``analyzer.run.runner``).

The chunk count belongs to the work, not to the threads, so a result depends only on
(seed, key, trials) and never on ``NUMBA_NUM_THREADS`` (STYLE.md practice 3).

All arithmetic is kept in ``uint64``: numba promotes ``uint64 op int64`` to float64,
so every constant below is a typed ``np.uint64``.
"""
from __future__ import annotations

import numpy as np

from kernels._jit import hot_jit, jit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_LOW32 = np.uint64(0xFFFFFFFF)
_TWO32 = np.uint64(1 << 32)
_U0 = np.uint64(0)
_U1 = np.uint64(1)
_S7 = np.uint64(7)
_S9 = np.uint64(9)
_S11 = np.uint64(11)
_S17 = np.uint64(17)
_S27 = np.uint64(27)
_S30 = np.uint64(30)
_S31 = np.uint64(31)
_S32 = np.uint64(32)
_S45 = np.uint64(45)
_S53 = np.uint64(53)
_S57 = np.uint64(57)
_S64_7 = np.uint64(64 - 7)
_S64_45 = np.uint64(64 - 45)
_FIVE = np.uint64(5)
_NINE = np.uint64(9)
_INV53 = 1.0 / 9007199254740992.0  # 2**-53

#: xoshiro256** words 0..3, then word 4 = buffered random bits for small dice and
#: word 5 = how many 16-bit lanes of word 4 are still unused.
STATE_WORDS = 6
_LOW16 = np.uint64(0xFFFF)
_TWO16 = np.uint64(1 << 16)
_S16 = np.uint64(16)
_LANES = np.uint64(4)


@jit
def splitmix64(x):
    """One SplitMix64 step: returns (next counter, output)."""
    x = x + _GOLDEN
    z = x
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return x, z ^ (z >> _S31)


@jit
def seed_stream(state, seed, key, chunk):
    """Fill ``state`` (uint64[4]) with the stream for (seed, key, chunk).

    The three words are mixed through SplitMix64 one after the other, so streams for
    neighbouring chunks or keys are unrelated; the xoshiro state is never all zero.
    """
    x, h = splitmix64(np.uint64(seed))
    x, h2 = splitmix64(h ^ np.uint64(key))
    x, h3 = splitmix64(h2 ^ np.uint64(chunk))
    seed_from_word(state, h3)


@jit
def _rotl(x, k, k_rev):
    return (x << k) | (x >> k_rev)


@jit
def xoshiro_step(s0, s1, s2, s3):
    """xoshiro256** on four scalars: returns (s0, s1, s2, s3, 64 random bits).

    Hot loops load the state once, call this on locals (kept in registers) and store it
    back at the end; :func:`next_u64` is the array form.
    """
    result = _rotl(s1 * _FIVE, _S7, _S64_7) * _NINE
    t = s1 << _S17
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, _S45, _S64_45)
    return s0, s1, s2, s3, result


@hot_jit
def next_u64(state):
    """xoshiro256**: the next 64 random bits of the stream (advances ``state``)."""
    s0, s1, s2, s3, result = xoshiro_step(state[0], state[1], state[2], state[3])
    state[0] = s0
    state[1] = s1
    state[2] = s2
    state[3] = s3
    return result


@jit
def uniform_int(state, n):
    """Unbiased integer in [0, n) for 1 <= n < 2**32 (Lemire's multiply-and-reject).

    Uses the high 32 bits of one draw; a draw is rejected with probability
    ((2**32) mod n) / 2**32 (below 1e-9 for dice), so there is no modulo bias.
    """
    un = np.uint64(n)
    m = (next_u64(state) >> _S32) * un
    low = m & _LOW32
    if low < un:
        threshold = (_TWO32 - un) % un
        while low < threshold:
            m = (next_u64(state) >> _S32) * un
            low = m & _LOW32
    return np.int64(m >> _S32)


@hot_jit
def uniform_small(state, n):
    """Unbiased integer in [0, n) for 1 <= n <= 2**16, from 16-bit lanes of one draw.

    Lemire's method on 16 bits: a lane is rejected with probability (2**16 mod n) / 2**16
    (6e-5 for a d6), so the result is exactly uniform while one 64-bit draw usually
    serves four dice.
    """
    un = np.uint64(n)
    while True:
        if state[5] == _U0:
            state[4] = next_u64(state)
            state[5] = _LANES
        x = state[4] & _LOW16
        state[4] = state[4] >> _S16
        state[5] -= _U1
        m = x * un
        low = m & _LOW16
        if low >= un or low >= (_TWO16 - un) % un:
            return np.int64(m >> _S16)


@hot_jit
def uniform_small_locals(s0, s1, s2, s3, buf, lanes, n):
    """:func:`uniform_small` on a stream state held in scalars (words 0..3, the buffered draw
    and its unused lanes; kept in registers by a chunk loop of its own): the same draws in the
    same order. Returns ``(s0, s1, s2, s3, buf, lanes, integer in [0, n))``."""
    un = np.uint64(n)
    while True:
        if lanes == _U0:
            s0, s1, s2, s3, buf = xoshiro_step(s0, s1, s2, s3)
            lanes = _LANES
        x = buf & _LOW16
        buf = buf >> _S16
        lanes -= _U1
        m = x * un
        low = m & _LOW16
        if low >= un or low >= (_TWO16 - un) % un:
            return s0, s1, s2, s3, buf, lanes, np.int64(m >> _S16)


@hot_jit
def roll_die(state, sides):
    """One natural die roll in 1..sides (exactly uniform)."""
    if sides <= 65536:
        return uniform_small(state, sides) + 1
    return uniform_int(state, sides) + 1


@jit
def uniform01(state):
    """A double in [0, 1) with 53 random bits."""
    return np.float64(next_u64(state) >> np.uint64(11)) * _INV53


@jit
def seed_from_word(state, word):
    """Fill ``state`` (uint64[STATE_WORDS]) with a stream derived from one 64-bit ``word``
    (SplitMix64, as :func:`seed_stream`; the buffered-lanes words 4 and 5 reset): a trial-local
    stream. Seeding several states from the same word gives them the same numbers (common random
    numbers for the options of one trial); a word drawn per trial from the chunk's stream gives
    every trial its own."""
    x = word
    for i in range(4):
        x, state[i] = splitmix64(x)
    if state[0] == _U0 and state[1] == _U0 and state[2] == _U0 and state[3] == _U0:
        state[0] = _GOLDEN
    state[4] = _U0
    state[5] = _U0
