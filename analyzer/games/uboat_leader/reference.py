"""Slow, obviously-correct pure-Python reference for U-Boat Leader (issue 6).

Questions: ``escort_detection``, ``wolfpack``, ``engagement``. The simulation spec is
``docs/models/uboat_leader.md``; rule citations (§x.y, A#, G#) refer to the digest
``docs/rules/uboat_leader.md``. Randomness comes only from ``random.Random(seed)``; the
game data is the YAML under ``scenarios/uboat_leader`` with its ``{ph: ..}`` / ``{ex: ..}``
wrappers, unwrapped here. Nothing is imported from ``analyzer`` or ``kernels``.

Everything the source does not give (escort movement, attacks and damage, enemy attacks,
end of round, reloads, post-combat Stress) lives in the PLACEHOLDER rule modules named in
the spec and selected by rule options; their numbers come from ``data/combat.yaml``.
"""
from __future__ import annotations

import glob
import os
import random
from fractions import Fraction

import yaml

GAME = "uboat_leader"
QUESTIONS = ("escort_detection", "wolfpack", "engagement")
# the shipped data: the installed package's copy (analyzer/scenarios) or the repository's scenarios/
DEFAULT_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "scenarios", GAME)
if not os.path.isdir(DEFAULT_DIR):
    DEFAULT_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "..", "scenarios", GAME)

METRICS = {
    "escort_detection": ("p_detected", "p_evaded", "stress_added", "in_range"),
    "wolfpack": ("pack_size", "alerted", "stress_added", "so_spent"),
    "engagement": ("vp", "xp", "ships_sunk", "torpedoes_used", "p_uboat_lost", "uboats_lost",
                   "stress_added", "rounds", "p_round_cap"),
}

# name -> (default, allowed values). Digest ambiguity ids in the spec.
RULE_OPTIONS = {
    "escort_vp": ("card", ("card", "zero")),                                  # A1
    "tactics_timing": ("per_card", ("per_card", "per_roll")),                 # A2
    "radio_call_cost": ("one_purchase", ("one_purchase", "per_joiner")),      # A5
    "wolfpack_stress_join": ("roll_decides", ("roll_decides", "stress_fails")),  # A6
    "silent_running_move": ("no_move", ("no_move", "normal_move")),           # A9 (a)/(b)
    "silent_running_marker": ("end_of_round", ("end_of_round", "end_of_battle")),  # A9
    "reveal_timing": ("continuous", ("continuous", "after_move")),            # A10
    "bearing_beyond_3": ("full", ("full", "cap_3")),                          # A11
    "damage_stacking": ("replace", ("replace", "stack")),                     # A12
    "escort_redetect": ("skip_detected", ("skip_detected", "roll_anyway")),   # A21
    # placeholder rule modules (G15, G18, G19, G21)
    "uboat_attack": ("placeholder_d10", ("placeholder_d10",)),
    "escort_movement": ("toward_detected_or_sweep", ("toward_detected_or_sweep", "toward_detected", "stationary")),
    "enemy_attack": ("placeholder_d10", ("placeholder_d10", "none")),
    "reload": ("post_combat_only", ("post_combat_only", "submerged_end_of_round")),
    "post_combat_stress": ("plus_one", ("plus_one", "none")),
}

POLICY_DEFAULTS = {
    "approach": "surfaced",          # surfaced | submerged | dive_on_detection
    "target": "max_vp",              # max_vp | nearest
    "attack_escorts": False,
    "attack_range": 0,               # close to this range of the movement target
    "salvo": 2,                      # torpedoes per torpedo attack
    "silent_running": "when_detected",  # when_detected | never
    "break_off": "when_empty",       # when_empty | when_detected | never
}
POLICY_VALUES = {
    "approach": ("surfaced", "submerged", "dive_on_detection"),
    "target": ("max_vp", "nearest"),
    "silent_running": ("when_detected", "never"),
    "break_off": ("when_empty", "when_detected", "never"),
}


# --------------------------------------------------------------------------- data
def load_data(path_or_none=None) -> dict:
    """Load the game data (wrappers intact): every ``data/*.yaml`` top-level key, plus
    ``campaigns: {stem: campaign}`` from ``campaigns/*.yaml``."""
    root = path_or_none or DEFAULT_DIR
    out: dict = {"campaigns": {}}
    for f in sorted(glob.glob(os.path.join(root, "data", "*.yaml"))):
        with open(f, encoding="utf-8") as fh:
            out.update(yaml.safe_load(fh))
    for f in sorted(glob.glob(os.path.join(root, "campaigns", "*.yaml"))):
        with open(f, encoding="utf-8") as fh:
            out["campaigns"][os.path.splitext(os.path.basename(f))[0]] = yaml.safe_load(fh)["campaign"]
    return out


def _is_wrapper(x) -> bool:
    return isinstance(x, dict) and (set(x) in ({"ph"}, {"ph", "note"}) or
                                    ("ex" in x and set(x) <= {"ex", "note", "establishes"}))


def unwrap(x, path="", found=None):
    """Strip {ph}/{ex} wrappers; append the path of every placeholder to ``found``."""
    if _is_wrapper(x):
        if "ph" in x:
            if found is not None:
                found.append(path)
            return unwrap(x["ph"], path, None)
        return unwrap(x["ex"], path, found)
    if isinstance(x, dict):
        return {k: unwrap(v, f"{path}.{k}" if path else str(k), found) for k, v in x.items()}
    if isinstance(x, list):
        return [unwrap(v, f"{path}[{i}]", found) for i, v in enumerate(x)]
    return x


def placeholder_paths(data) -> list[str]:
    found: list[str] = []
    unwrap(data, "", found)
    return found


def _rules(rules) -> dict:
    rules = dict(rules or {})
    out = {}
    for name, (default, values) in RULE_OPTIONS.items():
        v = rules.pop(name, default)
        if v not in values:
            raise ValueError(f"rules.{name}: {v!r} not in {values}")
        out[name] = v
    if rules:
        raise ValueError(f"unknown rule options: {sorted(rules)}")
    return out


def _check_keys(d, allowed, where):
    extra = set(d) - set(allowed)
    if extra:
        raise ValueError(f"{where}: unknown keys {sorted(extra)}")


def d10(rng: random.Random) -> int:
    """§1.4: one d10, faces 1..10 (face '0' = 10)."""
    return rng.randint(1, 10)


# --------------------------------------------------------------------------- small rules
def contact_modifier(intel=False, seeker=False, warnings=0, attacked=False, event=0) -> int:
    """§6.2 Contact roll modifiers: +2 Intel, +1 Seeker, -2 per Warning, -2 Attacked, +X Events."""
    return 2 * bool(intel) + 1 * bool(seeker) - 2 * warnings - 2 * bool(attacked) + event


def contact_count(modified_roll: int, table) -> int:
    """Look a modified roll up in a Contact Table given as [[min_roll, contacts], ...] (G5)."""
    n = 0
    for lo, c in sorted(table):
        if modified_roll >= lo:
            n = c
    return n


def detection_in_range(state: str, rng_areas: int, alerted: int, base=None) -> bool:
    """§7.5: surfaced at 0-2, submerged at 0-1 Areas, +1 to both per Alerted counter."""
    base = base or {"surfaced": 2, "submerged": 1}
    return 0 <= rng_areas <= base[state] + alerted


def detection_modifier(alerted=0, damage="none", tactics=0, stacking="replace") -> int:
    """§7.5: +1 per Alerted, -1 Light, -2 Heavy, +X Tactics counter."""
    pen = {"none": 0, "light": 1, "heavy": 2}[damage]
    return alerted - pen + tactics


def detected(roll: int, modifier: int, value: int) -> bool:
    """§7.5: Detected if the modified d10 >= the card's Detection value."""
    return roll + modifier >= value


def evades(roll: int, ev: int) -> bool:
    """§7.3 Silent Running: d10 <= EV removes the Detected marker."""
    return roll <= ev


def bearing_drift(reference_speed: int, speed: int, beyond_3="full") -> int:
    """§7.4: Areas a ship/U-boat drifts toward the Wake (0 if as fast as the Reference Ship)."""
    diff = max(0, reference_speed - max(0, speed))
    return min(diff, 3) if beyond_3 == "cap_3" else diff


def damaged_speed(speed: int, light=False, heavy=False, stacking="replace") -> int:
    """§1.5: Light -1, Heavy -2 Speed (A12: replace -> Heavy only; stack -> -3); never < 0."""
    pen = _damage_penalty(int(light), int(heavy), stacking)
    return max(0, speed - pen)


def _damage_penalty(light: int, heavy: int, stacking: str) -> int:
    if stacking == "replace":
        return 2 if heavy else (1 if light else 0)
    return 2 * heavy + light


def stress_band(stress: int, okay_max: int, shaken_max: int) -> str:
    """§1.6: okay / shaken / unfit from the card's bands (A13: per card)."""
    if stress <= okay_max:
        return "okay"
    return "shaken" if stress <= shaken_max else "unfit"


class Deck:
    """A real card deck (§2.3): draw without replacement; when empty, the shuffled discards
    become the new deck. ``draw`` returns None only if deck and discards are both empty."""

    def __init__(self, cards, rng: random.Random, shuffle=True):
        self.cards = list(cards)
        self.rng = rng
        if shuffle:
            rng.shuffle(self.cards)
        self.discards: list = []
        self.reshuffles = 0

    def draw(self):
        if not self.cards:
            if not self.discards:
                return None
            self.cards, self.discards = self.discards, []
            self.rng.shuffle(self.cards)
            self.reshuffles += 1
        return self.cards.pop(0)

    def discard(self, card):
        self.discards.append(card)


# --------------------------------------------------------------------------- escort_detection
ED_PARAMS = ("detection", "escort", "uboat", "alerted", "escort_damage", "tactics")
ED_UBOAT = {"state": "surfaced", "range": 0, "evasion": 5, "silent_running": False}


def _ed_params(params, data):
    p = dict(params or {})
    _check_keys(p, ED_PARAMS, "params")
    if "detection" in p:
        det = dict(p["detection"])
    elif "escort" in p:
        card = [c for c in data["escorts"] + data["fleet_escorts"] if c["name"] == p["escort"]]
        if not card:
            raise ValueError(f"params.escort: no escort card named {p['escort']!r}")
        det = dict(card[0]["detection"])
    else:
        det = {"surfaced": 5, "submerged": 7}  # G13 placeholder (digest)
    _check_keys(det, ("surfaced", "submerged"), "params.detection")
    u = dict(ED_UBOAT)
    u.update(p.get("uboat") or {})
    _check_keys(u, ED_UBOAT, "params.uboat")
    if u["state"] not in ("surfaced", "submerged"):
        raise ValueError("params.uboat.state must be surfaced or submerged")
    dmg = p.get("escort_damage", "none")
    if dmg not in ("none", "light", "heavy"):
        raise ValueError("params.escort_damage must be none, light or heavy")
    return det, u, int(p.get("alerted", 0)), dmg, _tactics_pool(p.get("tactics", 0), data)


def _tactics_pool(t, data):
    """Return the list of chit values (one per counter) a draw is uniform over; [0] for none."""
    if t is None or t == "none":
        return [0]
    if isinstance(t, bool):
        raise ValueError("params.tactics: int, 'none', 'pool' or a list of ints")
    if isinstance(t, int):
        return [t]
    if t == "pool":
        chits = data["tactics"]["chits"]
        return [c["value"] for c in chits for _ in range(c["count"])]
    if isinstance(t, list) and t and all(isinstance(v, int) for v in t):
        return list(t)
    raise ValueError("params.tactics: int, 'none', 'pool' or a non-empty list of ints")


def _ed_trial(rng, det, u, alerted, dmg, pool, base):
    chit = pool[rng.randrange(len(pool))]
    state = u["state"]
    p_det = 0
    if detection_in_range(state, u["range"], alerted, base):
        roll = d10(rng)
        p_det = int(detected(roll, detection_modifier(alerted, dmg, chit), det[state]))
    ev = st = 0
    if p_det and u["silent_running"] and state == "submerged":
        if evades(d10(rng), u["evasion"]):
            ev = 1
        else:
            st = 2  # §7.3 source
    return p_det, ev, st, int(detection_in_range(state, u["range"], alerted, base))


def exact_escort_detection(params, rules=None, data=None) -> dict:
    """Exact distributions (Fractions) by enumerating chit x d10 x d10."""
    data = unwrap(data or load_data())
    _rules(rules)
    det, u, alerted, dmg, pool = _ed_params(params, data)
    base = data["combat"]["detection_range"]
    fail_stress = data["combat"]["silent_running_fail_stress"]
    out = {m: {} for m in METRICS["escort_detection"]}
    w0 = Fraction(1, len(pool))
    for chit in pool:
        state = u["state"]
        in_rng = detection_in_range(state, u["range"], alerted, base)
        for r in range(1, 11):
            w1 = w0 / 10
            p_det = int(in_rng and detected(r, detection_modifier(alerted, dmg, chit), det[state]))
            for r2 in range(1, 11):
                w = w1 / 10
                sr = p_det and u["silent_running"] and state == "submerged"
                ev = int(bool(sr) and evades(r2, u["evasion"]))
                st = fail_stress if (sr and not ev) else 0
                for m, v in (("p_detected", p_det), ("p_evaded", ev), ("stress_added", st),
                             ("in_range", int(in_rng))):
                    out[m][v] = out[m].get(v, Fraction(0)) + w
    return out


# --------------------------------------------------------------------------- wolfpack
WP_PARAMS = ("candidates", "attacked", "radio_call", "campaign", "notes")


def _wp_params(params, data):
    p = dict(params or {})
    _check_keys(p, WP_PARAMS, "params")
    k = int(p.get("candidates", 3))
    a = int(p.get("attacked", 0))
    if k < 0 or not 0 <= a <= k:
        raise ValueError("params: need candidates >= 0 and 0 <= attacked <= candidates")
    notes = dict(data["wolfpack"])
    camp = p.get("campaign")
    if camp is not None:
        if camp not in data["campaigns"]:
            raise ValueError(f"params.campaign: unknown campaign {camp!r}")
        notes.update(data["campaigns"][camp]["wolfpack"])
    notes.update(p.get("notes") or {})
    return k, a, bool(p.get("radio_call", False)), notes


def _wp_candidate(face, attacked, notes, rules):
    """One join roll (§6.5): returns (joins, stress_result)."""
    stress = face in notes["stress_results"]
    joins = face + (notes["attacked_modifier"] if attacked else 0) >= notes["join_min"]
    if stress and rules["wolfpack_stress_join"] == "stress_fails":
        joins = False
    return joins, stress


def _wp_radio(k, notes, rules):
    so = 0
    if k > 0:
        so = notes["radio_call_cost"] * (1 if rules["radio_call_cost"] == "one_purchase" else k)
    return {"pack_size": 1 + k, "alerted": 0, "stress_added": 0, "so_spent": so}


def exact_wolfpack(params, rules=None, data=None) -> dict:
    data = unwrap(data or load_data())
    rules = _rules(rules)
    k, a, radio, notes = _wp_params(params, data)
    if radio:
        return {m: {v: Fraction(1)} for m, v in _wp_radio(k, notes, rules).items()}
    dist = {(0, 0): Fraction(1)}  # (joined, stress results)
    for i in range(k):
        new = {}
        for (j, s), w in dist.items():
            for face in range(1, 11):
                jn, st = _wp_candidate(face, i < a, notes, rules)
                key = (j + jn, s + st)
                new[key] = new.get(key, Fraction(0)) + w / 10
        dist = new
    out = {m: {} for m in METRICS["wolfpack"]}
    for (j, s), w in dist.items():
        for m, v in (("pack_size", 1 + j), ("alerted", s * notes["alerted_per_result"]),
                     ("stress_added", s * notes["stress_per_result"]), ("so_spent", 0)):
            out[m][v] = out[m].get(v, Fraction(0)) + w
    return out


# --------------------------------------------------------------------------- engagement
EN_PARAMS = ("convoy", "uboats", "alerted", "tactics", "policy", "max_rounds")
BOAT_KEYS = ("id", "level", "start", "stress")


class Display:
    """The tactical display graph (data/tactical_display.yaml). Range = the number of steps of
    the shortest path between two areas (§1.3 "el camino más corto")."""

    def __init__(self, td):
        self.names = [a["name"] for a in td["areas"]]
        self.index = {n: i for i, n in enumerate(self.names)}
        self.kind = [a["kind"] for a in td["areas"]]
        self.adj = [sorted(self.index[b] for b in a["adjacent"]) for a in td["areas"]]
        self.wake = self.index[td["wake"]]
        self.reveal_range = td["reveal_range"]
        self.dist = [self.steps_from(a) for a in range(len(self.names))]
        long_areas = [a for a, kind in enumerate(self.kind) if kind == "long"]
        self.dist_long = [min(row[b] for b in long_areas) for row in self.dist]

    def steps_from(self, start):
        """Steps from ``start`` to every area, ring by ring: ring k = the areas first reached
        after k steps (each one step from ring k-1 and in no earlier ring)."""
        steps = {start: 0}
        ring, k = {start}, 0
        while ring:
            k += 1
            ring = {b for a in ring for b in self.adj[a]} - steps.keys()
            steps.update((b, k) for b in ring)
        if len(steps) != len(self.names):
            raise ValueError("tactical_display: graph not connected")
        return [steps[b] for b in range(len(self.names))]

    def step_toward(self, area, goal_dist):
        """One step to the adjacent area with the smallest goal distance (tie: lowest index);
        None if no neighbour is strictly closer."""
        best = None
        for b in self.adj[area]:
            if goal_dist(b) < goal_dist(area) and (best is None or goal_dist(b) < goal_dist(best)):
                best = b
        return best


def _en_params(params, data):
    p = dict(params or {})
    _check_keys(p, EN_PARAMS, "params")
    pol = dict(POLICY_DEFAULTS)
    pol.update(p.get("policy") or {})
    _check_keys(pol, POLICY_DEFAULTS, "params.policy")
    for k, vals in POLICY_VALUES.items():
        if pol[k] not in vals:
            raise ValueError(f"params.policy.{k}: {pol[k]!r} not in {vals}")
    if int(pol["salvo"]) < 1 or int(pol["attack_range"]) < 0:
        raise ValueError("params.policy: salvo >= 1, attack_range >= 0")
    boats = p.get("uboats") or [{"id": "U-98", "level": "veteran"}]
    out_boats = []
    for b in boats:
        _check_keys(b, BOAT_KEYS, "params.uboats[]")
        b = {"id": b["id"], "level": b.get("level", "veteran"), "start": b.get("start", "L4"),
             "stress": int(b.get("stress", 0))}
        out_boats.append(b)
    conv = [c for c in data["convoys"] if c["card"] == p.get("convoy", 37)]
    if not conv:
        raise ValueError(f"params.convoy: no convoy card {p.get('convoy', 37)}")
    # deck sizes: every reveal must find a card without relying on discards (spec S1)
    kinds = [sl["kind"] for sl in conv[0]["slots"]]
    naval = conv[0]["type"] == "naval"
    need = {"merchant": kinds.count("M"), "naval": kinds.count("N"),
            "escort": 0 if naval else kinds.count("E"), "fleet_escorts": kinds.count("E") if naval else 0}
    if any(c.get("misidentified") for c in data["merchants"]):
        need["escort"] += kinds.count("M")
    have = {"merchant": len(data["merchants"]), "naval": len(data["naval"]),
            "escort": len(data["escorts"]), "fleet_escorts": len(data["fleet_escorts"])}
    for k, v in need.items():
        if v > have[k]:
            raise ValueError(f"convoy {conv[0]['card']}: needs {v} {k} cards, deck has {have[k]}")
    mr = int(p.get("max_rounds", 20))
    if mr < 1:
        raise ValueError("params.max_rounds >= 1")
    return conv[0], out_boats, int(p.get("alerted", 0)), p.get("tactics", "none"), pol, mr


class Engagement:
    """One contact on the tactical display (spec §engagement). Plain attributes; slow."""

    def __init__(self, params, rules, data, rng, stacked=None):
        self.R = rules
        self.rng = rng
        self.disp = Display(data["tactical_display"])
        conv, boats, self.alerted, tactics, self.pol, self.max_rounds = _en_params(params, data)
        cb = data["combat"]
        self.cb = cb
        self.ua = cb["uboat_attack_module"]
        self.ea = cb["enemy_attack_module"]
        self.tactics_on = tactics not in (None, "none")
        self.tactics_fixed = tactics if isinstance(tactics, int) and not isinstance(tactics, bool) else None
        pool = _tactics_pool(tactics, data) if self.tactics_on else [0]
        stacked = stacked or {}
        naval_convoy = conv["type"] == "naval"

        def deck(name, cards):
            if name in stacked:  # tests: a fixed top-of-deck order, no shuffle
                return Deck(stacked[name], rng, shuffle=False)
            return Deck(cards, rng)
        self.decks = {"merchant": deck("merchant", data["merchants"]),
                      "naval": deck("naval", data["naval"]),
                      "escort": deck("escort", data["escorts"]),
                      "fleet": deck("fleet", data["fleet_escorts"]),
                      "tactics": deck("tactics", pool)}
        self.pool = pool
        n_esc = sum(sl["kind"] == "E" for sl in conv["slots"])
        if any(c.get("misidentified") for c in data["merchants"]):
            n_esc += sum(sl["kind"] == "M" for sl in conv["slots"])
        if self.tactics_on and self.tactics_fixed is None and rules["tactics_timing"] == "per_card" \
                and len(pool) < n_esc:
            raise ValueError("tactics cup smaller than the number of escorts that may be revealed")
        # --- ships (slot order), §6.4
        self.ships = []
        for i, s in enumerate(conv["slots"]):
            kind = s["kind"]
            deckname = {"M": "merchant", "N": "naval", "E": "fleet" if naval_convoy else "escort"}[kind]
            self.ships.append({"slot": i, "label": s["label"], "kind": kind, "escort": kind == "E",
                               "deck": deckname, "card": None, "revealed": False,
                               "area": self.disp.index[s["area"]], "light": 0, "heavy": 0,
                               "chit": 0, "on": True, "counter_speed": data["unknown_speed"][kind]})
        # --- U-boats (list order), §6.4/§6.5
        roster = {b["id"]: b for b in data["uboats"]}
        self.boats = []
        for i, b in enumerate(boats):
            if b["id"] not in roster:
                raise ValueError(f"params.uboats: unknown U-boat {b['id']!r}")
            card = roster[b["id"]]
            lvl = card["levels"][b["level"]]
            cls = data["uboat_classes"][card["class"]]
            area = self.disp.index[b["start"]]
            infiltrator = "infiltrator" in (card.get("abilities") or [])
            allowed = ("long", "medium", "short") if infiltrator else ("long",)
            if self.disp.kind[area] not in allowed:
                raise ValueError(f"params.uboats[{i}].start: {b['start']} not allowed (§6.4)")
            self.boats.append({
                "i": i, "id": b["id"], "lvl": lvl, "cls": cls, "area": area,
                "surfaced": self.pol["approach"] != "submerged", "dived": False,
                "detected": False, "silent": False, "stress": b["stress"], "stress0": b["stress"],
                "ready": lvl["okay"]["ready"], "stored": lvl["okay"]["stored"],
                "tubes": lvl["okay"]["ready"], "ammo": cls["ammunition"] if cls["deck_gun"] else 0,
                "on": True, "sunk": False, "attacked_this_round": False,
            })
        self.m = {k: 0 for k in METRICS["engagement"]}
        self.trace = {"revealed": []}
        self.reveal_all()  # setup reveal (spec step S4)

    # ---- helpers
    def D(self, a, b):
        return self.disp.dist[a][b]

    def pen(self, s):
        return _damage_penalty(s["light"], s["heavy"], self.R["damage_stacking"])

    def speed(self, s):
        if not s["revealed"]:
            return s["counter_speed"]
        return max(0, s["card"]["speed"] - self.pen(s))

    def band(self, b):
        return stress_band(b["stress"], b["lvl"]["bands"]["okay_max"], b["lvl"]["bands"]["shaken_max"])

    def row(self, b):
        return b["lvl"]["okay"] if self.band(b) == "okay" else b["lvl"]["shaken"]

    def add_stress(self, b, n):
        b["stress"] += n

    def boats_on(self):
        return [b for b in self.boats if b["on"]]

    def ships_on(self):
        return [s for s in self.ships if s["on"]]

    def chit_value(self, s):
        """Tactics modifier for one Detection roll or attack of escort s (A2)."""
        if not self.tactics_on or not s["escort"]:
            return 0
        if self.tactics_fixed is not None:
            return self.tactics_fixed
        if self.R["tactics_timing"] == "per_card":
            return s["chit"]
        return self.pool[self.rng.randrange(len(self.pool))]

    # ---- reveal §7.2
    def reveal(self, s):
        c = self.decks[s["deck"]].draw()
        if s["deck"] == "merchant" and c.get("misidentified"):
            self.decks["merchant"].discard(c)
            s["escort"], s["deck"] = True, "escort"
            c = self.decks["escort"].draw()
        s["card"], s["revealed"] = c, True
        self.trace["revealed"].append((s["label"], s["deck"], c.get("card"), c.get("name")))
        if s["escort"] and self.tactics_on and self.tactics_fixed is None \
                and self.R["tactics_timing"] == "per_card":
            s["chit"] = self.decks["tactics"].draw()

    def reveal_all(self):
        for s in self.ships:
            if s["on"] and not s["revealed"] and any(
                    self.D(b["area"], s["area"]) <= self.disp.reveal_range for b in self.boats_on()):
                self.reveal(s)

    def remove_ship(self, s):
        s["on"] = False
        if s["revealed"]:
            self.decks[s["deck"]].discard(s["card"])
            if s["escort"] and self.tactics_on and self.tactics_fixed is None \
                    and self.R["tactics_timing"] == "per_card":
                self.decks["tactics"].discard(s["chit"])

    # ---- policies
    def ship_vp(self, s):
        if not s["revealed"]:
            return -1
        if s["escort"] and self.R["escort_vp"] == "zero":
            return 0
        return s["card"]["vp"]

    def eligible(self, s):
        return s["on"] and (not s["escort"] or self.pol["attack_escorts"])

    def pick(self, b, cands):
        """Target policy (spec P2): max_vp -> (-vp, range, slot); nearest -> (range, -vp, slot)."""
        if not cands:
            return None
        if self.pol["target"] == "max_vp":
            key = lambda s: (-self.ship_vp(s), self.D(b["area"], s["area"]), s["slot"])
        else:
            key = lambda s: (self.D(b["area"], s["area"]), -self.ship_vp(s), s["slot"])
        return min(cands, key=key)

    def may_surface(self, b):
        a = self.pol["approach"]
        return a == "surfaced" or (a == "dive_on_detection" and not b["dived"])

    def armed(self, b):
        gun = b["ammo"] > 0 and self.may_surface(b)
        return b["ready"] > 0 or gun

    def leaving(self, b):
        """Spec P4: Unfit boats must leave; break-off policy otherwise."""
        if self.band(b) == "unfit":
            return True
        bo = self.pol["break_off"]
        if bo == "never":
            return False
        if not self.armed(b) or not any(self.eligible(s) for s in self.ships):
            return True
        return bo == "when_detected" and b["detected"]

    # ---- round steps
    def uboat_movement(self):
        for b in self.boats:
            if not b["on"]:
                continue
            if self.pol["approach"] == "dive_on_detection" and b["detected"] and b["surfaced"]:
                b["surfaced"], b["dived"] = False, True
            sr_used = False
            if (not b["surfaced"] and b["detected"] and self.pol["silent_running"] == "when_detected"):
                b["silent"] = True
                sr_used = True
                if evades(d10(self.rng), self.row(b)["ev"]):
                    b["detected"] = False
                else:
                    self.add_stress(b, self.cb["silent_running_fail_stress"])
            if sr_used and self.R["silent_running_move"] == "no_move":
                continue
            speed = b["cls"]["speed"]["surfaced" if b["surfaced"] else "submerged"]
            cont = self.R["reveal_timing"] == "continuous"
            if self.leaving(b):
                for _ in range(speed):
                    if self.disp.kind[b["area"]] == "long":
                        b["on"] = False  # moved off the display: lost contact
                        break
                    b["area"] = self.disp.step_toward(b["area"], lambda a: self.disp.dist_long[a])
                    if cont:
                        self.reveal_all()
            else:
                t = self.pick(b, [s for s in self.ships if self.eligible(s)])
                if t is not None:
                    for _ in range(speed):
                        if self.D(b["area"], t["area"]) <= self.pol["attack_range"]:
                            break
                        nxt = self.disp.step_toward(b["area"], lambda a: self.D(a, t["area"]))
                        if nxt is None:
                            break
                        b["area"] = nxt
                        if cont:
                            self.reveal_all()
            if not cont:
                self.reveal_all()

    def bearing_movement(self):
        ships = self.ships_on()
        if not ships:
            return
        non_esc = [s for s in ships if not s["escort"]]
        ref = max(self.speed(s) for s in (non_esc or ships))
        beyond = self.R["bearing_beyond_3"]
        wake = self.disp.wake
        for s in ships:
            k = bearing_drift(ref, self.speed(s), beyond)
            self._drift(s, k, wake, is_ship=True)
        for b in self.boats_on():
            if b["silent"] or self.leaving(b):
                sp = 0
            else:
                sp = b["cls"]["speed"]["surfaced" if b["surfaced"] else "submerged"]
            self._drift(b, bearing_drift(ref, sp, beyond), wake, is_ship=False)
        self.reveal_all()

    def _drift(self, o, k, wake, is_ship):
        for _ in range(k):
            if o["area"] == wake:  # in the Wake with movement left: out of the battle
                if is_ship:
                    self.remove_ship(o)
                else:
                    o["on"] = False
                return
            o["area"] = self.disp.step_toward(o["area"], lambda a: self.D(a, wake))

    def escorts_step(self):
        base = self.cb["detection_range"]
        for s in self.ships:
            if not (s["on"] and s["escort"]):
                continue
            # detection §7.5
            for b in self.boats:
                if not b["on"]:
                    continue
                state = "surfaced" if b["surfaced"] else "submerged"
                if not detection_in_range(state, self.D(s["area"], b["area"]), self.alerted, base):
                    continue
                if b["detected"] and self.R["escort_redetect"] == "skip_detected":
                    continue
                if not s["revealed"]:
                    self.reveal(s)  # §7.2: an escort rolling to Detect is revealed
                if b["detected"]:
                    continue  # roll_anyway: the roll only revealed the escort
                mod = self.alerted * self.cb["alerted_roll_bonus"] - self.pen(s) + self.chit_value(s)
                if detected(d10(self.rng), mod, s["card"]["detection"][state]):
                    b["detected"] = True
            # movement (placeholder module G18)
            mode = self.R["escort_movement"]
            if mode == "stationary":
                continue
            tg = [b for b in self.boats if b["on"] and b["detected"]]
            steps = self.speed(s)
            if not tg and mode == "toward_detected_or_sweep":
                tg = self.boats_on()
                steps = min(steps, self.cb["escort_movement_module"]["sweep_steps"])
            if tg:
                t = min(tg, key=lambda b: (self.D(s["area"], b["area"]), b["i"]))
                for _ in range(steps):
                    if s["area"] == t["area"]:
                        break
                    s["area"] = self.disp.step_toward(s["area"], lambda a: self.D(a, t["area"]))
                self.reveal_all()

    def uboat_attack(self, b):
        if not b["on"] or b["silent"] or self.band(b) == "unfit":
            return
        row = self.row(b)
        trm, grm = self.ua["torpedo_range_mod"], self.ua["gun_range_mod"]
        cands = [s for s in self.ships if self.eligible(s) and s["revealed"]]
        tor = [s for s in cands if s["card"]["torpedo"] is not None
               and self.D(b["area"], s["area"]) < len(trm)]
        if b["ready"] > 0 and tor:
            t = self.pick(b, tor)
            n = min(int(self.pol["salvo"]), b["ready"])
            b["ready"] -= n
            self.m["torpedoes_used"] += n
            b["attacked_this_round"] = True
            mod = row["ts"] + trm[self.D(b["area"], t["area"])]
            for _ in range(n):
                if self._hit_and_damage(b, t, mod, t["card"]["torpedo"]):
                    break
            return
        gun = [s for s in cands if s["card"]["gun"] is not None and self.D(b["area"], s["area"]) < len(grm)]
        if b["surfaced"] and b["ammo"] > 0 and gun:
            t = self.pick(b, gun)
            b["ammo"] -= 1
            b["attacked_this_round"] = True
            self._hit_and_damage(b, t, row["gs"] + grm[self.D(b["area"], t["area"])], t["card"]["gun"])

    def _hit_and_damage(self, b, t, mod, to_hit):
        """One torpedo or gun roll; returns True if the target was sunk."""
        bonus = self.cb["heavy_damage_attack_bonus"] if t["heavy"] else 0
        if d10(self.rng) + mod + bonus < to_hit:
            return False
        r = d10(self.rng)
        tab = self.ua["damage_table"]
        res = next(k for k in ("light", "heavy", "sunk") if tab[k][0] <= r <= tab[k][1])
        sink = res == "sunk" or t["heavy"] == 1
        if not sink:
            if res == "heavy" or t["light"]:
                t["heavy"] = 1
                if self.R["damage_stacking"] == "replace":
                    t["light"] = 0
            else:
                t["light"] = 1
            return False
        self.m["vp"] += max(0, self.ship_vp(t))
        self.m["xp"] += t["card"]["xp"]
        self.m["ships_sunk"] += 1
        self.remove_ship(t)
        return True

    def enemy_attacks(self):
        if self.R["enemy_attack"] == "none":
            return
        for s in self.ships:
            if not (s["on"] and s["revealed"]):
                continue
            tg = []
            for b in self.boats:
                if not (b["on"] and b["detected"]):
                    continue
                d = self.D(s["area"], b["area"])
                if b["surfaced"] and s["card"].get("surface_attack") is not None \
                        and d <= self.ea["surfaced_reach"]:
                    tg.append(b)
                elif not b["surfaced"] and s["card"].get("submerged_attack") is not None \
                        and d <= self.ea["submerged_reach"]:
                    tg.append(b)
            if not tg:
                continue
            b = min(tg, key=lambda b: (self.D(s["area"], b["area"]), b["i"]))
            number = s["card"]["surface_attack" if b["surfaced"] else "submerged_attack"]
            roll = d10(self.rng)
            if roll + self.chit_value(s) - self.pen(s) >= number:
                self.add_stress(b, self.ea["hit_stress"])
                sink = self.ea["sink_roll"]["escort" if s["escort"] else
                                            ("naval" if s["kind"] == "N" else "merchant")]
                if sink is not None and d10(self.rng) >= sink:
                    b["on"], b["sunk"] = False, True

    def end_of_round(self):
        for b in self.boats:
            if self.R["silent_running_marker"] == "end_of_round":
                b["silent"] = False
            if self.R["reload"] == "submerged_end_of_round" and b["on"] and not b["surfaced"] \
                    and not b["attacked_this_round"]:
                n = min(self.cb["reload_module"]["per_round"], b["stored"], b["tubes"] - b["ready"])
                b["ready"] += n
                b["stored"] -= n
            b["attacked_this_round"] = False

    def run(self):
        rounds = 0
        while self.boats_on() and self.ships_on():
            if rounds == self.max_rounds:
                self.m["p_round_cap"] = 1
                break
            rounds += 1
            self.uboat_movement()
            self.bearing_movement()
            self.escorts_step()
            # initiative is read once, at the start of the attacks step (spec R5)
            aggressive = [self.row(b)["initiative"] == "aggressive" for b in self.boats]
            for b in self.boats:
                if aggressive[b["i"]]:
                    self.uboat_attack(b)
            self.enemy_attacks()
            for b in self.boats:
                if not aggressive[b["i"]]:
                    self.uboat_attack(b)
            self.end_of_round()
        if self.R["post_combat_stress"] == "plus_one":
            for b in self.boats:
                if not b["sunk"]:
                    self.add_stress(b, self.cb["post_combat_module"]["stress"])
        self.m["rounds"] = rounds
        self.m["uboats_lost"] = sum(b["sunk"] for b in self.boats)
        self.m["p_uboat_lost"] = int(self.m["uboats_lost"] > 0)
        self.m["stress_added"] = sum(b["stress"] - b["stress0"] for b in self.boats)
        return self.m


# --------------------------------------------------------------------------- entry point
def simulate(question: str, params: dict, rules: dict, data: dict, trials: int, seed: int) -> dict:
    """Per-trial metric values for ``question`` (see the spec for names and ranges)."""
    if question not in QUESTIONS:
        raise ValueError(f"unknown question {question!r}")
    rules = _rules(rules)
    data = unwrap(data if data is not None else load_data())
    rng = random.Random(seed)
    out = {m: [] for m in METRICS[question]}
    if question == "escort_detection":
        det, u, alerted, dmg, pool = _ed_params(params, data)
        base = data["combat"]["detection_range"]
        for _ in range(trials):
            for m, v in zip(out, _ed_trial(rng, det, u, alerted, dmg, pool, base)):
                out[m].append(v)
    elif question == "wolfpack":
        k, a, radio, notes = _wp_params(params, data)
        for _ in range(trials):
            if radio:
                res = _wp_radio(k, notes, rules)
            else:
                j = s = 0
                for i in range(k):
                    jn, st = _wp_candidate(d10(rng), i < a, notes, rules)
                    j += jn
                    s += st
                res = {"pack_size": 1 + j, "alerted": s * notes["alerted_per_result"],
                       "stress_added": s * notes["stress_per_result"], "so_spent": 0}
            for m in out:
                out[m].append(res[m])
    else:
        _en_params(params, data)  # validate once
        for _ in range(trials):
            res = Engagement(params, rules, data, rng).run()
            for m in out:
                out[m].append(res[m])
    return out


def run_engagement(params, rules=None, data=None, seed=0, stacked=None):
    """One engagement with an optional stacked deck order (tests); returns the Engagement."""
    data = unwrap(data if data is not None else load_data())
    e = Engagement(params, _rules(rules), data, random.Random(seed), stacked=stacked)
    e.run()
    return e
