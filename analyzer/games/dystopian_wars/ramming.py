"""Questions ``ram`` and ``collision`` (spec ``docs/models/dystopian_wars.md`` §3-4, rules §10).

Ram: the rammer's RR dice at 4+ (never reduced, no small/fast/elusive, no linking), then
the rammed model answers with dice equal to its current HP. Collision: both models roll
their remaining HP simultaneously, or the terrain rolls 4/8/12 dice. "Collisions or rammed
models without RR cause no criticals" (Amb 10).
"""
from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from analyzer.games.dystopian_wars.common import bernoulli_metric, pmf_metric, table, truncation_note
from analyzer.games.dystopian_wars.data import GameData, ShipSpec, Strict, crit_cumulative, resolve_ship
from analyzer.games.dystopian_wars.rules import (SMALL_HP_CODE, RuleError, damage_distribution, hit_faces,
                                                  hits_distribution, options)
from analyzer.games.counters import POOL_COUNTERS
from analyzer.core.questions import Context, ExactAnswer, Metric, Prepared, Question, register
from kernels.dystopian_wars import ramming as k

#: a target that can never be destroyed (the empty side of a terrain collision)
_NOBODY = {"dr": 10**6, "cr": 10**6, "hp": 10**6, "hp_lost": 0}


class RamParams(Strict):
    rammer: ShipSpec = Field(..., description="the ramming model (needs RR >= 1)")
    rammed: ShipSpec = Field(..., description="the rammed model (answers with its current HP in dice)")
    critical_hp: int | None = Field(None, ge=0, le=100, description="HP per critical roll (null: data)")


class CollisionParams(Strict):
    a: ShipSpec = Field(..., description="the colliding model")
    b: ShipSpec | None = Field(None, description="the other model (or terrain)")
    terrain: Literal["light", "medium", "dense"] | None = Field(None, description="terrain: light 4D6, medium 8D6, dense 12D6")
    critical_hp: int | None = Field(None, ge=0, le=100, description="HP per critical roll (null: data)")

    @model_validator(mode="after")
    def _one_other(self):
        if (self.b is None) == (self.terrain is None):
            raise ValueError("give exactly one of b (a model) or terrain")
        return self


def _damage_pmf(n, faces, tgt, crits, small_rule, crit, masses):
    d = hits_distribution(n, faces)
    masses.append(d.truncated_mass)
    return damage_distribution(d.probs, tgt["dr"], tgt["cr"], tgt["hp"], tgt["hp_lost"], crits, small_rule, *crit)


def _exchange_exact(n_first, first_target, first_crits, n_second, reply_after, second_target, second_crits,
                    faces, small_rule, crit, notes):
    """Exact (damage to model 1, damage to model 2, destroyed flags): enumerate the first
    damage, then the second pool (reduced by it when the reply comes after damage)."""
    masses: list[float] = []
    d1 = _damage_pmf(n_first, faces, first_target, first_crits, small_rule, crit, masses)
    rem1 = first_target["hp"] - first_target["hp_lost"]
    rem2 = second_target["hp"] - second_target["hp_lost"]
    d2 = np.zeros(1)
    cache: dict[int, np.ndarray] = {}
    for x, px in enumerate(d1):
        if px == 0:
            continue
        n2 = max(0, n_second - x) if reply_after else n_second
        if n2 not in cache:
            cache[n2] = _damage_pmf(n2, faces, second_target, second_crits, small_rule, crit, masses)
        q = cache[n2]
        if q.shape[0] > d2.shape[0]:
            d2 = np.pad(d2, (0, q.shape[0] - d2.shape[0]))
        d2[: q.shape[0]] += px * q
    if max(masses) > 0:
        notes.append(truncation_note(max(masses)))
    return d1, d2, d1[rem1:].sum(), d2[rem2:].sum()


def _kernel_args(faces, n_first, first_target, first_crits, n_second, second_crits, reply_after, second_target,
                 small, crit) -> tuple:
    """``args`` of :func:`kernels.dystopian_wars.ramming.exchange_kernel`."""
    crit_values, crit_cum = crit_cumulative(*crit)
    f, s = first_target, second_target
    return (*table(faces), n_first, first_crits, f["dr"], f["cr"], f["hp"], f["hp_lost"],
            n_second, second_crits, reply_after, s["dr"], s["cr"], s["hp"], s["hp_lost"],
            small, crit_values, crit_cum)


def _crit_if_needed(gd: GameData, critical_hp, rules, *targets_with_crits) -> tuple[np.ndarray, np.ndarray]:
    """The critical damage, read (and its placeholders marked) only when some pool may crit
    against a model that takes ordinary criticals."""
    if any(rules["small_hp_critical"] == "off" or t["hp"] > 2 for t in targets_with_crits):
        return gd.critical(critical_hp)
    return np.array([0], np.int64), np.array([1], np.int64)


@register
class Ram(Question):
    game = "dystopian_wars"
    name = "ram"
    summary = "A ram: RR dice at 4+ against the rammed model, which answers with its current HP in dice"
    Params = RamParams
    rule_options = options("modified_six", "ram_dice", "ram_no_crits", "small_hp_critical", "ram_reply")
    primary_metric = "p_rammed_destroyed"
    supports_exact = True

    def prepare(self, p: RamParams, ctx: Context) -> Prepared:
        rules = ctx.rules
        gd = GameData(ctx, profiles=p.rammer.profile is not None or p.rammed.profile is not None)
        # §10: "i modelli speronati senza valore di RR non causano colpi critici": under the
        # literal reading (rr_reply) a rammed model with an RR value may crit with its reply
        rr_reply = rules["ram_no_crits"] == "rr_reply"
        ra = resolve_ship(p.rammer, gd, "params.rammer", ("rr", "hp", "dr") + (("cr",) if rr_reply else ()))
        rd = resolve_ship(p.rammed, gd, "params.rammed", ("hp", "dr", "cr") + (("rr",) if rr_reply else ()))
        if ra["rr"] < 1:
            raise RuleError("params.rammer.rr: a ram needs RR >= 1 (RR 0 contact is a collision, §10); "
                            "use question: collision")
        reply_crits = rr_reply and rd["rr"] >= 1
        crit = _crit_if_needed(gd, p.critical_hp, rules, rd, *([ra] if reply_crits else []))
        gd.finish()
        faces = hit_faces(gd.core["to_hit"]["ram_dice"], 0, rules["ram_dice"] == "exploding", rules["modified_six"])
        reply = rd["hp"] - rd["hp_lost"]
        reply_after = rules["ram_reply"] == "after_damage"
        small = SMALL_HP_CODE[rules["small_hp_critical"]]
        n_bins = 3 * max(ra["rr"], reply) + 64
        notes: list[str] = [f"rammer rolls {ra['rr']} RR dice; the rammed model answers with up to {reply} dice"]
        metrics = [Metric("damage_to_rammed", "HP damage to the rammed model"),
                   Metric("damage_to_rammer", "HP damage to the rammer"),
                   Metric("p_rammed_destroyed", "P(rammed model destroyed)", "probability"),
                   Metric("p_rammer_destroyed", "P(rammer destroyed)", "probability")]
        args = _kernel_args(faces, ra["rr"], rd, True, reply, reply_crits, reply_after, ra, small, crit)

        def exact_answer():
            extra: list[str] = []
            d1, d2, p1, p2 = _exchange_exact(ra["rr"], rd, True, reply, reply_after, ra, reply_crits, faces,
                                             rules["small_hp_critical"], crit, extra)
            return ExactAnswer({"damage_to_rammed": pmf_metric(d1), "damage_to_rammer": pmf_metric(d2),
                                "p_rammed_destroyed": bernoulli_metric(p1),
                                "p_rammer_destroyed": bernoulli_metric(p2)}, tuple(extra))

        return Prepared(metrics, n_bins, kernel=k.exchange_kernel, args=args, counters=POOL_COUNTERS,
                        exact=exact_answer, notes=tuple(notes))

    def plots(self, meta, points, dists):
        from analyzer.games.dystopian_wars import plots as dw_plots  # matplotlib only when plotting
        return dw_plots.two_sided_damage_figures(meta, points, ("damage_to_rammed", "damage_to_rammer"),
                                                 ("p_rammed_destroyed", "p_rammer_destroyed"),
                                                 ("rammed", "rammer"))


@register
class Collision(Question):
    game = "dystopian_wars"
    name = "collision"
    summary = "A collision: both models roll their remaining HP at 4+, or the terrain rolls 4/8/12 dice"
    Params = CollisionParams
    rule_options = options("modified_six", "ram_dice", "ram_no_crits", "small_hp_critical")
    primary_metric = "p_a_destroyed"
    supports_exact = True

    def prepare(self, p: CollisionParams, ctx: Context) -> Prepared:
        rules = ctx.rules
        gd = GameData(ctx, profiles=p.a.profile is not None or (p.b is not None and p.b.profile is not None))
        reads = ("hp", "dr") if p.terrain is not None else ("hp", "dr", "cr")
        a = resolve_ship(p.a, gd, "params.a", reads)
        faces = hit_faces(gd.core["to_hit"]["ram_dice"], 0, rules["ram_dice"] == "exploding", rules["modified_six"])
        small = SMALL_HP_CODE[rules["small_hp_critical"]]
        if p.terrain is not None:
            n_first, first_crits = int(gd.core["terrain_dice"][p.terrain]), False   # terrain never crits
            b, n_second, second_crits = dict(_NOBODY), 0, False
            crit = (np.array([0], np.int64), np.array([1], np.int64))
            notes = [f"{p.terrain} terrain rolls {n_first} dice against a (no criticals)"]
        else:
            b = resolve_ship(p.b, gd, "params.b", reads)
            # §10: "Le collisioni ... non causano colpi critici": no collision die crits
            first_crits = second_crits = False
            n_first, n_second = b["hp"] - b["hp_lost"], a["hp"] - a["hp_lost"]
            crit = _crit_if_needed(gd, p.critical_hp, rules, *([a] if first_crits else []),
                                   *([b] if second_crits else []))
            notes = [f"simultaneous: a rolls {n_second} dice against b, b rolls {n_first} against a"]
        gd.finish()
        n_bins = 3 * max(n_first, n_second) + 64
        metrics = [Metric("damage_to_a", "HP damage to a"), Metric("damage_to_b", "HP damage to b"),
                   Metric("p_a_destroyed", "P(a destroyed)", "probability"),
                   Metric("p_b_destroyed", "P(b destroyed)", "probability")]
        args = _kernel_args(faces, n_first, a, first_crits, n_second, second_crits, False, b, small, crit)

        def exact_answer():
            extra: list[str] = []
            d1, d2, p1, p2 = _exchange_exact(n_first, a, first_crits, n_second, False, b, second_crits, faces,
                                             rules["small_hp_critical"], crit, extra)
            if p.terrain is not None:
                d2, p2 = np.ones(1), 0.0
            return ExactAnswer({"damage_to_a": pmf_metric(d1), "damage_to_b": pmf_metric(d2),
                                "p_a_destroyed": bernoulli_metric(p1), "p_b_destroyed": bernoulli_metric(p2)},
                               tuple(extra))

        return Prepared(metrics, n_bins, kernel=k.exchange_kernel, args=args, counters=POOL_COUNTERS,
                        exact=exact_answer, notes=tuple(notes))

    def plots(self, meta, points, dists):
        from analyzer.games.dystopian_wars import plots as dw_plots  # matplotlib only when plotting
        return dw_plots.two_sided_damage_figures(meta, points, ("damage_to_a", "damage_to_b"),
                                                 ("p_a_destroyed", "p_b_destroyed"), ("a", "b"))
