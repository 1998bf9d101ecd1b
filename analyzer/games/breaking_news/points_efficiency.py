"""Question ``points_efficiency``: expected casualties one unit (a figure of a quality with its
kit) inflicts per turn, and per 100 points of its cost, against a reference target set at several
ranges (docs/models/breaking_news.md §7).

A turn's fire: the unit did not move and fires the weapon and mode of its kit with the most
expected hits (as in ``firefight``) at a target drawn uniformly from ``targets`` x ``ranges_cm``.
Its cost is the list cost of the line (AR soldier + leadership + weapon upgrades). Sweep ``unit``
over the army lists' units (scenarios/breaking_news/points_efficiency.yaml) to rank them; an
upgrade's value is the difference between a unit with and without it. Exact mode: the mean of
the exact P(casualty) over the set.
"""
from __future__ import annotations

from fractions import Fraction
from typing import List, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from analyzer.games.breaking_news.data import QUALITIES, WEAPONS, BNData
from analyzer.games.breaking_news.firefight import best_fire
from analyzer.games.breaking_news.lists import Figure, line_points
from analyzer.games.breaking_news.rules import POINTS_OPTIONS, SHOT_OPTIONS
from analyzer.games.breaking_news.shooting import exact_binary, p_save, save_face
from analyzer.core.questions import Context, ExactMetric, Metric, Prepared, Question, register
from kernels.breaking_news.points_efficiency import points_efficiency_kernel

Quality = Literal[QUALITIES]  # type: ignore[valid-type]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Unit(_Strict):
    quality: Quality
    weapons: List[Literal[WEAPONS]] = Field(["assault_rifle"], min_length=1)  # type: ignore[valid-type]
    leadership: int = Field(0, ge=0, le=4)


class TargetSpec(_Strict):
    quality: Quality
    cover: bool = False


def _default_targets():
    return [TargetSpec(quality=q, cover=c) for q in ("elite", "veteran", "trained", "commando", "fanatic", "militia")
            for c in (False, True)]


class PointsEfficiencyParams(_Strict):
    unit: Unit
    ranges_cm: List[float] = Field([20, 40, 80], min_length=1, description="ranges of the reference set")
    targets: List[TargetSpec] = Field(default_factory=_default_targets, min_length=1,
                                      description="reference targets (default: six qualities, open and cover)")


def unit_label(u: Unit) -> str:
    kit = "+".join(u.weapons)
    return f"{u.quality} {kit}" + (f" L{u.leadership}" if u.leadership else "")


@register
class PointsEfficiency(Question):
    game = "breaking_news"
    name = "points_efficiency"
    summary = "Expected casualties per turn and per 100 points of a unit against a reference target set"
    Params = PointsEfficiencyParams
    rule_options = SHOT_OPTIONS + POINTS_OPTIONS
    primary_metric = "casualties_per_100_points"
    supports_exact = True

    def prepare(self, p: PointsEfficiencyParams, ctx: Context) -> Prepared:
        bn = BNData(ctx)
        bn.use("range_bands_cm")
        rules = ctx.rules
        line = {"n": 1, "weapons": list(p.unit.weapons), "leadership": p.unit.leadership}
        cost = line_points(bn, line, p.unit.quality, rules)
        fig = Figure(p.unit.quality, tuple(p.unit.weapons), p.unit.leadership)
        shots, faces, p_cas, low = [], [], [], []
        notes = set()
        for tg in p.targets:
            face = save_face(bn, tg.quality, rules, cover=tg.cover)
            for rng in p.ranges_cm:
                th = best_fire(bn, fig, rng, rules, "best", cover=tg.cover)
                dice, need = (th.dice, th.needed) if th else (0, 7)
                if th:
                    notes.update(th.notes)
                shots.append((dice, need))
                faces.append(face)
                low.append(int(th is not None and th.confidence in ("M", "L")))
                ph = Fraction(max(0, 7 - need), 6) if dice else Fraction(0)
                ps = p_save(face)
                # P(at least one failed save) = 1 - E[ps^hits] = 1 - (1 - ph + ph ps)^dice
                p_cas.append(1 - (1 - ph + ph * ps) ** dice)
        mean = sum(p_cas, Fraction(0)) / len(p_cas)
        metrics = [Metric("casualties_per_turn", "expected casualties per turn"),
                   Metric("casualties_per_100_points", f"casualties per turn per 100 points (cost {cost})",
                          "value", scale=cost),
                   Metric("hits", "hits per turn"),
                   Metric("reconstructed_share", "share of the fire resting on a reconstructed (M/L) table cell",
                          "probability")]
        args = (np.asarray(shots, np.int64), np.asarray(faces, np.int64), np.asarray(low, np.int64))
        max_dice = max(d for d, _ in shots)

        def exact_answer():
            hits_mean = sum((Fraction(d) * Fraction(max(0, 7 - n), 6) for d, n in shots), Fraction(0)) / len(shots)
            return {"casualties_per_turn": exact_binary(mean),
                    "casualties_per_100_points": ExactMetric(float(mean * 100 / cost)),
                    "hits": ExactMetric(float(hits_mean)),
                    "reconstructed_share": exact_binary(Fraction(sum(low), len(low)))}

        notes_out = [f"unit {unit_label(p.unit)}: {cost} points; {len(shots)} target x range combinations"]
        notes_out += sorted(notes)
        return Prepared(metrics, max(101, max_dice + 1), kernel=points_efficiency_kernel, args=args,
                        exact=exact_answer, placeholders=tuple(bn.used), notes=tuple(notes_out))

    def plots(self, meta, points, dists):
        from analyzer.games.breaking_news import plots  # matplotlib only when plotting
        return plots.points_efficiency_figures(meta, points)
