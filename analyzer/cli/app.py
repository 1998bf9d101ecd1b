"""``analyzer``: the command line. Thin: load, validate, call the library, write."""
from __future__ import annotations

from contextlib import closing
import json
import re
import time
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from analyzer.core.errors import ScenarioError
from analyzer.core.paths import UnsafePathError
from analyzer.core.gamedata import DataError

app = typer.Typer(add_completion=False, no_args_is_help=True, help=(
    "Monte-Carlo balance analyzer for tabletop wargames.\n\n"
    "Describe a question in a scenario YAML file (game, question, params, optional sweep), "
    "then run it, compute its exact answer, or compare two scenarios. Outputs go to "
    "results/<scenario>/<run-id>/: points.parquet, distributions.parquet, summary.json, "
    "manifest.json and PNG plots."))

class _Lazy:
    """A module imported on first use: ``analyzer --help`` and ``validate`` should not pay for
    numba, pandas and matplotlib (imported by the API, the runner and the plots)."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str):
        import importlib
        return getattr(importlib.import_module(self._name), attr)


api = _Lazy("analyzer.api")
questions = _Lazy("analyzer.core.questions")
scenario_mod = _Lazy("analyzer.core.scenario")
runner = _Lazy("analyzer.run.runner")
plotspec = _Lazy("analyzer.core.plotspec")
interrupt = _Lazy("analyzer.core.interrupt")

err = Console(stderr=True)
EXIT_USAGE = 2


def _stats():
    """:mod:`analyzer.core.stats`, imported when a command prints a CI (it imports numpy, which
    ``analyzer --help`` and ``list`` never need)."""
    from analyzer.core import stats
    return stats


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


def _fail(message: str) -> None:
    # the message may quote a value from a file ("got '[/x]'"): printed as it is, never as markup
    err.print(f"[bold red]error:[/] {plain(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(EXIT_USAGE)


def _load_all(targets: List[str], **overrides) -> list:
    files = scenario_mod.expand_targets(targets)
    if not files:
        _fail(f"no scenario files found in {' '.join(targets)}")
    loaded = []
    for f in files:
        try:
            loaded.append(scenario_mod.load(f, **overrides))
        except (ScenarioError, DataError) as e:
            _fail(str(e))
    return loaded


def _preflight(loaded: list, out: Path, option: str = "--out") -> None:
    """Everything that can fail before computing, checked before the first trial of the first
    scenario: every point of every scenario compiles, its ``plots:`` entries can be drawn,
    and ``--out`` (or ``--resume``'s folder: ``option``) can hold the outputs (:func:`_check_out`)."""
    for sc in loaded:
        try:
            for p in sc.points:
                prepared = runner.prepare_point(sc, p)
                if p.index == 0:
                    plotspec.check_scenario_plots(sc, prepared)
        except (ScenarioError, DataError) as e:
            _fail(str(e))
    _check_out(out, option)


def _check_out(out: Path, option: str = "--out") -> None:
    """``out`` can hold what the command writes (:func:`analyzer.core.paths.check_output_root`:
    a writable folder, a UTF-8 name, short enough for the deepest file): checked before
    computing by every command that writes a folder (run, exact, compare, sensitivity), so an
    unusable ``--out`` never costs the results."""
    from analyzer.core.paths import check_output_root, printable
    try:
        check_output_root(out)
    except (OSError, UnsafePathError) as e:
        _fail(escape(f"{option} {printable(out)}: {e}"))


def _progress_factory(enabled: bool):
    if not enabled:
        return None, None
    progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("trials"), TimeRemainingColumn(), console=err, transient=False)

    def factory(name: str, total: int):
        task = progress.add_task(name, total=total)
        return lambda n: progress.advance(task, n)
    return progress, factory


def natural_key(text: str) -> list:
    """Sort key reading digit runs as numbers ("6 dice" before "10 dice")."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def _fmt(s: dict) -> str:
    """``mean ± se [CI]``; the bare value when the interval has no width (an exact answer); a
    dash for the CI of a single trial (NaN bounds: one trial gives no interval)."""
    if s["ci_low"] is None or s["ci_low"] != s["ci_low"]:   # NaN (null in JSON): no CI at n = 1
        return f"{s['mean']:.6g} ± —  [—: one trial gives no CI]"
    if s["ci_low"] == s["ci_high"]:
        return f"{s['mean']:.6g}"
    return f"{s['mean']:.4g} ± {s['se']:.2g}  [{s['ci_low']:.4g}, {s['ci_high']:.4g}]"


def _cell(s: dict, mc: bool) -> str:
    """One compact cell: ``mean±se`` (Monte Carlo), ``mean±—`` for one trial, ``mean [low,
    high]`` when every trial agreed (se 0, the CI still has width), or the exact value."""
    if not mc:
        return f"{s['mean']:.4g}"
    if s["se"] is None or s["se"] != s["se"] or s["ci_low"] is None:
        return f"{s['mean']:.4g}±—"
    if s["ci_low"] == s["ci_high"]:
        return f"{s['mean']:.4g}"
    if s["se"] == 0:
        return f"{s['mean']:.4g} [{s['ci_low']:.3g}, {s['ci_high']:.3g}]"
    return f"{s['mean']:.4g}±{s['se']:.2g}"


def _table_width(columns: list[list[str]]) -> int:
    """Width rich needs for these columns (header + cells) without wrapping any cell."""
    return 1 + sum(max(len(c) for c in col) + 3 for col in columns)


def _summary_table(summary: dict, width: int) -> tuple[Table, str]:
    """The summary as a table no wider than ``width`` (so no cell wraps): one metric per
    row for a single point; otherwise one row per point with as many metric columns as fit
    (the primary first), or, when even one does not fit, one row per (point, metric).
    Returns the table and what was left out ("" when nothing)."""
    points = summary["points"]
    mc = summary["mode"] == "monte_carlo"
    title = f"{summary['scenario']} ({summary['game']}/{summary['question']}, {summary['mode']})"
    table = Table(title=title, title_justify="left")
    names = list(points[0]["metrics"])
    if len(points) == 1:
        pt = points[0]
        full = [_fmt(pt["metrics"][n]) for n in names]
        use_full = _table_width([["metric"] + names, ["mean ± se  [95% CI]"] + full]) <= width
        table.add_column("metric")
        table.add_column(("mean ± se  [95% CI]" if use_full else "mean±se") if mc else "exact")
        for name, text in zip(names, full):
            table.add_row(name, text if use_full else _cell(pt["metrics"][name], mc))
        return table, "" if use_full or not mc else "95% CIs in summary.json / points.parquet"
    swept = list(points[0]["swept"])
    swept_cols = [[c] + [str(pt["swept"][c]) for pt in points] for c in swept]
    metric_cols = {n: [n + (" ±se" if mc else "")] + [_cell(pt["metrics"][n], mc) for pt in points] for n in names}
    primary = summary.get("primary_metric")
    order = ([primary] if primary in metric_cols else []) + [n for n in names if n != primary]
    shown: list[str] = []
    for name in order:
        if _table_width(swept_cols + [metric_cols[n] for n in shown + [name]]) <= width:
            shown.append(name)
    if shown:
        shown = [n for n in names if n in shown]        # the question's own metric order
        for col in swept:
            table.add_column(col)
        for name in shown:
            table.add_column(metric_cols[name][0], justify="right")
        for i, pt in enumerate(points):
            table.add_row(*[str(pt["swept"][c]) for c in swept], *[metric_cols[n][i + 1] for n in shown])
        hidden = len(names) - len(shown)
        return table, f"{hidden} more metric(s) in summary.json / points.parquet (a wider terminal shows more)" \
            if hidden else ""
    table.add_column("point")
    table.add_column("metric")
    table.add_column("mean±se" if mc else "exact", justify="right")
    for pt in points:
        label = ", ".join(f"{c}={pt['swept'][c]}" for c in swept)
        for n in names:
            table.add_row(label, n, _cell(pt["metrics"][n], mc))
            label = ""
    return table, ""


def _print_summary(summary: dict, run_dir: Optional[Path]) -> None:
    points = summary["points"]
    table, left_out = _summary_table(summary, err.width)
    trials = points[0]["trials"]
    caption = f"{trials:,} trials per point" if trials else "exact"
    if summary["placeholders"]:
        caption += f" · {len(summary['placeholders'])} PLACEHOLDER value(s) used (not in the rule source)"
    table.caption = caption
    err.print(table)
    if left_out:
        err.print(f"  ({left_out})", highlight=False)
    notes = sorted({n for pt in points for n in pt.get("notes", [])}, key=natural_key)
    for note in notes:
        err.print(f"  note: {note}", highlight=False, markup=False)
    _print_provenance(summary["placeholders"], summary.get("example_values", []))
    if run_dir is not None:      # --out is the user's text: "[/]" in it raised MarkupError after the run
        err.print(f"[green]wrote[/] {escape(str(run_dir))}")


SHOWN_VALUES = 12
_ESTABLISHES = {"exact": "fixed by the example", "at_most": "the example only shows it is at most this",
                "at_least": "the example only shows it is at least this"}


def _print_provenance(placeholders: list[dict], examples: list[dict], where: str = "summary.json") -> None:
    """The placeholders and example-derived values a run used (the first few of each)."""
    if placeholders:
        err.print(f"[yellow]{len(placeholders)} placeholder(s) used (values the rule sources do not give; "
                  f"replace them with your copy of the game):[/]")
        for ph in placeholders[:SHOWN_VALUES]:
            note = f" — {ph['note']}" if ph.get("note") else ""
            err.print(f"  {ph['path']} = {ph['value']!r}{note}", highlight=False, markup=False)
        if len(placeholders) > SHOWN_VALUES:
            err.print(f"  ... and {len(placeholders) - SHOWN_VALUES} more ({where})")
    if examples:
        err.print(f"[yellow]{len(examples)} value(s) derived from worked examples of the source:[/]")
        for ex in examples[:SHOWN_VALUES]:
            what = _ESTABLISHES.get(ex.get("establishes", "exact"), "")
            err.print(f"  {ex['path']} = {ex['value']!r} ({what})", highlight=False, markup=False)
        if len(examples) > SHOWN_VALUES:
            err.print(f"  ... and {len(examples) - SHOWN_VALUES} more ({where})")


@app.command()
def run(
    targets: Optional[List[str]] = typer.Argument(None, help="Scenario files, folders (every scenario below) "
                                                 "or globs."),
    trials: Optional[int] = typer.Option(None, "--trials", "-n", help="Trials per sweep point (overrides the file)."),
    precision: Optional[float] = typer.Option(None, help="Run until the 95% CI half-width of the primary "
                                              "metric (or precision_metric) is below this, up to max_trials."),
    seed: Optional[int] = typer.Option(None, help="Random seed (overrides the file; default fixed and recorded)."),
    threads: Optional[int] = typer.Option(None, help="Worker threads (results do not depend on it)."),
    out: Path = typer.Option(Path("results"), help="Root folder for run outputs."),
    json_out: bool = typer.Option(False, "--json", help="Print summary.json to stdout and nothing else on stdout."),
    svg: bool = typer.Option(False, help="Also write SVG plots."),
    force: bool = typer.Option(False, help="Allow more than 10^10 trials per point."),
    no_progress: bool = typer.Option(False, help="Hide progress bars."),
    resume: Optional[Path] = typer.Option(None, "--resume", metavar="RUN_DIR",
                                          help="Continue an interrupted run in its folder (same scenario, seed "
                                          "and trials; gives the tables an uninterrupted run gives)."),
    backend_name: str = typer.Option("local", "--backend", metavar="local|dask",
                                     help="Where the trials run: 'local' (this process, numba threads) or 'dask' "
                                     "(tasks on a distributed cluster: an in-process one, or --scheduler's). "
                                     "Results are identical for the same seed."),
    scheduler: Optional[str] = typer.Option(None, metavar="tcp://HOST:PORT",
                                            help="With --backend dask: a running scheduler ('dask scheduler'; "
                                            "workers started with 'dask worker tcp://HOST:PORT')."),
    workers: Optional[int] = typer.Option(None, min=1, help="With --backend dask and no --scheduler: worker "
                                          "processes of the in-process cluster (default 2)."),
):
    """Monte-Carlo every sweep point of each scenario and write a run folder per scenario.

    The run folder exists from the start, marked incomplete in manifest.json, and keeps each
    point's progress; after Ctrl-C, SIGTERM or a crash, 'analyzer run --resume RUN_DIR' continues it."""
    try:
        used_threads = api.set_threads(threads)
        from analyzer.run.backends import make_backend
        backend = make_backend(backend_name, scheduler=scheduler, workers=workers)
    except ValueError as e:
        _fail(str(e))
    if resume is not None:
        given = [name for name, v in (("a scenario", targets), ("--trials", trials), ("--precision", precision),
                                      ("--seed", seed), ("--force", force or None),
                                      ("--out", out if out != Path("results") else None)) if v]
        if given:
            _fail(f"--resume continues RUN_DIR with the scenario, seed and trials it started with, in place; "
                  f"drop {', '.join(given)}")
        from analyzer.outputs import checkpoint
        try:
            loaded = [checkpoint.load_scenario(resume)]
        except (ScenarioError, DataError) as e:
            _fail(str(e))
        _preflight(loaded, resume, "--resume")
    else:
        if not targets:
            _fail("give scenario files, folders or globs to run, or --resume RUN_DIR")
        loaded = _load_all(targets, trials=trials, precision=precision, seed=seed, force=force)
        _preflight(loaded, out)
    progress, factory = _progress_factory(not no_progress and not json_out)
    summaries = []
    formats = ("png", "svg") if svg else ("png",)
    with interrupt.handling(), closing(backend):  # Ctrl-C / SIGTERM: stop between kernel calls, never mid-write
        if backend.name == "dask":
            from analyzer.run.backends import BackendError
            try:
                backend.start()
                interrupt.check()
            except interrupt.RunInterrupted as e:
                err.print(f"[bold red]{e}[/]: stopped while the cluster started; nothing was written",
                          highlight=False)
                raise typer.Exit(e.exit_code)
            except BackendError as e:     # no scheduler answers at --scheduler, or it has no workers
                _fail(str(e))
            except OSError as e:          # a cluster that cannot start
                _fail(f"--backend dask: cannot reach the cluster ({scheduler or 'in-process'}): {e}")
        from analyzer.outputs.checkpoint import RunKept
        for sc in loaded:
            try:
                if progress:
                    with progress:
                        run_dir, summary = api.run_to_folder(sc, out, threads=used_threads, formats=formats,
                                                             progress=factory, resume=resume, backend=backend)
                else:
                    run_dir, summary = api.run_to_folder(sc, out, threads=used_threads, formats=formats,
                                                         resume=resume, backend=backend)
            except interrupt.RunInterrupted as e:
                done = ", ".join(s["run_dir"] for s in summaries) or "none"
                if getattr(e, "completed", False):      # the signal came while the outputs were written
                    err.print(f"[bold red]{e}[/]: arrived while {escape(sc.name)}'s outputs were written; they "
                              f"were completed first: the run is complete in {escape(str(e.run_dir))}; "
                              f"no later scenario was run (completed before it: {escape(done)})",
                              highlight=False, soft_wrap=True)
                    raise typer.Exit(e.exit_code)
                where = (f"{sc.name} saved, incomplete, in {e.run_dir}; continue it with: "
                         f"analyzer run --resume {e.run_dir}") if e.run_dir else f"nothing of {sc.name} was written"
                err.print(f"[bold red]{e}[/]: stopped between kernel calls; {escape(where)} "
                          f"(scenarios completed before it: {escape(done)})", highlight=False, soft_wrap=True)
                raise typer.Exit(e.exit_code)
            except RunKept as e:          # failed after saving points: the folder is kept, resumable
                _fail(escape(str(e)))
            except (ScenarioError, DataError, UnsafePathError) as e:
                _fail(str(e))
            summary["run_dir"] = str(run_dir)
            summaries.append(summary)
            if not json_out:
                _print_summary(summary, run_dir)
    if json_out:
        typer.echo(json.dumps(summaries[0] if len(summaries) == 1 else summaries, indent=2))


@app.command()
def exact(
    target: Path = typer.Argument(..., help="A scenario file."),
    out: Path = typer.Option(Path("results"), help="Root folder for run outputs."),
    json_out: bool = typer.Option(False, "--json", help="Print the summary JSON to stdout only."),
    write: bool = typer.Option(True, help="Write a run folder (tables and plots) as 'run' does."),
):
    """Exact answer where the question supports it (same summary as 'run', se = 0).

    Exits with code 2 and a message where the question has no exact mode."""
    sc = _load_all([str(target)], trials_guard=False)[0]    # exact runs no trials: no trial guard
    if write:
        _check_out(out)                  # before computing: an unusable --out must not cost the answer
    t0 = time.perf_counter()
    try:
        results = api.exact(sc)
    except ScenarioError as e:
        _fail(str(e))
    run_dir = None
    if write:
        try:
            run_dir, summary = api.write_run(sc, results, out, mode="exact", threads=1,
                                             wall_seconds=time.perf_counter() - t0)
        except UnsafePathError as e:
            _fail(str(e))
        summary["run_dir"] = str(run_dir)
    else:
        from analyzer.outputs import writer as outputs
        summary = outputs.summary_dict(sc, results, "exact")
    if json_out:
        typer.echo(json.dumps(summary, indent=2))
    else:
        _print_summary(summary, run_dir)


@app.command()
def compare(
    a: Path = typer.Argument(..., help="Scenario A."),
    b: Path = typer.Argument(..., help="Scenario B (same game and question, same sweep size)."),
    trials: Optional[int] = typer.Option(None, "--trials", "-n", help="Trials per point (default: A's)."),
    seed: Optional[int] = typer.Option(None, help="Seed for both (default: A's)."),
    threads: Optional[int] = typer.Option(None, help="Worker threads."),
    json_out: bool = typer.Option(False, "--json", help="Print the comparison JSON to stdout only."),
    out: Path = typer.Option(Path("results"), help="Root folder for the comparison folder (comparison.json, "
                                                   "report.html)."),
    write: bool = typer.Option(True, help="Write the comparison folder."),
    force: bool = typer.Option(False, help="Allow more than 10^10 trials per point, or in all (A and B at every "
                                           "point)."),
):
    """Run A and B on common random numbers; report A, B and the paired difference B - A
    (console, and a folder with comparison.json and report.html). Ctrl-C / SIGTERM stop it
    between kernel calls (exit 130 / 143; nothing is written)."""
    try:
        api.set_threads(threads)
    except ValueError as e:
        _fail(str(e))
    sa = _load_all([str(a)], trials=trials, seed=seed, force=force)[0]
    sb = _load_all([str(b)], trials=trials or sa.spec.trials, seed=seed if seed is not None else sa.spec.seed,
                   force=force)[0]
    if write:
        _check_out(out)                  # before computing: an unusable --out must not cost the results
    progress, factory = _progress_factory(not json_out)
    try:
        with interrupt.handling():            # Ctrl-C / SIGTERM: stop between kernel calls
            if progress:
                with progress:
                    cmp = api.compare(sa, sb, progress=factory, force=force)
            else:
                cmp = api.compare(sa, sb, force=force)
            interrupt.check()
    except interrupt.RunInterrupted as e:
        err.print(f"[bold red]{e}[/]: compare stopped between kernel calls; nothing was written", highlight=False)
        raise typer.Exit(e.exit_code)
    except ScenarioError as e:
        _fail(str(e))
    doc = api.comparison_doc(cmp)
    folder = None
    if write:
        try:
            folder = api.write_comparison(cmp, out)
        except UnsafePathError as e:
            _fail(str(e))
        doc["run_dir"] = str(folder)
    if json_out:
        typer.echo(json.dumps(doc, indent=2, default=str))
        return
    for pt in cmp.points:
        table = Table(title=f"{sa.name} (A) vs {sb.name} (B), common random numbers, {pt['trials']:,} trials",
                      title_justify="left")
        for col in ("metric", "A", "B", "B - A  [95% CI]"):
            table.add_column(col)
        for name, m in pt["metrics"].items():
            d = m["diff_b_minus_a"]
            table.add_row(name, f"{m['a']['mean']:.4f}", f"{m['b']['mean']:.4f}",
                          f"{d['mean']:+.4f}  [{d['ci_low']:+.4f}, {d['ci_high']:+.4f}]"
                          + (f"  {_stats().NO_DETECTABLE_EFFECT}" if _stats().contains_zero(d) else ""))
        err.print(table)
    placeholders: list[dict] = []
    examples: list[dict] = []
    for pt in cmp.points:
        placeholders += [ph for ph in pt["placeholders"] if ph not in placeholders]
        examples += [ex for ex in pt["example_values"] if ex not in examples]
    _print_provenance(placeholders, examples, where="compare --json")
    if folder is not None:
        err.print(f"[green]wrote[/] {escape(str(folder))}")


@app.command()
def validate(targets: List[str] = typer.Argument(..., help="Scenario files, folders or globs.")):
    """Check scenario files without running them (exit code 2 on the first error)."""
    loaded = _load_all(targets)
    for sc in loaded:
        try:
            for p in sc.points:
                prepared = runner.prepare_point(sc, p)
                if p.index == 0:
                    plotspec.check_scenario_plots(sc, prepared)   # exactly what run checks before computing
        except (ScenarioError, DataError) as e:
            _fail(str(e))
        err.print(f"[green]ok[/] {sc.path} ({sc.spec.game}/{sc.spec.question}, {len(sc.points)} point(s))")


@app.command("list")
def list_(
    game: Optional[str] = typer.Argument(None, help="Only this game."),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable listing on stdout."),
):
    """Games, questions, parameters (types, defaults, placeholder defaults), rule options, metrics."""
    from analyzer.outputs.catalog_cache import cached_catalog
    doc = cached_catalog(game)
    if game is not None and not doc:
        from analyzer.core.errors import suggest
        games = sorted(cached_catalog())
        _fail(f"game: unknown game {game!r}{suggest(game, games)}; allowed: {', '.join(games)}")
    if json_out:
        typer.echo(json.dumps(doc, indent=2, default=str))
        return
    out = Console()              # the listing is the command's output: stdout (pipe it to less or grep)
    # every string of the listing comes from the cache file: printed with plain() (markup escaped,
    # control characters shown), so a cached '[link=...]' or a raw ESC never reaches the terminal
    for g, qs in doc.items():
        out.print(f"[bold]{plain(g)}[/]")
        for q in qs:
            out.print(f"  [cyan]{plain(q['question'])}[/] — {plain(q['summary'])}" +
                      (" \\[exact mode]" if q["exact"] else ""))
            if q.get("metrics"):
                out.print(f"      metrics (default params): {plain(', '.join(q['metrics']))}", highlight=False)
            for p in q["params"]:
                ph = "  [yellow]PLACEHOLDER default[/]" if p.get("placeholder") else ""
                out.print(f"      {plain(p['path'])}: {plain(p['type'])} = {plain(repr(p['default']))}{ph}  "
                          f"{plain(p.get('description', ''))}", highlight=False)
            for o in q["rule_options"]:
                what_if = (plain(f" [what-if, not a reading of the source: {', '.join(o['what_if'])}]")
                           if o["what_if"] else "")
                out.print(f"      rules.{plain(o['name'])}: {plain(' | '.join(o['values']))} "
                          f"(default {plain(o['default'])}){what_if} {plain(o['doc'])}", highlight=False)


@app.command()
def init(
    args: List[str] = typer.Argument(..., metavar="GAME [QUESTION] DIR",
                                     help="The game (see 'analyzer list'), optionally one of its questions, and the "
                                          "folder to write into."),
    force: bool = typer.Option(False, help="Overwrite files that already exist in DIR."),
):
    """Copy a runnable example scenario (one per question, or QUESTION's) and every game data
    file it reads into DIR. Edit the data files there: a file beside a scenario overrides the
    shipped one, and 'strict: true' in the scenario proves no placeholder is left."""
    if len(args) not in (2, 3):
        _fail(f"init: expected GAME [QUESTION] DIR, got {len(args)} argument(s)")
    game, question, dest = (args[0], None, Path(args[1])) if len(args) == 2 else (args[0], args[1], Path(args[2]))
    try:
        written = api.init_example(game, question, dest, force=force)
    except (ScenarioError, DataError) as e:
        _fail(str(e))
    for p in written:
        err.print(f"[green]wrote[/] {plain(p)}", highlight=False)
    scen = [p for p in written if p.parent == dest]
    err.print(f"run it: analyzer run {plain(' '.join(str(p) for p in scen))}", highlight=False)


@app.command()
def report(run_dir: Path = typer.Argument(..., help="A run folder (analyzer run / exact) or a comparison folder.")):
    """Rebuild report.html, the self-contained page of a run: question, parameters, metrics with
    CIs, plots, placeholders, rule options, notes and provenance."""
    from analyzer.core.paths import entry_kind
    from analyzer.outputs.report import write_report
    # (a link or FIFO at either name counts as there: reading it is then refused, by name)
    if not run_dir.is_dir() or (entry_kind(run_dir, "summary.json") is None
                                and entry_kind(run_dir, "comparison.json") is None):
        _fail(f"{run_dir}: not a run folder (needs summary.json, or comparison.json)")
    try:
        path = write_report(run_dir)
    except (OSError, ValueError, UnsafePathError) as e:    # RunFolderError (a ValueError): damaged folder
        _fail(f"{run_dir}: cannot build the report: {e}")
    err.print(f"[green]wrote[/] {plain(path)}", highlight=False)


@app.command()
def sensitivity(
    target: Path = typer.Argument(..., help="A scenario with one point (no sweep)."),
    metric: Optional[str] = typer.Option(None, help="Metric whose mean is compared (default: the question's "
                                                    "primary metric)."),
    trials: Optional[int] = typer.Option(None, "--trials", "-n", help="Trials per variant (default: the file's)."),
    top: int = typer.Option(15, min=1, help="Rows shown on the console and bars in tornado.png."),
    source_values: bool = typer.Option(False, "--source-values", help="Also move every plain number of every "
                                       "data file the point reads (values the source gives)."),
    out: Path = typer.Option(Path("results"), help="Root folder for the sensitivity folder."),
    force: bool = typer.Option(False, help="Allow more than 10^10 trials per variant, or in all (the scenario "
                                           "and every variant)."),
):
    """Which missing value or rule reading moves the answer most? Every placeholder,
    example-derived value and placeholder default the point uses is moved one step down and
    up (integers by 1, other numbers by 10%), and every rule option switched to each other
    reading; each variant runs against the scenario on common random numbers, so each effect
    comes with the 95% CI of B - A. Writes sensitivity.parquet, sensitivity.json and a
    tornado chart."""
    from analyzer.analyses import sensitivity as sens
    sc = _load_all([str(target)], trials=trials, force=force)[0]
    _check_out(out)                      # before computing: an unusable --out must not cost the results
    progress, _ = _progress_factory(True)
    try:
        with interrupt.handling():            # Ctrl-C stops between kernel calls
            n = len(sens.variants(sc, source_values)[0])
            with progress:
                task = progress.add_task(f"{sc.name}: variants", total=n)
                result = sens.run(sc, metric=metric, trials=trials, include_source_values=source_values,
                                  on_variant=lambda i, total, v: progress.update(task, completed=i), force=force)
                progress.update(task, completed=n)
            folder = sens.write(result, out, sc.digest)
    except interrupt.RunInterrupted as e:
        err.print(f"[bold red]{e}[/]: sensitivity stopped; nothing was written", highlight=False)
        raise typer.Exit(e.exit_code)
    except (ScenarioError, DataError, UnsafePathError) as e:
        _fail(str(e))
    table = Table(title=f"{sc.name}: effect on mean {result.metric} (base {result.base_mean:.4g}, "
                        f"{result.trials:,} trials per variant)", title_justify="left")
    for col in ("value changed", "from → to", "effect ±se  [95% CI]"):
        table.add_column(col)
    for e in result.ranked()[:top]:
        v = e.variant
        effect = (f"cannot run: {e.error}" if e.error else f"{e.mean:+.4g}±{e.se:.2g}  [{e.ci_low:+.4g}, {e.ci_high:+.4g}]"
                  + (f"  {_stats().NO_DETECTABLE_EFFECT}" if e.ci_low <= 0 <= e.ci_high else ""))
        table.add_row(escape(f"{v.what} [{v.kind}]"), escape(f"{v.base!r} → {v.value!r}"), escape(effect))
    err.print(table)
    if result.skipped:
        err.print(f"  not perturbed (not numbers, or identifiers such as card numbers): {len(result.skipped)} "
                  f"value(s), listed in sensitivity.json",
                  highlight=False, markup=False)
    err.print(f"[green]wrote[/] {escape(str(folder))}")


@app.command()
def plot(
    run_dir: Path = typer.Argument(..., help="A run folder written by 'analyzer run' or 'exact'."),
    svg: bool = typer.Option(False, help="Also write SVG."),
):
    """Re-render the plots of a run folder from its parquet tables."""
    from analyzer.core.errors import RunFolderError
    from analyzer.core.paths import entry_kind
    from analyzer.outputs.plots import PlotError, render
    if not run_dir.is_dir() or entry_kind(run_dir, "points.parquet") is None \
            or entry_kind(run_dir, "plotmeta.json") is None:
        _fail(f"{run_dir}: not a run folder (needs points.parquet and plotmeta.json)")
    try:
        written = render(run_dir, ("png", "svg") if svg else ("png",))
    except (PlotError, RunFolderError, UnsafePathError) as e:    # a damaged folder: refused by name
        _fail(f"{run_dir}: {e}")
    except OSError as e:                                          # the folder cannot be written
        _fail(f"{run_dir}: cannot write the plots: {e.strerror or e}")
    for p in written:
        err.print(f"[green]wrote[/] {plain(p)}", highlight=False)


@app.command()
def bench(
    names: Optional[List[str]] = typer.Argument(None, help="Benchmarks to run (default: all; 'list' shows them). "
                                                           "Also: scaling, memory, cli."),
    quick: bool = typer.Option(False, help="Small trial counts (the whole suite in a few minutes)."),
    json_out: bool = typer.Option(False, "--json", help="Print {\"rows\": [...]} to stdout and nothing else."),
    out: Optional[Path] = typer.Option(None, help="Also write bench.parquet, bench.json and bench_ratios.png here."),
    trials: Optional[int] = typer.Option(None, "--trials", "-n", min=1,
                                         help="Kernel trials of a single named benchmark (default per benchmark)."),
    threads: Optional[int] = typer.Option(None, help="Worker threads."),
):
    """Benchmarks: each row a figure measured against another measured in the same run (raw RNG,
    numpy, the pure-Python reference, icepool) or against its target (CLI start, memory), with
    the ratio, its target and whether it is met; plus thread scaling (1 vs all threads)."""
    from analyzer.bench import suite as bench_suite
    from analyzer.bench.harness import BENCHMARKS, load_benchmarks
    load_benchmarks()
    names = list(names or [])
    if names == ["list"]:
        for n in sorted(BENCHMARKS) + ["scaling", "memory", "cli"]:
            err.print(n)
        return
    try:
        api.set_threads(threads)
    except ValueError as e:
        _fail(str(e))
    if trials is not None:
        if len(names) != 1 or names[0] not in BENCHMARKS:
            _fail("bench: --trials needs exactly one benchmark name (see 'analyzer bench list')")
        from analyzer.bench.harness import MAX_BENCH_TRIALS
        if trials > MAX_BENCH_TRIALS:
            _fail(f"bench: --trials: got {trials:,}; allowed: 1..{MAX_BENCH_TRIALS:,} (a benchmark runs its kernel "
                  f"several times)")
        rows = bench_suite.rows_of(names[0], BENCHMARKS[names[0]](err, trials),
                                   bench_suite.target_of(BENCHMARKS[names[0]]))
    else:
        try:
            rows = bench_suite.run_suite(names or None, quick=quick, console=err)
        except KeyError as e:
            _fail(f"bench: {e.args[0]}")
    if out is not None:
        try:
            for p in bench_suite.write_outputs(rows, out):
                err.print(f"[green]wrote[/] {p}")
        except (OSError, UnsafePathError) as e:
            _fail(f"bench: --out {out}: {e}")
    if json_out:
        typer.echo(bench_suite.dumps(rows))
    else:
        bench_suite.print_table(rows, err)


import analyzer.cli.balance  # noqa: E402,F401  (registers 'matchup' and 'solve': analyzer/cli/balance.py)


#: Most numba threads ``NUMBA_NUM_THREADS`` may ask for: 4 per usable core, never more than 1024
#: (numba starts that many threads at its first parallel kernel: 100,000 segfaulted, 30,000 made
#: a run 10x slower).
MAX_THREADS_PER_CORE, MAX_THREADS = 4, 1024


def check_thread_env(environ=None) -> None:
    """Refuse, in one line, a ``NUMBA_NUM_THREADS`` that is not a whole number in
    1..min(4 per usable core, 1024). Runs before numba is imported (numba reads the variable
    once, at import: afterwards it is too late to refuse it)."""
    import os
    value = (os.environ if environ is None else environ).get("NUMBA_NUM_THREADS")
    if value is None or value.strip() == "":
        return
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    cap = min(MAX_THREADS, MAX_THREADS_PER_CORE * cores)
    try:
        n = int(value)
    except ValueError:
        n = None
    if n is None or not 1 <= n <= cap:
        _fail(f"NUMBA_NUM_THREADS (environment): got {value!r}; allowed: a whole number 1..{cap} "
              f"({MAX_THREADS_PER_CORE} per usable core, at most {MAX_THREADS}); unset it to use every core")


def main() -> None:  # entry point
    try:
        check_thread_env()
    except typer.Exit as e:
        raise SystemExit(e.exit_code) from None
    app()


if __name__ == "__main__":
    main()
