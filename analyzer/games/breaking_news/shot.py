"""Question ``shot``: one figure, or a fire group of identical figures, fires at one target
figure (source §8 shooting, §9 saves, §10 shock; docs/models/breaking_news.md §5.1).

The number needed and the dice are compiled from the shooting table and the modifiers
(:func:`analyzer.games.breaking_news.shooting.to_hit`); each hit forces a save; the target is a
casualty when a save fails and shocked when it was hit and passed every save, or when it
survives after dodging with no cover in reach (§6.5 "Si no encuentra protección a esa distancias
la figura puede tirarse al suelo, pero se encontrará, automáticamente, conmocionada"; §10 "o
cuando se tire al suelo buscando protección"). Exact mode: hits are binomial, P(survive h hits)
= P(save)^h.
"""
from __future__ import annotations

from fractions import Fraction
from math import comb
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from analyzer.games.breaking_news.data import QUALITIES, WEAPONS, BNData, param_error
from analyzer.games.breaking_news.rules import SHOT_OPTIONS
from analyzer.games.breaking_news.shooting import exact_binary, exact_constant, p_save, save_face, to_hit
from analyzer.core.questions import Context, ExactMetric, Metric, Prepared, Question, register
from kernels.breaking_news.shot import shot_kernel

Quality = Literal[QUALITIES]  # type: ignore[valid-type]
Weapon = Literal[WEAPONS]      # type: ignore[valid-type]

METRICS = [
    Metric("target_number", "D6 score needed per die (7 = cannot hit)", "value"),
    Metric("dice", "dice rolled", "value"),
    Metric("hits", "hits"),
    Metric("casualties", "target removed (failed a save)"),
    Metric("shocked", "target shocked (hit and passed every save, or survived after throwing itself down)"),
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Shooter(_Strict):
    quality: Quality = Field(..., description="troop quality of the firing figure(s)")
    moved: bool = Field(False, description="moved more than 5 cm (at most 15) before firing: +1 (§8, §6.1)")
    sf: bool | None = Field(None, description="Special Forces shooter: -1 except bursts; default: quality "
                                              "is special_forces")


class Target(_Strict):
    quality: Quality = Field(..., description="troop quality of the target figure")
    cover: bool = Field(False, description="in cover: +1 to the number needed (not for sniper, grenade, RPG, "
                                           "flamethrower) and +1 to its save; with dodge: the dodge reaches cover")
    dodge: bool = Field(False, description="dodges (§6.5): +1 to the number needed (not against snipers); "
                                           "without cover it throws itself to the ground and is shocked if "
                                           "it survives")
    sniper: bool = Field(False, description="the target is a sniper: +1 to the number needed")
    leader: bool = Field(False, description="the team or section leader: +1 to its save")
    special_forces: bool | None = Field(None, description="SF target: only spotting (§7) uses it, which a "
                                                          "visible-target shot does not; accepted for symmetry")


class ShotParams(_Strict):
    weapon: Weapon = Field(..., description="weapon (shooting table row)")
    mode: Literal["aimed", "burst"] | None = Field(None, description="aimed | burst; default: the weapon's "
                                                                     "only (or first) mode")
    range_cm: float = Field(..., ge=0, le=1000, allow_inf_nan=False, description="range in cm")
    shooter: Shooter
    target: Target
    crew: int | None = Field(None, ge=1, le=3, description="MMG/HMG crew left: 1 gives +1 unless fixed")
    fixed: bool = Field(False, description="the MMG/HMG is fixed or in a turret (no 1-crew penalty)")
    shooters: int = Field(1, ge=1, le=12, description="identical figures firing together at the target")


def shot_setup(p: ShotParams, bn: BNData, ctx: Context, rules: dict):
    """(ToHit, save face) of a validated point; unknown modes and misplaced crews are refused."""
    modes = list(bn.weapon(p.weapon)["modes"])
    if p.mode is not None and p.mode not in modes:
        raise param_error(ctx, "mode", f"{p.weapon} has no {p.mode} mode; allowed: {', '.join(modes)}")
    if p.crew is not None and not bn.weapon(p.weapon).get("crew_served"):
        raise param_error(ctx, "crew", f"crew applies to the MMG and HMG only, not to {p.weapon}")
    th = to_hit(bn, p.weapon, p.mode, p.range_cm, p.shooter.quality, rules, moved=p.shooter.moved,
                sf=p.shooter.sf, cover=p.target.cover, dodge=p.target.dodge, target_sniper=p.target.sniper,
                crew=p.crew, fixed=p.fixed)
    face = save_face(bn, p.target.quality, rules, leader=p.target.leader, cover=p.target.cover)
    bn.use(f"troop_qualities.{p.target.quality}")
    bn.use(f"troop_qualities.{p.shooter.quality}")
    return th, face


def throws_itself_down(p: ShotParams, bn: BNData, dice: int) -> bool:
    """§6.5: a dodging figure "debe estar a un máximo de 5 cm de cualquier protección ... Si no encuentra
    protección a esa distancias la figura puede tirarse al suelo, pero se encontrará, automáticamente,
    conmocionada (ver 10)". ``dodge`` with ``cover`` is a dodge that reaches cover; ``dodge`` without
    ``cover`` is the figure throwing itself to the ground. Sniper fire "no puede ser esquivado" (no dodge,
    no shock), and a fire that rolls no die is no shot to dodge."""
    return bool(p.target.dodge and not p.target.cover and bn.weapon(p.weapon)["dodge_applies"] and dice > 0)


def exact_shot(target_number: int, dice: int, p_hit: Fraction, p_sv: Fraction,
               prone: bool = False) -> dict[str, ExactMetric]:
    """Exact metrics: hits ~ Binomial(dice, p_hit); the target survives h hits with P(save)^h.
    ``prone`` (it threw itself to the ground, §6.5, §10): shocked whenever it survives, hit or not."""
    hit_probs = [comb(dice, h) * p_hit ** h * (1 - p_hit) ** (dice - h) for h in range(dice + 1)]
    p_cas = sum((pr * (1 - p_sv ** h) for h, pr in enumerate(hit_probs)), Fraction(0))
    p_shock = sum((pr * p_sv ** h for h, pr in enumerate(hit_probs) if h > 0 or prone), Fraction(0))
    return {"target_number": exact_constant(target_number), "dice": exact_constant(dice),
            "hits": ExactMetric(float(dice * p_hit), np.arange(dice + 1), np.array([float(x) for x in hit_probs])),
            "casualties": exact_binary(p_cas), "shocked": exact_binary(p_shock)}


@register
class Shot(Question):
    game = "breaking_news"
    name = "shot"
    summary = "One figure or fire group fires at one target: number needed, dice, hits, casualties, shock"
    Params = ShotParams
    rule_options = SHOT_OPTIONS
    primary_metric = "casualties"
    supports_exact = True

    def prepare(self, p: ShotParams, ctx: Context) -> Prepared:
        bn = BNData(ctx)
        bn.use("range_bands_cm")
        th, face = shot_setup(p, bn, ctx, ctx.rules)
        dice = th.dice * p.shooters
        hit_face = th.needed if dice else 7
        notes = list(th.notes)
        mods = ", ".join(f"{name} {v:+d}" for name, v in th.modifiers)
        if th.base is not None:
            notes.append(f"table {th.base} ({th.weapon} {th.mode}, cell confidence {th.confidence})"
                         f"{'; ' + mods if mods else ''} -> "
                         f"{'needs ' + str(th.needed) if th.dice else 'no shot'}, {dice} dice")
        if th.reason:
            notes.append(th.reason)
        notes.append(f"target saves on a natural {face}+")
        prone = throws_itself_down(p, bn, dice)
        if prone:
            notes.append("target dodges with no cover in reach: it throws itself to the ground and is shocked "
                         "if it survives (§6.5, §10)")
        args = (int(hit_face), int(dice), int(hit_face), int(face), prone)

        def exact_answer():
            return exact_shot(int(hit_face), int(dice), Fraction(max(0, 7 - hit_face), 6) if dice else Fraction(0),
                              p_save(face), prone)

        return Prepared(METRICS, max(8, dice + 1), kernel=shot_kernel, args=args, exact=exact_answer,
                        placeholders=tuple(bn.used), notes=tuple(notes))

    def plots(self, meta, points, dists):
        from analyzer.games.breaking_news import plots  # matplotlib only when plotting
        return plots.shot_figures(meta, points)
