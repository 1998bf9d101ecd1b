"""Question ``torpedo_salvo``: n torpedoes against a ship (source "Torpedos", l.79-91).

docs/models/hacse_naval.md §4.3. Each torpedo hits with a given probability (or one from the
placeholder roll model at a net difficulty) and deals 5W10 to a random Rumpf, Maschinenraum,
Tank or Magazin row; the sheet's effects follow (magazine explosion 1W10 x HE, fires with their
immediate 2 damage, speed losses). Exact mode enumerates hits, hexes, rows and every W10.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from analyzer.games.hacse_naval import rules as R
from analyzer.games.hacse_naval.data import Data, Sheet, param_error, roll_model
from analyzer.games.hacse_naval.depth_charge import _metric, sheet_placeholders
from analyzer.games.hacse_naval.exact_damage import SheetExact, TooLarge, nw10
from analyzer.core.questions import Context, ExactAnswer, Metric, Prepared, Question, register
from kernels.hacse_naval import damage as kd
from kernels.hacse_naval import torpedo_salvo as k


class TorpedoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ship: str = Field("destroyer", description="target's damage sheet ships/<ship>.yaml")
    torpedoes: int = Field(..., ge=1, le=24, description="torpedoes in the salvo")
    hit_probability: float | None = Field(None, ge=0, le=1, description="chance each torpedo hits (a multiple "
                                          "of 0.001); or give hit_difficulty")
    hit_difficulty: int | None = Field(None, ge=-30, le=60, description="net difficulty of the target's evasion "
                                       "(placeholder roll model: P(hit) = 1 - P(evasion roll succeeds))")
    damage_dice: int | None = Field(None, ge=1, le=20, description="W10 per torpedo (default: the source's 5W10)")

    @model_validator(mode="after")
    def _one_hit_rule(self):
        if (self.hit_probability is None) == (self.hit_difficulty is None):
            raise ValueError("give exactly one of hit_probability or hit_difficulty")
        if self.hit_probability is not None and abs(self.hit_probability * 1000 - round(self.hit_probability * 1000)) > 1e-9:
            raise ValueError(f"hit_probability = {self.hit_probability}: allowed: a multiple of 0.001")
        return self


def hit_chance(p, ctx: Context, d: Data) -> tuple[int, int]:
    """(numerator, denominator) of one torpedo's chance to hit."""
    if p.hit_probability is not None:
        f = Fraction(round(p.hit_probability * 1000), 1000)
        return f.numerator, f.denominator
    model = roll_model(d, ctx.rules["roll_model"])
    evade = model.p_success(p.hit_difficulty)       # the target's evasion roll at that net difficulty
    f = 1 - evade
    den = model.denominator
    return int(f * den), den


def underwater_rows(sheet: Sheet) -> list[tuple[int, float]]:
    """[(row, p)] of a torpedo or mine hit: uniform hex among those with an eligible row, then a
    uniform eligible row of it (placeholder G4)."""
    hexes = sheet.torpedo_hexes
    out = []
    for h in hexes:
        n = int(sheet.hex_elig_n[h])
        out += [(int(sheet.hex_elig[h, i]), 1.0 / (len(hexes) * n)) for i in range(n)]
    return out


def exact_underwater(sheet: Sheet, n_events: int, p_event: float, n_dice: int, stop_when_sunk_between: bool):
    """{state: p} after ``n_events`` chances (each with probability ``p_event``) of an nW10 hit."""
    ex = SheetExact(sheet)
    rows = underwater_rows(sheet)
    amounts = {a: q * p_event for a, q in nw10(n_dice).items()}
    amounts[0] = amounts.get(0, 0.0) + (1 - p_event)
    dist = {ex.initial(): 1.0}
    for _ in range(n_events):
        dist = ex.hit_dist(dist, amounts, rows, skip_if_sunk=stop_when_sunk_between)
    return dist


def summarise_states(sheet: Sheet, dist: dict) -> dict:
    """Exact p_sunk, damage, speed_lost, fires of a state distribution."""
    sunk = 0.0
    damage: dict[int, float] = {}
    speed: dict[int, float] = {}
    fires: dict[int, float] = {}
    for (dmg, tally, total), p in dist.items():
        sunk += p * tally[kd.T_SUNK]
        damage[total] = damage.get(total, 0.0) + p
        s = int(kd.speed_lost(sheet.rows, sheet.info, np.asarray(dmg, np.int64), np.asarray(tally, np.int64)))
        speed[s] = speed.get(s, 0.0) + p
        fires[tally[kd.T_FIRES]] = fires.get(tally[kd.T_FIRES], 0.0) + p
    return {"p_sunk": _metric({0: 1 - sunk, 1: sunk}), "damage": _metric(damage), "speed_lost": _metric(speed),
            "fires": _metric(fires)}


def max_underwater_damage(sheet: Sheet, events: int, n_dice: int) -> int:
    follow = int(sheet.rows[:, kd.HE].sum()) * 10 + 2 * 3 * sheet.n_rows
    return 10 * n_dice * events + follow


def torpedo_timeline(speed: int, max_range: int, first_move: str = "next_round",
                     lifetime: str = "floor") -> list[tuple[int, int]]:
    """[(rounds after the firing round, hexes run at the end of that round)] of one torpedo.

    Source l.82-85: 'Mittel' is its speed; 'Am Ende der nächsten Runde wird der Torpedo auf dieses
    Zielhex in gerader Linie bewegt ... fortgesetzt, bis die maximale Reichweite'; 'Nach
    (Reichweite/Geschwindigkeit) Runden geht der Torpedo wirkungslos verloren'. Digest H18:
    ``first_move`` next_round (the round after firing) or this_round (the end of the firing
    round); ``lifetime`` floor or ceil of range / speed (a last partial run stops at the range).
    """
    rounds = max_range // speed if lifetime == "floor" else -(-max_range // speed)
    first = 1 if first_move == "next_round" else 0
    return [(first + i, min((i + 1) * speed, max_range)) for i in range(rounds)]


@register
class TorpedoSalvo(Question):
    game = "hacse_naval"
    name = "torpedo_salvo"
    summary = "A torpedo salvo (5W10 each to Rumpf/Maschinenraum/Tank/Magazin rows) against a ship (exact mode)"
    Params = TorpedoParams
    rule_options = (R.ENGINE_SPEED, R.ROLL_MODEL) + R.DAMAGE_OPTIONS
    primary_metric = "p_sunk"
    supports_exact = True

    def prepare(self, p: TorpedoParams, ctx: Context) -> Prepared:
        d = Data(ctx)
        sheet = d.sheet(p.ship, "ship", ctx.rules, uses=("hexes", "max_speed"))
        n_dice = p.damage_dice if p.damage_dice is not None else int(d.rule("torpedo.damage_dice"))
        num, den = hit_chance(p, ctx, d)
        placeholders = list(d.used) + sheet_placeholders()
        if p.hit_difficulty is not None:
            placeholders += R.model_placeholders(ctx.rules)
        elig = np.asarray(sheet.torpedo_hexes, np.int64)
        if elig.size == 0:
            raise param_error(ctx, "ship", f"{p.ship!r} has no Rumpf, Maschinenraum, Tank or Magazin row")
        args = (p.torpedoes, num, den, n_dice, elig) + sheet.arrays()
        metrics = [Metric("p_sunk", "P(ship sunk: a Rumpf row destroyed)", "probability"),
                   Metric("damage", "damage the ship's rows took (torpedoes, magazine explosions, fires' first 2)"),
                   Metric("speed_lost", f"speed lost (of {sheet.sheet.max_speed}): leaks, funnel, tank, engine rows"),
                   Metric("fires", "fires started")]

        def exact_answer():
            try:
                dist = exact_underwater(sheet, p.torpedoes, num / den, n_dice, True)
            except TooLarge as e:
                raise param_error(ctx, "torpedoes", str(e)) from None
            return ExactAnswer(summarise_states(sheet, dist), (f"exact: {len(dist):,} damage states enumerated",))

        notes = [f"P(a torpedo hits) = {num}/{den}; {n_dice}W10 per hit; sheet {sheet.name} ({sheet.sheet.name}); "
                 f"fires are counted with their immediate 2 damage, later fire rounds are the `fire` question"]
        return Prepared(metrics, max_underwater_damage(sheet, p.torpedoes, n_dice) + 1,
                        kernel=k.torpedo_salvo_kernel, args=args, exact=exact_answer,
                        placeholders=tuple(placeholders), notes=tuple(notes))

    def plots(self, meta, points, dists):
        from analyzer.games.hacse_naval import plots
        return plots.torpedo_figures(meta, points, dists)
