"""Array layouts of the campaign kernel (docs/models/uboat_leader_campaign.md §9, §12).

A campaign is plain integer arrays whose columns are named below, so the kernel reads
``boats[i, CB_STRESS]`` where the reference reads ``b["stress"]``. The Python layer
(:mod:`analyzer.games.uboat_leader.campaign_compile`) fills the static arrays, handed to the
kernel as one :class:`CampaignArgs` record of arrays by field name; the mutable ones are the
chunk-local :class:`CampaignWorkspace`, reset at the start of every trial. SO amounts are
kept in half points (the ½-SO advanced torpedo, l.275), so every cost is an integer.

After editing this file, delete ``kernels/uboat_leader/__pycache__``: numba's on-disk cache
is keyed on each kernel's own source file and does not see constants imported from here.
"""
from __future__ import annotations

from collections import namedtuple

from kernels.uboat_leader.state import MAX_SHIPS, N_DECKS

#: the two persistent decks of a campaign (C§4.4, C§7.2), after the engagement's five
D_EVENTS, D_CONVOYS = N_DECKS, N_DECKS + 1
N_CAMPAIGN_DECKS = N_DECKS + 2

#: SO in the kernel: half points
SO_UNITS = 2

# ---- area kinds and static area table areas[a, field] ---------------------------------
AREA_PORT, AREA_SEA, AREA_CHANNEL = 0, 1, 2
MS_MINE, MS_ATTACK, MS_RAIDER = 0, 1, 2
N_MISSION_TYPES = 3
(AT_KIND, AT_REFIT, AT_MOVE, AT_PATROL, AT_CT_LEN, AT_NAVAL_CARDS, AT_BOX_EVENTS) = range(7)
#: AT_BOX_EVENTS + mission type: the box's Event number, -1 = no box of that type
N_AT_FIELDS = AT_BOX_EVENTS + N_MISSION_TYPES
#: contact_tables[a, row, field]: the Area's [min_roll, contacts] rows (G5), AT_CT_LEN of them
CR_MIN_ROLL, CR_CONTACTS = 0, 1
N_CR_FIELDS = 2

# ---- boat loadouts[i, field] and crew levels crew_levels[i, level, field] ---------------
#: then the boat's endurance policy (C§6, ``fleet[i].policy.endurance`` or the shared one):
#: return band, min torpedoes, max turns at sea, sail band (BAND_*); then the activation order
(BS_AMMO, BS_SEEKER, BS_COOL, BS_READY, BS_STORED, BS_FAT, BS_T5, BS_MINES, BS_N_MISSIONS,
 BS_PORT, BS_LEVEL, BS_RETURN_BAND, BS_MIN_TORPEDOES, BS_MAX_TURNS_AT_SEA, BS_SAIL_BAND, BS_ACTIVATION) = range(16)
N_BS_FIELDS = 16
#: BS_ACTIVATION is not a property of row i: ``loadouts[k, BS_ACTIVATION]`` is the boat that acts k-th in
#: the Operations and Tactical Segments and buys k-th (``fleet[i].policy.order``, then list order)
(BL_OKAY_MAX, BL_SHAKEN_MAX, BL_XP_NEXT, BL_TS_OKAY, BL_GS_OKAY, BL_EV_OKAY, BL_TS_SHAKEN,
 BL_GS_SHAKEN, BL_EV_SHAKEN) = range(9)
N_BL_FIELDS = 9
#: row fields read through :func:`crew_value` (okay column; shaken = okay + 3)
ROW_TS, ROW_GS, ROW_EV = BL_TS_OKAY, BL_GS_OKAY, BL_EV_OKAY
N_LEVELS = 4
NO_XP_NEXT = -1

# ---- boat state (mutable) boats[i, field] -----------------------------------------------
(CB_AREA, CB_HOME, CB_SEARCH, CB_STRESS, CB_XP, CB_XP_TOTAL, CB_VP, CB_LEVEL, CB_READY, CB_STORED,
 CB_AMMO, CB_FAT, CB_T5, CB_MINES, CB_MPENDING, CB_PATROLS, CB_RETIRED, CB_LOST, CB_TURNS_AT_SEA,
 CB_ATTACKED, CB_ATTACKED_NOW, CB_SEARCHED, CB_CONTACT_BONUS, CB_DEST, CB_MISSION_NOW, CB_PATROL_VP0) = range(26)
N_CB_FIELDS = 26
#: CB_PATROL_VP0: the boat's VP when its current patrol began (its VP at its last Port entry)
NO_MISSION = -1
#: CB_MPENDING is a bit mask over the boat's mission list ``missions[i, k]``: bit k set = mission k
#: bought and not yet resolved; the lowest set bit is the next one (C§4.1). At most this many missions:
MAX_MISSIONS = 62

# ---- pack scratch pack[k, field] (k = position in the pack) ------------------------------
PK_BOAT, PK_FIRED, PK_TORPEDOES0, PK_AMMO0 = range(4)
N_PK_FIELDS = 4

# ---- abstract-model ship scratch ships[s, field] -----------------------------------------
SH_CARD, SH_DECK, SH_ESCORT, SH_SUNK, SH_LIGHT, SH_HEAVY, SH_CHIT, SH_NEW = range(8)
N_SH_FIELDS = 8
#: Naval cards an Attack box may draw (the compiler refuses a box that draws more)
ATTACK_BOX_SHIPS = 16
#: ship scratch rows: a Convoy card's slots or an Attack box's Naval cards
SHIP_ROWS = max(MAX_SHIPS, ATTACK_BOX_SHIPS)

# ---- convoy cards convoys[c, field], slots convoy_slots[c, s] = KIND_M/N/E ----------------
CV_NAVAL, CV_N_SLOTS, CV_N_ESCORTS = range(3)
N_CV_FIELDS = 3

# ---- events events[card, half, field] ------------------------------------------------------
EV_TYPE, EV_N = 0, 1
EV_NONE, EV_STRESS, EV_STRESS_ROLL, EV_CONTACT = 0, 1, 2, 3
HALF_EARLY, HALF_LATE = 0, 1

# ---- special_options[row, option]: cost (half SO), max (-1 = U), order ----------------------
#: the map counters and R&R, the Radio Call, the three Special Missions (O_MINE_LAYING + MS_*) and
#: one advanced torpedo (½ SO, l.275; no max)
(O_AIR_SEARCH, O_SUPPLY_SHIP, O_INTELLIGENCE, O_PRIORITY_RR, O_RADIO_CALL, O_MINE_LAYING, O_ATTACK_MISSION,
 O_RAIDER_MISSION, O_ADVANCED) = range(9)
N_SO_OPTIONS = 9
#: in the SO_ORDER row only: the boats' loadouts (missions and advanced torpedoes of params.fleet,
#: bought for each boat leaving a Port box, C§4.1 under ``so_purchases: every_strategic_segment``)
O_LOADOUT = N_SO_OPTIONS
SO_COST, SO_MAX, SO_ORDER = 0, 1, 2
SO_UNLIMITED = -1
#: map counters (one Area each per turn): the first three options
N_MAP_COUNTERS = 3

# ---- campaign scalars (mutable) campaign[field] --------------------------------------------
G_SO, G_TURN, G_BOUGHT = 0, 1, 2
G_COUNTER_AREA = G_BOUGHT + N_SO_OPTIONS  # + O_AIR_SEARCH / O_SUPPLY_SHIP / O_INTELLIGENCE, -1 = none
N_G_FIELDS = G_COUNTER_AREA + N_MAP_COUNTERS

# ---- bands and policies -------------------------------------------------------------------
BAND_OKAY, BAND_SHAKEN, BAND_UNFIT, BAND_RESTED = 0, 1, 2, 3
ATTACK_ALWAYS, ATTACK_NO_NAVAL, ATTACK_MAX_ESCORTS, ATTACK_NEVER = 0, 1, 2, 3
PACK_ALWAYS, PACK_NEVER, PACK_ESCORTS_AT_LEAST = 0, 1, 2
RADIO_NEVER, RADIO_ALWAYS, RADIO_ESCORTS_AT_LEAST = 0, 1, 2
AIR_MOST_TARGETS, AIR_FEWEST_ESCORTS = 0, 1
RELOAD_POST_COMBAT_AND_REFIT, RELOAD_REFIT_ONLY, RELOAD_PORT_ONLY = 0, 1, 2
PROMOTE_ANYWHERE, PROMOTE_IN_PORT, PROMOTE_NONE = 0, 1, 2

# ---- per-trial metrics (order = the question's metric list, C§8) ---------------------------
(M_VP, M_XP, M_BOATS_LOST, M_PATROLS, M_TURNS, M_P_TURN_CAP, M_SO_SPENT, M_SO_LEFT, M_CONTACTS,
 M_ATTACKS, M_SHIPS_SUNK, M_MISSION_VP, M_MINE_VP, M_ATTACK_VP, M_RAIDER_VP, M_MISSIONS_FAILED) = range(16)
N_FIXED_METRICS = 16
#: then one p_level_<name> per success level (sheet order), then per boat (list order) these five
BM_VP, BM_XP, BM_LOST, BM_PATROLS, BM_LEVEL = range(5)
N_BOAT_METRICS = 5
#: then per patrol k = 1 .. the patrol limit (K_PATROL_LIMIT) these two: the VP the boats earned on their
#: k-th patrol (summed over the boats) and the boats lost on it
PM_VP, PM_LOST = range(2)
N_PATROL_METRICS = 2
#: success_levels[row, rank] (ranks by ascending VP threshold): the threshold, the level's sheet index
LV_VP, LV_SHEET_INDEX = 0, 1
N_LV_ROWS = 2

# ---- counters: the engagement kernel's five (kernels.uboat_leader.state CT_*), then ---------
CT_TURN_CAP, CT_ROUTE_FAILED = 5, 6
N_COUNTERS = 7

# ---- configuration config[field] -------------------------------------------------------------
_CFG_NAMES = (
    # campaign
    "N_BOATS", "N_AREAS", "N_METRICS", "N_LEVELS", "PATROL_LIMIT", "MAX_TURNS", "SO_START",
    # source constants and placeholder modules (data/campaign/rules.yaml, data/combat.yaml)
    "CM_INTEL", "CM_SEEKER", "CM_WARNING", "CM_ATTACKED", "SUPPLY_STRESS", "RR_STRESS", "COOL_STRESS",
    "MINE_BOX_EVENTS", "RAIDER_MAX", "RAIDER_ROLL", "RAIDER_VP", "TORPEDO_MOD0", "GUN_MOD0",
    "HEAVY_BONUS", "POST_STRESS", "FAT_BONUS", "T5_BONUS", "ESCORT_ROLLS", "HIT_STRESS", "SINK_ESCORT",
    "WP_JOIN_MIN", "WP_ATTACKED_MOD", "WP_STRESS_PER", "WP_ALERTED_PER",
    # rule options (C§5)
    "WARN_ATTACK_ONLY", "WARN_CAMPAIGN", "ATT_JOINERS_NOT_SEARCHED", "ATT_UNTIL_PORT", "ATT_END_OF_TURN",
    "BOX_PLUS_MOVE",
    "UNFIT_TACTICAL", "COOL_IN_PORT", "STRATEGIC_ONLY", "MINE_TOO_LATE", "MINE_BOX_NUMBER",
    "RAIDER_NATURAL", "RAIDER_XP", "ONE_AREA", "RELOAD", "PROMOTION", "RC_PER_JOINER", "STRESS_FAILS",
    "CAL_ADVANCING", "CAL_YEAR", "START_YEAR", "START_MONTH", "MONTHS_PER_TURN", "SPLIT_YEAR",
    "SO_EVERY_SEGMENT", "SO_AT_SEA",
    # policies (C§6)
    "ATTACK", "ATTACK_K", "PACK",
    "PACK_K", "RADIO", "RADIO_K", "SO_RESERVE", "RR_MIN_STRESS", "N_SO_ORDER", "AIR_CHOICE",
    "ABORT_BAND", "MISSION_SALVO", "MISSION_KEEP", "RAIDER_GUN_FIRST", "RAIDER_KEEP", "SALVO",
    "SUBMERGED", "TACTICS_IN_USE",
    # contact model (C§7.4 engagement / C§7.5 abstract)
    "CONTACT_ENGAGEMENT",
    # deck sizes, one per deck
    "DECK_SIZE",
)
(K_N_BOATS, K_N_AREAS, K_N_METRICS, K_N_LEVELS, K_PATROL_LIMIT, K_MAX_TURNS, K_SO_START,
 K_CM_INTEL, K_CM_SEEKER, K_CM_WARNING, K_CM_ATTACKED, K_SUPPLY_STRESS, K_RR_STRESS, K_COOL_STRESS,
 K_MINE_BOX_EVENTS, K_RAIDER_MAX, K_RAIDER_ROLL, K_RAIDER_VP, K_TORPEDO_MOD0, K_GUN_MOD0,
 K_HEAVY_BONUS, K_POST_STRESS, K_FAT_BONUS, K_T5_BONUS, K_ESCORT_ROLLS, K_HIT_STRESS, K_SINK_ESCORT,
 K_WP_JOIN_MIN, K_WP_ATTACKED_MOD, K_WP_STRESS_PER, K_WP_ALERTED_PER,
 K_WARN_ATTACK_ONLY, K_WARN_CAMPAIGN, K_ATT_JOINERS_NOT_SEARCHED, K_ATT_UNTIL_PORT, K_ATT_END_OF_TURN,
 K_BOX_PLUS_MOVE,
 K_UNFIT_TACTICAL, K_COOL_IN_PORT, K_STRATEGIC_ONLY, K_MINE_TOO_LATE, K_MINE_BOX_NUMBER,
 K_RAIDER_NATURAL, K_RAIDER_XP, K_ONE_AREA, K_RELOAD, K_PROMOTION, K_RC_PER_JOINER, K_STRESS_FAILS,
 K_CAL_ADVANCING, K_CAL_YEAR, K_START_YEAR, K_START_MONTH, K_MONTHS_PER_TURN, K_SPLIT_YEAR,
 K_SO_EVERY_SEGMENT, K_SO_AT_SEA,
 K_ATTACK, K_ATTACK_K, K_PACK,
 K_PACK_K, K_RADIO, K_RADIO_K, K_SO_RESERVE, K_RR_MIN_STRESS, K_N_SO_ORDER, K_AIR_CHOICE,
 K_ABORT_BAND, K_MISSION_SALVO, K_MISSION_KEEP, K_RAIDER_GUN_FIRST, K_RAIDER_KEEP, K_SALVO,
 K_SUBMERGED, K_TACTICS_IN_USE,
 K_CONTACT_ENGAGEMENT,
 K_DECK_SIZE) = range(len(_CFG_NAMES))
#: K_DECK_SIZE + d for d in 0..N_CAMPAIGN_DECKS-1
N_CFG = K_DECK_SIZE + N_CAMPAIGN_DECKS

#: One campaign point as the kernel receives it (``compile_campaign(...).args``): the static
#: arrays by field name, laid out as above. ``config[K_*]``; the map: ``areas[a, AT_*]``,
#: ``contact_tables[a, row, CR_*]``; the fleet: ``loadouts[i, BS_*]``, ``missions[i, k] = MS_*``
#: (in order), ``crew_levels[i, level, BL_*]``, ``mine_vp[i, a]`` (VP of boat i's mines laid in
#: Area a's box); the per-boat routes and plans (C§4.3, C§6): ``next_area[i, dest, a]``,
#: ``nearest_port[i, a]``, ``nearest_box[i, a, MS_*]``, ``patrol_area[i, home, a]`` (-1: none);
#: the decks: ``events[card, half, EV_*]``, ``convoys[c, CV_*]``, ``convoy_slots[c, s] = KIND_*``,
#: ``cards[deck, card, C_*]``; ``damage_table[d10] = DAMAGE_*``, ``wolfpack_stress[d10]`` (1: a
#: Stress result), ``special_options[SO_*, option]``, ``success_levels[LV_*, rank]``; then the
#: ``engagement`` contact model's static arrays (:mod:`kernels.uboat_leader.state` layouts; tiny
#: placeholders under ``abstract``): its ``config``, each Convoy card's ``slots``, ``tables``,
#: the tactical display (``display_adjacent``, ``display_areas``, ``display_distance``) and every
#: boat's ``boats[i, level, BS_*]`` / ``crew_rows[i, level, row, R_*]`` at each crew level.
#: Flat (the parallel driver takes no nested tuple).
CampaignArgs = namedtuple("CampaignArgs", (
    "config", "areas", "contact_tables", "loadouts", "missions", "crew_levels", "mine_vp",
    "next_area", "nearest_port", "nearest_box", "patrol_area",
    "events", "convoys", "convoy_slots", "cards", "damage_table", "wolfpack_stress", "special_options",
    "success_levels",
    "engagement_config", "engagement_slots", "engagement_tables", "display_adjacent", "display_areas",
    "display_distance", "engagement_boats", "engagement_crew_rows"))

#: Chunk-local scratch of one campaign (``campaign_workspace``): ``boats[i, CB_*]``,
#: ``campaign[G_*]``, ``warnings[a]`` (Warning counters), ``warned[i, a]`` (boat i has placed its
#: Warning in Area a), the decks ``decks[d, DK_*, k]`` / ``deck_counts[d, DECK_*]`` (every deck of
#: a campaign, :data:`N_CAMPAIGN_DECKS`), ``ships[s, SH_*]`` (:data:`SHIP_ROWS` rows),
#: ``pack[k, PK_*]``; then the battle arrays of the ``engagement`` contact model
#: (:mod:`kernels.uboat_leader.state` layouts): ships, boats, slots, boat statics, crew rows,
#: config and metrics of the contact being fought.
CampaignWorkspace = namedtuple("CampaignWorkspace", (
    "boats", "campaign", "warnings", "warned", "decks", "deck_counts", "ships", "pack",
    "battle_ships", "battle_boats", "battle_slots", "battle_boat_static", "battle_crew_rows", "battle_config",
    "battle_metrics"))
