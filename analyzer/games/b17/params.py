"""Parameter models of the B-17 questions (spec §1-§4), validated at the edge.

Names that depend on the game data (gun ids, crew ids, fighter types) are checked when the
point is prepared, against the data files the scenario actually uses.
"""
from __future__ import annotations

from typing import Annotated, Literal, Optional

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from analyzer.games.b17.data import norm_clock

#: spec §0.6
MAX_WAVES = 50
MAX_FIGHTERS_PER_WAVE = 64

Clock = Annotated[str, BeforeValidator(norm_clock)]
Altitude = Literal["high", "level", "low"]
Policy = Literal["focus_most_dangerous", "spread", "max_kill_probability"]
DamageType = Literal["II", "II+2"]
SKILL = dict(ge=-1000, le=1000)

_DATA_SKILL = "PLACEHOLDER from data/crew.yaml when omitted (skills are not in the source)"
_DATA_INTERCOM = "PLACEHOLDER from data/crew.yaml (true) when omitted"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class GunShotParams(_Strict):
    skill: Optional[int] = Field(None, **SKILL, description="gunner skill: hit if 3d10 + modifier <= skill. "
                                 "Default: the gun's crew skill, else default_skill; " + _DATA_SKILL)
    modifier: Optional[int] = Field(None, ge=-50, le=50, description="cell modifier (table values -2/0/+4); "
                                    "give it, or gun + clock + altitude")
    gun: Optional[str] = Field(None, description="a gun id of gun_arcs.yaml (supplies damage, skill and the cell)")
    clock: Optional[Clock] = Field(None, description="fighter clock position, with gun + altitude")
    altitude: Optional[Altitude] = Field(None, description="fighter altitude, with gun + clock")
    damage: Optional[DamageType] = Field(None, description="II or II+2; default the gun's, else II")
    fighter: str = Field("Me109", description="fighter type of data/fighters.yaml")
    prior_hits: int = Field(0, ge=0, le=2, description="hits the fighter already has")
    intercom_ok: Optional[bool] = Field(None, description="needed by a ** cell; " + _DATA_INTERCOM)
    gun_ok: dict[str, bool] = Field(default_factory=dict, description="gun id -> working (default all)")

    @model_validator(mode="after")
    def _modifier_or_cell(self):
        has_pos = self.clock is not None or self.altitude is not None
        if self.modifier is not None and has_pos:
            raise ValueError("give `modifier`, or `gun` + `clock` + `altitude`, not both")
        if self.modifier is None:
            if self.gun is None or self.clock is None or self.altitude is None:
                raise ValueError("give `modifier`, or all of `gun`, `clock` and `altitude` (the cell is "
                                 "looked up in gun_arcs.yaml)")
        return self


class GunMatrixParams(_Strict):
    fighter: str = Field("Me109", description="fighter type of data/fighters.yaml")
    skill: Optional[int] = Field(None, **SKILL, description="one skill for every crew member; " + _DATA_SKILL)
    skills: dict[str, int] = Field(default_factory=dict, description="crew id -> skill (overrides skill)")
    prior_hits: int = Field(0, ge=0, le=2, description="hits the fighter already has")
    intercom_ok: Optional[bool] = Field(None, description="tail ** cells need it; " + _DATA_INTERCOM)
    gun_ok: dict[str, bool] = Field(default_factory=dict, description="gun id -> working (default all)")


class FighterSpec(_Strict):
    type: str = Field(..., description="fighter type of data/fighters.yaml (Me109, Me110, FW190)")
    clock: Optional[Clock] = Field(None, description="fixed clock position (with altitude); omit both to draw")
    altitude: Optional[Altitude] = Field(None, description="fixed altitude (with clock)")
    prior_hits: int = Field(0, ge=0, le=2, description="hits from earlier attacks (1 = tocado, 2 = dañado)")
    count: int = Field(1, ge=1, le=MAX_FIGHTERS_PER_WAVE, description="repeat this fighter")

    @model_validator(mode="after")
    def _both_or_neither(self):
        if (self.clock is None) != (self.altitude is None):
            raise ValueError("give both clock and altitude, or neither (the position is then drawn "
                             "from position_distribution)")
        return self


class PositionWeight(_Strict):
    clock: Clock
    altitude: Altitude
    weight: float = Field(1.0, ge=0, description="relative weight of this position")


class _BomberParams(_Strict):
    position_distribution: Optional[list[PositionWeight]] = Field(
        None, description="where fighters without a position attack from; default uniform over the "
        "24 cells (PLACEHOLDER: fighter placement is not in the source)")
    policy: Policy = Field("focus_most_dangerous", description="how each gun chooses its target")
    intercom_ok: Optional[bool] = Field(None, description="tail ** cells need it; " + _DATA_INTERCOM)
    gun_ok: dict[str, bool] = Field(default_factory=dict, description="gun id -> working (default all)")
    skill: Optional[int] = Field(None, **SKILL, description="one skill for every crew member; " + _DATA_SKILL)
    skills: dict[str, int] = Field(default_factory=dict, description="crew id -> skill (overrides skill)")

    @model_validator(mode="after")
    def _positive_weights(self):
        if self.position_distribution is not None and sum(p.weight for p in self.position_distribution) <= 0:
            raise ValueError("position_distribution needs a positive total weight")
        return self


def _expanded(specs: list[FighterSpec]) -> int:
    return sum(s.count for s in specs)


class AttackWaveParams(_BomberParams):
    fighters: list[FighterSpec] = Field(..., min_length=1, description="the attacking fighters")

    @model_validator(mode="after")
    def _cap(self):
        if _expanded(self.fighters) > MAX_FIGHTERS_PER_WAVE:
            raise ValueError(f"{_expanded(self.fighters)} fighters after count expansion; at most "
                             f"{MAX_FIGHTERS_PER_WAVE} (MAX_FIGHTERS_PER_WAVE)")
        return self


class Wave(_Strict):
    fighters: list[FighterSpec] = Field(default_factory=list, description="new arrivals (may be empty)")


EffectName = Literal["none", "gun_out", "intercom_out"]


class FighterFireParams(_Strict):
    model: Optional[Literal["none", "placeholder_3d10"]] = Field(
        None, description="fighter fire on the bomber (NOT in the source): none, or the placeholder 3d10 "
        "model; default data/fighter_fire.yaml (none)")
    skill: Optional[int] = Field(None, **SKILL, description="placeholder_3d10: hit if 3d10 + penalty <= skill "
                                 "(PLACEHOLDER 12 from data when omitted)")
    effects: Optional[dict[EffectName, tuple[int, int]]] = Field(
        None, description="placeholder_3d10: effect -> inclusive d10 range (PLACEHOLDER from data when omitted)")

    @model_validator(mode="after")
    def _ranges(self):
        for name, (lo, hi) in (self.effects or {}).items():
            if lo > hi:
                raise ValueError(f"effects.{name}: [{lo}, {hi}] needs lo <= hi")
        return self


class MissionParams(_BomberParams):
    waves: list[Wave] = Field(..., min_length=1, max_length=MAX_WAVES, description="attack waves in order")
    return_probability: Optional[float] = Field(None, ge=0, le=1, description="a surviving intact/tocado "
                                                "fighter attacks again next wave with this probability "
                                                "(PLACEHOLDER 1.0 from data/mission.yaml when omitted)")
    return_position: Optional[Literal["same", "redraw"]] = Field(
        None, description="a returning fighter keeps its position or draws a new one (PLACEHOLDER same)")
    fighter_fire: FighterFireParams = Field(default_factory=FighterFireParams)

    @model_validator(mode="after")
    def _cap(self):
        for w, wave in enumerate(self.waves):
            if _expanded(wave.fighters) > MAX_FIGHTERS_PER_WAVE:
                raise ValueError(f"waves[{w}]: {_expanded(wave.fighters)} arrivals; at most "
                                 f"{MAX_FIGHTERS_PER_WAVE} (MAX_FIGHTERS_PER_WAVE)")
        return self
