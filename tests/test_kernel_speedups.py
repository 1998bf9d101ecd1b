"""The speed-ups of issue 32 change no result: each faster path against the path it replaces, on
the same inputs, to the last bit (the golden hashes of every shipped scenario check the same
end to end).

- the chunk driver's histogram-only recording (:func:`kernels.record.record_histogram` and
  :func:`kernels.record.moments_from_histogram`) against the per-trial moments
  (:func:`kernels.record.record_trial`), values in range, above the top bin and negative;
- the dice primitives' own chunk loops (``count_kernel``, ``roll_under_kernel``) against the same
  trials on the driver (their ``driver_twin``), partial chunks and clipped bins included, 1 and 2
  threads;
- the B-17 declaration on the guns that reach each position
  (:func:`kernels.b17.attack.plan_by_position`, the mission's) against
  :func:`kernels.b17.attack.plan_attack` on random situations of the shipped bomber, both
  policies it serves.
"""
from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels import dice as dk
from kernels import record


def _record_both(values_by_trial: np.ndarray, n_bins: int):
    n_metrics = values_by_trial.shape[1]
    hist_a = np.zeros((n_metrics, n_bins), np.int64)
    mom_a = np.zeros((n_metrics, record.N_MOMENTS), np.int64)
    hist_b = np.zeros((n_metrics, n_bins), np.int64)
    off = np.zeros((n_metrics, record.N_MOMENTS), np.int64)
    mom_b = np.zeros((n_metrics, record.N_MOMENTS), np.int64)
    for row in values_by_trial:
        record.record_trial(hist_a, mom_a, row)
        record.record_histogram(hist_b, off, row)
    record.moments_from_histogram(hist_b, off, mom_b)
    return (hist_a, mom_a), (hist_b, mom_b)


@pytest.mark.parametrize("n_bins", [1, 2, 7, 40])
def test_histogram_only_recording_gives_the_per_trial_sums(n_bins):
    """Sums, sums of squares, clipped counts and histograms agree exactly, whatever the values:
    in range, above the top bin (clipped into it), negative (into bin 0), and large."""
    rng = np.random.default_rng(n_bins)
    values = np.concatenate([rng.integers(0, n_bins, (500, 3)), rng.integers(-5, 3 * n_bins + 5, (500, 3)),
                             rng.integers(0, 10**6, (20, 3))])
    values = np.ascontiguousarray(rng.permutation(values))
    (hist_a, mom_a), (hist_b, mom_b) = _record_both(values, n_bins)
    np.testing.assert_array_equal(hist_a, hist_b)
    np.testing.assert_array_equal(mom_a, mom_b)
    assert mom_a[:, 2].sum() > 0                          # some values were clipped


@pytest.mark.parametrize("own,driver,args,n_bins", [
    (dk.count_kernel, dk.count_kernel_on_driver, (2, 6, 5, 1), 3),
    (dk.count_kernel, dk.count_kernel_on_driver, (7, 10, 3, 4), 8),
    (dk.count_kernel, dk.count_kernel_on_driver, (0, 6, 4, 0), 1),
    (dk.count_kernel, dk.count_kernel_on_driver, (3, 6, 2, 2), 2),
    (dk.count_kernel, dk.count_kernel_on_driver, (12, 20, 11, 6), 6),
    (dk.roll_under_kernel, dk.roll_under_kernel_on_driver, (3, 10, 0, 15, 0), 20),
    (dk.roll_under_kernel, dk.roll_under_kernel_on_driver, (3, 10, -1, 12, 2), 10),
    (dk.roll_under_kernel, dk.roll_under_kernel_on_driver, (4, 6, 0, 14, -3), 40),
    (dk.roll_under_kernel, dk.roll_under_kernel_on_driver, (2, 100, 0, 120, 0), 8)])
def test_dice_primitive_own_loop_equals_the_driver(own, driver, args, n_bins):
    """Every chunk's histogram, moments (clipped bins included) and counters, partial last chunk,
    on 1 and 2 threads."""
    try:
        for threads in (1, 2):
            numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
            mine = own(3, 11, 0, 5, 4096, 4 * 4096 + 17, n_bins, args)
            theirs = driver(3, 11, 0, 5, 4096, 4 * 4096 + 17, n_bins, args)
            for a, b in zip(mine, theirs):
                np.testing.assert_array_equal(a, b)
    finally:
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)


def _mission_bomber():
    from analyzer.core import scenario as scenario_mod
    from analyzer.core.questions import SCENARIO_ROOT
    from analyzer.run.runner import prepare_point

    sc = scenario_mod.load(SCENARIO_ROOT / "b17" / "mission_5_waves.yaml", trials_guard=False)
    return prepare_point(sc, sc.points[0]).args


@pytest.mark.parametrize("policy", ["focus", "max_kill"])
def test_declaring_on_the_guns_that_reach_each_position_is_plan_attack(policy):
    """The mission's declaration (fighter by fighter, only the guns that reach its position)
    chooses what plan_attack (shooter by shooter, every gun) chooses: the same shots in the same
    order, on 3,000 random situations (fighters, positions, hits, guns out, intercom)."""
    from kernels.b17 import attack as ka

    (shooter_start, shooter_guns, cells, counts, gun_table, type_table, cfg, *_rest) = _mission_bomber()
    cfg = cfg.copy()
    cfg[ka.C_POLICY] = ka.POLICY_FOCUS if policy == "focus" else ka.POLICY_MAX_KILL
    cfg[ka.C_RETARGET] = 0
    start, by_shooter, by_gun = ka.guns_by_position(shooter_start, shooter_guns, cells)
    n_shooters = shooter_start.shape[0] - 1
    n_guns = cells.shape[0]
    rng = np.random.default_rng(7)
    destroyed_at = int(cfg[ka.C_DESTROYED_AT])
    differing_choices = 0
    for _ in range(3000):
        n_f = int(rng.integers(1, 17))
        f_type = rng.integers(0, type_table.shape[0], ka.MAX_FIGHTERS).astype(np.int64)
        f_cell = rng.integers(0, cells.shape[1], ka.MAX_FIGHTERS).astype(np.int64)
        f_hits = rng.integers(0, destroyed_at, ka.MAX_FIGHTERS).astype(np.int64)
        gun_ok = rng.random(n_guns) > 0.15
        intercom_ok = bool(rng.random() > 0.3)
        shots_a = np.zeros((n_shooters, ka.SHOT_COLUMNS), np.int64)
        shots_b = np.zeros((n_shooters, ka.SHOT_COLUMNS), np.int64)
        assigned = np.zeros(ka.MAX_FIGHTERS, np.int64)
        running = np.zeros(ka.MAX_FIGHTERS, np.int64)
        n_a = ka.plan_attack(shooter_start, shooter_guns, cells, counts, type_table, cfg, n_f, f_type, f_cell, f_hits,
                             gun_ok, intercom_ok, assigned, running, shots_a)
        n_b = ka.plan_by_position(start, by_shooter, by_gun, n_shooters, cells, counts, type_table, cfg, n_f, f_type,
                                  f_cell, f_hits, gun_ok, intercom_ok, shots_b)
        assert n_a == n_b
        cols = [ka.SHOT_GUN, ka.SHOT_FIGHTER, ka.SHOT_DELAYED]
        np.testing.assert_array_equal(shots_a[:n_a, cols], shots_b[:n_b, cols])
        differing_choices += len({int(f) for f in shots_a[:n_a, ka.SHOT_FIGHTER]}) > 1
    assert differing_choices > 100                  # the situations make the shooters choose differently
