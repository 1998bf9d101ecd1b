"""The random streams: xoshiro256** against a plain-Python transcription of the published
algorithm, stream keying, and exact uniformity of dice."""
import numba
import numpy as np
import pytest

from kernels import rng
from tests.stat_checks import assert_histogram_matches

M64 = (1 << 64) - 1


def splitmix64_py(x):
    x = (x + 0x9E3779B97F4A7C15) & M64
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return x, z ^ (z >> 31)


def xoshiro_py(s):
    rotl = lambda x, k: ((x << k) | (x >> (64 - k))) & M64  # noqa: E731
    result = (rotl((s[1] * 5) & M64, 7) * 9) & M64
    t = (s[1] << 17) & M64
    s[2] ^= s[0]
    s[3] ^= s[1]
    s[1] ^= s[2]
    s[0] ^= s[3]
    s[2] ^= t
    s[3] = rotl(s[3], 45)
    return result


def test_splitmix_matches_reference():
    x = 12345
    for _ in range(5):
        x_py, out_py = splitmix64_py(x)
        x_nb, out_nb = rng.splitmix64(np.uint64(x))
        assert (int(x_nb), int(out_nb)) == (x_py, out_py)
        x = x_py


def test_xoshiro_matches_reference():
    state = np.zeros(rng.STATE_WORDS, np.uint64)
    rng.seed_stream(state, 7, 11, 13)
    py = [int(v) for v in state[:4]]
    for _ in range(1000):
        assert int(rng.next_u64(state)) == xoshiro_py(py)


def test_streams_differ_by_seed_key_and_chunk():
    firsts = set()
    for seed, key, chunk in [(1, 0, 0), (2, 0, 0), (1, 1, 0), (1, 0, 1), (1, 1, 1)]:
        s = np.zeros(rng.STATE_WORDS, np.uint64)
        rng.seed_stream(s, seed, key, chunk)
        firsts.add(int(rng.next_u64(s)))
    assert len(firsts) == 5


def test_streams_are_reproducible():
    a = np.zeros(rng.STATE_WORDS, np.uint64)
    b = np.zeros(rng.STATE_WORDS, np.uint64)
    rng.seed_stream(a, 99, 5, 3)
    rng.seed_stream(b, 99, 5, 3)
    assert [int(rng.next_u64(a)) for _ in range(10)] == [int(rng.next_u64(b)) for _ in range(10)]


@pytest.mark.parametrize("sides", [2, 3, 6, 10, 20, 100])
def test_dice_are_uniform(sides):
    from analyzer.run.dice import simulate_modified_roll
    counts = simulate_modified_roll(sides, 0, trials=300_000, seed=3)
    assert sorted(counts) == list(range(1, sides + 1))
    assert_histogram_matches(np.array([counts[f] for f in range(1, sides + 1)]),
                             np.full(sides, 1 / sides), what=f"d{sides}")


@numba.njit(cache=True)
def _results_per_lane(n):
    """``rng.uniform_small(state, n)`` fed each 16-bit lane value ``x`` as the only lane
    left in the buffer: its result when the lane was accepted, -1 when rejected (then the
    function drew a fresh 64-bit word, which leaves lanes behind in the state)."""
    out = np.full(1 << 16, -1, np.int64)
    state = np.zeros(rng.STATE_WORDS, np.uint64)
    rng.seed_stream(state, 1, 2, 3)
    for x in range(1 << 16):
        state[4] = np.uint64(x)
        state[5] = np.uint64(1)
        r = rng.uniform_small(state, n)
        if state[5] == 0:
            out[x] = r
    return out


def test_uniform_small_rejection_is_exact():
    """Lemire's rejection on 16-bit lanes, run through ``uniform_small`` itself for every
    lane value: each of the n results comes from exactly floor(2**16 / n) lanes and the
    other 2**16 mod n lanes are rejected."""
    for n in (2, 6, 10, 216, 1296, 1000, 1 << 16):
        results = _results_per_lane(n)
        accepted = results[results >= 0]
        counts = np.bincount(accepted, minlength=n)
        assert counts.shape == (n,)
        assert counts.min() == counts.max() == (1 << 16) // n
        assert (results < 0).sum() == (1 << 16) % n
