"""Question ``morale``: one end-of-turn morale test, team or platoon (source §12, §13;
docs/models/breaking_news.md §5.3).

"El equipo debe tirar un número de dados D6 igual a su moral (de 2 a 5) y pasará el test si
consigue que al menos un D6 sea igual o superior al número de bajas sufridas. La pérdida de líder
del equipo contará como 2 bajas. Con una tirada de 6 siempre se pasará el test, salvo que el equipo
haya tenido un 50% de bajas durante la batalla." Platoon: "añadiendo 1D6 a cada equipo/sección que
no haya alcanzado el 50% de bajas". Exact: 1 - P(every die fails).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from analyzer.games.breaking_news.data import QUALITIES, BNData
from analyzer.games.breaking_news.rules import MORALE_OPTIONS
from analyzer.games.breaking_news.shooting import exact_binary
from analyzer.core.questions import Context, Metric, Prepared, Question, register
from kernels.breaking_news.morale import morale_kernel

Quality = Literal[QUALITIES]  # type: ignore[valid-type]

METRICS = [Metric("p_pass", "P(morale test passed)", "probability"),
           Metric("p_fail", "P(morale test failed)", "probability")]


class MoraleParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    quality: Quality | None = Field(None, description="team quality: its Initiative/Morale value is the "
                                                      "number of morale dice")
    morale_dice: int | None = Field(None, ge=1, le=30, description="morale dice (instead of quality)")
    casualties: int = Field(..., ge=0, le=40, description="casualties counted for the test (the leader "
                                                           "included once; leader_lost adds the second)")
    leader_lost: bool = Field(False, description="the team leader is among the casualties: counts 2")
    half_losses: bool = Field(False, description="the team has had 50% losses over the battle: a 6 no "
                                                 "longer passes by itself")
    teams_under_half: int = Field(0, ge=0, le=20, description="platoon play (§13): +1D6 per team or section "
                                                              "under 50% losses")

    @model_validator(mode="after")
    def _one_source_of_dice(self):
        if (self.quality is None) == (self.morale_dice is None):
            raise ValueError("give exactly one of quality (its morale value sets the dice) or morale_dice")
        if self.leader_lost and self.casualties < 1:
            raise ValueError("leader_lost needs casualties >= 1 (the leader is one of them)")
        return self


def morale_dice_and_casualties(p: MoraleParams, bn: BNData) -> tuple[int, int]:
    base = p.morale_dice if p.morale_dice is not None else int(bn.quality(p.quality)["initiative_morale"])
    extra = (int(bn.constant("leader_loss_casualties")) - 1) if p.leader_lost else 0
    return base + p.teams_under_half, p.casualties + extra


def exact_p_pass(n_dice: int, casualties: int, half_losses: bool) -> Fraction:
    """P(any of n D6 >= casualties, or shows a 6 when not at 50% losses)."""
    if casualties <= 0:
        return Fraction(1)
    passing = sum(1 for d in range(1, 7) if d >= casualties or (d == 6 and not half_losses))
    return 1 - Fraction(6 - passing, 6) ** n_dice


@register
class Morale(Question):
    game = "breaking_news"
    name = "morale"
    summary = "One morale test: pass probability by morale dice x casualties, leader loss, 50% losses, platoon"
    Params = MoraleParams
    rule_options = MORALE_OPTIONS
    primary_metric = "p_pass"
    supports_exact = True

    def prepare(self, p: MoraleParams, ctx: Context) -> Prepared:
        bn = BNData(ctx)
        n_dice, counted = morale_dice_and_casualties(p, bn)
        if p.quality:
            bn.use(f"troop_qualities.{p.quality}.initiative_morale")
        notes = [f"{n_dice}D6 against {counted} casualties" + (" (leader counts 2)" if p.leader_lost else "")
                 + ("; 50% losses: a 6 does not pass by itself" if p.half_losses else "")]

        def exact_answer():
            pp = exact_p_pass(n_dice, counted, p.half_losses)
            return {"p_pass": exact_binary(pp), "p_fail": exact_binary(1 - pp)}

        return Prepared(METRICS, 2, kernel=morale_kernel, args=(n_dice, counted, bool(p.half_losses)),
                        exact=exact_answer, placeholders=tuple(bn.used), notes=tuple(notes))

    def plots(self, meta, points, dists):
        from analyzer.games.breaking_news import plots  # matplotlib only when plotting
        return plots.morale_figures(meta, points)
