"""Several fleets on common random numbers: the ``loadout`` question's kernel
(docs/models/uboat_leader_campaign.md §14).

One trial plays the same campaign once per fleet, each from the SAME stream state: the
state at the start of the trial is copied, fleet 0 plays its campaign (the campaign
question's own trial function, :func:`kernels.uboat_leader.campaign.campaign_trial`), the
copy is restored, fleet 1 plays, and so on. After the last fleet the stream continues from
where fleet 0 left it, so fleet 0 sees exactly the stream the campaign question would give
it alone (same seed and key): its metrics are bit-identical to that run.

Every fleet's campaign arrays are stacked along a leading fleet axis (zero-padded to the
largest fleet; the campaign kernel reads sizes from its ``config``, never from array shapes):
a :class:`LoadoutArgs` holds them under the campaign record's own field names.
Metric ``group * n_fleets + f`` is fleet ``f``'s value of group ``vp``, ``vp_diff``
(VP minus fleet 0's VP: may be negative, its mean and SE are exact), ``boats_lost``,
``p_level_<k>`` (sheet order) or ``mission_vp``; then per fleet (list order) per boat (the fleet's
order) the boat's VP and whether it was lost (:func:`boat_metrics_start`).

Counter columns ``N_COUNTERS ..`` hold the pair sums of the fleets' VP (every pair ``i < j``:
sum of ``vp_i * vp_j``, :func:`kernels.driver.add_pair_products`), so the runner has the paired
VP difference of every two fleets, not only against fleet 0 (the ranking's differences to the
best, :mod:`analyzer.core.ranking`).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from kernels._jit import jit, parallel_jit
from kernels.driver import add_pair_products, run_trials
from kernels.rng import STATE_WORDS
from kernels.uboat_leader.campaign import campaign_trial, campaign_workspace
from kernels.uboat_leader.campaign_state import (BM_LOST, BM_VP, K_N_BOATS, K_N_METRICS, M_BOATS_LOST,
                                                 M_MISSION_VP, M_VP, N_BOAT_METRICS, N_COUNTERS, N_FIXED_METRICS,
                                                 CampaignArgs)

#: loadout_config fields: fleets, success levels, loadout metrics
L_N_FLEETS, L_N_LEVELS, L_N_METRICS = 0, 1, 2
N_LCFG = 3
#: metric groups before the success levels (the group after them: mission VP)
G_VP, G_VP_DIFF, G_BOATS_LOST, G_LEVEL0 = 0, 1, 2, 3
#: per boat of each fleet: its VP, whether it was lost
LB_VP, LB_LOST = 0, 1
N_LOADOUT_BOAT_METRICS = 2

#: The loadout kernel's args: ``loadout_config[L_*]``, ``largest_config`` (every campaign
#: config field's maximum over the fleets: sizes the shared workspace), then every field of
#: :class:`~kernels.uboat_leader.campaign_state.CampaignArgs` stacked on a leading fleet axis
#: (flat: the parallel driver takes no nested tuple).
LoadoutArgs = namedtuple("LoadoutArgs", ("loadout_config", "largest_config") + CampaignArgs._fields)
#: Chunk-local scratch: the campaign workspace shared by the fleets, one fleet's campaign
#: metrics, the stream at the start of the trial and after fleet 0's campaign.
LoadoutWorkspace = namedtuple("LoadoutWorkspace", ("campaign", "fleet_values", "start", "after_first"))


@jit
def fleet_args(config, fleets, f):
    """Fleet ``f``'s campaign record (views into the stacked arrays of ``fleets``) with ``config``."""
    return CampaignArgs(
        config, fleets.areas[f], fleets.contact_tables[f], fleets.loadouts[f], fleets.missions[f],
        fleets.crew_levels[f], fleets.mine_vp[f], fleets.next_area[f], fleets.nearest_port[f], fleets.nearest_box[f],
        fleets.patrol_area[f], fleets.events[f], fleets.convoys[f], fleets.convoy_slots[f], fleets.cards[f],
        fleets.damage_table[f], fleets.wolfpack_stress[f], fleets.special_options[f], fleets.success_levels[f],
        fleets.engagement_config[f], fleets.engagement_slots[f], fleets.engagement_tables[f],
        fleets.display_adjacent[f], fleets.display_areas[f], fleets.display_distance[f], fleets.engagement_boats[f],
        fleets.engagement_crew_rows[f])


@jit
def loadout_trial(state, values, counters, ws, args):
    """Every fleet's campaign on the trial's stream (common random numbers)."""
    fleet_values = ws.fleet_values
    n_fleets = args.loadout_config[L_N_FLEETS]
    n_levels = args.loadout_config[L_N_LEVELS]
    ws.start[:] = state
    vp0 = 0
    for f in range(n_fleets):
        state[:] = ws.start
        campaign_trial(state, fleet_values, counters, ws.campaign, fleet_args(args.config[f], args, f))
        if f == 0:
            ws.after_first[:] = state
            vp0 = fleet_values[M_VP]
        values[G_VP * n_fleets + f] = fleet_values[M_VP]
        values[G_VP_DIFF * n_fleets + f] = fleet_values[M_VP] - vp0
        values[G_BOATS_LOST * n_fleets + f] = fleet_values[M_BOATS_LOST]
        for k in range(n_levels):
            values[(G_LEVEL0 + k) * n_fleets + f] = fleet_values[N_FIXED_METRICS + k]
        values[(G_LEVEL0 + n_levels) * n_fleets + f] = fleet_values[M_MISSION_VP]
        at = boat_metrics_start(args.config, n_fleets, n_levels, f)
        for b in range(args.config[f, K_N_BOATS]):
            row = N_FIXED_METRICS + n_levels + N_BOAT_METRICS * b
            values[at + N_LOADOUT_BOAT_METRICS * b + LB_VP] = fleet_values[row + BM_VP]
            values[at + N_LOADOUT_BOAT_METRICS * b + LB_LOST] = fleet_values[row + BM_LOST]
    add_pair_products(counters, N_COUNTERS, values, G_VP * n_fleets, n_fleets)
    state[:] = ws.after_first


@jit
def boat_metrics_start(configs, n_fleets, n_levels, f):
    """The first per-boat metric of fleet ``f``: after the groups, the fleets before it."""
    at = (G_LEVEL0 + n_levels + 1) * n_fleets
    for g in range(f):
        at += N_LOADOUT_BOAT_METRICS * configs[g, K_N_BOATS]
    return at


@jit
def loadout_workspace(args):
    """The campaign workspace sized for the largest fleet (``largest_config``), the campaign's
    metric scratch and two stream copies."""
    largest = args.largest_config
    return LoadoutWorkspace(campaign_workspace(fleet_args(largest, args, 0)), np.zeros(largest[K_N_METRICS], np.int64),
                            np.zeros(STATE_WORDS, np.uint64), np.zeros(STATE_WORDS, np.uint64))


@parallel_jit
def loadout_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """Per-chunk (hist, moments, counters) of the loadout metrics (:mod:`kernels.driver`)."""
    return run_trials(loadout_trial, loadout_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size,
                      n_trials, args.loadout_config[L_N_METRICS], n_bins, n_loadout_counters(args.loadout_config))


@jit
def n_loadout_counters(loadout_config):
    """The campaign counters, then one VP pair sum per pair of fleets."""
    n = loadout_config[L_N_FLEETS]
    return N_COUNTERS + n * (n - 1) // 2
