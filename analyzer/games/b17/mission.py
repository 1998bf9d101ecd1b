"""Question ``mission``: a sequence of attack waves with state carried between them (spec §4).

Tocado fighters come back (+2), damaged ones leave, destroyed ones are gone; kills and hits
are tallied per crew member over the mission. Fighter fire on the bomber is not in the source:
a pluggable PLACEHOLDER model, off by default. Monte Carlo only.
"""
from __future__ import annotations

import numpy as np

from analyzer.games.b17 import data as b17data
from analyzer.games.b17.attack_wave import crew_metrics
from analyzer.games.b17.compile import (add, bins, compile_bomber, crew_shooters, fail, fighter_arrays,
                                        max_fighter_hits, position_arrays)
from analyzer.games.b17.params import MAX_FIGHTERS_PER_WAVE, MissionParams
from analyzer.games.b17.rules import RULE_OPTIONS, face_offset
from analyzer.games.b17.shotlaw import outcomes
from analyzer.core.gamedata import DataError, Placeholder
from analyzer.core.questions import Context, Metric, Prepared, Question, register
from kernels.b17 import mission as km

MISSION_LABELS = {
    "kills_total": "fighters destroyed over the mission",
    "hits_total": "hits inflicted over the mission",
    "vp": "victory points (PLACEHOLDER: kills; ties broken by hits)",
    "destroyed_before_firing_total": "fighters destroyed before they fire",
    "damaged_total": "fighters that left damaged (dañado)",
    "fighters_engaged": "fighters that arrived",
    "fighter_attacks": "fighter attacks made on the bomber",
    "fighters_withdrawn": "survivors that did not return",
    "fighters_remaining": "intact/tocado fighters after the last wave",
    "bomber_hits": "hits on the bomber (PLACEHOLDER fighter-fire model)",
    "guns_lost": "guns knocked out (PLACEHOLDER fighter-fire model)",
    "p_intercom_lost": "P(intercom lost during the mission) (PLACEHOLDER model)",
}
FIRE_NOTE = "fighter fire on the bomber is not in the source (next article): placeholder 3d10 model"


def fire_outcome_table(skill: int, penalty: np.ndarray, effect_kind: np.ndarray, effect_lo: np.ndarray,
                       effect_hi: np.ndarray, off: int, enabled: bool) -> np.ndarray:
    """``sampling: table`` for the PLACEHOLDER fighter fire: ``fire_outcome[class, 10 u + e - 1]``
    = the outcome (``kernels.b17.mission.FIRE_MISS``, or ``FIRE_HIT + EFFECT_*``) of ordered
    3d10 outcome ``u`` (0..999) and effect d10 face ``e`` (1..10) for a fighter firing at
    penalty ``penalty[class]``, as the dice path rolls them: a hit iff 3d10 + penalty <= skill
    (faces per ``d10_faces``), then the first effect whose range holds ``e`` (none if no range
    does). int8; a 1x1 stub when not ``enabled``."""
    if not enabled:
        return np.zeros((1, 1), np.int8)
    effect_of = np.full(10, km.EFFECT_NONE, np.int64)      # effect of d10 face e at index e - 1
    for e in range(1, 11):
        for kind, lo, hi in zip(effect_kind, effect_lo, effect_hi):
            if lo <= e <= hi:
                effect_of[e - 1] = kind
                break
    fire_outcome = np.zeros((penalty.shape[0], km.FIRE_OUTCOMES), np.int8)
    for c, pen in enumerate(penalty):
        hit = outcomes(int(pen), skill, 0, 1, off, 0)[0]    # 3d10 + penalty <= skill, per ordered outcome
        fire_outcome[c] = np.where(hit[:, None], km.FIRE_HIT + effect_of[None, :], km.FIRE_MISS).ravel()
    return fire_outcome


@register
class Mission(Question):
    game = "b17"
    name = "mission"
    summary = ("A sequence of attack waves, fighter state carried between them; kills, hits and "
               "placeholder VP per crew member over the mission")
    Params = MissionParams
    rule_options = RULE_OPTIONS
    primary_metric = "kills_total"
    supports_exact = False

    def prepare(self, p: MissionParams, ctx: Context) -> Prepared:
        data = b17data.load(ctx)
        types_used = [s.type for w in p.waves for s in w.fighters]
        bomber = compile_bomber(ctx, data, p, ctx.rules, types_used)
        used = list(bomber.placeholders)
        n_waves = len(p.waves)
        wave_start = np.zeros(n_waves + 1, np.int64)
        parts = []
        for w, wave in enumerate(p.waves):
            arrays = fighter_arrays(ctx, data, bomber, wave.fighters, f"params.waves[{w}].fighters")
            parts.append(arrays)
            wave_start[w + 1] = wave_start[w] + arrays[0].shape[0]
        arrival_type, arrival_cell, arrival_prior = (np.concatenate([a[i] for a in parts]) for i in range(3))

        if p.return_probability is not None:
            p_return = p.return_probability
        else:
            p_return = data.return_probability.used(used)
        if p.return_position is not None:
            redraw = p.return_position == "redraw"
        else:
            redraw = data.return_position.used(used) == "redraw"
        # spec §0.6: fighters present in one attack, returning ones included (worst case: all return)
        present = 0
        worst = 0
        for w in range(n_waves):
            arrivals = int(wave_start[w + 1] - wave_start[w])
            present = arrivals + (present if p_return > 0 else 0)
            worst = max(worst, present)
            if present > MAX_FIGHTERS_PER_WAVE:
                raise fail(ctx, f"params.waves[{w}]", f"up to {present} fighters present (arrivals plus "
                           f"fighters that may return); at most {MAX_FIGHTERS_PER_WAVE} (MAX_FIGHTERS_PER_WAVE)")
        drawn = bool((arrival_cell < 0).any()) or (redraw and n_waves > 1 and p_return > 0)
        position_cell, position_cum = position_arrays(p, used, drawn)

        fire_model, fire_skill, effects = self._fighter_fire(p, data, used)
        effect_kind = np.array([b17data.EFFECTS.index(n) for n in effects], dtype=np.int64)
        effect_lo = np.array([lo for lo, _ in effects.values()], dtype=np.int64)
        effect_hi = np.array([hi for _, hi in effects.values()], dtype=np.int64)
        fire_penalty = np.array(data.penalty, dtype=np.int64)
        danado_vp = ctx.rules["danado_vp"] == "counts_as_kill"

        n_crew = len(data.crews)
        n_arrivals = int(wave_start[-1])
        attacks = 0
        present = 0
        for w in range(n_waves):
            present = int(wave_start[w + 1] - wave_start[w]) + (present if p_return > 0 else 0)
            attacks += present
        h_max = max_fighter_hits(data, ctx.rules, types_used or None)
        n_bins, notes = bins(attacks, n_waves * len(data.shooters) * h_max,
                             bomber.scale * n_waves * crew_shooters(data), len(data.guns))
        fm = km.FIRE_PLACEHOLDER_3D10 if fire_model == "placeholder_3d10" else km.FIRE_NONE

        table = ctx.rules["sampling"] == "table" and fm == km.FIRE_PLACEHOLDER_3D10
        fire_outcome = fire_outcome_table(fire_skill, fire_penalty, effect_kind, effect_lo, effect_hi,
                                          face_offset(ctx.rules), table)
        args = (*bomber.arrays, bomber.cfg, wave_start, arrival_type, arrival_cell, arrival_prior, position_cell,
                position_cum, bomber.gun_ok, bomber.intercom_ok, n_crew, float(p_return), redraw, fm, fire_skill,
                fire_penalty, effect_kind, effect_lo, effect_hi, danado_vp, *bomber.tables, fire_outcome)

        metrics = [Metric(m, MISSION_LABELS[m], "probability" if m == "p_intercom_lost" else "count")
                   for m in km.MISSION_METRICS]
        metrics += crew_metrics(data.crews, bomber.scale, ", whole mission")
        if n_arrivals == 0:
            notes.append("no fighter arrives in any wave")
        return Prepared(metrics, n_bins, kernel=km.mission_kernel, args=args, placeholders=tuple(used),
                        notes=tuple(notes))

    @staticmethod
    def _fighter_fire(p: MissionParams, data: b17data.B17Data, used: list[Placeholder]):
        """Fighter-fire model and its settings (spec §4 step 3); its placeholders if selected."""
        ff = p.fighter_fire
        model = ff.model if ff.model is not None else data.fighter_fire["model"]
        if model not in ("none", "placeholder_3d10"):
            raise DataError(f"data/fighter_fire.yaml: model: got {model!r}; allowed: none, placeholder_3d10")
        skill = ff.skill if ff.skill is not None else data.fighter_fire["skill"].value
        effects = dict(ff.effects) if ff.effects is not None else data.fighter_fire["effects"]
        if model == "placeholder_3d10":
            add(used, Placeholder("params.fighter_fire.model", model, FIRE_NOTE, "model"))
            if ff.skill is None:
                data.fighter_fire["skill"].used(used)
            if ff.effects is None:
                add(used, *data.fighter_fire["effect_placeholders"])
        return model, int(skill), effects

    def plots(self, meta, points, dists):
        from analyzer.games.b17 import plots as b17plots  # matplotlib only when plotting
        return b17plots.crew_figures(meta, points) + b17plots.mission_figures(meta, points)
