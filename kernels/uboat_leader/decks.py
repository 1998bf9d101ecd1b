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

import numpy as np
from numba import prange

from kernels._jit import parallel_jit
from kernels.record import chunk_trials
from kernels.rng import STATE_WORDS, roll_die, seed_stream
from kernels._jit import unmanaged_jit
from kernels.uboat_leader.state import (CT_DRAW_FAILED, CT_DRAWS, CT_DUPLICATE_CARD, CT_RESHUFFLES,
                                        DECK_DISCARDS, DECK_LEFT, DK_CARDS, DK_DISCARDS, DK_IN_PLAY,
                                        N_COUNTERS)


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


@parallel_jit
def deck_sequences(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, size, draws, discard_after):
    """Test kernel: per trial, draw ``draws`` cards from a fresh deck of ``size``; the first
    time the deck runs out, the first ``discard_after`` cards drawn go to the discards.

    Returns ``(seq[trial, draw], counters[chunk, N_COUNTERS])`` (trials of chunks
    ``chunk_lo..chunk_hi``; a failed draw is -1).
    """
    n_chunks = chunk_hi - chunk_lo
    seq = np.full((n_chunks * chunk_size, draws), -2, np.int64)
    counters = np.zeros((n_chunks, N_COUNTERS), np.int64)
    for c in prange(n_chunks):
        state = np.empty(STATE_WORDS, np.uint64)
        seed_stream(state, seed, key, chunk_lo + c)
        dk = np.zeros((1, 3, size), np.int64)
        dn = np.zeros((1, 2), np.int64)
        cnt = np.zeros(N_COUNTERS, np.int64)
        d = np.int64(0)  # a run-time int: no extra compiled copy of the deck functions
        for t in range(chunk_trials(chunk_lo + c, chunk_size, n_trials)):
            deck_reset(dk, dn, d, size)
            row = c * chunk_size + t
            discarded = False
            for i in range(draws):
                if not discarded and dn[0, DECK_LEFT] == 0:
                    for k in range(min(discard_after, i)):
                        deck_discard(dk, dn, d, seq[row, k])
                    discarded = True
                seq[row, i] = deck_draw(state, dk, dn, d, cnt)
        counters[c, :] = cnt
    return seq, counters
