"""Game ``dice``: the raw primitives as questions (a dice calculator with error bars).

Useful on their own ("P(at least 5 hits from 10 dice at 4+ against 3 AA dice)") and as
the smallest end-to-end path through scenarios, sweeps, exact mode and outputs.
"""
from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from analyzer.run import dice
from analyzer.core import exact
from analyzer.games.counters import POOL_COUNTERS
from analyzer.core.questions import Context, ExactAnswer, ExactMetric, Metric, Prepared, Question, register
from kernels import dice as k


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PoolParams(_Strict):
    dice: int = Field(10, ge=0, le=500, description="number of dice rolled")
    sides: int = Field(6, ge=2, le=100, description="faces per die")
    hit_on: int = Field(4, ge=1, le=100, description="natural face that scores one success")
    double_on: int | None = Field(6, ge=1, le=100, description="natural face that scores two (null: none)")
    explode_on: int | None = Field(6, ge=2, le=100, description="natural face that rolls one more die (null: none)")
    cancel_dice: int = Field(0, ge=0, le=500, description="defensive dice: a 5 cancels 1, a 6 cancels 2")
    need: int = Field(1, ge=0, le=10_000, description="successes needed for p_success")

    @model_validator(mode="after")
    def _faces_on_die(self):
        for name in ("hit_on", "double_on", "explode_on"):
            v = getattr(self, name)
            if v is not None and v > self.sides:
                raise ValueError(f"{name} = {v} is not a face of a d{self.sides}; allowed 1..{self.sides}")
        return self


@register
class Pool(Question):
    game = "dice"
    name = "pool"
    summary = "Success-counting pool with doubles and explosions, optionally net of cancelling dice"
    Params = PoolParams
    primary_metric = "p_success"
    supports_exact = True

    def prepare(self, p: PoolParams, ctx: Context) -> Prepared:
        fv, fe = dice.hit_table(p.hit_on, p.double_on, p.explode_on, p.sides)
        table = k.pool_table(fv, fe)
        cancel = k.pool_table(*dice.CANCEL_TABLE)
        n_bins = dice.pool_bins(p.dice, fv, fe)

        def exact_answer():
            d = exact.pool(p.dice, fv, fe)
            if p.cancel_dice:
                d = exact.net_of_cancellations(d, exact.pool(p.cancel_dice, *dice.CANCEL_TABLE))
            notes = ((f"exact: explosion series summed until a longer chain has probability "
                      f"< {exact.EXPLOSION_TAIL:g}; mass left out {d.truncated_mass:.2e}",)
                     if d.truncated_mass > 0 else ())
            ps = d.p_at_least(p.need)
            return ExactAnswer({"hits": ExactMetric(d.mean(), d.values, d.probs),
                                "p_success": ExactMetric(ps, np.array([0, 1]), np.array([1 - ps, ps]))}, notes)

        metrics = [Metric("hits", "successes (net of cancellations)"),
                   Metric("p_success", f"P(successes >= {p.need})", "probability")]
        return Prepared(metrics, n_bins, kernel=k.pool_kernel, args=(p.dice, *table, p.cancel_dice, *cancel, p.need),
                        counters=POOL_COUNTERS, exact=exact_answer)


class RollUnderParams(_Strict):
    skill: int = Field(15, ge=0, le=100, description="hit when dice total + modifier <= skill")
    modifier: int = Field(0, ge=-50, le=50, description="added to the dice total (positive = harder)")
    dice: int = Field(3, ge=2, le=10, description="dice rolled; die 0 is distinguished, the rest are quality dice")
    sides: int = Field(10, ge=2, le=100)
    face_offset: int = Field(0, ge=-1, le=0, description="0: faces 1..sides; -1: faces 0..sides-1")


@register
class RollUnder(Question):
    game = "dice"
    name = "roll_under"
    summary = "Roll-under sum with identified dice: P(hit) and the quality-dice damage of the same roll"
    Params = RollUnderParams
    primary_metric = "p_hit"
    supports_exact = True

    def prepare(self, p: RollUnderParams, ctx: Context) -> Prepared:
        max_face = p.sides + p.face_offset
        n_bins = (p.dice - 1) * max_face + 1

        def exact_answer():
            ph, dmg = exact.roll_under(p.skill, p.modifier, p.dice, p.sides, p.face_offset)
            dmg = dmg.copy()
            dmg[0] += 1.0 - ph
            values = np.arange(dmg.shape[0])
            return {"p_hit": ExactMetric(ph, np.array([0, 1]), np.array([1 - ph, ph])),
                    "damage": ExactMetric(float(values @ dmg), values, dmg)}

        metrics = [Metric("p_hit", "P(hit)", "probability"),
                   Metric("damage", "damage (quality dice; 0 on a miss)")]
        return Prepared(metrics, n_bins, kernel=k.roll_under_kernel,
                        args=(p.dice, p.sides, p.face_offset, p.skill, p.modifier), exact=exact_answer)


class CountParams(_Strict):
    dice: int = Field(2, ge=0, le=500)
    sides: int = Field(6, ge=2, le=100)
    target: int = Field(4, ge=1, le=100, description="a die succeeds on a natural roll >= target")
    need: int = Field(1, ge=0, le=500, description="successes needed for p_success")

    @model_validator(mode="after")
    def _target_on_die(self):
        if self.target > self.sides:
            raise ValueError(f"target = {self.target} is not a face of a d{self.sides}; allowed 1..{self.sides}")
        return self


@register
class Count(Question):
    game = "dice"
    name = "count"
    summary = "How many of N dice meet a target ('any of N dice >= k' when need = 1)"
    Params = CountParams
    primary_metric = "p_success"
    supports_exact = True

    def prepare(self, p: CountParams, ctx: Context) -> Prepared:
        n_bins = p.dice + 1

        def exact_answer():
            d = exact.count_at_least(p.dice, p.sides, p.target)
            ps = d.p_at_least(p.need)
            return {"successes": ExactMetric(d.mean(), d.values, d.probs),
                    "p_success": ExactMetric(ps, np.array([0, 1]), np.array([1 - ps, ps]))}

        metrics = [Metric("successes", "dice meeting the target"),
                   Metric("p_success", f"P(successes >= {p.need})", "probability")]
        return Prepared(metrics, n_bins, kernel=k.count_kernel, args=(p.dice, p.sides, p.target, p.need),
                        exact=exact_answer)
