"""Question ``campaign``: whole U-Boat Leader campaigns (docs/models/uboat_leader_campaign.md).

A campaign sheet, a duration, a fleet with its loadout, and the named policies of C§6; the
kernel plays Strategic, Operations, Tactical and Refit segments turn after turn until every
U-boat has done its patrols or is lost. Almost every card, sheet and map number is a
PLACEHOLDER (the source gives the procedure, not the printed values), as are Post-Combat,
Refit resupply, promotion carry-over and the advanced-torpedo effects: every result of this
question is a placeholder result until the data and modules are replaced.

Contacts: the spec's default ``engagement`` model (C§7.4: the tactical display, the engagement
kernel's round) or the ``abstract`` model (C§7.5: one torpedo round, escort rolls).
"""
from __future__ import annotations

from typing import Literal, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator

from analyzer.core.gamedata import Placeholder
from analyzer.games.uboat_leader.campaign_compile import MAX_FLEET, N_BINS, compile_campaign
from analyzer.games.uboat_leader.data import GameData
from analyzer.games.uboat_leader.engagement import PolicyParams
from analyzer.games.uboat_leader.rules import (ABSTRACT_POST_COMBAT_BLOCK, CAMPAIGN_MODULE_BLOCKS,
                                              DIGEST, ENGAGEMENT_OPTIONS, WOLFPACK_OPTIONS, module_placeholders,
                                              rule_module)
from analyzer.core.questions import Context, Counter, Metric, PointsCost, Prepared, Question, RuleOption, register
from kernels.uboat_leader import campaign_state as CS
from kernels.uboat_leader.campaign import campaign_kernel

SPEC = "docs/models/uboat_leader_campaign.md"
Band = Literal["okay", "shaken", "unfit"]


def _copt(name, values, doc, source, what_if=()):
    """A campaign rule option; ``source`` = the digest's ambiguity/gap id, or "" for a reading of the
    Spanish text itself (its lines are quoted in ``doc``)."""
    where = f"{DIGEST} {source}; {SPEC} §5" if source else f"{SPEC} §3.3, §4.1, §5"
    return RuleOption(name, tuple(values), values[0], doc, where, tuple(what_if))


CONTACT_MODEL = _copt("contact_model", ["engagement", "abstract"],
                      "a contact is fought on the tactical display (the engagement's round, C§7.4) or by the abstract "
                      "model (C§7.5: one torpedo round, escort Detection/attack rolls)",
                      "C§7")
CAMPAIGN_OPTIONS = (
    CONTACT_MODEL,
    _copt("warning_placement", ["first_card", "attack_only"],
          "Warning on the first Convoy card a boat draws in an Area ('la primera vez que cada U-Boat roba una carta "
          "de Convoy', l.378) or only when it then attacks (l.87-88)", "A3"),
    _copt("warning_duration", ["turn", "campaign"], "Warnings cleared by 'Reajustar el Mapa' each Refit, or kept",
          "G21"),
    _copt("attacked_marker", ["all_attackers", "joiners_not_searched"],
          "Attacked on every boat that attacked this Tactical Segment, or only on those that made no Contact roll "
          "of their own (l.76)", "A4"),
    _copt("attacked_duration", ["one_turn", "until_port"], "the Attacked marker re-set each Tactical Segment, or "
          "kept until port", "G21"),
    _copt("attacked_timing", ["end_of_boat_segment", "end_of_turn"],
          "the marker is placed 'al final de un Segmento Táctico en el que ha atacado' (l.76), and each boat has "
          "its own ('Completa el Segmento Táctico para el U-Boat activo antes de empezar ... con otro', l.351): "
          "a joiner that searches later in the turn has it; or only once every boat has acted (before 2026-12)",
          "A4"),
    _copt("so_purchases", ["every_strategic_segment", "setup_only"],
          "Special Missions and advanced torpedoes are bought at every Strategic Segment ('Al inicio de cada "
          "Segmento Estratégico, gasta puntos de Opción Especial y asigna Misiones Especiales', l.238; advanced "
          "torpedoes for a boat 'en un recuadro de Puerto', l.273) from the SO the U-boats left, unspent points "
          "carried on (l.255-256): each boat's fleet entry is bought again for every patrol; or once, at set-up "
          "(the model before 2026-12: a what-if, l.256 lets points be spent 'durante un Segmento Estratégico')",
          "", what_if=["setup_only"]),
    _copt("mission_box_events", ["box_only", "box_plus_move"],
          "entering a mission box draws only the box's Events ('roba el número de cartas de Evento que se indican "
          "en el recuadro', l.300) or also the Area's Movement value", "A7"),
    _copt("unfit_return", ["operations", "tactical"],
          "an Unfit boat at sea goes to the nearest port in Operations or at the start of the Tactical Segment "
          "('Si un U-Boat comienza este paso estando Incapacitado', l.334)", "A8"),
    _copt("cool", ["every_refit", "in_port"], "Cool: 'Quita 1 Punto de Estrés ... durante el Segmento de "
          "Reacondicionamiento' (l.112) every Refit, or only in port", "A14"),
    _copt("counter_duration", ["turn", "strategic_only"],
          "SO counters 'se mantiene en esta Área durante este Segmento Estratégico' (l.261): the whole turn, or "
          "only the Strategic Segment (then inert)", "A15"),
    _copt("mine_unfit", ["fails", "too_late"], "Unfit from the mine box's Event fails the mission, or the mines "
          "are already laid", "A16"),
    _copt("mine_box_events", ["one", "box_number"], "'roba 1 carta de Evento para entrar en el recuadro' (l.292), "
          "or the box's printed number", "A16"),
    _copt("raider_roll", ["modified", "natural"], "'Aplica todos los modificadores normales' (l.316) or the "
          "natural die", "A17"),
    _copt("raider_xp", ["none", "per_vp"], "no XP from a raider mission (none stated), or 1 XP per VP", "A17"),
    _copt("calendar", ["fixed", "advancing"], "'Usa el evento para el año de la Campaña' (l.129): the sheet's "
          "calendar_year, or a year advancing with the turns", "A18"),
    _copt("map_movement", ["unlimited", "one_area"], "Areas a boat may move per Operations Segment", "A19"),
    _copt("campaign_reload", ["post_combat_and_refit", "refit_only", "port_only"],
          "PLACEHOLDER module (G21): Stored -> Ready after each contact and at Refit / only at Refit / only by "
          "port resupply", "G21"),
    _copt("promotion", ["anywhere", "in_port", "none"], "PLACEHOLDER module (G21 'Promover U-Boats')", "G21"),
    _copt("advanced_torpedoes", ["placeholder_bonus", "as_normal"],
          "PLACEHOLDER module (G19: 'página 25' missing): FAT/T5 hit bonus, or ordinary torpedoes", "G19"),
)
#: campaign options that select a placeholder module (listed as placeholders unless the data
#: describes them: their blocks are ``rules.CAMPAIGN_MODULE_BLOCKS``)
CAMPAIGN_PLACEHOLDER_MODULES = ("campaign_reload", "promotion", "advanced_torpedoes")
#: engagement placeholder modules the abstract model uses (C§7.5)
ABSTRACT_MODULES = ("rules.uboat_attack", "rules.enemy_attack", "rules.post_combat_stress")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EnduranceParams(_Strict):
    return_band: Band | None = None
    min_torpedoes: int | None = Field(None, ge=0, le=100)
    max_turns_at_sea: int | None = Field(None, ge=0, le=10_000)
    sail_band: Literal["rested", "okay", "shaken", "unfit"] | None = None


class AreaChoice(_Strict):
    area: str


class BoatPolicy(_Strict):
    """C§6 policies one boat may have of its own (``fleet[i].policy``); unset = the shared ``policy``."""

    patrol: Union[Literal["best", "spread", "nearest"], AreaChoice, None] = Field(
        None, description="this boat's patrol policy (default: policy.patrol)")
    endurance: Union[Literal["balanced", "cautious", "aggressive"], EnduranceParams, None] = Field(
        None, description="this boat's endurance policy (default: policy.endurance)")
    order: int | None = Field(None, ge=0, le=1000, description=(
        "this boat's place in the activation order of the Operations and Tactical Segments and the loadout "
        "purchases ('uno por uno', l.240, l.246): ascending, ties by list order (default: its list position)"))


class AdvancedParams(_Strict):
    fat: int = Field(0, ge=0, le=50, description="FAT torpedoes (replace normal ones; ½ SO each, l.275)")
    t5: int = Field(0, ge=0, le=50, description="T5 torpedoes (replace normal ones; ½ SO each, l.275)")


class LoadoutParams(_Strict):
    id: str = Field(..., description="U-boat card id in data/uboats.yaml")
    level: Literal["green", "trained", "veteran", "ace"] = Field("trained", description="crew level bought")
    ready: int | None = Field(None, ge=0, le=50, description="normal Ready torpedoes (default: the level's Okay row)")
    stored: int | None = Field(None, ge=0, le=50, description="Stored torpedoes (default: the level's Okay row)")
    advanced: AdvancedParams = Field(default_factory=AdvancedParams)
    mines: int = Field(0, ge=0, le=50, description="torpedoes replaced by mines: assigns a mine-laying mission (l.288)")
    missions: list[str] = Field(default_factory=list, description="Special Missions in order: attack, raider")
    port: str | None = Field(None, description="starting Port box (default: the map's first)")
    policy: BoatPolicy | None = Field(None, description="this boat's own patrol / endurance policy (C§6)")

    @field_validator("missions")
    @classmethod
    def _missions(cls, v):
        for m in v:
            if m == "mine":
                raise ValueError("a mine-laying mission is given by 'mines: n' (l.288)")
            if m not in ("attack", "raider"):
                raise ValueError(f"got {m!r}; allowed: attack, raider")
        return v


def each_boat_once(fleet: list[LoadoutParams]) -> list[LoadoutParams]:
    """l.196: a U-boat may be selected only once (a pydantic field check)."""
    ids = [b.id for b in fleet]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ValueError(f"a U-boat may be selected only once (l.196), repeated: {', '.join(dup)}")
    return fleet


class SoParams(_Strict):
    order: list[Literal["loadout", "intelligence", "air_search", "supply_ship", "priority_rr"]] | None = None
    reserve: float | None = Field(None, ge=0)
    rr_min_stress: int | None = Field(None, ge=0)
    missions_at_sea: bool | None = Field(
        None, description="boats at sea, not Unfit, with no mission pending buy their fleet entry's Attack and "
                          "Raider missions again at each Strategic Segment ('puede ser adquirida para cualquier "
                          "U-Boat que no esté Incapacitado', l.296, l.311; mine-laying only in port, l.288); "
                          "default false: missions are bought only by boats leaving port")


class MaxEscorts(_Strict):
    max_escorts: int = Field(..., ge=0)


class EscortsAtLeast(_Strict):
    escorts_at_least: int = Field(..., ge=0)


class MissionPolicy(_Strict):
    abort_band: Band = Field("shaken", description="abort an Attack mission before a card at this band or worse")
    salvo: int = Field(4, ge=1, le=50)
    keep_torpedoes: int = Field(0, ge=0, le=50)


class RaiderPolicy(_Strict):
    weapons: Literal["gun_first", "torpedoes_first"] = "gun_first"
    keep_torpedoes: int = Field(0, ge=0, le=50)


class TacticalPolicy(PolicyParams):
    start: str = Field("L4", description="start Area on the tactical display (engagement model)")


class CampaignPolicy(_Strict):
    patrol: Union[Literal["best", "spread", "nearest"], AreaChoice] = "best"
    route: Literal["fewest_events", "fewest_areas"] = "fewest_events"
    endurance: Union[Literal["balanced", "cautious", "aggressive"], EnduranceParams] = "balanced"
    attack: Union[Literal["always", "no_naval", "never"], MaxEscorts] = "always"
    wolfpack: Union[Literal["always", "never"], EscortsAtLeast] = "always"
    radio_call: Union[Literal["never", "always"], EscortsAtLeast] = "never"
    so: Union[Literal["intel", "none", "air_search", "support"], SoParams] = "intel"
    air_search_choice: Literal["most_targets", "fewest_escorts"] = "most_targets"
    mission: MissionPolicy = Field(default_factory=MissionPolicy)
    raider: RaiderPolicy = Field(default_factory=RaiderPolicy)
    tactical: TacticalPolicy = Field(default_factory=TacticalPolicy)


class CampaignParams(_Strict):
    campaign: str = Field("comienza_la_batalla", description="campaign sheet stem (campaigns/<stem>.yaml)")
    duration: Literal["short", "medium", "long"] = "short"
    fleet: list[LoadoutParams] = Field(..., min_length=1, max_length=MAX_FLEET, description="U-boats in list order")
    policy: CampaignPolicy = Field(default_factory=CampaignPolicy)
    max_turns: int = Field(200, ge=1, le=10_000, description="the named campaign cap")
    max_rounds: int = Field(20, ge=1, le=1000, description="the engagement round cap (engagement model)")

    @field_validator("fleet")
    @classmethod
    def _once(cls, v):
        return each_boat_once(v)


FIXED_METRICS = [
    Metric("vp", "campaign VP (combat and missions)"),
    Metric("xp", "campaign XP"),
    Metric("boats_lost", "U-boats sunk"),
    Metric("patrols", "patrols completed (port entries)"),
    Metric("turns", "turns played"),
    Metric("p_turn_cap", "P(stopped at max_turns)", "probability"),
    Metric("so_spent", "SO spent during the campaign", "value", scale=CS.SO_UNITS),
    Metric("so_left", "SO left at the end", "value", scale=CS.SO_UNITS),
    Metric("contacts", "Convoy cards kept"),
    Metric("attacks", "contacts fought"),
    Metric("ships_sunk", "ships sunk"),
    Metric("mission_vp", "Special Mission VP"),
    Metric("mine_vp", "mine-laying VP"),
    Metric("attack_vp", "Attack mission VP"),
    Metric("raider_vp", "raider mission VP"),
    Metric("missions_failed", "Special Missions failed"),
]
assert [m.name for m in FIXED_METRICS][CS.M_MISSIONS_FAILED] == "missions_failed"

COUNTERS = (
    Counter("round_cap", "contacts stopped by the engagement round cap max_rounds (engagement model); raise "
                         "max_rounds to see longer battles"),
    Counter("reshuffles", "decks reshuffled their discards (times)"),
    Counter("draw_failed", "DECK ERROR: failed draws (should be impossible; please report)"),
    Counter("duplicate_card", "DECK ERROR: cards drawn while in play (should be impossible; please report)"),
    Counter("draws"),
    Counter("turn_cap", "campaigns stopped by the cap max_turns (p_turn_cap); raise max_turns"),
    Counter("route_failed", "ROUTE ERROR: a move found no route (should be impossible; please report)"),
)
assert len(COUNTERS) == CS.N_COUNTERS


def campaign_metrics(level_names: list[str], boat_ids: list[str], level_totals: list[int] | None = None,
                     patrol_limit: int = 0) -> list[Metric]:
    """C§8, in the kernel's order: fixed, p_level_<name> (sheet order), per boat, then per patrol
    (``patrol_vp.<k>``, ``patrol_lost.<k>`` for k = 1 .. the patrol limit). The level labels carry the
    sheet's VP total (``P(success level good: VP >= 10)``), which the VP figure draws as bands."""
    out = list(FIXED_METRICS)
    totals = level_totals or [None] * len(level_names)
    out += [Metric(f"p_level_{n}", f"P(success level {n}" + (f": VP >= {t})" if t is not None else ")"),
                   "probability") for n, t in zip(level_names, totals)]
    for b in boat_ids:
        out += [Metric(f"boat_vp.{b}", f"VP of {b}"), Metric(f"boat_xp.{b}", f"XP earned by {b}"),
                Metric(f"boat_lost.{b}", f"P({b} sunk)", "probability"),
                Metric(f"boat_patrols.{b}", f"patrols of {b}"),
                Metric(f"boat_level.{b}", f"crew level of {b} at the end (0 green .. 3 ace)")]
    for k in range(1, patrol_limit + 1):
        out += [Metric(f"patrol_vp.{k}", f"VP the boats earned on their patrol {k} (summed over the boats; a "
                                         f"patrol runs from leaving a Port box to the next Port entry)",
                       distribution=False, quantity="patrol_vp", coords=(("patrol", k),)),
                Metric(f"patrol_lost.{k}", f"U-boats lost on their patrol {k}", distribution=False,
                       quantity="patrol_lost", coords=(("patrol", k),))]
    return out


def campaign_placeholders(rules: dict, advanced: bool, gd: GameData) -> list[Placeholder]:
    """The rule modules a campaign point runs on (the abstract model uses only three of the
    engagement's; the advanced-torpedo module only when a boat carries FAT/T5) that the data ``gd``
    does not describe (:func:`~analyzer.games.uboat_leader.rules.rule_module`), then every data
    placeholder ``gd`` marked used."""
    abstract = rules["contact_model"] == "abstract"
    blocks = {"post_combat_stress": ABSTRACT_POST_COMBAT_BLOCK} if abstract else None
    placeholders = [ph for ph in module_placeholders(rules, gd, blocks) if not abstract or ph.path in ABSTRACT_MODULES]
    options = {o.name: o for o in CAMPAIGN_OPTIONS}
    placeholders += [ph for ph in (rule_module(options[name], rules[name], CAMPAIGN_MODULE_BLOCKS[name], gd,
                                               "G19/G21: placeholder rule module, not a published rule")
                                   for name in CAMPAIGN_PLACEHOLDER_MODULES if advanced or name != "advanced_torpedoes")
                     if ph is not None]
    return placeholders + gd.used


def placeholder_note(rules: dict, placeholders: list[Placeholder] | None = None) -> str:
    """The note every campaign output carries: what its results rest on (``placeholders``: the
    point's, when known: with none refused by ``strict`` the note says the data is the player's)."""
    contacts = ("contacts use the abstract contact model (C§7.5), not the tactical display"
                if rules["contact_model"] == "abstract"
                else "contacts are fought on the tactical display (C§7.4) with the engagement's "
                     "PLACEHOLDER combat modules")
    if placeholders is not None and not any(ph.refused_by_strict for ph in placeholders):
        return ("campaign results run on the game data and rule modules of your files, none of them a placeholder; "
                + contacts.replace(" with the engagement's PLACEHOLDER combat modules", ""))
    return ("campaign results run on PLACEHOLDER modules and values: the map, sheet and card numbers, "
            "Post-Combat, Refit resupply, promotion and advanced torpedoes (docs/models/uboat_leader_campaign.md "
            "§10); " + contacts)


@register
class Campaign(Question):
    game = "uboat_leader"
    name = "campaign"
    summary = ("Whole campaigns: VP distribution, success levels, losses, patrols, per-boat VP/XP and mission VP "
               "for a fleet, loadout and named policies (PLACEHOLDER sheet, map, card and module values)")
    Params = CampaignParams
    rule_options = CAMPAIGN_OPTIONS + ENGAGEMENT_OPTIONS + WOLFPACK_OPTIONS
    primary_metric = "vp"
    not_scalable = ("U-Boat Leader fleets cannot be scaled: each U-boat at most once, within the sheet's SO "
                    "(campaign spec §14.2)")

    def prepare(self, p: CampaignParams, ctx: Context) -> Prepared:
        gd = GameData(ctx)
        arrays = compile_campaign(p, ctx, gd)
        metrics = campaign_metrics(arrays.level_names, arrays.boat_ids, arrays.level_totals, arrays.patrol_limit)
        placeholders = campaign_placeholders(ctx.rules, any(b.advanced.fat + b.advanced.t5 for b in p.fleet), gd)
        if ctx.rules["so_purchases"] == "setup_only":
            cost = (f"fleet cost {arrays.fleet_cost:g} of {arrays.so_total:g} SO (loadout bought at set-up); "
                    f"so_spent / so_left count the SO kept for the campaign")
        else:
            cost = (f"U-boats cost {arrays.setup_cost:g} of {arrays.so_total:g} SO; each boat's missions and "
                    f"advanced torpedoes ({arrays.fleet_cost - arrays.setup_cost:g} SO a patrol for the fleet) are "
                    f"bought from the rest at every Strategic Segment it leaves port (l.238, l.273), counted in "
                    f"so_spent")
        notes = (placeholder_note(ctx.rules, placeholders), cost)
        facts = {None: {"fleet_cost": float(arrays.fleet_cost), "setup_cost": float(arrays.setup_cost),
                        "so_total": float(arrays.so_total)}}
        return Prepared(metrics, N_BINS, kernel=campaign_kernel, args=arrays.args, counters=COUNTERS,
                        placeholders=tuple(placeholders), notes=notes, entity_columns=facts)

    def plots(self, meta, points, dists):
        from analyzer.games.uboat_leader import plots  # matplotlib only when plotting
        return plots.campaign_figures(meta, points, dists)

    def points_cost(self, sc, overrides: dict) -> PointsCost:
        """The fleet's SO purchase cost (card levels, advanced torpedoes, missions), as
        :meth:`prepare` computes it, on the point of ``sc`` with ``overrides`` (a field contender);
        its placeholders are those of the values it adds up (each boat's own level, not every level
        of its card: issue 30)."""
        from analyzer.core import scenario as scenario_mod

        cell = scenario_mod.load(sc.path, sweep={p: [v] for p, v in overrides.items()})
        point = cell.points[0]
        ctx = cell.context(point)
        gd = GameData(ctx)
        arrays = compile_campaign(point.params, ctx, gd)
        return PointsCost(float(arrays.fleet_cost), f"SO purchase cost (of {arrays.so_total:g} SO)",
                          tuple(ph.as_dict() for ph in gd.used if ph.path in arrays.cost_paths))
