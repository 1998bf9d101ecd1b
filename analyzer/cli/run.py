"""``analyzer run`` and ``analyzer exact``: a scenario's answer, simulated or exact, in a run folder
and a summary table."""
from __future__ import annotations

from contextlib import closing, nullcontext
import json
import time
from pathlib import Path
from typing import List, Optional

import typer

from analyzer.cli.common import ROWS, RUNS_OUT, SVG, THREADS, api, check_out, check_points, err, fail, load_all, plain, \
    preflight, progress_factory, reported, set_threads
from analyzer.cli.summary import print_summary
from analyzer.core import interrupt


def run(
    targets: Optional[List[str]] = typer.Argument(None, help="Scenario files, folders (every scenario below) "
                                                 "or globs."),
    trials: Optional[int] = typer.Option(None, "--trials", "-n", help="Trials per sweep point (overrides the file)."),
    precision: Optional[float] = typer.Option(None, help="Run until the 95% CI half-width of the primary "
                                              "metric (or precision_metric) is below this, up to max_trials."),
    seed: Optional[int] = typer.Option(None, help="Random seed (overrides the file; default fixed and recorded)."),
    threads: Optional[int] = THREADS,
    out: Path = RUNS_OUT,
    json_out: bool = typer.Option(False, "--json", help="Print summary.json to stdout and nothing else on stdout."),
    svg: bool = SVG,
    force: bool = typer.Option(False, help="Allow more than 10^10 trials per point."),
    no_progress: bool = typer.Option(False, "--no-progress", help="Hide progress bars."),
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
    write: bool = typer.Option(True, help="Write a run folder per scenario. --no-write: print the summary "
                                          "(or --json) only; nothing is written, so the run cannot be resumed."),
    reestimate_trials: Optional[int] = typer.Option(None, "--reestimate-trials", min=2, help="Trials of the "
                                                    "re-estimation: after the run the best option of every ranking "
                                                    "plays again on fresh random streams (independent of the run's) "
                                                    "for an estimate of its mean free of the selection bias, and "
                                                    "run - fresh estimates that bias (default: its point's trials; "
                                                    "costs about 1/K of a point of K options)."),
    no_reestimate: bool = typer.Option(False, "--no-reestimate", help="Skip the re-estimation of the rankings' "
                                       "best options on fresh streams."),
    rows: int = ROWS,
):
    """Monte-Carlo every sweep point of each scenario and write a run folder per scenario.

    The run folder exists from the start, marked incomplete in manifest.json, and keeps each
    point's progress; after Ctrl-C, SIGTERM or a crash, 'analyzer run --resume RUN_DIR' continues it.
    Where a question ranks options, the best of each ranking is then played again on fresh random
    streams (--reestimate-trials, --no-reestimate): its unbiased mean and the selection bias of the
    run's are in the notes, answers.parquet and report.html."""
    used_threads = set_threads(threads)
    from analyzer.run.backends import make_backend
    try:
        backend = make_backend(backend_name, scheduler=scheduler, workers=workers)
    except ValueError as e:
        fail(str(e))
    if resume is not None:
        given = [name for name, v in (("a scenario", targets), ("--trials", trials), ("--precision", precision),
                                      ("--seed", seed), ("--force", force or None),
                                      ("--out", out if out != Path("results") else None),
                                      ("--reestimate-trials", reestimate_trials),
                                      ("--no-reestimate", no_reestimate or None)) if v]
        if not write:
            given.append("--no-write")
        if given:
            fail(f"--resume continues RUN_DIR with the scenario, seed, trials and re-estimation it started with, "
                 f"in place; drop {', '.join(given)}")
        from analyzer.outputs import checkpoint
        loaded = [checkpoint.load_scenario(resume)]
        preflight(loaded, resume, "--resume")
    else:
        if not targets:
            fail("give scenario files, folders or globs to run, or --resume RUN_DIR")
        loaded = load_all(targets, trials=trials, precision=precision, seed=seed, force=force)
        if write:
            preflight(loaded, out)
        else:
            for sc in loaded:
                check_points(sc)
    progress, factory = progress_factory(not no_progress and not json_out)
    fresh = {"reestimate": not no_reestimate, "reestimate_trials": reestimate_trials}
    summaries = []
    formats = ("png", "svg") if svg else ("png",)
    with interrupt.handling(), closing(backend):  # Ctrl-C / SIGTERM: stop between kernel calls, never mid-write
        if backend.name == "dask":
            _start(backend, scheduler)
        shown = progress or nullcontext()           # the bars, when they are shown
        notify = _say if progress else None
        for sc in loaded:
            if not write:
                summary = _run_unwritten(sc, shown, factory, backend, notify, fresh)
                summaries.append(summary)
                if not json_out:
                    print_summary(summary, None, rows)
                continue
            with reported(lambda e: _stopped(e, sc.name, summaries)), shown:
                run_dir, summary = api.run_to_folder(sc, out, threads=used_threads, formats=formats, progress=factory,
                                                     resume=resume, backend=backend, notify=notify, **fresh)
            summary["run_dir"] = str(run_dir)
            summaries.append(summary)
            if not json_out:
                print_summary(summary, run_dir, rows)
    if write and len(loaded) > 1:
        _index(out, quiet=json_out)
    if json_out:
        typer.echo(json.dumps(summaries[0] if len(summaries) == 1 else summaries, indent=2))


def _index(out: Path, quiet: bool) -> None:
    """After a run of several scenarios: ``analyzer index OUT`` (the runs are written whatever happens here)."""
    from analyzer.cli.index import print_index
    from analyzer.outputs.index import build_index
    try:
        idx = build_index(out)
    except (OSError, ValueError) as e:
        err.print(f"[yellow]warning[/]: the runs are written, but {plain(out)} could not be indexed: {plain(e)}; "
                  f"retry with: analyzer index {plain(out)}", highlight=False)
        return
    if not quiet:
        print_index(idx)


def _say(text: str) -> None:
    """A line about the run (a cold kernel start) beside the progress bars, on stderr."""
    err.print(f"  {text}", highlight=False, markup=False)


def _run_unwritten(sc, shown, factory, backend, notify, fresh: dict) -> dict:
    """``run --no-write``: the scenario's summary (as summary.json would hold it), nothing written."""
    from analyzer.outputs import writer as outputs
    with reported(f"{sc.name} stopped; nothing was written"), shown:
        results = api.run(sc, progress=factory, backend=backend, notify=notify, **fresh)
    return outputs.summary_dict(sc, results, "monte_carlo")


def _start(backend, scheduler: Optional[str]) -> None:
    """Start the Dask cluster; a stop meanwhile leaves nothing written."""
    from analyzer.run.backends import BackendError
    with reported("stopped while the cluster started; nothing was written"):
        try:
            backend.start()
        except BackendError:
            raise                 # its own line: no scheduler answers at --scheduler, or it has no workers
        except OSError as e:      # a cluster that cannot start
            fail(f"--backend dask: cannot reach the cluster ({scheduler or 'in-process'}): {e}")
        interrupt.check()


def _stopped(e: interrupt.RunInterrupted, name: str, summaries: list[dict]) -> str:
    """What a stop during scenario ``name`` left (``summaries``: the scenarios completed before it):
    its folder complete (the signal came while the outputs were written), saved and how to resume
    it, or nothing."""
    from analyzer.outputs.checkpoint import resume_command
    done = ", ".join(s["run_dir"] for s in summaries) or "none"
    if getattr(e, "completed", False):
        return (f"arrived while {name}'s outputs were written; they were completed first: the run is complete in "
                f"{e.run_dir}; no later scenario was run (completed before it: {done})")
    where = (f"{name} saved, incomplete, in {e.run_dir}; continue it with: {resume_command(e.run_dir)}"
             if e.run_dir else f"nothing of {name} was written")
    return f"stopped between kernel calls; {where} (scenarios completed before it: {done})"


def exact(
    target: Path = typer.Argument(..., help="A scenario file."),
    out: Path = RUNS_OUT,
    json_out: bool = typer.Option(False, "--json", help="Print the summary JSON to stdout only."),
    write: bool = typer.Option(True, help="Write a run folder (tables and plots) as 'run' does."),
    rows: int = ROWS,
):
    """Exact answer where the question supports it (same summary as 'run', se = 0).

    Exits with code 2 and a message where the question has no exact mode."""
    sc = load_all([str(target)], trials_guard=False)[0]    # exact runs no trials: no trial guard
    if write:
        check_out(out)                   # before computing: an unusable --out must not cost the answer
    t0 = time.perf_counter()
    results = api.exact(sc)
    run_dir = None
    if write:
        run_dir, summary = api.write_run(sc, results, out, mode="exact", threads=1,
                                         wall_seconds=time.perf_counter() - t0)
        summary["run_dir"] = str(run_dir)
    else:
        from analyzer.outputs import writer as outputs
        summary = outputs.summary_dict(sc, results, "exact")
    if json_out:
        typer.echo(json.dumps(summary, indent=2))
    else:
        print_summary(summary, run_dir, rows)
