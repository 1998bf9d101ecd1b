"""Question ``attack_wave``: N fighters attack the bomber once (spec §3; digest §1-§7).

Guns choose targets by a named policy, fire simultaneously, the tail gunner's ``**`` hits
apply after the fighters' attack, and each kill is shared by the crew who hit it. Exact
(enumeration over the shots' outcomes) when every fighter has a fixed position.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from analyzer.errors import ScenarioError
from analyzer.games.b17 import data as b17data
from analyzer.games.b17 import plots as b17plots
from analyzer.games.b17 import shotlaw
from analyzer.games.b17.compile import (bins, compile_bomber, crew_shooters, fighter_arrays,
                                        max_fighter_hits, position_arrays)
from analyzer.games.b17.params import AttackWaveParams
from analyzer.games.b17.rules import RULE_OPTIONS
from analyzer.questions import Context, ExactMetric, Metric, Prepared, Question, register
from kernels.b17 import attack as ka
from kernels.b17 import attack_wave as kw
from kernels.b17.attack_wave import attack_wave_kernel

#: Exact mode enumerates every combination of the shots' outcomes (at most 7 hit values per
#: shot); above this many combinations it refuses and points to Monte Carlo.
EXACT_COMBINATION_CAP = 300_000

WAVE_LABELS = {
    "destroyed": "fighters destroyed (= kills_total)",
    "destroyed_before_firing": "fighters destroyed before they fire",
    "damaged": "fighters left damaged (dañado: 2 hits, leave)",
    "tocado": "fighters left tocado (1 hit)",
    "intact": "fighters left intact",
    "fighters_firing": "fighters that fire at the bomber",
    "firing_plus0": "fighters firing at +0",
    "firing_plus2": "fighters firing at +2 (tocado)",
    "firing_plus4": "fighters firing at +4 (dañado)",
    "p_any_destroyed": "P(at least one fighter destroyed)",
    "guns_firing": "shots fired",
    "hits_total": "hits inflicted (all recorded, even past 3)",
    "kills_total": "kills (sum of the crew's shares)",
}


def crew_metrics(crews: list[str], scale: int, what: str) -> list[Metric]:
    return ([Metric(f"kills_{c}", f"kills of {c} (shared kills split equally{what})", "value", scale)
             for c in crews]
            + [Metric(f"hits_{c}", f"hits scored by {c}{what}") for c in crews])


@register
class AttackWave(Question):
    game = "b17"
    name = "attack_wave"
    summary = ("N fighters attack once: targets by policy, simultaneous fire, delayed ** tail shots, "
               "fighter states and kills/hits per crew member")
    Params = AttackWaveParams
    rule_options = RULE_OPTIONS
    primary_metric = "destroyed"
    supports_exact = True

    def prepare(self, p: AttackWaveParams, ctx: Context) -> Prepared:
        data = b17data.load(ctx)
        bomber = compile_bomber(ctx, data, p, ctx.rules, [s.type for s in p.fighters])
        f_type, f_cell, f_prior = fighter_arrays(ctx, data, bomber, p.fighters, "params.fighters")
        n_drawn = int((f_cell < 0).sum())
        drawn = n_drawn > 0
        used = list(bomber.placeholders)
        position_cell, position_cum = position_arrays(p, used, drawn)
        n_f = f_type.shape[0]
        n_crew = len(data.crews)
        n_shooters = len(data.shooters)
        h_max = max_fighter_hits(data, ctx.rules, [s.type for s in p.fighters])
        n_bins, notes = bins(n_f, n_shooters * h_max, bomber.scale * crew_shooters(data))
        memo = ctx.rules["destroyed_target"] == "keep_firing" and n_drawn <= kw.MEMO_MAX_DRAWN
        n_plans = kw.N_CELLS ** n_drawn if memo else 0

        args = (*bomber.arrays, bomber.cfg, f_type, f_cell, f_prior, position_cell, position_cum, bomber.gun_ok,
                bomber.intercom_ok, n_crew, n_plans)

        metrics = [Metric(m, WAVE_LABELS[m], "probability" if m == "p_any_destroyed" else "count")
                   for m in ka.WAVE_METRICS]
        metrics += crew_metrics(data.crews, bomber.scale, "")

        def exact_answer():
            if drawn:
                raise ScenarioError(str(ctx.scenario_file or ctx.scenario_dir), "params.fighters",
                                    "exact mode needs every fighter's clock and altitude fixed (at least one "
                                    "position is drawn): use 'analyzer run'")
            return exact_wave(bomber, f_type, f_cell, f_prior, n_crew, metrics, ctx)

        return Prepared(metrics, n_bins, kernel=attack_wave_kernel, args=args, exact=exact_answer,
                        placeholders=tuple(used), notes=tuple(notes))

    def plots(self, meta, points, dists):
        return b17plots.crew_figures(meta, points) + b17plots.wave_fate_figures(meta, points)


def exact_wave(bomber, f_type, f_cell, f_prior, n_crew, metrics, ctx) -> dict[str, ExactMetric]:
    """Exact distributions of every metric: recursion over the shooters, branching on the
    single-shot law of the fighter hits ``h`` of each shot (spec §3, §6).

    Uses the kernel's own target choice and attack resolution (:mod:`kernels.b17.attack`)
    with scripted outcomes; each branch's weight is a product of counts out of 1000.
    """
    shooter_start, shooter_guns, cells, counts, gun_table, type_table = bomber.arrays
    cfg, gun_ok, intercom_ok = bomber.cfg, bomber.gun_ok, bomber.intercom_ok
    n_shooters = shooter_start.shape[0] - 1
    n_f = f_type.shape[0]
    off, qf = int(cfg[ka.C_FACE_OFFSET]), int(cfg[ka.C_QUALITY_FIRST])
    laws = {}

    def law(g, f):
        if (g, f) not in laws:
            hist = shotlaw.hits_law(int(cells[g, f_cell[f], ka.CELL_MOD]), int(gun_table[g, ka.GUN_SKILL]),
                                    int(gun_table[g, ka.GUN_BONUS]), int(type_table[f_type[f], ka.TYPE_K]), off, qf)
            laws[(g, f)] = [(h, int(n)) for h, n in enumerate(hist) if n]
        return laws[(g, f)]

    # combinations to visit: each shooter with a candidate branches on <= len(law) outcomes
    estimate = 1
    for s in range(n_shooters):
        widest = 1
        for g in shooter_guns[shooter_start[s]:shooter_start[s + 1]]:
            for f in range(n_f):
                if ka.usable_kind(cells, g, f_cell[f], gun_ok, intercom_ok):
                    widest = max(widest, len(law(g, f)))
        estimate *= widest
    if estimate > EXACT_COMBINATION_CAP:
        raise ScenarioError(str(ctx.scenario_file or ctx.scenario_dir), "params.fighters",
                            f"exact mode would enumerate up to {estimate:,} shot-outcome combinations "
                            f"(cap {EXACT_COMBINATION_CAP:,}): too many guns can fire; use 'analyzer run'")

    assigned = np.zeros(n_f, np.int64)
    running = np.zeros(n_f, np.int64)
    shots = np.zeros((n_shooters, ka.SHOT_COLUMNS), np.int64)
    f_final = np.zeros(n_f, np.int64)
    f_class = np.zeros(n_f, np.int64)
    f_delayed = np.zeros(n_f, np.int64)
    kills = np.zeros(n_crew, np.int64)
    hits = np.zeros(n_crew, np.int64)
    mark = np.zeros(n_crew, np.int64)
    values = np.zeros(len(metrics), np.int64)
    acc: list[dict[int, int]] = [dict() for _ in metrics]

    def leaf(n_shots, weight):
        kills[:] = 0
        hits[:] = 0
        ka.finish_attack(gun_table, cfg, n_f, f_prior, n_shots, shots, f_final, f_class, f_delayed, kills, hits,
                         mark)
        ka.wave_values(cfg, n_f, f_final, f_class, n_shots, shots, kills, hits, values)
        for m, v in enumerate(values.tolist()):
            acc[m][v] = acc[m].get(v, 0) + weight

    def rec(s, n_shots, weight):
        if s == n_shooters:
            leaf(n_shots, weight)
            return
        g, f = ka.choose_target(s, shooter_start, shooter_guns, cells, counts, type_table, cfg, n_f, f_type,
                                f_cell, f_prior, assigned, running, gun_ok, intercom_ok)
        if g < 0:
            rec(s + 1, n_shots, weight * shotlaw.N_OUTCOMES)
            return
        delayed = ka.usable_kind(cells, g, f_cell[f], gun_ok, intercom_ok) == 2
        shots[n_shots, ka.SHOT_GUN] = g
        shots[n_shots, ka.SHOT_FIGHTER] = f
        shots[n_shots, ka.SHOT_DELAYED] = delayed
        assigned[f] += 1
        for h, n in law(g, f):
            shots[n_shots, ka.SHOT_HITS] = h
            if not delayed:
                running[f] += h
            rec(s + 1, n_shots + 1, weight * n)
            if not delayed:
                running[f] -= h
        assigned[f] -= 1

    rec(0, 0, 1)
    total = shotlaw.N_OUTCOMES ** n_shooters
    out = {}
    for metric, dist in zip(metrics, acc):
        keys = sorted(dist)
        values_ = np.array(keys, dtype=np.float64) / metric.scale
        probs = np.array([float(Fraction(dist[v], total)) for v in keys])
        mean = float(Fraction(sum(v * w for v, w in dist.items()), total * metric.scale))
        out[metric.name] = ExactMetric(mean, values_, probs)
    return out
