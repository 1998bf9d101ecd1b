"""Question ``points_efficiency``: what a unit (a figure of a quality with its kit) gives for its
points, in offence, in defence and both together (docs/models/breaking_news.md §7).

Offence: the unit did not move and fires the weapon and mode of its kit with the most expected hits
(as in ``firefight``) at a target drawn uniformly from ``targets`` x ``ranges_cm``: casualties it
inflicts per turn, and per 100 points of its list cost (AR soldier + leadership + weapon upgrades).
Offence alone ignores survivability. Defence: one volley of a reference attacker drawn uniformly from
``attackers`` x ``ranges_cm`` x ``unit_cover`` at the unit (its save, its cover, the §9 "+1 si: el
objetivo es el Líder del equipo/sección" of a leader, the "+1 si el objetivo es un francotirador" to hit
a sniper): the chance it falls (``casualties_suffered_per_turn``) or is left shocked. Both together: the
unit trades one volley a turn with the reference sets until it falls (at most :data:`MAX_LIFE_TURNS`
turns); ``volleys_per_100_points`` is how many reference volleys remove 100 points of it and
``lifetime_casualties_per_100_points`` the casualties 100 points of it inflict before they fall,
offence / defence x 100 / cost when the cap is not reached. Sweep ``unit`` over the lists' units
(scenarios/breaking_news/points_efficiency.yaml) to rank them. Exact mode: every metric (the lifetime
laws are geometric over the per-turn ones).

Ranking (:meth:`PointsEfficiency.rank_points`, :mod:`analyzer.core.ranking`, docs/balance.md
"Rankings"): a sweep over ``unit`` ranks the units by :data:`RANKED_BY` (the casualties 100 points
inflict before they fall: offence and defence together) within each combination of the other
swept values: difference to the best with 95% simultaneous CIs over all pairs, the best set, ties.
Every sweep point draws its own streams (keyed by its swept values), so the units are independent
(``PairedDifferences.independent``) and no two are tied in a Monte-Carlo run; in an exact run equal
values tie.
"""
from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import List, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from analyzer.games.breaking_news.data import QUALITIES, WEAPONS, BNData
from analyzer.games.breaking_news.firefight import best_fire
from analyzer.games.breaking_news.lists import Figure, line_points
from analyzer.games.breaking_news.rules import POINTS_OPTIONS, SHOT_OPTIONS
from analyzer.games.breaking_news.shooting import exact_binary, p_save, save_face
from analyzer.core.questions import Context, Counter, ExactMetric, Metric, Prepared, Question, register
from analyzer.core.ranking import PairedDifferences, Ranking, rank
from kernels.breaking_news.points_efficiency import points_efficiency_kernel

Quality = Literal[QUALITIES]  # type: ignore[valid-type]

#: cap of the lifetime exchange (the unit and the reference sets trade one volley a turn until it
#: falls): a named limit, counted (counter ``life_cap``), and the exact mode truncates at the same
#: turn, so both give the same law. At 100 turns the toughest shipped unit (the SF sniper in the open
#: or in cover, P(falls per volley) about 0.056) still stands with probability about 0.003.
MAX_LIFE_TURNS = 100

#: the metric a sweep over ``unit`` ranks the units by (offence and defence together)
RANKED_BY = "lifetime_casualties_per_100_points"

#: the reference sets' qualities (offence targets and defence attackers)
REFERENCE_QUALITIES = ("elite", "veteran", "trained", "commando", "fanatic", "militia")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Unit(_Strict):
    quality: Quality
    weapons: List[Literal[WEAPONS]] = Field(["assault_rifle"], min_length=1)  # type: ignore[valid-type]
    leadership: int = Field(0, ge=0, le=4)
    leader: bool = Field(False, description="the team leader: save +1 when hit (§9)")
    section_leader: bool = Field(False, description="a section leader ('Líder de Sección'): save +1 when hit (§9)")


class TargetSpec(_Strict):
    quality: Quality
    cover: bool = False


class AttackerSpec(_Strict):
    quality: Quality
    weapons: List[Literal[WEAPONS]] = Field(["assault_rifle"], min_length=1)  # type: ignore[valid-type]


def _default_targets():
    return [TargetSpec(quality=q, cover=c) for q in REFERENCE_QUALITIES for c in (False, True)]


def _default_attackers():
    return [AttackerSpec(quality=q) for q in REFERENCE_QUALITIES]


class PointsEfficiencyParams(_Strict):
    unit: Unit
    ranges_cm: List[float] = Field([20, 40, 80], min_length=1, description="ranges of the reference sets")
    targets: List[TargetSpec] = Field(default_factory=_default_targets, min_length=1,
                                      description="reference targets (default: six qualities, open and cover)")
    attackers: List[AttackerSpec] = Field(default_factory=_default_attackers, min_length=1,
                                          description="reference attackers firing at the unit (default: the "
                                                      "targets' six qualities, each with an AR)")
    unit_cover: List[bool] = Field([False, True], min_length=1,
                                   description="the unit's cover when fired at (default: open and cover)")


def unit_label(u: Unit) -> str:
    kit = "+".join(u.weapons)
    role = " team leader" if u.leader else " section leader" if u.section_leader else ""
    return f"{u.quality} {kit}" + (f" L{u.leadership}" if u.leadership else "") + role


def life_laws(o: float, d: float, cap: int) -> tuple[np.ndarray, np.ndarray]:
    """(P(T = t), P(K = k)) for t, k = 0..cap: T the turns the unit lasts, K the casualties it inflicts
    when each turn it first kills with probability ``o`` and then falls with probability ``d``
    (independent draws), stopping when it falls or after ``cap`` turns."""
    p_t = np.zeros(cap + 1)
    p_k = np.zeros(cap + 1)
    alive = np.zeros(cap + 1)
    alive[0] = 1.0                       # P(standing after t turns with k kills), t = 0
    for t in range(1, cap + 1):
        fired = alive * (1 - o)
        fired[1:] += alive[:-1] * o
        p_t[t] = d * fired.sum()
        p_k += d * fired
        alive = fired * (1 - d)
    p_t[cap] += alive.sum()
    p_k += alive
    return p_t, p_k


@register
class PointsEfficiency(Question):
    game = "breaking_news"
    name = "points_efficiency"
    summary = ("Casualties a unit inflicts and suffers per turn against reference sets, per 100 points, and "
               "over its life")
    Params = PointsEfficiencyParams
    rule_options = SHOT_OPTIONS + POINTS_OPTIONS
    primary_metric = "casualties_per_100_points"
    supports_exact = True

    def prepare(self, p: PointsEfficiencyParams, ctx: Context) -> Prepared:
        bn = BNData(ctx)
        bn.use("range_bands_cm")
        rules = ctx.rules
        line = {"n": 1, "weapons": list(p.unit.weapons), "leadership": p.unit.leadership}
        cost = line_points(bn, line, p.unit.quality, rules)
        fig = Figure(p.unit.quality, tuple(p.unit.weapons), p.unit.leadership, p.unit.leader,
                     "sniper_rifle" in p.unit.weapons, p.unit.section_leader)
        # offence: the unit's fire at each reference target x range
        shots, faces, p_cas, low = [], [], [], []
        notes, fired = set(), set()
        for tg in p.targets:
            face = save_face(bn, tg.quality, rules, cover=tg.cover)
            for rng in p.ranges_cm:
                th = best_fire(bn, fig, rng, rules, "best", cover=tg.cover)
                dice, need = (th.dice, th.needed) if th else (0, 7)
                if th:
                    notes.update(th.notes)
                    fired.add(th.weapon)
                shots.append((dice, need))
                faces.append(face)
                low.append(int(th is not None and th.confidence in ("M", "L")))
                ph = Fraction(max(0, 7 - need), 6) if dice else Fraction(0)
                ps = p_save(face)
                # P(at least one failed save) = 1 - E[ps^hits] = 1 - (1 - ph + ph ps)^dice
                p_cas.append(1 - (1 - ph + ph * ps) ** dice)
        # defence: one volley of each reference attacker x range x the unit's cover at the unit (§8 "+1 si el
        # objetivo es un francotirador"; §9 save, "+1 si: el objetivo es el Líder del equipo/sección" or "está
        # detrás de cobertura", "no acumulativos")
        in_shots, in_faces, p_fall, p_shock = [], [], [], []
        for att in p.attackers:
            shooter = Figure(att.quality, tuple(att.weapons))
            for cover in p.unit_cover:
                face = save_face(bn, p.unit.quality, rules, leader=fig.leader or fig.section_leader, cover=cover)
                ps = p_save(face)
                for rng in p.ranges_cm:
                    th = best_fire(bn, shooter, rng, rules, "best", cover=cover, target_sniper=fig.sniper)
                    dice, need = (th.dice, th.needed) if th else (0, 7)
                    if th:
                        notes.update(th.notes)
                    in_shots.append((dice, need))
                    in_faces.append(face)
                    ph = Fraction(max(0, 7 - need), 6) if dice else Fraction(0)
                    p_fall.append(1 - (1 - ph + ph * ps) ** dice)
                    # shocked: hit at least once and every save passed (§9 "Si el soldado pasa el test ...")
                    p_shock.append((1 - ph + ph * ps) ** dice - (1 - ph) ** dice)
        o = sum(p_cas, Fraction(0)) / len(p_cas)
        d = sum(p_fall, Fraction(0)) / len(p_fall)
        shock = sum(p_shock, Fraction(0)) / len(p_shock)
        cap = MAX_LIFE_TURNS
        # E[turns lasted] = sum_{t < cap} P(standing after t turns) = sum_{t < cap} (1 - d)^t
        life = Fraction(cap) if d == 0 else (1 - (1 - d) ** cap) / d
        metrics = [Metric("casualties_per_turn", "expected casualties inflicted per turn (offence only)"),
                   Metric("casualties_per_100_points",
                          f"casualties inflicted per turn per 100 points (cost {cost}; offence only)", "value",
                          scale=cost),
                   Metric("hits", "hits per turn"),
                   Metric("reconstructed_share", "share of the fire resting on a reconstructed (M/L) table cell",
                          "probability"),
                   Metric("casualties_suffered_per_turn",
                          "chance the unit falls to one reference volley (casualties suffered per turn)",
                          "probability"),
                   Metric("shocked_per_turn", "chance one reference volley leaves the unit shocked (hit, saved)",
                          "probability"),
                   Metric("lifetime_turns", f"turns the unit lasts trading volleys (at most {cap})"),
                   Metric("lifetime_casualties", "casualties it inflicts before it falls"),
                   Metric("volleys_per_100_points", f"reference volleys that remove 100 points of it (cost {cost})",
                          "value", scale=cost),
                   Metric("lifetime_casualties_per_100_points",
                          f"casualties 100 points of it inflict before they fall (cost {cost})", "value", scale=cost)]
        args = (np.asarray(shots, np.int64), np.asarray(faces, np.int64), np.asarray(low, np.int64),
                np.asarray(in_shots, np.int64), np.asarray(in_faces, np.int64), np.int64(cap))
        counters = (Counter("life_cap", f"lives still standing after MAX_LIFE_TURNS = {cap} turns (lifetime "
                                        f"metrics truncated there, as in the exact mode)"),)

        def exact_answer():
            hits_mean = sum((Fraction(n) * Fraction(max(0, 7 - f), 6) for n, f in shots), Fraction(0)) / len(shots)
            p_t, p_k = life_laws(float(o), float(d), cap)
            support = np.arange(cap + 1)
            return {"casualties_per_turn": exact_binary(o),
                    "casualties_per_100_points": ExactMetric(float(o * 100 / cost)),
                    "hits": ExactMetric(float(hits_mean)),
                    "reconstructed_share": exact_binary(Fraction(sum(low), len(low))),
                    "casualties_suffered_per_turn": exact_binary(d),
                    "shocked_per_turn": exact_binary(shock),
                    "lifetime_turns": ExactMetric(float(life), support[1:], p_t[1:]),
                    "lifetime_casualties": ExactMetric(float(o * life), support, p_k),
                    "volleys_per_100_points": ExactMetric(float(life * 100 / cost)),
                    "lifetime_casualties_per_100_points": ExactMetric(float(o * life * 100 / cost))}

        notes_out = [f"unit {unit_label(p.unit)}: {cost} points; offence {len(shots)} target x range, defence "
                     f"{len(in_shots)} attacker x cover x range combinations",
                     "casualties_per_turn and casualties_per_100_points measure offence only and ignore "
                     "survivability: lifetime_casualties_per_100_points weighs both",
                     "defence leaves out: the shock test and the actions a shocked figure loses (§10: its test "
                     "uses a leader within 5 cm, a team matter), hidden shocked figures, morale (§12, a team "
                     "test), dodging, opportunity fire's 50 cm limit, and being one of several targets"]
        idle = [w for w in p.unit.weapons if w not in fired]
        if idle:
            notes_out.append(f"{', '.join(idle)} never fires here (another weapon of the kit has more expected "
                             f"hits at every target and range): its points buy nothing these metrics see")
        notes_out += sorted(notes)
        return Prepared(metrics, 100 * cap + 1, kernel=points_efficiency_kernel, args=args, counters=counters,
                        exact=exact_answer, placeholders=tuple(bn.used), notes=tuple(notes_out),
                        entity_columns={None: {"unit": unit_label(p.unit), "cost": int(cost)}})

    def rank_points(self, results: list) -> None:
        """The units of a sweep over ``unit`` ranked by :data:`RANKED_BY` within each combination of
        the other swept values (the module docstring): each point gets the ranking (``own``: its unit),
        a note with its place, and the group's best and best set (the same note on every point of
        the group)."""
        groups: dict[str, list] = {}
        for r in results:
            if any(_is_unit(k) for k in r.point.swept) and RANKED_BY in r.summaries:
                rest = sorted((k, repr(v)) for k, v in r.point.swept.items() if not _is_unit(k))
                groups.setdefault(repr(rest), []).append(r)
        for group in groups.values():
            if len(group) < 2:
                continue
            ranking = unit_ranking(group)
            lines = ranking_notes(ranking, group)
            for r, name, line in zip(group, unit_names(group), lines):
                r.rankings.append(dataclasses.replace(ranking, own=name))
                r.notes.extend([line, lines[-1]])

    def plots(self, meta, points, dists):
        from analyzer.games.breaking_news import plots  # matplotlib only when plotting
        return plots.points_efficiency_figures(meta, points)


def _is_unit(key: str) -> bool:
    """A swept key that varies the unit (``unit`` or ``unit.<field>``)."""
    return key == "unit" or key.startswith("unit.")


def unit_names(results: list) -> list[str]:
    """Each point's unit as a ranking option: its label (:func:`unit_label`), with the point's
    number when two points' units read the same (a unit listed twice, spelled two ways)."""
    labels = [unit_label(r.point.params.unit) for r in results]
    return [f"{lab} (point {r.point.index})" if labels.count(lab) > 1 else lab for lab, r in zip(labels, results)]


def unit_ranking(results: list) -> Ranking:
    """The points' units ranked by :data:`RANKED_BY`, higher is better: independent streams (each
    point its own), exact differences and ties in an exact run."""
    names = unit_names(results)
    s = [r.summaries[RANKED_BY] for r in results]
    means = [x.mean for x in s]
    if all(r.exact for r in results):
        pairs = PairedDifferences.exact(means)
    else:
        pairs = PairedDifferences.independent(min(r.trials for r in results), means, [x.se for x in s])
    return rank(names, means, pairs, metric=RANKED_BY)


def ranking_notes(ranking: Ranking, results: list) -> list[str]:
    """Per point (in ``results`` order) the line of its unit: place, rank (tied units share it),
    tie group, the difference to the best [95% simultaneous CI], best set; then one line for the
    group: the best, the best set and how the intervals were formed."""
    names = unit_names(results)
    k = len(ranking.options)
    place = {o.name: pos for pos, o in enumerate(ranking.options, 1)}
    exact = all(r.exact for r in results)
    out = []
    for name in names:
        o = ranking.option(name)
        tie, diff, where = ranking.note_phrases(o, exact)
        out.append(f"unit ranked {place[name]} of {k} by {RANKED_BY}: {name} rank {o.rank}{tie}; {o.mean:.4f}; "
                   f"{diff}; {where}")
    what = ("the best and the units tied with it" if exact else
            f"not distinguishable from the best at {ranking.level:.0%} simultaneous")
    out.append(f"units ranked by {RANKED_BY}: best {ranking.best}; best set ({what}): "
               f"{', '.join(ranking.best_set)}; {ranking.method}" + ("" if exact else
               f"; the best's value is the largest of {k} noisy estimates, biased upward (re-run it with another "
               f"seed for an unbiased estimate)"))
    return out
