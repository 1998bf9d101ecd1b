"""One whole U-Boat Leader campaign per trial, in numba (docs/models/uboat_leader_campaign.md).

C§9: turn after turn -- Strategic (plans, Special Options), Operations (moves, Event draws,
Special Missions), Tactical (Contact rolls, Convoy cards, Wolfpacks, fights) and Refit
(promotion, Stress recovery, resupply, reload) -- until every U-boat has reached its patrol
limit or is lost, or the named cap ``max_turns``. Contacts are fought by the ``abstract``
contact model (C§7.5) or on the tactical display by the engagement kernel's round
(C§7.4, :mod:`kernels.uboat_leader.campaign_engagement`). The Event and Convoy decks persist
through the campaign; the target decks and the Tactics cup are fresh for every contact and
every Attack mission (C§7.4).

"Cn" below = section n of the campaign spec; "l.n" = line of the Spanish source it quotes.
Every loop is bounded: moves by the Area count (a route that fails is counted in
``CT_ROUTE_FAILED``), contacts by the Contact Table, raider attacks by ``raider_max_attacks``,
promotions by the four crew levels, the campaign by ``max_turns`` (``CT_TURN_CAP``).
"""
from __future__ import annotations

import numpy as np

from kernels._jit import jit, parallel_jit, unmanaged_jit
from kernels.driver import run_trials
from kernels.rng import roll_die
from kernels.uboat_leader.campaign_state import (
    AIR_MOST_TARGETS, AREA_CHANNEL, AREA_PORT, AREA_SEA, AT_BOX_EVENTS, AT_CT_LEN, AT_KIND, AT_MOVE,
    AT_NAVAL_CARDS, AT_PATROL, AT_REFIT, ATTACK_MAX_ESCORTS, ATTACK_NEVER, ATTACK_NO_NAVAL, BAND_OKAY,
    BAND_RESTED, BAND_SHAKEN, BAND_UNFIT, BL_OKAY_MAX, BL_SHAKEN_MAX, BL_XP_NEXT, BM_LEVEL, BM_LOST,
    BM_PATROLS, BM_VP, BM_XP, BS_AMMO, BS_COOL, BS_FAT, BS_LEVEL, BS_MINES, BS_N_MISSIONS, BS_PORT,
    BS_READY, BS_SEEKER, BS_STORED, BS_T5, CB_AMMO, CB_AREA, CB_ATTACKED, CB_ATTACKED_NOW,
    CB_CONTACT_BONUS, CB_DEST, CB_FAT, CB_HOME, CB_LEVEL, CB_LOST, CB_MINES, CB_MISSION_NOW, CB_MPOS,
    CB_PATROLS, CB_READY, CB_RETIRED, CB_SEARCH, CB_SEARCHED, CB_STORED, CB_STRESS, CB_T5,
    CB_TURNS_AT_SEA, CB_VP, CB_XP, CB_XP_TOTAL, CT_ROUTE_FAILED, CT_TURN_CAP, CV_N_ESCORTS,
    CV_N_SLOTS, CV_NAVAL, D_CONVOYS, D_EVENTS, EV_CONTACT, EV_N, EV_STRESS, EV_STRESS_ROLL, EV_TYPE,
    G_BOUGHT, G_COUNTER_AREA, G_SO, G_TURN, HALF_EARLY, HALF_LATE, K_ABORT_BAND, K_AIR_CHOICE,
    K_ATT_JOINERS_NOT_SEARCHED, K_ATT_UNTIL_PORT, K_ATTACK, K_ATTACK_K, K_BOX_PLUS_MOVE,
    K_CAL_ADVANCING, K_CAL_YEAR, K_CONTACT_ENGAGEMENT, K_CM_ATTACKED, K_CM_INTEL, K_CM_SEEKER, K_CM_WARNING,
    K_COOL_IN_PORT,
    K_COOL_STRESS, K_DECK_SIZE, K_ESCORT_ROLLS, K_GUN_MOD0, K_HEAVY_BONUS, K_HIT_STRESS,
    K_MAX_TURNS, K_MAX_TURNS_AT_SEA, K_MIN_TORPEDOES, K_MINE_BOX_EVENTS, K_MINE_BOX_NUMBER,
    K_MINE_TOO_LATE, K_MISSION_KEEP, K_MISSION_SALVO, K_MONTHS_PER_TURN, K_N_AREAS, K_N_BOATS,
    K_N_LEVELS, K_N_METRICS, K_N_SO_ORDER, K_ONE_AREA, K_PACK, K_PACK_K, K_PATROL_LIMIT,
    K_POST_STRESS, K_PROMOTION, K_RADIO, K_RADIO_K, K_RAIDER_GUN_FIRST, K_RAIDER_KEEP, K_RAIDER_MAX,
    K_RAIDER_NATURAL, K_RAIDER_ROLL, K_RAIDER_VP, K_RAIDER_XP, K_RC_PER_JOINER, K_RELOAD,
    K_RETURN_BAND, K_RR_MIN_STRESS, K_RR_STRESS, K_SAIL_BAND, K_SALVO, K_SINK_ESCORT, K_SO_RESERVE,
    K_SO_START, K_SPLIT_YEAR, K_START_MONTH, K_START_YEAR, K_STRATEGIC_ONLY, K_STRESS_FAILS,
    K_SUBMERGED, K_SUPPLY_STRESS, K_TACTICS_IN_USE, K_TORPEDO_MOD0, K_UNFIT_TACTICAL,
    K_WARN_ATTACK_ONLY, K_WARN_CAMPAIGN, K_WP_ALERTED_PER, K_WP_ATTACKED_MOD, K_WP_JOIN_MIN,
    K_WP_STRESS_PER, M_ATTACK_VP, M_ATTACKS, M_BOATS_LOST, M_CONTACTS, M_MINE_VP, M_MISSION_VP,
    M_MISSIONS_FAILED, M_P_TURN_CAP, M_PATROLS, M_RAIDER_VP, M_SHIPS_SUNK, M_SO_LEFT, M_SO_SPENT,
    M_TURNS, M_VP, M_XP, MS_ATTACK, MS_MINE, N_BOAT_METRICS, N_CAMPAIGN_DECKS, N_CB_FIELDS,
    N_COUNTERS, N_FIXED_METRICS, N_G_FIELDS, N_MAP_COUNTERS, N_PK_FIELDS, N_SH_FIELDS, NO_MISSION,
    NO_XP_NEXT, O_AIR_SEARCH, O_INTELLIGENCE, O_PRIORITY_RR, O_RADIO_CALL, O_SUPPLY_SHIP, PACK_NEVER,
    PACK_ESCORTS_AT_LEAST, PK_AMMO0, PK_BOAT, PK_FIRED, PK_TORPEDOES0, PROMOTE_ANYWHERE,
    PROMOTE_IN_PORT, RADIO_ALWAYS, RADIO_ESCORTS_AT_LEAST, RELOAD_PORT_ONLY,
    RELOAD_POST_COMBAT_AND_REFIT, ROW_EV, ROW_GS, ROW_TS, SH_CARD, SH_CHIT, SH_DECK, SH_ESCORT,
    SH_HEAVY, SH_LIGHT, SH_NEW, SH_SUNK, SO_COST, SO_MAX, SO_ORDER, SO_UNLIMITED)
from kernels.uboat_leader.campaign_engagement import choose_torpedo, fight_engagement
from kernels.uboat_leader.decks import deck_discard, deck_draw, deck_reset
from kernels.uboat_leader.state import (
    C_CHIT_VALUE, C_DETECTION_SUBMERGED, C_DETECTION_SURFACED, C_MISIDENTIFIED, C_SUBMERGED_ATTACK,
    C_SURFACE_ATTACK, C_TORPEDO, C_VP, C_XP, D_ESCORT, D_FLEET, D_MERCHANT, D_NAVAL, D_TACTICS,
    DAMAGE_HEAVY, DAMAGE_SUNK, DECK_DISCARDS, DECK_LEFT, KIND_E, KIND_N, MAX_BOATS, MAX_SHIPS,
    N_BOAT_FIELDS, N_BOAT_STATIC, N_ROW_FIELDS, N_SHIP_FIELDS, N_SLOT_FIELDS, NOT_ALLOWED)
from kernels.uboat_leader.state import N_METRICS as N_ENGAGEMENT_METRICS

#: move_to results
ARRIVED, UNFIT, STOPPED = 0, 1, 2
#: "no limit" on Areas per move (map_movement: unlimited)
NO_LIMIT = -1
#: ship scratch rows: a Convoy card's slots or an Attack box's Naval cards (checked by the compiler)
ATTACK_BOX_SHIPS = 16


# ----------------------------------------------------------------------------- boats
@unmanaged_jit
def band(cb, bl, i):
    """Digest §1.6: okay / shaken / unfit from the current level's Stress bands (A13)."""
    lv = cb[i, CB_LEVEL]
    s = cb[i, CB_STRESS]
    if s <= bl[i, lv, BL_OKAY_MAX]:
        return BAND_OKAY
    if s <= bl[i, lv, BL_SHAKEN_MAX]:
        return BAND_SHAKEN
    return BAND_UNFIT


@unmanaged_jit
def crew_value(cb, bl, i, field):
    """TS / GS / EV of the crew row in use: the Okay row, else the Shaken row (Unfit too)."""
    if band(cb, bl, i) == BAND_OKAY:
        return bl[i, cb[i, CB_LEVEL], field]
    return bl[i, cb[i, CB_LEVEL], field + 3]


@unmanaged_jit
def add_stress(cb, i, n):
    """Stress is never below 0."""
    cb[i, CB_STRESS] = max(0, cb[i, CB_STRESS] + n)


@unmanaged_jit
def active(cb, i):
    return cb[i, CB_RETIRED] == 0 and cb[i, CB_LOST] == 0


@unmanaged_jit
def in_port(cb, at, i):
    return at[cb[i, CB_AREA], AT_KIND] == AREA_PORT


@unmanaged_jit
def at_sea(cb, at, i):
    return active(cb, i) and not in_port(cb, at, i)


@unmanaged_jit
def mine_pending(cb, bs, bm, i):
    for k in range(cb[i, CB_MPOS], bs[i, BS_N_MISSIONS]):
        if bm[i, k] == MS_MINE:
            return True
    return False


@unmanaged_jit
def load_out(cb, bs, bm, i):
    """C§3.2 load-out rule (setup and the G21 placeholder port resupply ``full``): the
    loadout's torpedoes and ammunition; pending mines replace Stored first, then Ready;
    advanced counters are not replaced, only capped by the torpedoes aboard."""
    cb[i, CB_READY] = bs[i, BS_READY]
    cb[i, CB_STORED] = bs[i, BS_STORED]
    cb[i, CB_AMMO] = bs[i, BS_AMMO]
    if not mine_pending(cb, bs, bm, i):
        cb[i, CB_MINES] = 0
    st = min(cb[i, CB_MINES], cb[i, CB_STORED])
    cb[i, CB_STORED] -= st
    cb[i, CB_READY] -= cb[i, CB_MINES] - st
    torpedoes = cb[i, CB_READY] + cb[i, CB_STORED]
    cb[i, CB_FAT] = min(cb[i, CB_FAT], torpedoes)
    cb[i, CB_T5] = min(cb[i, CB_T5], torpedoes - cb[i, CB_FAT])


@unmanaged_jit
def reload(cb, bs, i):
    """Stored -> Ready up to the tubes (= the loadout's Ready, C§3.2)."""
    n = min(cb[i, CB_STORED], bs[i, BS_READY] - cb[i, CB_READY])
    if n > 0:
        cb[i, CB_READY] += n
        cb[i, CB_STORED] -= n


@unmanaged_jit
def credit(cb, i, vp, xp, values):
    cb[i, CB_VP] += vp
    cb[i, CB_XP] += xp
    cb[i, CB_XP_TOTAL] += xp
    values[M_VP] += vp
    values[M_XP] += xp


@unmanaged_jit
def lose(cb, i, values):
    if cb[i, CB_LOST] == 0:
        cb[i, CB_LOST] = 1
        values[M_BOATS_LOST] += 1


# ----------------------------------------------------------------------------- Special Options
@unmanaged_jit
def can_buy(g, so, option, n, reserve):
    """C§3.3: within the option's ``max`` and leaving at least ``reserve`` SO."""
    if so[SO_MAX, option] != SO_UNLIMITED and g[G_BOUGHT + option] + n > so[SO_MAX, option]:
        return False
    return g[G_SO] - so[SO_COST, option] * n >= reserve


@unmanaged_jit
def spend(g, so, option, n, values):
    cost = so[SO_COST, option] * n
    g[G_SO] -= cost
    values[M_SO_SPENT] += cost
    g[G_BOUGHT + option] += n


# ----------------------------------------------------------------------------- Events (C§4.4)
@unmanaged_jit
def event_half(cfg, g):
    """A18: the year is the sheet's ``calendar_year`` (fixed) or advances with the turns."""
    if cfg[K_CAL_ADVANCING]:
        year = cfg[K_START_YEAR] + (cfg[K_START_MONTH] - 1 + (g[G_TURN] - 1) * cfg[K_MONTHS_PER_TURN]) // 12
    else:
        year = cfg[K_CAL_YEAR]
    return HALF_EARLY if year < cfg[K_SPLIT_YEAR] else HALF_LATE


@unmanaged_jit
def draw_event(state, i, cfg, g, cb, bl, ev, dk, dn, counters):
    """Draw and resolve one Event card for boat i (l.324, l.129); True if it made i Unfit."""
    d = np.int64(D_EVENTS)
    card = deck_draw(state, dk, dn, d, counters)
    if card < 0:
        return False
    half = event_half(cfg, g)
    before = band(cb, bl, i)
    kind = ev[card, half, EV_TYPE]
    if kind == EV_STRESS:
        add_stress(cb, i, ev[card, half, EV_N])
    elif kind == EV_STRESS_ROLL:
        if roll_die(state, 10) > crew_value(cb, bl, i, np.int64(ROW_EV)):
            add_stress(cb, i, ev[card, half, EV_N])
    elif kind == EV_CONTACT:
        cb[i, CB_CONTACT_BONUS] += ev[card, half, EV_N]
    deck_discard(dk, dn, d, card)
    return before != BAND_UNFIT and band(cb, bl, i) == BAND_UNFIT


@unmanaged_jit
def draw_events(state, i, n, cfg, g, cb, bl, ev, dk, dn, counters):
    """n cards one at a time, stopping at the one that makes the boat Unfit (l.330)."""
    for _ in range(n):
        if draw_event(state, i, cfg, g, cb, bl, ev, dk, dn, counters):
            return True
    return False


# ----------------------------------------------------------------------------- Operations (C§4.2)
@unmanaged_jit
def enter_port(i, cfg, cb, values):
    """l.336 / l.244: a patrol ends on entering a Port box; at the limit the boat retires."""
    cb[i, CB_PATROLS] += 1
    values[M_PATROLS] += 1
    cb[i, CB_TURNS_AT_SEA] = 0
    cb[i, CB_SEARCH] = 0
    if cfg[K_ATT_UNTIL_PORT]:
        cb[i, CB_ATTACKED] = 0
    if cb[i, CB_PATROLS] >= cfg[K_PATROL_LIMIT]:
        cb[i, CB_RETIRED] = 1


@unmanaged_jit
def move_to(state, i, dest, limit, cfg, g, at, cb, bl, ev, nxt, dk, dn, values, counters):
    """l.324-331: Area by Area toward ``dest`` drawing each entered Area's Movement value;
    entering a port ends the move; Unfit on the way -> Search box (the previous Area's when
    in the Channel). ``limit`` Areas at most (NO_LIMIT: none, A19)."""
    steps = 0
    for _ in range(cfg[K_N_AREAS] + 1):  # a route enters each Area at most once
        if cb[i, CB_AREA] == dest:
            return ARRIVED
        if limit != NO_LIMIT and steps >= limit:
            return STOPPED
        prev = cb[i, CB_AREA]
        step = nxt[i, dest, prev]
        if step < 0:
            counters[CT_ROUTE_FAILED] += 1
            return STOPPED
        cb[i, CB_AREA] = step
        steps += 1
        if at[step, AT_KIND] == AREA_PORT:
            enter_port(i, cfg, cb, values)
            return ARRIVED
        if draw_events(state, i, at[step, AT_MOVE], cfg, g, cb, bl, ev, dk, dn, counters):
            if at[step, AT_KIND] == AREA_CHANNEL:
                cb[i, CB_AREA] = prev
            cb[i, CB_SEARCH] = 1
            return UNFIT
    counters[CT_ROUTE_FAILED] += 1
    return STOPPED


# ----------------------------------------------------------------------------- torpedoes (C§7.5, C§7.6)
@unmanaged_jit
def fire_one(cb, i):
    """Spend one torpedo, Ready first then Stored."""
    if cb[i, CB_READY] > 0:
        cb[i, CB_READY] -= 1
    else:
        cb[i, CB_STORED] -= 1


@unmanaged_jit
def torpedo_round(state, i, n_ships, torpedoes, salvo, cfg, cb, bl, sh, cards, dmg):
    """C§7.5 torpedo_round at range 0: salvos of ``salvo`` at the unsunk non-escort of highest
    card VP (ties: lowest position); a sinking spends the rest of its salvo; each hit rolls
    on the placeholder damage table (engagement spec §5.1). Returns torpedoes fired; ships
    it sinks get ``SH_NEW``."""
    mod = crew_value(cb, bl, i, np.int64(ROW_TS)) + cfg[K_TORPEDO_MOD0]
    fired = 0
    for _ in range(torpedoes):  # each pass fires >= 1 torpedo
        if torpedoes <= 0:
            break
        t = -1
        for s in range(n_ships):
            if sh[s, SH_ESCORT] or sh[s, SH_SUNK]:
                continue
            card_torpedo = cards[sh[s, SH_DECK], sh[s, SH_CARD], C_TORPEDO]
            if card_torpedo == NOT_ALLOWED:
                continue
            if t < 0 or cards[sh[s, SH_DECK], sh[s, SH_CARD], C_VP] > cards[sh[t, SH_DECK], sh[t, SH_CARD], C_VP]:
                t = s
        if t < 0:
            break
        n = min(salvo, torpedoes)
        torpedoes -= n
        sunk = False
        to_hit = cards[sh[t, SH_DECK], sh[t, SH_CARD], C_TORPEDO]
        for _k in range(n):
            bonus = choose_torpedo(cb, i, sh[t, SH_ESCORT], cfg)
            fire_one(cb, i)
            fired += 1
            if sunk:
                continue
            roll = roll_die(state, 10) + mod + bonus + (cfg[K_HEAVY_BONUS] if sh[t, SH_HEAVY] else 0)
            if roll < to_hit:
                continue
            result = dmg[roll_die(state, 10)]
            if result == DAMAGE_SUNK or sh[t, SH_HEAVY]:
                sh[t, SH_SUNK] = 1
                sh[t, SH_NEW] = 1
                sunk = True
            elif result == DAMAGE_HEAVY or sh[t, SH_LIGHT]:
                sh[t, SH_HEAVY] = 1
                sh[t, SH_LIGHT] = 0  # the stacking reading changes nothing here: a Heavy ship sinks on a hit
            else:
                sh[t, SH_LIGHT] = 1
    return fired


@unmanaged_jit
def collect_new(n_ships, sh, cards):
    """(VP, XP, ships) of the ships marked SH_NEW, clearing the marks."""
    vp = 0
    xp = 0
    n = 0
    for s in range(n_ships):
        if sh[s, SH_NEW]:
            sh[s, SH_NEW] = 0
            vp += cards[sh[s, SH_DECK], sh[s, SH_CARD], C_VP]
            xp += cards[sh[s, SH_DECK], sh[s, SH_CARD], C_XP]
            n += 1
    return vp, xp, n


@unmanaged_jit
def new_ship(sh, s, deck, card, escort, chit):
    sh[s, SH_CARD] = card
    sh[s, SH_DECK] = deck
    sh[s, SH_ESCORT] = escort
    sh[s, SH_SUNK] = 0
    sh[s, SH_LIGHT] = 0
    sh[s, SH_HEAVY] = 0
    sh[s, SH_CHIT] = chit
    sh[s, SH_NEW] = 0


# ----------------------------------------------------------------------------- Special Missions (C§4.5)
@unmanaged_jit
def mission_done(cb, i):
    cb[i, CB_MPOS] += 1
    cb[i, CB_SEARCH] = 1


@unmanaged_jit
def mission_failed(cb, i, values):
    """l.292, 302, 315: Unfit from an Event -> the mission fails (counter removed, no VP)."""
    values[M_MISSIONS_FAILED] += 1
    mission_done(cb, i)


@unmanaged_jit
def mission_vp(cb, i, which, vp, xp, values):
    values[which] += vp
    values[M_MISSION_VP] += vp
    credit(cb, i, vp, xp, values)


@unmanaged_jit
def attack_box(state, i, cfg, at, cb, bl, sh, cards, dmg, dk, dn, values, counters):
    """l.303-306: the box's Naval cards from a fresh deck, one torpedo round at range 0 with
    Ready and Stored torpedoes; VP and XP of ships sunk only."""
    a = cb[i, CB_AREA]
    d = np.int64(D_NAVAL)
    deck_reset(dk, dn, d, cfg[K_DECK_SIZE + D_NAVAL])
    n_ships = at[a, AT_NAVAL_CARDS]
    for s in range(n_ships):
        new_ship(sh, s, d, deck_draw(state, dk, dn, d, counters), 0, 0)
    n = max(0, cb[i, CB_READY] + cb[i, CB_STORED] - cfg[K_MISSION_KEEP])
    torpedo_round(state, i, n_ships, n, cfg[K_MISSION_SALVO], cfg, cb, bl, sh, cards, dmg)
    vp, xp, sunk = collect_new(n_ships, sh, cards)
    values[M_SHIPS_SUNK] += sunk
    mission_vp(cb, i, np.int64(M_ATTACK_VP), vp, xp, values)


@unmanaged_jit
def raider_box(state, i, cfg, cb, bl, values):
    """l.316: up to ``raider_max_attacks`` attacks, 1 ammunition or 1 torpedo each, +1 VP per
    roll >= 8 (A17: modified by the row's GS/TS at range 0, or natural)."""
    vp = 0
    for _ in range(cfg[K_RAIDER_MAX]):
        gun_ok = cb[i, CB_AMMO] > 0
        torp_ok = cb[i, CB_READY] + cb[i, CB_STORED] > cfg[K_RAIDER_KEEP]
        if cfg[K_RAIDER_GUN_FIRST]:
            gun = gun_ok
            if not gun_ok and not torp_ok:
                break
        else:
            gun = not torp_ok
            if not gun_ok and not torp_ok:
                break
        if gun:
            cb[i, CB_AMMO] -= 1
            mod = crew_value(cb, bl, i, np.int64(ROW_GS)) + cfg[K_GUN_MOD0]
        else:
            bonus = choose_torpedo(cb, i, np.int64(0), cfg)
            fire_one(cb, i)
            mod = crew_value(cb, bl, i, np.int64(ROW_TS)) + cfg[K_TORPEDO_MOD0] + bonus
        roll = roll_die(state, 10) + (0 if cfg[K_RAIDER_NATURAL] else mod)
        if roll >= cfg[K_RAIDER_ROLL]:
            vp += cfg[K_RAIDER_VP]
    mission_vp(cb, i, np.int64(M_RAIDER_VP), vp, vp if cfg[K_RAIDER_XP] else 0, values)


@unmanaged_jit
def resolve_mission(state, i, ms, cfg, g, at, cb, bl, bmine, ev, sh, cards, dmg, dk, dn, values, counters):
    """C§4.5: the boat enters the box, draws, resolves; then the counter is removed and the
    boat is in the Search box."""
    a = cb[i, CB_AREA]
    extra = at[a, AT_MOVE] if cfg[K_BOX_PLUS_MOVE] else 0  # A7
    if ms == MS_MINE:
        n = at[a, AT_BOX_EVENTS + MS_MINE] if cfg[K_MINE_BOX_NUMBER] else cfg[K_MINE_BOX_EVENTS]  # A16
        unfit = draw_events(state, i, extra + n, cfg, g, cb, bl, ev, dk, dn, counters)
        if unfit and not cfg[K_MINE_TOO_LATE]:
            mission_failed(cb, i, values)
            return
        vp = bmine[i, a]
        cb[i, CB_MINES] = 0
        mission_vp(cb, i, np.int64(M_MINE_VP), vp, 0, values)
    elif ms == MS_ATTACK:
        if draw_events(state, i, extra, cfg, g, cb, bl, ev, dk, dn, counters):
            mission_failed(cb, i, values)
            return
        for _ in range(at[a, AT_BOX_EVENTS + MS_ATTACK]):
            if band(cb, bl, i) >= cfg[K_ABORT_BAND]:  # l.301: abort, the counter stays
                cb[i, CB_SEARCH] = 1
                return
            if draw_event(state, i, cfg, g, cb, bl, ev, dk, dn, counters):
                mission_failed(cb, i, values)
                return
        attack_box(state, i, cfg, at, cb, bl, sh, cards, dmg, dk, dn, values, counters)
    else:
        if draw_events(state, i, extra + at[a, AT_BOX_EVENTS + ms], cfg, g, cb, bl, ev, dk, dn, counters):
            mission_failed(cb, i, values)
            return
        raider_box(state, i, cfg, cb, bl, values)
    mission_done(cb, i)


# ----------------------------------------------------------------------------- Strategic (C§4.1)
@unmanaged_jit
def plan(i, cfg, at, cb, bs, bm, bl, nport, boxa, patrol):
    """C§4.1.1 and the policies of C§6: (destination, mission) for this turn."""
    a = cb[i, CB_AREA]
    b = band(cb, bl, i)
    if in_port(cb, at, i):
        may_sail = cb[i, CB_PATROLS] < cfg[K_PATROL_LIMIT] and b != BAND_UNFIT
        if may_sail:
            if cfg[K_SAIL_BAND] == BAND_RESTED:
                may_sail = cb[i, CB_STRESS] == 0
            else:
                may_sail = b <= cfg[K_SAIL_BAND]
        if not may_sail:
            cb[i, CB_DEST] = a
            cb[i, CB_MISSION_NOW] = NO_MISSION
            return
    elif (b >= cfg[K_RETURN_BAND] or cb[i, CB_READY] + cb[i, CB_STORED] <= cfg[K_MIN_TORPEDOES]
          or cb[i, CB_TURNS_AT_SEA] >= cfg[K_MAX_TURNS_AT_SEA]):
        cb[i, CB_DEST] = nport[i, a]
        cb[i, CB_MISSION_NOW] = NO_MISSION
        return
    if cb[i, CB_MPOS] < bs[i, BS_N_MISSIONS]:
        ms = bm[i, cb[i, CB_MPOS]]
        cb[i, CB_DEST] = boxa[i, a, ms]
        cb[i, CB_MISSION_NOW] = ms
        return
    cb[i, CB_DEST] = patrol[i, cb[i, CB_HOME], a]
    cb[i, CB_MISSION_NOW] = NO_MISSION


@unmanaged_jit
def strategic(cfg, g, at, cb, bs, bm, bl, nport, boxa, patrol, so, values):
    """C§4.1: plans, then purchases in ``policy.so.order`` (each option once per turn)."""
    n_boats = cfg[K_N_BOATS]
    for i in range(n_boats):
        if active(cb, i):
            if in_port(cb, at, i):
                cb[i, CB_HOME] = cb[i, CB_AREA]
            plan(i, cfg, at, cb, bs, bm, bl, nport, boxa, patrol)
    for k in range(N_MAP_COUNTERS):
        g[G_COUNTER_AREA + k] = -1
    reserve = cfg[K_SO_RESERVE]
    for k in range(cfg[K_N_SO_ORDER]):
        opt = so[SO_ORDER, k]
        if opt == O_PRIORITY_RR:  # l.271: -4 Stress to every boat in a Port box, now
            tired = False
            for i in range(n_boats):
                if active(cb, i) and in_port(cb, at, i) and cb[i, CB_STRESS] >= cfg[K_RR_MIN_STRESS]:
                    tired = True
            if tired and can_buy(g, so, opt, 1, reserve):
                spend(g, so, opt, 1, values)
                for i in range(n_boats):
                    if active(cb, i) and in_port(cb, at, i):
                        add_stress(cb, i, cfg[K_RR_STRESS])
            continue
        best = -1
        best_n = 0
        for a in range(cfg[K_N_AREAS]):  # the sea Area most boats plan to end in, ties lowest index
            n = 0
            for i in range(n_boats):
                if active(cb, i) and cb[i, CB_MISSION_NOW] == NO_MISSION and cb[i, CB_DEST] == a \
                        and at[a, AT_KIND] == AREA_SEA:
                    n += 1
            if n > best_n:
                best_n = n
                best = a
        if best >= 0 and can_buy(g, so, opt, 1, reserve):
            spend(g, so, opt, 1, values)
            g[G_COUNTER_AREA + opt] = best
    if cfg[K_STRATEGIC_ONLY]:  # A15 (b): the counters lapse at once
        for k in range(N_MAP_COUNTERS):
            g[G_COUNTER_AREA + k] = -1


@unmanaged_jit
def operations(state, cfg, g, at, cb, bs, bm, bl, bmine, nxt, nport, ev, sh, cards, dmg, dk, dn, values,
               counters):
    """C§4.2, boats in list order."""
    limit = np.int64(1) if cfg[K_ONE_AREA] else np.int64(NO_LIMIT)
    for i in range(cfg[K_N_BOATS]):
        if not active(cb, i):
            continue
        a = cb[i, CB_AREA]
        if band(cb, bl, i) == BAND_UNFIT and not in_port(cb, at, i):
            if cfg[K_UNFIT_TACTICAL]:  # A8 (b): waits in its Search box
                cb[i, CB_SEARCH] = 1
            else:
                move_to(state, i, nport[i, a], limit, cfg, g, at, cb, bl, ev, nxt, dk, dn, values, counters)
            continue
        dest = cb[i, CB_DEST]
        ms = cb[i, CB_MISSION_NOW]
        if dest == a and ms == NO_MISSION:
            if not in_port(cb, at, i):  # l.329: not moving -> the Patrol value
                if draw_events(state, i, at[a, AT_PATROL], cfg, g, cb, bl, ev, dk, dn, counters):
                    cb[i, CB_SEARCH] = 1
            continue
        res = ARRIVED
        if dest != a:
            lim = limit
            if limit != NO_LIMIT and nxt[i, dest, a] >= 0 and at[nxt[i, dest, a], AT_KIND] == AREA_CHANNEL:
                lim = np.int64(2)  # A19 (b): a one-Area move may not end in the Channel
            res = move_to(state, i, dest, lim, cfg, g, at, cb, bl, ev, nxt, dk, dn, values, counters)
        if ms != NO_MISSION and res == UNFIT:
            mission_failed(cb, i, values)
        elif res == ARRIVED and ms != NO_MISSION and cb[i, CB_AREA] == dest:
            resolve_mission(state, i, ms, cfg, g, at, cb, bl, bmine, ev, sh, cards, dmg, dk, dn, values, counters)


# ----------------------------------------------------------------------------- Tactical (C§7)
@unmanaged_jit
def contact_count(ct, at, a, roll):
    """G5: the value of the last [min_roll, contacts] row with min_roll <= roll; 0 below."""
    n = 0
    for k in range(at[a, AT_CT_LEN]):
        if roll >= ct[a, k, 0]:
            n = ct[a, k, 1]
    return n


@unmanaged_jit
def place_warning(i, a, warn, warned):
    """A3 (l.378): one Warning the first time each boat draws a Convoy card in the Area."""
    if warned[i, a] == 0:
        warned[i, a] = 1
        warn[a] += 1


@unmanaged_jit
def air_key(cfg, cv, c):
    """Ordering of an Air Search pair (smaller is kept): most_targets (-targets, escorts) or
    fewest_escorts (escorts, -targets), as one integer."""
    esc = cv[c, CV_N_ESCORTS]
    tgt = cv[c, CV_N_SLOTS] - esc
    if cfg[K_AIR_CHOICE] == AIR_MOST_TARGETS:
        return -tgt * 64 + esc
    return esc * 64 - tgt


@unmanaged_jit
def draw_convoy(state, a, cfg, g, cv, dk, dn, counters):
    """C§7.2 step 1; with an Air Search counter in the Area two cards, keep one (l.260)."""
    d = np.int64(D_CONVOYS)
    first = deck_draw(state, dk, dn, d, counters)
    if g[G_COUNTER_AREA + O_AIR_SEARCH] != a or (dn[d, DECK_LEFT] == 0 and dn[d, DECK_DISCARDS] == 0):
        return first
    second = deck_draw(state, dk, dn, d, counters)
    if air_key(cfg, cv, first) <= air_key(cfg, cv, second):
        deck_discard(dk, dn, d, second)  # G22 placeholder: the unchosen card is discarded
        return first
    deck_discard(dk, dn, d, first)
    return second


@unmanaged_jit
def form_pack(state, a_boat, c, cfg, g, at, cb, bl, cv, wpf, so, pk, values):
    """l.381-388 (engagement spec §3.2): the pack in list order from pk[0] and the Alerted
    counters its join rolls placed. Returns (pack size, alerted)."""
    pk[0, PK_BOAT] = a_boat
    esc = cv[c, CV_N_ESCORTS]
    if cfg[K_PACK] == PACK_NEVER or (cfg[K_PACK] == PACK_ESCORTS_AT_LEAST and esc < cfg[K_PACK_K]):
        return 1, 0
    area = cb[a_boat, CB_AREA]
    n_cand = 0
    for o in range(cfg[K_N_BOATS]):
        if (o != a_boat and at_sea(cb, at, o) and cb[o, CB_AREA] == area and cb[o, CB_SEARCH] == 0
                and band(cb, bl, o) != BAND_UNFIT):
            n_cand += 1
            pk[n_cand, PK_BOAT] = o
    if n_cand == 0:
        return 1, 0
    if cfg[K_RADIO] == RADIO_ALWAYS or (cfg[K_RADIO] == RADIO_ESCORTS_AT_LEAST and esc >= cfg[K_RADIO_K]):
        n = n_cand if cfg[K_RC_PER_JOINER] else 1  # A5
        if can_buy(g, so, np.int64(O_RADIO_CALL), n, 0):
            spend(g, so, np.int64(O_RADIO_CALL), n, values)
            return n_cand + 1, 0
    size = 1
    alerted = 0
    for k in range(1, n_cand + 1):
        o = pk[k, PK_BOAT]
        f = roll_die(state, 10)
        stress = wpf[f] != 0
        joins = f + (cfg[K_WP_ATTACKED_MOD] if cb[o, CB_ATTACKED] else 0) >= cfg[K_WP_JOIN_MIN]
        if stress and cfg[K_STRESS_FAILS]:  # A6
            joins = False
        if stress:
            add_stress(cb, a_boat, cfg[K_WP_STRESS_PER])
            alerted += cfg[K_WP_ALERTED_PER]
        if joins:
            pk[size, PK_BOAT] = o
            size += 1
    return size, alerted


@unmanaged_jit
def fight_abstract(state, c, n_pack, alerted, cfg, cb, bl, cv, cvs, sh, pk, cards, dmg, dk, dn, values,
                   counters):
    """C§7.5, the abstract contact model: ships from fresh decks, one torpedo round per pack
    boat, the escorts' Detection and attack rolls, Post-Combat Stress."""
    for d in range(D_TACTICS + 1):
        deck_reset(dk, dn, d, cfg[K_DECK_SIZE + d])
    naval = cv[c, CV_NAVAL]
    n_ships = cv[c, CV_N_SLOTS]
    for s in range(n_ships):
        kind = cvs[c, s]
        if kind == KIND_E:
            d = np.int64(D_FLEET) if naval else np.int64(D_ESCORT)
        elif kind == KIND_N:
            d = np.int64(D_NAVAL)
        else:
            d = np.int64(D_MERCHANT)
        card = deck_draw(state, dk, dn, d, counters)
        escort = 1 if kind == KIND_E else 0
        if d == D_MERCHANT and cards[D_MERCHANT, card, C_MISIDENTIFIED]:  # digest §1.7
            d = np.int64(D_ESCORT)
            card = deck_draw(state, dk, dn, d, counters)
            escort = 1
        chit = 0
        if escort and cfg[K_TACTICS_IN_USE]:
            chit = cards[D_TACTICS, deck_draw(state, dk, dn, np.int64(D_TACTICS), counters), C_CHIT_VALUE]
        new_ship(sh, s, d, card, escort, chit)
    for k in range(n_pack):
        o = pk[k, PK_BOAT]
        if band(cb, bl, o) == BAND_UNFIT:
            pk[k, PK_FIRED] = 0
            continue
        pk[k, PK_FIRED] = torpedo_round(state, o, n_ships, cb[o, CB_READY], cfg[K_SALVO], cfg, cb, bl, sh,
                                        cards, dmg)
        vp, xp, sunk = collect_new(n_ships, sh, cards)
        values[M_SHIPS_SUNK] += sunk
        credit(cb, o, vp, xp, values)
    det_field = C_DETECTION_SUBMERGED if cfg[K_SUBMERGED] else C_DETECTION_SURFACED
    att_field = C_SUBMERGED_ATTACK if cfg[K_SUBMERGED] else C_SURFACE_ATTACK
    for s in range(n_ships):
        if not sh[s, SH_ESCORT]:
            continue
        row = cards[sh[s, SH_DECK], sh[s, SH_CARD]]
        for k in range(n_pack):
            o = pk[k, PK_BOAT]
            if cb[o, CB_LOST] or pk[k, PK_FIRED] == 0:
                continue
            for _ in range(cfg[K_ESCORT_ROLLS]):
                if roll_die(state, 10) + alerted + sh[s, SH_CHIT] < row[det_field]:
                    continue
                if row[att_field] == NOT_ALLOWED or roll_die(state, 10) + sh[s, SH_CHIT] < row[att_field]:
                    continue
                add_stress(cb, o, cfg[K_HIT_STRESS])
                if cfg[K_SINK_ESCORT] != NOT_ALLOWED and roll_die(state, 10) >= cfg[K_SINK_ESCORT]:
                    lose(cb, o, values)
                    break
    for k in range(n_pack):
        o = pk[k, PK_BOAT]
        if not cb[o, CB_LOST]:
            add_stress(cb, o, cfg[K_POST_STRESS])


@unmanaged_jit
def fight(state, a_boat, c, cfg, g, at, cb, bs, bl, cv, cvs, wpf, so, sh, pk, cards, dmg, dk, dn, values,
          counters, eargs, ews):
    """C§7.2 step 4: pack, fight (C§7.4 engagement or C§7.5 abstract), Post-Combat (C§7.7)."""
    n_pack, alerted = form_pack(state, a_boat, c, cfg, g, at, cb, bl, cv, wpf, so, pk, values)
    values[M_ATTACKS] += 1
    for k in range(n_pack):
        o = pk[k, PK_BOAT]
        pk[k, PK_TORPEDOES0] = cb[o, CB_READY] + cb[o, CB_STORED]
        pk[k, PK_AMMO0] = cb[o, CB_AMMO]
    if cfg[K_CONTACT_ENGAGEMENT]:
        ecfg0, eslots, etables, eadj, earea, edist, ebstat, ebrows = eargs
        ship, boat, wslots, wbstat, wbrows, wcfg, em = ews
        vp, xp, sunk, lost = fight_engagement(state, c, cv[c, CV_N_SLOTS], n_pack, alerted, cfg, cb, bs, pk, cards,
                                              dk, dn, counters, ecfg0, eslots, etables, eadj, earea, edist, ebstat,
                                              ebrows, ship, boat, wslots, wbstat, wbrows, wcfg, em)
        values[M_VP] += vp
        values[M_XP] += xp
        values[M_SHIPS_SUNK] += sunk
        values[M_BOATS_LOST] += lost
    else:
        fight_abstract(state, c, n_pack, alerted, cfg, cb, bl, cv, cvs, sh, pk, cards, dmg, dk, dn, values, counters)
    for k in range(n_pack):
        o = pk[k, PK_BOAT]
        if cb[o, CB_READY] + cb[o, CB_STORED] < pk[k, PK_TORPEDOES0] or cb[o, CB_AMMO] < pk[k, PK_AMMO0]:
            cb[o, CB_ATTACKED_NOW] = 1
        if not cb[o, CB_LOST] and cfg[K_RELOAD] == RELOAD_POST_COMBAT_AND_REFIT:
            reload(cb, bs, o)


@unmanaged_jit
def contact_phase(state, i, cfg, g, at, ct, cb, bs, bl, cv, cvs, wpf, so, sh, pk, cards, dmg, warn, warned,
                  dk, dn, values, counters, eargs, ews):
    """C§7.2 (l.351-363, 370, 378): the Contact roll, then that many Convoy cards."""
    if cfg[K_ATTACK] == ATTACK_NEVER:  # the roll is optional (l.354)
        return
    cb[i, CB_SEARCHED] = 1
    a = cb[i, CB_AREA]
    roll = (roll_die(state, 10) + cfg[K_CM_INTEL] * (g[G_COUNTER_AREA + O_INTELLIGENCE] == a)
            + cfg[K_CM_SEEKER] * bs[i, BS_SEEKER] + cfg[K_CM_WARNING] * warn[a]
            + cfg[K_CM_ATTACKED] * cb[i, CB_ATTACKED] + cb[i, CB_CONTACT_BONUS])
    for _ in range(contact_count(ct, at, a, roll)):
        if not at_sea(cb, at, i) or band(cb, bl, i) == BAND_UNFIT:
            break
        c = draw_convoy(state, a, cfg, g, cv, dk, dn, counters)
        values[M_CONTACTS] += 1
        if not cfg[K_WARN_ATTACK_ONLY]:
            place_warning(i, a, warn, warned)
        esc = cv[c, CV_N_ESCORTS]
        attack = True
        if cfg[K_ATTACK] == ATTACK_NO_NAVAL:
            attack = cv[c, CV_NAVAL] == 0
        elif cfg[K_ATTACK] == ATTACK_MAX_ESCORTS:
            attack = esc <= cfg[K_ATTACK_K]
        if attack:  # else withdraw (l.370)
            if cfg[K_WARN_ATTACK_ONLY]:
                place_warning(i, a, warn, warned)
            fight(state, i, c, cfg, g, at, cb, bs, bl, cv, cvs, wpf, so, sh, pk, cards, dmg, dk, dn, values,
                  counters, eargs, ews)
        deck_discard(dk, dn, np.int64(D_CONVOYS), c)


@unmanaged_jit
def tactical(state, cfg, g, at, ct, cb, bs, bl, nxt, nport, ev, cv, cvs, wpf, so, sh, pk, cards, dmg, warn,
             warned, dk, dn, values, counters, eargs, ews):
    """C§7.1 and the Attacked markers of C§7.7 (A4, G21)."""
    n_boats = cfg[K_N_BOATS]
    if cfg[K_UNFIT_TACTICAL]:  # A8 (b)
        for i in range(n_boats):
            if at_sea(cb, at, i) and band(cb, bl, i) == BAND_UNFIT:
                move_to(state, i, nport[i, cb[i, CB_AREA]], np.int64(NO_LIMIT), cfg, g, at, cb, bl, ev, nxt, dk,
                        dn, values, counters)
    for i in range(n_boats):
        cb[i, CB_ATTACKED_NOW] = 0
        cb[i, CB_SEARCHED] = 0
    for i in range(n_boats):
        if not at_sea(cb, at, i) or cb[i, CB_SEARCH]:
            continue
        if band(cb, bl, i) != BAND_UNFIT:
            contact_phase(state, i, cfg, g, at, ct, cb, bs, bl, cv, cvs, wpf, so, sh, pk, cards, dmg, warn,
                          warned, dk, dn, values, counters, eargs, ews)
        cb[i, CB_SEARCH] = 1
    for i in range(n_boats):
        now = cb[i, CB_ATTACKED_NOW]
        if cfg[K_ATT_JOINERS_NOT_SEARCHED] and cb[i, CB_SEARCHED]:
            now = 0
        if cfg[K_ATT_UNTIL_PORT]:
            cb[i, CB_ATTACKED] = 1 if (cb[i, CB_ATTACKED] or now) else 0
        else:
            cb[i, CB_ATTACKED] = now


# ----------------------------------------------------------------------------- Refit (C§4.7)
@unmanaged_jit
def refit(cfg, g, at, cb, bs, bm, bl, warn, warned):
    """l.226-228: promote, (patrol limits on entering port), Stress recovery, resupply in
    port, reload at sea, reset the map."""
    n_boats = cfg[K_N_BOATS]
    for i in range(n_boats):
        if cb[i, CB_LOST]:
            continue
        port = in_port(cb, at, i)
        if cfg[K_PROMOTION] == PROMOTE_ANYWHERE or (cfg[K_PROMOTION] == PROMOTE_IN_PORT and port):
            for _ in range(3):  # green -> ace at most
                lv = cb[i, CB_LEVEL]
                need = bl[i, lv, BL_XP_NEXT]
                if lv >= 3 or need == NO_XP_NEXT or cb[i, CB_XP] < need:
                    break
                cb[i, CB_XP] -= need  # G21 placeholder xp_after_promotion: subtract
                cb[i, CB_LEVEL] = lv + 1
        if cb[i, CB_RETIRED]:
            continue
        a = cb[i, CB_AREA]
        if port:
            add_stress(cb, i, -at[a, AT_REFIT])  # l.31
        if bs[i, BS_COOL] and (not cfg[K_COOL_IN_PORT] or port):  # l.112, A14
            add_stress(cb, i, cfg[K_COOL_STRESS])
        if not port and g[G_COUNTER_AREA + O_SUPPLY_SHIP] == a:  # l.264
            add_stress(cb, i, cfg[K_SUPPLY_STRESS])
        if port:
            load_out(cb, bs, bm, i)
        elif cfg[K_RELOAD] != RELOAD_PORT_ONLY:
            reload(cb, bs, i)
        if not port:
            cb[i, CB_TURNS_AT_SEA] += 1
        cb[i, CB_SEARCH] = 0
        cb[i, CB_CONTACT_BONUS] = 0
    if not cfg[K_WARN_CAMPAIGN]:
        warn[:] = 0
        warned[:, :] = 0


# ----------------------------------------------------------------------------- the campaign (C§9)
@unmanaged_jit
def setup(cfg, g, cb, bs, bm, warn, warned, dk, dn, values):
    values[:] = 0
    g[:] = 0
    g[G_SO] = cfg[K_SO_START]
    warn[:] = 0
    warned[:, :] = 0
    deck_reset(dk, dn, np.int64(D_EVENTS), cfg[K_DECK_SIZE + D_EVENTS])
    deck_reset(dk, dn, np.int64(D_CONVOYS), cfg[K_DECK_SIZE + D_CONVOYS])
    for i in range(cfg[K_N_BOATS]):
        cb[i, :] = 0
        cb[i, CB_AREA] = bs[i, BS_PORT]
        cb[i, CB_HOME] = bs[i, BS_PORT]
        cb[i, CB_LEVEL] = bs[i, BS_LEVEL]
        cb[i, CB_FAT] = bs[i, BS_FAT]
        cb[i, CB_T5] = bs[i, BS_T5]
        cb[i, CB_MINES] = bs[i, BS_MINES]
        cb[i, CB_DEST] = bs[i, BS_PORT]
        cb[i, CB_MISSION_NOW] = NO_MISSION
        load_out(cb, bs, bm, i)


@unmanaged_jit
def campaign_metrics(cfg, g, cb, lvl, values):
    """C§8: the success level reached and the per-boat metrics."""
    values[M_TURNS] = g[G_TURN]
    values[M_SO_LEFT] = g[G_SO]
    level = -1
    for k in range(cfg[K_N_LEVELS]):  # thresholds ascending: the last one <= VP
        if values[M_VP] >= lvl[0, k]:
            level = lvl[1, k]
    if level >= 0:
        values[N_FIXED_METRICS + level] = 1
    base = N_FIXED_METRICS + cfg[K_N_LEVELS]
    for i in range(cfg[K_N_BOATS]):
        row = base + N_BOAT_METRICS * i
        values[row + BM_VP] = cb[i, CB_VP]
        values[row + BM_XP] = cb[i, CB_XP_TOTAL]
        values[row + BM_LOST] = cb[i, CB_LOST]
        values[row + BM_PATROLS] = cb[i, CB_PATROLS]
        values[row + BM_LEVEL] = cb[i, CB_LEVEL]


@unmanaged_jit
def campaign_trial(state, values, counters, ws, args):
    """One campaign (C§9) in the driver's trial form."""
    cfg, at, ct, bs, bm, bl, bmine, nxt, nport, boxa, patrol, ev, cv, cvs, cards, dmg, wpf, so, lvl = args[:19]
    eargs = args[19:]  # the engagement model's static arrays (flat: the parallel driver takes no nested tuples)
    cb, g, warn, warned, dk, dn, sh, pk = ws[:8]
    ews = ws[8:]
    setup(cfg, g, cb, bs, bm, warn, warned, dk, dn, values)
    n_boats = cfg[K_N_BOATS]
    for _ in range(cfg[K_MAX_TURNS] + 1):
        any_active = False
        for i in range(n_boats):
            if active(cb, i):
                any_active = True
        if not any_active:
            break
        if g[G_TURN] == cfg[K_MAX_TURNS]:  # the named campaign cap
            values[M_P_TURN_CAP] = 1
            counters[CT_TURN_CAP] += 1
            break
        g[G_TURN] += 1
        strategic(cfg, g, at, cb, bs, bm, bl, nport, boxa, patrol, so, values)
        operations(state, cfg, g, at, cb, bs, bm, bl, bmine, nxt, nport, ev, sh, cards, dmg, dk, dn, values,
                   counters)
        tactical(state, cfg, g, at, ct, cb, bs, bl, nxt, nport, ev, cv, cvs, wpf, so, sh, pk, cards, dmg, warn,
                 warned, dk, dn, values, counters, eargs, ews)
        refit(cfg, g, at, cb, bs, bm, bl, warn, warned)
    campaign_metrics(cfg, g, cb, lvl, values)


@jit
def campaign_workspace(args):
    """Chunk-local campaign arrays: (boats, scalars, warnings, warned, decks, deck sizes,
    ships, pack, the engagement model's battle arrays)."""
    cfg = args[0]
    cards = args[14]
    n_boats = max(cfg[K_N_BOATS], 1)
    max_cards = cards.shape[1]
    for d in range(N_CAMPAIGN_DECKS):
        max_cards = max(max_cards, cfg[K_DECK_SIZE + d])
    return (np.zeros((n_boats, N_CB_FIELDS), np.int64),
            np.zeros(N_G_FIELDS, np.int64),
            np.zeros(max(cfg[K_N_AREAS], 1), np.int64),
            np.zeros((n_boats, max(cfg[K_N_AREAS], 1)), np.int64),
            np.zeros((N_CAMPAIGN_DECKS, 3, max_cards), np.int64),
            np.zeros((N_CAMPAIGN_DECKS, 2), np.int64),
            np.zeros((max(MAX_SHIPS, ATTACK_BOX_SHIPS), N_SH_FIELDS), np.int64),
            np.zeros((n_boats + 1, N_PK_FIELDS), np.int64),
            np.zeros((MAX_SHIPS, N_SHIP_FIELDS), np.int64), np.zeros((MAX_BOATS, N_BOAT_FIELDS), np.int64),
            np.zeros((MAX_SHIPS, N_SLOT_FIELDS), np.int64), np.zeros((MAX_BOATS, N_BOAT_STATIC), np.int64),
            np.zeros((MAX_BOATS, 2, N_ROW_FIELDS), np.int64), np.zeros(args[19].shape[0], np.int64),
            np.zeros(N_ENGAGEMENT_METRICS, np.int64))


@parallel_jit
def campaign_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """Per-chunk (hist, moments, counters) of the campaign metrics (:mod:`kernels.driver`)."""
    return run_trials(campaign_trial, campaign_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size,
                      n_trials, args[0][K_N_METRICS], n_bins, N_COUNTERS)
