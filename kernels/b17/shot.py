"""One defensive shot (digest §3, §4, §5): 3d10 roll-under, damage II from the same roll.

A kernel rolls the three dice with :func:`kernels.dice.roll_under_identified` (die 0 is the
distinguished die) and hands the dice to :func:`shot_damage`: the fixed quality pair is
(1, 2), or (0, 1) under rule ``quality_dice: second_colour`` (A1). Damage is never rolled
again and never "the two highest".

The helpers take scalars only: a helper that takes the stream state or the dice array costs
about five times the roll itself (measured: array arguments are reference-counted per call).
"""
from __future__ import annotations

from kernels._jit import jit

#: 3d10 per shot.
SHOT_DICE = 3
D10 = 10
#: ``shot_damage`` of a miss (a hit can do 0 damage with faces 0..9).
MISS = -1


@jit
def shot_damage(total, d0, d1, d2, quality_first, modifier, skill, bonus):
    """§3.4: hit iff ``3d10 + modifier <= skill``; §4: damage = quality pair + bonus (II: 0,
    II+2: 2). Returns the damage, or ``MISS``."""
    if total + modifier > skill:
        return MISS
    if quality_first:
        return d0 + d1 + bonus
    return d1 + d2 + bonus


@jit
def fighter_hits(damage, damage_per_hit):
    """§5: one hit per ``damage_per_hit`` points of damage or fraction, ``ceil(D / k)``; 0 on a miss."""
    if damage <= 0:
        return 0
    return (damage + damage_per_hit - 1) // damage_per_hit
