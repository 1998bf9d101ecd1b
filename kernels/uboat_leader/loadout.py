"""Several fleets on common random numbers: the ``loadout`` question's kernel
(docs/models/uboat_leader_campaign.md §14).

One trial plays the same campaign once per fleet, each from the SAME stream state: the
state at the start of the trial is copied, fleet 0 plays its campaign (the campaign
question's own trial function, :func:`kernels.uboat_leader.campaign.campaign_trial`), the
copy is restored, fleet 1 plays, and so on. After the last fleet the stream continues from
where fleet 0 left it, so fleet 0 sees exactly the stream the campaign question would give
it alone (same seed and key): its metrics are bit-identical to that run.

Every fleet's campaign arrays are stacked along a leading fleet axis (zero-padded to the
largest fleet; the campaign kernel reads sizes from its ``cfg``, never from array shapes).
Metric ``group * n_fleets + f`` is fleet ``f``'s value of group ``vp``, ``vp_diff``
(VP minus fleet 0's VP: may be negative, its mean and SE are exact), ``boats_lost`` or
``p_level_<k>`` (sheet order).
"""
from __future__ import annotations

import numpy as np

from kernels._jit import jit, parallel_jit
from kernels.driver import run_trials
from kernels.rng import STATE_WORDS
from kernels.uboat_leader.campaign import campaign_trial, campaign_workspace
from kernels.uboat_leader.campaign_state import K_N_METRICS, M_BOATS_LOST, M_VP, N_COUNTERS, N_FIXED_METRICS

#: lcfg fields: fleets, success levels, loadout metrics
L_N_FLEETS, L_N_LEVELS, L_N_METRICS = 0, 1, 2
N_LCFG = 3
#: metric groups before the success levels
G_VP, G_VP_DIFF, G_BOATS_LOST, G_LEVEL0 = 0, 1, 2, 3
#: arrays of one campaign point (kernels.uboat_leader.campaign.campaign_trial's args)
N_CAMPAIGN_ARGS = 27
#: arrays of the campaign workspace (campaign_workspace's tuple)
N_CAMPAIGN_WS = 15


@jit
def fleet_args(cfg, a, f):
    """Fleet ``f``'s campaign args (views into the stacked arrays ``a``) with ``cfg``."""
    return (cfg, a[1][f], a[2][f], a[3][f], a[4][f], a[5][f], a[6][f], a[7][f], a[8][f], a[9][f], a[10][f],
            a[11][f], a[12][f], a[13][f], a[14][f], a[15][f], a[16][f], a[17][f], a[18][f], a[19][f], a[20][f],
            a[21][f], a[22][f], a[23][f], a[24][f], a[25][f], a[26][f])


@jit
def loadout_trial(state, values, counters, ws, args):
    """Every fleet's campaign on the trial's stream (common random numbers)."""
    lcfg = args[0]
    stacked = args[2:]
    cws = ws[:N_CAMPAIGN_WS]
    cvalues, start, after0 = ws[-3], ws[-2], ws[-1]
    n_fleets = lcfg[L_N_FLEETS]
    n_levels = lcfg[L_N_LEVELS]
    start[:] = state
    vp0 = 0
    for f in range(n_fleets):
        state[:] = start
        campaign_trial(state, cvalues, counters, cws, fleet_args(stacked[0][f], stacked, f))
        if f == 0:
            after0[:] = state
            vp0 = cvalues[M_VP]
        values[G_VP * n_fleets + f] = cvalues[M_VP]
        values[G_VP_DIFF * n_fleets + f] = cvalues[M_VP] - vp0
        values[G_BOATS_LOST * n_fleets + f] = cvalues[M_BOATS_LOST]
        for k in range(n_levels):
            values[(G_LEVEL0 + k) * n_fleets + f] = cvalues[N_FIXED_METRICS + k]
    state[:] = after0


@jit
def loadout_workspace(args):
    """The campaign workspace sized for the largest fleet (``args[1]``: every cfg field's
    maximum over the fleets), the campaign's metric scratch and two stream copies."""
    wcfg = args[1]
    return campaign_workspace(fleet_args(wcfg, args[2:], 0)) + (
        np.zeros(wcfg[K_N_METRICS], np.int64), np.zeros(STATE_WORDS, np.uint64), np.zeros(STATE_WORDS, np.uint64))


@parallel_jit
def loadout_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """Per-chunk (hist, moments, counters) of the loadout metrics (:mod:`kernels.driver`)."""
    return run_trials(loadout_trial, loadout_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size,
                      n_trials, args[0][L_N_METRICS], n_bins, N_COUNTERS)
