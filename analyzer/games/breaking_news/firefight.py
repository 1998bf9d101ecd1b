"""Question ``firefight``: two teams from army lists exchange fire turn by turn (source §5, §8-§12,
§14; docs/models/breaking_news.md §6).

Space is abstracted to a range schedule over closing moves: after j moves the teams stand at
r_j = max(min_cm, start_cm - closing_cm x j); a turn whose active team advances (``range.advancing``)
and has an acting figure starts with the move to the next step. A move of more than 5 cm gives +1
(at most 15 cm: a longer move is a run, no fire), one of 5 cm or less bars support weapons under
``support_after_move: not_moved_only`` (§5, §6.1). Each figure fires the weapon and mode of its kit
with the most expected hits at that range. Everything is compiled here into arrays
(:mod:`kernels.breaking_news.firefight`).
"""
from __future__ import annotations

import copy
from math import comb
from typing import List, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from analyzer.core.errors import suggest
from analyzer.core.gamedata import Placeholder
from analyzer.games.breaking_news.data import QUALITIES, WEAPONS, BNData, param_error
from analyzer.games.breaking_news.lists import (Figure, extra_points, line_points, scenario_list_figures,
                                                scenario_list_points)
from analyzer.games.breaking_news.rules import FIREFIGHT_OPTIONS, INITIATIVE_TIES
from analyzer.games.breaking_news.shooting import NO_HIT, ToHit, save_face, to_hit
from analyzer.core.questions import Context, Counter, Metric, PointsCost, Prepared, Question, register
from kernels.breaking_news import firefight as k
from kernels.breaking_news.fire import TABLE_DICE

#: typo guard on the turn limit a scenario may set
MAX_TURNS_LIMIT = 100
#: opportunity fire against men: "sólo será posible hasta los 50 cm" (§8.5; snipers unlimited)
OPPORTUNITY_MAX_CM = 50

METRICS = [
    Metric("p_win_a", "P(side A wins: fewer DP at the end)", "probability"),
    Metric("p_win_b", "P(side B wins: fewer DP at the end)", "probability"),
    Metric("p_draw", "P(draw: equal DP)", "probability"),
    Metric("turns", "turns played"),
    Metric("casualties_a", "side A figures lost"),
    Metric("casualties_b", "side B figures lost"),
    Metric("dp_a", "side A defeat points"),
    Metric("dp_b", "side B defeat points"),
    Metric("p_turn_limit", "P(stopped at the turn limit)", "probability"),
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FigureLine(_Strict):
    n: int = Field(1, ge=1, le=k.MAX_FIGURES, description="figures on this line")
    weapons: list[Literal[WEAPONS]] = Field(["assault_rifle"], min_length=1,  # type: ignore[valid-type]
                                            description="what each figure carries")
    leadership: int = Field(0, ge=0, le=4, description="leadership level (0: none)")
    leader: bool = Field(False, description="the team leader (counts 2 for morale, +1 save)")
    section_leader: bool = Field(False, description="a section leader ('Líder de Sección'): +1 save (§9)")
    quality: Literal[QUALITIES] | None = Field(None, description="default: the team's")  # type: ignore[valid-type]


class Side(_Strict):
    # ``list`` shadows the builtin inside this class body: the annotations below use typing.List
    list: str | None = Field(None, description="a scenario list of data/armies.yaml scenario_lists")
    quality: Literal[QUALITIES] | None = Field(None, description="team quality (with figures)")  # type: ignore[valid-type]
    figures: List[FigureLine] | None = Field(None, description="the team line by line (instead of list)")
    extras: List[Literal["ambush", "motivation"]] | None = Field(
        None, description="extras that act in a firefight; default: the list's")
    cover: bool = Field(False, description="the team fights from cover (+1 to be hit, +1 save)")

    @model_validator(mode="after")
    def _list_or_figures(self):
        if (self.list is None) == (self.figures is None):
            raise ValueError("give exactly one of list (a scenario list) or figures (with quality)")
        if self.figures is not None and self.quality is None:
            raise ValueError("figures need the team's quality")
        return self


class RangeSchedule(_Strict):
    start_cm: float = Field(40, gt=0, le=300, allow_inf_nan=False, description="range at the start")
    closing_cm: float = Field(0, ge=0, le=25, allow_inf_nan=False,
                              description="cm an advancing team closes when it is active (at most a 25 cm run)")
    min_cm: float = Field(5, gt=0, le=300, allow_inf_nan=False, description="closest range")
    advancing: Literal["side_a", "side_b", "both"] | None = Field(
        None, description="who makes the closing moves (required when closing_cm > 0): side_a, side_b or both "
                          "(both: the range closes whoever is active, the schedule before issue 28)")

    @model_validator(mode="after")
    def _who_advances(self):
        if self.closing_cm > 0 and self.advancing is None:
            raise ValueError("range.advancing is required when range.closing_cm > 0: say who closes "
                             "(allowed: side_a, side_b, both)")
        return self


class FirefightParams(_Strict):
    side_a: Side
    side_b: Side
    range: RangeSchedule = Field(default_factory=RangeSchedule)
    fire_mode: Literal["best", "aimed", "burst"] = Field(
        "best", description="AR and other two-mode weapons: the mode with most expected hits, or always one")
    turn_limit: int | None = Field(None, ge=1, le=MAX_TURNS_LIMIT, description="default: data game.turn_limit")


def side_figures(side: Side, bn: BNData, ctx: Context, path: str) -> tuple[str, list[Figure], list[str], list[str]]:
    """(quality, figures, extras, notes) of a side."""
    notes: list[str] = []
    if side.list is not None:
        lists = bn.get("scenario_lists")
        if side.list not in lists:
            raise param_error(ctx, f"{path}.list", f"no scenario list {side.list!r}{suggest(side.list, lists)}; "
                              f"allowed: {', '.join(lists)}")
        quality, figs, extras = scenario_list_figures(bn, side.list)
        if any(ln.get("vehicle") for ln in lists[side.list]["lines"]):
            notes.append(f"{side.list}: vehicles are not modelled in a firefight (their crews fight on foot)")
    else:
        quality = side.quality
        figs = [Figure(ln.quality or quality, tuple(ln.weapons), ln.leadership, ln.leader,
                       "sniper_rifle" in ln.weapons, ln.section_leader) for ln in side.figures for _ in range(ln.n)]
        extras = []
    if side.extras is not None:
        extras = list(side.extras)
    if not figs or len(figs) > k.MAX_FIGURES:
        raise param_error(ctx, path, f"a team needs 1 to {k.MAX_FIGURES} figures, got {len(figs)}")
    if sum(f.leader for f in figs) > 1:
        raise param_error(ctx, path, "at most one figure is the team leader")
    return quality, figs, [e for e in extras if e in ("ambush", "motivation")], notes


def best_fire(bn: BNData, fig: Figure, rng: float, rules: dict, fire_mode: str, **kw) -> ToHit | None:
    """The weapon and mode of the figure's kit with the most expected hits (ties: the first)."""
    best = None
    for w in fig.weapons:
        for mode in bn.weapon(w)["modes"]:
            if fire_mode != "best" and len(bn.weapon(w)["modes"]) > 1 and mode != fire_mode:
                continue
            th = to_hit(bn, w, mode, rng, fig.quality, rules, **kw)
            if th.dice and (best is None or th.expected_hits > best.expected_hits):
                best = th
    return best


def range_schedule(r: RangeSchedule, turns: int) -> tuple[list[float], list[float]]:
    """(r_j, cm moved into step j) for j = 0 .. the last step reachable in ``turns`` turns (one
    closing move per turn at most): r_j = max(min_cm, start_cm - closing_cm * j)."""
    ranges, moves = [r.start_cm], [0.0]
    while r.closing_cm and ranges[-1] > r.min_cm and len(ranges) <= turns:
        nxt = max(r.min_cm, r.start_cm - r.closing_cm * len(ranges))
        moves.append(ranges[-1] - nxt)
        ranges.append(nxt)
    return ranges, moves


#: §10: a shocked figure in the open "se le considerará en cobertura más allá de 25 cm"
SHOCKED_OPEN_COVER_BEYOND_CM = 25


def defeat_points_lost(bn: BNData, fig: Figure) -> int:
    """§14: 15 per SF figure, 10 per regular, 5 per irregular (10 if the leader)."""
    dp = bn.constant("defeat_points")
    if fig.quality == "special_forces":
        return int(dp["special_forces_lost"])
    if bn.quality(fig.quality)["regular"]:
        return int(dp["regular_lost"])
    return int(dp["irregular_leader_lost"] if fig.leader else dp["irregular_lost"])


def sampling_tables(enabled: bool) -> tuple[np.ndarray, np.ndarray]:
    """``sampling: table``: exact integer tables over the ``6**n`` ordered rolls of ``n`` D6 (n up to
    :data:`kernels.breaking_news.fire.TABLE_DICE`): ``hits_cum[hit_face, n, h]`` = rolls with at
    most ``h`` dice scoring ``hit_face`` or more, sum over j <= h of C(n, j) w**j (6 - w)**(n - j)
    with ``w = 7 - max(hit_face, 1)`` hitting faces (§8; row ``n`` ends at ``6**n``); ``powers[b, n]
    = b**n``, the rolls where every die shows one of ``b`` given faces (saves §9, morale §12).
    1x1x1 / 1x1 stubs when not ``enabled``."""
    if not enabled:
        return np.zeros((1, 1, 1), np.int64), np.ones((1, 1), np.int64)
    n_max = TABLE_DICE
    powers = np.array([[b ** n for n in range(n_max + 1)] for b in range(7)], np.int64)
    hits_cum = np.zeros((7, n_max + 1, n_max + 1), np.int64)
    for face in range(7):
        w = 7 - max(face, 1)
        for n in range(n_max + 1):
            counts = [comb(n, j) * w ** j * (6 - w) ** (n - j) for j in range(n + 1)]
            hits_cum[face, n, :n + 1] = np.cumsum(counts)
            hits_cum[face, n, n + 1:] = 6 ** n
            assert hits_cum[face, n, n] == 6 ** n
    return hits_cum, powers


def compile_firefight(p: FirefightParams, bn: BNData, ctx: Context):
    """(args, n_bins, notes, cells used) of a validated point."""
    rules = ctx.rules
    turns = p.turn_limit if p.turn_limit is not None else int(bn.constant("turn_limit"))
    sides = [side_figures(p.side_a, bn, ctx, "side_a"), side_figures(p.side_b, bn, ctx, "side_b")]
    covers = [p.side_a.cover, p.side_b.cover]
    ranges, moves = range_schedule(p.range, turns)
    advances = [p.range.advancing in ("side_a", "both"), p.range.advancing in ("side_b", "both")]
    hidden = rules["shocked_in_cover"] == "hidden"
    shocked_covered = np.array([int(hidden and r > SHOCKED_OPEN_COVER_BEYOND_CM) for r in ranges], np.int64)
    F = k.MAX_FIGURES
    n_fig = np.array([len(s[1]) for s in sides], np.int64)
    figs = np.zeros((2, F, k.N_FIG_COLS), np.int64)
    fire = np.zeros((len(ranges), 2, F, k.N_ROLES, 2, 2, 2), np.int64)
    fire[..., k.FACE] = NO_HIT
    team = np.zeros((2, k.N_TEAM_COLS), np.int64)
    notes: list[str] = []
    low_cells: set[str] = set()
    for s, (quality, members, extras, side_notes) in enumerate(sides):
        notes += side_notes
        bn.use(f"troop_qualities.{quality}")
        q = bn.quality(quality)
        team[s] = (int(q["initiative_morale"]), int(q["initiative_morale"]), int("ambush" in extras),
                   int("motivation" in extras), int(advances[s]), int(hidden and covers[s]))
        # the enemy's shocked figures count as in cover only when in the open (in cover they are hidden)
        variants = (0, 1) if (hidden and not covers[1 - s] and shocked_covered.any()) else (0,)
        for f, fig in enumerate(members):
            bn.use(f"troop_qualities.{fig.quality}")
            saves_bonus = fig.leader or fig.section_leader
            figs[s, f] = (save_face(bn, fig.quality, rules, leader=saves_bonus, cover=covers[s]), int(fig.leader),
                          fig.leadership, int(bn.quality(fig.quality)["shock"]), defeat_points_lost(bn, fig),
                          int(fig.sniper), save_face(bn, fig.quality, rules, leader=saves_bonus, cover=True))
            fig_opp = [Figure(fig.quality, tuple(w for w in fig.weapons if bn.weapon(w)["opportunity"] != "never"
                                                 and (rng <= OPPORTUNITY_MAX_CM or w == "sniper_rifle")),
                              fig.leadership, fig.leader, fig.sniper) for rng in ranges]
            for j, rng in enumerate(ranges):
                for sniper_target in (0, 1):
                    for c in variants:
                        kw = dict(cover=covers[1 - s] or bool(c), target_sniper=bool(sniper_target))
                        roles = [(k.STILL, best_fire(bn, fig, rng, rules, p.fire_mode, **kw))]
                        if advances[s] and j > 0 and moves[j] <= 15:   # a longer move is a run: no fire
                            roles.append((k.MOVED, best_fire(bn, fig, rng, rules, p.fire_mode, moved=moves[j] > 5,
                                                             cautious=moves[j] <= 5, **kw)))
                        if c == 0 and fig_opp[j].weapons:
                            roles.append((k.REACTIVE, best_fire(bn, fig_opp[j], rng, rules, p.fire_mode, **kw)))
                        for role, th in roles:
                            if th is not None:
                                fire[j, s, f, role, sniper_target, c] = (th.dice, th.needed)
                                low_cells.update(th.notes)
    dp_consts = bn.constant("defeat_points")
    consts = np.zeros(k.N_CONSTS, np.int64)
    consts[k.C_TURNS] = turns
    consts[k.C_DP_FIRED_FIRST] = int(dp_consts["fired_first"])
    consts[k.C_DP_WITHDRAWAL] = int(dp_consts["withdrawal"])
    consts[k.C_LEADER_EXTRA] = int(bn.constant("leader_loss_casualties")) - 1
    consts[k.C_SHOCK_FAILS_ON] = int(bn.constant("shock_always_fails_on"))
    consts[k.C_MORALE_CUMULATIVE] = int(rules["morale_casualties"] == "cumulative")
    consts[k.C_SHOCK_CLEARS] = int(rules["shock_recovery"] == "pass_clears")
    consts[k.C_TIE_REROLL] = int(rules["initiative_ties"] == "reroll")
    consts[k.C_MAX_INIT_ROLLS] = int(bn.constant("max_initiative_rolls")) if consts[k.C_TIE_REROLL] else 1
    consts[k.C_LEADER_IN_REACH] = int(bool(bn.constant("leader_within_5cm")))
    table = rules["sampling"] == "table"
    consts[k.C_SAMPLING] = k.SAMPLING_TABLE if table else k.SAMPLING_DICE
    consts[k.C_LAST_STEP] = len(ranges) - 1
    consts[k.C_REACTION_FIRST] = int(rules["movement_reaction"] == "resolved_first")
    if int(bn.constant("morale_always_passes_on")) != 6:
        raise param_error(ctx, "side_a", "the morale kernel assumes the automatic pass is a 6 "
                                         "(data game.morale_always_passes_on)")
    dp_bound = int(figs[:, :, k.FIG_DP].sum()) + consts[k.C_DP_FIRED_FIRST] + consts[k.C_DP_WITHDRAWAL]
    n_bins = max(dp_bound, turns, k.MAX_FIGURES) + 1
    sched = f"{ranges[0]:g} cm" if len(ranges) == 1 else \
        f"{ranges[0]:g} -> {ranges[-1]:g} cm as {p.range.advancing} close{'s' if p.range.advancing != 'both' else ''}"
    notes.append(f"A: {n_fig[0]} figures, B: {n_fig[1]} figures; fire at {sched}; turn limit {turns}")
    notes += sorted(low_cells)
    args = (n_fig, figs, fire, team, consts, shocked_covered, *sampling_tables(table))
    return args, int(n_bins), notes


@register
class Firefight(Question):
    game = "breaking_news"
    name = "firefight"
    summary = "Two teams from army lists exchange fire: initiative, opportunity fire, saves, shock, morale, DP"
    Params = FirefightParams
    rule_options = FIREFIGHT_OPTIONS
    primary_metric = "p_win_a"

    def prepare(self, p: FirefightParams, ctx: Context) -> Prepared:
        bn = BNData(ctx)
        bn.use("range_bands_cm")
        args, n_bins, notes = compile_firefight(p, bn, ctx)
        placeholders = list(bn.used)
        placeholders.append(Placeholder("rules.initiative_ties", ctx.rules["initiative_ties"], INITIATIVE_TIES.doc,
                                        "rule reading"))
        counters = (Counter("turn_limit", "games stopped at the turn limit (winner by DP then)"),
                    Counter("initiative_tie_cap", "initiative ties still tied after game.max_initiative_rolls "
                                                  "rolls (side A took the initiative)"))
        return Prepared(METRICS, n_bins, kernel=k.firefight_kernel, args=args, counters=counters,
                        placeholders=tuple(placeholders), notes=tuple(notes))

    def plots(self, meta, points, dists):
        from analyzer.games.breaking_news import plots  # matplotlib only when plotting
        return plots.firefight_figures(meta, points)

    def points_cost(self, sc, side: dict) -> PointsCost:
        """A scenario list's points by the list rules (source "LISTAS DISPONIBLES"), or the figure
        lines' points (AR soldier of the quality + leadership + weapon upgrades) and extras."""
        point = sc.points[0]
        bn = BNData(sc.context(point))
        if side.get("list"):
            total, _ = scenario_list_points(bn, side["list"], point.rules)
            extras = []
            how = f"scenario list {side['list']} (list rules)"
        else:
            total = sum(line_points(bn, {"n": ln.get("n", 1), "weapons": ln.get("weapons", ["assault_rifle"]),
                                         "leadership": ln.get("leadership", 0)}, ln.get("quality") or side["quality"],
                                    point.rules) for ln in side["figures"])
            extras = side.get("extras") or []
            how = "figure lines (list rules)"
        total += sum(extra_points(bn, {"extra": e}) for e in extras)
        return PointsCost(float(total), how, tuple(ph.as_dict() for ph in bn.used))

    def scale_force(self, sc, side: dict, copies: int) -> dict:
        """``copies`` copies of a team (a scenario list is first written out as its figures):
        every line's figures times ``copies``; the team leader stays one figure."""
        side = copy.deepcopy(side)
        if side.get("list"):
            quality, figs, extras = scenario_list_figures(BNData(sc.context(sc.points[0])), side.pop("list"))
            # the list's extras that act in a firefight (as side_figures keeps them)
            side.update(quality=quality,
                        extras=side.get("extras", [e for e in extras if e in ("ambush", "motivation")]),
                        figures=[{"n": 1, "weapons": list(f.weapons), "leadership": f.leadership, "leader": f.leader,
                                  "section_leader": f.section_leader, "quality": f.quality} for f in figs])
        lines = []
        for ln in side["figures"]:
            n = int(ln.get("n", 1))
            if ln.get("leader"):
                lines += [{**ln, "n": 1}] + ([{**ln, "leader": False, "n": n * copies - 1}] if n * copies > 1 else [])
            else:
                lines.append({**ln, "n": n * copies})
        side["figures"] = lines
        return side
