"""``analyzer search``: the best of very many options by racing on common random numbers
(issue 30; docs/balance.md "Search").

Successive elimination with a doubling schedule fixed in advance:

* trial counts ``N_0 = first``, ``N_{r+1} = min(2 N_r, max_trials)`` (round ``r`` runs trials
  ``N_{r-1} .. N_r - 1``), so at most ``R`` rounds, ``R`` known before any trial runs;
* every round plays every surviving option on the SAME trials (common random numbers: the
  loadout question plays every fleet of a trial from the same stream state), and the paired
  statistics of every two survivors over all ``N_r`` trials so far come from exact integer sums
  (:class:`analyzer.core.ranking.PairedDifferences`);
* the differences to the current best get intervals at the Bonferroni level over EVERY pair of
  the ``K`` options in EVERY one of the ``R`` rounds (``R K (K-1) / 2`` two-sided intervals,
  Student t with ``N_r - 1`` degrees of freedom at ``1 - (1 - level) / (R K (K-1))``): the
  comparisons actually made depend on the data (which options survive, which is the best), and
  intervals that hold for all of them at once hold for whichever are made;
* an option whose upper bound of ``option - best`` is below 0 is dropped (the data show it is
  worse than the best); the search stops when one option is left, when every survivor's upper
  bound of ``survivor - chosen`` is at most ``margin`` (the chosen option is within the margin of
  every survivor), or after the round that reaches ``max_trials``.

Guarantee (under the assumptions docs/balance.md states): with probability >= ``level`` every
interval of every round covers its true difference; then no best option is ever dropped, and
the true mean of the chosen option is within ``gap_bound`` (the largest upper bound of
``survivor - chosen`` at the end, at least 0) of the best option's: ``gap_bound = 0`` when one
option is left (it is the best) and ``<= margin`` when the search stopped on the margin.

The options come from a :class:`Space` that the scenario's question declares
(:attr:`analyzer.core.questions.Question.search_space`; today a campaign loadout question's fleets,
optionally crossed with SO plans, in the game's ``search_space`` module), which runs its kernel on
the surviving options only, over the chunk ranges of the round, with the scenario's own stream key: option
``i``'s value in trial ``t`` is the one ``analyzer run`` of the file gives it (the first fleet
of the file always plays first, as the stream's anchor: the kernel continues each trial's stream
from the first fleet's, so keeping it first keeps every option's trials those of a full run).

Re-estimation on fresh streams (:func:`reestimate`): the chosen option's race mean is the largest
of several noisy means, biased upward (the winner's curse). After the race the survivors (the
chosen option first) play again on streams independent of the race's (:meth:`Space.fresh`: a
stream key derived from the race's by another stream name, :data:`FRESH_STREAM`; the same seed), so
their fresh means are unbiased for their true means given the choice, and ``race - fresh`` with
its interval (independent streams: the variances add) estimates the selection bias. These trials
are counted apart from ``trials_spent``.
"""
from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol

import numpy as np

from analyzer.core import interrupt
from analyzer.core.errors import ScenarioError
from analyzer.core.ranking import (REESTIMATE_LEVEL, PairedDifferences, exact_se, fresh_estimate, pair_index, rank,
                                   t_quantile)

#: the first round's trials (one loadout chunk) and the default trial cap
DEFAULT_FIRST = 4096
DEFAULT_MAX_TRIALS = 262_144
#: separator between a fleet's name and its SO plan in an option's name (``--so``)
SO_SEP = "--"
#: the stream name the re-estimation's stream key is derived from (:meth:`Space.fresh`)
FRESH_STREAM = "search-reestimate"


@dataclass
class Block:
    """What a :class:`Space` returns for the options ``indices`` over trials ``n_from .. n_to - 1``:
    per option the sum and the sum of squares of its values, and per pair ``i < j`` of positions in
    ``indices`` (:func:`analyzer.core.ranking.pair_index` order) the sum of products, all exact
    integers in units of ``1 / scale``; ``runs``: option-trials the kernel played (with an anchor
    that is not among ``indices``, more than ``len(indices) x trials``)."""

    sums: list[int]
    sumsq: list[int]
    cross: list[int]
    runs: int


class Space(Protocol):
    """Options to search among, evaluated on common random numbers."""

    names: list[str]
    #: trial counts of the rounds must be multiples of this (except a last round ending at max_trials)
    chunk: int
    #: values are integers in units of ``1 / scale``
    scale: int
    metric: str
    higher_is_better: bool

    def evaluate(self, indices: list[int], n_from: int, n_to: int,
                 on_trials: Callable[[int], None] | None = None) -> Block: ...

    def fresh(self) -> "Space":
        """The same options on random streams independent of this space's (same seed, a stream key
        derived deterministically from this one's by the stream name :data:`FRESH_STREAM`): what
        :func:`reestimate` plays."""
        ...


def refuse_crossing(sc, so_plans: list[str] | None, policies: list[str] | None, why: Callable[[str], str]) -> None:
    """Refuse ``--so`` and ``--policy`` for a space whose options are not crossed with SO plans or
    policies: a :class:`ScenarioError` on the flag, ``got <values>; <why(flag)>``."""
    for flag, given in (("--so", so_plans), ("--policy", policies)):
        if given:
            raise ScenarioError(str(sc.path), flag, f"got {', '.join(given)}; {why(flag)}")


class PointSpace:
    """What the games' option spaces share (a :class:`Space` racing the options of a scenario's one
    point on its question's kernel, with the file's stream key; values in units of 1): the sweep and
    the precision target refused, the point, its stream key and the kernel's chunk; :meth:`prepared`
    (the last prepared point kept), the data files and placeholders of every point prepared,
    :meth:`fresh`, and the chunk-stepped kernel calls of an evaluation. A space makes its prepared
    point in :meth:`_prepare` (with :meth:`_prepare_point`) and its :class:`Block` in ``evaluate``
    (with :meth:`_kernel_calls` or :meth:`_accumulate`, and :func:`paired_block`)."""

    scale = 1

    def __init__(self, sc):
        from analyzer.run.runner import point_key
        from kernels.driver import CHUNK_TRIALS
        file = str(sc.path)
        if sc.spec.sweep:
            raise ScenarioError(file, "sweep", "search races the options of one point: remove sweep")
        if sc.spec.precision is not None:
            raise ScenarioError(file, "precision", "search sets its own trial counts: remove precision")
        self.sc = sc
        self.point = sc.points[0]
        self.key = point_key(sc, self.point)
        self.chunk = CHUNK_TRIALS
        self.data_files: list[dict] = []
        self.placeholders: list = []
        self._seen: set = set()
        self._last = None

    def _prepare(self, indices: list[int]):
        """What :meth:`prepared` returns for the options ``indices`` (the space's own)."""
        raise NotImplementedError

    def prepared(self, indices: list[int]):
        """The point playing the options ``indices`` (:meth:`_prepare`); the last one is kept (the
        first round reuses the one :func:`settings_of` made of every option)."""
        if self._last is None or self._last[0] != tuple(indices):
            self._last = (tuple(indices), self._prepare(list(indices)))
        return self._last[1]

    def _prepare_point(self, params, wrap: Callable | None = None):
        """The point with ``params`` prepared (and passed through ``wrap``), its data files and
        placeholders added to the space's (each once, in the order first read)."""
        from analyzer.run.runner import prepare_point
        prep = prepare_point(self.sc, dataclasses.replace(self.point, params=params))
        if wrap is not None:
            prep = wrap(prep)
        for d in prep.data_files:
            if d not in self.data_files:
                self.data_files.append(d)
        for ph in prep.placeholders:
            if (ph.path, ph.source) not in self._seen:
                self._seen.add((ph.path, ph.source))
                self.placeholders.append(ph)
        return prep

    def fresh(self):
        """The same options on streams independent of the race's (:func:`reestimate`): the file's
        seed, with the stream key of the point's own parts plus the stream name :data:`FRESH_STREAM`
        (the race's key, :func:`analyzer.run.runner.point_key`, hashes the parts without it). The
        prepared points, data files and placeholders are shared."""
        import copy

        from analyzer.run.runner import stream_key
        other = copy.copy(self)
        other.key = stream_key(self.sc.spec.game, self.sc.spec.question, self.point.swept, FRESH_STREAM)
        if other.key == self.key:       # a 63-bit hash collision: never seen, but never silently
            raise RuntimeError("the fresh stream key equals the race's")
        return other

    def _kernel_calls(self, prep, n_from: int, n_to: int, options: int,
                      on_trials: Callable[[int], None] | None = None, max_chunks: int | None = None):
        """The kernel's output for the chunks of trials ``n_from .. n_to - 1``, one call per chunk and
        thread (at most ``max_chunks`` chunks a call), so a stop request waits for one chunk of every
        option, and only that many chunks' histograms and pair sums are held at once (integer sums:
        any split gives the same result). After each call is consumed: ``on_trials(trials x
        options)``, then a stop request is honoured (:func:`analyzer.core.interrupt.check`)."""
        import numba

        from kernels.record import chunk_sizes
        c_lo, c_hi = n_from // self.chunk, -(-n_to // self.chunk)
        threads = numba.get_num_threads()
        step = max(1, threads if max_chunks is None else min(threads, max_chunks))
        for lo in range(c_lo, c_hi, step):
            hi = min(lo + step, c_hi)
            yield prep.run_kernel(self.sc.spec.seed, self.key, lo, hi, self.chunk, n_to)
            if on_trials is not None:
                on_trials(int(chunk_sizes(lo, hi, n_to, self.chunk).sum()) * options)
            interrupt.check()

    def _accumulate(self, prep, n_from: int, n_to: int, options: int,
                    on_trials: Callable[[int], None] | None = None):
        """:meth:`_kernel_calls` folded into one :class:`analyzer.core.stats.MetricAccumulator`."""
        from analyzer.core.stats import MetricAccumulator
        acc = MetricAccumulator(len(prep.metrics), prep.n_bins, len(prep.counters))
        for out in self._kernel_calls(prep, n_from, n_to, options, on_trials):
            acc.add_chunks(*out)
        return acc


def paired_block(acc, prep, group, positions: list[int], n_group: int, runs: int) -> Block:
    """The :class:`Block` of the options at ``positions`` of the paired ``group`` (of ``n_group``
    metrics) of ``prep``, from the accumulator ``acc``: their exact sums and sums of squares, and the
    cross sum of every two of them (in the order of ``positions``)."""
    rows = {x.name: r for r, x in enumerate(prep.metrics)}
    sums = [acc.exact_moment(rows[group.metrics[g]], 0) for g in positions]
    sumsq = [acc.exact_moment(rows[group.metrics[g]], 1) for g in positions]
    pairs = acc.counters[group.counter_offset: group.counter_offset + group.n_pairs]
    m = len(positions)
    cross = [int(pairs[pair_index(min(positions[a], positions[c]), max(positions[a], positions[c]), n_group)])
             for a in range(m) for c in range(a + 1, m)]
    return Block(sums, sumsq, cross, runs)


def schedule(first: int, max_trials: int) -> list[int]:
    """Cumulative trial counts of the rounds: ``first, 2 first, 4 first, ...`` up to ``max_trials``
    (the last one is ``max_trials``)."""
    out = [min(first, max_trials)]
    while out[-1] < max_trials:
        out.append(min(2 * out[-1], max_trials))
    return out


def multiplier(k: int, rounds: int, n: int, level: float) -> float:
    """The interval multiplier: Student t with ``n - 1`` dof at ``1 - (1 - level) / (rounds k (k-1))``
    (Bonferroni over every pair of the ``k`` options in every round, two-sided)."""
    family = max(1, rounds * k * (k - 1) // 2)
    return t_quantile(1 - (1 - level) / (2 * family), max(n - 1, 1))


@dataclass
class Round:
    index: int
    trials: int            # cumulative trials after the round
    block: int             # trials this round ran per option
    options: int           # options played this round
    kept: int              # options kept after it
    runs: int              # option-trials the kernel played this round (anchor included)
    multiplier: float
    best: str
    dropped: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass
class Search:
    names: list[str]
    metric: str
    level: float
    margin: float
    first: int
    max_trials: int
    rounds_planned: int
    higher_is_better: bool = True
    rounds: list[Round] = field(default_factory=list)
    chosen: str | None = None
    stop: str | None = None                   # one_left | within_margin | max_trials
    gap_bound: float | None = None
    survivors: list[dict] = field(default_factory=list)
    tied: list[str] = field(default_factory=list)
    trials_spent: int = 0                     # option-trials of surviving options (sum over rounds; the race only)
    runs: int = 0                             # option-trials the kernel played (anchor included; the race only)
    final_trials: int = 0
    wall_seconds: float = 0.0                 # the race and the re-estimation
    reestimate: "Reestimate | None" = None

    @property
    def exhaustive_trials(self) -> int:
        """Every option evaluated at the final trial count (the same final precision)."""
        return len(self.names) * self.final_trials

    def guarantee(self) -> str:
        lvl = f"{self.level:.0%}"
        pairs = len(self.names) * (len(self.names) - 1) // 2
        fam = (f"Bonferroni over all {pairs:,} pair{'s' if pairs != 1 else ''} of the {len(self.names)} options "
               f"in each of the {self.rounds_planned} planned round{'s' if self.rounds_planned != 1 else ''}")
        if self.stop == "one_left":
            what = f"{self.chosen} is the best option"
        else:
            what = (f"{self.chosen} is the best option or within {self.gap_bound:.4g} of the best's mean "
                    f"{self.metric}" + (f" (the margin {self.margin:g})" if self.stop == "within_margin" else ""))
        return (f"with probability >= {lvl}: {what}, and the best option is among the survivors "
                f"({fam}; paired t intervals on common random numbers; docs/balance.md 'Search')")


def run_search(space: Space, *, level: float = 0.95, margin: float = 0.0, first: int | None = None,
               max_trials: int = DEFAULT_MAX_TRIALS, on_round: Callable[[int, int, int], None] | None = None,
               on_trials: Callable[[int], None] | None = None, resume: dict | None = None,
               on_checkpoint: Callable[[dict], None] | None = None) -> Search:
    """Race the options of ``space`` (module docstring). ``on_round(round, options, block)`` before
    each round; ``on_trials(n)`` as option-trials complete. Ctrl-C / SIGTERM (inside
    :func:`analyzer.core.interrupt.handling`) stop between kernel calls: :class:`RunInterrupted`.
    ``on_checkpoint(state)`` hears the search's state after every round that does not end it;
    ``resume=state`` continues from it (exact integer sums: the result is the uninterrupted one)."""
    t0 = time.perf_counter()
    names = list(space.names)
    k = len(names)
    first = first or max(space.chunk, math.ceil(DEFAULT_FIRST / space.chunk) * space.chunk)
    if k < 2:
        raise ValueError("search needs at least two options")
    if first % space.chunk and first < max_trials:
        raise ValueError(f"first round trials must be a multiple of {space.chunk}")
    if not 0 < level < 1:
        raise ValueError("level must be in (0, 1)")
    if not margin >= 0 or not math.isfinite(margin):
        raise ValueError("margin must be a finite number >= 0")
    plan = schedule(first, max_trials)
    s = Search(names, space.metric, level, margin, first, max_trials, len(plan), space.higher_is_better)
    alive = list(range(k))
    sums = [0] * k
    sumsq = [0] * k
    cross: dict[tuple[int, int], int] = {}
    n_done = 0
    ranking = None
    if resume is not None:
        alive = [names.index(n) for n in resume["alive"]]
        for n, a, q in zip(resume["alive"], resume["sums"], resume["sumsq"]):
            sums[names.index(n)], sumsq[names.index(n)] = int(a), int(q)
        cross = {(names.index(a), names.index(b)): int(v) for a, b, v in resume["cross"]}
        n_done = int(resume["n_done"])
        s.rounds = [Round(**r) for r in resume["rounds"]]
        s.trials_spent, s.runs = int(resume["trials_spent"]), int(resume["runs"])
    for r, n_to in enumerate(plan):
        if n_to <= n_done:                      # done before the resume
            continue
        block = n_to - n_done
        if on_round is not None:
            on_round(r, len(alive), block)
        b = space.evaluate(alive, n_done, n_to, on_trials)
        m = len(alive)
        for a, i in enumerate(alive):
            sums[i] += b.sums[a]
            sumsq[i] += b.sumsq[a]
            for c in range(a + 1, m):
                key = (i, alive[c])
                cross[key] = cross.get(key, 0) + b.cross[pair_index(a, c, m)]
        n_done = n_to
        s.trials_spent += m * block
        s.runs += b.runs
        # the survivors' paired statistics over all trials so far, ranked with the search's multiplier:
        # rank() forms t(n-1) at 1 - (1 - lvl) / (m (m-1)); lvl makes it the family's
        c_mult = multiplier(k, len(plan), n_done, level)
        pairs = PairedDifferences.from_sums(n_done, [sums[i] for i in alive], [sumsq[i] for i in alive],
                                            [cross[(alive[a], alive[c])] for a in range(m) for c in range(a + 1, m)],
                                            space.scale)
        means = [sums[i] / (n_done * space.scale) for i in alive]
        lvl = 1 - (1 - level) * max(1, m * (m - 1) // 2) / max(1, len(plan) * k * (k - 1) // 2)
        ranking = rank([names[i] for i in alive], means, pairs, metric=space.metric,
                       higher_is_better=space.higher_is_better, level=lvl)
        kept = [o.name for o in ranking.options if o.in_best_set]
        dropped = [o.name for o in ranking.options if not o.in_best_set]
        s.rounds.append(Round(r, n_done, block, m, len(kept), b.runs, c_mult, ranking.best, dropped))
        alive = [i for i in alive if names[i] in set(kept)]
        others = [o for o in ranking.options if o.in_best_set and o.name != ranking.best]
        sign = 1.0 if space.higher_is_better else -1.0
        worst_gap = max([0.0] + [sign * (o.diff_high if sign > 0 else o.diff_low) for o in others])
        if len(alive) == 1:
            s.stop, s.gap_bound = "one_left", 0.0
        elif worst_gap <= margin:
            s.stop, s.gap_bound = "within_margin", worst_gap
        elif n_done >= max_trials:
            s.stop, s.gap_bound = "max_trials", worst_gap
        if s.stop:
            break
        if on_checkpoint is not None:
            on_checkpoint({"n_done": n_done, "alive": [names[i] for i in alive],
                           "sums": [sums[i] for i in alive], "sumsq": [sumsq[i] for i in alive],
                           "cross": [[names[i], names[j], v] for (i, j), v in cross.items()
                                     if i in alive and j in alive],
                           "rounds": [x.as_dict() for x in s.rounds], "trials_spent": s.trials_spent,
                           "runs": s.runs})
        interrupt.check()
    s.chosen = ranking.best
    s.final_trials = n_done
    best_group = ranking.option(ranking.best).tie_group
    s.survivors = [{"option": o.name, "mean": o.mean, "se": exact_se(n_done, sums[names.index(o.name)],
                                                                sumsq[names.index(o.name)], space.scale),
                    "diff_to_chosen": o.diff, "diff_low": o.diff_low,
                    "diff_high": o.diff_high, "tie_group": o.tie_group, "tied_with_chosen": o.tie_group == best_group}
                   for o in ranking.options if o.in_best_set]
    s.tied = [o["option"] for o in s.survivors]
    s.wall_seconds = time.perf_counter() - t0
    return s


@dataclass
class Reestimate:
    """The survivors of a search (the chosen option first) played again on fresh streams
    (:func:`reestimate`): per option its fresh mean with the 95% interval, the race's mean of it,
    and ``race - fresh`` with its interval (the estimated selection bias)."""

    trials: int
    stream: str
    options: list[dict]
    option_trials: int     # options x trials (counted apart from the race's trials_spent)
    runs: int              # option-trials the kernel played (anchor included)
    wall_seconds: float

    @property
    def chosen(self) -> dict:
        return self.options[0]

    def as_dict(self) -> dict:
        return {"trials": self.trials, "stream": self.stream, "level": REESTIMATE_LEVEL,
                "chosen": self.chosen, "options": self.options, "option_trials": self.option_trials,
                "kernel_option_trials": self.runs,
                "method": (f"the chosen option and the other survivors played {self.trials:,} more trials on "
                           f"random streams independent of the race's (same seed, stream key derived by the name "
                           f"{self.stream!r}); the fresh mean is unbiased for the option's true mean given the "
                           f"choice (the choice depends on the race's streams only); race - fresh estimates the "
                           f"selection bias of the race's mean, its SE sqrt(SE_race^2 + SE_fresh^2) "
                           f"(independent streams); Student t {REESTIMATE_LEVEL:.0%} intervals, each option's "
                           f"own (not simultaneous); these trials are not in trials_spent")}


def reestimate(space: Space, s: Search, trials: int | None = None, *,
               on_start: Callable[[int, int], None] | None = None,
               on_trials: Callable[[int], None] | None = None) -> Reestimate:
    """Play the survivors of ``s`` (the chosen option first; at most the survivors) for ``trials``
    trials (default: the race's final trial count) on :meth:`Space.fresh` streams, and store the
    result in ``s.reestimate`` (its wall time is added to ``s.wall_seconds``). ``on_start(options,
    trials)`` before the kernel runs. Reproducible for a seed and independent of the thread count
    (exact integer sums, as the race)."""
    t0 = time.perf_counter()
    trials = s.final_trials if trials is None else int(trials)
    if trials < 2:
        raise ValueError("the re-estimation needs at least 2 trials")
    if s.chosen is None or not s.survivors:
        raise ValueError("re-estimate a finished search")
    fresh = space.fresh()
    race = {o["option"]: o for o in s.survivors}
    order = [s.chosen] + [o["option"] for o in s.survivors if o["option"] != s.chosen]
    indices = sorted(space.names.index(n) for n in order)      # the race's order of options
    if on_start is not None:
        on_start(len(indices), trials)
    b = fresh.evaluate(indices, 0, trials, on_trials)
    at = {space.names[i]: a for a, i in enumerate(indices)}
    options = [{"option": name, **fresh_estimate(race[name]["mean"], race[name]["se"], s.final_trials, trials,
                                                 b.sums[at[name]], b.sumsq[at[name]], space.scale, REESTIMATE_LEVEL)}
               for name in order]
    seconds = time.perf_counter() - t0
    s.reestimate = Reestimate(trials, FRESH_STREAM, options, len(indices) * trials, b.runs, seconds)
    s.wall_seconds += seconds
    return s.reestimate


def document(s: Search, extra: dict | None = None) -> dict:
    """What ``search --json`` prints and ``search.json`` holds."""
    from analyzer.outputs.writer import _json_value
    return _json_value({
        "chosen": s.chosen, "metric": s.metric, "higher_is_better": s.higher_is_better, "level": s.level,
        "margin": s.margin, "stop": s.stop, "gap_bound": s.gap_bound, "guarantee": s.guarantee(),
        "tied": s.tied, "identical_to_chosen": [o["option"] for o in s.survivors if o["tied_with_chosen"]],
        "survivors": s.survivors, "options": len(s.names), "option_names": s.names,
        "first_trials": s.first, "max_trials": s.max_trials, "rounds_planned": s.rounds_planned,
        "final_trials": s.final_trials, "trials_spent": s.trials_spent, "kernel_option_trials": s.runs,
        "exhaustive_trials": s.exhaustive_trials,
        "spent_over_exhaustive": s.trials_spent / s.exhaustive_trials if s.exhaustive_trials else None,
        "kernel_over_exhaustive": s.runs / s.exhaustive_trials if s.exhaustive_trials else None,
        "reestimate": None if s.reestimate is None else s.reestimate.as_dict(),
        "total_option_trials": s.trials_spent + (s.reestimate.option_trials if s.reestimate else 0),
        "total_kernel_option_trials": s.runs + (s.reestimate.runs if s.reestimate else 0),
        "rounds": [r.as_dict() for r in s.rounds], "wall_seconds": s.wall_seconds,
        "method": (f"successive elimination on common random numbers: trials doubled from {s.first:,} up to "
                   f"{s.max_trials:,} ({s.rounds_planned} rounds planned); each round every survivor's paired "
                   f"difference to the best over all trials so far, Student t at {s.level:.0%} simultaneous over "
                   f"every pair of options in every planned round (Bonferroni); an option whose upper bound is "
                   f"below 0 is dropped; stop when one is left, when every survivor is within the margin of the "
                   f"chosen one, or at max_trials"),
        **(extra or {})})


def load(path, *, seed: int | None = None, so_plans: list[str] | None = None, policies: list[str] | None = None):
    """The scenario and its option :class:`Space` (``trials`` of the file are not used): the one its
    question declares (:attr:`analyzer.core.questions.Question.search_space`); a question without
    one is refused naming the questions that have one."""
    from analyzer.core import questions
    from analyzer.core import scenario as scenario_mod
    sc = scenario_mod.load(path, seed=seed, trials_guard=False)
    q = questions.get(sc.spec.game, sc.spec.question)
    if q is None or q.search_space is None:
        questions.load_games()
        have = sorted(f"{k[0]}/{k[1]}" for k, v in questions._REGISTRY.items() if v.search_space is not None)
        raise ScenarioError(str(sc.path), "question", f"got {sc.spec.game}/{sc.spec.question}; search runs on the "
                            f"questions that declare an option space: {', '.join(have) or 'none'}")
    return sc, q.search_space(sc, so_plans, policies)


#: files of a search folder
SEARCH_CHECKPOINT = "checkpoint.json"
LOCK_FILE = ".search.lock"


@dataclass
class Folder:
    """A search folder being filled: ``path``, the settings it is bound to, and the lock held on
    it for this process's whole search (a second ``--resume`` of it is refused)."""

    path: Path
    settings: dict
    lock_fd: int

    def release(self) -> None:
        import os
        if self.lock_fd >= 0:
            os.close(self.lock_fd)
            self.lock_fd = -1


def settings_of(sc, space, *, so_plans, level, margin, first, max_trials, reestimate: bool = True,
                reestimate_trials: int | None = None, policies: list[str] | None = None) -> dict:
    """What a search folder is bound to: the scenario (absolute path, SHA-256), the seed, the data
    files the options read (SHA-256), the options and every setting of the procedure (the
    re-estimation's: ``reestimate``, and ``reestimate_trials``, None for the race's final trials)."""
    space.prepared(list(range(len(space.names))))   # every option: the data files and placeholders they read
    return {"scenario_file": str(Path(sc.path).resolve()), "scenario_sha256": sc.digest, "seed": sc.spec.seed,
            "so_plans": list(so_plans or []), "policies": list(policies or []), "level": level, "margin": margin,
            "first_trials": first,
            "max_trials": max_trials, "options": list(space.names),
            "data_files": sorted([d["path"], d["sha256"]] for d in space.data_files),
            "reestimate": bool(reestimate), "reestimate_trials": reestimate_trials}


def _lock(folder: Path) -> int:
    import fcntl
    import os
    fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise ScenarioError(str(folder), "--resume", "another process is running this search") from None
    return fd


def start_folder(out_root: Path, sc, settings: dict) -> Folder:
    """``<out>/<scenario file stem>/search-<run-id>/`` created under its final name, holding only
    ``manifest.json`` with ``"status": "incomplete"`` and the settings until the search completes."""
    from analyzer.core import paths
    from analyzer.core.formats import MANIFEST_JSON
    from analyzer.outputs import writer as outputs
    base = paths.make_dir(Path(out_root), outputs.folder_name(sc))
    name, n = f"search-{outputs._stamp()}-{sc.digest[:8]}", 1
    while True:
        path = paths.inside(base, name if n == 1 else f"{name}-{n}")
        try:
            path.mkdir()
            break
        except FileExistsError:
            n += 1
            if n > 1000:
                raise
    folder = Folder(path, settings, _lock(path))
    outputs.write_document(path, MANIFEST_JSON, {"status": "incomplete", "kind": "search", **settings})
    return folder


def save_checkpoint(folder: Folder, state: dict) -> None:
    """The state after a round, bound to the folder's settings (atomic: a kill leaves the last one)."""
    from analyzer.outputs import writer as outputs
    from analyzer.core import formats
    outputs.write_json(formats.stamped(formats.SEARCH_CHECKPOINT, {"settings": folder.settings, "state": state}),
                       folder.path / SEARCH_CHECKPOINT)


def open_for_resume(run_dir: Path) -> tuple[Folder, dict | None]:
    """An incomplete search folder, locked, with its settings and its last round's state (None when
    it stopped in the first round). Refused in one line: not a search folder, complete, run by
    another process, a checkpoint bound to other settings or of the wrong shape."""
    import os

    from analyzer.core import paths
    run_dir = Path(run_dir)
    where = str(run_dir)
    if os.path.islink(run_dir) or not run_dir.is_dir():
        raise ScenarioError(where, "--resume", "not a search folder (no such folder, or a link)")
    try:
        man = paths.read_json(run_dir, "manifest.json")
    except Exception as e:   # missing, a link, not JSON: one line
        raise ScenarioError(where, "--resume", f"not a search folder: {e}") from None
    if not isinstance(man, dict) or man.get("kind") != "search":
        raise ScenarioError(where, "--resume", "not a search folder (manifest.json kind is not search)")
    if man.get("status") != "incomplete":
        raise ScenarioError(where, "--resume", "this search is complete; start a new one")
    keys = ("scenario_file", "scenario_sha256", "seed", "so_plans", "level", "margin", "first_trials",
            "max_trials", "options", "data_files")
    if any(k not in man for k in keys):
        raise ScenarioError(where, "manifest.json", "an incomplete search manifest lacks its settings")
    settings = {k: man[k] for k in keys}
    for k in ("reestimate", "reestimate_trials"):     # absent in folders started before the re-estimation
        if k in man:
            settings[k] = man[k]
    settings["policies"] = list(man.get("policies") or [])    # absent in folders started before --policy
    folder = Folder(run_dir, settings, _lock(run_dir))
    try:
        if paths.entry_kind(run_dir, SEARCH_CHECKPOINT) is None:
            return folder, None
        from analyzer.core import formats
        doc = paths.read_json(run_dir, SEARCH_CHECKPOINT)
        problem = formats.version_problem(doc, formats.SEARCH_CHECKPOINT) if isinstance(doc, dict) else None
        if problem:
            raise ScenarioError(str(run_dir / SEARCH_CHECKPOINT), formats.SEARCH_CHECKPOINT.key, problem)
        if not isinstance(doc, dict) or doc.get("settings") != settings:
            raise ScenarioError(str(run_dir / SEARCH_CHECKPOINT), "settings",
                                "the checkpoint belongs to another search (settings differ from manifest.json)")
        state = doc.get("state")
        _check_state(str(run_dir / SEARCH_CHECKPOINT), state, settings["options"])
        return folder, state
    except BaseException:
        folder.release()
        raise


def _check_state(file: str, state, options: list[str]) -> None:
    def bad(what):
        raise ScenarioError(file, "state", f"damaged checkpoint: {what}")
    if not isinstance(state, dict):
        bad("not a mapping")
    ints = lambda xs: isinstance(xs, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in xs)  # noqa: E731
    alive = state.get("alive")
    if not isinstance(alive, list) or len(alive) < 2 or not set(alive) <= set(options) or len(set(alive)) != len(alive):
        bad("alive is not a list of at least two of the options")
    if not (ints(state.get("sums")) and ints(state.get("sumsq")) and len(state["sums"]) == len(state["sumsq"])
            == len(alive)):
        bad("sums / sumsq do not match alive")
    cross = state.get("cross")
    if not isinstance(cross, list) or len(cross) != len(alive) * (len(alive) - 1) // 2 or not all(
            isinstance(c, list) and len(c) == 3 and c[0] in alive and c[1] in alive and isinstance(c[2], int)
            for c in cross):
        bad("cross is not one sum per pair of alive options")
    if not ints([state.get("n_done"), state.get("trials_spent"), state.get("runs")]) or state["n_done"] < 1:
        bad("n_done / trials_spent / runs")
    rounds = state.get("rounds")
    fields = {f.name for f in dataclasses.fields(Round)}
    if not isinstance(rounds, list) or not rounds or not all(isinstance(r, dict) and set(r) == fields for r in rounds):
        bad("rounds")
    if rounds[-1]["trials"] != state["n_done"]:
        bad("the last round does not end at n_done")


def check_resumable(folder: Folder, sc, space) -> None:
    """The scenario and the data files are the ones the search started with."""
    now = settings_of(sc, space, so_plans=folder.settings["so_plans"], policies=folder.settings["policies"],
                      level=folder.settings["level"],
                      margin=folder.settings["margin"], first=folder.settings["first_trials"],
                      max_trials=folder.settings["max_trials"])
    for key, what in (("scenario_sha256", "the scenario file changed"), ("data_files", "a data file it read changed"),
                      ("options", "the options changed")):
        if now[key] != folder.settings[key]:
            raise ScenarioError(str(folder.path), "--resume", f"{what} since the search started; start a new one")


def finish(folder: Folder, s: Search, sc, space, *, threads: int, extra: dict | None = None) -> Path:
    """Complete the folder: ``search.json``, then the complete ``manifest.json`` (each atomic,
    the manifest last), then the checkpoint is removed and the lock released."""
    import os

    from analyzer.analyses.balance.common import manifest
    from analyzer.core.formats import MANIFEST_JSON, SEARCH_JSON
    from analyzer.outputs import writer as outputs
    doc = document(s, extra)
    outputs.write_document(folder.path, SEARCH_JSON, doc)
    man = manifest(sc, kind="search", trials=doc["total_kernel_option_trials"], wall_seconds=s.wall_seconds,
                   threads=threads,
                   data_files=space.data_files, extra={"settings": folder.settings})
    outputs.write_document(folder.path, MANIFEST_JSON, man)
    for name in (SEARCH_CHECKPOINT, LOCK_FILE):
        try:
            os.unlink(folder.path / name)
        except FileNotFoundError:
            pass
    folder.release()
    return folder.path


def discard(folder: Folder) -> None:
    """Remove a new search's folder (an error that is not a stop)."""
    import shutil
    folder.release()
    shutil.rmtree(folder.path, ignore_errors=True)
