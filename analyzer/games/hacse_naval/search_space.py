"""``analyzer search``'s option space for the ``depth_charge_pattern`` question
(:mod:`analyzer.analyses.search`, docs/balance.md "Search"; made by ``DepthChargePattern.search_space``):
the scenario's patterns (every one enumerated, or ``params.patterns``), raced by P(sunk) on the
pattern kernel's common random numbers.

Every pattern of a trial is dropped on the same U-boat draw and rolls its dice from its own
trial-local stream (seeded by one per-trial draw and the pattern's number), so a pattern's value in
trial ``t`` does not depend on which other patterns are played: a round plays only the survivors
(:meth:`DepthChargePattern.option_params`) and each gets exactly the values ``analyzer run`` of the
file gives it.

Pair sums of any number of survivors. The search needs every pair's cross sum of the survivors each
round. A run records them only up to ``MAX_PAIRED_PATTERNS`` (120) patterns because it holds K(K-1)/2
int64 counters per chunk for a batch of 64 chunks (at 1000 patterns 256 MB); the space asks the kernel
for them whatever the number of survivors (the question's ``with_pair_sums``) and runs few chunks per
kernel call instead: as many as the threads, but no more than keep one call's pair counters within
:data:`PAIR_BYTES_PER_CALL` (at 1000 survivors 4 MB a chunk: 2 chunks a call on 2 threads). The sums
are exact integers, so how the chunks are grouped changes nothing. At most ``MAX_PATTERNS`` (1000)
patterns are raced: the question's own cap on the enumeration, and the search keeps every pair's
cross sum of the survivors in its state and checkpoint (499,500 at 1000).
"""
from __future__ import annotations

import copy
import dataclasses

from analyzer.analyses.search import Block
from analyzer.core import interrupt
from analyzer.core.errors import ScenarioError

#: the most bytes of pair counters one kernel call may return (chunks per call are cut to fit)
PAIR_BYTES_PER_CALL = 64 * 2 ** 20


class PatternSpace:
    """The patterns of a HACSE ``depth_charge_pattern`` scenario (one point): named by their labels
    (``d2x3 d3x3``), in the question's order, ranked by P(sunk) (higher is better). Each evaluation
    runs the pattern kernel on the patterns asked for only, with pair sums, over the chunks of the
    trials asked for, with the file's stream key."""

    metric = "p_sunk"
    higher_is_better = True
    scale = 1
    #: no option plays first for the others (every pattern has its own stream)
    anchor = None

    def __init__(self, sc, so_plans: list[str] | None, policies: list[str] | None, with_pair_sums):
        """``with_pair_sums``: the question's (:mod:`.depth_charge_pattern`, which makes the space): a
        prepared point with every pair's cross sum recorded."""
        from analyzer.run.runner import point_key, prepare_point
        from kernels.driver import CHUNK_TRIALS
        file = str(sc.path)
        for flag, given in (("--so", so_plans), ("--policy", policies)):
            if given:
                raise ScenarioError(file, flag, f"got {', '.join(given)}; a depth_charge_pattern search races the "
                                    f"file's patterns: --so and --policy are U-Boat Leader loadout options "
                                    f"(narrow the patterns with params.patterns)")
        if sc.spec.sweep:
            raise ScenarioError(file, "sweep", "search races the options of one point: remove sweep")
        if sc.spec.precision is not None:
            raise ScenarioError(file, "precision", "search sets its own trial counts: remove precision")
        self.sc = sc
        self.point = sc.points[0]
        self.key = point_key(sc, self.point)
        self.chunk = CHUNK_TRIALS
        self._with_pair_sums = with_pair_sums
        # the options: the patterns the file plays, by label, in the question's order
        self.names = [m.entity for m in prepare_point(sc, self.point).metrics]
        self.data_files: list[dict] = []
        self.placeholders: list = []
        self._seen: set = set()
        self._last = None

    def prepared(self, indices: list[int]):
        """The pattern point playing the patterns ``indices`` with every pair's cross sum recorded;
        the last one is kept (the first round reuses the one :func:`settings_of` made of every option)."""
        from analyzer.run.runner import prepare_point
        if self._last is not None and self._last[0] == tuple(indices):
            return self._last[1]
        params = self.sc.question.option_params(self.point.params, [self.names[i] for i in indices])
        prep = self._with_pair_sums(prepare_point(self.sc, dataclasses.replace(self.point, params=params)))
        for d in prep.data_files:
            if d not in self.data_files:
                self.data_files.append(d)
        for ph in prep.placeholders:
            if (ph.path, ph.source) not in self._seen:
                self._seen.add((ph.path, ph.source))
                self.placeholders.append(ph)
        self._last = (tuple(indices), prep)
        return prep

    def fresh(self) -> "PatternSpace":
        """The same patterns on streams independent of the race's (:func:`analyzer.analyses.search.reestimate`):
        the file's seed, with the stream key of the point's own parts plus the stream name
        :data:`analyzer.analyses.search.FRESH_STREAM`. The prepared points, data files and placeholders
        are shared."""
        from analyzer.analyses.search import FRESH_STREAM
        from analyzer.run.runner import stream_key
        other = copy.copy(self)
        other.key = stream_key(self.sc.spec.game, self.sc.spec.question, self.point.swept, FRESH_STREAM)
        if other.key == self.key:       # a 63-bit hash collision: never seen, but never silently
            raise RuntimeError("the fresh stream key equals the race's")
        return other

    def evaluate(self, indices, n_from, n_to, on_trials=None) -> Block:
        """Sums, sums of squares and every pair's cross sum of the patterns ``indices`` over trials
        ``n_from .. n_to - 1`` (exact integers)."""
        import numba
        import numpy as np

        from kernels.record import chunk_sizes
        prep = self.prepared(list(indices))
        m = len(indices)
        n_pairs = m * (m - 1) // 2
        c_lo, c_hi = n_from // self.chunk, -(-n_to // self.chunk)
        # one chunk per thread per call (a stop request waits for one chunk of every pattern), fewer
        # when the pair counters of that many chunks would pass PAIR_BYTES_PER_CALL
        step = max(1, min(numba.get_num_threads(), PAIR_BYTES_PER_CALL // max(1, 8 * n_pairs)))
        sums = np.zeros(m, np.int64)
        sumsq = np.zeros(m, np.int64)
        cross = np.zeros(n_pairs, np.int64)
        for lo in range(c_lo, c_hi, step):
            hi = min(lo + step, c_hi)
            _, moments, counters = prep.run_kernel(self.sc.spec.seed, self.key, lo, hi, self.chunk, n_to)
            sums += moments[:, :, 0].sum(axis=0)
            sumsq += moments[:, :, 1].sum(axis=0)
            cross += counters[:, :n_pairs].sum(axis=0)
            if on_trials is not None:
                on_trials(int(chunk_sizes(lo, hi, n_to, self.chunk).sum()) * m)
            interrupt.check()
        return Block([int(x) for x in sums], [int(x) for x in sumsq], [int(x) for x in cross], (n_to - n_from) * m)
