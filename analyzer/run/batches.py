"""The one batch loop. A run's trials are cut into chunks of ``chunk_size`` (each chunk its own
random stream) and chunks into logical batches of ``BATCH_CHUNKS``; a precision target is tested
and a checkpoint saved only at batch ends, which are multiples of ``BATCH_CHUNKS`` from chunk 0
and never move, so a result does not depend on how the chunks are grouped into kernel calls.
Every caller that runs a kernel over a point's trials goes through :func:`batch_ranges` or
:func:`run_batches`."""
from __future__ import annotations

from collections.abc import Iterator

from kernels.driver import BATCH_CHUNKS, CHUNK_TRIALS


def chunk_count(trials: int, chunk_size: int = CHUNK_TRIALS) -> int:
    """Chunks that hold ``trials`` trials (the last one may be short)."""
    return -(-trials // chunk_size)


def batch_end(lo: int, n_chunks: int) -> int:
    """The end of the logical batch that chunk ``lo`` is in (batch ends never move)."""
    return min((lo // BATCH_CHUNKS + 1) * BATCH_CHUNKS, n_chunks)


def batch_ranges(n_chunks: int, start: int = 0) -> Iterator[tuple[int, int]]:
    """``(lo, hi)`` chunk ranges of the logical batches from chunk ``start`` (a batch end or 0)."""
    lo = start
    while lo < n_chunks:
        hi = batch_end(lo, n_chunks)
        yield lo, hi
        lo = hi


def run_batches(prepared, trials: int, *, seed: int, key: int, chunk_size: int = CHUNK_TRIALS):
    """Run ``prepared``'s kernel over ``trials`` trials one logical batch per call, yielding
    ``(lo, hi, (hist, moments, counters))``: memory stays flat in the number of trials."""
    for lo, hi in batch_ranges(chunk_count(trials, chunk_size)):
        yield lo, hi, prepared.run_kernel(seed, key, lo, hi, chunk_size, trials)
