"""Army-list points (source "LISTAS DISPONIBLES", "EXTRAS") and the figures a list fields.

A line costs n x (AR soldier of its quality + leadership level + weapon upgrade); a crew-served
line (``crew: k``) costs n x (k soldiers + weapon + vehicle). docs/models/breaking_news.md §4.
"""
from __future__ import annotations

from dataclasses import dataclass

from analyzer.games.breaking_news.data import BNData


def soldier_points(bn: BNData, quality: str, rules: dict) -> int:
    """An AR soldier's cost; R4 and Irr1 follow the rule options trained_points /
    irregular_veteran_points (spec A1: the list's 12, the default of both, against the table's 10 / 11)."""
    q = bn.quality(quality)
    if quality == "trained":
        return int(q["points_list"] if rules.get("trained_points", "list") == "list" else q["points_table"])
    if quality == "commando":
        return int(q["points_list"] if rules.get("irregular_veteran_points", "list") == "list" else q["points_table"])
    return int(q["points_list"])


def leadership_points(bn: BNData, level: int) -> int:
    return 0 if not level else int(bn.constant("leadership_points")[level - 1])


def weapon_points(bn: BNData, weapons: list[str]) -> int:
    """Upgrade cost over an AR soldier of what a figure carries (its AR costs nothing extra)."""
    total = 0
    for w in weapons:
        bn.use(f"weapons.{w}.points")
        total += int(bn.weapon(w)["points"])
    return total


def line_points(bn: BNData, line: dict, quality: str, rules: dict, n: int | None = None) -> int:
    """Points of one list line (``n`` overrides a ranged count such as [5, 11])."""
    count = n if n is not None else line["n"]
    if "crew" in line:
        vehicle = int(bn.get("vehicles")[line["vehicle"]]) if line.get("vehicle") else 0
        per = line["crew"] * soldier_points(bn, quality, rules) + weapon_points(bn, line["weapons"]) + vehicle
    else:
        per = (soldier_points(bn, line.get("quality", quality), rules) + leadership_points(bn, line.get("leadership", 0))
               + weapon_points(bn, line["weapons"]))
    return count * per


def extra_points(bn: BNData, extra: dict) -> int:
    return extra.get("count", 1) * int(bn.get("extras")[extra["extra"]])


def scenario_list_points(bn: BNData, name: str, rules: dict) -> tuple[int, list[tuple[str, int, int]]]:
    """(computed total, [(line text, computed, stated)]) of a scenario's suggested list."""
    sl = bn.get("scenario_lists")[name]
    rows = [(ln["text"], line_points(bn, ln, sl["quality"], rules), ln["stated"]) for ln in sl["lines"]]
    rows += [(ex["text"], extra_points(bn, ex), ex["stated"]) for ex in sl.get("extras", [])]
    return sum(r[1] for r in rows), rows


@dataclass(frozen=True)
class Figure:
    """One man of a firefight team."""

    quality: str
    weapons: tuple[str, ...]
    leadership: int = 0
    leader: bool = False
    sniper: bool = False
    #: a section leader: "+1 si: el objetivo es el Líder del equipo/sección" (§9; the team leader
    #: has ``leader``)
    section_leader: bool = False


def line_figures(ln: dict, quality: str, n: int | None = None) -> list[Figure]:
    """The figures of one list line (``n`` overrides its count, e.g. a ranged [5, 11]). A crew-served
    line fields its crew (the gunner with the weapon, the others with ARs); a line with
    ``role: section_leader`` (the army lists' "Líder de Sección") fields section leaders (§9 "+1 si: el
    objetivo es el Líder del equipo/sección")."""
    figures: list[Figure] = []
    for _ in range(ln["n"] if n is None else n):
        if "crew" in ln:
            if ln["crew"] >= 1:
                figures.append(Figure(quality, tuple(ln["weapons"])))
            figures.extend(Figure(quality, ("assault_rifle",)) for _ in range(ln["crew"] - 1))
        else:
            weapons = tuple(ln["weapons"])
            figures.append(Figure(ln.get("quality", quality), weapons, ln.get("leadership", 0),
                                  bool(ln.get("leader")), "sniper_rifle" in weapons,
                                  ln.get("role") == "section_leader"))
    return figures


def scenario_list_figures(bn: BNData, name: str) -> tuple[str, list[Figure], list[str]]:
    """(team quality, figures, extras) of a scenario list; a vehicle line without crew fields nothing
    (vehicles are not modelled in a firefight) and the caller notes it."""
    sl = bn.get("scenario_lists")[name]
    quality = sl["quality"]
    figures = [f for ln in sl["lines"] for f in line_figures(ln, quality)]
    extras = [ex["extra"] for ex in sl.get("extras", [])]
    return quality, figures, extras


def army_list_figures(bn: BNData, name: str, quality: str | None = None) -> list[Figure]:
    """The figures of a national army list (``army_lists``) in one of its qualities (default its
    first); a ranged count ("5-11") fields its minimum ("Las cantidades presentadas son
    ORIENTATIVAS")."""
    al = bn.get("army_lists")[name]
    quality = quality or al["qualities"][0]
    if quality not in al["qualities"]:
        raise ValueError(f"army list {name!r} allows {al['qualities']}, not {quality!r}")
    return [f for ln in al["lines"]
            for f in line_figures(ln, quality, ln["n"][0] if isinstance(ln["n"], list) else ln["n"])]


def cover_fire_value(bn: BNData, shooters: list[tuple[str, float]], quality: str) -> tuple[int, int]:
    """§8.6 cover fire: (value, uncapped sum) = Σ each shooter's table value at its range + the
    troop's cover-fire modifier once per group, "El valor final no puede exceder de 9"."""
    bands = bn.get("cover_fire_bands_cm")
    table = bn.get("cover_fire")
    total = 0
    for weapon, rng in shooters:
        band = next((i for i, lim in enumerate(bands) if rng <= lim), None)
        value = None if band is None else table[weapon]["values"][band]
        total += value or 0
    total += int(bn.quality(quality)["cover_fire"])
    return min(total, int(bn.get("cover_fire_cap"))), total
