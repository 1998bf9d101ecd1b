"""Derived values of a battle and the reveal/remove bookkeeping (spec §4.2, §4.3).

Every function reads the battle arrays of :mod:`kernels.uboat_leader.state`; ``cfg`` holds
the rule options and the policy as integer codes. A constant passed to another compiled
function is wrapped in ``np.int64()``: numba compiles a separate copy of the callee for every
literal integer argument, and each copy costs about a second of compile time.
"""
from __future__ import annotations

import numpy as np

from kernels.rng import roll_die
from kernels.uboat_leader.decks import deck_discard, deck_draw
from kernels._jit import unmanaged_jit
from kernels.uboat_leader.state import (
    B_AREA, B_DETECTED, B_DIVED, B_ON, B_READY, B_AMMO, B_STRESS, BAND_OKAY, BAND_SHAKEN, BAND_UNFIT,
    BREAK_NEVER, BREAK_WHEN_DETECTED, BS_OKAY_MAX, BS_SHAKEN_MAX, APPROACH_SURFACED,
    APPROACH_DIVE_ON_DETECTION, C_CHIT_VALUE, C_GUN, C_MISIDENTIFIED, C_SPEED, C_TORPEDO, C_VP,
    D_ESCORT, D_MERCHANT, D_TACTICS, K_APPROACH, K_ATTACK_ESCORTS, K_BREAK_OFF, K_DAMAGE_STACK,
    K_DECK_SIZE, K_ESCORT_VP_ZERO, K_N_BOATS, K_N_GUN_RANGES, K_N_SHIPS, K_N_TORPEDO_RANGES,
    K_PEN_HEAVY, K_PEN_LIGHT, K_REVEAL_RANGE, K_TACTICS, K_TACTICS_FIXED, K_TARGET, NOT_ALLOWED,
    ROW_OKAY, ROW_SHAKEN, S_CARD, S_CHIT, S_DECK, S_ESCORT, S_HEAVY, S_LIGHT, S_ON, S_REVEALED,
    S_AREA, SL_COUNTER_SPEED, TACTICS_FIXED, TACTICS_PER_CARD, TARGET_MAX_VP)

#: pick() candidate sets
PICK_ELIGIBLE, PICK_TORPEDO, PICK_GUN = 0, 1, 2


# ----------------------------------------------------------------------------- ships
@unmanaged_jit
def damage_penalty(ship, s, cfg):
    """§1.5 / A12: Light -1, Heavy -2; ``replace``: Heavy replaces Light, ``stack``: both."""
    if cfg[K_DAMAGE_STACK]:
        return cfg[K_PEN_HEAVY] * ship[s, S_HEAVY] + cfg[K_PEN_LIGHT] * ship[s, S_LIGHT]
    if ship[s, S_HEAVY]:
        return cfg[K_PEN_HEAVY]
    if ship[s, S_LIGHT]:
        return cfg[K_PEN_LIGHT]
    return 0


@unmanaged_jit
def ship_speed(ship, s, slots, cards, cfg):
    """§7.4: an Unknown counter's printed Speed, else the card's minus damage (never < 0)."""
    if not ship[s, S_REVEALED]:
        return slots[s, SL_COUNTER_SPEED]
    v = cards[ship[s, S_DECK], ship[s, S_CARD], C_SPEED] - damage_penalty(ship, s, cfg)
    return v if v > 0 else 0


@unmanaged_jit
def ship_vp(ship, s, cards, cfg):
    """-1 while unrevealed (spec §4.2); a revealed escort's VP under A1 ``escort_vp``."""
    if not ship[s, S_REVEALED]:
        return -1
    if ship[s, S_ESCORT] and cfg[K_ESCORT_VP_ZERO]:
        return 0
    return cards[ship[s, S_DECK], ship[s, S_CARD], C_VP]


@unmanaged_jit
def eligible(ship, s, cfg):
    """A target for the policy: on the display, and not an escort unless ``attack_escorts``."""
    return ship[s, S_ON] == 1 and (ship[s, S_ESCORT] == 0 or cfg[K_ATTACK_ESCORTS] != 0)


@unmanaged_jit
def any_eligible(ship, cfg):
    for s in range(cfg[K_N_SHIPS]):
        if eligible(ship, s, cfg):
            return True
    return False


@unmanaged_jit
def pick(mode, a, ship, cards, dist, cfg):
    """The policy's target from U-boat area ``a`` (spec §4.2 ``pick``); -1 if none.

    ``max_vp`` minimises (-vp, range, slot); ``nearest`` minimises (range, -vp, slot).
    ``mode`` selects the candidates: eligible ships, or eligible revealed ships that a
    torpedo / the gun can reach (to-hit not N/A, range inside the module's range table).
    """
    best = -1
    best_k1 = 0
    best_k2 = 0
    for s in range(cfg[K_N_SHIPS]):
        if not eligible(ship, s, cfg):
            continue
        r = dist[ship[s, S_AREA], a]
        if mode != PICK_ELIGIBLE:
            if not ship[s, S_REVEALED]:
                continue
            if mode == PICK_TORPEDO:
                if cards[ship[s, S_DECK], ship[s, S_CARD], C_TORPEDO] == NOT_ALLOWED or r >= cfg[K_N_TORPEDO_RANGES]:
                    continue
            elif cards[ship[s, S_DECK], ship[s, S_CARD], C_GUN] == NOT_ALLOWED or r >= cfg[K_N_GUN_RANGES]:
                continue
        v = ship_vp(ship, s, cards, cfg)
        if cfg[K_TARGET] == TARGET_MAX_VP:
            k1, k2 = -v, r
        else:
            k1, k2 = r, -v
        if best < 0 or k1 < best_k1 or (k1 == best_k1 and k2 < best_k2):
            best, best_k1, best_k2 = s, k1, k2
    return best


@unmanaged_jit
def chit_value(state, ship, s, cards, cfg):
    """The Tactics modifier of one Detection roll or attack of ship ``s`` (A2)."""
    mode = cfg[K_TACTICS]
    if mode == 0 or not ship[s, S_ESCORT]:
        return 0
    if mode == TACTICS_FIXED:
        return cfg[K_TACTICS_FIXED]
    if mode == TACTICS_PER_CARD:
        return cards[D_TACTICS, ship[s, S_CHIT], C_CHIT_VALUE]
    # TACTICS_PER_ROLL: a fresh draw from the cup's counters
    return cards[D_TACTICS, roll_die(state, cfg[K_DECK_SIZE + D_TACTICS]) - 1, C_CHIT_VALUE]


# ----------------------------------------------------------------------------- reveal / remove
@unmanaged_jit
def reveal(state, s, ship, cards, cfg, dk, dn, counters):
    """§7.2: draw the ship's card; a misidentified Merchant becomes an Escort (§1.7) and draws
    an Escort card; an Escort draws its Tactics counter from the cup under ``per_card``."""
    d = ship[s, S_DECK]
    card = deck_draw(state, dk, dn, d, counters)
    if d == D_MERCHANT and card >= 0 and cards[D_MERCHANT, card, C_MISIDENTIFIED] != 0:
        deck_discard(dk, dn, d, card)
        ship[s, S_ESCORT] = 1
        ship[s, S_DECK] = D_ESCORT
        card = deck_draw(state, dk, dn, ship[s, S_DECK], counters)
    ship[s, S_CARD] = card if card >= 0 else 0  # a failed draw is counted; S1 makes it impossible
    ship[s, S_REVEALED] = 1
    if ship[s, S_ESCORT] and cfg[K_TACTICS] == TACTICS_PER_CARD:
        chit = deck_draw(state, dk, dn, np.int64(D_TACTICS), counters)
        ship[s, S_CHIT] = chit if chit >= 0 else 0


@unmanaged_jit
def reveal_all(state, ship, boat, cards, dist, cfg, dk, dn, counters):
    """§7.2: every Unknown ship within ``reveal_range`` of a U-boat on the display is revealed
    (ships in slot order)."""
    for s in range(cfg[K_N_SHIPS]):
        if ship[s, S_ON] and not ship[s, S_REVEALED]:
            for b in range(cfg[K_N_BOATS]):
                if boat[b, B_ON] and dist[boat[b, B_AREA], ship[s, S_AREA]] <= cfg[K_REVEAL_RANGE]:
                    reveal(state, s, ship, cards, cfg, dk, dn, counters)
                    break


@unmanaged_jit
def remove_ship(s, ship, cfg, dk, dn):
    """Off the display; a revealed ship's card (and its Tactics counter) to the discards."""
    ship[s, S_ON] = 0
    if ship[s, S_REVEALED]:
        deck_discard(dk, dn, ship[s, S_DECK], ship[s, S_CARD])
        if ship[s, S_ESCORT] and cfg[K_TACTICS] == TACTICS_PER_CARD:
            deck_discard(dk, dn, np.int64(D_TACTICS), ship[s, S_CHIT])


# ----------------------------------------------------------------------------- U-boats
@unmanaged_jit
def stress_band(boat, b, bstat):
    """§1.6: okay / shaken / unfit from the card's bands (A13: per card)."""
    st = boat[b, B_STRESS]
    if st <= bstat[b, BS_OKAY_MAX]:
        return BAND_OKAY
    if st <= bstat[b, BS_SHAKEN_MAX]:
        return BAND_SHAKEN
    return BAND_UNFIT


@unmanaged_jit
def crew_row(boat, b, bstat):
    """The Okay row when Okay, else the Shaken row (Unfit uses the Shaken EV, §1.6)."""
    return ROW_OKAY if stress_band(boat, b, bstat) == BAND_OKAY else ROW_SHAKEN


@unmanaged_jit
def may_surface(boat, b, cfg):
    a = cfg[K_APPROACH]
    return a == APPROACH_SURFACED or (a == APPROACH_DIVE_ON_DETECTION and boat[b, B_DIVED] == 0)


@unmanaged_jit
def armed(boat, b, cfg):
    return boat[b, B_READY] > 0 or (boat[b, B_AMMO] > 0 and may_surface(boat, b, cfg))


@unmanaged_jit
def leaving(boat, b, ship, bstat, cfg):
    """Spec §4.2: an Unfit boat must leave (§7.1); otherwise the break-off policy decides."""
    if stress_band(boat, b, bstat) == BAND_UNFIT:
        return True
    bo = cfg[K_BREAK_OFF]
    if bo == BREAK_NEVER:
        return False
    if not armed(boat, b, cfg) or not any_eligible(ship, cfg):
        return True
    return bo == BREAK_WHEN_DETECTED and boat[b, B_DETECTED] != 0
