"""Question ``attack_wave``: N fighters attack the bomber once (spec §3; digest §1-§7).

Guns choose targets by a named policy, fire simultaneously, the tail gunner's ``**`` hits
apply after the fighters' attack, and each kill is shared by the crew who hit it. Exact
(enumeration over the shots' outcomes) when every fighter has a fixed position.
"""
from __future__ import annotations

from analyzer.core.errors import ScenarioError
from analyzer.games.b17 import data as b17data
from analyzer.games.b17.exact_wave import exact_wave  # its own rule code: an independent oracle
from analyzer.games.b17.compile import (bins, compile_bomber, crew_shooters, fighter_arrays,
                                        max_fighter_hits, position_arrays)
from analyzer.games.b17.params import AttackWaveParams
from analyzer.games.b17.rules import RULE_OPTIONS
from analyzer.core.questions import Context, Metric, Prepared, Question, register
from kernels.b17 import attack as ka
from kernels.b17 import attack_wave as kw
from kernels.b17.attack_wave import attack_wave_kernel

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
    return ([Metric(f"kills_{c}", f"kills of {c} (shared kills split equally{what})", "value", scale,
                    quantity="kills", entity=c) for c in crews]
            + [Metric(f"hits_{c}", f"hits scored by {c}{what}", quantity="hits", entity=c) for c in crews])


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
                bomber.intercom_ok, n_crew, n_plans, *bomber.tables)

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
        from analyzer.games.b17 import plots as b17plots  # matplotlib only when plotting
        return b17plots.crew_figures(meta, points) + b17plots.wave_fate_figures(meta, points)
