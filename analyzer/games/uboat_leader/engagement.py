"""Question ``engagement``: one contact (a Convoy card) against one U-boat or a Wolfpack on
the tactical display (digest §6.4-§7.5; docs/models/uboat_leader.md §4).

The source stops in the middle of escort movement: everything from there on (escort
movement, torpedo and gun attacks, ship attacks on U-boats, end of round, reloads,
post-combat Stress) runs on the PLACEHOLDER rule modules selected by rule options, and all
card numbers are placeholders, so every result of this question is a placeholder result
until the data and the modules are replaced. Policies are modelling choices, not rules.
"""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from analyzer.games.uboat_leader.compile import compile_engagement
from analyzer.games.uboat_leader.data import GameData
from analyzer.games.uboat_leader.escort_detection import TacticsParam, tactics_chits
from analyzer.games.uboat_leader.rules import ENGAGEMENT_OPTIONS, module_placeholders
from analyzer.core.questions import Context, Counter, Metric, Prepared, Question, register
from kernels.uboat_leader import state as S
from kernels.uboat_leader.engagement import engagement_kernel

#: Upper limit of the named round cap ``max_rounds`` (a typo guard).
MAX_ROUNDS_LIMIT = 1000

METRICS = [
    Metric("vp", "VP of ships sunk"),
    Metric("xp", "XP of ships sunk"),
    Metric("ships_sunk", "ships sunk"),
    Metric("torpedoes_used", "torpedoes fired"),
    Metric("p_uboat_lost", "P(a U-boat is sunk)", "probability"),
    Metric("uboats_lost", "U-boats sunk"),
    Metric("stress_added", "Stress added (all boats)"),
    Metric("rounds", "combat rounds"),
    Metric("p_round_cap", "P(stopped at max_rounds)", "probability"),
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BoatParams(_Strict):
    id: str = Field(..., description="U-boat card id in data/uboats.yaml, e.g. U-98")
    level: Literal["green", "trained", "veteran", "ace"] = Field("veteran", description="crew level (card side)")
    start: str = Field("L4", description="start Area: Long Range (Infiltrators also Medium/Short), §6.4")
    stress: int = Field(0, ge=0, le=100, description="Stress at the start of the battle")


class PolicyParams(_Strict):
    approach: Literal["surfaced", "submerged", "dive_on_detection"] = Field(
        "surfaced", description="side shown from setup; dive_on_detection submerges once Detected")
    target: Literal["max_vp", "nearest"] = Field("max_vp", description="whom to approach and attack")
    attack_escorts: bool = Field(False, description="escorts are targets (and movement goals)")
    attack_range: int = Field(0, ge=0, le=20, description="stop approaching at this range of the target")
    salvo: int = Field(2, ge=1, le=20, description="torpedoes per torpedo attack")
    silent_running: Literal["when_detected", "never"] = Field("when_detected",
                                                              description="use Silent Running when Detected submerged")
    break_off: Literal["when_empty", "when_detected", "never"] = Field(
        "when_empty", description="leave when unarmed or no target (when_empty), also when Detected, or never")


def _default_boats():
    return [BoatParams(id="U-98", level="veteran", start="L4", stress=0)]


class EngagementParams(_Strict):
    convoy: int = Field(37, description="Convoy card number in data/convoys.yaml")
    uboats: list[BoatParams] = Field(default_factory=_default_boats, min_length=1, max_length=S.MAX_BOATS,
                                     description="the active U-boat first, then the Wolfpack joiners")
    alerted: int = Field(0, ge=0, le=20, description="Alerted counters on the display (constant in the battle)")
    tactics: TacticsParam = Field("none", description="Escort Tactics: none (before June 1942), pool (data cup), "
                                  "a list of counter values (the cup), or one value for every escort")
    policy: PolicyParams = Field(default_factory=PolicyParams)
    max_rounds: int = Field(20, ge=1, le=MAX_ROUNDS_LIMIT, description="the named round cap")

    @model_validator(mode="after")
    def _checks(self):
        ids = [b.id for b in self.uboats]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"uboats: each U-boat once only (§2.4), repeated: {', '.join(dup)}")
        if isinstance(self.tactics, list) and not self.tactics:
            raise ValueError("tactics: a list needs at least one counter value")
        return self


#: what each column of the engagement kernel's counters means (kernels.uboat_leader.state CT_*)
ENGAGEMENT_COUNTERS = tuple(sorted((
    (S.CT_ROUND_CAP, Counter("round_cap", "trials that reached the round cap max_rounds (p_round_cap); raise "
                                          "max_rounds to see longer battles")),
    (S.CT_RESHUFFLES, Counter("reshuffles", "decks reshuffled their discards (times)")),
    (S.CT_DRAW_FAILED, Counter("draw_failed", "DECK ERROR: failed draws (should be impossible; please report)")),
    (S.CT_DUPLICATE_CARD, Counter("duplicate_card", "DECK ERROR: cards drawn while in play (should be "
                                                    "impossible; please report)")),
    (S.CT_DRAWS, Counter("draws")),
), key=lambda kc: kc[0]))
assert [k for k, _ in ENGAGEMENT_COUNTERS] == list(range(S.N_COUNTERS))


def module_note(modules: list) -> str:
    """What an engagement result's combat rests on: the rule modules the data does not describe."""
    names = ", ".join(ph.path.removeprefix("rules.") for ph in modules)
    return f"combat after escort detection runs on PLACEHOLDER rule modules (rules.{names}): not published rules"


@register
class Engagement(Question):
    game = "uboat_leader"
    name = "engagement"
    summary = ("One Convoy contact against a U-boat or Wolfpack on the tactical display: VP, torpedoes, "
               "losses, Stress (combat after escort detection uses PLACEHOLDER rule modules)")
    Params = EngagementParams
    rule_options = ENGAGEMENT_OPTIONS
    primary_metric = "vp"

    def prepare(self, p: EngagementParams, ctx: Context) -> Prepared:
        gd = GameData(ctx)
        chits = tactics_chits(p.tactics, gd, ctx) if p.tactics != "none" else [0]
        battle = compile_engagement(p, ctx, gd, chits)
        args = battle.kernel_args()
        modules = module_placeholders(ctx.rules, gd)
        notes = [module_note(modules)] if modules else []
        placeholders = modules + gd.used
        return Prepared(list(METRICS), battle.n_bins, kernel=engagement_kernel, args=args,
                        counters=tuple(c for _, c in ENGAGEMENT_COUNTERS), placeholders=tuple(placeholders),
                        notes=tuple(notes))

    def plots(self, meta, points, dists):
        from analyzer.games.uboat_leader import plots  # matplotlib only when plotting
        return plots.engagement_figures(meta, points, dists)
