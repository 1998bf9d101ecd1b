"""Compile validated parameters and game data into the arrays of the B-17 kernels.

Everything the kernels need (arc cells, guns, shooters, skills, fighter types, the exact
single-shot kill/hit counts of the policies, rule flags) becomes plain numpy arrays here;
the kernels see no dicts and no Python objects (STYLE.md practice 1). The placeholders a
point uses are collected on the way (spec §5).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from analyzer.core.errors import ScenarioError, suggest
from analyzer.games.b17 import shotlaw
from analyzer.games.b17.data import ALTITUDES, CLOCKS, N_CELLS, B17Data, cell_index
from analyzer.games.b17.rules import face_offset, quality_first
from analyzer.core.gamedata import Placeholder
from analyzer.core.questions import Context
from kernels.b17 import attack as ka

POLICIES = ("focus_most_dangerous", "spread", "max_kill_probability")
#: Histogram bins beyond this are clipped into the last bin (means stay exact; the runner
#: notes how many trials were clipped). Only reached by tables with many more shooters
#: (kill shares are counted in units of 1/lcm(1..shooters)) or very long missions.
MAX_BINS = 1 << 14


def fail(ctx: Context, path: str, message: str) -> ScenarioError:
    """A data-dependent parameter error, naming the parameter path."""
    return ScenarioError(str(ctx.scenario_file or ctx.scenario_dir), path, message)


def add(into: list[Placeholder], *phs: Placeholder | None) -> None:
    for ph in phs:
        if ph is not None and ph not in into:
            into.append(ph)


def check_fighter_type(ctx: Context, data: B17Data, name: str, path: str) -> None:
    if name not in data.types:
        raise fail(ctx, path, f"unknown fighter type {name!r}{suggest(name, data.types)}; allowed: "
                   f"{', '.join(data.types)} (data/fighters.yaml)")


def check_gun_ok(ctx: Context, data: B17Data, gun_ok: dict[str, bool]) -> np.ndarray:
    ids = [g.id for g in data.guns]
    for gid in gun_ok:
        if gid not in ids:
            raise fail(ctx, f"params.gun_ok.{gid}", f"unknown gun{suggest(gid, ids)}; allowed: {', '.join(ids)}")
    return np.array([bool(gun_ok.get(g.id, True)) for g in data.guns], dtype=np.bool_)


def crew_skills(ctx: Context, data: B17Data, skill: int | None, skills: dict[str, int],
                used: list[Placeholder]) -> list[int]:
    """Skill of each crew member (spec §0.4): ``skills[crew]``, else ``skill``, else data (PH)."""
    for crew in skills:
        if crew not in data.crews:
            raise fail(ctx, f"params.skills.{crew}", f"unknown crew member{suggest(crew, data.crews)}; "
                       f"allowed: {', '.join(data.crews)}")
    out = []
    for crew in data.crews:
        if crew in skills:
            out.append(int(skills[crew]))
        elif skill is not None:
            out.append(int(skill))
        else:
            out.append(int(data.crew_skill(crew).used(used)))
    return out


def intercom(data: B17Data, given: bool | None, used: list[Placeholder]) -> bool:
    return bool(given) if given is not None else bool(data.intercom_ok.used(used))


def lcm_upto(n: int) -> int:
    """lcm(1..n): a kill split up to n ways is a whole number of 1/lcm units (60 for 5)."""
    out = 1
    for k in range(2, n + 1):
        out = out * k // math.gcd(out, k)
    return out


def max_fighter_hits(data: B17Data, rules: dict[str, str], types: list[str] | None = None) -> int:
    """Largest ``h`` one shot can inflict (II+2 on the top quality pair)."""
    top_quality = 2 * (10 + face_offset(rules))
    ks = [data.types[t].damage_per_hit for t in (types or data.types)]
    return -(-(top_quality + max(g.bonus for g in data.guns)) // min(ks))


@dataclass
class Bomber:
    """The compiled bomber of one sweep point: the arrays of :mod:`kernels.b17.attack`."""

    shooter_start: np.ndarray
    shooter_guns: np.ndarray
    cells: np.ndarray          # [G, 24, (kind, modifier)]
    counts: np.ndarray         # [G, 24, T, D + 1]: kill counts by prior hits, then hit count
    gun_table: np.ndarray      # [G, (skill, bonus, crew)]
    type_table: np.ndarray     # [T, (damage per hit, dense danger rank)]
    cfg: np.ndarray
    gun_ok: np.ndarray
    intercom_ok: bool
    scale: int
    type_names: list[str]
    shot_law: np.ndarray       # [G, 24, T]: row of law_hits of each shot (sampling: table)
    law_hits: np.ndarray       # [law, 1000]: fighter hits of each ordered 3d10 outcome (int8)
    placeholders: list[Placeholder] = field(default_factory=list)

    @property
    def arrays(self) -> tuple:
        """The static arrays in kernel argument order (before ``cfg``)."""
        return (self.shooter_start, self.shooter_guns, self.cells, self.counts, self.gun_table,
                self.type_table)

    @property
    def tables(self) -> tuple:
        """The exact shot outcome tables of ``sampling: table``, in kernel argument order (last)."""
        return self.shot_law, self.law_hits

    def type_index(self, name: str) -> int:
        return self.type_names.index(name)


def shot_law_tables(cells: np.ndarray, gun_table: np.ndarray, type_table: np.ndarray, off: int, qf: int,
                    enabled: bool) -> tuple[np.ndarray, np.ndarray]:
    """``sampling: table``: each usable (gun, cell, fighter type) mapped to the outcome table of
    its shot, shared by every shot with the same (modifier, skill, bonus, damage per hit):
    ``law_hits[law, u]`` = the fighter hits of ordered 3d10 outcome ``u`` (0..999;
    :func:`analyzer.games.b17.shotlaw.outcomes`: hit test, damage II from the same dice,
    ceil(damage / k)), int8 so the tables stay in the first-level cache. 1x1x1 / 1x1 stubs
    when not ``enabled``."""
    if not enabled:
        return np.zeros((1, 1, 1), np.int64), np.zeros((1, 1), np.int8)
    n_guns, n_types = cells.shape[0], type_table.shape[0]
    shot_law = np.zeros((n_guns, N_CELLS, n_types), np.int64)
    laws: dict[tuple, int] = {}
    rows: list[np.ndarray] = []
    for g in range(n_guns):
        for c in range(N_CELLS):
            if cells[g, c, ka.CELL_KIND] == 0:
                continue
            for t in range(n_types):
                key = (int(cells[g, c, ka.CELL_MOD]), int(gun_table[g, ka.GUN_SKILL]),
                       int(gun_table[g, ka.GUN_BONUS]), int(type_table[t, ka.TYPE_K]))
                if key not in laws:
                    laws[key] = len(rows)
                    rows.append(shotlaw.outcomes(*key, off, qf)[2])
                shot_law[g, c, t] = laws[key]
    if not rows:
        return shot_law, np.zeros((1, shotlaw.N_OUTCOMES), np.int8)
    law_hits = np.stack(rows)
    assert 0 <= law_hits.min() and law_hits.max() <= np.iinfo(np.int8).max
    return shot_law, law_hits.astype(np.int8)


def compile_bomber(ctx: Context, data: B17Data, p, rules: dict[str, str], types_used: list[str]) -> Bomber:
    """Arrays of :mod:`kernels.b17.attack` for ``attack_wave`` / ``mission`` params ``p``."""
    used: list[Placeholder] = []
    add(used, *data.arc_placeholders)          # spec §5: the arc cells and damage types, always
    for t in types_used:                       # danger_rank: policy tie-breaks
        add(used, data.types[t].rank_placeholder)
    skills = crew_skills(ctx, data, p.skill, p.skills, used)
    intercom_ok = intercom(data, p.intercom_ok, used)
    gun_ok = check_gun_ok(ctx, data, p.gun_ok)

    n_guns = len(data.guns)
    shooter_start = np.zeros(len(data.shooters) + 1, np.int64)
    shooter_guns = np.array([g for sh in data.shooters for g in sh], dtype=np.int64)
    for s, sh in enumerate(data.shooters):
        shooter_start[s + 1] = shooter_start[s] + len(sh)
    cells = np.zeros((n_guns, N_CELLS, 2), np.int64)
    for g in data.guns:
        for c in range(N_CELLS):
            cell = g.raw_cell(c)
            if cell is not None:
                cells[g.order, c, ka.CELL_KIND] = 2 if cell[1] else 1
                cells[g.order, c, ka.CELL_MOD] = cell[0]
    gun_table = np.zeros((n_guns, 3), np.int64)
    for g in data.guns:
        gun_table[g.order] = (skills[g.crew_index], g.bonus, g.crew_index)

    type_names = list(data.types)
    ranks = sorted({data.types[t].danger_rank for t in type_names})
    type_table = np.array([(data.types[t].damage_per_hit, ranks.index(data.types[t].danger_rank))
                           for t in type_names], dtype=np.int64)

    off, qf = face_offset(rules), quality_first(rules)
    D = data.destroyed_at
    counts = np.zeros((n_guns, N_CELLS, len(type_names), D + 1), np.int64)
    for g in data.guns:
        for c in range(N_CELLS):
            if cells[g.order, c, ka.CELL_KIND] == 0:
                continue
            for ti in range(len(type_names)):
                for prior in range(D):
                    kc, hc = shotlaw.kill_and_hit_counts(int(cells[g.order, c, ka.CELL_MOD]),
                                                         int(gun_table[g.order, ka.GUN_SKILL]), g.bonus,
                                                         int(type_table[ti, ka.TYPE_K]), prior, D, off, qf)
                    counts[g.order, c, ti, prior] = kc
                    counts[g.order, c, ti, D] = hc

    # §7: a kill is shared by at most the shooters that can reach the fighter's cell, so every
    # share 1/n is a whole number of 1/scale units (mission effects only remove guns/intercom)
    reach = [sum(1 for sh in data.shooters
                 if any(cells[g, c, ka.CELL_KIND] == 1 or (cells[g, c, ka.CELL_KIND] == 2 and intercom_ok)
                        for g in sh if gun_ok[g]))
             for c in range(N_CELLS)]
    scale = lcm_upto(max(reach))
    cfg = np.zeros(ka.N_CFG, np.int64)
    cfg[ka.C_POLICY] = POLICIES.index(p.policy)
    cfg[ka.C_RETARGET] = rules["destroyed_target"] == "retarget"
    cfg[ka.C_TOCADO_NOW] = rules["tocado_penalty"] == "this_attack"
    cfg[ka.C_CREDIT_SHOOTERS] = rules["kill_credit"] == "shooters"
    cfg[ka.C_CREDIT_PER_GUN] = rules["kill_credit_unit"] == "gun"
    cfg[ka.C_SHARE_SAME_ATTACK] = rules["delayed_kill_share"] == "same_attack"
    cfg[ka.C_FACE_OFFSET] = off
    cfg[ka.C_QUALITY_FIRST] = qf
    cfg[ka.C_TOCADO_AT] = data.tocado_at
    cfg[ka.C_DANADO_AT] = data.danado_at
    cfg[ka.C_DESTROYED_AT] = D
    cfg[ka.C_SCALE] = scale
    cfg[ka.C_N_RANK] = len(ranks)
    table = rules["sampling"] == "table"
    cfg[ka.C_SAMPLING] = ka.SAMPLING_TABLE if table else ka.SAMPLING_DICE
    shot_law, law_hits = shot_law_tables(cells, gun_table, type_table, off, qf, table)
    return Bomber(shooter_start, shooter_guns, cells, counts, gun_table, type_table, cfg, gun_ok, intercom_ok,
                  scale, type_names, shot_law, law_hits, used)


def fighter_arrays(ctx: Context, data: B17Data, bomber: Bomber, specs, path: str):
    """Expanded fighter specs -> (type index, fixed cell or -1, prior hits) arrays."""
    types, cells, prior = [], [], []
    for i, s in enumerate(specs):
        check_fighter_type(ctx, data, s.type, f"{path}[{i}].type")
        cell = -1 if s.clock is None else cell_index(s.clock, s.altitude)
        for _ in range(s.count):
            types.append(bomber.type_index(s.type))
            cells.append(cell)
            prior.append(s.prior_hits)
    return (np.array(types, dtype=np.int64), np.array(cells, dtype=np.int64),
            np.array(prior, dtype=np.int64))


UNIFORM_NOTE = "fighter placement (part 4 of the series) is not in the source: uniform over the 24 cells"


def position_arrays(p, used: list[Placeholder], needed: bool) -> tuple[np.ndarray, np.ndarray]:
    """Cells with positive weight and their cumulative weights (spec §3)."""
    if p.position_distribution is None:
        if needed:
            add(used, Placeholder("params.position_distribution", "uniform", UNIFORM_NOTE, "default"))
        entries = [(cell_index(c, a), 1.0) for c in CLOCKS for a in ALTITUDES]
    else:
        entries = [(cell_index(e.clock, e.altitude), float(e.weight)) for e in p.position_distribution
                   if e.weight > 0]
    cells = np.array([c for c, _ in entries], dtype=np.int64)
    return cells, np.cumsum([w for _, w in entries]).astype(np.float64)


def crew_shooters(data: B17Data) -> int:
    """Most shooters any one crew member fires (bounds one attack's kill share of a crew)."""
    per_crew = [0] * len(data.crews)
    for sh in data.shooters:
        for crew in {data.guns[g].crew_index for g in sh}:
            per_crew[crew] += 1
    return max(per_crew)


def bins(*maxima: int) -> tuple[int, list[str]]:
    """``n_bins`` for the largest value any metric can take, and a note if it is capped."""
    need = max(maxima) + 1
    if need <= MAX_BINS:
        return need, []
    return MAX_BINS, [f"histograms capped at {MAX_BINS} bins (largest possible value {need - 1}): "
                      f"rare large values share the last bin; means and SEs stay exact"]
