"""Questions ``melee`` (man to man, up to three against one, source §11) and
``building_assault`` (fighting inside a building, §11.1); docs/models/breaking_news.md §5.4.

§11: "se resuelve tirando 1D6 por cada figura combatiente. El dado más alto gana y mata al enemigo.
Hay que añadir los modificadores de MELEE de la tabla. Las figuras conmocionadas tienen -2 ...
un máximo de tres hombres luchando contra uno. En estos casos se añaden los modificadores de cada
uno de las figuras envueltas". Ties are not stated (rule option melee_ties, a placeholder reading).
§11.1: "Para impactar ... 5+ si es el defensor o un 6 si es el atacante. Cada figura tira cuantos
dados tenga según los modificador de MELEE."
"""
from __future__ import annotations

from fractions import Fraction
from itertools import product
from math import comb
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from analyzer.core.gamedata import Placeholder
from analyzer.games.breaking_news.data import QUALITIES, BNData
from analyzer.games.breaking_news.rules import MELEE_OPTIONS, MELEE_TIES
from analyzer.games.breaking_news.shooting import exact_binary
from analyzer.core.questions import Context, Counter, ExactAnswer, ExactMetric, Metric, Prepared, Question, register
from kernels.breaking_news.melee import building_kernel, melee_kernel

Quality = Literal[QUALITIES]  # type: ignore[valid-type]
#: the named cap on re-rolled ties (a tie chain this long has probability below 1e-300)
MAX_TIE_ROLLS = 1000

MELEE_METRICS = [Metric("p_attacker_wins", "P(attackers kill the defender)", "probability"),
                 Metric("p_defender_wins", "P(the defender kills an attacker)", "probability"),
                 Metric("p_no_result", "P(tie, nobody dies)", "probability")]
BUILDING_METRICS = [Metric("attacker_hits", "hits scored by the attackers"),
                    Metric("defender_hits", "hits scored by the defenders")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Fighter(_Strict):
    quality: Quality = Field(..., description="troop quality (its Melee value is added)")
    shocked: bool = Field(False, description="shocked: -2 to its roll")


class MeleeParams(_Strict):
    attackers: list[Fighter] = Field(..., min_length=1, max_length=3, description="1 to 3 figures")
    defender: Fighter


def melee_values(fighters, bn: BNData) -> list[int]:
    return [int(bn.quality(f.quality)["melee"]) for f in fighters]


def exact_melee(att_melee, att_shocked, def_melee, def_shocked, shock_mod, group_sum, reroll):
    """Exact P(attackers win), P(defender wins), P(no result) by enumerating the dice."""
    n = len(att_melee)
    win = lose = tie = Fraction(0)
    n_att_dice = 1 if group_sum else n
    for dice in product(range(1, 7), repeat=n_att_dice + 1):
        if group_sum:
            a = dice[0] + sum(m + (shock_mod if s else 0) for m, s in zip(att_melee, att_shocked))
        else:
            a = max(d + m + (shock_mod if s else 0) for d, m, s in zip(dice, att_melee, att_shocked))
        d = dice[-1] + def_melee + (shock_mod if def_shocked else 0)
        p = Fraction(1, 6 ** len(dice))
        if a > d:
            win += p
        elif d > a:
            lose += p
        else:
            tie += p
    if reroll and tie < 1:
        win, lose, tie = win / (1 - tie), lose / (1 - tie), Fraction(0)
    return win, lose, tie


@register
class Melee(Question):
    game = "breaking_news"
    name = "melee"
    summary = "Man-to-man melee, 1-3 attackers against one: win probability by quality and shock (exact)"
    Params = MeleeParams
    rule_options = MELEE_OPTIONS
    primary_metric = "p_attacker_wins"
    supports_exact = True

    def prepare(self, p: MeleeParams, ctx: Context) -> Prepared:
        bn = BNData(ctx)
        att = melee_values(p.attackers, bn)
        dfd = melee_values([p.defender], bn)[0]
        shock_mod = int(bn.constant("melee_shocked_modifier"))
        group_sum = ctx.rules["melee_group"] == "one_die_sum_modifiers"
        reroll = ctx.rules["melee_ties"] == "reroll"
        att_m = np.zeros(3, np.int64)
        att_s = np.zeros(3, np.bool_)
        att_m[: len(att)] = att
        att_s[: len(att)] = [f.shocked for f in p.attackers]
        args = (att_m, att_s, len(att), dfd, bool(p.defender.shocked), shock_mod, group_sum, reroll, MAX_TIE_ROLLS)
        placeholders = list(bn.used) + [Placeholder("rules.melee_ties", ctx.rules["melee_ties"],
                                                    MELEE_TIES.doc, "rule reading")]
        shocked = [f.shocked for f in p.attackers]

        def exact_answer():
            w, l_, t = exact_melee(att, shocked, dfd, p.defender.shocked, shock_mod, group_sum, reroll)
            return ExactAnswer({"p_attacker_wins": exact_binary(w), "p_defender_wins": exact_binary(l_),
                                "p_no_result": exact_binary(t)})

        notes = [f"attackers Melee {att}{' (one die + sum)' if group_sum and len(att) > 1 else ''} vs defender {dfd}"]
        return Prepared(MELEE_METRICS, 2, kernel=melee_kernel, args=args, exact=exact_answer,
                        counters=(Counter("tie_cap", f"melee ties still unresolved after {MAX_TIE_ROLLS} rolls"),),
                        placeholders=tuple(placeholders), notes=tuple(notes))

    def plots(self, meta, points, dists):
        from analyzer.games.breaking_news import plots  # matplotlib only when plotting
        return plots.melee_figures(meta, points)


class BuildingParams(_Strict):
    attackers: int = Field(..., ge=1, le=30, description="attacking figures in contact")
    attacker_quality: Quality
    defenders: int = Field(..., ge=1, le=30, description="defending figures")
    defender_quality: Quality


def building_dice(bn: BNData, quality: str, figures: int) -> int:
    """§11.1 "Cada figura tira cuantos dados tenga según los modificador de MELEE": figures x Melee."""
    return figures * int(bn.quality(quality)["melee"])


@register
class BuildingAssault(Question):
    game = "breaking_news"
    name = "building_assault"
    summary = "One round of fighting inside a building: dice counts and hits of each side (exact)"
    Params = BuildingParams
    primary_metric = "attacker_hits"
    supports_exact = True

    def prepare(self, p: BuildingParams, ctx: Context) -> Prepared:
        bn = BNData(ctx)
        att = building_dice(bn, p.attacker_quality, p.attackers)
        dfd = building_dice(bn, p.defender_quality, p.defenders)
        att_face = int(bn.constant("building_attacker_hits_on"))
        def_face = int(bn.constant("building_defender_hits_on"))

        def exact_answer():
            out = {}
            for name, n, face in (("attacker_hits", att, att_face), ("defender_hits", dfd, def_face)):
                ph = Fraction(7 - face, 6)
                probs = [float(comb(n, k) * ph ** k * (1 - ph) ** (n - k)) for k in range(n + 1)]
                out[name] = ExactMetric(float(n * ph), np.arange(n + 1), np.array(probs))
            return out

        notes = [f"attackers roll {att} dice hitting on {att_face}; defenders roll {dfd} dice hitting on {def_face}+"]
        return Prepared(BUILDING_METRICS, max(att, dfd) + 1, kernel=building_kernel,
                        args=(att, att_face, dfd, def_face), exact=exact_answer,
                        placeholders=tuple(bn.used), notes=tuple(notes))
