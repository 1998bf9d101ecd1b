"""Where a point's chunks run: this process (``local``) or a Dask ``distributed`` cluster.

The runner (:func:`analyzer.run.runner.simulate_point`) owns the batch/merge logic for both: it
asks a backend for the *pieces* of a point — consecutive chunk ranges ``[lo, hi)`` that never
straddle a logical batch end (a multiple of ``BATCH_CHUNKS``) — in chunk order, folds each
piece's integer sums into the point's accumulator, tests a precision target at batch ends and
closes the iterator when it stops. Chunk ``c`` always draws from stream ``(seed, point key,
c)``, and a piece's sums are integers, so neither the backend, the size of the pieces nor the
worker that ran one changes a result: a Dask run equals the local run of the same seed, bit
for bit, and stops a precision run at the same trial count.

Stopping: the client waits for a task in slices of ``POLL_SECONDS``, checking the stop flag
(:mod:`analyzer.core.interrupt`: Ctrl-C, SIGTERM) between them, and on a stop cancels what it has
out and closes the cluster; the in-process cluster's workers ignore SIGINT (the preload
:func:`dask_setup`), so a terminal's Ctrl-C, sent to the whole process group, reaches only
the client. ``--scheduler`` is parsed before anything connects (:func:`parse_scheduler`), the
connection has a short timeout, and a scheduler without workers is refused after
``worker_timeout`` seconds instead of waiting forever.

``local`` runs pieces in this process, sized so that one kernel call takes about
``MAX_CALL_SECONDS`` (a stop request waits little). ``dask`` submits each piece as a task
keyed by (point key, lo, hi) that names its kernel by module and name (kernels are
module-level functions: workers import them and load numba's on-disk cache), runs it on
whichever worker is free, and returns the piece's sums (one row: histograms, integer moments,
counters). Up to ``max_in_flight`` tasks are queued ahead across points, so a sweep keeps every
worker busy; a task that raises is retried, and a task lost with its worker is re-run by the
scheduler on another one.
"""
from __future__ import annotations

import importlib
import os
import signal
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

from analyzer.core.errors import AnalyzerError
from analyzer.run.batches import batch_end
from kernels.driver import BATCH_CHUNKS

#: Longest a single local kernel call should take: a stop request (Ctrl-C) waits at most about this.
MAX_CALL_SECONDS = 0.5
#: Dask: the client waits for a task this long at a time, checking the stop flag in between.
POLL_SECONDS = 0.2
#: Dask: seconds to reach ``--scheduler`` (a wrong host or port is a one-line error, not a 30 s wait).
CONNECT_TIMEOUT = 5.0
#: Dask: seconds for at least one worker to be connected to ``--scheduler`` (else the run would wait forever).
WORKER_TIMEOUT = 10.0
#: ``--scheduler`` schemes: distributed's network transports (``inproc`` is same-process only).
SCHEMES = ("tcp", "tls", "ws", "wss")


class BackendError(AnalyzerError, OSError):
    """The cluster cannot run the tasks (no scheduler answers, no workers): ``str()`` is the one
    line shown to the user."""


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity, else the machine's)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def max_workers() -> int:
    """Most ``--workers`` of an in-process cluster: 2 per usable core. Each worker is a process
    with one numba thread (~100 MB), so workers past the cores only cost memory and start-up
    (16 on 2 cores took 1.7 GB and gave shutdown tracebacks)."""
    return 2 * usable_cores()


def parse_scheduler(address: str) -> str:
    """``address`` checked before connecting: ``[SCHEME://]HOST:PORT`` with SCHEME one of
    :data:`SCHEMES` (default tcp) and PORT 1..65535; returns it with its scheme. Raises
    ValueError naming ``--scheduler`` (``garbage``, ``tcp://[::1``, port 99999)."""
    from urllib.parse import urlsplit
    allowed = f"allowed: tcp://HOST:PORT ({', '.join(s + '://' for s in SCHEMES[1:])} too), PORT 1..65535"
    full = address if "://" in address else f"tcp://{address}"
    try:
        parts = urlsplit(full)
        port = parts.port
    except ValueError as e:                 # "Invalid IPv6 URL", "Port out of range 0-65535", ...
        raise ValueError(f"--scheduler: got {address!r} ({e}); {allowed}") from None
    if parts.scheme not in SCHEMES:
        raise ValueError(f"--scheduler: got {address!r}: unknown scheme {parts.scheme!r}; {allowed}")
    if not parts.hostname or port is None or not 1 <= port <= 65535 or parts.path or parts.query or parts.fragment:
        raise ValueError(f"--scheduler: got {address!r}; {allowed}")
    return full


def dask_setup(worker) -> None:  # noqa: ARG001 (distributed's preload hook signature)
    """Preload of the in-process cluster's workers (``preload=["analyzer.run.backends"]``): ignore
    SIGINT. A terminal sends Ctrl-C to the whole process group; the workers must not die of it
    (the client, which got it too, stops the run and closes the cluster)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)

Piece = tuple[int, int, tuple[np.ndarray, np.ndarray, np.ndarray]]


class LocalBackend:
    """Pieces run in this process, in order, on numba's threads."""

    name = "local"
    workers = 1

    def pieces(self, prepared, seed: int, key: int, start: int, n_chunks: int, chunk_size: int,
               n_trials: int) -> Iterator[Piece]:
        step = BATCH_CHUNKS     # chunks per kernel call: shrinks for slow kernels so a stop request waits little
        lo = start
        while lo < n_chunks:
            hi = min(lo + step, batch_end(lo, n_chunks))
            t0 = time.perf_counter()
            out = prepared.run_kernel(seed, key, lo, hi, chunk_size, n_trials)
            per_chunk = (time.perf_counter() - t0) / (hi - lo)
            step = max(1, min(BATCH_CHUNKS, int(MAX_CALL_SECONDS / max(per_chunk, 1e-9))))
            yield lo, hi, out
            lo = hi

    def prefetch(self, jobs) -> None:
        """Nothing to queue ahead in this process."""

    def describe(self) -> dict:
        return {"backend": self.name, "workers": self.workers}

    def close(self) -> None:
        pass


LOCAL = LocalBackend()


def kernel_ref(kernel) -> tuple[str, str]:
    """``(module, qualified name)`` under which a worker imports ``kernel``; refuses a kernel
    that is not reachable that way (a closure or a function made at run time)."""
    fn = getattr(kernel, "py_func", kernel)
    module, name = fn.__module__, fn.__qualname__
    try:
        obj = importlib.import_module(module)
        for part in name.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        obj = None
    if obj is not kernel:
        raise ValueError(f"kernel {module}.{name} is not importable by name: Dask workers load kernels from "
                         f"their modules (define it at module level)")
    return module, name


_KERNELS: dict[tuple[str, str], object] = {}


def run_piece(ref: tuple[str, str], args: tuple, n_bins: int, n_metrics: int, seed: int, key: int,
              lo: int, hi: int, chunk_size: int, n_trials: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A Dask task: chunks ``lo .. hi - 1`` of a point, summed over its chunks (one row each)."""
    kernel = _KERNELS.get(ref)
    if kernel is None:
        obj = importlib.import_module(ref[0])
        for part in ref[1].split("."):
            obj = getattr(obj, part)
        kernel = _KERNELS[ref] = obj
    hist, moments, counters = kernel(seed, key, lo, hi, chunk_size, n_trials, n_bins, args)
    return (hist[:, :n_metrics].sum(axis=0, keepdims=True), moments[:, :n_metrics].sum(axis=0, keepdims=True),
            counters.sum(axis=0, keepdims=True))


@dataclass
class DaskBackend:
    """Pieces run as tasks on a ``distributed`` cluster (see the module docstring).

    ``scheduler``: address of a running scheduler (``tcp://HOST:PORT``); without it an
    in-process ``LocalCluster`` of ``workers`` processes (one thread each) is started and
    closed with the backend. ``task_chunks``: chunks per task (a task never straddles a
    logical batch end). ``max_in_flight``: tasks submitted ahead, across points (the rest
    are planned lazily, so a sweep of 10^5 points at 10^8 trials costs no memory up front).
    ``retries``: re-runs of a task that raised. ``connect_timeout`` / ``worker_timeout``:
    seconds to reach ``scheduler`` / for it to have a worker (see the module docstring)."""

    scheduler: str | None = None
    workers: int | None = None
    task_chunks: int = 16
    max_in_flight: int = 64
    retries: int = 3
    connect_timeout: float = CONNECT_TIMEOUT
    worker_timeout: float = WORKER_TIMEOUT
    name: str = field(default="dask", init=False)
    _client: object = field(default=None, init=False, repr=False)
    _cluster: object = field(default=None, init=False, repr=False)
    _plans: deque = field(default_factory=deque, init=False, repr=False)   # per point: lazy task iterators
    _tasks: dict = field(default_factory=dict, init=False, repr=False)     # (key, lo, hi) -> submitted future
    _next_lo: dict = field(default_factory=dict, init=False, repr=False)   # key -> first chunk not yet consumed

    def start(self) -> "DaskBackend":
        from distributed import Client, LocalCluster
        if self.scheduler is not None:
            address = parse_scheduler(self.scheduler)
            try:
                self._client = Client(address, timeout=f"{self.connect_timeout}s")
            except OSError as e:
                raise BackendError(f"--scheduler {self.scheduler}: no scheduler answered within "
                                   f"{self.connect_timeout:g} s ({str(e).splitlines()[0] if str(e) else type(e).__name__})"
                                   ) from None
            try:
                self._client.wait_for_workers(1, timeout=self.worker_timeout)
            except TimeoutError:
                self.close()
                raise BackendError(f"--scheduler {self.scheduler}: the scheduler has no workers (none joined within "
                                   f"{self.worker_timeout:g} s); start some with: dask worker {address}") from None
            self.workers = len(self._client.scheduler_info()["workers"])
        else:
            self.workers = self.workers or 2
            # one numba thread per worker process: n processes use n cores; the workers ignore SIGINT
            self._cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True,
                                         dashboard_address=None, env={"NUMBA_NUM_THREADS": "1"},
                                         preload=["analyzer.run.backends"])
            self._client = Client(self._cluster)
        return self

    def describe(self) -> dict:
        return {"backend": self.name, "workers": self.workers,
                **({"scheduler": self.scheduler} if self.scheduler else {})}

    def close(self) -> None:
        """Cancel every task still out (a stopped run), then close the client and the cluster."""
        for fut in self._tasks.values():
            fut.cancel()
        self._tasks.clear()
        self._plans.clear()
        if self._client is not None:
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()
        self._client = self._cluster = None

    def __enter__(self) -> "DaskBackend":
        return self.start() if self._client is None else self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- planning and submitting ------------------------------------------------------------
    def _plan(self, prepared, seed, key, start, n_chunks, chunk_size, n_trials) -> Iterator[tuple]:
        """The point's tasks in chunk order, made as they are needed: ``(tid, call)``."""
        ref = kernel_ref(prepared.kernel)
        lo = start
        while lo < n_chunks:
            hi = min(lo + self.task_chunks, batch_end(lo, n_chunks))
            yield (key, lo, hi), (ref, prepared.args, prepared.n_bins, len(prepared.metrics), seed, key, lo, hi,
                                  chunk_size, n_trials)
            lo = hi

    def _submit(self, tid, call) -> None:
        self._tasks[tid] = self._client.submit(run_piece, *call, key=f"piece-{tid[0]}-{tid[1]}-{tid[2]}",
                                               retries=self.retries, pure=False)

    def _top_up(self) -> None:
        """Submit planned tasks, oldest point first, until ``max_in_flight`` are out."""
        while self._plans and len(self._tasks) < self.max_in_flight:
            key, plan = self._plans[0]
            item = next(plan, None)
            if item is None:
                self._plans.popleft()
                continue
            tid, call = item
            if tid[1] >= self._next_lo.get(key, 0) and tid not in self._tasks:
                self._submit(tid, call)

    def prefetch(self, jobs) -> None:
        """Plan every point's tasks now (``jobs``: ``(prepared, seed, key, start, n_chunks,
        chunk_size, n_trials)`` per point, in run order) so workers stay busy across points."""
        for job in jobs:
            self._plans.append((job[2], self._plan(*job)))
        self._top_up()

    def _forget(self, key) -> None:
        """A point is done (or stopped early): drop its plan and cancel what it still has out."""
        self._plans = deque((k, plan) for k, plan in self._plans if k != key)
        for tid in [t for t in self._tasks if t[0] == key]:
            self._tasks.pop(tid).cancel()
        self._next_lo.pop(key, None)

    def pieces(self, prepared, seed: int, key: int, start: int, n_chunks: int, chunk_size: int,
               n_trials: int) -> Iterator[Piece]:
        if self._client is None:
            self.start()
        self._next_lo[key] = start
        try:
            for tid, call in self._plan(prepared, seed, key, start, n_chunks, chunk_size, n_trials):
                self._top_up()
                if tid not in self._tasks:         # not planned ahead (or behind other points): run it now
                    self._submit(tid, call)
                out = self._result(self._tasks.pop(tid))
                self._next_lo[key] = tid[2]
                yield tid[1], tid[2], out
        finally:
            self._forget(key)


    @staticmethod
    def _result(fut):
        """The task's result, waited for in slices of :data:`POLL_SECONDS` with the stop flag
        checked between them (a bare ``result()`` swallows Ctrl-C / SIGTERM, and blocks forever
        on a cluster that lost its workers). It waits on a done-callback, not on
        ``result(timeout=...)``: distributed's timed ``result`` can fail with an
        ``UnboundLocalError`` when the timeout and the result arrive together (dask/distributed#8514,
        seen in this test suite on a loaded machine)."""
        from analyzer.core import interrupt
        done = threading.Event()
        fut.add_done_callback(lambda _: done.set())
        while not done.wait(POLL_SECONDS):
            interrupt.check()
        return fut.result()


def make_backend(name: str, *, scheduler: str | None = None, workers: int | None = None):
    """The backend named on the command line (``local`` needs nothing)."""
    if name == "local":
        if scheduler is not None or workers is not None:
            raise ValueError("--scheduler and --workers need --backend dask")
        return LOCAL
    if name != "dask":
        raise ValueError(f"--backend: got {name!r}; allowed: local, dask")
    if scheduler is not None and workers is not None:
        raise ValueError("--workers starts an in-process cluster of that many workers; with --scheduler the "
                         "cluster's own workers run the tasks: give one or the other")
    if workers is not None and not 1 <= workers <= max_workers():
        raise ValueError(f"--workers: got {workers}; allowed: 1..{max_workers()} (2 per usable core: each worker is "
                         f"a process with one thread)")
    if scheduler is not None:
        parse_scheduler(scheduler)
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise ValueError("--backend dask needs the 'distributed' package: pip install 'wargame-analyzer[dask]'") \
            from None
    return DaskBackend(scheduler=scheduler, workers=workers)
