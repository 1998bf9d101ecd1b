"""``analyzer bench hacse-depth-charge``: depth-charge pattern trials/s of the kernel against the
pure-Python reference (tests/reference/hacse_naval.py) on the same pattern, measured in the same run."""
from __future__ import annotations


import numba

from analyzer import scenario as scenario_mod
from analyzer.bench import interleaved_best, load_reference, register_benchmark, say
from analyzer.questions import SCENARIO_ROOT
from analyzer.runner import BATCH_CHUNKS, CHUNK_TRIALS, prepare_point

SCENARIO = SCENARIO_ROOT / "hacse_naval" / "depth_charge_ring_prior.yaml"
TARGET_RATIO = 300
ROUNDS = 3


def bench_depth_charge(trials: int = 2_000_000, ref_trials: int = 10_000, console=None) -> dict:
    """Kernel and reference trials/s: three charges set to depth 2 in a line through the guessed
    hex, the U-boat drawn uniformly from 7 hexes x depths 1-3 (first point of
    scenarios/hacse_naval/depth_charge_ring_prior.yaml), its damage sheet and effects included."""
    sc = scenario_mod.load(SCENARIO)
    point = sc.points[0]
    prep = prepare_point(sc, point)
    prep.run_kernel(1, 7, 0, 2, 64, 128)  # compile (or load from the cache) outside the timing

    def kernel():
        n_chunks = -(-trials // CHUNK_TRIALS)
        for lo in range(0, n_chunks, BATCH_CHUNKS):
            prep.run_kernel(1, 7, lo, min(lo + BATCH_CHUNKS, n_chunks), CHUNK_TRIALS, trials)

    ref = load_reference("hacse_naval")
    params = point.params.model_dump(mode="json", exclude_unset=True)
    data = ref.load_data(str(SCENARIO.parent))

    def reference():
        ref.simulate("depth_charge", params, point.rules, data, ref_trials, 1)

    # interleaved rounds, best time of each: a busy spell of the (shared) machine hits both
    t_kernel, t_ref = interleaved_best([kernel, reference], ROUNDS)
    kernel_rate = trials / t_kernel
    ref_rate = ref_trials / t_ref

    out = {"threads": numba.get_num_threads(), "kernel_trials_per_s": kernel_rate,
           "reference_trials_per_s": ref_rate, "ratio": kernel_rate / ref_rate}
    lines = [
        f"threads: {out['threads']}  pattern: 3 charges at depth 2 vs a U-boat in 7 hexes x depths 1-3 (Type VIIC sheet)",
        f"depth-charge kernel trials/s:      {kernel_rate:,.0f}  ({trials:,} trials, best of {ROUNDS})",
        f"pure-Python reference trials/s:    {ref_rate:,.0f}  ({ref_trials:,} trials, best of {ROUNDS})",
        f"ratio kernel / reference:          {out['ratio']:,.0f}  (target >= {TARGET_RATIO})",
    ]
    for line in lines:
        say(console, line)
    return out


@register_benchmark("hacse-depth-charge")
def _bench_cli(console=None, trials: int | None = None) -> dict:
    return bench_depth_charge(trials or 2_000_000, console=console)
