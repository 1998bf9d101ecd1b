"""Game data of HACSE naval: the rule constants (``data/hacse.yaml``), ship damage sheets
(``ships/<name>.yaml``), hex geometry and the placeholder roll model (docs/models/hacse_naval.md §1).

Files are read with ``ctx.load`` and a placeholder is recorded only when a question uses the
data path it sits under (:meth:`Data.use`), so a depth-charge run does not list the roll model
it never rolls.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from analyzer.core.errors import ScenarioError, suggest
from analyzer.core.gamedata import DataError, Placeholder, is_under
from analyzer.core.questions import Context
from analyzer.games.hacse_naval.rules import PROCEDURE_PATHS
from kernels.hacse_naval import damage as kd

RULES_FILE = "data/hacse.yaml"
SHIP_DIR = "ships"

#: effects of the row-effect table (data/hacse.yaml ``hacse.row_effects``) that the kernels act on;
#: any other effect name there is recorded only (sensors, aircraft, battle-end rules)
KERNEL_EFFECTS = {"leak": kd.FX_LEAK, "sink": kd.FX_SINK, "fire": kd.FX_FIRE, "speed_loss": kd.FX_SPEED,
                  "engine_speed": kd.FX_ENGINE, "explosion": kd.FX_EXPLOSION}
#: when a row-effect entry fires: at half HP, when destroyed, unstated (H11) or per hit
TRIGGERS = ("half", "destroyed", "unstated", "per_hit")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RowSheet(_Strict):
    name: str
    kinds: list[str] = Field(..., min_length=1, description="row kinds of the row-effect table (rumpf, ...)")
    hp: int = Field(..., ge=1, le=1000)
    he: int | None = Field(None, ge=0, le=100, description="HE of the heaviest weapon in the hex (Magazin rows)")


class HexSheet(_Strict):
    rows: list[RowSheet] = Field(..., min_length=1)


class ShipSheet(_Strict):
    name: str
    submarine: bool = False
    bm: int = Field(..., ge=-10, le=10)
    max_speed: int = Field(..., ge=0, le=60)
    max_depth: int | None = Field(None, ge=0, le=20)
    hexes: list[HexSheet] = Field(..., min_length=1, max_length=10)

    @model_validator(mode="after")
    def _sub_depth(self):
        if self.submarine and self.max_depth is None:
            raise ValueError("a submarine sheet needs `max_depth` (maximale Tauchtiefe, in levels)")
        return self


@dataclass(frozen=True)
class Sheet:
    """A validated sheet compiled to kernel arrays (:mod:`kernels.hacse_naval.damage`)."""

    name: str
    sheet: ShipSheet
    rows: np.ndarray
    hex_rows: np.ndarray
    hex_n: np.ndarray
    hex_elig: np.ndarray
    hex_elig_n: np.ndarray
    info: np.ndarray

    @property
    def n_rows(self) -> int:
        return self.rows.shape[0]

    def arrays(self) -> tuple:
        return self.rows, self.hex_rows, self.hex_n, self.hex_elig, self.hex_elig_n, self.info

    @property
    def torpedo_hexes(self) -> list[int]:
        """Hexes with a row a torpedo or mine can hit (placeholder G4: the struck hex is uniform over them)."""
        return [h for h in range(self.hex_n.shape[0]) if self.hex_elig_n[h] > 0]


class Data:
    """The data one sweep point reads; ``used`` lists the placeholders it has marked."""

    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.used: list[Placeholder] = []
        self._files: dict[str, tuple[Any, list[Placeholder]]] = {}

    def _file(self, relpath: str, prefix: str) -> tuple[Any, list[Placeholder]]:
        if relpath not in self._files:
            self._files[relpath] = self.ctx.load(relpath, prefix)
        return self._files[relpath]

    def rule(self, path: str) -> Any:
        """The value at ``hacse.<path>`` of data/hacse.yaml, its placeholders marked used."""
        data, found = self._file(RULES_FILE, "")
        node = data
        for part in f"hacse.{path}".split("."):
            if not isinstance(node, dict) or part not in node:
                raise DataError(f"{RULES_FILE}: missing key hacse.{path}")
            node = node[part]
        self._use(found, f"hacse.{path}")
        return node

    def _use(self, found: list[Placeholder], under: str) -> None:
        for ph in found:
            if is_under(ph.path, under) and ph not in self.used and ph.path not in PROCEDURE_PATHS:
                self.used.append(ph)

    def procedure(self, path: str) -> tuple[Any, bool]:
        """(the value at data path ``path`` of data/hacse.yaml -- a rule module's ``procedure`` --, whether
        it is still written ``{ph: ..}`` / ``{ex: ..}``); (None, False) when absent. Marks nothing used:
        the module is listed as its rule option (:func:`analyzer.games.hacse_naval.rules.module`)."""
        data, found = self._file(RULES_FILE, "")
        node = data
        for part in path.split("."):
            if not isinstance(node, dict) or part not in node:
                return None, False
            node = node[part]
        return node, any(ph.path == path for ph in found)

    def sheet(self, name: str, field: str, rules: dict[str, str], uses: tuple[str, ...] = ("hexes",)) -> Sheet:
        """Ship sheet ``ships/<name>.yaml`` validated and compiled; ``field`` names the parameter
        for error messages, ``uses`` the sheet keys whose placeholders the question depends on
        (its rows always; ``max_speed`` when it reports speed, ``max_depth`` for a U-boat)."""
        relpath = f"{SHIP_DIR}/{name}.yaml"
        try:
            raw, found = self._file(relpath, f"ships.{name}")
        except DataError:
            names = sorted(p.stem for p in (self.ctx.game_dir / SHIP_DIR).glob("*.yaml"))
            raise param_error(self.ctx, field, f"no ship sheet {name!r}{suggest(name, names)}; allowed: "
                              f"{', '.join(names)} (ships/<name>.yaml beside the scenario or in the game)") from None
        if not isinstance(raw, dict) or "ship" not in raw:
            raise DataError(f"{relpath}: a ship sheet is a mapping with one key `ship`")
        try:
            sheet = ShipSheet.model_validate(raw["ship"])
        except ValidationError as e:
            err = e.errors()[0]
            loc = ".".join(str(p) for p in err["loc"])
            raise DataError(f"{relpath}: ship.{loc}: {err['msg']} (got {err.get('input')!r})") from None
        for key in uses:
            self._use(found, f"ships.{name}.ship.{key}")
        return compile_sheet(name, sheet, rules, self)


def compile_sheet(name: str, sheet: ShipSheet, rules: dict[str, str], data: Data) -> Sheet:
    """Compile a sheet with the row-effect table and fold the rule options into per-row
    thresholds (docs/models/hacse_naval.md §3)."""
    table = data.rule("row_effects")
    underwater = set(data.rule("underwater_rows"))
    rows = []
    elig = []
    for h, hx in enumerate(sheet.hexes):
        for i, row in enumerate(hx.rows):
            fx = {t: 0 for t in TRIGGERS}
            for kind in row.kinds:
                if kind not in table:
                    raise DataError(f"{SHIP_DIR}/{name}.yaml: ship.hexes[{h}].rows[{i}].kinds: {kind!r} is not a row "
                                    f"kind; allowed: {', '.join(table)}{suggest(kind, table)}")
                for trigger, effects in table[kind].items():
                    for effect in effects:
                        fx[trigger] |= KERNEL_EFFECTS.get(effect, 0)
            if (fx["half"] | fx["destroyed"] | fx["unstated"]) & kd.FX_EXPLOSION and row.he is None:
                raise DataError(f"{SHIP_DIR}/{name}.yaml: ship.hexes[{h}].rows[{i}].he: row {row.name!r} explodes "
                                f"(Magazin): give `he`, the HE value of the heaviest weapon in its hex ('1W10 mal den "
                                f"HE-Wert der schwersten Waffe')")
            hp = row.hp
            half = -(-hp // 2) if rules.get("half_hp", "ceil") == "ceil" else max(1, hp // 2)
            func = hp
            sink = hp
            if sheet.submarine and fx["destroyed"] & kd.FX_SINK:      # H9: rows that also list the hull
                func = half
                hull_rows = rules.get("sub_hull_rows", "functions_at_half")
                if hull_rows == "all_at_half" or (hull_rows == "combined_rows_at_half" and len(set(row.kinds)) > 1):
                    sink = half
            special = 1 if rules.get("threshold_less_rows", "destroyed") == "any_hit" else func
            repeat = kd.NEVER                                         # fire_repeats: from the lowest fire threshold
            if rules.get("fire_repeats", "once_per_threshold") == "every_hit_past_threshold":
                for at, trigger in ((half, "half"), (func, "destroyed"), (special, "unstated")):
                    if fx[trigger] & kd.FX_FIRE:
                        repeat = min(repeat, at)
            rows.append([h, hp, row.he or 0, half, func, special, sink, fx["half"], fx["destroyed"], fx["unstated"],
                         repeat])
            elig.append(bool(underwater & set(row.kinds)))
    if not any(r[kd.FUNC_FX] & kd.FX_SINK for r in rows):
        raise DataError(f"{SHIP_DIR}/{name}.yaml: ship.hexes: no row can sink the ship (give a Rumpf row)")
    rows = np.asarray(rows, np.int64).reshape(-1, kd.N_ROW_COLS)
    n_hex = len(sheet.hexes)
    width = max(len(hx.rows) for hx in sheet.hexes)
    hex_rows = np.zeros((n_hex, width), np.int64)
    hex_n = np.zeros(n_hex, np.int64)
    hex_elig = np.zeros((n_hex, width), np.int64)
    hex_elig_n = np.zeros(n_hex, np.int64)
    for r in range(rows.shape[0]):
        h = rows[r, kd.HEX]
        hex_rows[h, hex_n[h]] = r
        hex_n[h] += 1
        if elig[r]:
            hex_elig[h, hex_elig_n[h]] = r
            hex_elig_n[h] += 1
    get = data.rule
    info = np.zeros(kd.N_INFO, np.int64)
    info[kd.IS_SUB] = int(sheet.submarine)
    info[kd.MAX_SPEED] = sheet.max_speed
    info[kd.SUB_LEAK_ONCE] = int(rules.get("sub_leak_depth", "per_row") == "once")
    info[kd.FIRE_SPREADS] = int(rules.get("fire_spreads", "yes") == "yes")
    info[kd.FIRE_REPEATS] = int(rules.get("fire_repeats", "once_per_threshold") == "every_hit_past_threshold")
    info[kd.ENGINE_MODE] = int(rules.get("engine_speed", "destroyed_rows") == "damage_share")
    info[kd.SPEED_LEAK] = int(get("speed_effects.leak"))
    info[kd.SPEED_LOSS] = int(get("speed_effects.speed_loss"))
    info[kd.SUB_LEAK_DEPTH] = int(get("speed_effects.sub_leak_depth"))
    info[kd.FIRE_IMMEDIATE] = int(get("fire.immediate_damage"))
    info[kd.FIRE_PER_ROUND] = int(get("fire.damage_per_round"))
    info[kd.MAGAZINE_DICE] = int(get("magazine.explosion_dice"))
    return Sheet(name, sheet, rows, hex_rows, hex_n, hex_elig, hex_elig_n, info)


#: rule hit_location / mine_hit_location: how the struck row is drawn (placeholder module, gaps G4/G11)
HIT_LOCATION_NOTES = {
    "hex_then_row": "a uniform hex among those holding a Rumpf/Maschinenraum/Tank/Magazin row, then a uniform "
                    "such row of it",
    "uniform_row": "uniform over every Rumpf/Maschinenraum/Tank/Magazin row of the ship",
    "bow_hex": "the ship's first (bow) hex holding such a row, then a uniform such row of it",
}


def hit_location_placeholder(option: str, value: str, d: "Data | None" = None) -> list[Placeholder]:
    """[The hit-location rule module a torpedo or mine point used] (not in the source, so a placeholder),
    or [] when the data ``d`` describes it (block ``hacse.<option>_module``, rules.module)."""
    from analyzer.games.hacse_naval import rules as R
    opt = {"hit_location": R.HIT_LOCATION, "mine_hit_location": R.MINE_HIT_LOCATION}[option]
    return R.module(d, opt, value, option, f"G4/G11: the row a torpedo or mine strikes is not in the source "
                    f"(only its kinds, l.89/l.95); {value} = {HIT_LOCATION_NOTES[value]}")


def hit_rows(sheet: Sheet, mode: str) -> list[tuple[int, float]]:
    """[(row, p)] of a torpedo or mine hit under hit location ``mode`` (HIT_LOCATION_NOTES)."""
    hexes = sheet.torpedo_hexes
    if mode == "bow_hex":
        hexes = hexes[:1]
    if mode == "uniform_row":
        rows = [int(sheet.hex_elig[h, i]) for h in hexes for i in range(int(sheet.hex_elig_n[h]))]
        return [(r, 1.0 / len(rows)) for r in rows]
    out = []
    for h in hexes:
        n = int(sheet.hex_elig_n[h])
        out += [(int(sheet.hex_elig[h, i]), 1.0 / (len(hexes) * n)) for i in range(n)]
    return out


def permille(d: Data, path: str) -> Fraction:
    """The probability at ``hacse.<path>`` (a multiple of 0.001, so the kernels draw it exactly)."""
    value = d.rule(path)
    try:
        f = Fraction(str(value))
    except (ValueError, ZeroDivisionError):
        f = None
    if f is None or not 0 <= f <= 1 or (f * 1000).denominator != 1:
        raise DataError(f"{RULES_FILE}: hacse.{path}: got {value!r}; allowed: a probability, a multiple of 0.001")
    return f


def param_error(ctx: Context, path: str, message: str) -> ScenarioError:
    return ScenarioError(str(ctx.scenario_file or ctx.scenario_dir), f"params.{path}", message)


# --------------------------------------------------------------------------- hex geometry
#: axial offsets of the six neighbours of a hex ("das Hex neben")
NEIGHBOURS = ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))


def hex_distance(a: tuple[int, int], b: tuple[int, int]) -> int:
    """Hexes between two axial coordinates (q, r)."""
    dq, dr = a[0] - b[0], a[1] - b[1]
    return (abs(dq) + abs(dr) + abs(dq + dr)) // 2


def guess_and_ring() -> list[tuple[int, int]]:
    """The guessed hex and the six around it (the issue's 'the 7 hexes around the guess')."""
    return [(0, 0)] + list(NEIGHBOURS)


# --------------------------------------------------------------------------- roll model (G1)
@dataclass(frozen=True)
class RollModel:
    """A placeholder sighting / skill roll: P(success) at a net difficulty (difficulty - ease)."""

    kind: str
    p0: Fraction = Fraction(7, 10)
    step: Fraction = Fraction(1, 10)
    dice: int = 2
    target: int = 11

    def p_success(self, net: int) -> Fraction:
        if self.kind == "linear":
            return min(Fraction(1), max(Fraction(0), self.p0 - self.step * net))
        sums = w10_sum_distribution(self.dice)
        return sum((p for s, p in sums.items() if s + net <= self.target), Fraction(0))

    @property
    def denominator(self) -> int:
        """A common denominator of every success chance (the kernel draws an integer below it)."""
        if self.kind == "linear":
            return int(np.lcm(self.p0.denominator, self.step.denominator))
        return 10 ** self.dice

    def numerator(self, net: int) -> int:
        p = self.p_success(net) * self.denominator
        assert p.denominator == 1
        return int(p)


def roll_model(data: Data, kind: str) -> RollModel:
    node = data.rule(f"roll_model.{kind}")
    if kind == "linear":
        return RollModel(kind, p0=Fraction(str(node["p0"])), step=Fraction(str(node["step"])))
    return RollModel(kind, dice=int(node["dice"]), target=int(node["target"]))


def w10_sum_distribution(n: int) -> dict[int, Fraction]:
    """Exact distribution of nW10 (sum of n d10)."""
    dist = {0: Fraction(1)}
    for _ in range(n):
        nxt: dict[int, Fraction] = {}
        for s, p in dist.items():
            for face in range(1, 11):
                nxt[s + face] = nxt.get(s + face, Fraction(0)) + p / 10
        dist = nxt
    return dist
