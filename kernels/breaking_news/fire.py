"""Fire and saves on one target figure (source §8, §9): the primitives of every shooting kernel.

A shot is compiled in Python to ``(dice, hit_face)``; a save to the lowest natural face that
saves (``save_face``, at least 2: "saque un 1, siempre resultará muerto").
"""
from __future__ import annotations

from kernels._jit import hot_jit, unmanaged_jit
from kernels.rng import roll_die


@hot_jit
def roll_hits(state, dice, hit_face):
    """Hits of ``dice`` D6 needing ``hit_face`` each (§8); a face above 6 never hits."""
    if dice <= 0 or hit_face > 6:
        return 0
    hits = 0
    for _ in range(dice):
        if roll_die(state, 6) >= hit_face:
            hits += 1
    return hits


@unmanaged_jit
def survives_hits(state, hits, save_face):
    """True when the figure passes one save per hit (§9: "una tirada por cada impacto");
    the first failed save removes it, so the remaining saves are not rolled."""
    for _ in range(hits):
        if roll_die(state, 6) < save_face:
            return False
    return True
