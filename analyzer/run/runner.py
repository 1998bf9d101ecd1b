"""Running sweep points: chunked kernels, precision targets, common random numbers.

Trials are cut into chunks of ``CHUNK_TRIALS``; chunk ``c`` of a point always uses the
stream ``(seed, point key, c)``, so a result depends only on the seed, the point and the
trial count: never on the thread count, the batch size or which worker ran a chunk.
"""
from __future__ import annotations

import time

import dataclasses
import hashlib
import json
from typing import Callable

import numpy as np

from analyzer.core import interrupt
from analyzer.core.questions import ExactAnswer, ExactMetric, Metric, Prepared
from analyzer.core.ranking import group_differences
from analyzer.core.results import PointResult
from analyzer.core.scenario import Scenario, ScenarioDataError, SweepPoint
from analyzer.core.errors import ScenarioError
from analyzer.core.gamedata import DataError
from analyzer.core.stats import MetricAccumulator, MetricSummary, PairedAccumulator, Z95
from analyzer.run.backends import LOCAL
from analyzer.run.batches import batch_ranges
from kernels.driver import BATCH_CHUNKS, CHUNK_TRIALS
from kernels.record import chunk_sizes
#: Trial cap for a precision target when the scenario gives no ``max_trials`` (one definition,
#: in analyzer.core.scenario, which the trial guard counts with).
from analyzer.core.scenario import DEFAULT_MAX_TRIALS  # noqa: E402


def stream_key(*parts) -> int:
    """A stable 63-bit key from JSON-able parts (same parts -> same random streams)."""
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return int.from_bytes(hashlib.blake2b(blob, digest_size=8).digest(), "little") >> 1


def point_key(scenario: Scenario, point: SweepPoint) -> int:
    """Streams of a sweep point are keyed by the question and the point's swept values,
    so adding values to a sweep does not change the results of the other points."""
    return stream_key(scenario.spec.game, scenario.spec.question, point.swept)


#: ``compare`` cuts a point's trials into at least this many chunks (smaller chunks when
#: there are few trials), so its batch-means CI of B - A rests on >= 64 independent
#: paired batches; below this many trials it refuses (a CI would not be honest).
MIN_PAIRED_BATCHES = 64


def paired_chunk_size(n_trials: int) -> int:
    """Chunk size ``compare`` uses: ``CHUNK_TRIALS``, or less so that there are at least
    :data:`MIN_PAIRED_BATCHES` chunks (down to one trial per chunk, the per-trial paired
    variance)."""
    return max(1, min(CHUNK_TRIALS, n_trials // MIN_PAIRED_BATCHES))


def _check_precision_metric(scenario: Scenario, prepared: Prepared) -> int:
    names = [m.name for m in prepared.metrics]
    wanted = scenario.spec.precision_metric or scenario.question.primary_metric
    if wanted not in names:
        from analyzer.core.errors import suggest
        raise ScenarioError(str(scenario.path), "precision_metric",
                            f"got {wanted!r}{suggest(wanted, names)}; allowed: {', '.join(names)}")
    return names.index(wanted)


#: A point's checkpoint is saved at a batch boundary when at least this long has passed since
#: the last one (and always when a stop is requested): fast kernels do not spend their time
#: writing, and a SIGKILL loses at most the batch in flight or this much work.
CHECKPOINT_SECONDS = 0.25

#: ``on_checkpoint(acc, next_chunk, urgent)``: the point's sums so far and the first chunk not
#: in them; ``urgent`` when a stop was requested (save now, whatever the time since the last).
CheckpointHook = Callable[[MetricAccumulator, int, bool], None]


def _stop_if_requested(acc: MetricAccumulator, next_chunk: int, on_checkpoint: CheckpointHook | None) -> None:
    """Between kernel calls: on a stop request, save where the point stands, then stop."""
    try:
        interrupt.check()
    except interrupt.RunInterrupted:
        if on_checkpoint is not None:
            on_checkpoint(acc, next_chunk, True)
        raise


def point_chunks(scenario: Scenario, chunk_size: int = CHUNK_TRIALS) -> tuple[int, int]:
    """``(n_trials, n_chunks)`` a point runs at most: its trials, or ``max_trials`` for a precision target."""
    spec = scenario.spec
    n_trials = spec.trials if spec.precision is None else (spec.max_trials or DEFAULT_MAX_TRIALS)
    return n_trials, -(-n_trials // chunk_size)


def simulate_point(scenario: Scenario, point: SweepPoint, prepared: Prepared, *,
                   key: int | None = None, on_progress: Callable[[int], None] | None = None,
                   paired_with: Prepared | None = None,
                   chunk_size: int = CHUNK_TRIALS,
                   resume: tuple[MetricAccumulator, int] | None = None,
                   on_checkpoint: CheckpointHook | None = None,
                   backend=None,
                   ) -> tuple[MetricAccumulator, PairedAccumulator | None, MetricAccumulator | None]:
    """Run the kernel(s) of one point batch by batch.

    The chunks run where ``backend`` puts them (:mod:`analyzer.run.backends`: this process by
    default, or a Dask cluster); this function folds the pieces in, in chunk order, and tests a
    precision target at logical batch ends, so the backend never changes a result.

    With ``paired_with`` the other scenario's kernel runs on the same chunk streams and a
    :class:`PairedAccumulator` of B - A is kept (``analyzer compare``, which also passes a
    smaller ``chunk_size`` when there are few trials: see :func:`paired_chunk_size`).

    ``resume=(acc, next_chunk)`` continues a point from a checkpoint: the sums of chunks
    ``0 .. next_chunk - 1`` do not depend on how they were grouped, and a precision target is
    tested at the same logical batch ends (multiples of ``BATCH_CHUNKS`` chunks), so the result
    is the one an uninterrupted run gives. ``on_checkpoint`` is called at batch ends (see
    :data:`CHECKPOINT_SECONDS`) and when a stop is requested.
    """
    spec = scenario.spec
    key = point_key(scenario, point) if key is None else key
    n_metrics = len(prepared.metrics)
    if resume is not None:
        if paired_with is not None:
            raise ValueError("a paired run (compare) is not resumable")
        acc, start = resume
    else:
        acc, start = MetricAccumulator(n_metrics, prepared.n_bins, len(prepared.counters)), 0
    acc_b = (MetricAccumulator(len(paired_with.metrics), paired_with.n_bins, len(paired_with.counters))
             if paired_with else None)
    paired = PairedAccumulator(n_metrics) if paired_with else None
    n_trials, n_chunks = point_chunks(scenario, chunk_size)
    target_m = None if spec.precision is None else _check_precision_metric(scenario, prepared)
    if on_progress is not None and acc.trials:
        on_progress(acc.trials)          # restored from a checkpoint
    if paired_with is not None:          # float paired sums: one call per logical batch keeps them bit-identical
        for lo, hi in batch_ranges(n_chunks, start):
            hist, moments, counters = prepared.run_kernel(spec.seed, key, lo, hi, chunk_size, n_trials)
            acc.add_chunks(hist, moments, counters)
            hist_b, moments_b, counters_b = paired_with.run_kernel(spec.seed, key, lo, hi, chunk_size, n_trials)
            acc_b.add_chunks(hist_b, moments_b, counters_b)
            sizes = chunk_sizes(lo, hi, n_trials, chunk_size)
            paired.add_chunks(moments, moments_b, sizes)
            if on_progress is not None:
                on_progress(int(sizes.sum()))
            if _precision_met(spec, acc, target_m, prepared):
                break
            _stop_if_requested(acc, hi, on_checkpoint)
        return acc, paired, acc_b
    # integer sums: any split of a batch into pieces, run anywhere, gives the same result
    pieces = (backend or LOCAL).pieces(prepared, spec.seed, key, start, n_chunks, chunk_size, n_trials)
    try:
        for lo, hi, (hist, moments, counters) in pieces:
            acc.add_chunks(hist, moments, counters)
            if on_progress is not None:
                on_progress(int(chunk_sizes(lo, hi, n_trials, chunk_size).sum()))
            if hi < n_chunks and hi % BATCH_CHUNKS:          # inside a logical batch
                _stop_if_requested(acc, hi, on_checkpoint)
                continue
            if _precision_met(spec, acc, target_m, prepared):
                break
            if on_checkpoint is not None and hi < n_chunks:
                on_checkpoint(acc, hi, False)
            # a stop after the precision test: a resumed run starts with the next batch
            _stop_if_requested(acc, hi, on_checkpoint)
    finally:
        pieces.close()                   # a precision target met early: the backend drops what is left
    return acc, paired, acc_b


def _precision_met(spec, acc: MetricAccumulator, target_m: int | None, prepared: Prepared) -> bool:
    if target_m is None or acc.trials <= 1:
        return False
    metric = prepared.metrics[target_m]
    return acc.summary(target_m, metric.scale, metric.is_probability).half_width < spec.precision


def summarize(point: SweepPoint, prepared: Prepared, acc: MetricAccumulator,
              seconds: float = 0.0) -> PointResult:
    summaries, dists, clipped = {}, {}, {}
    for m, metric in enumerate(prepared.metrics):
        summaries[metric.name] = acc.summary(m, metric.scale, metric.is_probability)
        if metric.distribution:
            dists[metric.name] = acc.distribution(m, metric.scale)
        if acc.clipped(m):
            clipped[metric.name] = acc.clipped(m)
    notes = list(prepared.notes)
    for counter, n in zip(prepared.counters, acc.counters):
        if counter.note and n > 0:
            notes.append(f"{counter.note}: {int(n):,}")
    for name, n in clipped.items():
        notes.append(f"{name}: {n} trials above the histogram's top bin (mean and SE stay exact; "
                     f"the distribution's last bin means 'or more')")
    index = {metric.name: m for m, metric in enumerate(prepared.metrics)}
    pairs, cross = {}, set()
    for g in prepared.paired_groups:         # every pairwise difference of a group's options, exact sums
        rows = [index[name] for name in g.metrics]
        pairs[g.metrics[0]] = group_differences(
            g, acc.trials, [acc.exact_moment(r, 0) for r in rows], [acc.exact_moment(r, 1) for r in rows],
            acc.counters, prepared.metrics[rows[0]].scale)
        cross.update(range(g.counter_offset, g.counter_offset + g.n_pairs))
    rankings, derived = _derived(prepared, summaries, False, pairs, acc.trials)
    notes.extend(derived)
    return PointResult(point, list(prepared.metrics), acc.trials, summaries, dists, clipped,
                       list(prepared.placeholders), notes, seconds, data_files=list(prepared.data_files),
                       counters={c.name: int(n) for k, (c, n) in enumerate(zip(prepared.counters, acc.counters))
                                 if k not in cross},
                       entity_columns=dict(prepared.entity_columns), rankings=rankings)


def _derived(prepared: Prepared, summaries: dict, exact: bool, pairs: dict, trials: int) -> tuple[list, list[str]]:
    """The point's rankings and derived notes (:class:`Prepared`: ``derived_ranking``, ``derived_notes``)."""
    rankings = ([] if prepared.derived_ranking is None
                else list(prepared.derived_ranking(summaries, exact, pairs, trials)))
    if prepared.derived_notes is None:
        return rankings, []
    if prepared.derived_ranking is None:
        return rankings, list(prepared.derived_notes(summaries, exact))
    return rankings, list(prepared.derived_notes(summaries, exact, rankings))


def exact_point(point: SweepPoint, prepared: Prepared) -> PointResult:
    answer = prepared.exact()
    answers: dict[str, ExactMetric] = answer.metrics if isinstance(answer, ExactAnswer) else answer
    notes = list(prepared.notes) + (list(answer.notes) if isinstance(answer, ExactAnswer) else [])
    summaries, dists = {}, {}
    for metric in prepared.metrics:
        if metric.name not in answers:
            continue
        a = answers[metric.name]
        summaries[metric.name] = MetricSummary(float(a.mean), 0.0, float(a.mean), float(a.mean))
        if a.values is not None and metric.distribution:
            keep = np.asarray(a.probs) > 0
            dists[metric.name] = (np.asarray(a.values)[keep], np.asarray(a.probs)[keep])
    metrics = [m for m in prepared.metrics if m.name in summaries]
    rankings, derived = _derived(prepared, summaries, True, {}, 0)
    notes.extend(derived)
    return PointResult(point, metrics, 0, summaries, dists, {}, list(prepared.placeholders),
                       notes, 0.0, exact=True, data_files=list(prepared.data_files),
                       entity_columns=dict(prepared.entity_columns), rankings=rankings)


def warm_up(prepared: list[Prepared], notify=None) -> float:
    """Compile every point's kernel (or load it from numba's disk cache) with a one-trial call
    that is thrown away, so compile time stays out of the timed run and its trials/s; results
    do not change (a chunk's stream depends only on (seed, point, chunk)). ``notify(text)``, if
    given, hears before and after a kernel this process has not loaded yet. Returns the seconds."""
    t0 = time.perf_counter()
    cold = [p for p in prepared if not getattr(p.kernel, "signatures", True)]
    if cold and notify:
        notify("loading the kernels (compiled on a first run on this machine: up to a minute)")
    for prep in prepared:
        prep.run_kernel(0, 0, 0, 1, 1, 1)
    seconds = time.perf_counter() - t0
    if cold and notify and seconds >= 1:
        notify(f"kernels ready in {seconds:.1f} s (not counted in trials/s)")
    return seconds


class StrictRefused(ScenarioError):
    """``strict: true`` refused a point: ``refused`` lists what it refused (placeholders and
    values a worked example only bounds, in the order the point uses them)."""

    def __init__(self, file: str, refused: list):
        listed = "; ".join(str(p) for p in refused[:5])
        more = f" and {len(refused) - 5} more" if len(refused) > 5 else ""
        super().__init__(file, "strict",
                         f"strict: true refuses placeholder values: {listed}{more} (a value a worked "
                         f"example only bounds counts as a placeholder). Fill them with your copy of "
                         f"the rules or set strict: false")
        self.refused = list(refused)


def prepare_point(scenario: Scenario, point: SweepPoint, *, strict: bool | None = None) -> Prepared:
    """Compile one point, enforcing ``strict`` against every placeholder it uses (``strict``:
    the scenario's own setting when None; True checks a point as ``strict: true`` would,
    raising :class:`StrictRefused`)."""
    ctx = scenario.context(point)
    try:
        prepared = scenario.question.prepare(point.params, ctx)
    except DataError as e:
        if isinstance(e, ScenarioError) or str(scenario.path) in str(e):
            raise
        # a parameter that fails against game data, or a data file problem: name the scenario
        where = "" if not point.swept else " (at sweep point " + ", ".join(f"{k}={v!r}" for k, v in point.swept.items()) + ")"
        raise ScenarioDataError(str(scenario.path), "", f"{e}{where}") from None
    used = list(prepared.placeholders)
    seen = {(p.path, p.source) for p in used}
    for ph in list(point.placeholders) + list(ctx.placeholders):
        if (ph.path, ph.source) not in seen:
            used.append(ph)
            seen.add((ph.path, ph.source))
    what_ifs = tuple(f"rules.{o.name} = {point.rules[o.name]} is NOT a reading of the source (a what-if kept for "
                     f"comparison): {o.doc}" for o in scenario.question.rule_options
                     if point.rules.get(o.name) in o.what_if)
    prepared = dataclasses.replace(prepared, placeholders=tuple(used), data_files=tuple(ctx.data_files),
                                   notes=tuple(prepared.notes) + what_ifs)
    refused = [p for p in used if p.refused_by_strict]
    if (scenario.spec.strict if strict is None else strict) and refused:
        raise StrictRefused(str(scenario.path), refused)
    return prepared


def strict_refusals(scenario: Scenario) -> list[tuple[SweepPoint, list]]:
    """What ``strict: true`` would refuse at each point of ``scenario`` (every point prepared with
    ``strict`` forced on, as :func:`prepare_point` refuses it; no kernel runs): ``(point, refused)``."""
    out = []
    for point in scenario.points:
        try:
            prepare_point(scenario, point, strict=True)
            out.append((point, []))
        except StrictRefused as e:
            out.append((point, e.refused))
    return out


def paired_summary(paired: PairedAccumulator, metrics: list[Metric], acc_a: MetricAccumulator | None = None,
                   acc_b: MetricAccumulator | None = None) -> dict[str, MetricSummary]:
    """B - A of every metric. ``acc_a`` / ``acc_b`` (the arms' own sums, which
    :func:`simulate_point` returns) give the per-arm intervals a difference resting on few
    differing batches is bounded by (:meth:`PairedAccumulator.summary`); a non-proportion
    metric needs them then."""
    out = {}
    for i, m in enumerate(metrics):
        arms = {} if acc_a is None or acc_b is None else {
            "arm_a": acc_a.summary(i, m.scale, m.is_probability), "arm_b": acc_b.summary(i, m.scale, m.is_probability)}
        out[m.name] = paired.summary(i, m.scale, proportion=m.is_probability, **arms)
    return out


__all__ = ["CHUNK_TRIALS", "BATCH_CHUNKS", "simulate_point", "summarize",
           "exact_point", "prepare_point", "point_key", "point_chunks", "stream_key", "Z95"]
