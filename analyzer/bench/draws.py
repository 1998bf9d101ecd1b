"""Random draws per trial, and where a trial's time goes: the figures of a Monte-Carlo row's
"fraction of its RNG bound" (``analyzer bench``).

A question's kernel names the chunk driver :func:`kernels.driver.run_trials`. For a benchmark,
:func:`profiled_kernel` builds a second, serial kernel from the same source with the driver
swapped for :func:`kernels.driver.run_trials_profiled`: the same trial function on the same
streams, recording switched by an argument, and the 64-bit draws a chunk took counted as the
xoshiro256** steps from the chunk's start state to its end state (a copy of the start state is
stepped until it equals the end). The production kernels and their on-disk cache are untouched,
so no result changes and no production kernel is slowed; the profiled kernel is compiled once
per kernel and process (not cached on disk).

The split of a trial's time (:func:`profile`), all on 1 thread, best of ``rounds`` interleaved:

- recording: the trial loop recording every trial, minus the same loop recording nothing;
- RNG: draws per trial / the raw generator's draws per second on 1 thread
  (:func:`raw_draws`, measured in the same rounds): the time the draws alone take;
- the rest, control flow and memory: what the trial itself does with its draws.

A row is bounded by the largest of the three. What this counts: every 64-bit draw the stream
advanced by. A kernel that replays a stream (``uboat_leader`` ``loadout`` plays every fleet on
the trial's stream and keeps the first fleet's end state) is counted once per replayed stretch,
so its draws per trial are a lower bound (said in its row). A kernel with its own chunk loop
(:data:`kernels._jit.OWN_CHUNK_LOOP`) is not profiled (no draws: ``None``), unless it names its twin
on the driver (``driver_twin``: the same trials on the same draws), which is profiled for it.
"""
from __future__ import annotations

import ast
import inspect
import textwrap
import time
from dataclasses import dataclass

from kernels.driver import BATCH_CHUNKS, CHUNK_TRIALS, run_trials_profiled

#: most draws a trial may take before a chunk's count gives up (then the row has no draw count)
MAX_DRAWS_PER_TRIAL = 100_000
#: trials whose draws are counted, in two chunks (the count is exact; its mean over 8192 trials
#: is what the fraction needs)
COUNT_TRIALS = 2 * CHUNK_TRIALS
#: raw draws per timing of :func:`raw_draws` (~15 ms on 2 threads: a shorter section measured a
#: tenth of the rate on a busy machine), in chunks of RAW_CHUNK draws
RAW_DRAWS, RAW_CHUNK = 1 << 25, 1 << 16

_PROFILED: dict[int, object] = {}


def profiled_kernel(kernel):
    """The kernel ``kernel`` with its driver call :func:`~kernels.driver.run_trials` replaced by
    :func:`~kernels.driver.run_trials_profiled` (two more arguments, ``record`` and
    ``max_steps``), compiled serially; None when ``kernel`` does not call the driver exactly once."""
    if id(kernel) in _PROFILED:
        return _PROFILED[id(kernel)]
    # a kernel on a chunk loop of its own may name its twin on the driver (the same trials on the
    # same draws: ``kernels.dice.count_kernel``): that twin is profiled for it
    kernel = getattr(kernel, "driver_twin", kernel)
    py = getattr(kernel, "py_func", None)
    built = None
    if py is not None:
        tree = ast.parse(textwrap.dedent(inspect.getsource(py)))
        fn = tree.body[0]
        calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                 and n.func.id == "run_trials"]
        if isinstance(fn, ast.FunctionDef) and len(calls) == 1 and not calls[0].keywords:
            calls[0].func = ast.Name("_run_trials_profiled", ast.Load())
            calls[0].args += [ast.Name("record", ast.Load()), ast.Name("max_steps", ast.Load())]
            fn.args.args += [ast.arg("record"), ast.arg("max_steps")]
            fn.decorator_list = []
            fn.name = f"{fn.name}_profiled"
            namespace = {**py.__globals__, "_run_trials_profiled": run_trials_profiled}
            exec(compile(ast.fix_missing_locations(tree), inspect.getsourcefile(py) or "<kernel>", "exec"), namespace)
            from kernels._jit import jit
            built = jit(namespace[fn.name], cache=False)
    _PROFILED[id(kernel)] = built
    return built


def count_draws(prepared, trials: int = COUNT_TRIALS, seed: int = 1, key: int = 7) -> float | None:
    """Mean 64-bit draws per trial of ``prepared``'s kernel over ``trials`` trials (at least 2)
    in two chunks (exact count, see the module docstring); None when it cannot be counted."""
    kernel = profiled_kernel(prepared.kernel)
    if kernel is None:
        return None
    size = max(1, trials // 2)
    n = 2 * size
    draws = kernel(seed, key, 0, 2, size, n, prepared.n_bins, prepared.args, False, MAX_DRAWS_PER_TRIAL * size)
    return None if (draws < 0).any() else float(draws.sum()) / n


def raw_draws(n: int) -> None:
    """``n`` raw xoshiro256** draws on every numba thread (the generator's own speed)."""
    from kernels.dice import raw_draws as kernel
    n_chunks = -(-n // RAW_CHUNK)
    for lo in range(0, n_chunks, BATCH_CHUNKS):
        kernel(1, 0, lo, min(lo + BATCH_CHUNKS, n_chunks), RAW_CHUNK, n)


@dataclass(frozen=True)
class Profile:
    """One kernel's figures on 1 thread: draws per trial, seconds per trial recording every
    trial and recording none, and the raw generator's seconds per draw (same rounds)."""

    draws_per_trial: float | None
    seconds_recorded: float
    seconds_unrecorded: float
    seconds_per_draw: float

    def shares(self) -> dict[str, float] | None:
        """Fractions of a recorded trial's time: ``rng``, ``recording``, ``trial`` (control flow
        and memory: the rest), or None without a draw count."""
        if self.draws_per_trial is None:
            return None
        rng = min(1.0, self.draws_per_trial * self.seconds_per_draw / self.seconds_recorded)
        recording = min(1.0 - rng, max(0.0, 1.0 - self.seconds_unrecorded / self.seconds_recorded))
        return {"rng": rng, "recording": recording, "trial": max(0.0, 1.0 - rng - recording)}


#: the names of the shares as the summary prints them
BOUNDS = {"rng": "random draws", "recording": "recording", "trial": "control flow and memory"}


def profile(prepared, trials: int, rounds: int = 3, seed: int = 1, key: int = 7) -> Profile | None:
    """The :class:`Profile` of ``prepared``'s kernel over ``trials`` trials (at most one batch),
    or None when its kernel does not run on the driver. Runs on the calling thread only (the
    profiled kernel is serial)."""
    import numba

    kernel = profiled_kernel(prepared.kernel)
    if kernel is None:
        return None
    n = max(2, min(trials, BATCH_CHUNKS * CHUNK_TRIALS))
    size = min(n, CHUNK_TRIALS)
    chunks = -(-n // size)

    def play(record):
        return lambda: kernel(seed, key, 0, chunks, size, n, prepared.n_bins, prepared.args, record, 0)

    play(True)()                                                      # compile outside the timing
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        raw_draws(RAW_CHUNK)
        best = [float("inf")] * 3
        for _ in range(rounds):
            for i, fn in enumerate((play(True), play(False), lambda: raw_draws(RAW_DRAWS // 4))):
                t0 = time.perf_counter()
                fn()
                best[i] = min(best[i], time.perf_counter() - t0)
    finally:
        numba.set_num_threads(threads)
    return Profile(count_draws(prepared, min(n, COUNT_TRIALS), seed, key), best[0] / n, best[1] / n,
                   best[2] / (RAW_DRAWS // 4))
