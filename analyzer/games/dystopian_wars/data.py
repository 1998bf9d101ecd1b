"""Game data of Dystopian Wars: the core data file, the fleet profiles, the parameter models
shared by several questions, and which placeholders a sweep point really uses.

``ctx.data`` records every ``{ph: ..}`` of a file it loads. A point that never reads a
profile's CC, or that sets ``critical_hp`` itself, does not use those placeholders, so
:class:`GameData` keeps only the ones the question marked as read (``strict: true`` then
refuses exactly the runs that depend on a value the source does not give).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from analyzer.core.errors import suggest
from analyzer.core.gamedata import DataError
from analyzer.core.questions import Context
from analyzer.games.dystopian_wars.rules import RuleError

DATA_FILE = "data/dystopian_wars.yaml"
FLEETS_DIR = "fleets"

State = Literal["surface", "flying", "diving", "submerged", "obscured"]
Size = Literal["tiny", "small", "medium", "large", "massive"]
Weapon = Literal["primary", "secondary", "rocket", "torpedo", "bomb", "mine"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


#: Limits of a fleet profile's values (the source has no stat lines: these are typo guards that
#: keep every pool and histogram finite; an AD above the pool cap could never be rolled).
PROFILE_INT_LIMITS = {"hp": (1, 1000), "dr": (1, 1000), "cr": (1, 1000), "aa": (0, 500), "cc": (0, 500),
                      "ap": (0, 1000), "rr": (0, 500), "mv": (0, 100), "min_move": (0, 100)}
MAX_PROFILE_WEAPONS = 8


def check_profile(prof: Any, where: str) -> None:
    """A fleet profile's values are checked when the file is read, not when a kernel meets
    them: integers in range (never a float, a bool or text), a known size, weapons of a known
    type with 4 AD values of at most the pool cap. Raises :class:`DataError` naming the value."""
    from analyzer.games.dystopian_wars.common import MAX_DICE
    from analyzer.games.dystopian_wars.rules import SIZES, WEAPON_TYPES

    if not isinstance(prof, dict):
        raise DataError(f"{where}: a profile is a mapping of stats; got {type(prof).__name__}")
    for key, (lo, hi) in PROFILE_INT_LIMITS.items():
        if key in prof:
            v = prof[key]
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise DataError(f"{where}.{key}: got {v!r}; allowed: a whole number {lo}..{hi}")
    if "size" in prof and prof["size"] not in SIZES:
        raise DataError(f"{where}.size: got {prof['size']!r}; allowed: {', '.join(SIZES)}")
    for key in ("capital", "fast", "elusive"):
        if key in prof and not isinstance(prof[key], bool):
            raise DataError(f"{where}.{key}: got {prof[key]!r}; allowed: true | false")
    weapons = prof.get("weapons") or []
    if not isinstance(weapons, list) or len(weapons) > MAX_PROFILE_WEAPONS:
        raise DataError(f"{where}.weapons: a list of at most {MAX_PROFILE_WEAPONS} weapons")
    for i, w in enumerate(weapons):
        if not isinstance(w, dict) or w.get("type") not in WEAPON_TYPES:
            raise DataError(f"{where}.weapons[{i}].type: got {w.get('type') if isinstance(w, dict) else w!r}; "
                            f"allowed: {', '.join(WEAPON_TYPES)}")
        ad = w.get("ad")
        if (not isinstance(ad, list) or len(ad) != 4
                or any(isinstance(a, bool) or not isinstance(a, int) or not 0 <= a <= MAX_DICE for a in ad)):
            raise DataError(f"{where}.weapons[{i}].ad: got {ad!r}; allowed: 4 whole numbers 0..{MAX_DICE} "
                            f"(AD in range bands 1..4)")


class GameData:
    """The data a sweep point reads, and the placeholders among it that the point used."""

    def __init__(self, ctx: Context, profiles: bool = False):
        self.ctx = ctx
        self.core, self._loaded = ctx.load(DATA_FILE)  # records nothing: see finish()
        self._loaded = list(self._loaded)
        self.profiles: dict[str, dict] = {}
        self._prefix: dict[str, str] = {}
        if profiles:
            self._load_fleets()
        self._used: list[str] = []

    def _load_fleets(self) -> None:
        """Merge ``profiles:`` of every ``fleets/*.yaml`` (scenario folder first, then the game
        folder; sorted by file name; a profile defined twice is an error)."""
        names: set[str] = set()
        for base in (self.ctx.scenario_dir, self.ctx.game_dir):
            folder = Path(base) / FLEETS_DIR
            if folder.is_dir():
                names |= {f.name for f in folder.glob("*.yaml")}
        for name in sorted(names):
            doc, found = self.ctx.load(f"{FLEETS_DIR}/{name}")
            doc = doc or {}
            self._loaded.extend(found)
            for prof_name, prof in (doc.get("profiles") or {}).items():
                if prof_name in self.profiles:
                    raise DataError(f"{FLEETS_DIR}/{name}: profile {prof_name!r} is defined twice "
                                    f"(also in another fleet file); profile names must be unique")
                check_profile(prof, f"{FLEETS_DIR}/{name}: profiles.{prof_name}")
                self.profiles[prof_name] = prof
                self._prefix[prof_name] = f"{Path(name).stem}.profiles.{prof_name}"

    def profile(self, name: str, where: str) -> dict:
        if name not in self.profiles:
            raise RuleError(f"{where}: unknown profile {name!r}{suggest(name, self.profiles)}; "
                            f"profiles in fleets/: {', '.join(sorted(self.profiles)) or '(none)'}")
        return self.profiles[name]

    def use(self, path: str) -> None:
        """Mark a data path (and everything below it) as read by this point."""
        self._used.append(path)

    def use_profile(self, name: str, *fields: str) -> None:
        for f in fields:
            self.use(f"{self._prefix[name]}.{f}")

    def critical(self, critical_hp: int | None) -> tuple[np.ndarray, np.ndarray]:
        """HP damage of one critical roll as (values, integer weights) (spec 0.4):
        ``critical_hp`` if given, else the data table (weighted), else the placeholder default."""
        if critical_hp is not None:
            return np.array([critical_hp], np.int64), np.array([1], np.int64)
        self.use("dystopian_wars.critical_table")
        table = self.core.get("critical_table") or []
        if table:
            values = np.array([int(e["hp_damage"]) for e in table], np.int64)
            weights = np.array([int(e.get("weight", 1)) for e in table], np.int64)
            if (values < 0).any() or (weights <= 0).any():
                raise DataError(f"{DATA_FILE}: critical_table entries need hp_damage >= 0 and weight >= 1")
            return values, weights
        self.use("dystopian_wars.critical_default.hp_damage")
        return np.array([int(self.core["critical_default"]["hp_damage"])], np.int64), np.array([1], np.int64)

    def finish(self) -> None:
        """Record, among the placeholders this object loaded, those the point read."""
        for path in self._used:
            self.ctx.use(self._loaded, under=path)


def crit_cumulative(values: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kernel form of the critical damage: distinct values and cumulative integer weights
    (one value: the kernel draws no random number)."""
    uniq = np.unique(values)
    w = np.array([weights[values == v].sum() for v in uniq], np.int64)
    return uniq.astype(np.int64), np.cumsum(w).astype(np.int64)


# ---------------------------------------------------------------------------------------------
# parameter models shared by several questions
# ---------------------------------------------------------------------------------------------

class TargetSpec(Strict):
    """A target model: explicit values, or a fleet profile whose values explicit keys override."""

    profile: str | None = Field(None, description="fleet profile filling size, dr, cr, hp, fast, elusive")
    size: Size | None = Field(None, description="tiny | small | medium | large | massive (default medium)")
    state: State = Field("surface", description="surface | flying | diving | submerged | obscured")
    dr: int | None = Field(None, ge=1, le=1000, description="damage rating: hits >= DR -> 1 HP")
    cr: int | None = Field(None, ge=1, le=1000, description="critical rating: hits >= CR -> criticals")
    hp: int | None = Field(None, ge=1, le=1000, description="starting hull points")
    hp_lost: int = Field(0, ge=0, le=1000, description="HP lost before this attack")
    fast: bool | None = Field(None, description="fast target: hit on 6 (Amb 7 scope)")
    elusive: bool | None = Field(None, description="elusive target: hit on 5-6 (Amb 7 scope)")

    @model_validator(mode="after")
    def _complete(self):
        if self.profile is None:
            missing = [k for k in ("dr", "cr", "hp") if getattr(self, k) is None]
            if missing:
                raise ValueError(f"{', '.join(missing)} required unless profile is given")
        if self.hp is not None and self.hp_lost >= self.hp:
            raise ValueError(f"hp_lost = {self.hp_lost} must be < hp = {self.hp}")
        return self


def resolve_target(spec: TargetSpec, gd: GameData, where: str) -> dict:
    """Plain target dict (size, state, dr, cr, hp, hp_lost, fast, elusive)."""
    t = {"size": "medium", "state": spec.state, "hp_lost": spec.hp_lost, "fast": False, "elusive": False}
    if spec.profile is not None:
        prof = gd.profile(spec.profile, f"{where}.profile")
        for k in ("size", "dr", "cr", "hp", "fast", "elusive"):
            if getattr(spec, k) is None and k in prof:
                t[k] = prof[k]
                gd.use_profile(spec.profile, k)
    for k in ("size", "dr", "cr", "hp", "fast", "elusive"):
        if getattr(spec, k) is not None:
            t[k] = getattr(spec, k)
    for k in ("dr", "cr", "hp"):
        if k not in t:
            raise RuleError(f"{where}.{k}: profile {spec.profile!r} has no {k}; give it explicitly")
        t[k] = int(t[k])
    if not 0 <= t["hp_lost"] < t["hp"]:
        raise RuleError(f"{where}.hp_lost: got {t['hp_lost']}; allowed 0..{t['hp'] - 1} (hp = {t['hp']})")
    t["fast"], t["elusive"] = bool(t["fast"]), bool(t["elusive"])
    return t


class ShipSpec(Strict):
    """A model in a ram or collision (profile fills rr, hp, dr, cr, size; explicit keys override)."""

    profile: str | None = Field(None, description="fleet profile")
    rr: int | None = Field(None, ge=0, le=1000, description="ram dice (default 0, or the profile's)")
    hp: int | None = Field(None, ge=1, le=1000, description="starting hull points")
    hp_lost: int = Field(0, ge=0, le=1000, description="HP lost before the contact")
    dr: int | None = Field(None, ge=1, le=1000)
    cr: int | None = Field(None, ge=1, le=1000)
    size: Size | None = Field(None, description="default medium (not used by the dice)")

    @model_validator(mode="after")
    def _complete(self):
        if self.profile is None:
            missing = [k for k in ("hp", "dr", "cr") if getattr(self, k) is None]
            if missing:
                raise ValueError(f"{', '.join(missing)} required unless profile is given")
        if self.hp is not None and self.hp_lost >= self.hp:
            raise ValueError(f"hp_lost = {self.hp_lost} must be < hp = {self.hp}")
        return self


def resolve_ship(spec: ShipSpec, gd: GameData, where: str, reads: tuple[str, ...] = ("rr", "hp", "dr", "cr")) -> dict:
    """Plain model dict (rr, hp, dr, cr, size, hp_lost); ``reads`` = the profile values the
    question's dice depend on (only those count as used placeholders)."""
    s = {"hp_lost": spec.hp_lost, "rr": 0, "size": "medium"}
    if spec.profile is not None:
        prof = gd.profile(spec.profile, f"{where}.profile")
        for k in ("rr", "hp", "dr", "cr", "size"):
            if getattr(spec, k) is None and k in prof:
                s[k] = prof[k]
                if k in reads:
                    gd.use_profile(spec.profile, k)
    for k in ("rr", "hp", "dr", "cr", "size"):
        if getattr(spec, k) is not None:
            s[k] = getattr(spec, k)
    for k in ("hp", "dr", "cr"):
        if k not in s:
            raise RuleError(f"{where}.{k}: profile {spec.profile!r} has no {k}; give it explicitly")
    for k in ("rr", "hp", "dr", "cr"):
        s[k] = int(s[k])
    if not 0 <= s["hp_lost"] < s["hp"]:
        raise RuleError(f"{where}.hp_lost: got {s['hp_lost']}; allowed 0..{s['hp'] - 1} (hp = {s['hp']})")
    return s
