"""The best option of every Monte-Carlo ranking of a run played again on fresh streams, with its
selection bias (issue 30; docs/balance.md "Rankings", "Selection bias").

A ranking's best option has the largest of K noisy means, so its mean is biased upward (the
winner's curse). After a Monte-Carlo run (:func:`analyzer.api.run`) the best option of each of its
rankings is played again, for the trials its point ran (or ``trials``), on random streams
independent of the run's: the same seed, the stream key ``stream_key(game, question, the point's
swept values, FRESH_STREAM)`` (the run's key, :func:`analyzer.run.runner.point_key`, hashes the same
parts without that name), chunk ``c`` drawing from ``(seed, fresh key, c)`` as everywhere; the sums
are exact integers, so the result is reproducible for a seed and bit-identical for any thread count
and backend (the pieces run where the run's ran, :mod:`analyzer.run.backends`).

* Options inside one point (fleets, allocations, patterns): the point restricted to its best
  option by :meth:`analyzer.core.questions.Question.option_params` (``[best]``) is prepared and run;
  the best's metric is :func:`analyzer.core.ranking.option_metric`'s. A question whose hook gives
  None is not re-estimated, and a note says so.
* Options that are the sweep's points (``Ranking.own``: ``points_efficiency``'s units): the best's
  point is run again as it is.

The statistics are ``analyzer search``'s (:func:`analyzer.core.ranking.fresh_estimate`): the fresh
mean with its 95% Student t interval is unbiased for the best's true mean given the choice (the
choice depends on the run's streams only), and run - fresh, SE ``sqrt(SE_run^2 + SE_fresh^2)``
(independent streams), estimates the selection bias of the run's mean. They go on the ranking
(``Ranking.reestimate``) and into one note line per ranking; the trials are counted apart from the
run's. Nothing is checkpointed: a run stopped here resumes with every point done and plays the
re-estimation again from its first trial (the same answer; at most the best options' trials lost).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

from analyzer.core import interrupt
from analyzer.core.questions import Metric, Prepared
from analyzer.core.ranking import REESTIMATE_LEVEL, Ranking, fresh_estimate, option_metric
from analyzer.core.results import PointResult
from analyzer.core.scenario import Scenario, SweepPoint
from analyzer.core.stats import MetricAccumulator
from analyzer.run.backends import LOCAL
from analyzer.run.batches import chunk_count
from analyzer.run.runner import point_key, prepare_point, stream_key
from kernels.driver import CHUNK_TRIALS
from kernels.record import chunk_sizes

#: the stream name the re-estimation's stream key is derived from (``analyzer search``'s is
#: ``search-reestimate``: the two never share streams)
FRESH_STREAM = "run-reestimate"


@dataclass
class Job:
    """One best option to play: the point that plays it (``point``, ``prepared``, the run's
    ``result`` of the ranking), its metric there, and the rankings (``(result index, ranking
    index)``) that get the estimate."""

    point: SweepPoint
    prepared: Prepared
    metric: Metric
    ranking: Ranking
    race_mean: float
    race_se: float
    race_trials: int
    trials: int
    targets: list[tuple[int, int]]


def method(trials: int) -> str:
    """How a re-estimate was made (the wording of ``analyzer search``'s, for a run)."""
    return (f"the best option played {trials:,} more trials on random streams independent of the run's (same "
            f"seed, stream key derived by the name {FRESH_STREAM!r}); the fresh mean is unbiased for the option's "
            f"true mean given the choice (the choice depends on the run's streams only); run - fresh estimates "
            f"the selection bias of the run's mean, its SE sqrt(SE_run^2 + SE_fresh^2) (independent streams); "
            f"Student t {REESTIMATE_LEVEL:.0%} intervals, the option's own (not simultaneous); these trials are "
            f"not in the run's trials")


def check_trials(trials: int | None) -> None:
    """``trials`` of the re-estimation: None (each point's) or at least 2 (refused before any trial runs)."""
    if trials is not None and (isinstance(trials, bool) or not isinstance(trials, int) or trials < 2):
        raise ValueError(f"--reestimate-trials: got {trials!r}; allowed: an integer >= 2")


def plan(scenario: Scenario, results: list[PointResult], prepared: list[Prepared],
         trials: int | None = None) -> tuple[list[Job], list[tuple[int, str]]]:
    """The best options to play (every Monte-Carlo ranking of ``results`` of at least two options
    whose run has at least two trials) and the notes of the rankings that cannot be
    (``(result index, note)``). ``trials``: each best's trials (default: its point's)."""
    check_trials(trials)
    q = scenario.question
    jobs: list[Job] = []
    skipped: list[tuple[int, str]] = []
    groups: dict = {}
    for ri, r in enumerate(results):
        for k, rk in enumerate(r.rankings):
            if r.exact or len(rk.options) < 2:
                continue
            if rk.own is not None:          # options are sweep points: one job per group of points
                groups.setdefault((rk.metric, rk.options), []).append((ri, k))
                continue
            if r.trials < 2:
                skipped.append((ri, _not_done(rk, "the run has fewer than 2 trials")))
                continue
            params = q.option_params(r.point.params, [rk.best])
            if params is None:
                skipped.append((ri, _not_done(rk, f"{scenario.spec.game}/{scenario.spec.question} cannot play one "
                                              f"of its options alone: Question.option_params gives none")))
                continue
            point = dataclasses.replace(r.point, params=params)
            prep = prepare_point(scenario, point)
            metric, race = option_metric(prep.metrics, rk.metric, rk.best), option_metric(r.metrics, rk.metric, rk.best)
            if metric is None or race is None:
                raise ValueError(f"{scenario.spec.game}/{scenario.spec.question}: the point restricted to {rk.best!r} "
                                 f"(Question.option_params) has no metric of that option of the {rk.metric} ranking")
            facts, run_facts = prep.entity_columns.get(rk.best), r.entity_columns.get(rk.best)
            if facts is not None and run_facts is not None and facts != run_facts:
                raise ValueError(f"{scenario.spec.game}/{scenario.spec.question}: the point restricted to {rk.best!r} "
                                 f"(Question.option_params) does not play it as the run did: {facts} != {run_facts}")
            s = r.summaries[race.name]
            jobs.append(Job(point, prep, metric, rk, s.mean, s.se, r.trials, trials or r.trials, [(ri, k)]))
    for (name, _), members in groups.items():
        rk = results[members[0][0]].rankings[members[0][1]]
        at = next(ri for ri, k in members if results[ri].rankings[k].own == rk.best)
        r = results[at]
        if r.trials < 2:
            skipped += [(ri, _not_done(rk, "the run has fewer than 2 trials")) for ri, _ in members]
            continue
        metric = next(m for m in prepared[at].metrics if m.name == name)
        s = r.summaries[name]
        jobs.append(Job(r.point, prepared[at], metric, rk, s.mean, s.se, r.trials, trials or r.trials, members))
    return jobs, skipped


def _not_done(rk: Ranking, why: str) -> str:
    return (f"ranking by {rk.metric}: the best, {rk.best}, is not re-estimated on fresh streams ({why}); its mean "
            f"is the largest of {len(rk.options)} noisy means, biased upward: re-run it with another seed for an "
            f"unbiased estimate")


def fresh_key(scenario: Scenario, point: SweepPoint) -> int:
    """The re-estimation's stream key of ``point`` (module docstring)."""
    key = stream_key(scenario.spec.game, scenario.spec.question, point.swept, FRESH_STREAM)
    if key == point_key(scenario, point):      # a 63-bit hash collision: never seen, but never silently
        raise RuntimeError("the fresh stream key equals the run's")
    return key


def play(scenario: Scenario, job: Job, *, backend=None, on_trials: Callable[[int], None] | None = None) -> dict:
    """Play ``job``'s best option on the fresh streams; its ``Ranking.reestimate`` record. Stops
    between kernel calls on a stop request (:class:`analyzer.core.interrupt.RunInterrupted`)."""
    prep = job.prepared
    acc = MetricAccumulator(len(prep.metrics), prep.n_bins, len(prep.counters))
    pieces = (backend or LOCAL).pieces(prep, scenario.spec.seed, fresh_key(scenario, job.point), 0,
                                       chunk_count(job.trials), CHUNK_TRIALS, job.trials)
    try:
        for lo, hi, arrays in pieces:
            acc.add_chunks(*arrays)
            if on_trials is not None:
                on_trials(int(chunk_sizes(lo, hi, job.trials, CHUNK_TRIALS).sum()))
            interrupt.check()
    finally:
        pieces.close()
    m = [x.name for x in prep.metrics].index(job.metric.name)
    est = fresh_estimate(job.race_mean, job.race_se, job.race_trials, job.trials, acc.exact_moment(m, 0),
                         acc.exact_moment(m, 1), job.metric.scale)
    return {"option": job.ranking.best, "metric": job.metric.name, "trials": job.trials,
            "race_trials": job.race_trials, "stream": FRESH_STREAM, "level": REESTIMATE_LEVEL, **est,
            "method": method(job.trials)}


def note(rk: Ranking, doc: dict) -> str:
    """The one self-contained note line of a re-estimated ranking."""
    lvl = f"{doc['level']:.0%}"
    return (f"ranking by {rk.metric}: the best, {doc['option']}, re-estimated on {doc['trials']:,} fresh trials: "
            f"{doc['metric']} {doc['fresh_mean']:.4f} [{lvl} CI {doc['fresh_low']:.4f}, {doc['fresh_high']:.4f}] "
            f"against the run's {doc['race_mean']:.4f}; selection bias (run - fresh) {doc['race_minus_fresh']:+.4f} "
            f"[{lvl} CI {doc['race_minus_fresh_low']:+.4f}, {doc['race_minus_fresh_high']:+.4f}] ({doc['method']})")


def reestimate(scenario: Scenario, results: list[PointResult], prepared: list[Prepared], *,
               trials: int | None = None, backend=None, progress=None) -> int:
    """Re-estimate the best option of every Monte-Carlo ranking of ``results`` (module docstring), in
    place: ``Ranking.reestimate`` set and a note added to every point carrying the ranking (a ranking
    that cannot be gets a note saying why). ``progress(name, total)`` as :func:`analyzer.api.run`'s.
    Returns the trials played."""
    jobs, skipped = plan(scenario, results, prepared, trials)
    for ri, text in skipped:
        results[ri].notes.append(text)
    total = sum(j.trials for j in jobs)
    tick = progress(f"{scenario.name}: the best re-estimated", total) if progress and total else None
    for job in jobs:
        doc = play(scenario, job, backend=backend, on_trials=tick)
        for ri, k in job.targets:
            r = results[ri]
            r.rankings[k] = dataclasses.replace(r.rankings[k], reestimate=doc)
            r.notes.append(note(r.rankings[k], doc))
    return total


def reestimates(results: list[PointResult]) -> list[dict]:
    """Every ``Ranking.reestimate`` of ``results``, once (a ranking of the sweep's points carries the
    same one on each of its points)."""
    out: list[dict] = []
    for r in results:
        for rk in r.rankings:
            if rk.reestimate is not None and not any(d is rk.reestimate for d in out):
                out.append(rk.reestimate)
    return out
