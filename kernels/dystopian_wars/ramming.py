"""Rams and collisions (``docs/rules/dystopian_wars.md`` §10): two pools of 4+ dice, the
second either simultaneous or reduced by the first's damage (the rammed model answers
with its current HP).

One kernel serves both questions:

- ram: first pool = the rammer's RR dice against the rammed model (criticals allowed);
  second pool = the rammed model's HP dice against the rammer, ``reply_after_damage``
  reducing it by the damage just taken;
- collision: first pool = b's dice (or the terrain's) against a, second = a's against b,
  simultaneous; criticals only where ``rules.ram_no_crits`` lets them.
"""
from __future__ import annotations

from kernels._jit import inline_trial, parallel_jit
from kernels.driver import run_trials, no_workspace
from kernels.dystopian_wars.attack import N_COUNTERS, attack_damage, roll_pool

#: metric order: damage to the first pool's target, to the second's, and whether each is destroyed
N_METRICS = 4


@inline_trial
def exchange_trial(state, values, counters, ws, args):
    """One exchange: (damage to model 1, damage to model 2, model 1 destroyed, model 2
    destroyed). Model 1 is the first pool's target."""
    (hit_value, hit_explodes, hit_n, n_first, first_crits, dr1, cr1, hp1, hp_lost1,
     n_second, second_crits, reply_after_damage, dr2, cr2, hp2, hp_lost2,
     small_hp_rule, crit_values, crit_cum) = args
    h1 = roll_pool(state, n_first, hit_value, hit_explodes, hit_n, counters)
    d1 = attack_damage(state, h1, dr1, cr1, hp1, hp_lost1, first_crits, small_hp_rule, crit_values, crit_cum)
    n2 = n_second
    if reply_after_damage:
        n2 = n_second - d1
        if n2 < 0:
            n2 = 0
    h2 = roll_pool(state, n2, hit_value, hit_explodes, hit_n, counters)
    d2 = attack_damage(state, h2, dr2, cr2, hp2, hp_lost2, second_crits, small_hp_rule, crit_values, crit_cum)
    values[0] = d1
    values[1] = d2
    values[2] = 1 if d1 >= hp1 - hp_lost1 else 0
    values[3] = 1 if d2 >= hp2 - hp_lost2 else 0


@parallel_jit
def exchange_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """Per-chunk (hist, moments, counters) of the exchange metrics (:mod:`kernels.driver`)."""
    return run_trials(exchange_trial, no_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                      N_METRICS, n_bins, N_COUNTERS)
