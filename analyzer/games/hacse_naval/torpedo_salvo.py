"""Question ``torpedo_salvo``: n torpedoes against a ship (source "Torpedos", l.79-91).

docs/models/hacse_naval.md §4.3. Each torpedo hits with a given probability (or one from the
placeholder roll model at a net difficulty) and deals 5W10 to a Rumpf, Maschinenraum, Tank or
Magazin row drawn by the placeholder rule hit_location; the sheet's effects follow (magazine explosion 1W10 x HE, fires with their
immediate 2 damage, speed losses). Exact mode enumerates hits, hexes, rows and every W10.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from analyzer.games.hacse_naval import rules as R
from analyzer.games.hacse_naval.data import Data, Sheet, hit_location_placeholder, hit_rows, param_error, roll_model
from analyzer.games.hacse_naval.depth_charge import _metric
from analyzer.games.hacse_naval.exact_damage import TooLarge, fold_hits, nw10
from analyzer.core.errors import ScenarioError
from analyzer.core.questions import Context, Counter, ExactAnswer, Metric, Prepared, Question, register
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


def refuse_in_exact(ctx: Context) -> None:
    """The exact engine (exact_damage.py) starts a fire only when a threshold is crossed."""
    if ctx.rules.get("fire_repeats") == "every_hit_past_threshold":
        raise ScenarioError(str(ctx.scenario_file or ctx.scenario_dir), "rules.fire_repeats", "exact mode does not "
                            "support fire_repeats = every_hit_past_threshold (the default): run Monte Carlo, or set "
                            "fire_repeats: once_per_threshold")


def underwater_args(ctx: Context, sheet: Sheet, mode: str) -> tuple:
    """(eligible hexes, eligible rows, kernel hit mode) of hit location ``mode`` (kernels.hacse_naval.torpedo_salvo)."""
    hexes = sheet.torpedo_hexes
    if not hexes:
        raise param_error(ctx, "ship", f"{sheet.name!r} has no Rumpf, Maschinenraum, Tank or Magazin row")
    if mode == "bow_hex":
        if hexes[0] != 0:
            raise param_error(ctx, "ship", f"mine_hit_location = bow_hex: the bow hex (hexes[0]) of {sheet.name!r} "
                              f"has no Rumpf, Maschinenraum, Tank or Magazin row")
        hexes = hexes[:1]
    rows = [r for r, _ in hit_rows(sheet, "uniform_row")]
    return np.asarray(hexes, np.int64), np.asarray(rows, np.int64), int(mode == "uniform_row")


def exact_underwater(sheet: Sheet, n_events: int, p_event: float, n_dice: int, stop_when_sunk_between: bool,
                     mode: str = "hex_then_row"):
    """Exact marginals (exact_damage.Folded) after ``n_events`` chances (each with probability
    ``p_event``) of an nW10 hit; refused (TooLarge) before enumerating when too large."""
    return fold_hits(sheet, n_events, p_event, nw10(n_dice), hit_rows(sheet, mode), stop_when_sunk_between)


def summarise_states(sheet: Sheet, folded) -> dict:
    """Exact p_sunk, damage (each row's damage capped at its [HP]), speed_lost, fires, damage_dealt."""
    return {"p_sunk": _metric({0: 1 - folded.p_sunk, 1: folded.p_sunk}), "damage": _metric(folded.damage),
            "speed_lost": _metric(folded.speed_lost), "fires": _metric(folded.fires),
            "damage_dealt": _metric(folded.damage_dealt)}


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


CUT_COUNTER = Counter("fire_workspace_cut", f"fires burning untracked beyond kernels.hacse_naval.damage.MAX_FIRES "
                                            f"= {kd.MAX_FIRES} or follow-up hits dropped (repeated fires)")


def underwater_metrics(weapon: str) -> list[Metric]:
    """p_sunk and damage (capped at each row's [HP]) of a torpedo salvo or a mine crossing."""
    return [Metric("p_sunk", "P(ship sunk: a Rumpf row destroyed)", "probability"),
            Metric("damage", f"damage the ship's rows took ({weapon}, magazine explosions, fires' first 2), each "
                             f"row's damage capped at its [HP]")]


@register
class TorpedoSalvo(Question):
    game = "hacse_naval"
    name = "torpedo_salvo"
    summary = "A torpedo salvo (5W10 each to Rumpf/Maschinenraum/Tank/Magazin rows) against a ship (exact mode)"
    Params = TorpedoParams
    rule_options = (R.ENGINE_SPEED, R.ROLL_MODEL, R.HIT_LOCATION) + R.DAMAGE_OPTIONS + R.FIRE_OPTIONS
    primary_metric = "p_sunk"
    supports_exact = True

    def prepare(self, p: TorpedoParams, ctx: Context) -> Prepared:
        d = Data(ctx)
        sheet = d.sheet(p.ship, "ship", ctx.rules, uses=("hexes", "max_speed"))
        n_dice = p.damage_dice if p.damage_dice is not None else int(d.rule("torpedo.damage_dice"))
        num, den = hit_chance(p, ctx, d)
        mode = ctx.rules["hit_location"]
        placeholders = list(d.used) + [hit_location_placeholder("hit_location", mode)]
        if p.hit_difficulty is not None:
            placeholders += R.model_placeholders(ctx.rules)
        args = (p.torpedoes, num, den, n_dice) + underwater_args(ctx, sheet, mode) + sheet.arrays()
        metrics = underwater_metrics("torpedoes") + [
            Metric("speed_lost", f"speed lost (of {sheet.sheet.max_speed}): leaks, funnel, tank, engine rows; "
                                 f"averaged over every trial, sunk ships included"),
            Metric("fires", "fires started"),
            Metric("damage_dealt", "damage dealt, not capped (torpedoes, magazine explosions, fires' first 2; "
                                   "points beyond a destroyed row's [HP] counted too)")]

        def exact_answer():
            refuse_in_exact(ctx)
            try:
                dist = exact_underwater(sheet, p.torpedoes, num / den, n_dice, True, mode)
            except TooLarge as e:
                raise param_error(ctx, "torpedoes", str(e)) from None
            return ExactAnswer(summarise_states(sheet, dist), (f"exact: {dist.n_states:,} damage states enumerated",))

        notes = [f"P(a torpedo hits) = {num}/{den}; {n_dice}W10 per hit; sheet {sheet.name} ({sheet.sheet.name}); "
                 f"fires are counted with their immediate 2 damage, later fire rounds are the `fire` question"]
        return Prepared(metrics, max_underwater_damage(sheet, p.torpedoes, n_dice) + 1,
                        kernel=k.torpedo_salvo_kernel, args=args, exact=exact_answer, counters=(CUT_COUNTER,),
                        placeholders=tuple(placeholders), notes=tuple(notes))

    def plots(self, meta, points, dists):
        from analyzer.games.hacse_naval import plots
        return plots.torpedo_figures(meta, points, dists)
