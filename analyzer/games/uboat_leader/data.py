"""Game data of U-Boat Leader and the bookkeeping of the placeholders a sweep point uses.

The data lives in ``scenarios/uboat_leader/data/*.yaml`` and ``campaigns/*.yaml``
(docs/models/uboat_leader.md §1); a file of the same name beside a scenario overrides the
game's copy (:meth:`analyzer.core.questions.Context.find`).

Files are read with ``ctx.load``, which records no placeholder: data/combat.yaml holds the
numbers of every placeholder rule module, and an escort-detection question that reads only
the source's detection ranges from that file must not list (or, under ``strict: true``,
refuse) placeholders it never uses, the issue's reference scenario included.
:class:`GameData` records a placeholder only when the question marks its path as used
(:meth:`GameData.use`).
"""
from __future__ import annotations

from pathlib import Path

from analyzer.core.errors import ScenarioError
from analyzer.core.gamedata import DataError, DataFiles
from analyzer.core.questions import Context
from analyzer.games.uboat_leader.rules import PROCEDURE_PATHS

#: top-level data key -> file (relative to the scenario folder, then scenarios/uboat_leader/)
FILES = {
    "uboat_classes": "data/uboats.yaml", "uboats": "data/uboats.yaml",
    "convoys": "data/convoys.yaml", "unknown_speed": "data/convoys.yaml",
    "merchants": "data/merchants.yaml", "escorts": "data/escorts.yaml",
    "fleet_escorts": "data/fleet_escorts.yaml", "naval": "data/naval.yaml",
    "tactics": "data/tactics.yaml", "tactical_display": "data/tactical_display.yaml",
    "wolfpack": "data/wolfpack.yaml", "combat": "data/combat.yaml",
    # campaign layer (docs/models/uboat_leader_campaign.md; maps: data/campaign/map_<stem>.yaml)
    "campaign_rules": "data/campaign/rules.yaml", "events": "data/campaign/events.yaml",
}
CAMPAIGN_DIR = "campaigns"


class GameData(DataFiles):
    """The data one sweep point reads (:data:`FILES`); ``used`` lists the placeholders it has marked
    (a rule module's ``procedure`` is listed as its rule option, :func:`~analyzer.games.uboat_leader.
    rules.module_placeholders`, never as data)."""

    def __init__(self, ctx: Context):
        super().__init__(ctx, FILES, unlisted=PROCEDURE_PATHS)

    def campaign(self, stem: str) -> dict | None:
        """Campaign sheet ``campaigns/<stem>.yaml`` (its ``campaign`` mapping), None if absent."""
        try:
            data, _ = self._file(f"{CAMPAIGN_DIR}/{stem}.yaml")
        except DataError:
            return None
        return data["campaign"]

    def campaigns(self) -> list[str]:
        return sorted(p.stem for p in (Path(self.ctx.game_dir) / CAMPAIGN_DIR).glob("*.yaml"))


def param_error(ctx: Context, path: str, message: str) -> ScenarioError:
    """A parameter that fails against the game data (unknown card, U-boat, area ...)."""
    return ScenarioError(str(ctx.scenario_file or ctx.scenario_dir), f"params.{path}", message)
