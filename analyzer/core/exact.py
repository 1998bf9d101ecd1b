"""Exact distributions of the dice primitives in :mod:`kernels.dice`.

Every function returns numpy probability vectors indexed by value (value 0 at index 0)
and is an oracle for the Monte-Carlo kernels. Exploding dice are an infinite series: it is
summed until the remaining mass is below ``EXPLOSION_TAIL`` and the mass left out is
returned beside the vector, never silently dropped.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

#: Stop adding explosion levels once the probability of a longer chain is below this.
EXPLOSION_TAIL = 1e-15


@dataclass(frozen=True)
class Distribution:
    """A probability vector over 0..len(probs)-1 and the mass the series left out."""

    probs: np.ndarray
    truncated_mass: float = 0.0

    @property
    def values(self) -> np.ndarray:
        return np.arange(self.probs.shape[0])

    def mean(self) -> float:
        return float(np.dot(self.values, self.probs))

    def p_at_least(self, k: int) -> float:
        return float(self.probs[max(k, 0):].sum())


def _trim(p: np.ndarray) -> np.ndarray:
    nz = np.nonzero(p > 0.0)[0]
    return p[: nz[-1] + 1] if nz.size else p[:1]


def _conv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.convolve(a, b)


def die_chain(face_value, face_explodes, tail: float = EXPLOSION_TAIL) -> Distribution:
    """Distribution of one die's total, following explosions.

    ``face_value`` / ``face_explodes`` are indexed by natural face (index 0 unused), as in
    :func:`kernels.dice.pool_total`. With ``b`` the non-exploding faces and ``e`` the
    exploding ones, the chain is ``Y = b + e * Y``; it is expanded level by level until
    the probability of a longer chain, ``P(e)**(k+1)``, is below ``tail``.
    """
    face_value = np.asarray(face_value, dtype=np.int64)
    face_explodes = np.asarray(face_explodes, dtype=bool)
    sides = face_value.shape[0] - 1
    top = int(face_value[1:].max()) + 1
    base = np.zeros(top)
    expl = np.zeros(top)
    for face in range(1, sides + 1):
        (expl if face_explodes[face] else base)[face_value[face]] += 1.0 / sides
    p_explode = expl.sum()
    if p_explode >= 1.0:
        raise ValueError("face_explodes: every face explodes, the chain never ends")
    y = base.copy()
    remaining = p_explode
    while remaining >= tail:
        y = _conv(expl, y)
        y[: base.shape[0]] += base
        remaining *= p_explode
    return Distribution(_trim(y), float(remaining) if p_explode > 0 else 0.0)


def power(dist: Distribution, n: int) -> Distribution:
    """Distribution of the sum of ``n`` independent copies (exponentiation by squaring)."""
    result = np.ones(1)
    base = dist.probs
    k = n
    while k:
        if k & 1:
            result = _conv(result, base)
        k >>= 1
        if k:
            base = _conv(base, base)
    lost = 1.0 - (1.0 - dist.truncated_mass) ** n
    return Distribution(result, lost)


def pool(n_dice: int, face_value, face_explodes, tail: float = EXPLOSION_TAIL) -> Distribution:
    """Exact distribution of :func:`kernels.dice.pool_total` for ``n_dice`` dice."""
    return power(die_chain(face_value, face_explodes, tail), n_dice)


def net_of_cancellations(hits: Distribution, cancels: Distribution) -> Distribution:
    """Distribution of ``max(0, hits - cancels)`` for independent hits and cancellations."""
    h, c = hits.probs, cancels.probs
    out = np.zeros(h.shape[0])
    # P(H - C = d) for d >= 1 by correlation; everything <= 0 lands on 0.
    for cv, pc in enumerate(c):
        if pc == 0.0:
            continue
        shifted = h[cv:]
        out[: shifted.shape[0]] += pc * shifted
        out[0] += pc * h[:cv].sum()
    # the loop put P(H - C = 0) and P(H < C) both at index 0, as wanted
    return Distribution(_trim(out), hits.truncated_mass + cancels.truncated_mass)


@lru_cache(maxsize=None)
def _roll_under_joint(n_dice: int, sides: int, face_offset: int) -> np.ndarray:
    faces = np.arange(1, sides + 1) + face_offset
    max_face = sides + face_offset
    one = np.zeros(max_face + 1)
    one[faces] = 1.0 / sides
    quality = power(Distribution(one), n_dice - 1).probs
    joint = np.zeros((n_dice * max_face + 1, (n_dice - 1) * max_face + 1))
    for q, pq in enumerate(quality):
        for f in faces:
            joint[q + f, q] += pq / sides
    joint.setflags(write=False)
    return joint


def roll_under_joint(n_dice: int = 3, sides: int = 10, face_offset: int = 0) -> np.ndarray:
    """``joint[total, quality]``: P(sum of all dice, sum of dice 1..n-1) for identified dice.

    The quality pair is fixed (never "the two highest"), as the B-17 rules require.
    """
    return _roll_under_joint(n_dice, sides, face_offset)


def roll_under(skill: int, modifier: int = 0, n_dice: int = 3, sides: int = 10,
               face_offset: int = 0) -> tuple[float, np.ndarray]:
    """P(total + modifier <= skill) and the damage (quality-sum) distribution joint with a hit.

    Returns ``(p_hit, damage)`` where ``damage[d] = P(hit and quality sum = d)``.
    """
    joint = roll_under_joint(n_dice, sides, face_offset)
    limit = skill - modifier
    hit_rows = joint[: max(0, min(limit + 1, joint.shape[0]))]
    damage = hit_rows.sum(axis=0)
    return float(damage.sum()), damage


def modified_roll(sides: int, modifier: int = 0) -> dict[int, float]:
    """Distribution of one d``sides`` + ``modifier`` as {modified roll: probability}."""
    return {face + modifier: 1.0 / sides for face in range(1, sides + 1)}


def p_roll_at_least(sides: int, target: int, modifier: int = 0) -> float:
    """P(d``sides`` + modifier >= target)."""
    return sum(p for v, p in modified_roll(sides, modifier).items() if v >= target)


def p_roll_at_most(sides: int, target: int, modifier: int = 0) -> float:
    """P(d``sides`` + modifier <= target)."""
    return sum(p for v, p in modified_roll(sides, modifier).items() if v <= target)


def count_at_least(n_dice: int, sides: int, target: int) -> Distribution:
    """Binomial distribution of how many of ``n_dice`` natural rolls are >= ``target``."""
    p = max(0, sides - target + 1) / sides
    one = np.array([1.0 - p, p])
    return power(Distribution(one), n_dice)
