"""The exact single-shot law (spec §0.2): all 1000 ordered 3d10 outcomes, equally likely.

Used by exact mode, by the ``max_kill_probability`` policy (integer counts out of 1000, so
policies never compare floats) and by ``gun_matrix``'s choice of the gun a shooter fires.
"""
from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np

N_OUTCOMES = 1000


@lru_cache(maxsize=4)
def _dice(face_offset: int) -> np.ndarray:
    faces = range(1 + face_offset, 11 + face_offset)
    return np.array(list(itertools.product(faces, repeat=3)), dtype=np.int64)


@lru_cache(maxsize=4096)
def outcomes(modifier: int, skill: int, bonus: int, damage_per_hit: int, face_offset: int,
             quality_first: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per outcome: ``(hit, damage, fighter hits)`` arrays of length 1000 (digest §3-§5).

    Hit iff ``d0 + d1 + d2 + modifier <= skill``; damage = the quality pair of the same roll
    + bonus (0 on a miss); hits = ``ceil(damage / damage_per_hit)``.
    """
    d = _dice(face_offset)
    hit = d.sum(axis=1) + modifier <= skill
    quality = d[:, 0] + d[:, 1] if quality_first else d[:, 1] + d[:, 2]
    damage = np.where(hit, quality + bonus, 0)
    hits = -(-damage // damage_per_hit)
    for a in (hit, damage, hits):
        a.setflags(write=False)
    return hit, damage, hits


def hits_law(modifier, skill, bonus, damage_per_hit, face_offset, quality_first) -> np.ndarray:
    """Counts (out of 1000) of the fighter hits ``h`` of one shot, indexed by h."""
    _, _, h = outcomes(modifier, skill, bonus, damage_per_hit, face_offset, quality_first)
    return np.bincount(h)


def kill_and_hit_counts(modifier, skill, bonus, damage_per_hit, prior_hits, destroyed_at,
                        face_offset, quality_first) -> tuple[int, int]:
    """Outcomes (out of 1000) that alone bring the fighter to destroyed, and that hit (§0.2)."""
    hit, _, h = outcomes(modifier, skill, bonus, damage_per_hit, face_offset, quality_first)
    return int(np.count_nonzero(hit & (prior_hits + h >= destroyed_at))), int(np.count_nonzero(hit))


def distribution(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(values, probabilities) of equally likely per-outcome values."""
    v, n = np.unique(values, return_counts=True)
    return v.astype(np.int64), n / values.shape[0]
