"""B-17 game data: the gun-arc table, fighters, crew, fighter fire and mission files.

Spec: docs/models/b17.md §0.1. Files are found by :meth:`analyzer.core.questions.Context.find`
(the scenario's folder first, then ``scenarios/b17/``), so a user's own transcription of the
arc table placed beside a scenario replaces the shipped one.

They are read with ``ctx.load``, which records no placeholder: the spec (§5) reports only
the placeholders a point actually uses (``gun_shot`` with ``skill``, ``modifier`` and
``damage`` given uses none, so ``strict: true`` accepts it). :class:`B17Data` keeps each
value's placeholder beside it and the questions add the ones they touch to
``Prepared.placeholders``.
"""
from __future__ import annotations

import re

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analyzer.core.gamedata import DataError, Placeholder
from analyzer.core.questions import Context

CLOCKS = ("12:00", "1:30", "3:00", "4:30", "6:00", "7:30", "9:00", "10:30")   # digest §2.1
CLOCK_IDS = ("1200", "0130", "0300", "0430", "0600", "0730", "0900", "1030")  # metric names
ALTITUDES = ("high", "level", "low")                                          # digest §2.1
N_CELLS = len(CLOCKS) * len(ALTITUDES)
#: YAML 1.1 reads an unquoted ``1:30`` as the base-60 integer 90: map those back (spec §0.1).
SEXAGESIMAL = {720: "12:00", 90: "1:30", 180: "3:00", 270: "4:30",
               360: "6:00", 450: "7:30", 540: "9:00", 630: "10:30"}
CELL_MODIFIERS = (-2, 0, 4)                  # digest §2.1 "hay una cifra: -2, 0 o +4"
DAMAGE_BONUS = {"II": 0, "II+2": 2}          # digest §4
MAX_GUNS = 16                                # spec §0.6
FILES = {"gun_arcs": "gun_arcs.yaml", "fighters": "data/fighters.yaml", "crew": "data/crew.yaml",
         "fighter_fire": "data/fighter_fire.yaml", "mission": "data/mission.yaml"}


def norm_clock(value: Any) -> str:
    """A clock as written in a file or scenario -> its canonical string ("1:30")."""
    if isinstance(value, bool):
        raise ValueError(f"got {value!r}; allowed clocks: {', '.join(CLOCKS)} (quoted)")
    if isinstance(value, int) and value in SEXAGESIMAL:
        return SEXAGESIMAL[value]
    if isinstance(value, str) and value.strip() in CLOCKS:
        return value.strip()
    raise ValueError(f"got {value!r}; allowed clocks: {', '.join(CLOCKS)} (quote them: \"1:30\")")


def cell_index(clock: str, altitude: str) -> int:
    """Position index 0..23: clock-major, altitudes high/level/low."""
    return CLOCKS.index(clock) * len(ALTITUDES) + ALTITUDES.index(altitude)


def cell_name(cell: int) -> tuple[str, str]:
    return CLOCKS[cell // len(ALTITUDES)], ALTITUDES[cell % len(ALTITUDES)]


@dataclass
class Gun:
    """One row of the arc table (digest §2.1)."""

    id: str
    order: int
    crew: str
    crew_index: int
    damage: str
    group: str | None
    only_clock: frozenset[str] | None
    #: per position 0..23: None (grey) or (modifier, delayed ``**``)
    cells: list[tuple[int, bool] | None]
    cell_placeholders: list[Placeholder | None]
    damage_placeholder: Placeholder | None

    @property
    def bonus(self) -> int:
        return DAMAGE_BONUS[self.damage]

    def raw_cell(self, cell: int) -> tuple[int, bool] | None:
        """The table cell with the navigator's ``only_clock`` mask (§2.4) applied."""
        if self.only_clock is not None and cell_name(cell)[0] not in self.only_clock:
            return None
        return self.cells[cell]


@dataclass
class FighterType:
    name: str
    damage_per_hit: int
    danger_rank: int
    rank_placeholder: Placeholder | None


@dataclass
class Value:
    """A data value and its placeholder (None when the source gives it)."""

    value: Any
    placeholder: Placeholder | None = None

    def used(self, into: list[Placeholder]) -> Any:
        if self.placeholder is not None and self.placeholder not in into:
            into.append(self.placeholder)
        return self.value


@dataclass
class B17Data:
    guns: list[Gun]
    crews: list[str]
    shooters: list[list[int]]          # gun indices; an exclusive group is one shooter (§2.4)
    types: dict[str, FighterType]
    tocado_at: int
    danado_at: int
    destroyed_at: int
    penalty: tuple[int, int, int]      # intact, tocado, danado: the fighter's own shots (§6)
    default_skill: Value
    skills: dict[str, Value]
    intercom_ok: Value
    fighter_fire: dict[str, Any]       # model (str), skill (Value), effects {name: (lo, hi)}, effect_placeholders
    return_probability: Value
    return_position: Value
    arc_placeholders: list[Placeholder] = field(default_factory=list)

    def gun(self, gun_id: str) -> Gun | None:
        return next((g for g in self.guns if g.id == gun_id), None)

    def crew_skill(self, crew: str) -> Value:
        return self.skills.get(crew, self.default_skill)


def _need(d: Any, key: str, where: str, file: Path) -> Any:
    if not isinstance(d, dict) or key not in d:
        raise DataError(f"{file}: {where}.{key}: required key is missing")
    return d[key]


def _int(v: Any, where: str, file: Path, lo: int | None = None) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or (lo is not None and v < lo):
        raise DataError(f"{file}: {where}: got {v!r}; must be an integer" + (f" >= {lo}" if lo is not None else ""))
    return v


def parse_cell(v: Any, where: str, file: Path) -> tuple[int, bool] | None:
    """``null`` grey, ``-2 | 0 | +4`` a modifier, ``"<m>**"`` a delayed tail cell (§2.1, §2.3)."""
    if v is None:
        return None
    delayed = False
    mod: Any = v
    if isinstance(v, str):
        s = v.strip()
        if s.endswith("**"):
            delayed, s = True, s[:-2].strip()
        try:
            mod = int(s)
        except ValueError:
            mod = None
    if isinstance(mod, bool) or not isinstance(mod, int) or mod not in CELL_MODIFIERS:
        raise DataError(f"{file}: {where}: got {v!r}; allowed: null (grey), -2, 0, +4, "
                        f"or \"-2**\" / \"0**\" / \"+4**\" for a delayed tail cell")
    return mod, delayed


def _parse_guns(raw: Any, phs: dict[str, Placeholder], file: Path) -> tuple[list[Gun], list[str]]:
    guns_raw = _need(raw, "guns", "gun_arcs", file)
    if not isinstance(guns_raw, list) or not 1 <= len(guns_raw) <= MAX_GUNS:
        raise DataError(f"{file}: guns: need a list of 1..{MAX_GUNS} guns (MAX_GUNS)")
    guns: list[Gun] = []
    crews: list[str] = []
    for i, g in enumerate(guns_raw):
        where = f"guns[{i}]"
        allowed = {"id", "crew", "damage", "arcs", "exclusive_group", "only_clock"}
        if not isinstance(g, dict) or set(g) - allowed:
            extra = sorted(set(g) - allowed) if isinstance(g, dict) else g
            raise DataError(f"{file}: {where}: unknown key(s) {extra}; allowed: {', '.join(sorted(allowed))}")
        gid = _need(g, "id", where, file)
        if not isinstance(gid, str) or not gid or "__" in gid or not gid.replace("_", "").isalnum():
            raise DataError(f"{file}: {where}.id: got {gid!r}; use a snake_case name without '__'")
        if any(x.id == gid for x in guns):
            raise DataError(f"{file}: {where}.id: duplicate gun id {gid!r}")
        crew = _need(g, "crew", where, file)
        if not isinstance(crew, str) or not crew.replace("_", "").isalnum():
            raise DataError(f"{file}: {where}.crew: got {crew!r}; use a snake_case name")
        if crew not in crews:
            crews.append(crew)
        damage = _need(g, "damage", where, file)
        if damage not in DAMAGE_BONUS:
            raise DataError(f"{file}: {where}.damage: got {damage!r}; allowed: \"II\", \"II+2\"")
        only = g.get("only_clock")
        if only is not None:
            try:
                only = frozenset(norm_clock(c) for c in only)
            except (ValueError, TypeError) as e:
                raise DataError(f"{file}: {where}.only_clock: {e}") from None
        arcs = _need(g, "arcs", where, file)
        if not isinstance(arcs, dict):
            raise DataError(f"{file}: {where}.arcs: need a mapping clock -> {{high, level, low}}")
        cells: list = [None] * N_CELLS
        cell_phs: list = [None] * N_CELLS
        seen = set()
        for ck, row in arcs.items():
            try:
                clock = norm_clock(ck)
            except ValueError as e:
                raise DataError(f"{file}: {where}.arcs.{ck}: {e}") from None
            if clock in seen:
                raise DataError(f"{file}: {where}.arcs.{ck}: clock {clock} given twice")
            seen.add(clock)
            if not isinstance(row, dict) or set(row) != set(ALTITUDES):
                got = sorted(row) if isinstance(row, dict) else row
                raise DataError(f"{file}: {where}.arcs.{ck}: got {got}; need exactly high, level, low")
            for alt in ALTITUDES:
                c = cell_index(clock, alt)
                cells[c] = parse_cell(row[alt], f"{where}.arcs.{ck}.{alt}", file)
                cell_phs[c] = phs.get(f"gun_arcs.guns[{i}].arcs.{ck}.{alt}")
        if seen != set(CLOCKS):
            missing = [c for c in CLOCKS if c not in seen]
            raise DataError(f"{file}: {where}.arcs: missing clock(s) {missing}; all 8 are required (24 cells)")
        group = g.get("exclusive_group")
        if group is not None and not isinstance(group, str):
            raise DataError(f"{file}: {where}.exclusive_group: got {group!r}; must be a name")
        guns.append(Gun(gid, i, crew, crews.index(crew), damage, group, only, cells, cell_phs,
                        phs.get(f"gun_arcs.guns[{i}].damage")))
    return guns, crews


def shooters_of(guns: list[Gun]) -> list[list[int]]:
    """Firing positions in gun order; an exclusive group is one shooter at its first gun (§2.4)."""
    out: list[list[int]] = []
    groups: dict[str, list[int]] = {}
    for g in guns:
        if g.group is None:
            out.append([g.order])
        elif g.group not in groups:
            groups[g.group] = [g.order]
            out.append(groups[g.group])
        else:
            groups[g.group].append(g.order)
    return out


def load(ctx: Context) -> B17Data:
    """Read and validate the five data files of the scenario's context (spec §0.1)."""
    loaded = {}
    for prefix, rel in FILES.items():
        value, phs = ctx.load(rel, prefix)
        loaded[prefix] = (ctx.find(rel), value, {p.path: p for p in phs})

    path, arcs, arc_phs = loaded["gun_arcs"]
    guns, crews = _parse_guns(arcs, arc_phs, path)

    path, ft, ft_phs = loaded["fighters"]
    types_raw = _need(ft, "types", "fighters", path)
    if not isinstance(types_raw, dict) or not types_raw:
        raise DataError(f"{path}: types: need at least one fighter type")
    types = {}
    for name, t in types_raw.items():
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9 ._-]{0,39}", str(name)):
            raise DataError(f"{path}: types: fighter type name {name!r}: use letters, digits, space, '.', '_' or "
                            f"'-' (at most 40; it names plot files and table columns)")
        k = _int(_need(t, "damage_per_hit", f"types.{name}", path), f"types.{name}.damage_per_hit", path, 1)
        rank = _int(_need(t, "danger_rank", f"types.{name}", path), f"types.{name}.danger_rank", path)
        types[str(name)] = FighterType(str(name), k, rank, ft_phs.get(f"fighters.types.{name}.danger_rank"))
    states = _need(ft, "states", "fighters", path)
    tocado_at = _int(_need(states, "tocado_at_hits", "states", path), "states.tocado_at_hits", path, 1)
    danado_at = _int(_need(states, "danado_at_hits", "states", path), "states.danado_at_hits", path, 1)
    destroyed_at = _int(_need(states, "destroyed_at_hits", "states", path), "states.destroyed_at_hits", path, 1)
    if not tocado_at < danado_at < destroyed_at:
        raise DataError(f"{path}: states: need tocado_at_hits < danado_at_hits < destroyed_at_hits")
    pen = _need(ft, "shot_penalty", "fighters", path)
    penalty = tuple(_int(_need(pen, s, "shot_penalty", path), f"shot_penalty.{s}", path, 0)
                    for s in ("intact", "tocado", "danado"))
    if len(set(penalty)) != 3:
        raise DataError(f"{path}: shot_penalty: the three penalties must differ (metrics firing_plus<p>)")

    path, crew, crew_phs = loaded["crew"]
    default_skill = Value(_int(_need(crew, "default_skill", "crew", path), "default_skill", path),
                          crew_phs.get("crew.default_skill"))
    skills = {}
    for name, v in (crew.get("skills") or {}).items():
        skills[str(name)] = Value(_int(v, f"skills.{name}", path), crew_phs.get(f"crew.skills.{name}"))
    ic = _need(crew, "intercom_ok", "crew", path)
    if not isinstance(ic, bool):
        raise DataError(f"{path}: intercom_ok: got {ic!r}; must be true or false")
    intercom_ok = Value(ic, crew_phs.get("crew.intercom_ok"))

    path, ff, ff_phs = loaded["fighter_fire"]
    ph3 = _need(ff, "placeholder_3d10", "fighter_fire", path)
    fighter_fire = {
        "model": _need(ff, "model", "fighter_fire", path),
        "skill": Value(_int(_need(ph3, "skill", "placeholder_3d10", path), "placeholder_3d10.skill", path),
                       ff_phs.get("fighter_fire.placeholder_3d10.skill")),
        "effects": parse_effects(_need(ph3, "effects", "placeholder_3d10", path),
                                 f"{path}: placeholder_3d10.effects"),
        "effect_placeholders": [p for n, p in ff_phs.items() if n.startswith("fighter_fire.placeholder_3d10.effects")],
    }

    path, ms, ms_phs = loaded["mission"]
    rp = _need(ms, "return_probability", "mission", path)
    if isinstance(rp, bool) or not isinstance(rp, (int, float)) or not 0 <= rp <= 1:
        raise DataError(f"{path}: return_probability: got {rp!r}; must be in [0, 1]")
    pos = _need(ms, "return_position", "mission", path)
    if pos not in ("same", "redraw"):
        raise DataError(f"{path}: return_position: got {pos!r}; allowed: same, redraw")

    return B17Data(guns, crews, shooters_of(guns), types, tocado_at, danado_at, destroyed_at, penalty,
                   default_skill, skills, intercom_ok, fighter_fire,
                   Value(float(rp), ms_phs.get("mission.return_probability")),
                   Value(pos, ms_phs.get("mission.return_position")),
                   list(arc_phs.values()))


EFFECTS = ("none", "gun_out", "intercom_out")


def parse_effects(raw: Any, where: str) -> dict[str, tuple[int, int]]:
    """Fighter-fire effects ``{none|gun_out|intercom_out: [lo, hi]}`` on a d10 (1..10), in order."""
    if not isinstance(raw, dict):
        raise DataError(f"{where}: need a mapping effect -> [lo, hi]")
    out = {}
    for name, rng in raw.items():
        if name not in EFFECTS:
            raise DataError(f"{where}.{name}: unknown effect; allowed: {', '.join(EFFECTS)}")
        if (not isinstance(rng, (list, tuple)) or len(rng) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in rng) or rng[0] > rng[1]):
            raise DataError(f"{where}.{name}: got {rng!r}; need [lo, hi] with lo <= hi (a d10 roll 1..10)")
        out[name] = (int(rng[0]), int(rng[1]))
    return out
