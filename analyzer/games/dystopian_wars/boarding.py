"""Question ``boarding`` (spec ``docs/models/dystopian_wars.md`` §5, rules §12).

AP committed, the defence's AA (or CC against boarders from a diving model) removes AP on
5-6, then one melee round: both sides roll their melee dice at the same time; the model is
captured when it is left with 0 AP and the boarders with at least 1.
"""
from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from analyzer.core import exact
from analyzer.games.dystopian_wars.common import (MAX_DICE, bernoulli_metric, pmf_metric, table,
                                                   truncation_note)
from analyzer.games.dystopian_wars.data import GameData, Strict
from analyzer.games.dystopian_wars.rules import RuleError, hit_faces, options, plain_faces
from analyzer.games.counters import POOL_COUNTERS
from analyzer.core.questions import Context, ExactAnswer, Metric, Prepared, Question, register
from kernels.dystopian_wars import boarding as k


class BoardingParams(Strict):
    attacker_ap: int = Field(..., ge=1, le=MAX_DICE, description="AP committed to the boarding")
    attacker_from: Literal["surface", "flying", "diving"] = Field(
        "surface", description="boarders from a diving model face CC instead of AA (same numbers)")
    defense_dice: int = Field(0, ge=0, le=MAX_DICE, description="AA/CC dice against the boarders (already linked)")
    defender_ap: int = Field(..., ge=0, le=MAX_DICE, description="the boarded model's current AP")
    defender_md: int | None = Field(None, ge=0, le=MAX_DICE,
                                    description="FIG MD (only with rules.boarding_defender_dice: fig_md)")
    half_md: bool = Field(False, description="the boarder rammed/collided this activation: half MD (§10)")


def _pool(n: int, faces) -> exact.Distribution:
    return exact.pool(n, *faces)


def boarding_exact(p: BoardingParams, def_faces, melee_faces, defender_dice: int, derelict: bool, notes) -> dict:
    """Exact metrics: condition on the defence hits, then the two independent melee pools."""
    ap, dap = p.attacker_ap, p.defender_ap
    out = {"capture": 0.0, "derelict": 0.0, "a_lost": np.zeros(ap + 1), "d_lost": np.zeros(dap + 1),
           "a_left": np.zeros(ap + 1)}
    if dap == 0:    # a model with 0 AP that is boarded is captured automatically
        out["capture"] = 1.0
        out["a_left"][ap] = 1.0
        out["a_lost"][0] = 1.0
        out["d_lost"][0] = 1.0
    else:
        defence = _pool(p.defense_dice, def_faces)
        defender_hits = _pool(defender_dice, melee_faces)
        masses = [defence.truncated_mass, defender_hits.truncated_mass]
        hd = defender_hits.probs
        for dh, p_dh in enumerate(defence.probs):
            if p_dh == 0:
                continue
            a_now = max(0, ap - dh)
            attacker_hits = _pool(a_now // 2 if p.half_md else a_now, melee_faces)
            masses.append(attacker_hits.truncated_mass)
            ha = attacker_hits.probs
            # d_left = max(0, dap - ha), a_left = max(0, a_now - hd): independent given a_now
            d_left = np.zeros(dap + 1)
            for h, q in enumerate(ha):
                d_left[max(0, dap - h)] += q
            a_left = np.zeros(ap + 1)
            for h, q in enumerate(hd):
                a_left[max(0, a_now - h)] += q
            out["capture"] += p_dh * d_left[0] * a_left[1:].sum()
            if derelict:
                out["derelict"] += p_dh * d_left[0] * a_left[0]
            out["a_left"] += p_dh * a_left
            out["a_lost"] += p_dh * a_left[::-1]          # ap - a_left
            out["d_lost"] += p_dh * d_left[::-1]          # dap - d_left
        if max(masses) > 0:
            notes.append(truncation_note(max(masses)))
    return {"p_capture": bernoulli_metric(out["capture"]), "p_derelict": bernoulli_metric(out["derelict"]),
            "attacker_ap_lost": pmf_metric(out["a_lost"]), "defender_ap_lost": pmf_metric(out["d_lost"]),
            "attacker_ap_left": pmf_metric(out["a_left"])}


@register
class Boarding(Question):
    game = "dystopian_wars"
    name = "boarding"
    summary = "A boarding: AA/CC against the boarders (5-6), one simultaneous melee round, capture"
    Params = BoardingParams
    rule_options = options("modified_six", "melee_dice", "boarding_defender_dice", "both_zero_ap",
                           "boarding_defense_dice")
    primary_metric = "p_capture"
    supports_exact = True

    def prepare(self, p: BoardingParams, ctx: Context) -> Prepared:
        rules = ctx.rules
        gd = GameData(ctx)
        gd.finish()
        data = gd.core
        if rules["boarding_defender_dice"] == "fig_md":
            if p.defender_md is None:
                raise RuleError("params.defender_md: required with rules.boarding_defender_dice: fig_md "
                                "(the defender rolls its FIG melee dice)")
            defender_dice = p.defender_md
        else:
            defender_dice = p.defender_ap
        t_def = data["boarding_defense_to_hit"]
        if rules["boarding_defense_dice"] == "one_per_success":
            def_faces = plain_faces(t_def)
        else:
            def_faces = hit_faces(t_def, 0, True, rules["modified_six"])
        melee_faces = hit_faces(data["to_hit"]["melee_dice"], 0, rules["melee_dice"] == "exploding",
                                rules["modified_six"])
        derelict = rules["both_zero_ap"] == "derelict"
        n_bins = max(p.attacker_ap, p.defender_ap) + 2
        defence = "CC" if p.attacker_from == "diving" else "AA"
        notes = [f"{p.attacker_ap} AP board; {p.defense_dice} {defence} dice hit boarders on {t_def}+; "
                 f"defender {p.defender_ap} AP rolls {defender_dice} melee dice"]
        def_tab, melee_tab = table(def_faces), table(melee_faces)
        metrics = [Metric("p_capture", "P(model captured)", "probability"),
                   Metric("p_derelict", "P(both sides at 0 AP: derelict)", "probability"),
                   Metric("attacker_ap_lost", "boarders' AP lost (AA/CC + melee)"),
                   Metric("defender_ap_lost", "defender's AP lost"),
                   Metric("attacker_ap_left", "boarders' AP left")]

        args = (p.attacker_ap, p.defense_dice, *def_tab, p.defender_ap, defender_dice, p.half_md, derelict,
                *melee_tab)

        def exact_answer():
            extra: list[str] = []
            return ExactAnswer(boarding_exact(p, def_faces, melee_faces, defender_dice, derelict, extra), tuple(extra))

        return Prepared(metrics, n_bins, kernel=k.boarding_kernel, args=args, counters=POOL_COUNTERS,
                        exact=exact_answer, notes=tuple(notes))

    def plots(self, meta, points, dists):
        from analyzer.games.dystopian_wars import plots as dw_plots  # matplotlib only when plotting
        return dw_plots.boarding_figures(meta, points, dists)
