"""Slow, obviously-correct reference of HACSE naval ("Regeln See"), written apart from production.

It reads the spec (docs/models/hacse_naval.md) and the game data YAML directly and plays each
question with ``random.Random``, one object per ship and one per row: no numba, no arrays, no
import from ``analyzer`` or ``kernels``. Used as the oracle of the stateful kernels (fire,
patterns with priors, effect chains) and as the benchmark's baseline.

Entry point: ``simulate(question, params, rules, data, trials, seed) -> {metric: [per-trial]}``.
"""
from __future__ import annotations

import glob
import math
import os
import random

import yaml

# the shipped data: the installed package's copy (analyzer/scenarios) or the repository's scenarios/
DEFAULT_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "scenarios", "hacse_naval")
if not os.path.isdir(DEFAULT_DIR):
    DEFAULT_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "..", "scenarios", "hacse_naval")
QUESTIONS = ("depth_charge", "depth_charge_pattern", "torpedo_salvo", "mine_field", "fire", "sighting")
METRICS = {
    "depth_charge": ("damage", "p_sunk", "p_leaking", "thrower_damage", "total_damage", "damage_dealt"),
    "torpedo_salvo": ("p_sunk", "damage", "speed_lost", "fires", "damage_dealt"),
    "mine_field": ("p_sunk", "damage", "damage_dealt"),
    "fire": ("rounds_burning", "damage", "p_row_destroyed", "p_sunk", "damage_dealt"),
    "sighting": ("p_sighted_within", "p_sighted_round", "rounds_to_sighting", "rounds_to_sighting_if_seen"),
}
DEFAULT_RULES = {
    "half_hp": "ceil", "sub_hull_rows": "functions_at_half", "sub_leak_depth": "per_row",
    "overrun_dice": "per_level", "threshold_less_rows": "destroyed", "engine_speed": "destroyed_rows",
    "fire_extinguish": "overroll", "extinguish_scope": "all_fires", "fire_row": "new_random_row",
    "fire_spreads": "yes", "fire_repeats": "every_hit_past_threshold", "fire_damage": "per_fire",
    "hit_location": "hex_then_row", "mine_hit_location": "hex_then_row", "charge_roll": "one_per_charge", "depth_unit": "levels",
    "periscope_difficulty": "added_to_range", "sonar_terms": "replace", "range_steps": "floor",
    "roll_model": "linear", "sub_target_bm": "not_a_ship", "radar_limit": "penalty_at_least_1_per_5_hex",
    "radar_with_rangefinder": "multiply", "torpedo_arming": "unarmed_below_nah",
    "torpedo_sighting_difficulty": "added_to_range", "mine_avoidance": "holds_course",
}
FIRE_ROUND_LIMIT = 1000
CHAIN_LIMIT = 256          # fires one hit may set off (spec §3)
FIRE_KINDS = {"schornstein", "maschinenraum", "flugbenzin"}   # "durch Treffer auf Schornstein, Maschinenraum, Flugbenzin"
UNDERWATER_KINDS = {"rumpf", "maschinenraum", "tank", "magazin"}
NO_THRESHOLD_KINDS = {"tank", "flugbenzin", "magazin", "batterie"}


# --------------------------------------------------------------------------- data
def load_data(path=None) -> dict:
    """{'hacse': rule data, 'ships': {name: sheet}} with {ph}/{ex} wrappers still in place."""
    root = path or DEFAULT_DIR
    with open(os.path.join(root, "data", "hacse.yaml"), encoding="utf-8") as fh:
        out = dict(yaml.safe_load(fh))
    out["ships"] = {}
    for f in sorted(glob.glob(os.path.join(root, "ships", "*.yaml"))):
        with open(f, encoding="utf-8") as fh:
            out["ships"][os.path.splitext(os.path.basename(f))[0]] = yaml.safe_load(fh)["ship"]
    return out


def plain(x):
    """The data with every {ph: v} / {ex: v} replaced by v."""
    if isinstance(x, dict):
        if "ph" in x and set(x) <= {"ph", "note"}:
            return plain(x["ph"])
        if "ex" in x and set(x) <= {"ex", "note", "establishes"}:
            return plain(x["ex"])
        return {key: plain(v) for key, v in x.items()}
    if isinstance(x, list):
        return [plain(v) for v in x]
    return x


def W10(rng) -> int:
    return rng.randint(1, 10)


# --------------------------------------------------------------------------- the damage sheet
class Row:
    def __init__(self, spec, hex_index, submarine, rules):
        self.name = spec["name"]
        self.kinds = set(spec["kinds"])
        self.hp = spec["hp"]
        self.he = spec.get("he") or 0
        self.hex = hex_index
        self.damage = 0
        self.half = math.ceil(self.hp / 2) if rules["half_hp"] == "ceil" else max(1, self.hp // 2)
        lists_hull = submarine and "rumpf" in self.kinds
        # a U-boat row that lists the hull works (and fails) from half its hit points
        self.fails_at = self.half if lists_hull else self.hp
        if lists_hull and (rules["sub_hull_rows"] == "all_at_half" or
                           (rules["sub_hull_rows"] == "combined_rows_at_half" and len(self.kinds) > 1)):
            self.sinks_at = self.half
        else:
            self.sinks_at = self.hp
        if rules["threshold_less_rows"] == "any_hit":
            self.no_threshold_at = 1
        else:
            self.no_threshold_at = self.fails_at


class Ship:
    """One ship's sheet during one trial, with the source's row effects (l.36-53)."""

    def __init__(self, sheet, rules, constants, rng):
        self.rng = rng
        self.rules = rules
        self.c = constants
        self.submarine = bool(sheet.get("submarine", False))
        self.max_speed = sheet["max_speed"]
        self.max_depth = sheet.get("max_depth")
        self.hexes = []
        for h, hx in enumerate(sheet["hexes"]):
            self.hexes.append([Row(r, h, self.submarine, rules) for r in hx["rows"]])
        self.rows = [r for hx in self.hexes for r in hx]
        self.sunk = False
        self.leaks = 0
        self.depth_lost = 0
        self.slowed = 0
        self.fires_started = 0
        self.burning = []          # rows first hit by each fire still burning
        self.depth = 0             # nesting of damage() calls (one weapon hit and what it sets off)
        self.chain_fires = 0       # fires that hit has set off: a chain stops at CHAIN_LIMIT

    # ---- effects
    def damage(self, row, amount, by_fire=False) -> int:
        """Deal ``amount`` to ``row``; returns everything dealt, the effects' damage included."""
        if amount <= 0:
            return 0
        if self.depth == 0:
            self.chain_fires = 0
        self.depth += 1
        try:
            return self._damage(row, amount, by_fire)
        finally:
            self.depth -= 1

    def _damage(self, row, amount, by_fire):
        before = row.damage
        row.damage += amount
        after = row.damage
        total = amount

        def reached(level):
            return before < level <= after
        may_burn = (not by_fire) or self.rules["fire_spreads"] == "yes"
        # "Ein Feuer kann in der selben Zeile wiederholt ausbrechen": a hit on a row already past its
        # fire threshold starts another fire (rule fire_repeats)
        again = may_burn and self.rules["fire_repeats"] == "every_hit_past_threshold"

        def past(level):
            return again and before >= level
        later = []
        if past(row.half) and "maschinenraum" in row.kinds:
            later.append(("fire", row.hex))
        if past(row.fails_at) and "schornstein" in row.kinds:
            later.append(("fire", row.hex))
        if past(row.no_threshold_at) and "flugbenzin" in row.kinds:
            later.append(("fire", row.hex))
        if reached(row.half):
            if "rumpf" in row.kinds:
                self.leaks += 1
                if self.submarine:
                    if self.rules["sub_leak_depth"] == "per_row" or self.depth_lost == 0:
                        self.depth_lost += self.c["speed_effects"]["sub_leak_depth"]
                else:
                    self.slowed += self.c["speed_effects"]["leak"]
            if "maschinenraum" in row.kinds and may_burn:
                later.append(("fire", row.hex))
        if reached(row.fails_at) and "schornstein" in row.kinds:
            self.slowed += self.c["speed_effects"]["speed_loss"]
            if may_burn:
                later.append(("fire", row.hex))
        if reached(row.no_threshold_at):
            if "tank" in row.kinds:
                self.slowed += self.c["speed_effects"]["speed_loss"]
            if "flugbenzin" in row.kinds and may_burn:
                later.append(("fire", row.hex))
            if "magazin" in row.kinds:
                later.append(("magazine", row))
        if "rumpf" in row.kinds and reached(row.sinks_at):
            self.sunk = True
        for what, arg in later:
            if what == "fire":
                total += self.start_fire(arg)
            else:
                boom = sum(W10(self.rng) for _ in range(self.c["magazine"]["explosion_dice"])) * arg.he
                total += self.damage(self.rng.choice(self.hexes[arg.hex]), boom)
        return total

    def start_fire(self, hex_index) -> int:
        if self.depth == 0:                      # a fire started directly (the fire question's first)
            self.chain_fires = 0
        if self.chain_fires >= CHAIN_LIMIT:      # repeated fires in a hex of one fire row never end
            return 0
        self.chain_fires += 1
        row = self.rng.choice(self.hexes[hex_index])
        self.fires_started += 1
        self.burning.append(row)
        return self.damage(row, self.c["fire"]["immediate_damage"], by_fire=True)

    def speed_lost(self) -> int:
        engines = [r for r in self.rows if "maschinenraum" in r.kinds]
        engine = 0
        if engines:
            if self.rules["engine_speed"] == "destroyed_rows":
                working = sum(1 for r in engines if r.damage < r.fails_at)
                engine = self.max_speed - math.floor(self.max_speed * working / len(engines))
            else:
                hp = sum(r.hp for r in engines)
                left = hp - sum(min(r.damage, r.hp) for r in engines)
                engine = self.max_speed - math.floor(self.max_speed * left / hp)
        return min(self.max_speed, self.slowed + engine)

    def underwater_row(self, where="hex_then_row"):
        """A torpedo/mine hit (rules hit_location / mine_hit_location): a random hex holding an
        eligible row, then one of those rows; any eligible row of the ship; or one of the bow's."""
        hexes = [[r for r in hx if r.kinds & UNDERWATER_KINDS] for hx in self.hexes]
        if where == "bow_hex":
            return self.rng.choice(hexes[0])
        hexes = [hx for hx in hexes if hx]
        if where == "uniform_row":
            return self.rng.choice([r for hx in hexes for r in hx])
        return self.rng.choice(self.rng.choice(hexes))

    def damage_taken(self) -> int:
        """Each row's damage capped at its [HP]."""
        return sum(min(r.damage, r.hp) for r in self.rows)


def _constants(data):
    return plain(data["hacse"])


def _rules(rules):
    out = dict(DEFAULT_RULES)
    for name, value in (rules or {}).items():
        if name not in out:
            raise ValueError(f"unknown rule option {name}")
        out[name] = value
    return out


# --------------------------------------------------------------------------- depth charges
def hex_steps(a, b) -> int:
    """Distance between axial hexes via cube coordinates."""
    ax, az = a[0], a[1]
    bx, bz = b[0], b[1]
    ay, by = -ax - az, -bx - bz
    return max(abs(ax - bx), abs(ay - by), abs(az - bz))


def sub_prior(sub):
    """[(depth, (q, r), weight)] of the U-boat prior as the spec defines it."""
    depths = sub["depth"] if isinstance(sub["depth"], list) else [sub["depth"]]
    dw = sub.get("depth_weights") or [1] * len(depths)
    pos = sub.get("position", "guess")
    if pos == "guess":
        places = [(0, 0)]
    elif pos == "guess_and_ring":
        places = [(0, 0), (1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1)]
    else:
        places = [tuple(p) for p in pos]
    pw = sub.get("position_weights") or [1] * len(places)
    return [(d, p, a * b) for d, a in zip(depths, dw) for p, b in zip(places, pw) if a * b > 0]


def one_depth_charge_round(rng, charges, depth, place, speed, ship, c, rules):
    """The spec's depth-charge round; returns (formula damage, thrower damage, rows' damage)."""
    dc = c["depth_charge"]
    divisor = 10 if rules["depth_unit"] == "per_75m" else 1
    by_formula = thrower = rows_took = 0
    for ch in charges:
        w = W10(rng)
        if ch.get("hex_distance_to_sub") is not None:
            apart = ch["hex_distance_to_sub"]
        else:
            apart = hex_steps(tuple(ch["offset"]), place)
        steps = abs(ch["depth_setting"] - depth) // divisor + apart
        hurt = w - dc["damage_per_step"] * steps
        if hurt > 0:
            by_formula += hurt
            if not ship.sunk:
                rows_took += ship.damage(rng.choice(ship.rows), hurt)
        if rules["charge_roll"] == "one_per_unit":
            w = W10(rng)
        to_thrower = (abs(ch["depth_setting"] - dc["thrower_depth"]) // divisor
                      + ch.get("hex_distance_to_thrower", 1))
        thrower += max(0, w - dc["damage_per_step"] * to_thrower - dc["per_thrower_speed"] * speed)
    # end of round: "W10 Schaden je Lvl Unterschied" below the (reduced) maximum depth
    below = depth - (ship.max_depth - ship.depth_lost)
    if below > 0 and not ship.sunk:
        if rules["overrun_dice"] == "per_level":
            for _ in range(below):
                rows_took += ship.damage(rng.choice(ship.rows), W10(rng))
        else:
            rows_took += ship.damage(rng.choice(ship.rows), W10(rng) * below)
    return by_formula, thrower, rows_took


def _pick(rng, prior):
    total = sum(w for _, _, w in prior)
    x = rng.randrange(total)
    for d, p, w in prior:
        if x < w:
            return d, p
        x -= w
    raise AssertionError


def depth_charge_trial(rng, params, rules, data):
    c = _constants(data)
    sub = params["sub"]
    sheet = plain(data["ships"][sub.get("ship", "type_viic")])
    depth, place = _pick(rng, sub_prior(sub))
    ship = Ship(sheet, rules, c, rng)
    formula, thrower, took = one_depth_charge_round(rng, params["charges"], depth, place,
                                                    params["thrower"]["speed"], ship, c, rules)
    return {"damage": formula, "p_sunk": int(ship.sunk), "p_leaking": int(ship.leaks > 0),
            "thrower_damage": thrower, "total_damage": ship.damage_taken(), "damage_dealt": took}


def optimiser_patterns(params):
    """[(number in the full enumeration, pattern as a tuple of (offset, depth) drops)] the optimiser
    plays: every multiset of ``charges`` candidate drops, or only those ``params["patterns"]`` names
    (spec §4.2: a label 'd2x3 d3x3' / 'd2@(0,0)x2 d3@(1,0)x4', depth settings, or [[q, r], depth] drops)."""
    import itertools
    import re
    offsets = []
    for o in params.get("offsets", [[0, 0]]):
        if tuple(o) not in offsets:
            offsets.append(tuple(o))
    cands = [(o, d) for o in offsets for d in sorted(set(params["depth_settings"]))]
    pats = list(itertools.combinations_with_replacement(cands, params["charges"]))
    if params.get("patterns") is None:
        return list(enumerate(pats))
    wanted = set()
    for spec in params["patterns"]:
        if isinstance(spec, str):
            drops = []
            for token in spec.split():
                d, q, r, n = re.fullmatch(r"d(\d+)(?:@\((-?\d+),(-?\d+)\))?x(\d+)", token).groups()
                where = offsets[0] if q is None else (int(q), int(r))
                drops += [(where, int(d))] * int(n)
        elif all(isinstance(x, int) for x in spec):
            drops = [(offsets[0], d) for d in spec]
        else:
            drops = [(tuple(o), d) for o, d in spec]
        wanted.add(tuple(sorted(drops, key=cands.index)))
    return [(i, pat) for i, pat in enumerate(pats) if pat in wanted]


def pattern_p_sunk(params, rules, data, trials, seed):
    """{pattern (tuple of (offset, depth) drops): P(sunk) estimate} for the optimiser's params."""
    rng = random.Random(seed)
    out = {}
    for _, pat in optimiser_patterns(params):
        charges = [{"depth_setting": d, "offset": list(o),
                    "hex_distance_to_thrower": params.get("hex_distance_to_thrower", 1)} for o, d in pat]
        p = {"charges": charges, "sub": params["sub"], "thrower": params["thrower"]}
        out[pat] = sum(depth_charge_trial(rng, p, rules, data)["p_sunk"] for _ in range(trials)) / trials
    return out


# --------------------------------------------------------------------------- torpedoes and mines
def torpedo_trial(rng, params, rules, data):
    c = _constants(data)
    ship = Ship(plain(data["ships"][params.get("ship", "destroyer")]), rules, c, rng)
    dice = params.get("damage_dice") or c["torpedo"]["damage_dice"]
    p_hit = torpedo_p_hit(params, rules, c)
    took = 0
    for _ in range(params["torpedoes"]):
        if rng.random() < p_hit and not ship.sunk:
            took += ship.damage(ship.underwater_row(rules["hit_location"]), sum(W10(rng) for _ in range(dice)))
    return {"p_sunk": int(ship.sunk), "damage": ship.damage_taken(), "speed_lost": ship.speed_lost(),
            "fires": ship.fires_started, "damage_dealt": took}


def torpedo_p_hit(params, rules, c) -> float:
    """One torpedo's chance to hit the target (spec §4.3): zero with a ship in its path (l.85), a
    target beyond 'Weit' (l.83) or inside 'Nah' (l.81); otherwise the given chance, the evasion
    roll, or the l.87 sighting roll followed by the evasion module's two chances."""
    if params.get("ships_in_path", 0) > 0:
        return 0.0
    dist = params.get("range_hexes")
    if dist is not None:
        weit = params.get("max_range") or c["torpedo"]["max_range"]
        nah = params.get("arming_range")
        nah = c["torpedo"]["arming_range"] if nah is None else nah
        if dist > weit or dist < nah or (dist == nah and rules["torpedo_arming"] == "unarmed_through_nah"):
            return 0.0
    if params.get("hit_probability") is not None:
        return params["hit_probability"]
    if params.get("hit_difficulty") is not None:
        return 1 - roll_success(params["hit_difficulty"], rules, c)
    look = params["torpedo_sighting"]
    if look.get("firer_sighted"):
        seen = 1.0
    else:
        net = c["torpedo"]["sighting_difficulty"]             # "mit einer Erschwernis von 3"
        if rules["torpedo_sighting_difficulty"] == "added_to_range":
            step = c["sighting"]["clear_hexes_per_step"]     # radar: "keine Erleichterung"
            net += look["range_hexes"] // step if rules["range_steps"] == "floor" else -(-look["range_hexes"] // step)
        seen = roll_success(net, rules, c)
    ev = c["torpedo_evasion_module"]
    return seen * ev["hit_if_seen"] + (1 - seen) * ev["hit_if_unseen"]


def torpedo_positions(speed, max_range, lifetime="floor"):
    """End-of-round distances of a torpedo fired in round R (first move at the end of R+1)."""
    run_rounds = math.floor(max_range / speed) if lifetime == "floor" else math.ceil(max_range / speed)
    out = []
    travelled = 0
    for k in range(1, run_rounds + 1):
        travelled = min(travelled + speed, max_range)
        out.append((k, travelled))
    return out


def mine_p_hit(params, rules, c) -> float:
    """P(a hex entered sets off a mine): the density, times 1 - avoid_if_seen when the ship steers
    clear of the mines it sees (every mine is seen 10 hex off, l.99, before its hex is entered)."""
    if rules["mine_avoidance"] == "avoids_seen":
        return params["density"] * (1 - c["mine_avoidance_module"]["avoid_if_seen"])
    return params["density"]


def mine_trial(rng, params, rules, data):
    c = _constants(data)
    ship = Ship(plain(data["ships"][params.get("ship", "destroyer")]), rules, c, rng)
    dice = params.get("damage_dice") or c["mine"]["damage_dice"]
    took = 0
    for _ in range(params["hexes"]):
        if ship.sunk:
            break
        if rng.random() < mine_p_hit(params, rules, c):
            took += ship.damage(ship.underwater_row(rules["mine_hit_location"]), sum(W10(rng) for _ in range(dice)))
    return {"p_sunk": int(ship.sunk), "damage": ship.damage_taken(), "damage_dealt": took}


# --------------------------------------------------------------------------- fire
def fire_trial(rng, params, rules, data):
    c = _constants(data)
    ship = Ship(plain(data["ships"][params.get("ship", "destroyer")]), rules, c, rng)
    base = params.get("base_number")
    base = c["base_number"] if base is None else base
    target = c["fire"]["base_multiple"] * base
    start = params.get("hex")
    if start is None:      # the first hex with a row that can start a fire (else hex 0)
        start = next((h for h, hx in enumerate(ship.hexes) if any(r.kinds & FIRE_KINDS for r in hx)), 0)
    took = ship.start_fire(start)
    rounds = 0
    while ship.burning and not ship.sunk and rounds < FIRE_ROUND_LIMIT:
        roll = sum(W10(rng) for _ in range(c["fire"]["extinguish_dice"]))
        success = roll > target if rules["fire_extinguish"] == "overroll" else roll <= target
        if success:
            if rules["extinguish_scope"] == "all_fires":
                ship.burning = []
            else:
                ship.burning.pop(0)
            if not ship.burning:
                break
        rounds += 1
        fires = ship.burning[:1] if rules["fire_damage"] == "per_ship" else list(ship.burning)
        for first_row in fires:
            if ship.sunk:
                break
            if rules["fire_row"] == "same_row":
                row = first_row
            else:
                row = rng.choice(ship.hexes[first_row.hex])
            took += ship.damage(row, c["fire"]["damage_per_round"], by_fire=True)
    return {"rounds_burning": rounds, "damage": ship.damage_taken(),
            "p_row_destroyed": int(any(r.damage >= r.hp for r in ship.rows)), "p_sunk": int(ship.sunk),
            "damage_dealt": took}


# --------------------------------------------------------------------------- sighting
def roll_success(net, rules, c) -> float:
    """The placeholder roll model (G1) at net difficulty ``net``."""
    if rules["roll_model"] == "linear":
        m = c["roll_model"]["linear"]
        return min(1.0, max(0.0, m["p0"] - m["step"] * net))
    m = c["roll_model"]["dice_under"]
    hits = sum(1 for faces in _all_rolls(m["dice"]) if sum(faces) + net <= m["target"])
    return hits / 10 ** m["dice"]


def _all_rolls(n):
    if n == 0:
        yield ()
        return
    for rest in _all_rolls(n - 1):
        for f in range(1, 11):
            yield rest + (f,)


def sight_step(params, rules, s):
    """Hexes per +1 of range on a normal (visual) sighting roll, clear weather (l.31-32)."""
    has_rf, has_radar = params.get("rangefinder", False), params.get("radar", False)
    step = s["clear_hexes_per_step"]
    with_rf = step * 2 if has_rf else step                        # "verdoppelt die Distanz"
    if not has_radar:
        return with_rf
    how = rules["radar_with_rangefinder"]
    tripled = 3 * (with_rf if how == "multiply" else step)       # "verdreifacht die Sicht-Distanz"
    if rules["radar_limit"] == "penalty_at_least_1_per_5_hex":   # "fällt nie unter +1 je 5 Hex"
        tripled = min(tripled, 5)
    else:
        tripled = max(tripled, 5)
    if how == "better" and has_rf:
        return max(with_rf, tripled)
    return tripled


def sighting_difficulty(params, rules, data):
    """The net difficulty of one sighting roll, None when the sensor cannot find the boat."""
    s = _constants(data)["sighting"]

    def per(n, k):
        return n // k if rules["range_steps"] == "floor" else -(-n // k)
    dist, depth = params["distance"], params["sub_depth"]
    own = params.get("own_speed", 0)
    sensor = params["sensor"]
    visual = sight_step(params, rules, s)
    if sensor == "periscope":
        if depth != s["periscope_depth"] or not params.get("periscope_raised", True):
            return None
        extra = per(dist, visual) if rules["periscope_difficulty"] == "added_to_range" else 0
        net = s["periscope_difficulty"] + extra
    elif sensor == "passive_sonar":
        net = own + 2 * depth + dist - 2 * params.get("sub_speed", 0)
        if rules["sonar_terms"] == "add_range":
            net += per(dist, visual)
    elif own > s["asdic_max_own_speed"]:
        return None
    else:
        net = 2 * depth + per(dist, s["asdic_hexes_per_step"])
    if rules["sub_target_bm"] == "ease":     # l.27: the target's BM "immer als Erleichterung"
        net -= abs(plain(data["ships"][params.get("sub_ship", "type_viic")]["bm"]))
    return net


def sighting_trial(rng, params, rules, data):
    net = sighting_difficulty(params, rules, data)
    p = 0.0 if net is None else roll_success(net, rules, _constants(data))
    k = params.get("rounds", 5)

    def search():
        for rnd in range(1, k + 1):
            if rng.random() < p:
                return rnd
        return k + 1
    first = search()
    # given a sighting: this trial's round, else repeat whole k-round searches until one sights
    given = first
    while p > 0 and given > k:
        given = search()
    return {"p_sighted_round": int(first == 1), "p_sighted_within": int(first <= k), "rounds_to_sighting": first,
            "rounds_to_sighting_if_seen": given if p > 0 else 0}


# --------------------------------------------------------------------------- entry point
TRIALS = {"depth_charge": depth_charge_trial, "torpedo_salvo": torpedo_trial, "mine_field": mine_trial,
          "fire": fire_trial, "sighting": sighting_trial}


def simulate(question: str, params: dict, rules: dict, data: dict, trials: int, seed: int) -> dict:
    """Per-trial metric values of ``question`` (names as the spec lists them)."""
    if question not in QUESTIONS:
        raise ValueError(f"unknown question {question!r}")
    rules = _rules(rules or {})
    data = data if data is not None else load_data()
    rng = random.Random(seed)
    if question == "depth_charge_pattern":
        pats = optimiser_patterns(params)
        out = {f"p_sunk_p{i:03d}": [] for i, _ in pats}
        for _ in range(trials):
            for i, pat in pats:
                charges = [{"depth_setting": d, "offset": list(o),
                            "hex_distance_to_thrower": params.get("hex_distance_to_thrower", 1)} for o, d in pat]
                p = {"charges": charges, "sub": params["sub"], "thrower": params["thrower"]}
                out[f"p_sunk_p{i:03d}"].append(depth_charge_trial(rng, p, rules, data)["p_sunk"])
        return out
    play = TRIALS[question]
    out = {m: [] for m in METRICS[question]}
    for _ in range(trials):
        res = play(rng, params, rules, data)
        for m in out:
            out[m].append(res[m])
    return out
