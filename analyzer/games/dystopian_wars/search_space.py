"""``analyzer search``'s option space for the ``fire_allocation`` question (:mod:`analyzer.analyses.search`,
docs/balance.md "Search"; made by ``FireAllocation.search_space``, so the scenario is a fire-allocation
one): the scenario's allocations (auto or explicit, narrowed by ``only``), ranked by the mean of its
``objective``, raced on the kernel's common random numbers."""
from __future__ import annotations

from analyzer.analyses.search import Block, PointSpace, paired_block, refuse_crossing


class AllocationSpace(PointSpace):
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
        what = f"{sc.spec.game}/{sc.spec.question}"
        refuse_crossing(sc, so_plans, policies, lambda flag: f"{what} has no SO plans or policies to cross (its "
                        f"options are the file's allocations): remove {flag}")
        super().__init__(sc)
        self.metric = self.point.params.objective
        prep = self._play(None)          # every allocation of the file: its ids and names
        self.ids = [m.name.split(".", 1)[1] for m in prep.metrics if m.name.startswith(self.metric + ".")]
        self.names = [f"{i} {prep.entity_columns[i]['allocation']}" for i in self.ids]
        self._last = (tuple(range(len(self.ids))), prep)

    def _play(self, ids: list[str] | None):
        """The point playing ``ids`` (None: the file's own allocations), in race mode: every pair's
        sums recorded, up to ``MAX_SEARCH_ALLOCATIONS`` played."""
        params = self.point.params.model_copy(update={} if ids is None else {"only": list(ids)})
        params._race = True
        return self._prepare_point(params)

    def _prepare(self, indices: list[int]):
        """The point playing the allocations ``indices``."""
        return self._play([self.ids[i] for i in indices])

    def evaluate(self, indices, n_from, n_to, on_trials=None) -> Block:
        prep = self.prepared(sorted(indices))
        (group,) = prep.paired_groups
        m = len(indices)
        acc = self._accumulate(prep, n_from, n_to, m, on_trials)
        # the kernel plays the allocations in the file's order: position of each of ``indices`` there
        at = {name: g for g, name in enumerate(group.metrics)}
        pos = [at[f"{self.metric}.{self.ids[i]}"] for i in indices]
        return paired_block(acc, prep, group, pos, m, (n_to - n_from) * m)
