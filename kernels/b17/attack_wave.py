"""Kernel of the ``attack_wave`` question: N fighters attack once (spec §3)."""
from __future__ import annotations

import numpy as np

from kernels._jit import jit, parallel_jit, unmanaged_jit
from kernels.b17.attack import (SHOT_COLUMNS, WAVE_METRICS, defensive_fire, draw_position, finish_attack,
                                plan_attack, roll_planned, wave_values)
from kernels.b17.shot import SHOT_DICE
from kernels.driver import run_trials

N_WAVE_METRICS = len(WAVE_METRICS)
N_CELLS = 24
#: Declared targets are memoised per combination of drawn positions when at most this many
#: fighters draw their position (24**2 plans); more drawn fighters re-plan every trial.
MEMO_MAX_DRAWN = 2
PLAN_COLUMNS = 3        # gun, fighter, delayed


@jit
def attack_wave_workspace(args):
    """Per-chunk scratch of one wave, and the chunk's memo of declared targets."""
    (shooter_start, shooter_guns, cells, counts, gun_table, type_table, cfg, f_type, f_cell_fixed, f_prior,
     position_cell, position_cumulative, gun_ok, intercom_ok, n_crew, n_plans, shot_law, law_hits) = args
    n_f = f_type.shape[0]
    n_shooters = shooter_start.shape[0] - 1
    return (np.empty(SHOT_DICE, np.int64), np.empty(n_f, np.int64), np.zeros(n_f, np.int64),
            np.zeros(n_f, np.int64), np.zeros(n_f, np.int64), np.zeros(n_f, np.int64), np.zeros(n_f, np.int64),
            np.zeros((n_shooters, SHOT_COLUMNS), np.int64), np.zeros(n_crew, np.int64), np.zeros(n_crew, np.int64),
            np.zeros(n_crew, np.int64), np.full(max(n_plans, 1), -1, np.int64),
            np.empty((max(n_plans, 1), n_shooters, PLAN_COLUMNS), np.int64))


@unmanaged_jit
def attack_wave_trial(state, values, counters, ws, args):
    """One wave: values of ``WAVE_METRICS`` + ``kills_<crew>`` + ``hits_<crew>``.

    The bomber arrays are described in :mod:`kernels.b17.attack`. ``f_cell_fixed[f] = -1``
    marks a fighter whose position is drawn per trial from ``position_cell`` /
    ``position_cumulative`` (independently, in index order). ``shot_law`` / ``law_hits``: the
    exact shot laws of ``sampling: table`` (:func:`kernels.b17.attack.drawn_hits`).

    ``n_plans > 0`` (only when no target choice depends on a roll, ``keep_firing``): the
    declared targets of each combination of drawn positions (``24**drawn`` of them) are
    computed once per chunk (memoised in the workspace) and reused. Planning uses no random
    numbers, so the results are identical with ``n_plans = 0``.
    """
    (shooter_start, shooter_guns, cells, counts, gun_table, type_table, cfg, f_type, f_cell_fixed, f_prior,
     position_cell, position_cumulative, gun_ok, intercom_ok, n_crew, n_plans, shot_law, law_hits) = args
    (dice, f_cell, assigned, running, f_final, f_class, f_delayed, shots, kills_crew, hits_crew, crew_mark,
     plan_length, plans) = ws
    n_f = f_type.shape[0]
    plan = 0
    for f in range(n_f):
        if f_cell_fixed[f] >= 0:
            f_cell[f] = f_cell_fixed[f]
        else:
            f_cell[f] = draw_position(state, position_cell, position_cumulative)
            plan = plan * N_CELLS + f_cell[f]
    if n_plans > 0:
        if plan_length[plan] < 0:
            n = plan_attack(shooter_start, shooter_guns, cells, counts, type_table, cfg, n_f, f_type,
                            f_cell, f_prior, gun_ok, intercom_ok, assigned, running, shots)
            plan_length[plan] = n
            for k in range(n):
                for col in range(PLAN_COLUMNS):
                    plans[plan, k, col] = shots[k, col]
        n_shots = plan_length[plan]
        for k in range(n_shots):
            for col in range(PLAN_COLUMNS):
                shots[k, col] = plans[plan, k, col]
        roll_planned(state, dice, cells, gun_table, type_table, cfg, f_type, f_cell, n_shots, shots, shot_law,
                     law_hits)
    else:
        n_shots = defensive_fire(state, dice, shooter_start, shooter_guns, cells, counts, gun_table,
                                 type_table, cfg, n_f, f_type, f_cell, f_prior, gun_ok, intercom_ok,
                                 assigned, running, shots, shot_law, law_hits)
    for k in range(n_crew):
        kills_crew[k] = 0
        hits_crew[k] = 0
    finish_attack(gun_table, cfg, n_f, f_prior, n_shots, shots, f_final, f_class, f_delayed, kills_crew,
                  hits_crew, crew_mark)
    wave_values(cfg, n_f, f_final, f_class, n_shots, shots, kills_crew, hits_crew, values)


@parallel_jit
def attack_wave_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """Per-chunk (hist, moments, counters) of the wave's metrics (:mod:`kernels.driver`)."""
    n_crew = args[14]
    return run_trials(attack_wave_trial, attack_wave_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size,
                      n_trials, N_WAVE_METRICS + 2 * n_crew, n_bins, 0)
