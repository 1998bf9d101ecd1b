"""Question ``gun_shot``: one gun, one shot at one fighter (spec §1; digest §3-§6)."""
from __future__ import annotations

import numpy as np

from analyzer.games.b17 import data as b17data
from analyzer.games.b17 import shotlaw
from analyzer.games.b17.compile import add, check_fighter_type, check_gun_ok, fail, intercom
from analyzer.games.b17.params import GunShotParams
from analyzer.games.b17.rules import RULE_OPTIONS, face_offset, quality_first
from analyzer.core.gamedata import Placeholder
from analyzer.core.questions import Context, ExactMetric, Metric, Prepared, Question, register
from kernels.b17.gun_shot import GUN_SHOT_METRICS, gun_shot_kernel


def resolve_shot(p: GunShotParams, ctx: Context, data: b17data.B17Data, used: list[Placeholder]):
    """-> (can fire, modifier, skill, damage type); spec §1 defaults, §0.4 eligibility."""
    gun = None
    if p.gun is not None:
        gun = data.gun(p.gun)
        if gun is None:
            ids = [g.id for g in data.guns]
            raise fail(ctx, "params.gun", f"unknown gun {p.gun!r}; allowed: {', '.join(ids)}")
    damage = p.damage
    if damage is None:
        damage = gun.damage if gun is not None else "II"
        if gun is not None:
            add(used, gun.damage_placeholder)
    if p.skill is not None:
        skill = p.skill
    elif gun is not None:
        skill = data.crew_skill(gun.crew).used(used)
    else:
        skill = data.default_skill.used(used)
    if p.modifier is not None:
        return True, p.modifier, skill, damage
    c = b17data.cell_index(p.clock, p.altitude)
    gun_ok = check_gun_ok(ctx, data, p.gun_ok)
    add(used, gun.cell_placeholders[c])
    cell = gun.raw_cell(c)
    if cell is None or not gun_ok[gun.order]:
        return False, 0, skill, damage
    if cell[1] and not intercom(data, p.intercom_ok, used):     # ** needs the intercom (§2.3)
        return False, 0, skill, damage
    return True, cell[0], skill, damage


@register
class GunShot(Question):
    game = "b17"
    name = "gun_shot"
    summary = ("One gun, one 3d10 roll-under shot at one fighter: P(hit), damage II from the same roll, "
               "fighter hits, P(destroyed)")
    Params = GunShotParams
    rule_options = RULE_OPTIONS
    primary_metric = "p_hit"
    supports_exact = True

    def prepare(self, p: GunShotParams, ctx: Context) -> Prepared:
        data = b17data.load(ctx)
        used: list[Placeholder] = []
        check_fighter_type(ctx, data, p.fighter, "params.fighter")
        can_fire, modifier, skill, damage = resolve_shot(p, ctx, data, used)
        bonus = b17data.DAMAGE_BONUS[damage]
        k = data.types[p.fighter].damage_per_hit
        off, qf = face_offset(ctx.rules), quality_first(ctx.rules)
        D, DA = data.destroyed_at, data.danado_at
        top_damage = 2 * (10 + off) + bonus
        n_bins = max(top_damage, -(-top_damage // k)) + 1

        args = (can_fire, modifier, skill, bonus, k, p.prior_hits, DA, D, off, qf)

        def exact_answer():
            hit, dmg, h = shotlaw.outcomes(modifier, skill, bonus, k, off, qf)
            if not can_fire:
                hit, dmg, h = np.zeros_like(hit), np.zeros_like(dmg), np.zeros_like(h)
            per_outcome = {"p_hit": hit.astype(np.int64), "damage": dmg, "hits": h,
                           "p_destroyed": (p.prior_hits + h >= D).astype(np.int64),
                           "p_damaged_or_worse": (p.prior_hits + h >= DA).astype(np.int64)}
            out = {}
            for name, v in per_outcome.items():
                values, probs = shotlaw.distribution(v)
                out[name] = ExactMetric(float(v.sum()) / v.shape[0], values, probs)
            return out

        labels = {"p_hit": "P(hit)", "damage": f"damage {damage} (0 on a miss)",
                  "hits": f"hits on the {p.fighter} (ceil(D/{k}))",
                  "p_destroyed": f"P(destroyed: prior {p.prior_hits} + hits >= {D})",
                  "p_damaged_or_worse": f"P(damaged or worse: prior + hits >= {DA})"}
        kinds = {"p_hit": "probability", "p_destroyed": "probability", "p_damaged_or_worse": "probability"}
        metrics = [Metric(m, labels[m], kinds.get(m, "count")) for m in GUN_SHOT_METRICS]
        notes = [] if can_fire else [f"gun {p.gun} cannot fire at {p.clock} {p.altitude} (grey cell, masked by "
                                     f"only_clock, ** without intercom, or gun out): every shot is a miss"]
        return Prepared(metrics, n_bins, kernel=gun_shot_kernel, args=args, exact=exact_answer,
                        placeholders=tuple(used), notes=tuple(notes))
