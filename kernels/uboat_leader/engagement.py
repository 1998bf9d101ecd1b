"""One contact on the tactical display, the whole round loop in numba (spec §4).

Setup (§4.3), then rounds of U-boat movement, Bearing Movement, Escorts, Attacks (Aggressive
U-boats, enemy ships, Cautious U-boats) and End of round until every U-boat has lost contact
or been sunk, no ships remain, or the named round cap ``max_rounds`` is reached.
"""
from __future__ import annotations

import numpy as np

from kernels._jit import jit, parallel_jit
from kernels.driver import run_trials
from kernels.uboat_leader.attacks import enemy_attacks, uboat_attack
from kernels.uboat_leader.battle import crew_row, reveal_all
from kernels.uboat_leader.decks import deck_reset
from kernels.uboat_leader.movement import bearing_movement, escorts_step, uboat_movement
from kernels._jit import unmanaged_jit
from kernels.uboat_leader.state import (
    APPROACH_SUBMERGED, B_AGGRESSIVE, B_AMMO, B_AREA, B_ATTACKED, B_DETECTED, B_DIVED, B_ON,
    B_READY, B_SILENT, B_STORED, B_STRESS, B_SUNK, B_SURFACED, B_TUBES, BS_AMMO, BS_START,
    BS_STRESS0, CT_ROUND_CAP, K_APPROACH, K_DECK_SIZE, K_MAX_ROUNDS, K_N_BOATS, K_N_SHIPS,
    K_POST_STRESS, K_RELOAD, K_RELOAD_PER_ROUND, K_SR_MARKER_ROUND, KIND_E, M_P_ROUND_CAP,
    M_P_UBOAT_LOST, M_ROUNDS, M_STRESS_ADDED, M_UBOATS_LOST, N_BOAT_FIELDS, N_COUNTERS, N_DECKS,
    N_METRICS, N_SHIP_FIELDS, R_AGGRESSIVE, R_READY, R_STORED, ROW_OKAY,
    RELOAD_SUBMERGED_END_OF_ROUND, S_AREA, S_CARD, S_CHIT, S_DECK, S_ESCORT, S_HEAVY, S_KIND,
    S_LIGHT, S_ON, S_REVEALED, SL_AREA, SL_DECK, SL_KIND)


@unmanaged_jit
def setup(state, ship, boat, slots, cards, bstat, brows, dist, cfg, dk, dn, m, counters):
    """§4.3 S2-S4: fresh shuffled decks, ships unrevealed at their slots, U-boats at their
    start Areas with the Okay row's torpedoes, then the setup reveal."""
    for d in range(N_DECKS):
        deck_reset(dk, dn, d, cfg[K_DECK_SIZE + d])
    for s in range(cfg[K_N_SHIPS]):
        ship[s, S_KIND] = slots[s, SL_KIND]
        ship[s, S_DECK] = slots[s, SL_DECK]
        ship[s, S_ESCORT] = 1 if slots[s, SL_KIND] == KIND_E else 0
        ship[s, S_REVEALED] = 0
        ship[s, S_CARD] = 0
        ship[s, S_AREA] = slots[s, SL_AREA]
        ship[s, S_LIGHT] = 0
        ship[s, S_HEAVY] = 0
        ship[s, S_CHIT] = 0
        ship[s, S_ON] = 1
    for b in range(cfg[K_N_BOATS]):
        boat[b, B_AREA] = bstat[b, BS_START]
        boat[b, B_SURFACED] = 0 if cfg[K_APPROACH] == APPROACH_SUBMERGED else 1
        boat[b, B_DIVED] = 0
        boat[b, B_DETECTED] = 0
        boat[b, B_SILENT] = 0
        boat[b, B_STRESS] = bstat[b, BS_STRESS0]
        boat[b, B_READY] = brows[b, ROW_OKAY, R_READY]
        boat[b, B_STORED] = brows[b, ROW_OKAY, R_STORED]
        boat[b, B_TUBES] = brows[b, ROW_OKAY, R_READY]
        boat[b, B_AMMO] = bstat[b, BS_AMMO]
        boat[b, B_ON] = 1
        boat[b, B_SUNK] = 0
        boat[b, B_ATTACKED] = 0
        boat[b, B_AGGRESSIVE] = 0
    m[:] = 0
    reveal_all(state, ship, boat, cards, dist, cfg, dk, dn, counters)


@unmanaged_jit
def end_of_round(boat, cfg):
    """R5 (PLACEHOLDER, G19): Silent Running markers off under ``end_of_round`` (A9); the
    ``reload`` module moves Stored torpedoes to the tubes of submerged boats that did not attack."""
    for b in range(cfg[K_N_BOATS]):
        if cfg[K_SR_MARKER_ROUND]:
            boat[b, B_SILENT] = 0
        if (cfg[K_RELOAD] == RELOAD_SUBMERGED_END_OF_ROUND and boat[b, B_ON] and not boat[b, B_SURFACED]
                and not boat[b, B_ATTACKED]):
            n = min(cfg[K_RELOAD_PER_ROUND], boat[b, B_STORED], boat[b, B_TUBES] - boat[b, B_READY])
            if n > 0:
                boat[b, B_READY] += n
                boat[b, B_STORED] -= n
        boat[b, B_ATTACKED] = 0


@unmanaged_jit
def _any_on(arr, n, field):
    for i in range(n):
        if arr[i, field]:
            return True
    return False


@unmanaged_jit
def engagement_trial(state, ship, boat, slots, cards, bstat, brows, tables, adj, area, dist, cfg,
                     dk, dn, m, counters):
    """One battle; fills ``m`` with the metrics of spec §4.5."""
    setup(state, ship, boat, slots, cards, bstat, brows, dist, cfg, dk, dn, m, counters)
    n_boats = cfg[K_N_BOATS]
    n_ships = cfg[K_N_SHIPS]
    rounds = 0
    while _any_on(boat, n_boats, np.int64(B_ON)) and _any_on(ship, n_ships, np.int64(S_ON)):
        if rounds == cfg[K_MAX_ROUNDS]:  # the named round cap
            m[M_P_ROUND_CAP] = 1
            counters[CT_ROUND_CAP] += 1
            break
        rounds += 1
        uboat_movement(state, ship, boat, slots, cards, bstat, brows, adj, area, dist, cfg, dk, dn, counters)
        bearing_movement(state, ship, boat, slots, cards, bstat, adj, area, dist, cfg, dk, dn, counters)
        escorts_step(state, ship, boat, slots, cards, bstat, adj, area, dist, cfg, dk, dn, counters)
        for b in range(n_boats):  # Initiative is read once, as the attacks step begins
            boat[b, B_AGGRESSIVE] = brows[b, crew_row(boat, b, bstat), R_AGGRESSIVE]
        for b in range(n_boats):
            if boat[b, B_AGGRESSIVE]:
                uboat_attack(state, b, ship, boat, cards, bstat, brows, tables, dist, cfg, dk, dn, m)
        enemy_attacks(state, ship, boat, cards, dist, cfg)
        for b in range(n_boats):
            if not boat[b, B_AGGRESSIVE]:
                uboat_attack(state, b, ship, boat, cards, bstat, brows, tables, dist, cfg, dk, dn, m)
        end_of_round(boat, cfg)
    lost = 0
    stress = 0
    for b in range(n_boats):
        if boat[b, B_SUNK]:
            lost += 1
        else:
            boat[b, B_STRESS] += cfg[K_POST_STRESS]  # R6 PLACEHOLDER post-combat Stress (G21)
        stress += boat[b, B_STRESS] - bstat[b, BS_STRESS0]
    m[M_ROUNDS] = rounds
    m[M_UBOATS_LOST] = lost
    m[M_P_UBOAT_LOST] = 1 if lost > 0 else 0
    m[M_STRESS_ADDED] = stress


@jit
def engagement_workspace(args):
    """Chunk-local battle arrays: (ship, boat, dk, dn)."""
    cfg = args[-1]
    max_cards = args[1].shape[1]
    return (np.zeros((max(cfg[K_N_SHIPS], 1), N_SHIP_FIELDS), np.int64),
            np.zeros((max(cfg[K_N_BOATS], 1), N_BOAT_FIELDS), np.int64),
            np.zeros((N_DECKS, 3, max_cards), np.int64),
            np.zeros((N_DECKS, 2), np.int64))


@unmanaged_jit
def battle_trial(state, values, counters, ws, args):
    """One engagement (:func:`engagement_trial`) in the driver's trial form."""
    slots, cards, bstat, brows, tables, adj, area, dist, cfg = args
    ship, boat, dk, dn = ws
    engagement_trial(state, ship, boat, slots, cards, bstat, brows, tables, adj, area, dist, cfg, dk, dn,
                     values, counters)


@parallel_jit
def engagement_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """Per-chunk (hist, moments, counters) of the engagement metrics (:mod:`kernels.driver`)."""
    return run_trials(battle_trial, engagement_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size,
                      n_trials, N_METRICS, n_bins, N_COUNTERS)
