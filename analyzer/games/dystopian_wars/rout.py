"""Question ``rout_test`` (spec ``docs/models/dystopian_wars.md`` §6, rules §8).

3D6 (+1D6 within 8in of the commodore, -1D6 out of command): 4-5 = 1 success, 6 = 2.
Successes needed: 1; +1 when half or more of the squadron is lost; +1 while the commodore
is lost.
"""
from __future__ import annotations

from pydantic import Field, model_validator

from analyzer.core import exact
from analyzer.games.dystopian_wars.common import bernoulli_metric, pmf_metric, table
from analyzer.games.dystopian_wars.data import GameData, Strict
from analyzer.games.dystopian_wars.rules import rout_faces
from analyzer.games.counters import POOL_COUNTERS
from analyzer.core.questions import Context, Metric, Prepared, Question, register
from kernels.dystopian_wars import rout as k


class RoutParams(Strict):
    squadron_size: int = Field(3, ge=1, le=100, description="models in the squadron at the start")
    models_lost: int = Field(1, ge=0, le=100, description="models destroyed or captured so far")
    commodore_lost: bool = Field(False, description="the fleet's commodore is lost (+1 success needed)")
    near_commodore: bool = Field(False, description="a model within 8in of the commodore (+1D6)")
    out_of_command: bool = Field(False, description="out of command distance (-1D6)")
    successes_needed: int | None = Field(None, ge=0, le=100, description="override the successes needed")

    @model_validator(mode="after")
    def _consistent(self):
        if self.models_lost >= self.squadron_size:
            raise ValueError(f"models_lost = {self.models_lost} must be < squadron_size = {self.squadron_size} "
                             f"(a squadron with no model left does not test)")
        if self.near_commodore and self.commodore_lost:
            raise ValueError("near_commodore is impossible while the commodore is lost")
        return self


def rout_dice_and_need(p: RoutParams, data: dict) -> tuple[int, int]:
    rt = data["rout_test"]
    dice = max(0, rt["dice"] + (rt["commodore_bonus_dice"] if p.near_commodore else 0)
               - (rt["out_of_command_penalty_dice"] if p.out_of_command else 0))
    if p.successes_needed is not None:
        return dice, p.successes_needed
    need = 1 + (1 if p.models_lost >= 1 and 2 * p.models_lost >= p.squadron_size else 0) + (1 if p.commodore_lost else 0)
    return dice, need


@register
class RoutTest(Question):
    game = "dystopian_wars"
    name = "rout_test"
    summary = "A rout test: 3D6 +-1D6, 4-5 = 1 success, 6 = 2; 1-3 successes needed"
    Params = RoutParams
    rule_options = ()
    primary_metric = "p_pass"
    supports_exact = True

    def prepare(self, p: RoutParams, ctx: Context) -> Prepared:
        gd = GameData(ctx)
        gd.finish()
        dice, need = rout_dice_and_need(p, gd.core)
        faces = rout_faces(gd.core)
        tab = table(faces)
        n_bins = 2 * dice + 2
        notes = [f"{dice} rout dice, {need} success(es) needed"]
        metrics = [Metric("p_pass", f"P(rout test passed), squadron of {p.squadron_size}", "probability"),
                   Metric("successes", "rout successes rolled")]

        def exact_answer():
            d = exact.pool(dice, *faces)
            return {"p_pass": bernoulli_metric(d.p_at_least(need)), "successes": pmf_metric(d.probs)}

        return Prepared(metrics, n_bins, kernel=k.rout_kernel, args=(dice, *tab, need), counters=POOL_COUNTERS,
                        exact=exact_answer, notes=tuple(notes))

    def plots(self, meta, points, dists):
        from analyzer.games.dystopian_wars import plots as dw_plots  # matplotlib only when plotting
        return dw_plots.rout_figures(meta, points, dists)
