"""``analyzer bench``: every benchmark in one run, as rows with a ratio and a target.

Each row compares a measured figure with another measured in the same process (raw RNG
draws, numpy, the pure-Python reference, icepool), or, for the whole-process rows (CLI
start, memory), with its stated target. Row keys (``--json`` prints ``{"rows": [...]}``):

``name``, ``what``, ``rate`` and ``unit`` (the measured figure), ``reference`` and
``reference_rate`` (what it is compared with, when there is one), ``ratio``, ``ratio_target``,
``better`` (``higher``/``lower``: which side of the target meets it), ``met`` and ``threads``;
and on every row timed by :func:`analyzer.bench.harness.measure` (the kernel rows; None
elsewhere): ``ratio_1_thread`` (the kernel on 1 thread against the 1-thread reference, each
timed by its thread's CPU time, median of the interleaved rounds' ratios: what holds when
another process takes a core),
``efficiency`` (t_1 / (threads x t_all), per trial), ``cpu_share`` (process CPU / (wall x
threads) while on every thread), ``load`` (1-minute load average), ``status`` (``ok``,
``short``: too little kernel time, ``contended``: another process took the cores), and for a
kernel on the chunk driver ``draws_per_trial``, ``raw_draws_per_s``, ``rng_fraction`` (trials/s
x draws/trial / raw draws/s, all threads, same rounds) with the 1-thread split of a trial
``rng_share``, ``recording_share``, ``trial_share`` and ``bound`` (:mod:`analyzer.bench.draws`).

The rows come from what the benchmarks declare (:class:`analyzer.bench.harness.Benchmark`:
their ``--quick`` trials, their thread-scaling scenarios); the whole-process rows (CLI start,
memory, stop latency) run the scenarios a game's bench module declares
(:func:`analyzer.bench.harness.declare_process_scenarios`), written into a work folder; when no
game declares them, those rows are skipped (a printed line says so).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numba
import yaml

from analyzer.bench import harness as bench_mod
from analyzer.bench.harness import QUICK_TRIALS, STATEFUL_TARGET, Benchmark, row

THREAD_EFFICIENCY_TARGET = 0.85
#: kernel trials of a thread-scaling row in a full run (``--quick``: QUICK_TRIALS, or the benchmark's
#: own quick trials when fewer)
SCALING_TRIALS = 2_000_000
MEMORY_GROWTH_TARGET = 1.10
#: ``--smoke``: every row at 1/SMOKE_DIVISOR of its ``--quick`` kernel trials (at least SMOKE_FLOOR),
#: the CLI rows once: it checks that every benchmark runs on this install, in about a minute; its
#: ratios are measured on too little work to be compared with a target
SMOKE_DIVISOR, SMOKE_FLOOR = 20, 2_000
#: whole-process wall-time targets in seconds (warm, 2 cores)
CLI_TARGETS = {"cli-help": 0.5, "cli-list": 0.5, "cli-validate": 0.7, "cli-run": 1.5}


def scaling_scenarios() -> dict[str, Path]:
    """Benchmark name -> the scenario of its thread-scaling row (what the benchmarks declare)."""
    return {name: b.scaling for name, b in sorted(bench_mod.BENCHMARKS.items()) if b.scaling is not None}


def write_scenario(work: Path, name: str, doc: dict) -> Path:
    """``doc`` written as the scenario file ``work/name.yaml``."""
    path = work / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def rows_of(name: str, out: dict, target: float | None) -> list[dict]:
    """The rows of one registered benchmark's result dict (the shapes the benchmarks return)."""
    if "rows" in out:
        return out["rows"]
    if "fraction_of_icepool" in out:
        return [row(name, "exact 40-die attack time / icepool's time (same 1e-15 tail)", out["ours_s"], "s",
                    out["fraction_of_icepool"], 0.01, better="lower", reference="icepool",
                    reference_rate=out["icepool_s"])]
    if "scenarios" in out:
        rows = []
        for scen, r in out["scenarios"].items():
            if "ratio" in r:
                rows.append(row(f"{name}:{scen}", "kernel trials/s vs pure-Python reference", r["kernel_trials_per_s"],
                                "trials/s", r["ratio"], target or STATEFUL_TARGET, reference="pure-Python reference",
                                reference_rate=r["reference_trials_per_s"]))
        return rows
    if "kernel_trials_per_s" in out:
        return [row(name, "kernel trials/s vs pure-Python reference", out["kernel_trials_per_s"], "trials/s",
                    out["ratio"], target or STATEFUL_TARGET, reference="pure-Python reference",
                    reference_rate=out["reference_trials_per_s"], figures=out.get("figures"))]
    raise ValueError(f"bench {name}: unknown result shape {sorted(out)}")


def target_of(bench: Benchmark) -> float | None:
    """The target a benchmark declares for a result without rows of its own, if any."""
    return bench.target


# ----------------------------------------------------------------------------- scaling rows
def thread_scaling(name: str, scenario: Path, trials: int) -> dict:
    """1 vs all threads on one point's kernel: parallel efficiency = rate(n) / (n * rate(1))."""
    from analyzer.core import scenario as scenario_mod
    from analyzer.run.batches import run_batches
    from analyzer.run.runner import prepare_point

    sc = scenario_mod.load(scenario)
    prep = prepare_point(sc, sc.points[0])
    prep.run_kernel(1, 7, 0, 2, 64, 128)

    def run_all():
        for _ in run_batches(prep, trials, seed=1, key=7):
            pass

    threads = numba.get_num_threads()

    def run_one():
        numba.set_num_threads(1)
        try:
            run_all()
        finally:
            numba.set_num_threads(threads)
    t_all, t_one = bench_mod.interleaved_best([run_all, run_one], rounds=3)
    rate_all, rate_one = trials / t_all, trials / t_one
    return row(f"threads-{name}", f"parallel efficiency 1 -> {threads} threads ({scenario.name})", rate_all,
               "trials/s", rate_all / (threads * rate_one), THREAD_EFFICIENCY_TARGET,
               reference="same kernel on 1 thread", reference_rate=rate_one, threads=threads)


def _cli(args: list[str], cwd: Path | None = None) -> tuple[float, int]:
    """Wall time and peak RSS (KiB) of one ``analyzer`` process."""
    code = ("import resource, sys, time; t0 = time.perf_counter(); sys.argv = ['analyzer'] + sys.argv[1:];\n"
            "from analyzer.cli.app import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('BENCH', time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "
            "file=sys.stderr)")
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=cwd,
                         env=dict(os.environ, COLUMNS="120"))
    wall = time.perf_counter() - t0
    line = [ln for ln in res.stderr.splitlines() if ln.startswith("BENCH ")]
    if res.returncode != 0 or not line:
        raise RuntimeError(f"analyzer {' '.join(args)} failed: {res.stderr[-500:]}")
    return wall, int(line[-1].split()[2])


def cli_rows(work: Path, scenario: dict, rounds: int = 3) -> list[dict]:
    """Whole-process wall times of the commands a user types (best of ``rounds``, warm caches);
    ``validate`` and ``run`` get the scenario document ``scenario`` (one point)."""
    scen = str(write_scenario(work, "cli_scenario", scenario))
    commands = {"cli-help": ["--help"], "cli-list": ["list"], "cli-validate": ["validate", scen],
                "cli-run": ["run", scen, "--trials", "200000", "--no-progress", "--out", str(work)]}
    out = []
    for name, args in commands.items():
        best = min(_cli(args, work)[0] for _ in range(rounds))
        out.append(row(name, f"wall time of 'analyzer {' '.join(args[:1])}' (whole process, best of {rounds})", best, "s",
                       best, CLI_TARGETS[name], better="lower", threads=numba.get_num_threads()))
    return out


#: issue 32: ``analyzer --help`` and ``analyzer list`` within this many times the start of a process
#: that only imports the CLI's libraries (:data:`LIGHT_IMPORTS`), medians of 3 in one run
CLI_START_TARGET = 2.5
LIGHT_IMPORTS = "import typer, pydantic, yaml, rich"


def _wall(argv: list[str], cwd: Path | None = None) -> float:
    """Wall seconds of one process ``argv`` (it must exit 0)."""
    t0 = time.perf_counter()
    res = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=dict(os.environ, COLUMNS="120"))
    wall = time.perf_counter() - t0
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:4])} failed: {res.stderr[-500:]}")
    return wall


def cli_start_rows(work: Path, rounds: int = 3) -> list[dict]:
    """``analyzer --help`` and ``analyzer list`` against a process importing :data:`LIGHT_IMPORTS`,
    in interleaved rounds, medians of ``rounds`` (rows ``cli-help-vs-imports``, ``cli-list-vs-imports``)."""
    import statistics

    entry = [sys.executable, "-c", "from analyzer.cli.app import main; main()"]
    argvs = {"imports": [sys.executable, "-c", LIGHT_IMPORTS], "cli-help-vs-imports": entry + ["--help"],
             "cli-list-vs-imports": entry + ["list"]}
    _wall(argvs["cli-list-vs-imports"], work)                 # the catalog cache is current before timing
    walls = {name: [] for name in argvs}
    for _ in range(rounds):
        for name, argv in argvs.items():
            walls[name].append(_wall(argv, work))
    median = {name: statistics.median(w) for name, w in walls.items()}
    return [row(name, f"wall time of 'analyzer {argvs[name][-1]}' / a process importing {LIGHT_IMPORTS} "
                f"(medians of {rounds}, interleaved)", median[name], "s", median[name] / median["imports"],
                CLI_START_TARGET, better="lower", reference=f"python -c '{LIGHT_IMPORTS}'",
                reference_rate=median["imports"])
            for name in ("cli-help-vs-imports", "cli-list-vs-imports")]


#: seconds from SIGINT to the exit of a running 'analyzer run' (the issue's "stop within 2 s")
STOP_LATENCY_TARGET = 2.0


def stop_latency_row(work: Path, scenario: Path, rounds: int = 3) -> dict:
    """Seconds from SIGINT (Ctrl-C) to the exit of an ``analyzer run`` of the scenario file
    ``scenario`` (10^9 trials) in the middle of a long point (best of ``rounds``): the stop
    latency the tests only bound (they wait up to 60 s and check the exit code; a timing there
    fails on a loaded machine). Each run is signalled once its stop handler is installed
    (:func:`analyzer.core.interrupt.stop_handler_installed`) and a second has passed, so the
    kernels are running."""
    import signal

    from analyzer.core.interrupt import stop_handler_installed
    scen = str(scenario)
    best = float("inf")
    for _ in range(rounds):
        proc = subprocess.Popen([sys.executable, "-c", "from analyzer.cli.app import main; main()", "run", scen,
                                 "--trials", str(10**9), "--no-progress", "--out", str(work)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=work)
        try:
            deadline = time.perf_counter() + 120
            while not stop_handler_installed(proc.pid):
                if proc.poll() is not None or time.perf_counter() > deadline:
                    raise RuntimeError(f"stop-latency: the run never started: {proc.stderr.read()[-500:]}")
                time.sleep(0.02)
            time.sleep(1.0)
            t0 = time.perf_counter()
            proc.send_signal(signal.SIGINT)
            rc = proc.wait(timeout=120)
            seconds = time.perf_counter() - t0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if rc != 130:
            raise RuntimeError(f"stop-latency: exit {rc} after SIGINT (expected 130): {proc.stderr.read()[-500:]}")
        best = min(best, seconds)
    return row("stop-latency", f"seconds from SIGINT to exit of a running 'analyzer run' (exit 130, best of {rounds})",
               best, "s", best, STOP_LATENCY_TARGET, better="lower")


def memory_row(work: Path, quick: bool, scenario: dict, describe: str, smoke: bool = False) -> dict:
    """Peak RSS of a whole run of the scenario document ``scenario`` (``describe``: what it
    runs) at 100x the trials of another: must stay flat."""
    small, big = (10_000, 1_000_000) if smoke else (100_000, 10_000_000) if quick else (1_000_000, 100_000_000)
    scen = str(write_scenario(work, "memory_scenario", scenario))
    rss = {}
    wall = {}
    for n in (small, big):
        wall[n], rss[n] = _cli(["run", scen, "--trials", str(n), "--no-progress", "--out", str(work)], work)
    return row("memory-trials", f"peak RSS at {big:.0e} trials / at {small:.0e} ({describe}; "
               f"wall {wall[small]:.1f} s vs {wall[big]:.1f} s)", rss[big] / 1024, "MiB", rss[big] / rss[small],
               MEMORY_GROWTH_TARGET, better="lower", reference=f"peak RSS at {small:.0e} trials",
               reference_rate=rss[small] / 1024)


# ----------------------------------------------------------------------------- the suite
def smoke_trials(quick_trials: int) -> int:
    """A benchmark's kernel trials under ``--smoke`` (see :data:`SMOKE_DIVISOR`)."""
    return max(SMOKE_FLOOR, quick_trials // SMOKE_DIVISOR)


def run_suite(names: list[str] | None = None, *, quick: bool = False, smoke: bool = False, console=None,
              work: Path | None = None) -> list[dict]:
    """Every registered benchmark (or ``names``), then thread scaling, memory and CLI start (the
    last two on the scenarios a game declares, :data:`analyzer.bench.harness.PROCESS_SCENARIOS`).
    ``smoke``: every row at :func:`smoke_trials` (implies ``quick`` for the rows' other sizes)."""
    import tempfile

    quick = quick or smoke

    bench_mod.load_benchmarks()
    chosen = names or sorted(bench_mod.BENCHMARKS)
    unknown = [n for n in chosen if n not in bench_mod.BENCHMARKS and n not in ("scaling", "memory", "cli")]
    if unknown:
        raise KeyError(f"unknown benchmark(s): {', '.join(unknown)}; allowed: "
                       f"{', '.join(sorted(bench_mod.BENCHMARKS) + ['scaling', 'memory', 'cli'])}")
    rows: list[dict] = []
    for name in chosen:
        if name not in bench_mod.BENCHMARKS:
            continue
        bench = bench_mod.BENCHMARKS[name]
        if bench.missing():
            if names:                        # asked for by name: say why it cannot run
                bench_mod.check_available(bench)
            bench_mod.say(console, f"--- {name}: skipped (needs {', '.join(bench.missing())}, not installed)")
            continue
        bench_mod.say(console, f"--- {name}")
        t0 = time.perf_counter()
        out = bench(console, smoke_trials(bench.quick_trials) if smoke else bench.quick_trials if quick else None)
        rows += rows_of(name, out, target_of(bench))
        bench_mod.say(console, f"    ({time.perf_counter() - t0:.1f} s)")
    extras = [n for n in ("scaling", "memory", "cli") if names is None or n in names]
    process = bench_mod.PROCESS_SCENARIOS
    skipped = [n for n in extras if n in ("memory", "cli")] if process is None else []
    if skipped:
        bench_mod.say(console, f"--- {', '.join(skipped)}: skipped (no game's bench module declares the "
                               f"whole-process scenarios, analyzer.bench.harness.declare_process_scenarios)")
        extras = [n for n in extras if n not in skipped]
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        work = Path(work or tmp)
        if "scaling" in extras:
            for name, path in scaling_scenarios().items():
                if names is None or name in chosen or "scaling" in names:
                    trials = min(QUICK_TRIALS, bench_mod.BENCHMARKS[name].quick_trials) if quick else SCALING_TRIALS
                    trials = smoke_trials(trials) if smoke else trials
                    rows.append(thread_scaling(name, path, trials))
        if "memory" in extras:
            rows.append(memory_row(work, quick, process.memory, process.memory_describe, smoke))
        if "cli" in extras:
            rows += cli_rows(work, process.cli, rounds=1 if smoke else 3)
            rows += cli_start_rows(work)
            rows.append(stop_latency_row(work, process.stop, rounds=1 if quick else 3))
    return rows


def write_outputs(rows: list[dict], out_dir: Path) -> list[Path]:
    """``bench.parquet`` (one row per figure), ``bench.json`` and ``bench_ratios.png``."""
    import pandas as pd

    from analyzer.outputs import writer as outputs
    from analyzer.core import paths

    out_dir.mkdir(parents=True, exist_ok=True)
    written = [outputs.write_parquet(pd.DataFrame(rows), out_dir / "bench.parquet"),
               outputs.write_json({"rows": rows}, out_dir / "bench.json")]
    fig = ratio_figure(rows)
    written.append(paths.write_atomic(out_dir, "bench_ratios.png", lambda fh: fig.savefig(fh, format="png", dpi=110)))
    return written


def ratio_figure(rows: list[dict]):
    """Each row's ratio as a fraction of its target (1 = target met exactly; log scale)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 0.32 * len(rows) + 1.5))
    score = [(r["ratio"] / r["ratio_target"]) if r["better"] == "higher" else (r["ratio_target"] / r["ratio"])
             for r in rows]
    colours = ["tab:green" if r["met"] else "tab:red" for r in rows]
    ax.barh(range(len(rows)), score, color=colours)
    ax.set_yticks(range(len(rows)), [r["name"] for r in rows], fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.axvline(1, color="black", lw=1)
    for i, r in enumerate(rows):
        ax.annotate(f" {r['ratio']:.3g} (target {'≥' if r['better'] == 'higher' else '≤'} {r['ratio_target']:g})",
                    (score[i], i), fontsize=6, va="center")
    ax.set_xlabel("measured ratio / target (≥ 1 meets it; green met, red not)")
    ax.set_title("analyzer bench: every ratio measured in one run", fontsize=9)
    fig.tight_layout()
    return fig


def _cell(value, fmt: str) -> str:
    return "" if value is None else format(value, fmt)


def print_table(rows: list[dict], console) -> None:
    """The rows as a table (the figures of :func:`analyzer.bench.harness.compare` beside each
    kernel row: 1-thread ratio, 2-thread efficiency, load, draws per trial, fraction of the RNG
    bound, status)."""
    from rich.table import Table

    table = Table(title="analyzer bench", title_justify="left")
    # 1-thr: the 1-thread ratio; eff: 2-thread efficiency; draws: per trial; RNG: fraction of the RNG bound
    for col in ("name", "rate", "ratio", "target", "met", "1-thr", "eff", "load", "draws", "RNG", "status"):
        table.add_column(col, justify="left" if col == "name" else "right")
    for r in rows:
        table.add_row(r["name"], f"{r['rate']:.4g} {r['unit']}", f"{r['ratio']:.3g}",
                      f"{'≥' if r['better'] == 'higher' else '≤'} {r['ratio_target']:g}", "yes" if r["met"] else "NO",
                      _cell(r.get("ratio_1_thread"), ".3g"), _cell(r.get("efficiency"), ".2f"),
                      _cell(r.get("load"), ".2f"), _cell(r.get("draws_per_trial"), ".4g"),
                      _cell(r.get("rng_fraction"), ".3g"), r.get("status") or "")
    console.print(table)


#: how many rows :func:`bound_summary` names
FURTHEST = 3


def bound_summary(rows: list[dict], n: int = FURTHEST) -> list[str]:
    """The ``n`` kernel rows furthest from their RNG bound (lowest ``rng_fraction``; one row per
    kernel and point: the ``:table-vs-dice`` rows repeat their table kernel's figures) and what
    bounds each: the largest share of its 1-thread split (draws, recording, control flow and
    memory; :class:`analyzer.bench.draws.Profile`)."""
    kernel_rows = [r for r in rows if r.get("rng_fraction") is not None and not r["name"].endswith(":table-vs-dice")]
    if not kernel_rows:
        return []
    lines = [f"furthest from the RNG bound (trials/s x draws/trial / raw draws/s; bound decided by the largest share "
             f"of a trial's time on 1 thread: draws = draws/trial / raw 1-thread draws/s, recording = time recording "
             f"every trial - time recording none, control flow and memory = the rest):"]
    for r in sorted(kernel_rows, key=lambda r: r["rng_fraction"])[:n]:
        lines.append(f"  {r['name']}: {r['rng_fraction']:.3g} of the bound, {r['draws_per_trial']:.4g} draws/trial; "
                     f"bound by {r['bound']} (draws {r['rng_share']:.0%}, recording {r['recording_share']:.0%}, "
                     f"control flow and memory {r['trial_share']:.0%})")
    return lines


def dumps(rows: list[dict]) -> str:
    return json.dumps({"rows": rows}, indent=2, default=float)
