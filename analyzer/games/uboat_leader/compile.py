"""Compile the game data, an engagement's parameters and its rule options into the integer
arrays of :mod:`kernels.uboat_leader.state` (spec §4.2). Everything is validated here, so
the kernel assumes valid input.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np

from analyzer.core.errors import suggest
from analyzer.core.gamedata import DataError
from analyzer.games.uboat_leader.data import GameData, param_error
from analyzer.core.questions import Context
from kernels.uboat_leader import state as S
from kernels.uboat_leader.display import AREA_DEGREE, AREA_KIND

AREA_KINDS = {"convoy": S.AREA_CONVOY, "short": S.AREA_SHORT, "medium": S.AREA_MEDIUM, "long": S.AREA_LONG,
              "wake": S.AREA_WAKE}
SLOT_KINDS = {"M": S.KIND_M, "N": S.KIND_N, "E": S.KIND_E}
LEVELS = ("green", "trained", "veteran", "ace")
#: deck index -> data key
DECK_KEYS = {S.D_MERCHANT: "merchants", S.D_NAVAL: "naval", S.D_ESCORT: "escorts", S.D_FLEET: "fleet_escorts"}
CARD_FIELDS = {S.C_SPEED: "speed", S.C_VP: "vp", S.C_XP: "xp", S.C_TORPEDO: "torpedo", S.C_GUN: "gun",
               S.C_SURFACE_ATTACK: "surface_attack", S.C_SUBMERGED_ATTACK: "submerged_attack"}
REQUIRED_CARD_FIELDS = ("speed", "vp", "xp")
DAMAGE_RESULTS = (("light", S.DAMAGE_LIGHT), ("heavy", S.DAMAGE_HEAVY), ("sunk", S.DAMAGE_SUNK))
#: Histogram width cap: a metric above it is clipped into the last bin (its mean stays exact).
MAX_BINS = 1024


@dataclass
class Display:
    """The tactical display (data/tactical_display.yaml) as arrays."""

    names: list[str]
    index: dict[str, int]
    kind: list[str]
    adj: np.ndarray       # [area, k] neighbours in increasing index order
    area: np.ndarray      # [area, (degree, kind)]
    dist: np.ndarray      # [goal, area] shortest-path steps; row len(names) = to the nearest Long area
    wake: int
    reveal_range: int

    @property
    def long_row(self) -> int:
        return len(self.names)


def compile_display(gd: GameData) -> Display:
    """§1.3: adjacency (symmetric, checked) and BFS distances ("el camino más corto")."""
    gd.use("tactical_display")
    td = gd.get("tactical_display")
    where = "data/tactical_display.yaml: tactical_display"
    names = [a["name"] for a in td["areas"]]
    index = {n: i for i, n in enumerate(names)}
    if len(index) != len(names):
        raise DataError(f"{where}.areas: area names must be unique")
    kinds = []
    for a in td["areas"]:
        if a["kind"] not in AREA_KINDS:
            raise DataError(f"{where}.areas[{a['name']}].kind: got {a['kind']!r}; allowed: {', '.join(AREA_KINDS)}")
        kinds.append(a["kind"])
    n = len(names)
    neigh = []
    for a in td["areas"]:
        for b in a["adjacent"]:
            if b not in index:
                raise DataError(f"{where}.areas[{a['name']}].adjacent: unknown area {b!r}{suggest(b, names)}")
        neigh.append(sorted(index[b] for b in a["adjacent"]))
    for i, nb in enumerate(neigh):
        for j in nb:
            if i not in neigh[j]:
                raise DataError(f"{where}: {names[i]} lists {names[j]} as adjacent but not the other way round")
    dist = np.zeros((n + 1, n), np.int64)
    for g in range(n):
        d = [-1] * n
        d[g] = 0
        q = deque([g])
        while q:
            x = q.popleft()
            for y in neigh[x]:
                if d[y] < 0:
                    d[y] = d[x] + 1
                    q.append(y)
        if min(d) < 0:
            raise DataError(f"{where}: the display is not connected ({names[d.index(-1)]} unreachable from {names[g]})")
        dist[g] = d
    longs = [i for i in range(n) if kinds[i] == "long"]
    wakes = [i for i in range(n) if kinds[i] == "wake"]
    if not longs or td.get("wake") not in index or kinds[index[td["wake"]]] != "wake" or len(wakes) != 1:
        raise DataError(f"{where}: needs Long Range areas and exactly one area of kind wake named by `wake`")
    dist[n] = dist[longs].min(axis=0)
    adj = np.zeros((n, max(len(nb) for nb in neigh)), np.int64)
    area = np.zeros((n, 2), np.int64)
    for i, nb in enumerate(neigh):
        adj[i, : len(nb)] = nb
        area[i, AREA_DEGREE] = len(nb)
        area[i, AREA_KIND] = AREA_KINDS[kinds[i]]
    return Display(names, index, kinds, adj, area, dist, index[td["wake"]], int(td["reveal_range"]))


@dataclass
class Battle:
    """One engagement compiled for :func:`kernels.uboat_leader.engagement.engagement_kernel`."""

    display: Display
    slots: np.ndarray
    cards: np.ndarray
    bstat: np.ndarray
    brows: np.ndarray
    tables: np.ndarray
    cfg: np.ndarray
    n_bins: int
    slot_labels: list[str] = field(default_factory=list)
    deck_names: dict[int, list[str]] = field(default_factory=dict)

    def kernel_args(self) -> tuple:
        d = self.display
        return (self.slots, self.cards, self.bstat, self.brows, self.tables, d.adj, d.area, d.dist, self.cfg)


def _int_or_na(value, where: str) -> int:
    if value is None:
        return S.NOT_ALLOWED
    if isinstance(value, bool) or not isinstance(value, int):
        raise DataError(f"{where}: got {value!r}; an integer or null (N/A)")
    return int(value)


def _card_rows(deck: int, cards: list[dict]) -> np.ndarray:
    out = np.full((len(cards), S.N_CARD_FIELDS), S.NOT_ALLOWED, np.int64)
    for i, c in enumerate(cards):
        where = f"{DECK_KEYS[deck]}[{i}] ({c.get('name', '?')})"
        for f in REQUIRED_CARD_FIELDS:
            if c.get(f) is None:
                raise DataError(f"{where}.{f}: required")
        for col, f in CARD_FIELDS.items():
            out[i, col] = _int_or_na(c.get(f), f"{where}.{f}")
        det = c.get("detection") or {}
        out[i, S.C_DETECTION_SURFACED] = _int_or_na(det.get("surfaced"), f"{where}.detection.surfaced")
        out[i, S.C_DETECTION_SUBMERGED] = _int_or_na(det.get("submerged"), f"{where}.detection.submerged")
        out[i, S.C_MISIDENTIFIED] = 1 if c.get("misidentified") else 0
        detection = (out[i, S.C_DETECTION_SURFACED], out[i, S.C_DETECTION_SUBMERGED])
        if deck in (S.D_ESCORT, S.D_FLEET) and S.NOT_ALLOWED in detection:
            raise DataError(f"{where}.detection: an Escort card needs surfaced and submerged Detection values")
    return out


#: the contact types a Convoy card shows (l.133: 'el tipo de Contacto: Solitario, Mercante, o Naval')
CONVOY_TYPES = ("lone", "merchant", "naval")
#: the special conditions a Convoy card may carry that the model plays (l.133 'cualquier condición especial
#: que esté en vigor durante el encuentro': the source names none, so none is modelled yet)
CONVOY_CONDITIONS: dict[str, int] = {}


def check_convoy_card(card: dict, where: str) -> None:
    """Refuse a Convoy card the model would misread: an unknown contact type, or a special condition the
    model does not play (it would be ignored silently)."""
    if card.get("type") not in CONVOY_TYPES:
        raise DataError(f"{where}.type: got {card.get('type')!r}; allowed: {', '.join(CONVOY_TYPES)}")
    conditions = card.get("conditions") or []
    if not isinstance(conditions, list):
        raise DataError(f"{where}.conditions: a list of condition names; got {conditions!r}")
    unknown = [c for c in conditions if c not in CONVOY_CONDITIONS]
    if unknown:
        raise DataError(f"{where}.conditions: {', '.join(map(repr, unknown))} is not a condition the model plays "
                        f"(known: {', '.join(CONVOY_CONDITIONS) or 'none yet: the source names no condition'}); "
                        f"the encounter would be played without it, so it is refused: remove it to run the card "
                        f"without its condition, and say so in your results")


def compile_engagement(p, ctx: Context, gd: GameData, chits: list[int]) -> Battle:
    """Validate ``p`` (EngagementParams) against the data and build the kernel arrays."""
    rules = ctx.rules
    disp = compile_display(gd)
    combat = gd.get("combat")

    # ---- convoy card and ship slots (§6.4)
    convoys = gd.get("convoys")
    found = [i for i, c in enumerate(convoys) if c["card"] == p.convoy]
    if not found:
        numbers = [str(c["card"]) for c in convoys]
        raise param_error(ctx, "convoy", f"no convoy card {p.convoy}; allowed: {', '.join(numbers)}")
    ci = found[0]
    conv = convoys[ci]
    check_convoy_card(conv, f"{gd.files['convoys']}: convoys[{ci}] (card {conv['card']})")
    gd.use(f"convoys[{ci}]")
    gd.use("unknown_speed")
    naval = conv["type"] == "naval"
    slots_data = conv["slots"]
    if not 1 <= len(slots_data) <= S.MAX_SHIPS:
        raise DataError(f"convoys[{ci}].slots: 1..{S.MAX_SHIPS} ships per card (spec §4.2), got {len(slots_data)}")
    unknown_speed = gd.get("unknown_speed")
    slots = np.zeros((len(slots_data), S.N_SLOT_FIELDS), np.int64)
    for s, sl in enumerate(slots_data):
        kind = sl["kind"]
        if kind not in SLOT_KINDS:
            raise DataError(f"convoys[{ci}].slots[{s}].kind: got {kind!r}; allowed: M, N, E")
        if sl["area"] not in disp.index:
            raise DataError(f"convoys[{ci}].slots[{s}].area: unknown area {sl['area']!r}"
                            f"{suggest(sl['area'], disp.names)}")
        slots[s, S.SL_KIND] = SLOT_KINDS[kind]
        slots[s, S.SL_DECK] = {"M": S.D_MERCHANT, "N": S.D_NAVAL, "E": S.D_FLEET if naval else S.D_ESCORT}[kind]
        slots[s, S.SL_AREA] = disp.index[sl["area"]]
        slots[s, S.SL_COUNTER_SPEED] = int(unknown_speed[kind])
    kinds = [sl["kind"] for sl in slots_data]

    # ---- decks (§1.7, §2.3) and spec S1: a reveal never finds an empty deck
    deck_cards = {d: gd.get(key) for d, key in DECK_KEYS.items()}
    misidentified = kinds.count("M") > 0 and any(c.get("misidentified") for c in deck_cards[S.D_MERCHANT])
    need = {S.D_MERCHANT: kinds.count("M"), S.D_NAVAL: kinds.count("N"),
            S.D_ESCORT: (0 if naval else kinds.count("E")) + (kinds.count("M") if misidentified else 0),
            S.D_FLEET: kinds.count("E") if naval else 0}
    for d, n in need.items():
        if n > len(deck_cards[d]):
            raise DataError(f"{DECK_KEYS[d]}: convoy card {p.convoy} may draw {n} cards, the deck has "
                            f"{len(deck_cards[d])} (spec §4.3 S1)")
        if n > 0:
            gd.use(DECK_KEYS[d])
    rows = {d: _card_rows(d, deck_cards[d]) for d in DECK_KEYS}
    max_cards = max([len(c) for c in deck_cards.values()] + [len(chits), 1])
    cards = np.zeros((S.N_DECKS, max_cards, S.N_CARD_FIELDS), np.int64)
    for d, r in rows.items():
        cards[d, : r.shape[0]] = r
    cards[S.D_TACTICS, : len(chits), S.C_CHIT_VALUE] = chits

    # ---- Tactics counters (A2)
    if p.tactics == "none":
        tactics_mode = S.TACTICS_NONE
    elif isinstance(p.tactics, int):
        tactics_mode = S.TACTICS_FIXED
    else:
        tactics_mode = S.TACTICS_PER_CARD if rules["tactics_timing"] == "per_card" else S.TACTICS_PER_ROLL
    n_escorts = kinds.count("E") + (kinds.count("M") if misidentified else 0)
    if tactics_mode == S.TACTICS_PER_CARD and len(chits) < n_escorts:
        raise param_error(ctx, "tactics", f"the cup holds {len(chits)} counters but up to {n_escorts} escorts may "
                          f"draw one (tactics_timing: per_card); give more counters or use per_roll")

    # ---- U-boats (§1.6, §6.4, §6.5)
    roster = gd.get("uboats")
    ids = [u["id"] for u in roster]
    classes = gd.get("uboat_classes")
    n_boats = len(p.uboats)
    bstat = np.zeros((n_boats, S.N_BOAT_STATIC), np.int64)
    brows = np.zeros((n_boats, 2, S.N_ROW_FIELDS), np.int64)
    torpedo_total = 0
    for b, bp in enumerate(p.uboats):
        if bp.id not in ids:
            raise param_error(ctx, f"uboats[{b}].id", f"unknown U-boat {bp.id!r}{suggest(bp.id, ids)}; "
                              f"allowed: {', '.join(ids)}")
        j = ids.index(bp.id)
        card = roster[j]
        for part in ("class", "abilities", f"levels.{bp.level}.bands", f"levels.{bp.level}.okay",
                     f"levels.{bp.level}.shaken"):
            gd.use(f"uboats[{j}].{part}")
        cls_name = card["class"]
        if cls_name not in classes:
            raise DataError(f"uboats[{j}].class: unknown class {cls_name!r}; allowed: {', '.join(classes)}")
        gd.use(f"uboat_classes.{cls_name}")
        cls = classes[cls_name]
        lvl = card["levels"][bp.level]
        infiltrator = "infiltrator" in (card.get("abilities") or [])
        allowed = ("long", "medium", "short") if infiltrator else ("long",)
        if bp.start not in disp.index:
            raise param_error(ctx, f"uboats[{b}].start", f"unknown area {bp.start!r}{suggest(bp.start, disp.names)}")
        if disp.kind[disp.index[bp.start]] not in allowed:
            starts = [n for n, k_ in zip(disp.names, disp.kind) if k_ in allowed]
            raise param_error(ctx, f"uboats[{b}].start", f"{bp.start} is a {disp.kind[disp.index[bp.start]]} area; "
                              f"{bp.id} starts in a Long Range Area (§6.4: Infiltrators also Medium/Short): "
                              f"allowed: {', '.join(starts)}")
        bands = lvl["bands"]
        bstat[b] = [bands["okay_max"], bands["shaken_max"], cls["speed"]["surfaced"], cls["speed"]["submerged"],
                    cls["ammunition"] if cls["deck_gun"] else 0, disp.index[bp.start], bp.stress]
        for r, row_name in ((S.ROW_OKAY, "okay"), (S.ROW_SHAKEN, "shaken")):
            row = lvl[row_name]
            if row["initiative"] not in ("aggressive", "cautious"):
                raise DataError(f"uboats[{j}].levels.{bp.level}.{row_name}.initiative: got {row['initiative']!r}; "
                                f"allowed: aggressive, cautious")
            brows[b, r] = [row["initiative"] == "aggressive", row["gs"], row["ts"], row["ev"], row["ready"],
                           row["stored"]]
        torpedo_total += lvl["okay"]["ready"] + lvl["okay"]["stored"]

    # ---- placeholder module tables (data/combat.yaml)
    for key in ("detection_range", "alerted_roll_bonus", "damage_penalty", "heavy_damage_attack_bonus",
                "silent_running_fail_stress", "uboat_attack_module"):
        gd.use(f"combat.{key}")
    ua = combat["uboat_attack_module"]
    tables = np.zeros((S.N_TABLES, S.TABLE_WIDTH), np.int64)
    for row, key in ((S.T_TORPEDO_RANGE, "torpedo_range_mod"), (S.T_GUN_RANGE, "gun_range_mod")):
        mods = ua[key]
        if not 1 <= len(mods) <= S.TABLE_WIDTH:
            raise DataError(f"combat.uboat_attack_module.{key}: 1..{S.TABLE_WIDTH} range modifiers, got {len(mods)}")
        tables[row, : len(mods)] = mods
    for face in range(1, 11):
        table = ua["damage_table"]
        hit = [code for name, code in DAMAGE_RESULTS if table[name][0] <= face <= table[name][1]]
        if not hit:
            raise DataError(f"combat.uboat_attack_module.damage_table: d10 face {face} has no result")
        tables[S.T_DAMAGE, face] = hit[0]
    ea = combat["enemy_attack_module"]
    if rules["enemy_attack"] == "placeholder_d10":
        gd.use("combat.enemy_attack_module")
    if rules["escort_movement"] == "toward_detected_or_sweep":
        gd.use("combat.escort_movement_module.sweep_steps")
    if rules["reload"] == "submerged_end_of_round":
        gd.use("combat.reload_module")
    if rules["post_combat_stress"] == "plus_one":
        gd.use("combat.post_combat_module")
    if rules["bearing_beyond_3"] == "cap_3":
        gd.use("combat.bearing_table_max")

    cfg = np.zeros(S.N_CFG, np.int64)
    pol = p.policy
    cfg[S.K_N_SHIPS] = len(slots_data)
    cfg[S.K_N_BOATS] = n_boats
    cfg[S.K_ALERTED] = p.alerted
    cfg[S.K_MAX_ROUNDS] = p.max_rounds
    cfg[S.K_WAKE] = disp.wake
    cfg[S.K_LONG_ROW] = disp.long_row
    cfg[S.K_REVEAL_RANGE] = disp.reveal_range
    cfg[S.K_ALERTED_ROLL_BONUS] = combat["alerted_roll_bonus"]
    cfg[S.K_RANGE_SURFACED] = combat["detection_range"]["surfaced"]
    cfg[S.K_RANGE_SUBMERGED] = combat["detection_range"]["submerged"]
    cfg[S.K_PEN_LIGHT] = combat["damage_penalty"]["light"]
    cfg[S.K_PEN_HEAVY] = combat["damage_penalty"]["heavy"]
    cfg[S.K_HEAVY_ATTACK_BONUS] = combat["heavy_damage_attack_bonus"]
    cfg[S.K_SR_FAIL_STRESS] = combat["silent_running_fail_stress"]
    cfg[S.K_BEARING_TABLE_MAX] = combat["bearing_table_max"]
    cfg[S.K_APPROACH] = {"surfaced": S.APPROACH_SURFACED, "submerged": S.APPROACH_SUBMERGED,
                         "dive_on_detection": S.APPROACH_DIVE_ON_DETECTION}[pol.approach]
    cfg[S.K_TARGET] = {"max_vp": S.TARGET_MAX_VP, "nearest": S.TARGET_NEAREST}[pol.target]
    cfg[S.K_ATTACK_ESCORTS] = pol.attack_escorts
    cfg[S.K_ATTACK_RANGE] = pol.attack_range
    cfg[S.K_SALVO] = pol.salvo
    cfg[S.K_SILENT_POLICY] = {"when_detected": S.SILENT_WHEN_DETECTED, "never": S.SILENT_NEVER}[pol.silent_running]
    cfg[S.K_BREAK_OFF] = {"when_empty": S.BREAK_WHEN_EMPTY, "when_detected": S.BREAK_WHEN_DETECTED,
                          "never": S.BREAK_NEVER}[pol.break_off]
    cfg[S.K_ESCORT_VP_ZERO] = rules["escort_vp"] == "zero"
    cfg[S.K_TACTICS] = tactics_mode
    cfg[S.K_TACTICS_FIXED] = p.tactics if tactics_mode == S.TACTICS_FIXED else 0
    cfg[S.K_SR_NO_MOVE] = rules["silent_running_move"] == "no_move"
    cfg[S.K_SR_MARKER_ROUND] = rules["silent_running_marker"] == "end_of_round"
    cfg[S.K_REVEAL_CONTINUOUS] = rules["reveal_timing"] == "continuous"
    cfg[S.K_BEARING_CAP] = combat["bearing_table_max"] if rules["bearing_beyond_3"] == "cap_3" else 0
    cfg[S.K_DAMAGE_STACK] = rules["damage_stacking"] == "stack"
    cfg[S.K_REDETECT_SKIP] = rules["escort_redetect"] == "skip_detected"
    cfg[S.K_ESCORT_MOVEMENT] = {"toward_detected": S.ESCORT_TOWARD_DETECTED,
                                "toward_detected_or_sweep": S.ESCORT_TOWARD_DETECTED_OR_SWEEP,
                                "stationary": S.ESCORT_STATIONARY}[rules["escort_movement"]]
    cfg[S.K_ENEMY_ATTACK] = {"none": S.ENEMY_ATTACK_NONE, "placeholder_d10": S.ENEMY_ATTACK_PLACEHOLDER_D10}[
        rules["enemy_attack"]]
    cfg[S.K_RELOAD] = {"post_combat_only": S.RELOAD_POST_COMBAT_ONLY,
                       "submerged_end_of_round": S.RELOAD_SUBMERGED_END_OF_ROUND}[rules["reload"]]
    post = int(combat["post_combat_module"]["stress"]) if rules["post_combat_stress"] == "plus_one" else 0
    cfg[S.K_POST_STRESS] = post
    cfg[S.K_N_TORPEDO_RANGES] = len(ua["torpedo_range_mod"])
    cfg[S.K_N_GUN_RANGES] = len(ua["gun_range_mod"])
    cfg[S.K_SWEEP_STEPS] = combat["escort_movement_module"]["sweep_steps"]
    cfg[S.K_SURFACED_REACH] = ea["surfaced_reach"]
    cfg[S.K_SUBMERGED_REACH] = ea["submerged_reach"]
    cfg[S.K_HIT_STRESS] = ea["hit_stress"]
    for key, kind in ((S.K_SINK_ESCORT, "escort"), (S.K_SINK_NAVAL, "naval"), (S.K_SINK_MERCHANT, "merchant")):
        cfg[key] = _int_or_na(ea["sink_roll"][kind], f"combat.enemy_attack_module.sink_roll.{kind}")
    cfg[S.K_RELOAD_PER_ROUND] = combat["reload_module"]["per_round"]
    for d, c in deck_cards.items():
        cfg[S.K_DECK_SIZE + d] = len(c)
    cfg[S.K_DECK_SIZE + S.D_TACTICS] = len(chits)

    # ---- histogram width: a bound on every metric (clipped above MAX_BINS)
    n_ships = len(slots_data)
    top_vp = max([int(r[:, S.C_VP].max()) for d, r in rows.items() if r.size and need[d]] + [1])
    top_xp = max([int(r[:, S.C_XP].max()) for d, r in rows.items() if r.size and need[d]] + [1])
    stress_round = int(combat["silent_running_fail_stress"]) + int(ea["hit_stress"]) * n_ships
    bounds = [n_ships * top_vp, n_ships * top_xp, torpedo_total, p.max_rounds,
              n_boats * (p.max_rounds * stress_round + post), n_boats]
    n_bins = min(MAX_BINS, max(bounds) + 1)
    return Battle(disp, slots, cards, bstat, brows, tables, cfg, n_bins,
                  [sl["label"] for sl in slots_data],
                  {d: [c.get("name", "?") for c in deck_cards[d]] for d in DECK_KEYS})
