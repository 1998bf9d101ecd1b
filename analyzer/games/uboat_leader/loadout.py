"""Question ``loadout``: fleets and SO spending plans within one budget, compared on common
random numbers (docs/models/uboat_leader_campaign.md §14).

Every trial plays the same campaign once per fleet from the same random-stream state
(:mod:`kernels.uboat_leader.loadout`), so the per-trial difference ``vp_diff.<name>`` = VP of
the fleet minus VP of the first fleet is a paired difference: the runner's mean, SE and CI
of it ARE the paired estimate. ``enumerate: true`` adds every affordable fleet the roster
allows for the campaign (service years and class limits of the sheet, each U-boat at most
once). The kernel also sums ``vp_i * vp_j`` over the trials for every pair of fleets, so the
ranking (:mod:`analyzer.core.ranking`: paired difference to the best with simultaneous CIs, the
best set, identical fleets tied) is written to the notes and ``PointResult.rankings`` and drawn.

Every result is a PLACEHOLDER result, as the ``campaign`` question's are.
"""
from __future__ import annotations

import dataclasses
import itertools
import re
from typing import Literal, Union

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from analyzer.core.errors import ScenarioError, suggest
from analyzer.games.uboat_leader.campaign import (
    COUNTERS, CAMPAIGN_OPTIONS, CampaignParams, CampaignPolicy, LoadoutParams, SoParams, campaign_placeholders,
    each_boat_once, placeholder_note)
from analyzer.games.uboat_leader.campaign_compile import MAX_FLEET, N_BINS, boat_refusal, compile_campaign
from analyzer.games.uboat_leader.compile import LEVELS
from analyzer.games.uboat_leader.data import GameData, param_error
from analyzer.games.uboat_leader.rules import ENGAGEMENT_OPTIONS, WOLFPACK_OPTIONS
from analyzer.core.questions import Context, Counter, Metric, Prepared, Question, register
from analyzer.core.ranking import PairedDifferences, PairedGroup, Ranking, rank
from kernels.uboat_leader import loadout as K
from kernels.uboat_leader import state as S
from kernels.uboat_leader.campaign_state import CampaignArgs

SoPolicy = Union[Literal["intel", "none", "air_search", "support"], SoParams]
Level = Literal["green", "trained", "veteran", "ace"]
NAME = r"^[A-Za-z0-9_+\-]+$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FleetPlan(_Strict):
    name: str = Field(..., min_length=1, max_length=80, pattern=NAME,
                      description="fleet name in metric names (letters, digits, _ + -)")
    fleet: list[LoadoutParams] = Field(..., min_length=1, max_length=MAX_FLEET,
                                       description="U-boats in list order, as in the campaign question")
    so: SoPolicy | None = Field(None, description="this fleet's SO spending policy (default: policy.so)")
    policy: CampaignPolicy | None = Field(None, description="this fleet's whole campaign policy (default: policy, "
                                          "the shared one); its so is replaced by the fleet's so when given")

    @field_validator("fleet")
    @classmethod
    def _once(cls, v):
        return each_boat_once(v)


class LoadoutQuestionParams(_Strict):
    campaign: str = Field("comienza_la_batalla", description="campaign sheet stem (campaigns/<stem>.yaml)")
    duration: Literal["short", "medium", "long"] = "short"
    policy: CampaignPolicy = Field(default_factory=CampaignPolicy, description="shared by every fleet")
    max_turns: int = Field(200, ge=1, le=10_000, description="the named campaign cap")
    max_rounds: int = Field(20, ge=1, le=1000, description="the engagement round cap (engagement model)")
    fleets: list[FleetPlan] = Field(default_factory=list, description="explicit fleets; the first is the "
                                    "baseline of vp_diff")
    enumerate: bool = Field(False, description="add every affordable fleet of the roster (§14.2)")
    levels: list[Level] = Field(list(LEVELS), min_length=1, description="crew levels enumeration may buy")
    max_fleets: int = Field(64, ge=1, le=1024, description="refuse more fleets than this (run time grows "
                            "linearly with the fleets)")

    @model_validator(mode="after")
    def _fleets(self):
        if not self.enumerate and len(self.fleets) < 2:
            raise ValueError("give at least two fleets, or enumerate: true")
        names = [f.name for f in self.fleets]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"fleet names must be unique, repeated: {', '.join(dup)}")
        if len(set(self.levels)) != len(self.levels):
            raise ValueError("levels: each crew level at most once")
        return self


@dataclasses.dataclass(frozen=True)
class Plan:
    name: str
    fleet: list[LoadoutParams]
    so: object | None
    policy: object | None = None        # this fleet's CampaignPolicy (None: the point's shared policy)


def _default_key(plan: Plan):
    """(id, level) per boat when the plan is a bought fleet with default loadouts (what
    enumeration generates), else None."""
    if plan.so is not None or plan.policy is not None or any(b.ready is not None or b.stored is not None or b.advanced.fat or b.advanced.t5
                                  or b.mines or b.missions or b.port is not None for b in plan.fleet):
        return None
    return tuple((b.id, b.level) for b in plan.fleet)


def fleet_name(boats: list[tuple[str, str]]) -> str:
    """``U-43t+U-47t``: each boat's id and the initial of its crew level."""
    return "+".join(f"{i}{lv[0]}" for i, lv in boats)


def parse_fleet_name(name: str) -> list[tuple[str, str]] | None:
    """The boats of an enumerated fleet from its name (:func:`fleet_name`'s inverse: ``U-43t+U-47t``
    -> ``[("U-43", "trained"), ("U-47", "trained")]``); None when ``name`` is not such a name (the
    crew levels' initials are distinct)."""
    initials = {lv[0]: lv for lv in LEVELS}
    boats = []
    for part in name.split("+"):
        if len(part) < 2 or part[-1] not in initials:
            return None
        boats.append((part[:-1], initials[part[-1]]))
    return boats if fleet_name(boats) == name else None


def affordable_fleets(p: LoadoutQuestionParams, ctx: Context, gd: GameData) -> list[list[tuple[str, str]]]:
    """§14.2: every fleet of U-boats from the roster (roster order, each at most once, each at
    one of ``p.levels``) that the sheet allows (class limits, service years: the campaign
    question's own check) and whose purchase cost fits the duration's SO; at most
    ``MAX_BOATS`` boats under the engagement contact model (its pack limit). Most SO spent
    first, then most boats, then by name."""
    sheet = gd.campaign(p.campaign)
    if sheet is None:
        stems = gd.campaigns()
        raise param_error(ctx, "campaign", f"no campaign sheet {p.campaign!r}{suggest(p.campaign, stems)}; "
                          f"allowed: {', '.join(stems)}")
    so_total = sheet["durations"][p.duration]["so"]
    roster = gd.get("uboats")
    gd.use("uboats")  # which fleets exist depends on every card's class, service years and costs
    choices = []
    for card in roster:
        if boat_refusal(card, sheet) is None:
            choices.append([None] + [(card["id"], lv, card["levels"][lv]["cost"]) for lv in p.levels])
    most = MAX_FLEET if ctx.rules["contact_model"] == "abstract" else min(MAX_FLEET, S.MAX_BOATS)
    out = []
    for combo in itertools.product(*choices):
        boats = [c for c in combo if c is not None]
        cost = sum(c[2] for c in boats)
        if boats and len(boats) <= most and cost <= so_total:
            out.append((-cost, -len(boats), [(c[0], c[1]) for c in boats]))
    return [boats for *_, boats in sorted(out, key=lambda t: (t[0], t[1], fleet_name(t[2])))]


def _stack(arrays: list[np.ndarray]) -> np.ndarray:
    """One array per fleet -> zero-padded to the largest shape and stacked on a fleet axis."""
    shape = tuple(max(a.shape[d] for a in arrays) for d in range(arrays[0].ndim))
    out = np.zeros((len(arrays),) + shape, arrays[0].dtype)
    for f, a in enumerate(arrays):
        out[(f,) + tuple(slice(0, n) for n in a.shape)] = a
    return out


def vp_ranking(names: list[str], summaries: dict, exact: bool, pairs: dict) -> Ranking:
    """The fleets ranked by mean VP (:mod:`analyzer.core.ranking`): paired differences to the
    best from the kernel's VP pair sums (every pair of fleets on the same random numbers), exact
    differences in an exact run."""
    means = [summaries[f"vp.{n}"].mean for n in names]
    diffs = PairedDifferences.exact(means) if exact else pairs[f"vp.{names[0]}"]
    return rank(names, means, diffs, metric="vp")


def ranking_lines(ranking: Ranking, summaries: dict, levels: list[str], exact: bool) -> list[str]:
    """One self-contained line per fleet, best first (zero-padded positions keep the order when
    notes are sorted): rank (tied fleets share it: 1 1 3), tie group, mean VP [95% CI], the paired
    difference to the best [95% simultaneous CI], whether it is in the best set, P(each success
    level); then one line saying how and what the best set is."""
    opts = ranking.options
    width = len(str(len(opts)))
    ties = {o.tie_group for o in opts if sum(p.tie_group == o.tie_group for p in opts) > 1}
    lines = []
    for pos, o in enumerate(opts, 1):
        s = summaries[f"vp.{o.name}"]
        vp = f"{s.mean:.3f}" if exact else f"{s.mean:.3f} [95% CI {s.ci_low:.3f}, {s.ci_high:.3f}]"
        if o.name == ranking.best:
            diff = "the best"
        elif exact:
            diff = f"{o.diff:+.3f} vs the best (exact)"
        else:
            diff = (f"{o.diff:+.3f} vs the best (paired) [{ranking.level:.0%} simultaneous CI {o.diff_low:+.3f}, "
                    f"{o.diff_high:+.3f}]")
        tie = f" (tied: group {o.tie_group})" if o.tie_group in ties else ""
        best_set = "in the best set" if o.in_best_set else "worse than the best"
        probs = ", ".join(f"{lv} {summaries[f'p_level_{lv}.{o.name}'].mean:.3f}" for lv in levels)
        lines.append(f"ranked {pos:0{width}d} by mean VP: {o.name} rank {o.rank}{tie}; {vp}; {diff}; {best_set}; "
                     f"P(level): {probs}")
    lines.append(f"ranking by mean VP: best {ranking.best}; best set (not distinguishable from the best at "
                 f"{ranking.level:.0%} simultaneous): {', '.join(ranking.best_set)}; {ranking.method}; the best's "
                 f"mean is the largest of {len(opts)} noisy means, biased upward (re-run it with another seed "
                 f"for an unbiased estimate)")
    return lines


def _own_policy_text(own: CampaignPolicy | None, shared: CampaignPolicy) -> str:
    """``; own policy: patrol spread, attack no_naval``: where a fleet's own policy departs from the
    shared one (its so is said apart), else ""."""
    if own is None:
        return ""
    mine, base = own.model_dump(), shared.model_dump()
    diff = [f"{k} {mine[k]}" for k in mine if k != "so" and mine[k] != base[k]]
    return f"; own policy: {', '.join(diff)}" if diff else "; own policy: the shared one"


def fleet_plans(p: LoadoutQuestionParams, ctx: Context, gd: GameData) -> list[Plan]:
    """The fleets a loadout point runs, in order: the listed ``fleets``, then with ``enumerate``
    every affordable fleet not listed (:func:`affordable_fleets`); ``analyzer search`` takes its
    options from here (:mod:`analyzer.analyses.search`)."""
    plans = [Plan(f.name, f.fleet, f.so, f.policy) for f in p.fleets]
    if p.enumerate:
        given = {_default_key(pl) for pl in plans} - {None}
        for boats in affordable_fleets(p, ctx, gd):
            if tuple(boats) not in given:
                plans.append(Plan(fleet_name(boats), [LoadoutParams(id=i, level=lv) for i, lv in boats], None))
        if not plans:
            raise param_error(ctx, "enumerate", "no fleet of the roster is affordable and allowed by this sheet")
    clash = sorted({pl.name for pl in plans[len(p.fleets):]} & {f.name for f in p.fleets})
    if clash:
        raise param_error(ctx, "fleets", f"{', '.join(clash)}: the name of an enumerated fleet; rename it")
    return plans


@register
class Loadout(Question):
    game = "uboat_leader"
    name = "loadout"
    summary = ("Fleets and SO spending plans within one budget on common random numbers: mean VP, P(each "
               "success level), paired VP differences with CIs and a ranking; enumerate: true ranks every "
               "affordable fleet (PLACEHOLDER sheet, map, card and module values)")
    Params = LoadoutQuestionParams
    rule_options = CAMPAIGN_OPTIONS + ENGAGEMENT_OPTIONS + WOLFPACK_OPTIONS
    #: metric names carry the fleet names, so no fixed name exists: a precision target or
    #: ``analyzer sensitivity`` needs ``precision_metric`` / ``--metric`` (e.g. vp_diff.<fleet>)
    primary_metric = "vp.<first fleet>"
    default_plots = False

    @staticmethod
    def search_space(sc, so_plans=None, policies=None):
        """``analyzer search``: the fleets (crossed with ``so_plans`` and ``policies``), raced on this kernel."""
        from analyzer.games.uboat_leader.search_space import LoadoutSpace
        return LoadoutSpace(sc, so_plans, fleet_plans, FleetPlan, policies)

    def option_params(self, params: LoadoutQuestionParams, options: list[str]) -> LoadoutQuestionParams | None:
        """The point playing only the fleets ``options`` (the ranking's names), each as the point plays
        it: a listed fleet as listed (its SO plan, its own policy), an enumerated one as enumeration
        makes it (its boats at their crew levels with default loadouts, the shared policy: the name
        says which, :func:`parse_fleet_name`). The file's first fleet is not added in front as the
        stream's anchor (``analyzer search``'s :class:`~analyzer.games.uboat_leader.search_space.LoadoutSpace`
        does, to play an option's trials exactly as ``analyzer run`` does; the re-estimation plays
        fresh streams anyway, and a fleet's campaign is the same function of its stream whatever
        fleets play beside it). One fleet is played alone: the parameters are not validated again (a
        scenario file gives two fleets or more, a comparison; the kernel plays a lone fleet as the
        first of several). None when an option is neither a listed nor an enumerated fleet."""
        listed = {f.name: f for f in params.fleets}
        fleets = []
        for name in options:
            boats = None if name in listed or not params.enumerate else parse_fleet_name(name)
            if name not in listed and boats is None:
                return None
            # model_construct: an enumerated fleet's name may be longer than a file's name may be
            fleets.append(listed[name] if name in listed else FleetPlan.model_construct(
                name=name, fleet=[LoadoutParams(id=i, level=lv) for i, lv in boats], so=None, policy=None))
        return params.model_copy(update={"fleets": fleets, "enumerate": False,
                                         "max_fleets": max(params.max_fleets, len(fleets))})

    def prepare(self, p: LoadoutQuestionParams, ctx: Context) -> Prepared:
        gd = GameData(ctx)
        plans = fleet_plans(p, ctx, gd)
        if len(plans) > p.max_fleets:
            raise param_error(ctx, "max_fleets", f"{len(plans)} fleets to run, max_fleets is {p.max_fleets}: raise "
                              f"max_fleets to {len(plans)} or narrow levels / list fleets")
        compiled = []
        for k, pl in enumerate(plans):
            shared = p.policy if pl.policy is None else pl.policy
            policy = shared if pl.so is None else shared.model_copy(update={"so": pl.so})
            cp = CampaignParams(campaign=p.campaign, duration=p.duration, fleet=pl.fleet, policy=policy,
                                max_turns=p.max_turns, max_rounds=p.max_rounds)
            try:
                compiled.append(compile_campaign(cp, ctx, gd))
            except ScenarioError as e:
                if k >= len(p.fleets) or not e.path.startswith(("params.fleet", "params.policy.so")):
                    raise  # an enumerated fleet, or a parameter all fleets share
                where = e.path.replace("params.", f"params.fleets[{k}].", 1).replace(".policy.so", ".so")
                raise ScenarioError(e.file, where, f"fleet {pl.name}: {e.message}") from None
        names = [pl.name for pl in plans]
        levels = compiled[0].level_names
        n = len(plans)
        base = names[0]
        metrics = [Metric(f"vp.{m}", f"campaign VP of fleet {m}") for m in names]
        metrics += [Metric(f"vp_diff.{m}", f"VP of {m} minus VP of {base}, same random numbers (paired)", "value",
                           distribution=False) for m in names]
        metrics += [Metric(f"boats_lost.{m}", f"U-boats of {m} sunk") for m in names]
        metrics += [Metric(f"p_level_{lv}.{m}", f"P(success level {lv}) with {m}", "probability")
                    for lv in levels for m in names]
        metrics += [Metric(f"mission_vp.{m}", f"Special Mission VP of fleet {m}") for m in names]
        assert len(metrics) == (K.G_LEVEL0 + len(levels) + 1) * n
        for pl in plans:                   # per boat of each fleet (kernel order: LB_VP, LB_LOST)
            for b in pl.fleet:
                where = dict(entity=pl.name, coords=(("boat", b.id),))
                metrics += [Metric(f"boat_vp.{pl.name}.{b.id}", f"VP of {b.id} in fleet {pl.name}", distribution=False,
                                   quantity="boat_vp", **where),
                            Metric(f"boat_lost.{pl.name}.{b.id}", f"P({b.id} sunk) in fleet {pl.name}", "probability",
                                   quantity="boat_lost", **where)]
        fleets = CampaignArgs._make(_stack(list(field)) for field in zip(*(c.args for c in compiled)))
        lcfg = np.zeros(K.N_LCFG, np.int64)
        lcfg[[K.L_N_FLEETS, K.L_N_LEVELS, K.L_N_METRICS]] = [n, len(levels), len(metrics)]
        args = K.LoadoutArgs(lcfg, fleets.config.max(axis=0), *fleets)

        advanced = any(b.advanced.fat + b.advanced.t5 for pl in plans for b in pl.fleet)
        placeholders = campaign_placeholders(ctx.rules, advanced, gd)
        so_pol = lambda pl: pl.so if pl.so is not None else (pl.policy or p.policy).so  # noqa: E731
        notes = [placeholder_note(ctx.rules, placeholders),
                 f"{n} fleets on common random numbers (every trial plays each fleet's campaign from the same "
                 f"random stream); vp_diff.<fleet> = VP minus the VP of {base}: its CI is the paired CI"]
        notes += [f"fleet {pl.name}: " + ", ".join(_boat_text(b) for b in pl.fleet)
                  + f"; cost {c.fleet_cost:g} of {c.so_total:g} SO; so policy {_so_text(so_pol(pl))}"
                  + _own_policy_text(pl.policy, p.policy)
                  for pl, c in zip(plans, compiled)]
        counters = tuple(dataclasses.replace(c, note=c.note.replace("campaigns stopped", "fleet-campaigns "
                                                                    "stopped").replace(" (p_turn_cap)", ""))
                         for c in COUNTERS)

        # the kernel's VP pair sums: counter columns after the campaign's (kernels.uboat_leader.loadout)
        group = PairedGroup(tuple(f"vp.{m}" for m in names), len(counters))
        counters += tuple(Counter(f"vp_pair.{names[i]}.{names[j]}") for i in range(n) for j in range(i + 1, n))

        def ranking(summaries: dict, exact: bool, pairs: dict, trials: int) -> list[Ranking]:
            return [vp_ranking(names, summaries, exact, pairs)]

        def notes_of(summaries: dict, exact: bool, rankings: list[Ranking]) -> list[str]:
            return ranking_lines(rankings[0], summaries, levels, exact)

        facts = {pl.name: {"boats": ", ".join(_boat_text(b) for b in pl.fleet), "cost": float(c.fleet_cost),
                           "setup_cost": float(c.setup_cost), "budget": float(c.so_total),
                           "so_policy": _so_text(so_pol(pl))} for pl, c in zip(plans, compiled)}
        return Prepared(metrics, N_BINS, kernel=K.loadout_kernel, args=args, counters=counters,
                        placeholders=tuple(placeholders), notes=tuple(notes), derived_notes=notes_of,
                        paired_groups=(group,), derived_ranking=ranking, entity_columns=facts)

    def plots(self, meta, points, dists):
        from analyzer.games.uboat_leader import plots  # matplotlib only when plotting
        return plots.loadout_figures(meta, points, dists)


def _so_text(so) -> str:
    return so if isinstance(so, str) else re.sub(r"\s+", " ", str(so.model_dump(exclude_none=True)))


def _boat_text(b: LoadoutParams) -> str:
    """``U-47 trained`` and whatever the loadout changes (mines, FAT/T5, missions, torpedoes, port)."""
    extra = [f"{k} {v}" for k, v in (("ready", b.ready), ("stored", b.stored), ("fat", b.advanced.fat),
                                      ("t5", b.advanced.t5), ("mines", b.mines), ("port", b.port)) if v]
    extra += [f"{m} mission" for m in b.missions]
    return " ".join([b.id, b.level] + extra)
