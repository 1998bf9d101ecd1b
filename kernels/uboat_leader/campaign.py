"""One whole U-Boat Leader campaign per trial, in numba (docs/models/uboat_leader_campaign.md).

C§9: turn after turn -- Strategic (plans, Special Options), Operations (moves, Event draws,
Special Missions), Tactical (Contact rolls, Convoy cards, Wolfpacks, fights) and Refit
(promotion, Stress recovery, resupply, reload) -- until every U-boat has reached its patrol
limit or is lost, or the named cap ``max_turns``. Contacts are fought by the ``abstract``
contact model (C§7.5) or on the tactical display by the engagement kernel's round
(C§7.4, :mod:`kernels.uboat_leader.campaign_engagement`). The Event and Convoy decks persist
through the campaign; the target decks and the Tactics cup are fresh for every contact and
every Attack mission (C§7.4).

The kernel reads one compiled point as a :class:`~kernels.uboat_leader.campaign_state.CampaignArgs`
(``args.next_area``) and keeps a trial's state in one
:class:`~kernels.uboat_leader.campaign_state.CampaignWorkspace` per chunk (``ws.boats``). The
segments and the rarer steps take the two records; the helpers called once per Event, torpedo
or boat take the few arrays they read, by name (a call passes every array as 5 + 2 * ndim
machine words, and the records hold 42 arrays). The segments, each called from one place, are
inlined (:func:`~kernels._jit.hot_jit`) as the duel's phases are, and so are the move and the
pack; the engagement round takes its arrays by name (:mod:`kernels.uboat_leader.campaign_engagement`).
Measured against the positional kernel before (1 thread, both in one process, interleaved,
identical results): the example campaign 1.02-1.05x, an abstract-model campaign with a mine
mission 1.05-1.12x, the loadout example 1.00-1.06x; a cold compile ~15 s longer.

"Cn" below = section n of the campaign spec; "l.n" = line of the Spanish source it quotes.
Every loop is bounded: moves by the Area count (a route that fails is counted in
``CT_ROUTE_FAILED``), contacts by the Contact Table, raider attacks by ``raider_max_attacks``,
promotions by the four crew levels, the campaign by ``max_turns`` (``CT_TURN_CAP``).
"""
from __future__ import annotations

import numpy as np

from kernels._jit import hot_jit, jit, parallel_jit, unmanaged_jit
from kernels.driver import run_trials
from kernels.rng import roll_die
from kernels.uboat_leader.campaign_state import (
    AIR_MOST_TARGETS, AREA_CHANNEL, AREA_PORT, AREA_SEA, AT_BOX_EVENTS, AT_CT_LEN, AT_KIND, AT_MOVE,
    AT_NAVAL_CARDS, AT_PATROL, AT_REFIT, ATTACK_MAX_ESCORTS, ATTACK_NEVER, ATTACK_NO_NAVAL, BAND_OKAY,
    BAND_RESTED, BAND_SHAKEN, BAND_UNFIT, BL_OKAY_MAX, BL_SHAKEN_MAX, BL_XP_NEXT, BM_LEVEL, BM_LOST,
    BM_PATROLS, BM_VP, BM_XP, BS_AMMO, BS_COOL, BS_FAT, BS_LEVEL, BS_MAX_TURNS_AT_SEA, BS_MIN_TORPEDOES,
    BS_MINES, BS_N_MISSIONS, BS_PORT,
    BS_ACTIVATION, BS_RETURN_BAND, BS_SAIL_BAND,
    BS_READY, BS_SEEKER, BS_STORED, BS_T5, CB_AMMO, CB_AREA, CB_ATTACKED, CB_ATTACKED_NOW,
    CB_CONTACT_BONUS, CB_DEST, CB_FAT, CB_HOME, CB_LEVEL, CB_LOST, CB_MINES, CB_MISSION_NOW, CB_MPENDING,
    CB_PATROLS, CB_READY, CB_RETIRED, CB_SEARCH, CB_SEARCHED, CB_STORED, CB_STRESS, CB_T5,
    CB_TURNS_AT_SEA, CB_VP, CB_XP, CB_XP_TOTAL, CR_CONTACTS, CR_MIN_ROLL, CT_ROUTE_FAILED, CT_TURN_CAP,
    CV_N_ESCORTS, CV_N_SLOTS, CV_NAVAL, D_CONVOYS, D_EVENTS, EV_CONTACT, EV_N, EV_STRESS, EV_STRESS_ROLL,
    EV_TYPE, G_BOUGHT, G_COUNTER_AREA, G_SO, G_TURN, HALF_EARLY, HALF_LATE, K_ABORT_BAND, K_AIR_CHOICE,
    K_ATT_END_OF_TURN, K_ATT_JOINERS_NOT_SEARCHED, K_ATT_UNTIL_PORT, K_ATTACK, K_ATTACK_K, K_BOX_PLUS_MOVE,
    K_CAL_ADVANCING, K_CAL_YEAR, K_CONTACT_ENGAGEMENT, K_CM_ATTACKED, K_CM_INTEL, K_CM_SEEKER, K_CM_WARNING,
    K_COOL_IN_PORT,
    K_COOL_STRESS, K_DECK_SIZE, K_ESCORT_ROLLS, K_GUN_MOD0, K_HEAVY_BONUS, K_HIT_STRESS,
    K_MAX_TURNS, K_MINE_BOX_EVENTS, K_MINE_BOX_NUMBER,
    K_MINE_TOO_LATE, K_MISSION_KEEP, K_MISSION_SALVO, K_MONTHS_PER_TURN, K_N_AREAS, K_N_BOATS,
    K_N_LEVELS, K_N_METRICS, K_N_SO_ORDER, K_ONE_AREA, K_PACK, K_PACK_K, K_PATROL_LIMIT,
    K_POST_STRESS, K_PROMOTION, K_RADIO, K_RADIO_K, K_RAIDER_GUN_FIRST, K_RAIDER_KEEP, K_RAIDER_MAX,
    K_RAIDER_NATURAL, K_RAIDER_ROLL, K_RAIDER_VP, K_RAIDER_XP, K_RC_PER_JOINER, K_RELOAD,
    K_RR_MIN_STRESS, K_RR_STRESS, K_SALVO, K_SINK_ESCORT, K_SO_AT_SEA, K_SO_EVERY_SEGMENT, K_SO_RESERVE,
    K_SO_START, K_SPLIT_YEAR, K_START_MONTH, K_START_YEAR, K_STRATEGIC_ONLY, K_STRESS_FAILS,
    K_SUBMERGED, K_SUPPLY_STRESS, K_TACTICS_IN_USE, K_TORPEDO_MOD0, K_UNFIT_TACTICAL,
    K_WARN_ATTACK_ONLY, K_WARN_CAMPAIGN, K_WP_ALERTED_PER, K_WP_ATTACKED_MOD, K_WP_JOIN_MIN,
    K_WP_STRESS_PER, LV_SHEET_INDEX, LV_VP, M_ATTACK_VP, M_ATTACKS, M_BOATS_LOST, M_CONTACTS, M_MINE_VP,
    M_MISSION_VP, M_MISSIONS_FAILED, M_P_TURN_CAP, M_PATROLS, M_RAIDER_VP, M_SHIPS_SUNK, M_SO_LEFT,
    M_SO_SPENT, M_TURNS, M_VP, M_XP, MS_ATTACK, MS_MINE, N_BOAT_METRICS, N_CAMPAIGN_DECKS, N_CB_FIELDS,
    N_PATROL_METRICS, PM_LOST, PM_VP, CB_PATROL_VP0,
    N_COUNTERS, N_FIXED_METRICS, N_G_FIELDS, N_MAP_COUNTERS, N_PK_FIELDS, N_SH_FIELDS, NO_MISSION,
    NO_XP_NEXT, O_ADVANCED, O_AIR_SEARCH, O_INTELLIGENCE, O_LOADOUT, O_MINE_LAYING, O_PRIORITY_RR, O_RADIO_CALL,
    O_SUPPLY_SHIP, PACK_NEVER,
    PACK_ESCORTS_AT_LEAST, PK_AMMO0, PK_BOAT, PK_FIRED, PK_TORPEDOES0, PROMOTE_ANYWHERE,
    PROMOTE_IN_PORT, RADIO_ALWAYS, RADIO_ESCORTS_AT_LEAST, RELOAD_PORT_ONLY,
    RELOAD_POST_COMBAT_AND_REFIT, ROW_EV, ROW_GS, ROW_TS, SH_CARD, SH_CHIT, SH_DECK, SH_ESCORT,
    SH_HEAVY, SH_LIGHT, SH_NEW, SH_SUNK, SHIP_ROWS, SO_COST, SO_MAX, SO_ORDER, SO_UNLIMITED,
    CampaignWorkspace)
from kernels.uboat_leader.campaign_engagement import choose_torpedo, fight_engagement
from kernels.uboat_leader.decks import deck_discard, deck_draw, deck_reset
from kernels.uboat_leader.state import (
    C_CHIT_VALUE, C_DETECTION_SUBMERGED, C_DETECTION_SURFACED, C_MISIDENTIFIED, C_SUBMERGED_ATTACK,
    C_SURFACE_ATTACK, C_TORPEDO, C_VP, C_XP, D_ESCORT, D_FLEET, D_MERCHANT, D_NAVAL, D_TACTICS,
    DAMAGE_HEAVY, DAMAGE_SUNK, DECK_DISCARDS, DECK_LEFT, KIND_E, KIND_N, MAX_BOATS, MAX_SHIPS,
    N_BOAT_FIELDS, N_BOAT_STATIC, N_ROW_FIELDS, N_SHIP_FIELDS, N_SLOT_FIELDS, NOT_ALLOWED)
from kernels.uboat_leader.state import K_POST_STRESS as EK_POST_STRESS
from kernels.uboat_leader.state import N_METRICS as N_ENGAGEMENT_METRICS

#: move_to results
ARRIVED, UNFIT, STOPPED = 0, 1, 2
#: "no limit" on Areas per move (map_movement: unlimited)
NO_LIMIT = -1


# ----------------------------------------------------------------------------- boats
@unmanaged_jit
def band(boats, crew_levels, i):
    """Digest §1.6: okay / shaken / unfit from the current level's Stress bands (A13)."""
    lv = boats[i, CB_LEVEL]
    s = boats[i, CB_STRESS]
    if s <= crew_levels[i, lv, BL_OKAY_MAX]:
        return BAND_OKAY
    if s <= crew_levels[i, lv, BL_SHAKEN_MAX]:
        return BAND_SHAKEN
    return BAND_UNFIT


@unmanaged_jit
def crew_value(boats, crew_levels, i, field):
    """TS / GS / EV of the crew row in use: the Okay row, else the Shaken row (Unfit too)."""
    if band(boats, crew_levels, i) == BAND_OKAY:
        return crew_levels[i, boats[i, CB_LEVEL], field]
    return crew_levels[i, boats[i, CB_LEVEL], field + 3]


@unmanaged_jit
def add_stress(boats, i, n):
    """Stress is never below 0."""
    boats[i, CB_STRESS] = max(0, boats[i, CB_STRESS] + n)


@unmanaged_jit
def active(boats, i):
    return boats[i, CB_RETIRED] == 0 and boats[i, CB_LOST] == 0


@unmanaged_jit
def in_port(boats, areas, i):
    return areas[boats[i, CB_AREA], AT_KIND] == AREA_PORT


@unmanaged_jit
def at_sea(boats, areas, i):
    return active(boats, i) and not in_port(boats, areas, i)


@unmanaged_jit
def mine_pending(boats, loadouts, missions, i):
    for k in range(loadouts[i, BS_N_MISSIONS]):
        if (boats[i, CB_MPENDING] >> k) & 1 and missions[i, k] == MS_MINE:
            return True
    return False


@unmanaged_jit
def next_mission(boats, i):
    """Position k of the boat's next pending mission (the lowest bit of CB_MPENDING), -1: none."""
    m = boats[i, CB_MPENDING]
    if m == 0:
        return -1
    k = 0
    while not (m >> k) & 1:
        k += 1
    return k


@unmanaged_jit
def load_mines(boats, i):
    """The mines of a mine-laying mission replace Stored torpedoes first, then Ready (l.288, C§3.2);
    the advanced counters are capped by the torpedoes left."""
    from_stored = min(boats[i, CB_MINES], boats[i, CB_STORED])
    boats[i, CB_STORED] -= from_stored
    boats[i, CB_READY] -= boats[i, CB_MINES] - from_stored
    torpedoes = boats[i, CB_READY] + boats[i, CB_STORED]
    boats[i, CB_FAT] = min(boats[i, CB_FAT], torpedoes)
    boats[i, CB_T5] = min(boats[i, CB_T5], torpedoes - boats[i, CB_FAT])


@unmanaged_jit
def load_out(boats, loadouts, missions, i):
    """C§3.2 load-out rule (setup and the G21 placeholder port resupply ``full``): the
    loadout's torpedoes and ammunition; pending mines replace Stored first, then Ready;
    advanced counters are not replaced, only capped by the torpedoes aboard."""
    boats[i, CB_READY] = loadouts[i, BS_READY]
    boats[i, CB_STORED] = loadouts[i, BS_STORED]
    boats[i, CB_AMMO] = loadouts[i, BS_AMMO]
    if not mine_pending(boats, loadouts, missions, i):
        boats[i, CB_MINES] = 0
    load_mines(boats, i)


@unmanaged_jit
def reload(boats, loadouts, i):
    """Stored -> Ready up to the tubes (= the loadout's Ready, C§3.2)."""
    n = min(boats[i, CB_STORED], loadouts[i, BS_READY] - boats[i, CB_READY])
    if n > 0:
        boats[i, CB_READY] += n
        boats[i, CB_STORED] -= n


@unmanaged_jit
def credit(boats, i, vp, xp, values):
    boats[i, CB_VP] += vp
    boats[i, CB_XP] += xp
    boats[i, CB_XP_TOTAL] += xp
    values[M_VP] += vp
    values[M_XP] += xp


@unmanaged_jit
def lose(boats, i, values):
    if boats[i, CB_LOST] == 0:
        boats[i, CB_LOST] = 1
        values[M_BOATS_LOST] += 1


# ----------------------------------------------------------------------------- Special Options
@unmanaged_jit
def can_buy(campaign, special_options, option, n, reserve):
    """C§3.3: within the option's ``max`` and leaving at least ``reserve`` SO."""
    if (special_options[SO_MAX, option] != SO_UNLIMITED
            and campaign[G_BOUGHT + option] + n > special_options[SO_MAX, option]):
        return False
    return campaign[G_SO] - special_options[SO_COST, option] * n >= reserve


@unmanaged_jit
def spend(campaign, special_options, option, n, values):
    cost = special_options[SO_COST, option] * n
    campaign[G_SO] -= cost
    values[M_SO_SPENT] += cost
    campaign[G_BOUGHT + option] += n


# ----------------------------------------------------------------------------- Events (C§4.4)
@unmanaged_jit
def event_half(config, campaign):
    """A18: the year is the sheet's ``calendar_year`` (fixed) or advances with the turns."""
    if config[K_CAL_ADVANCING]:
        year = config[K_START_YEAR] + (config[K_START_MONTH] - 1
                                       + (campaign[G_TURN] - 1) * config[K_MONTHS_PER_TURN]) // 12
    else:
        year = config[K_CAL_YEAR]
    return HALF_EARLY if year < config[K_SPLIT_YEAR] else HALF_LATE


@unmanaged_jit
def draw_event(state, i, config, campaign, boats, crew_levels, events, decks, deck_counts, counters):
    """Draw and resolve one Event card for boat i (l.324, l.129); True if it made i Unfit."""
    d = np.int64(D_EVENTS)
    card = deck_draw(state, decks, deck_counts, d, counters)
    if card < 0:
        return False
    half = event_half(config, campaign)
    before = band(boats, crew_levels, i)
    kind = events[card, half, EV_TYPE]
    if kind == EV_STRESS:
        add_stress(boats, i, events[card, half, EV_N])
    elif kind == EV_STRESS_ROLL:
        if roll_die(state, 10) > crew_value(boats, crew_levels, i, np.int64(ROW_EV)):
            add_stress(boats, i, events[card, half, EV_N])
    elif kind == EV_CONTACT:
        boats[i, CB_CONTACT_BONUS] += events[card, half, EV_N]
    deck_discard(decks, deck_counts, d, card)
    return before != BAND_UNFIT and band(boats, crew_levels, i) == BAND_UNFIT


@unmanaged_jit
def draw_events(state, i, n, config, campaign, boats, crew_levels, events, decks, deck_counts, counters):
    """n cards one at a time, stopping at the one that makes the boat Unfit (l.330)."""
    for _ in range(n):
        if draw_event(state, i, config, campaign, boats, crew_levels, events, decks, deck_counts, counters):
            return True
    return False


# ----------------------------------------------------------------------------- Operations (C§4.2)
@unmanaged_jit
def patrol_metrics_row(config, k):
    """The first metric of patrol ``k + 1`` (after the per-boat metrics)."""
    base = N_FIXED_METRICS + config[K_N_LEVELS] + N_BOAT_METRICS * config[K_N_BOATS]
    return base + N_PATROL_METRICS * k


@unmanaged_jit
def enter_port(i, config, boats, values):
    """l.336 / l.244: a patrol ends on entering a Port box; at the limit the boat retires. The VP the
    boat earned since its last Port entry is that patrol's (the per-patrol metrics)."""
    row = patrol_metrics_row(config, boats[i, CB_PATROLS])
    values[row + PM_VP] += boats[i, CB_VP] - boats[i, CB_PATROL_VP0]
    boats[i, CB_PATROL_VP0] = boats[i, CB_VP]
    boats[i, CB_PATROLS] += 1
    values[M_PATROLS] += 1
    boats[i, CB_TURNS_AT_SEA] = 0
    boats[i, CB_SEARCH] = 0
    if config[K_ATT_UNTIL_PORT]:
        boats[i, CB_ATTACKED] = 0
    if boats[i, CB_PATROLS] >= config[K_PATROL_LIMIT]:
        boats[i, CB_RETIRED] = 1


@hot_jit
def move_to(state, i, dest, limit, args, ws, values, counters):
    """l.324-331: Area by Area toward ``dest`` drawing each entered Area's Movement value;
    entering a port ends the move; Unfit on the way -> Search box (the previous Area's when
    in the Channel). ``limit`` Areas at most (NO_LIMIT: none, A19)."""
    config = args.config
    areas = args.areas
    boats = ws.boats
    steps = 0
    for _ in range(config[K_N_AREAS] + 1):  # a route enters each Area at most once
        if boats[i, CB_AREA] == dest:
            return ARRIVED
        if limit != NO_LIMIT and steps >= limit:
            return STOPPED
        prev = boats[i, CB_AREA]
        step = args.next_area[i, dest, prev]
        if step < 0:
            counters[CT_ROUTE_FAILED] += 1
            return STOPPED
        boats[i, CB_AREA] = step
        steps += 1
        if areas[step, AT_KIND] == AREA_PORT:
            enter_port(i, config, boats, values)
            return ARRIVED
        if draw_events(state, i, areas[step, AT_MOVE], config, ws.campaign, boats, args.crew_levels, args.events,
                       ws.decks, ws.deck_counts, counters):
            if areas[step, AT_KIND] == AREA_CHANNEL:
                boats[i, CB_AREA] = prev
            boats[i, CB_SEARCH] = 1
            return UNFIT
    counters[CT_ROUTE_FAILED] += 1
    return STOPPED


# ----------------------------------------------------------------------------- torpedoes (C§7.5, C§7.6)
@unmanaged_jit
def fire_one(boats, i):
    """Spend one torpedo, Ready first then Stored."""
    if boats[i, CB_READY] > 0:
        boats[i, CB_READY] -= 1
    else:
        boats[i, CB_STORED] -= 1


@unmanaged_jit
def torpedo_round(state, i, n_ships, torpedoes, salvo, config, boats, crew_levels, ships, cards, damage_table):
    """C§7.5 torpedo_round at range 0: salvos of ``salvo`` at the unsunk non-escort of highest
    card VP (ties: lowest position); a sinking spends the rest of its salvo; each hit rolls
    on the placeholder damage table (engagement spec §5.1). Returns torpedoes fired; ships
    it sinks get ``SH_NEW``."""
    mod = crew_value(boats, crew_levels, i, np.int64(ROW_TS)) + config[K_TORPEDO_MOD0]
    fired = 0
    for _ in range(torpedoes):  # each pass fires >= 1 torpedo
        if torpedoes <= 0:
            break
        t = -1
        for s in range(n_ships):
            if ships[s, SH_ESCORT] or ships[s, SH_SUNK]:
                continue
            card_torpedo = cards[ships[s, SH_DECK], ships[s, SH_CARD], C_TORPEDO]
            if card_torpedo == NOT_ALLOWED:
                continue
            if t < 0 or (cards[ships[s, SH_DECK], ships[s, SH_CARD], C_VP]
                         > cards[ships[t, SH_DECK], ships[t, SH_CARD], C_VP]):
                t = s
        if t < 0:
            break
        n = min(salvo, torpedoes)
        torpedoes -= n
        sunk = False
        to_hit = cards[ships[t, SH_DECK], ships[t, SH_CARD], C_TORPEDO]
        for _k in range(n):
            bonus = choose_torpedo(boats, i, ships[t, SH_ESCORT], config)
            fire_one(boats, i)
            fired += 1
            if sunk:
                continue
            roll = roll_die(state, 10) + mod + bonus + (config[K_HEAVY_BONUS] if ships[t, SH_HEAVY] else 0)
            if roll < to_hit:
                continue
            result = damage_table[roll_die(state, 10)]
            if result == DAMAGE_SUNK or ships[t, SH_HEAVY]:
                ships[t, SH_SUNK] = 1
                ships[t, SH_NEW] = 1
                sunk = True
            elif result == DAMAGE_HEAVY or ships[t, SH_LIGHT]:
                ships[t, SH_HEAVY] = 1
                ships[t, SH_LIGHT] = 0  # the stacking reading changes nothing here: a Heavy ship sinks on a hit
            else:
                ships[t, SH_LIGHT] = 1
    return fired


@unmanaged_jit
def collect_new(n_ships, ships, cards):
    """(VP, XP, ships) of the ships marked SH_NEW, clearing the marks."""
    vp = 0
    xp = 0
    n = 0
    for s in range(n_ships):
        if ships[s, SH_NEW]:
            ships[s, SH_NEW] = 0
            vp += cards[ships[s, SH_DECK], ships[s, SH_CARD], C_VP]
            xp += cards[ships[s, SH_DECK], ships[s, SH_CARD], C_XP]
            n += 1
    return vp, xp, n


@unmanaged_jit
def new_ship(ships, s, deck, card, escort, chit):
    ships[s, SH_CARD] = card
    ships[s, SH_DECK] = deck
    ships[s, SH_ESCORT] = escort
    ships[s, SH_SUNK] = 0
    ships[s, SH_LIGHT] = 0
    ships[s, SH_HEAVY] = 0
    ships[s, SH_CHIT] = chit
    ships[s, SH_NEW] = 0


# ----------------------------------------------------------------------------- Special Missions (C§4.5)
@unmanaged_jit
def mission_done(boats, i):
    """The counter of the mission being resolved (the next pending one) is removed."""
    m = boats[i, CB_MPENDING]
    boats[i, CB_MPENDING] = m & (m - 1)
    boats[i, CB_SEARCH] = 1


@unmanaged_jit
def mission_failed(boats, i, values):
    """l.292, 302, 315: Unfit from an Event -> the mission fails (counter removed, no VP)."""
    values[M_MISSIONS_FAILED] += 1
    mission_done(boats, i)


@unmanaged_jit
def mission_vp(boats, i, which, vp, xp, values):
    values[which] += vp
    values[M_MISSION_VP] += vp
    credit(boats, i, vp, xp, values)


@unmanaged_jit
def attack_box(state, i, args, ws, values, counters):
    """l.303-306: the box's Naval cards from a fresh deck, one torpedo round at range 0 with
    Ready and Stored torpedoes; VP and XP of ships sunk only."""
    config = args.config
    boats = ws.boats
    ships = ws.ships
    a = boats[i, CB_AREA]
    d = np.int64(D_NAVAL)
    deck_reset(ws.decks, ws.deck_counts, d, config[K_DECK_SIZE + D_NAVAL])
    n_ships = args.areas[a, AT_NAVAL_CARDS]
    for s in range(n_ships):
        new_ship(ships, s, d, deck_draw(state, ws.decks, ws.deck_counts, d, counters), 0, 0)
    n = max(0, boats[i, CB_READY] + boats[i, CB_STORED] - config[K_MISSION_KEEP])
    torpedo_round(state, i, n_ships, n, config[K_MISSION_SALVO], config, boats, args.crew_levels, ships, args.cards,
                  args.damage_table)
    vp, xp, sunk = collect_new(n_ships, ships, args.cards)
    values[M_SHIPS_SUNK] += sunk
    mission_vp(boats, i, np.int64(M_ATTACK_VP), vp, xp, values)


@unmanaged_jit
def raider_box(state, i, config, boats, crew_levels, values):
    """l.316: up to ``raider_max_attacks`` attacks, 1 ammunition or 1 torpedo each, +1 VP per
    roll >= 8 (A17: modified by the row's GS/TS at range 0, or natural)."""
    vp = 0
    for _ in range(config[K_RAIDER_MAX]):
        gun_ok = boats[i, CB_AMMO] > 0
        torp_ok = boats[i, CB_READY] + boats[i, CB_STORED] > config[K_RAIDER_KEEP]
        if config[K_RAIDER_GUN_FIRST]:
            gun = gun_ok
            if not gun_ok and not torp_ok:
                break
        else:
            gun = not torp_ok
            if not gun_ok and not torp_ok:
                break
        if gun:
            boats[i, CB_AMMO] -= 1
            mod = crew_value(boats, crew_levels, i, np.int64(ROW_GS)) + config[K_GUN_MOD0]
        else:
            bonus = choose_torpedo(boats, i, np.int64(0), config)
            fire_one(boats, i)
            mod = crew_value(boats, crew_levels, i, np.int64(ROW_TS)) + config[K_TORPEDO_MOD0] + bonus
        roll = roll_die(state, 10) + (0 if config[K_RAIDER_NATURAL] else mod)
        if roll >= config[K_RAIDER_ROLL]:
            vp += config[K_RAIDER_VP]
    mission_vp(boats, i, np.int64(M_RAIDER_VP), vp, vp if config[K_RAIDER_XP] else 0, values)


@unmanaged_jit
def resolve_mission(state, i, ms, args, ws, values, counters):
    """C§4.5: the boat enters the box, draws, resolves; then the counter is removed and the
    boat is in the Search box."""
    config = args.config
    areas = args.areas
    boats = ws.boats
    crew_levels = args.crew_levels
    a = boats[i, CB_AREA]
    extra = areas[a, AT_MOVE] if config[K_BOX_PLUS_MOVE] else 0  # A7
    if ms == MS_MINE:
        n = areas[a, AT_BOX_EVENTS + MS_MINE] if config[K_MINE_BOX_NUMBER] else config[K_MINE_BOX_EVENTS]  # A16
        unfit = draw_events(state, i, extra + n, config, ws.campaign, boats, crew_levels, args.events, ws.decks,
                            ws.deck_counts, counters)
        if unfit and not config[K_MINE_TOO_LATE]:
            mission_failed(boats, i, values)
            return
        vp = args.mine_vp[i, a]
        boats[i, CB_MINES] = 0
        mission_vp(boats, i, np.int64(M_MINE_VP), vp, 0, values)
    elif ms == MS_ATTACK:
        if draw_events(state, i, extra, config, ws.campaign, boats, crew_levels, args.events, ws.decks,
                       ws.deck_counts, counters):
            mission_failed(boats, i, values)
            return
        for _ in range(areas[a, AT_BOX_EVENTS + MS_ATTACK]):
            if band(boats, crew_levels, i) >= config[K_ABORT_BAND]:  # l.301: abort, the counter stays
                boats[i, CB_SEARCH] = 1
                return
            if draw_event(state, i, config, ws.campaign, boats, crew_levels, args.events, ws.decks, ws.deck_counts,
                          counters):
                mission_failed(boats, i, values)
                return
        attack_box(state, i, args, ws, values, counters)
    else:
        if draw_events(state, i, extra + areas[a, AT_BOX_EVENTS + ms], config, ws.campaign, boats, crew_levels,
                       args.events, ws.decks, ws.deck_counts, counters):
            mission_failed(boats, i, values)
            return
        raider_box(state, i, config, boats, crew_levels, values)
    mission_done(boats, i)


# ----------------------------------------------------------------------------- Strategic (C§4.1)
@hot_jit
def plan(i, args, boats):
    """C§4.1.1 and the policies of C§6: (destination, mission) for this turn."""
    config = args.config
    loadouts = args.loadouts
    a = boats[i, CB_AREA]
    b = band(boats, args.crew_levels, i)
    if in_port(boats, args.areas, i):
        may_sail = boats[i, CB_PATROLS] < config[K_PATROL_LIMIT] and b != BAND_UNFIT
        if may_sail:
            if loadouts[i, BS_SAIL_BAND] == BAND_RESTED:
                may_sail = boats[i, CB_STRESS] == 0
            else:
                may_sail = b <= loadouts[i, BS_SAIL_BAND]
        if not may_sail:
            boats[i, CB_DEST] = a
            boats[i, CB_MISSION_NOW] = NO_MISSION
            return
    elif (b >= loadouts[i, BS_RETURN_BAND] or boats[i, CB_READY] + boats[i, CB_STORED] <= loadouts[i, BS_MIN_TORPEDOES]
          or boats[i, CB_TURNS_AT_SEA] >= loadouts[i, BS_MAX_TURNS_AT_SEA]):
        boats[i, CB_DEST] = args.nearest_port[i, a]
        boats[i, CB_MISSION_NOW] = NO_MISSION
        return
    k = next_mission(boats, i)
    if k >= 0:
        ms = args.missions[i, k]
        boats[i, CB_DEST] = args.nearest_box[i, a, ms]
        boats[i, CB_MISSION_NOW] = ms
        return
    boats[i, CB_DEST] = args.patrol_area[i, boats[i, CB_HOME], a]
    boats[i, CB_MISSION_NOW] = NO_MISSION


@unmanaged_jit
def buy_loadout(i, reserve, args, ws, values):
    """C§4.1 (``so_purchases: every_strategic_segment``): boat i, in a Port box and sailing this turn,
    buys its loadout from the SO left: with no mission pending, each mission of its list in order
    (l.285: more than one per boat; the mine-laying one only in port, l.288, loading its mines),
    each within its cost and ``max`` (l.179); then FAT, then T5 torpedoes up to the loadout's counts,
    ½ SO each, only in port (l.273, l.275), each replacing a normal torpedo aboard."""
    loadouts = args.loadouts
    special_options = args.special_options
    boats = ws.boats
    campaign = ws.campaign
    if boats[i, CB_MPENDING] == 0:
        for k in range(loadouts[i, BS_N_MISSIONS]):
            opt = O_MINE_LAYING + args.missions[i, k]
            if can_buy(campaign, special_options, opt, 1, reserve):
                spend(campaign, special_options, opt, 1, values)
                boats[i, CB_MPENDING] |= np.int64(1) << k
                if args.missions[i, k] == MS_MINE:
                    boats[i, CB_MINES] = loadouts[i, BS_MINES]
                    load_mines(boats, i)
    adv = np.int64(O_ADVANCED)
    for field, bs in ((CB_FAT, BS_FAT), (CB_T5, BS_T5)):
        for _ in range(loadouts[i, bs]):
            if boats[i, field] >= loadouts[i, bs]:
                break
            if boats[i, CB_READY] + boats[i, CB_STORED] - boats[i, CB_FAT] - boats[i, CB_T5] <= 0:
                break
            if not can_buy(campaign, special_options, adv, 1, reserve):
                break
            spend(campaign, special_options, adv, 1, values)
            boats[i, field] += 1


@unmanaged_jit
def buy_missions_at_sea(i, reserve, args, ws, values):
    """``policy.so.missions_at_sea``: boat i, at sea, not Unfit, with no mission pending, buys its list's
    Attack and Raider missions again, each within its cost and ``max`` ('puede ser adquirida para
    cualquier U-Boat que no esté Incapacitado', l.296, l.311); mine-laying only in port (l.288).
    Returns whether it bought one."""
    special_options = args.special_options
    boats = ws.boats
    bought = False
    for k in range(args.loadouts[i, BS_N_MISSIONS]):
        if args.missions[i, k] == MS_MINE:
            continue
        opt = O_MINE_LAYING + args.missions[i, k]
        if can_buy(ws.campaign, special_options, opt, 1, reserve):
            spend(ws.campaign, special_options, opt, 1, values)
            boats[i, CB_MPENDING] |= np.int64(1) << k
            bought = True
    return bought


@hot_jit
def strategic(args, ws, values):
    """C§4.1: plans, then purchases in ``policy.so.order`` (each option once per turn); Priority
    R&R re-plans the boats in port it made fit."""
    config = args.config
    areas = args.areas
    special_options = args.special_options
    boats = ws.boats
    campaign = ws.campaign
    n_boats = config[K_N_BOATS]
    for i in range(n_boats):
        if active(boats, i):
            if in_port(boats, areas, i):
                boats[i, CB_HOME] = boats[i, CB_AREA]
            plan(i, args, boats)
    for k in range(N_MAP_COUNTERS):
        campaign[G_COUNTER_AREA + k] = -1
    reserve = config[K_SO_RESERVE]
    for k in range(config[K_N_SO_ORDER]):
        opt = special_options[SO_ORDER, k]
        if opt == O_LOADOUT:
            if config[K_SO_EVERY_SEGMENT]:  # l.238 'Al inicio de cada Segmento Estratégico ... asigna Misiones'
                for k_boat in range(n_boats):  # in activation order: who buys first
                    i = args.loadouts[k_boat, BS_ACTIVATION]
                    if not active(boats, i):
                        continue
                    if in_port(boats, areas, i):
                        if boats[i, CB_DEST] != boats[i, CB_AREA]:
                            buy_loadout(i, reserve, args, ws, values)
                            plan(i, args, boats)
                    elif (config[K_SO_AT_SEA] and boats[i, CB_MPENDING] == 0
                          and band(boats, args.crew_levels, i) != BAND_UNFIT):
                        if buy_missions_at_sea(i, reserve, args, ws, values):
                            plan(i, args, boats)
            continue
        if opt == O_PRIORITY_RR:  # l.271: -4 Stress to every boat in a Port box, now
            tired = False
            for i in range(n_boats):
                if active(boats, i) and in_port(boats, areas, i) and boats[i, CB_STRESS] >= config[K_RR_MIN_STRESS]:
                    tired = True
            if tired and can_buy(campaign, special_options, opt, 1, reserve):
                spend(campaign, special_options, opt, 1, values)
                for i in range(n_boats):
                    if active(boats, i) and in_port(boats, areas, i):
                        add_stress(boats, i, config[K_RR_STRESS])
                        plan(i, args, boats)  # 'antes de pasar al Segmento de Operaciones' (l.271): it may sail now
            continue
        best = -1
        best_n = 0
        for a in range(config[K_N_AREAS]):  # the sea Area most boats plan to end in, ties lowest index
            n = 0
            for i in range(n_boats):
                if active(boats, i) and boats[i, CB_MISSION_NOW] == NO_MISSION and boats[i, CB_DEST] == a \
                        and areas[a, AT_KIND] == AREA_SEA:
                    n += 1
            if n > best_n:
                best_n = n
                best = a
        if best >= 0 and can_buy(campaign, special_options, opt, 1, reserve):
            spend(campaign, special_options, opt, 1, values)
            campaign[G_COUNTER_AREA + opt] = best
    if config[K_STRATEGIC_ONLY]:  # A15 (b): the counters lapse at once
        for k in range(N_MAP_COUNTERS):
            campaign[G_COUNTER_AREA + k] = -1


@hot_jit
def operations(state, args, ws, values, counters):
    """C§4.2, boats in activation order (list order unless ``fleet[i].policy.order``)."""
    config = args.config
    areas = args.areas
    boats = ws.boats
    limit = np.int64(1) if config[K_ONE_AREA] else np.int64(NO_LIMIT)
    for k_boat in range(config[K_N_BOATS]):  # 'uno por uno' (l.240), in activation order
        i = args.loadouts[k_boat, BS_ACTIVATION]
        if not active(boats, i):
            continue
        a = boats[i, CB_AREA]
        if band(boats, args.crew_levels, i) == BAND_UNFIT and not in_port(boats, areas, i):
            if config[K_UNFIT_TACTICAL]:  # A8 (b): waits in its Search box
                boats[i, CB_SEARCH] = 1
            else:
                move_to(state, i, args.nearest_port[i, a], limit, args, ws, values, counters)
            continue
        dest = boats[i, CB_DEST]
        ms = boats[i, CB_MISSION_NOW]
        if dest == a and ms == NO_MISSION:
            if not in_port(boats, areas, i):  # l.329: not moving -> the Patrol value
                if draw_events(state, i, areas[a, AT_PATROL], config, ws.campaign, boats, args.crew_levels,
                               args.events, ws.decks, ws.deck_counts, counters):
                    boats[i, CB_SEARCH] = 1
            continue
        res = ARRIVED
        if dest != a:
            lim = limit
            step = args.next_area[i, dest, a]
            if limit != NO_LIMIT and step >= 0 and areas[step, AT_KIND] == AREA_CHANNEL:
                lim = np.int64(2)  # A19 (b): a one-Area move may not end in the Channel
            res = move_to(state, i, dest, lim, args, ws, values, counters)
        if ms != NO_MISSION and res == UNFIT:
            mission_failed(boats, i, values)
        elif res == ARRIVED and ms != NO_MISSION and boats[i, CB_AREA] == dest:
            resolve_mission(state, i, ms, args, ws, values, counters)


# ----------------------------------------------------------------------------- Tactical (C§7)
@unmanaged_jit
def contact_count(contact_tables, areas, a, roll):
    """G5: the value of the last [min_roll, contacts] row with min_roll <= roll; 0 below."""
    n = 0
    for k in range(areas[a, AT_CT_LEN]):
        if roll >= contact_tables[a, k, CR_MIN_ROLL]:
            n = contact_tables[a, k, CR_CONTACTS]
    return n


@unmanaged_jit
def place_warning(i, a, warnings, warned):
    """A3 (l.378): one Warning the first time each boat draws a Convoy card in the Area."""
    if warned[i, a] == 0:
        warned[i, a] = 1
        warnings[a] += 1


@unmanaged_jit
def air_key(config, convoys, c):
    """Ordering of an Air Search pair (smaller is kept): most_targets (-targets, escorts) or
    fewest_escorts (escorts, -targets), as one integer."""
    esc = convoys[c, CV_N_ESCORTS]
    tgt = convoys[c, CV_N_SLOTS] - esc
    if config[K_AIR_CHOICE] == AIR_MOST_TARGETS:
        return -tgt * 64 + esc
    return esc * 64 - tgt


@unmanaged_jit
def draw_convoy(state, a, config, campaign, convoys, decks, deck_counts, counters):
    """C§7.2 step 1; with an Air Search counter in the Area two cards, keep one (l.260)."""
    d = np.int64(D_CONVOYS)
    first = deck_draw(state, decks, deck_counts, d, counters)
    if campaign[G_COUNTER_AREA + O_AIR_SEARCH] != a or (deck_counts[d, DECK_LEFT] == 0
                                                         and deck_counts[d, DECK_DISCARDS] == 0):
        return first
    second = deck_draw(state, decks, deck_counts, d, counters)
    if air_key(config, convoys, first) <= air_key(config, convoys, second):
        deck_discard(decks, deck_counts, d, second)  # G22 placeholder: the unchosen card is discarded
        return first
    deck_discard(decks, deck_counts, d, first)
    return second


@hot_jit
def form_pack(state, a_boat, c, args, ws, values):
    """l.381-388 (engagement spec §3.2): the pack in list order from pack[0] and the Alerted
    counters its join rolls placed. Returns (pack size, alerted)."""
    config = args.config
    boats = ws.boats
    pack = ws.pack
    pack[0, PK_BOAT] = a_boat
    esc = args.convoys[c, CV_N_ESCORTS]
    if config[K_PACK] == PACK_NEVER or (config[K_PACK] == PACK_ESCORTS_AT_LEAST and esc < config[K_PACK_K]):
        return 1, 0
    area = boats[a_boat, CB_AREA]
    n_cand = 0
    for o in range(config[K_N_BOATS]):
        if (o != a_boat and at_sea(boats, args.areas, o) and boats[o, CB_AREA] == area and boats[o, CB_SEARCH] == 0
                and band(boats, args.crew_levels, o) != BAND_UNFIT):
            n_cand += 1
            pack[n_cand, PK_BOAT] = o
    if n_cand == 0:
        return 1, 0
    if config[K_RADIO] == RADIO_ALWAYS or (config[K_RADIO] == RADIO_ESCORTS_AT_LEAST and esc >= config[K_RADIO_K]):
        n = n_cand if config[K_RC_PER_JOINER] else 1  # A5
        if can_buy(ws.campaign, args.special_options, np.int64(O_RADIO_CALL), n, 0):
            spend(ws.campaign, args.special_options, np.int64(O_RADIO_CALL), n, values)
            return n_cand + 1, 0
    size = 1
    alerted = 0
    for k in range(1, n_cand + 1):
        o = pack[k, PK_BOAT]
        f = roll_die(state, 10)
        stress = args.wolfpack_stress[f] != 0
        joins = f + (config[K_WP_ATTACKED_MOD] if boats[o, CB_ATTACKED] else 0) >= config[K_WP_JOIN_MIN]
        if stress and config[K_STRESS_FAILS]:  # A6
            joins = False
        if stress:
            add_stress(boats, a_boat, config[K_WP_STRESS_PER])
            alerted += config[K_WP_ALERTED_PER]
        if joins:
            pack[size, PK_BOAT] = o
            size += 1
    return size, alerted


@unmanaged_jit
def fight_abstract(state, c, n_pack, alerted, args, ws, values, counters):
    """C§7.5, the abstract contact model: ships from fresh decks, one torpedo round per pack
    boat, the escorts' Detection and attack rolls, Post-Combat Stress."""
    config = args.config
    cards = args.cards
    boats = ws.boats
    ships = ws.ships
    pack = ws.pack
    decks = ws.decks
    deck_counts = ws.deck_counts
    for d in range(D_TACTICS + 1):
        deck_reset(decks, deck_counts, d, config[K_DECK_SIZE + d])
    naval = args.convoys[c, CV_NAVAL]
    n_ships = args.convoys[c, CV_N_SLOTS]
    for s in range(n_ships):
        kind = args.convoy_slots[c, s]
        if kind == KIND_E:
            d = np.int64(D_FLEET) if naval else np.int64(D_ESCORT)
        elif kind == KIND_N:
            d = np.int64(D_NAVAL)
        else:
            d = np.int64(D_MERCHANT)
        card = deck_draw(state, decks, deck_counts, d, counters)
        escort = 1 if kind == KIND_E else 0
        if d == D_MERCHANT and cards[D_MERCHANT, card, C_MISIDENTIFIED]:  # digest §1.7
            d = np.int64(D_ESCORT)
            card = deck_draw(state, decks, deck_counts, d, counters)
            escort = 1
        chit = 0
        if escort and config[K_TACTICS_IN_USE]:
            chit = cards[D_TACTICS, deck_draw(state, decks, deck_counts, np.int64(D_TACTICS), counters), C_CHIT_VALUE]
        new_ship(ships, s, d, card, escort, chit)
    for k in range(n_pack):
        o = pack[k, PK_BOAT]
        if band(boats, args.crew_levels, o) == BAND_UNFIT:
            pack[k, PK_FIRED] = 0
            continue
        pack[k, PK_FIRED] = torpedo_round(state, o, n_ships, boats[o, CB_READY], config[K_SALVO], config, boats,
                                          args.crew_levels, ships, cards, args.damage_table)
        vp, xp, sunk = collect_new(n_ships, ships, cards)
        values[M_SHIPS_SUNK] += sunk
        credit(boats, o, vp, xp, values)
    det_field = C_DETECTION_SUBMERGED if config[K_SUBMERGED] else C_DETECTION_SURFACED
    att_field = C_SUBMERGED_ATTACK if config[K_SUBMERGED] else C_SURFACE_ATTACK
    for s in range(n_ships):
        if not ships[s, SH_ESCORT]:
            continue
        row = cards[ships[s, SH_DECK], ships[s, SH_CARD]]
        for k in range(n_pack):
            o = pack[k, PK_BOAT]
            if boats[o, CB_LOST] or pack[k, PK_FIRED] == 0:
                continue
            for _ in range(config[K_ESCORT_ROLLS]):
                if roll_die(state, 10) + alerted + ships[s, SH_CHIT] < row[det_field]:
                    continue
                if row[att_field] == NOT_ALLOWED or roll_die(state, 10) + ships[s, SH_CHIT] < row[att_field]:
                    continue
                add_stress(boats, o, config[K_HIT_STRESS])
                if config[K_SINK_ESCORT] != NOT_ALLOWED and roll_die(state, 10) >= config[K_SINK_ESCORT]:
                    lose(boats, o, values)
                    break
    for k in range(n_pack):
        o = pack[k, PK_BOAT]
        if not boats[o, CB_LOST]:
            add_stress(boats, o, config[K_POST_STRESS])


@hot_jit
def post_combat(i, args, ws):
    """The Post-Combat Phase (C§7.7) of a boat that withdrew (l.370): 'Añadir Estrés' (the
    abstract model's Post-Combat Stress, the engagement's post_combat_stress module) and
    'Recargar Torpedos'."""
    config = args.config
    boats = ws.boats
    if config[K_CONTACT_ENGAGEMENT]:
        add_stress(boats, i, args.engagement_config[EK_POST_STRESS])
    else:
        add_stress(boats, i, config[K_POST_STRESS])
    if config[K_RELOAD] == RELOAD_POST_COMBAT_AND_REFIT:
        reload(boats, args.loadouts, i)


@unmanaged_jit
def fight(state, a_boat, c, args, ws, values, counters):
    """C§7.2 step 4: pack, fight (C§7.4 engagement or C§7.5 abstract), Post-Combat (C§7.7)."""
    config = args.config
    boats = ws.boats
    pack = ws.pack
    n_pack, alerted = form_pack(state, a_boat, c, args, ws, values)
    values[M_ATTACKS] += 1
    for k in range(n_pack):
        o = pack[k, PK_BOAT]
        pack[k, PK_TORPEDOES0] = boats[o, CB_READY] + boats[o, CB_STORED]
        pack[k, PK_AMMO0] = boats[o, CB_AMMO]
    if config[K_CONTACT_ENGAGEMENT]:
        vp, xp, sunk, lost = fight_engagement(  # the hot round takes its arrays by name (campaign_engagement)
            state, c, args.convoys[c, CV_N_SLOTS], n_pack, alerted, config, boats, args.loadouts, pack, args.cards,
            ws.decks, ws.deck_counts, counters, args.engagement_config, args.engagement_slots, args.engagement_tables,
            args.display_adjacent, args.display_areas, args.display_distance, args.engagement_boats,
            args.engagement_crew_rows, ws.battle_ships, ws.battle_boats, ws.battle_slots, ws.battle_boat_static,
            ws.battle_crew_rows, ws.battle_config, ws.battle_metrics)
        values[M_VP] += vp
        values[M_XP] += xp
        values[M_SHIPS_SUNK] += sunk
        values[M_BOATS_LOST] += lost
    else:
        fight_abstract(state, c, n_pack, alerted, args, ws, values, counters)
    for k in range(n_pack):
        o = pack[k, PK_BOAT]
        if boats[o, CB_READY] + boats[o, CB_STORED] < pack[k, PK_TORPEDOES0] or boats[o, CB_AMMO] < pack[k, PK_AMMO0]:
            boats[o, CB_ATTACKED_NOW] = 1
        if not boats[o, CB_LOST] and config[K_RELOAD] == RELOAD_POST_COMBAT_AND_REFIT:
            reload(boats, args.loadouts, o)


@unmanaged_jit
def contact_phase(state, i, args, ws, values, counters):
    """C§7.2 (l.351-363, 370, 378): the Contact roll, then that many Convoy cards."""
    config = args.config
    areas = args.areas
    convoys = args.convoys
    boats = ws.boats
    if config[K_ATTACK] == ATTACK_NEVER:  # the roll is optional (l.354)
        return
    boats[i, CB_SEARCHED] = 1
    a = boats[i, CB_AREA]
    roll = (roll_die(state, 10) + config[K_CM_INTEL] * (ws.campaign[G_COUNTER_AREA + O_INTELLIGENCE] == a)
            + config[K_CM_SEEKER] * args.loadouts[i, BS_SEEKER] + config[K_CM_WARNING] * ws.warnings[a]
            + config[K_CM_ATTACKED] * boats[i, CB_ATTACKED] + boats[i, CB_CONTACT_BONUS])
    for _ in range(contact_count(args.contact_tables, areas, a, roll)):
        if not at_sea(boats, areas, i) or band(boats, args.crew_levels, i) == BAND_UNFIT:
            break
        c = draw_convoy(state, a, config, ws.campaign, convoys, ws.decks, ws.deck_counts, counters)
        values[M_CONTACTS] += 1
        if not config[K_WARN_ATTACK_ONLY]:
            place_warning(i, a, ws.warnings, ws.warned)
        esc = convoys[c, CV_N_ESCORTS]
        attack = True
        if config[K_ATTACK] == ATTACK_NO_NAVAL:
            attack = convoys[c, CV_NAVAL] == 0
        elif config[K_ATTACK] == ATTACK_MAX_ESCORTS:
            attack = esc <= config[K_ATTACK_K]
        if attack:
            if config[K_WARN_ATTACK_ONLY]:
                place_warning(i, a, ws.warnings, ws.warned)
            fight(state, i, c, args, ws, values, counters)
        else:  # withdraw: 'pasa directamente a la Fase de Resolución Post-Combate' (l.370)
            post_combat(i, args, ws)
        deck_discard(ws.decks, ws.deck_counts, np.int64(D_CONVOYS), c)


@hot_jit
def tactical(state, args, ws, values, counters):
    """C§7.1 and the Attacked markers of C§7.7 (A4, G21)."""
    config = args.config
    areas = args.areas
    boats = ws.boats
    n_boats = config[K_N_BOATS]
    if config[K_UNFIT_TACTICAL]:  # A8 (b)
        for k_boat in range(n_boats):
            i = args.loadouts[k_boat, BS_ACTIVATION]
            if at_sea(boats, areas, i) and band(boats, args.crew_levels, i) == BAND_UNFIT:
                move_to(state, i, args.nearest_port[i, boats[i, CB_AREA]], np.int64(NO_LIMIT), args, ws, values,
                        counters)
    for i in range(n_boats):
        boats[i, CB_ATTACKED_NOW] = 0
        boats[i, CB_SEARCHED] = 0
    for k_boat in range(n_boats):  # 'Uno a uno, los U-Boat resuelven ...' (l.246), in activation order
        i = args.loadouts[k_boat, BS_ACTIVATION]
        if not at_sea(boats, areas, i) or boats[i, CB_SEARCH]:
            continue
        if band(boats, args.crew_levels, i) != BAND_UNFIT:
            contact_phase(state, i, args, ws, values, counters)
            if not config[K_ATT_END_OF_TURN]:  # 'al final de un Segmento Táctico en el que ha atacado' (l.76, l.351)
                for o in range(n_boats):
                    if boats[o, CB_ATTACKED_NOW] and not (config[K_ATT_JOINERS_NOT_SEARCHED] and boats[o, CB_SEARCHED]):
                        boats[o, CB_ATTACKED] = 1
        boats[i, CB_SEARCH] = 1
    for i in range(n_boats):
        now = boats[i, CB_ATTACKED_NOW]
        if config[K_ATT_JOINERS_NOT_SEARCHED] and boats[i, CB_SEARCHED]:
            now = 0
        if config[K_ATT_UNTIL_PORT]:
            boats[i, CB_ATTACKED] = 1 if (boats[i, CB_ATTACKED] or now) else 0
        else:
            boats[i, CB_ATTACKED] = now


# ----------------------------------------------------------------------------- Refit (C§4.7)
@hot_jit
def refit(args, ws):
    """l.226-228: promote, (patrol limits on entering port), Stress recovery, resupply in
    port, reload at sea, reset the map."""
    config = args.config
    loadouts = args.loadouts
    crew_levels = args.crew_levels
    boats = ws.boats
    n_boats = config[K_N_BOATS]
    for i in range(n_boats):
        if boats[i, CB_LOST]:
            continue
        port = in_port(boats, args.areas, i)
        if config[K_PROMOTION] == PROMOTE_ANYWHERE or (config[K_PROMOTION] == PROMOTE_IN_PORT and port):
            for _ in range(3):  # green -> ace at most
                lv = boats[i, CB_LEVEL]
                need = crew_levels[i, lv, BL_XP_NEXT]
                if lv >= 3 or need == NO_XP_NEXT or boats[i, CB_XP] < need:
                    break
                boats[i, CB_XP] -= need  # G21 placeholder xp_after_promotion: subtract
                boats[i, CB_LEVEL] = lv + 1
        if boats[i, CB_RETIRED]:
            continue
        a = boats[i, CB_AREA]
        if port:
            add_stress(boats, i, -args.areas[a, AT_REFIT])  # l.31
        if loadouts[i, BS_COOL] and (not config[K_COOL_IN_PORT] or port):  # l.112, A14
            add_stress(boats, i, config[K_COOL_STRESS])
        if not port and ws.campaign[G_COUNTER_AREA + O_SUPPLY_SHIP] == a:  # l.264
            add_stress(boats, i, config[K_SUPPLY_STRESS])
        if port:
            load_out(boats, loadouts, args.missions, i)
        elif config[K_RELOAD] != RELOAD_PORT_ONLY:
            reload(boats, loadouts, i)
        if not port:
            boats[i, CB_TURNS_AT_SEA] += 1
        boats[i, CB_SEARCH] = 0
        boats[i, CB_CONTACT_BONUS] = 0
    if not config[K_WARN_CAMPAIGN]:
        ws.warnings[:] = 0
        ws.warned[:, :] = 0


# ----------------------------------------------------------------------------- the campaign (C§9)
@hot_jit
def setup(args, ws, values):
    config = args.config
    loadouts = args.loadouts
    boats = ws.boats
    campaign = ws.campaign
    values[:] = 0
    campaign[:] = 0
    campaign[G_SO] = config[K_SO_START]
    ws.warnings[:] = 0
    ws.warned[:, :] = 0
    deck_reset(ws.decks, ws.deck_counts, np.int64(D_EVENTS), config[K_DECK_SIZE + D_EVENTS])
    deck_reset(ws.decks, ws.deck_counts, np.int64(D_CONVOYS), config[K_DECK_SIZE + D_CONVOYS])
    for i in range(config[K_N_BOATS]):
        boats[i, :] = 0
        boats[i, CB_AREA] = loadouts[i, BS_PORT]
        boats[i, CB_HOME] = loadouts[i, BS_PORT]
        boats[i, CB_LEVEL] = loadouts[i, BS_LEVEL]
        if not config[K_SO_EVERY_SEGMENT]:  # so_purchases: setup_only -- the loadout is bought at set-up
            boats[i, CB_FAT] = loadouts[i, BS_FAT]
            boats[i, CB_T5] = loadouts[i, BS_T5]
            boats[i, CB_MINES] = loadouts[i, BS_MINES]
            boats[i, CB_MPENDING] = (np.int64(1) << loadouts[i, BS_N_MISSIONS]) - 1
        boats[i, CB_DEST] = loadouts[i, BS_PORT]
        boats[i, CB_MISSION_NOW] = NO_MISSION
        load_out(boats, loadouts, args.missions, i)


@hot_jit
def campaign_metrics(args, ws, values):
    """C§8: the success level reached and the per-boat metrics."""
    config = args.config
    success_levels = args.success_levels
    boats = ws.boats
    values[M_TURNS] = ws.campaign[G_TURN]
    values[M_SO_LEFT] = ws.campaign[G_SO]
    level = -1
    for k in range(config[K_N_LEVELS]):  # thresholds ascending: the last one <= VP
        if values[M_VP] >= success_levels[LV_VP, k]:
            level = success_levels[LV_SHEET_INDEX, k]
    if level >= 0:
        values[N_FIXED_METRICS + level] = 1
    base = N_FIXED_METRICS + config[K_N_LEVELS]
    for i in range(config[K_N_BOATS]):
        row = base + N_BOAT_METRICS * i
        values[row + BM_VP] = boats[i, CB_VP]
        values[row + BM_XP] = boats[i, CB_XP_TOTAL]
        values[row + BM_LOST] = boats[i, CB_LOST]
        values[row + BM_PATROLS] = boats[i, CB_PATROLS]
        values[row + BM_LEVEL] = boats[i, CB_LEVEL]
        if boats[i, CB_PATROLS] < config[K_PATROL_LIMIT]:     # at sea or lost on patrol CB_PATROLS + 1
            at = patrol_metrics_row(config, boats[i, CB_PATROLS])
            values[at + PM_VP] += boats[i, CB_VP] - boats[i, CB_PATROL_VP0]
            values[at + PM_LOST] += boats[i, CB_LOST]


@unmanaged_jit
def campaign_trial(state, values, counters, ws, args):
    """One campaign (C§9) in the driver's trial form."""
    config = args.config
    campaign = ws.campaign
    setup(args, ws, values)
    for _ in range(config[K_MAX_TURNS] + 1):
        any_active = False
        for i in range(config[K_N_BOATS]):
            if active(ws.boats, i):
                any_active = True
        if not any_active:
            break
        if campaign[G_TURN] == config[K_MAX_TURNS]:  # the named campaign cap
            values[M_P_TURN_CAP] = 1
            counters[CT_TURN_CAP] += 1
            break
        campaign[G_TURN] += 1
        strategic(args, ws, values)
        operations(state, args, ws, values, counters)
        tactical(state, args, ws, values, counters)
        refit(args, ws)
    campaign_metrics(args, ws, values)


@jit
def campaign_workspace(args):
    """The chunk-local :class:`~kernels.uboat_leader.campaign_state.CampaignWorkspace` of a
    campaign point (the engagement model's battle arrays at their hard sizes)."""
    config = args.config
    n_boats = max(config[K_N_BOATS], 1)
    n_areas = max(config[K_N_AREAS], 1)
    max_cards = args.cards.shape[1]
    for d in range(N_CAMPAIGN_DECKS):
        max_cards = max(max_cards, config[K_DECK_SIZE + d])
    return CampaignWorkspace(
        np.zeros((n_boats, N_CB_FIELDS), np.int64), np.zeros(N_G_FIELDS, np.int64), np.zeros(n_areas, np.int64),
        np.zeros((n_boats, n_areas), np.int64), np.zeros((N_CAMPAIGN_DECKS, 3, max_cards), np.int64),
        np.zeros((N_CAMPAIGN_DECKS, 2), np.int64), np.zeros((SHIP_ROWS, N_SH_FIELDS), np.int64),
        np.zeros((n_boats + 1, N_PK_FIELDS), np.int64),
        np.zeros((MAX_SHIPS, N_SHIP_FIELDS), np.int64), np.zeros((MAX_BOATS, N_BOAT_FIELDS), np.int64),
        np.zeros((MAX_SHIPS, N_SLOT_FIELDS), np.int64), np.zeros((MAX_BOATS, N_BOAT_STATIC), np.int64),
        np.zeros((MAX_BOATS, 2, N_ROW_FIELDS), np.int64), np.zeros(args.engagement_config.shape[0], np.int64),
        np.zeros(N_ENGAGEMENT_METRICS, np.int64))


@parallel_jit
def campaign_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """Per-chunk (hist, moments, counters) of the campaign metrics (:mod:`kernels.driver`)."""
    return run_trials(campaign_trial, campaign_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size,
                      n_trials, args.config[K_N_METRICS], n_bins, N_COUNTERS)
