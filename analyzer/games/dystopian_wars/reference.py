"""Slow, obviously-correct pure-Python reference for the Dystopian Wars questions.

Spec: ``docs/models/dystopian_wars.md``; rules: ``docs/rules/dystopian_wars.md`` (cited as §N).
Randomness: only ``random.Random(seed)``. Imports nothing from ``analyzer`` or ``kernels``.

Public API
----------
simulate(question, params, rules, data, trials, seed) -> {metric: [per-trial values]}
load_data(path_or_none) -> data mapping (placeholder wrappers kept)
allocations(params, rules, data) -> ordered allocation list of ``fire_allocation``
exact_attack / exact_ram / exact_collision / exact_boarding / exact_rout_test /
exact_fire_allocation / exact_duel_1v1 -> exact oracles with ``fractions.Fraction``
"""
from __future__ import annotations

import copy
import itertools
import math
import pathlib
import random
import types
from fractions import Fraction

import yaml

GAME = "dystopian_wars"
QUESTIONS = ("attack", "fire_allocation", "ram", "collision", "boarding", "rout_test", "duel")

# Named caps (spec "Caps").
EXPLODE_CAP = 100            # extra dice per exploding chain (one original die)
INITIATIVE_REROLL_CAP = 100  # initiative re-rolls on ties; side A goes first when reached
MAX_ALLOCATIONS_DEFAULT = 64

RULE_OPTIONS = {
    # name: (default, allowed values)                                  digest ambiguity
    "obscured_to_hit": ("six", ("six", "size_based")),                  # Amb 1
    "surface_vs_submerged": ("forbidden_rb1", ("forbidden_rb1", "only_rb1")),  # Amb 2
    "primary_rb1_vs_set_number": ("improve", ("improve", "hardest_wins")),     # Amb 3
    "modified_six": ("two_hits_no_explode", ("two_hits_no_explode", "one_hit")),  # Amb 4
    "ram_dice": ("exploding", ("exploding", "plain")),                  # Amb 5
    "mine_dice": ("exploding", ("exploding", "plain")),                 # Amb 5
    "melee_dice": ("exploding", ("exploding", "plain")),                # Amb 5
    "own_weapons_link": ("halved", ("halved", "full")),                 # Amb 6
    "fast_elusive_scope": ("capital_only", ("capital_only", "all")),    # Amb 7
    # Amb 10, source line 388 "Le collisioni o i modelli speronati senza valore di RR non causano
    # colpi critici": a rammed model that HAS an RR value may crit with its reply (rr_reply)
    "ram_no_crits": ("rr_reply", ("rr_reply", "no_reply_crits")),
    # source line 501: the mine's hits apply "sia in superficie che immersi" (one roll for all)
    "mine_vs_submerged": ("same_roll", ("same_roll", "submerged_number")),
    "aa_vs_flyer_dice": ("exploding", ("exploding", "plain")),
    "boarding_defender_dice": ("current_ap", ("current_ap", "fig_md")),  # Amb 11
    "both_zero_ap": ("no_capture", ("no_capture", "derelict")),         # Amb 11 (not stated)
    "fractional_range": ("next_band", ("next_band", "lower_band")),     # Amb 13
    "initiative_tie": ("reroll", ("reroll", "a_first", "b_first")),     # Amb 14
    "small_hp_critical": ("two_damage", ("two_damage", "destroyed", "off")),  # §11 damage
    "ram_reply": ("after_damage", ("after_damage", "simultaneous")),    # spec decision
    "boarding_defense_dice": ("one_per_success", ("one_per_success", "hit_table")),  # spec decision
    # how the production duel draws hits (one draw from the exact table, or die by die): not a
    # rule, so the reference accepts it and always rolls every die
    "sampling": ("dice", ("dice", "table")),
}

WEAPON_TYPES = ("primary", "secondary", "rocket", "torpedo", "bomb", "mine")
DEGRADING = ("primary", "secondary")          # §11 "Damage to AD" (gunnery); AA/CC handled apart
STATES = ("surface", "flying", "diving", "submerged", "obscured")
SIZES = ("tiny", "small", "medium", "large", "massive")
AIR = ("flying", "obscured")


# --------------------------------------------------------------------------- data

def unwrap(x):
    """Strip {ph: V, note} / {ex: V, note} wrappers recursively."""
    if isinstance(x, dict):
        keys = set(x)
        if "ph" in keys and keys <= {"ph", "note"}:
            return unwrap(x["ph"])
        if "ex" in keys and keys <= {"ex", "note"}:
            return unwrap(x["ex"])
        return {k: unwrap(v) for k, v in x.items()}
    if isinstance(x, list):
        return [unwrap(v) for v in x]
    return x


def _default_root():
    """The shipped data: the installed package's copy (analyzer/scenarios) or the repository's scenarios/."""
    here = pathlib.Path(__file__).resolve()
    packaged = here.parents[2] / "scenarios" / GAME
    return packaged if packaged.is_dir() else here.parents[3] / "scenarios" / GAME


def load_data(path_or_none=None):
    """Load game data: ``data/*.yaml`` merged, plus ``profiles`` from ``fleets/*.yaml``.

    ``path_or_none``: None (repo default), the game scenario folder (with ``data/`` and
    ``fleets/``), or one YAML file holding the whole mapping.
    """
    root = pathlib.Path(path_or_none) if path_or_none is not None else _default_root()
    if root.is_file():
        with open(root) as fh:
            return yaml.safe_load(fh)
    data = {}
    for f in sorted((root / "data").glob("*.yaml")):
        with open(f) as fh:
            data.update(yaml.safe_load(fh) or {})
    profiles = {}
    for f in sorted((root / "fleets").glob("*.yaml")):
        with open(f) as fh:
            doc = yaml.safe_load(fh) or {}
        for name, prof in (doc.get("profiles") or {}).items():
            if name in profiles:
                raise ValueError(f"duplicate profile {name!r} in {f}")
            profiles[name] = prof
    data["profiles"] = profiles
    return data


def _data(data):
    """Unwrapped copy of the game data (default data when None)."""
    return unwrap(copy.deepcopy(data if data is not None else load_data()))


def _rules(rules):
    rules = dict(rules or {})
    out = {}
    for k, v in rules.items():
        if k not in RULE_OPTIONS:
            raise ValueError(f"unknown rule option {k!r}")
        if v not in RULE_OPTIONS[k][1]:
            raise ValueError(f"rule {k}={v!r} not in {RULE_OPTIONS[k][1]}")
        out[k] = v
    for k, (d, _) in RULE_OPTIONS.items():
        out.setdefault(k, d)
    return out


def _check_keys(mapping, allowed, where):
    extra = set(mapping) - set(allowed)
    if extra:
        raise ValueError(f"{where}: unknown keys {sorted(extra)}; allowed {sorted(allowed)}")


# --------------------------------------------------------------------------- dice (§1)

def die_outcome(r, t, mod, explode, modified_six):
    """One natural roll r -> (hits, roll_again). §1 hit table, natural 1 fails, modified 6."""
    if r == 1:
        return 0, False
    v = min(r + mod, 6)
    if v < t:
        return 0, False
    if not explode:                      # plain 4+ reading (Amb 5): one hit per success
        return 1, False
    if v < 6:
        return 1, False
    if r == 6:
        return 2, True
    return (2 if modified_six == "two_hits_no_explode" else 1), False


def roll_hits(rng, n, t, mod=0, explode=True, modified_six="two_hits_no_explode", cap_counter=None):
    hits = 0
    for _ in range(n):
        r = rng.randint(1, 6)
        extra = 0
        while True:
            h, again = die_outcome(r, t, mod, explode, modified_six)
            hits += h
            if not again:
                break
            if extra >= EXPLODE_CAP:
                if cap_counter is not None:
                    cap_counter[0] += 1
                break
            extra += 1
            r = rng.randint(1, 6)
    return hits


def roll_cancels(rng, n):
    """AA/CC vs rockets/torpedoes: 5 cancels 1 hit, 6 cancels 2; no explosion (§11)."""
    c = 0
    for _ in range(n):
        r = rng.randint(1, 6)
        c += 2 if r == 6 else (1 if r == 5 else 0)
    return c


def roll_rout_successes(rng, n):
    """§8: 1-3 nothing, 4-5 one success, 6 two; no explosion."""
    s = 0
    for _ in range(n):
        r = rng.randint(1, 6)
        s += 2 if r == 6 else (1 if r >= 4 else 0)
    return s


def die_pmf(t, mod=0, explode=True, modified_six="two_hits_no_explode", H=60):
    """Exact pmf of the hits of ONE die (its whole exploding chain), truncated to 0..H."""
    base = [Fraction(0)] * (H + 1)
    p_again = Fraction(0)
    for r in range(1, 7):
        h, again = die_outcome(r, t, mod, explode, modified_six)
        if again:
            p_again += Fraction(1, 6)
        else:
            base[h] += Fraction(1, 6)
    # exploding outcome = 2 hits + a fresh chain: g = base + p_again * x^2 * g
    g = [Fraction(0)] * (H + 1)
    for k in range(H + 1):
        g[k] = base[k] + (p_again * g[k - 2] if k >= 2 else 0)
    return g


def expected_hits_per_die(t, mod=0, explode=True, modified_six="two_hits_no_explode"):
    """Exact E[hits] of one die chain: (sum of non-exploding hits*p + 2*p6) / (1 - p6)."""
    num = Fraction(0)
    p_again = Fraction(0)
    for r in range(1, 7):
        h, again = die_outcome(r, t, mod, explode, modified_six)
        num += Fraction(h, 6)
        if again:
            p_again += Fraction(1, 6)
    return num / (1 - p_again)


def _conv(a, b, H):
    c = [Fraction(0)] * (H + 1)
    for i, x in enumerate(a):
        if x:
            for j in range(0, H + 1 - i):
                y = b[j]
                if y:
                    c[i + j] += x * y
    return c


def pool_pmf(n, t, mod=0, explode=True, modified_six="two_hits_no_explode", H=60):
    """pmf of total hits of n dice, truncated at H (mass beyond H is 1 - sum)."""
    out = [Fraction(0)] * (H + 1)
    out[0] = Fraction(1)
    d = die_pmf(t, mod, explode, modified_six, H)
    for _ in range(n):
        out = _conv(out, d, H)
    return out


def cancel_pmf(n):
    out = {0: Fraction(1)}
    for _ in range(n):
        new = {}
        for k, p in out.items():
            for c, q in ((0, Fraction(4, 6)), (1, Fraction(1, 6)), (2, Fraction(1, 6))):
                new[k + c] = new.get(k + c, 0) + p * q
        out = new
    return out


def rout_pmf(n):
    out = {0: Fraction(1)}
    for _ in range(n):
        new = {}
        for k, p in out.items():
            for c, q in ((0, Fraction(1, 2)), (1, Fraction(1, 3)), (2, Fraction(1, 6))):
                new[k + c] = new.get(k + c, 0) + p * q
        out = new
    return out


def half_ad(ad):
    """§11 linked fire: each extra adds half (round down); an AD of 1 stays 1."""
    return 1 if ad == 1 else ad // 2


def degrade(ad, hp_lost, wtype):
    """§11 Damage to AD: -1 per HP lost for gunnery, never below 1 (AD 0 stays 0)."""
    if ad <= 0:
        return 0
    if wtype in DEGRADING:
        return max(1, ad - hp_lost)
    return ad


def degrade_aux(v, hp_lost):
    """AA/CC also lose 1 per HP lost, never below 1 (0 stays 0)."""
    return 0 if v <= 0 else max(1, v - hp_lost)


# --------------------------------------------------------------------------- to-hit (§1, §9, §11)
# Written from the source text (the source document, docs/sources.md, Italian), row by row; each row
# quotes its source line. Not transcribed from the analyzer, and it does not read data["to_hit"]:
# the data file holds the same numbers, and reading the source here keeps the oracle independent.
# Model states in the source: di superficie = surface, volante = flying, oscurato = obscured
# (a flyer "verso le nuvole"), subacqueo = a diving model on the surface ("I modelli subacquei
# ... sono considerati in superficie tranne quando sono immersi"), sommerso/immerso = submerged.

EVERY_STATE = STATES
# "batterie (anche tesla), razzi, siluri e bombe" (source line 521)
GUNNERY_ETC = ("primary", "secondary", "rocket", "torpedo", "bomb")

# The hit table "Colpire e danneggiare un bersaglio ... In generale:" (source lines 416-420):
# (firing model's states, target states, "hits on N or more", the source line).
# Exactly one row matches any (firer, target) pair of states.
HIT_TABLE = (
    (("flying", "obscured"), ("flying", "surface"), 4,
     "un modello volante che tira a un altro volante o a un modello di superficie colpisce al 4,5,6"),
    (("surface",), ("flying", "surface"), 4,
     "un modello di superficie che tira a un volante o a un altro di superficie colpisce al 4,5,6"),
    (("diving", "submerged"), ("flying", "surface"), 4,
     "un modello subacqueo che tira a un volante o a un modello di superficie colpisce al 4,5,6"),
    (EVERY_STATE, ("obscured", "submerged"), 6,
     "un modello che tira a un modello oscurato o sommerso colpisce al 6"),
    (EVERY_STATE, ("diving",), 5,
     "un modello che tira a un modello subacqueo colpisce al 5 o al 6"),
)

# Amb 1 (rules.obscured_to_hit = size_based): for these sizes this row replaces the obscured
# part of the row above (source line 427, "Modelli aerei").
OBSCURED_BY_SIZE = (("medium", "large", "massive"), 5,
                    "i modelli oscurati di taglia enorme, grande e media saranno colpiti al 5 o al 6")

# Rules that set the number to roll ("Altre invece modificano il numero che devi ottenere per
# colpire", §1). (name, number, source line); when each applies: _set_numbers(). Source lines:
# obscured 357, small 521-522, fast 524, elusive 525, bombs 495, mines 500.
SET_NUMBERS = {
    "obscured_firer": (6, "Un modello\\segnalino colpisce ed è colpito al 6 se è oscurato."),
    "small_target": (5, "Se un modello di prima classe (capital class) utilizza batterie (anche tesla), "
                        "razzi, siluri e bombe contro un bersaglio piccolo ... colpirà il bersaglio "
                        "piccolo solo al 5 o al 6"),
    "fast_target": (6, "i modelli veloci (fast target) saranno colpiti al 6"),
    "elusive_target": (5, "i modelli elusivi (elusive target) al 5 o al 5."),   # typo, read 5-6
    "bomb_vs_flyer": (5, "[bombe] possono essere usate contro i volanti solo se saranno di dimensione "
                         "grande o enorme e colpiranno al 5 o al 6"),
    "mine_vs_flyer": (5, "[mine] possono essere usate da modelli volanti contro altri volanti solo se "
                         "saranno di dimensione grande o enorme e colpiranno al 5 o al 6"),
}

# "le armi primarie hanno un -1 per colpire nella fascia di tiro 1 (se colpiscono al 4+ in
# range band 1 colpiranno al 3+)" (source line 408).
PRIMARY_RB1_STEP = -1
# "NOTA: un risultato di 1 è sempre un fallimento." (source line 415): never better than 2+.
NATURAL_ONE_FAILS = 2


def _state_row(firer_state, tgt, rules):
    """The hit-table number for this firer/target pair (Amb 1 by rules.obscured_to_hit)."""
    rows = [n for firers, targets, n, _ in HIT_TABLE if firer_state in firers and tgt["state"] in targets]
    assert len(rows) == 1, (firer_state, tgt["state"])
    sizes, n_by_size, _ = OBSCURED_BY_SIZE
    if tgt["state"] == "obscured" and rules["obscured_to_hit"] == "size_based" and tgt["size"] in sizes:
        return n_by_size
    return rows[0]


def _set_numbers(weapon, attacker, tgt, rules):
    """Names of the SET_NUMBERS rows that apply to this attack."""
    names = []
    # "Le mine sono considerate al livello di superficie indipendentemente dal modello che le
    # sgancia": an obscured model's mine is not fired from the clouds.
    if attacker["state"] == "obscured" and weapon != "mine":
        names.append("obscured_firer")
    # mines "ignorano le regole speciali per colpire i bersagli piccoli, veloci ed elusivi";
    # AA and CC "utilizzano altri valori" (they are not attacks of this function).
    if weapon in GUNNERY_ETC:
        if attacker["capital"] and tgt["size"] == "small":
            names.append("small_target")
        # Amb 7: fast/elusive for Capital-Class firers only (capital_only) or for every firer (all)
        if attacker["capital"] or rules["fast_elusive_scope"] == "all":
            if tgt.get("fast"):
                names.append("fast_target")
            if tgt.get("elusive"):
                names.append("elusive_target")
    if tgt["state"] in AIR:
        if weapon == "bomb":
            names.append("bomb_vs_flyer")
        elif weapon == "mine":
            names.append("mine_vs_flyer")
    return names


def to_hit_number(weapon, band, attacker, tgt, rules, data=None):
    """Final to-hit number (2..6) from the source table, in the source's order.

    1. the hit-table row of the firer's and the target's states;
    2. the other rules that set a number;
    3. "si utilizza quella che ha i tiri più difficili per colpire" (§1): the largest number,
       with the primaries' -1 in range band 1 applied after it (Amb 3 ``improve``) or to the
       hit-table row only (``hardest_wins``);
    4. a natural 1 always fails: never below 2.
    ``data`` is accepted for the callers' convenience and not read.
    """
    # source line 501: a mine's one roll counts "sia in superficie che immersi" (same_roll)
    as_target = tgt
    if weapon == "mine" and tgt["state"] == "submerged" and rules["mine_vs_submerged"] == "same_roll":
        as_target = dict(tgt, state="surface")
    row = _state_row(attacker["state"], as_target, rules)
    others = [SET_NUMBERS[name][0] for name in _set_numbers(weapon, attacker, tgt, rules)]
    primary_step = PRIMARY_RB1_STEP if (weapon == "primary" and band == 1) else 0
    if rules["primary_rb1_vs_set_number"] == "hardest_wins":
        number = max([row + primary_step] + others)
    else:
        number = max([row] + others) + primary_step
    return max(NATURAL_ONE_FAILS, number)


# Who may not fire at whom (spec 0.7 L1-L8): (source line, test on the attack ``x`` with fields
# weapon, band, firer, target, size, rules). The firer-state lines do not apply to mines: "Le
# mine sono considerate al livello di superficie indipendentemente dal modello che le sgancia".
FORBIDDEN = (
    ("Le batterie, i razzi, i siluri, le mine e le bombe NON possono essere usate contro i "
     "bersagli minuscoli",
     lambda x: x.size == "tiny"),
    ("un modello sommerso può usare solo siluri per attaccare",
     lambda x: x.firer == "submerged" and x.weapon != "torpedo"),
    ("[immersi] saranno colpiti solo al 6 e non potranno attaccare i modelli volanti",
     lambda x: x.firer == "submerged" and x.target in AIR),
    ("un modello oscurato non può tirare a uno sommerso",
     lambda x: x.weapon != "mine" and x.firer == "obscured" and x.target == "submerged"),
    # Amb 2: forbidden in RB1 (forbidden_rb1, the literal reading) or allowed only in RB1 (only_rb1)
    ("un modello di superficie non può tirare a uno sommerso se è nella fascia dio tiro 1, "
     "può usare le CC a 4\"",
     lambda x: (x.weapon != "mine" and x.firer in ("surface", "diving") and x.target == "submerged"
                and (x.band == 1) == (x.rules["surface_vs_submerged"] == "forbidden_rb1"))),
    ("un modello di superficie non può tirare a un volante nella fascia di tiro 1, può usare il "
     "suo valore di AA entro 8\"",
     lambda x: x.weapon != "mine" and x.firer in ("surface", "diving") and x.target in AIR and x.band == 1),
    ("[siluri] non ha effetto sui modelli volanti, oscurati e terrestri / non possono colpire "
     "volanti e oscurati",
     lambda x: x.weapon == "torpedo" and x.target in AIR),
    ("L'arco di fuoco delle bombe è sempre un canale fisso (Aft) di 4\", sono usate solo dai volanti",
     lambda x: x.weapon == "bomb" and x.firer not in AIR),
    ("[bombe, mine] possono essere usate contro i volanti solo se saranno di dimensione grande o enorme",
     lambda x: x.weapon in ("bomb", "mine") and x.target in AIR and x.size not in ("large", "massive")),
)


def check_legal(weapon, band, att_state, tgt, rules):
    """Raise ValueError quoting the first source line that forbids the attack."""
    x = types.SimpleNamespace(weapon=weapon, band=band, firer=att_state, target=tgt["state"],
                              size=tgt["size"], rules=rules)
    for line, forbids in FORBIDDEN:
        if forbids(x):
            raise ValueError(f"illegal attack: {line!r}")


# --------------------------------------------------------------------------- damage (§11)

def crit_pmf(data, critical_hp=None):
    """pmf of HP damage of ONE critical roll: override > table (weighted) > default."""
    if critical_hp is not None:
        return {int(critical_hp): Fraction(1)}
    table = unwrap(data.get("critical_table") or [])
    if table:
        tot = sum(int(e.get("weight", 1)) for e in table)
        out = {}
        for e in table:
            out[int(e["hp_damage"])] = out.get(int(e["hp_damage"]), 0) + Fraction(int(e.get("weight", 1)), tot)
        return out
    return {int(unwrap(data["critical_default"])["hp_damage"]): Fraction(1)}


def draw_crit(rng, cpmf):
    if len(cpmf) == 1:
        return next(iter(cpmf))
    # weights are Fractions with a common denominator; draw an integer on it
    den = math.lcm(*[p.denominator for p in cpmf.values()])
    u = rng.randrange(den)
    acc = 0
    for v in sorted(cpmf):
        acc += int(cpmf[v] * den)
        if u < acc:
            return v
    raise AssertionError


def damage_from_hits(hits, tgt, crits_allowed, rules, rng, cpmf):
    """§11: hits>=CR -> floor(hits/CR) critical rolls (or the <=2 HP rule); elif >=DR -> 1 HP."""
    cr, dr = tgt["cr"], tgt["dr"]
    if crits_allowed and hits >= cr:
        opt = rules["small_hp_critical"]
        if opt != "off" and tgt["hp"] <= 2:
            return 2 if opt == "two_damage" else tgt["hp"] - tgt["hp_lost"]
        return sum(draw_crit(rng, cpmf) for _ in range(hits // cr))
    return 1 if hits >= dr else 0


def damage_pmf_given_hits(hits, tgt, crits_allowed, rules, cpmf):
    cr, dr = tgt["cr"], tgt["dr"]
    if crits_allowed and hits >= cr:
        opt = rules["small_hp_critical"]
        if opt != "off" and tgt["hp"] <= 2:
            return {2 if opt == "two_damage" else tgt["hp"] - tgt["hp_lost"]: Fraction(1)}
        out = {0: Fraction(1)}
        for _ in range(hits // cr):
            new = {}
            for a, p in out.items():
                for b, q in cpmf.items():
                    new[a + b] = new.get(a + b, 0) + p * q
            out = new
        return out
    return {1 if hits >= dr else 0: Fraction(1)}


# --------------------------------------------------------------------------- params helpers

TARGET_KEYS = {"profile", "size", "state", "dr", "cr", "hp", "hp_lost", "fast", "elusive",
               "defense_dice", "count"}


def _profile(data, name):
    profs = unwrap(data.get("profiles") or {})
    if name not in profs:
        raise ValueError(f"unknown profile {name!r}; known {sorted(profs)}")
    return profs[name]


def _target(spec, data, where="target", extra_keys=False):
    spec = unwrap(dict(spec or {}))
    _check_keys(spec, TARGET_KEYS if extra_keys else TARGET_KEYS - {"defense_dice", "count"}, where)
    base = {}
    if spec.get("profile"):
        p = _profile(data, spec["profile"])
        base = {k: p[k] for k in ("size", "dr", "cr", "hp") if k in p}
        base["fast"] = bool(p.get("fast", False))
        base["elusive"] = bool(p.get("elusive", False))
    t = {"size": "medium", "state": "surface", "hp_lost": 0, "fast": False, "elusive": False}
    t.update(base)
    t.update({k: v for k, v in spec.items() if k not in ("profile", "count", "defense_dice")})
    for k in ("dr", "cr", "hp"):
        if k not in t:
            raise ValueError(f"{where}: missing {k} (give it or a profile)")
    if t["size"] not in SIZES or t["state"] not in STATES:
        raise ValueError(f"{where}: bad size/state {t['size']}/{t['state']}")
    if not (t["dr"] >= 1 and t["cr"] >= 1 and t["hp"] >= 1 and 0 <= t["hp_lost"] < t["hp"]):
        raise ValueError(f"{where}: need dr, cr, hp >= 1 and 0 <= hp_lost < hp")
    return t


def _weapon_from_profile(data, prof_name, weapon):
    p = _profile(data, prof_name)
    ws = p.get("weapons") or []
    if isinstance(weapon, int):
        return ws[weapon]
    for w in ws:
        if w["name"] == weapon:
            return w
    raise ValueError(f"profile {prof_name} has no weapon {weapon!r}")


# --------------------------------------------------------------------------- attack

ATTACK_KEYS = {"attack_dice", "weapon", "range_band", "hp_lost", "attacker", "target",
               "defense_dice", "to_hit_modifier", "linked_ad", "own_linked_ad", "critical_hp", "aa_dice"}
ATTACKER_KEYS = {"capital", "state", "profile", "weapon", "size", "dr", "cr", "hp"}

# "l'AA colpisce i volanti e gli oscurati al 4,5,6" / "l'AA colpisce i piccoli e i minuscoli volanti
# al 5 o al 6" (source, AA e CC)
AA_NEEDS = {"small": 5, "tiny": 5}
AA_NEEDS_OTHER = 4


def ack_ack(params, att, prof, tgt_spec, tgt, band, state, hp_lost, data, rules):
    """Source, "Ack Ack": used when a flyer uses its AD against a model within 8in; "l'AA viene
    risolto prima dell'attacco dei volanti". Returns the flyer as a target dict plus its AA
    dice and number, or None when no AA is fired."""
    if state not in ("flying", "obscured") or band != 1:
        if params.get("aa_dice"):
            raise ValueError("aa_dice: only against a flyer attacking within 8in (RB1)")
        return None
    n = params.get("aa_dice")
    if n is None:
        n = 0
        tp = tgt_spec.get("profile") if isinstance(tgt_spec, dict) else None
        if tp and "aa" in _profile(data, tp):
            n = degrade_aux(int(_profile(data, tp)["aa"]), tgt["hp_lost"])
    n = int(n)
    if n == 0:
        return None
    flyer = {"size": "medium", "state": state, "hp_lost": hp_lost}
    for k in ("size", "dr", "cr", "hp"):
        if att.get(k) is not None:
            flyer[k] = att[k]
        elif prof is not None and k in prof:
            flyer[k] = prof[k]
    if any(k not in flyer for k in ("dr", "cr", "hp")):
        raise ValueError("a flyer facing Ack Ack needs dr, cr, hp")
    if flyer["size"] == "tiny":
        raise ValueError("tiny flyers: not modelled")
    if not 0 <= hp_lost < flyer["hp"]:
        raise ValueError("hp_lost must be < the flyer's hp")
    need = AA_NEEDS.get(flyer["size"], AA_NEEDS_OTHER)
    return {"n": n, "t": need, "explode": rules["aa_vs_flyer_dice"] == "exploding", "flyer": flyer,
            "cpmf": crit_pmf(data, params.get("critical_hp"))}


def resolve_attack(params, rules, data):
    """Validate attack params and return the compiled attack (spec 'attack' A1-A6)."""
    params = unwrap(dict(params))
    _check_keys(params, ATTACK_KEYS, "attack.params")
    att = dict(params.get("attacker") or {})
    _check_keys(att, ATTACKER_KEYS, "attack.params.attacker")
    band = int(params.get("range_band", 2))
    if band not in (1, 2, 3, 4):
        raise ValueError("range_band must be 1..4")
    prof = None
    if att.get("profile"):
        prof = _profile(data, att["profile"])
    capital = bool(att.get("capital", prof.get("capital", False) if prof else False))
    state = att.get("state", "surface")
    if state not in STATES:
        raise ValueError(f"attacker.state {state!r}")
    wtype = params.get("weapon")
    if att.get("weapon") is not None:
        if prof is None:
            raise ValueError("attacker.weapon needs attacker.profile")
        if params.get("attack_dice") is not None:
            raise ValueError("give either attack_dice or attacker.profile+attacker.weapon, not both")
        w = _weapon_from_profile(data, att["profile"], att["weapon"])
        if wtype is not None and wtype != w["type"]:
            raise ValueError("weapon type differs from the profile weapon's type")
        wtype = w["type"]
        base_ad = int(w["ad"][band - 1])
    else:
        if params.get("attack_dice") is None:
            raise ValueError("attack_dice is required (or attacker.profile + attacker.weapon)")
        base_ad = int(params["attack_dice"])
    wtype = wtype or "primary"
    if wtype not in WEAPON_TYPES:
        raise ValueError(f"weapon {wtype!r} not in {WEAPON_TYPES}")
    hp_lost = int(params.get("hp_lost", 0))
    if base_ad < 0 or hp_lost < 0:
        raise ValueError("attack_dice and hp_lost must be >= 0")
    ad = degrade(base_ad, hp_lost, wtype)
    # linked fire (§11): lead full, each other weapon half (1 stays 1); own weapons per Amb 6
    linked = [int(x) for x in params.get("linked_ad", []) or []]
    own = [int(x) for x in params.get("own_linked_ad", []) or []]
    if (linked or own) and wtype == "mine":
        raise ValueError("mines cannot be linked (§11)")
    if rules["own_weapons_link"] == "full":
        ad = ad + sum(own)
        own_add = 0
    else:
        own_add = sum(half_ad(a) for a in own)
    n = ad + own_add + sum(half_ad(a) for a in linked)
    tgt = _target(params.get("target"), data)
    dd = int(params.get("defense_dice", 0))
    if dd < 0:
        raise ValueError("defense_dice must be >= 0")
    if dd > 0 and wtype not in ("rocket", "torpedo"):
        raise ValueError("defense_dice cancel only rocket (AA) or torpedo (CC) hits (§11)")
    mod = int(params.get("to_hit_modifier", 0))
    if mod not in (0, 1, 2):
        raise ValueError("to_hit_modifier must be 0, 1 or 2")
    attacker = {"capital": capital, "state": state}
    check_legal(wtype, band, state, tgt, rules)
    t = to_hit_number(wtype, band, attacker, tgt, rules, data)
    explode = not (wtype == "mine" and rules["mine_dice"] == "plain")
    aa = ack_ack(params, att, prof, params.get("target"), tgt, band, state, hp_lost, data, rules)
    # the leading weapon's dice once the flyer has lost k more HP to Ack Ack (linked dice unchanged)
    others = n - degrade(base_ad, hp_lost, wtype)
    return {"n": n, "t": t, "mod": mod, "explode": explode, "defense": dd, "target": tgt,
            "cpmf": crit_pmf(data, params.get("critical_hp")), "weapon": wtype, "aa": aa,
            "dice_after": lambda k: degrade(base_ad, hp_lost + k, wtype) + others}


def _attack_trial(rng, a, rules):
    n = a["n"]
    aa = a["aa"]
    if aa is not None:
        aa_hits = roll_hits(rng, aa["n"], aa["t"], 0, aa["explode"], rules["modified_six"])
        lost = damage_from_hits(aa_hits, aa["flyer"], True, rules, rng, aa["cpmf"])
        fl = aa["flyer"]
        n = 0 if fl["hp_lost"] + lost >= fl["hp"] else a["dice_after"](lost)
    hits = roll_hits(rng, n, a["t"], a["mod"], a["explode"], rules["modified_six"])
    if a["defense"]:
        hits = max(0, hits - roll_cancels(rng, a["defense"]))
    tgt = a["target"]
    dmg = damage_from_hits(hits, tgt, True, rules, rng, a["cpmf"])
    return hits, dmg


def _sim_attack(params, rules, data, trials, rng):
    a = resolve_attack(params, rules, data)
    tgt = a["target"]
    rem = tgt["hp"] - tgt["hp_lost"]
    out = {k: [] for k in ("hits", "p_damage", "p_critical", "criticals", "hp_damage", "p_destroyed")}
    for _ in range(trials):
        hits, dmg = _attack_trial(rng, a, rules)
        out["hits"].append(hits)
        out["p_damage"].append(1 if hits >= tgt["dr"] else 0)
        out["p_critical"].append(1 if hits >= tgt["cr"] else 0)
        out["criticals"].append(hits // tgt["cr"])
        out["hp_damage"].append(dmg)
        out["p_destroyed"].append(1 if dmg >= rem else 0)
    return out


def attack_hits_pmf(a, rules, H):
    """Exact pmf of hits after cancellation, truncated to 0..H, plus tail mass (> H)."""
    pm = pool_pmf(a["n"], a["t"], a["mod"], a["explode"], rules["modified_six"], H)
    tail = 1 - sum(pm)
    if a["defense"]:
        cp = cancel_pmf(a["defense"])
        new = [Fraction(0)] * (H + 1)
        for h, p in enumerate(pm):
            if p:
                for c, q in cp.items():
                    new[max(0, h - c)] += p * q
        pm = new  # tail mass stays "beyond H" (a lower bound: tail hits minus <= 2*defense)
    return pm, tail


def exact_attack(params, rules=None, data=None, H=None):
    """Exact distributions of every attack metric, as {metric: {value: Fraction}}.

    Hits above H are lumped into value H+1 (key ``"tail"`` gives that mass; the default H makes
    it < 1e-20 for <= 40 dice). p_* metrics are exact whenever DR, CR <= H+1.
    """
    rules = _rules(rules)
    data = _data(data)
    a = resolve_attack(params, rules, data)
    if H is None:
        H = 3 * a["n"] + 60
    aa = a["aa"]
    if aa is None:
        pm, tail = attack_hits_pmf(a, rules, H)
    else:
        # Ack Ack first: P(the flyer loses k HP), then the attack with the dice it has left
        fl = aa["flyer"]
        aa_pm = pool_pmf(aa["n"], aa["t"], 0, aa["explode"], rules["modified_six"], 3 * aa["n"] + 60)
        lost = {}
        for h, p in enumerate(aa_pm):
            if p:
                for k, q in damage_pmf_given_hits(h, fl, True, rules, aa["cpmf"]).items():
                    lost[k] = lost.get(k, 0) + p * q
        pm, tail = [Fraction(0)] * (H + 1), Fraction(0)
        for k, q in lost.items():
            n_k = 0 if fl["hp_lost"] + k >= fl["hp"] else a["dice_after"](k)
            pm_k, tail_k = attack_hits_pmf(dict(a, n=n_k), rules, H)
            pm = [x + q * y for x, y in zip(pm, pm_k)]
            tail += q * tail_k
    tgt = a["target"]
    rem = tgt["hp"] - tgt["hp_lost"]
    hits_d = {h: p for h, p in enumerate(pm) if p}
    if tail:
        hits_d[H + 1] = hits_d.get(H + 1, 0) + tail
    res = {k: {} for k in ("hits", "p_damage", "p_critical", "criticals", "hp_damage", "p_destroyed")}

    def add(m, v, p):
        res[m][v] = res[m].get(v, 0) + p

    for h, p in hits_d.items():
        add("hits", h, p)
        add("p_damage", 1 if h >= tgt["dr"] else 0, p)
        add("p_critical", 1 if h >= tgt["cr"] else 0, p)
        add("criticals", h // tgt["cr"], p)
        for d, q in damage_pmf_given_hits(h, tgt, True, rules, a["cpmf"]).items():
            add("hp_damage", d, p * q)
            add("p_destroyed", 1 if d >= rem else 0, p * q)
    res["tail"] = tail
    return res


# --------------------------------------------------------------------------- fire_allocation

FA_KEYS = {"weapon", "range_band", "attacker", "weapons", "targets", "to_hit_modifier",
           "allocations", "max_allocations", "critical_hp", "objective", "only"}
FA_WEAPON_KEYS = {"model", "ad", "hp_lost", "profile", "name"}


def _fa_compile(params, rules, data):
    params = unwrap(dict(params))
    _check_keys(params, FA_KEYS, "fire_allocation.params")
    wtype = params.get("weapon", "primary")
    if wtype not in WEAPON_TYPES or wtype == "mine":
        raise ValueError("fire_allocation weapon must be primary/secondary/rocket/torpedo/bomb")
    band = int(params.get("range_band", 2))
    att = dict(params.get("attacker") or {})
    _check_keys(att, {"capital", "state"}, "fire_allocation.params.attacker")
    attacker = {"capital": bool(att.get("capital", False)), "state": att.get("state", "surface")}
    weapons = []
    for i, w in enumerate(params.get("weapons") or []):
        _check_keys(w, FA_WEAPON_KEYS, f"weapons[{i}]")
        if w.get("profile"):
            pw = _weapon_from_profile(data, w["profile"], w.get("name", 0))
            if pw["type"] != wtype:
                raise ValueError(f"weapons[{i}] type {pw['type']} != {wtype}")
            base = int(pw["ad"][band - 1])
        else:
            base = int(w["ad"])
        ad = degrade(base, int(w.get("hp_lost", 0)), wtype)
        weapons.append({"model": int(w.get("model", i)), "ad": ad})
    if not weapons:
        raise ValueError("fire_allocation needs at least one weapon")
    targets = []
    for j, ts in enumerate(params.get("targets") or []):
        cnt = int(ts.get("count", 1))
        tgt = _target(ts, data, f"targets[{j}]", extra_keys=True)
        check_legal(wtype, band, attacker["state"], tgt, rules)
        dd = int(ts.get("defense_dice", 0))
        if dd and wtype not in ("rocket", "torpedo"):
            raise ValueError("defense_dice only against rockets/torpedoes")
        for _ in range(cnt):
            targets.append({"tgt": dict(tgt), "defense": dd,
                            "t": to_hit_number(wtype, band, attacker, tgt, rules, data)})
    if not targets:
        raise ValueError("fire_allocation needs at least one target")
    mod = int(params.get("to_hit_modifier", 0))
    if params.get("objective", "hp_damage") not in FA_METRICS:
        raise ValueError(f"objective must be one of {FA_METRICS}")
    return {"weapon": wtype, "band": band, "weapons": weapons, "targets": targets, "mod": mod,
            "cpmf": crit_pmf(data, params.get("critical_hp"))}


def linked_ad(weapons, idxs, rules):
    """§11 linked fire AD of weapons idxs: lead = largest AD (ties lowest index)."""
    lead = min(idxs, key=lambda i: (-weapons[i]["ad"], i))
    if rules["own_weapons_link"] == "full":
        per_model = {}
        for i in idxs:
            per_model[weapons[i]["model"]] = per_model.get(weapons[i]["model"], 0) + weapons[i]["ad"]
        lm = weapons[lead]["model"]
        return per_model[lm] + sum(half_ad(v) for m, v in per_model.items() if m != lm)
    return weapons[lead]["ad"] + sum(half_ad(weapons[i]["ad"]) for i in idxs if i != lead)


def deal_dice(ad, k):
    """Deal ``ad`` dice one by one round the ``k`` parts: parts differ by <= 1, larger first
    (the source's example: 13 dice over 2 frigates -> 7 and 6)."""
    parts = [0] * k
    for die in range(ad):
        parts[die % k] += 1
    return parts


def attack_label(at):
    """Spec §2 names: ``w0>T1`` whole, ``L[w0+w1]>T2`` linked, ``w0:7>T0`` split part."""
    ws = at["weapons"]
    fire = {"whole": lambda: f"w{ws[0]}",
            "linked": lambda: "L[" + "+".join(f"w{i}" for i in ws) + "]",
            "split": lambda: f"w{ws[0]}:{at['ad']}"}[at["kind"]]()
    return f"{fire}>T{at['target']}"


def allocation_family(attacks):
    """Spec §2: split if any split part; separate if nothing is linked; linked if the whole
    allocation is one linked attack; mixed otherwise."""
    kinds = [at["kind"] for at in attacks]
    if "split" in kinds:
        return "split"
    if "linked" not in kinds:
        return "separate"
    return "linked" if kinds == ["linked"] else "mixed"


def auto_allocations(W, m, rules):
    """Spec §2 ``auto``, in id order.

    Every way to point the usable weapons at the m targets (first weapon most significant); for
    each, every link/no-link choice of the targets that got >= 2 weapons, the lowest such target
    flipping fastest; then, with more targets than usable weapons, the split that covers them all.
    """
    usable = [i for i, w in enumerate(W) if w["ad"] >= 1]
    found = []
    for aim in itertools.product(range(m), repeat=len(usable)):
        target_of = dict(zip(usable, aim))
        crowded = sorted({j for j in aim if aim.count(j) >= 2})
        # product() varies its LAST slot fastest, so slot -1 stands for crowded[0] (mask bit 0)
        for choice in itertools.product((False, True), repeat=len(crowded)):
            linked_at = {j for j, link in zip(reversed(crowded), choice) if link}
            attacks = []
            for i in usable:                     # attacks come out ordered by their first weapon
                j = target_of[i]
                group = [u for u in usable if target_of[u] == j]
                if j not in linked_at:
                    attacks.append({"kind": "whole", "weapons": [i], "target": j, "ad": W[i]["ad"]})
                elif i == group[0]:
                    attacks.append({"kind": "linked", "weapons": group, "target": j,
                                    "ad": linked_ad(W, group, rules)})
            found.append(attacks)
    if usable and m > len(usable):
        cover = []
        for k, i in enumerate(usable):           # target j goes to usable weapon number j mod |U|
            mine = list(range(k, m, len(usable)))
            cover += [{"kind": "split", "weapons": [i], "target": j, "ad": d}
                      for j, d in zip(mine, deal_dice(W[i]["ad"], len(mine))) if d >= 1]
        found.append(cover)
    return found


def explicit_allocations(spec, W, m, rules):
    """Explicit allocations checked against §11: a weapon fires in one whole/linked attack or only
    in split parts; its split parts go to distinct targets and add up to at most its AD."""
    found = []
    for k, al in enumerate(spec):
        _check_keys(al, {"name", "attacks"}, f"allocations[{k}]")
        attacks = []
        for at in al["attacks"]:
            j = int(at["target"])
            if j < 0 or j >= m:
                raise ValueError(f"allocations[{k}]: target {j} out of range")
            if "weapons" in at:
                g = [int(i) for i in at["weapons"]]
                kind = "whole" if len(g) == 1 else "linked"
                ad = W[g[0]]["ad"] if kind == "whole" else linked_ad(W, g, rules)
                attacks.append({"kind": kind, "weapons": g, "target": j, "ad": ad})
            else:
                attacks.append({"kind": "split", "weapons": [int(at["weapon"])], "target": j,
                                "ad": int(at["ad"])})
        whole_or_linked = [i for at in attacks if at["kind"] != "split" for i in set(at["weapons"])]
        parts = [(at["weapons"][0], at["target"], at["ad"]) for at in attacks if at["kind"] == "split"]
        split_weapons = {i for i, _, _ in parts}
        if len(whole_or_linked) != len(set(whole_or_linked)) or split_weapons & set(whole_or_linked):
            raise ValueError(f"allocations[{k}]: weapon used twice")
        if len({(i, j) for i, j, _ in parts}) != len(parts):
            raise ValueError(f"allocations[{k}]: illegal split (two parts of one weapon at one target)")
        for i in split_weapons:
            if sum(d for w, _, d in parts if w == i) > W[i]["ad"]:
                raise ValueError(f"allocations[{k}]: split parts of w{i} exceed its AD")
        found.append(attacks)
    return found


def allocations(params, rules=None, data=None):
    """Ordered allocation list (id, name, family, attacks) per the spec enumeration."""
    rules = _rules(rules)
    data = _data(data)
    c = _fa_compile(params, rules, data)
    spec = unwrap(params).get("allocations", "auto")
    if spec == "auto":
        allocs = auto_allocations(c["weapons"], len(c["targets"]), rules)
        names = [None] * len(allocs)
    else:
        allocs = explicit_allocations(spec, c["weapons"], len(c["targets"]), rules)
        names = [al.get("name") for al in spec]
    cap = int(unwrap(params).get("max_allocations", MAX_ALLOCATIONS_DEFAULT))
    if len(allocs) > cap:
        raise ValueError(f"{len(allocs)} allocations > max_allocations={cap}; list them explicitly")
    out = [{"id": "A%02d" % k, "name": name or ", ".join(attack_label(at) for at in attacks),
            "family": allocation_family(attacks), "attacks": attacks}
           for k, (name, attacks) in enumerate(zip(names, allocs))]
    only = unwrap(params).get("only")
    if only is not None:            # a subset, under the full list's ids, in its order
        ids = [a["id"] for a in out]
        if any(i not in ids for i in only):
            raise ValueError(f"only: {only} names an id not in {ids[0]}..{ids[-1]}")
        out = [a for a in out if a["id"] in set(only)]
    return out


#: per allocation: effective HP damage, kills, all killed; and three that do not depend on what
#: a critical deals: some attack reaches DR, some reaches CR, critical results
FA_METRICS = ("hp_damage", "kills", "p_kill_all", "p_damage", "p_critical", "criticals")


def _sim_fire_allocation(params, rules, data, trials, rng):
    c = _fa_compile(params, rules, data)
    al = allocations(params, rules, data)
    T = c["targets"]
    out = {}
    for a in al:
        for m in FA_METRICS:
            out[f"{m}.{a['id']}"] = []
    for _ in range(trials):
        for a in al:
            dmg = [0] * len(T)
            reached_dr = reached_cr = False
            n_crits = 0
            for at in a["attacks"]:
                tt = T[at["target"]]
                hits = roll_hits(rng, at["ad"], tt["t"], c["mod"], True, rules["modified_six"])
                if tt["defense"]:
                    hits = max(0, hits - roll_cancels(rng, tt["defense"]))
                dmg[at["target"]] += damage_from_hits(hits, tt["tgt"], True, rules, rng, c["cpmf"])
                reached_dr = reached_dr or hits >= tt["tgt"]["dr"]
                reached_cr = reached_cr or hits >= tt["tgt"]["cr"]
                n_crits += hits // tt["tgt"]["cr"]
            out[f"p_damage.{a['id']}"].append(int(reached_dr))
            out[f"p_critical.{a['id']}"].append(int(reached_cr))
            out[f"criticals.{a['id']}"].append(n_crits)
            rem = [tt["tgt"]["hp"] - tt["tgt"]["hp_lost"] for tt in T]
            kills = sum(1 for d, r in zip(dmg, rem) if d >= r)
            out[f"hp_damage.{a['id']}"].append(sum(min(d, r) for d, r in zip(dmg, rem)))
            out[f"kills.{a['id']}"].append(kills)
            out[f"p_kill_all.{a['id']}"].append(1 if kills == len(T) else 0)
    return out


def _damage_pmf(n, t, mod, explode, defense, tgt, crits_allowed, rules, cpmf, H=None):
    """Exact pmf of damage from one attack of n dice (tail mass lumped at hits = H+1)."""
    H = H if H is not None else 3 * n + 60
    a = {"n": n, "t": t, "mod": mod, "explode": explode, "defense": defense}
    pm, tail = attack_hits_pmf(a, rules, H)
    hd = {h: p for h, p in enumerate(pm) if p}
    if tail:
        hd[H + 1] = hd.get(H + 1, 0) + tail
    out = {}
    for h, p in hd.items():
        for d, q in damage_pmf_given_hits(h, tgt, crits_allowed, rules, cpmf).items():
            out[d] = out.get(d, 0) + p * q
    return out


def exact_fire_allocation(params, rules=None, data=None, H=None):
    """Exact expected metrics per allocation: {id: {metric of FA_METRICS: mean}} (Fractions).

    H: hits truncation per attack (default 3*AD+60; the tail is lumped at H+1)."""
    rules = _rules(rules)
    data = _data(data)
    c = _fa_compile(params, rules, data)
    T = c["targets"]
    res, cache = {}, {}
    for a in allocations(params, rules, data):
        e_dmg, e_kills, p_all = Fraction(0), Fraction(0), Fraction(1)
        for j, tt in enumerate(T):
            rem = tt["tgt"]["hp"] - tt["tgt"]["hp_lost"]
            dist = {0: Fraction(1)}
            for at in a["attacks"]:
                if at["target"] != j:
                    continue
                key = (at["ad"], j)
                if key not in cache:
                    cache[key] = _damage_pmf(at["ad"], tt["t"], c["mod"], True, tt["defense"], tt["tgt"],
                                             True, rules, c["cpmf"], H)
                dp = cache[key]
                new = {}
                for x, p in dist.items():
                    for y, q in dp.items():
                        z = min(rem, x + y)
                        new[z] = new.get(z, 0) + p * q
                dist = new
            pk = dist.get(rem, Fraction(0))
            e_dmg += sum(x * p for x, p in dist.items())
            e_kills += pk
            p_all *= pk
        # attacks roll independently: P(none reaches DR / CR) is a product; E[crits] a sum
        none_dr = none_cr = Fraction(1)
        e_crits = Fraction(0)
        for at in a["attacks"]:
            tt = T[at["target"]]
            pm, tail = attack_hits_pmf({"n": at["ad"], "t": tt["t"], "mod": c["mod"], "explode": True,
                                        "defense": tt["defense"]}, rules, H if H is not None else 3 * at["ad"] + 60)
            hd = {h: p for h, p in enumerate(pm) if p}
            if tail:
                hd[len(pm)] = hd.get(len(pm), 0) + tail
            none_dr *= sum(p for h, p in hd.items() if h < tt["tgt"]["dr"])
            none_cr *= sum(p for h, p in hd.items() if h < tt["tgt"]["cr"])
            e_crits += sum(p * (h // tt["tgt"]["cr"]) for h, p in hd.items())
        res[a["id"]] = {"hp_damage": e_dmg, "kills": e_kills, "p_kill_all": p_all,
                        "p_damage": 1 - none_dr, "p_critical": 1 - none_cr, "criticals": e_crits}
    return res


# --------------------------------------------------------------------------- ram / collision (§10)

SHIP_KEYS = {"profile", "rr", "hp", "hp_lost", "dr", "cr", "size"}


def _ship(spec, data, where):
    spec = unwrap(dict(spec or {}))
    _check_keys(spec, SHIP_KEYS, where)
    s = {"hp_lost": 0, "rr": 0, "size": "medium"}
    if spec.get("profile"):
        p = _profile(data, spec["profile"])
        s.update({k: p[k] for k in ("rr", "hp", "dr", "cr", "size") if k in p})
    s.update({k: v for k, v in spec.items() if k != "profile"})
    for k in ("hp", "dr", "cr"):
        if k not in s:
            raise ValueError(f"{where}: missing {k}")
    if not (s["hp"] >= 1 and 0 <= s["hp_lost"] < s["hp"] and s["dr"] >= 1 and s["cr"] >= 1 and s["rr"] >= 0):
        raise ValueError(f"{where}: need hp>=1, 0<=hp_lost<hp, dr,cr>=1, rr>=0")
    return s


def _ram_setup(params, rules, data):
    params = unwrap(dict(params))
    _check_keys(params, {"rammer", "rammed", "critical_hp"}, "ram.params")
    ra = _ship(params.get("rammer"), data, "rammer")
    rd = _ship(params.get("rammed"), data, "rammed")
    if ra["rr"] < 1:
        raise ValueError("rammer needs RR >= 1 (RR 0 contact is a collision, §10)")
    t = data["to_hit"]["ram_dice"]
    explode = rules["ram_dice"] == "exploding"
    reply_crits = rules["ram_no_crits"] == "rr_reply" and rd["rr"] > 0
    return ra, rd, t, explode, reply_crits, crit_pmf(data, params.get("critical_hp"))


def _sim_ram(params, rules, data, trials, rng):
    ra, rd, t, explode, reply_crits, cp = _ram_setup(params, rules, data)
    out = {k: [] for k in ("damage_to_rammed", "damage_to_rammer", "p_rammed_destroyed", "p_rammer_destroyed")}
    for _ in range(trials):
        h = roll_hits(rng, ra["rr"], t, 0, explode, rules["modified_six"])
        d_rd = damage_from_hits(h, rd, True, rules, rng, cp)
        cur = rd["hp"] - rd["hp_lost"]
        n_reply = max(0, cur - d_rd) if rules["ram_reply"] == "after_damage" else cur
        h2 = roll_hits(rng, n_reply, t, 0, explode, rules["modified_six"])
        d_ra = damage_from_hits(h2, ra, reply_crits, rules, rng, cp)
        out["damage_to_rammed"].append(d_rd)
        out["damage_to_rammer"].append(d_ra)
        out["p_rammed_destroyed"].append(1 if d_rd >= cur else 0)
        out["p_rammer_destroyed"].append(1 if d_ra >= ra["hp"] - ra["hp_lost"] else 0)
    return out


def exact_ram(params, rules=None, data=None):
    rules = _rules(rules)
    data = _data(data)
    ra, rd, t, explode, reply_crits, cp = _ram_setup(params, rules, data)
    cur = rd["hp"] - rd["hp_lost"]
    res = {k: {} for k in ("damage_to_rammed", "damage_to_rammer", "p_rammed_destroyed", "p_rammer_destroyed")}
    d1 = _damage_pmf(ra["rr"], t, 0, explode, 0, rd, True, rules, cp)
    for x, p in d1.items():
        n_reply = max(0, cur - x) if rules["ram_reply"] == "after_damage" else cur
        d2 = _damage_pmf(n_reply, t, 0, explode, 0, ra, reply_crits, rules, cp)
        for y, q in d2.items():
            for m, v in (("damage_to_rammed", x), ("damage_to_rammer", y),
                         ("p_rammed_destroyed", int(x >= cur)),
                         ("p_rammer_destroyed", int(y >= ra["hp"] - ra["hp_lost"]))):
                res[m][v] = res[m].get(v, 0) + p * q
    return res


def _collision_setup(params, rules, data):
    params = unwrap(dict(params))
    _check_keys(params, {"a", "b", "terrain", "critical_hp"}, "collision.params")
    a = _ship(params.get("a"), data, "a")
    terrain = params.get("terrain")
    if (terrain is None) == (params.get("b") is None):
        raise ValueError("collision needs exactly one of b (a model) or terrain")
    b = _ship(params["b"], data, "b") if terrain is None else None
    if terrain is not None and terrain not in data["terrain_dice"]:
        raise ValueError(f"terrain must be one of {list(data['terrain_dice'])}")
    return a, b, terrain, data["to_hit"]["ram_dice"], rules["ram_dice"] == "exploding", \
        crit_pmf(data, params.get("critical_hp"))


def _coll_crits(roller, rules):
    """Source line 388: "Le collisioni ... non causano colpi critici", under every reading."""
    return False


def _sim_collision(params, rules, data, trials, rng):
    a, b, terrain, t, explode, cp = _collision_setup(params, rules, data)
    out = {k: [] for k in ("damage_to_a", "damage_to_b", "p_a_destroyed", "p_b_destroyed")}
    ra = a["hp"] - a["hp_lost"]
    for _ in range(trials):
        if terrain is not None:
            h = roll_hits(rng, data["terrain_dice"][terrain], t, 0, explode, rules["modified_six"])
            da, db, rb = damage_from_hits(h, a, False, rules, rng, cp), 0, None
        else:
            rb = b["hp"] - b["hp_lost"]
            ha = roll_hits(rng, ra, t, 0, explode, rules["modified_six"])   # a's dice vs b
            hb = roll_hits(rng, rb, t, 0, explode, rules["modified_six"])   # b's dice vs a
            db = damage_from_hits(ha, b, _coll_crits(a, rules), rules, rng, cp)
            da = damage_from_hits(hb, a, _coll_crits(b, rules), rules, rng, cp)
        out["damage_to_a"].append(da)
        out["damage_to_b"].append(db)
        out["p_a_destroyed"].append(1 if da >= ra else 0)
        out["p_b_destroyed"].append(1 if (rb is not None and db >= rb) else 0)
    return out


def exact_collision(params, rules=None, data=None):
    rules = _rules(rules)
    data = _data(data)
    a, b, terrain, t, explode, cp = _collision_setup(params, rules, data)
    ra = a["hp"] - a["hp_lost"]
    if terrain is not None:
        da = _damage_pmf(data["terrain_dice"][terrain], t, 0, explode, 0, a, False, rules, cp)
        db, rb = {0: Fraction(1)}, None
    else:
        rb = b["hp"] - b["hp_lost"]
        db = _damage_pmf(ra, t, 0, explode, 0, b, _coll_crits(a, rules), rules, cp)
        da = _damage_pmf(rb, t, 0, explode, 0, a, _coll_crits(b, rules), rules, cp)
    res = {"damage_to_a": da, "damage_to_b": db, "p_a_destroyed": {}, "p_b_destroyed": {}}
    for x, p in da.items():
        res["p_a_destroyed"][int(x >= ra)] = res["p_a_destroyed"].get(int(x >= ra), 0) + p
    for y, q in db.items():
        v = int(rb is not None and y >= rb)
        res["p_b_destroyed"][v] = res["p_b_destroyed"].get(v, 0) + q
    return res


# --------------------------------------------------------------------------- boarding (§12)

BOARD_KEYS = {"attacker_ap", "attacker_from", "defense_dice", "defender_ap", "defender_md", "half_md"}


def _board_setup(params, rules, data):
    p = unwrap(dict(params))
    _check_keys(p, BOARD_KEYS, "boarding.params")
    ap = int(p["attacker_ap"])
    if ap < 1:
        raise ValueError("attacker_ap must be >= 1")
    frm = p.get("attacker_from", "surface")
    if frm not in ("surface", "flying", "diving"):
        raise ValueError("attacker_from must be surface, flying or diving")
    dd = int(p.get("defense_dice", 0))
    dap = int(p["defender_ap"])
    if rules["boarding_defender_dice"] == "fig_md":
        if p.get("defender_md") is None:
            raise ValueError("boarding_defender_dice=fig_md needs params.defender_md")
        dmd = int(p["defender_md"])
    else:
        dmd = dap
    if dd < 0 or dap < 0 or dmd < 0:
        raise ValueError("defense_dice, defender_ap, defender_md must be >= 0")
    return ap, dd, dap, dmd, bool(p.get("half_md", False))


def _sim_boarding(params, rules, data, trials, rng):
    ap, dd, dap, dmd, half = _board_setup(params, rules, data)
    t_def = data["boarding_defense_to_hit"]
    t_md = data["to_hit"]["melee_dice"]
    ex = rules["melee_dice"] == "exploding"
    out = {k: [] for k in ("p_capture", "p_derelict", "attacker_ap_lost", "defender_ap_lost", "attacker_ap_left")}
    for _ in range(trials):
        if dap == 0:  # a model with 0 AP that is boarded is captured automatically
            cap, der, a_left, d_left = 1, 0, ap, 0
        else:
            if rules["boarding_defense_dice"] == "one_per_success":
                dh = sum(1 for _ in range(dd) if rng.randint(1, 6) >= t_def)
            else:
                dh = roll_hits(rng, dd, t_def, 0, True, rules["modified_six"])
            a_now = max(0, ap - dh)
            md_a = a_now // 2 if half else a_now
            ha = roll_hits(rng, md_a, t_md, 0, ex, rules["modified_six"])
            hd = roll_hits(rng, dmd, t_md, 0, ex, rules["modified_six"])
            d_left = max(0, dap - ha)
            a_left = max(0, a_now - hd)
            cap = 1 if (d_left == 0 and a_left >= 1) else 0
            der = 1 if (d_left == 0 and a_left == 0 and rules["both_zero_ap"] == "derelict") else 0
        out["p_capture"].append(cap)
        out["p_derelict"].append(der)
        out["attacker_ap_lost"].append(ap - a_left)
        out["defender_ap_lost"].append(dap - d_left)
        out["attacker_ap_left"].append(a_left)
    return out


def exact_boarding(params, rules=None, data=None):
    rules = _rules(rules)
    data = _data(data)
    ap, dd, dap, dmd, half = _board_setup(params, rules, data)
    res = {k: {} for k in ("p_capture", "p_derelict", "attacker_ap_lost", "defender_ap_lost", "attacker_ap_left")}

    def add(vals, p):
        for k, v in vals.items():
            res[k][v] = res[k].get(v, 0) + p

    if dap == 0:
        add({"p_capture": 1, "p_derelict": 0, "attacker_ap_lost": 0, "defender_ap_lost": 0,
             "attacker_ap_left": ap}, Fraction(1))
        return res
    t_def, t_md = data["boarding_defense_to_hit"], data["to_hit"]["melee_dice"]
    ex = rules["melee_dice"] == "exploding"
    if rules["boarding_defense_dice"] == "one_per_success":
        q = Fraction(7 - t_def, 6)
        def_d = {k: math.comb(dd, k) * q ** k * (1 - q) ** (dd - k) for k in range(dd + 1)}
    else:
        H = 2 * dd + 40
        pm = pool_pmf(dd, t_def, 0, True, rules["modified_six"], H)
        def_d = {k: p for k, p in enumerate(pm) if p}
        def_d[H + 1] = 1 - sum(pm)
    for dh, p1 in def_d.items():
        a_now = max(0, ap - dh)
        md_a = a_now // 2 if half else a_now
        Ha, Hd = 2 * md_a + 40, 2 * dmd + 40
        pa = pool_pmf(md_a, t_md, 0, ex, rules["modified_six"], Ha)
        pd = pool_pmf(dmd, t_md, 0, ex, rules["modified_six"], Hd)
        da = {k: v for k, v in enumerate(pa) if v}
        da[Ha + 1] = da.get(Ha + 1, 0) + (1 - sum(pa))
        dd_ = {k: v for k, v in enumerate(pd) if v}
        dd_[Hd + 1] = dd_.get(Hd + 1, 0) + (1 - sum(pd))
        for ha, p2 in da.items():
            for hd, p3 in dd_.items():
                p = p1 * p2 * p3
                if not p:
                    continue
                d_left, a_left = max(0, dap - ha), max(0, a_now - hd)
                add({"p_capture": int(d_left == 0 and a_left >= 1),
                     "p_derelict": int(d_left == 0 and a_left == 0 and rules["both_zero_ap"] == "derelict"),
                     "attacker_ap_lost": ap - a_left, "defender_ap_lost": dap - d_left,
                     "attacker_ap_left": a_left}, p)
    return res


# --------------------------------------------------------------------------- rout_test (§8)

ROUT_KEYS = {"squadron_size", "models_lost", "commodore_lost", "near_commodore", "out_of_command",
             "successes_needed"}


def rout_needed(size, lost, commodore_lost):
    """§8: 1; 2 if commodore lost; 2 if lost >= half; 3 if both."""
    return 1 + (1 if lost >= 1 and 2 * lost >= size else 0) + (1 if commodore_lost else 0)


def _rout_setup(params, data):
    p = unwrap(dict(params))
    _check_keys(p, ROUT_KEYS, "rout_test.params")
    size, lost = int(p.get("squadron_size", 3)), int(p.get("models_lost", 1))
    cl = bool(p.get("commodore_lost", False))
    near, out = bool(p.get("near_commodore", False)), bool(p.get("out_of_command", False))
    if not (size >= 1 and 0 <= lost < size):
        raise ValueError("need squadron_size >= 1 and 0 <= models_lost < squadron_size")
    if near and cl:
        raise ValueError("near_commodore is impossible while the commodore is lost")
    rt = data["rout_test"]
    dice = max(0, rt["dice"] + (rt["commodore_bonus_dice"] if near else 0)
               - (rt["out_of_command_penalty_dice"] if out else 0))
    need = p.get("successes_needed")
    need = int(need) if need is not None else rout_needed(size, lost, cl)
    return dice, need


def _sim_rout(params, rules, data, trials, rng):
    dice, need = _rout_setup(params, data)
    out = {"p_pass": [], "successes": []}
    for _ in range(trials):
        s = roll_rout_successes(rng, dice)
        out["p_pass"].append(1 if s >= need else 0)
        out["successes"].append(s)
    return out


def exact_rout_test(params, rules=None, data=None):
    data = _data(data)
    dice, need = _rout_setup(params, data)
    pm = rout_pmf(dice)
    pp = sum(p for k, p in pm.items() if k >= need)
    return {"p_pass": {1: pp, 0: 1 - pp}, "successes": pm}


# --------------------------------------------------------------------------- duel

DUEL_KEYS = {"side_a", "side_b", "range", "target_policy", "max_turns", "critical_hp", "boarding"}
BOARDING_INCHES = 4  # §12: crewed models board a target within 4in
MODEL_KEYS = {"profile", "hp_lost", "state", "commodore", "count"}
POLICIES = ("first", "weakest", "strongest", "spread", "random")


def _duel_compile(params, rules, data):
    p = unwrap(dict(params))
    _check_keys(p, DUEL_KEYS, "duel.params")
    sides = []
    for key in ("side_a", "side_b"):
        side = p.get(key) or {}
        _check_keys(side, {"squadrons"}, key)
        models, squads = [], []
        n_comm = 0
        for s_i, sq in enumerate(side.get("squadrons") or []):
            _check_keys(sq, {"name", "models"}, f"{key}.squadrons[{s_i}]")
            members = []
            for m in sq.get("models") or []:
                _check_keys(m, MODEL_KEYS, f"{key}.squadrons[{s_i}].models")
                prof = _profile(data, m["profile"])
                for _ in range(int(m.get("count", 1))):
                    ws = []
                    for w in prof.get("weapons") or []:
                        if w["type"] == "mine":
                            continue  # mines are not modelled in the duel
                        ws.append({"type": w["type"], "ad": [int(x) for x in w["ad"]]})
                    mod = {"squadron": s_i, "size": prof["size"], "capital": bool(prof.get("capital", False)),
                           "hp": int(prof["hp"]), "dr": int(prof["dr"]), "cr": int(prof["cr"]),
                           "aa": int(prof.get("aa", 0)), "cc": int(prof.get("cc", 0)),
                           "mv": float(prof.get("mv", 0)), "points": float(prof.get("points", 0)),
                           "fast": bool(prof.get("fast", False)), "elusive": bool(prof.get("elusive", False)),
                           "state": m.get("state", "surface"), "hp_lost0": int(m.get("hp_lost", 0)),
                           "commodore": bool(m.get("commodore", False)), "weapons": ws,
                           "ap": int(prof.get("ap", 0))}
                    if mod["state"] not in STATES or not 0 <= mod["hp_lost0"] < mod["hp"]:
                        raise ValueError(f"{key}: bad state or hp_lost")
                    n_comm += mod["commodore"]
                    members.append(len(models))
                    models.append(mod)
            if not members:
                raise ValueError(f"{key}.squadrons[{s_i}] has no models")
            squads.append(members)
        if not squads:
            raise ValueError(f"{key} needs at least one squadron")
        if n_comm > 1:
            raise ValueError(f"{key}: at most one commodore")
        sides.append({"models": models, "squads": squads})
    rng_ = dict(p.get("range") or {"mode": "fixed", "bands": [2]})
    mode = rng_.get("mode", "fixed")
    if mode == "fixed":
        _check_keys(rng_, {"mode", "bands"}, "range")
        bands = [int(b) for b in rng_.get("bands", [2])]
        if not bands or any(b not in (1, 2, 3, 4) for b in bands):
            raise ValueError("range.bands: non-empty list of 1..4")
        rng_ = {"mode": "fixed", "bands": bands}
    elif mode == "closing":
        _check_keys(rng_, {"mode", "start", "speed_a", "speed_b", "min_distance"}, "range")
        rng_ = {"mode": "closing", "start": float(rng_["start"]),
                "speed": [rng_.get("speed_a"), rng_.get("speed_b")],
                "min_distance": float(rng_.get("min_distance", 0))}
    else:
        raise ValueError("range.mode must be fixed or closing")
    pol = dict(p.get("target_policy") or {})
    _check_keys(pol, {"a", "b"}, "target_policy")
    pols = [pol.get("a", "first"), pol.get("b", "first")]
    if any(x not in POLICIES for x in pols):
        raise ValueError(f"target_policy values must be in {POLICIES}")
    turns = int(p.get("max_turns", 6))
    if turns < 1:
        raise ValueError("max_turns >= 1")
    board = dict(p.get("boarding") or {})
    _check_keys(board, {"enabled", "ap_committed"}, "boarding")
    board = {"enabled": bool(board.get("enabled", False)), "ap_committed": board.get("ap_committed", "all")}
    if board["ap_committed"] not in ("all", "half"):
        raise ValueError("boarding.ap_committed must be all or half")
    if board["enabled"] and rules["boarding_defender_dice"] == "fig_md":
        raise ValueError("boarding_defender_dice=fig_md is not available in the duel (profiles have no MD)")
    return {"sides": sides, "range": rng_, "policy": pols, "max_turns": turns,
            "cpmf": crit_pmf(data, p.get("critical_hp")), "boarding": board}


def band_of(d, rules, data):
    """§11 bands of 8in; Amb 13: next_band = ceil(d/8) (8.5 -> RB2), lower_band = ceil(floor(d)/8)."""
    w = data["range_band_inches"]
    x = d if rules["fractional_range"] == "next_band" else math.floor(d)
    return max(1, math.ceil(x / w))


def _initiative(rng, rules, data):
    """Return 0 if side A activates first, else 1 (2D6 each, §4; ties Amb 14)."""
    nd = data["initiative_dice"]
    for _ in range(INITIATIVE_REROLL_CAP):
        a = sum(rng.randint(1, 6) for _ in range(nd))
        b = sum(rng.randint(1, 6) for _ in range(nd))
        if a != b:
            return 0 if a > b else 1
        if rules["initiative_tie"] == "a_first":
            return 0
        if rules["initiative_tie"] == "b_first":
            return 1
    return 0


def _legal(wtype, band, att_state, tgt, rules):
    try:
        check_legal(wtype, band, att_state, tgt, rules)
        return True
    except ValueError:
        return False



def _pick_target(policy, elig, k, models, hp_lost, rng):
    """The eligible enemy model index a target policy picks (spec §7 target policies);
    ``k`` = picks already made in this step; only ``random`` draws from ``rng``."""
    if policy == "first":
        return elig[0]
    if policy == "weakest":
        return min(elig, key=lambda j: (models[j]["hp"] - hp_lost[j], j))
    if policy == "strongest":
        return min(elig, key=lambda j: (-models[j]["points"], j))
    if policy == "spread":
        return elig[k % len(elig)]
    return elig[rng.randrange(len(elig))]


def _duel_trial(c, rules, data, rng):
    sides = c["sides"]
    hp_lost = [[m["hp_lost0"] for m in s["models"]] for s in sides]
    alive = [[True] * len(s["models"]) for s in sides]
    start_n = [[len(sq) for sq in s["squads"]] for s in sides]
    brk = [[False] * len(s["squads"]) for s in sides]
    comm_lost = [False, False]
    rout_fails = [0, 0]
    ap = [[m["ap"] for m in s["models"]] for s in sides]
    captured = [0, 0]
    dist = c["range"]["start"] if c["range"]["mode"] == "closing" else None
    winner, turn = None, 0

    def sq_alive(x, s):
        return any(alive[x][i] for i in sides[x]["squads"][s])

    def side_alive(x):
        return any(alive[x])

    def test(x, s, lost_in_sq):
        dice = data["rout_test"]["dice"]
        comm = [i for i in sides[x]["squads"][s] if sides[x]["models"][i]["commodore"] and alive[x][i]]
        if comm:
            dice += data["rout_test"]["commodore_bonus_dice"]
        need = rout_needed(start_n[x][s], lost_in_sq, comm_lost[x])
        return roll_rout_successes(rng, dice) >= need

    for turn in range(1, c["max_turns"] + 1):
        first = _initiative(rng, rules, data)
        done = [[False] * len(s["squads"]) for s in sides]
        cur = first
        while True:
            nxt = [s for s in range(len(sides[cur]["squads"])) if not done[cur][s] and sq_alive(cur, s)]
            if not nxt:
                other = 1 - cur
                if not [s for s in range(len(sides[other]["squads"])) if not done[other][s] and sq_alive(other, s)]:
                    break
                cur = other
                continue
            s = nxt[0]
            done[cur][s] = True
            x, y = cur, 1 - cur
            had_break = brk[x][s]
            members = [i for i in sides[x]["squads"][s] if alive[x][i]]
            # 1. move (closing mode)
            if c["range"]["mode"] == "closing":
                sp = c["range"]["speed"][x]
                sp = float(sp) if sp is not None else min(sides[x]["models"][i]["mv"] for i in members)
                dist = max(c["range"]["min_distance"], dist - sp)
                band = band_of(dist, rules, data)
            else:
                bands = c["range"]["bands"]
                band = bands[min(turn, len(bands)) - 1]
            lost_now = [0] * len(sides[y]["squads"])
            comm_now = False
            # 2. declare all attacks (policy on the state after movement)
            declared = []
            if band <= data["range_bands"]:
                k = 0
                for i in members:
                    am = sides[x]["models"][i]
                    for w in am["weapons"]:
                        if w["ad"][band - 1] < 1:
                            continue
                        elig = [j for j, tm in enumerate(sides[y]["models"]) if alive[y][j] and
                                _legal(w["type"], band, am["state"], tm, rules)]
                        if not elig:
                            continue
                        j = _pick_target(c["policy"][x], elig, k, sides[y]["models"], hp_lost[y], rng)
                        k += 1
                        declared.append((i, w, j))
            # 3. resolve in declaration order
            shot_down, shot_down_commodore = 0, False
            for i, w, j in declared:
                if not alive[y][j] or not alive[x][i]:
                    continue  # target already destroyed (or attacker shot down): the attack is lost
                am, tm = sides[x]["models"][i], sides[y]["models"][j]
                aa_left = degrade_aux(tm["aa"], hp_lost[y][j])
                if am["state"] in ("flying", "obscured") and band == 1 and aa_left > 0:
                    # Ack Ack: "l'AA viene risolto prima dell'attacco dei volanti"; the attacked
                    # model's AA only; AA hits flyers on 4+, small flyers on 5-6
                    need = AA_NEEDS.get(am["size"], AA_NEEDS_OTHER)
                    aa_hits = roll_hits(rng, aa_left, need, 0, rules["aa_vs_flyer_dice"] == "exploding",
                                        rules["modified_six"])
                    flyer = {"dr": am["dr"], "cr": am["cr"], "hp": am["hp"], "hp_lost": hp_lost[x][i]}
                    hp_lost[x][i] += damage_from_hits(aa_hits, flyer, True, rules, rng, c["cpmf"])
                    aa_left = 0  # spent on the flyer, none left to cancel its rockets
                    if hp_lost[x][i] >= am["hp"]:
                        alive[x][i] = False
                        shot_down += 1
                        shot_down_commodore = shot_down_commodore or am["commodore"]
                        continue
                n = degrade(w["ad"][band - 1], hp_lost[x][i], w["type"])
                tgt = {"size": tm["size"], "state": tm["state"], "fast": tm["fast"], "elusive": tm["elusive"],
                       "dr": tm["dr"], "cr": tm["cr"], "hp": tm["hp"], "hp_lost": hp_lost[y][j]}
                t = to_hit_number(w["type"], band, {"capital": am["capital"], "state": am["state"]},
                                  tgt, rules, data)
                hits = roll_hits(rng, n, t, 0, True, rules["modified_six"])
                if w["type"] == "rocket":
                    hits = max(0, hits - roll_cancels(rng, aa_left))
                elif w["type"] == "torpedo":
                    hits = max(0, hits - roll_cancels(rng, degrade_aux(tm["cc"], hp_lost[y][j])))
                hp_lost[y][j] += damage_from_hits(hits, tgt, True, rules, rng, c["cpmf"])
                if hp_lost[y][j] >= tm["hp"]:
                    alive[y][j] = False
                    lost_now[tm["squadron"]] += 1
                    if tm["commodore"]:
                        comm_now = True
            if not side_alive(y):
                winner = x
                break
            if not side_alive(x):
                winner = y
                break
            # 3b. boardings at 4in (§4 step 6; spec §7 "Boarding step")
            in_reach = (dist <= BOARDING_INCHES) if c["range"]["mode"] == "closing" else band == 1
            if c["boarding"]["enabled"] and not had_break and in_reach:
                kb = 0
                for i in members:
                    am = sides[x]["models"][i]
                    if am["state"] == "submerged" or ap[x][i] < 1:
                        continue
                    elig = [j for j, tm in enumerate(sides[y]["models"])
                            if alive[y][j] and tm["state"] != "submerged" and tm["size"] != "tiny"]
                    if not elig:
                        continue
                    j = _pick_target(c["policy"][x], elig, kb, sides[y]["models"], hp_lost[y], rng)
                    kb += 1
                    tm = sides[y]["models"][j]
                    com = ap[x][i] if c["boarding"]["ap_committed"] == "all" else max(1, ap[x][i] // 2)
                    ap[x][i] -= com
                    dap = ap[y][j]
                    cap = der = False
                    if dap == 0:
                        cap, a_left = True, com
                    else:
                        nd = degrade_aux(tm["cc"] if am["state"] == "diving" else tm["aa"], hp_lost[y][j])
                        t_def = data["boarding_defense_to_hit"]
                        if rules["boarding_defense_dice"] == "one_per_success":
                            dh = sum(1 for _ in range(nd) if rng.randint(1, 6) >= t_def)
                        else:
                            dh = roll_hits(rng, nd, t_def, 0, True, rules["modified_six"])
                        a_now = max(0, com - dh)
                        t_md = data["to_hit"]["melee_dice"]
                        ex = rules["melee_dice"] == "exploding"
                        ha = roll_hits(rng, a_now, t_md, 0, ex, rules["modified_six"])
                        hd = roll_hits(rng, dap, t_md, 0, ex, rules["modified_six"])
                        d_left = max(0, dap - ha)
                        a_left = max(0, a_now - hd)
                        ap[y][j] = d_left
                        cap = d_left == 0 and a_left >= 1
                        der = d_left == 0 and a_left == 0 and rules["both_zero_ap"] == "derelict"
                    if cap or der:
                        alive[y][j] = False
                        lost_now[tm["squadron"]] += 1
                        if tm["commodore"]:
                            comm_now = True
                        if cap:
                            captured[y] += 1  # the surviving boarders stay aboard (prize crew)
                    else:
                        ap[x][i] += a_left  # survivors return to their ship
                if not side_alive(y):
                    winner = x
                    break
            # 4. rout tests (7a) for enemy squadrons that lost models / all if commodore lost now
            new_comm = comm_now and not comm_lost[y]
            if new_comm:
                comm_lost[y] = True
            for s2 in range(len(sides[y]["squads"])):
                if not sq_alive(y, s2):
                    continue
                if lost_now[s2] >= 1 or new_comm:
                    lost_total = sum(1 for i in sides[y]["squads"][s2] if not alive[y][i])
                    if not test(y, s2, lost_total):
                        brk[y][s2] = True
                        rout_fails[y] += 1
            # 4'. the active side's own tests when Ack Ack shot down flyers of squadron s
            if shot_down or shot_down_commodore:
                new_comm_x = shot_down_commodore and not comm_lost[x]
                if new_comm_x:
                    comm_lost[x] = True
                for s2 in range(len(sides[x]["squads"])):
                    if sq_alive(x, s2) and ((s2 == s and shot_down) or new_comm_x):
                        lost_total = sum(1 for i in sides[x]["squads"][s2] if not alive[x][i])
                        if not test(x, s2, lost_total):
                            brk[x][s2] = True
                            rout_fails[x] += 1
            # 5. bravery test (7b) for the active squadron if it had Break before activating
            if had_break and sq_alive(x, s):
                lost_total = sum(1 for i in sides[x]["squads"][s] if not alive[x][i])
                if test(x, s, lost_total):
                    brk[x][s] = False
            cur = y
        if winner is not None:
            break
    res = {"p_win_a": int(winner == 0), "p_win_b": int(winner == 1), "p_draw": int(winner is None),
           "turns": turn}
    for x, tag in ((0, "a"), (1, "b")):
        ms = sides[x]["models"]
        res[f"points_destroyed_{tag}"] = sum(m["points"] for i, m in enumerate(ms) if not alive[x][i])
        res[f"survivors_{tag}"] = sum(alive[x])
        res[f"rout_fails_{tag}"] = rout_fails[x]
        res[f"captured_{tag}"] = captured[x]
    return res


DUEL_METRICS = ("p_win_a", "p_win_b", "p_draw", "turns", "points_destroyed_a", "points_destroyed_b",
                "survivors_a", "survivors_b", "rout_fails_a", "rout_fails_b")


def _sim_duel(params, rules, data, trials, rng):
    c = _duel_compile(params, rules, data)
    names = DUEL_METRICS + (("captured_a", "captured_b") if c["boarding"]["enabled"] else ())
    out = {k: [] for k in names}
    for _ in range(trials):
        r = _duel_trial(c, rules, data, rng)
        for k in names:
            out[k].append(r[k])
    return out


def exact_duel_1v1(params, rules=None, data=None):
    """Exact {metric: {value: Fraction}} for p_win_a/p_win_b/p_draw/turns of a duel with ONE model
    per side and a fixed range schedule (no rout effect possible). Attack tails (< 1e-25) are
    treated as 'hits = H+1'."""
    rules = _rules(rules)
    data = _data(data)
    c = _duel_compile(params, rules, data)
    if c["range"]["mode"] != "fixed" or any(len(s["models"]) != 1 for s in c["sides"]):
        raise ValueError("exact_duel_1v1 needs one model per side and range.mode fixed")
    A, B = c["sides"][0]["models"][0], c["sides"][1]["models"][0]
    ms = (A, B)
    # P(side A first)
    nd = data["initiative_dice"]
    sums = {}
    for rolls in itertools.product(range(1, 7), repeat=nd):
        sums[sum(rolls)] = sums.get(sum(rolls), 0) + Fraction(1, 6 ** nd)
    p_gt = sum(p * q for a, p in sums.items() for b, q in sums.items() if a > b)
    p_tie = sum(p * p for p in sums.values())
    tie = rules["initiative_tie"]
    # reroll with cap: geometric; the cap's leftover mass goes to A (tie**CAP negligible but exact)
    if tie == "reroll":
        pa = p_gt * (1 - p_tie ** INITIATIVE_REROLL_CAP) / (1 - p_tie) + p_tie ** INITIATIVE_REROLL_CAP
    elif tie == "a_first":
        pa = p_gt + p_tie
    else:
        pa = p_gt
    cache = {}

    def activation(x, lost, band):
        """dist over new hp_lost of the target after model x fires all weapons (sequential)."""
        y = 1 - x
        am, tm = ms[x], ms[y]
        dist = {lost[y]: Fraction(1)}
        for w in am["weapons"]:
            if w["ad"][band - 1] < 1 or not _legal(w["type"], band, am["state"], tm, rules):
                continue
            new = {}
            for l, p in dist.items():
                if l >= tm["hp"]:
                    new[l] = new.get(l, 0) + p
                    continue
                tgt = {"size": tm["size"], "state": tm["state"], "fast": tm["fast"], "elusive": tm["elusive"],
                       "dr": tm["dr"], "cr": tm["cr"], "hp": tm["hp"], "hp_lost": l}
                t = to_hit_number(w["type"], band, {"capital": am["capital"], "state": am["state"]}, tgt, rules, data)
                n = degrade(w["ad"][band - 1], lost[x], w["type"])
                dd = 0
                if w["type"] == "rocket":
                    dd = degrade_aux(tm["aa"], l)
                elif w["type"] == "torpedo":
                    dd = degrade_aux(tm["cc"], l)
                key = (n, t, dd, l, y)
                if key not in cache:
                    cache[key] = _damage_pmf(n, t, 0, True, dd, tgt, True, rules, c["cpmf"])
                for d, q in cache[key].items():
                    nl = min(tm["hp"], l + d)
                    new[nl] = new.get(nl, 0) + p * q
            dist = new
        return dist

    res = {"p_win_a": {}, "p_win_b": {}, "p_draw": {}, "turns": {}}

    def finish(w, turn, p):
        res["p_win_a"][int(w == 0)] = res["p_win_a"].get(int(w == 0), 0) + p
        res["p_win_b"][int(w == 1)] = res["p_win_b"].get(int(w == 1), 0) + p
        res["p_draw"][int(w is None)] = res["p_draw"].get(int(w is None), 0) + p
        res["turns"][turn] = res["turns"].get(turn, 0) + p

    states = {(A["hp_lost0"], B["hp_lost0"]): Fraction(1)}
    bands = c["range"]["bands"]
    for turn in range(1, c["max_turns"] + 1):
        band = bands[min(turn, len(bands)) - 1]
        nxt = {}
        for (la, lb), p in states.items():
            for first, pf in ((0, pa), (1, 1 - pa)):
                if not pf:
                    continue
                lost = [la, lb]
                d1 = activation(first, lost, band) if band <= 4 else {lost[1 - first]: Fraction(1)}
                for l1, q1 in d1.items():
                    lost1 = list(lost)
                    lost1[1 - first] = l1
                    if l1 >= ms[1 - first]["hp"]:
                        finish(first, turn, p * pf * q1)
                        continue
                    sec = 1 - first
                    d2 = activation(sec, lost1, band) if band <= 4 else {lost1[first]: Fraction(1)}
                    for l2, q2 in d2.items():
                        lost2 = list(lost1)
                        lost2[first] = l2
                        if l2 >= ms[first]["hp"]:
                            finish(sec, turn, p * pf * q1 * q2)
                        else:
                            k = tuple(lost2)
                            nxt[k] = nxt.get(k, 0) + p * pf * q1 * q2
        states = nxt
    for _, p in states.items():
        finish(None, c["max_turns"], p)
    return res


# --------------------------------------------------------------------------- entry point

_SIM = {"attack": _sim_attack, "fire_allocation": _sim_fire_allocation, "ram": _sim_ram,
        "collision": _sim_collision, "boarding": _sim_boarding, "rout_test": _sim_rout,
        "duel": _sim_duel}


def simulate(question, params, rules, data, trials, seed):
    """Run ``trials`` trials of ``question``; return {metric: [per-trial value, ...]}."""
    if question not in _SIM:
        raise ValueError(f"unknown question {question!r}; known {QUESTIONS}")
    rules = _rules(rules)
    data = unwrap(copy.deepcopy(data if data is not None else load_data()))
    rng = random.Random(seed)
    return _SIM[question](params or {}, rules, data, int(trials), rng)
