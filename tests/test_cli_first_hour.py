"""Issue 31 (CLI, first hour): `--version`, `-h`, `python -m analyzer` and `run --no-write`.

Each used to fail: `analyzer --version` and `analyzer -h` were "No such option", `python -m
analyzer` was "'analyzer' is a package and cannot be directly executed", and `run` had no
`--no-write` (only `exact` did), so a quick look at a question always left a run folder."""
import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

from typer.testing import CliRunner

from analyzer.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
QUICK = ROOT / "scenarios" / "dice" / "any_of_n.yaml"
runner = CliRunner()


def test_version_prints_the_installed_distribution_version():
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == f"analyzer {version('wargame-analyzer')}"


def test_short_help_equals_long_help_on_the_app_and_a_command():
    for args in ([], ["run"], ["bench"]):
        short, long_ = runner.invoke(app, [*args, "-h"]), runner.invoke(app, [*args, "--help"])
        assert short.exit_code == 0 and long_.exit_code == 0, (args, short.output)
        assert short.stdout == long_.stdout, args


def test_python_dash_m_analyzer_is_the_same_command_line():
    res = subprocess.run([sys.executable, "-m", "analyzer", "--version"], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == f"analyzer {version('wargame-analyzer')}"


def test_run_no_write_prints_the_summary_of_a_written_run_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    unwritten = runner.invoke(app, ["run", str(QUICK), "--trials", "4000", "--no-write", "--json", "--no-progress"])
    assert unwritten.exit_code == 0, unwritten.output
    assert list(tmp_path.iterdir()) == [], "run --no-write wrote something"
    written = runner.invoke(app, ["run", str(QUICK), "--trials", "4000", "--json", "--no-progress",
                                  "--out", str(tmp_path / "out")])
    assert written.exit_code == 0, written.output
    a, b = json.loads(unwritten.stdout), json.loads(written.stdout)
    assert "run_dir" not in a and a["points"] == b["points"]      # same seed: the same answer


def test_resume_refuses_no_write(tmp_path):
    res = runner.invoke(app, ["run", "--resume", str(tmp_path), "--no-write"])
    assert res.exit_code == 2 and "--no-write" in res.output, res.output


#: the CLI with icepool (a test extra, not a runtime dependency) hidden, as in a plain install
WITHOUT_ICEPOOL = "\n".join([
    "import importlib.util, sys",
    "_find = importlib.util.find_spec",
    "importlib.util.find_spec = lambda name, *a: None if name.split('.')[0] == 'icepool' else _find(name, *a)",
    "class _Hide:",
    "    def find_spec(self, name, path=None, target=None):",
    "        if name.split('.')[0] == 'icepool':",
    "            raise ModuleNotFoundError(name)",
    "sys.meta_path.insert(0, _Hide())",
    "from analyzer.cli.app import main",
    "main()"])


def test_a_benchmark_that_needs_icepool_says_so_in_one_line_when_it_is_absent():
    """Used to: `analyzer bench dw-attack-exact` without icepool died with a 49-line traceback."""
    res = subprocess.run([sys.executable, "-c", WITHOUT_ICEPOOL, "bench", "dw-attack-exact"], capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr and "needs icepool" in res.stderr, res.stderr


def test_the_suite_skips_a_benchmark_whose_module_is_absent(monkeypatch, capsys):
    from analyzer.bench import harness, suite
    harness.load_benchmarks()
    fake = harness.Benchmark("needs-absent", lambda console, trials: {"rows": []}, requires=("no_such_module_x",))
    # the whole suite is long: a registry of the fake one alone, run unnamed through the same loop
    monkeypatch.setattr(harness, "PROCESS_SCENARIOS", None)
    monkeypatch.setattr(harness, "BENCHMARKS", {"needs-absent": fake})
    monkeypatch.setattr(harness, "load_benchmarks", lambda: None)
    rows = suite.run_suite(None, smoke=True)
    assert rows == [] and "--- needs-absent: skipped (needs no_such_module_x, not installed)" in capsys.readouterr().out


def test_compile_time_is_kept_out_of_a_points_seconds(monkeypatch):
    """Used to: the first kernel call of a run (numba compiling, 17-57 s on a first run) was
    inside the point's timing, so trials_per_second counted the compile. The kernels are now
    loaded by a thrown-away one-trial call first. The run's clock is a fake that moves only when
    the first kernel call "compiles" (1000 s): the points' seconds must not contain it, and the
    answer is the one an unwarmed run gives."""
    import types

    from analyzer import api
    from analyzer.core import scenario as scenario_mod
    from analyzer.core.questions import Prepared

    sc = scenario_mod.load(QUICK, trials=2000)
    plain = api.run(sc)
    clock = [0.0]
    monkeypatch.setattr(api, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))
    calls = []
    real = Prepared.run_kernel

    def first_call_compiles(self, *args):
        if not calls:
            clock[0] += 1000.0
        calls.append(args)
        return real(self, *args)

    monkeypatch.setattr(Prepared, "run_kernel", first_call_compiles)
    results = api.run(sc, notify=[].append)
    assert calls[0] == (0, 0, 0, 1, 1, 1)                      # the one-trial warm-up call comes first
    assert [r.seconds for r in results] == [0.0] * len(results)
    assert [r.summaries for r in results] == [r.summaries for r in plain]


def _run_it(output: str) -> str:
    """The 'run it: ...' suggestion of init, whitespace removed (the console wraps it anywhere)."""
    flat = "".join(output.split())
    return flat[flat.index("runit:"):].split("otherexamples:")[0]


def test_examples_lists_every_shipped_scenario_and_init_copies_the_one_named(tmp_path):
    """Used to: there was no way to see the shipped examples, and `init GAME QUESTION` always
    copied the alphabetically first one; `init b17` told the user to run gun_arcs.yaml, a data file."""
    res = runner.invoke(app, ["examples", "b17", "--json"])
    assert res.exit_code == 0, res.output
    listed = {r["example"] for r in json.loads(res.stdout)}
    shipped = {p.stem for p in (ROOT / "scenarios" / "b17").glob("*.yaml") if "question" in p.read_text()}
    assert listed == shipped and "gun_arcs" not in listed
    res = runner.invoke(app, ["init", "b17", "--example", "gun_matrix_skills", str(tmp_path / "copy")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "copy" / "gun_matrix_skills.yaml").is_file()
    run_line = _run_it(res.output)
    assert run_line.endswith("/copy/gun_matrix_skills.yaml") and "gun_arcs" not in run_line, run_line
    res = runner.invoke(app, ["init", "b17", str(tmp_path / "all")])
    run_line = _run_it(res.output)
    assert "gun_arcs" not in run_line and "gun_shot_skill15.yaml" in run_line, run_line
    res = runner.invoke(app, ["init", "b17", "--example", "gun_matrx", str(tmp_path / "typo")])
    assert res.exit_code == 2 and "did you mean 'gun_matrix_skills'" in res.output, res.output
    assert not (tmp_path / "typo").exists()


def test_the_summary_names_the_primary_metric_so_a_narrow_console_shows_it_first():
    """Used to: summary.json had no primary_metric, so the console's "primary metric first"
    never applied: at 80 columns a question whose answer is not its first metric hid it (B-17
    gun_matrix: the kill probability cell fell off behind the per-position means)."""
    from analyzer import api
    from analyzer.cli.summary import _summary_table
    from analyzer.core import scenario as scenario_mod
    from analyzer.outputs.writer import summary_dict

    sc = scenario_mod.load(ROOT / "scenarios" / "b17" / "gun_matrix_skills.yaml")
    summary = summary_dict(sc, api.exact(sc), "exact")
    primary = sc.question.primary_metric
    assert summary["primary_metric"] == primary
    names = list(summary["points"][0]["metrics"])
    assert names.index(primary) > 0                    # not first: the order alone would not show it
    table, _ = _summary_table(summary, 80)
    headers = [c.header for c in table.columns]
    assert any(h.split()[0] == primary for h in headers), headers


def test_sensitivity_has_json_seed_threads_and_counts_variants(tmp_path):
    """Used to: `sensitivity` had no --json, --seed, --threads or --no-progress, and its
    progress bar counted the variants as "trials"."""
    scen = str(ROOT / "scenarios" / "dystopian_wars" / "attack_ad10.yaml")
    res = runner.invoke(app, ["sensitivity", scen, "--trials", "2000", "--out", str(tmp_path), "--json",
                              "--seed", "5", "--threads", "1"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    written = json.loads((Path(doc.pop("folder")) / "sensitivity.json").read_text())
    written.pop("format_version", None)
    assert doc == written and doc["variants"]
    again = json.loads(runner.invoke(app, ["sensitivity", scen, "--trials", "2000", "--out", str(tmp_path),
                                           "--json", "--seed", "5"]).stdout)
    other = json.loads(runner.invoke(app, ["sensitivity", scen, "--trials", "2000", "--out", str(tmp_path),
                                           "--json", "--seed", "6"]).stdout)
    assert again["variants"] == doc["variants"] and other["base_mean"] != doc["base_mean"]
    shown = runner.invoke(app, ["sensitivity", scen, "--trials", "2000", "--out", str(tmp_path)])
    assert "variants" in shown.output and "trials 0:" not in shown.output


def test_the_answer_goes_to_stdout_and_diagnostics_to_stderr(tmp_path):
    """``analyzer run x | less`` showed nothing: the table, the notes and the folder written were all
    on stderr. Now they are on stdout (run, exact, compare, sensitivity, matchup, solve); progress,
    warnings and the placeholder list stay on stderr."""
    import yaml
    env = {"COLUMNS": "100", "PATH": "/usr/bin:/bin"}
    solve = ROOT / "scenarios" / "b17" / "solve_tail_gunner_skill.yaml"
    matchup = tmp_path / "matchup.yaml"        # the b17 gun_shot question, three crews (exact mode: seconds)
    matchup.write_text(yaml.safe_dump({
        "game": "b17", "question": "gun_shot", "seed": 3, "trials": 640,
        "params": yaml.safe_load(solve.read_text())["params"],
        "contenders": [{"name": f"skill_{k}", "params": {"skill": k}} for k in (12, 15, 18)],
        "matchup": {"metric": "p_destroyed"}}, sort_keys=False))
    for args in (["run", str(QUICK), "--trials", "2000", "--no-progress"], ["exact", str(QUICK)],
                 ["compare", str(QUICK), str(QUICK)],
                 ["sensitivity", str(ROOT / "scenarios" / "dystopian_wars" / "attack_ad10.yaml"), "--trials", "2000",
                  "--no-progress"],
                 ["matchup", str(matchup), "--no-progress", "--bootstrap", "20"],
                 ["solve", str(solve), "--no-progress"]):
        res = subprocess.run([sys.executable, "-m", "analyzer", *args, "--out", str(tmp_path)], capture_output=True,
                             text=True, timeout=300, env=env)
        assert res.returncode == 0, res.stderr
        assert "│" in res.stdout and "wrote" in res.stdout, (args, res.stdout)
        assert "│" not in res.stderr and "wrote" not in res.stderr, (args, res.stderr)
    # matchup and solve folders follow the scenario FILE (the scenario's name: is another), with 'latest'
    for folder in ("matchup-matchup", "solve_tail_gunner_skill-solve"):
        assert (tmp_path / folder / "latest" / "report.html").is_file(), sorted(p.name for p in tmp_path.iterdir())


def test_a_big_sweep_prints_a_compact_table_and_the_reports_path(tmp_path):
    """The demo printed a 510-row table: ``--rows N`` (default 40) shows the first N sweep points, says
    how many are left out and where they are, and the summary ends with the report's path."""
    grid = ROOT / "scenarios" / "dystopian_wars" / "attack_ad_grid.yaml"
    res = runner.invoke(app, ["exact", str(grid), "--rows", "15", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.stderr
    rows = [ln for ln in res.stdout.splitlines() if ln.startswith("│")]
    assert len(rows) == 15, res.stdout
    assert "495 more sweep point(s) not shown" in res.stdout
    report = next(ln for ln in res.stdout.splitlines() if ln.strip().startswith("report:")).split("report:", 1)[1]
    assert Path(report.strip()).is_file() and Path(report.strip()).name == "report.html"
    everything = runner.invoke(app, ["exact", str(grid), "--rows", "0", "--no-write"])
    assert len([ln for ln in everything.stdout.splitlines() if ln.startswith("│")]) == 510
