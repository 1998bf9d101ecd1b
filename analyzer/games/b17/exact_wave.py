"""Exact ``attack_wave`` (spec docs/models/b17.md §3, §6): the oracle of the attack-wave kernel.

Written from the spec, in plain Python, apart from the kernel: it shares no rule function with
:mod:`kernels.b17.attack` (only the column indices of the compiled arrays) and reads the
compiled bomber of :func:`analyzer.games.b17.compile.compile_bomber`. The one piece it borrows
is the single-shot law (:mod:`analyzer.games.b17.shotlaw`, spec §0.2), an exact law and not
a rule of the wave.

Enumeration: shooter by shooter (§0.4 shooter order) choose the target (§3.1 step 1), then
branch on every fighter-hit value ``h`` the shot can score, weighted by its count out of the
1000 equally likely 3d10 outcomes; a shooter without a target is one branch of weight 1000.
Every leaf is one complete set of shots, resolved by §3.1 steps 2-6, with probability
``weight / 1000 ** n_shooters``. Means are exact fractions.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from analyzer.core.errors import ScenarioError
from analyzer.games.b17 import shotlaw
from analyzer.core.questions import ExactMetric
from kernels.b17 import attack as ka   # column indices of the compiled arrays only

#: Exact mode enumerates every combination of the shots' outcomes (at most 7 hit values per
#: shot); above this many combinations it refuses and points to Monte Carlo.
EXACT_COMBINATION_CAP = 300_000

#: per-trial metrics of spec §3.2 other than the per-crew ones, by name
WAVE_NAMES = ("destroyed", "destroyed_before_firing", "damaged", "tocado", "intact", "fighters_firing",
              "firing_plus0", "firing_plus2", "firing_plus4", "p_any_destroyed", "guns_firing", "hits_total",
              "kills_total")


class _Wave:
    """One attack of fixed fighters against the compiled bomber: the rules of spec §3.1."""

    def __init__(self, bomber, f_type, f_cell, f_prior, n_crew):
        cfg = bomber.cfg
        n_guns = bomber.gun_table.shape[0]
        self.fighters = range(len(f_type))
        self.prior = [int(h) for h in f_prior]            # hits before this attack (0, 1 or 2)
        self.n_crew = n_crew
        self.shooters = [[int(g) for g in bomber.shooter_guns[bomber.shooter_start[s]:bomber.shooter_start[s + 1]]]
                         for s in range(len(bomber.shooter_start) - 1)]
        # §0.3 fighter states by total hits
        self.tocado_at = int(cfg[ka.C_TOCADO_AT])
        self.danado_at = int(cfg[ka.C_DANADO_AT])
        self.destroyed_at = int(cfg[ka.C_DESTROYED_AT])
        # rule options (spec §0.5)
        self.policy = ("focus_most_dangerous", "spread", "max_kill_probability")[int(cfg[ka.C_POLICY])]
        self.retarget = bool(cfg[ka.C_RETARGET])                     # A9
        self.tocado_fires_now = bool(cfg[ka.C_TOCADO_NOW])           # A4
        self.credit_shooters = bool(cfg[ka.C_CREDIT_SHOOTERS])       # A3 who
        self.credit_per_gun = bool(cfg[ka.C_CREDIT_PER_GUN])         # A3 unit
        self.share_same_attack = bool(cfg[ka.C_SHARE_SAME_ATTACK])   # A5
        face_offset, quality_first = int(cfg[ka.C_FACE_OFFSET]), int(cfg[ka.C_QUALITY_FIRST])   # A2, A1
        # a kill is split among at most one shot per shooter: shares are whole 1/unit
        self.unit = math.lcm(*range(1, len(self.shooters) + 1))
        # the guns' crew members, and each fighter's danger key dk = (hits, danger rank, index)
        self.crew_of = [int(bomber.gun_table[g, ka.GUN_CREW]) for g in range(n_guns)]
        self.danger = [(self.prior[f], int(bomber.type_table[f_type[f], ka.TYPE_RANK]), f) for f in self.fighters]
        # per (gun, fighter) that can fire: "ordinary" or "delayed", the law of h, and the
        # max_kill_probability counts with the fighter's hits at the start of the attack
        self.kind, self.law, self.kill_hit = {}, {}, {}
        for g in range(n_guns):
            for f in self.fighters:
                cell = int(f_cell[f])
                kind = int(bomber.cells[g, cell, ka.CELL_KIND])
                if kind == 0 or not bomber.gun_ok[g]:
                    continue                       # §0.4: grey, masked by only_clock, or gun out
                if kind == 2 and not bomber.intercom_ok:
                    continue                       # §2.3: a ** cell needs the intercom
                self.kind[g, f] = "delayed" if kind == 2 else "ordinary"
                shot = (int(bomber.cells[g, cell, ka.CELL_MOD]), int(bomber.gun_table[g, ka.GUN_SKILL]),
                        int(bomber.gun_table[g, ka.GUN_BONUS]), int(bomber.type_table[f_type[f], ka.TYPE_K]))
                counts = shotlaw.hits_law(*shot, face_offset, quality_first)
                self.law[g, f] = [(h, int(n)) for h, n in enumerate(counts) if n > 0]
                self.kill_hit[g, f] = shotlaw.kill_and_hit_counts(*shot, self.prior[f], self.destroyed_at,
                                                                  face_offset, quality_first)

    # ------------------------------------------------------------------ §3.1 step 1
    def target(self, s, aimed_at, ordinary_hits):
        """(gun, fighter) shooter s fires, or None: the candidate with the smallest key.
        ``aimed_at[f]`` = shooters that already chose f; ``ordinary_hits[f]`` = non-``**``
        hits already rolled on f in this attack."""
        best = None
        for g in self.shooters[s]:
            for f in self.fighters:
                if (g, f) not in self.kind:
                    continue
                if self.retarget and self.prior[f] + ordinary_hits[f] >= self.destroyed_at:
                    continue                       # A9 retarget: already destroyed by ordinary fire
                if self.policy == "focus_most_dangerous":
                    key = (self.danger[f], g)
                elif self.policy == "spread":
                    key = (aimed_at[f], self.danger[f], g)
                else:
                    kills, hits = self.kill_hit[g, f]
                    key = (-kills, -hits, self.danger[f], g)
                if best is None or key < best[0]:
                    best = (key, g, f)
        return None if best is None else best[1:]

    # ------------------------------------------------------------------ §3.1 steps 2-6
    def resolve(self, shots):
        """Metric values of one complete set of shots ``[(gun, fighter, delayed, h)]``: a tuple
        of the WAVE_NAMES values, then each crew member's kills in units of ``1/self.unit``,
        then each crew member's hits."""
        v = dict.fromkeys(WAVE_NAMES, 0)
        kills = [0] * self.n_crew
        hits = [0] * self.n_crew
        ordinary = list(self.prior)                # step 2: hits once the ordinary shots apply
        delayed_hits = [0] * len(self.prior)
        for g, f, delayed, h in shots:
            if delayed:
                delayed_hits[f] += h
            else:
                ordinary[f] += h
            hits[self.crew_of[g]] += h             # step 6: every hit recorded, even past 3 (§7)
        for f in self.fighters:
            after = ordinary[f]
            # step 3: who fires, at which penalty (§6); ** hits never change this (§2.3)
            if after >= self.destroyed_at:
                v["destroyed_before_firing"] += 1
            else:
                v["fighters_firing"] += 1
                if after >= self.danado_at:
                    v["firing_plus4"] += 1         # dañado: +4 replaces +2
                elif after >= self.tocado_at and (self.tocado_fires_now or self.prior[f] >= self.tocado_at):
                    v["firing_plus2"] += 1         # tocado (A4: now, or only if tocado before this attack)
                else:
                    v["firing_plus0"] += 1
            final = after + delayed_hits[f]        # step 4: the ** hits apply after the attack
            if final >= self.destroyed_at:
                v["destroyed"] += 1
                self.credit_kill([shot for shot in shots if shot[1] == f], after, kills)   # step 5
            elif final >= self.danado_at:
                v["damaged"] += 1
            elif final >= self.tocado_at:
                v["tocado"] += 1
            else:
                v["intact"] += 1
        v["p_any_destroyed"] = 1 if v["destroyed"] else 0
        v["guns_firing"] = len(shots)
        v["hits_total"] = sum(hits)
        v["kills_total"] = v["destroyed"]
        return tuple(v[name] for name in WAVE_NAMES) + tuple(kills) + tuple(hits)

    def credit_kill(self, at_f, after, kills):
        """§7 kill credit of a fighter destroyed in this attack (A3 who and unit, A5 step):
        adds the shares, in units of ``1/self.unit``, to ``kills``."""
        if self.share_same_attack:
            pool = at_f
        elif after >= self.destroyed_at:           # destroyed by the ordinary fire
            pool = [shot for shot in at_f if not shot[2]]
        else:                                      # destroyed by the delayed ** hits
            pool = [shot for shot in at_f if shot[2]]
        if not self.credit_shooters:
            pool = [shot for shot in pool if shot[3] >= 1]
        if not pool:
            return
        if self.credit_per_gun:                    # 1/n of the kill to each gun's crew member
            for g, *_ in pool:
                kills[self.crew_of[g]] += self.unit // len(pool)
        else:                                      # 1/n to each distinct crew member
            crews = {self.crew_of[g] for g, *_ in pool}
            for c in crews:
                kills[c] += self.unit // len(crews)


def exact_wave(bomber, f_type, f_cell, f_prior, n_crew, metrics, ctx) -> dict[str, ExactMetric]:
    """Exact distributions of every ``attack_wave`` metric for fighters at fixed positions.

    ``metrics``: the wave metrics (spec §3.2, by name), then ``kills_<crew>`` for crew 0..n-1,
    then ``hits_<crew>`` for crew 0..n-1 (crew index = ``gun_table[:, GUN_CREW]``). Refuses
    (ScenarioError) above ``EXACT_COMBINATION_CAP`` shot-outcome combinations.
    """
    wave = _Wave(bomber, f_type, f_cell, f_prior, n_crew)
    per_crew = [m for m in metrics if m.name not in WAVE_NAMES]
    crew_kills, crew_hits = per_crew[:n_crew], per_crew[n_crew:]
    if not (all(m.name.startswith("kills_") for m in crew_kills) and len(crew_hits) == n_crew
            and all(m.name.startswith("hits_") for m in crew_hits)):
        raise ValueError("metrics: the wave metrics, then kills_<crew> and hits_<crew> for each crew member")

    # bound on the leaves: each shooter branches at most on its widest law over what it can reach
    estimate = 1
    for guns in wave.shooters:
        widths = [len(wave.law[g, f]) for g in guns for f in wave.fighters if (g, f) in wave.kind]
        estimate *= max(widths, default=1)
    if estimate > EXACT_COMBINATION_CAP:
        raise ScenarioError(str(ctx.scenario_file or ctx.scenario_dir), "params.fighters",
                            f"exact mode would enumerate up to {estimate:,} shot-outcome combinations "
                            f"(cap {EXACT_COMBINATION_CAP:,}): too many guns can fire; use 'analyzer run'")

    leaves = {}                                     # resolve() tuple -> total weight

    def record(shots, weight):
        key = wave.resolve(shots)
        leaves[key] = leaves.get(key, 0) + weight

    def branch(s, shots, aimed_at, ordinary_hits, weight):
        if s == len(wave.shooters):
            record(shots, weight)
            return
        choice = wave.target(s, aimed_at, ordinary_hits)
        if choice is None:                         # no target: all 1000 outcomes lead on alike
            branch(s + 1, shots, aimed_at, ordinary_hits, weight * shotlaw.N_OUTCOMES)
            return
        g, f = choice
        delayed = wave.kind[g, f] == "delayed"
        aimed = aimed_at[:f] + (aimed_at[f] + 1,) + aimed_at[f + 1:]
        for h, n in wave.law[g, f]:
            running = ordinary_hits if delayed else ordinary_hits[:f] + (ordinary_hits[f] + h,) + ordinary_hits[f + 1:]
            branch(s + 1, shots + [(g, f, delayed, h)], aimed, running, weight * n)

    zeros = (0,) * len(wave.fighters)
    branch(0, [], zeros, zeros, 1)

    total = shotlaw.N_OUTCOMES ** len(wave.shooters)
    n_wave = len(WAVE_NAMES)
    column = {name: i for i, name in enumerate(WAVE_NAMES)}
    column.update({m.name: n_wave + c for c, m in enumerate(crew_kills)})
    column.update({m.name: n_wave + n_crew + c for c, m in enumerate(crew_hits)})
    kill_columns = {n_wave + c for c in range(n_crew)}
    out = {}
    for m in metrics:
        col = column[m.name]
        raw = {}
        for key, w in leaves.items():
            raw[key[col]] = raw.get(key[col], 0) + w
        # kill shares were counted in units of 1/unit: back to fractions of a kill
        dist = {(Fraction(k, wave.unit) if col in kill_columns else k): w for k, w in raw.items()}
        xs = sorted(dist)
        mean = sum(Fraction(x) * w for x, w in dist.items()) / total
        out[m.name] = ExactMetric(float(mean), np.array([float(x) for x in xs], dtype=np.float64),
                                  np.array([float(Fraction(dist[x], total)) for x in xs]))
    return out
