"""``analyzer search``'s option space for the ``loadout`` question (:mod:`analyzer.analyses.search`,
docs/balance.md "Search"; made by ``Loadout.search_space``, so the scenario is a loadout one): the
fleets of a loadout scenario, optionally crossed with SO plans and policy variants, raced
on the loadout kernel's common random numbers."""
from __future__ import annotations

from analyzer.analyses.search import SO_SEP, Block, PointSpace, paired_block
from analyzer.core.errors import ScenarioError


class LoadoutSpace(PointSpace):
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
        super().__init__(sc)
        file = str(sc.path)
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

    def _prepare(self, indices: list[int]):
        """The loadout point of the anchor and ``indices`` (the anchor first, once), with the
        anchor's count (0 or 1) and the number of fleets it runs."""
        fleets = [self.options[i] for i in indices]
        lead = [] if self._same(fleets[0], self.anchor) else [self.anchor]
        run = lead + fleets
        if len(run) < 2:        # the question runs at least two fleets
            run = run + [run[0].model_copy(update={"name": run[0].name + "-pad"})]
        params = self.point.params.model_copy(update={"fleets": run, "enumerate": False,
                                                      "max_fleets": max(self.point.params.max_fleets, len(run))})
        return self._prepare_point(params), len(lead), len(run)

    @staticmethod
    def _same(a, b) -> bool:
        return a.fleet == b.fleet and a.so == b.so and a.policy == b.policy

    def evaluate(self, indices, n_from, n_to, on_trials=None) -> Block:
        """The options ``indices`` over trials ``n_from .. n_to - 1``: the fleets after the anchor
        (when it is not among them) in the loadout kernel's paired VP group."""
        prep, lead, n_run = self.prepared(list(indices))
        acc = self._accumulate(prep, n_from, n_to, len(indices), on_trials)
        return paired_block(acc, prep, prep.paired_groups[0], list(range(lead, lead + len(indices))), n_run,
                            (n_to - n_from) * n_run)


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
