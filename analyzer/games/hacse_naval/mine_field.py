"""Question ``mine_field``: a ship crossing n hexes of a minefield (source "See-Minen", l.93-95).

docs/models/hacse_naval.md §4.4. "See-Minen lösen aus, wenn ein Schiff das gleiche Hex betritt.
Sie verursachen einen Schaden von 3W10, und treffen wie Torpedos nur Rumpf, Maschinenraum, Tank
oder Magazin." Each hex entered holds a mine with probability ``density``; the crossing stops
when the ship sinks. "See-Minen werden pauschal auf 10 Hex ... gesehen" (l.99): every mine is seen
before its hex is entered, and what the ship then does is the placeholder module rules.mine_avoidance
(G14). Minesweeping (l.99) clears the hexes beside or behind the sweeper, not those it enters: a
crossing in a swept lane is given as the unswept hexes only (noted). Exact mode enumerates every hex,
row and W10.
"""
from __future__ import annotations

from fractions import Fraction

from pydantic import BaseModel, ConfigDict, Field, field_validator

from analyzer.games.hacse_naval import rules as R
from analyzer.games.hacse_naval.data import Data, hit_location_placeholder, param_error, permille
from analyzer.games.hacse_naval.exact_damage import TooLarge
from analyzer.games.hacse_naval.torpedo_salvo import (CUT_COUNTER, exact_underwater, max_underwater_damage,
                                                      refuse_in_exact, summarise_states, underwater_args,
                                                      underwater_metrics)
from analyzer.core.questions import Context, ExactAnswer, Metric, Prepared, Question, register
from kernels.hacse_naval import torpedo_salvo as k


class MineFieldParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ship: str = Field("destroyer", description="damage sheet ships/<ship>.yaml of the crossing ship")
    hexes: int = Field(..., ge=1, le=60, description="minefield hexes the ship enters")
    density: float = Field(..., ge=0, le=1, description="P(a hex holds a mine), a multiple of 0.001")
    damage_dice: int | None = Field(None, ge=1, le=20, description="W10 per mine (default: the source's 3W10)")

    @field_validator("density")
    @classmethod
    def _permille(cls, v):
        if abs(v * 1000 - round(v * 1000)) > 1e-9:
            raise ValueError(f"density = {v}: allowed: a multiple of 0.001")
        return v


def mine_chance(density: Fraction, ctx: Context, d: Data) -> tuple[Fraction, list[str]]:
    """P(a hex entered sets off a mine) under rules.mine_avoidance, and notes. In clear weather (the only
    weather modelled) a mine is seen 10 hex off (l.99, hacse.mine.sighting_hexes), so before the ship enters
    its hex: holds_course = it goes off anyway; avoids_seen = it is avoided with P avoid_if_seen."""
    sight = int(d.rule("mine.sighting_hexes"))
    if ctx.rules["mine_avoidance"] == "holds_course":
        return density, [f"every mine is seen {sight} hex off (l.99) and the ship holds its course through the "
                         f"field (placeholder module rules.mine_avoidance = holds_course)"]
    avoid = permille(d, "mine_avoidance_module.avoid_if_seen")
    f = density * (1 - avoid)
    return f, [f"every mine is seen {sight} hex off (l.99); the ship steers clear of a seen mine with P {avoid} "
               f"(placeholder module rules.mine_avoidance = avoids_seen): P(a hex entered sets off a mine) = {f}"]


@register
class MineField(Question):
    game = "hacse_naval"
    name = "mine_field"
    summary = "A ship crossing a minefield: 3W10 per mine to Rumpf/Maschinenraum/Tank/Magazin rows (exact mode)"
    Params = MineFieldParams
    rule_options = (R.MINE_HIT_LOCATION, R.MINE_AVOIDANCE) + R.DAMAGE_OPTIONS + R.FIRE_OPTIONS
    primary_metric = "p_sunk"
    supports_exact = True

    def prepare(self, p: MineFieldParams, ctx: Context) -> Prepared:
        d = Data(ctx)
        sheet = d.sheet(p.ship, "ship", ctx.rules)
        n_dice = p.damage_dice if p.damage_dice is not None else int(d.rule("mine.damage_dice"))
        density = Fraction(round(p.density * 1000), 1000)
        f, avoid_notes = mine_chance(density, ctx, d)     # P(a hex entered sets off a mine)
        mode = ctx.rules["mine_hit_location"]
        modules = R.module(d, R.MINE_AVOIDANCE, ctx.rules["mine_avoidance"], "mine_avoidance",
                           "G14: what a ship does about a mine it sees (l.99 gives only the sighting at 10 hex) "
                           "is not in the source")
        modules += hit_location_placeholder("mine_hit_location", mode, d)
        args = (p.hexes, f.numerator, f.denominator, n_dice) + underwater_args(ctx, sheet, mode) + sheet.arrays()
        metrics = underwater_metrics("mines") + [
            Metric("damage_dealt", "damage dealt, not capped (mines, magazine explosions, fires' first 2; points "
                                   "beyond a destroyed row's [HP] counted too)")]

        def exact_answer():
            refuse_in_exact(ctx)
            try:
                dist = exact_underwater(sheet, p.hexes, float(f), n_dice, True, mode)
            except TooLarge as e:
                raise param_error(ctx, "hexes", str(e)) from None
            out = summarise_states(sheet, dist)
            return ExactAnswer({m: out[m] for m in ("p_sunk", "damage", "damage_dealt")},
                               (f"exact: {dist.n_states:,} damage states enumerated",))

        notes = [f"{p.hexes} hexes at mine density {density}; {n_dice}W10 per mine; sheet {sheet.name}; mines lie "
                 f"on the surface (placeholder G12)"] + avoid_notes + [
            "minesweeping gear (l.99: 'räumen innerhalb einer Runde alle See-Minen in Hexfeldern neben oder hinter "
            "dem Schiff') clears hexes beside or behind the sweeper, not the hexes it enters: give `hexes` as the "
            "unswept hexes the ship enters (a ship in a sweeper's wake in the same round enters none); weather "
            "('modifiziert nach Sichtverhältnis') is not modelled"]
        return Prepared(metrics, max_underwater_damage(sheet, p.hexes, n_dice) + 1, kernel=k.mine_field_kernel,
                        args=args, exact=exact_answer, counters=(CUT_COUNTER,),
                        placeholders=tuple(d.used + modules),
                        notes=tuple(notes))

    def plots(self, meta, points, dists):
        from analyzer.games.hacse_naval import plots
        return plots.mine_figures(meta, points, dists)
