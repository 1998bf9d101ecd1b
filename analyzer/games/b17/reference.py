"""Slow, obviously-correct reference of the B-17 defence model (spec: docs/models/b17.md).

Rules: the digest of "Defensa del B-17" (docs/models/b17.md), section numbers cited as ``§n``.
Randomness: only ``random.Random(seed)``. Nothing is imported from ``analyzer`` or ``kernels``.

Public API
----------
simulate(question, params, rules, data, trials, seed) -> {metric: [per-trial values]}
load_data(path_or_none) -> dict            (keys: gun_arcs, fighters, crew, fighter_fire, mission)
exact_gun_shot / exact_gun_matrix / exact_attack_wave(params, rules, data) -> {metric: {value: Fraction}}
fighter_hits(damage, fighter_type, data) -> int       (§5, the worked example)
resolve_attack(...)                                    (one attack with scripted dice, for tests)
"""
from __future__ import annotations

import itertools
import random
from fractions import Fraction
from pathlib import Path

import yaml

#: the shipped data: the installed package's copy (analyzer/scenarios) or the repository's scenarios/
_PACKAGED = Path(__file__).resolve().parents[2] / "scenarios" / "b17"
DEFAULT_DIR = _PACKAGED if _PACKAGED.is_dir() else Path(__file__).resolve().parents[3] / "scenarios" / "b17"

QUESTIONS = ("gun_shot", "gun_matrix", "attack_wave", "mission")
CLOCKS = ("12:00", "1:30", "3:00", "4:30", "6:00", "7:30", "9:00", "10:30")
CLOCK_IDS = {"12:00": "1200", "1:30": "0130", "3:00": "0300", "4:30": "0430",
             "6:00": "0600", "7:30": "0730", "9:00": "0900", "10:30": "1030"}
ALTITUDES = ("high", "level", "low")
# YAML 1.1 reads an unquoted 1:30 as the base-60 integer 90: accept those too.
_SEXAGESIMAL = {720: "12:00", 90: "1:30", 180: "3:00", 270: "4:30",
                360: "6:00", 450: "7:30", 540: "9:00", 630: "10:30"}
CELL_MODIFIERS = (-2, 0, 4)                     # §2.1 "hay una cifra: -2, 0 o +4"
DAMAGE_BONUS = {"II": 0, "II+2": 2}             # §4
POLICIES = ("focus_most_dangerous", "spread", "max_kill_probability")

# name: (default, allowed values)  -- digest ambiguity in the comment
RULE_OPTIONS = {
    "d10_faces": ("one_to_ten", ("one_to_ten", "zero_to_nine")),                # A2
    "quality_dice": ("not_distinguished", ("not_distinguished", "second_colour")),  # A1
    "kill_credit": ("hitters", ("hitters", "shooters")),                        # A3 who
    "kill_credit_unit": ("crew", ("crew", "gun")),                              # A3 unit
    "tocado_penalty": ("this_attack", ("this_attack", "later_attacks")),        # A4
    "delayed_kill_share": ("same_attack", ("same_attack", "separate_steps")),   # A5
    "destroyed_target": ("keep_firing", ("keep_firing", "retarget")),           # A9
    "danado_vp": ("none", ("none", "counts_as_kill")),                          # A8
    # how the production kernels draw a shot (one draw from its exact outcome table, or three
    # d10): not a rule, so the reference accepts it and always rolls the dice
    "sampling": ("dice", ("dice", "table")),
}
QUESTION_RULES = {
    "gun_shot": ("d10_faces", "quality_dice"),
    "gun_matrix": ("d10_faces", "quality_dice"),
    "attack_wave": ("d10_faces", "quality_dice", "kill_credit", "kill_credit_unit",
                    "tocado_penalty", "delayed_kill_share", "destroyed_target"),
    "mission": tuple(RULE_OPTIONS),
}

# Caps (validation limits; no loop in the model is unbounded).
MAX_WAVES = 50
MAX_FIGHTERS_PER_WAVE = 64
MAX_GUNS = 16
FIGHTER_FIRE_MODELS = ("none", "placeholder_3d10")
RETURN_POSITIONS = ("same", "redraw")


# ----------------------------------------------------------------------------- data
def unwrap(x):
    """Strip {ph: v, note} / {ex: v} wrappers recursively."""
    if isinstance(x, dict):
        if "ph" in x and set(x) <= {"ph", "note"}:
            return unwrap(x["ph"])
        if "ex" in x and set(x) <= {"ex", "note"}:
            return unwrap(x["ex"])
        return {k: unwrap(v) for k, v in x.items()}
    if isinstance(x, list):
        return [unwrap(v) for v in x]
    return x


def load_data(path_or_none=None) -> dict:
    """Default data, or a directory with the same layout, or a gun-arc file (other data default)."""
    base = Path(path_or_none) if path_or_none else DEFAULT_DIR
    if base.is_file():
        arcs_file, data_dir = base, DEFAULT_DIR / "data"
    else:
        arcs_file, data_dir = base / "gun_arcs.yaml", base / "data"
    with open(arcs_file, encoding="utf-8") as fh:
        data = {"gun_arcs": yaml.safe_load(fh)}
    for stem in ("fighters", "crew", "fighter_fire", "mission"):
        with open(data_dir / f"{stem}.yaml", encoding="utf-8") as fh:
            data[stem] = yaml.safe_load(fh)
    return data


def norm_clock(v) -> str:
    """A clock as a scenario may write it -> "1:30". Accepted spellings: the quoted clock
    (spaces around it ignored) or the base-60 int YAML 1.1 makes of an unquoted one."""
    spellings = {clock: clock for clock in CLOCKS}
    spellings.update(_SEXAGESIMAL)
    if isinstance(v, str):
        written = v.strip()
    elif isinstance(v, int) and not isinstance(v, bool):
        written = int(v)
    else:
        written = None                   # bools, floats, None, lists: never a clock
    if written not in spellings:
        raise ValueError(f"bad clock {v!r}; use one of {CLOCKS} (quoted)")
    return spellings[written]


def parse_cell(v):
    """None -> grey; -2/0/+4 -> (mod, False); "+4**" -> (4, True). §2.1, §2.3."""
    if v is None:
        return None
    delayed = False
    if isinstance(v, str):
        s = v.strip()
        if s.endswith("**"):
            delayed, s = True, s[:-2].strip()
        mod = int(s)
    elif isinstance(v, int) and not isinstance(v, bool):
        mod = v
    else:
        raise ValueError(f"bad arc cell {v!r}")
    if mod not in CELL_MODIFIERS:
        raise ValueError(f"arc cell modifier {mod} not in {CELL_MODIFIERS}")
    return (mod, delayed)


def build_model(data: dict) -> dict:
    d = unwrap(data)
    guns = []
    raw_guns = d["gun_arcs"]["guns"]
    if not 1 <= len(raw_guns) <= MAX_GUNS:
        raise ValueError("number of guns out of range")
    for order, g in enumerate(raw_guns):
        arcs = g["arcs"]
        cells = {}
        seen = set()
        for ck, row in arcs.items():
            c = norm_clock(ck)
            if set(row) != set(ALTITUDES):
                raise ValueError(f"gun {g['id']} clock {c}: need exactly {ALTITUDES}")
            for alt in ALTITUDES:
                cells[(c, alt)] = parse_cell(row[alt])
            seen.add(c)
        if seen != set(CLOCKS):
            raise ValueError(f"gun {g['id']}: all 8 clocks required")
        only = g.get("only_clock")
        guns.append({
            "id": g["id"], "order": order, "crew": g["crew"],
            "bonus": DAMAGE_BONUS[g["damage"]], "damage": g["damage"],
            "group": g.get("exclusive_group"),
            "only": None if only is None else {norm_clock(c) for c in only},
            "cells": cells,
        })
    if len({g["id"] for g in guns}) != len(guns):
        raise ValueError("duplicate gun id")
    crews = []
    for g in guns:
        if g["crew"] not in crews:
            crews.append(g["crew"])
    ft = d["fighters"]
    return {
        "guns": guns,
        "gun_by_id": {g["id"]: g for g in guns},
        "crews": crews,
        "types": {t: {"k": v["damage_per_hit"], "rank": v["danger_rank"]}
                  for t, v in ft["types"].items()},
        "tocado_at": ft["states"]["tocado_at_hits"],
        "danado_at": ft["states"]["danado_at_hits"],
        "destroyed_at": ft["states"]["destroyed_at_hits"],
        "penalty": ft["shot_penalty"],
        "skills": d["crew"]["skills"],
        "default_skill": d["crew"]["default_skill"],
        "intercom_ok": d["crew"]["intercom_ok"],
        "fighter_fire": d["fighter_fire"],
        "mission": d["mission"],
    }


def resolve_rules(rules: dict | None, question: str) -> dict:
    rules = dict(rules or {})
    out = {}
    for name, (default, values) in RULE_OPTIONS.items():
        v = rules.pop(name, default)
        if v not in values:
            raise ValueError(f"rule {name}={v!r}: allowed {values}")
        out[name] = v
    if rules:
        raise ValueError(f"unknown rule options {sorted(rules)}")
    return out


def _check_keys(params: dict, allowed: set, where: str):
    extra = set(params) - allowed
    if extra:
        raise ValueError(f"{where}: unknown parameter(s) {sorted(extra)}")


# ----------------------------------------------------------------------------- dice (§3, §4, §5)
def faces(rules) -> range:
    return range(1, 11) if rules["d10_faces"] == "one_to_ten" else range(0, 10)


def roll3(rng: random.Random, rules) -> tuple:
    f = faces(rules)
    return (rng.randint(f[0], f[-1]), rng.randint(f[0], f[-1]), rng.randint(f[0], f[-1]))


def fighter_hits(damage: int, fighter_type: str, data_or_model) -> int:
    """§5: one hit per `damage_per_hit` points or fraction: ceil(D / k)."""
    model = data_or_model if "types" in data_or_model and "guns" in data_or_model else build_model(data_or_model)
    k = model["types"][fighter_type]["k"]
    return -(-damage // k)


def shot(dice, mod, skill, bonus, k, rules):
    """One shot from its three dice. dice[0] is the distinguished die (A1 reading a).

    Returns (hit, damage, fighter_hits). Damage comes from the SAME roll (§4)."""
    if sum(dice) + mod > skill:                                       # §3.4 roll-under
        return (False, 0, 0)
    if rules["quality_dice"] == "not_distinguished":                  # A1 (a)
        q = dice[1] + dice[2]
    else:                                                             # A1 (b): fixed pair of another colour
        q = dice[0] + dice[1]
    dmg = q + bonus                                                   # §4 II / II+2
    return (True, dmg, -(-dmg // k))                                  # §5 ceil(D/k)


_COUNTS_CACHE: dict = {}


def outcome_counts(mod, skill, bonus, k, rules) -> dict:
    """Exact counts over the 1000 ordered 3d10 outcomes: {(hit, hits): count}."""
    key = (mod, skill, bonus, k, rules["d10_faces"], rules["quality_dice"])
    if key not in _COUNTS_CACHE:
        out: dict = {}
        for dice in itertools.product(faces(rules), repeat=3):
            hit, _, h = shot(dice, mod, skill, bonus, k, rules)
            out[(hit, h)] = out.get((hit, h), 0) + 1
        _COUNTS_CACHE[key] = out
    return _COUNTS_CACHE[key]


def kill_and_hit_counts(mod, skill, bonus, k, prior, destroyed_at, rules):
    """Integer counts out of 1000: shots that alone bring the fighter to destroyed, and hits."""
    kc = hc = 0
    for (hit, h), n in outcome_counts(mod, skill, bonus, k, rules).items():
        if hit:
            hc += n
            if prior + h >= destroyed_at:
                kc += n
    return kc, hc


# ----------------------------------------------------------------------------- bomber state helpers
def crew_skill(model, params, crew):
    if "skills" in params and crew in (params["skills"] or {}):
        return params["skills"][crew]
    if params.get("skill") is not None:
        return params["skill"]
    return model["skills"].get(crew, model["default_skill"])


def cell_for(model, gun, clock, alt, intercom_ok, gun_ok):
    """§3.2 eligibility: working gun, navigator only_clock (§2.4), non-grey cell, ** needs intercom (§2.3)."""
    if not gun_ok.get(gun["id"], True):
        return None
    if gun["only"] is not None and clock not in gun["only"]:
        return None
    c = gun["cells"][(clock, alt)]
    if c is None:
        return None
    if c[1] and not intercom_ok:
        return None
    return c


def shooters_of(model):
    """Firing positions in gun order; an exclusive group is one shooter at its first gun (§2.4)."""
    out, groups = [], {}
    for g in model["guns"]:
        if g["group"] is None:
            out.append([g])
        elif g["group"] not in groups:
            groups[g["group"]] = [g]
            out.append(groups[g["group"]])
        else:
            groups[g["group"]].append(g)
    return out


def _state(model, params):
    gun_ok = dict(params.get("gun_ok") or {})
    for gid in gun_ok:
        if gid not in model["gun_by_id"]:
            raise ValueError(f"gun_ok: unknown gun {gid}")
    intercom = params.get("intercom_ok")
    if intercom is None:
        intercom = model["intercom_ok"]
    return {"intercom_ok": bool(intercom), "gun_ok": gun_ok,
            "skills": {c: crew_skill(model, params, c) for c in model["crews"]}}


# ----------------------------------------------------------------------------- one attack (§1, §3, §6, §7)
def danger_key(model, f):
    return (f["hits"], model["types"][f["type"]]["rank"], f["idx"])


def choose_target(model, shooter, fighters, state, rules, policy, assigned, running):
    """Deterministic target choice of one shooter. Returns (gun, fighter, cell) or None."""
    best, best_key = None, None
    for g in shooter:
        for f in fighters:
            if rules["destroyed_target"] == "retarget" and f["hits"] + running[f["idx"]] >= model["destroyed_at"]:
                continue
            cell = cell_for(model, g, f["clock"], f["alt"], state["intercom_ok"], state["gun_ok"])
            if cell is None:
                continue
            dk = danger_key(model, f)
            if policy == "focus_most_dangerous":
                key = (dk, g["order"])
            elif policy == "spread":
                key = (assigned[f["idx"]], dk, g["order"])
            elif policy == "max_kill_probability":
                kc, hc = kill_and_hit_counts(cell[0], state["skills"][g["crew"]], g["bonus"],
                                             model["types"][f["type"]]["k"], f["hits"],
                                             model["destroyed_at"], rules)
                key = (-kc, -hc, dk, g["order"])
            else:
                raise ValueError(f"unknown policy {policy!r}; allowed {POLICIES}")
            if best_key is None or key < best_key:
                best, best_key = (g, f, cell), key
    return best


def finish_attack(model, fighters, shots, rules):
    """Apply ordinary hits, fighter fire eligibility/penalty, delayed hits, kill credit.

    shots: list of dicts {gun, fidx, delayed, hit, hits}."""
    D, DA = model["destroyed_at"], model["danado_at"]
    per = {}
    for f in fighters:
        fs = [s for s in shots if s["fidx"] == f["idx"]]
        ord_h = sum(s["hits"] for s in fs if not s["delayed"])
        del_h = sum(s["hits"] for s in fs if s["delayed"])
        after_ord = f["hits"] + ord_h                       # §1 step 3
        fired = after_ord < D                               # §6: destroyed does not attack
        if not fired:
            penalty = None
        elif after_ord >= DA:
            penalty = model["penalty"]["danado"]            # +4 replaces +2
        elif after_ord >= model["tocado_at"]:
            if rules["tocado_penalty"] == "this_attack" or f["hits"] >= model["tocado_at"]:
                penalty = model["penalty"]["tocado"]        # A4
            else:
                penalty = model["penalty"]["intact"]
        else:
            penalty = model["penalty"]["intact"]
        final = after_ord + del_h                           # §1 step 5: ** hits after the attack
        kills = {}
        if final >= D:
            if rules["delayed_kill_share"] == "same_attack":
                pool = fs
            elif after_ord >= D:
                pool = [s for s in fs if not s["delayed"]]
            else:
                pool = [s for s in fs if s["delayed"]]
            if rules["kill_credit"] == "hitters":
                pool = [s for s in pool if s["hits"] >= 1]
            if rules["kill_credit_unit"] == "crew":
                crews = []
                for s in pool:
                    if s["gun"]["crew"] not in crews:
                        crews.append(s["gun"]["crew"])
                for c in crews:
                    kills[c] = Fraction(1, len(crews))
            else:
                for s in pool:
                    c = s["gun"]["crew"]
                    kills[c] = kills.get(c, 0) + Fraction(1, len(pool))
        per[f["idx"]] = {"ord": ord_h, "del": del_h, "after_ord": after_ord, "fired": fired,
                         "penalty": penalty, "final": final, "kills": kills}
    hits_crew = {c: 0 for c in model["crews"]}
    for s in shots:
        hits_crew[s["gun"]["crew"]] += s["hits"]            # §7: every hit recorded, even past 3
    return per, hits_crew


def resolve_attack(model, fighters, state, rules, policy, dice_source):
    """One attack: sequential choose-and-roll in shooter order (== simultaneous declaration
    under destroyed_target=keep_firing because choices never depend on rolls then).

    dice_source(gun, fighter) -> 3 dice. Returns (per_fighter, hits_crew, shots)."""
    assigned = {f["idx"]: 0 for f in fighters}
    running = {f["idx"]: 0 for f in fighters}
    shots = []
    for sh in shooters_of(model):
        ch = choose_target(model, sh, fighters, state, rules, policy, assigned, running)
        if ch is None:
            continue
        g, f, (mod, delayed) = ch
        dice = dice_source(g, f)
        hit, _, h = shot(dice, mod, state["skills"][g["crew"]], g["bonus"],
                         model["types"][f["type"]]["k"], rules)
        shots.append({"gun": g, "fidx": f["idx"], "delayed": delayed, "hit": hit, "hits": h})
        assigned[f["idx"]] += 1
        if not delayed:
            running[f["idx"]] += h
    per, hits_crew = finish_attack(model, fighters, shots, rules)
    return per, hits_crew, shots


# ----------------------------------------------------------------------------- params
FIGHTER_KEYS = {"type", "clock", "altitude", "prior_hits", "count"}


def expand_fighters(model, specs, where="fighters"):
    """Fighter specs -> list of (type, clock|None, alt|None, prior_hits), count expanded."""
    out = []
    for sp in specs or []:
        _check_keys(sp, FIGHTER_KEYS, where)
        t = sp["type"]
        if t not in model["types"]:
            raise ValueError(f"unknown fighter type {t!r}")
        clock = sp.get("clock")
        alt = sp.get("altitude")
        if (clock is None) != (alt is None):
            raise ValueError("give both clock and altitude, or neither (drawn)")
        if clock is not None:
            clock = norm_clock(clock)
            if alt not in ALTITUDES:
                raise ValueError(f"bad altitude {alt!r}")
        prior = sp.get("prior_hits", 0)
        if prior not in (0, 1, 2):
            raise ValueError("prior_hits must be 0, 1 or 2")
        n = sp.get("count", 1)
        if not isinstance(n, int) or n < 1:
            raise ValueError("count must be a positive integer")
        out.extend([(t, clock, alt, prior)] * n)
    if len(out) > MAX_FIGHTERS_PER_WAVE:
        raise ValueError(f"more than MAX_FIGHTERS_PER_WAVE={MAX_FIGHTERS_PER_WAVE} fighters")
    return out


def position_table(params):
    pd = params.get("position_distribution")
    if pd is None:
        return [(c, a, 1.0) for c in CLOCKS for a in ALTITUDES]
    out = []
    for e in pd:
        _check_keys(e, {"clock", "altitude", "weight"}, "position_distribution")
        if e["altitude"] not in ALTITUDES:
            raise ValueError(f"bad altitude {e['altitude']!r}")
        w = float(e.get("weight", 1))
        if w < 0:
            raise ValueError("weights must be >= 0")
        out.append((norm_clock(e["clock"]), e["altitude"], w))
    if sum(w for *_, w in out) <= 0:
        raise ValueError("position_distribution has zero total weight")
    return out


def draw_position(rng, table):
    total = sum(w for *_, w in table)
    r = rng.random() * total
    acc = 0.0
    for c, a, w in table:
        acc += w
        if r < acc and w > 0:
            return c, a
    for c, a, w in reversed(table):        # floating-point edge
        if w > 0:
            return c, a


def _policy(params):
    p = params.get("policy", "focus_most_dangerous")
    if p not in POLICIES:
        raise ValueError(f"policy {p!r}: allowed {POLICIES}")
    return p


# ----------------------------------------------------------------------------- gun_shot
GUN_SHOT_PARAMS = {"skill", "modifier", "gun", "clock", "altitude", "damage", "fighter",
                   "prior_hits", "intercom_ok", "gun_ok"}
GUN_SHOT_METRICS = ("p_hit", "damage", "hits", "p_destroyed", "p_damaged_or_worse")


def gun_shot_setup(model, params):
    """-> (mod or None if the gun cannot fire, skill, bonus, k, prior)."""
    _check_keys(params, GUN_SHOT_PARAMS, "gun_shot")
    gun = model["gun_by_id"][params["gun"]] if params.get("gun") is not None else None
    if params.get("gun") is not None and gun is None:
        raise ValueError("unknown gun")
    fighter = params.get("fighter", "Me109")
    if fighter not in model["types"]:
        raise ValueError(f"unknown fighter type {fighter!r}")
    k = model["types"][fighter]["k"]
    prior = params.get("prior_hits", 0)
    if prior not in (0, 1, 2):
        raise ValueError("prior_hits must be 0, 1 or 2")
    dmg = params.get("damage", gun["damage"] if gun else "II")
    if dmg not in DAMAGE_BONUS:
        raise ValueError("damage must be 'II' or 'II+2'")
    if params.get("skill") is not None:
        skill = params["skill"]
    else:
        skill = model["skills"].get(gun["crew"], model["default_skill"]) if gun else model["default_skill"]
    has_pos = params.get("clock") is not None or params.get("altitude") is not None
    if params.get("modifier") is not None:
        if has_pos:
            raise ValueError("give `modifier` or `clock`+`altitude`, not both")
        mod = params["modifier"]
    else:
        if gun is None or not has_pos:
            raise ValueError("give `modifier`, or `gun` + `clock` + `altitude`")
        alt = params.get("altitude")
        if alt not in ALTITUDES:
            raise ValueError(f"bad altitude {alt!r}")
        intercom = params.get("intercom_ok")
        if intercom is None:
            intercom = model["intercom_ok"]
        cell = cell_for(model, gun, norm_clock(params["clock"]), alt, intercom, params.get("gun_ok") or {})
        mod = None if cell is None else cell[0]
    return mod, skill, DAMAGE_BONUS[dmg], k, prior


def _gun_shot_values(model, mod, skill, bonus, k, prior, dice, rules):
    D = model["destroyed_at"]
    if mod is None:
        hit, dmg, h = False, 0, 0
    else:
        hit, dmg, h = shot(dice, mod, skill, bonus, k, rules)
    return {"p_hit": int(hit), "damage": dmg, "hits": h,
            "p_destroyed": int(prior + h >= D),
            "p_damaged_or_worse": int(prior + h >= model["danado_at"])}


def exact_gun_shot(params, rules, data):
    model = build_model(data)
    rules = resolve_rules(rules, "gun_shot")
    setup = gun_shot_setup(model, params)
    out = {m: {} for m in GUN_SHOT_METRICS}
    outcomes = list(itertools.product(faces(rules), repeat=3))
    for dice in outcomes:
        vals = _gun_shot_values(model, *setup, dice, rules)
        for m, v in vals.items():
            out[m][v] = out[m].get(v, 0) + Fraction(1, len(outcomes))
    return out


# ----------------------------------------------------------------------------- gun_matrix
GUN_MATRIX_PARAMS = {"fighter", "skill", "skills", "prior_hits", "intercom_ok", "gun_ok"}


def _matrix_setup(model, params, rules):
    _check_keys(params, GUN_MATRIX_PARAMS, "gun_matrix")
    fighter = params.get("fighter", "Me109")
    if fighter not in model["types"]:
        raise ValueError(f"unknown fighter type {fighter!r}")
    prior = params.get("prior_hits", 0)
    if prior not in (0, 1, 2):
        raise ValueError("prior_hits must be 0, 1 or 2")
    state = _state(model, params)
    k = model["types"][fighter]["k"]
    cells = []   # (gun, clock, alt, mod)
    for g in model["guns"]:
        for c in CLOCKS:
            for a in ALTITUDES:
                cell = cell_for(model, g, c, a, state["intercom_ok"], state["gun_ok"])
                if cell is not None:
                    cells.append((g, c, a, cell[0]))
    # guns firing together at each position: one per shooter (exclusive group: best kill count)
    combined = {}
    for c in CLOCKS:
        for a in ALTITUDES:
            chosen = []
            for sh in shooters_of(model):
                best, bkey = None, None
                for g in sh:
                    cell = cell_for(model, g, c, a, state["intercom_ok"], state["gun_ok"])
                    if cell is None:
                        continue
                    kc, hc = kill_and_hit_counts(cell[0], state["skills"][g["crew"]], g["bonus"], k,
                                                 prior, model["destroyed_at"], rules)
                    key = (-kc, -hc, g["order"])
                    if bkey is None or key < bkey:
                        best, bkey = g, key
                if best is not None:
                    chosen.append(best)
            if chosen:
                combined[(c, a)] = chosen
    return fighter, k, prior, state, cells, combined


def _mname(metric, *parts):
    return "__".join([metric] + [CLOCK_IDS.get(p, p) for p in parts])


def gun_matrix_metric_names(params, rules, data):
    model = build_model(data)
    _, _, _, _, cells, combined = _matrix_setup(model, params, resolve_rules(rules, "gun_matrix"))
    names = []
    for g, c, a, _ in cells:
        names += [_mname("p_hit", g["id"], c, a), _mname("p_destroyed", g["id"], c, a), _mname("hits", g["id"], c, a)]
    for (c, a) in combined:
        names += [_mname("p_destroyed_all", c, a), _mname("hits_all", c, a),
                  _mname("p_destroyed_before_fire", c, a)]
    return names


def lands_before_fire(gun, clock, alt):
    """§3.1: a ** cell's shot is resolved after the fighter's attack."""
    return not gun["cells"][(clock, alt)][1]


def exact_gun_matrix(params, rules, data):
    model = build_model(data)
    rules = resolve_rules(rules, "gun_matrix")
    fighter, k, prior, state, cells, combined = _matrix_setup(model, params, rules)
    D = model["destroyed_at"]
    out = {}

    def hits_dist(g, mod):
        dist = {}
        for (hit, h), n in outcome_counts(mod, state["skills"][g["crew"]], g["bonus"], k, rules).items():
            dist[(hit, h)] = dist.get((hit, h), 0) + Fraction(n, 1000)
        return dist

    for g, c, a, mod in cells:
        hd = hits_dist(g, mod)
        ph = sum(p for (hit, _), p in hd.items() if hit)
        pd = sum(p for (_, h), p in hd.items() if prior + h >= D)
        hh = {}
        for (_, h), p in hd.items():
            hh[h] = hh.get(h, 0) + p
        out[_mname("p_hit", g["id"], c, a)] = {1: ph, 0: 1 - ph}
        out[_mname("p_destroyed", g["id"], c, a)] = {1: pd, 0: 1 - pd}
        out[_mname("hits", g["id"], c, a)] = hh
    for (c, a), gl in combined.items():
        tot = {0: Fraction(1)}
        for g in gl:
            mod = cell_for(model, g, c, a, state["intercom_ok"], state["gun_ok"])[0]
            hd = hits_dist(g, mod)
            new = {}
            for t, p in tot.items():
                for (_, h), q in hd.items():
                    new[t + h] = new.get(t + h, 0) + p * q
            tot = new
        pd = sum(p for t, p in tot.items() if prior + t >= D)
        out[_mname("p_destroyed_all", c, a)] = {1: pd, 0: 1 - pd}
        out[_mname("hits_all", c, a)] = tot
        early = [g for g in gl if lands_before_fire(g, c, a)]
        p_none = Fraction(1)      # P(the early guns' hits stay below D - prior), by enumeration
        if prior < D:
            dists = [hits_dist(g, cell_for(model, g, c, a, state["intercom_ok"], state["gun_ok"])[0])
                     for g in early]
            p_none = Fraction(0)
            for combo in itertools.product(*[list(d.items()) for d in dists]):
                if prior + sum(h for (_, h), _p in combo) < D:
                    w = Fraction(1)
                    for _, q in combo:
                        w *= q
                    p_none += w
        else:
            p_none = Fraction(0)
        out[_mname("p_destroyed_before_fire", c, a)] = {1: 1 - p_none, 0: p_none}
    return out


# ----------------------------------------------------------------------------- attack_wave
ATTACK_WAVE_PARAMS = {"fighters", "position_distribution", "policy", "intercom_ok", "gun_ok",
                      "skill", "skills"}


def attack_wave_metric_names(model):
    base = ["destroyed", "destroyed_before_firing", "damaged", "tocado", "intact",
            "fighters_firing", "firing_plus0", "firing_plus2", "firing_plus4",
            "p_any_destroyed", "guns_firing", "hits_total", "kills_total"]
    return base + [f"kills_{c}" for c in model["crews"]] + [f"hits_{c}" for c in model["crews"]]


def _wave_metrics(model, fighters, per, hits_crew, shots):
    D, DA, T = model["destroyed_at"], model["danado_at"], model["tocado_at"]
    m = {n: 0 for n in attack_wave_metric_names(model)}
    kills = {c: Fraction(0) for c in model["crews"]}
    for f in fighters:
        r = per[f["idx"]]
        if r["final"] >= D:
            m["destroyed"] += 1
        elif r["final"] >= DA:
            m["damaged"] += 1
        elif r["final"] >= T:
            m["tocado"] += 1
        else:
            m["intact"] += 1
        if not r["fired"]:
            m["destroyed_before_firing"] += 1
        else:
            m["fighters_firing"] += 1
            m[f"firing_plus{r['penalty']}"] += 1
        for c, v in r["kills"].items():
            kills[c] += v
    m["p_any_destroyed"] = int(m["destroyed"] > 0)
    m["guns_firing"] = len(shots)
    m["hits_total"] = sum(hits_crew.values())
    m["kills_total"] = m["destroyed"]
    for c in model["crews"]:
        m[f"kills_{c}"] = kills[c]
        m[f"hits_{c}"] = hits_crew[c]
    return m


def _wave_setup(model, params, rules):
    _check_keys(params, ATTACK_WAVE_PARAMS, "attack_wave")
    specs = expand_fighters(model, params.get("fighters"))
    if not specs:
        raise ValueError("attack_wave needs at least one fighter")
    return specs, position_table(params), _policy(params), _state(model, params)


def _make_fighters(specs, table, rng):
    out = []
    for i, (t, c, a, prior) in enumerate(specs):
        if c is None:
            c, a = draw_position(rng, table)
        out.append({"idx": i, "type": t, "clock": c, "alt": a, "hits": prior})
    return out


def exact_attack_wave(params, rules, data):
    """Exact distributions for a wave whose fighters all have fixed positions."""
    model = build_model(data)
    rules = resolve_rules(rules, "attack_wave")
    specs, _, policy, state = _wave_setup(model, params, rules)
    if any(c is None for _, c, _, _ in specs):
        raise ValueError("exact_attack_wave needs fixed positions")
    fighters = _make_fighters(specs, None, None)
    shooters = shooters_of(model)
    out = {n: {} for n in attack_wave_metric_names(model)}

    def rec(si, shots, assigned, running, prob):
        if si == len(shooters):
            per, hits_crew = finish_attack(model, fighters, shots, rules)
            for n, v in _wave_metrics(model, fighters, per, hits_crew, shots).items():
                out[n][v] = out[n].get(v, 0) + prob
            return
        ch = choose_target(model, shooters[si], fighters, state, rules, policy, assigned, running)
        if ch is None:
            rec(si + 1, shots, assigned, running, prob)
            return
        g, f, (mod, delayed) = ch
        for (hit, h), n in outcome_counts(mod, state["skills"][g["crew"]], g["bonus"],
                                          model["types"][f["type"]]["k"], rules).items():
            a2 = dict(assigned)
            a2[f["idx"]] += 1
            r2 = dict(running)
            if not delayed:
                r2[f["idx"]] += h
            rec(si + 1, shots + [{"gun": g, "fidx": f["idx"], "delayed": delayed, "hit": hit, "hits": h}],
                a2, r2, prob * Fraction(n, 1000))

    rec(0, [], {f["idx"]: 0 for f in fighters}, {f["idx"]: 0 for f in fighters}, Fraction(1))
    return out


# ----------------------------------------------------------------------------- mission
MISSION_PARAMS = {"waves", "position_distribution", "policy", "intercom_ok", "gun_ok", "skill",
                  "skills", "return_probability", "return_position", "fighter_fire"}


def mission_metric_names(model):
    return (["kills_total", "hits_total", "vp", "destroyed_before_firing_total", "damaged_total",
             "fighters_engaged", "fighter_attacks", "fighters_withdrawn", "fighters_remaining",
             "bomber_hits", "guns_lost", "p_intercom_lost"]
            + [f"kills_{c}" for c in model["crews"]] + [f"hits_{c}" for c in model["crews"]])


def _fighter_fire_cfg(model, params):
    base = model["fighter_fire"]
    ff = dict(params.get("fighter_fire") or {})
    _check_keys(ff, {"model", "skill", "effects"}, "fighter_fire")
    mdl = ff.get("model", base["model"])
    if mdl not in FIGHTER_FIRE_MODELS:
        raise ValueError(f"fighter_fire.model {mdl!r}: allowed {FIGHTER_FIRE_MODELS}")
    ph = base["placeholder_3d10"]
    effects = ff.get("effects", ph["effects"])
    for name in effects:
        if name not in ("none", "gun_out", "intercom_out"):
            raise ValueError(f"unknown fighter_fire effect {name!r}")
    return {"model": mdl, "skill": ff.get("skill", ph["skill"]),
            "effects": {n: (int(r[0]), int(r[1])) for n, r in effects.items()}}


def _mission_setup(model, params, rules):
    _check_keys(params, MISSION_PARAMS, "mission")
    waves = params.get("waves")
    if not waves:
        raise ValueError("mission needs `waves`")
    if len(waves) > MAX_WAVES:
        raise ValueError(f"more than MAX_WAVES={MAX_WAVES} waves")
    wave_specs = []
    for w in waves:
        _check_keys(w, {"fighters"}, "waves[]")
        wave_specs.append(expand_fighters(model, w.get("fighters"), "waves[].fighters"))
    pr = params.get("return_probability", model["mission"]["return_probability"])
    if not 0 <= pr <= 1:
        raise ValueError("return_probability must be in [0, 1]")
    rp = params.get("return_position", model["mission"]["return_position"])
    if rp not in RETURN_POSITIONS:
        raise ValueError(f"return_position: allowed {RETURN_POSITIONS}")
    return (wave_specs, position_table(params), _policy(params), _state(model, params),
            pr, rp, _fighter_fire_cfg(model, params))


def _run_mission(model, setup, rules, rng):
    wave_specs, table, policy, state, p_return, return_pos, ff = setup
    state = {"intercom_ok": state["intercom_ok"], "gun_ok": dict(state["gun_ok"]), "skills": state["skills"]}
    m = {n: 0 for n in mission_metric_names(model)}
    kills = {c: Fraction(0) for c in model["crews"]}
    D, DA = model["destroyed_at"], model["danado_at"]
    returning = []
    next_idx = 0
    intercom_start = state["intercom_ok"]
    for w, specs in enumerate(wave_specs):
        present = list(returning)
        for t, c, a, prior in specs:
            if c is None:
                c, a = draw_position(rng, table)
            present.append({"idx": next_idx, "type": t, "clock": c, "alt": a, "hits": prior})
            next_idx += 1
            m["fighters_engaged"] += 1
        if len(present) > MAX_FIGHTERS_PER_WAVE:
            raise ValueError(f"wave {w}: more than MAX_FIGHTERS_PER_WAVE fighters present")
        if not present:
            returning = []
            continue
        # §1 step 2: defensive fire
        per, hits_crew, shots = resolve_attack(model, present, state, rules, policy,
                                               lambda g, f: roll3(rng, rules))
        # §1 step 4: surviving fighters attack (PLACEHOLDER model)
        for f in present:
            r = per[f["idx"]]
            if not r["fired"]:
                m["destroyed_before_firing_total"] += 1
                continue
            m["fighter_attacks"] += 1
            if ff["model"] == "placeholder_3d10":
                if sum(roll3(rng, rules)) + r["penalty"] <= ff["skill"]:
                    m["bomber_hits"] += 1
                    e = rng.randint(1, 10)
                    effect = None
                    for name, (lo, hi) in ff["effects"].items():
                        if lo <= e <= hi:
                            effect = name
                            break
                    if effect == "gun_out":
                        working = [g for g in model["guns"] if state["gun_ok"].get(g["id"], True)]
                        if working:
                            state["gun_ok"][rng.choice(working)["id"]] = False
                            m["guns_lost"] += 1
                    elif effect == "intercom_out":
                        state["intercom_ok"] = False
        # §1 step 5 / §6 / §7: final states, tallies
        survivors = []
        for f in present:
            r = per[f["idx"]]
            for c, v in r["kills"].items():
                kills[c] += v
            if r["final"] >= D:
                m["kills_total"] += 1
            elif r["final"] >= DA:
                m["damaged_total"] += 1                     # leaves, no kill (A8)
            else:
                survivors.append({**f, "hits": r["final"]})
        for c, v in hits_crew.items():
            m[f"hits_{c}"] += v
        m["hits_total"] += sum(hits_crew.values())
        if w == len(wave_specs) - 1:
            m["fighters_remaining"] = len(survivors)
            break
        returning = []
        for f in survivors:
            if p_return >= 1 or rng.random() < p_return:
                if return_pos == "redraw":
                    c, a = draw_position(rng, table)
                    f = {**f, "clock": c, "alt": a}
                returning.append(f)
            else:
                m["fighters_withdrawn"] += 1
    for c in model["crews"]:
        m[f"kills_{c}"] = kills[c]
    m["vp"] = m["kills_total"] + (m["damaged_total"] if rules["danado_vp"] == "counts_as_kill" else 0)
    m["p_intercom_lost"] = int(intercom_start and not state["intercom_ok"])
    return m


# ----------------------------------------------------------------------------- simulate
def simulate(question: str, params: dict, rules: dict, data: dict, trials: int, seed: int) -> dict:
    if question not in QUESTIONS:
        raise ValueError(f"unknown question {question!r}")
    params = dict(params or {})
    model = build_model(data)
    rules = resolve_rules(rules, question)
    rng = random.Random(seed)
    if question == "gun_shot":
        setup = gun_shot_setup(model, params)
        out = {n: [] for n in GUN_SHOT_METRICS}
        for _ in range(trials):
            for n, v in _gun_shot_values(model, *setup, roll3(rng, rules), rules).items():
                out[n].append(float(v))
        return out
    if question == "gun_matrix":
        fighter, k, prior, state, cells, combined = _matrix_setup(model, params, rules)
        D = model["destroyed_at"]
        out = {n: [] for n in gun_matrix_metric_names(params, rules, data)}
        for _ in range(trials):
            res = {}
            for g, c, a, mod in cells:
                hit, _, h = shot(roll3(rng, rules), mod, state["skills"][g["crew"]], g["bonus"], k, rules)
                res[(g["id"], c, a)] = h
                out[_mname("p_hit", g["id"], c, a)].append(float(hit))
                out[_mname("p_destroyed", g["id"], c, a)].append(float(prior + h >= D))
                out[_mname("hits", g["id"], c, a)].append(float(h))
            for (c, a), gl in combined.items():     # reuses this trial's per-gun rolls
                t = sum(res[(g["id"], c, a)] for g in gl)
                out[_mname("p_destroyed_all", c, a)].append(float(prior + t >= D))
                out[_mname("hits_all", c, a)].append(float(t))
                early = sum(res[(g["id"], c, a)] for g in gl if lands_before_fire(g, c, a))
                out[_mname("p_destroyed_before_fire", c, a)].append(float(prior + early >= D))
        return out
    if question == "attack_wave":
        specs, table, policy, state = _wave_setup(model, params, rules)
        out = {n: [] for n in attack_wave_metric_names(model)}
        for _ in range(trials):
            fighters = _make_fighters(specs, table, rng)
            per, hits_crew, shots = resolve_attack(model, fighters, state, rules, policy,
                                                   lambda g, f: roll3(rng, rules))
            for n, v in _wave_metrics(model, fighters, per, hits_crew, shots).items():
                out[n].append(float(v))
        return out
    setup = _mission_setup(model, params, rules)
    out = {n: [] for n in mission_metric_names(model)}
    for _ in range(trials):
        for n, v in _run_mission(model, setup, rules, rng).items():
            out[n].append(float(v))
    return out
