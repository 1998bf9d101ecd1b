"""Question ``gun_matrix``: kill odds of every gun at every clock/altitude position (spec §2).

Per eligible (gun, clock, altitude) cell one independent shot; per position, every shooter
that can reach it fires one gun at a single fighter there and the hits add up. The plots are
the heatmap "kill odds per gun position" and a bomber-centred polar chart (plots.py).
"""
from __future__ import annotations

import numpy as np

from analyzer.games.b17 import data as b17data
from analyzer.games.b17 import shotlaw
from analyzer.games.b17.compile import add, check_fighter_type, check_gun_ok, crew_skills, intercom
from analyzer.games.b17.params import GunMatrixParams
from analyzer.games.b17.rules import RULE_OPTIONS, face_offset, quality_first
from analyzer.core.gamedata import Placeholder
from analyzer.core.questions import Context, ExactMetric, Metric, Prepared, Question, register
from kernels.b17.gun_matrix import gun_matrix_kernel


def metric_name(metric: str, *parts: str) -> str:
    """``p_hit__nose__1200__high``: ``__`` separators, clock ids without the colon (spec §2)."""
    out = [metric]
    for part in parts:
        out.append(b17data.CLOCK_IDS[b17data.CLOCKS.index(part)] if part in b17data.CLOCKS else part)
    return "__".join(out)


def matrix_layout(data, skills, intercom_ok, gun_ok, k, prior, rules):
    """Eligible cells ``[(gun, cell, modifier, delayed)]`` and, per position with a shooter,
    the indices of the cells that fire together there (one gun per shooter, spec §2)."""
    off, qf = face_offset(rules), quality_first(rules)
    cells = []
    index = {}
    for g in data.guns:
        for c in range(b17data.N_CELLS):
            cell = g.raw_cell(c)
            if cell is None or not gun_ok[g.order] or (cell[1] and not intercom_ok):
                continue
            index[(g.order, c)] = len(cells)
            cells.append((g, c, cell[0], cell[1]))
    positions = []
    for c in range(b17data.N_CELLS):
        chosen = []
        for sh in data.shooters:
            best, best_key = None, None
            for gi in sh:
                if (gi, c) not in index:
                    continue
                g = data.guns[gi]
                mod = cells[index[(gi, c)]][2]
                kc, hc = shotlaw.kill_and_hit_counts(mod, skills[g.crew_index], g.bonus, k, prior,
                                                     data.destroyed_at, off, qf)
                key = (-kc, -hc, g.order)
                if best_key is None or key < best_key:
                    best, best_key = index[(gi, c)], key
            if best is not None:
                chosen.append(best)
        if chosen:
            positions.append((c, chosen))
    return cells, positions



def cell_label(gun: str, crew: str, damage: str, clock: str, alt: str, modifier: int, delayed: bool) -> str:
    """The part of a gun_matrix metric label the figures parse back (:mod:`.plots`)."""
    return f"{gun} [{crew}, {damage}] at {clock} {alt} (mod {modifier:+d}{' **' if delayed else ''})"

@register
class GunMatrix(Question):
    game = "b17"
    name = "gun_matrix"
    summary = ("Kill odds of every gun at every clock/altitude position, and of all eligible guns "
               "firing together at each position (heatmap + polar plot)")
    Params = GunMatrixParams
    rule_options = RULE_OPTIONS
    primary_metric = "p_destroyed_all__1200__high"
    supports_exact = True
    default_plots = False  # the kill-odds heatmap and polar plot replace the generic figures

    def prepare(self, p: GunMatrixParams, ctx: Context) -> Prepared:
        data = b17data.load(ctx)
        used: list[Placeholder] = []
        check_fighter_type(ctx, data, p.fighter, "params.fighter")
        add(used, *data.arc_placeholders)
        skills = crew_skills(ctx, data, p.skill, p.skills, used)
        intercom_ok = intercom(data, p.intercom_ok, used)
        gun_ok = check_gun_ok(ctx, data, p.gun_ok)
        k = data.types[p.fighter].damage_per_hit
        off, qf = face_offset(ctx.rules), quality_first(ctx.rules)
        D = data.destroyed_at
        cells, positions = matrix_layout(data, skills, intercom_ok, gun_ok, k, p.prior_hits, ctx.rules)

        cell_modifier = np.array([m for _, _, m, _ in cells], dtype=np.int64)
        cell_skill = np.array([skills[g.crew_index] for g, _, _, _ in cells], dtype=np.int64)
        cell_bonus = np.array([g.bonus for g, _, _, _ in cells], dtype=np.int64)
        position_start = np.zeros(len(positions) + 1, np.int64)
        for i, (_, chosen) in enumerate(positions):
            position_start[i + 1] = position_start[i] + len(chosen)
        position_cells = np.array([j for _, chosen in positions for j in chosen], dtype=np.int64)
        h_max = -(-(2 * (10 + off) + 2) // k)
        widest = max((len(ch) for _, ch in positions), default=1)
        n_bins = h_max * widest + 1

        metrics = []
        for g, c, mod, delayed in cells:
            clock, alt = b17data.cell_name(c)
            where = cell_label(g.id, g.crew, g.damage, clock, alt, mod, delayed)
            at = {"entity": g.id, "coords": (("clock", clock), ("altitude", alt))}
            metrics += [Metric(metric_name("p_hit", g.id, clock, alt), f"P(hit) {where}", "probability",
                               quantity="p_hit", **at),
                        Metric(metric_name("p_destroyed", g.id, clock, alt), f"P(destroyed) {where}", "probability",
                               quantity="p_destroyed", **at),
                        Metric(metric_name("hits", g.id, clock, alt), f"hits {where}", quantity="hits", **at)]
        for c, chosen in positions:
            clock, alt = b17data.cell_name(c)
            guns = "+".join(cells[j][0].id for j in chosen)
            at = {"entity": "all guns", "coords": (("clock", clock), ("altitude", alt))}
            metrics += [Metric(metric_name("p_destroyed_all", clock, alt),
                               f"P(destroyed) all guns at {clock} {alt} [{guns}]", "probability",
                               quantity="p_destroyed", **at),
                        Metric(metric_name("hits_all", clock, alt), f"hits, all guns at {clock} {alt} [{guns}]",
                               quantity="hits", **at),
                        Metric(metric_name("p_destroyed_before_fire", clock, alt),
                               f"P(destroyed before it fires: no ** tail shots) at {clock} {alt} [{guns}]",
                               "probability", quantity="p_destroyed_before_fire", **at)]

        cell_delayed = np.array([delayed for _, _, _, delayed in cells], dtype=np.bool_)
        args = (cell_modifier, cell_skill, cell_bonus, k, p.prior_hits, D, position_start, position_cells, off, qf,
                cell_delayed)

        def exact_answer():
            out = {}
            laws = []
            for (g, c, mod, _), skill in zip(cells, cell_skill):
                hit, _, h = shotlaw.outcomes(mod, int(skill), g.bonus, k, off, qf)
                clock, alt = b17data.cell_name(c)
                law = np.bincount(h) / shotlaw.N_OUTCOMES
                laws.append(law)
                ph = float(np.count_nonzero(hit)) / shotlaw.N_OUTCOMES
                pd = float(np.count_nonzero(p.prior_hits + h >= D)) / shotlaw.N_OUTCOMES
                out[metric_name("p_hit", g.id, clock, alt)] = _bernoulli(ph)
                out[metric_name("p_destroyed", g.id, clock, alt)] = _bernoulli(pd)
                values = np.arange(law.shape[0])
                out[metric_name("hits", g.id, clock, alt)] = ExactMetric(float(values @ law), values, law)
            for c, chosen in positions:            # independent shots: convolution (spec §2)
                clock, alt = b17data.cell_name(c)
                total, before = np.ones(1), np.ones(1)
                for j in chosen:
                    total = np.convolve(total, laws[j])
                    if not cells[j][3]:              # ** shots land after the fighter fires
                        before = np.convolve(before, laws[j])
                values = np.arange(total.shape[0])
                need = max(0, D - p.prior_hits)
                out[metric_name("p_destroyed_all", clock, alt)] = _bernoulli(float(total[need:].sum()))
                out[metric_name("hits_all", clock, alt)] = ExactMetric(float(values @ total), values, total)
                out[metric_name("p_destroyed_before_fire", clock, alt)] = _bernoulli(float(before[need:].sum()))
            return out

        notes = [] if positions else ["no gun can fire at any position (all guns out or grey)"]
        return Prepared(metrics, n_bins, kernel=gun_matrix_kernel, args=args, exact=exact_answer,
                        placeholders=tuple(used), notes=tuple(notes))

    def plots(self, meta, points, dists):
        from analyzer.games.b17 import plots as b17plots  # matplotlib only when plotting
        return b17plots.gun_matrix_figures(meta, points)


def _bernoulli(p: float) -> ExactMetric:
    return ExactMetric(p, np.array([0, 1]), np.array([1.0 - p, p]))
