"""The Python API behind the CLI: run, exact, compare, write a run folder."""
from __future__ import annotations

import errno
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import numba

from analyzer.outputs import writer as outputs
from analyzer.outputs import plots
from analyzer.core import questions
from analyzer.outputs import report
from analyzer.outputs.answers import answers_table
from analyzer.outputs.reader import ANSWERS_TABLE
from analyzer.core import scenario as scenario_mod
from analyzer.core.errors import ScenarioError
from analyzer.core.formats import COMPARISON_JSON, MANIFEST_JSON, PLOTMETA_JSON, SUMMARY_JSON
from analyzer.core.questions import Prepared
from analyzer.core.results import PointResult
from analyzer.run.runner import (CHUNK_TRIALS, MIN_PAIRED_BATCHES, exact_point, paired_chunk_size, paired_summary,
                                 point_chunks, point_key, prepare_point, simulate_point, stream_key, summarize,
                                 warm_up)
from analyzer.core.scenario import Scenario
from analyzer.core.stats import MetricSummary

if TYPE_CHECKING:
    from analyzer.outputs.checkpoint import RunCheckpoint

ProgressFactory = Callable[[str, int], Callable[[int], None]]


@dataclass
class RunOutput:
    scenario: Scenario
    results: list[PointResult]
    summary: dict
    run_dir: Path | None
    wall_seconds: float


def set_threads(threads: int | None) -> int:
    if threads is not None:
        if threads < 1 or threads > numba.config.NUMBA_NUM_THREADS:
            raise ValueError(f"--threads: got {threads}; allowed 1..{numba.config.NUMBA_NUM_THREADS}")
        numba.set_num_threads(threads)
    return numba.get_num_threads()


def _planned_trials(scenario: Scenario) -> int:
    """The most trials the scenario's points can run (a precision target at its max_trials)."""
    return scenario_mod.planned_trials_per_point(scenario.spec) * len(scenario.points)


def check_plots(scenario: Scenario, prepared: Prepared) -> None:
    """Check the scenario's ``plots:`` list before any trial runs."""
    from analyzer.core.plotspec import check_scenario_plots
    check_scenario_plots(scenario, prepared)


def run(scenario: Scenario, *, progress: ProgressFactory | None = None,
        checkpoint: "RunCheckpoint | None" = None, prepared: list[Prepared] | None = None,
        backend=None, notify=None, reestimate: bool = True,
        reestimate_trials: int | None = None) -> list[PointResult]:
    """Monte-Carlo every sweep point (all points are compiled first: errors come early).

    Then, with ``reestimate`` (the default), the best option of every ranking is played again on
    fresh streams for ``reestimate_trials`` (default: its point's trials), and its selection bias
    estimated (:mod:`analyzer.run.reestimate`: ``Ranking.reestimate`` and a note; its trials are not
    counted in ``PointResult.trials``). It is not checkpointed: a resumed run plays it again.

    With a ``checkpoint`` (:class:`analyzer.outputs.checkpoint.RunCheckpoint`) each point's sums are
    saved as it runs and when it is done, and points it already holds are continued (or,
    when done, taken as they are): the results are those of an uninterrupted run.
    ``prepared``: the points already compiled (by :func:`prepare_point`), if the caller has them.
    ``backend``: where the chunks run (:mod:`analyzer.run.backends`; default this process); the
    results do not depend on it. In this process the kernels are loaded (or compiled) first,
    outside the timing (:func:`analyzer.run.runner.warm_up`; ``notify(text)`` hears about a cold
    start)."""
    if reestimate:
        from analyzer.run.reestimate import check_trials
        check_trials(reestimate_trials)
    if prepared is None:
        prepared = [prepare_point(scenario, p) for p in scenario.points]
    check_plots(scenario, prepared[0])
    tick = progress(scenario.name, _planned_trials(scenario)) if progress else None
    states = [checkpoint.load_point(point.index, prep) if checkpoint is not None else None
              for point, prep in zip(scenario.points, prepared)]
    if backend is None or getattr(backend, "name", "local") == "local":     # the points still to run
        warm_up([prep for prep, state in zip(prepared, states) if state is None or not state.done], notify)
    if backend is not None:              # a cluster queues every point's work up front
        n_trials, n_chunks = point_chunks(scenario)
        backend.prefetch([(prep, scenario.spec.seed, point_key(scenario, point),
                           state.next_chunk if state is not None else 0, n_chunks, CHUNK_TRIALS, n_trials)
                          for point, prep, state in zip(scenario.points, prepared, states)
                          if state is None or not state.done])
    results = []
    for point, prep, state in zip(scenario.points, prepared, states):
        if state is not None and state.done:
            if tick:
                tick(state.acc.trials)
            results.append(summarize(point, prep, state.acc, state.seconds))
            continue
        prior = state.seconds if state is not None else 0.0
        t0 = time.perf_counter()
        acc, _, _ = simulate_point(
            scenario, point, prep, on_progress=tick, backend=backend,
            resume=(state.acc, state.next_chunk) if state is not None else None,
            on_checkpoint=checkpoint.saver(point.index, t0, prior) if checkpoint is not None else None)
        seconds = prior + time.perf_counter() - t0
        if checkpoint is not None:
            checkpoint.save_point(point.index, acc, -1, seconds, done=True)
        results.append(summarize(point, prep, acc, seconds))
    scenario.question.rank_points(results)       # rankings across the points, if the question has them
    if reestimate:
        from analyzer.run.reestimate import reestimate as reestimate_best
        reestimate_best(scenario, results, prepared, trials=reestimate_trials, backend=backend, progress=progress)
    return results


def run_to_folder(scenario: Scenario, out_root: Path | None, *, threads: int,
                  formats: tuple[str, ...] = ("png",), progress: ProgressFactory | None = None,
                  resume: Path | None = None, backend=None, notify=None, reestimate: bool = True,
                  reestimate_trials: int | None = None) -> tuple[Path, dict]:
    """Monte-Carlo a scenario into a checkpointed run folder; returns (folder, summary).

    A new run creates ``<out_root>/<scenario>/<run-id>/`` at once, marked incomplete, and saves
    each point's progress there; ``resume`` continues such a folder instead (the scenario must
    be the one :func:`analyzer.outputs.checkpoint.load_scenario` reloaded from it). ``reestimate``
    / ``reestimate_trials`` (:func:`run`) are kept in the incomplete manifest: a resumed run uses
    the ones it started with (these arguments are ignored then).

    What was computed is kept whenever it can be resumed:

    - a stop request while computing (:class:`analyzer.core.interrupt.RunInterrupted`, given
      ``run_dir``) or SIGKILL: the folder stays, resumable;
    - any error once every point is computed (and saved done), while the tables, plots or
      report are written (disk full, a read-only folder, a figure that cannot be drawn): the
      folder stays with every point saved, only the temporary ``.partial-*`` folder is removed,
      and :class:`analyzer.outputs.checkpoint.RunKept` says why in one line and how to finish it
      (``--resume`` then writes the outputs without running a trial);
    - the file system refusing a checkpoint while computing (ENOSPC, EDQUOT, EROFS, EACCES,
      EPERM, EIO, EFBIG): the folder stays with the points saved so far (:class:`RunKept`);
    - any other error while computing: a new run's folder is removed (a resumed one is left as
      it was).

    A stop request that arrives while the outputs are written (after the last kernel call) is
    held until they are complete; then :class:`RunInterrupted` is raised with ``run_dir`` the
    complete folder and ``completed = True`` (the CLI exits 130/143 saying the run completed).
    """
    from analyzer.core import interrupt
    from analyzer.outputs.checkpoint import RunCheckpoint, RunKept, resume_command
    from analyzer.run.reestimate import check_trials
    check_trials(reestimate_trials)
    prepared = [prepare_point(scenario, p) for p in scenario.points]
    if resume is None:
        ckpt = RunCheckpoint.start(scenario, Path(out_root), prepared,
                                   reestimate={"enabled": bool(reestimate), "trials": reestimate_trials})
    else:
        ckpt = RunCheckpoint.open(Path(resume), scenario, prepared)
    settings = ckpt.reestimate
    n = len(scenario.points)
    try:
        t0 = time.perf_counter()
        results = run(scenario, progress=progress, checkpoint=ckpt, prepared=prepared, backend=backend,
                      notify=notify, reestimate=False)
    except interrupt.RunInterrupted as e:
        ckpt.release()
        e.run_dir = ckpt.run_dir
        raise
    except OSError as e:
        if e.errno not in _KEEP_ERRNOS:
            _drop(ckpt)
            raise
        ckpt.release()
        raise RunKept(ckpt.run_dir, f"could not save a checkpoint ({_why(e)}); the points saved so far are kept "
                      f"here: {_remedy(e)} and run `{resume_command(ckpt.run_dir)}`") from e
    except BaseException:
        _drop(ckpt)
        raise
    try:                          # every point is saved done: a stop or an error here loses no point
        if settings["enabled"]:
            from analyzer.run.reestimate import reestimate as reestimate_best
            reestimate_best(scenario, results, prepared, trials=settings["trials"], backend=backend,
                            progress=progress)
        wall = time.perf_counter() - t0 + ckpt.restored_seconds     # this session plus earlier ones
    except interrupt.RunInterrupted as e:
        ckpt.release()
        e.run_dir = ckpt.run_dir
        raise
    except Exception as e:
        ckpt.release()
        raise RunKept(ckpt.run_dir, f"could not re-estimate the rankings' best options on fresh streams "
                      f"({_why(e)}); the {n} point{'s' * (n != 1)} are saved, no trial is lost: {_remedy(e)} and run "
                      f"`{resume_command(ckpt.run_dir)}`") from e
    except BaseException:
        ckpt.release()
        raise
    try:
        run_dir, summary = write_run(scenario, results, ckpt.run_dir.parent, mode="monte_carlo", threads=threads,
                                     wall_seconds=wall, formats=formats, into=ckpt.run_dir,
                                     execution=backend.describe() if backend is not None else None,
                                     reestimate=settings)
    except interrupt.RunInterrupted as e:
        ckpt.release()
        e.run_dir = ckpt.run_dir
        raise
    except Exception as e:
        ckpt.release()            # every point is saved done: --resume writes the outputs, no trial rerun
        raise RunKept(ckpt.run_dir, f"could not write the results ({_why(e)}); the {n} point{'s' * (n != 1)} "
                      f"are saved, no trial is lost: {_remedy(e)} and run `{resume_command(ckpt.run_dir)}`") from e
    except BaseException:
        ckpt.release()
        raise
    ckpt.finish()
    try:
        interrupt.check()          # a stop request held while the outputs were written
    except interrupt.RunInterrupted as e:
        e.run_dir, e.completed = run_dir, True
        raise
    return run_dir, summary


#: errno values of a file system that refuses a write (the work can go on once it is fixed)
_KEEP_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO,
                          errno.EFBIG})


def _drop(ckpt: "RunCheckpoint") -> None:
    """After an ordinary error while computing: a new run's folder is removed, a resumed one kept."""
    if ckpt.resumed:
        ckpt.release()
    else:
        ckpt.discard()


def _why(e: BaseException) -> str:
    """The cause in a few words, on one line."""
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    text = " ".join(str(e).split())
    text = text if len(text) <= 200 else text[:197] + "..."
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def _remedy(e: BaseException) -> str:
    if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return "free space"
    if isinstance(e, OSError) and e.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return "make the folder writable"
    return "fix the cause"


def exact(scenario: Scenario) -> list[PointResult]:
    if not scenario.question.supports_exact:
        raise ScenarioError(str(scenario.path), "question",
                            f"{scenario.spec.game}/{scenario.spec.question} has no exact mode "
                            f"(stateful or too large to enumerate); use 'analyzer run'")
    # every point compiled and checked (an exact answer exists, the plots can be drawn) before
    # the first is computed: a refusal at point 900 of 1,000 used to come after 899 answers
    prepared = [prepare_point(scenario, point) for point in scenario.points]
    for point, prep in zip(scenario.points, prepared):
        if prep.exact is None:
            where = f" (at sweep point {point.swept})" if point.swept else ""
            raise ScenarioError(str(scenario.path), "params", f"no exact answer for these parameters{where} "
                                "(see 'analyzer list' for what exact mode covers)")
    check_plots(scenario, prepared[0])
    results = [exact_point(point, prep) for point, prep in zip(scenario.points, prepared)]
    scenario.question.rank_points(results)
    return results


def write_run(scenario: Scenario, results: list[PointResult], out_root: Path, *, mode: str,
              threads: int, wall_seconds: float, formats: tuple[str, ...] = ("png",),
              into: Path | None = None, execution: dict | None = None,
              reestimate: dict | None = None) -> tuple[Path, dict]:
    """Write the run folder atomically; returns (folder, summary dict).

    The folder is built under a temporary name, then renamed to a new run folder, or, with
    ``into`` (an incomplete checkpointed run folder), its files moved in, the manifest last.
    ``execution``: where the chunks ran (``{"backend", "workers", ...}``; default this process),
    recorded in summary.json and manifest.json only. ``reestimate``: the re-estimation's settings
    (``{"enabled", "trials"}``) for manifest.json (:func:`analyzer.outputs.writer.manifest_dict`)."""
    from analyzer.run.backends import LOCAL
    execution = execution or LOCAL.describe()
    summary = outputs.summary_dict(scenario, results, mode, execution=execution)
    if into is None:
        tmp, final = outputs.new_run_dir(Path(out_root), outputs.folder_name(scenario), scenario.digest)
    else:
        tmp = outputs.new_partial_dir(Path(into).parent)
    try:
        outputs.write_parquet(outputs.points_table(results), tmp / "points.parquet")
        outputs.write_parquet(outputs.distributions_table(results), tmp / "distributions.parquet")
        outputs.write_parquet(answers_table(results), tmp / ANSWERS_TABLE)
        outputs.write_document(tmp, SUMMARY_JSON, summary)
        outputs.write_document(tmp, MANIFEST_JSON, outputs.manifest_dict(
            scenario, results, threads=threads, wall_seconds=wall_seconds, mode=mode, execution=execution,
            reestimate=reestimate))
        metrics = results[0].metrics
        outputs.write_document(tmp, PLOTMETA_JSON, {
            "scenario": scenario.name, "game": scenario.spec.game, "question": scenario.spec.question,
            "seed": scenario.spec.seed, "mode": mode, "swept": list(scenario.spec.sweep),
            "primary_metric": scenario.question.primary_metric,
            "metrics": [{"name": m.name, "label": m.label, "kind": m.kind, "distribution": m.distribution,
                         "unaffected_by": list(m.unaffected_by)} for m in metrics],
            "placeholders": summary["placeholders"], "example_values": summary["example_values"],
            "params": summary["points"][0]["params"],   # point 0's parameters (swept ones vary)
            "plots": scenario.spec.plots,
            # per point the options of its rankings (analyzer.core.ranking), for the figures that draw them
            "rankings": {str(r.point.index): [_ranked_row(rk, o) for rk in r.rankings if rk.own is None
                                              for o in rk.options] for r in results
                         if any(rk.own is None for rk in r.rankings)},
            # rankings whose options are the sweep points (Question.rank_points), once, each option
            # with its point and its ranking ("group": points ranked together, e.g. at one range)
            "sweep_rankings": _sweep_rows(results),
        })
        plots.render(tmp, formats, scenario.question)
        report.write_report(tmp)
        if into is not None:
            return outputs.fill_run_dir(tmp, Path(into)), summary
        return outputs.commit_run_dir(tmp, final), summary
    except BaseException:
        if into is None:
            outputs.discard_run_dir(tmp)
        else:
            outputs.release_partial(tmp)
            shutil.rmtree(tmp, ignore_errors=True)   # the run folder itself stays (resumable)
        raise


def _sweep_rows(results: list[PointResult]) -> list[dict]:
    """The rankings of :meth:`~analyzer.core.questions.Question.rank_points`: per point its own
    option, with the point and the index of its ranking (the points ranked together)."""
    groups: dict = {}
    return [{**_ranked_row(rk, rk.option(rk.own)), "point": r.point.index,
             "group": groups.setdefault((rk.metric, rk.options), len(groups))}
            for r in results for rk in r.rankings if rk.own is not None]


def _ranked_row(rk, o) -> dict:
    """One option of a ranking as plotmeta.json holds it (the best, when it was re-estimated on
    fresh streams, with ``reestimate``: :attr:`analyzer.core.ranking.Ranking.reestimate`)."""
    fresh = {"reestimate": rk.reestimate} if rk.reestimate is not None and o.name == rk.best else {}
    return outputs._json_value({"metric": rk.metric, "name": o.name, "mean": o.mean, "diff": o.diff,
                                "diff_low": o.diff_low, "diff_high": o.diff_high, "rank": o.rank,
                                "tie_group": o.tie_group, "in_best_set": o.in_best_set, **fresh})


@dataclass
class Comparison:
    a: Scenario
    b: Scenario
    points: list[dict]  # per point: params a/b, metrics {name: {"a":..., "b":..., "diff":...}}
    results_a: list[PointResult] = field(default_factory=list)   # each side's own summaries, point by point
    results_b: list[PointResult] = field(default_factory=list)


def compare(a: Scenario, b: Scenario, *, progress: ProgressFactory | None = None, force: bool = False) -> Comparison:
    """Run A and B on common random numbers (the same streams chunk by chunk).

    Both scenarios run every point: the trial guard counts 2 x points x trials (``force``
    allows more than 10^10). Stops on a stop request between kernel calls
    (:class:`analyzer.core.interrupt.RunInterrupted`, under :func:`analyzer.core.interrupt.handling`)."""
    from analyzer.core import interrupt
    if (a.spec.game, a.spec.question) != (b.spec.game, b.spec.question):
        raise ScenarioError(str(b.path), "question", f"compare needs the same game and question: "
                            f"{a.spec.game}/{a.spec.question} vs {b.spec.game}/{b.spec.question}")
    if len(a.points) != len(b.points):
        raise ScenarioError(str(b.path), "sweep", f"compare needs sweeps of equal size: "
                            f"{len(a.points)} points vs {len(b.points)}")
    if a.spec.precision is not None or b.spec.precision is not None:
        raise ScenarioError(str(a.path), "precision", "compare runs a fixed trial count; use --trials")
    b.spec.seed = a.spec.seed
    b.spec.trials = a.spec.trials
    if a.spec.trials < MIN_PAIRED_BATCHES:
        raise ScenarioError(str(a.path), "trials", f"got {a.spec.trials}; compare needs at least "
                            f"{MIN_PAIRED_BATCHES} trials per point for an honest paired CI of B - A")
    scenario_mod.check_trial_budget(str(a.path), "trials", a.spec.trials, 2 * len(a.points),
                                    "runs (A and B at every point)", force)
    chunk_size = paired_chunk_size(a.spec.trials)
    tick = progress(f"{a.name} vs {b.name}", 2 * _planned_trials(a)) if progress else None
    out, results_a, results_b = [], [], []
    for pa, pb in zip(a.points, b.points):
        interrupt.check()
        prep_a, prep_b = prepare_point(a, pa), prepare_point(b, pb)
        names_a = [m.name for m in prep_a.metrics]
        if names_a != [m.name for m in prep_b.metrics]:
            raise ScenarioError(str(b.path), "params", "A and B produce different metrics; compare "
                                "needs the same metric list")
        key = stream_key("compare", a.spec.game, a.spec.question, pa.index)
        acc_a, paired, acc_b = simulate_point(
            a, pa, prep_a, key=key, paired_with=prep_b, chunk_size=chunk_size,
            on_progress=(lambda n: tick(2 * n)) if tick else None)
        ra = summarize(pa, prep_a, acc_a)
        rb = summarize(pb, prep_b, acc_b)
        results_a.append(ra)
        results_b.append(rb)
        diffs: dict[str, MetricSummary] = paired_summary(paired, prep_a.metrics, acc_a, acc_b)
        out.append({
            "point": pa.index, "swept_a": pa.swept, "swept_b": pb.swept, "trials": acc_a.trials,
            "metrics": {n: {"a": ra.summaries[n].as_dict(), "b": rb.summaries[n].as_dict(),
                            "diff_b_minus_a": diffs[n].as_dict()} for n in names_a},
            "placeholders": outputs.unique_placeholders([ra, rb]),
            "example_values": outputs.unique_placeholders([ra, rb], examples=True),
        })
    return Comparison(a, b, out, results_a, results_b)


def examples(game: str | None = None) -> list[Scenario]:
    """The shipped example scenarios (of ``game``, or of every game), by game, question and file name."""
    known = questions.games_with_questions()
    if game is not None and game not in known:
        from analyzer.core.errors import suggest
        raise ScenarioError("examples", "game", f"unknown game {game!r}{suggest(game, known)}; allowed: "
                            f"{', '.join(known)}")
    out = []
    for g in ([game] if game else known):
        game_dir = questions.SCENARIO_ROOT / g
        if game_dir.is_dir():
            out += [scenario_mod.load(path) for path in scenario_mod.expand_targets([str(game_dir)])]
    return sorted(out, key=lambda sc: (sc.spec.game, sc.spec.question, sc.path.name))


def init_example(game: str, question: str | None, dest: Path, *, force: bool = False,
                 example: str | None = None) -> list[Path]:
    """Copy shipped example scenarios and every data file they read into ``dest``.

    ``example`` given: that shipped scenario (its file name, with or without ``.yaml``; see
    :func:`examples`); else ``question`` given: its first shipped scenario by file name;
    otherwise the first of each question of ``game``. The data files are found by preparing every sweep point (what
    :meth:`analyzer.core.questions.Context.find` records), so the copy runs as it is and a player
    edits the values in ``dest`` (a data file beside a scenario overrides the shipped one).
    Refuses to overwrite an existing file unless ``force``. Returns the files written.

    ``dest`` may be a folder someone else prepared: nothing is written through a link. Every
    target is checked with ``lstat`` (a dangling link is "already there", where ``exists()``
    said it was not); a link or a file on the way to a target (``DIR/data -> /elsewhere``) is
    refused even with ``force``; the folders on the way are created and opened without following
    links and each file is created exclusively (with ``force``: written to an exclusive temporary
    file renamed over the name, which replaces a link there instead of writing through it); the
    sources are read the same way (:func:`analyzer.core.paths.copy_regular`). ``dest`` a file, under a
    file, or unwritable: refused in one line (:class:`ScenarioError`) before anything is written.
    """
    from analyzer.core import paths
    game_dir = questions.SCENARIO_ROOT / game
    known = questions.games_with_questions()
    if game not in known or not game_dir.is_dir():
        from analyzer.core.errors import suggest
        raise ScenarioError("init", "game", f"unknown game {game!r}{suggest(game, known)}; allowed: {', '.join(known)}")
    chosen: dict[str, Scenario] = {}
    shipped = [scenario_mod.load(path) for path in scenario_mod.expand_targets([str(game_dir)])]
    if example is not None:
        stem = example[:-5] if example.endswith(".yaml") else example
        named = [sc for sc in shipped if sc.path.stem == stem and (question is None or sc.spec.question == question)]
        if not named:
            from analyzer.core.errors import suggest
            stems = sorted(sc.path.stem for sc in shipped if question is None or sc.spec.question == question)
            raise ScenarioError("init", "--example", f"no shipped example {example!r} of {game}"
                                f"{'/' + question if question else ''}{suggest(stem, stems)}; allowed: {', '.join(stems)}")
        chosen[named[0].spec.question] = named[0]
    for sc in shipped if example is None else []:
        if (question is None or sc.spec.question == question) and sc.spec.question not in chosen:
            chosen[sc.spec.question] = sc
    if not chosen:
        names = sorted({sc.spec.question for sc in shipped})
        raise ScenarioError("init", "question", f"no shipped example for {game}/{question}; questions with "
                            f"examples: {', '.join(names)}")
    copies: dict[str, tuple[Path, str]] = {}        # name under dest -> (shipped folder, name under it)
    for sc in chosen.values():
        copies[sc.path.name] = (sc.path.parent, sc.path.name)
        for point in sc.points:
            for entry in prepare_point(sc, point).data_files:
                base = sc.path.parent if entry["origin"] == "scenario" else game_dir
                copies[entry["path"]] = (base, entry["path"])
    _check_init_dest(dest)
    clash, blocked = [], []
    for rel in sorted(copies) if dest.is_dir() else []:
        kind = paths.entry_kind(dest, rel)
        if kind in ("file", "link"):
            clash.append(paths.printable(dest / rel))
        elif kind is not None:
            blocked.append(f"{paths.printable(dest / rel)} ("
                           + {"blocked": "a link or a file on the way", "dir": "a folder"}.get(kind, "not a regular file")
                           + ")")
    if blocked:
        raise ScenarioError("init", "DIR", f"cannot write {', '.join(blocked)}: init never writes through a link "
                            f"or replaces a folder; remove it or choose an empty folder")
    if clash and not force:
        raise ScenarioError("init", "DIR", f"{', '.join(clash)} already exist(s); choose an empty "
                            f"folder or pass --force to overwrite")
    try:
        paths.check_writable_root(dest)
    except (OSError, paths.UnsafePathError) as e:
        raise ScenarioError("init", "DIR", f"{paths.printable(dest)}: {e}") from None
    written: list[str] = []
    try:
        for rel, (base, name) in sorted(copies.items()):
            paths.copy_regular(base, name, dest, rel, overwrite=force)
            written.append(rel)
    except (OSError, paths.UnsafePathError) as e:
        if not force:              # created exclusively by this call: ours to remove
            for rel in written:
                try:
                    os.unlink(dest / rel)
                except OSError:
                    pass
        done = "nothing was written" if not force or not written else f"{len(written)} file(s) were written"
        why = e if isinstance(e, paths.UnsafePathError) else (e.strerror or e)
        where = "" if isinstance(e, paths.UnsafePathError) else f"{paths.printable(dest / rel)}: "
        raise ScenarioError("init", "DIR", f"{where}{why}; {done}") from None
    return sorted(dest / rel for rel in copies)


def _check_init_dest(dest: Path) -> None:
    """``init``'s DIR is a folder, or can be made one: not a file, not a link to nothing, not
    under a file (each refused in one line, :class:`ScenarioError`, before anything is written)."""
    from analyzer.core import paths
    shown = paths.printable(dest)
    if os.path.islink(dest) and not os.path.exists(dest):
        raise ScenarioError("init", "DIR", f"{shown}: is a link to nothing (a dangling symlink); give a folder")
    if os.path.lexists(dest) and not os.path.isdir(dest):
        raise ScenarioError("init", "DIR", f"{shown}: exists and is not a folder; give a folder")
    up = Path(os.path.abspath(dest)).parent
    while not os.path.lexists(up) and up != up.parent:
        up = up.parent
    if not os.path.isdir(up):
        raise ScenarioError("init", "DIR", f"{shown}: cannot be created: {paths.printable(up)} is a file, not a folder")


def write_comparison(cmp: Comparison, out_root: Path) -> Path:
    """A comparison folder ``<out>/<A file>-vs-<B file>/<run-id>/``: ``comparison.json`` (A, B and
    the paired differences B - A with CIs, placeholders, provenance), ``answers.parquet``
    (:func:`analyzer.outputs.answers.comparison_table`), ``comparison.png`` and ``report.html``."""
    from analyzer.outputs.answers import comparison_table
    doc = comparison_doc(cmp)
    digest = f"{cmp.a.digest[:8]}{cmp.b.digest[:8]}"
    name = f"{outputs.folder_name(cmp.a)}-vs-{outputs.folder_name(cmp.b)}"
    with outputs.RunFolderBuild(Path(out_root), name, digest) as build:
        tmp = build.tmp
        outputs.write_document(tmp, COMPARISON_JSON, doc)
        outputs.write_parquet(comparison_table(cmp.results_a, cmp.results_b, cmp.points), tmp / ANSWERS_TABLE)
        report.write_report(tmp)
    return build.path


def comparison_doc(cmp: Comparison) -> dict:
    """What ``compare --json`` prints and ``comparison.json`` holds."""
    from datetime import datetime, timezone

    from analyzer.core.version import __version__
    return {"a": str(cmp.a.path), "b": str(cmp.b.path), "name_a": cmp.a.name, "name_b": cmp.b.name,
            "game": cmp.a.spec.game, "question": cmp.a.spec.question, "seed": cmp.a.spec.seed,
            "version": __version__, "git_commit": outputs.git_commit(),
            "created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"), "points": cmp.points}
