"""Attacks of a combat round -- PLACEHOLDER rule modules, not published rules (the source
stops before them, G15/G18): ``uboat_attack: placeholder_d10`` (spec §5.1) and
``enemy_attack: placeholder_d10`` (spec §5.3). Their numbers come from data/combat.yaml.
"""
from __future__ import annotations

import numpy as np

from kernels.rng import roll_die
from kernels.uboat_leader.battle import (PICK_GUN, PICK_TORPEDO, chit_value, crew_row, damage_penalty,
                                         pick, remove_ship, ship_vp, stress_band)
from kernels._jit import hot_jit, unmanaged_jit
from kernels.uboat_leader.state import (
    B_AMMO, B_AREA, B_ATTACKED, B_DETECTED, B_ON, B_READY, B_SILENT, B_STRESS, B_SUNK, B_SURFACED,
    BAND_UNFIT, C_GUN, C_SUBMERGED_ATTACK, C_SURFACE_ATTACK, C_TORPEDO, C_XP, DAMAGE_HEAVY,
    DAMAGE_SUNK, ENEMY_ATTACK_NONE, K_DAMAGE_STACK, K_ENEMY_ATTACK, K_HEAVY_ATTACK_BONUS,
    K_HIT_STRESS, K_N_BOATS, K_N_SHIPS, K_SALVO, K_SINK_ESCORT, K_SINK_MERCHANT, K_SINK_NAVAL,
    K_SUBMERGED_REACH, K_SURFACED_REACH, KIND_N, M_SHIPS_SUNK, M_TORPEDOES_USED, M_VP, M_XP,
    NOT_ALLOWED, R_GS, R_TS, S_AREA, S_CARD, S_DECK, S_ESCORT, S_HEAVY, S_KIND, S_LIGHT, S_ON,
    S_REVEALED, T_DAMAGE, T_GUN_RANGE, T_TORPEDO_RANGE)


@unmanaged_jit
def hit_and_damage(state, s, modifier, to_hit, ship, cards, tables, cfg, dk, dn, m):
    """One torpedo or gun roll at ship ``s``; True if it sank.

    Hit on d10 + modifier (+1 against Heavy Damage, §1.5) >= to-hit; a hit rolls d10 on the
    damage table (light / heavy / sunk). Any damage on a Heavy-Damaged ship sinks it; damage on
    a Light-Damaged ship makes it Heavy (A12 ``replace`` clears Light, ``stack`` keeps both).
    """
    bonus = cfg[K_HEAVY_ATTACK_BONUS] if ship[s, S_HEAVY] else 0
    if roll_die(state, 10) + modifier + bonus < to_hit:
        return False
    result = tables[T_DAMAGE, roll_die(state, 10)]
    if result != DAMAGE_SUNK and ship[s, S_HEAVY] == 0:
        if result == DAMAGE_HEAVY or ship[s, S_LIGHT]:
            ship[s, S_HEAVY] = 1
            if not cfg[K_DAMAGE_STACK]:
                ship[s, S_LIGHT] = 0
        else:
            ship[s, S_LIGHT] = 1
        return False
    v = ship_vp(ship, s, cards, cfg)
    m[M_VP] += v if v > 0 else 0
    m[M_XP] += cards[ship[s, S_DECK], ship[s, S_CARD], C_XP]
    m[M_SHIPS_SUNK] += 1
    remove_ship(s, ship, cfg, dk, dn)
    return True


@unmanaged_jit
def uboat_attack(state, b, ship, boat, cards, bstat, brows, tables, dist, cfg, dk, dn, m):
    """Spec §5.1: one weapon, one target per boat per round. A salvo of torpedoes at the
    policy's target (stopping once it sinks), else one gun attack if surfaced with ammunition."""
    if not boat[b, B_ON] or boat[b, B_SILENT] or stress_band(boat, b, bstat) == BAND_UNFIT:
        return
    row = crew_row(boat, b, bstat)
    a = boat[b, B_AREA]
    if boat[b, B_READY] > 0:
        t = pick(np.int64(PICK_TORPEDO), a, ship, cards, dist, cfg)
        if t >= 0:
            n = cfg[K_SALVO]
            if n > boat[b, B_READY]:
                n = boat[b, B_READY]
            boat[b, B_READY] -= n
            m[M_TORPEDOES_USED] += n
            boat[b, B_ATTACKED] = 1
            mod = brows[b, row, R_TS] + tables[T_TORPEDO_RANGE, dist[ship[t, S_AREA], a]]
            to_hit = cards[ship[t, S_DECK], ship[t, S_CARD], C_TORPEDO]
            for _ in range(n):
                if hit_and_damage(state, t, mod, to_hit, ship, cards, tables, cfg, dk, dn, m):
                    break  # the rest of the salvo is spent
            return
    gun_attack(state, b, row, a, ship, boat, cards, brows, tables, dist, cfg, dk, dn, m)


@hot_jit
def gun_attack(state, b, row, a, ship, boat, cards, brows, tables, dist, cfg, dk, dn, m):
    """A surfaced boat ``b`` with ammunition fires its deck gun at the ship the gun target
    rule picks in reach of Area ``a`` (spec §5.1 PLACEHOLDER module); True if it fired. Shared
    by the engagement and the campaign's engagement model."""
    if not (boat[b, B_SURFACED] and boat[b, B_AMMO] > 0):
        return False
    t = pick(np.int64(PICK_GUN), a, ship, cards, dist, cfg)
    if t < 0:
        return False
    boat[b, B_AMMO] -= 1
    boat[b, B_ATTACKED] = 1
    mod = brows[b, row, R_GS] + tables[T_GUN_RANGE, dist[ship[t, S_AREA], a]]
    hit_and_damage(state, t, mod, cards[ship[t, S_DECK], ship[t, S_CARD], C_GUN],
                   ship, cards, tables, cfg, dk, dn, m)
    return True


@unmanaged_jit
def enemy_attacks(state, ship, boat, cards, dist, cfg):
    """Spec §5.3: every revealed ship in slot order attacks the nearest Detected U-boat in its
    reach. Hit: +hit_stress, then a further d10 >= sink_roll[attacker] sinks the boat."""
    if cfg[K_ENEMY_ATTACK] == ENEMY_ATTACK_NONE:
        return
    for s in range(cfg[K_N_SHIPS]):
        if not (ship[s, S_ON] and ship[s, S_REVEALED]):
            continue
        d, c = ship[s, S_DECK], ship[s, S_CARD]
        surface_attack = cards[d, c, C_SURFACE_ATTACK]
        submerged_attack = cards[d, c, C_SUBMERGED_ATTACK]
        target = -1
        best = 0
        for b in range(cfg[K_N_BOATS]):
            if not (boat[b, B_ON] and boat[b, B_DETECTED]):
                continue
            r = dist[ship[s, S_AREA], boat[b, B_AREA]]
            if boat[b, B_SURFACED]:
                ok = surface_attack != NOT_ALLOWED and r <= cfg[K_SURFACED_REACH]
            else:
                ok = submerged_attack != NOT_ALLOWED and r <= cfg[K_SUBMERGED_REACH]
            if ok and (target < 0 or r < best):
                target, best = b, r
        if target < 0:
            continue
        number = surface_attack if boat[target, B_SURFACED] else submerged_attack
        roll = roll_die(state, 10)
        if roll + chit_value(state, ship, s, cards, cfg) - damage_penalty(ship, s, cfg) >= number:
            boat[target, B_STRESS] += cfg[K_HIT_STRESS]
            if ship[s, S_ESCORT]:
                sink = cfg[K_SINK_ESCORT]
            elif ship[s, S_KIND] == KIND_N:
                sink = cfg[K_SINK_NAVAL]
            else:
                sink = cfg[K_SINK_MERCHANT]
            if sink != NOT_ALLOWED and roll_die(state, 10) >= sink:
                boat[target, B_ON] = 0
                boat[target, B_SUNK] = 1
