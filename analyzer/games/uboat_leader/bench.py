"""``analyzer bench uboat-engagement``: engagement kernel trials/s against the pure-Python
reference (tests/reference/uboat_leader.py) on the same battle, measured in the same run."""
from __future__ import annotations

import time

import numba

from analyzer import scenario as scenario_mod
from analyzer.questions import SCENARIO_ROOT
from analyzer.bench import load_reference, register_benchmark
from analyzer.runner import BATCH_CHUNKS, CHUNK_TRIALS, prepare_point

SCENARIO = SCENARIO_ROOT / "uboat_leader" / "convoy37_engagement.yaml"
TARGET_RATIO = 200


def _reference():
    return load_reference("uboat_leader")


def bench_engagement(trials: int = 2_000_000, ref_trials: int = 3_000, console=None) -> dict:
    """Kernel and reference trials/s on convoy card 37 against a veteran U-98 (first point of
    scenarios/uboat_leader/convoy37_engagement.yaml: surfaced approach)."""
    sc = scenario_mod.load(SCENARIO)
    point = sc.points[0]
    prep = prepare_point(sc, point)
    prep.run_kernel(1, 7, 0, 2, 64, 128)  # compile (or load from the cache) outside the timing

    def kernel():
        n_chunks = -(-trials // CHUNK_TRIALS)
        for lo in range(0, n_chunks, BATCH_CHUNKS):
            prep.run_kernel(1, 7, lo, min(lo + BATCH_CHUNKS, n_chunks), CHUNK_TRIALS, trials)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        kernel()
        best = min(best, time.perf_counter() - t0)
    kernel_rate = trials / best

    ref = _reference()
    params = point.params.model_dump(mode="json")
    data = ref.load_data(str(SCENARIO.parent))
    t0 = time.perf_counter()
    ref.simulate("engagement", params, point.rules, data, ref_trials, 1)
    ref_rate = ref_trials / (time.perf_counter() - t0)

    out = {"threads": numba.get_num_threads(), "kernel_trials_per_s": kernel_rate,
           "reference_trials_per_s": ref_rate, "ratio": kernel_rate / ref_rate}
    lines = [
        f"threads: {out['threads']}  battle: convoy card 37 (2 E + 4 M) vs veteran U-98, surfaced approach",
        f"engagement kernel trials/s:        {kernel_rate:,.0f}  ({trials:,} trials)",
        f"pure-Python reference trials/s:    {ref_rate:,.0f}  ({ref_trials:,} trials)",
        f"ratio kernel / reference:          {out['ratio']:,.0f}  (target >= {TARGET_RATIO})",
    ]
    for line in lines:
        (console.print(line, highlight=False) if console else print(line))
    return out


@register_benchmark("uboat-engagement")
def _bench_cli(console=None, trials: int | None = None) -> dict:
    return bench_engagement(trials or 2_000_000, console=console)
