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
import pkgutil
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


def row(name: str, what: str, rate: float, unit: str, ratio: float, target: float, *, better: str = "higher",
        reference: str = "", reference_rate: float | None = None, threads: int | None = None) -> dict:
    """One result row (the keys of :mod:`analyzer.bench.suite`)."""
    met = ratio >= target if better == "higher" else ratio <= target
    return {"name": name, "what": what, "rate": rate, "unit": unit, "reference": reference,
            "reference_rate": reference_rate, "ratio": ratio, "ratio_target": target, "better": better,
            "met": bool(met), "threads": threads if threads is not None else numba.get_num_threads()}


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


def kernel_vs_reference(scenario_path: Path, *, point: int, question: str, reference: str, trials: int,
                        ref_trials: int, target: float, describe: str, data_dir: Path | None = None,
                        rounds: int = 3, console=None, simulate=None, params_dump: dict | None = None) -> dict:
    """Trials/s of a point's kernel and of the pure-Python reference module ``reference`` on the
    same point, timed in interleaved rounds (best of ``rounds`` each, so a busy spell of the
    machine hits both), with the ratio; prints the figures and returns them.
    ``simulate(ref, params, rules, n)`` replaces the usual
    ``ref.simulate(question, params, rules, ref.load_data(dir), n, 1)`` call."""
    from analyzer.core import scenario as scenario_mod
    from analyzer.run.batches import run_batches
    from analyzer.run.runner import prepare_point

    sc = scenario_mod.load(scenario_path)
    pt = sc.points[point]
    prep = prepare_point(sc, pt)
    prep.run_kernel(1, 7, 0, 2, 64, 128)  # compile (or load from the cache) outside the timing

    def kernel():
        for _ in run_batches(prep, trials, seed=1, key=7):
            pass

    ref = load_reference(reference)
    params = pt.params.model_dump(mode="json", **(params_dump or {"exclude_unset": True}))
    if simulate is None:
        data = ref.load_data(str(data_dir or scenario_path.parent))

        def reference():
            ref.simulate(question, params, pt.rules, data, ref_trials, 1)
    else:
        def reference():
            simulate(ref, params, pt.rules, ref_trials)

    t_kernel, t_ref = interleaved_best([kernel, reference], rounds)
    out = {"threads": numba.get_num_threads(), "kernel_trials_per_s": trials / t_kernel,
           "reference_trials_per_s": ref_trials / t_ref}
    out["ratio"] = out["kernel_trials_per_s"] / out["reference_trials_per_s"]
    for line in (f"threads: {out['threads']}  {describe}",
                 f"{question} kernel trials/s:         {out['kernel_trials_per_s']:,.0f}  ({trials:,} trials, "
                 f"best of {rounds})",
                 f"pure-Python reference trials/s:    {out['reference_trials_per_s']:,.0f}  ({ref_trials:,} trials, "
                 f"best of {rounds})",
                 f"ratio kernel / reference:          {out['ratio']:,.0f}  (target >= {target:g})"):
        say(console, line)
    return out
