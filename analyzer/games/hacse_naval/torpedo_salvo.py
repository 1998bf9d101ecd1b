"""Question ``torpedo_salvo``: n torpedoes against a ship (source "Torpedos", l.79-91).

docs/models/hacse_naval.md §4.3. Each torpedo meets the target with a given probability, or by the
target's torpedo sighting roll (l.87) and the placeholder evasion module (G13), or by the placeholder
evasion roll; it does not when a ship stands in its path (l.85), the target is beyond 'Weit' (l.83) or
inside the arming range 'Nah' (l.81, rules.torpedo_arming). A hit deals 5W10 to a Rumpf, Maschinenraum,
Tank or Magazin row drawn by the placeholder rule hit_location; the sheet's effects follow (magazine explosion 1W10 x HE, fires with their
immediate 2 damage, speed losses). Exact mode enumerates hits, hexes, rows and every W10.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from analyzer.games.hacse_naval import rules as R
from analyzer.games.hacse_naval.data import (Data, Sheet, hit_location_placeholder, hit_rows, param_error, permille,
                                             roll_model)
from analyzer.games.hacse_naval.depth_charge import _metric
from analyzer.games.hacse_naval.exact_damage import TooLarge, nw10
from analyzer.games.hacse_naval.exact_fold import fold_by_hex
from analyzer.core.errors import ScenarioError
from analyzer.core.gamedata import Placeholder
from analyzer.core.questions import Context, Counter, ExactAnswer, Metric, Prepared, Question, register
from kernels.hacse_naval import damage as kd
from kernels.hacse_naval import torpedo_salvo as k


class TorpedoSighting(BaseModel):
    model_config = ConfigDict(extra="forbid")

    range_hexes: int = Field(..., ge=0, le=200, description="hexes between the target's lookout and the torpedo "
                             "when it looks (the range steps of its sighting roll)")
    firer_sighted: bool = Field(False, description="the firing unit is sighted by the target: the torpedo's target "
                                "hex is known without a roll ('Auf das Sichten des Torpedos kann verzichtet werden', "
                                "l.87)")
    radar: bool = Field(False, description="the target has radar: no effect on the roll ('Radar bringt jedoch keine "
                                           "Erleichterung', l.87)")


class TorpedoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ship: str = Field("destroyer", description="target's damage sheet ships/<ship>.yaml")
    torpedoes: int = Field(..., ge=1, le=24, description="torpedoes in the salvo")
    hit_probability: float | None = Field(None, ge=0, le=1, description="chance each torpedo meets the target (a "
                                          "multiple of 0.001); or give torpedo_sighting or hit_difficulty")
    torpedo_sighting: TorpedoSighting | None = Field(None, description="the target's torpedo sighting roll (l.87), "
                                                     "then the placeholder evasion module evade_if_seen (G13)")
    hit_difficulty: int | None = Field(None, ge=-30, le=60, description="net difficulty of the target's evasion "
                                       "(placeholder module evasion_roll: P(hit) = 1 - P(evasion roll succeeds))")
    range_hexes: int | None = Field(None, ge=0, le=200, description="hexes from the firing unit to the target: a "
                                    "target inside the arming range 'Nah' (l.81, rules.torpedo_arming) takes no "
                                    "damage, one beyond the maximum range 'Weit' (l.83) is not reached")
    arming_range: int | None = Field(None, ge=0, le=100, description="'Nah' of the torpedo type (default: the "
                                     "placeholder hacse.torpedo.arming_range); read with range_hexes")
    max_range: int | None = Field(None, ge=1, le=200, description="'Weit' of the torpedo type (default: the "
                                  "placeholder hacse.torpedo.max_range); read with range_hexes")
    ships_in_path: int = Field(0, ge=0, le=20, description="other ships or obstacles on the torpedo's line before "
                               "the target: the torpedo 'trifft das erste Schiff oder Hindernis, welches sich in "
                               "diesem Weg befindet' (l.85), so with any the target is not hit")
    damage_dice: int | None = Field(None, ge=1, le=20, description="W10 per torpedo (default: the source's 5W10)")

    @model_validator(mode="after")
    def _one_hit_rule(self):
        given = [n for n in ("hit_probability", "torpedo_sighting", "hit_difficulty") if getattr(self, n) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of hit_probability, torpedo_sighting or hit_difficulty"
                             + (f" (got {', '.join(given)})" if given else ""))
        if self.hit_probability is not None and abs(self.hit_probability * 1000 - round(self.hit_probability * 1000)) > 1e-9:
            raise ValueError(f"hit_probability = {self.hit_probability}: allowed: a multiple of 0.001")
        if self.range_hexes is None and (self.arming_range is not None or self.max_range is not None):
            raise ValueError("arming_range / max_range are read with range_hexes: give range_hexes too")
        return self


def _steps(distance: int, per: int, rounding: str) -> int:
    return distance // per if rounding == "floor" else -(-distance // per)


def torpedo_seen(p, ctx: Context, d: Data) -> tuple[Fraction, list[str]]:
    """P(the target sees the torpedo) (source l.87) and notes. 'Auf das Sichten des Torpedos kann
    verzichtet werden, wenn die den Torpedo abfeuernde Einheit ... gesichtet ist': 1 then; 'Ansonsten
    wird ein Torpedo gesichtet mit einer Erschwernis von 3, Radar bringt jedoch keine Erleichterung':
    a roll at +3 (plus the clear-weather range steps under torpedo_sighting_difficulty added_to_range;
    radar does not shorten them) under the placeholder roll model."""
    ts = p.torpedo_sighting
    if ts.firer_sighted:
        return Fraction(1), ["the firing unit is sighted: the target knows the torpedo's target hex (l.87)"]
    base = int(d.rule("torpedo.sighting_difficulty"))
    net = base
    if ctx.rules["torpedo_sighting_difficulty"] == "added_to_range":
        net += _steps(ts.range_hexes, int(d.rule("sighting.clear_hexes_per_step")), ctx.rules["range_steps"])
    seen = roll_model(d, ctx.rules["roll_model"]).p_success(net)
    radar = "; radar gives no ease ('Radar bringt jedoch keine Erleichterung')" if ts.radar else ""
    return seen, [f"torpedo sighting roll at net difficulty +{net} ({ts.range_hexes} hex, l.87): P(seen) = {seen} "
                  f"under the placeholder roll model {ctx.rules['roll_model']}{radar}"]


def hit_chance(p, ctx: Context, d: Data) -> tuple[int, int, list[Placeholder], list[str]]:
    """(numerator, denominator) of one torpedo's chance to hit, the placeholder modules it used and notes.

    P(hit) = [the target is reached: no ship in the path (l.85), within 'Weit' (l.83)] x [armed: beyond
    'Nah' (l.81)] x P(meets the target): hit_probability as given, or the evasion module (G13)."""
    used: list[Placeholder] = []
    notes: list[str] = []
    if p.hit_probability is not None:
        meets = Fraction(round(p.hit_probability * 1000), 1000)
    elif p.hit_difficulty is not None:
        model = roll_model(d, ctx.rules["roll_model"])
        meets = 1 - model.p_success(p.hit_difficulty)       # the target's evasion roll at that net difficulty
        used += R.model_placeholders(ctx.rules, d)
        used += R.module(d, R.TORPEDO_EVASION, "evasion_roll", "torpedo_evasion",
                         "G13: P(hit) = 1 - P(the target's evasion roll) is not in the source, which gives the "
                         "torpedo sighting roll (l.87), not an evasion roll")
    else:
        seen, notes = torpedo_seen(p, ctx, d)
        if_seen = permille(d, "torpedo_evasion_module.hit_if_seen")
        if_unseen = permille(d, "torpedo_evasion_module.hit_if_unseen")
        meets = seen * if_seen + (1 - seen) * if_unseen
        notes.append(f"P(meets the target) = P(seen) x {if_seen} + P(unseen) x {if_unseen} (evasion module "
                     f"evade_if_seen; each torpedo sighted on its own)")
        if not p.torpedo_sighting.firer_sighted:
            used += R.model_placeholders(ctx.rules, d)
        used += R.module(d, R.TORPEDO_EVASION, "evade_if_seen", "torpedo_evasion",
                         "G13: what a target that saw (or did not see) the torpedo does is not in the source "
                         "(l.85 'den Torpedo zu erkennen und ihm auszuweichen'); evade_if_seen = hit_if_seen / "
                         "hit_if_unseen of hacse.torpedo_evasion_module")
    if p.ships_in_path:
        meets = Fraction(0)
        notes.append(f"{p.ships_in_path} ship(s) or obstacle(s) in the torpedo's path: it 'trifft das erste Schiff "
                     f"oder Hindernis, welches sich in diesem Weg befindet' (l.85), not the target")
    if p.range_hexes is not None:
        weit = p.max_range if p.max_range is not None else int(d.rule("torpedo.max_range"))
        nah = p.arming_range if p.arming_range is not None else int(d.rule("torpedo.arming_range"))
        inclusive = ctx.rules["torpedo_arming"] == "unarmed_through_nah"
        if p.range_hexes > weit:
            meets = Fraction(0)
            notes.append(f"target at {p.range_hexes} hex, beyond the maximum range 'Weit' {weit} (l.83): not reached")
        elif p.range_hexes < nah or (inclusive and p.range_hexes == nah):
            meets = Fraction(0)
            notes.append(f"target at {p.range_hexes} hex, inside the arming range 'Nah' {nah} (l.81, rules."
                         f"torpedo_arming = {ctx.rules['torpedo_arming']}): the torpedo is not armed, no damage")
    return meets.numerator, meets.denominator, used, notes


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
    ``p_event``) of an nW10 hit, folded hex by hex (exact_fold); refused (TooLarge) before enumerating
    when too large."""
    return fold_by_hex(sheet, n_events, p_event, nw10(n_dice), hit_rows(sheet, mode), stop_when_sunk_between)


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
    rule_options = (R.ENGINE_SPEED, R.ROLL_MODEL, R.HIT_LOCATION, R.TORPEDO_ARMING, R.TORPEDO_SIGHTING_DIFFICULTY,
                    R.RANGE_STEPS) + R.DAMAGE_OPTIONS + R.FIRE_OPTIONS
    primary_metric = "p_sunk"
    supports_exact = True

    def prepare(self, p: TorpedoParams, ctx: Context) -> Prepared:
        d = Data(ctx)
        sheet = d.sheet(p.ship, "ship", ctx.rules, uses=("hexes", "max_speed"))
        n_dice = p.damage_dice if p.damage_dice is not None else int(d.rule("torpedo.damage_dice"))
        num, den, modules, hit_notes = hit_chance(p, ctx, d)
        mode = ctx.rules["hit_location"]
        modules += hit_location_placeholder("hit_location", mode, d)
        placeholders = list(d.used) + modules
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
        notes += hit_notes
        return Prepared(metrics, max_underwater_damage(sheet, p.torpedoes, n_dice) + 1,
                        kernel=k.torpedo_salvo_kernel, args=args, exact=exact_answer, counters=(CUT_COUNTER,),
                        placeholders=tuple(placeholders), notes=tuple(notes))

    def plots(self, meta, points, dists):
        from analyzer.games.hacse_naval import plots
        return plots.torpedo_figures(meta, points, dists)
