"""Kernel of the ``mission`` question: attack waves with state carried between them (spec §4).

Per wave: returning fighters (index order) + new arrivals, defensive fire (§3.1 steps 1-2),
the PLACEHOLDER fighter-fire model (not in the source; off by default), delayed hits and kill
credit (§3.1 steps 4-6), then destroyed fighters are gone, damaged (dañado) ones leave and the
others return next wave with ``return_probability`` keeping their hits (tocado: +2).
"""
from __future__ import annotations

import numpy as np

from kernels._jit import hot_jit, jit, parallel_jit, unmanaged_jit
from kernels.b17.attack import (C_DANADO_AT, C_DESTROYED_AT, C_FACE_OFFSET, C_POLICY, C_RETARGET, C_SAMPLING,
                                MAX_FIGHTERS, NOT_FIRING, POLICY_SPREAD, SAMPLING_TABLE, SHOT_COLUMNS, SHOT_HITS,
                                SHOT_OUTCOMES, defensive_fire, draw_position, finish_attack, guns_by_position,
                                plan_by_position, roll_planned)
from kernels.b17.shot import D10, SHOT_DICE
from kernels.dice import roll_under_identified
from kernels.driver import run_trials
from kernels.rng import roll_die, uniform01, uniform_int

#: mission metric order before the per-crew kills_<crew>, hits_<crew> (spec §4)
MISSION_METRICS = ("kills_total", "hits_total", "vp", "destroyed_before_firing_total", "damaged_total",
                   "fighters_engaged", "fighter_attacks", "fighters_withdrawn", "fighters_remaining",
                   "bomber_hits", "guns_lost", "p_intercom_lost")
N_MISSION_METRICS = len(MISSION_METRICS)

FIRE_NONE = 0               # fighter_fire.model: none
FIRE_PLACEHOLDER_3D10 = 1   # fighter_fire.model: placeholder_3d10
EFFECT_NONE = 0
EFFECT_GUN_OUT = 1
EFFECT_INTERCOM_OUT = 2
#: ``sampling: table``: outcomes of one fighter's fire, ``fire_outcome[class, u]`` over the
#: FIRE_OUTCOMES ordered (3d10 hit roll, d10 effect roll) outcomes: a miss, or a hit with
#: effect ``outcome - FIRE_HIT`` (``EFFECT_*``)
FIRE_MISS = 0
FIRE_HIT = 1
FIRE_OUTCOMES = SHOT_OUTCOMES * 10


@hot_jit
def drawn_fire_outcome(state, fire_outcome, fire_class):
    """The PLACEHOLDER fighter fire (3d10 + penalty <= skill, then a d10 effect) in one draw:
    a uniform index over the 10,000 equally likely ordered (3d10, d10) outcomes, looked up in
    ``fire_outcome[fire_class]`` (built from the same rule by
    ``analyzer.games.b17.mission.fire_outcome_table``)."""
    return fire_outcome[fire_class, roll_die(state, FIRE_OUTCOMES) - 1]


@jit
def mission_workspace(args):
    """Per-chunk scratch: the fighters present and returning, one wave's fire, crew credit, guns,
    and the guns that reach each position (:func:`kernels.b17.attack.guns_by_position`)."""
    shooter_start = args[0]
    n_crew = args[15]
    gun_ok_start = args[13]
    n_shooters = shooter_start.shape[0] - 1
    return (np.empty(SHOT_DICE, np.int64),
            np.zeros(MAX_FIGHTERS, np.int64), np.zeros(MAX_FIGHTERS, np.int64), np.zeros(MAX_FIGHTERS, np.int64),
            np.zeros(MAX_FIGHTERS, np.int64), np.zeros(MAX_FIGHTERS, np.int64), np.zeros(MAX_FIGHTERS, np.int64),
            np.zeros(MAX_FIGHTERS, np.int64), np.zeros(MAX_FIGHTERS, np.int64), np.zeros(MAX_FIGHTERS, np.int64),
            np.zeros(MAX_FIGHTERS, np.int64), np.zeros(MAX_FIGHTERS, np.int64),
            np.zeros((n_shooters, SHOT_COLUMNS), np.int64), np.zeros(n_crew, np.int64), np.zeros(n_crew, np.int64),
            np.zeros(n_crew, np.int64), np.zeros(gun_ok_start.shape[0], np.bool_),
            guns_by_position(shooter_start, args[1], args[2]))


@unmanaged_jit
def mission_trial(state, values, counters, ws, args):
    """One mission: values of ``MISSION_METRICS`` + ``kills_<crew>`` + ``hits_<crew>``.

    The bomber arrays are described in :mod:`kernels.b17.attack`. Arrivals of wave w are
    ``wave_start[w]:wave_start[w+1]``; ``arrival_cell = -1`` draws a position.
    ``fire_penalty[class]`` is the fighter's own penalty (+0/+2/+4, §6). ``shot_law`` /
    ``law_hits`` and ``fire_outcome`` are the exact tables of ``sampling: table``
    (:func:`kernels.b17.attack.drawn_hits`, :func:`drawn_fire_outcome`).
    """
    (shooter_start, shooter_guns, cells, counts, gun_table, type_table, cfg,
     wave_start, arrival_type, arrival_cell, arrival_prior, position_cell, position_cumulative,
     gun_ok_start, intercom_start, n_crew, return_probability, return_redraw, fire_model, fire_skill,
     fire_penalty, effect_kind, effect_lo, effect_hi, danado_counts_as_vp, shot_law, law_hits, fire_outcome) = args
    (dice, f_type, f_cell, f_hits, r_type, r_cell, r_hits, assigned, running, f_final, f_class, f_delayed,
     shots, kills_crew, hits_crew, crew_mark, gun_ok, by_position) = ws
    position_start, position_shooter, position_gun = by_position
    n_shooters = shooter_start.shape[0] - 1
    planned = cfg[C_RETARGET] == 0 and cfg[C_POLICY] != POLICY_SPREAD
    n_metrics = values.shape[0]
    n_waves = wave_start.shape[0] - 1
    n_guns = gun_ok_start.shape[0]
    destroyed_at = cfg[C_DESTROYED_AT]
    danado_at = cfg[C_DANADO_AT]
    for m in range(n_metrics):
        values[m] = 0
    for k in range(n_crew):
        kills_crew[k] = 0
        hits_crew[k] = 0
    for g in range(n_guns):
        gun_ok[g] = gun_ok_start[g]
    intercom_ok = intercom_start
    table = cfg[C_SAMPLING] == SAMPLING_TABLE
    n_return = 0
    for w in range(n_waves):
        # 1. present = returning fighters (index order) + this wave's arrivals
        n_f = 0
        for i in range(n_return):
            f_type[n_f] = r_type[i]
            f_cell[n_f] = r_cell[i]
            f_hits[n_f] = r_hits[i]
            n_f += 1
        for a in range(wave_start[w], wave_start[w + 1]):
            f_type[n_f] = arrival_type[a]
            if arrival_cell[a] >= 0:
                f_cell[n_f] = arrival_cell[a]
            else:
                f_cell[n_f] = draw_position(state, position_cell, position_cumulative)
            f_hits[n_f] = arrival_prior[a]
            n_f += 1
            values[5] += 1
        n_return = 0
        if n_f == 0:
            continue
        # 2. defensive fire with the current intercom / guns
        if planned:         # defensive_fire's keep_firing path, declared on the guns that reach each fighter
            n_shots = plan_by_position(position_start, position_shooter, position_gun, n_shooters, cells, counts,
                                       type_table, cfg, n_f, f_type, f_cell, f_hits, gun_ok, intercom_ok, shots)
            roll_planned(state, dice, cells, gun_table, type_table, cfg, f_type, f_cell, n_shots, shots, shot_law,
                         law_hits)
        else:
            n_shots = defensive_fire(state, dice, shooter_start, shooter_guns, cells, counts, gun_table,
                                     type_table, cfg, n_f, f_type, f_cell, f_hits, gun_ok, intercom_ok,
                                     assigned, running, shots, shot_law, law_hits)
        finish_attack(gun_table, cfg, n_f, f_hits, n_shots, shots, f_final, f_class, f_delayed, kills_crew,
                      hits_crew, crew_mark)
        # 3. fighter fire (PLACEHOLDER model): effects act from the next wave on
        for f in range(n_f):
            if f_class[f] == NOT_FIRING:
                values[3] += 1
                continue
            values[6] += 1
            if fire_model != FIRE_PLACEHOLDER_3D10:
                continue
            if table:
                outcome = drawn_fire_outcome(state, fire_outcome, f_class[f])
                if outcome == FIRE_MISS:
                    continue
                values[9] += 1
                effect = outcome - FIRE_HIT
            else:
                total = roll_under_identified(state, SHOT_DICE, D10, cfg[C_FACE_OFFSET], dice)
                if total + fire_penalty[f_class[f]] > fire_skill:
                    continue
                values[9] += 1
                e = roll_die(state, D10)
                effect = EFFECT_NONE
                for k in range(effect_kind.shape[0]):
                    if effect_lo[k] <= e <= effect_hi[k]:
                        effect = effect_kind[k]
                        break
            if effect == EFFECT_GUN_OUT:
                n_working = 0
                for g in range(n_guns):
                    if gun_ok[g]:
                        n_working += 1
                if n_working > 0:
                    pick = uniform_int(state, n_working)
                    for g in range(n_guns):
                        if gun_ok[g]:
                            if pick == 0:
                                gun_ok[g] = False
                                break
                            pick -= 1
                    values[10] += 1
            elif effect == EFFECT_INTERCOM_OUT:
                intercom_ok = False
        # 4-5. final states; survivors (intact / tocado) may return with their hits
        for s in range(n_shots):
            values[1] += shots[s, SHOT_HITS]
        n_survivors = 0
        for f in range(n_f):
            if f_final[f] >= destroyed_at:
                values[0] += 1
            elif f_final[f] >= danado_at:
                values[4] += 1                  # leaves damaged: no kill (A8)
            else:
                r_type[n_survivors] = f_type[f]
                r_cell[n_survivors] = f_cell[f]
                r_hits[n_survivors] = f_final[f]
                n_survivors += 1
        if w == n_waves - 1:
            values[8] = n_survivors
            break
        for i in range(n_survivors):
            if return_probability >= 1.0 or uniform01(state) < return_probability:
                r_type[n_return] = r_type[i]
                r_hits[n_return] = r_hits[i]
                if return_redraw:
                    r_cell[n_return] = draw_position(state, position_cell, position_cumulative)
                else:
                    r_cell[n_return] = r_cell[i]
                n_return += 1
            else:
                values[7] += 1
    values[2] = values[0] + (values[4] if danado_counts_as_vp else 0)
    values[11] = 1 if intercom_start and not intercom_ok else 0
    for k in range(n_crew):
        values[N_MISSION_METRICS + k] = kills_crew[k]
        values[N_MISSION_METRICS + n_crew + k] = hits_crew[k]


@parallel_jit
def mission_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """Per-chunk (hist, moments, counters) of the mission's metrics (:mod:`kernels.driver`)."""
    return run_trials(mission_trial, mission_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size,
                      n_trials, N_MISSION_METRICS + 2 * args[15], n_bins, 0)
