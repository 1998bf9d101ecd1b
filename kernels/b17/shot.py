"""One defensive shot (digest §3, §4, §5): 3d10 roll-under, damage II from the same roll.

The three dice are rolled distinguishable (:func:`kernels.dice.roll_under_identified`): die 0
is the distinguished die, the fixed quality pair is (1, 2), or (0, 1) under rule
``quality_dice: second_colour`` (A1). Damage is never rolled again and never "the two highest".
"""
from __future__ import annotations

from kernels._jit import hot_jit
from kernels.dice import roll_under_identified

#: 3d10 per shot.
SHOT_DICE = 3
D10 = 10


@hot_jit
def fighter_hits(damage, damage_per_hit):
    """§5: one hit per ``damage_per_hit`` points of damage or fraction, ``ceil(D / k)``."""
    return (damage + damage_per_hit - 1) // damage_per_hit


@hot_jit
def roll_shot(state, dice, face_offset, quality_first, modifier, skill, bonus, damage_per_hit):
    """Roll one shot. Returns ``(hit, damage, fighter hits)``; a miss is ``(False, 0, 0)``.

    §3.4: hit iff ``3d10 + modifier <= skill``. §4: ``D = quality pair + bonus`` (II: 0,
    II+2: 2). ``face_offset`` is 0 for d10 faces 1..10 and -1 for 0..9 (rule ``d10_faces``).
    """
    total = roll_under_identified(state, SHOT_DICE, D10, face_offset, dice)
    if total + modifier > skill:
        return False, 0, 0
    if quality_first:
        quality = dice[0] + dice[1]
    else:
        quality = dice[1] + dice[2]
    damage = quality + bonus
    return True, damage, fighter_hits(damage, damage_per_hit)
