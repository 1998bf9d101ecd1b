"""Contact model ``engagement`` of a campaign (docs/models/uboat_leader_campaign.md C§7.4): the
engagement kernel's round (kernels/uboat_leader/engagement.py) played with the pack's campaign
torpedoes, ammunition and Stress, each ship's VP/XP credited to the boat that sank it and the
torpedo fired chosen by the advanced-torpedo module (C§7.6).

Reused unchanged: the engagement's setup (fresh target decks, ships, the setup reveal), U-boat
movement, Bearing Movement, the Escorts step, enemy attacks, end of round and ``hit_and_damage``.
Only the U-boat attack is this module's own (:func:`campaign_uboat_attack`): it is the
engagement's ``uboat_attack`` plus the C§7.6 torpedo choice (:func:`choose_torpedo`, shared with
the abstract model) and per-boat credit.

:func:`fight_engagement` takes its arrays one by one, not the campaign's records: its round loop
is the campaign's hottest code, and with the records passed in (as a call, or inlined into
``fight``) the example campaign ran 4-7% slower (1 thread, interleaved in one process, identical
results); with the arrays by name it runs as before. The battle arrays keep the engagement
kernel's names (``ship``, ``boat``, ``cfg`` ...), as the engagement functions it calls do.
"""
from __future__ import annotations

import numpy as np

from kernels._jit import hot_jit, unmanaged_jit
from kernels.uboat_leader.attacks import enemy_attacks, gun_attack, hit_and_damage
from kernels.uboat_leader.battle import PICK_TORPEDO, crew_row, pick, stress_band
from kernels.uboat_leader.campaign_state import (BS_READY, CB_AMMO, CB_FAT, CB_LEVEL, CB_LOST, CB_READY,
                                                 CB_STORED, CB_STRESS, CB_T5, CB_VP, CB_XP, CB_XP_TOTAL,
                                                 K_FAT_BONUS, K_T5_BONUS, PK_BOAT)
from kernels.uboat_leader.engagement import _any_on, end_of_round, setup
from kernels.uboat_leader.movement import bearing_movement, escorts_step, uboat_movement
from kernels.uboat_leader.state import (
    B_AGGRESSIVE, B_AMMO, B_AREA, B_ATTACKED, B_ON, B_READY, B_SILENT, B_STORED, B_STRESS, B_SUNK,
    B_TUBES, BAND_UNFIT, BS_STRESS0, C_TORPEDO, CT_ROUND_CAP, K_ALERTED, K_MAX_ROUNDS,
    K_N_BOATS, K_N_SHIPS, K_POST_STRESS, K_SALVO, M_SHIPS_SUNK, M_TORPEDOES_USED, M_VP, M_XP,
    N_BOAT_STATIC, N_ROW_FIELDS, N_SLOT_FIELDS, R_AGGRESSIVE, R_TS, S_AREA, S_CARD, S_DECK,
    S_ESCORT, S_ON, T_TORPEDO_RANGE)


@hot_jit
def choose_torpedo(boats, i, escort, config):
    """G19 placeholder (C§7.6): the torpedo fired at an escort is a T5, else a normal one, else
    a FAT; at any other ship a FAT, else normal, else T5. Removes the advanced counter used
    and returns its hit bonus (0 under ``advanced_torpedoes: as_normal``; ``config`` is the
    campaign's). Called before the torpedo leaves boat ``i``'s Ready/Stored."""
    normal = boats[i, CB_READY] + boats[i, CB_STORED] - boats[i, CB_FAT] - boats[i, CB_T5]
    first = CB_T5 if escort else CB_FAT
    last = CB_FAT if escort else CB_T5
    if boats[i, first] > 0:
        boats[i, first] -= 1
        return config[K_T5_BONUS] if escort else config[K_FAT_BONUS]
    if normal > 0:
        return 0
    if boats[i, last] > 0:
        boats[i, last] -= 1
    return 0


# inlined (hot_jit): called twice per boat and round with 16 arguments; measured on the example
# campaign, 1 thread: 47.2k -> 50.8k campaigns/s (uboat-campaign bench 198x -> 213x), compile time unchanged
@hot_jit
def campaign_uboat_attack(state, b, i, ship, boat, cards, bstat, brows, tables, dist, cfg, dk, dn, m, boats,
                          campaign_config):
    """The engagement's U-boat attack (spec §5.1 PLACEHOLDER module) for pack boat ``b`` =
    campaign boat ``i``: each torpedo of the salvo takes its type (C§7.6) and bonus; after a
    sinking the rest of the salvo is spent; VP/XP of ships it sinks go to boat ``i``."""
    if not boat[b, B_ON] or boat[b, B_SILENT] or stress_band(boat, b, bstat) == BAND_UNFIT:
        return
    row = crew_row(boat, b, bstat)
    a = boat[b, B_AREA]
    vp0 = m[M_VP]
    xp0 = m[M_XP]
    if boat[b, B_READY] > 0:
        t = pick(np.int64(PICK_TORPEDO), a, ship, cards, dist, cfg)
        if t >= 0:
            n = min(cfg[K_SALVO], boat[b, B_READY])
            m[M_TORPEDOES_USED] += n
            boat[b, B_ATTACKED] = 1
            mod = brows[b, row, R_TS] + tables[T_TORPEDO_RANGE, dist[ship[t, S_AREA], a]]
            to_hit = cards[ship[t, S_DECK], ship[t, S_CARD], C_TORPEDO]
            escort = ship[t, S_ESCORT]
            sunk = False
            for _ in range(n):
                boats[i, CB_READY] = boat[b, B_READY]
                boats[i, CB_STORED] = boat[b, B_STORED]
                bonus = choose_torpedo(boats, i, escort, campaign_config)
                boat[b, B_READY] -= 1
                if not sunk:
                    sunk = hit_and_damage(state, t, mod + bonus, to_hit, ship, cards, tables, cfg, dk, dn, m)
            _credit(boats, i, m[M_VP] - vp0, m[M_XP] - xp0)
            return
    if gun_attack(state, b, row, a, ship, boat, cards, brows, tables, dist, cfg, dk, dn, m):
        _credit(boats, i, m[M_VP] - vp0, m[M_XP] - xp0)


@hot_jit
def _credit(boats, i, vp, xp):
    boats[i, CB_VP] += vp
    boats[i, CB_XP] += xp
    boats[i, CB_XP_TOTAL] += xp


@unmanaged_jit
def fight_engagement(state, c, n_ships, n_pack, alerted, campaign_config, boats, loadouts, pack, cards, dk, dn,
                     counters, engagement_config, engagement_slots, tables, adj, area, dist, engagement_boats,
                     engagement_crew_rows, ship, boat, wslots, wbstat, wbrows, wcfg, em):
    """C§7.4: one contact of Convoy card ``c`` (``n_ships`` slots) fought on the tactical
    display by the pack ``pack[0..n_pack-1]`` (campaign boats, at their current crew level and
    Stress), on the battle arrays ``ship`` .. ``em`` (``CampaignWorkspace.battle_*``). Per-boat
    VP/XP, Stress, torpedoes, ammunition and advanced counters are written back to ``boats``; a
    boat sunk is marked lost. Returns (VP, XP, ships sunk, boats lost)."""
    for k in range(wcfg.shape[0]):
        wcfg[k] = engagement_config[k]
    wcfg[K_N_SHIPS] = n_ships
    wcfg[K_N_BOATS] = n_pack
    wcfg[K_ALERTED] = alerted
    for s in range(n_ships):
        for f in range(N_SLOT_FIELDS):
            wslots[s, f] = engagement_slots[c, s, f]
    vp_before = 0
    xp_before = 0
    for k in range(n_pack):
        i = pack[k, PK_BOAT]
        lv = boats[i, CB_LEVEL]
        for f in range(N_BOAT_STATIC):
            wbstat[k, f] = engagement_boats[i, lv, f]
        wbstat[k, BS_STRESS0] = boats[i, CB_STRESS]
        for r in range(2):
            for f in range(N_ROW_FIELDS):
                wbrows[k, r, f] = engagement_crew_rows[i, lv, r, f]
        vp_before += boats[i, CB_VP]
        xp_before += boats[i, CB_XP_TOTAL]
    setup(state, ship, boat, wslots, cards, wbstat, wbrows, dist, wcfg, dk, dn, em, counters)
    for k in range(n_pack):  # the boats' campaign torpedoes and ammunition, not the card's (C§7.4)
        i = pack[k, PK_BOAT]
        boat[k, B_READY] = boats[i, CB_READY]
        boat[k, B_STORED] = boats[i, CB_STORED]
        boat[k, B_TUBES] = loadouts[i, BS_READY]
        boat[k, B_AMMO] = boats[i, CB_AMMO]
    rounds = 0
    while _any_on(boat, n_pack, np.int64(B_ON)) and _any_on(ship, n_ships, np.int64(S_ON)):
        if rounds == wcfg[K_MAX_ROUNDS]:  # the named round cap
            counters[CT_ROUND_CAP] += 1
            break
        rounds += 1
        uboat_movement(state, ship, boat, wslots, cards, wbstat, wbrows, adj, area, dist, wcfg, dk, dn, counters)
        bearing_movement(state, ship, boat, wslots, cards, wbstat, adj, area, dist, wcfg, dk, dn, counters)
        escorts_step(state, ship, boat, wslots, cards, wbstat, adj, area, dist, wcfg, dk, dn, counters)
        for b in range(n_pack):  # Initiative is read once, as the attacks step begins
            boat[b, B_AGGRESSIVE] = wbrows[b, crew_row(boat, b, wbstat), R_AGGRESSIVE]
        for b in range(n_pack):
            if boat[b, B_AGGRESSIVE]:
                campaign_uboat_attack(state, b, pack[b, PK_BOAT], ship, boat, cards, wbstat, wbrows, tables, dist,
                                      wcfg, dk, dn, em, boats, campaign_config)
        enemy_attacks(state, ship, boat, cards, dist, wcfg)
        for b in range(n_pack):
            if not boat[b, B_AGGRESSIVE]:
                campaign_uboat_attack(state, b, pack[b, PK_BOAT], ship, boat, cards, wbstat, wbrows, tables, dist,
                                      wcfg, dk, dn, em, boats, campaign_config)
        end_of_round(boat, wcfg)
    vp = 0
    xp = 0
    lost = 0
    for k in range(n_pack):
        i = pack[k, PK_BOAT]
        if not boat[k, B_SUNK]:
            boat[k, B_STRESS] += wcfg[K_POST_STRESS]  # the engagement's Post-Combat Stress (G21 placeholder)
        elif boats[i, CB_LOST] == 0:
            boats[i, CB_LOST] = 1
            lost += 1
        boats[i, CB_STRESS] = boat[k, B_STRESS]
        boats[i, CB_READY] = boat[k, B_READY]
        boats[i, CB_STORED] = boat[k, B_STORED]
        boats[i, CB_AMMO] = boat[k, B_AMMO]
        vp += boats[i, CB_VP]
        xp += boats[i, CB_XP_TOTAL]
    return vp - vp_before, xp - xp_before, em[M_SHIPS_SUNK], lost
