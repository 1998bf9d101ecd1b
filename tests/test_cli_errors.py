"""The CLI's one error handler (issue 26): every :class:`AnalyzerError` subclass becomes its one
``error:`` line and its exit code, a stop on a signal says what it left and exits 128 + the signal,
and any other exception is a bug that keeps its traceback (exit 1, as Typer shows it)."""
from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from analyzer.cli.app import COMMANDS, app, build
from analyzer.bench.harness import BenchmarkUnavailable
from analyzer.core.errors import AnalyzerError, RunFolderError, ScenarioError
from analyzer.core.gamedata import DataError, Placeholder
from analyzer.core.interrupt import RunInterrupted
from analyzer.core.paths import UnreadableFileError, UnsafePathError
from analyzer.core.plotspec import PlotError
from analyzer.core.scenario import ScenarioDataError
from analyzer.outputs.checkpoint import ResumeError, RunKept
from analyzer.run.backends import BackendError
from analyzer.run.runner import StrictRefused

ROOT = Path(__file__).resolve().parent.parent
LONG = "allowed: " + ", ".join(f"value_{i}" for i in range(40))      # wider than any terminal

#: (the error, its exit code, the line after "error: ")
CASES = [
    (ScenarioError("s.yaml", "params.n", "got 0; " + LONG), 2, "s.yaml: params.n: got 0; " + LONG),
    (ScenarioDataError("s.yaml", "", "data/units.yaml: hp: missing"), 2, "s.yaml: data/units.yaml: hp: missing"),
    (RunFolderError("run/summary.json", "points", "not a list"), 2, "run/summary.json: points: not a list"),
    (ResumeError("results/s/1", "another process is running it"), 2, "results/s/1: another process is running it"),
    (RunKept("results/s/1", "could not write the results (No space left on device); the 3 points are saved: free "
             "space and run `analyzer run --resume results/s/1`"), 2,
     "results/s/1: could not write the results (No space left on device); the 3 points are saved: free space and "
     "run `analyzer run --resume results/s/1`"),
    (DataError("data/units.yaml: hp: got '[bold]x'; allowed: a whole number"), 2,
     "data/units.yaml: hp: got '[bold]x'; allowed: a whole number"),
    (UnsafePathError("../x: not a relative path inside the folder"), 2, "../x: not a relative path inside the folder"),
    (UnreadableFileError("run/plotmeta.json: a FIFO, not a regular file"), 2,
     "run/plotmeta.json: a FIFO, not a regular file"),
    (PlotError("plots[0].kind: got 'pie'; allowed: heatmap, line, bars"), 2,
     "plots[0].kind: got 'pie'; allowed: heatmap, line, bars"),
    (BackendError("--scheduler tcp://h:1: no scheduler answered within 10 s"), 2,
     "--scheduler tcp://h:1: no scheduler answered within 10 s"),
    (BenchmarkUnavailable("bench dw-attack-exact: needs icepool, which is not installed"), 2,
     "bench dw-attack-exact: needs icepool, which is not installed"),
    (StrictRefused("s.yaml", [Placeholder("rules.x", "a", "not a published rule", "rule module")]), 2,
     "s.yaml: strict: strict: true refuses placeholder values: rules.x = 'a' (rule module): not a published rule "
     "(a value a worked example only bounds counts as a placeholder). Fill them with your copy of the rules or "
     "set strict: false"),
]
runner = CliRunner()


def raising(exc: BaseException) -> typer.Typer:
    """An app built like ``analyzer``'s whose command ``fake`` raises ``exc``."""
    def fake():
        """Raise the error under test."""
        raise exc

    def other():
        """Keep the app a group of commands."""
    return build({"fake": fake, "other": other})


def _subclasses(cls: type) -> set[type]:
    return {c for sub in cls.__subclasses__() for c in {sub} | _subclasses(sub)}


def test_every_error_class_of_the_stack_is_covered():
    """A new AnalyzerError in core, run, outputs or bench must be added to CASES (games may add their own)."""
    stack = {c for c in _subclasses(AnalyzerError) - {RunInterrupted}
             if c.__module__.startswith("analyzer.") and not c.__module__.startswith("analyzer.games.")}
    assert stack == {type(e) for e, _, _ in CASES}


@pytest.mark.parametrize("exc, code, line", CASES, ids=[type(e).__name__ for e, _, _ in CASES])
def test_an_analyzer_error_is_one_line_and_its_exit_code(exc, code, line):
    assert exc.exit_code == code
    res = runner.invoke(raising(exc), ["fake"])
    assert res.exit_code == code, (res.stderr, res.exception)
    assert res.stderr.splitlines() == [f"error: {line}"]      # one line, markup printed as written
    assert res.stdout == ""


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_stop_says_what_it_left_and_exits_128_plus_the_signal(signum, code):
    exc = RunInterrupted(signum)
    assert exc.exit_code == code
    res = runner.invoke(raising(exc), ["fake"])
    assert res.exit_code == code, (res.stderr, res.exception)
    assert res.stderr.splitlines() == [f"interrupted by {signal.Signals(signum).name}: fake stopped; nothing was "
                                       "written"]


def test_a_stop_during_a_run_names_the_folder_to_resume():
    from analyzer.cli.run import _stopped
    e = RunInterrupted(signal.SIGINT)
    done = [{"run_dir": "results/a/1"}]
    assert _stopped(e, "b", done) == ("stopped between kernel calls; nothing of b was written (scenarios completed "
                                      "before it: results/a/1)")
    e.run_dir = Path("results/b/2")
    assert _stopped(e, "b", []) == ("stopped between kernel calls; b saved, incomplete, in results/b/2; continue it "
                                    "with: analyzer run --resume results/b/2 (scenarios completed before it: none)")
    e.completed = True
    assert _stopped(e, "b", done) == ("arrived while b's outputs were written; they were completed first: the run "
                                      "is complete in results/b/2; no later scenario was run (completed before it: "
                                      "results/a/1)")


def test_an_unexpected_exception_is_not_swallowed():
    res = runner.invoke(raising(RuntimeError("boom")), ["fake"])
    assert res.exit_code == 1 and isinstance(res.exception, RuntimeError), (res.exit_code, res.exception)
    assert "error:" not in res.stderr


def test_an_unexpected_exception_in_a_real_command_prints_its_traceback():
    code = ("import sys, analyzer.outputs.catalog_cache as cache\n"
            "def boom(game=None):\n    raise RuntimeError('boom in list')\n"
            "cache.cached_catalog = boom\n"
            "from analyzer.cli.app import main\nsys.argv = ['analyzer', 'list']\nmain()\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert res.returncode == 1, res.stderr
    assert "Traceback" in res.stderr and "RuntimeError: boom in list" in res.stderr, res.stderr
    assert "error:" not in res.stderr


def test_every_command_runs_inside_the_handler():
    from analyzer.cli.common import Group
    registered = {c.name: c.callback for c in app.registered_commands}
    groups = {g.name: g.typer_instance for g in app.registered_groups}
    assert list(registered) == [n for n, c in COMMANDS.items() if not isinstance(c, Group)]
    assert list(groups) == [n for n, c in COMMANDS.items() if isinstance(c, Group)]
    for name, callback in registered.items():
        assert callback.__wrapped__ is COMMANDS[name], name
    for name, sub in groups.items():       # a command family (analyzer data check): each of its commands too
        commands = {c.name: c.callback for c in sub.registered_commands}
        assert list(commands) == list(COMMANDS[name].commands), name
        for sub_name, callback in commands.items():
            assert callback.__wrapped__ is COMMANDS[name].commands[sub_name], (name, sub_name)
