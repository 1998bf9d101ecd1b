"""Benchmarks of the B-17 kernels: the stateful ones (``analyzer bench b17-attack-wave``, ``analyzer
bench b17-mission-sampling``) against the pure-Python reference, and ``sampling: table`` against
``sampling: dice``; and the kernel rows (:func:`analyzer.bench.kernels.register_kernel_benches`).

Every figure is measured in the same process as the figures it is compared with, in
interleaved rounds (best of 3): the kernel with ``sampling: table`` (one draw per shot from the
exact outcome table of its 3d10) and with ``sampling: dice`` (three d10 per shot), all worker
threads, the attack_wave table kernel also on one thread, and the reference (``reference.py``
beside this module, the oracle of the tests) single-threaded. Compilation is done before timing.
Rows, as ``dw-duel``: ``<name>`` (table vs reference), ``<name>:dice`` (dice vs reference) and
``<name>:table-vs-dice`` (target 2, issue 16).
"""
from __future__ import annotations


import numba

from analyzer.core.questions import SCENARIO_ROOT
from analyzer.bench.harness import STATEFUL_TARGET, interleaved_best, load_reference, register_benchmark, row, scaled
from analyzer.bench.kernels import KernelBench, register_kernel_benches
from analyzer.run.batches import run_batches
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
#: issue 16: one draw from the exact table should make a stateful kernel this much faster
TABLE_TARGET = 2


def _kernel_run(prepared, trials: int):

    def run():
        for _ in run_batches(prepared, trials, seed=1, key=7):
            pass
    return run


def _one_thread(fn):
    def run():
        threads = numba.get_num_threads()
        numba.set_num_threads(1)
        try:
            fn()
        finally:
            numba.set_num_threads(threads)
    return run


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
             target: float, one_thread: bool = True) -> tuple[list[dict], dict]:
    """Table and dice kernels (all threads), the table kernel on one thread (``one_thread``) and
    the reference, interleaved; the rows ``main``, ``main:dice`` and ``main:table-vs-dice``,
    and the figures."""
    trials_1 = max(trials // 4, CHUNK_TRIALS)
    sc, pt, table = _prepared(name, point, "table")
    _, _, dice = _prepared(name, point, "dice")
    fns = [_kernel_run(table, trials), _kernel_run(dice, trials)]
    fns.append(_one_thread(_kernel_run(table, trials_1)) if one_thread else (lambda: None))
    params = pt.params.model_dump(mode="json", exclude_none=True)
    rules = {k: v for k, v in pt.rules.items() if k != "sampling"}   # the reference rolls dice
    data = ref.load_data(None)
    fns.append(lambda: ref.simulate(question, params, rules, data, n_ref, 1))
    times = interleaved_best(fns, rounds=3)
    rate, dice_rate = trials / times[0], trials / times[1]
    rate_1 = trials_1 / times[2] if one_thread else float("nan")
    figures = {"kernel_trials_per_s": rate, "kernel_dice_trials_per_s": dice_rate, "table_vs_dice": rate / dice_rate}
    say(f"[{sc.name}: {', '.join(f'{k}={v}' for k, v in pt.swept.items())}]")
    say(f"  kernel trials/s, sampling table ({numba.get_num_threads()} threads): {rate:,.0f}")
    say(f"  kernel trials/s, sampling dice:                {dice_rate:,.0f}")
    if one_thread:
        figures["kernel_1_thread_trials_per_s"] = rate_1
        say(f"  kernel trials/s, sampling table (1 thread):    {rate_1:,.0f}")
    say(f"  ratio table / dice:                            {rate / dice_rate:.2f}  (target >= {TABLE_TARGET})")
    ref_rate = n_ref / times[3]
    figures.update(reference_trials_per_s=ref_rate, ratio=rate / ref_rate, ratio_dice=dice_rate / ref_rate)
    say(f"  reference trials/s (1 thread):                 {ref_rate:,.0f}  ({n_ref:,} trials)")
    say(f"  ratio kernel / reference:                      table {rate / ref_rate:,.0f}x, dice "
        f"{dice_rate / ref_rate:,.0f}x (target >= {target:g}x)")
    if one_thread:
        figures["ratio_1_thread"] = rate_1 / ref_rate
        say(f"  ratio table kernel on 1 thread / reference:    {rate_1 / ref_rate:,.0f}x")
    rows = [row(main, f"{label} (sampling: table) trials/s vs pure-Python reference", rate, "trials/s",
                rate / ref_rate, target, reference="pure-Python reference", reference_rate=ref_rate),
            row(f"{main}:dice", f"{label} (sampling: dice) trials/s vs pure-Python reference", dice_rate,
                "trials/s", dice_rate / ref_rate, target, reference="pure-Python reference",
                reference_rate=ref_rate),
            row(f"{main}:table-vs-dice", f"{label} trials/s, one draw per shot vs three d10", rate, "trials/s",
                rate / dice_rate, TABLE_TARGET, reference="sampling: dice", reference_rate=dice_rate)]
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
    say(f"threads: {out['threads']}; kernel {trials:,} trials ({max(trials // 4, CHUNK_TRIALS):,} on 1 thread), "
        f"reference {n_ref:,} trials ({REFERENCE}, pure Python, 1 thread); best of 3 interleaved rounds")
    for name in SCENARIOS:
        rows, figures = _compare(f"b17-attack-wave:{name}", "attack_wave kernel", "attack_wave", name, 0, trials,
                                 n_ref, ref, say, TARGET_RATIO)
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
                             trials, n_ref, ref, say, STATEFUL_TARGET, one_thread=False)
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
