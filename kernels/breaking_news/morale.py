"""Kernel of question ``morale``: one end-of-turn morale test (source §12, §13 platoon play).

args = (n_dice, casualties_counted, half_losses). Pass when any die >= the casualties counted;
"Con una tirada de 6 siempre se pasará el test, salvo que el equipo haya tenido un 50% de bajas
durante la batalla". No casualties: no test (a pass).
"""
from __future__ import annotations

from kernels._jit import hot_jit, inline_trial, parallel_jit, unmanaged_jit
from kernels.breaking_news.fire import every_die_among
from kernels.driver import no_workspace, run_trials
from kernels.rng import roll_die

N_METRICS = 2
N_COUNTERS = 0


@unmanaged_jit
def morale_passes(state, n_dice, casualties, half_losses):
    """One morale test of ``n_dice`` D6 against ``casualties`` (leader loss already counted 2)."""
    if casualties <= 0:
        return True
    passed = False
    for _ in range(n_dice):
        d = roll_die(state, 6)
        if d >= casualties or (d == 6 and not half_losses):
            passed = True
    return passed


@hot_jit
def drawn_morale_passes(state, n_dice, casualties, half_losses, powers):
    """:func:`morale_passes` with one draw per block of up to ``TABLE_DICE`` dice (``sampling:
    table``): the test fails iff every die fails, i.e. shows one of the ``b`` faces below
    ``casualties`` (a 6, which always passes, fails only after 50% losses), so a block fails iff a uniform index
    over its ``6**n`` ordered outcomes is below ``powers[b, n] = b**n``."""
    if casualties <= 0:
        return True
    b = min(casualties - 1, 6)
    if b == 6 and not half_losses:
        b = 5
    return not every_die_among(state, n_dice, b, powers)


@inline_trial
def morale_trial(state, values, counters, ws, args):
    n_dice, casualties, half_losses = args
    ok = morale_passes(state, n_dice, casualties, half_losses)
    values[0] = 1 if ok else 0
    values[1] = 0 if ok else 1


@parallel_jit
def morale_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    return run_trials(morale_trial, no_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                      N_METRICS, n_bins, N_COUNTERS)
