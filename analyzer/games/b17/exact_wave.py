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

from fractions import Fraction

import numpy as np

from analyzer.errors import ScenarioError
from analyzer.games.b17 import shotlaw
from analyzer.questions import ExactMetric
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
        self.bomber = bomber
        cfg = bomber.cfg
        self.fighters = range(len(f_type))
        self.type = [int(t) for t in f_type]
        self.cell = [int(c) for c in f_cell]
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
        self.face_offset = int(cfg[ka.C_FACE_OFFSET])                # A2
        self.quality_first = int(cfg[ka.C_QUALITY_FIRST])            # A1
        self._laws = {}

    # ------------------------------------------------------------------ the bomber's tables
    def modifier(self, g, f):
        return int(self.bomber.cells[g, self.cell[f], ka.CELL_MOD])

    def skill(self, g):
        return int(self.bomber.gun_table[g, ka.GUN_SKILL])

    def bonus(self, g):
        return int(self.bomber.gun_table[g, ka.GUN_BONUS])

    def crew(self, g):
        return int(self.bomber.gun_table[g, ka.GUN_CREW])

    def damage_per_hit(self, f):
        return int(self.bomber.type_table[self.type[f], ka.TYPE_K])

    def danger_rank(self, f):
        return int(self.bomber.type_table[self.type[f], ka.TYPE_RANK])

    def can_fire(self, g, f):
        """§0.4 eligibility: None (cannot fire), "ordinary" or "delayed" (a ``**`` tail cell)."""
        kind = int(self.bomber.cells[g, self.cell[f], ka.CELL_KIND])
        if kind == 0 or not self.bomber.gun_ok[g]:
            return None                            # grey, masked by only_clock, or gun out
        if kind == 2:
            return "delayed" if self.bomber.intercom_ok else None   # §2.3: ** needs the intercom
        return "ordinary"

    def law(self, g, f):
        """[(h, count out of 1000)] of one shot of gun g at fighter f (spec §0.2), h >= 0."""
        if (g, f) not in self._laws:
            counts = shotlaw.hits_law(self.modifier(g, f), self.skill(g), self.bonus(g), self.damage_per_hit(f),
                                      self.face_offset, self.quality_first)
            self._laws[g, f] = [(h, int(n)) for h, n in enumerate(counts) if n > 0]
        return self._laws[g, f]

    def kill_and_hit_counts(self, g, f):
        """§0.2 counts for max_kill_probability, with the hits f had at the start of the attack."""
        return shotlaw.kill_and_hit_counts(self.modifier(g, f), self.skill(g), self.bonus(g),
                                           self.damage_per_hit(f), self.prior[f], self.destroyed_at,
                                           self.face_offset, self.quality_first)

    # ------------------------------------------------------------------ §3.1 step 1
    def target(self, s, aimed_at, ordinary_hits):
        """(gun, fighter) shooter s fires, or None. ``aimed_at[f]`` = shooters that already chose
        f; ``ordinary_hits[f]`` = non-``**`` hits already rolled on f in this attack."""
        best = None
        for g in self.shooters[s]:
            for f in self.fighters:
                if self.can_fire(g, f) is None:
                    continue
                if self.retarget and self.prior[f] + ordinary_hits[f] >= self.destroyed_at:
                    continue                       # A9 retarget: already destroyed by ordinary fire
                danger = (self.prior[f], self.danger_rank(f), f)      # smaller = more dangerous
                if self.policy == "focus_most_dangerous":
                    key = (danger, g)
                elif self.policy == "spread":
                    key = (aimed_at[f], danger, g)
                else:
                    kills, hits = self.kill_and_hit_counts(g, f)
                    key = (-kills, -hits, danger, g)
                if best is None or key < best[0]:
                    best = (key, g, f)
        return None if best is None else best[1:]

    # ------------------------------------------------------------------ §3.1 steps 2-6
    def resolve(self, shots):
        """Metric values of one complete set of shots ``[(gun, fighter, delayed, h)]``.

        Returns {wave metric: int}, kills per crew (Fractions of a kill), hits per crew.
        """
        v = dict.fromkeys(WAVE_NAMES, 0)
        kills = [Fraction(0)] * self.n_crew
        hits = [0] * self.n_crew
        for f in self.fighters:
            at_f = [shot for shot in shots if shot[1] == f]
            after = self.prior[f] + sum(h for _, _, delayed, h in at_f if not delayed)   # step 2
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
            final = after + sum(h for _, _, delayed, h in at_f if delayed)               # step 4
            if final >= self.destroyed_at:
                v["destroyed"] += 1
                self.credit_kill(at_f, after, kills)                                     # step 5
            elif final >= self.danado_at:
                v["damaged"] += 1
            elif final >= self.tocado_at:
                v["tocado"] += 1
            else:
                v["intact"] += 1
        for g, _, _, h in shots:                   # step 6: every hit recorded, even past 3 (§7)
            hits[self.crew(g)] += h
        v["p_any_destroyed"] = 1 if v["destroyed"] else 0
        v["guns_firing"] = len(shots)
        v["hits_total"] = sum(h for *_, h in shots)
        v["kills_total"] = v["destroyed"]
        return v, kills, hits

    def credit_kill(self, at_f, after, kills):
        """§7 kill credit of a fighter destroyed in this attack (A3 who and unit, A5 step)."""
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
        if self.credit_per_gun:
            for g, *_ in pool:
                kills[self.crew(g)] += Fraction(1, len(pool))
        else:
            crews = {self.crew(g) for g, *_ in pool}
            for c in crews:
                kills[c] += Fraction(1, len(crews))


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
        widths = [len(wave.law(g, f)) for g in guns for f in wave.fighters if wave.can_fire(g, f) is not None]
        estimate *= max(widths, default=1)
    if estimate > EXACT_COMBINATION_CAP:
        raise ScenarioError(str(ctx.scenario_file or ctx.scenario_dir), "params.fighters",
                            f"exact mode would enumerate up to {estimate:,} shot-outcome combinations "
                            f"(cap {EXACT_COMBINATION_CAP:,}): too many guns can fire; use 'analyzer run'")

    tally = {m.name: {} for m in metrics}           # metric -> {value: weight}

    def record(shots, weight):
        v, kills, hits = wave.resolve(shots)
        values = dict(v)
        values.update({m.name: kills[c] for c, m in enumerate(crew_kills)})
        values.update({m.name: hits[c] for c, m in enumerate(crew_hits)})
        for name, x in values.items():
            if name in tally:
                tally[name][x] = tally[name].get(x, 0) + weight

    def branch(s, shots, aimed_at, ordinary_hits, weight):
        if s == len(wave.shooters):
            record(shots, weight)
            return
        choice = wave.target(s, aimed_at, ordinary_hits)
        if choice is None:                         # no target: all 1000 outcomes lead on alike
            branch(s + 1, shots, aimed_at, ordinary_hits, weight * shotlaw.N_OUTCOMES)
            return
        g, f = choice
        delayed = wave.can_fire(g, f) == "delayed"
        aimed = aimed_at[:f] + (aimed_at[f] + 1,) + aimed_at[f + 1:]
        for h, n in wave.law(g, f):
            running = ordinary_hits if delayed else ordinary_hits[:f] + (ordinary_hits[f] + h,) + ordinary_hits[f + 1:]
            branch(s + 1, shots + [(g, f, delayed, h)], aimed, running, weight * n)

    zeros = (0,) * len(wave.type)
    branch(0, [], zeros, zeros, 1)

    total = shotlaw.N_OUTCOMES ** len(wave.shooters)
    out = {}
    for m in metrics:
        dist = tally[m.name]
        xs = sorted(dist)
        mean = sum(Fraction(x) * w for x, w in dist.items()) / total
        out[m.name] = ExactMetric(float(mean), np.array([float(x) for x in xs], dtype=np.float64),
                                  np.array([float(Fraction(dist[x], total)) for x in xs]))
    return out
