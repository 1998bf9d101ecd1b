"""Question ``sighting``: finding a submerged U-boat by periscope, passive sonar or ASDIC (source
"U-Boote", l.58-64; the searcher's rangefinders and radar, l.31-32; the target's BM, l.27).

docs/models/hacse_naval.md §4.6. The net difficulty follows the source's terms; the chance of a
roll at that difficulty is the placeholder roll model (gap G1). Contact is lost at the end of
every round, so each round is a fresh roll: P(within k rounds) = 1 - (1 - p)^k (exact mode).
"""
from __future__ import annotations

from fractions import Fraction
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
    rangefinder: bool = Field(False, description="the searcher has optical rangefinders (battleships and cruisers, "
                                                 "source l.31): the range step of a normal sighting roll doubles")
    radar: bool = Field(False, description="the searcher has radar (source l.32): the range step triples, "
                                           "limited by rules.radar_limit")
    sub_ship: str = Field("type_viic", description="the U-boat's sheet (ships/<name>.yaml); only its `bm` is read, "
                                                   "under rules.sub_target_bm: ease")
    rounds: int = Field(5, ge=1, le=100, description="rounds of searching for p_sighted_within")


def _steps(distance: int, per: int, rounding: str) -> int:
    return distance // per if rounding == "floor" else -(-distance // per)


def hexes_per_step(p: SightingParams, rules: dict, s: dict) -> int:
    """Hexes per +1 range step of the searcher's normal sighting roll, in clear weather (the only
    weather modelled): "+1 je 10 Hex bei klarem Wetter" with rangefinders (l.31), tripled by radar
    with "der Aufschlag fällt nie unter +1 je 5 Hex" (l.32; rules radar_limit H5, radar_with_rangefinder H6)."""
    clear = int(s["clear_hexes_per_step"])
    optical = clear * int(s["rangefinder_range_multiple"]) if p.rangefinder else clear
    if not p.radar:
        return optical
    combine = rules["radar_with_rangefinder"]
    radar = (optical if combine == "multiply" else clear) * int(s["radar_range_multiple"])
    limit = int(s["radar_limit_hexes_per_step"])
    radar = min(radar, limit) if rules["radar_limit"] == "penalty_at_least_1_per_5_hex" else max(radar, limit)
    return max(optical, radar) if combine == "better" else radar


def net_difficulty(p: SightingParams, rules: dict, s: dict, bm_ease: int = 0) -> int | None:
    """The source's sighting difficulty (None: this sensor cannot sight the boat here), less
    ``bm_ease`` (the target's |BM| under rules.sub_target_bm: ease, l.27)."""
    net = _sensor_difficulty(p, rules, s)
    return None if net is None else net - bm_ease


def _sensor_difficulty(p: SightingParams, rules: dict, s: dict) -> int | None:
    # the range steps of a normal sighting roll (periscope, and passive sonar under add_range)
    rng_steps = _steps(p.distance, hexes_per_step(p, rules, s), rules["range_steps"])
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
    # l.62 gives ASDIC its own terms; the passive-sonar paragraph (l.61, sonar_terms) does not cover it
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
        bm_ease = 0
        if ctx.rules["sub_target_bm"] == "ease":   # l.27, H22: the sheet's bm is a placeholder (G2)
            bm_ease = abs(int(d.sheet(p.sub_ship, "sub_ship", ctx.rules, uses=("bm",)).sheet.bm))
        net = net_difficulty(p, ctx.rules, s, bm_ease)
        model = roll_model(d, ctx.rules["roll_model"])
        if net is None:
            num, den = 0, 1
            what = "cannot sight the U-boat here"
        else:
            num, den = model.numerator(net), model.denominator
            what = f"net difficulty +{net}" if net >= 0 else f"net difficulty {net}"
        pr = num / den
        n_rounds = p.rounds
        # the asked metric first: the console shows the first metrics that fit (issue 29 item 12)
        metrics = [Metric("p_sighted_within", f"P(sighted within {n_rounds} rounds)", "probability"),
                   Metric("p_sighted_round", "P(sighted in one round's roll)", "probability"),
                   Metric("rounds_to_sighting", f"round of the first sighting, {n_rounds + 1} counted for "
                                                f"'not sighted within {n_rounds}' (its mean includes those "
                                                f"trials; see rounds_to_sighting_if_seen)"),
                   Metric("rounds_to_sighting_if_seen", f"round of the first sighting given a sighting within "
                                                        f"{n_rounds} rounds (0 where the boat cannot be sighted)")]

        def exact_answer():
            q = Fraction(den - num, den)
            rounds = {r: float(q ** (r - 1) * (1 - q)) for r in range(1, n_rounds + 1)}
            rounds[n_rounds + 1] = float(q ** n_rounds)
            within = 1 - q ** n_rounds
            seen = {r: float(q ** (r - 1) * (1 - q) / within) for r in range(1, n_rounds + 1)} if num else {0: 1.0}
            return ExactAnswer({"p_sighted_within": _metric({0: float(1 - within), 1: float(within)}),
                                "p_sighted_round": _metric({0: 1 - pr, 1: pr}),
                                "rounds_to_sighting": _metric(rounds),
                                "rounds_to_sighting_if_seen": _metric(seen)})

        step = hexes_per_step(p, ctx.rules, s)
        notes = [f"{p.sensor}: {what}; P(roll succeeds) = {num}/{den} under the placeholder roll model "
                 f"{ctx.rules['roll_model']}; sonar arcs, weather (clear assumed: the normal range step is "
                 f"+1 per {step} hex for this searcher) and a damaged bridge are not modelled"]
        if bm_ease:
            notes.append(f"the U-boat's |BM| {bm_ease} ({p.sub_ship}, placeholder) eases the roll "
                         f"(rules.sub_target_bm)")
        if not num:
            notes.append("rounds_to_sighting_if_seen is 0: the boat cannot be sighted at this point")
        return Prepared(metrics, n_rounds + 2, kernel=k.sighting_kernel, args=(num, den, n_rounds),
                        exact=exact_answer, placeholders=tuple(d.used + R.model_placeholders(ctx.rules, d)),
                        notes=tuple(notes))

    def plots(self, meta, points, dists):
        from analyzer.games.hacse_naval import plots
        return plots.sighting_figures(meta, points)
