"""Benchmarks: every figure is measured in the same run and printed with its ratio.

Timed tests are not used for performance claims; these functions are (``analyzer bench``).
Each kernel is called once on a small input first so compilation is not timed.

This module is the machinery: the registry (:class:`Benchmark`, :func:`register_benchmark`),
timing in interleaved rounds, a kernel against its game's pure-Python reference
(:func:`kernel_vs_reference`) and the result rows (:func:`row`). Each game declares its own
benchmarks in ``analyzer/games/<game>/bench.py``, loaded by :func:`load_benchmarks`; one game's
also declares the scenarios of the suite's whole-process rows (:func:`declare_process_scenarios`).
No game is named here.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numba

from analyzer.core.errors import AnalyzerError


#: Trials of the kernel side in ``--quick`` mode unless a benchmark declares its own.
QUICK_TRIALS = 200_000
#: Default target (issue "performance"): a stateful kernel vs its pure-Python reference.
STATEFUL_TARGET = 300


@dataclass(frozen=True)
class Benchmark:
    """``analyzer bench NAME``: calling it runs ``run(console, trials)``, which prints the figures
    and returns them (the shapes :func:`analyzer.bench.suite.rows_of` reads). What it times and
    what it needs are declared beside it, so the suite and the tests see them without running it:

    - ``questions``: the (game, question) pairs whose kernel it times (every Monte-Carlo question
      needs a benchmark);
    - ``scenarios``: the shipped scenario files it reads;
    - ``references``: the pure-Python reference modules it imports, by module name;
    - ``quick_trials``: its kernel trials in ``analyzer bench --quick``;
    - ``scaling``: a scenario whose first point's kernel gets a thread-scaling row ``threads-NAME``;
    - ``target``: the ratio target of a result that carries no rows of its own;
    - ``requires``: modules it imports that are not runtime dependencies (e.g. ``icepool``, a
      test extra): without them the suite skips it with a line and a named run refuses in one."""

    name: str
    run: Callable[..., dict]
    questions: tuple[tuple[str, str], ...] = ()
    scenarios: tuple[Path, ...] = ()
    references: tuple[str, ...] = ()
    quick_trials: int = QUICK_TRIALS
    scaling: Path | None = None
    target: float | None = None
    requires: tuple[str, ...] = ()

    def missing(self) -> list[str]:
        """The modules of ``requires`` this environment lacks."""
        return [m for m in self.requires if importlib.util.find_spec(m) is None]

    def __call__(self, console=None, trials: int | None = None) -> dict:
        return self.run(console, trials)


#: name -> :class:`Benchmark`; each game's ``bench`` module adds its own on import.
BENCHMARKS: dict[str, Benchmark] = {}
#: Most kernel trials ``analyzer bench NAME --trials`` takes (checked before anything runs): a
#: benchmark times several interleaved rounds of its kernel and reference, so 10^9 trials already
#: take minutes; the kernels run in calls of at most ``BATCH_CHUNKS`` chunks (memory stays flat).
MAX_BENCH_TRIALS = 10**9


class BenchmarkUnavailable(AnalyzerError):
    """A benchmark named on the command line needs a module this environment lacks."""


def check_available(bench: "Benchmark") -> None:
    """Refuse, in one line, a benchmark whose ``requires`` are not installed."""
    missing = bench.missing()
    if missing:
        raise BenchmarkUnavailable(f"bench {bench.name}: needs {', '.join(missing)}, which is not installed "
                                   f"(pip install -e '.[test]' installs it)")


def load_benchmarks() -> None:
    """Import the ``bench`` module of every game package (not imported with the games:
    benchmarks load the runner and the slow references)."""
    import analyzer.games as games
    for info in pkgutil.iter_modules(games.__path__):
        if info.ispkg and importlib.util.find_spec(f"analyzer.games.{info.name}.bench") is not None:
            importlib.import_module(f"analyzer.games.{info.name}.bench")


def register_benchmark(name: str, **declared):
    """Decorator: make ``analyzer bench NAME`` run the function ``fn(console, trials=None)``;
    ``declared``: the other fields of its :class:`Benchmark`."""
    def deco(fn):
        BENCHMARKS[name] = Benchmark(name, fn, **declared)
        return fn
    return deco


def bench_of_question() -> dict[tuple[str, str], str]:
    """(game, question) -> the benchmark that times its kernel, from what the benchmarks declare."""
    return {question: b.name for b in BENCHMARKS.values() for question in b.questions}


@dataclass(frozen=True)
class ProcessScenarios:
    """The scenarios the whole-process rows of :mod:`analyzer.bench.suite` run (the CLI start
    rows, memory, stop latency): they time the process, so one cheap game's questions serve
    every game. ``cli``: the scenario document ``analyzer validate`` and ``run`` get (one point);
    ``memory``: the document run at two trial counts (``memory_describe`` says what it runs, in
    the row's ``what``); ``stop``: a shipped scenario file run with 10^9 trials and interrupted."""

    cli: dict
    memory: dict
    stop: Path
    memory_describe: str


#: the whole-process rows' scenarios, declared by one game's ``bench`` module on import
#: (:func:`declare_process_scenarios`); None: no game declares them, and the suite skips those rows
PROCESS_SCENARIOS: ProcessScenarios | None = None


def declare_process_scenarios(*, cli: dict, memory: dict, stop: Path, memory_describe: str) -> None:
    """Make ``cli``, ``memory`` and ``stop`` the scenarios of the whole-process rows
    (:class:`ProcessScenarios`; a game's bench.py calls this). One game declares them: a
    second, different declaration is refused."""
    global PROCESS_SCENARIOS
    new = ProcessScenarios(cli, memory, Path(stop), memory_describe)
    if PROCESS_SCENARIOS is not None and PROCESS_SCENARIOS != new:
        raise ValueError(f"whole-process bench scenarios: already declared by game "
                         f"{PROCESS_SCENARIOS.cli.get('game')!r}, game {cli.get('game')!r} declares others "
                         f"(one game declares them)")
    PROCESS_SCENARIOS = new


def scaled(full: int, trials: int | None, full_trials: int, floor: int = 50) -> int:
    """``full`` reference trials scaled by ``trials / full_trials`` (at least ``floor``): a
    benchmark whose kernel runs ``trials`` instead of ``full_trials`` (``--quick``, ``--trials``)
    keeps the full run's split of time between kernel and reference."""
    return full if trials is None else max(floor, round(full * trials / full_trials))


#: the keys a row gets from :func:`compare` (None on a row without them: not a Monte-Carlo kernel
#: timed against a reference in interleaved rounds): see :func:`compare`
FIGURE_KEYS = ("ratio_1_thread", "efficiency", "cpu_share", "load", "status", "draws_per_trial",
               "raw_draws_per_s", "rng_fraction", "rng_share", "recording_share", "trial_share", "bound")


def row(name: str, what: str, rate: float, unit: str, ratio: float, target: float, *, better: str = "higher",
        reference: str = "", reference_rate: float | None = None, threads: int | None = None,
        figures: dict | None = None) -> dict:
    """One result row (the keys of :mod:`analyzer.bench.suite`); ``figures``: the row's
    :func:`compare` figures (the :data:`FIGURE_KEYS`)."""
    met = ratio >= target if better == "higher" else ratio <= target
    return {"name": name, "what": what, "rate": rate, "unit": unit, "reference": reference,
            "reference_rate": reference_rate, "ratio": ratio, "ratio_target": target, "better": better,
            "met": bool(met), "threads": threads if threads is not None else numba.get_num_threads(),
            **{k: (figures or {}).get(k) for k in FIGURE_KEYS}}


def say(console, line: str) -> None:
    """Print a benchmark line (to the rich console when given, plain otherwise)."""
    (console.print(line, highlight=False, markup=False) if console else print(line))


def best_time(fn, repeat: int) -> float:
    """Best wall time of ``repeat`` calls of ``fn``."""
    return interleaved_best([fn], repeat)[0]


def load_reference(module: str):
    """A game's slow pure-Python reference by module name (``analyzer.games.<game>.reference``:
    it ships with its game, but is not imported with it)."""
    return importlib.import_module(module)


def interleaved_best(fns, rounds: int = 5) -> list[float]:
    """Best wall time of each function over ``rounds`` rounds that run them in turn."""
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - t0)
    return best


#: rounds of :func:`measure` unless a benchmark says otherwise
ROUNDS = 3
#: a row whose fastest timed kernel section is shorter than this is "short": too little work
#: for its ratio to be compared with a target (``--smoke``)
SHORT_SECONDS = 0.05
#: the least calling-thread CPU time of a 1-thread timing (:func:`measure`): a threaded side's 1-thread
#: section is repeated until it has run this long. Measured (issue 32): with the section as long as one
#: call, the exploding pool's 1-thread ratio to numpy (a ~35 ms section) was 10.6 on a quiet machine and
#: 13.6 beside a CPU-bound process (28% apart), while the 44 rows with longer sections agreed within 10%
ONE_THREAD_SECONDS = 0.25
#: a row is "contended" when its kernel's 2-thread efficiency (t1 / (threads t_all), per trial)
#: is below CONTENDED_EFFICIENCY while its threads got less than CONTENDED_CPU_SHARE of the
#: cores (process CPU time / (wall time x threads) in the all-thread sections): another process
#: took the cores. Both thresholds lie between the thread-scaling target (0.85) and what one
#: CPU-bound process beside the bench gives on this 2-core machine (measured on the duel with a
#: wall-clock t_1, 4 rounds: efficiency 0.45-0.62, CPU share 0.25-0.53); a kernel that scales
#: badly on its own keeps its CPU share and stays "ok" or "short".
CONTENDED_EFFICIENCY, CONTENDED_CPU_SHARE = 0.75, 0.85


@dataclass(frozen=True)
class Side:
    """One side of a timed comparison: ``run(n)`` plays ``n`` trials (or draws, dice ...);
    ``trials`` of them per timing. ``threaded``: a numba kernel, timed on every thread and on
    1 thread (``trials // threads`` there); else single-threaded Python or numpy, timed once a
    round. ``prepared``: the point whose kernel it runs, for the draws per trial and the
    profile (:mod:`analyzer.bench.draws`)."""

    run: Callable[[int], None]
    trials: int
    threaded: bool = True
    prepared: object = None
    #: a single-threaded side timed as the best of this many calls a round: a numpy reference whose
    #: large temporary arrays are sometimes faulted in again runs at two speeds (the exploding pool's
    #: numpy reference, measured: 2.1e6 or 5.0e6 trials/s, call by call), which one call a round
    #: turns into a 1-thread ratio of 9 or 24 at random
    calls: int = 1


def prepared_runner(prepared, seed: int = 1, key: int = 7) -> Callable[[int], None]:
    """``run(n)``: ``n`` trials of ``prepared``'s kernel, batch by batch as the runner calls it."""
    from analyzer.run.batches import run_batches

    def run(n: int) -> None:
        for _ in run_batches(prepared, n, seed=seed, key=key):
            pass
    return run


def _timed(fn) -> tuple[float, float, float]:
    """Wall, process CPU and calling-thread CPU seconds of one call."""
    w0, c0, t0 = time.perf_counter(), time.process_time(), time.thread_time()
    fn()
    return time.perf_counter() - w0, time.process_time() - c0, time.thread_time() - t0


def measure(sides: dict[str, Side], rounds: int = ROUNDS, raw: bool = True) -> dict:
    """Time every side in turn, ``rounds`` rounds (a busy spell hits them all): each threaded
    side on 1 numba thread (repeated until :data:`ONE_THREAD_SECONDS` of it), then on every thread;
    the others once; with ``raw``, the raw generator's draws (:func:`analyzer.bench.draws.raw_draws`)
    the same way. Returns per side:
    ``rate`` (best wall time; a threaded side on every thread), ``rates_1`` (per round, from the
    calling thread's CPU time on 1 thread: a kernel on 1 numba thread runs on the calling thread
    (numba's ``omp`` layer; measured: thread CPU = wall on an idle core, and 92-99 ms of CPU for
    145-210 ms of wall beside a CPU-bound process), as does the reference, so the 1-thread ratio
    does not move when another process takes a core; on another threading layer, wall time),
    ``efficiency`` (t_1 / (threads x t_all) per trial, t_1 the 1-thread time as in ``rates_1``)
    and ``cpu_share`` (medians over rounds), ``seconds`` (the fastest timing on every thread);
    and ``"_run"``: ``threads``, the machine's 1-minute ``load`` average (the highest of before
    and after) and, for a prepared side, its profile."""
    from analyzer.bench import draws

    threads = numba.get_num_threads()
    if raw:
        draws.raw_draws(draws.RAW_CHUNK)                      # compile / load outside the timing
        sides = {**sides, "_raw": Side(draws.raw_draws, draws.RAW_DRAWS)}
    try:
        on_caller = numba.threading_layer() == "omp"
    except ValueError:                                        # no parallel kernel has run
        on_caller = False
    load = [os.getloadavg()[0]]
    timing = {label: {"all": [], "cpu": [], "one": []} for label in sides}
    for _ in range(rounds):
        for label, side in sides.items():
            if side.threaded and threads > 1:
                n1 = max(side.trials // threads, 1)
                numba.set_num_threads(1)
                try:
                    # repeated up to ONE_THREAD_SECONDS: a short section is what a competing process
                    # disturbs most
                    spent, calls = 0.0, 0
                    while calls == 0 or spent < ONE_THREAD_SECONDS:
                        wall, _, mine = _timed(lambda: side.run(n1))
                        spent += mine if on_caller else wall
                        calls += 1
                finally:
                    numba.set_num_threads(threads)
                timing[label]["one"].append(spent / (calls * n1) * side.trials)
            wall, cpu, mine = min((_timed(lambda: side.run(side.trials)) for _ in range(max(side.calls, 1))),
                                  key=lambda x: x[0])
            timing[label]["all"].append(wall)
            timing[label]["cpu"].append(cpu)
            if not (side.threaded and threads > 1):
                timing[label]["one"].append(mine if on_caller or not side.threaded else wall)
    load.append(os.getloadavg()[0])
    out = {"_run": {"threads": threads, "load": max(load), "profiles": {}}}
    for label, side in sides.items():
        t = timing[label]
        out[label] = {"rate": side.trials / min(t["all"]), "rates_1": [side.trials / x for x in t["one"]],
                      "seconds": min(t["all"]),
                      "efficiency": statistics.median(o / (threads * a) for o, a in zip(t["one"], t["all"]))
                      if side.threaded else None,
                      "cpu_share": statistics.median(c / (threads * a) for c, a in zip(t["cpu"], t["all"]))
                      if side.threaded else None}
    for label, side in sides.items():
        if side.prepared is not None and side.prepared.kernel is not None:
            out["_run"]["profiles"][label] = draws.profile(side.prepared, max(side.trials // threads, 2))
    return out


def row_status(seconds: float, efficiency: float | None, cpu_share: float | None) -> str:
    """``contended`` (another process took the cores, see :data:`CONTENDED_EFFICIENCY`),
    ``short`` (under :data:`SHORT_SECONDS` of kernel time) or ``ok``."""
    if efficiency is not None and cpu_share is not None and efficiency < CONTENDED_EFFICIENCY \
            and cpu_share < CONTENDED_CPU_SHARE:
        return "contended"
    return "short" if seconds < SHORT_SECONDS else "ok"


def compare(figures: dict, side: str, against: str, scale: float = 1.0) -> dict:
    """The figures of the row ``side`` vs ``against`` from one :func:`measure`: ``ratio`` (best
    rates, all threads, x ``scale``), ``ratio_1_thread`` (median over rounds of the 1-thread
    ratios), ``side``'s ``efficiency``, ``cpu_share``, ``status`` and the ``load``; and when
    ``side`` ran a prepared kernel: ``draws_per_trial``, ``raw_draws_per_s`` (same rounds, all
    threads), ``rng_fraction`` = trials/s x draws/trial / raw draws/s, and the 1-thread split of
    a trial (``rng_share``, ``recording_share``, ``trial_share``; ``bound``: the largest); every
    :data:`FIGURE_KEYS` key is there (None when it does not apply)."""
    a, b = figures[side], figures[against]
    out = {**dict.fromkeys(FIGURE_KEYS), "ratio": a["rate"] / b["rate"] * scale,
           "ratio_1_thread": statistics.median(x / y for x, y in zip(a["rates_1"], b["rates_1"])) * scale,
           "efficiency": a["efficiency"], "cpu_share": a["cpu_share"], "load": figures["_run"]["load"],
           "status": row_status(a["seconds"], a["efficiency"], a["cpu_share"])}
    profile = figures["_run"]["profiles"].get(side)
    if profile is not None and profile.draws_per_trial is not None and "_raw" in figures:
        from analyzer.bench.draws import BOUNDS
        shares = profile.shares()
        out.update(draws_per_trial=profile.draws_per_trial, raw_draws_per_s=figures["_raw"]["rate"],
                   rng_fraction=a["rate"] * profile.draws_per_trial / figures["_raw"]["rate"],
                   rng_share=shares["rng"], recording_share=shares["recording"], trial_share=shares["trial"],
                   bound=BOUNDS[max(shares, key=shares.get)])
    return out


def figures_line(f: dict) -> str:
    """One printed line of a row's :func:`compare` figures."""
    line = (f"  1 thread: ratio {f['ratio_1_thread']:,.3g} (median of rounds); "
            + (f"efficiency {f['efficiency']:.2f}, CPU share {f['cpu_share']:.2f}; " if f["efficiency"] is not None
               else "") + f"load {f['load']:.2f}; {f['status']}")
    if f.get("draws_per_trial") is not None:
        line += (f"\n  {f['draws_per_trial']:.4g} draws/trial, {f['rng_fraction']:.3g} of the RNG bound "
                 f"(raw {f['raw_draws_per_s']:.3g} draws/s); 1-thread split: draws {f['rng_share']:.0%}, "
                 f"recording {f['recording_share']:.0%}, control flow and memory {f['trial_share']:.0%}")
    return line


def kernel_vs_reference(scenario_path: Path, *, point: int, question: str, reference: str, trials: int,
                        ref_trials: int, target: float, describe: str, data_dir: Path | None = None,
                        rounds: int = ROUNDS, console=None, simulate=None, params_dump: dict | None = None) -> dict:
    """Trials/s of a point's kernel and of the pure-Python reference module ``reference`` on the
    same point, timed in interleaved rounds (:func:`measure`: best of ``rounds`` each, the
    kernel also on 1 thread), with the ratio and the row's :func:`compare` figures
    (``"figures"``); prints the figures and returns them.
    ``simulate(ref, params, rules, n)`` replaces the usual
    ``ref.simulate(question, params, rules, ref.load_data(dir), n, 1)`` call."""
    from analyzer.core import scenario as scenario_mod
    from analyzer.run.runner import prepare_point

    sc = scenario_mod.load(scenario_path)
    pt = sc.points[point]
    prep = prepare_point(sc, pt)
    prep.run_kernel(1, 7, 0, 2, 64, 128)  # compile (or load from the cache) outside the timing

    ref = load_reference(reference)
    params = pt.params.model_dump(mode="json", **(params_dump or {"exclude_unset": True}))
    if simulate is None:
        data = ref.load_data(str(data_dir or scenario_path.parent))

        def reference_run(n):
            ref.simulate(question, params, pt.rules, data, n, 1)
    else:
        def reference_run(n):
            simulate(ref, params, pt.rules, n)

    timed = measure({"kernel": Side(prepared_runner(prep), trials, prepared=prep),
                     "reference": Side(reference_run, ref_trials, threaded=False)}, rounds)
    figures = compare(timed, "kernel", "reference")
    out = {"threads": numba.get_num_threads(), "kernel_trials_per_s": timed["kernel"]["rate"],
           "reference_trials_per_s": timed["reference"]["rate"], "ratio": figures["ratio"], "figures": figures}
    for line in (f"threads: {out['threads']}  {describe}",
                 f"{question} kernel trials/s:         {out['kernel_trials_per_s']:,.0f}  ({trials:,} trials, "
                 f"best of {rounds})",
                 f"pure-Python reference trials/s:    {out['reference_trials_per_s']:,.0f}  ({ref_trials:,} trials, "
                 f"best of {rounds})",
                 f"ratio kernel / reference:          {out['ratio']:,.0f}  (target >= {target:g})",
                 figures_line(figures)):
        say(console, line)
    return out


#: issue 16: one draw from an exact outcome table should make a stateful kernel this much faster
TABLE_TARGET = 2


def sampling_rows(main: str, label: str, table, dice, reference_run: Callable[[int], None], trials: int,
                  ref_trials: int, target: float, one_draw: str, console=None) -> tuple[list[dict], dict]:
    """A stateful kernel with ``sampling: table`` (the prepared point ``table``) and ``sampling:
    dice`` (``dice``), each on every thread and on 1 thread, and the reference ``reference_run(n)``,
    timed in interleaved rounds (:func:`measure`): the rows ``main`` (table vs reference),
    ``main:dice`` (dice vs reference) and ``main:table-vs-dice`` (target :data:`TABLE_TARGET`;
    ``one_draw``: what one table draw replaces, e.g. "one draw per shot vs three d10"), and the
    :func:`measure` figures. Prints each row's figures."""
    timed = measure({"table": Side(prepared_runner(table), trials, prepared=table),  # "rolled": sampling: dice
                     "rolled": Side(prepared_runner(dice), trials, prepared=dice),
                     "reference": Side(reference_run, ref_trials, threaded=False)})
    rate, dice_rate, ref_rate = timed["table"]["rate"], timed["rolled"]["rate"], timed["reference"]["rate"]
    pairs = {main: ("table", "reference"), f"{main}:dice": ("rolled", "reference"),
             f"{main}:table-vs-dice": ("table", "rolled")}
    figures = {name: compare(timed, a, b) for name, (a, b) in pairs.items()}
    for line in (f"{label} trials/s, sampling table ({timed['_run']['threads']} threads): {rate:,.0f}  "
                 f"({trials:,} trials, best of {ROUNDS} interleaved)",
                 f"{label} trials/s, sampling dice: {dice_rate:,.0f}",
                 f"pure-Python reference trials/s: {ref_rate:,.0f}  ({ref_trials:,} trials)",
                 f"ratio table / reference: {rate / ref_rate:,.0f}, dice / reference: {dice_rate / ref_rate:,.0f}  "
                 f"(target >= {target:g})",
                 f"ratio table / dice: {rate / dice_rate:.2f}  (target >= {TABLE_TARGET})",
                 f"table / reference:\n{figures_line(figures[main])}",
                 f"dice / reference:\n{figures_line(figures[f'{main}:dice'])}"):
        say(console, line)
    rows = [row(main, f"{label} (sampling: table) trials/s vs pure-Python reference", rate, "trials/s",
                rate / ref_rate, target, reference="pure-Python reference", reference_rate=ref_rate,
                figures=figures[main]),
            row(f"{main}:dice", f"{label} (sampling: dice) trials/s vs pure-Python reference", dice_rate,
                "trials/s", dice_rate / ref_rate, target, reference="pure-Python reference", reference_rate=ref_rate,
                figures=figures[f"{main}:dice"]),
            row(f"{main}:table-vs-dice", f"{label} trials/s, {one_draw}", rate, "trials/s", rate / dice_rate,
                TABLE_TARGET, reference="sampling: dice", reference_rate=dice_rate,
                figures=figures[f"{main}:table-vs-dice"])]
    return rows, timed
