"""Squadron duel: two sides fight turn by turn (spec ``docs/models/dystopian_wars.md`` §7).

Each turn: 2D6 initiative (§4), alternating squadron activations; an activation moves (the
shared distance closes, or the band follows a schedule), declares every attack before any
dice (§11), resolves them with HP-degraded AD, AA/CC cancellation and criticals, then the
enemy's rout tests (§8 7a) and the squadron's own bravery test (7b). The duel ends when a
side has no model left, or after ``max_turns`` (a draw).

Everything the Python layer knows is compiled into arrays (``analyzer.games.dystopian_wars.
duel``): per model the integer fields ``F_*`` of ``models[side, model, field]``, weapons
``w_type``/``w_ad``, and the legal to-hit number of every (attacker, weapon, target, band)
in ``to_hit`` (0 = not a legal target). No dicts or objects reach the kernel.
"""
from __future__ import annotations

import math

import numpy as np
from numba import prange

from kernels._jit import hot_jit, jit, parallel_jit
from kernels._jit import unmanaged_jit
from kernels.dice import pool_total_locals
from kernels.dystopian_wars.attack import resolve_attack_locals
from kernels.record import chunk_trials, record
from kernels.rng import STATE_WORDS, seed_stream, uniform_int

#: size limits of the compiled arrays (validated in Python before the kernel runs)
MAX_MODELS = 16
MAX_WEAPONS = 8
#: tied initiative rolls re-rolled per turn before side A simply goes first (spec §8 caps)
INITIATIVE_REROLL_CAP = 100

# models[side, model, F_*]
F_SQUAD, F_HP, F_DR, F_CR, F_AA, F_CC, F_POINTS, F_HP_LOST0, F_COMMODORE, F_N_WEAPONS, \
    F_AP, F_CAN_BOARD, F_BOARDABLE, F_DIVING = range(14)
N_FIELDS = 14
# weapon type codes (analyzer.games.dystopian_wars.rules.WEAPON_CODE)
W_PRIMARY, W_SECONDARY, W_ROCKET, W_TORPEDO = 0, 1, 2, 3
# target policies
P_FIRST, P_WEAKEST, P_STRONGEST, P_SPREAD, P_RANDOM = range(5)
# initiative ties
TIE_REROLL, TIE_A_FIRST, TIE_B_FIRST = range(3)
# settings[...] (ints)
S_POLICY_A, S_POLICY_B, S_TIE, S_INIT_DICE, S_ROUT_DICE, S_COMMODORE_BONUS, S_SMALL_HP, S_MAX_TURNS, \
    S_RANGE_MODE, S_LOWER_BAND, S_RANGE_BANDS, S_BOARDING, S_BOARD_HALF, S_BOARD_DERELICT = range(14)
N_SETTINGS = 14
RANGE_FIXED, RANGE_CLOSING = 0, 1
# geometry[...] (floats): start distance, speed of A, of B (NaN: slowest alive model), minimum distance, band width
G_START, G_SPEED_A, G_SPEED_B, G_MIN_DISTANCE, G_BAND_INCHES, G_BOARD_INCHES = range(6)
N_GEOMETRY = 6
#: boarding range (§12: crewed models board a target within 4in)
BOARDING_INCHES = 4.0

#: metric order of the ``duel`` question
DUEL_METRICS = ("p_win_a", "p_win_b", "p_draw", "turns", "points_destroyed_a", "points_destroyed_b",
                "survivors_a", "survivors_b", "rout_fails_a", "rout_fails_b")
#: appended to :data:`DUEL_METRICS` only when boarding is enabled (the kernel always records them)
BOARDING_METRICS = ("captured_a", "captured_b")
N_KERNEL_METRICS = len(DUEL_METRICS) + len(BOARDING_METRICS)
#: counters: explosion chains cut, dice rolled, initiative re-roll caps hit
N_DUEL_COUNTERS = 3


@unmanaged_jit
def initiative(s0, s1, s2, s3, buf, lanes, settings, d6_value, d6_explodes, d6_n):
    """§4: A rolls 2D6, then B; the higher activates first. Ties (Amb 14): both re-roll
    (capped), or A / B goes first. Returns the stream state, the side first (0 = A),
    dice rolled and whether the re-roll cap was hit. ``d6_*`` = the face-sum table."""
    n = settings[S_INIT_DICE]
    rolled = 0
    for _ in range(INITIATIVE_REROLL_CAP):
        s0, s1, s2, s3, buf, lanes, a, r, _d = pool_total_locals(s0, s1, s2, s3, buf, lanes, n,
                                                                 d6_value, d6_explodes, d6_n)
        rolled += r
        s0, s1, s2, s3, buf, lanes, b, r, _d = pool_total_locals(s0, s1, s2, s3, buf, lanes, n,
                                                                 d6_value, d6_explodes, d6_n)
        rolled += r
        if a > b:
            return s0, s1, s2, s3, buf, lanes, 0, rolled, 0
        if b > a:
            return s0, s1, s2, s3, buf, lanes, 1, rolled, 0
        if settings[S_TIE] == TIE_A_FIRST:
            return s0, s1, s2, s3, buf, lanes, 0, rolled, 0
        if settings[S_TIE] == TIE_B_FIRST:
            return s0, s1, s2, s3, buf, lanes, 1, rolled, 0
    return s0, s1, s2, s3, buf, lanes, 0, rolled, 1


@unmanaged_jit
def squadron_test(s0, s1, s2, s3, buf, lanes, x, s, models, squads, alive, comm_lost_x, settings,
                  rout_value, rout_explodes, rout_n):
    """§8 rout / bravery test of squadron ``s`` of side ``x``: 3D6 (+1D6 with its side's
    alive commodore in it); needs 1, +1 when half or more of its models are lost, +1 while
    the commodore is lost. Returns the stream state, passed, dice rolled."""
    first = squads[x, s, 0]
    count = squads[x, s, 1]
    dice = settings[S_ROUT_DICE]
    lost = 0
    for i in range(first, first + count):
        if alive[x, i]:
            if models[x, i, F_COMMODORE]:
                dice += settings[S_COMMODORE_BONUS]
        else:
            lost += 1
    need = 1
    if lost >= 1 and 2 * lost >= count:
        need += 1
    if comm_lost_x:
        need += 1
    s0, s1, s2, s3, buf, lanes, successes, rolled, _d = pool_total_locals(s0, s1, s2, s3, buf, lanes, dice,
                                                                          rout_value, rout_explodes, rout_n)
    return s0, s1, s2, s3, buf, lanes, successes >= need, rolled


@hot_jit
def pick_by_policy(state, y, eligible, k, models, hp_lost, alive, n_enemy, policy):
    """The living model ``j`` of side ``y`` with ``eligible[j] != 0`` that the target
    policy picks, or -1 when there is none. ``k`` = picks already made this step (spread);
    only the ``random`` policy draws from ``state``."""
    best = -1
    best_key = 0
    n_elig = 0
    for j in range(n_enemy):
        if alive[y, j] == 0 or eligible[j] == 0:
            continue
        n_elig += 1
        if policy == P_WEAKEST:
            key = models[y, j, F_HP] - hp_lost[y, j]
            if best < 0 or key < best_key:
                best, best_key = j, key
        elif policy == P_STRONGEST:
            key = models[y, j, F_POINTS]
            if best < 0 or key > best_key:
                best, best_key = j, key
        elif best < 0:
            best = j
    if n_elig == 0 or policy == P_FIRST or policy == P_WEAKEST or policy == P_STRONGEST:
        return best
    pick = k % n_elig if policy == P_SPREAD else uniform_int(state, n_elig)
    for j in range(n_enemy):
        if alive[y, j] == 0 or eligible[j] == 0:
            continue
        if pick == 0:
            return j
        pick -= 1
    return -1


@hot_jit
def choose_target(state, x, i, w, b, k, models, hp_lost, alive, n_enemy, to_hit, policy):
    """The enemy model a declared attack goes to (§11 declare before rolling), or -1 when no
    alive enemy is a legal target. ``k`` = attacks already declared in this activation."""
    return pick_by_policy(state, 1 - x, to_hit[x, i, w, :, b], k, models, hp_lost, alive, n_enemy, policy)


@hot_jit
def choose_board_target(state, x, k, models, hp_lost, alive, n_enemy, policy):
    """The enemy model a boarder goes to (spec §7 boarding step 1), or -1 when no alive enemy
    can be boarded. ``k`` = boardings already made in this step."""
    return pick_by_policy(state, 1 - x, models[1 - x, :, F_BOARDABLE], k, models, hp_lost, alive, n_enemy, policy)


@unmanaged_jit
def duel_chunk(state, n, hist, moments, models, mv, w_type, w_ad, to_hit, n_models, n_squads, squads,
               settings, geometry, bands, hit_value, hit_explodes, hit_n,
               cancel_value, cancel_explodes, cancel_n, rout_value, rout_explodes, rout_n,
               d6_value, d6_explodes, d6_n, crit_values, crit_cum,
               bdef_value, bdef_explodes, bdef_n, melee_value, melee_explodes, melee_n,
               values, hp_lost, alive, brk, done, lost_now, dec, side_state, ap, counters):
    """``n`` duels recorded into ``hist[0]``/``moments[0]`` (:data:`DUEL_METRICS`).

    Compiled without reference counting and allocates nothing: the arrays after
    ``crit_cum`` are scratch from the driver (``side_state[x]`` = commodore lost, failed
    rout tests, models captured; ``ap`` = current AP, boarding only). The stream state lives in scalars for the whole chunk (kept in
    registers); it is written back to ``state`` only around the rare draws that use the
    array form (random targets, a critical table with several entries) and at the end."""
    s0, s1, s2, s3, buf, lanes = state[0], state[1], state[2], state[3], state[4], state[5]
    for _trial in range(n):
        rolled = 0
        dropped = 0
        init_caps = 0
        for x in range(2):
            for i in range(n_models[x]):
                hp_lost[x, i] = models[x, i, F_HP_LOST0]
                alive[x, i] = 1
            for s in range(n_squads[x]):
                brk[x, s] = 0
            side_state[x, 0] = 0     # commodore lost
            side_state[x, 1] = 0     # failed rout tests
            side_state[x, 2] = 0     # models captured (boarding)
            for i in range(n_models[x]):
                ap[x, i] = models[x, i, F_AP]
        dist = geometry[G_START]
        max_turns = settings[S_MAX_TURNS]
        small_hp_rule = settings[S_SMALL_HP]
        winner = -1
        turn = 0
        for turn in range(1, max_turns + 1):
            s0, s1, s2, s3, buf, lanes, first, r, cap = initiative(s0, s1, s2, s3, buf, lanes, settings,
                                                                   d6_value, d6_explodes, d6_n)
            rolled += r
            init_caps += cap
            for x in range(2):
                for s in range(n_squads[x]):
                    done[x, s] = 0
            cur = first
            while True:
                # the next squadron of `cur` not yet activated with a model alive; else the other side's
                s = -1
                for side_try in range(2):
                    side = cur if side_try == 0 else 1 - cur
                    for s2_ in range(n_squads[side]):
                        if done[side, s2_]:
                            continue
                        first_m = squads[side, s2_, 0]
                        for i in range(first_m, first_m + squads[side, s2_, 1]):
                            if alive[side, i]:
                                s = s2_
                                break
                        if s >= 0:
                            break
                    if s >= 0:
                        cur = side
                        break
                if s < 0:
                    break
                done[cur, s] = 1
                x = cur
                y = 1 - cur
                had_break = brk[x, s]
                first_m = squads[x, s, 0]
                last_m = first_m + squads[x, s, 1]
                # 1. move / band
                if settings[S_RANGE_MODE] == RANGE_CLOSING:
                    speed = geometry[G_SPEED_A + x]
                    if math.isnan(speed):
                        speed = np.inf
                        for i in range(first_m, last_m):
                            if alive[x, i] and mv[x, i] < speed:
                                speed = mv[x, i]
                    dist = max(geometry[G_MIN_DISTANCE], dist - speed)
                    d = math.floor(dist) if settings[S_LOWER_BAND] else dist
                    band = max(1, int(math.ceil(d / geometry[G_BAND_INCHES])))
                else:
                    band = bands[min(turn, bands.shape[0]) - 1]
                for s2_ in range(n_squads[y]):
                    lost_now[s2_] = 0
                comm_now = False
                # 2. declare every attack (policies see the state after movement, before any dice)
                if band <= settings[S_RANGE_BANDS]:
                    b = band - 1
                    k = 0
                    n_dec = 0
                    policy = settings[S_POLICY_A + x]
                    for i in range(first_m, last_m):
                        if alive[x, i] == 0:
                            continue
                        for w in range(models[x, i, F_N_WEAPONS]):
                            if w_ad[x, i, w, b] < 1:
                                continue
                            if policy == P_RANDOM:
                                state[0], state[1], state[2], state[3], state[4], state[5] = s0, s1, s2, s3, buf, lanes
                            j = choose_target(state, x, i, w, b, k, models, hp_lost, alive, n_models[y], to_hit, policy)
                            if policy == P_RANDOM:
                                s0, s1, s2, s3, buf, lanes = state[0], state[1], state[2], state[3], state[4], state[5]
                            if j < 0:
                                continue
                            k += 1
                            dec[n_dec, 0] = i
                            dec[n_dec, 1] = w
                            dec[n_dec, 2] = j
                            n_dec += 1
                    # 3. resolve in declaration order; an attack on a model already destroyed is lost
                    for q in range(n_dec):
                        i = dec[q, 0]
                        w = dec[q, 1]
                        j = dec[q, 2]
                        if alive[y, j] == 0:
                            continue
                        wt = w_type[x, i, w]
                        n = w_ad[x, i, w, b]
                        if wt == W_PRIMARY or wt == W_SECONDARY:   # §11 damage to AD, never below 1
                            n = max(1, n - hp_lost[x, i])
                        n_def = 0
                        if wt == W_ROCKET or wt == W_TORPEDO:       # AA vs rockets, CC vs torpedoes
                            v = models[y, j, F_AA] if wt == W_ROCKET else models[y, j, F_CC]
                            if v > 0:
                                n_def = max(1, v - hp_lost[y, j])
                        s0, s1, s2, s3, buf, lanes, hits, dmg, r, dd = resolve_attack_locals(
                            s0, s1, s2, s3, buf, lanes, state, n, to_hit[x, i, w, j, b], hit_value,
                            hit_explodes, hit_n, n_def, cancel_value, cancel_explodes, cancel_n,
                            models[y, j, F_DR], models[y, j, F_CR], models[y, j, F_HP], hp_lost[y, j],
                            small_hp_rule, crit_values, crit_cum)
                        rolled += r
                        dropped += dd
                        hp_lost[y, j] += dmg
                        if hp_lost[y, j] >= models[y, j, F_HP]:
                            alive[y, j] = 0
                            lost_now[models[y, j, F_SQUAD]] += 1
                            if models[y, j, F_COMMODORE]:
                                comm_now = True
                y_alive = False
                for j in range(n_models[y]):
                    if alive[y, j]:
                        y_alive = True
                        break
                if not y_alive:
                    winner = x
                    break
                # 3b. (§4 step 6) boardings within 4in, by the models of a squadron without Break
                if settings[S_BOARDING] and not had_break:
                    if settings[S_RANGE_MODE] == RANGE_CLOSING:
                        in_reach = dist <= geometry[G_BOARD_INCHES]
                    else:
                        in_reach = band == 1
                    if in_reach:
                        policy = settings[S_POLICY_A + x]
                        kb = 0
                        for i in range(first_m, last_m):
                            if alive[x, i] == 0 or models[x, i, F_CAN_BOARD] == 0 or ap[x, i] < 1:
                                continue
                            if policy == P_RANDOM:
                                state[0], state[1], state[2], state[3], state[4], state[5] = s0, s1, s2, s3, buf, lanes
                            j = choose_board_target(state, x, kb, models, hp_lost, alive, n_models[y], policy)
                            if policy == P_RANDOM:
                                s0, s1, s2, s3, buf, lanes = state[0], state[1], state[2], state[3], state[4], state[5]
                            if j < 0:
                                continue
                            kb += 1
                            committed = ap[x, i]
                            if settings[S_BOARD_HALF]:
                                committed = max(1, committed // 2)
                            ap[x, i] -= committed
                            d_ap = ap[y, j]
                            captured = False
                            derelict = False
                            if d_ap == 0:
                                a_left = committed
                                captured = True
                            else:
                                v = models[y, j, F_CC] if models[x, i, F_DIVING] else models[y, j, F_AA]
                                n_def = 0
                                if v > 0:
                                    n_def = max(1, v - hp_lost[y, j])
                                s0, s1, s2, s3, buf, lanes, dh, r, dd = pool_total_locals(
                                    s0, s1, s2, s3, buf, lanes, n_def, bdef_value, bdef_explodes, bdef_n)
                                rolled += r
                                dropped += dd
                                a_now = max(0, committed - dh)
                                s0, s1, s2, s3, buf, lanes, ha, r, dd = pool_total_locals(
                                    s0, s1, s2, s3, buf, lanes, a_now, melee_value, melee_explodes, melee_n)
                                rolled += r
                                dropped += dd
                                s0, s1, s2, s3, buf, lanes, hd, r, dd = pool_total_locals(
                                    s0, s1, s2, s3, buf, lanes, d_ap, melee_value, melee_explodes, melee_n)
                                rolled += r
                                dropped += dd
                                d_left = max(0, d_ap - ha)
                                a_left = max(0, a_now - hd)
                                ap[y, j] = d_left
                                if d_left == 0 and a_left >= 1:
                                    captured = True
                                elif d_left == 0 and a_left == 0 and settings[S_BOARD_DERELICT]:
                                    derelict = True
                            if captured or derelict:
                                alive[y, j] = 0
                                lost_now[models[y, j, F_SQUAD]] += 1
                                if models[y, j, F_COMMODORE]:
                                    comm_now = True
                                if captured:
                                    side_state[y, 2] += 1      # the survivors stay aboard as the prize crew
                            if not captured:
                                ap[x, i] += a_left             # the survivors return to their ship
                        y_alive = False
                        for j in range(n_models[y]):
                            if alive[y, j]:
                                y_alive = True
                                break
                        if not y_alive:
                            winner = x
                            break
                # 4. (7a) rout tests of the enemy squadrons that lost models, or of all of them the
                #    first time the enemy commodore is lost
                new_comm = comm_now and side_state[y, 0] == 0
                if new_comm:
                    side_state[y, 0] = 1
                for s2_ in range(n_squads[y]):
                    if lost_now[s2_] == 0 and not new_comm:
                        continue
                    sq_alive = False
                    for i in range(squads[y, s2_, 0], squads[y, s2_, 0] + squads[y, s2_, 1]):
                        if alive[y, i]:
                            sq_alive = True
                            break
                    if not sq_alive:
                        continue
                    s0, s1, s2, s3, buf, lanes, passed, r = squadron_test(
                        s0, s1, s2, s3, buf, lanes, y, s2_, models, squads, alive, side_state[y, 0], settings,
                        rout_value, rout_explodes, rout_n)
                    rolled += r
                    if not passed:
                        brk[y, s2_] = 1
                        side_state[y, 1] += 1
                # 5. (7b) bravery test of the active squadron if it had Break before activating
                if had_break:
                    s0, s1, s2, s3, buf, lanes, passed, r = squadron_test(
                        s0, s1, s2, s3, buf, lanes, x, s, models, squads, alive, side_state[x, 0], settings,
                        rout_value, rout_explodes, rout_n)
                    rolled += r
                    if passed:
                        brk[x, s] = 0
                cur = y
            if winner >= 0:
                break
        state[0], state[1], state[2], state[3], state[4], state[5] = s0, s1, s2, s3, buf, lanes
        counters[0] += dropped
        counters[1] += rolled
        counters[2] += init_caps
        values[0] = 1 if winner == 0 else 0
        values[1] = 1 if winner == 1 else 0
        values[2] = 1 if winner < 0 else 0
        values[3] = turn
        for x in range(2):
            lost_points = 0
            survivors = 0
            for i in range(n_models[x]):
                if alive[x, i]:
                    survivors += 1
                else:
                    lost_points += models[x, i, F_POINTS]
            values[4 + x] = lost_points
            values[6 + x] = survivors
            values[8 + x] = side_state[x, 1]
            values[10 + x] = side_state[x, 2]
        record(hist, moments, 0, values)


@jit
def duel_run_chunk(seed, key, chunk, n, models, mv, w_type, w_ad, to_hit, n_models, n_squads, squads,
                   settings, geometry, bands, hit_value, hit_explodes, hit_n,
                   cancel_value, cancel_explodes, cancel_n, rout_value, rout_explodes, rout_n,
                   d6_value, d6_explodes, d6_n, crit_values, crit_cum,
                   bdef_value, bdef_explodes, bdef_n, melee_value, melee_explodes, melee_n, n_bins):
    """One chunk of duels on its own stream, copies of the inputs and scratch (so no cache
    line is shared between threads): returns (hist[1, metric, bin], moments[1, metric, 3],
    counters)."""
    n_metrics = N_KERNEL_METRICS
    max_m = models.shape[1]
    max_w = w_type.shape[2]
    state = np.empty(STATE_WORDS, np.uint64)
    seed_stream(state, seed, key, chunk)
    hist = np.zeros((1, n_metrics, n_bins), np.int64)
    moments = np.zeros((1, n_metrics, 3), np.int64)
    counters = np.zeros(N_DUEL_COUNTERS, np.int64)
    duel_chunk(state, n, hist, moments,
               models.copy(), mv.copy(), w_type.copy(), w_ad.copy(), to_hit.copy(), n_models.copy(),
               n_squads.copy(), squads.copy(), settings.copy(), geometry.copy(), bands.copy(),
               hit_value.copy(), hit_explodes.copy(), hit_n.copy(),
               cancel_value.copy(), cancel_explodes.copy(), cancel_n.copy(),
               rout_value.copy(), rout_explodes.copy(), rout_n.copy(),
               d6_value.copy(), d6_explodes.copy(), d6_n.copy(), crit_values.copy(), crit_cum.copy(),
               bdef_value.copy(), bdef_explodes.copy(), bdef_n.copy(),
               melee_value.copy(), melee_explodes.copy(), melee_n.copy(),
               np.zeros(n_metrics, np.int64), np.zeros((2, max_m), np.int64), np.zeros((2, max_m), np.int64),
               np.zeros((2, max_m), np.int64), np.zeros((2, max_m), np.int64), np.zeros(max_m, np.int64),
               np.zeros((max_m * max_w, 3), np.int64), np.zeros((2, 3), np.int64), np.zeros((2, max_m), np.int64),
               counters)
    return hist, moments, counters


@parallel_jit
def duel_histogram(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                   models, mv, w_type, w_ad, to_hit, n_models, n_squads, squads,
                   settings, geometry, bands, hit_value, hit_explodes, hit_n,
                   cancel_value, cancel_explodes, cancel_n, rout_value, rout_explodes, rout_n,
                   d6_value, d6_explodes, d6_n, crit_values, crit_cum,
                   bdef_value, bdef_explodes, bdef_n, melee_value, melee_explodes, melee_n, n_bins):
    """Per-chunk (hist, moments, counters) of :data:`DUEL_METRICS` + :data:`BOARDING_METRICS`
    (chunks in parallel; the caller drops the boarding columns when boarding is off)."""
    n_chunks = chunk_hi - chunk_lo
    n_metrics = N_KERNEL_METRICS
    hist = np.zeros((n_chunks, n_metrics, n_bins), np.int64)
    moments = np.zeros((n_chunks, n_metrics, 3), np.int64)
    counters = np.zeros((n_chunks, N_DUEL_COUNTERS), np.int64)
    for c in prange(n_chunks):
        h, m, r = duel_run_chunk(seed, key, chunk_lo + c, chunk_trials(chunk_lo + c, chunk_size, n_trials),
                                 models, mv, w_type, w_ad, to_hit, n_models, n_squads, squads,
                                 settings, geometry, bands, hit_value, hit_explodes, hit_n,
                                 cancel_value, cancel_explodes, cancel_n, rout_value, rout_explodes, rout_n,
                                 d6_value, d6_explodes, d6_n, crit_values, crit_cum,
                                 bdef_value, bdef_explodes, bdef_n, melee_value, melee_explodes, melee_n, n_bins)
        hist[c] = h[0]
        moments[c] = m[0]
        counters[c] = r
    return hist, moments, counters
