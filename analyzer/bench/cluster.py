"""``analyzer bench dask``: the Dask backend on this machine, measured in one run.

Two rows, both on one point of a stateful kernel (a game's ``bench.py`` registers the benchmark
with its scenario: :func:`register_dask_benchmark`), timed as ``api.run`` calls after a warm-up
run has loaded the kernel on every worker (worker start-up is not timed; it is paid once per
cluster):

- ``dask-workers``: trials/s with 2 worker processes vs 1 (one numba thread each): parallel
  efficiency ``rate(2) / (2 * rate(1))``, target 0.85 (the issue's thread-efficiency target).
  4M trials (62 tasks) by default: with 16 tasks (1M) the last tasks' tail and the scheduler
  sharing the two cores cost more (measured 0.83 at 1M, 0.87 at 4M in one session).
- ``dask-task-overhead``: time on 1 worker / time of the same chunks run locally on 1 thread,
  with tasks of ``TASK_CHUNKS`` chunks (the default task size); target <= 1.10. The per-task
  overhead ``(t_dask - t_local) / tasks`` is in the row's description.
"""
from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import numba

from analyzer.bench.harness import register_benchmark, row, say

EFFICIENCY_TARGET = 0.85
OVERHEAD_TARGET = 1.10
ROUNDS = 3
#: trials of a full run
TRIALS = 4_000_000


def bench_dask(scenario: Path, trials: int = TRIALS, console=None) -> dict:
    """The two rows on the first point of ``scenario``."""
    from distributed import Client, LocalCluster

    from analyzer import api
    from analyzer.core import scenario as scenario_mod
    from analyzer.run.backends import DaskBackend
    from analyzer.run.runner import CHUNK_TRIALS, prepare_point

    sc = scenario_mod.load(scenario, trials=trials)
    prepared = [prepare_point(sc, p) for p in sc.points]
    task_chunks = DaskBackend.task_chunks
    n_tasks = -(-trials // CHUNK_TRIALS // task_chunks) * len(prepared)
    best: dict[str, float] = {}

    def timed(label, fn):
        for _ in range(ROUNDS):
            t0 = time.perf_counter()
            fn()
            best[label] = min(best.get(label, float("inf")), time.perf_counter() - t0)

    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        api.run(sc, prepared=prepared)                       # compile / load outside the timing
        timed("local-1", lambda: api.run(sc, prepared=prepared))
    finally:
        numba.set_num_threads(threads)
    for n in (1, 2):
        with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                          env={"NUMBA_NUM_THREADS": "1"}) as cluster, Client(cluster):
            backend = DaskBackend(scheduler=cluster.scheduler_address).start()
            try:
                api.run(sc, prepared=prepared, backend=backend)          # every worker loads the kernel
                timed(f"dask-{n}", lambda: api.run(sc, prepared=prepared, backend=backend))
            finally:
                backend.close()
    rate1, rate2 = trials / best["dask-1"], trials / best["dask-2"]
    efficiency = rate2 / (2 * rate1)
    overhead = best["dask-1"] / best["local-1"]
    per_task_ms = (best["dask-1"] - best["local-1"]) / n_tasks * 1e3
    for line in (f"{scenario.name}, {trials:,} trials, tasks of {task_chunks} chunks ({n_tasks} tasks), "
                 f"best of {ROUNDS}",
                 f"local, 1 thread:        {trials / best['local-1']:,.0f} trials/s",
                 f"dask, 1 worker:         {rate1:,.0f} trials/s  (x{overhead:.2f} the local time; "
                 f"{per_task_ms:.2f} ms overhead per task)",
                 f"dask, 2 workers:        {rate2:,.0f} trials/s  (efficiency {efficiency:.2f}, target "
                 f">= {EFFICIENCY_TARGET})"):
        say(console, line)
    return {"rows": [
        row("dask-workers", f"Dask backend trials/s, 2 worker processes vs 1 ({scenario.name}, {n_tasks} tasks)", rate2,
            "trials/s", efficiency, EFFICIENCY_TARGET, reference="1 worker process", reference_rate=rate1,
            threads=1),
        row("dask-task-overhead", f"time on 1 Dask worker / local 1-thread time ({per_task_ms:.2f} ms per task "
            f"of {task_chunks} chunks)", rate1, "trials/s", overhead, OVERHEAD_TARGET, better="lower",
            reference="local backend, 1 thread", reference_rate=trials / best["local-1"], threads=1),
    ]}


def register_dask_benchmark(scenario: Path) -> None:
    """Make ``analyzer bench dask`` time the Dask backend on ``scenario`` (a game's bench.py
    calls this for one of its stateful kernels), when ``distributed`` is installed."""
    if importlib.util.find_spec("distributed") is None:
        return

    @register_benchmark("dask", scenarios=(scenario,))
    def _bench_cli(console=None, trials: int | None = None) -> dict:
        return bench_dask(scenario, trials or TRIALS, console)
