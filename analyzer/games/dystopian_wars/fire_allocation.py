"""Question ``fire_allocation``: one squadron against one or more targets, comparing linked,
separate, mixed and split allocations of its fire (spec ``docs/models/dystopian_wars.md`` §2,
rules §11 linked fire and split fire).

Every allocation is rolled in every trial on common random numbers: the trial draws one word
from its chunk's stream and every allocation plays from a trial-local stream seeded by it
(:mod:`kernels.dystopian_wars.fire_allocation`), so one run ranks them all on paired differences.
The kernel records the pair sums of the objective's values (:data:`MAX_PAIRED_ALLOCATIONS`
allocations at most; above that the bound SE_i + SE_j, valid for any correlation), and the ranking
by the objective (:mod:`analyzer.core.ranking`: difference to the best with 95% simultaneous CIs,
the best set, ties) is written to the notes and ``PointResult.rankings`` and drawn as a ranked bar
chart. Allocations equal in every trial (identical ones, or the same attacks on identical targets
whose dice are consumed in the same order) are tied in a Monte-Carlo run as in an exact one.

``only`` plays a subset of the allocations under their own ids (:meth:`FireAllocation.option_params`:
an allocation's values do not depend on which others are played), and ``analyzer search`` races
them (:mod:`analyzer.games.dystopian_wars.search_space`), up to :data:`MAX_SEARCH_ALLOCATIONS`
where a run plays at most :data:`MAX_RUN_ALLOCATIONS`.
"""
from __future__ import annotations

import dataclasses
import itertools
from typing import Literal

import numpy as np
from pydantic import Field, PrivateAttr, model_validator

from analyzer.games.dystopian_wars.common import (MAX_DICE, bernoulli_metric, stacked_tables,
                                                   table, truncation_note)
from analyzer.games.dystopian_wars.data import GameData, State, Strict, TargetSpec, crit_cumulative, resolve_target
from analyzer.games.dystopian_wars.rules import (CRITICAL_DAMAGE, SMALL_HP_CODE, RuleError, cancel_faces, damage_distribution,
                                                  degrade, hit_faces, hits_distribution, illegal_reason,
                                                  linked_ad, options, to_hit_number)
from analyzer.games.counters import POOL_COUNTERS
from analyzer.core.questions import Context, Counter, ExactAnswer, ExactMetric, Metric, Prepared, Question, register
from analyzer.core.ranking import PairedDifferences, PairedGroup, Ranking, rank
from kernels.dystopian_wars import fire_allocation as k

#: ranking objectives, in the kernel's metric-group order (kernels.dystopian_wars.fire_allocation)
OBJECTIVES = ("hp_damage", "kills", "p_kill_all", "p_damage", "p_critical", "criticals")
OBJECTIVE_LABEL = {"hp_damage": "expected HP damage (capped at each target's HP)",
                   "kills": "expected targets destroyed", "p_kill_all": "P(every target destroyed)",
                   "p_damage": "P(at least one attack reaches its target's DR)",
                   "p_critical": "P(at least one critical: an attack reaches its target's CR)",
                   "criticals": "expected critical results (floor(hits / CR) per attack)"}
OBJECTIVE_KIND = {"hp_damage": "count", "kills": "count", "p_kill_all": "probability", "p_damage": "probability",
                  "p_critical": "probability", "criticals": "count"}
#: objectives the HP a critical deals (a placeholder) cannot change: whether DR or CR is reached
CRIT_FREE = ("p_damage", "p_critical", "criticals")
assert len(OBJECTIVES) == k.N_GROUPS
#: up to this many allocations played the kernel records every pair's sum of the objective's
#: ``x_i * x_j`` (K(K-1)/2 counters: 7,140 at 120; as ``depth_charge_pattern``); more are ranked on the
#: bound SE_i + SE_j of a difference's SE (the allocations share their dice: the correlation of two
#: is not 0, and may be negative, so the independent formula would not do)
MAX_PAIRED_ALLOCATIONS = 120
#: a run plays at most this many allocations (every allocation is six metrics of every trial, and a
#: run keeps a 64-chunk batch of their histograms)
MAX_RUN_ALLOCATIONS = 512
#: ``analyzer search`` races up to this many (``max_allocations`` may be raised to it): it plays one
#: chunk per thread per kernel call, and its first round records every pair's sum of all of them
MAX_SEARCH_ALLOCATIONS = 1024


class FAAttacker(Strict):
    capital: bool = Field(False, description="Capital Class squadron (small targets hit on 5-6)")
    state: State = Field("surface", description="surface | flying | diving | submerged | obscured")


class FAWeapon(Strict):
    model: int | None = Field(None, ge=0, description="model index in the squadron (default: the entry index)")
    ad: int | None = Field(None, ge=0, le=MAX_DICE, description="AD at this band (or profile + name)")
    profile: str | None = Field(None, description="fleet profile holding the weapon")
    name: str | int | None = Field(None, description="profile weapon name or index (default 0)")
    hp_lost: int = Field(0, ge=0, le=1000, description="HP lost by this weapon's model (gunnery -1 AD each)")

    @model_validator(mode="after")
    def _one_source(self):
        if (self.ad is None) == (self.profile is None):
            raise ValueError("give exactly one of ad or profile (+ name)")
        if self.name is not None and self.profile is None:
            raise ValueError("name needs profile")
        return self


class FATarget(TargetSpec):
    count: int = Field(1, ge=1, le=16, description="identical copies of this target")
    defense_dice: int = Field(0, ge=0, le=MAX_DICE, description="its AA (vs rockets) or CC (vs torpedoes) dice")


class AllocationAttack(Strict):
    target: int = Field(..., ge=0, description="target index (after count expansion)")
    weapons: list[int] | None = Field(None, description="one index = whole weapon, two or more = linked")
    weapon: int | None = Field(None, ge=0, description="split part: weapon index (with ad)")
    ad: int | None = Field(None, ge=1, le=MAX_DICE, description="split part: dice of the weapon")

    @model_validator(mode="after")
    def _one_form(self):
        if (self.weapons is None) == (self.weapon is None):
            raise ValueError("give weapons: [i, ...] (whole or linked) or weapon: i with ad (split part)")
        if self.weapons is not None and (not self.weapons or self.ad is not None):
            raise ValueError("weapons needs at least one index and no ad")
        if self.weapon is not None and self.ad is None:
            raise ValueError("a split part needs ad")
        return self


class Allocation(Strict):
    name: str | None = None
    attacks: list[AllocationAttack] = Field(..., min_length=1)


class FireAllocationParams(Strict):
    weapon: Literal["primary", "secondary", "rocket", "torpedo", "bomb"] = Field(
        "primary", description="one weapon type for all (linking needs one type)")
    range_band: int = Field(2, ge=1, le=4, description="one band for all (split fire never crosses bands)")
    attacker: FAAttacker = Field(default_factory=FAAttacker)
    weapons: list[FAWeapon] = Field(..., min_length=1)
    targets: list[FATarget] = Field(..., min_length=1)
    to_hit_modifier: int = Field(0, ge=0, le=2, description="roll modifier per die (not in the source)")
    allocations: Literal["auto"] | list[Allocation] = Field("auto", description="auto or explicit allocations")
    max_allocations: int = Field(64, ge=1, le=MAX_SEARCH_ALLOCATIONS, description=(
        f"more allocations is an error (name them explicitly); a run plays at most {MAX_RUN_ALLOCATIONS}, "
        f"analyzer search races up to {MAX_SEARCH_ALLOCATIONS}"))
    only: list[str] | None = Field(None, min_length=1, description=(
        "play only these allocation ids (A00, A01, ... of the auto or explicit list), under their own "
        "ids, in the list's order; null: all"))
    objective: Literal["hp_damage", "kills", "p_kill_all", "p_damage", "p_critical", "criticals"] = Field(
        "hp_damage", description="ranking metric; p_damage, p_critical and criticals do not depend on the "
                                 "placeholder HP a critical deals")
    critical_hp: int | None = Field(None, ge=0, le=100, description="HP per critical roll (null: data)")
    #: set by ``analyzer search``'s option space only (not a file key): record every pair's sums
    #: whatever the count, and play up to MAX_SEARCH_ALLOCATIONS (one chunk per thread per call)
    _race: bool = PrivateAttr(False)

    @model_validator(mode="after")
    def _defense(self):
        if self.weapon not in ("rocket", "torpedo") and any(t.defense_dice for t in self.targets):
            raise ValueError(f"targets[].defense_dice cancel only rocket or torpedo hits (§11); weapon is {self.weapon}")
        if self.only is not None and len(set(self.only)) != len(self.only):
            raise ValueError(f"only: got {self.only}; give each allocation id once")
        return self


# ---------------------------------------------------------------------------------------------
# allocations (spec §2)
# ---------------------------------------------------------------------------------------------

def even_parts(ad: int, k: int) -> list[int]:
    """ad split into k parts differing by at most 1, larger first (13 over 2 -> 7, 6)."""
    q, r = divmod(ad, k)
    return [q + 1 if i < r else q for i in range(k)]


def _attack(kind: str, weapons: list[int], target: int, ad: int) -> dict:
    return {"kind": kind, "weapons": list(weapons), "target": target, "ad": ad}


def auto_allocations(ads: list[int], models: list[int], m: int, link_rule: str) -> list[list[dict]]:
    """Spec §2 ``auto``: every assignment of usable weapons to targets (lexicographic, first
    weapon most significant); per assignment every link/no-link choice of the targets that
    got two or more weapons; then, with more targets than weapons, the split that covers
    every target (weapon k takes targets j = k mod |U|, even parts)."""
    usable = [i for i, a in enumerate(ads) if a >= 1]
    out = []
    for assign in itertools.product(range(m), repeat=len(usable)):
        groups: dict[int, list[int]] = {}
        for i, j in zip(usable, assign):
            groups.setdefault(j, []).append(i)
        multi = sorted(j for j, g in groups.items() if len(g) >= 2)
        for mask in range(2 ** len(multi)):
            attacks = []
            for j, g in groups.items():
                if j in multi and mask >> multi.index(j) & 1:
                    attacks.append(_attack("linked", g, j, linked_ad([ads[i] for i in g], [models[i] for i in g],
                                                                     link_rule)))
                else:
                    attacks.extend(_attack("whole", [i], j, ads[i]) for i in g)
            attacks.sort(key=lambda a: (a["weapons"][0], a["target"]))
            out.append(attacks)
    nu = len(usable)
    if nu >= 1 and m > nu:
        attacks = []
        for kk, i in enumerate(usable):
            targets = [j for j in range(m) if j % nu == kk]
            for j, part in zip(targets, even_parts(ads[i], len(targets))):
                if part >= 1:
                    attacks.append(_attack("split", [i], j, part))
        out.append(attacks)
    return out


def explicit_allocations(spec: list[Allocation], ads: list[int], models: list[int], m: int,
                         link_rule: str) -> list[list[dict]]:
    """Explicit allocations, checked against §11: a weapon is in at most one whole/linked
    attack or only in split parts; split parts go to distinct targets and sum to <= its AD."""
    out = []
    for a_i, al in enumerate(spec):
        where = f"params.allocations[{a_i}]"
        attacks, in_fire, split_targets = [], set(), {}
        for at in al.attacks:
            if at.target >= m:
                raise RuleError(f"{where}: target {at.target} out of range; targets are 0..{m - 1}")
            if at.weapons is not None:
                g = list(at.weapons)
                if any(not 0 <= i < len(ads) for i in g):
                    raise RuleError(f"{where}: weapon index out of range 0..{len(ads) - 1}")
                if len(set(g)) != len(g) or in_fire & set(g) or set(g) & set(split_targets):
                    raise RuleError(f"{where}: a weapon fires in two attacks (§11: linked AD is never split)")
                in_fire |= set(g)
                if len(g) == 1:
                    attacks.append(_attack("whole", g, at.target, ads[g[0]]))
                else:
                    attacks.append(_attack("linked", g, at.target,
                                           linked_ad([ads[i] for i in g], [models[i] for i in g], link_rule)))
            else:
                i = at.weapon
                if not 0 <= i < len(ads):
                    raise RuleError(f"{where}: weapon index out of range 0..{len(ads) - 1}")
                if i in in_fire or at.target in split_targets.get(i, set()):
                    raise RuleError(f"{where}: illegal split of weapon {i} (§11: never twice onto one model, "
                                    f"never mixed with linked fire)")
                split_targets.setdefault(i, set()).add(at.target)
                attacks.append(_attack("split", [i], at.target, at.ad))
        for i in split_targets:
            total = sum(a["ad"] for a in attacks if a["kind"] == "split" and a["weapons"][0] == i)
            if total > ads[i]:
                raise RuleError(f"{where}: split parts of weapon {i} add up to {total} > its AD {ads[i]}")
        out.append(attacks)
    return out


def allocation_name(attacks: list[dict]) -> str:
    parts = []
    for a in attacks:
        if a["kind"] == "linked":
            parts.append("L[" + "+".join(f"w{i}" for i in a["weapons"]) + f"]>T{a['target']}")
        elif a["kind"] == "whole":
            parts.append(f"w{a['weapons'][0]}>T{a['target']}")
        else:
            parts.append(f"w{a['weapons'][0]}:{a['ad']}>T{a['target']}")
    return ", ".join(parts)


def allocation_family(attacks: list[dict]) -> str:
    if any(a["kind"] == "split" for a in attacks):
        return "split"
    n_linked = sum(a["kind"] == "linked" for a in attacks)
    if n_linked == 0:
        return "separate"
    return "linked" if n_linked == 1 and len(attacks) == 1 else "mixed"


def compile_fire_allocation(p: FireAllocationParams, gd: GameData, rules: dict) -> dict:
    """Weapons (degraded AD), targets (with to-hit numbers) and the ordered allocations."""
    band, wtype = p.range_band, p.weapon
    ads, models = [], []
    for i, w in enumerate(p.weapons):
        if w.profile is not None:
            prof = gd.profile(w.profile, f"params.weapons[{i}].profile")
            pws = prof.get("weapons") or []
            name = 0 if w.name is None else w.name
            if isinstance(name, int):
                idx = name if 0 <= name < len(pws) else None
            else:
                names = [x.get("name") for x in pws]
                idx = names.index(name) if name in names else None
            if idx is None:
                raise RuleError(f"params.weapons[{i}].name: profile {w.profile} has no weapon {name!r}")
            if pws[idx]["type"] != wtype:
                raise RuleError(f"params.weapons[{i}]: {w.profile} weapon {name!r} is a {pws[idx]['type']}, "
                                f"not a {wtype} (linked/split fire needs one type)")
            gd.use_profile(w.profile, f"weapons[{idx}]")
            base = int(pws[idx]["ad"][band - 1])
        else:
            base = w.ad
        ads.append(degrade(base, w.hp_lost, wtype))
        models.append(w.model if w.model is not None else i)
    targets = []
    for j, ts in enumerate(p.targets):
        tgt = resolve_target(ts, gd, f"params.targets[{j}]")
        reason = illegal_reason(wtype, band, p.attacker.state, tgt["size"], tgt["state"], rules)
        if reason:
            raise RuleError(f"params.targets[{j}]: illegal target for a {wtype} in RB{band}: {reason}")
        t = to_hit_number(wtype, band, p.attacker.capital, p.attacker.state, tgt["size"], tgt["state"],
                          tgt["fast"], tgt["elusive"], rules, gd.core)
        for _ in range(ts.count):
            targets.append({**tgt, "t": t, "defense": ts.defense_dice})
    m = len(targets)
    if p.allocations == "auto":
        usable = sum(1 for a in ads if a >= 1)
        if m ** usable > p.max_allocations:      # counted before enumerating (each assignment is one at least)
            raise RuleError(f"params.max_allocations: auto would enumerate at least {m ** usable:,} allocations "
                            f"({usable} weapons onto {m} targets) > max_allocations = {p.max_allocations}; "
                            f"list allocations explicitly or use fewer weapons or targets")
        allocs = auto_allocations(ads, models, m, rules["own_weapons_link"])
    else:
        allocs = explicit_allocations(p.allocations, ads, models, m, rules["own_weapons_link"])
    if len(allocs) > p.max_allocations:
        how = (f"raise it (up to {MAX_SEARCH_ALLOCATIONS}) or list allocations explicitly"
               if len(allocs) <= MAX_SEARCH_ALLOCATIONS else
               f"more than {MAX_SEARCH_ALLOCATIONS} are never played: list allocations explicitly or use fewer "
               f"weapons or targets")
        raise RuleError(f"params.max_allocations: {len(allocs)} allocations > max_allocations = "
                        f"{p.max_allocations}; {how}")
    if not allocs:
        raise RuleError("params.weapons: no weapon has AD >= 1 at this band; nothing to allocate")
    out = []
    for a_i, attacks in enumerate(allocs):
        given = p.allocations[a_i].name if p.allocations != "auto" else None
        out.append({"id": f"A{a_i:02d}", "name": given or allocation_name(attacks),
                    "family": allocation_family(attacks), "attacks": attacks})
    if p.only is not None:
        ids = [a["id"] for a in out]
        unknown = [i for i in p.only if i not in ids]
        if unknown:
            raise RuleError(f"params.only: got {', '.join(unknown)}; allowed: the allocations' ids "
                            f"{ids[0]}..{ids[-1]}")
        out = [a for a in out if a["id"] in set(p.only)]
    return {"ads": ads, "targets": targets, "allocations": out}


def fire_allocation_exact(c: dict, mod: int, modified_six: str, small_rule: str, crit, data) -> dict:
    """Exact distributions per allocation: per target the capped sum of its attacks' damage
    (independent attacks), then effective HP damage, kills and P(all destroyed)."""
    targets = c["targets"]
    cache: dict = {}
    mass = 0.0
    out = {}
    for al in c["allocations"]:
        eff = np.ones(1)
        kills = np.ones(1)
        p_all = 1.0
        p_no_damage, p_no_critical, crits = 1.0, 1.0, np.ones(1)   # attacks are independent
        for at in al["attacks"]:
            tg = targets[at["target"]]
            h = hits_distribution(at["ad"], hit_faces(tg["t"], mod, True, modified_six), tg["defense"],
                                  cancel_faces(data)).probs
            p_no_damage *= 1.0 - h[tg["dr"]:].sum()
            p_no_critical *= 1.0 - h[tg["cr"]:].sum()
            crits = np.convolve(crits, np.bincount(np.arange(h.shape[0]) // tg["cr"], weights=h))
        for j, tg in enumerate(targets):
            rem = tg["hp"] - tg["hp_lost"]
            dist = np.zeros(rem + 1)
            dist[0] = 1.0
            for at in al["attacks"]:
                if at["target"] != j:
                    continue
                key = (at["ad"], j)
                if key not in cache:
                    d = hits_distribution(at["ad"], hit_faces(tg["t"], mod, True, modified_six), tg["defense"],
                                          cancel_faces(data))
                    mass = max(mass, d.truncated_mass)
                    cache[key] = damage_distribution(d.probs, tg["dr"], tg["cr"], tg["hp"], tg["hp_lost"], True,
                                                     small_rule, *crit)
                dmg = cache[key]
                conv = np.convolve(dist, dmg)
                dist = conv[: rem + 1].copy()
                dist[rem] += conv[rem + 1:].sum()
            pk = dist[rem]
            eff = np.convolve(eff, dist)
            kills = np.convolve(kills, [1.0 - pk, pk])
            p_all *= pk
        values = np.arange(eff.shape[0])
        out[al["id"]] = {"hp_damage": ExactMetric(float(values @ eff), values, eff),
                         "kills": ExactMetric(float(np.arange(kills.shape[0]) @ kills), np.arange(kills.shape[0]), kills),
                         "p_kill_all": bernoulli_metric(p_all),
                         "p_damage": bernoulli_metric(1.0 - p_no_damage),
                         "p_critical": bernoulli_metric(1.0 - p_no_critical),
                         "criticals": ExactMetric(float(np.arange(crits.shape[0]) @ crits), np.arange(crits.shape[0]),
                                                  crits)}
    return out, mass


#: how the pairs are formed, for the ranking's method text
PAIRED_HOW = ("paired on common random numbers (every allocation of a trial plays from the same trial-local "
              "stream; pair sums recorded)")
BOUNDED_HOW = (f"bounded: SE_i + SE_j, valid for any correlation (more than {MAX_PAIRED_ALLOCATIONS} allocations: "
               f"pair sums not recorded)")


def allocation_ranking(allocs: list[dict], objective: str, summaries: dict, exact: bool,
                       pairs: PairedDifferences | None, trials: int) -> Ranking:
    """The allocations ranked by the objective (:mod:`analyzer.core.ranking`). The allocations of a
    trial share its random numbers, so a difference's variance comes from the kernel's pair sums
    (``pairs``: :meth:`PairedDifferences.from_sums`, allocations equal in every trial tied); above
    :data:`MAX_PAIRED_ALLOCATIONS` (``pairs`` None) from the bound SE_i + SE_j. An exact run gives
    exact differences and ties (equal exact means)."""
    ids = [a["id"] for a in allocs]
    s = [summaries[f"{objective}.{i}"] for i in ids]
    means = [x.mean for x in s]
    if exact:
        diffs = PairedDifferences.exact(means)
    elif pairs is not None:
        diffs = dataclasses.replace(pairs, how=PAIRED_HOW)
    else:
        diffs = PairedDifferences.bounded(trials, means, [x.se for x in s], BOUNDED_HOW)
    return rank(ids, means, diffs, metric=objective)


def ranking_lines(allocs: list[dict], ranking: Ranking, summaries: dict, exact: bool) -> list[str]:
    """The ranking table as note lines, one self-contained line per allocation (outputs may
    sort notes; the zero-padded position keeps the order): position, id, rank (tied allocations
    share it), mean [95% CI], difference to the best [95% simultaneous CI], best set, family, name;
    then how it was ranked."""
    by_id = {a["id"]: a for a in allocs}
    objective = ranking.metric
    width = len(str(len(ranking.options)))
    lines = []
    for pos, o in enumerate(ranking.options, 1):
        a, sm = by_id[o.name], summaries[f"{objective}.{o.name}"]
        val = f"{sm.mean:.4f} (exact)" if exact else f"{sm.mean:.4f} [95% CI {sm.ci_low:.4f}, {sm.ci_high:.4f}]"
        tie, diff, best_set = ranking.note_phrases(o, exact)
        lines.append(f"ranked {pos:0{width}d} by {objective}: {o.name} rank {o.rank}{tie}; {val}; {diff}; {best_set}; "
                     f"{a['family']}: {a['name']}")
    lines.append(f"ranking by {objective}: best {ranking.best}; best set: {', '.join(ranking.best_set)}; "
                 f"{ranking.method}")
    return lines


@register
class FireAllocation(Question):
    game = "dystopian_wars"
    name = "fire_allocation"
    summary = "One squadron vs several targets: rank linked, separate, mixed and split fire allocations"
    Params = FireAllocationParams
    rule_options = options("obscured_to_hit", "surface_vs_submerged", "primary_rb1_vs_set_number",
                           "modified_six", "own_weapons_link", "fast_elusive_scope", "small_hp_critical")
    primary_metric = "hp_damage.A00"
    supports_exact = True

    @staticmethod
    def search_space(sc, so_plans=None, policies=None):
        """``analyzer search``: the scenario's allocations, raced on this kernel's common random numbers."""
        from analyzer.games.dystopian_wars.search_space import AllocationSpace
        return AllocationSpace(sc, so_plans, policies)

    def option_params(self, params: FireAllocationParams, options: list[str]) -> FireAllocationParams:
        """The point's parameters playing only the allocations ``options`` (their ids, ``A03``), under
        their own ids (``only``): an allocation's values in a trial depend only on its attacks and the
        trial's random word, so a run of them gives each exactly the values the full run gives it."""
        return params.model_copy(update={"only": list(options)})

    def prepare(self, p: FireAllocationParams, ctx: Context) -> Prepared:
        rules = ctx.rules
        gd = GameData(ctx, profiles=any(w.profile for w in p.weapons) or any(t.profile for t in p.targets))
        c = compile_fire_allocation(p, gd, rules)
        targets, allocs = c["targets"], c["allocations"]
        if len(allocs) > MAX_RUN_ALLOCATIONS and not p._race:
            raise RuleError(f"params.max_allocations: {len(allocs)} allocations to play; a run plays at most "
                            f"{MAX_RUN_ALLOCATIONS} (analyzer search races up to {MAX_SEARCH_ALLOCATIONS}); "
                            f"narrow them with only, or search them")
        if any(t["hp"] > 2 or rules["small_hp_critical"] == "off" for t in targets):
            crit = gd.critical(p.critical_hp)
        else:
            crit = (np.array([0]), np.array([1]))
        gd.finish()
        n_alloc = len(allocs)
        groups = [p.objective] + [g for g in OBJECTIVES if g != p.objective]
        metrics, slot = [], np.zeros((len(OBJECTIVES), n_alloc), np.int64)
        for g in groups:
            for a_i, al in enumerate(allocs):
                slot[OBJECTIVES.index(g), a_i] = len(metrics)
                metrics.append(Metric(f"{g}.{al['id']}", f"{al['id']} {al['name']} [{al['family']}]: "
                                      f"{OBJECTIVE_LABEL[g]}", OBJECTIVE_KIND[g],
                                      unaffected_by=CRITICAL_DAMAGE if g in CRIT_FREE else ()))
        alloc_start = np.zeros(n_alloc + 1, np.int64)
        attack_ad, attack_target = [], []
        for a_i, al in enumerate(allocs):
            for at in al["attacks"]:
                attack_ad.append(at["ad"])
                attack_target.append(at["target"])
            alloc_start[a_i + 1] = len(attack_ad)
        attack_ad = np.array(attack_ad, np.int64)
        attack_target = np.array(attack_target, np.int64)
        hit_value, hit_explodes, hit_n = stacked_tables(
            [hit_faces(t["t"], p.to_hit_modifier, True, rules["modified_six"]) for t in targets])
        cancel_tab = table(cancel_faces(gd.core))
        arr = lambda key: np.array([t[key] for t in targets], np.int64)  # noqa: E731
        crit_values, crit_cum = crit_cumulative(*crit)
        small = SMALL_HP_CODE[rules["small_hp_critical"]]
        most_crits = max((sum((3 * at["ad"] + 60) // targets[at["target"]]["cr"] for at in al["attacks"])
                          for al in allocs), default=0)
        n_bins = max(int(sum(t["hp"] - t["hp_lost"] for t in targets)) + len(targets), most_crits) + 2
        notes = ["targets: " + "; ".join(f"T{j} {t['size']} DR {t['dr']} CR {t['cr']} HP {t['hp'] - t['hp_lost']}"
                                                f" hit on {t['t']}+" for j, t in enumerate(targets))]
        if p.attacker.state in ("flying", "obscured") and p.range_band == 1:
            notes.append("Ack Ack is NOT modelled here: the targets' AA would be resolved before these flyers attack "
                         "(source: 'l'AA viene risolto prima dell'attacco dei volanti') and lower their AD; these "
                         "flyers roll their full AD (the attack and duel questions model it)")
        paired = n_alloc <= MAX_PAIRED_ALLOCATIONS or p._race
        args = (alloc_start, attack_ad, attack_target, hit_value, hit_explodes, hit_n, arr("defense"), *cancel_tab,
                arr("dr"), arr("cr"), arr("hp"), arr("hp_lost"), small, crit_values, crit_cum, slot, np.int64(paired))
        assert len(args) == k.ARG_PAIRED + 1
        ranked = tuple(m.name for m in metrics[:n_alloc])       # the objective's, in allocation order
        if not paired:
            pair_counters = ()
        elif p._race:           # read by position (the search space); K(K-1)/2 names: 2.6 s, 89 MB at 1024
            pair_counters = (Counter(f"{p.objective}_pair"),) * (n_alloc * (n_alloc - 1) // 2)
        else:
            pair_counters = tuple(Counter(f"{p.objective}_pair.{allocs[i]['id']}.{allocs[j]['id']}")
                                  for i in range(n_alloc) for j in range(i + 1, n_alloc))
        counters = POOL_COUNTERS + pair_counters

        def ranking(summaries: dict, exact: bool, pairs: dict, trials: int) -> list[Ranking]:
            return [allocation_ranking(allocs, p.objective, summaries, exact, pairs.get(ranked[0]), trials)]

        def ranking_notes(summaries: dict, exact: bool, rankings: list[Ranking]) -> list[str]:
            return ranking_lines(allocs, rankings[0], summaries, exact)

        def exact_answer():
            per, mass = fire_allocation_exact(c, p.to_hit_modifier, rules["modified_six"],
                                              rules["small_hp_critical"], crit, gd.core)
            return ExactAnswer({f"{g}.{i}": per[i][g] for i in per for g in OBJECTIVES},
                               (truncation_note(mass),) if mass > 0 else ())

        return Prepared(metrics, n_bins, kernel=k.fire_allocation_kernel, args=args, counters=counters,
                        exact=exact_answer, notes=tuple(notes), derived_notes=ranking_notes,
                        derived_ranking=ranking,
                        paired_groups=(PairedGroup(ranked, len(POOL_COUNTERS)),) if paired else (),
                        entity_columns={al["id"]: {"allocation": al["name"], "family": al["family"]} for al in allocs})

    def plots(self, meta, points, dists):
        from analyzer.games.dystopian_wars import plots as dw_plots  # matplotlib only when plotting
        return dw_plots.fire_allocation_figures(meta, points, dists)
