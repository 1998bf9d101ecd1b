"""Game data of Breaking News and the bookkeeping of the placeholders a sweep point uses.

The data lives in ``scenarios/breaking_news/data/*.yaml`` (docs/models/breaking_news.md §2-§4):
the troop-quality table and the shooting table as reconstructed from the PDF, each cell with
its confidence (H/M/L), the game constants, and the army and scenario lists. A file of the
same name beside a scenario overrides the game's copy (:meth:`analyzer.core.questions.Context.find`).

Files are read with ``ctx.load``, which records nothing: :class:`BNData` records a placeholder
only when the question marks its path as used, so a shot with an AR does not list the grenade
launcher's placeholder cover exemption.
"""
from __future__ import annotations

from typing import Any

from analyzer.core.errors import ScenarioError, suggest
from analyzer.core.gamedata import DataError, DataFiles
from analyzer.core.questions import Context

#: the issue's fixed names (scenario files depend on them)
QUALITIES = ("special_forces", "elite", "veteran", "trained", "recruit", "commando", "fanatic", "militia")
WEAPONS = ("pistol", "assault_rifle", "sniper_rifle", "smg", "lmg", "mmg", "hmg", "grenade", "flamethrower",
           "rpg", "panzerfaust", "rocket_launcher", "grenade_launcher", "milan", "tank_gun", "light_mortar")
CONFIDENCES = ("H", "M", "L", "-")
CONFIDENCE_WORDS = {"H": "confirmed by text or example", "M": "column-order parse only", "L": "guess"}

#: top-level data key -> file (relative to the scenario folder, then scenarios/breaking_news/)
FILES = {
    "troop_qualities": "data/troops.yaml",
    "range_bands_cm": "data/weapons.yaml", "weapons": "data/weapons.yaml",
    "cover_fire_bands_cm": "data/weapons.yaml", "cover_fire_cap": "data/weapons.yaml",
    "cover_fire": "data/weapons.yaml",
    "game": "data/game.yaml", "extras": "data/game.yaml", "vehicles": "data/game.yaml",
    "army_lists": "data/armies.yaml", "scenario_lists": "data/armies.yaml",
}


class BNData(DataFiles):
    """The data one sweep point reads (:data:`FILES`); ``used`` lists the placeholders it has marked."""

    def __init__(self, ctx: Context):
        super().__init__(ctx, FILES)

    # ------------------------------------------------------------------ lookups
    def quality(self, name: str) -> dict:
        table = self.get("troop_qualities")
        if name not in table:
            raise DataError(f"{FILES['troop_qualities']}: no troop quality {name!r}{suggest(name, list(table))}")
        return table[name]

    def weapon(self, name: str) -> dict:
        table = self.get("weapons")
        if name not in table:
            raise DataError(f"{FILES['weapons']}: no weapon {name!r}{suggest(name, list(table))}")
        return table[name]

    def constant(self, name: str) -> Any:
        """A game constant of data/game.yaml ``game:``, recorded as used."""
        game = self.get("game")
        if name not in game:
            raise DataError(f"{FILES['game']}: missing game.{name}")
        self.use(f"game.{name}")
        return game[name]


def param_error(ctx: Context, path: str, message: str) -> ScenarioError:
    """A parameter that fails against the game data (unknown list, weapon mode ...)."""
    return ScenarioError(str(ctx.scenario_file or ctx.scenario_dir), f"params.{path}", message)


def range_band(range_cm: float, bands: list[int]) -> int | None:
    """Index of the table column for ``range_cm`` ("up to" 25/50/100/150 cm); None beyond."""
    for i, limit in enumerate(bands):
        if range_cm <= limit:
            return i
    return None


def low_confidence_note(what: str, confidence: str) -> str | None:
    """The note an output carries when it rests on a reconstructed table cell."""
    if confidence in ("M", "L"):
        return f"reconstructed table cell {what}: confidence {confidence} ({CONFIDENCE_WORDS[confidence]})"
    return None
