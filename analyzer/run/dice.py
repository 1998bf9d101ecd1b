"""Public API of the dice primitives: validated inputs, Monte-Carlo histograms.

Each function checks its arguments (raising ``ValueError`` naming the parameter and the
allowed range before any kernel runs), runs the chunked kernel of :mod:`kernels.dice`
batch by batch (constant memory in the number of trials) and returns integer counts.
The exact counterparts live in :mod:`analyzer.core.exact`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernels import dice as _k
from analyzer.run.batches import batch_ranges, chunk_count
from kernels.driver import CHUNK_TRIALS


def _need_int(name: str, value, lo: int, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name}: got {value!r}; must be an integer in [{lo}, {hi if hi is not None else 'inf'}]")
    if value < lo or (hi is not None and value > hi):
        raise ValueError(f"{name}: got {value}; allowed range [{lo}, {hi if hi is not None else 'inf'}]")
    return int(value)


def hit_table(hit_on: int = 4, double_on: int | None = 6, explode_on: int | None = 6,
              sides: int = 6) -> tuple[np.ndarray, np.ndarray]:
    """Face tables for a success pool: natural ``>= hit_on`` scores 1, ``>= double_on``
    scores 2, ``>= explode_on`` rolls one more die (the defaults: 4, 6, 6).

    Use ``explode_on=None`` for pools that never explode (rout tests, AA/CC cancellation).
    """
    sides = _need_int("sides", sides, 2, 1000)
    hit_on = _need_int("hit_on", hit_on, 1, sides)
    if double_on is not None:
        double_on = _need_int("double_on", double_on, 1, sides)
    if explode_on is not None:
        explode_on = _need_int("explode_on", explode_on, 2, sides)
    value = np.zeros(sides + 1, np.int64)
    explodes = np.zeros(sides + 1, np.bool_)
    for face in range(1, sides + 1):
        if face >= hit_on:
            value[face] = 2 if double_on is not None and face >= double_on else 1
        if explode_on is not None and face >= explode_on:
            explodes[face] = True
    return value, explodes


#: The default cancelling pool (defence dice rolled against a pool's hits): a 5 cancels 1 hit, a 6 cancels 2.
CANCEL_TABLE = hit_table(hit_on=5, double_on=6, explode_on=None)


def _check_table(face_value, face_explodes) -> tuple[np.ndarray, np.ndarray]:
    fv = np.ascontiguousarray(face_value, dtype=np.int64)
    fe = np.ascontiguousarray(face_explodes, dtype=np.bool_)
    if fv.ndim != 1 or fv.shape[0] < 3 or fe.shape != fv.shape:
        raise ValueError("face_value / face_explodes: must be 1-D of equal length sides + 1 "
                         "(index 0 unused), sides >= 2")
    if (fv < 0).any():
        raise ValueError("face_value: values must be >= 0")
    if fe[1:].all():
        raise ValueError("face_explodes: at least one face must not explode")
    return fv, fe


def pool_bins(n_dice: int, face_value, face_explodes, sds: float = 20.0) -> int:
    """Histogram bins for a pool of ``n_dice``: its exact mean plus ``sds`` standard
    deviations (at least 2 bins, at most 2**20).

    One die's chain is ``Y = V + X * Y'`` (``V`` the face's value, ``X`` whether it
    explodes, ``Y'`` a fresh chain), so with ``p = P(X)``:
    ``E[Y] = E[V] / (1 - p)`` and ``E[Y^2] = (E[V^2] + 2 E[VX] E[Y]) / (1 - p)``.
    Values above the last bin are still counted exactly in the moments; only the
    distribution's last bin then means "or more" (and the run says how often).
    """
    fv = np.asarray(face_value, dtype=np.float64)[1:]
    fe = np.asarray(face_explodes, dtype=np.float64)[1:]
    p = fe.mean()
    mean = fv.mean() / (1.0 - p)
    second = (np.mean(fv * fv) + 2.0 * np.mean(fv * fe) * mean) / (1.0 - p)
    sd = np.sqrt(max(second - mean * mean, 0.0))
    top = n_dice * mean + sds * sd * np.sqrt(max(n_dice, 1)) + sds * fv.max()
    return int(min(max(np.ceil(top) + 2, 2), 2 ** 20))


def _batches(trials: int):
    return batch_ranges(chunk_count(trials))


@dataclass
class PoolCounts:
    counts: np.ndarray           # counts[value] over trials (last bin = "or more")
    explosion_caps_hit: int      # chains cut by kernels.dice.EXPLOSION_DEPTH_CAP
    dice_rolled: int
    clipped: int                 # trials whose value exceeded the last bin
    total: int                   # exact sum of the values over all trials
    total_sq: int                # exact sum of their squares
    at_least_need: int           # trials whose value was >= need (exact, whatever the bins)


def simulate_pool(n_dice: int, face_value, face_explodes, *, trials: int, seed: int, key: int = 0,
                  cancel_dice: int = 0, cancel_value=None, n_bins: int | None = None,
                  need: int = 1) -> PoolCounts:
    """Histogram of ``max(0, pool - cancellations)`` over ``trials`` trials, with its
    exact moments and how many trials reached ``need``."""
    n_dice = _need_int("n_dice", n_dice, 0, 10_000)
    cancel_dice = _need_int("cancel_dice", cancel_dice, 0, 10_000)
    trials = _need_int("trials", trials, 1)
    need = _need_int("need", need, 0)
    fv, fe = _check_table(face_value, face_explodes)
    table = _k.pool_table(fv, fe)
    cancel = _k.pool_table(*(CANCEL_TABLE if cancel_value is None else
                             (cancel_value, np.zeros(len(cancel_value), np.bool_))))
    if n_bins is None:
        n_bins = pool_bins(n_dice, fv, fe)
    n_bins = _need_int("n_bins", n_bins, 2)
    counts = np.zeros(n_bins, np.int64)
    moments = np.zeros((2, 3), np.int64)
    counters = np.zeros(2, np.int64)
    for lo, hi in _batches(trials):
        h, m, c = _k.pool_kernel(seed, key, lo, hi, CHUNK_TRIALS, trials, n_bins,
                                 (n_dice, *table, cancel_dice, *cancel, need))
        counts += h[:, 0].sum(axis=0)
        moments += m.sum(axis=0)
        counters += c.sum(axis=0)
    return PoolCounts(counts, int(counters[0]), int(counters[1]), int(moments[0, 2]),
                      int(moments[0, 0]), int(moments[0, 1]), int(moments[1, 0]))


def simulate_roll_under(*, trials: int, seed: int, key: int = 0, n_dice: int = 3, sides: int = 10,
                        face_offset: int = 0) -> np.ndarray:
    """``counts[total, quality]`` of identified dice (B-17 3d10; ``face_offset=-1`` for 0-9)."""
    n_dice = _need_int("n_dice", n_dice, 2, 10)
    sides = _need_int("sides", sides, 2, 100)
    face_offset = _need_int("face_offset", face_offset, -1, 0)
    trials = _need_int("trials", trials, 1)
    max_face = sides + face_offset
    totals, qualities = n_dice * max_face + 1, (n_dice - 1) * max_face + 1
    out = np.zeros(totals * qualities, np.int64)
    for lo, hi in _batches(trials):
        h, _, _ = _k.roll_under_joint_kernel(seed, key, lo, hi, CHUNK_TRIALS, trials, totals * qualities,
                                             (n_dice, sides, face_offset, qualities))
        out += h[:, 0].sum(axis=0)
    return out.reshape(totals, qualities)


def simulate_count(n_dice: int, sides: int, target: int, *, trials: int, seed: int, key: int = 0) -> np.ndarray:
    """``counts[k]``: trials where exactly k of ``n_dice`` rolled >= ``target``."""
    n_dice = _need_int("n_dice", n_dice, 0, 10_000)
    sides = _need_int("sides", sides, 2, 1000)
    target = _need_int("target", target, 1, sides)
    trials = _need_int("trials", trials, 1)
    out = np.zeros(n_dice + 1, np.int64)
    for lo, hi in _batches(trials):
        h, _, _ = _k.count_kernel(seed, key, lo, hi, CHUNK_TRIALS, trials, n_dice + 1, (n_dice, sides, target, 0))
        out += h[:, 0].sum(axis=0)
    return out


def simulate_modified_roll(sides: int, modifier: int = 0, *, trials: int, seed: int, key: int = 0) -> dict[int, int]:
    """{modified roll: count} of one d``sides`` + ``modifier``."""
    sides = _need_int("sides", sides, 2, 1000)
    modifier = _need_int("modifier", modifier, -1000, 1000)
    trials = _need_int("trials", trials, 1)
    out = np.zeros(sides, np.int64)
    for lo, hi in _batches(trials):
        h, _, _ = _k.die_kernel(seed, key, lo, hi, CHUNK_TRIALS, trials, sides, (sides,))
        out += h[:, 0].sum(axis=0)
    return {face + 1 + modifier: int(c) for face, c in enumerate(out)}
