"""Slow, obviously-correct pure-Python reference of a U-Boat Leader CAMPAIGN (issue 12).

Spec: ``docs/models/uboat_leader_campaign.md`` (section numbers C§n below refer to it; §n, A#,
G# to the rule digest). One trial = one whole campaign: Strategic, Operations, Tactical and
Refit segments, turn after turn, until every U-boat has reached its patrol limit or is lost
(or the named cap ``max_turns``). Randomness: ``random.Random(seed)`` only (the tactical
engagement oracle it calls uses the same generator). Nothing of the production code in
``analyzer`` or ``kernels`` is used; the only game code used is the independent engagement
reference beside it, ``analyzer/games/uboat_leader/reference.py`` (contact model ``engagement``).

Public API: ``load_campaign_data(folder=None)``, ``run_campaign(params, rules, data, seed)``
(one trial -> dict of metrics), ``simulate(params, rules, data, n, seed)`` (metric -> list).
Internal helpers (``Campaign`` and its methods) are used by the tests to check single rules.
"""
from __future__ import annotations

import glob
import os
import random

import yaml

from analyzer.games.uboat_leader import reference as E  # the engagement oracle (issue 6), its sibling

DEFAULT_DIR = E.DEFAULT_DIR
LEVELS = ("green", "trained", "veteran", "ace")
SO_COUNTER_OPTIONS = ("intelligence", "air_search", "supply_ship")

# name -> (default, allowed values); C§5. Digest ambiguity / gap ids in comments.
CAMPAIGN_RULE_OPTIONS = {
    "contact_model": ("engagement", ("engagement", "abstract")),                     # C§7.4
    "warning_placement": ("first_card", ("first_card", "attack_only")),              # A3
    "warning_duration": ("turn", ("turn", "campaign")),                              # G21
    "attacked_marker": ("all_attackers", ("all_attackers", "joiners_not_searched")),  # A4
    "attacked_duration": ("one_turn", ("one_turn", "until_port")),                   # G21
    "attacked_timing": ("end_of_boat_segment", ("end_of_boat_segment", "end_of_turn")),  # A4, l.76/l.351
    "so_purchases": ("every_strategic_segment", ("every_strategic_segment", "setup_only")),  # l.238, l.273
    "mission_box_events": ("box_only", ("box_only", "box_plus_move")),               # A7
    "unfit_return": ("operations", ("operations", "tactical")),                      # A8
    "cool": ("every_refit", ("every_refit", "in_port")),                             # A14
    "counter_duration": ("turn", ("turn", "strategic_only")),                        # A15
    "mine_unfit": ("fails", ("fails", "too_late")),                                  # A16
    "mine_box_events": ("one", ("one", "box_number")),                               # A16
    "raider_roll": ("modified", ("modified", "natural")),                            # A17
    "raider_xp": ("none", ("none", "per_vp")),                                       # A17
    "calendar": ("fixed", ("fixed", "advancing")),                                   # A18
    "map_movement": ("unlimited", ("unlimited", "one_area")),                        # A19
    "campaign_reload": ("post_combat_and_refit", ("post_combat_and_refit", "refit_only", "port_only")),  # G21
    "promotion": ("anywhere", ("anywhere", "in_port", "none")),                      # G21
    "advanced_torpedoes": ("placeholder_bonus", ("placeholder_bonus", "as_normal")),  # G19
}

# C§6 policies: name -> presets; a dict in params overrides single fields of the preset.
ENDURANCE = {  # when to return to port / when to sail again
    "balanced": {"return_band": "shaken", "min_torpedoes": 0, "max_turns_at_sea": 4, "sail_band": "okay"},
    "cautious": {"return_band": "shaken", "min_torpedoes": 2, "max_turns_at_sea": 3, "sail_band": "rested"},
    "aggressive": {"return_band": "unfit", "min_torpedoes": 0, "max_turns_at_sea": 8, "sail_band": "shaken"},
}
SO_PRESETS = {
    "intel": {"order": ["intelligence"], "reserve": 0, "rr_min_stress": 4, "missions_at_sea": False},
    "none": {"order": [], "reserve": 0, "rr_min_stress": 4, "missions_at_sea": False},
    "air_search": {"order": ["air_search"], "reserve": 0, "rr_min_stress": 4, "missions_at_sea": False},
    "support": {"order": ["priority_rr", "loadout", "supply_ship"], "reserve": 0, "rr_min_stress": 4, "missions_at_sea": False},
}
POLICY_DEFAULTS = {
    "patrol": "best",            # best | spread | nearest | {area: NAME}
    "route": "fewest_events",    # fewest_events | fewest_areas
    "endurance": "balanced",     # preset name or dict of its fields
    "attack": "always",          # always | no_naval | {max_escorts: k} | never
    "wolfpack": "always",        # always | never | {escorts_at_least: k}
    "radio_call": "never",       # never | always | {escorts_at_least: k}
    "so": "intel",               # preset name or dict {order, reserve, rr_min_stress}
    "air_search_choice": "most_targets",  # most_targets | fewest_escorts
    "mission": {"abort_band": "shaken", "salvo": 4, "keep_torpedoes": 0},
    "raider": {"weapons": "gun_first", "keep_torpedoes": 0},
    "tactical": {},              # the engagement policy (docs/models/uboat_leader.md §4.1) + start
}
PARAM_KEYS = ("campaign", "duration", "fleet", "policy", "max_turns", "max_rounds")
BOAT_KEYS = ("id", "level", "ready", "stored", "advanced", "mines", "missions", "port", "policy")
BOAT_POLICY_KEYS = ("patrol", "endurance", "order")  # C§6 policies a boat may have of its own
MISSION_OPTION = {"mine": "mine_laying", "attack": "attack", "raider": "raider"}
BANDS = ("okay", "shaken", "unfit")


# --------------------------------------------------------------------------- data
def load_campaign_data(folder=None) -> dict:
    """All game data (wrappers intact): the engagement data (``data/*.yaml``, ``campaigns``)
    plus ``campaign_rules``, ``events`` and ``campaign_maps: {stem: map}`` from
    ``data/campaign/``."""
    root = folder or DEFAULT_DIR
    data = E.load_data(root)
    cdir = os.path.join(root, "data", "campaign")
    with open(os.path.join(cdir, "rules.yaml"), encoding="utf-8") as fh:
        data.update(yaml.safe_load(fh))
    with open(os.path.join(cdir, "events.yaml"), encoding="utf-8") as fh:
        data.update(yaml.safe_load(fh))
    data["campaign_maps"] = {}
    for f in sorted(glob.glob(os.path.join(cdir, "map_*.yaml"))):
        with open(f, encoding="utf-8") as fh:
            stem = os.path.splitext(os.path.basename(f))[0][len("map_"):]
            data["campaign_maps"][stem] = yaml.safe_load(fh)["campaign_map"]
    return data


def split_rules(rules) -> tuple[dict, dict]:
    """(campaign options, engagement options), defaults filled, unknown names refused."""
    rules = dict(rules or {})
    camp = {}
    for name, (default, values) in CAMPAIGN_RULE_OPTIONS.items():
        v = rules.pop(name, default)
        if v not in values:
            raise ValueError(f"rules.{name}: {v!r} not in {values}")
        camp[name] = v
    return camp, E._rules(rules)


def _merge(default, given, where):
    if isinstance(default, dict):
        out = dict(default)
        if given is None:
            return out
        if not isinstance(given, dict):
            raise ValueError(f"{where}: expected a mapping")
        E._check_keys(given, default, where)
        out.update(given)
        return out
    return default if given is None else given


def _preset(presets, given, where):
    if isinstance(given, str):
        if given not in presets:
            raise ValueError(f"{where}: {given!r} not in {sorted(presets)}")
        return dict(presets[given])
    base = dict(presets[next(iter(presets))])
    E._check_keys(given, base, where)
    base.update(given)
    return base


def _ym(s):
    y, m = s.split("-")
    return int(y), int(m)


def service_fits(service: str, period: dict) -> bool:
    """§2.4: a U-boat fits a campaign if its years in service overlap the campaign period."""
    a, b = service.split("..")
    return _ym(a) <= _ym(period["end"]) and _ym(b) >= _ym(period["start"])


# --------------------------------------------------------------------------- map
class CampaignMap:
    """The campaign map (C§2): Areas, adjacency, ports, shortest paths per U-boat class."""

    def __init__(self, m):
        self.areas = m["areas"]
        self.names = [a["name"] for a in self.areas]
        self.index = {n: i for i, n in enumerate(self.names)}
        self.kind = [a["kind"] for a in self.areas]
        self.adj = [sorted(self.index[b] for b in a["adjacent"]) for a in self.areas]
        for i, a in enumerate(self.adj):
            for b in a:
                if i not in self.adj[b]:
                    raise ValueError(f"map: {self.names[i]} -> {self.names[b]} is not symmetric")
        self.ports = [i for i, k in enumerate(self.kind) if k == "port"]
        self.seas = [i for i, k in enumerate(self.kind) if k == "sea"]
        self.boxes = {}  # (area, type) -> box
        for i, a in enumerate(self.areas):
            for box in a.get("boxes") or []:
                self.boxes[(i, box["type"])] = box

    def barred(self, area, cls):
        return cls in (self.areas[area].get("barred_classes") or [])

    def dist_to(self, dest, cls):
        """BFS steps from every Area to ``dest`` for a boat of class ``cls``: barred Areas
        are never entered, a Port box is entered only as the destination (entering a port
        ends the move, §5), the Channel may be crossed. None = unreachable."""
        dist = [None] * len(self.names)
        dist[dest] = 0
        ring = [dest]
        k = 0
        while ring:
            k += 1
            nxt = []
            for a in ring:
                if self.kind[a] == "port" and a != dest:
                    continue  # nothing passes through a port
                for b in self.adj[a]:
                    if dist[b] is None and not self.barred(b, cls):
                        dist[b] = k
                        nxt.append(b)
            ring = nxt
        return dist

    def enterable(self, b, dest, cls):
        return not self.barred(b, cls) and (self.kind[b] != "port" or b == dest)

    def step_cost(self, b, route):
        """Cost of entering Area b: (Event cards, Areas) or (Areas, Event cards)."""
        ev = 0 if self.kind[b] == "port" else self.areas[b]["move_events"]
        return (ev, 1) if route == "fewest_events" else (1, ev)

    def route_cost(self, dest, cls, route):
        """cost[a] = the least total step cost of the Areas entered from a to ``dest``
        (dest included; C§4.3), lexicographic tuples; nothing passes through a Port box or
        a barred Area. Dijkstra from dest. None = unreachable."""
        cost = [None] * len(self.names)
        cost[dest] = (0, 0)
        todo = {dest}
        done = set()
        while todo:
            b = min(todo, key=lambda x: (cost[x], x))
            todo.discard(b)
            done.add(b)
            if b != dest and not self.enterable(b, dest, cls):
                continue
            sc = self.step_cost(b, route)
            for a in self.adj[b]:
                if a in done:
                    continue
                c = (cost[b][0] + sc[0], cost[b][1] + sc[1])
                if cost[a] is None or c < cost[a]:
                    cost[a] = c
                    todo.add(a)
        return cost

    def next_step(self, area, dest, cls, route="fewest_events"):
        """The enterable neighbour n minimising cost(entering n) + cost(n -> dest), ties:
        lowest index (C§4.3)."""
        cost = self.route_cost(dest, cls, route)
        best = None
        for n in self.adj[area]:
            if not self.enterable(n, dest, cls) or cost[n] is None:
                continue
            sc = self.step_cost(n, route)
            c = (sc[0] + cost[n][0], sc[1] + cost[n][1])
            if best is None or c < best[0]:
                best = (c, n)
        return None if best is None else best[1]

    def nearest_port(self, area, cls):
        best = None
        for p in self.ports:
            d = self.dist_to(p, cls)[area]
            if d is not None and (best is None or d < best[0]):
                best = (d, p)
        return None if best is None else best[1]


def contact_count(roll, table):
    """§6.2 / G5: contacts = value of the last [min_roll, contacts] row with min_roll <= roll."""
    return E.contact_count(roll, table)


def expected_contacts(table, modifier=0):
    return sum(contact_count(r + modifier, table) for r in range(1, 11)) / 10


def mine_vp(vp_table, mines):
    """Mine-laying box (§4, G7): VP of the last row whose ``mines`` <= mines laid."""
    vp = 0
    for row in sorted(vp_table, key=lambda r: r["mines"]):
        if mines >= row["mines"]:
            vp = row["vp"]
    return vp


def success_level(vp, thresholds: dict):
    """C§8: the last level (by VP total) whose total <= vp; None below the lowest."""
    lvl = None
    for name, t in sorted(thresholds.items(), key=lambda kv: kv[1]):
        if vp >= t:
            lvl = name
    return lvl


def choose_torpedo(b, escort, rule, module):
    """G19 placeholder (C§7.6): the torpedo fired at a target is a T5 (escort) / FAT (other
    ship) while the boat has one, else a normal one, else the other advanced type. Removes
    the advanced counter used and returns its hit bonus (0 under ``as_normal``). Called before
    the torpedo leaves the boat's Ready/Stored count."""
    normal = b["ready"] + b["stored"] - b["fat"] - b["t5"]
    kind = "normal"
    for k in (("t5", "normal", "fat") if escort else ("fat", "normal", "t5")):
        if (normal if k == "normal" else b[k]) > 0:
            kind = k
            break
    if kind != "normal":
        b[kind] -= 1
    if rule != "placeholder_bonus":
        return 0
    if kind == "fat" and not escort:
        return module["fat_bonus"]
    if kind == "t5" and escort:
        return module["t5_bonus"]
    return 0


# --------------------------------------------------------------------------- engagement bridge
class CampaignEngagement(E.Engagement):
    """The issue-6 engagement oracle with the campaign's boat state (torpedoes, ammunition,
    advanced torpedoes) and per-boat credit of VP / XP (C§7.4)."""

    def setup_boats(self, states, adv_rule, adv_module):
        for b, st in zip(self.boats, states):
            b["ready"], b["stored"], b["tubes"], b["ammo"] = st["ready"], st["stored"], st["tubes"], st["ammo"]
            b["fat"], b["t5"] = st["fat"], st["t5"]
            b["vp_gain"] = b["xp_gain"] = 0
        self.adv_rule, self.adv_module = adv_rule, adv_module

    def uboat_attack(self, b):  # as E.Engagement.uboat_attack, plus the advanced-torpedo bonus
        if not b["on"] or b["silent"] or self.band(b) == "unfit":
            return
        row = self.row(b)
        trm, grm = self.ua["torpedo_range_mod"], self.ua["gun_range_mod"]
        cands = [s for s in self.ships if self.eligible(s) and s["revealed"]]
        tor = [s for s in cands if s["card"]["torpedo"] is not None and self.D(b["area"], s["area"]) < len(trm)]
        if b["ready"] > 0 and tor:
            t = self.pick(b, tor)
            n = min(int(self.pol["salvo"]), b["ready"])
            self.m["torpedoes_used"] += n
            b["attacked_this_round"] = True
            mod = row["ts"] + trm[self.D(b["area"], t["area"])]
            sunk = False
            for _ in range(n):
                bonus = choose_torpedo(b, t["escort"], self.adv_rule, self.adv_module)
                b["ready"] -= 1
                if not sunk:  # after a sinking the rest of the salvo is spent (issue-6 spec §5.1)
                    sunk = self._hit_and_damage(b, t, mod + bonus, t["card"]["torpedo"])
            return
        gun = [s for s in cands if s["card"]["gun"] is not None and self.D(b["area"], s["area"]) < len(grm)]
        if b["surfaced"] and b["ammo"] > 0 and gun:
            t = self.pick(b, gun)
            b["ammo"] -= 1
            b["attacked_this_round"] = True
            self._hit_and_damage(b, t, row["gs"] + grm[self.D(b["area"], t["area"])], t["card"]["gun"])

    def _hit_and_damage(self, b, t, mod, to_hit):
        vp0, xp0 = self.m["vp"], self.m["xp"]
        sunk = super()._hit_and_damage(b, t, mod, to_hit)
        b["vp_gain"] += self.m["vp"] - vp0
        b["xp_gain"] += self.m["xp"] - xp0
        return sunk


# --------------------------------------------------------------------------- campaign
class Campaign:
    """One campaign trial (C§9 pseudo-code). Plain dict state; slow on purpose."""

    def __init__(self, params, rules, data, rng, stacked=None):
        self.R, self.ER = split_rules(rules)
        self.rng = rng
        self.data = data
        p = dict(params or {})
        E._check_keys(p, PARAM_KEYS, "params")
        stem = p.get("campaign", "comienza_la_batalla")
        if stem not in data["campaigns"]:
            raise ValueError(f"params.campaign: no sheet {stem!r}")
        self.sheet = sheet = data["campaigns"][stem]
        self.map = CampaignMap(data["campaign_maps"][sheet["map"]])
        self.cr = data["campaign_rules"]
        self.duration = p.get("duration", "short")
        dur = sheet["durations"][self.duration]
        self.patrol_limit = dur["patrols"]
        self.so_total = dur["so"]
        self.max_turns = int(p.get("max_turns", 200))
        self.max_rounds = int(p.get("max_rounds", 20))
        self.levels = dict(sheet["vp_thresholds"])
        # policies (C§6)
        pol = dict(p.get("policy") or {})
        E._check_keys(pol, POLICY_DEFAULTS, "params.policy")
        self.pol = {k: pol.get(k, v) for k, v in POLICY_DEFAULTS.items()}
        self.endurance = _preset(ENDURANCE, self.pol["endurance"], "params.policy.endurance")
        self.so_pol = _preset(SO_PRESETS, self.pol["so"], "params.policy.so")
        if "loadout" not in self.so_pol["order"]:  # the boats' loadouts first unless placed (C§4.1)
            self.so_pol["order"] = ["loadout"] + list(self.so_pol["order"])
        self.every_segment = self.R["so_purchases"] == "every_strategic_segment"
        self.mission_pol = _merge(POLICY_DEFAULTS["mission"], pol.get("mission"), "params.policy.mission")
        self.raider_pol = _merge(POLICY_DEFAULTS["raider"], pol.get("raider"), "params.policy.raider")
        tac = dict(self.pol["tactical"] or {})
        self.tac_start = tac.pop("start", "L4")
        self.tac_policy = dict(E.POLICY_DEFAULTS)
        E._check_keys(tac, E.POLICY_DEFAULTS, "params.policy.tactical")
        self.tac_policy.update(tac)
        # wolfpack notes: the sheet's override the data's (§6.5, G4)
        self.wp = dict(data["wolfpack"])
        self.wp.update(sheet.get("wolfpack") or {})
        # decks (§2.3): the Event and Convoy decks persist through the campaign
        stacked = stacked or {}
        ev = data["events"]
        self.split_year = ev["split_year"]
        cards = [c for c in ev["cards"] for _ in range(c["count"])]
        self.events = E.Deck(stacked.get("events", cards), rng, shuffle="events" not in stacked)
        removed = set(sheet.get("removed_convoys") or [])
        conv = [c for c in data["convoys"] if c["card"] not in removed]
        self.convoy_by_card = {c["card"]: c for c in conv}
        self.convoys = E.Deck(stacked.get("convoys", [c["card"] for c in conv]), rng,
                              shuffle="convoys" not in stacked)
        self.stacked_naval = stacked.get("naval")
        self.tactics_in_use = bool(sheet["tactics_in_use"])
        # fleet (§2.4, C§3.2)
        self.roster = {b["id"]: b for b in data["uboats"]}
        self.boats = [self._make_boat(i, b) for i, b in enumerate(p.get("fleet") or [])]
        if not self.boats:
            raise ValueError("params.fleet: at least one U-boat (§2.4)")
        if len({b["id"] for b in self.boats}) != len(self.boats):
            raise ValueError("params.fleet: a U-boat may be selected only once (§2.4)")
        # C§6: the order in which the boats move, fight and buy ('uno por uno', l.240, l.246)
        self.acting = sorted(self.boats, key=lambda b: (b["order"], b["i"]))
        cost = sum(b["cost"] if not self.every_segment else b["boat_cost"] for b in self.boats)
        if cost > self.so_total:
            raise ValueError(f"params.fleet: costs {cost} SO, the sheet gives {self.so_total}")
        self.so = self.so_total - cost
        self.so_bought = {k: 0 for k in sheet["so_options"]}
        self.m = self._metrics0()
        self.turn = 0
        self.warnings, self.warned = {}, set()
        self.counters = self.counters_active = {k: set() for k in SO_COUNTER_OPTIONS}
        self.trace = []  # (turn, boat id, what, detail) for tests

    # ---- setup
    def _make_boat(self, i, b):
        E._check_keys(b, BOAT_KEYS, f"params.fleet[{i}]")
        if b["id"] not in self.roster:
            raise ValueError(f"params.fleet[{i}]: unknown U-boat {b['id']!r}")
        card = self.roster[b["id"]]
        level = LEVELS.index(b.get("level", "trained"))
        lvl = card["levels"][LEVELS[level]]
        cls = card["class"]
        allowed = self.sheet["allowed_classes"]
        if allowed is not None and cls not in allowed:
            raise ValueError(f"params.fleet[{i}]: class {cls} not allowed in this campaign ({allowed})")
        if not service_fits(card["service"], self.sheet["period"]):
            raise ValueError(f"params.fleet[{i}]: {b['id']} ({card['service']}) does not serve in {self.sheet['period']}")
        ready = int(b.get("ready", lvl["okay"]["ready"]))
        stored = int(b.get("stored", lvl["okay"]["stored"]))
        if not (0 <= ready <= lvl["okay"]["ready"] and 0 <= stored <= lvl["okay"]["stored"]):
            raise ValueError(f"params.fleet[{i}]: ready/stored within the card's {lvl['okay']['ready']}/{lvl['okay']['stored']}")
        adv = dict(b.get("advanced") or {})
        E._check_keys(adv, ("fat", "t5"), f"params.fleet[{i}].advanced")
        fat, t5, mines = int(adv.get("fat", 0)), int(adv.get("t5", 0)), int(b.get("mines", 0))
        if min(fat, t5, mines) < 0 or fat + t5 + mines > ready + stored:
            raise ValueError(f"params.fleet[{i}]: advanced + mines must fit in ready + stored")
        missions = (["mine"] if mines > 0 else []) + list(b.get("missions") or [])
        for ms in missions:
            if ms not in ("mine", "attack", "raider"):
                raise ValueError(f"params.fleet[{i}].missions: {ms!r}")
            if not any(t == ms and not self.map.barred(a, cls) for (a, t) in self.map.boxes):
                raise ValueError(f"params.fleet[{i}]: no {ms} box this boat can reach on the map")
        if "mine" in (b.get("missions") or []):
            raise ValueError(f"params.fleet[{i}]: a mine-laying mission is given by 'mines: n' (§4)")
        so_opt = self.sheet["so_options"]
        key = {"mine": "mine_laying", "attack": "attack", "raider": "raider"}
        cost = lvl["cost"] + self.sheet["advanced_torpedo_cost"] * (fat + t5) + \
            sum(so_opt[key[ms]]["cost"] for ms in missions)
        own = dict(b.get("policy") or {})
        E._check_keys(own, BOAT_POLICY_KEYS, f"params.fleet[{i}].policy")
        endurance = _preset(ENDURANCE, own["endurance"], f"params.fleet[{i}].policy.endurance") \
            if own.get("endurance") is not None else None  # None: the shared self.endurance
        port = self.map.index[b["port"]] if b.get("port") else self.map.ports[0]
        if self.map.kind[port] != "port":
            raise ValueError(f"params.fleet[{i}].port: {b['port']} is not a Port box")
        cls_data = self.data["uboat_classes"][cls]
        ammo = cls_data["ammunition"] if cls_data["deck_gun"] else 0
        boat = {"i": i, "id": b["id"], "card": card, "cls": cls, "level": level,
                "seeker": "seeker" in (card.get("abilities") or []),
                "cool": "cool" in (card.get("abilities") or []),
                "load": {"ready": ready, "stored": stored, "ammo": ammo},
                "ready": ready, "stored": stored, "tubes": ready, "ammo": ammo,
                "fat": fat, "t5": t5, "mines": mines, "missions": missions, "cost": cost, "boat_cost": lvl["cost"],
                "plan": {"fat": fat, "t5": t5, "mines": mines, "missions": list(missions)},
                "endurance": endurance, "patrol": own.get("patrol") if own.get("patrol") is not None else None,
                "order": int(own["order"]) if own.get("order") is not None else i,
                "area": port, "search": False, "stress": 0, "xp": 0, "vp": 0, "xp_total": 0,
                "patrols": 0, "vp_at_patrol_start": 0, "retired": False, "lost": False, "turns_at_sea": 0,
                "attacked": False, "attacked_now": False, "searched": False, "contact_bonus": 0,
                "dest": None}
        if self.R["so_purchases"] == "every_strategic_segment":  # bought at the Strategic Segments (l.238)
            boat["fat"] = boat["t5"] = boat["mines"] = 0
            boat["missions"] = []
        self.load_out(boat)
        return boat

    def load_out(self, b):
        """Full load in port (setup and Refit resupply, G21 placeholder): the loadout's
        torpedoes and ammunition; mines of a pending mine-laying mission replace Stored
        torpedoes first, then Ready (C§3.2). Advanced counters are not replaced."""
        b["ready"], b["stored"], b["ammo"] = b["load"]["ready"], b["load"]["stored"], b["load"]["ammo"]
        if "mine" not in b["missions"]:
            b["mines"] = 0
        st = min(b["mines"], b["stored"])
        b["stored"] -= st
        b["ready"] -= b["mines"] - st
        b["fat"] = min(b["fat"], b["ready"] + b["stored"])
        b["t5"] = min(b["t5"], b["ready"] + b["stored"] - b["fat"])

    def _metrics0(self):
        m = {k: 0 for k in ("vp", "xp", "boats_lost", "patrols", "turns", "p_turn_cap", "so_spent", "so_left",
                            "contacts", "attacks", "ships_sunk", "mission_vp", "mine_vp", "attack_vp",
                            "raider_vp", "missions_failed")}
        for name in self.levels:
            m[f"p_level_{name}"] = 0
        for k in range(1, self.patrol_limit + 1):   # per patrol: the boats' VP on their k-th patrol, boats lost on it
            m[f"patrol_vp.{k}"] = 0
            m[f"patrol_lost.{k}"] = 0
        return m

    # ---- small helpers
    def lvl(self, b):
        return b["card"]["levels"][LEVELS[b["level"]]]

    def band(self, b):
        bands = self.lvl(b)["bands"]
        return E.stress_band(b["stress"], bands["okay_max"], bands["shaken_max"])

    def row(self, b):
        return self.lvl(b)["okay"] if self.band(b) == "okay" else self.lvl(b)["shaken"]

    def active(self, b):
        return not b["retired"] and not b["lost"]

    def in_port(self, b):
        return self.map.kind[b["area"]] == "port"

    def at_sea(self, b):
        return self.active(b) and not self.in_port(b)

    def year(self):
        if self.R["calendar"] == "fixed":
            return self.sheet["calendar_year"]
        y, mth = _ym(self.sheet["period"]["start"])
        months = (mth - 1) + (self.turn - 1) * self.cr["calendar_module"]["months_per_turn"]
        return y + months // 12

    def add_stress(self, b, n):
        b["stress"] = max(0, b["stress"] + n)

    def spend(self, option, n=1):
        cost = self.sheet["so_options"][option]["cost"] * n
        self.so -= cost
        self.m["so_spent"] += cost
        self.so_bought[option] += n

    def can_buy(self, option, n=1, reserve=0):
        o = self.sheet["so_options"][option]
        if o["max"] != "U" and self.so_bought[option] + n > o["max"]:
            return False
        return self.so - o["cost"] * n >= reserve

    # ---- events (§5, C§4.4)
    def draw_event(self, b):
        """Draw and resolve one Event card for boat b; True if it made b Unfit."""
        card = self.events.draw()
        half = card["early"] if self.year() < self.split_year else card["late"]
        before = self.band(b)
        t = half["type"]
        if t == "stress":
            self.add_stress(b, half["n"])
        elif t == "stress_roll":
            if E.d10(self.rng) > self.row(b)["ev"]:
                self.add_stress(b, half["n"])
        elif t == "contact":
            b["contact_bonus"] += half["n"]
        self.events.discard(card)
        self.trace.append((self.turn, b["id"], "event", card["name"]))
        return before != "unfit" and self.band(b) == "unfit"

    def draw_events(self, b, n):
        """Draw n cards one at a time; stop early if one makes the boat Unfit. True if Unfit."""
        for _ in range(n):
            if self.draw_event(b):
                return True
        return False

    # ---- policies (C§6)
    def patrol_area(self, b):
        """Policy 'patrol': the sea Area the boat heads for when it has no mission or return."""
        pol = b["patrol"] if b["patrol"] is not None else self.pol["patrol"]
        port = b["home"] if "home" in b else b["area"]
        cands = [a for a in self.map.seas if not self.map.barred(a, b["cls"])
                 and self.map.dist_to(a, b["cls"])[b["area"]] is not None]
        if isinstance(pol, dict):
            a = self.map.index[pol["area"]]
            if a not in cands:
                raise ValueError(f"params.policy.patrol.area: {pol['area']} not reachable for {b['id']}")
            return a
        dist = {a: self.map.dist_to(a, b["cls"])[port] for a in cands}
        if pol == "nearest":
            return min(cands, key=lambda a: (dist[a], a))
        mod = self.cr["contact_modifiers"]["seeker"] if b["seeker"] else 0
        ranked = sorted(cands, key=lambda a: (-expected_contacts(self.map.areas[a]["contact_table"], mod), dist[a], a))
        if pol == "best":
            return ranked[0]
        if pol == "spread":
            k = sum(1 for o in self.boats if o["i"] < b["i"])
            return ranked[k % len(ranked)]
        raise ValueError(f"params.policy.patrol: {pol!r}")

    def mission_box_area(self, b, ms):
        """The nearest Area (fewest steps, then lowest index) holding a box of type ms."""
        best = None
        for (a, t) in sorted(self.map.boxes):
            if t != ms or self.map.barred(a, b["cls"]):
                continue
            d = self.map.dist_to(a, b["cls"])[b["area"]]
            if d is not None and (best is None or d < best[0]):
                best = (d, a)
        return best[1]

    def boat_endurance(self, b):
        """C§6: the boat's own endurance policy (fleet[i].policy.endurance), else the shared one."""
        return b["endurance"] if b["endurance"] is not None else self.endurance

    def should_return(self, b):
        e = self.boat_endurance(b)
        band = BANDS.index(self.band(b))
        return (band >= BANDS.index(e["return_band"]) or b["ready"] + b["stored"] <= e["min_torpedoes"]
                or b["turns_at_sea"] >= e["max_turns_at_sea"])

    def may_sail(self, b):
        if b["patrols"] >= self.patrol_limit or self.band(b) == "unfit":
            return False
        sb = self.boat_endurance(b)["sail_band"]
        if sb == "rested":
            return b["stress"] == 0
        return BANDS.index(self.band(b)) <= BANDS.index(sb)

    def plan(self, b):
        """Strategic Segment plan: (destination area, mission type or None) for this turn."""
        if self.in_port(b):
            if not self.may_sail(b):
                return b["area"], None
        elif self.should_return(b):
            return self.map.nearest_port(b["area"], b["cls"]), None
        if b["missions"]:
            ms = b["missions"][0]
            return self.mission_box_area(b, ms), ms
        return self.patrol_area(b), None

    # ---- 1. Strategic Segment (§4)
    def strategic(self):
        for b in self.boats:
            if self.active(b):
                if self.in_port(b):
                    b["home"] = b["area"]
                b["dest"], b["mission_now"] = self.plan(b)
        self.counters = {k: set() for k in SO_COUNTER_OPTIONS}
        sp = self.so_pol
        for opt in sp["order"]:
            if opt == "loadout":
                if self.every_segment:
                    for b in self.acting:
                        if not self.active(b):
                            continue
                        if self.in_port(b):
                            if b["dest"] != b["area"]:
                                self.buy_loadout(b, sp["reserve"])
                                b["dest"], b["mission_now"] = self.plan(b)
                        elif sp.get("missions_at_sea") and not b["missions"] and self.band(b) != "unfit":
                            if self.buy_missions_at_sea(b, sp["reserve"]):
                                b["dest"], b["mission_now"] = self.plan(b)
                continue
            if opt == "priority_rr":
                tired = [b for b in self.boats if self.active(b) and self.in_port(b)
                         and b["stress"] >= sp["rr_min_stress"]]
                if tired and self.can_buy("priority_rr", 1, sp["reserve"]):
                    self.spend("priority_rr")
                    for b in self.boats:
                        if self.active(b) and self.in_port(b):
                            self.add_stress(b, self.cr["priority_rr_stress"])
                            b["dest"], b["mission_now"] = self.plan(b)  # before Operations (l.271)
                    self.trace.append((self.turn, None, "so", "priority_rr"))
                continue
            if opt not in SO_COUNTER_OPTIONS:
                raise ValueError(f"params.policy.so.order: {opt!r}")
            heads = {}
            for b in self.boats:
                if self.active(b) and b["mission_now"] is None and self.map.kind[b["dest"]] == "sea":
                    heads[b["dest"]] = heads.get(b["dest"], 0) + 1
            if not heads:
                continue
            area = min(heads, key=lambda a: (-heads[a], a))
            if area not in self.counters[opt] and self.can_buy(opt, 1, sp["reserve"]):
                self.spend(opt)
                self.counters[opt].add(area)
                self.trace.append((self.turn, None, "so", f"{opt}@{self.map.names[area]}"))
        if self.R["counter_duration"] == "strategic_only":  # A15 (b): the counters lapse here
            self.counters_active = {k: set() for k in SO_COUNTER_OPTIONS}
        else:
            self.counters_active = self.counters

    def buy_missions_at_sea(self, b, reserve):
        """policy.so.missions_at_sea: a boat at sea, not Unfit, with no mission pending buys its entry's
        Attack and Raider missions again ('cualquier U-Boat que no esté Incapacitado', l.296, l.311);
        mine-laying is bought in port only (l.288). Whether it bought one."""
        bought = False
        for ms in b["plan"]["missions"]:
            if ms != "mine" and self.can_buy(MISSION_OPTION[ms], 1, reserve):
                self.spend(MISSION_OPTION[ms])
                b["missions"].append(ms)
                self.trace.append((self.turn, b["id"], "so at sea", ms))
                bought = True
        return bought

    def buy_loadout(self, b, reserve):
        """so_purchases: every_strategic_segment (l.238): a boat in a Port box that sails this turn buys
        its fleet entry again -- with no mission pending, each mission in order (l.285; mine-laying only
        in port, l.288: its mines are loaded now), each within cost and max; then FAT, then T5 up to
        the entry's counts at ½ SO each, in port only (l.273, l.275), each replacing a normal torpedo."""
        plan = b["plan"]
        if not b["missions"]:
            for ms in plan["missions"]:
                if self.can_buy(MISSION_OPTION[ms], 1, reserve):
                    self.spend(MISSION_OPTION[ms])
                    b["missions"].append(ms)
                    self.trace.append((self.turn, b["id"], "so", ms))
                    if ms == "mine":
                        b["mines"] = plan["mines"]
                        st = min(b["mines"], b["stored"])
                        b["stored"] -= st
                        b["ready"] -= b["mines"] - st
                        b["fat"] = min(b["fat"], b["ready"] + b["stored"])
                        b["t5"] = min(b["t5"], b["ready"] + b["stored"] - b["fat"])
        cost = self.sheet["advanced_torpedo_cost"]
        for kind in ("fat", "t5"):
            while (b[kind] < plan[kind] and b["ready"] + b["stored"] - b["fat"] - b["t5"] > 0
                   and self.so - cost >= reserve):
                self.so -= cost
                self.m["so_spent"] += cost
                b[kind] += 1

    # ---- 2. Operations Segment (§5)
    def enter_port(self, b):
        self.m[f"patrol_vp.{b['patrols'] + 1}"] += b["vp"] - b["vp_at_patrol_start"]
        b["vp_at_patrol_start"] = b["vp"]
        b["patrols"] += 1
        self.m["patrols"] += 1
        b["turns_at_sea"] = 0
        b["search"] = False
        b["attacked"] = b["attacked"] and self.R["attacked_duration"] != "until_port"
        if b["patrols"] >= self.patrol_limit:
            b["retired"] = True  # Refit 'Límites de Patrulla': removed from the campaign
        self.trace.append((self.turn, b["id"], "port", self.map.names[b["area"]]))

    def move_to(self, b, dest, limit=None):
        """Move Area by Area toward dest drawing each entered Area's Movement value (§5).
        Returns 'arrived', 'unfit' (stopped in a Search box) or 'stopped' (limit reached)."""
        steps = 0
        prev = b["area"]
        while b["area"] != dest:
            if limit is not None and steps >= limit:
                return "stopped"
            nxt = self.map.next_step(b["area"], dest, b["cls"], self.pol["route"])
            prev, b["area"] = b["area"], nxt
            steps += 1
            self.trace.append((self.turn, b["id"], "move", self.map.names[nxt]))
            if self.map.kind[nxt] == "port":
                self.enter_port(b)
                return "arrived"
            if self.draw_events(b, self.map.areas[nxt]["move_events"]):
                if self.map.kind[nxt] == "channel":  # never end in the Channel (§5)
                    b["area"] = prev
                b["search"] = True
                return "unfit"
        if self.map.kind[b["area"]] == "channel":  # a limited move must not stop there
            raise AssertionError("ended in the Channel")
        return "arrived"

    def operations(self):
        limit = 1 if self.R["map_movement"] == "one_area" else None
        for b in self.acting:
            if not self.at_sea(b) and not (self.active(b) and self.in_port(b)):
                continue
            if self.band(b) == "unfit" and self.at_sea(b):
                if self.R["unfit_return"] == "operations":  # A8 (a)
                    self.move_to(b, self.map.nearest_port(b["area"], b["cls"]), limit)
                else:
                    b["search"] = True  # waits for the Tactical Segment
                continue
            dest, ms = b["dest"], b["mission_now"]
            if dest == b["area"] and ms is None:
                if not self.in_port(b):  # not moving: the Patrol value (§5)
                    if self.draw_events(b, self.map.areas[b["area"]]["patrol_events"]):
                        b["search"] = True
                continue
            lim = limit
            if limit is not None and dest != b["area"] and \
                    self.map.kind[self.map.next_step(b["area"], dest, b["cls"], self.pol["route"])] == "channel":
                lim = 2  # A19 (b): a one-Area move may not end in the Channel: cross it
            res = self.move_to(b, dest, lim) if dest != b["area"] else "arrived"
            if ms is not None and res == "unfit":  # l.292: Unfit on the way -> the mission fails
                self._mission_failed(b, ms)
            elif res == "arrived" and ms is not None and b["area"] == dest:
                self.resolve_mission(b, ms)

    # ---- missions (§4)
    def resolve_mission(self, b, ms):
        box = self.map.boxes[(b["area"], ms)]
        self.trace.append((self.turn, b["id"], "box", ms))
        extra = self.map.areas[b["area"]]["move_events"] if self.R["mission_box_events"] == "box_plus_move" else 0
        if ms == "mine":
            n = self.cr["mine_box_events"] if self.R["mine_box_events"] == "one" else box["events"]
            unfit = self.draw_events(b, extra + n)
            if unfit and self.R["mine_unfit"] == "fails":
                return self._mission_failed(b, ms)
            vp = mine_vp(box["vp_table"], b["mines"])
            b["mines"] = 0
            self._mission_vp(b, "mine_vp", vp, 0)
        elif ms == "attack":
            if self.draw_events(b, extra):
                return self._mission_failed(b, ms)
            for _ in range(box["events"]):
                if BANDS.index(self.band(b)) >= BANDS.index(self.mission_pol["abort_band"]):
                    self.trace.append((self.turn, b["id"], "abort", ms))
                    b["search"] = True  # the counter stays with the boat (§4)
                    return
                if self.draw_event(b):
                    return self._mission_failed(b, ms)
            self.attack_box(b, box)
        else:  # raider
            if self.draw_events(b, extra + box["events"]):
                return self._mission_failed(b, ms)
            self.raider_box(b)
        b["missions"].pop(0)
        b["search"] = True

    def _mission_failed(self, b, ms):
        self.trace.append((self.turn, b["id"], "failed", ms))
        self.m["missions_failed"] += 1
        b["missions"].pop(0)
        b["search"] = True

    def _mission_vp(self, b, key, vp, xp):
        self.m[key] += vp
        self.m["mission_vp"] += vp
        self.credit(b, vp, xp)

    def credit(self, b, vp, xp):
        b["vp"] += vp
        b["xp"] += xp
        b["xp_total"] += xp
        self.m["vp"] += vp
        self.m["xp"] += xp

    def torpedo_type(self, b, escort):
        return choose_torpedo(b, escort, self.R["advanced_torpedoes"], self.cr["advanced_torpedo_module"])

    def fire_one(self, b):
        """Spend one torpedo, Ready first then Stored."""
        if b["ready"] > 0:
            b["ready"] -= 1
        else:
            b["stored"] -= 1

    def torpedo_round(self, b, targets, torpedoes, salvo):
        """One round of torpedo attacks at range 0 (C§7.5): salvos of ``salvo`` at the
        unsunk target of highest VP (ties: lowest position); a sinking ends its salvo (the
        rest are spent). Uses the placeholder hit and damage module of the engagement."""
        ua = self.data["combat"]["uboat_attack_module"]
        bonus_heavy = self.data["combat"]["heavy_damage_attack_bonus"]
        mod = self.row(b)["ts"] + ua["torpedo_range_mod"][self.cr["mission_attack_range"]]
        fired = 0
        while torpedoes > 0:
            live = [t for t in targets if not t["sunk"] and t["card"]["torpedo"] is not None]
            if not live:
                break
            t = min(live, key=lambda t: (-t["card"]["vp"], t["pos"]))
            n = min(salvo, torpedoes)
            torpedoes -= n
            sunk = False
            for _ in range(n):
                adv = self.torpedo_type(b, t["escort"])
                self.fire_one(b)
                fired += 1
                if sunk:
                    continue  # spent
                roll = E.d10(self.rng) + mod + adv + (bonus_heavy if t["heavy"] else 0)
                if roll < t["card"]["torpedo"]:
                    continue
                r = E.d10(self.rng)
                tab = ua["damage_table"]
                res = next(k for k in ("light", "heavy", "sunk") if tab[k][0] <= r <= tab[k][1])
                if res == "sunk" or t["heavy"]:
                    t["sunk"] = sunk = True
                elif res == "heavy" or t["light"]:
                    t["heavy"] = 1
                    if self.ER["damage_stacking"] == "replace":
                        t["light"] = 0
                else:
                    t["light"] = 1
        return fired

    def naval_deck(self):
        cards = list(self.data["naval"])
        if self.stacked_naval is not None:
            return E.Deck([c for n in self.stacked_naval for c in cards if c["name"] == n], self.rng, shuffle=False)
        return E.Deck(cards, self.rng)

    def attack_box(self, b, box):
        deck = self.naval_deck()
        targets = []
        for k in range(box["naval_cards"]):
            c = deck.draw()
            targets.append({"pos": k, "card": c, "escort": False, "sunk": False, "light": 0, "heavy": 0})
        self.trace.append((self.turn, b["id"], "naval", [t["card"]["name"] for t in targets]))
        n = max(0, b["ready"] + b["stored"] - self.mission_pol["keep_torpedoes"])
        self.torpedo_round(b, targets, n, self.mission_pol["salvo"])
        vp = sum(t["card"]["vp"] for t in targets if t["sunk"])
        xp = sum(t["card"]["xp"] for t in targets if t["sunk"])
        self.m["ships_sunk"] += sum(t["sunk"] for t in targets)
        self._mission_vp(b, "attack_vp", vp, xp)

    def raider_box(self, b):
        """§4 Raider: up to 10 attacks, 1 ammunition or 1 torpedo each; +1 VP per roll >= 8."""
        rp = self.raider_pol
        ua = self.data["combat"]["uboat_attack_module"]
        rng0 = self.cr["mission_attack_range"]
        vp = 0
        for _ in range(self.cr["raider_max_attacks"]):
            gun_ok = b["ammo"] > 0
            torp_ok = b["ready"] + b["stored"] > rp["keep_torpedoes"]
            if rp["weapons"] == "gun_first":
                weapon = "gun" if gun_ok else ("torpedo" if torp_ok else None)
            else:
                weapon = "torpedo" if torp_ok else ("gun" if gun_ok else None)
            if weapon is None:
                break
            if weapon == "gun":
                b["ammo"] -= 1
                mod = self.row(b)["gs"] + ua["gun_range_mod"][rng0]
            else:
                adv = self.torpedo_type(b, False)
                self.fire_one(b)
                mod = self.row(b)["ts"] + ua["torpedo_range_mod"][rng0] + adv
            roll = E.d10(self.rng) + (mod if self.R["raider_roll"] == "modified" else 0)
            if roll >= self.cr["raider_success_roll"]:
                vp += self.cr["raider_vp_per_success"]
        self._mission_vp(b, "raider_vp", vp, vp if self.R["raider_xp"] == "per_vp" else 0)

    # ---- 3. Tactical Segment (§6)
    def tactical(self):
        if self.R["unfit_return"] == "tactical":  # A8 (b)
            for b in self.acting:
                if self.at_sea(b) and self.band(b) == "unfit":
                    self.move_to(b, self.map.nearest_port(b["area"], b["cls"]))
        for b in self.boats:
            b["attacked_now"] = False
            b["searched"] = False
        for b in self.acting:
            if not self.at_sea(b) or b["search"]:
                continue
            if self.band(b) == "unfit":
                b["search"] = True
                continue
            self.contact_phase(b)
            if self.R["attacked_timing"] == "end_of_boat_segment":  # l.76 at the end of b's own segment (l.351)
                for o in self.boats:
                    if o["attacked_now"] and (self.R["attacked_marker"] == "all_attackers" or not o["searched"]):
                        o["attacked"] = True
            b["search"] = True
        self.update_attacked_markers()

    def update_attacked_markers(self):
        """End of the Tactical Segment: Attacked counters (§1.5, A4, G21; C§7.7)."""
        for b in self.boats:
            if self.R["attacked_marker"] == "all_attackers":
                now = b["attacked_now"]
            else:
                now = b["attacked_now"] and not b["searched"]
            if self.R["attacked_duration"] == "one_turn":
                b["attacked"] = now
            else:
                b["attacked"] = b["attacked"] or now

    def contact_modifier(self, b):
        cm = self.cr["contact_modifiers"]
        a = b["area"]
        return (cm["intel"] * (a in self.counters_active["intelligence"]) + cm["seeker"] * b["seeker"]
                + cm["warning"] * self.warnings.get(a, 0) + cm["attacked"] * b["attacked"] + b["contact_bonus"])

    def contact_phase(self, b):
        if self.pol["attack"] == "never":
            return  # the roll is optional (§6.1)
        b["searched"] = True
        roll = E.d10(self.rng) + self.contact_modifier(b)
        n = contact_count(roll, self.map.areas[b["area"]]["contact_table"])
        self.trace.append((self.turn, b["id"], "contact_roll", (roll, n)))
        for _ in range(n):
            if not self.at_sea(b) or self.band(b) == "unfit":
                break
            card = self.draw_convoy(b)
            if card is None:
                break
            self.m["contacts"] += 1
            conv = self.convoy_by_card[card]
            if self.R["warning_placement"] == "first_card":
                self.place_warning(b)
            if self.decide_attack(conv):
                if self.R["warning_placement"] == "attack_only":
                    self.place_warning(b)
                self.fight(b, conv)
            else:  # withdraw: straight to the Post-Combat Phase (l.370): Stress, then reload
                self.withdraw_post_combat(b)
            self.convoys.discard(card)

    def withdraw_post_combat(self, b):
        if self.ER["post_combat_stress"] == "plus_one":
            module = self.data["combat" if self.R["contact_model"] == "engagement" else "campaign_rules"]
            self.add_stress(b, module["post_combat_module"]["stress"])
        if self.R["campaign_reload"] == "post_combat_and_refit":
            self.reload(b)

    def place_warning(self, b):
        key = (b["id"], b["area"])
        if key not in self.warned:
            self.warned.add(key)
            self.warnings[b["area"]] = self.warnings.get(b["area"], 0) + 1

    def draw_convoy(self, b):
        first = self.convoys.draw()
        if first is None or b["area"] not in self.counters_active["air_search"]:
            return first
        second = self.convoys.draw()
        if second is None:
            return first
        def key(c):
            slots = self.convoy_by_card[c]["slots"]
            esc = sum(s["kind"] == "E" for s in slots)
            tgt = len(slots) - esc
            return (-tgt, esc) if self.pol["air_search_choice"] == "most_targets" else (esc, -tgt)
        keep, drop = (first, second) if key(first) <= key(second) else (second, first)
        self.convoys.discard(drop)  # G22 placeholder: the unchosen card is discarded
        return keep

    def decide_attack(self, conv):
        pol = self.pol["attack"]
        esc = sum(s["kind"] == "E" for s in conv["slots"])
        if pol == "always":
            return True
        if pol == "no_naval":
            return conv["type"] != "naval"
        if isinstance(pol, dict):
            return esc <= pol["max_escorts"]
        raise ValueError(f"params.policy.attack: {pol!r}")

    def form_pack(self, b, conv):
        """§6.5: returns (joiners in list order, Alerted counters)."""
        pol = self.pol["wolfpack"]
        esc = sum(s["kind"] == "E" for s in conv["slots"])
        if pol == "never" or (isinstance(pol, dict) and esc < pol["escorts_at_least"]):
            return [], 0
        cands = [o for o in self.boats if o is not b and self.at_sea(o) and o["area"] == b["area"]
                 and not o["search"] and self.band(o) != "unfit"]
        if not cands:
            return [], 0
        rc = self.pol["radio_call"]
        if rc not in ("never", "always") and not isinstance(rc, dict):
            raise ValueError(f"params.policy.radio_call: {rc!r}")
        if rc == "always" or (isinstance(rc, dict) and esc >= rc["escorts_at_least"]):
            n = 1 if self.ER["radio_call_cost"] == "one_purchase" else len(cands)
            if self.can_buy("radio_call", n):
                self.spend("radio_call", n)
                self.trace.append((self.turn, b["id"], "so", "radio_call"))
                return cands, 0
        joiners, alerted = [], 0
        for o in cands:
            f = E.d10(self.rng)
            stress = f in self.wp["stress_results"]
            joins = f + (self.wp["attacked_modifier"] if o["attacked"] else 0) >= self.wp["join_min"]
            if stress and self.ER["wolfpack_stress_join"] == "stress_fails":
                joins = False
            if stress:
                self.add_stress(b, self.wp["stress_per_result"])
                alerted += self.wp["alerted_per_result"]
            if joins:
                joiners.append(o)
        return joiners, alerted

    def fight(self, b, conv):
        joiners, alerted = self.form_pack(b, conv)
        pack = [b] + joiners
        self.m["attacks"] += 1
        before = [(o["ready"] + o["stored"], o["ammo"]) for o in pack]
        if self.R["contact_model"] == "engagement":
            self.fight_engagement(pack, conv, alerted)
        else:
            self.fight_abstract(pack, conv, alerted)
        for o, (t0, a0) in zip(pack, before):
            if o["ready"] + o["stored"] < t0 or o["ammo"] < a0:
                o["attacked_now"] = True
            if not o["lost"] and self.R["campaign_reload"] == "post_combat_and_refit":
                self.reload(o)
        self.trace.append((self.turn, b["id"], "fight", (conv["card"], [o["id"] for o in pack])))

    def fight_engagement(self, pack, conv, alerted):
        params = {"convoy": conv["card"], "alerted": alerted, "max_rounds": self.max_rounds,
                  "tactics": "pool" if self.tactics_in_use else "none", "policy": self.tac_policy,
                  "uboats": [{"id": o["id"], "level": LEVELS[o["level"]], "start": self.tac_start,
                              "stress": o["stress"]} for o in pack]}
        eng = CampaignEngagement(params, self.ER, self.data, self.rng)
        eng.setup_boats(pack, self.R["advanced_torpedoes"], self.cr["advanced_torpedo_module"])
        eng.run()
        for o, eb in zip(pack, eng.boats):
            o["stress"], o["ready"], o["stored"], o["ammo"] = eb["stress"], eb["ready"], eb["stored"], eb["ammo"]
            o["fat"], o["t5"] = eb["fat"], eb["t5"]
            self.credit(o, eb["vp_gain"], eb["xp_gain"])
            if eb["sunk"]:
                self.lose(o)
        self.m["ships_sunk"] += eng.m["ships_sunk"]

    def fight_abstract(self, pack, conv, alerted):
        """C§7.5: the abstract contact model."""
        rng = self.rng
        naval = conv["type"] == "naval"
        decks = {"merchant": E.Deck(self.data["merchants"], rng), "naval": E.Deck(self.data["naval"], rng),
                 "escort": E.Deck(self.data["escorts"], rng), "fleet": E.Deck(self.data["fleet_escorts"], rng)}
        cup = None
        if self.tactics_in_use:
            cup = E.Deck(E._tactics_pool("pool", self.data), rng)
        ships = []
        for k, s in enumerate(conv["slots"]):
            deck = {"M": "merchant", "N": "naval", "E": "fleet" if naval else "escort"}[s["kind"]]
            c = decks[deck].draw()
            escort = s["kind"] == "E"
            if deck == "merchant" and c.get("misidentified"):
                c = decks["escort"].draw()
                escort = True
            ships.append({"pos": k, "card": c, "escort": escort, "sunk": False, "light": 0, "heavy": 0,
                          "chit": cup.draw() if (escort and cup is not None) else 0})
        targets = [s for s in ships if not s["escort"]]
        fired = {}
        for o in pack:  # boats in pack order; a ship is credited to the boat whose salvo sank it
            if self.band(o) == "unfit":
                fired[o["i"]] = 0
                continue
            sunk0 = [t["sunk"] for t in targets]
            fired[o["i"]] = self.torpedo_round(o, targets, o["ready"], int(self.tac_policy["salvo"]))
            new = [t for t, s0 in zip(targets, sunk0) if t["sunk"] and not s0]
            self.m["ships_sunk"] += len(new)
            self.credit(o, sum(t["card"]["vp"] for t in new), sum(t["card"]["xp"] for t in new))
        ea = self.data["combat"]["enemy_attack_module"]
        side = "submerged" if self.tac_policy["approach"] == "submerged" else "surfaced"
        for s in ships:
            if not s["escort"] or self.ER["enemy_attack"] == "none":
                continue
            for o in pack:
                if o["lost"] or fired[o["i"]] == 0:
                    continue
                for _ in range(self.cr["abstract_contact_module"]["escort_rolls_per_boat"]):
                    if E.d10(rng) + alerted + s["chit"] < s["card"]["detection"][side]:
                        continue
                    number = s["card"]["surface_attack" if side == "surfaced" else "submerged_attack"]
                    if number is None or E.d10(rng) + s["chit"] < number:
                        continue
                    self.add_stress(o, ea["hit_stress"])
                    if ea["sink_roll"]["escort"] is not None and E.d10(rng) >= ea["sink_roll"]["escort"]:
                        self.lose(o)
                        break
        if self.ER["post_combat_stress"] == "plus_one":
            for o in pack:
                if not o["lost"]:
                    self.add_stress(o, self.cr["post_combat_module"]["stress"])

    def lose(self, b):
        if not b["lost"]:
            b["lost"] = True
            self.m["boats_lost"] += 1
            self.trace.append((self.turn, b["id"], "lost", None))

    def reload(self, b):
        n = min(b["stored"], b["tubes"] - b["ready"])
        b["ready"] += n
        b["stored"] -= n

    # ---- 4. Refit Segment (§3, G21)
    def refit(self):
        for b in self.boats:
            if b["lost"]:
                continue
            promote = self.R["promotion"] == "anywhere" or (self.R["promotion"] == "in_port" and self.in_port(b))
            while promote and b["level"] < 3:
                need = self.lvl(b)["xp_next"]
                if need is None or b["xp"] < need:
                    break
                b["xp"] -= need
                b["level"] += 1
                self.trace.append((self.turn, b["id"], "promoted", LEVELS[b["level"]]))
            if b["retired"]:
                continue
            if self.in_port(b):
                self.add_stress(b, -self.map.areas[b["area"]]["refit"])
            if b["cool"] and (self.R["cool"] == "every_refit" or self.in_port(b)):
                self.add_stress(b, self.cr["cool_stress"])
            if not self.in_port(b) and b["area"] in self.counters_active["supply_ship"]:
                self.add_stress(b, self.cr["supply_ship_stress"])
            if self.in_port(b):  # resupply in port (G21 placeholder: full)
                self.load_out(b)
            elif self.R["campaign_reload"] != "port_only":
                self.reload(b)
            if self.at_sea(b):
                b["turns_at_sea"] += 1
            b["search"] = False
            b["contact_bonus"] = 0
        if self.R["warning_duration"] == "turn":
            self.warnings = {}
            self.warned = set()

    # ---- the campaign (C§9)
    def run(self):
        while any(self.active(b) for b in self.boats):
            if self.turn == self.max_turns:
                self.m["p_turn_cap"] = 1
                break
            self.turn += 1
            self.strategic()
            self.operations()
            self.tactical()
            self.refit()
        m = self.m
        m["turns"] = self.turn
        m["so_left"] = self.so
        lvl = success_level(m["vp"], self.levels)
        for name in self.levels:
            m[f"p_level_{name}"] = int(name == lvl)
        for b in self.boats:
            m[f"boat_vp.{b['id']}"] = b["vp"]
            m[f"boat_xp.{b['id']}"] = b["xp_total"]
            m[f"boat_lost.{b['id']}"] = int(b["lost"])
            m[f"boat_patrols.{b['id']}"] = b["patrols"]
            m[f"boat_level.{b['id']}"] = b["level"]
            if b["patrols"] < self.patrol_limit:       # the patrol it is on, or was lost on
                m[f"patrol_vp.{b['patrols'] + 1}"] += b["vp"] - b["vp_at_patrol_start"]
                m[f"patrol_lost.{b['patrols'] + 1}"] += int(b["lost"])
        return m


# --------------------------------------------------------------------------- entry points
def _plain(data):
    return E.unwrap(data if data is not None else load_campaign_data())


def run_campaign(params, rules=None, data=None, seed=0, stacked=None, plain=False) -> dict:
    """One campaign trial; returns its metrics (C§8)."""
    data = data if plain else _plain(data)
    return Campaign(params, rules, data, random.Random(seed), stacked=stacked).run()


def new_campaign(params, rules=None, data=None, seed=0, stacked=None) -> Campaign:
    """A set-up campaign (tests call single segments on it)."""
    return Campaign(params, rules, _plain(data), random.Random(seed), stacked=stacked)


def simulate(params, rules=None, data=None, n=1000, seed=0) -> dict:
    """Per-trial metric lists for n campaigns from one generator seeded with ``seed``."""
    data = _plain(data)
    rng = random.Random(seed)
    out: dict = {}
    for _ in range(n):
        m = Campaign(params, rules, data, rng).run()
        for k, v in m.items():
            out.setdefault(k, []).append(v)
    return out
