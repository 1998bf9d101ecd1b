"""Benchmarks of the B-17 kernels: the stateful ones (``analyzer bench b17-attack-wave``, ``analyzer
bench b17-mission-sampling``) against the pure-Python reference, and ``sampling: table`` against
``sampling: dice``; and the kernel rows (:func:`analyzer.bench.kernels.register_kernel_benches`).

Every figure is measured in the same process as the figures it is compared with, in
interleaved rounds (best of 3): the kernel with ``sampling: table`` (one draw per shot from the
exact outcome table of its 3d10) and with ``sampling: dice`` (three d10 per shot), each on all
worker threads and on one thread (:func:`analyzer.bench.harness.measure`), and the reference
(``reference.py`` beside this module, the oracle of the tests) single-threaded. Compilation is done before timing.
Rows, as ``dw-duel``: ``<name>`` (table vs reference), ``<name>:dice`` (dice vs reference) and
``<name>:table-vs-dice`` (target 2, issue 16).
"""
from __future__ import annotations


import numba

from analyzer.core.questions import SCENARIO_ROOT
from analyzer.bench.harness import STATEFUL_TARGET, load_reference, register_benchmark, sampling_rows, scaled
from analyzer.bench.kernels import KernelBench, register_kernel_benches
from analyzer.run.runner import CHUNK_TRIALS

#: the pure-Python reference (ships with the game, not imported with it)
REFERENCE = f"{__package__}.reference"
SCENARIOS = ("attack_wave_headon_intercom.yaml", "attack_wave_mixed_policies.yaml")
#: kernel and reference trials of a full attack_wave run (per scenario)
ATTACK_WAVE_TRIALS, ATTACK_WAVE_REF_TRIALS = 2_000_000, 2000
#: the mission benchmark runs the point with the PLACEHOLDER fighter fire on, so both tabulated
#: steps (the guns' shots and the fighters' fire) are timed
MISSION_SCENARIO = "mission_5_waves.yaml"
MISSION_POINT = 1
MISSION_TRIALS, MISSION_REF_TRIALS = 400_000, 300
TARGET_RATIO = STATEFUL_TARGET  # issue "performance": every stateful kernel >= 300x its pure-Python reference


def _prepared(name: str, point: int, sampling: str):
    """The compiled point of a shipped scenario with ``rules.sampling`` set, kernel loaded."""
    from analyzer.core import scenario as scenario_mod
    from analyzer.run.runner import prepare_point

    sc = scenario_mod.load(SCENARIO_ROOT / "b17" / name)
    pt = sc.points[point]
    pt.rules["sampling"] = sampling
    prepared = prepare_point(sc, pt)
    prepared.run_kernel(1, 7, 0, 2, CHUNK_TRIALS, 64)                 # compile outside the timing
    return sc, pt, prepared


def _compare(main: str, label: str, question: str, name: str, point: int, trials: int, n_ref: int, ref, say,
             target: float, console=None) -> tuple[list[dict], dict]:
    """Table and dice kernels and the reference, interleaved
    (:func:`analyzer.bench.harness.sampling_rows`): the rows ``main``, ``main:dice`` and
    ``main:table-vs-dice``, and the figures."""
    sc, pt, table = _prepared(name, point, "table")
    _, _, dice = _prepared(name, point, "dice")
    params = pt.params.model_dump(mode="json", exclude_none=True)
    rules = {k: v for k, v in pt.rules.items() if k != "sampling"}   # the reference rolls dice
    data = ref.load_data(None)
    say(f"[{sc.name}: {', '.join(f'{k}={v}' for k, v in pt.swept.items())}]")
    rows, timed = sampling_rows(main, label, table, dice, lambda n: ref.simulate(question, params, rules, data, n, 1),
                                trials, n_ref, target, "one draw per shot vs three d10", console)
    rate, dice_rate, ref_rate = timed["table"]["rate"], timed["rolled"]["rate"], timed["reference"]["rate"]
    figures = {"kernel_trials_per_s": rate, "kernel_dice_trials_per_s": dice_rate, "table_vs_dice": rate / dice_rate,
               "reference_trials_per_s": ref_rate, "ratio": rate / ref_rate, "ratio_dice": dice_rate / ref_rate,
               "ratio_1_thread": rows[0]["ratio_1_thread"]}
    return rows, figures


def _say(console):
    from rich.markup import escape

    return (lambda s: console.print(escape(s), highlight=False)) if console else print


@register_benchmark("b17-attack-wave", questions=(("b17", "attack_wave"),),
                    scenarios=tuple(SCENARIO_ROOT / "b17" / name for name in SCENARIOS), references=(REFERENCE,),
                    scaling=SCENARIO_ROOT / "b17" / "attack_wave_mixed_policies.yaml")
def bench_attack_wave(console=None, trials: int | None = None) -> dict:
    """Rows ``b17-attack-wave:<scenario>`` (table vs reference), ``...:dice`` and
    ``...:table-vs-dice`` for each shipped attack_wave scenario's first point."""
    n_ref = scaled(ATTACK_WAVE_REF_TRIALS, trials, ATTACK_WAVE_TRIALS)
    trials = trials or ATTACK_WAVE_TRIALS
    ref = load_reference(REFERENCE)
    say = _say(console)
    out = {"threads": numba.get_num_threads(), "scenarios": {}, "rows": []}
    say(f"threads: {out['threads']}; kernel {trials:,} trials (half on 1 thread), reference {n_ref:,} trials "
        f"({REFERENCE}, pure Python, 1 thread); best of 3 interleaved rounds")
    for name in SCENARIOS:
        rows, figures = _compare(f"b17-attack-wave:{name}", "attack_wave kernel", "attack_wave", name, 0, trials,
                                 n_ref, ref, say, TARGET_RATIO, console)
        out["rows"] += rows
        out["scenarios"][name] = figures
    return out


@register_benchmark("b17-mission-sampling", scenarios=(SCENARIO_ROOT / "b17" / MISSION_SCENARIO,),
                    references=(REFERENCE,))
def bench_mission_sampling(console=None, trials: int | None = None) -> dict:
    """Rows ``b17-mission-sampling`` (table vs reference), ``...:dice`` and ``...:table-vs-dice``
    on the five-wave mission with the placeholder fighter fire. (``b17-mission``, the kernel at
    its default sampling against the reference, is a kernel row below.)"""
    n_ref = scaled(MISSION_REF_TRIALS, trials, MISSION_TRIALS)
    trials = trials or MISSION_TRIALS
    ref = load_reference(REFERENCE)
    say = _say(console)
    say(f"threads: {numba.get_num_threads()}; kernel {trials:,} trials, reference {n_ref:,} trials "
        f"({REFERENCE}, pure Python, 1 thread); best of 3 interleaved rounds")
    rows, figures = _compare("b17-mission-sampling", "mission kernel", "mission", MISSION_SCENARIO, MISSION_POINT,
                             trials, n_ref, ref, say, STATEFUL_TARGET, console)
    return {"threads": numba.get_num_threads(), **figures, "rows": rows}


_M = 1_000_000
register_kernel_benches(REFERENCE, {
    "b17-gun-shot": KernelBench(
        "b17", "gun_shot", "b17/gun_shot_skill15.yaml", "one gun, skill 15, one shot at a fighter (3d10 roll-under)",
        "single-step", 20 * _M, 2 * _M, 120_000),
    "b17-gun-matrix": KernelBench(
        "b17", "gun_matrix", "b17/gun_matrix_skills.yaml", "every gun x position cell against an Me109, skill 15",
        "multi-shot", 2 * _M, 200_000, 1_000, {"fighter": "Me109", "skill": 15}),
    "b17-mission": KernelBench(
        "b17", "mission", "b17/mission_5_waves.yaml", "a five-wave mission, fighters firing back (placeholder 3d10)",
        "stateful", 500_000, 50_000, 500, {"fighter_fire.model": "placeholder_3d10"}),
})
