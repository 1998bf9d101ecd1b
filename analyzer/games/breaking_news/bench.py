"""``analyzer bench bn-firefight``: firefight kernel trials/s against the pure-Python reference
(tests/reference/breaking_news.py) on the same battle, and ``sampling: table`` against
``sampling: dice``, all measured in the same run (interleaved rounds, best of 3).

Rows, as ``dw-duel``: ``bn-firefight`` (kernel with ``sampling: table``: one draw per shot, per
figure's saves and per morale test, vs the reference), ``bn-firefight:dice`` (die by die, vs the
reference) and ``bn-firefight:table-vs-dice`` (target 2, issue 16).
"""
from __future__ import annotations

import numba

from analyzer.bench.harness import interleaved_best, load_reference, register_benchmark, say
from analyzer.core.questions import SCENARIO_ROOT

SCENARIO = SCENARIO_ROOT / "breaking_news" / "firefight_patrol.yaml"
POINT = 1
TARGET_RATIO = 300
#: issue 16: one draw from the exact table should make a stateful kernel this much faster
TABLE_TARGET = 2


def bench_firefight(trials: int = 1_000_000, ref_trials: int = 2_000, console=None) -> dict:
    """Kernel (table and dice) and reference trials/s on scenario 1 "Patrulla" (Marines 148 pts
    vs Taliban 147 pts, second point of scenarios/breaking_news/firefight_patrol.yaml: 40 cm)."""
    from analyzer.core import scenario as scenario_mod
    from analyzer.bench.suite import row
    from analyzer.run.runner import BATCH_CHUNKS, CHUNK_TRIALS, prepare_point

    n_chunks = -(-trials // CHUNK_TRIALS)
    runs = {}
    for sampling in ("table", "dice"):
        sc = scenario_mod.load(SCENARIO)
        pt = sc.points[POINT]
        pt.rules["sampling"] = sampling
        prep = prepare_point(sc, pt)
        prep.run_kernel(1, 7, 0, 2, 64, 128)  # compile (or load from the cache) outside the timing

        def kernel(prep=prep):
            for lo in range(0, n_chunks, BATCH_CHUNKS):
                prep.run_kernel(1, 7, lo, min(lo + BATCH_CHUNKS, n_chunks), CHUNK_TRIALS, trials)
        runs[sampling] = kernel
    ref = load_reference("breaking_news")
    params = pt.params.model_dump(mode="json", exclude_unset=True)
    rules = {k: v for k, v in pt.rules.items() if k != "sampling"}   # the reference rolls dice
    data = ref.load_data(str(SCENARIO.parent / "data"))
    t_table, t_dice, t_ref = interleaved_best(
        [runs["table"], runs["dice"], lambda: ref.simulate("firefight", params, rules, data, ref_trials, 1)], 3)
    rate, dice_rate, ref_rate = trials / t_table, trials / t_dice, ref_trials / t_ref
    threads = numba.get_num_threads()
    for line in (
        f"threads: {threads}  battle: Patrulla, US Marines (148 pts) vs Taliban (147 pts) at 40 cm",
        f"firefight kernel trials/s, sampling table: {rate:,.0f}  ({trials:,} trials, best of 3 interleaved)",
        f"firefight kernel trials/s, sampling dice:  {dice_rate:,.0f}",
        f"pure-Python reference trials/s:            {ref_rate:,.0f}  ({ref_trials:,} trials)",
        f"ratio table / reference:                   {rate / ref_rate:,.0f}  (target >= {TARGET_RATIO})",
        f"ratio dice / reference:                    {dice_rate / ref_rate:,.0f}  (target >= {TARGET_RATIO})",
        f"ratio table / dice:                        {rate / dice_rate:.2f}  (target >= {TABLE_TARGET})",
    ):
        say(console, line)
    return {"threads": threads, "kernel_trials_per_s": rate, "kernel_dice_trials_per_s": dice_rate,
            "reference_trials_per_s": ref_rate, "ratio": rate / ref_rate, "table_vs_dice": rate / dice_rate,
            "rows": [
                row("bn-firefight", "firefight kernel (sampling: table) trials/s vs pure-Python reference", rate,
                    "trials/s", rate / ref_rate, TARGET_RATIO, reference="pure-Python reference",
                    reference_rate=ref_rate),
                row("bn-firefight:dice", "firefight kernel (sampling: dice) trials/s vs pure-Python reference",
                    dice_rate, "trials/s", dice_rate / ref_rate, TARGET_RATIO, reference="pure-Python reference",
                    reference_rate=ref_rate),
                row("bn-firefight:table-vs-dice", "firefight kernel trials/s, one draw per shot/saves/morale test "
                    "vs die by die", rate, "trials/s", rate / dice_rate, TABLE_TARGET, reference="sampling: dice",
                    reference_rate=dice_rate)]}


@register_benchmark("bn-firefight")
def _bench_cli(console=None, trials: int | None = None) -> dict:
    return bench_firefight(trials or 1_000_000, console=console)
