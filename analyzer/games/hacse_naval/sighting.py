"""Question ``sighting``: finding a submerged U-boat by periscope, passive sonar or ASDIC (source
"U-Boote", l.58-64).

docs/models/hacse_naval.md §4.6. The net difficulty follows the source's terms; the chance of a
roll at that difficulty is the placeholder roll model (gap G1). Contact is lost at the end of
every round, so each round is a fresh roll: P(within k rounds) = 1 - (1 - p)^k (exact mode).
"""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from analyzer.games.hacse_naval import rules as R
from analyzer.games.hacse_naval.data import Data, roll_model
from analyzer.games.hacse_naval.depth_charge import _metric
from analyzer.core.questions import Context, ExactAnswer, Metric, Prepared, Question, register
from kernels.hacse_naval import sighting as k


class SightingParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sensor: Literal["periscope", "passive_sonar", "asdic"] = Field(..., description="how the U-boat is sought")
    own_speed: int = Field(0, ge=0, le=40, description="the searching ship's speed")
    sub_depth: int = Field(..., ge=0, le=20, description="U-boat depth level (1 = periscope depth)")
    distance: int = Field(..., ge=0, le=200, description="hexes between searcher and U-boat")
    sub_speed: int = Field(0, ge=0, le=20, description="U-boat speed (eases passive sonar)")
    periscope_raised: bool = Field(True, description="the U-boat shows its periscope (periscope sighting)")
    rounds: int = Field(5, ge=1, le=100, description="rounds of searching for p_sighted_within")


def _steps(distance: int, per: int, rounding: str) -> int:
    return distance // per if rounding == "floor" else -(-distance // per)


def net_difficulty(p: SightingParams, rules: dict, s: dict) -> int | None:
    """The source's sighting difficulty (None: this sensor cannot sight the boat here)."""
    rng_steps = _steps(p.distance, int(s["clear_hexes_per_step"]), rules["range_steps"])
    if p.sensor == "periscope":   # "Wenn sie auf Tiefe 1 sind und das Periskop ausgefahren haben"
        if p.sub_depth != int(s["periscope_depth"]) or not p.periscope_raised:
            return None
        base = int(s["periscope_difficulty"])
        return base + rng_steps if rules["periscope_difficulty"] == "added_to_range" else base
    if p.sensor == "passive_sonar":
        net = (s["sonar_per_own_speed"] * p.own_speed + s["sonar_per_depth"] * p.sub_depth
               + s["sonar_per_hex"] * p.distance - s["sonar_per_sub_speed"] * p.sub_speed)
        return int(net + (rng_steps if rules["sonar_terms"] == "add_range" else 0))
    if p.own_speed > int(s["asdic_max_own_speed"]):  # "wenn es mit Geschwindigkeit 6 oder weniger fährt"
        return None
    return int(s["asdic_per_depth"] * p.sub_depth
               + _steps(p.distance, int(s["asdic_hexes_per_step"]), rules["range_steps"]))


@register
class Sighting(Question):
    game = "hacse_naval"
    name = "sighting"
    summary = "Sighting a submerged U-boat: net difficulty per sensor and P(sighted) per round / within k (exact)"
    Params = SightingParams
    rule_options = R.SIGHTING_OPTIONS
    primary_metric = "p_sighted_within"
    supports_exact = True
    default_plots = False   # the per-sensor range x depth heatmap replaces the generic ones

    def prepare(self, p: SightingParams, ctx: Context) -> Prepared:
        d = Data(ctx)
        s = d.rule("sighting")
        net = net_difficulty(p, ctx.rules, s)
        model = roll_model(d, ctx.rules["roll_model"])
        if net is None:
            num, den = 0, 1
            what = "cannot sight the U-boat here"
        else:
            num, den = model.numerator(net), model.denominator
            what = f"net difficulty +{net}" if net >= 0 else f"net difficulty {net}"
        pr = num / den
        metrics = [Metric("p_sighted_round", "P(sighted in one round's roll)", "probability"),
                   Metric("p_sighted_within", f"P(sighted within {p.rounds} rounds)", "probability"),
                   Metric("rounds_to_sighting", f"round of the first sighting ({p.rounds + 1} = not within "
                                                f"{p.rounds})")]

        def exact_answer():
            rounds = {r: (1 - pr) ** (r - 1) * pr for r in range(1, p.rounds + 1)}
            rounds[p.rounds + 1] = (1 - pr) ** p.rounds
            within = 1 - (1 - pr) ** p.rounds
            return ExactAnswer({"p_sighted_round": _metric({0: 1 - pr, 1: pr}),
                                "p_sighted_within": _metric({0: 1 - within, 1: within}),
                                "rounds_to_sighting": _metric(rounds)})

        notes = [f"{p.sensor}: {what}; P(roll succeeds) = {num}/{den} under the placeholder roll model "
                 f"{ctx.rules['roll_model']}; sonar arcs and a damaged bridge are not modelled"]
        return Prepared(metrics, p.rounds + 2, kernel=k.sighting_kernel, args=(num, den, p.rounds),
                        exact=exact_answer, placeholders=tuple(d.used + R.model_placeholders(ctx.rules)),
                        notes=tuple(notes))

    def plots(self, meta, points, dists):
        from analyzer.games.hacse_naval import plots
        return plots.sighting_figures(meta, points)
