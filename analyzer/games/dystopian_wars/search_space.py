"""``analyzer search``'s option space for the ``fire_allocation`` question (:mod:`analyzer.analyses.search`,
docs/balance.md "Search"; made by ``FireAllocation.search_space``, so the scenario is a fire-allocation
one): the scenario's allocations (auto or explicit, narrowed by ``only``), ranked by the mean of its
``objective``, raced on the kernel's common random numbers."""
from __future__ import annotations

import copy
import dataclasses

from analyzer.analyses.search import Block
from analyzer.core import interrupt
from analyzer.core.errors import ScenarioError
from analyzer.core.ranking import pair_index


class AllocationSpace:
    """The allocations of a Dystopian Wars ``fire_allocation`` scenario, named ``<id> <allocation>``
    (``A20 w0:7>T0, w0:6>T2, w1:7>T1, w1:6>T3``). Each evaluation runs the question's kernel on the
    asked allocations only (``only``: :meth:`FireAllocation.option_params`) with the file's stream key:
    every allocation of a trial plays from the same trial-local stream seeded by one word of the
    chunk's stream, so an option's value in trial ``t`` is the one ``analyzer run`` of the file gives
    it, whichever options are played with it (no anchor is needed), and the pair sums of the played
    allocations are recorded whatever their number (up to ``MAX_SEARCH_ALLOCATIONS``; a run records
    them up to ``MAX_PAIRED_ALLOCATIONS``)."""

    higher_is_better = True

    def __init__(self, sc, so_plans: list[str] | None = None, policies: list[str] | None = None):
        from analyzer.run.runner import point_key
        from kernels.driver import CHUNK_TRIALS
        file = str(sc.path)
        what = f"{sc.spec.game}/{sc.spec.question}"
        for flag, given in (("--so", so_plans), ("--policy", policies)):
            if given:
                raise ScenarioError(file, flag, f"got {', '.join(given)}; {what} has no SO plans or policies to "
                                    f"cross (its options are the file's allocations): remove {flag}")
        if sc.spec.sweep:
            raise ScenarioError(file, "sweep", "search races the options of one point: remove sweep")
        if sc.spec.precision is not None:
            raise ScenarioError(file, "precision", "search sets its own trial counts: remove precision")
        self.sc = sc
        self.point = sc.points[0]
        self.key = point_key(sc, self.point)
        self.chunk = CHUNK_TRIALS
        self.scale = 1
        self.metric = self.point.params.objective
        self.data_files: list[dict] = []
        self.placeholders: list = []
        self._seen: set = set()
        self._last = None
        prep = self._prepare(None)          # every allocation of the file: its ids and names
        self.ids = [m.name.split(".", 1)[1] for m in prep.metrics if m.name.startswith(self.metric + ".")]
        self.names = [f"{i} {prep.entity_columns[i]['allocation']}" for i in self.ids]
        self._last = (tuple(range(len(self.ids))), prep)

    def _prepare(self, ids: list[str] | None):
        """The point playing ``ids`` (None: the file's own allocations), in race mode: every pair's
        sums recorded, up to ``MAX_SEARCH_ALLOCATIONS`` played."""
        from analyzer.run.runner import prepare_point
        params = self.point.params.model_copy(update={} if ids is None else {"only": list(ids)})
        params._race = True
        prep = prepare_point(self.sc, dataclasses.replace(self.point, params=params))
        for d in prep.data_files:
            if d not in self.data_files:
                self.data_files.append(d)
        for ph in prep.placeholders:
            if (ph.path, ph.source) not in self._seen:
                self._seen.add((ph.path, ph.source))
                self.placeholders.append(ph)
        return prep

    def prepared(self, indices: list[int]):
        """The point playing the allocations ``indices`` (the last one is kept: the first round
        reuses the one made of every option)."""
        if self._last is None or self._last[0] != tuple(indices):
            self._last = (tuple(indices), self._prepare([self.ids[i] for i in indices]))
        return self._last[1]

    def fresh(self) -> "AllocationSpace":
        """The same options on streams independent of the race's (:func:`analyzer.analyses.search.reestimate`):
        the file's seed, with the stream key of the point's own parts plus the stream name
        :data:`analyzer.analyses.search.FRESH_STREAM` (the race's key, :func:`analyzer.run.runner.point_key`,
        hashes the parts without it). The prepared points, data files and placeholders are shared."""
        from analyzer.analyses.search import FRESH_STREAM
        from analyzer.run.runner import stream_key
        other = copy.copy(self)
        other.key = stream_key(self.sc.spec.game, self.sc.spec.question, self.point.swept, FRESH_STREAM)
        if other.key == self.key:       # a 63-bit hash collision: never seen, but never silently
            raise RuntimeError("the fresh stream key equals the race's")
        return other

    def evaluate(self, indices, n_from, n_to, on_trials=None) -> Block:
        import numba

        from analyzer.core.stats import MetricAccumulator
        from kernels.record import chunk_sizes
        prep = self.prepared(sorted(indices))
        (group,) = prep.paired_groups
        m = len(indices)
        acc = MetricAccumulator(len(prep.metrics), prep.n_bins, len(prep.counters))
        c_lo, c_hi = n_from // self.chunk, -(-n_to // self.chunk)
        # one chunk per thread per call (integer sums: any split gives the same result), so a stop
        # request waits for one chunk of every option, and only that many chunks' histograms and
        # pair sums are held at once
        step = max(1, numba.get_num_threads())
        for lo in range(c_lo, c_hi, step):
            hi = min(lo + step, c_hi)
            acc.add_chunks(*prep.run_kernel(self.sc.spec.seed, self.key, lo, hi, self.chunk, n_to))
            if on_trials is not None:
                on_trials(int(chunk_sizes(lo, hi, n_to, self.chunk).sum()) * m)
            interrupt.check()
        # the kernel plays the allocations in the file's order: position of each of ``indices`` there
        rows = {x.name: r for r, x in enumerate(prep.metrics)}
        at = {name: g for g, name in enumerate(group.metrics)}
        pos = [at[f"{self.metric}.{self.ids[i]}"] for i in indices]
        sums = [acc.exact_moment(rows[group.metrics[g]], 0) for g in pos]
        sumsq = [acc.exact_moment(rows[group.metrics[g]], 1) for g in pos]
        pairs = acc.counters[group.counter_offset: group.counter_offset + group.n_pairs]
        cross = [int(pairs[pair_index(min(pos[a], pos[c]), max(pos[a], pos[c]), m)])
                 for a in range(m) for c in range(a + 1, m)]
        return Block(sums, sumsq, cross, (n_to - n_from) * m)
