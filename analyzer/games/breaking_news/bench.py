"""``analyzer bench bn-firefight``: firefight kernel trials/s against the pure-Python reference
(tests/reference/breaking_news.py) on the same battle, measured in the same run."""
from __future__ import annotations

import time

import numba

from analyzer import scenario as scenario_mod
from analyzer.bench import load_reference, register_benchmark, say
from analyzer.questions import SCENARIO_ROOT
from analyzer.runner import BATCH_CHUNKS, CHUNK_TRIALS, prepare_point

SCENARIO = SCENARIO_ROOT / "breaking_news" / "firefight_patrol.yaml"
TARGET_RATIO = 300


def bench_firefight(trials: int = 1_000_000, ref_trials: int = 2_000, console=None) -> dict:
    """Kernel and reference trials/s on scenario 1 "Patrulla" (Marines 148 pts vs Taliban 147 pts,
    second point of scenarios/breaking_news/firefight_patrol.yaml: 40 cm)."""
    sc = scenario_mod.load(SCENARIO)
    point = sc.points[1]
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

    ref = load_reference("breaking_news")
    params = point.params.model_dump(mode="json")
    data = ref.load_data(str(SCENARIO.parent / "data"))
    t0 = time.perf_counter()
    ref.simulate("firefight", params, point.rules, data, ref_trials, 1)
    ref_rate = ref_trials / (time.perf_counter() - t0)

    out = {"threads": numba.get_num_threads(), "kernel_trials_per_s": kernel_rate,
           "reference_trials_per_s": ref_rate, "ratio": kernel_rate / ref_rate}
    for line in (
        f"threads: {out['threads']}  battle: Patrulla, US Marines (148 pts) vs Taliban (147 pts) at 40 cm",
        f"firefight kernel trials/s:         {kernel_rate:,.0f}  ({trials:,} trials)",
        f"pure-Python reference trials/s:    {ref_rate:,.0f}  ({ref_trials:,} trials)",
        f"ratio kernel / reference:          {out['ratio']:,.0f}  (target >= {TARGET_RATIO})",
    ):
        say(console, line)
    return out


@register_benchmark("bn-firefight")
def _bench_cli(console=None, trials: int | None = None) -> dict:
    return bench_firefight(trials or 1_000_000, console=console)
