"""Questions ``melee`` (man to man, up to three against one, source §11) and
``building_assault`` (fighting inside a building, §11.1); docs/models/breaking_news.md §5.4.

§11: "se resuelve tirando 1D6 por cada figura combatiente. El dado más alto gana y mata al enemigo.
Hay que añadir los modificadores de MELEE de la tabla. Las figuras conmocionadas tienen -2 ...
un máximo de tres hombres luchando contra uno. En estos casos se añaden los modificadores de cada
uno de las figuras envueltas". Ties are not stated (rule option melee_ties, a placeholder reading).
§11.1: "Para impactar a un enemigo dentro de un edificio y forzarle al test de tirada de salvación se
deberá sacar un 5+ si es el defensor o un 6 si es el atacante. Cada figura tira cuantos dados tenga según
los modificador de MELEE. ... Cada jugador decide cuales de sus figuras son retiradas del juego." Each
side's hits are the other side's saves (§9), spread by the owner as evenly as possible (the example's
"una de las 4 figuras ... tendrá que hacer doble tirada"; rule options building_saves,
building_save_cover).
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
from analyzer.games.breaking_news.shooting import exact_binary, p_save, save_face
from analyzer.core.questions import (Context, Counter, ExactAnswer, ExactMetric, Metric, Prepared, Question,
                                     RuleOption, register)
from kernels.breaking_news.melee import building_kernel, melee_kernel

Quality = Literal[QUALITIES]  # type: ignore[valid-type]
#: the named cap on re-rolled ties (a tie chain this long has probability below 1e-300)
MAX_TIE_ROLLS = 1000

MELEE_METRICS = [Metric("p_attacker_wins", "P(attackers kill the defender)", "probability"),
                 Metric("p_defender_wins", "P(the defender kills an attacker)", "probability"),
                 Metric("p_no_result", "P(tie, nobody dies)", "probability")]
BUILDING_METRICS = [Metric("attacker_hits", "hits scored by the attackers"),
                    Metric("defender_hits", "hits scored by the defenders"),
                    Metric("attacker_casualties", "attacking figures removed (failed a save against the defenders' hits)"),
                    Metric("defender_casualties", "defending figures removed (failed a save against the attackers' hits)")]


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


#: the kernel's code of each ``melee_group`` reading (rules.MELEE_GROUP)
MELEE_GROUP_CODES = {"one_die_sum_modifiers": 0, "best_individual": 1, "one_die_each_summed": 2}


def exact_melee(att_melee, att_shocked, def_melee, def_shocked, shock_mod, group, reroll):
    """Exact P(attackers win), P(defender wins), P(no result) by enumerating the dice.

    ``group`` (rule option ``melee_group``): ``one_die_sum_modifiers`` one attacker die + every
    attacker's modifier; ``best_individual`` each attacker's die + own modifier, the best counts;
    ``one_die_each_summed`` ("tirando 1D6 por cada figura combatiente ... se añaden los modificadores
    de cada uno"): the sum of every attacker's die and modifier."""
    if group not in MELEE_GROUP_CODES:
        raise ValueError(f"melee_group {group!r}; allowed: {', '.join(MELEE_GROUP_CODES)}")
    n = len(att_melee)
    win = lose = tie = Fraction(0)
    mods = [m + (shock_mod if s else 0) for m, s in zip(att_melee, att_shocked)]
    n_att_dice = 1 if group == "one_die_sum_modifiers" else n
    for dice in product(range(1, 7), repeat=n_att_dice + 1):
        if group == "one_die_sum_modifiers":
            a = dice[0] + sum(mods)
        elif group == "best_individual":
            a = max(d + m for d, m in zip(dice, mods))
        else:
            a = sum(dice[:-1]) + sum(mods)
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
        group = ctx.rules["melee_group"]
        reroll = ctx.rules["melee_ties"] == "reroll"
        att_m = np.zeros(3, np.int64)
        att_s = np.zeros(3, np.bool_)
        att_m[: len(att)] = att
        att_s[: len(att)] = [f.shocked for f in p.attackers]
        args = (att_m, att_s, len(att), dfd, bool(p.defender.shocked), shock_mod, MELEE_GROUP_CODES[group], reroll,
                MAX_TIE_ROLLS)
        placeholders = list(bn.used) + [Placeholder("rules.melee_ties", ctx.rules["melee_ties"],
                                                    MELEE_TIES.doc, "rule reading")]
        shocked = [f.shocked for f in p.attackers]

        def exact_answer():
            w, l_, t = exact_melee(att, shocked, dfd, p.defender.shocked, shock_mod, group, reroll)
            return ExactAnswer({"p_attacker_wins": exact_binary(w), "p_defender_wins": exact_binary(l_),
                                "p_no_result": exact_binary(t)})

        how = {"one_die_sum_modifiers": " (one die + sum)", "best_individual": " (best of own dice)",
               "one_die_each_summed": " (a die each, all summed)"}[group] if len(att) > 1 else ""
        notes = [f"attackers Melee {att}{how} vs defender {dfd}"]
        return Prepared(MELEE_METRICS, 2, kernel=melee_kernel, args=args, exact=exact_answer,
                        counters=(Counter("tie_cap", f"melee ties still unresolved after {MAX_TIE_ROLLS} rolls"),),
                        placeholders=tuple(placeholders), notes=tuple(notes))

    def plots(self, meta, points, dists):
        from analyzer.games.breaking_news import plots  # matplotlib only when plotting
        return plots.melee_figures(meta, points)


# Rule options of building_assault (spec §5.4). §11.1 says how the hits are scored, not how a side
# takes the saves they force nor whether §9's "+1 si ... el objetivo está detrás de cobertura" applies
# to figures fighting inside the building: each is a named reading, the literal one the default.
BUILDING_SAVES = RuleOption(
    "building_saves", ("per_figure", "pooled"), "per_figure",
    "how a side takes the saves the other side's hits force: per_figure, the owner spreads them over its "
    "figures as evenly as possible ('Éstos tienen ahora 5 tiradas de salvación (una de las 4 figuras, a "
    "elección del jugador, tendrá que hacer doble tirada)') and a figure is removed at its first failed save "
    "(§9 'Si falla el test, el soldado ... se retira del juego'); pooled, every failed save removes one "
    "figure, at most all of them ('Cada jugador decide cuales de sus figuras son retiradas del juego')",
    "docs/models/breaking_news.md §5.4 (§11.1)")
BUILDING_SAVE_COVER = RuleOption(
    "building_save_cover", ("none", "defenders"), "none",
    "save bonus inside the building: none, §11.1 names no modifier ('se deberá sacar un 5+ si es el defensor "
    "o un 6 si es el atacante' for the hits only); or defenders, who get §9's '+1 si ... el objetivo está "
    "detrás de cobertura' (the building as cover)", "docs/models/breaking_news.md §5.4 (§11.1, §9)")
BUILDING_OPTIONS = (BUILDING_SAVES, BUILDING_SAVE_COVER)
#: only one save bonus (cover) can apply here, so both readings of ``save_bonus`` agree
_ONE_BONUS = {"save_bonus": "max_single"}


class BuildingParams(_Strict):
    attackers: int = Field(..., ge=1, le=30, description="attacking figures in contact")
    attacker_quality: Quality
    defenders: int = Field(..., ge=1, le=30, description="defending figures")
    defender_quality: Quality


def building_dice(bn: BNData, quality: str, figures: int) -> int:
    """§11.1 "Cada figura tira cuantos dados tenga según los modificador de MELEE": figures x Melee."""
    return figures * int(bn.quality(quality)["melee"])


def saves_per_figure(hits: int, figures: int) -> list[int]:
    """The owner's spread of ``hits`` saves over ``figures`` figures, as even as possible: each figure
    takes one before any takes a second (§11.1: 5 saves on 4 figures, "una de las 4 figuras, a elección
    del jugador, tendrá que hacer doble tirada")."""
    q, r = divmod(hits, figures)
    return [q + 1] * r + [q] * (figures - r)


def casualties_given_hits(hits: int, figures: int, p_sv: Fraction, saves: str) -> list[Fraction]:
    """Exact P(c casualties), c = 0..figures, of a side that takes ``hits`` saves, each passed with
    ``p_sv``: per_figure, figure i is removed with 1 - p_sv**(its saves), independently (a
    convolution); pooled, min(figures, failed saves) with failed saves ~ Binomial(hits, 1 - p_sv)."""
    dist = [Fraction(0)] * (figures + 1)
    if saves == "pooled":
        for k in range(hits + 1):
            dist[min(k, figures)] += comb(hits, k) * (1 - p_sv) ** k * p_sv ** (hits - k)
        return dist
    dist[0] = Fraction(1)
    for n_saves in saves_per_figure(hits, figures):
        dead = 1 - p_sv ** n_saves
        dist = [dist[c] * (1 - dead) + (dist[c - 1] * dead if c else 0) for c in range(figures + 1)]
    return dist


def exact_building_side(dice: int, hit_face: int, figures: int, p_sv: Fraction, saves: str):
    """(P(h hits), h = 0..dice; P(c casualties on the figures hit), c = 0..figures) of one side's
    ``dice`` hitting on ``hit_face`` against ``figures`` figures saving with ``p_sv``."""
    ph = Fraction(7 - hit_face, 6)
    hits = [comb(dice, h) * ph ** h * (1 - ph) ** (dice - h) for h in range(dice + 1)]
    cas = [Fraction(0)] * (figures + 1)
    for h, pr in enumerate(hits):
        for c, pc in enumerate(casualties_given_hits(h, figures, p_sv, saves)):
            cas[c] += pr * pc
    return hits, cas


def _exact_metric(probs: list[Fraction]) -> ExactMetric:
    return ExactMetric(float(sum(k * pr for k, pr in enumerate(probs))), np.arange(len(probs)),
                       np.array([float(pr) for pr in probs]))


@register
class BuildingAssault(Question):
    game = "breaking_news"
    name = "building_assault"
    summary = "One round of fighting inside a building: dice, hits and casualties of each side (exact)"
    Params = BuildingParams
    rule_options = BUILDING_OPTIONS
    primary_metric = "attacker_hits"
    supports_exact = True

    def prepare(self, p: BuildingParams, ctx: Context) -> Prepared:
        bn = BNData(ctx)
        att = building_dice(bn, p.attacker_quality, p.attackers)
        dfd = building_dice(bn, p.defender_quality, p.defenders)
        att_face = int(bn.constant("building_attacker_hits_on"))
        def_face = int(bn.constant("building_defender_hits_on"))
        saves = ctx.rules["building_saves"]
        # §9 saves against the hits of §11.1; a natural 1 always dies (save_face is at least 2)
        att_save = save_face(bn, p.attacker_quality, _ONE_BONUS)
        def_save = save_face(bn, p.defender_quality, _ONE_BONUS,
                             cover=ctx.rules["building_save_cover"] == "defenders")
        for q in (p.attacker_quality, p.defender_quality):
            bn.use(f"troop_qualities.{q}")

        def exact_answer():
            # the attackers' hits are the defenders' saves and the other way round (simultaneous rolls)
            a_hits, d_cas = exact_building_side(att, att_face, p.defenders, p_save(def_save), saves)
            d_hits, a_cas = exact_building_side(dfd, def_face, p.attackers, p_save(att_save), saves)
            return {"attacker_hits": _exact_metric(a_hits), "defender_hits": _exact_metric(d_hits),
                    "attacker_casualties": _exact_metric(a_cas), "defender_casualties": _exact_metric(d_cas)}

        conf = {q: bn.quality(q).get("confidence", {}).get("save", "-")
                for q in (p.attacker_quality, p.defender_quality)}
        notes = [f"attackers roll {att} dice hitting on {att_face}; defenders roll {dfd} dice hitting on {def_face}+",
                 f"saves: attackers ({p.attacker_quality}) {att_save}+ (save confidence {conf[p.attacker_quality]}), "
                 f"defenders ({p.defender_quality}) {def_save}+ (save confidence {conf[p.defender_quality]})"
                 f"{' with +1 for the building as cover' if ctx.rules['building_save_cover'] == 'defenders' else ''}",
                 "hits spread evenly over the figures hit, a figure removed at its first failed save" if saves ==
                 "per_figure" else "every failed save removes one figure (at most all of them)"]
        args = (att, att_face, dfd, def_face, p.attackers, p.defenders, att_save, def_save, saves == "pooled")
        return Prepared(BUILDING_METRICS, max(att, dfd, p.attackers, p.defenders) + 1, kernel=building_kernel,
                        args=args, exact=exact_answer, placeholders=tuple(bn.used), notes=tuple(notes))
