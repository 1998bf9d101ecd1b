"""The one jit policy of the project (STYLE.md practice 4).

Every kernel is compiled through :func:`jit` (serial, inlined into callers) or
:func:`parallel_jit` (chunk loops with ``prange``). Every Monte-Carlo kernel runs its chunks
through the one driver, :func:`kernels.driver.run_trials`, except where measured below.

- ``cache=True``: a second process loads the compiled code from ``__pycache__`` instead of
  recompiling.
- ``error_model="numpy"``: division by zero gives inf/nan instead of raising, and numba
  does not insert the Python-style checks into the hot loops.
- ``fastmath`` is off everywhere: the kernels are integer dice code, where it buys nothing,
  and it would drop NaN/inf semantics from the float statistics.
- ``nogil=True``: kernels may be called from threads (e.g. a dask threaded scheduler).
"""
from __future__ import annotations

import numba

_POLICY = dict(cache=True, error_model="numpy", nogil=True, fastmath=False)


def jit(fn=None, **overrides):
    """Compile a serial kernel or helper with the project policy."""
    opts = {**_POLICY, **overrides}
    if fn is None:
        return lambda f: numba.njit(**opts)(f)
    return numba.njit(**opts)(fn)


def hot_jit(fn=None, **overrides):
    """A per-roll helper called from inside trial loops, inlined at numba-IR level.

    Exception to the policy, measured: numba does not let LLVM inline calls that pass
    arrays, and the call overhead halved the exploding-pool kernel's dice/s
    (``analyzer bench dice``). Inlining costs compile time, so only the innermost
    helpers use it.
    """
    return jit(fn, inline="always", **overrides)


def unmanaged_jit(fn=None, **overrides):
    """A serial helper compiled without NRT reference counting (``_nrt=False``).

    Exception to the policy, measured independently in two game kernels: with NRT on,
    every call of a compiled function increfs and decrefs each array argument with an
    atomic instruction. In the Dystopian Wars duel ``perf`` put 70% of the time there
    (100k -> 650k trials/s per thread without it); in the U-Boat Leader engagement a
    call passing 14 arrays cost ~180 ns against ~6 ns. Functions compiled this way must
    not allocate (no ``np.zeros``, ``.copy()``): their callers pass every array in,
    allocated by an NRT-managed chunk loop that outlives the call.
    """
    return jit(fn, _nrt=False, **overrides)


def inline_trial(fn=None, **overrides):
    """A one-step trial function (a few dice, a handful of metrics) inlined into the chunk
    driver's loop at numba-IR level (:func:`kernels.driver.run_trials`).

    Exception to the policy, measured per kernel (issue 32; ``analyzer bench`` rows, and the
    same point's kernel on 1 thread, this tree against the one before, interleaved, best of 3
    per process, identical results): a trial that is called, not inlined, receives the point's
    ``args`` tuple by value every trial (a tuple of arrays is passed as every array's struct:
    ~7 words an array), which costs as much as the trial's own dice when the trial is a few dice.
    Inlined: collision 1.36x, ram 1.19x, boarding 1.13x, escort detection 2.97x, wolfpack 1.21x,
    Breaking News shot 2.02x, cover fire 1.33x, melee 1.21x, morale 1.04-1.08x, HACSE sighting
    1.46x, B-17 gun shot 1.13x, gun matrix 1.18x (each with the histogram-only recording of the
    same change). Not inlined, measured slower or even inlined: the DW rout test (0.81x) and the
    DW attack (0.95-1.01x), whose inlined bodies take NRT reference counts per trial in the
    managed kernel; and the stateful trials (a mission, a campaign, a duel), where the call is a
    small share and inlining would multiply compile time."""
    return jit(fn, inline="always", **overrides)


#: Kernels that keep their own chunk loop instead of :mod:`kernels.driver`, with the measurement.
#: ``kernels.dice.pool_kernel``: the exploding pool's trial is ~10 dice, and on the driver
#: (stream state stored to and reloaded from its array every trial, two metrics recorded per
#: trial) it took 1.27-1.38x the time of its own loop, which keeps the state in registers and
#: the sums in scalars for the whole chunk (same process, interleaved best-of-7, identical
#: results). ``kernels.dice.raw_draws`` is the benchmark's raw-RNG reference, not a question.
#: ``kernels.dice.count_kernel`` and ``kernels.dice.roll_under_kernel`` (issue 32): the generic dice
#: primitives (2d6 >= 5, 3d10 roll-under) are a few 16-bit lanes a trial, so the array state and the
#: per-trial call dominate them; their own loops hold the stream in scalars like the pool's and
#: record through the same histogram-only path as the driver: 1.78x and 2.25x the same trial on the
#: driver (same process, interleaved best of 5 on 1 thread; identical results, tested against
#: ``count_kernel_on_driver`` / ``roll_under_kernel_on_driver``).
OWN_CHUNK_LOOP = ("kernels.dice.pool_kernel", "kernels.dice.raw_draws", "kernels.dice.count_kernel",
                  "kernels.dice.roll_under_kernel")


def parallel_jit(fn=None, **overrides):
    """Compile a chunk-parallel kernel (``prange`` over chunks) with the project policy."""
    opts = {**_POLICY, "parallel": True, **overrides}
    if fn is None:
        return lambda f: numba.njit(**opts)(f)
    return numba.njit(**opts)(fn)
