"""Question ``wolfpack``: the active U-boat calls the boats in its Area (digest §6.5).

docs/models/uboat_leader.md §3.2. Each candidate rolls d10 (-2 with an Attacked counter)
against the sheet's Wolfpack notes (placeholders, G4); an unmodified Stress result adds 1
Stress to the active boat and places an Alerted counter. A Radio Call (A5) makes every
candidate join without rolls. Exact mode convolves the independent candidates.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from analyzer.core.errors import suggest
from analyzer.core.gamedata import DataError
from analyzer.games.uboat_leader.data import CAMPAIGN_DIR, GameData, param_error
from analyzer.games.uboat_leader.rules import WOLFPACK_OPTIONS
from analyzer.core.questions import Context, ExactMetric, Metric, Prepared, Question, register
from kernels.uboat_leader import wolfpack as k

NOTE_KEYS = ("join_min", "stress_results", "attacked_modifier", "stress_per_result", "alerted_per_result",
             "radio_call_cost")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class WolfpackNotes(_Strict):
    """Overrides of the sheet's Wolfpack notes (data/wolfpack.yaml, campaign ``wolfpack``)."""

    join_min: int | None = Field(None, ge=-10, le=30, description="a candidate joins on modified d10 >= this")
    stress_results: list[int] | None = Field(None, description="unmodified faces (1..10) that are Stress results")
    attacked_modifier: int | None = Field(None, ge=-10, le=10, description="modifier for an Attacked counter (-2)")
    stress_per_result: int | None = Field(None, ge=0, le=10, description="Stress on the active boat per result (1)")
    alerted_per_result: int | None = Field(None, ge=0, le=10, description="Alerted counters per result (1)")
    radio_call_cost: int | None = Field(None, ge=0, le=100, description="SO cost of a Radio Call")

    @model_validator(mode="after")
    def _faces(self):
        bad = [f for f in self.stress_results or [] if not 1 <= f <= 10]
        if bad:
            raise ValueError(f"stress_results: faces of a d10 only (1..10), got {bad}")
        return self


class WolfpackParams(_Strict):
    candidates: int = Field(3, ge=0, le=50, description="boats in the Area that may be called "
                            "(not in a Search box, not Unfit)")
    attacked: int = Field(0, ge=0, le=50, description="how many candidates (the first ones) carry an Attacked counter")
    radio_call: bool = Field(False, description="buy a Radio Call: every candidate joins, no rolls (§4)")
    campaign: str | None = Field(None, description="campaign stem whose sheet Wolfpack notes override the data")
    notes: WolfpackNotes = Field(default_factory=WolfpackNotes)

    @model_validator(mode="after")
    def _attacked_within(self):
        if self.attacked > self.candidates:
            raise ValueError(f"attacked = {self.attacked} is more than candidates = {self.candidates}; "
                             f"allowed 0..{self.candidates}")
        return self


def wolfpack_notes(p: WolfpackParams, gd: GameData, ctx: Context) -> dict:
    """Notes in force, marking the layer (data, campaign sheet, params) each used key comes from."""
    used_keys = ["radio_call_cost"] if p.radio_call else [k_ for k_ in NOTE_KEYS if k_ != "radio_call_cost"]
    if p.candidates == 0:
        used_keys = []
    base = gd.get("wolfpack")
    sheet = {}
    if p.campaign is not None:
        camp = gd.campaign(p.campaign)
        if camp is None:
            stems = gd.campaigns()
            raise param_error(ctx, "campaign", f"no campaign sheet {p.campaign!r}{suggest(p.campaign, stems)}; "
                              f"allowed: {', '.join(stems)}")
        sheet = camp.get("wolfpack") or {}
    given = p.notes.model_dump(exclude_none=True)
    notes = {}
    for key in NOTE_KEYS:
        if key in given:
            notes[key] = given[key]
        elif key in sheet:
            notes[key] = sheet[key]
            if key in used_keys:
                gd.use(f"campaign.wolfpack.{key}", f"{CAMPAIGN_DIR}/{p.campaign}.yaml")
        elif key in base:
            notes[key] = base[key]
            if key in used_keys:
                gd.use(f"wolfpack.{key}")
        else:
            raise param_error(ctx, f"notes.{key}", "not given by the data, the campaign sheet or the params")
    return notes


@register
class Wolfpack(Question):
    game = "uboat_leader"
    name = "wolfpack"
    summary = "Calling U-boats in the Area into a Wolfpack: pack size, Alerted counters, Stress (exact mode)"
    Params = WolfpackParams
    rule_options = WOLFPACK_OPTIONS
    primary_metric = "pack_size"
    supports_exact = True

    def prepare(self, p: WolfpackParams, ctx: Context) -> Prepared:
        gd = GameData(ctx)
        notes = wolfpack_notes(p, gd, ctx)
        stress_fails = ctx.rules["wolfpack_stress_join"] == "stress_fails"
        stress_face = np.zeros(11, np.int64)
        for f in notes["stress_results"]:
            if not 1 <= int(f) <= 10:     # as the campaign refuses it (the notes of a sheet or of data/wolfpack.yaml)
                raise DataError(f"wolfpack.stress_results: faces of a d10 only (1..10), got {f}")
            stress_face[int(f)] = 1
        per_joiner = ctx.rules["radio_call_cost"] == "per_joiner"
        so = notes["radio_call_cost"] * (p.candidates if per_joiner else 1) if (p.radio_call and p.candidates) else 0
        k_ = p.candidates
        n_bins = 2 + max(k_, k_ * notes["stress_per_result"], k_ * notes["alerted_per_result"], so)

        args = (k_, p.attacked, int(notes["join_min"]), int(notes["attacked_modifier"]), stress_face, stress_fails,
                int(notes["stress_per_result"]), int(notes["alerted_per_result"]), p.radio_call, so)

        def exact_answer():
            return exact_wolfpack(k_, p.attacked, p.radio_call, notes, stress_face, stress_fails, so)

        metrics = [Metric("pack_size", "U-boats in the pack (active boat included)"),
                   Metric("alerted", "Alerted counters placed"),
                   Metric("stress_added", "Stress on the active U-boat"),
                   Metric("so_spent", "SO spent on the Radio Call")]
        return Prepared(metrics, n_bins, kernel=k.wolfpack_kernel, args=args, exact=exact_answer,
                        placeholders=tuple(gd.used))

    def plots(self, meta, points, dists):
        from analyzer.games.uboat_leader import plots  # matplotlib only when plotting
        return plots.wolfpack_figures(meta, points, dists)


def exact_wolfpack(candidates, attacked, radio_call, notes, stress_face, stress_fails, so):
    """Exact metrics (spec §3.2): the candidates are independent; convolve their join rolls."""
    if radio_call:
        dist = {(candidates, 0): Fraction(1)}
    else:
        dist = {(0, 0): Fraction(1)}
        for i in range(candidates):
            step: dict = {}
            for face in range(1, 11):
                joins, stress = k.join_roll(face, i < attacked, int(notes["join_min"]),
                                            int(notes["attacked_modifier"]), stress_face, stress_fails)
                step[(int(joins), int(stress))] = step.get((int(joins), int(stress)), Fraction(0)) + Fraction(1, 10)
            new: dict = {}
            for (j, s), w in dist.items():
                for (dj, ds), q in step.items():
                    new[(j + dj, s + ds)] = new.get((j + dj, s + ds), Fraction(0)) + w * q
            dist = new
    per = {"pack_size": lambda j, s: 1 + j, "alerted": lambda j, s: s * notes["alerted_per_result"],
           "stress_added": lambda j, s: s * notes["stress_per_result"], "so_spent": lambda j, s: so}
    out = {}
    for name, f in per.items():
        d: dict = {}
        for (j, s), w in dist.items():
            d[f(j, s)] = d.get(f(j, s), Fraction(0)) + w
        values = np.array(sorted(d))
        probs = np.array([float(d[v]) for v in values])
        out[name] = ExactMetric(float(sum(Fraction(v) * w for v, w in d.items())), values, probs)
    return out
