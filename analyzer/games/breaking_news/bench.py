"""``analyzer bench bn-firefight``: firefight kernel trials/s against the pure-Python reference
(``reference.py`` beside this module) on the same battle, and ``sampling: table`` against
``sampling: dice``, all measured in the same run (interleaved rounds, best of 3); and the rows of
the other Breaking News kernels (:func:`analyzer.bench.kernels.register_kernel_benches`).

Rows, as ``dw-duel``: ``bn-firefight`` (kernel with ``sampling: table``: one draw per shot, per
figure's saves and per morale test, vs the reference), ``bn-firefight:dice`` (die by die, vs the
reference) and ``bn-firefight:table-vs-dice`` (target 2, issue 16).
"""
from __future__ import annotations

import numba

from analyzer.bench.harness import STATEFUL_TARGET, load_reference, register_benchmark, sampling_rows, say, scaled
from analyzer.bench.kernels import KernelBench, register_kernel_benches
from analyzer.core.questions import SCENARIO_ROOT

#: the pure-Python reference (ships with the game, not imported with it)
REFERENCE = f"{__package__}.reference"
SCENARIO = SCENARIO_ROOT / "breaking_news" / "firefight_patrol.yaml"
POINT = 1
#: kernel and reference trials of a full run
TRIALS, REF_TRIALS = 1_000_000, 2_000
TARGET_RATIO = STATEFUL_TARGET


def bench_firefight(trials: int = TRIALS, ref_trials: int = REF_TRIALS, console=None) -> dict:
    """Kernel (table and dice) and reference trials/s on scenario 1 "Patrulla" (Marines 148 pts
    vs Taliban 147 pts, second point of scenarios/breaking_news/firefight_patrol.yaml: 40 cm)."""
    from analyzer.core import scenario as scenario_mod
    from analyzer.run.runner import prepare_point

    prepared = {}
    for sampling in ("table", "dice"):
        sc = scenario_mod.load(SCENARIO)
        pt = sc.points[POINT]
        pt.rules["sampling"] = sampling
        prepared[sampling] = prepare_point(sc, pt)
        prepared[sampling].run_kernel(1, 7, 0, 2, 64, 128)  # compile (or load from the cache) outside the timing
    ref = load_reference(REFERENCE)
    params = pt.params.model_dump(mode="json", exclude_unset=True)
    rules = {k: v for k, v in pt.rules.items() if k != "sampling"}   # the reference rolls dice
    data = ref.load_data(str(SCENARIO.parent / "data"))
    say(console, f"threads: {numba.get_num_threads()}  battle: Patrulla, US Marines (148 pts) vs Taliban (147 pts) "
                 f"at 40 cm")
    rows, timed = sampling_rows("bn-firefight", "firefight kernel", prepared["table"], prepared["dice"],
                                lambda n: ref.simulate("firefight", params, rules, data, n, 1), trials, ref_trials,
                                TARGET_RATIO, "one draw per shot/saves/morale test vs die by die", console)
    rate, dice_rate, ref_rate = timed["table"]["rate"], timed["rolled"]["rate"], timed["reference"]["rate"]
    return {"threads": numba.get_num_threads(), "kernel_trials_per_s": rate, "kernel_dice_trials_per_s": dice_rate,
            "reference_trials_per_s": ref_rate, "ratio": rate / ref_rate, "table_vs_dice": rate / dice_rate,
            "rows": rows}


@register_benchmark("bn-firefight", questions=(("breaking_news", "firefight"),), scenarios=(SCENARIO,),
                    references=(REFERENCE,), scaling=SCENARIO)
def _bench_cli(console=None, trials: int | None = None) -> dict:
    return bench_firefight(trials or TRIALS, scaled(REF_TRIALS, trials, TRIALS), console=console)


_M = 1_000_000
register_kernel_benches(REFERENCE, {
    "bn-shot": KernelBench(
        "breaking_news", "shot", "breaking_news/shot_fanatic_burst.yaml",
        "a fanatic's assault-rifle burst at 40 cm against a dodging veteran", "single-step", 20 * _M, 2 * _M,
        300_000, reference_data="data"),
    "bn-cover-fire": KernelBench(
        "breaking_news", "cover_fire", "breaking_news/cover_fire_example.yaml",
        "elite cover fire (assault rifle + LMG) against a militia figure in a bunker", "single-step", 20 * _M,
        2 * _M, 200_000, reference_data="data"),
    "bn-melee": KernelBench(
        "breaking_news", "melee", "breaking_news/melee_odds.yaml", "two militia against a veteran, ties rolled again",
        "single-step", 20 * _M, 2 * _M, 200_000,
        {"attackers": [{"quality": "militia"}, {"quality": "militia"}], "defender.shocked": False},
        reference_data="data"),
    "bn-morale": KernelBench(
        "breaking_news", "morale", "breaking_news/morale_platoon_example.yaml",
        "a veteran team's morale test after 3 casualties, 4 teams under half", "single-step", 20 * _M, 2 * _M,
        100_000, reference_data="data"),
    "bn-building-assault": KernelBench(
        "breaking_news", "building_assault", "breaking_news/building_assault_example.yaml",
        "7 elite attackers against 4 militia inside a building", "single-step", 20 * _M, 2 * _M, 40_000,
        reference_data="data"),
    "bn-points-efficiency": KernelBench(
        "breaking_news", "points_efficiency", "breaking_news/points_efficiency.yaml",
        "a veteran with an assault rifle against the reference targets at 20/40/80 cm", "single-step", 20 * _M,
        2 * _M, 30_000, {"unit": {"quality": "veteran", "weapons": ["assault_rifle"]}}, reference_data="data"),
})
