"""Squadron duel: two sides fight turn by turn (spec ``docs/models/dystopian_wars.md`` §7).

One trial (:func:`duel_trial`) reads like the spec's turn loop: :func:`start_duel`; each turn
:func:`initiative`, then activations (:func:`next_activation`) of :func:`move`,
:func:`declare`, :func:`resolve_fire`, :func:`boarding`, :func:`rout_tests` and
:func:`bravery_test`, until a side has no model left or ``max_turns`` ends in a draw; then
:func:`record_duel`. It runs on the chunk driver (:mod:`kernels.driver`).

The kernel reads one compiled record (``analyzer.games.dystopian_wars.duel.DuelRecord``) as a
:class:`DuelArgs` of arrays by field name (``duel.to_hit``); the state of a trial is one
:data:`DUEL_STATE` record per chunk. The random stream is carried between phases as ONE
value, ``rng = (s0, s1, s2, s3, buf, lanes)`` (:mod:`kernels.rng`'s six words, kept in
registers), and goes through the array ``state`` only around the rare draws that need it
(random targets, a critical table with several entries).

Measured choices (``kernels._jit``; ``analyzer bench dw-duel``, numba's pass timings):

- The driver calls :func:`duel_trial` once per trial, passing every array as 5 + 2 * ndim
  machine words: with every table and state array apart (41 arrays, ~370 words) the pushes
  took 6% of the run, hence the dice stacked in one table and the state in one record
  (~180 words).
- The phases take the record and the state, so they are inlined (:func:`hot_jit`) into the
  trial, one call site each (as a plain call, :func:`boarding` made the shipped boarding
  duel 14% slower). numba's inliner deep-copies a callee block by block, so its cost grows with
  the square of the callee's size: one inlined ``activate`` holding the whole activation
  cost 7.7 s of compile, so the activation's steps are listed in the trial itself.
  :func:`initiative` and :func:`squadron_test`, which take a few arrays, stay plain calls
  without reference counting (:func:`unmanaged_jit`), as in the kernel before.
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from kernels._jit import hot_jit, jit, parallel_jit, unmanaged_jit
from kernels.dice import pool_total_locals
from kernels.driver import run_trials
from kernels.dystopian_wars.attack import damage_from_hits, resolve_attack_locals
from kernels.rng import uniform01, uniform_int

#: size limits of the compiled arrays (validated in Python before the kernel runs)
MAX_MODELS = 16
MAX_WEAPONS = 8
#: tied initiative rolls re-rolled per turn before side A simply goes first (spec §8 caps)
INITIATIVE_REROLL_CAP = 100

# models[side, model, F_*]
F_SQUAD, F_HP, F_DR, F_CR, F_AA, F_CC, F_POINTS, F_HP_LOST0, F_COMMODORE, F_N_WEAPONS, \
    F_AP, F_CAN_BOARD, F_BOARDABLE, F_DIVING, F_ACK_ACK_DICE = range(15)
N_FIELDS = 15
# weapon type codes (analyzer.games.dystopian_wars.rules.WEAPON_CODE)
W_PRIMARY, W_SECONDARY, W_ROCKET, W_TORPEDO = 0, 1, 2, 3
# target policies
P_FIRST, P_WEAKEST, P_STRONGEST, P_SPREAD, P_RANDOM = range(5)
# initiative ties
TIE_REROLL, TIE_A_FIRST, TIE_B_FIRST = range(3)
# settings[...] (ints)
S_POLICY_A, S_POLICY_B, S_TIE, S_INIT_DICE, S_ROUT_DICE, S_COMMODORE_BONUS, S_SMALL_HP, S_MAX_TURNS, \
    S_RANGE_MODE, S_LOWER_BAND, S_RANGE_BANDS, S_BOARDING, S_BOARD_HALF, S_BOARD_DERELICT, S_SAMPLING = range(15)
N_SETTINGS = 15
#: settings[S_SAMPLING]: an attack's hits drawn die by die, or once from the exact table ``hit_cdf``
SAMPLING_DICE, SAMPLING_TABLE = 0, 1
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
# values[M_*]; the per-side metrics are M_* + side
M_WIN_A, M_WIN_B, M_DRAW, M_TURNS, M_POINTS_DESTROYED, M_SURVIVORS, M_ROUT_FAILS, M_CAPTURED = 0, 1, 2, 3, 4, 6, 8, 10
#: counters[CT_*]: explosion chains cut, dice rolled, initiative re-roll caps hit
CT_EXPLOSION_CAPS, CT_DICE_ROLLED, CT_INITIATIVE_CAPS = range(3)
N_DUEL_COUNTERS = 3

# the dice of the duel, one D6 pool table each (rows of ``dice_value``): the hit dice by to-hit
# number (rows 2..6; 0 and 1 are never used), AA/CC cancel dice, rout and bravery dice,
# initiative (face sums), the boarded model's defence dice, melee dice (MD)
DICE_CANCEL, DICE_ROUT, DICE_INITIATIVE, DICE_BOARD_DEFENSE, DICE_MELEE = range(7, 12)
#: Ack Ack dice fired at an attacking flyer (§11): at 4+ (flyers, obscured) and at 5-6 (small
#: flyers), exploding or plain per ``rules.aa_vs_flyer_dice``; ``models[.., F_ACK_ACK_DICE]`` holds
#: the table a flyer is shot at with (0: not a flyer)
DICE_ACK_ACK_4, DICE_ACK_ACK_5 = 12, 13
N_DICE_TABLES = 14

#: The compiled duel as the kernel receives it (``DuelRecord.kernel_args()``): the sides
#: (``models[side, model, F_*]``, weapons, the to-hit number of every (attacker, weapon,
#: target, band), 0 = not a legal target), ``settings[S_*]``, ``geometry[G_*]``, the fixed
#: range bands, the dice tables ``DICE_*`` stacked as one :func:`kernels.dice.pool_table`
#: (``dice_value[table, g, idx]``, ``dice_explodes``, ``dice_n[g]``) and the critical table.
#: Flat and as few arrays as possible: the driver passes it to every trial, and a call passes
#: each array as 5 + 2 * ndim machine words.
DuelArgs = namedtuple("DuelArgs", ("models", "mv", "w_type", "w_ad", "to_hit", "n_models", "n_squads", "squads",
                                   "settings", "geometry", "bands", "dice_value", "dice_explodes", "dice_n",
                                   "crit_values", "crit_cum", "hit_cdf"))

#: State per trial (spec §7 "State per trial"): one numpy record per chunk (so the driver
#: passes it to a trial as one array, not ten). ``brk`` = Break per squadron, ``activated``
#: this turn, ``lost_now`` = models of each enemy squadron lost in this activation,
#: ``declared[q] = (attacker, weapon, target)``, ``ap`` = current AP (boarding).
DUEL_STATE = np.dtype([("hp_lost", np.int64, (2, MAX_MODELS)), ("alive", np.int64, (2, MAX_MODELS)),
                       ("brk", np.int64, (2, MAX_MODELS)), ("activated", np.int64, (2, MAX_MODELS)),
                       ("lost_now", np.int64, (MAX_MODELS,)), ("declared", np.int64, (MAX_MODELS * MAX_WEAPONS, 3)),
                       ("comm_lost", np.int64, (2,)), ("rout_fails", np.int64, (2,)), ("captured", np.int64, (2,)),
                       ("ap", np.int64, (2, MAX_MODELS)), ("aa_lost", np.int64, (2,))])


# ----------------------------------------------------------------------------- the stream as one value

@hot_jit
def load_stream(state):
    """The carried stream ``rng`` from its array form."""
    return state[0], state[1], state[2], state[3], state[4], state[5]


@hot_jit
def store_stream(state, rng):
    """Write the carried stream back to its array form."""
    state[0], state[1], state[2], state[3], state[4], state[5] = rng


@hot_jit
def roll(rng, n_dice, table, dice_value, dice_explodes, dice_n, counters):
    """Roll a pool of the dice ``table`` (``DICE_*``; :func:`kernels.dice.pool_total_locals`) on
    the carried stream: returns ``(rng, total)``; dice rolled and dice dropped at the explosion
    cap go to ``counters``."""
    s0, s1, s2, s3, buf, lanes = rng
    s0, s1, s2, s3, buf, lanes, total, rolled, dropped = pool_total_locals(
        s0, s1, s2, s3, buf, lanes, n_dice, dice_value[table], dice_explodes[table], dice_n)
    counters[CT_EXPLOSION_CAPS] += dropped
    counters[CT_DICE_ROLLED] += rolled
    return (s0, s1, s2, s3, buf, lanes), total


@hot_jit
def attack(rng, state, n_dice, t, n_defense, y, j, duel, battle, counters):
    """One attack on model ``j`` of side ``y`` (:func:`kernels.dystopian_wars.attack.
    resolve_attack_locals`: hit dice at to-hit number ``t``, AA/CC cancel dice, §11 damage with
    criticals): returns ``(rng, damage)``. With ``sampling: table`` the hits are one draw from
    ``hit_cdf[t, n_dice, n_defense]``, the exact distribution of the same dice."""
    if duel.settings[S_SAMPLING] == SAMPLING_TABLE:
        store_stream(state, rng)
        row = duel.hit_cdf[t, n_dice, n_defense]
        hits = np.searchsorted(row, uniform01(state), side="right")
        if hits >= row.shape[0]:
            hits = row.shape[0] - 1          # the dropped < 1e-15 tail
        damage = damage_from_hits(state, hits, duel.models[y, j, F_DR], duel.models[y, j, F_CR],
                                  duel.models[y, j, F_HP], battle.hp_lost[y, j], True, duel.settings[S_SMALL_HP],
                                  duel.crit_values, duel.crit_cum)
        return load_stream(state), damage
    s0, s1, s2, s3, buf, lanes = rng
    s0, s1, s2, s3, buf, lanes, _hits, damage, rolled, dropped = resolve_attack_locals(
        s0, s1, s2, s3, buf, lanes, state, n_dice, t, duel.dice_value, duel.dice_explodes, duel.dice_n,
        n_defense, duel.dice_value[DICE_CANCEL], duel.dice_explodes[DICE_CANCEL], duel.dice_n,
        duel.models[y, j, F_DR], duel.models[y, j, F_CR], duel.models[y, j, F_HP], battle.hp_lost[y, j],
        duel.settings[S_SMALL_HP], duel.crit_values, duel.crit_cum)
    counters[CT_EXPLOSION_CAPS] += dropped
    counters[CT_DICE_ROLLED] += rolled
    return (s0, s1, s2, s3, buf, lanes), damage


# ----------------------------------------------------------------------------- small rules

@hot_jit
def aux_dice(v, hp_lost):
    """Spec 0.5 ``aux``: AA or CC dice of a model that lost ``hp_lost`` HP."""
    return max(1, v - hp_lost) if v > 0 else 0


@hot_jit
def squadron_alive(x, s, duel, battle):
    """Whether squadron ``s`` of side ``x`` has a model alive."""
    first = duel.squads[x, s, 0]
    for i in range(first, first + duel.squads[x, s, 1]):
        if battle.alive[x, i]:
            return True
    return False


@hot_jit
def side_alive(x, duel, battle):
    """Whether side ``x`` has a model alive (a side with none has lost, spec §7 step 4)."""
    for i in range(duel.n_models[x]):
        if battle.alive[x, i]:
            return True
    return False


@hot_jit
def model_lost(y, j, duel, battle):
    """Model ``j`` of side ``y`` is destroyed, captured or derelict (spec §7 steps 4 and 4b):
    no longer alive, a loss of its squadron in this activation. Returns whether it was the
    side's commodore."""
    battle.alive[y, j] = 0
    battle.lost_now[duel.models[y, j, F_SQUAD]] += 1
    return duel.models[y, j, F_COMMODORE] != 0


@hot_jit
def pick_by_policy(state, y, eligible, k, policy, duel, battle):
    """The living model ``j`` of side ``y`` with ``eligible[j] != 0`` that the target policy
    picks (spec §7 step 3), or -1 when there is none. ``k`` = picks already made this step
    (spread); only the ``random`` policy draws from ``state``."""
    best = -1
    best_key = 0
    n_elig = 0
    for j in range(duel.n_models[y]):
        if battle.alive[y, j] == 0 or eligible[j] == 0:
            continue
        n_elig += 1
        if policy == P_WEAKEST:
            key = duel.models[y, j, F_HP] - battle.hp_lost[y, j]
            if best < 0 or key < best_key:
                best, best_key = j, key
        elif policy == P_STRONGEST:
            key = duel.models[y, j, F_POINTS]
            if best < 0 or key > best_key:
                best, best_key = j, key
        elif best < 0:
            best = j
    if n_elig == 0 or policy == P_FIRST or policy == P_WEAKEST or policy == P_STRONGEST:
        return best
    pick = k % n_elig if policy == P_SPREAD else uniform_int(state, n_elig)
    for j in range(duel.n_models[y]):
        if battle.alive[y, j] == 0 or eligible[j] == 0:
            continue
        if pick == 0:
            return j
        pick -= 1
    return -1


@hot_jit
def pick_target(rng, state, y, eligible, k, policy, duel, battle):
    """:func:`pick_by_policy` on the carried stream: returns ``(rng, j)``. The random policy's
    draw uses the array form, so the stream goes through ``state`` around it."""
    if policy == P_RANDOM:
        store_stream(state, rng)
    j = pick_by_policy(state, y, eligible, k, policy, duel, battle)
    if policy == P_RANDOM:
        rng = load_stream(state)
    return rng, j


# ----------------------------------------------------------------------------- the phases

@hot_jit
def start_duel(duel, battle):
    """Spec §7 "State per trial", start: ``hp_lost`` from the params, all alive, no Break,
    no commodore lost, no failed tests, nothing captured, ``ap`` = profile AP."""
    for x in range(2):
        for i in range(duel.n_models[x]):
            battle.hp_lost[x, i] = duel.models[x, i, F_HP_LOST0]
            battle.alive[x, i] = 1
            battle.ap[x, i] = duel.models[x, i, F_AP]
        for s in range(duel.n_squads[x]):
            battle.brk[x, s] = 0
        battle.comm_lost[x] = 0
        battle.rout_fails[x] = 0
        battle.captured[x] = 0


@unmanaged_jit
def initiative(rng, settings, dice_value, dice_explodes, dice_n, counters):
    """Spec §7 turn loop 1 (rules §4): A rolls 2D6, then B; the higher activates first. Ties
    (Amb 14): both re-roll (capped at :data:`INITIATIVE_REROLL_CAP`, then A first, counted),
    or A / B goes first. Returns ``(rng, side first)`` (0 = A)."""
    n = settings[S_INIT_DICE]
    for _ in range(INITIATIVE_REROLL_CAP):
        rng, a = roll(rng, n, DICE_INITIATIVE, dice_value, dice_explodes, dice_n, counters)
        rng, b = roll(rng, n, DICE_INITIATIVE, dice_value, dice_explodes, dice_n, counters)
        if a > b:
            return rng, 0
        if b > a:
            return rng, 1
        if settings[S_TIE] == TIE_A_FIRST:
            return rng, 0
        if settings[S_TIE] == TIE_B_FIRST:
            return rng, 1
    counters[CT_INITIATIVE_CAPS] += 1
    return rng, 0


@hot_jit
def next_activation(cur, duel, battle):
    """Spec §7 turn loop 2: ``(side, squadron)`` of the next activation: the first squadron
    (list order) of side ``cur`` not yet activated this turn with a model alive, else the
    other side's; squadron -1 when neither side has one (the turn ends)."""
    for side in (cur, 1 - cur):
        for s in range(duel.n_squads[side]):
            if battle.activated[side, s] == 0 and squadron_alive(side, s, duel, battle):
                return side, s
    return cur, -1


@hot_jit
def move(x, s, turn, dist, duel, battle):
    """Spec §7 activation step 2: returns ``(dist, band)``. Closing: the distance closes by
    side ``x``'s speed (null: the slowest alive model of the squadron), never below the
    minimum, and the band is read from it (``fractional_range``); fixed: the turn's band."""
    if duel.settings[S_RANGE_MODE] == RANGE_CLOSING:
        speed = duel.geometry[G_SPEED_A + x]
        if math.isnan(speed):
            speed = np.inf
            first = duel.squads[x, s, 0]
            for i in range(first, first + duel.squads[x, s, 1]):
                if battle.alive[x, i] and duel.mv[x, i] < speed:
                    speed = duel.mv[x, i]
        dist = max(duel.geometry[G_MIN_DISTANCE], dist - speed)
        d = math.floor(dist) if duel.settings[S_LOWER_BAND] else dist
        band = max(1, int(math.ceil(d / duel.geometry[G_BAND_INCHES])))
    else:
        band = duel.bands[min(turn, duel.bands.shape[0]) - 1]
    return dist, band


@hot_jit
def declare(rng, state, x, s, band, duel, battle):
    """Spec §7 activation step 3 (rules §11: every target chosen before any dice): for each
    alive model of squadron ``s`` and each weapon with AD in this band, a legal target by
    side ``x``'s policy, written to ``battle.declared``. Returns ``(rng, attacks declared)``."""
    b = band - 1
    policy = duel.settings[S_POLICY_A + x]
    n = 0
    first = duel.squads[x, s, 0]
    for i in range(first, first + duel.squads[x, s, 1]):
        if battle.alive[x, i] == 0:
            continue
        for w in range(duel.models[x, i, F_N_WEAPONS]):
            if duel.w_ad[x, i, w, b] < 1:
                continue
            rng, j = pick_target(rng, state, 1 - x, duel.to_hit[x, i, w, :, b], n, policy, duel, battle)
            if j < 0:
                continue
            battle.declared[n, 0] = i
            battle.declared[n, 1] = w
            battle.declared[n, 2] = j
            n += 1
    return rng, n


@hot_jit
def resolve_fire(rng, state, x, band, n_declared, duel, battle, counters):
    """Spec §7 activation step 4 (rules §11): the declared attacks in order; one on a model
    already destroyed is lost. Gun AD drops with the attacker's lost HP (never below 1); the
    target's AA cancels rockets, its CC torpedoes. Returns ``(rng, y's commodore lost)``."""
    y = 1 - x
    b = band - 1
    comm_now = False
    for q in range(n_declared):
        i = battle.declared[q, 0]
        w = battle.declared[q, 1]
        j = battle.declared[q, 2]
        if battle.alive[y, j] == 0 or battle.alive[x, i] == 0:
            continue
        kind = duel.w_type[x, i, w]
        ack_ack = duel.models[x, i, F_ACK_ACK_DICE]
        aa = aux_dice(duel.models[y, j, F_AA], battle.hp_lost[y, j])
        if ack_ack > 0 and band == 1 and aa > 0:
            # §11 Ack Ack: "l'AA viene risolto prima dell'attacco dei volanti" -- the target's AA
            # fires at the flyer first (its one AA use against this attack)
            rng, aa_hits = roll(rng, aa, ack_ack, duel.dice_value, duel.dice_explodes, duel.dice_n, counters)
            store_stream(state, rng)
            battle.hp_lost[x, i] += damage_from_hits(state, aa_hits, duel.models[x, i, F_DR], duel.models[x, i, F_CR],
                                                     duel.models[x, i, F_HP], battle.hp_lost[x, i], True,
                                                     duel.settings[S_SMALL_HP], duel.crit_values, duel.crit_cum)
            rng = load_stream(state)
            if battle.hp_lost[x, i] >= duel.models[x, i, F_HP]:
                battle.alive[x, i] = 0                   # shot down before it fires
                battle.aa_lost[0] += 1
                if duel.models[x, i, F_COMMODORE] != 0:
                    battle.aa_lost[1] = 1
                continue
            aa = 0
        n_dice = duel.w_ad[x, i, w, b]
        if kind == W_PRIMARY or kind == W_SECONDARY:      # spec 0.5 degrade
            n_dice = max(1, n_dice - battle.hp_lost[x, i])
        n_defense = 0
        if kind == W_ROCKET:
            n_defense = aa
        elif kind == W_TORPEDO:
            n_defense = aux_dice(duel.models[y, j, F_CC], battle.hp_lost[y, j])
        rng, damage = attack(rng, state, n_dice, duel.to_hit[x, i, w, j, b], n_defense, y, j, duel, battle,
                             counters)
        battle.hp_lost[y, j] += damage
        if battle.hp_lost[y, j] >= duel.models[y, j, F_HP]:
            if model_lost(y, j, duel, battle):
                comm_now = True
    return rng, comm_now


@hot_jit
def in_boarding_reach(dist, band, duel):
    """Spec §7 "Boarding step" (rules §12: within 4in): closing, the distance after this
    move; fixed, range band 1."""
    if duel.settings[S_RANGE_MODE] == RANGE_CLOSING:
        return dist <= duel.geometry[G_BOARD_INCHES]
    return band == 1


@hot_jit
def melee(rng, x, i, y, j, committed, duel, battle, counters):
    """Spec §7 "Boarding step" 3: model ``i`` of side ``x`` boards model ``j`` with
    ``committed`` AP. Defence dice of the boarded model (its CC against a diving boarder,
    else AA) first, then one melee round: the boarders' MD, the defender's MD. Returns
    ``(rng, captured, derelict, boarders left)``."""
    d_ap = battle.ap[y, j]
    if d_ap == 0:                                  # no crew: captured without dice
        return rng, True, False, committed
    v = duel.models[y, j, F_CC] if duel.models[x, i, F_DIVING] else duel.models[y, j, F_AA]
    rng, defence_hits = roll(rng, aux_dice(v, battle.hp_lost[y, j]), DICE_BOARD_DEFENSE, duel.dice_value,
                             duel.dice_explodes, duel.dice_n, counters)
    a_now = max(0, committed - defence_hits)
    rng, boarder_hits = roll(rng, a_now, DICE_MELEE, duel.dice_value, duel.dice_explodes, duel.dice_n, counters)
    rng, defender_hits = roll(rng, d_ap, DICE_MELEE, duel.dice_value, duel.dice_explodes, duel.dice_n, counters)
    d_left = max(0, d_ap - boarder_hits)
    a_left = max(0, a_now - defender_hits)
    battle.ap[y, j] = d_left
    captured = d_left == 0 and a_left >= 1
    derelict = d_left == 0 and a_left == 0 and duel.settings[S_BOARD_DERELICT] != 0
    return rng, captured, derelict, a_left


@hot_jit
def boarding(rng, state, x, s, duel, battle, counters):
    """Spec §7 activation step 4b, "Boarding step" (rules §4 step 6, §12): each alive model
    of squadron ``s`` that can board and has AP boards one enemy (target policy on the
    current state), commits all or half its AP and fights :func:`melee`. A captured or
    derelict model is lost; the prize crew stays aboard, other survivors return. Returns
    ``(rng, y's commodore lost)``."""
    y = 1 - x
    policy = duel.settings[S_POLICY_A + x]
    k = 0
    comm_now = False
    first = duel.squads[x, s, 0]
    for i in range(first, first + duel.squads[x, s, 1]):
        if battle.alive[x, i] == 0 or duel.models[x, i, F_CAN_BOARD] == 0 or battle.ap[x, i] < 1:
            continue
        rng, j = pick_target(rng, state, y, duel.models[y, :, F_BOARDABLE], k, policy, duel, battle)
        if j < 0:
            continue
        k += 1
        committed = battle.ap[x, i]
        if duel.settings[S_BOARD_HALF]:
            committed = max(1, committed // 2)
        battle.ap[x, i] -= committed
        rng, captured, derelict, a_left = melee(rng, x, i, y, j, committed, duel, battle, counters)
        if captured or derelict:
            if model_lost(y, j, duel, battle):
                comm_now = True
            if captured:
                battle.captured[y] += 1
        if not captured:
            battle.ap[x, i] += a_left
    return rng, comm_now


@unmanaged_jit
def squadron_test(rng, x, s, models, squads, alive, comm_lost_x, settings, dice_value, dice_explodes, dice_n,
                  counters):
    """Rules §8 rout / bravery test of squadron ``s`` of side ``x``: 3D6 (+1D6 with its side's
    alive commodore in it); needs 1, +1 when half or more of its models are lost, +1 while
    the commodore is lost. Returns ``(rng, passed)``."""
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
    rng, successes = roll(rng, dice, DICE_ROUT, dice_value, dice_explodes, dice_n, counters)
    return rng, successes >= need


@hot_jit
def rout_tests(rng, y, comm_now, duel, battle, counters):
    """Spec §7 activation step 5 (rules §8, 7a): every alive squadron of side ``y`` tests
    the first time its commodore is lost; otherwise each that lost a model in this
    activation. A failure gives Break and counts in ``rout_fails``. Returns ``rng``."""
    new_comm = comm_now and battle.comm_lost[y] == 0
    if new_comm:
        battle.comm_lost[y] = 1
    for s in range(duel.n_squads[y]):
        if (battle.lost_now[s] == 0 and not new_comm) or not squadron_alive(y, s, duel, battle):
            continue
        rng, passed = squadron_test(rng, y, s, duel.models, duel.squads, battle.alive, battle.comm_lost[y],
                                    duel.settings, duel.dice_value, duel.dice_explodes, duel.dice_n, counters)
        if not passed:
            battle.brk[y, s] = 1
            battle.rout_fails[y] += 1
    return rng


@hot_jit
def bravery_test(rng, x, s, duel, battle, counters):
    """Spec §7 activation step 6 (rules §8, 7b): squadron ``s``, which had Break before it
    activated, tests; a pass removes Break. Returns ``rng``."""
    rng, passed = squadron_test(rng, x, s, duel.models, duel.squads, battle.alive, battle.comm_lost[x],
                                duel.settings, duel.dice_value, duel.dice_explodes, duel.dice_n, counters)
    if passed:
        battle.brk[x, s] = 0
    return rng


@hot_jit
def record_duel(values, winner, turn, duel, battle):
    """Spec §7 "Metrics": the values of :data:`DUEL_METRICS` + :data:`BOARDING_METRICS` (a
    captured or derelict model counts as lost)."""
    values[M_WIN_A] = 1 if winner == 0 else 0
    values[M_WIN_B] = 1 if winner == 1 else 0
    values[M_DRAW] = 1 if winner < 0 else 0
    values[M_TURNS] = turn
    for x in range(2):
        lost_points = 0
        survivors = 0
        for i in range(duel.n_models[x]):
            if battle.alive[x, i]:
                survivors += 1
            else:
                lost_points += duel.models[x, i, F_POINTS]
        values[M_POINTS_DESTROYED + x] = lost_points
        values[M_SURVIVORS + x] = survivors
        values[M_ROUT_FAILS + x] = battle.rout_fails[x]
        values[M_CAPTURED + x] = battle.captured[x]


# ----------------------------------------------------------------------------- on the driver

@unmanaged_jit
def duel_trial(state, values, counters, ws, duel):
    """One duel (spec §7 "Turn loop"): each turn initiative, then activations until every
    squadron with a model alive has activated; the duel ends when a side has no model left,
    or after ``max_turns`` (a draw). ``ws`` holds the chunk's :data:`DUEL_STATE`."""
    battle = ws[0]
    start_duel(duel, battle)
    rng = load_stream(state)
    dist = duel.geometry[G_START]
    winner = -1
    turn = 0
    for turn in range(1, duel.settings[S_MAX_TURNS] + 1):
        rng, x = initiative(rng, duel.settings, duel.dice_value, duel.dice_explodes, duel.dice_n, counters)
        for side in range(2):
            for s in range(duel.n_squads[side]):
                battle.activated[side, s] = 0
        while True:
            x, s = next_activation(x, duel, battle)
            if s < 0:
                break
            # spec §7 "Activation of squadron s of side x (enemy y)"
            y = 1 - x
            battle.activated[x, s] = 1
            had_break = battle.brk[x, s] != 0                                           # step 1
            dist, band = move(x, s, turn, dist, duel, battle)                           # step 2
            for s_y in range(duel.n_squads[y]):
                battle.lost_now[s_y] = 0
            battle.aa_lost[0] = 0
            battle.aa_lost[1] = 0
            comm_now = False
            if band <= duel.settings[S_RANGE_BANDS]:
                rng, n_declared = declare(rng, state, x, s, band, duel, battle)        # step 3
                rng, comm_now = resolve_fire(rng, state, x, band, n_declared, duel, battle, counters)   # 4
            if (duel.settings[S_BOARDING] and not had_break and in_boarding_reach(dist, band, duel)
                    and side_alive(y, duel, battle)):                 # step 4b (Break: no boarding, §8)
                rng, comm_boarded = boarding(rng, state, x, s, duel, battle, counters)
                comm_now = comm_now or comm_boarded
            if not side_alive(y, duel, battle):          # the duel ends at once, no tests
                winner = x
                break
            if not side_alive(x, duel, battle):          # its last flyers fell to Ack Ack
                winner = y
                break
            rng = rout_tests(rng, y, comm_now, duel, battle, counters)                 # step 5
            if battle.aa_lost[0] > 0 or battle.aa_lost[1] > 0:
                # flyers of squadron s shot down by Ack Ack: its side tests too (§8: a squadron
                # that loses a model; all of x's squadrons if that was its commodore)
                for s_x in range(duel.n_squads[x]):
                    battle.lost_now[s_x] = 0
                battle.lost_now[s] = battle.aa_lost[0]
                rng = rout_tests(rng, x, battle.aa_lost[1] != 0, duel, battle, counters)
            if had_break and squadron_alive(x, s, duel, battle):
                rng = bravery_test(rng, x, s, duel, battle, counters)                  # step 6
            x = y
        if winner >= 0:
            break
    store_stream(state, rng)
    record_duel(values, winner, turn, duel, battle)


@jit
def duel_workspace(duel):
    """The chunk's :data:`DUEL_STATE` (reset by :func:`start_duel` at every trial)."""
    return np.zeros(1, DUEL_STATE)


@parallel_jit
def duel_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """Per-chunk (hist, moments, counters) of :data:`DUEL_METRICS` + :data:`BOARDING_METRICS`."""
    return run_trials(duel_trial, duel_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                      N_KERNEL_METRICS, n_bins, N_DUEL_COUNTERS)
