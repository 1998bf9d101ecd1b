"""Question ``fire``: a fire on board until it is put out (source "Feuer an Bord", l.53).

docs/models/hacse_naval.md §4.5. The fire deals 2 damage at once to a random row of its hex,
then each round one extinguishing roll for the whole ship ("dreifache Basiszahl überwürfeln",
dice a placeholder) and, if it fails, 2 damage per burning fire (rule fire_damage); the damage may
start new fires (rules fire_spreads, fire_repeats). The loop is capped at ``kernels.hacse_naval.fire.MAX_FIRE_ROUNDS``.
Stateful: its oracle is the pure-Python reference (analyzer/games/hacse_naval/reference.py).
"""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from analyzer.games.hacse_naval import rules as R
from analyzer.games.hacse_naval.data import Data, Sheet, param_error, w10_sum_distribution
from analyzer.core.questions import Context, Counter, Metric, Prepared, Question, register
from kernels.hacse_naval import damage as kd
from kernels.hacse_naval import fire as k


class FireParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ship: str = Field("destroyer", description="damage sheet ships/<ship>.yaml of the burning ship")
    hex: int | None = Field(None, ge=0, le=9, description="hex of the sheet (0 = first) where the fire breaks "
                            "out (default: the first hex with a row that can start a fire)")
    base_number: int | None = Field(None, ge=0, le=30, description="Basiszahl of the crew (default: the "
                                    "placeholder in data/hacse.yaml)")


def fire_hexes(sheet: Sheet) -> list[int]:
    """Hexes holding a row that can start a fire ('durch Treffer auf Schornstein, Maschinenraum,
    Flugbenzin', l.53): a fire effect at any trigger of the row-effect table."""
    fx = sheet.rows[:, kd.HALF_FX] | sheet.rows[:, kd.FUNC_FX] | sheet.rows[:, kd.SPECIAL_FX]
    return sorted({int(h) for h, f in zip(sheet.rows[:, kd.HEX], fx) if f & kd.FX_FIRE})


def p_extinguish(n_dice: int, threshold: int, overroll: bool) -> float:
    """Exact chance of one Löschversuch."""
    dist = w10_sum_distribution(n_dice)
    return float(sum(p for s, p in dist.items() if (s > threshold) == overroll))


@register
class Fire(Question):
    game = "hacse_naval"
    name = "fire"
    summary = "A fire on board: damage and rounds burning until an extinguishing roll succeeds"
    Params = FireParams
    rule_options = (R.FIRE_EXTINGUISH, R.EXTINGUISH_SCOPE, R.FIRE_ROW, R.FIRE_DAMAGE) + R.DAMAGE_OPTIONS + \
        R.FIRE_OPTIONS
    primary_metric = "damage"

    def prepare(self, p: FireParams, ctx: Context) -> Prepared:
        d = Data(ctx)
        sheet = d.sheet(p.ship, "ship", ctx.rules)
        can_burn = fire_hexes(sheet)
        hex_ = p.hex if p.hex is not None else (can_burn[0] if can_burn else 0)
        if hex_ >= sheet.hex_n.shape[0]:
            raise param_error(ctx, "hex", f"got {hex_}; allowed: 0..{sheet.hex_n.shape[0] - 1} ({p.ship!r} has "
                              f"{sheet.hex_n.shape[0]} hexes)")
        if p.base_number is None:
            base = int(d.rule("base_number"))
        else:
            base = p.base_number
        n_dice = int(d.rule("fire.extinguish_dice"))
        threshold = int(d.rule("fire.base_multiple")) * base
        overroll = ctx.rules["fire_extinguish"] == "overroll"
        # after the Basiszahl and the extinguishing dice are read (issue 29), and listed first: they move
        # the answer most (strict's message names the first few)
        placeholders = sorted(d.used, key=lambda ph: not ph.path.startswith("hacse."))
        placeholders += R.module(d, R.FIRE_EXTINGUISH, ctx.rules["fire_extinguish"], "fire_extinguish",
                                 "G1/H13: how the extinguishing roll succeeds is not fully in the source")
        args = (hex_, n_dice, threshold, int(overroll), int(ctx.rules["extinguish_scope"] == "all_fires"),
                int(ctx.rules["fire_row"] == "same_row"), int(ctx.rules["fire_damage"] == "per_ship")) + \
            sheet.arrays()[:3] + (sheet.info,)
        metrics = [Metric("rounds_burning", "rounds the fire dealt damage after its first 2"),
                   Metric("damage", "fire damage the ship's rows took (first 2 included, and what it set off), "
                                    "each row's damage capped at its [HP]"),
                   Metric("p_row_destroyed", "P(a row destroyed)", "probability"),
                   Metric("p_sunk", "P(ship sunk by the fire)", "probability"),
                   Metric("damage_dealt", "fire damage dealt, not capped (points beyond a destroyed row's [HP] "
                                          "counted too)")]
        pe = p_extinguish(n_dice, threshold, overroll)
        notes = [f"Löschversuch: {n_dice}W10 {'>' if overroll else '<='} 3 x Basiszahl {base} = {threshold}: "
                 f"P(success) = {pe:.4f} per round; sheet {sheet.name}, fire in hex {hex_}"]
        if hex_ not in can_burn:
            notes.append(f"WARNING: hex {hex_} of {p.ship!r} has no row that can start a fire (Schornstein, "
                         f"Maschinenraum, Flugbenzin: 'durch Treffer auf Schornstein, Maschinenraum, Flugbenzin', "
                         f"l.53); the fire is assumed to break out there anyway"
                         + (f" (hexes that can: {', '.join(map(str, can_burn))})" if can_burn else ""))
        n_bins = 4096   # values above land in the last bin (counted and noted); means stay exact
        return Prepared(metrics, n_bins, kernel=k.fire_kernel, args=args,
                        counters=(Counter("fire_round_cap", f"fires still burning after kernels.hacse_naval.fire."
                                                            f"MAX_FIRE_ROUNDS = {k.MAX_FIRE_ROUNDS} rounds (cut)"),
                                  Counter("fire_workspace_cut", f"fires burning untracked beyond kernels.hacse_naval."
                                                                f"damage.MAX_FIRES = {kd.MAX_FIRES} or follow-up hits "
                                                                f"dropped (repeated fires)")),
                        placeholders=tuple(placeholders), notes=tuple(notes))

    def plots(self, meta, points, dists):
        from analyzer.games.hacse_naval import plots
        return plots.fire_figures(meta, points, dists)
