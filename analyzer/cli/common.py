"""What the commands of ``analyzer`` share: the console, the one error handler (:func:`reported`),
loading and the checks made before computing, the progress bar, ``--threads`` and the options several
commands declare alike. Light: numba, pandas and matplotlib are imported when a command runs
(``analyzer --help`` and ``validate`` never pay for them)."""
from __future__ import annotations

import importlib
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, List, NoReturn, Optional, Union

import typer
from rich.console import Console
from rich.markup import escape

from analyzer.core.errors import EXIT_USAGE, AnalyzerError
from analyzer.core.interrupt import RunInterrupted
from analyzer.core.paths import UnsafePathError
from analyzer.core.plotspec import check_scenario_plots


class Lazy:
    """A module imported on first use: ``analyzer --help`` and ``validate`` should not pay for
    numba, pandas and matplotlib (imported by the API, the runner and the plots)."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str):
        return getattr(importlib.import_module(self._name), attr)


api = Lazy("analyzer.api")
scenario_mod = Lazy("analyzer.core.scenario")
runner = Lazy("analyzer.run.runner")

#: the answer (tables, notes, the folder written) on stdout, so ``analyzer run x | less`` shows it; progress,
#: warnings and errors on stderr
out = Console()
err = Console(stderr=True)


class Group:
    """A command family in the app's command table (``analyzer data check``): its help line and its
    commands (name -> function), each run inside :func:`reported` like a top-level command."""

    def __init__(self, help: str, commands: dict):
        self.help, self.commands = help, commands

#: Options declared alike by several commands (Typer copies a definition for each command using it).
THREADS = typer.Option(None, help="Worker threads (results do not depend on it).")
SVG = typer.Option(False, help="Also write SVG plots.")
RUNS_OUT = typer.Option(Path("results"), help="Root folder for run outputs.")
ROWS = typer.Option(40, "--rows", min=0, help="Show at most this many sweep points in the console "
                   "summary (0: all); every point is in answers.parquet and report.html.")


def stats():
    """:mod:`analyzer.core.stats`, imported when a command prints a CI (it imports numpy, which
    ``analyzer --help`` and ``list`` never need)."""
    from analyzer.core import stats as module
    return module


def plain(text: object) -> str:
    """``text`` safe to print with rich: one line, control and format characters (ESC of a
    terminal escape or an OSC-8 link, a bidi override, NUL, a lone surrogate) shown as ``\\x1b``
    / ``\\u202e`` (line breaks and tabs as spaces), then rich markup escaped (``[link=...]`` is
    printed, not obeyed). For every string that comes from a file: a cached catalog, a run
    folder, an error message quoting a value."""
    import unicodedata
    out = []
    for ch in str(text):
        if ch in "\n\r\t":
            out.append(" ")
        elif unicodedata.category(ch)[0] == "C":
            out.append(f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return escape("".join(out))


def fail(message: str, exit_code: int = EXIT_USAGE) -> NoReturn:
    """Print ``error: message`` in one line on stderr and exit with ``exit_code``."""
    # the message may quote a value from a file ("got '[/x]'"): printed as it is, never as markup
    err.print(f"[bold red]error:[/] {plain(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(exit_code)


@contextmanager
def reported(stopped: Union[str, Callable[[RunInterrupted], str]]) -> Iterator[None]:
    """The one error handler of the commands (a context manager, or a decorator: ``app.py`` wraps
    every command in it). An :class:`~analyzer.core.errors.AnalyzerError` raised inside becomes
    ``error: <its one line>`` and its ``exit_code``; a stop on a signal
    (:class:`~analyzer.core.interrupt.RunInterrupted`, exit 128 + the signal) says what the stop
    left: ``stopped``, or ``stopped(e)`` (the folder to resume, what was completed). Any other
    exception is a bug: it passes, with its traceback."""
    try:
        yield
    except RunInterrupted as e:
        what = stopped(e) if callable(stopped) else stopped
        err.print(f"[bold red]{plain(e)}[/]: {plain(what)}", highlight=False, soft_wrap=True)
        raise typer.Exit(e.exit_code)
    except AnalyzerError as e:
        fail(str(e), e.exit_code)


def load_all(targets: List[str], **overrides) -> list:
    files = scenario_mod.expand_targets(targets)
    if not files:
        fail(f"no scenario files found in {' '.join(targets)}")
    return [scenario_mod.load(f, **overrides) for f in files]


def check_points(sc) -> None:
    """Every point of ``sc`` compiles and its ``plots:`` entries can be drawn (what ``validate``
    checks, and ``run`` before computing)."""
    for p in sc.points:
        prepared = runner.prepare_point(sc, p)
        if p.index == 0:
            check_scenario_plots(sc, prepared)


def preflight(loaded: list, out: Path, option: str = "--out") -> None:
    """Everything that can fail before computing, checked before the first trial of the first
    scenario: every point of every scenario compiles, its ``plots:`` entries can be drawn,
    and ``--out`` (or ``--resume``'s folder: ``option``) can hold the outputs (:func:`check_out`)."""
    for sc in loaded:
        check_points(sc)
    check_out(out, option)


def check_out(out: Path, option: str = "--out") -> None:
    """``out`` can hold what the command writes (:func:`analyzer.core.paths.check_output_root`:
    a writable folder, a UTF-8 name, short enough for the deepest file): checked before
    computing by every command that writes a folder (run, exact, compare, sensitivity, matchup,
    solve), so an unusable ``--out`` never costs the results."""
    from analyzer.core.paths import check_output_root, printable
    try:
        check_output_root(out)
    except (OSError, UnsafePathError) as e:
        fail(escape(f"{option} {printable(out)}: {e}"))


def set_threads(threads: Optional[int]) -> int:
    """``--threads`` applied (the worker threads used), refused in one line when out of range."""
    try:
        return api.set_threads(threads)
    except ValueError as e:
        fail(str(e))


def progress_factory(enabled: bool, unit: str = "trials"):
    """A progress display on stderr counting ``unit`` and a factory of per-task advance functions
    (None, None when not ``enabled``)."""
    if not enabled:
        return None, None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn  # ~8 ms: only for runs
    progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn(unit), TimeRemainingColumn(), console=err, transient=False)

    def factory(name: str, total: int):
        task = progress.add_task(name, total=total)
        return lambda n: progress.advance(task, n)
    return progress, factory
