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

from analyzer.analyses.search import Block, PointSpace, refuse_crossing

#: the most bytes of pair counters one kernel call may return (chunks per call are cut to fit)
PAIR_BYTES_PER_CALL = 64 * 2 ** 20


class PatternSpace(PointSpace):
    """The patterns of a HACSE ``depth_charge_pattern`` scenario (one point): named by their labels
    (``d2x3 d3x3``), in the question's order, ranked by P(sunk) (higher is better). Each evaluation
    runs the pattern kernel on the patterns asked for only, with pair sums, over the chunks of the
    trials asked for, with the file's stream key."""

    metric = "p_sunk"
    higher_is_better = True
    #: no option plays first for the others (every pattern has its own stream)
    anchor = None

    def __init__(self, sc, so_plans: list[str] | None, policies: list[str] | None, with_pair_sums):
        """``with_pair_sums``: the question's (:mod:`.depth_charge_pattern`, which makes the space): a
        prepared point with every pair's cross sum recorded."""
        from analyzer.run.runner import prepare_point
        refuse_crossing(sc, so_plans, policies, lambda flag: "a depth_charge_pattern search races the file's "
                        "patterns: --so and --policy are U-Boat Leader loadout options (narrow the patterns with "
                        "params.patterns)")
        super().__init__(sc)
        self._with_pair_sums = with_pair_sums
        # the options: the patterns the file plays, by label, in the question's order
        self.names = [m.entity for m in prepare_point(sc, self.point).metrics]

    def _prepare(self, indices: list[int]):
        """The pattern point playing the patterns ``indices`` with every pair's cross sum recorded."""
        params = self.sc.question.option_params(self.point.params, [self.names[i] for i in indices])
        return self._prepare_point(params, self._with_pair_sums)

    def evaluate(self, indices, n_from, n_to, on_trials=None) -> Block:
        """Sums, sums of squares and every pair's cross sum of the patterns ``indices`` over trials
        ``n_from .. n_to - 1`` (exact integers)."""
        import numpy as np

        prep = self.prepared(list(indices))
        m = len(indices)
        n_pairs = m * (m - 1) // 2
        sums = np.zeros(m, np.int64)
        sumsq = np.zeros(m, np.int64)
        cross = np.zeros(n_pairs, np.int64)
        # one chunk per thread per call, fewer when the pair counters of that many chunks would pass
        # PAIR_BYTES_PER_CALL
        for _, moments, counters in self._kernel_calls(prep, n_from, n_to, m, on_trials,
                                                       max_chunks=PAIR_BYTES_PER_CALL // max(1, 8 * n_pairs)):
            sums += moments[:, :, 0].sum(axis=0)
            sumsq += moments[:, :, 1].sum(axis=0)
            cross += counters[:, :n_pairs].sum(axis=0)
        return Block([int(x) for x in sums], [int(x) for x in sumsq], [int(x) for x in cross], (n_to - n_from) * m)
