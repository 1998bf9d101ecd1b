"""``analyzer bench --quick --json``: every benchmark in one run reports rows with a ratio and
its target (the figures themselves are not asserted: timings are not tests), and every
question whose kernel runs Monte-Carlo trials has a row; what each benchmark declares (its
questions, scenarios, references, scaling scenario) is checked without running it."""
import importlib
import json
import subprocess
import sys

import numpy as np
import pytest

from analyzer.bench import harness
from analyzer.bench import suite as bench_suite
from analyzer.core import scenario as scenario_mod
from analyzer.bench.harness import BENCHMARKS, bench_of_question, load_benchmarks
from analyzer.bench.kernels import point_index
from analyzer.core.questions import _REGISTRY, SCENARIO_ROOT, load_games
from analyzer.games.dice import bench as dice_bench
from analyzer.run.runner import prepare_point

KEYS = {"name", "what", "rate", "unit", "reference", "reference_rate", "ratio", "ratio_target", "better", "met",
        "threads"}


def monte_carlo_questions() -> list[tuple[str, str]]:
    """Every registered (game, question) whose prepared point has a kernel, found from the
    registry and the first point of its first shipped scenario (exact-only questions have none)."""
    load_games()
    first_point = {}
    for path in scenario_mod.expand_targets([str(SCENARIO_ROOT)]):
        sc = scenario_mod.load(path)
        first_point.setdefault((sc.spec.game, sc.spec.question), (sc, sc.points[0]))
    missing = sorted(set(_REGISTRY) - set(first_point))
    assert not missing, f"questions without a shipped scenario under scenarios/ (to find their kernel): {missing}"
    return [key for key in sorted(_REGISTRY) if prepare_point(*first_point[key]).kernel is not None]


def of_benchmark(rows: list[dict], bench: str) -> list[dict]:
    """The rows a benchmark reports: named as it is, ``bench:...`` or ``bench-...``."""
    return [r for r in rows if r["name"] == bench or r["name"].startswith((bench + ":", bench + "-"))]


def test_every_monte_carlo_question_has_a_benchmark_that_declares_what_it_needs():
    """No kernel runs: every Monte-Carlo question of the registry is timed by a declared
    benchmark; every declared question exists; every declared scenario and scaling scenario is a
    file (a scenario of a benchmark that names its questions asks one of them); every declared
    reference imports by name and has ``simulate``."""
    load_benchmarks()
    timed = bench_of_question()
    unbenched = [key for key in monte_carlo_questions() if key not in timed]
    assert not unbenched, f"Monte-Carlo questions without a benchmark (declare a KernelBench row in the game's " \
                          f"bench.py): {unbenched}"
    assert set(timed) <= set(_REGISTRY), "benchmarks of questions that do not exist"
    for name, bench in BENCHMARKS.items():
        assert bench.quick_trials > 0, name
        for path in bench.scenarios + ((bench.scaling,) if bench.scaling else ()):
            assert path.is_file(), (name, path)
            sc = scenario_mod.load(path)
            assert not bench.questions or (sc.spec.game, sc.spec.question) in bench.questions, (name, path)
        for module in bench.references:
            assert callable(getattr(importlib.import_module(module), "simulate", None)), (name, module)


def test_the_whole_process_rows_run_what_a_game_declares_or_are_skipped(tmp_path, monkeypatch, capsys):
    """The CLI, memory and stop-latency rows run the scenarios one game's bench module declares
    (valid scenarios; a second, different declaration is refused); with none declared the suite
    says so in a line and skips those rows."""
    load_benchmarks()
    process = harness.PROCESS_SCENARIOS
    assert process is not None and process.stop.is_file() and process.memory_describe
    for name, doc in (("cli", process.cli), ("memory", process.memory)):
        assert len(scenario_mod.load(bench_suite.write_scenario(tmp_path, name, doc)).points) == 1, name
    declared = dict(cli=process.cli, memory=process.memory, stop=process.stop, memory_describe=process.memory_describe)
    harness.declare_process_scenarios(**declared)                    # the same again: accepted
    with pytest.raises(ValueError, match="already declared by game"):
        harness.declare_process_scenarios(**{**declared, "cli": {**process.cli, "trials": 1}})
    assert harness.PROCESS_SCENARIOS == process
    monkeypatch.setattr(harness, "PROCESS_SCENARIOS", None)
    assert bench_suite.run_suite(["memory", "cli"], work=tmp_path) == []
    assert "--- memory, cli: skipped (no game's bench module declares the whole-process scenarios" in \
        capsys.readouterr().out


@pytest.mark.slow
def test_smoke_suite_reports_every_kernel_with_ratio_and_target(tmp_path):
    load_benchmarks()
    kernels = monte_carlo_questions()
    timed = bench_of_question()
    # --smoke: the --quick suite's code path at 1/20 of its trials (the ratios are not the point
    # here: every row's presence and shape is; tests/test_install.py runs a --quick row)
    res = subprocess.run([sys.executable, "-c", "from analyzer.cli.app import main; main()", "bench", "--smoke",
                          "--json", "--out", str(tmp_path)], capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    rows = json.loads(res.stdout)["rows"]
    for r in rows:
        assert KEYS <= set(r), r
        assert r["ratio"] > 0 and r["ratio_target"] > 0 and r["better"] in ("higher", "lower")
        assert any("ratio" in k for k in r) and any("target" in k for k in r)
    names = [r["name"] for r in rows]
    for bench in BENCHMARKS:                      # every registered benchmark, by its own name
        assert of_benchmark(rows, bench), bench
    for key in kernels:                           # every Monte-Carlo kernel of the registry
        of_kernel = of_benchmark(rows, timed[key])
        assert of_kernel, f"{key}: no row {timed[key]!r} in the quick suite"
        for r in of_kernel:
            assert r["ratio"] > 0 and r["ratio_target"] > 0 and r["reference_rate"] > 0, r
    for kernel in bench_suite.scaling_scenarios():  # thread scaling of every kernel that declares it
        assert f"threads-{kernel}" in names, kernel
    assert {"memory-trials", *bench_suite.CLI_TARGETS} <= set(names)
    assert (tmp_path / "bench.parquet").is_file() and (tmp_path / "bench_ratios.png").is_file()


def test_numpy_references_of_the_dice_rows_match_the_exact_answer():
    """The numpy rules the dice-count and dice-roll-under rows are timed against compute the same
    metrics as the questions: their means agree with the exact distribution within 5 standard
    errors (fixed seed)."""
    n = 200_000
    for name, (question, rel, at, numpy_fn, _) in dice_bench.DICE_BENCHES.items():
        sc = scenario_mod.load(SCENARIO_ROOT / rel)
        point = sc.points[point_index(sc, at)]
        prep = prepare_point(sc, point)
        hist, sums = numpy_fn(np.random.default_rng(5), n, n_bins=prep.n_bins, **point.params.model_dump())
        assert hist.sum(axis=1).tolist() == [n] * len(prep.metrics), name
        exact = prep.exact()
        for m, metric in enumerate(prep.metrics):
            mean = sums[m, 0] / n
            se = np.sqrt(max(sums[m, 1] / n - mean ** 2, 1e-12) / n)
            assert abs(mean - exact[metric.name].mean) <= 5 * se, (name, metric.name, mean, exact[metric.name].mean)
