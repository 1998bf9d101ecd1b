"""One attack of Dystopian Wars: exploding hit pool, AA/CC cancellation, DR/CR damage.

The per-attack helpers (:func:`attack_hits`, :func:`attack_damage`, and their inlined forms
:func:`attack_hits_locals`, :func:`damage_from_hits`) are shared by the ``attack``,
``fire_allocation``, ``ram``/``collision`` and ``duel`` kernels. Every pool is
:func:`kernels.dice.pool_total` on a face table compiled in Python
(``analyzer.games.dystopian_wars.rules.hit_faces``): the table already holds the to-hit
number, the natural-1 failure and the modified-six reading, so the kernels never look at
rules. Rules: ``docs/rules/dystopian_wars.md`` §1 (hit table), §11 (damage).

Compile time: numba re-types an ``inline="always"`` helper at every call site, so the
simple kernels call small refcount-free helpers (:func:`roll_pool`, :func:`attack_hits`,
:func:`attack_damage`, each expanding the pool once) instead of inlining; only the duel's
per-attack path (:func:`resolve_attack_locals`) is inlined, where it pays.
"""
from __future__ import annotations


from kernels._jit import hot_jit, parallel_jit, unmanaged_jit
from kernels.dice import pool_total, pool_total_locals
from kernels.driver import no_workspace, run_trials
from kernels.rng import uniform_int

#: rules.small_hp_critical codes (a model that STARTED with <= 2 HP, §11 damage)
SMALL_HP_TWO_DAMAGE = 0
SMALL_HP_DESTROYED = 1
SMALL_HP_OFF = 2

#: per-chunk counters: explosion chains cut at kernels.dice.EXPLOSION_DEPTH_CAP, dice rolled
N_COUNTERS = 2

#: metric order of the ``attack`` question
ATTACK_METRICS = ("hits", "p_damage", "p_critical", "criticals", "hp_damage", "p_destroyed")


@hot_jit
def critical_damage(state, crit_values, crit_cum):
    """HP damage of one critical roll: a weighted draw from the critical table
    (no random number when every entry deals the same damage)."""
    n = crit_values.shape[0]
    if n == 1:
        return crit_values[0]
    u = uniform_int(state, crit_cum[n - 1])
    for i in range(n):
        if u < crit_cum[i]:
            return crit_values[i]
    return crit_values[n - 1]


@hot_jit
def damage_from_hits(state, hits, dr, cr, hp, hp_lost, crits_allowed, small_hp_rule, crit_values, crit_cum):
    """§11: hits >= CR -> floor(hits / CR) critical rolls (a model that started with <= 2 HP
    takes 2 damage, or is destroyed, instead); else hits >= DR -> 1 HP; else 0.
    DR and CR never combine in one attack. Not capped at the remaining HP."""
    if crits_allowed and hits >= cr:
        if small_hp_rule != SMALL_HP_OFF and hp <= 2:
            if small_hp_rule == SMALL_HP_TWO_DAMAGE:
                return 2
            return hp - hp_lost
        d = 0
        for _ in range(hits // cr):
            d += critical_damage(state, crit_values, crit_cum)
        return d
    if hits >= dr:
        return 1
    return 0


@hot_jit
def attack_hits_locals(s0, s1, s2, s3, buf, lanes, n_dice, hit_value, hit_explodes, hit_n, n_defense,
                       cancel_value, cancel_explodes, cancel_n):
    """Hits of an ``n_dice`` pool net of ``n_defense`` AA/CC dice (5 cancels 1, 6 cancels 2;
    rolled against rockets and torpedoes only), never below 0. The stream state is held in
    scalars (:func:`kernels.dice.pool_total_locals`); returns
    ``(s0, s1, s2, s3, buf, lanes, hits, dice rolled, dice dropped at the explosion cap)``."""
    s0, s1, s2, s3, buf, lanes, hits, rolled, dropped = pool_total_locals(
        s0, s1, s2, s3, buf, lanes, n_dice, hit_value, hit_explodes, hit_n)
    if n_defense > 0:
        s0, s1, s2, s3, buf, lanes, cancels, r, d = pool_total_locals(
            s0, s1, s2, s3, buf, lanes, n_defense, cancel_value, cancel_explodes, cancel_n)
        rolled += r
        dropped += d
        hits -= cancels
        if hits < 0:
            hits = 0
    return s0, s1, s2, s3, buf, lanes, hits, rolled, dropped


@unmanaged_jit
def roll_pool(state, n_dice, value, explodes, group_n, counters):
    """:func:`kernels.dice.pool_total` behind a plain call (no reference counting)."""
    return pool_total(state, n_dice, value, explodes, group_n, counters)


@unmanaged_jit
def attack_hits(state, n_dice, hit_value, hit_explodes, hit_n, n_defense,
                cancel_value, cancel_explodes, cancel_n, counters):
    """:func:`attack_hits_locals` on an array stream state; adds (dropped, rolled) to
    ``counters[0]``, ``counters[1]``."""
    s0, s1, s2, s3, buf, lanes, hits, rolled, dropped = attack_hits_locals(
        state[0], state[1], state[2], state[3], state[4], state[5], n_dice, hit_value, hit_explodes, hit_n,
        n_defense, cancel_value, cancel_explodes, cancel_n)
    state[0], state[1], state[2], state[3], state[4], state[5] = s0, s1, s2, s3, buf, lanes
    counters[0] += dropped
    counters[1] += rolled
    return hits


@unmanaged_jit
def attack_damage(state, hits, dr, cr, hp, hp_lost, crits_allowed, small_hp_rule, crit_values, crit_cum):
    """:func:`damage_from_hits` behind a plain call (no reference counting)."""
    return damage_from_hits(state, hits, dr, cr, hp, hp_lost, crits_allowed, small_hp_rule, crit_values, crit_cum)


@hot_jit
def resolve_attack_locals(s0, s1, s2, s3, buf, lanes, state, n_dice, t, hit_value, hit_explodes, hit_n,
                          n_defense, cancel_value, cancel_explodes, cancel_n,
                          dr, cr, hp, hp_lost, small_hp_rule, crit_values, crit_cum):
    """One whole attack for stateful kernels (the duel): ``n_dice`` at to-hit table ``t`` of
    the stacked ``hit_value[t]``, AA/CC cancellation, damage with criticals allowed.

    Inlined into callers compiled without reference counting
    (:func:`kernels._jit.unmanaged_jit`). ``state`` is used only for critical-table
    draws (the scalar state is written to it and read back around them). Returns
    ``(s0, s1, s2, s3, buf, lanes, hits, damage, dice rolled, dice dropped)``."""
    s0, s1, s2, s3, buf, lanes, hits, rolled, dropped = attack_hits_locals(
        s0, s1, s2, s3, buf, lanes, n_dice, hit_value[t], hit_explodes[t], hit_n, n_defense,
        cancel_value, cancel_explodes, cancel_n)
    draws = crit_values.shape[0] > 1 and hits >= cr
    if draws:
        state[0], state[1], state[2], state[3], state[4], state[5] = s0, s1, s2, s3, buf, lanes
    dmg = damage_from_hits(state, hits, dr, cr, hp, hp_lost, True, small_hp_rule, crit_values, crit_cum)
    if draws:
        s0, s1, s2, s3, buf, lanes = state[0], state[1], state[2], state[3], state[4], state[5]
    return s0, s1, s2, s3, buf, lanes, hits, dmg, rolled, dropped


@unmanaged_jit
def attack_trial(state, values, counters, ws, args):
    """One attack: the values of :data:`ATTACK_METRICS`; counters (explosion caps hit, dice rolled).

    A flyer attacking within 8" first takes the target's Ack Ack (§11: "l'AA viene risolto
    prima dell'attacco dei volanti"): ``aa_n`` AA dice at the flyer's DR/CR; the HP it loses
    select its attack dice from ``dice_by_flyer_damage`` (gunnery -1 AD per HP, 0 once destroyed).
    With ``aa_n == 0`` no AA die is rolled and the attack uses ``dice_by_flyer_damage[0]``."""
    (dice_by_flyer_damage, hit_value, hit_explodes, hit_n, n_defense, cancel_value, cancel_explodes, cancel_n,
     dr, cr, hp, hp_lost, small_hp_rule, crit_values, crit_cum,
     aa_n, aa_value, aa_explodes, aa_group_n, flyer_dr, flyer_cr, flyer_hp, flyer_hp_lost,
     flyer_crit_values, flyer_crit_cum) = args
    flyer_damage = 0
    if aa_n > 0:
        aa_hits = roll_pool(state, aa_n, aa_value, aa_explodes, aa_group_n, counters)
        flyer_damage = attack_damage(state, aa_hits, flyer_dr, flyer_cr, flyer_hp, flyer_hp_lost, True,
                                     small_hp_rule, flyer_crit_values, flyer_crit_cum)
        last = dice_by_flyer_damage.shape[0] - 1
        if flyer_damage > last:
            flyer_damage = last
    n_dice = dice_by_flyer_damage[flyer_damage]
    hits = attack_hits(state, n_dice, hit_value, hit_explodes, hit_n,
                       n_defense, cancel_value, cancel_explodes, cancel_n, counters)
    dmg = attack_damage(state, hits, dr, cr, hp, hp_lost, True, small_hp_rule, crit_values, crit_cum)
    values[0] = hits
    values[1] = 1 if hits >= dr else 0
    values[2] = 1 if hits >= cr else 0
    values[3] = hits // cr
    values[4] = dmg
    values[5] = 1 if dmg >= hp - hp_lost else 0


@parallel_jit
def attack_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """Per-chunk (hist, moments, counters) of :data:`ATTACK_METRICS` (:mod:`kernels.driver`)."""
    return run_trials(attack_trial, no_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                      len(ATTACK_METRICS), n_bins, N_COUNTERS)
