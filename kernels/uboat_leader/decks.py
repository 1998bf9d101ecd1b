"""Card decks as arrays: draw without replacement, reshuffle the discards when empty.

Digest §2.3: "coge los descartes, y barájalos para formar un nuevo mazo". A deck ``d`` is
``dk[d, DK_CARDS, :dn[d, DECK_LEFT]]`` (the undrawn cards, in no particular order) and
``dk[d, DK_DISCARDS, :dn[d, DECK_DISCARDS]]``. A draw takes a uniformly chosen undrawn card
(a partial Fisher-Yates shuffle: the sequence of draws is a uniform random permutation, as
drawing from the top of a shuffled deck). ``dk[d, DK_IN_PLAY, card]`` is 1 while a drawn
card is out of the deck; drawing a card that is in play is counted in
``counters[CT_DUPLICATE_CARD]`` (the kernel's own check that decks never repeat a card;
the tests assert it stays 0).
"""
from __future__ import annotations


from kernels._jit import unmanaged_jit
from kernels.rng import roll_die
from kernels.uboat_leader.state import (CT_DRAW_FAILED, CT_DRAWS, CT_DUPLICATE_CARD, CT_RESHUFFLES,
                                        DECK_DISCARDS, DECK_LEFT, DK_CARDS, DK_DISCARDS, DK_IN_PLAY)


@unmanaged_jit
def deck_reset(dk, dn, d, size):
    """A full, fresh deck of cards ``0..size-1``, no discards, nothing in play."""
    for i in range(size):
        dk[d, DK_CARDS, i] = i
        dk[d, DK_IN_PLAY, i] = 0
    dn[d, DECK_LEFT] = size
    dn[d, DECK_DISCARDS] = 0


@unmanaged_jit
def deck_draw(state, dk, dn, d, counters):
    """Draw one card from deck ``d``; -1 (counted) only if deck and discards are empty."""
    n = dn[d, DECK_LEFT]
    if n == 0:
        n = dn[d, DECK_DISCARDS]
        if n == 0:
            counters[CT_DRAW_FAILED] += 1
            return -1
        for i in range(n):  # the discards become the new deck (drawn in random order below)
            dk[d, DK_CARDS, i] = dk[d, DK_DISCARDS, i]
        dn[d, DECK_DISCARDS] = 0
        counters[CT_RESHUFFLES] += 1
    j = roll_die(state, n) - 1
    card = dk[d, DK_CARDS, j]
    dk[d, DK_CARDS, j] = dk[d, DK_CARDS, n - 1]
    dk[d, DK_CARDS, n - 1] = card
    dn[d, DECK_LEFT] = n - 1
    if dk[d, DK_IN_PLAY, card] != 0:
        counters[CT_DUPLICATE_CARD] += 1
    dk[d, DK_IN_PLAY, card] = 1
    counters[CT_DRAWS] += 1
    return card


@unmanaged_jit
def deck_discard(dk, dn, d, card):
    """Put a drawn card on deck ``d``'s discard pile."""
    k = dn[d, DECK_DISCARDS]
    dk[d, DK_DISCARDS, k] = card
    dn[d, DECK_DISCARDS] = k + 1
    dk[d, DK_IN_PLAY, card] = 0
