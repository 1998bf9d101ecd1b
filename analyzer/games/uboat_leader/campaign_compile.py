"""Compile a campaign point (sheet, map, Events, fleet, policies, rule options) into the integer
arrays of :mod:`kernels.uboat_leader.campaign_state` (docs/models/uboat_leader_campaign.md).

Everything the kernel would otherwise decide by searching is precomputed here per boat (its
class decides the Areas it may enter): the next Area of every route (C§4.3), the nearest
port, the nearest box of each mission type and the ``patrol`` policy's Area for every
(home port, current Area). Validation happens here, so the kernel assumes valid input.
:func:`compile_campaign` composes one function per section (sheet, map, fleet, routes, Areas,
decks, combat, Wolfpack, Special Options, success levels, config, engagement model), each
returning its part of the kernel record.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np

from analyzer.core.errors import suggest
from analyzer.core.gamedata import DataError
from analyzer.games.uboat_leader.compile import (DAMAGE_RESULTS, DECK_KEYS, LEVELS, SLOT_KINDS, _card_rows,
                                                check_convoy_card)
from analyzer.games.uboat_leader.data import CAMPAIGN_DIR, GameData, param_error
from analyzer.core.questions import Context
from kernels.uboat_leader import campaign_state as CS
from kernels.uboat_leader import state as S
from kernels.uboat_leader.campaign_state import ATTACK_BOX_SHIPS

MAP_FILE = "data/campaign/map_{}.yaml"
AREA_KINDS = {"port": CS.AREA_PORT, "sea": CS.AREA_SEA, "channel": CS.AREA_CHANNEL}
MISSIONS = {"mine": CS.MS_MINE, "attack": CS.MS_ATTACK, "raider": CS.MS_RAIDER}
MISSION_SO = {"mine": "mine_laying", "attack": "attack", "raider": "raider"}
EVENT_TYPES = {"none": CS.EV_NONE, "stress": CS.EV_STRESS, "stress_roll": CS.EV_STRESS_ROLL,
               "contact": CS.EV_CONTACT}
SO_OPTIONS = {"air_search": CS.O_AIR_SEARCH, "supply_ship": CS.O_SUPPLY_SHIP, "intelligence": CS.O_INTELLIGENCE,
              "priority_rr": CS.O_PRIORITY_RR, "radio_call": CS.O_RADIO_CALL}
#: the Special Missions' options (cost, max) in the kernel's table: O_MINE_LAYING + MS_*
MISSION_OPTIONS = {"mine_laying": CS.O_MINE_LAYING, "attack": CS.O_ATTACK_MISSION, "raider": CS.O_RAIDER_MISSION}
#: ``policy.so.order`` item: the boats' loadouts (missions, advanced torpedoes), bought for each boat
#: leaving a Port box (C§4.1); put first when the order does not name it
LOADOUT = "loadout"
BANDS = {"okay": CS.BAND_OKAY, "shaken": CS.BAND_SHAKEN, "unfit": CS.BAND_UNFIT, "rested": CS.BAND_RESTED}
#: C§6 presets (a mapping in the params overrides fields of the first one): endurance =
#: (return_band, min_torpedoes, max_turns_at_sea, sail_band); so = (order, reserve, rr_min_stress)
ENDURANCE_FIELDS = ("return_band", "min_torpedoes", "max_turns_at_sea", "sail_band")
ENDURANCE = {name: dict(zip(ENDURANCE_FIELDS, v)) for name, v in (
    ("balanced", ("shaken", 0, 4, "okay")), ("cautious", ("shaken", 2, 3, "rested")),
    ("aggressive", ("unfit", 0, 8, "shaken")))}
SO_FIELDS = ("order", "reserve", "rr_min_stress")
SO_PRESETS = {name: dict(zip(SO_FIELDS, (order, 0, 4))) for name, order in (
    ("intel", ["intelligence"]), ("none", []), ("air_search", ["air_search"]),
    ("support", ["priority_rr", LOADOUT, "supply_ship"]))}
#: Fleet size limit (a typo guard; the workspace is per boat)
MAX_FLEET = 16
#: Histogram width: a metric above it is clipped into the last bin (its mean stays exact).
N_BINS = 512
UNREACHABLE = 1 << 20


@dataclass
class CampaignArrays:
    """One campaign point compiled for :func:`kernels.uboat_leader.campaign.campaign_kernel`."""

    args: CS.CampaignArgs
    level_names: list[str]
    boat_ids: list[str]
    fleet_cost: float     # the boats' crew levels plus one patrol's loadout (missions, advanced torpedoes)
    so_total: float
    setup_cost: float = 0.0   # SO paid at set-up: fleet_cost under setup_only, the boats alone otherwise
    area_names: list[str] = field(default_factory=list)
    level_totals: list[int] = field(default_factory=list)   # VP total of each success level (sheet order)
    #: the data paths of the values ``fleet_cost`` adds up (each boat's crew level cost, its missions' and
    #: advanced torpedoes' SO costs): what a contender's cost rests on, no other level's cost
    cost_paths: tuple[str, ...] = ()

    @property
    def patrol_limit(self) -> int:
        """Patrols a boat may make in this campaign (the per-patrol metrics: one pair each)."""
        return int(self.args.config[CS.K_PATROL_LIMIT])


def _so_units(value, where: str) -> int:
    half = float(value) * CS.SO_UNITS
    if half != int(half) or half < 0:
        raise DataError(f"{where}: SO amounts are whole or half points (>= 0), got {value!r}")
    return int(half)


class CampaignMap:
    """The map of C§2 with the per-class graph searches of C§4.3."""

    def __init__(self, cmap: dict, where: str):
        areas = cmap["areas"]
        self.names = [a["name"] for a in areas]
        if len(set(self.names)) != len(self.names):
            raise DataError(f"{where}.areas: Area names must be unique")
        self.idx = {n: k for k, n in enumerate(self.names)}
        self.kind = []
        for a in areas:
            if a["kind"] not in AREA_KINDS:
                raise DataError(f"{where}.areas[{a['name']}].kind: got {a['kind']!r}; allowed: {', '.join(AREA_KINDS)}")
            self.kind.append(AREA_KINDS[a["kind"]])
        self.nbrs = []
        for a in areas:
            for other in a["adjacent"]:
                if other not in self.idx:
                    raise DataError(f"{where}.areas[{a['name']}].adjacent: unknown Area {other!r}"
                                    f"{suggest(other, self.names)}")
            self.nbrs.append(sorted(self.idx[o] for o in a["adjacent"]))
        for k, nb in enumerate(self.nbrs):
            for j in nb:
                if k not in self.nbrs[j]:
                    raise DataError(f"{where}: {self.names[k]} lists {self.names[j]} as adjacent but not the "
                                    f"other way round")
        self.barred_by = [set(a.get("barred_classes") or []) for a in areas]
        self.move = [0 if k == CS.AREA_PORT else int(a.get("move_events", 0)) for k, a in zip(self.kind, areas)]
        self.areas = areas
        self.boxes: dict[tuple[int, int], dict] = {}
        for k, a in enumerate(areas):
            for box in a.get("boxes") or []:
                if box["type"] not in MISSIONS:
                    raise DataError(f"{where}.areas[{a['name']}].boxes: type {box['type']!r}; allowed: "
                                    f"{', '.join(MISSIONS)}")
                self.boxes[(k, MISSIONS[box["type"]])] = box
        self.ports = [k for k, kd in enumerate(self.kind) if kd == CS.AREA_PORT]
        if not self.ports:
            raise DataError(f"{where}: the map needs a Port box")

    def n(self) -> int:
        return len(self.names)

    def passable(self, x: int, dest: int, cls: str) -> bool:
        """May a boat of class ``cls`` heading for ``dest`` enter ``x`` (C§4.3)?"""
        return cls not in self.barred_by[x] and (self.kind[x] != CS.AREA_PORT or x == dest)

    def steps_to(self, dest: int, cls: str) -> list[int]:
        """Fewest Areas entered from every Area to ``dest`` (UNREACHABLE if none)."""
        out = [UNREACHABLE] * self.n()
        out[dest] = 0
        todo = deque([dest])
        while todo:
            x = todo.popleft()
            if self.kind[x] == CS.AREA_PORT and x != dest:
                continue  # a route never passes through a port
            for y in self.nbrs[x]:
                if out[y] == UNREACHABLE and cls not in self.barred_by[y]:
                    out[y] = out[x] + 1
                    todo.append(y)
        return out

    def entry_cost(self, x: int, route: str) -> tuple[int, int]:
        events = self.move[x]
        return (events, 1) if route == "fewest_events" else (1, events)

    def next_steps(self, dest: int, cls: str, route: str) -> list[int]:
        """For every Area the neighbour a route to ``dest`` enters next (-1: none): the one
        minimising entry cost + the rest of the route, ties lowest index (C§4.3)."""
        inf = (UNREACHABLE, UNREACHABLE)
        rest = [inf] * self.n()
        rest[dest] = (0, 0)
        for _ in range(self.n() + 1):  # Bellman-Ford on a handful of Areas
            changed = False
            for x in range(self.n()):
                for y in self.nbrs[x]:
                    if rest[y] == inf or not self.passable(y, dest, cls):
                        continue
                    c = self.entry_cost(y, route)
                    cand = (c[0] + rest[y][0], c[1] + rest[y][1])
                    if cand < rest[x] and x != dest:
                        rest[x] = cand
                        changed = True
            if not changed:
                break
        out = []
        for x in range(self.n()):
            choice, best = -1, inf
            for y in self.nbrs[x]:
                if rest[y] == inf or not self.passable(y, dest, cls):
                    continue
                c = self.entry_cost(y, route)
                total = (c[0] + rest[y][0], c[1] + rest[y][1])
                if total < best:
                    choice, best = y, total
            out.append(choice)
        return out


def _contact_rows(table, where: str) -> list[tuple[int, int]]:
    rows = sorted((int(r[0]), int(r[1])) for r in table)
    if not rows:
        raise DataError(f"{where}.contact_table: at least one [min_roll, contacts] row")
    return rows


def _table_contacts(rows, roll: int) -> int:
    n = 0
    for lo, c in rows:
        if roll >= lo:
            n = c
    return n


def _year_month(s) -> tuple[int, int]:
    y, m = str(s).split("-")
    return int(y), int(m)


def boat_refusal(card: dict, sheet: dict) -> str | None:
    """Why the U-boat ``card`` may not join a fleet for campaign ``sheet`` (the sheet's class
    limits, l.103; a service year inside the campaign's period, l.193), or None."""
    cls = card["class"]
    allowed = sheet["allowed_classes"]
    if allowed is not None and cls not in allowed:
        return f"{card['id']} is a Type {cls}; this campaign allows {', '.join(allowed)} (l.103)"
    period = sheet["period"]
    first, last = str(card["service"]).split("..")
    if not (_year_month(first) <= _year_month(period["end"]) and _year_month(last) >= _year_month(period["start"])):
        return (f"{card['id']} serves {card['service']}, outside the campaign {period['start']}..{period['end']} "
                f"(l.193)")
    return None


@dataclass
class Sheet:
    """The campaign sheet of a point (C§3.1): its ``campaign`` mapping and its file."""

    data: dict
    file: str
    gd: GameData

    def use(self, key: str) -> None:
        """Mark the sheet field ``key`` read (its placeholders are listed)."""
        self.gd.use(f"campaign.{key}", self.file)


@dataclass
class Fleet:
    """The fleet bought (C§3.2, C§3.3): the kernel's per-boat arrays and what later sections
    need of each boat (class, Contact modifier of its abilities, missions in order)."""

    loadouts: np.ndarray      # [i, BS_*]
    crew_levels: np.ndarray   # [i, level, BL_*]
    missions: np.ndarray      # [i, k] = MS_*
    cost: float               # crew levels + one loadout (C§3.3)
    classes: list[str]
    seeker_mods: list[int]
    mission_lists: list[list[str]]
    boats_cost: float = 0.0   # crew levels only (l.198: what set-up pays under every_strategic_segment)
    cost_paths: list[str] = field(default_factory=list)   # the data paths of the values ``cost`` adds up


@dataclass
class Decks:
    """The decks of a campaign (C§4.4, C§7.2): the target decks' cards and the Tactics cup
    (fresh per contact), the Convoy cards and the Event deck (persistent)."""

    deck_cards: dict[int, list[dict]]
    chits: list[int]
    tactics_in_use: bool
    convoys: list[tuple[int, dict]]   # (index in data/convoys.yaml, card) of the cards in the deck
    convoy_table: np.ndarray          # [c, CV_*]
    convoy_slots: np.ndarray          # [c, s] = KIND_*
    events: np.ndarray                # [card, half, EV_*]
    cards: np.ndarray                 # [deck, card, C_*]


def _sheet(p, ctx: Context, gd: GameData) -> Sheet:
    """The sheet named by ``p.campaign``; the fields every point reads are marked used."""
    data = gd.campaign(p.campaign)
    if data is None:
        stems = gd.campaigns()
        raise param_error(ctx, "campaign", f"no campaign sheet {p.campaign!r}{suggest(p.campaign, stems)}; "
                          f"allowed: {', '.join(stems)}")
    sheet = Sheet(data, f"{CAMPAIGN_DIR}/{p.campaign}.yaml", gd)
    for key in ("period", "allowed_classes", f"durations.{p.duration}", "vp_thresholds", "removed_convoys",
                "tactics_in_use", "advanced_torpedo_cost", "map"):
        sheet.use(key)
    return sheet


def _campaign_map(sheet: Sheet, ctx: Context, gd: GameData) -> tuple[CampaignMap, str]:
    """C§2: the sheet's map and its file."""
    map_file = MAP_FILE.format(sheet.data["map"])
    cmap_raw = ctx.load(map_file, "")[0]["campaign_map"]
    gd.use("campaign_map.areas", map_file)
    gd.use("campaign_map.layout", map_file)  # which Areas exist and how they link: not in the source (G1)
    return CampaignMap(cmap_raw, f"{map_file}: campaign_map"), map_file


def _campaign_rules(gd: GameData) -> tuple[dict, dict]:
    """data/campaign/rules.yaml (its fields every point reads marked used) and data/combat.yaml."""
    crules = gd.get("campaign_rules")
    combat = gd.get("combat")
    for key in ("contact_modifiers", "air_search_cards", "counters_per_area", "supply_ship_stress",
                "priority_rr_stress", "priority_rr_per_turn", "cool_stress", "mission_attack_range",
                "raider_max_attacks", "raider_success_roll", "raider_vp_per_success", "refit_module"):
        gd.use(f"campaign_rules.{key}")
    return crules, combat


def _fleet(p, ctx: Context, gd: GameData, sheet: Sheet, cm: CampaignMap, crules: dict) -> Fleet:
    """C§3.2, C§3.3: each boat's card, crew level and loadout, checked against the sheet; the
    fleet's cost within the duration's SO (l.198)."""
    roster = {u["id"]: (k, u) for k, u in enumerate(gd.get("uboats"))}
    classes = gd.get("uboat_classes")
    n_boats = len(p.fleet)
    max_missions = max([len(b.missions) + (1 if b.mines else 0) for b in p.fleet] + [1])
    if max_missions > CS.MAX_MISSIONS:
        raise param_error(ctx, "fleet", f"at most {CS.MAX_MISSIONS} Special Missions per U-boat")
    fleet = Fleet(np.zeros((n_boats, CS.N_BS_FIELDS), np.int64),
                  np.zeros((n_boats, CS.N_LEVELS, CS.N_BL_FIELDS), np.int64),
                  np.zeros((n_boats, max_missions), np.int64), 0.0, [], [], [])
    for i, b in enumerate(p.fleet):
        if b.id not in roster:
            raise param_error(ctx, f"fleet[{i}].id", f"unknown U-boat {b.id!r}{suggest(b.id, roster)}; allowed: "
                              f"{', '.join(roster)}")
        j, card = roster[b.id]
        gd.use(f"uboats[{j}]")
        cls = card["class"]
        if cls not in classes:
            raise DataError(f"uboats[{j}].class: unknown class {cls!r}; allowed: {', '.join(classes)}")
        gd.use(f"uboat_classes.{cls}")
        refusal = boat_refusal(card, sheet.data)
        if refusal:
            raise param_error(ctx, f"fleet[{i}].id", refusal)
        missions = _boat_loadout(ctx, sheet, cm, i, b, card, classes[cls], fleet, p.policy.endurance)
        fleet.cost_paths.append(f"uboats[{j}].levels.{b.level}.cost")
        fleet.crew_levels[i] = _crew_levels(card)
        fleet.missions[i, : len(missions)] = [MISSIONS[ms] for ms in missions]
        fleet.classes.append(cls)
        fleet.seeker_mods.append(crules["contact_modifiers"]["seeker"] if "seeker" in _abilities(card) else 0)
        fleet.mission_lists.append(missions)
    # C§6 activation order: fleet[i].policy.order, default the list position; ties by list order
    rank = [b.policy.order if b.policy is not None and b.policy.order is not None else i for i, b in enumerate(p.fleet)]
    fleet.loadouts[:, CS.BS_ACTIVATION] = sorted(range(n_boats), key=lambda i: (rank[i], i))
    so_total = sheet.data["durations"][p.duration]["so"]
    if ctx.rules["so_purchases"] == "setup_only":
        if fleet.cost > so_total:
            raise param_error(ctx, "fleet", f"the fleet costs {fleet.cost:g} SO; the sheet gives {so_total:g} for a "
                              f"{p.duration} campaign (l.198)")
    elif fleet.boats_cost > so_total:
        raise param_error(ctx, "fleet", f"the U-boats cost {fleet.boats_cost:g} SO; the sheet gives {so_total:g} for "
                          f"a {p.duration} campaign (l.198)")
    return fleet


def _abilities(card: dict) -> list[str]:
    return card.get("abilities") or []


def _endurance(e) -> dict:
    """C§6 ``endurance``: a preset name or the fields overriding ``balanced``."""
    return dict(ENDURANCE[e]) if isinstance(e, str) else {**ENDURANCE["balanced"], **e.model_dump(exclude_none=True)}


def _boat_loadout(ctx: Context, sheet: Sheet, cm: CampaignMap, i: int, b, card: dict, cls_data: dict,
                  fleet: Fleet, shared_endurance) -> list[str]:
    """Boat ``i``'s loadout (torpedoes, advanced counters, mines, missions, port) and endurance
    policy (its own ``fleet[i].policy.endurance`` or ``shared_endurance``) checked and written to
    ``fleet.loadouts[i]``; its price added to ``fleet.cost``. Returns its missions."""
    cls = card["class"]
    lvl = card["levels"][b.level]
    okay = lvl["okay"]
    ready = okay["ready"] if b.ready is None else b.ready
    stored = okay["stored"] if b.stored is None else b.stored
    if ready > okay["ready"] or stored > okay["stored"]:
        raise param_error(ctx, f"fleet[{i}]", f"ready/stored within the card's {okay['ready']}/{okay['stored']}")
    fat, t5 = b.advanced.fat, b.advanced.t5
    if fat + t5 + b.mines > ready + stored:
        raise param_error(ctx, f"fleet[{i}]", f"advanced ({fat + t5}) + mines ({b.mines}) must fit in ready + "
                          f"stored ({ready + stored})")
    missions = (["mine"] if b.mines > 0 else []) + list(b.missions)
    port = cm.ports[0] if b.port is None else cm.idx.get(b.port, -1)
    if port < 0 or cm.kind[port] != CS.AREA_PORT:
        ports = [cm.names[k] for k in cm.ports]
        raise param_error(ctx, f"fleet[{i}].port", f"{b.port!r} is not a Port box of this map; allowed: "
                          f"{', '.join(ports)}")
    for ms in missions:
        if not any(t == MISSIONS[ms] and cm.steps_to(a, cls)[port] < UNREACHABLE for (a, t) in cm.boxes):
            raise param_error(ctx, f"fleet[{i}].missions", f"no {ms} box {b.id} ({cls}) can reach on this map")
        sheet.use(f"so_options.{MISSION_SO[ms]}.cost")
    so_opts = sheet.data["so_options"]
    fleet.cost += lvl["cost"] + sheet.data["advanced_torpedo_cost"] * (fat + t5) + \
        sum(so_opts[MISSION_SO[ms]]["cost"] for ms in missions)
    fleet.cost_paths.extend([f"campaign.so_options.{MISSION_SO[ms]}.cost" for ms in missions]
                            + (["campaign.advanced_torpedo_cost"] if fat + t5 else []))
    fleet.boats_cost += lvl["cost"]
    if missions and ctx.rules["so_purchases"] == "every_strategic_segment":
        for ms in missions:
            sheet.use(f"so_options.{MISSION_SO[ms]}.max")
    row = fleet.loadouts[i]
    row[CS.BS_AMMO] = cls_data["ammunition"] if cls_data["deck_gun"] else 0
    row[CS.BS_SEEKER] = "seeker" in _abilities(card)
    row[CS.BS_COOL] = "cool" in _abilities(card)
    row[CS.BS_READY], row[CS.BS_STORED], row[CS.BS_FAT], row[CS.BS_T5] = ready, stored, fat, t5
    row[CS.BS_MINES] = b.mines
    row[CS.BS_N_MISSIONS] = len(missions)
    row[CS.BS_PORT] = port
    row[CS.BS_LEVEL] = LEVELS.index(b.level)
    endurance = _endurance(b.policy.endurance if b.policy is not None and b.policy.endurance is not None
                           else shared_endurance)
    row[CS.BS_RETURN_BAND] = BANDS[endurance["return_band"]]
    row[CS.BS_MIN_TORPEDOES] = endurance["min_torpedoes"]
    row[CS.BS_MAX_TURNS_AT_SEA] = endurance["max_turns_at_sea"]
    row[CS.BS_SAIL_BAND] = BANDS[endurance["sail_band"]]
    return missions


def _crew_levels(card: dict) -> np.ndarray:
    """[level, BL_*]: the card's Stress bands, XP to the next level and the Okay / Shaken rows'
    TS, GS, EV at each crew level."""
    out = np.zeros((CS.N_LEVELS, CS.N_BL_FIELDS), np.int64)
    for lv, name in enumerate(LEVELS):
        d = card["levels"][name]
        xp_next = d.get("xp_next")
        row = out[lv]
        row[CS.BL_OKAY_MAX] = d["bands"]["okay_max"]
        row[CS.BL_SHAKEN_MAX] = d["bands"]["shaken_max"]
        row[CS.BL_XP_NEXT] = CS.NO_XP_NEXT if xp_next is None else xp_next
        row[CS.BL_TS_OKAY], row[CS.BL_GS_OKAY], row[CS.BL_EV_OKAY] = (d["okay"][k] for k in ("ts", "gs", "ev"))
        row[CS.BL_TS_SHAKEN], row[CS.BL_GS_SHAKEN], row[CS.BL_EV_SHAKEN] = (d["shaken"][k] for k in ("ts", "gs", "ev"))
    return out


def _contact_tables_by_area(cm: CampaignMap, map_file: str) -> dict[int, list[tuple[int, int]]]:
    """G5: every sea Area's Contact Table rows, checked."""
    return {a: _contact_rows(cm.areas[a]["contact_table"], f"{map_file}: {cm.names[a]}")
            for a, kind in enumerate(cm.kind) if kind == CS.AREA_SEA}


def _routes(p, ctx: Context, cm: CampaignMap, fleet: Fleet, contact_rows: dict) -> dict[str, np.ndarray]:
    """C§4.3, C§6: per boat (its class decides the Areas it may enter) the next Area of every
    route, the nearest port, the nearest box of each mission type and the ``patrol`` policy's
    Area for every (home port, current Area). Keyed by the kernel record's field names."""
    n_boats, n_areas = len(p.fleet), cm.n()
    out = {"next_area": np.full((n_boats, n_areas, n_areas), -1, np.int64),
           "nearest_port": np.full((n_boats, n_areas), -1, np.int64),
           "nearest_box": np.full((n_boats, n_areas, CS.N_MISSION_TYPES), -1, np.int64),
           "patrol_area": np.full((n_boats, n_areas, n_areas), -1, np.int64)}
    for i, cls in enumerate(fleet.classes):
        steps = [cm.steps_to(dest, cls) for dest in range(n_areas)]  # steps[dest][from]
        for dest in range(n_areas):
            out["next_area"][i, dest] = cm.next_steps(dest, cls, p.policy.route)
        for a in range(n_areas):
            ports = [(steps[q][a], q) for q in cm.ports if steps[q][a] < UNREACHABLE]
            out["nearest_port"][i, a] = min(ports)[1] if ports else -1
            for t in range(CS.N_MISSION_TYPES):
                boxes = [(steps[x][a], x) for (x, tt) in sorted(cm.boxes) if tt == t and cls not in cm.barred_by[x]
                         and steps[x][a] < UNREACHABLE]
                out["nearest_box"][i, a, t] = min(boxes)[1] if boxes else -1
        out["patrol_area"][i] = _patrol_plan(p, ctx, cm, fleet, i, steps, contact_rows)
    return out


def _patrol_plan(p, ctx: Context, cm: CampaignMap, fleet: Fleet, i: int, steps, contact_rows: dict) -> np.ndarray:
    """C§6 ``patrol``: boat ``i``'s sea Area for every (home port, current Area), -1 when it
    can reach none: a named Area, the nearest one, or the one of most expected contacts
    (``best``; ``spread`` takes the i-th of that ranking)."""
    own = p.fleet[i].policy
    patrol_pol = own.patrol if own is not None and own.patrol is not None else p.policy.patrol
    where = f"fleet[{i}].policy.patrol.area" if own is not None and own.patrol is not None else "policy.patrol.area"
    cls = fleet.classes[i]
    seas = list(contact_rows)
    n_areas = cm.n()
    expected = {a: sum(_table_contacts(contact_rows[a], r + fleet.seeker_mods[i]) for r in range(1, 11)) for a in seas}
    home_port = int(fleet.loadouts[i, CS.BS_PORT])
    fixed = None
    if not isinstance(patrol_pol, str):
        fixed = cm.idx.get(patrol_pol.area, -1)
        if fixed < 0 or cm.kind[fixed] != CS.AREA_SEA or cls in cm.barred_by[fixed] \
                or steps[fixed][home_port] >= UNREACHABLE:
            reachable = [cm.names[x] for x in seas if cls not in cm.barred_by[x] and steps[x][home_port] < UNREACHABLE]
            raise param_error(ctx, where, f"{patrol_pol.area!r} is not a sea Area {p.fleet[i].id} can reach"
                              f"{suggest(patrol_pol.area, cm.names)}; allowed: {', '.join(reachable)}")
    patrol = np.full((n_areas, n_areas), -1, np.int64)
    for home in cm.ports:
        for a in range(n_areas):
            cands = [x for x in seas if cls not in cm.barred_by[x] and steps[x][a] < UNREACHABLE]
            if not cands:
                continue
            if fixed is not None:
                patrol[home, a] = fixed
            elif patrol_pol == "nearest":
                patrol[home, a] = min(cands, key=lambda x: (steps[x][home], x))
            else:
                ranked = sorted(cands, key=lambda x: (-expected[x], steps[x][home], x))
                patrol[home, a] = ranked[0] if patrol_pol == "best" else ranked[i % len(ranked)]
    if patrol[home_port, home_port] < 0:
        raise param_error(ctx, f"fleet[{i}]", f"{p.fleet[i].id} ({cls}) can reach no sea Area from its port")
    return patrol


def _area_tables(cm: CampaignMap, contact_rows: dict, loadouts: np.ndarray) -> dict[str, np.ndarray]:
    """C§2: every Area's row (kind, Refit, Movement and Patrol values, boxes), its Contact Table
    and the VP each boat's mines score in its mine box. Keyed by the kernel record's field names."""
    n_areas, n_boats = cm.n(), loadouts.shape[0]
    max_rows = max([len(r) for r in contact_rows.values()] + [1])
    areas = np.zeros((n_areas, CS.N_AT_FIELDS), np.int64)
    contact_tables = np.zeros((n_areas, max_rows, CS.N_CR_FIELDS), np.int64)
    mine_vp = np.zeros((n_boats, n_areas), np.int64)
    for a, area in enumerate(cm.areas):
        areas[a, CS.AT_KIND] = cm.kind[a]
        areas[a, CS.AT_REFIT] = int(area.get("refit", 0)) if cm.kind[a] == CS.AREA_PORT else 0
        areas[a, CS.AT_MOVE] = cm.move[a]
        areas[a, CS.AT_PATROL] = int(area.get("patrol_events", 0)) if cm.kind[a] == CS.AREA_SEA else 0
        if a in contact_rows:
            areas[a, CS.AT_CT_LEN] = len(contact_rows[a])
            for k, (min_roll, contacts) in enumerate(contact_rows[a]):
                contact_tables[a, k, CS.CR_MIN_ROLL] = min_roll
                contact_tables[a, k, CS.CR_CONTACTS] = contacts
        for t in range(CS.N_MISSION_TYPES):
            box = cm.boxes.get((a, t))
            areas[a, CS.AT_BOX_EVENTS + t] = -1 if box is None else int(box["events"])
        attack = cm.boxes.get((a, CS.MS_ATTACK))
        if attack is not None:
            areas[a, CS.AT_NAVAL_CARDS] = int(attack["naval_cards"])
        mine = cm.boxes.get((a, CS.MS_MINE))
        if mine is not None:
            rows = sorted(mine["vp_table"], key=lambda r: r["mines"])
            for i in range(n_boats):
                laid = int(loadouts[i, CS.BS_MINES])
                mine_vp[i, a] = max([0] + [r["vp"] for r in rows if laid >= r["mines"]][-1:])
    return {"areas": areas, "contact_tables": contact_tables, "mine_vp": mine_vp}


def _decks(sheet: Sheet, gd: GameData, fleet: Fleet, areas: np.ndarray) -> Decks:
    """C§4.4, C§7.2: the target decks, the Tactics cup, the sheet's Convoy deck (every card's
    draws checked against the decks) and the Event deck."""
    deck_cards = {d: gd.get(k) for d, k in DECK_KEYS.items()}
    tactics_in_use = bool(sheet.data["tactics_in_use"])
    chits = [0]
    if tactics_in_use:
        gd.use("tactics.chits")
        chits = [int(c["value"]) for c in gd.get("tactics")["chits"] for _ in range(int(c["count"]))]
    convoys, convoy_table, convoy_slots = _convoy_deck(sheet, gd, deck_cards, tactics_in_use, chits)
    _check_attack_boxes(gd, fleet, areas, deck_cards)
    events = _event_deck(gd)
    return Decks(deck_cards, chits, tactics_in_use, convoys, convoy_table, convoy_slots, events,
                 _card_table(deck_cards, chits))


def _convoy_deck(sheet: Sheet, gd: GameData, deck_cards: dict, tactics_in_use: bool, chits: list[int]):
    """The Convoy cards the sheet keeps: (cards, [c, CV_*], [c, s] = KIND_*)."""
    removed = set(sheet.data.get("removed_convoys") or [])
    cards = gd.get("convoys")
    where = gd.files["convoys"]
    unknown = sorted(removed - {c["card"] for c in cards}, key=str)
    if unknown:
        raise DataError(f"{sheet.file}: removed_convoys names Convoy card(s) {', '.join(map(str, unknown))} that "
                        f"{where} does not hold (cards: {', '.join(str(c['card']) for c in cards)})")
    for k, c in enumerate(cards):
        check_convoy_card(c, f"{where}: convoys[{k}] (card {c['card']})")
    convoys = [(k, c) for k, c in enumerate(cards) if c["card"] not in removed]
    if not convoys:
        raise DataError(f"{sheet.file}: removed_convoys removes every Convoy card")
    convoy_table = np.zeros((len(convoys), CS.N_CV_FIELDS), np.int64)
    convoy_slots = np.zeros((len(convoys), S.MAX_SHIPS), np.int64)
    misid = any(c.get("misidentified") for c in deck_cards[S.D_MERCHANT])
    for r, (k, conv) in enumerate(convoys):
        gd.use(f"convoys[{k}].card")
        gd.use(f"convoys[{k}].type")
        gd.use(f"convoys[{k}].slots")
        kinds = [s["kind"] for s in conv["slots"]]
        if not 1 <= len(kinds) <= S.MAX_SHIPS or any(x not in SLOT_KINDS for x in kinds):
            raise DataError(f"convoys[{k}].slots: 1..{S.MAX_SHIPS} slots of kind M, N or E")
        naval = conv["type"] == "naval"
        convoy_table[r, CS.CV_NAVAL] = naval
        convoy_table[r, CS.CV_N_SLOTS] = len(kinds)
        convoy_table[r, CS.CV_N_ESCORTS] = kinds.count("E")
        convoy_slots[r, : len(kinds)] = [SLOT_KINDS[x] for x in kinds]
        need = {S.D_MERCHANT: kinds.count("M"), S.D_NAVAL: kinds.count("N"),
                S.D_ESCORT: (0 if naval else kinds.count("E")) + (kinds.count("M") if misid else 0),
                S.D_FLEET: kinds.count("E") if naval else 0}
        for d, n in need.items():
            if n > len(deck_cards[d]):
                raise DataError(f"{DECK_KEYS[d]}: convoy card {conv['card']} may draw {n} cards, the deck has "
                                f"{len(deck_cards[d])} (C§7.5)")
            if n:
                gd.use(DECK_KEYS[d])
        escorts = kinds.count("E") + (kinds.count("M") if misid else 0)
        if tactics_in_use and escorts > len(chits):
            raise DataError(f"tactics.chits: the cup holds {len(chits)} counters, convoy card {conv['card']} may "
                            f"have {escorts} escorts")
    return convoys, convoy_table, convoy_slots


def _check_attack_boxes(gd: GameData, fleet: Fleet, areas: np.ndarray, deck_cards: dict) -> None:
    """l.303: an Attack box draws its Naval cards into the kernel's ship scratch, which has
    ``ATTACK_BOX_SHIPS`` rows for them (:data:`kernels.uboat_leader.campaign_state.SHIP_ROWS`)."""
    naval_needed = max([int(areas[a, CS.AT_NAVAL_CARDS]) for a in range(areas.shape[0])] + [0])
    if any(CS.MS_ATTACK in [MISSIONS[m] for m in ms] for ms in fleet.mission_lists):
        gd.use("naval")
        if naval_needed > min(len(deck_cards[S.D_NAVAL]), ATTACK_BOX_SHIPS):
            raise DataError(f"naval: an Attack box draws {naval_needed} Naval cards, the deck has "
                            f"{len(deck_cards[S.D_NAVAL])} (at most {ATTACK_BOX_SHIPS})")


def _event_deck(gd: GameData) -> np.ndarray:
    """C§4.4: [card, half, EV_*], each card ``count`` times."""
    events = gd.get("events")
    gd.use("events")
    rows = []
    for c in events["cards"]:
        halves = np.zeros((2, 2), np.int64)
        for half, h in ((CS.HALF_EARLY, "early"), (CS.HALF_LATE, "late")):
            e = c[h]
            if e.get("type") not in EVENT_TYPES:
                raise DataError(f"{gd.files['events']}: events.cards[{c['name']}].{h}.type: got {e.get('type')!r}; "
                                f"allowed: {', '.join(EVENT_TYPES)} (an effect the model does not play is refused, "
                                f"never skipped)")
            extra = sorted(set(e) - {"type", "n"})
            if extra:
                raise DataError(f"{gd.files['events']}: events.cards[{c['name']}].{h}: unknown field(s) "
                                f"{', '.join(extra)}; an effect is {{type, n}} (type: {', '.join(EVENT_TYPES)})")
            halves[half, CS.EV_TYPE] = EVENT_TYPES[e["type"]]
            halves[half, CS.EV_N] = int(e.get("n", 0))
        rows += [halves] * int(c["count"])
    if not rows:
        raise DataError("events.cards: the Event deck is empty")
    return np.array(rows, np.int64).reshape(len(rows), 2, 2)


def _card_table(deck_cards: dict, chits: list[int]) -> np.ndarray:
    """[deck, card, C_*] of the target decks, the Tactics chits' values in D_TACTICS."""
    max_cards = max([len(c) for c in deck_cards.values()] + [len(chits), 1])
    cards = np.zeros((S.N_DECKS, max_cards, S.N_CARD_FIELDS), np.int64)
    for d in DECK_KEYS:
        rows = _card_rows(d, deck_cards[d])
        cards[d, : rows.shape[0]] = rows
    cards[S.D_TACTICS, : len(chits), S.C_CHIT_VALUE] = chits
    return cards


def _damage_table(gd: GameData, combat: dict, enemy_attack: bool) -> np.ndarray:
    """[d10 face] = DAMAGE_* of the placeholder U-boat attack module (data/combat.yaml); the
    enemy attack module's numbers are read only when ``rules.enemy_attack`` uses them."""
    keys = ["uboat_attack_module", "heavy_damage_attack_bonus"]
    if enemy_attack:
        keys += ["enemy_attack_module.hit_stress", "enemy_attack_module.sink_roll.escort"]
    for key in keys:
        gd.use(f"combat.{key}")
    table = combat["uboat_attack_module"]["damage_table"]
    damage = np.zeros(11, np.int64)
    for face in range(1, 11):
        hit = [code for k, code in DAMAGE_RESULTS if table[k][0] <= face <= table[k][1]]
        if not hit:
            raise DataError(f"combat.uboat_attack_module.damage_table: d10 face {face} has no result")
        damage[face] = hit[0]
    return damage


def _wolfpack(p, sheet: Sheet, gd: GameData) -> tuple[dict, np.ndarray]:
    """G4: the Wolfpack notes (the sheet's override the data's) and [d10 face] = 1 for the
    faces that are Stress results."""
    wp = dict(gd.get("wolfpack"))
    sheet_wp = sheet.data.get("wolfpack") or {}
    wp_used = p.policy.wolfpack != "never"
    for key in ("join_min", "stress_results", "attacked_modifier", "stress_per_result", "alerted_per_result"):
        if key in sheet_wp:
            wp[key] = sheet_wp[key]
            if wp_used:
                sheet.use(f"wolfpack.{key}")
        elif wp_used:
            gd.use(f"wolfpack.{key}")
    stress = np.zeros(11, np.int64)
    for f in wp["stress_results"]:
        if not 1 <= int(f) <= 10:
            raise DataError(f"wolfpack.stress_results: faces 1..10, got {f}")
        stress[int(f)] = 1
    return wp, stress


def _special_options(p, ctx: Context, gd: GameData, sheet: Sheet) -> tuple[np.ndarray, dict]:
    """C§4.1, C§3.3: [SO_COST / SO_MAX / SO_ORDER, option] and the ``policy.so`` plan."""
    pol = p.policy
    so_opts = sheet.data["so_options"]
    table = np.zeros((3, CS.N_SO_OPTIONS), np.int64)
    for name, code in {**SO_OPTIONS, **MISSION_OPTIONS}.items():
        o = so_opts[name]
        table[CS.SO_COST, code] = _so_units(o["cost"], f"{sheet.file}: campaign.so_options.{name}.cost")
        table[CS.SO_MAX, code] = CS.SO_UNLIMITED if o["max"] == "U" else int(o["max"])
    table[CS.SO_COST, CS.O_ADVANCED] = _so_units(sheet.data["advanced_torpedo_cost"],
                                                 f"{sheet.file}: campaign.advanced_torpedo_cost")
    table[CS.SO_MAX, CS.O_ADVANCED] = CS.SO_UNLIMITED
    so_pol = dict(SO_PRESETS[pol.so]) if isinstance(pol.so, str) else \
        {**SO_PRESETS["intel"], **pol.so.model_dump(exclude_none=True)}
    order = list(so_pol["order"])
    if len(set(order)) != len(order):
        raise param_error(ctx, "policy.so.order", "each option at most once per turn")
    if LOADOUT not in order:  # the boats' loadouts first, unless the order places them (C§4.1)
        order.insert(0, LOADOUT)
    so_pol["order"] = order
    for name in order:
        if name != LOADOUT:
            sheet.use(f"so_options.{name}")
    if pol.radio_call != "never":
        sheet.use("so_options.radio_call")
    if "air_search" in order:
        gd.use("campaign_rules.air_search_discard")
    table[CS.SO_ORDER, : len(order)] = [CS.O_LOADOUT if o == LOADOUT else SO_OPTIONS[o] for o in order]
    return table, so_pol


def _success_levels(sheet: Sheet) -> tuple[np.ndarray, list[str]]:
    """C§8: [LV_VP / LV_SHEET_INDEX, rank] by ascending VP threshold, and the level names in
    sheet order."""
    thresholds = sheet.data["vp_thresholds"]
    names = list(thresholds)
    ranked = sorted(range(len(names)), key=lambda k: thresholds[names[k]])
    table = np.zeros((CS.N_LV_ROWS, max(len(names), 1)), np.int64)
    for pos, k in enumerate(ranked):
        table[CS.LV_VP, pos] = int(thresholds[names[k]])
        table[CS.LV_SHEET_INDEX, pos] = k
    return table, names


def _use_rule_modules(p, rules: dict, sheet: Sheet, gd: GameData) -> None:
    """Mark the placeholder modules and sheet fields the rule options select."""
    if rules["calendar"] == "advancing":
        gd.use("campaign_rules.calendar_module")
    else:
        sheet.use("calendar_year")
    gd.use("events.split_year")
    if rules["post_combat_stress"] == "plus_one" and rules["contact_model"] == "abstract":
        gd.use("campaign_rules.post_combat_module")  # the engagement model uses combat.post_combat_module
    if rules["promotion"] != "none":
        gd.use("campaign_rules.promotion_module")
    if rules["advanced_torpedoes"] == "placeholder_bonus" and any(b.advanced.fat + b.advanced.t5 for b in p.fleet):
        gd.use("campaign_rules.advanced_torpedo_module")


def _size_config(p, sheet: Sheet, n_areas: int, n_levels: int, setup_cost: float) -> dict[int, int]:
    """config: the campaign's sizes, limits and starting SO (half points)."""
    dur = sheet.data["durations"][p.duration]
    patrols = dur["patrols"]
    if isinstance(patrols, bool) or not isinstance(patrols, (int, float)) or patrols < 1 or patrols != int(patrols):
        raise DataError(f"{sheet.file}: campaign.durations.{p.duration}.patrols: got {patrols!r}; a campaign "
                        f"lasts at least 1 patrol per U-boat (the limit 1, 2 or 4 of §2.1)")
    n_boats = len(p.fleet)
    return {
        CS.K_N_BOATS: n_boats, CS.K_N_AREAS: n_areas, CS.K_N_LEVELS: n_levels,
        CS.K_N_METRICS: CS.N_FIXED_METRICS + n_levels + CS.N_BOAT_METRICS * n_boats
        + CS.N_PATROL_METRICS * int(dur["patrols"]),
        CS.K_PATROL_LIMIT: int(dur["patrols"]), CS.K_MAX_TURNS: p.max_turns,
        CS.K_SO_START: _so_units(dur["so"], f"{sheet.file}: campaign.durations.{p.duration}.so")
        - _so_units(setup_cost, "params.fleet cost"),
    }


def _module_config(rules: dict, crules: dict, combat: dict, wp: dict) -> dict[int, int]:
    """config: the source constants and the placeholder modules' numbers (data/campaign/rules.yaml,
    data/combat.yaml, the Wolfpack notes)."""
    cmods = crules["contact_modifiers"]
    ua = combat["uboat_attack_module"]
    ea = combat["enemy_attack_module"]
    rng0 = int(crules["mission_attack_range"])
    sink = ea["sink_roll"]["escort"]
    advanced = rules["advanced_torpedoes"] == "placeholder_bonus"
    return {
        CS.K_CM_INTEL: cmods["intel"], CS.K_CM_SEEKER: cmods["seeker"], CS.K_CM_WARNING: cmods["warning"],
        CS.K_CM_ATTACKED: cmods["attacked"], CS.K_SUPPLY_STRESS: crules["supply_ship_stress"],
        CS.K_RR_STRESS: crules["priority_rr_stress"], CS.K_COOL_STRESS: crules["cool_stress"],
        CS.K_MINE_BOX_EVENTS: crules["mine_box_events"], CS.K_RAIDER_MAX: crules["raider_max_attacks"],
        CS.K_RAIDER_ROLL: crules["raider_success_roll"], CS.K_RAIDER_VP: crules["raider_vp_per_success"],
        CS.K_TORPEDO_MOD0: ua["torpedo_range_mod"][rng0], CS.K_GUN_MOD0: ua["gun_range_mod"][rng0],
        CS.K_HEAVY_BONUS: combat["heavy_damage_attack_bonus"],
        CS.K_POST_STRESS: crules["post_combat_module"]["stress"] if rules["post_combat_stress"] == "plus_one" else 0,
        CS.K_FAT_BONUS: crules["advanced_torpedo_module"]["fat_bonus"] if advanced else 0,
        CS.K_T5_BONUS: crules["advanced_torpedo_module"]["t5_bonus"] if advanced else 0,
        # rules.enemy_attack: none -> the escorts never roll (no Stress, no loss) in the abstract model too
        CS.K_ESCORT_ROLLS: (crules["abstract_contact_module"]["escort_rolls_per_boat"]
                            if rules["enemy_attack"] != "none" else 0),
        CS.K_HIT_STRESS: ea["hit_stress"], CS.K_SINK_ESCORT: S.NOT_ALLOWED if sink is None else sink,
        CS.K_WP_JOIN_MIN: wp["join_min"], CS.K_WP_ATTACKED_MOD: wp["attacked_modifier"],
        CS.K_WP_STRESS_PER: wp["stress_per_result"], CS.K_WP_ALERTED_PER: wp["alerted_per_result"],
    }


def _rule_config(rules: dict, sheet: Sheet, crules: dict, split_year: int) -> dict[int, int]:
    """config: the rule options of C§5 and the calendar they read."""
    start_y, start_m = _year_month(sheet.data["period"]["start"])
    return {
        CS.K_WARN_ATTACK_ONLY: rules["warning_placement"] == "attack_only",
        CS.K_WARN_CAMPAIGN: rules["warning_duration"] == "campaign",
        CS.K_ATT_JOINERS_NOT_SEARCHED: rules["attacked_marker"] == "joiners_not_searched",
        CS.K_ATT_UNTIL_PORT: rules["attacked_duration"] == "until_port",
        CS.K_ATT_END_OF_TURN: rules["attacked_timing"] == "end_of_turn",
        CS.K_BOX_PLUS_MOVE: rules["mission_box_events"] == "box_plus_move",
        CS.K_UNFIT_TACTICAL: rules["unfit_return"] == "tactical",
        CS.K_COOL_IN_PORT: rules["cool"] == "in_port",
        CS.K_STRATEGIC_ONLY: rules["counter_duration"] == "strategic_only",
        CS.K_MINE_TOO_LATE: rules["mine_unfit"] == "too_late",
        CS.K_MINE_BOX_NUMBER: rules["mine_box_events"] == "box_number",
        CS.K_RAIDER_NATURAL: rules["raider_roll"] == "natural",
        CS.K_RAIDER_XP: rules["raider_xp"] == "per_vp",
        CS.K_ONE_AREA: rules["map_movement"] == "one_area",
        CS.K_RELOAD: {"post_combat_and_refit": CS.RELOAD_POST_COMBAT_AND_REFIT, "refit_only": CS.RELOAD_REFIT_ONLY,
                      "port_only": CS.RELOAD_PORT_ONLY}[rules["campaign_reload"]],
        CS.K_PROMOTION: {"anywhere": CS.PROMOTE_ANYWHERE, "in_port": CS.PROMOTE_IN_PORT,
                         "none": CS.PROMOTE_NONE}[rules["promotion"]],
        CS.K_RC_PER_JOINER: rules["radio_call_cost"] == "per_joiner",
        CS.K_STRESS_FAILS: rules["wolfpack_stress_join"] == "stress_fails",
        CS.K_CAL_ADVANCING: rules["calendar"] == "advancing", CS.K_CAL_YEAR: int(sheet.data["calendar_year"]),
        CS.K_START_YEAR: start_y, CS.K_START_MONTH: start_m,
        CS.K_MONTHS_PER_TURN: crules["calendar_module"]["months_per_turn"], CS.K_SPLIT_YEAR: split_year,
    }


def _policy_config(pol, so_pol: dict, tactics_in_use: bool) -> dict[int, int]:
    """config: the named policies of C§6."""
    tac = pol.tactical
    return {  # endurance is per boat: loadouts[i, BS_RETURN_BAND ..] (_boat_loadout)
        CS.K_ATTACK: ({"always": CS.ATTACK_ALWAYS, "no_naval": CS.ATTACK_NO_NAVAL, "never": CS.ATTACK_NEVER}
                      [pol.attack] if isinstance(pol.attack, str) else CS.ATTACK_MAX_ESCORTS),
        CS.K_ATTACK_K: 0 if isinstance(pol.attack, str) else pol.attack.max_escorts,
        CS.K_PACK: ({"always": CS.PACK_ALWAYS, "never": CS.PACK_NEVER}[pol.wolfpack]
                    if isinstance(pol.wolfpack, str) else CS.PACK_ESCORTS_AT_LEAST),
        CS.K_PACK_K: 0 if isinstance(pol.wolfpack, str) else pol.wolfpack.escorts_at_least,
        CS.K_RADIO: ({"never": CS.RADIO_NEVER, "always": CS.RADIO_ALWAYS}[pol.radio_call]
                     if isinstance(pol.radio_call, str) else CS.RADIO_ESCORTS_AT_LEAST),
        CS.K_RADIO_K: 0 if isinstance(pol.radio_call, str) else pol.radio_call.escorts_at_least,
        CS.K_SO_RESERVE: _so_units(so_pol["reserve"], "params.policy.so.reserve"),
        CS.K_RR_MIN_STRESS: so_pol["rr_min_stress"], CS.K_N_SO_ORDER: len(so_pol["order"]),
        CS.K_AIR_CHOICE: CS.AIR_MOST_TARGETS if pol.air_search_choice == "most_targets" else CS.AIR_FEWEST_ESCORTS,
        CS.K_ABORT_BAND: BANDS[pol.mission.abort_band], CS.K_MISSION_SALVO: pol.mission.salvo,
        CS.K_MISSION_KEEP: pol.mission.keep_torpedoes,
        CS.K_RAIDER_GUN_FIRST: pol.raider.weapons == "gun_first", CS.K_RAIDER_KEEP: pol.raider.keep_torpedoes,
        CS.K_SALVO: tac.salvo, CS.K_SUBMERGED: tac.approach == "submerged", CS.K_TACTICS_IN_USE: tactics_in_use,
    }


def _deck_config(decks: Decks) -> dict[int, int]:
    """config: every deck's size (K_DECK_SIZE + deck)."""
    sizes = {d: len(decks.deck_cards[d]) for d in DECK_KEYS}
    sizes.update({S.D_TACTICS: len(decks.chits), CS.D_EVENTS: decks.events.shape[0],
                  CS.D_CONVOYS: len(decks.convoys)})
    return {CS.K_DECK_SIZE + d: n for d, n in sizes.items()}


def _config_array(*parts: dict[int, int]) -> np.ndarray:
    """config[K_*] from the sections' {field: value}."""
    config = np.zeros(CS.N_CFG, np.int64)
    for part in parts:
        for k, v in part.items():
            config[k] = int(v)
    return config


def compile_campaign(p, ctx: Context, gd: GameData) -> CampaignArrays:
    """Validate ``p`` (CampaignParams) against the data and build the kernel's
    :class:`~kernels.uboat_leader.campaign_state.CampaignArgs`, section by section in the order
    the data is read (which is the order the point lists its placeholders in)."""
    rules = ctx.rules
    sheet = _sheet(p, ctx, gd)
    cm, map_file = _campaign_map(sheet, ctx, gd)
    crules, combat = _campaign_rules(gd)
    fleet = _fleet(p, ctx, gd, sheet, cm, crules)
    contact_rows = _contact_tables_by_area(cm, map_file)
    routes = _routes(p, ctx, cm, fleet, contact_rows)
    area_tables = _area_tables(cm, contact_rows, fleet.loadouts)
    decks = _decks(sheet, gd, fleet, area_tables["areas"])
    damage_table = _damage_table(gd, combat, rules["enemy_attack"] != "none")
    wp, wolfpack_stress = _wolfpack(p, sheet, gd)
    special_options, so_pol = _special_options(p, ctx, gd, sheet)
    success_levels, level_names = _success_levels(sheet)
    _use_rule_modules(p, rules, sheet, gd)
    every_segment = rules["so_purchases"] == "every_strategic_segment"
    setup_cost = fleet.boats_cost if every_segment else fleet.cost
    config = _config_array(_size_config(p, sheet, cm.n(), len(level_names), setup_cost),
                           _module_config(rules, crules, combat, wp),
                           _rule_config(rules, sheet, crules, gd.get("events")["split_year"]),
                           _policy_config(p.policy, so_pol, decks.tactics_in_use), _deck_config(decks))
    engagement = rules["contact_model"] == "engagement"
    config[CS.K_CONTACT_ENGAGEMENT] = engagement
    config[CS.K_SO_EVERY_SEGMENT] = every_segment
    config[CS.K_SO_AT_SEA] = bool(so_pol.get("missions_at_sea"))
    if config[CS.K_SO_AT_SEA] and not every_segment:
        raise param_error(ctx, "policy.so.missions_at_sea", "buying missions at sea needs rules.so_purchases: "
                          "every_strategic_segment (under setup_only every purchase is made at set-up)")
    if engagement:
        engagement_arrays, cards = _engagement_arrays(p, ctx, gd, decks.convoys, decks.tactics_in_use, decks.cards)
    else:
        gd.use("campaign_rules.abstract_contact_module")
        engagement_arrays, cards = _no_engagement_arrays(), decks.cards
    args = CS.CampaignArgs(config=config, **area_tables, loadouts=fleet.loadouts, missions=fleet.missions,
                           crew_levels=fleet.crew_levels, **routes, events=decks.events, convoys=decks.convoy_table,
                           convoy_slots=decks.convoy_slots, cards=cards, damage_table=damage_table,
                           wolfpack_stress=wolfpack_stress, special_options=special_options,
                           success_levels=success_levels, **engagement_arrays)
    thresholds = sheet.data["vp_thresholds"]
    return CampaignArrays(args, level_names, [b.id for b in p.fleet], fleet.cost,
                          sheet.data["durations"][p.duration]["so"], setup_cost, cm.names,
                          [int(thresholds[n]) for n in level_names], tuple(fleet.cost_paths))


def _no_engagement_arrays() -> dict[str, np.ndarray]:
    """The engagement model's fields under ``contact_model: abstract``: tiny arrays the kernel
    never reads (their shapes only keep the record's types)."""
    return {"engagement_config": np.zeros(S.N_CFG, np.int64),
            "engagement_slots": np.zeros((1, S.MAX_SHIPS, S.N_SLOT_FIELDS), np.int64),
            "engagement_tables": np.zeros((S.N_TABLES, S.TABLE_WIDTH), np.int64),
            "display_adjacent": np.zeros((1, 1), np.int64), "display_areas": np.zeros((1, 2), np.int64),
            "display_distance": np.zeros((2, 1), np.int64),
            "engagement_boats": np.zeros((1, CS.N_LEVELS, S.N_BOAT_STATIC), np.int64),
            "engagement_crew_rows": np.zeros((1, CS.N_LEVELS, 2, S.N_ROW_FIELDS), np.int64)}


def _engagement_arrays(p, ctx: Context, gd: GameData, convoys, tactics_in_use: bool, cards: np.ndarray):
    """C§7.4: the engagement kernel's arrays for every Convoy card of the deck (compiled and
    validated by :func:`analyzer.games.uboat_leader.compile.compile_engagement` with the whole
    fleet starting at ``policy.tactical.start``) and every boat's crew rows at each level.
    Returns (the record's engagement fields, the card table)."""
    from analyzer.games.uboat_leader.compile import compile_engagement
    from analyzer.games.uboat_leader.engagement import BoatParams, EngagementParams, PolicyParams
    from analyzer.games.uboat_leader.escort_detection import tactics_chits

    if len(p.fleet) > S.MAX_BOATS:
        raise param_error(ctx, "fleet", f"the engagement contact model fights packs of at most {S.MAX_BOATS} "
                          f"U-boats; a fleet of {len(p.fleet)} may exceed it (use contact_model: abstract)")
    tac = p.policy.tactical
    tactics = "pool" if tactics_in_use else "none"
    chits = tactics_chits(tactics, gd, ctx) if tactics_in_use else [0]
    policy = PolicyParams(**tac.model_dump(exclude={"start"}))
    eslots = np.zeros((len(convoys), S.MAX_SHIPS, S.N_SLOT_FIELDS), np.int64)
    battle = None
    for r, (_, conv) in enumerate(convoys):
        ep = EngagementParams(convoy=conv["card"], alerted=0, tactics=tactics, policy=policy, max_rounds=p.max_rounds,
                              uboats=[BoatParams(id=b.id, level=b.level, start=tac.start) for b in p.fleet])
        battle = compile_engagement(ep, ctx, gd, chits)
        eslots[r, : battle.slots.shape[0]] = battle.slots
    if battle.cards.shape[1] >= cards.shape[1]:
        cards = battle.cards
    disp = battle.display
    start = disp.index[tac.start]
    roster = {u["id"]: u for u in gd.get("uboats")}
    classes = gd.get("uboat_classes")
    n = len(p.fleet)
    ebstat = np.zeros((n, CS.N_LEVELS, S.N_BOAT_STATIC), np.int64)
    ebrows = np.zeros((n, CS.N_LEVELS, 2, S.N_ROW_FIELDS), np.int64)
    for i, b in enumerate(p.fleet):
        card = roster[b.id]
        cls = classes[card["class"]]
        for lv, name in enumerate(LEVELS):
            d = card["levels"][name]
            ebstat[i, lv] = [d["bands"]["okay_max"], d["bands"]["shaken_max"], cls["speed"]["surfaced"],
                             cls["speed"]["submerged"], cls["ammunition"] if cls["deck_gun"] else 0, start, 0]
            for row, row_name in ((S.ROW_OKAY, "okay"), (S.ROW_SHAKEN, "shaken")):
                x = d[row_name]
                if x["initiative"] not in ("aggressive", "cautious"):
                    raise DataError(f"uboats[{b.id}].levels.{name}.{row_name}.initiative: got {x['initiative']!r}; "
                                    f"allowed: aggressive, cautious")
                ebrows[i, lv, row] = [x["initiative"] == "aggressive", x["gs"], x["ts"], x["ev"], x["ready"],
                                      x["stored"]]
    return {"engagement_config": battle.cfg.copy(), "engagement_slots": eslots, "engagement_tables": battle.tables,
            "display_adjacent": disp.adj, "display_areas": disp.area, "display_distance": disp.dist,
            "engagement_boats": ebstat, "engagement_crew_rows": ebrows}, cards
