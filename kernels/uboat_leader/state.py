"""Array layouts shared by the U-Boat Leader kernels (docs/models/uboat_leader.md §4.2).

A battle is plain integer arrays whose columns are named by the constants below, so a
kernel reads ``ship[s, S_AREA]`` where the reference reads ``s["area"]``. The Python layer
(:mod:`analyzer.games.uboat_leader.compile`) fills the static arrays from the game data;
the mutable ones are chunk-local scratch reset at the start of every trial.

After editing this file, delete ``kernels/uboat_leader/__pycache__``: numba's on-disk cache
is keyed on each kernel's own source file and does not see constants imported from here.
"""
from __future__ import annotations

#: "N/A" in a card table (a weapon that cannot be used, an attack the ship does not have,
#: a ``sink_roll`` of null): far below any d10 result so a comparison never passes by accident.
NOT_ALLOWED = -(1 << 30)

#: Hard sizes of one battle (spec §4.2): ships on the display and U-boats in a wolfpack.
MAX_SHIPS = 12
MAX_BOATS = 8

# ---- decks (dk[deck, part, i], dn[deck, part]) -------------------------------------
D_MERCHANT, D_NAVAL, D_ESCORT, D_FLEET, D_TACTICS = 0, 1, 2, 3, 4
N_DECKS = 5
#: dk parts: the undrawn cards (first dn[d, DECK_LEFT] entries), the discards (first
#: dn[d, DECK_DISCARDS] entries) and a per-card "in play" flag (drawn, not yet discarded).
DK_CARDS, DK_DISCARDS, DK_IN_PLAY = 0, 1, 2
DECK_LEFT, DECK_DISCARDS = 0, 1

# ---- card table cards[deck, card, field] -------------------------------------------
C_SPEED, C_VP, C_XP, C_TORPEDO, C_GUN, C_SURFACE_ATTACK, C_SUBMERGED_ATTACK = 0, 1, 2, 3, 4, 5, 6
C_DETECTION_SURFACED, C_DETECTION_SUBMERGED, C_MISIDENTIFIED = 7, 8, 9
#: a Tactics counter's value lives in field 0 of deck D_TACTICS
C_CHIT_VALUE = 0
N_CARD_FIELDS = 10

# ---- counter kinds and area kinds ---------------------------------------------------
KIND_M, KIND_N, KIND_E = 0, 1, 2
AREA_CONVOY, AREA_SHORT, AREA_MEDIUM, AREA_LONG, AREA_WAKE = 0, 1, 2, 3, 4

# ---- ship slots (static) slots[s, field] --------------------------------------------
SL_KIND, SL_DECK, SL_AREA, SL_COUNTER_SPEED = 0, 1, 2, 3
N_SLOT_FIELDS = 4

# ---- ship state (mutable) ship[s, field] --------------------------------------------
S_KIND, S_DECK, S_ESCORT, S_REVEALED, S_CARD, S_AREA, S_LIGHT, S_HEAVY, S_CHIT, S_ON = range(10)
N_SHIP_FIELDS = 10

# ---- U-boat static bstat[b, field] and crew rows brows[b, row, field] ---------------
BS_OKAY_MAX, BS_SHAKEN_MAX, BS_SPEED_SURFACED, BS_SPEED_SUBMERGED, BS_AMMO, BS_START, BS_STRESS0 = range(7)
N_BOAT_STATIC = 7
ROW_OKAY, ROW_SHAKEN = 0, 1
R_AGGRESSIVE, R_GS, R_TS, R_EV, R_READY, R_STORED = range(6)
N_ROW_FIELDS = 6
BAND_OKAY, BAND_SHAKEN, BAND_UNFIT = 0, 1, 2

# ---- U-boat state (mutable) boat[b, field] ------------------------------------------
(B_AREA, B_SURFACED, B_DIVED, B_DETECTED, B_SILENT, B_STRESS, B_READY, B_STORED, B_TUBES,
 B_AMMO, B_ON, B_SUNK, B_ATTACKED, B_AGGRESSIVE) = range(14)
N_BOAT_FIELDS = 14

# ---- lookup tables tables[row, i] ----------------------------------------------------
T_TORPEDO_RANGE, T_GUN_RANGE, T_DAMAGE = 0, 1, 2
N_TABLES, TABLE_WIDTH = 3, 11
DAMAGE_LIGHT, DAMAGE_HEAVY, DAMAGE_SUNK = 0, 1, 2

# ---- per-trial metrics (order = the question's metric list, spec §4.5) --------------
(M_VP, M_XP, M_SHIPS_SUNK, M_TORPEDOES_USED, M_P_UBOAT_LOST, M_UBOATS_LOST, M_STRESS_ADDED,
 M_ROUNDS, M_P_ROUND_CAP) = range(9)
N_METRICS = 9

# ---- kernel counters (reported in Prepared.notes) -----------------------------------
(CT_ROUND_CAP, CT_RESHUFFLES, CT_DRAW_FAILED, CT_DUPLICATE_CARD, CT_DRAWS) = range(5)
N_COUNTERS = 5

# ---- configuration cfg[field]: rule options, policy, constants ----------------------
_CFG_NAMES = (
    # battle
    "N_SHIPS", "N_BOATS", "ALERTED", "MAX_ROUNDS", "WAKE", "LONG_ROW", "REVEAL_RANGE",
    # source constants (data/combat.yaml)
    "ALERTED_ROLL_BONUS", "RANGE_SURFACED", "RANGE_SUBMERGED", "PEN_LIGHT", "PEN_HEAVY",
    "HEAVY_ATTACK_BONUS", "SR_FAIL_STRESS", "BEARING_TABLE_MAX",
    # policy (spec §4.1)
    "APPROACH", "TARGET", "ATTACK_ESCORTS", "ATTACK_RANGE", "SALVO", "SILENT_POLICY", "BREAK_OFF",
    # rule options (spec §2)
    "ESCORT_VP_ZERO", "TACTICS", "TACTICS_FIXED", "SR_NO_MOVE", "SR_MARKER_ROUND", "REVEAL_CONTINUOUS",
    "BEARING_CAP", "DAMAGE_STACK", "REDETECT_SKIP", "ESCORT_MOVEMENT", "ENEMY_ATTACK", "RELOAD",
    "POST_STRESS",
    # placeholder module numbers (data/combat.yaml)
    "N_TORPEDO_RANGES", "N_GUN_RANGES", "SWEEP_STEPS", "SURFACED_REACH", "SUBMERGED_REACH",
    "HIT_STRESS", "SINK_ESCORT", "SINK_NAVAL", "SINK_MERCHANT", "RELOAD_PER_ROUND",
    # deck sizes, one per deck
    "DECK_SIZE",
)
(K_N_SHIPS, K_N_BOATS, K_ALERTED, K_MAX_ROUNDS, K_WAKE, K_LONG_ROW, K_REVEAL_RANGE,
 K_ALERTED_ROLL_BONUS, K_RANGE_SURFACED, K_RANGE_SUBMERGED, K_PEN_LIGHT, K_PEN_HEAVY,
 K_HEAVY_ATTACK_BONUS, K_SR_FAIL_STRESS, K_BEARING_TABLE_MAX,
 K_APPROACH, K_TARGET, K_ATTACK_ESCORTS, K_ATTACK_RANGE, K_SALVO, K_SILENT_POLICY, K_BREAK_OFF,
 K_ESCORT_VP_ZERO, K_TACTICS, K_TACTICS_FIXED, K_SR_NO_MOVE, K_SR_MARKER_ROUND, K_REVEAL_CONTINUOUS,
 K_BEARING_CAP, K_DAMAGE_STACK, K_REDETECT_SKIP, K_ESCORT_MOVEMENT, K_ENEMY_ATTACK, K_RELOAD,
 K_POST_STRESS,
 K_N_TORPEDO_RANGES, K_N_GUN_RANGES, K_SWEEP_STEPS, K_SURFACED_REACH, K_SUBMERGED_REACH,
 K_HIT_STRESS, K_SINK_ESCORT, K_SINK_NAVAL, K_SINK_MERCHANT, K_RELOAD_PER_ROUND,
 K_DECK_SIZE) = range(len(_CFG_NAMES))
#: K_DECK_SIZE + d for d in 0..N_DECKS-1
N_CFG = K_DECK_SIZE + N_DECKS

# policy and rule codes (the Python layer maps option names to these)
APPROACH_SURFACED, APPROACH_SUBMERGED, APPROACH_DIVE_ON_DETECTION = 0, 1, 2
TARGET_MAX_VP, TARGET_NEAREST = 0, 1
SILENT_WHEN_DETECTED, SILENT_NEVER = 0, 1
BREAK_WHEN_EMPTY, BREAK_WHEN_DETECTED, BREAK_NEVER = 0, 1, 2
TACTICS_NONE, TACTICS_FIXED, TACTICS_PER_CARD, TACTICS_PER_ROLL = 0, 1, 2, 3
ESCORT_TOWARD_DETECTED, ESCORT_TOWARD_DETECTED_OR_SWEEP, ESCORT_STATIONARY = 0, 1, 2
ENEMY_ATTACK_NONE, ENEMY_ATTACK_PLACEHOLDER_D10 = 0, 1
RELOAD_POST_COMBAT_ONLY, RELOAD_SUBMERGED_END_OF_ROUND = 0, 1
