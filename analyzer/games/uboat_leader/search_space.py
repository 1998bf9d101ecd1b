"""``analyzer search``'s option space for the ``loadout`` question (:mod:`analyzer.analyses.search`,
docs/balance.md "Search"; made by ``Loadout.search_space``, so the scenario is a loadout one): the
fleets of a loadout scenario, optionally crossed with SO plans and policy variants, raced
on the loadout kernel's common random numbers."""
from __future__ import annotations

import dataclasses

from analyzer.analyses.search import SO_SEP, Block
from analyzer.core import interrupt
from analyzer.core.errors import ScenarioError
from analyzer.core.ranking import pair_index


class LoadoutSpace:
    """The options of a U-Boat Leader ``loadout`` scenario: its fleets (listed and enumerated,
    :func:`analyzer.games.uboat_leader.loadout.fleet_plans`), each crossed with every SO plan of
    ``so_plans`` when given (named ``<fleet>--<plan>``), ranked by mean VP. Each evaluation runs the
    loadout kernel on the anchor (the file's first fleet, with its own SO plan) and the options
    asked for, over the chunks of the trials asked for, with the file's stream key."""

    metric = "vp"
    higher_is_better = True

    def __init__(self, sc, so_plans: list[str] | None, fleet_plans, FleetPlan, policies: list[str] | None = None):
        """``fleet_plans`` and ``FleetPlan``: the loadout question's (:mod:`.loadout`, which makes the space).
        ``policies``: campaign-policy variants (``"patrol=spread"``, ``"patrol=nearest,attack=no_naval"``;
        :func:`policy_variants`) every fleet (and SO plan) is crossed with, named ``...--patrol-spread``."""
        from analyzer.core.gamedata import DataError
        from analyzer.games.uboat_leader.data import GameData
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
        self.scale = 1
        p = self.point.params
        ctx = sc.context(self.point)
        try:
            plans = fleet_plans(p, ctx, GameData(ctx))
        except DataError as e:
            if isinstance(e, ScenarioError):
                raise
            raise ScenarioError(file, "", str(e)) from None
        self.anchor = FleetPlan(name=plans[0].name, fleet=plans[0].fleet, so=plans[0].so, policy=plans[0].policy)
        variants = policy_variants(file, p.policy, policies) if policies else [(None, None)]
        opts = []
        for pl in plans:
            for so in (so_plans or [None]):
                for label, own in variants:
                    name = pl.name + (f"{SO_SEP}{so}" if so is not None else "") + (f"{SO_SEP}{label}" if label else "")
                    try:
                        opts.append(FleetPlan(name=name, fleet=pl.fleet, so=pl.so if so is None else so,
                                              policy=pl.policy if own is None else own))
                    except Exception as e:   # pydantic: an unknown plan or a name too long
                        locs = [err.get("loc", ("",))[0] for err in getattr(e, "errors", lambda: [])()]
                        if so is not None and "so" in locs:
                            raise ScenarioError(file, "--so", f"got {so!r}: {str(e).splitlines()[-1].strip()}; "
                                                "allowed: intel, none, air_search, support") from None
                        raise ScenarioError(file, "fleets", f"option {name!r}: {str(e).splitlines()[-1].strip()}") \
                            from None
        self.options = opts
        self.names = [o.name for o in opts]
        self.data_files: list[dict] = []
        self.placeholders: list = []
        self._seen: set = set()
        self._last = None

    def prepared(self, indices: list[int]):
        """The loadout point of the anchor and ``indices`` (the anchor first, once); the last one
        is kept (the first round reuses the one :func:`settings_of` made of every option)."""
        from analyzer.run.runner import prepare_point
        if self._last is not None and self._last[0] == tuple(indices):
            return self._last[1]
        fleets = [self.options[i] for i in indices]
        lead = [] if self._same(fleets[0], self.anchor) else [self.anchor]
        run = lead + fleets
        if len(run) < 2:        # the question runs at least two fleets
            run = run + [run[0].model_copy(update={"name": run[0].name + "-pad"})]
        params = self.point.params.model_copy(update={"fleets": run, "enumerate": False,
                                                      "max_fleets": max(self.point.params.max_fleets, len(run))})
        prep = prepare_point(self.sc, dataclasses.replace(self.point, params=params))
        for d in prep.data_files:
            if d not in self.data_files:
                self.data_files.append(d)
        for ph in prep.placeholders:
            if (ph.path, ph.source) not in self._seen:
                self._seen.add((ph.path, ph.source))
                self.placeholders.append(ph)
        self._last = (tuple(indices), (prep, len(lead), len(run)))
        return self._last[1]

    def fresh(self) -> "LoadoutSpace":
        """The same options on streams independent of the race's (:func:`analyzer.analyses.search.reestimate`):
        the file's seed, with the stream key of the point's own parts plus the stream name
        :data:`analyzer.analyses.search.FRESH_STREAM` (the race's key, :func:`analyzer.run.runner.point_key`,
        hashes the parts without it). The prepared points, data files and placeholders are shared."""
        import copy

        from analyzer.analyses.search import FRESH_STREAM
        from analyzer.run.runner import stream_key
        other = copy.copy(self)
        other.key = stream_key(self.sc.spec.game, self.sc.spec.question, self.point.swept, FRESH_STREAM)
        if other.key == self.key:       # a 63-bit hash collision: never seen, but never silently
            raise RuntimeError("the fresh stream key equals the race's")
        return other

    @staticmethod
    def _same(a, b) -> bool:
        return a.fleet == b.fleet and a.so == b.so and a.policy == b.policy

    def evaluate(self, indices, n_from, n_to, on_trials=None) -> Block:
        from analyzer.core.ranking import PairedGroup
        from analyzer.core.stats import MetricAccumulator
        import numba

        from kernels.record import chunk_sizes
        prep, lead, n_run = self.prepared(list(indices))
        acc = MetricAccumulator(len(prep.metrics), prep.n_bins, len(prep.counters))
        c_lo, c_hi = n_from // self.chunk, -(-n_to // self.chunk)
        # one chunk per thread per call (integer sums: any split gives the same result), so a stop
        # request waits for one chunk of every option, not a whole batch of 64
        step = max(1, numba.get_num_threads())
        for lo in range(c_lo, c_hi, step):
            hi = min(lo + step, c_hi)
            acc.add_chunks(*prep.run_kernel(self.sc.spec.seed, self.key, lo, hi, self.chunk, n_to))
            if on_trials is not None:
                on_trials(int(chunk_sizes(lo, hi, n_to, self.chunk).sum()) * len(indices))
            interrupt.check()
        group: PairedGroup = prep.paired_groups[0]
        rows = {m.name: r for r, m in enumerate(prep.metrics)}
        vp_rows = [rows[name] for name in group.metrics]
        mine = list(range(lead, lead + len(indices)))
        sums = [acc.exact_moment(vp_rows[f], 0) for f in mine]
        sumsq = [acc.exact_moment(vp_rows[f], 1) for f in mine]
        cross_all = acc.counters[group.counter_offset: group.counter_offset + group.n_pairs]
        cross = [int(cross_all[pair_index(mine[a], mine[c], n_run)]) for a in range(len(mine))
                 for c in range(a + 1, len(mine))]
        return Block(sums, sumsq, cross, (n_to - n_from) * n_run)


def policy_variants(file: str, shared, texts: list[str]) -> list[tuple[str, object]]:
    """``(label, policy)`` per ``--policy`` text: ``FIELD=VALUE[,FIELD=VALUE...]`` of the shared
    campaign policy's named choices (patrol, route, endurance, attack, wolfpack, radio_call,
    air_search_choice; SO plans are ``--so``), applied over the shared policy and validated by it;
    the label (``patrol-spread+attack-no_naval``) names the option. Refused, naming the field and
    the allowed values, when a field or a value is not one of the policy's."""
    from analyzer.core.params import allowed_choices

    cls = type(shared)
    choices: dict[str, list[str]] = {}
    for name, f in cls.model_fields.items():
        words = [c for c in allowed_choices(f.annotation) if isinstance(c, str)]
        if name != "so" and words:
            choices[name] = words
    out, seen = [], set()
    for text in texts:
        update, parts = {}, []
        for item in text.split(","):
            field, sep, value = (x.strip() for x in item.partition("="))
            if field == "so":
                raise ScenarioError(file, "--policy", f"got {text!r}: SO plans are crossed with --so")
            if not sep or field not in choices:
                raise ScenarioError(file, "--policy", f"got {text!r}: give FIELD=VALUE with FIELD one of "
                                    f"{', '.join(choices)}")
            if value not in choices[field]:
                raise ScenarioError(file, "--policy", f"got {field}={value!r}; allowed: {', '.join(choices[field])}")
            if field in update:
                raise ScenarioError(file, "--policy", f"got {text!r}: {field} given twice")
            update[field] = value
            parts.append(f"{field}-{value}")
        label = "+".join(parts)
        if label in seen:
            continue
        seen.add(label)
        out.append((label, cls.model_validate({**shared.model_dump(), **update})))
    return out
