"""Fire and saves on one target figure (source §8, §9): the primitives of every shooting kernel.

A shot is compiled in Python to ``(dice, hit_face)``; a save to the lowest natural face that
saves (``save_face``, at least 2: "saque un 1, siempre resultará muerto").

``sampling: table`` (firefight): :func:`drawn_hits` and :func:`drawn_survives` resolve up to
:data:`TABLE_DICE` dice with ONE uniform index over their ``6**n`` equally likely ordered
outcomes, from exact integer tables built in Python
(``analyzer.games.breaking_news.firefight.sampling_tables``): ``hits_cum[hit_face, n, h]`` =
outcomes of ``n`` dice with at most ``h`` hits, ``powers[b, n] = b**n`` (``b`` winning faces
of ``n`` dice; ``powers[6, n] = 6**n`` outcomes in all).
"""
from __future__ import annotations

from kernels._jit import hot_jit, unmanaged_jit
from kernels.rng import roll_die


#: dice resolved by one draw at most: 6**12 < 2**32, the range of one unbiased draw
#: (:func:`kernels.rng.uniform_int`); more dice take one draw per block of 12
TABLE_DICE = 12


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


@hot_jit
def drawn_hits(state, dice, hit_face, hits_cum, powers):
    """:func:`roll_hits` with one draw per block of up to :data:`TABLE_DICE` dice: a uniform
    index ``u`` over the ``6**n`` ordered outcomes gives the smallest ``h`` with
    ``u < hits_cum[hit_face, n, h]`` (exact integer counts: the binomial law of the dice),
    counted as the number of ``j < n`` with ``u >= hits_cum[hit_face, n, j]``."""
    if dice <= 0 or hit_face > 6:
        return 0
    hits = 0
    left = dice
    while left > 0:
        n = min(left, TABLE_DICE)
        u = roll_die(state, powers[6, n]) - 1
        # counted over all j, not searched: a loop that stops at h mispredicts its exit (measured:
        # the stopping search made the firefight ~8% slower than rolling the dice)
        for j in range(n):
            if u >= hits_cum[hit_face, n, j]:
                hits += 1
        left -= n
    return hits


@hot_jit
def every_die_among(state, n_dice, b, powers):
    """Whether all ``n_dice`` d6 show one of ``b`` given faces, drawn with one uniform index per
    block of up to :data:`TABLE_DICE` dice (``sampling: table``): a block's dice all do iff its
    index over the ``6**n`` ordered outcomes is below ``powers[b, n] = b**n``; the first block
    that does not ends the draws."""
    left = n_dice
    while left > 0:
        n = min(left, TABLE_DICE)
        if roll_die(state, powers[6, n]) - 1 >= powers[b, n]:
            return False
        left -= n
    return True


@hot_jit
def drawn_survives(state, hits, save_face, powers):
    """:func:`survives_hits` with one draw per block of up to :data:`TABLE_DICE` saves: the
    figure survives iff every save shows one of the ``b = 7 - save_face`` saving faces."""
    return every_die_among(state, hits, min(max(7 - save_face, 0), 6), powers)
