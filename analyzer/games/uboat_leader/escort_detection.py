"""Question ``escort_detection``: one Escort against one U-boat (digest §7.5, §7.3).

docs/models/uboat_leader.md §3.1. In range iff range <= base[state] + alerted (base 2
surfaced, 1 submerged); detected iff d10 + alerted - damage + chit >= the Escort's
Detection value; a detected submerged boat using Silent Running evades on d10 <= EV, else
gains 2 Stress. Exact mode enumerates chit x d10 x d10.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Literal, Union

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator, model_validator

from analyzer.core.errors import suggest
from analyzer.core.gamedata import Placeholder
from analyzer.games.uboat_leader.data import GameData, param_error
from analyzer.core.questions import Context, ExactMetric, Metric, Prepared, Question, register
from kernels.uboat_leader import detection as k

#: G13: the digest's placeholder Detection values (surfaced / submerged)
PLACEHOLDER_DETECTION = {"surfaced": 5, "submerged": 7}
TacticsParam = Union[StrictInt, Literal["none", "pool"], list[StrictInt]]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DetectionValues(_Strict):
    surfaced: int = Field(..., ge=-20, le=30, description="Escort card's Detection value vs a surfaced U-boat")
    submerged: int = Field(..., ge=-20, le=30, description="Escort card's Detection value vs a submerged U-boat")


class UBoatParams(_Strict):
    state: Literal["surfaced", "submerged"] = Field("surfaced", description="side the U-boat shows")
    range: int = Field(0, ge=0, le=50, description="Areas between the Escort and the U-boat (shortest path)")
    evasion: int = Field(5, ge=0, le=10, description="EV of the crew row (Silent Running: evade on d10 <= EV)",
                         json_schema_extra={"placeholder": "G9: roster EV unknown; digest placeholder 5"})
    silent_running: bool = Field(False, description="a detected submerged boat uses Silent Running (§7.3)")


class EscortDetectionParams(_Strict):
    detection: DetectionValues | None = Field(
        None, description="Detection values; absent -> the `escort` card's, else the placeholder 5 / 7",
        json_schema_extra={"placeholder": "G13: Detection 5 surfaced / 7 submerged when neither detection "
                                          "nor escort is given"})
    escort: str | None = Field(None, description="Escort or Fleet Escort card name (used only without `detection`)")
    uboat: UBoatParams = Field(default_factory=UBoatParams)
    alerted: int = Field(0, ge=0, le=20, description="Alerted counters: +1 to the roll and +1 to both ranges each")
    escort_damage: Literal["none", "light", "heavy"] = Field("none", description="Light -1 / Heavy -2 to the roll")
    tactics: TacticsParam = Field(0, description="Tactics counter: a fixed value, none (= 0), pool (the data "
                                  "cup, placeholder) or a list of counter values (one drawn per trial)")

    @field_validator("tactics")
    @classmethod
    def _non_empty(cls, v):
        if isinstance(v, list) and not v:
            raise ValueError("a tactics list needs at least one counter value")
        return v

    @model_validator(mode="after")
    def _unused_defaults(self):
        # A default that the point does not use is not a placeholder it depends on: marking the
        # field as given keeps it out of the placeholder list (analyzer.core.scenario lists unset
        # placeholder defaults). prepare() adds the placeholder itself when it is used.
        if self.escort is not None and "detection" not in self.model_fields_set:
            self.detection = None
        if not (self.uboat.silent_running and self.uboat.state == "submerged"):
            self.uboat.model_fields_set.add("evasion")
        return self


def tactics_chits(tactics, gd: GameData, ctx: Context, path: str = "tactics") -> list[int]:
    """The counter values a draw is uniform over: [0] for none, [v] for a fixed value."""
    if tactics == "none":
        return [0]
    if isinstance(tactics, int):
        return [tactics]
    if tactics == "pool":
        gd.use("tactics.chits")
        chits = gd.get("tactics")["chits"]
        out = [int(c["value"]) for c in chits for _ in range(int(c["count"]))]
        if not out:
            raise param_error(ctx, path, "the data cup tactics.chits holds no counters")
        return out
    return [int(v) for v in tactics]


def _escort_card(name: str, gd: GameData, ctx: Context) -> tuple[str, int, dict]:
    for deck in ("escorts", "fleet_escorts"):
        for i, card in enumerate(gd.get(deck)):
            if card["name"] == name:
                return deck, i, card
    names = [c["name"] for d in ("escorts", "fleet_escorts") for c in gd.get(d)]
    raise param_error(ctx, "escort", f"no Escort or Fleet Escort card named {name!r}{suggest(name, names)}; "
                      f"allowed: {', '.join(names)}")


@register
class EscortDetection(Question):
    game = "uboat_leader"
    name = "escort_detection"
    summary = "One Escort's Detection roll against one U-boat, with Silent Running (exact mode)"
    Params = EscortDetectionParams
    primary_metric = "p_detected"
    supports_exact = True

    def prepare(self, p: EscortDetectionParams, ctx: Context) -> Prepared:
        gd = GameData(ctx)
        combat = gd.get("combat")
        for key in ("detection_range", "alerted_roll_bonus", "damage_penalty", "silent_running_fail_stress"):
            gd.use(f"combat.{key}")
        placeholders: list[Placeholder] = []
        state = p.uboat.state
        if p.detection is not None:
            value = getattr(p.detection, state)
        elif p.escort is not None:
            deck, i, card = _escort_card(p.escort, gd, ctx)
            gd.use(f"{deck}[{i}].detection.{state}")
            value = int(card["detection"][state])
        else:
            value = PLACEHOLDER_DETECTION[state]
            placeholders.append(Placeholder("params.detection", dict(PLACEHOLDER_DETECTION),
                                            "G13: Detection 5 surfaced / 7 submerged", "default"))
        silent = p.uboat.silent_running and state == "submerged"  # ignored for a surfaced boat
        if silent and "evasion" not in p.uboat.model_fields_set:
            placeholders.append(Placeholder("params.uboat.evasion", p.uboat.evasion, "G9: roster EV unknown",
                                            "default"))
        chits = np.asarray(tactics_chits(p.tactics, gd, ctx), np.int64)
        base = int(combat["detection_range"][state])
        in_range = p.uboat.range <= base + p.alerted
        penalty = 0 if p.escort_damage == "none" else int(combat["damage_penalty"][p.escort_damage])
        bonus = int(combat["alerted_roll_bonus"])
        fail_stress = int(combat["silent_running_fail_stress"])
        n_bins = max(2, fail_stress + 1)

        args = (value, in_range, p.alerted, bonus, penalty, chits, silent, p.uboat.evasion, fail_stress)

        def exact_answer():
            return exact_escort_detection(value, in_range, p.alerted, bonus, penalty, chits.tolist(), silent,
                                          p.uboat.evasion, fail_stress)

        metrics = [Metric("p_detected", "P(detected)", "probability"),
                   Metric("p_evaded", "P(evaded by Silent Running)", "probability"),
                   Metric("stress_added", "Stress added (failed Silent Running)"),
                   Metric("in_range", "1 when the U-boat is within the escort's Detection range "
                                      "(range <= base range + Alerted): 0 means it cannot be rolled for",
                          "probability")]
        notes = [] if in_range else [f"out of Detection range: {p.uboat.range} > {base} + {p.alerted} Alerted"]
        return Prepared(metrics, n_bins, kernel=k.escort_detection_kernel, args=args, exact=exact_answer,
                        placeholders=tuple(placeholders + gd.used), notes=tuple(notes))

    def plots(self, meta, points, dists):
        from analyzer.games.uboat_leader import plots  # matplotlib only when plotting
        return plots.escort_detection_figures(meta, points)


def exact_escort_detection(value, in_range, alerted, bonus, penalty, chits, silent, evasion, fail_stress):
    """Exact metrics (spec §3.1) by enumerating chit x d10 x d10 with Fractions."""
    p_det = Fraction(0)
    if in_range:
        for chit in chits:
            mod = alerted * bonus - penalty + chit
            p_det += Fraction(sum(1 for r in range(1, 11) if r + mod >= value), 10 * len(chits))
    p_ev = Fraction(sum(1 for r in range(1, 11) if r <= evasion), 10) if silent else Fraction(0)
    evaded = p_det * p_ev
    stressed = p_det * (1 - p_ev) if silent else Fraction(0)

    def binary(p):
        return ExactMetric(float(p), np.array([0, 1]), np.array([float(1 - p), float(p)]))

    if fail_stress == 0 or stressed == 0:
        stress = ExactMetric(0.0, np.array([0]), np.array([1.0]))
    else:
        stress = ExactMetric(float(stressed * fail_stress), np.array([0, fail_stress]),
                             np.array([float(1 - stressed), float(stressed)]))
    return {"p_detected": binary(p_det), "p_evaded": binary(evaded), "stress_added": stress,
            "in_range": binary(Fraction(int(bool(in_range))))}
