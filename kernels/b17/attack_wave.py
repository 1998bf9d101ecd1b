"""Kernel of the ``attack_wave`` question: N fighters attack once (spec §3)."""
from __future__ import annotations

import numpy as np
from numba import prange

from kernels._jit import parallel_jit
from kernels.b17.attack import WAVE_METRICS, defensive_fire, draw_position, finish_attack, wave_values
from kernels.b17.shot import SHOT_DICE
from kernels.record import N_MOMENTS, chunk_trials, record
from kernels.rng import STATE_WORDS, seed_stream

N_WAVE_METRICS = len(WAVE_METRICS)


@parallel_jit
def attack_wave_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, model, cfg,
                       f_type, f_cell_fixed, f_prior, position_cell, position_cumulative,
                       gun_ok, intercom_ok, n_crew):
    """Per-chunk (hist, moments) of ``WAVE_METRICS`` + ``kills_<crew>`` + ``hits_<crew>``.

    ``f_cell_fixed[f] = -1`` marks a fighter whose position is drawn per trial from
    ``position_cell`` / ``position_cumulative`` (independently, in index order).
    """
    n_chunks = chunk_hi - chunk_lo
    n_f = f_type.shape[0]
    n_shooters = model[0].shape[0] - 1
    n_metrics = N_WAVE_METRICS + 2 * n_crew
    hist = np.zeros((n_chunks, n_metrics, n_bins), np.int64)
    moments = np.zeros((n_chunks, n_metrics, N_MOMENTS), np.int64)
    for c in prange(n_chunks):
        state = np.empty(STATE_WORDS, np.uint64)
        dice = np.empty(SHOT_DICE, np.int64)
        values = np.zeros(n_metrics, np.int64)
        f_cell = np.empty(n_f, np.int64)
        assigned = np.zeros(n_f, np.int64)
        running = np.zeros(n_f, np.int64)
        f_final = np.zeros(n_f, np.int64)
        f_class = np.zeros(n_f, np.int64)
        shot_gun = np.zeros(n_shooters, np.int64)
        shot_f = np.zeros(n_shooters, np.int64)
        shot_delayed = np.zeros(n_shooters, np.bool_)
        shot_h = np.zeros(n_shooters, np.int64)
        kills_crew = np.zeros(n_crew, np.int64)
        hits_crew = np.zeros(n_crew, np.int64)
        crew_mark = np.zeros(n_crew, np.int64)
        chunk = chunk_lo + c
        seed_stream(state, seed, key, chunk)
        for _ in range(chunk_trials(chunk, chunk_size, n_trials)):
            for f in range(n_f):
                if f_cell_fixed[f] >= 0:
                    f_cell[f] = f_cell_fixed[f]
                else:
                    f_cell[f] = draw_position(state, position_cell, position_cumulative)
            n_shots = defensive_fire(state, dice, model, cfg, n_f, f_type, f_cell, f_prior, gun_ok,
                                     intercom_ok, assigned, running, shot_gun, shot_f, shot_delayed, shot_h)
            kills_crew[:] = 0
            hits_crew[:] = 0
            finish_attack(model, cfg, n_f, f_prior, n_shots, shot_gun, shot_f, shot_delayed, shot_h,
                          f_final, f_class, kills_crew, hits_crew, crew_mark)
            wave_values(cfg, n_f, f_final, f_class, n_shots, shot_h, kills_crew, hits_crew, values)
            record(hist, moments, c, values)
    return hist, moments
