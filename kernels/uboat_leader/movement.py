"""Movement steps of a combat round: U-boat movement (§7.1-7.3), Bearing Movement (§7.4)
and the Escorts step (§7.5 Detection, then the PLACEHOLDER escort movement module, G18).
"""
from __future__ import annotations

import numpy as np

from kernels.rng import roll_die
from kernels.uboat_leader.battle import (PICK_ELIGIBLE, crew_row, damage_penalty, chit_value,
                                         leaving, pick, remove_ship, reveal, reveal_all, ship_speed)
from kernels.uboat_leader.detection import detection_modifier, detects, evades, in_detection_range
from kernels.uboat_leader.display import AREA_KIND, step_toward
from kernels._jit import unmanaged_jit
from kernels.uboat_leader.state import (
    APPROACH_DIVE_ON_DETECTION, AREA_LONG, B_AREA, B_DETECTED, B_DIVED, B_ON, B_SILENT, B_STRESS,
    B_SURFACED, BS_SPEED_SUBMERGED, BS_SPEED_SURFACED, C_DETECTION_SUBMERGED, C_DETECTION_SURFACED,
    ESCORT_STATIONARY, ESCORT_TOWARD_DETECTED_OR_SWEEP, K_ALERTED, K_ALERTED_ROLL_BONUS, K_APPROACH,
    K_ATTACK_RANGE, K_BEARING_CAP, K_ESCORT_MOVEMENT, K_LONG_ROW, K_N_BOATS, K_N_SHIPS,
    K_RANGE_SUBMERGED, K_RANGE_SURFACED, K_REDETECT_SKIP, K_REVEAL_CONTINUOUS, K_SILENT_POLICY,
    K_SR_FAIL_STRESS, K_SR_NO_MOVE, K_SWEEP_STEPS, K_WAKE, R_EV, S_AREA, S_CARD, S_DECK, S_ESCORT,
    S_ON, S_REVEALED, SILENT_WHEN_DETECTED)


@unmanaged_jit
def boat_speed(boat, b, bstat):
    """The printed Speed of the side the U-boat shows (§1.5)."""
    return bstat[b, BS_SPEED_SURFACED] if boat[b, B_SURFACED] else bstat[b, BS_SPEED_SUBMERGED]


@unmanaged_jit
def uboat_movement(state, ship, boat, slots, cards, bstat, brows, adj, area, dist, cfg, dk, dn, counters):
    """R1 (§7.1-7.3), boats in list order."""
    cont = cfg[K_REVEAL_CONTINUOUS] != 0
    for b in range(cfg[K_N_BOATS]):
        if not boat[b, B_ON]:
            continue
        if cfg[K_APPROACH] == APPROACH_DIVE_ON_DETECTION and boat[b, B_DETECTED] and boat[b, B_SURFACED]:
            boat[b, B_SURFACED] = 0  # flip before moving (§7.1)
            boat[b, B_DIVED] = 1
        silent_used = False
        if not boat[b, B_SURFACED] and boat[b, B_DETECTED] and cfg[K_SILENT_POLICY] == SILENT_WHEN_DETECTED:
            boat[b, B_SILENT] = 1  # §7.3 Silent Running
            silent_used = True
            ev = brows[b, crew_row(boat, b, bstat), R_EV]
            if evades(roll_die(state, 10), ev):
                boat[b, B_DETECTED] = 0
            else:
                boat[b, B_STRESS] += cfg[K_SR_FAIL_STRESS]
        if silent_used and cfg[K_SR_NO_MOVE]:
            continue  # A9 (a): no movement this step
        speed = boat_speed(boat, b, bstat)
        if leaving(boat, b, ship, bstat, cfg):
            long_row = dist[cfg[K_LONG_ROW]]
            for _ in range(speed):
                if area[boat[b, B_AREA], AREA_KIND] == AREA_LONG:
                    boat[b, B_ON] = 0  # moved off a Long Range Area: contact lost (§7.1)
                    break
                boat[b, B_AREA] = step_toward(adj, area, boat[b, B_AREA], long_row)
                if cont:
                    reveal_all(state, ship, boat, cards, dist, cfg, dk, dn, counters)
        else:
            t = pick(np.int64(PICK_ELIGIBLE), boat[b, B_AREA], ship, cards, dist, cfg)
            if t >= 0:
                goal = dist[ship[t, S_AREA]]
                for _ in range(speed):
                    if goal[boat[b, B_AREA]] <= cfg[K_ATTACK_RANGE]:
                        break
                    nxt = step_toward(adj, area, boat[b, B_AREA], goal)
                    if nxt < 0:
                        break
                    boat[b, B_AREA] = nxt
                    if cont:
                        reveal_all(state, ship, boat, cards, dist, cfg, dk, dn, counters)
        if not cont:
            reveal_all(state, ship, boat, cards, dist, cfg, dk, dn, counters)


@unmanaged_jit
def bearing_drift(reference_speed, speed, cap):
    """§7.4: Areas moved toward the Wake = Reference Speed - own Speed (0 if not slower);
    A11: a difference beyond the table (3) moves in full, or is capped when ``cap`` > 0."""
    diff = reference_speed - (speed if speed > 0 else 0)
    if diff < 0:
        diff = 0
    if cap > 0 and diff > cap:
        diff = cap
    return diff


@unmanaged_jit
def bearing_movement(state, ship, boat, slots, cards, bstat, adj, area, dist, cfg, dk, dn, counters):
    """R2 (§7.4): everything slower than the Reference Ship drifts toward the Convoy Wake Area;
    reaching the Wake with movement left takes it out of the battle."""
    n_ships = cfg[K_N_SHIPS]
    ref = np.int64(-1)  # a run-time int (see kernels.uboat_leader.battle)
    any_on = False
    for s in range(n_ships):  # Reference Ship: fastest Merchant/Lone/Naval ship on
        if ship[s, S_ON]:
            any_on = True
            if not ship[s, S_ESCORT]:
                v = ship_speed(ship, s, slots, cards, cfg)
                if v > ref:
                    ref = v
    if not any_on:
        return
    if ref < 0:  # only escorts left: the fastest Escort
        for s in range(n_ships):
            if ship[s, S_ON]:
                v = ship_speed(ship, s, slots, cards, cfg)
                if v > ref:
                    ref = v
    cap = cfg[K_BEARING_CAP]
    wake = cfg[K_WAKE]
    to_wake = dist[wake]
    for s in range(n_ships):  # a drift only ever removes the ship itself: slot order is kept
        if not ship[s, S_ON]:
            continue
        k = bearing_drift(ref, ship_speed(ship, s, slots, cards, cfg), cap)
        for _ in range(k):
            if ship[s, S_AREA] == wake:
                remove_ship(s, ship, cfg, dk, dn)  # out of the battle, no VP
                break
            ship[s, S_AREA] = step_toward(adj, area, ship[s, S_AREA], to_wake)
    for b in range(cfg[K_N_BOATS]):
        if not boat[b, B_ON]:
            continue
        if boat[b, B_SILENT] or leaving(boat, b, ship, bstat, cfg):
            sp = 0  # Silent Running counts as Speed 0; a leaving boat goes "tan directamente"
        else:
            sp = boat_speed(boat, b, bstat)
        k = bearing_drift(ref, sp, cap)
        for _ in range(k):
            if boat[b, B_AREA] == wake:
                boat[b, B_ON] = 0  # left the battle: contact lost
                break
            boat[b, B_AREA] = step_toward(adj, area, boat[b, B_AREA], to_wake)
    reveal_all(state, ship, boat, cards, dist, cfg, dk, dn, counters)


@unmanaged_jit
def escorts_step(state, ship, boat, slots, cards, bstat, adj, area, dist, cfg, dk, dn, counters):
    """R3 (§7.5): each Escort in slot order rolls Detection against every U-boat in range,
    then moves (PLACEHOLDER module ``escort_movement``, G18) before the next Escort."""
    alerted = cfg[K_ALERTED]
    n_boats = cfg[K_N_BOATS]
    mode = cfg[K_ESCORT_MOVEMENT]
    for s in range(cfg[K_N_SHIPS]):
        if not (ship[s, S_ON] and ship[s, S_ESCORT]):
            continue
        for b in range(n_boats):
            if not boat[b, B_ON]:
                continue
            surfaced = boat[b, B_SURFACED] != 0
            base = cfg[K_RANGE_SURFACED] if surfaced else cfg[K_RANGE_SUBMERGED]
            if not in_detection_range(dist[ship[s, S_AREA], boat[b, B_AREA]], base, alerted):
                continue
            if boat[b, B_DETECTED] and cfg[K_REDETECT_SKIP]:
                continue  # A21 (a)
            if not ship[s, S_REVEALED]:
                reveal(state, s, ship, cards, cfg, dk, dn, counters)  # rolling to Detect reveals (§7.2)
            if boat[b, B_DETECTED]:
                continue  # A21 (b): the roll only revealed the escort
            mod = detection_modifier(alerted, cfg[K_ALERTED_ROLL_BONUS], damage_penalty(ship, s, cfg),
                                     chit_value(state, ship, s, cards, cfg))
            value = cards[ship[s, S_DECK], ship[s, S_CARD],
                          C_DETECTION_SURFACED if surfaced else C_DETECTION_SUBMERGED]
            if detects(roll_die(state, 10), mod, value):
                boat[b, B_DETECTED] = 1  # Detected by one = Detected for all
        if mode == ESCORT_STATIONARY:
            continue
        here = ship[s, S_AREA]
        target = -1
        best = 0
        for b in range(n_boats):  # nearest Detected U-boat (range, then list order)
            if boat[b, B_ON] and boat[b, B_DETECTED]:
                r = dist[boat[b, B_AREA], here]
                if target < 0 or r < best:
                    target, best = b, r
        steps = ship_speed(ship, s, slots, cards, cfg)
        if target < 0 and mode == ESCORT_TOWARD_DETECTED_OR_SWEEP:
            for b in range(n_boats):
                if boat[b, B_ON]:
                    r = dist[boat[b, B_AREA], here]
                    if target < 0 or r < best:
                        target, best = b, r
            if steps > cfg[K_SWEEP_STEPS]:
                steps = cfg[K_SWEEP_STEPS]
        if target >= 0:
            goal_area = boat[target, B_AREA]
            goal = dist[goal_area]
            for _ in range(steps):
                if ship[s, S_AREA] == goal_area:
                    break
                ship[s, S_AREA] = step_toward(adj, area, ship[s, S_AREA], goal)
            reveal_all(state, ship, boat, cards, dist, cfg, dk, dn, counters)
