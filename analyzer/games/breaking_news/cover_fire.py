"""Question ``cover_fire``: a covering group against one enemy figure that tries opportunity fire
from inside the covered area (source §8.6; docs/models/breaking_news.md §5.2).

"Se debe utilizar el valor adecuado al arma y la distancia y añadir el modificador de tropa (una
por cada grupo que realice el fuego de cobertura). El valor final no puede exceder de 9. Un
enemigo que decida ejecutar el fuego de oportunidad, a pesar del fuego de cobertura, es impactado
una vez, si no saca con 2D6 una puntuación mayor ... Si el fuego de oportunidad se ejecuta dentro
de un bunker, lanza 3D6." How many hits (rule option ``cover_fire_hits``, A7): the example's "un
impacto en cada figura que haga el fuego de cobertura" or the rule's "una vez". Exact mode.
"""
from __future__ import annotations

from fractions import Fraction
from itertools import product
from typing import List, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from analyzer.games.breaking_news.data import QUALITIES, BNData, low_confidence_note, param_error
from analyzer.games.breaking_news.lists import cover_fire_value
from analyzer.games.breaking_news.rules import COVER_FIRE_HITS, SAVE_BONUS
from analyzer.games.breaking_news.shooting import exact_binary, exact_constant, p_save, save_face
from analyzer.core.questions import Context, ExactMetric, Metric, Prepared, Question, register
from kernels.breaking_news.cover_fire import cover_fire_kernel

Quality = Literal[QUALITIES]  # type: ignore[valid-type]
CoverWeapon = Literal["pistol", "rifle", "assault_rifle", "smg", "lmg", "mmg", "hmg"]

METRICS = [Metric("value", "cover-fire value (capped)", "value"),
           Metric("p_hit", "P(the enemy figure is hit before it fires)", "probability"),
           Metric("hits", "hits on the enemy figure"),
           Metric("casualties", "enemy figure removed"),
           Metric("shocked", "enemy figure shocked (hit, saved)")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CoverShooter(_Strict):
    weapon: CoverWeapon = Field(..., description="weapon (cover-fire table row)")
    range_cm: float = Field(..., gt=0, le=50, allow_inf_nan=False,
                            description="range to the area ('dentro de los 50 cm')")


class Enemy(_Strict):
    quality: Quality = Field(..., description="troop quality of the figure that tries opportunity fire")
    cover: bool = Field(False, description="in cover: +1 to its saves")
    leader: bool = Field(False, description="the team leader: +1 to its saves")
    bunker: bool = Field(False, description="fires from a bunker: 3D6 instead of 2D6")


class CoverFireParams(_Strict):
    shooters: List[CoverShooter] = Field(..., min_length=1, max_length=12, description="the covering group")
    quality: Quality = Field(..., description="the covering group's troop quality (its modifier counts once)")
    enemy: Enemy


def exact_cover_fire(value, test_dice, hits_if_failed, p_sv):
    p_hit = Fraction(sum(1 for f in product(range(1, 7), repeat=test_dice) if sum(f) <= value), 6 ** test_dice)
    p_cas = p_hit * (1 - p_sv ** hits_if_failed)
    p_shock = p_hit * p_sv ** hits_if_failed
    return {"value": exact_constant(value),
            "p_hit": exact_binary(p_hit),
            "hits": ExactMetric(float(p_hit * hits_if_failed), np.array([0, hits_if_failed]),
                                np.array([float(1 - p_hit), float(p_hit)])),
            "casualties": exact_binary(p_cas), "shocked": exact_binary(p_shock)}


@register
class CoverFire(Question):
    game = "breaking_news"
    name = "cover_fire"
    summary = "Cover fire: its value and whether an enemy figure opening opportunity fire is hit first (exact)"
    Params = CoverFireParams
    rule_options = (COVER_FIRE_HITS, SAVE_BONUS)
    primary_metric = "p_hit"
    supports_exact = True

    def prepare(self, p: CoverFireParams, ctx: Context) -> Prepared:
        bn = BNData(ctx)
        for key in ("cover_fire", "cover_fire_bands_cm", "cover_fire_cap", f"troop_qualities.{p.quality}",
                    f"troop_qualities.{p.enemy.quality}"):
            bn.use(key)
        for i, s in enumerate(p.shooters):
            if bn.get("cover_fire")[s.weapon]["values"][0 if s.range_cm <= bn.get("cover_fire_bands_cm")[0] else 1] is None:
                raise param_error(ctx, f"shooters[{i}]", f"{s.weapon} gives no cover fire at {s.range_cm:g} cm")
        value, raw = cover_fire_value(bn, [(s.weapon, s.range_cm) for s in p.shooters], p.quality)
        test_dice = int(bn.constant("cover_fire_test_dice_bunker" if p.enemy.bunker else "cover_fire_test_dice"))
        hits = len(p.shooters) if ctx.rules["cover_fire_hits"] == "per_covering_figure" else 1
        face = save_face(bn, p.enemy.quality, ctx.rules, leader=p.enemy.leader, cover=p.enemy.cover)
        notes = [f"cover-fire value {raw}" + (f", capped at {value}" if raw > value else "") +
                 f"; the enemy must roll more on {test_dice}D6 or take {hits} hit(s), saving on {face}+"]
        bands = bn.get("cover_fire_bands_cm")
        for w, r in dict.fromkeys((s.weapon, s.range_cm) for s in p.shooters):   # each cell used, its confidence
            band = 0 if r <= bands[0] else 1
            note = low_confidence_note(f"cover fire {w} at {r:g} cm (band <= {bands[band]} cm)",
                                       bn.get("cover_fire")[w]["confidence"][band])
            if note:
                notes.append(note)

        def exact_answer():
            return exact_cover_fire(value, test_dice, hits, p_save(face))

        return Prepared(METRICS, max(value, hits) + 1, kernel=cover_fire_kernel,
                        args=(int(value), test_dice, hits, int(face)), exact=exact_answer,
                        placeholders=tuple(bn.used), notes=tuple(notes))
