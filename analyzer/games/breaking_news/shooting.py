"""Shooting and saving (source §8, §9): the number needed, the dice and the save, compiled in
Python from the data tables so the kernels only roll dice (docs/models/breaking_news.md §5).

Conventions of the source: shooting modifiers are ADDED TO THE NUMBER NEEDED (+1 makes a shot
harder); save modifiers are added to the die (+1 makes a save easier).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from analyzer.games.breaking_news.data import BNData, low_confidence_note, range_band
from analyzer.core.questions import ExactMetric

#: a hit face above 6: no die can hit
NO_HIT = 7


@dataclass(frozen=True)
class ToHit:
    """One figure's fire with one weapon and mode at one range."""

    weapon: str
    mode: str
    base: int | None            # the table cell (None: no cell at this range)
    modifiers: tuple[tuple[str, int], ...] = ()
    needed: int = NO_HIT        # the D6 score each die needs after the rules (1..6; 7 = none)
    dice: int = 0               # dice rolled (0: cannot fire)
    confidence: str = "-"       # the table cell's confidence
    reason: str = ""            # why it cannot fire, or how the overflow rule changed it
    notes: tuple[str, ...] = field(default=())

    @property
    def p_hit(self) -> Fraction:
        """Chance one die hits."""
        return Fraction(max(0, 7 - self.needed), 6) if self.dice else Fraction(0)

    @property
    def expected_hits(self) -> Fraction:
        return self.dice * self.p_hit


#: §7 "El disparo de cañón de carros de combate o de armas antitanque pesadas (Milán) no puede
#: realizarse a figuras" (rule option ``heavy_at_vs_men``)
HEAVY_ANTI_TANK = ("milan", "tank_gun")


def poor_troops_modifier_applies(w: dict, rules: dict) -> bool:
    """§8 "+1 si un recluta, fanático o milicia dispara (sólo pequeñas armas, no granadas, RPG´s...)":
    the §6.1 light arms ("pistola, rifle de asalto, subfusil y LMG": small arms that may fire after a
    15 cm move) or every small arm of the data (rule option ``poor_troops_weapons``)."""
    if rules["poor_troops_weapons"] == "light_arms":
        return bool(w["small_arm"]) and w["after_move"] == "light"
    return bool(w["small_arm"])


def is_burst(weapon: str, mode: str, dice: int, rules: dict) -> bool:
    """A 'ráfaga' (spec A4): any fire of more than one die, or only the AR's burst mode."""
    if rules["burst_weapons"] == "ar_burst_only":
        return weapon == "assault_rifle" and mode == "burst"
    return dice > 1


def modes_of(bn: BNData, weapon: str) -> list[str]:
    return list(bn.weapon(weapon)["modes"])


def to_hit(bn: BNData, weapon: str, mode: str | None, range_cm: float, shooter_quality: str, rules: dict, *,
           moved: bool = False, sf: bool | None = None, cover: bool = False, dodge: bool = False,
           target_sniper: bool = False, crew: int | None = None, fixed: bool = False,
           cautious: bool = False) -> ToHit:
    """The number needed and the dice of one figure's fire (source §8 "TABLA DE DISPAROS" and
    "Modificadores"; §6.1 movement limits; §7 heavy weapons against men; the burst overflow rule
    and the spec's A3-A5). ``moved``: the shooter moved more than 5 cm (at most 15); ``cautious``:
    it moved 5 cm or less (bars support weapons under ``support_after_move: not_moved_only``)."""
    w = bn.weapon(weapon)
    # a value is "used" (and so listed as a placeholder) only where it can change the answer
    for key in ("modes", "max_cm", "min_cm", "small_arm", "after_move", "crew_served"):
        bn.use(f"weapons.{weapon}.{key}")
    if cover:
        bn.use(f"weapons.{weapon}.cover_applies")
    if dodge:
        bn.use(f"weapons.{weapon}.dodge_applies")
    mode = mode or next(iter(w["modes"]))
    m = w["modes"][mode]
    bands = bn.get("range_bands_cm")
    band = range_band(range_cm, bands)
    base = None if band is None else m["needed"][band]
    conf = "-" if band is None else m["confidence"][band]
    if base is None:   # an empty cell is a reading of the table too: it carries its confidence
        where = f"{weapon} {mode} at {range_cm:g} cm" + ("" if band is None else f" (band <= {bands[band]} cm)")
        note = low_confidence_note(f"{where}, empty (no shot)", conf)
        return ToHit(weapon, mode, None, confidence=conf,
                     reason=f"no table cell at {range_cm:g} cm" + ("" if conf == "-" else f" (confidence {conf})"),
                     notes=(note,) if note else ())
    if w.get("max_cm") is not None and range_cm > w["max_cm"]:
        return ToHit(weapon, mode, base, confidence=conf, reason=f"maximum range {w['max_cm']} cm")
    if w.get("min_cm") is not None and range_cm < w["min_cm"]:
        return ToHit(weapon, mode, base, confidence=conf, reason=f"minimum range {w['min_cm']} cm")
    # §6.1: "Si están armados con RPG o lanza-granadas o es un francotirador sólo puede disparar si se ha
    # movido hasta 5 cm. La infantería con MMG o HMG u otras armas de apoyo sólo p[uede disparar si no mueve]"
    if moved and w["after_move"] in ("slow", "static"):
        return ToHit(weapon, mode, base, confidence=conf, reason="cannot fire after moving more than 5 cm (§6.1)")
    if cautious and not moved and w["after_move"] == "static" and rules["support_after_move"] == "not_moved_only":
        return ToHit(weapon, mode, base, confidence=conf, reason="support weapons fire only if not moved (§6.1)")
    if weapon in HEAVY_ANTI_TANK and rules["heavy_at_vs_men"] == "barred":
        return ToHit(weapon, mode, base, confidence=conf, reason="cannot fire at figures (§7)")
    q = bn.quality(shooter_quality)
    sf = (shooter_quality == "special_forces") if sf is None else sf
    dice = int(m["dice"])
    burst = is_burst(weapon, mode, dice, rules)
    mods: list[tuple[str, int]] = []
    if moved:
        mods.append(("shooter moved more than 5 cm", 1))
    if cover and w["cover_applies"]:
        mods.append(("target in cover", 1))
    if poor_troops_modifier_applies(w, rules) and q["aimed_fire"] > 0:
        mods.append((f"{shooter_quality} shoots (small arms)", int(q["aimed_fire"])))
    if dodge and w["dodge_applies"]:
        mods.append(("target dodges", 1))
    if target_sniper:
        mods.append(("target is a sniper", 1))
    if w.get("crew_served") and crew == 1 and not fixed:
        mods.append(("MMG/HMG with 1 crew", 1))
    if sf and not burst:
        mods.append(("Special Forces shooter (no bursts)", -1))
    needed = base + sum(v for _, v in mods)
    reason = ""
    if needed > 6:
        if burst:
            if rules["burst_overflow"] == "per_point_over_6":
                lost = needed - 6
                needed = 6
            else:
                lost = sum(1 for _, v in mods if v > 0)
                needed = base + sum(v for _, v in mods if v < 0)
            reason = f"burst overflow: {lost} dice lost, hits on {needed}"
            dice -= lost
            if dice <= 0:
                return ToHit(weapon, mode, base, tuple(mods), NO_HIT, 0, conf, reason + ": no dice left")
        elif rules["aimed_over_6"] == "no_hit":
            return ToHit(weapon, mode, base, tuple(mods), NO_HIT, 0, conf, f"needs {needed}: no hit possible (A5)")
        else:
            reason = f"needs {needed}: a 6 hits (A5 six_hits)"
            needed = 6
    if needed < 2:
        needed = 2 if rules["natural_1_to_hit"] == "miss" else 1
    note = low_confidence_note(f"{weapon} {mode} at {range_cm:g} cm (band <= {bands[band]} cm)", conf)
    return ToHit(weapon, mode, base, tuple(mods), needed, dice, conf, reason, (note,) if note else ())


def save_face(bn: BNData, quality: str, rules: dict, *, leader: bool = False, cover: bool = False,
              extra_bonus: int = 0) -> int:
    """The lowest natural D6 that saves (source §9): die + bonus >= the Save value, "Un soldado
    que en la tirada del dado saque un 1, siempre resultará muerto" (so never below 2). Bonuses
    "+1 si: el objetivo es el Líder ... está detrás de cobertura" are "no acumulativos" (A6)."""
    bonuses = [1] * (int(leader) + int(cover)) + ([extra_bonus] if extra_bonus else [])
    bonus = (max(bonuses) if bonuses else 0) if rules["save_bonus"] == "max_single" else sum(bonuses)
    return max(2, int(bn.quality(quality)["save"]) - bonus)


def p_save(face: int) -> Fraction:
    return Fraction(max(0, 7 - face), 6)


def exact_binary(p: Fraction) -> ExactMetric:
    """The exact answer of a 0/1 metric with P(1) = ``p``."""
    return ExactMetric(float(p), np.array([0, 1]), np.array([float(1 - p), float(p)]))


def exact_constant(v: int) -> ExactMetric:
    """The exact answer of a metric that always takes the value ``v``."""
    return ExactMetric(float(v), np.array([v]), np.array([1.0]))
