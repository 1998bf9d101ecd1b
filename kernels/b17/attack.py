"""One German attack against the bomber (spec §3.1; digest §1, §3, §6, §7).

Shared by the ``attack_wave`` and ``mission`` kernels and by the exact enumeration of
``attack_wave`` (which calls :func:`choose_target`, :func:`finish_attack` and
:func:`wave_values` from Python with scripted shot outcomes).

Everything comes in as arrays compiled by ``analyzer.games.b17.compile``:

``model`` tuple (static for a sweep point)
    ``shooter_start[S+1]``, ``shooter_guns[..]``: the guns of shooter s (table order; an
    exclusive group such as the navigator is one shooter, §2.4);
    ``cell_kind[G, 24]``: 0 cannot fire (grey or masked by ``only_clock``), 1 ordinary,
    2 delayed ``**`` (needs the intercom, §2.3); ``cell_modifier[G, 24]``;
    ``gun_skill[G]``, ``gun_bonus[G]`` (II: 0, II+2: 2), ``gun_crew[G]``;
    ``kill_count[G, 24, T, H]``, ``hit_count[G, 24, T]``: the exact single-shot counts out
    of 1000 (spec §0.2) for ``max_kill_probability``; ``type_k[T]`` damage per hit,
    ``type_rank[T]`` dense danger rank (0 = most dangerous).
``cfg`` int64 array: rule options and thresholds, indices ``C_*`` below.
Fighters of the attack: ``f_type``, ``f_cell`` (0..23), ``f_hits`` (hits at the start of
the attack), listed in fighter index order.
"""
from __future__ import annotations

import numpy as np

from kernels._jit import jit
from kernels.b17.shot import roll_shot
from kernels.rng import uniform01

# cfg indices
C_POLICY = 0            # POLICY_* below
C_RETARGET = 1          # A9: 1 = guns skip fighters already destroyed by ordinary fire
C_TOCADO_NOW = 2        # A4: 1 = a fighter first tocado this attack fires at +2 now
C_CREDIT_SHOOTERS = 3   # A3: 1 = every gun that shot at it shares the kill (0: those that hit)
C_CREDIT_PER_GUN = 4    # A3: 1 = split per shot (gun), 0 = per distinct crew member
C_SHARE_SAME_ATTACK = 5  # A5: 1 = ordinary and ** hitters share; 0 = the destroying step only
C_FACE_OFFSET = 6       # A2: 0 faces 1..10, -1 faces 0..9
C_QUALITY_FIRST = 7     # A1: 1 = quality pair is dice (0, 1)
C_TOCADO_AT = 8
C_DANADO_AT = 9
C_DESTROYED_AT = 10
C_SCALE = 11            # kill shares are recorded in units of 1/scale
C_N_RANK = 12
N_CFG = 13

POLICY_FOCUS = 0        # focus_most_dangerous
POLICY_SPREAD = 1       # spread
POLICY_MAX_KILL = 2     # max_kill_probability

#: Packing bounds of the target keys (validated caps, spec §0.6).
MAX_FIGHTERS = 64
MAX_GUNS = 16
SHOT_OUTCOMES = 1000    # 10**3 ordered 3d10 outcomes: counts are out of this

# fighter class after ordinary fire: who fires, at which penalty (§6)
NOT_FIRING = -1
FIRES_INTACT = 0
FIRES_TOCADO = 1
FIRES_DANADO = 2


@jit
def usable_kind(model, g, cell, gun_ok, intercom_ok):
    """§3.2 eligibility of gun ``g`` at position ``cell``: 0 no, 1 ordinary, 2 delayed ``**``."""
    cell_kind = model[2]
    kind = cell_kind[g, cell]
    if kind == 0 or not gun_ok[g]:
        return 0
    if kind == 2 and not intercom_ok:
        return 0
    return kind


@jit
def choose_target(s, model, cfg, n_f, f_type, f_cell, f_hits, assigned, running, gun_ok, intercom_ok):
    """Target of shooter ``s``: the candidate (gun, fighter) with the smallest key (§3.1 step 1).

    Danger key ``dk = (hits, danger rank, index)``; ``focus_most_dangerous``: ``(dk, gun)``;
    ``spread``: ``(assigned, dk, gun)``; ``max_kill_probability``:
    ``(-kill_count, -hit_count, dk, gun)``. Keys are packed into one int64 (all parts are
    bounded). Returns ``(gun, fighter)`` or ``(-1, -1)`` when the shooter has no target.
    """
    shooter_start, shooter_guns = model[0], model[1]
    kill_count, hit_count, type_rank = model[7], model[8], model[10]
    policy = cfg[C_POLICY]
    retarget = cfg[C_RETARGET]
    destroyed_at = cfg[C_DESTROYED_AT]
    dk_span = destroyed_at * cfg[C_N_RANK] * MAX_FIGHTERS
    best_key = np.int64(0)
    best_g = -1
    best_f = -1
    for j in range(shooter_start[s], shooter_start[s + 1]):
        g = shooter_guns[j]
        for f in range(n_f):
            if retarget and f_hits[f] + running[f] >= destroyed_at:
                continue
            if usable_kind(model, g, f_cell[f], gun_ok, intercom_ok) == 0:
                continue
            dk = (f_hits[f] * cfg[C_N_RANK] + type_rank[f_type[f]]) * MAX_FIGHTERS + f
            if policy == POLICY_FOCUS:
                key = dk * MAX_GUNS + g
            elif policy == POLICY_SPREAD:
                key = (assigned[f] * dk_span + dk) * MAX_GUNS + g
            else:
                kc = kill_count[g, f_cell[f], f_type[f], f_hits[f]]
                hc = hit_count[g, f_cell[f], f_type[f]]
                lead = (SHOT_OUTCOMES - kc) * (SHOT_OUTCOMES + 1) + (SHOT_OUTCOMES - hc)
                key = (lead * dk_span + dk) * MAX_GUNS + g
            if best_g < 0 or key < best_key:
                best_key = key
                best_g = g
                best_f = f
    return best_g, best_f


@jit
def defensive_fire(state, dice, model, cfg, n_f, f_type, f_cell, f_hits, gun_ok, intercom_ok,
                   assigned, running, shot_gun, shot_f, shot_delayed, shot_h):
    """§3.1 step 1: shooter by shooter, choose a target and roll. Returns the number of shots.

    Under ``destroyed_target: keep_firing`` no choice depends on a roll, so this is exactly
    "declare every target, then fire simultaneously" (§3.5, A9).
    """
    shooter_start = model[0]
    cell_modifier, gun_skill, gun_bonus, type_k = model[3], model[4], model[5], model[9]
    for f in range(n_f):
        assigned[f] = 0
        running[f] = 0
    n_shots = 0
    for s in range(shooter_start.shape[0] - 1):
        g, f = choose_target(s, model, cfg, n_f, f_type, f_cell, f_hits, assigned, running,
                             gun_ok, intercom_ok)
        if g < 0:
            continue
        cell = f_cell[f]
        delayed = usable_kind(model, g, cell, gun_ok, intercom_ok) == 2
        _, _, h = roll_shot(state, dice, cfg[C_FACE_OFFSET], cfg[C_QUALITY_FIRST],
                            cell_modifier[g, cell], gun_skill[g], gun_bonus[g], type_k[f_type[f]])
        shot_gun[n_shots] = g
        shot_f[n_shots] = f
        shot_delayed[n_shots] = delayed
        shot_h[n_shots] = h
        n_shots += 1
        assigned[f] += 1
        if not delayed:
            running[f] += h
    return n_shots


@jit
def finish_attack(model, cfg, n_f, f_hits, n_shots, shot_gun, shot_f, shot_delayed, shot_h,
                  f_final, f_class, kills_crew, hits_crew, crew_mark):
    """§3.1 steps 2-6 after the shots are rolled.

    Fills ``f_final`` (hits after the delayed ``**`` hits) and ``f_class`` (``NOT_FIRING`` or
    the penalty class the fighter fires at) and ADDS this attack's kill shares (units of
    ``1/scale``) and hits to ``kills_crew`` / ``hits_crew``. ``crew_mark`` is scratch.
    """
    gun_crew = model[6]
    tocado_at, danado_at, destroyed_at = cfg[C_TOCADO_AT], cfg[C_DANADO_AT], cfg[C_DESTROYED_AT]
    scale = cfg[C_SCALE]
    for f in range(n_f):
        ordinary = 0
        delayed = 0
        for s in range(n_shots):
            if shot_f[s] == f:
                if shot_delayed[s]:
                    delayed += shot_h[s]
                else:
                    ordinary += shot_h[s]
        after = f_hits[f] + ordinary               # §1 step 3: ordinary hits apply
        if after >= destroyed_at:                  # §6: destroyed fighters do not attack
            f_class[f] = NOT_FIRING
        elif after >= danado_at:                   # dañado: fires at +4 (replaces +2), leaves
            f_class[f] = FIRES_DANADO
        elif after >= tocado_at:                   # tocado: +2 (A4: now, or from later attacks)
            if cfg[C_TOCADO_NOW] or f_hits[f] >= tocado_at:
                f_class[f] = FIRES_TOCADO
            else:
                f_class[f] = FIRES_INTACT
        else:
            f_class[f] = FIRES_INTACT
        final = after + delayed                    # §1 step 5: ** hits after the attack (§2.3)
        f_final[f] = final
        if final < destroyed_at:
            continue
        # §7 kill credit: who hit it in the attack that destroyed it (A3, A5)
        n_pool = 0
        for k in range(crew_mark.shape[0]):
            crew_mark[k] = 0
        for s in range(n_shots):
            if shot_f[s] != f or not _in_pool(cfg, shot_delayed[s], shot_h[s], after, destroyed_at):
                continue
            n_pool += 1
            crew_mark[gun_crew[shot_gun[s]]] = 1
        if n_pool == 0:
            continue
        if cfg[C_CREDIT_PER_GUN]:
            share = scale // n_pool
            for s in range(n_shots):
                if shot_f[s] == f and _in_pool(cfg, shot_delayed[s], shot_h[s], after, destroyed_at):
                    kills_crew[gun_crew[shot_gun[s]]] += share
        else:
            n_crew = 0
            for k in range(crew_mark.shape[0]):
                n_crew += crew_mark[k]
            share = scale // n_crew
            for k in range(crew_mark.shape[0]):
                if crew_mark[k]:
                    kills_crew[k] += share
    for s in range(n_shots):                       # §7: every hit recorded, even past 3
        hits_crew[gun_crew[shot_gun[s]]] += shot_h[s]


@jit
def _in_pool(cfg, delayed, h, after, destroyed_at):
    """Whether a shot at a destroyed fighter shares its kill (A3 who, A5 which step)."""
    if not cfg[C_SHARE_SAME_ATTACK]:
        if after >= destroyed_at:
            if delayed:
                return False
        elif not delayed:
            return False
    return cfg[C_CREDIT_SHOOTERS] != 0 or h >= 1


#: attack_wave metric order before the per-crew kills_<crew>, hits_<crew> (spec §3.2)
WAVE_METRICS = ("destroyed", "destroyed_before_firing", "damaged", "tocado", "intact",
                "fighters_firing", "firing_plus0", "firing_plus2", "firing_plus4",
                "p_any_destroyed", "guns_firing", "hits_total", "kills_total")


@jit
def wave_values(cfg, n_f, f_final, f_class, n_shots, shot_h, kills_crew, hits_crew, values):
    """The per-trial values of ``attack_wave`` (``WAVE_METRICS``, then kills and hits per crew)."""
    danado_at, destroyed_at, tocado_at = cfg[C_DANADO_AT], cfg[C_DESTROYED_AT], cfg[C_TOCADO_AT]
    for m in range(values.shape[0]):
        values[m] = 0
    for f in range(n_f):
        final = f_final[f]
        if final >= destroyed_at:
            values[0] += 1
        elif final >= danado_at:
            values[2] += 1
        elif final >= tocado_at:
            values[3] += 1
        else:
            values[4] += 1
        if f_class[f] == NOT_FIRING:
            values[1] += 1
        else:
            values[5] += 1
            values[6 + f_class[f]] += 1
    values[9] = 1 if values[0] > 0 else 0
    values[10] = n_shots
    total = 0
    for s in range(n_shots):
        total += shot_h[s]
    values[11] = total
    values[12] = values[0]
    n_crew = kills_crew.shape[0]
    for k in range(n_crew):
        values[13 + k] = kills_crew[k]
        values[13 + n_crew + k] = hits_crew[k]


@jit
def draw_position(state, position_cell, position_cumulative):
    """A fighter position drawn with P(cell) = weight / total (positive weights only)."""
    u = uniform01(state) * position_cumulative[position_cumulative.shape[0] - 1]
    for i in range(position_cell.shape[0]):
        if u < position_cumulative[i]:
            return position_cell[i]
    return position_cell[position_cell.shape[0] - 1]
