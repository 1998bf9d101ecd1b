"""Dystopian Wars rules shared by every question: rule options, to-hit numbers, legality,
face tables, AD degradation, linked fire and the exact damage distributions.

Spec: ``docs/models/dystopian_wars.md`` (cited "spec 0.N"); rules:
``docs/rules/dystopian_wars.md`` (cited §N, "Amb N"). Everything here runs in Python at
``prepare`` time and compiles a scenario into the plain arrays and ints the kernels take.
"""
from __future__ import annotations

import numpy as np

from analyzer.core import exact
from analyzer.run.dice import CANCEL_TABLE
from analyzer.core.gamedata import DataError
from analyzer.core.questions import RuleOption

_DIGEST = "docs/rules/dystopian_wars.md"

# ---------------------------------------------------------------------------------------------
# rule options (spec 0.2): every ambiguity of the digest, recommended reading first
# ---------------------------------------------------------------------------------------------

OPTIONS: dict[str, RuleOption] = {o.name: o for o in (
    RuleOption("obscured_to_hit", ("six", "size_based"), "six",
               "gunnery vs an obscured target: six = hit only on 6; size_based = medium/large/massive "
               "obscured targets are hit on 5-6", f"{_DIGEST} Amb 1"),
    RuleOption("surface_vs_submerged", ("forbidden_rb1", "only_rb1"), "forbidden_rb1",
               "a surface (or surfaced diving) model firing at a submerged one: forbidden_rb1 = not in RB1 "
               "(literal); only_rb1 = only in RB1", f"{_DIGEST} Amb 2"),
    RuleOption("primary_rb1_vs_set_number", ("improve", "hardest_wins"), "improve",
               "primaries' -1 in RB1 against a set number: improve = applied after the hardest number "
               "(small 5+ -> 4+); hardest_wins = -1 on the state number only, then the hardest wins",
               f"{_DIGEST} Amb 3"),
    RuleOption("modified_six", ("two_hits_no_explode", "one_hit"), "two_hits_no_explode",
               "a 6 reached only through a modifier: 2 hits without an extra die, or 1 hit",
               f"{_DIGEST} Amb 4"),
    RuleOption("ram_dice", ("exploding", "plain"), "exploding",
               "RR, reply, collision and terrain dice: exploding hit table, or plain 4+ (1 hit each)",
               f"{_DIGEST} Amb 5"),
    RuleOption("mine_dice", ("exploding", "plain"), "exploding",
               "mine attack dice: exploding hit table, or plain (1 hit each)", f"{_DIGEST} Amb 5"),
    RuleOption("melee_dice", ("exploding", "plain"), "exploding",
               "boarding melee dice (both sides): exploding hit table (source §12: melee dice use the hit "
               "table), or plain 4+ (a what-if: it contradicts the melee table the source spells out)",
               f"{_DIGEST} Amb 5", what_if=("plain",)),
    RuleOption("aa_vs_flyer_dice", ("exploding", "plain"), "exploding",
               "Ack Ack dice fired at an attacking flyer (§11, resolved before the flyer's attack): exploding "
               "= the general hit table ('6 colpito due volte e tira ancora') at the AA number (4+, small "
               "flyers 5-6); plain = one hit per success. The source gives the AA numbers but not whether "
               "AA against flyers uses the hit table; AA's cancelling dice (5 = 1, 6 = 2) never explode",
               f"{_DIGEST} §11 AA and CC, Amb 5"),
    RuleOption("mine_vs_submerged", ("same_roll", "submerged_number"), "same_roll",
               "a mine against a submerged model: same_roll = the one mine roll's hits apply to it as to "
               "a surface model (source: 'Il numero di colpiti verrà applicato a ogni modello ... sotto la "
               "sagoma (sia in superficie che immersi)'); submerged_number = rolled at the to-hit number "
               "against submerged models (the earlier default, kept to compare)", f"{_DIGEST} §11 mines"),
    RuleOption("own_weapons_link", ("halved", "full"), "halved",
               "one model linking its own weapons of a type: the extra weapons add half, or in full",
               f"{_DIGEST} Amb 6"),
    RuleOption("fast_elusive_scope", ("capital_only", "all"), "capital_only",
               "fast (6) and elusive (5-6) targets: only against Capital-Class attackers, or against all",
               f"{_DIGEST} Amb 7"),
    RuleOption("ram_no_crits", ("rr_reply", "no_reply_crits"), "rr_reply",
               "'Le collisioni o i modelli speronati senza valore di RR non causano colpi critici': "
               "rr_reply = a rammed model WITH an RR value can crit with its reply dice (the literal text); "
               "no_reply_crits = no reply die crits (the earlier default). Collision and terrain dice never "
               "crit under either reading", f"{_DIGEST} Amb 10"),
    RuleOption("boarding_defender_dice", ("current_ap", "fig_md"), "current_ap",
               "the boarded model's melee dice: its current AP, or its FIG MD (params.defender_md)",
               f"{_DIGEST} Amb 11"),
    RuleOption("both_zero_ap", ("no_capture", "derelict"), "no_capture",
               "both sides at 0 AP after the melee (not stated): nothing happens, or the model is derelict",
               f"{_DIGEST} Amb 11"),
    RuleOption("fractional_range", ("next_band", "lower_band"), "next_band",
               "a fractional distance such as 8.5in: the next band (RB2), or the lower band (RB1)",
               f"{_DIGEST} Amb 13"),
    RuleOption("initiative_tie", ("reroll", "a_first", "b_first"), "reroll",
               "tied 2D6 initiative rolls (not stated): both re-roll, or side A / side B goes first",
               f"{_DIGEST} Amb 14"),
    RuleOption("small_hp_critical", ("two_damage", "destroyed", "off"), "two_damage",
               "a critical against a model that started with <= 2 HP: 2 damage instead of the table, "
               "destroyed outright, or an ordinary critical", f"{_DIGEST} §11 damage (two passages)"),
    RuleOption("ram_reply", ("after_damage", "simultaneous"), "after_damage",
               "the rammed model's reply dice = its current HP after the ram's damage, or before it",
               "docs/models/dystopian_wars.md spec decision (§10)"),
    RuleOption("sampling", ("dice", "table"), "dice",
               "how the duel draws an attack's hits net of AA/CC cancels: dice = die by die; table = one uniform "
               "draw from the exact distribution (analyzer.core.exact; the tail beyond 1e-15 is not drawn). Not a rule "
               "reading: both give the same distributions (tests/dystopian_wars/test_dw_duel.py); measured with "
               "'analyzer bench dw-duel', table is no faster (0.99x), so dice stays the default",
               "docs/models/dystopian_wars.md §7 (performance)"),
    RuleOption("boarding_defense_dice", ("one_per_success", "hit_table"), "one_per_success",
               "AA/CC against boarders: each 5-6 removes 1 AP, or the hit table at 5+ (6 = 2 and explodes)",
               "docs/models/dystopian_wars.md spec decision (§12)"),
)}


def options(*names: str) -> tuple[RuleOption, ...]:
    """The rule options a question uses (spec 0.2 'used by'), in the spec's order."""
    return tuple(OPTIONS[n] for n in names)


#: placeholder paths of the HP a critical deals (the critical table is not in the source): they
#: change HP damage and kills, never the hits nor whether DR or CR is reached
CRITICAL_DAMAGE = ("params.critical_hp", "dystopian_wars.critical_default", "dystopian_wars.critical_table")


# ---------------------------------------------------------------------------------------------
# vocabulary
# ---------------------------------------------------------------------------------------------

WEAPON_TYPES = ("primary", "secondary", "rocket", "torpedo", "bomb", "mine")
WEAPON_CODE = {w: i for i, w in enumerate(WEAPON_TYPES)}
STATES = ("surface", "flying", "diving", "submerged", "obscured")
SIZES = ("tiny", "small", "medium", "large", "massive")
AIR = ("flying", "obscured")
DEGRADING = ("primary", "secondary")                                  # §11 Damage to AD
SMALL_RULE_WEAPONS = ("primary", "secondary", "rocket", "torpedo", "bomb")  # §11 Small targets

#: kernel codes of rules.small_hp_critical (see kernels.dystopian_wars.attack)
SMALL_HP_CODE = {"two_damage": 0, "destroyed": 1, "off": 2}


class RuleError(DataError):
    """A parameter combination the rules forbid (depends on data or rule options, so it is
    checked in ``prepare``). A :class:`DataError`, so the CLI prints it as one line."""


# ---------------------------------------------------------------------------------------------
# dice faces (§1, spec 0.3)
# ---------------------------------------------------------------------------------------------

def hit_faces(t: int, mod: int = 0, explode: bool = True,
              modified_six: str = "two_hits_no_explode") -> tuple[np.ndarray, np.ndarray]:
    """Face table of one hit die at final to-hit number ``t`` with roll modifier ``mod``.

    §1: a natural 1 always fails; ``min(r + mod, 6) >= t`` hits; a natural 6 scores 2 and
    rolls one more die; a 6 reached through a modifier scores 2 without an extra die
    (Amb 4 ``two_hits_no_explode``) or 1 (``one_hit``). ``explode = False`` is the plain
    reading of Amb 5: one hit per success.
    """
    value = np.zeros(7, np.int64)
    explodes = np.zeros(7, np.bool_)
    for r in range(2, 7):
        v = min(r + mod, 6)
        if v < t:
            continue
        if not explode or v < 6:
            value[r] = 1
        elif r == 6:
            value[r], explodes[r] = 2, True
        else:
            value[r] = 2 if modified_six == "two_hits_no_explode" else 1
    return value, explodes


def plain_faces(t: int) -> tuple[np.ndarray, np.ndarray]:
    """One success per natural roll >= t, never exploding (boarding AA, §12)."""
    value = np.zeros(7, np.int64)
    value[t:] = 1
    return value, np.zeros(7, np.bool_)


def rout_faces(data: dict) -> tuple[np.ndarray, np.ndarray]:
    """§8 rout dice: 1-3 nothing, 4-5 one success, 6 two; never exploding."""
    rt = data["rout_test"]
    value = np.zeros(7, np.int64)
    value[rt["success_min"]:] = 1
    value[rt["double_on"]:] = 2
    return value, np.zeros(7, np.bool_)


def cancel_faces(data: dict) -> tuple[np.ndarray, np.ndarray]:
    """§11 AA vs rockets / CC vs torpedoes: a 5 cancels 1 hit, a 6 cancels 2; never exploding."""
    value = np.zeros(7, np.int64)
    value[5] = data["defense_cancel"]["five"]
    value[6] = data["defense_cancel"]["six"]
    return value, np.zeros(7, np.bool_)



# ---------------------------------------------------------------------------------------------
# AD (spec 0.5, 0.6)
# ---------------------------------------------------------------------------------------------

def degrade(ad: int, hp_lost: int, weapon: str) -> int:
    """§11 Damage to AD: gunnery loses 1 AD per HP lost, never below 1; AD 0 stays 0;
    rockets, torpedoes, bombs and mines are not reduced."""
    if ad <= 0:
        return 0
    return max(1, ad - hp_lost) if weapon in DEGRADING else ad


def degrade_aux(v: int, hp_lost: int) -> int:
    """AA and CC lose 1 per HP lost, never below 1 (0 stays 0)."""
    return 0 if v <= 0 else max(1, v - hp_lost)


def half_ad(ad: int) -> int:
    """§11 linked fire: each extra model adds half its AD rounded down; an AD of 1 stays 1."""
    return 1 if ad == 1 else ad // 2


def linked_ad(ads: list[int], models: list[int], rule: str) -> int:
    """AD of a linked attack (spec 0.6): the lead (largest AD, lowest index on ties) adds its
    full AD, every other weapon half; with ``own_weapons_link: full`` one model's weapons are
    first summed in full and the other models add half of their sums."""
    lead = min(range(len(ads)), key=lambda i: (-ads[i], i))
    if rule == "full":
        per_model: dict[int, int] = {}
        for a, m in zip(ads, models):
            per_model[m] = per_model.get(m, 0) + a
        lm = models[lead]
        return per_model[lm] + sum(half_ad(v) for m, v in per_model.items() if m != lm)
    return ads[lead] + sum(half_ad(a) for i, a in enumerate(ads) if i != lead)


# ---------------------------------------------------------------------------------------------
# legality and to-hit (spec 0.7, 0.8)
# ---------------------------------------------------------------------------------------------

def illegal_reason(weapon: str, band: int, attacker_state: str, target_size: str, target_state: str,
                   rules: dict) -> str | None:
    """Why an attack is illegal (spec 0.7 L1-L8), or None when it is legal."""
    ts, a = target_state, attacker_state
    if target_size == "tiny":
        return "ordnance and mines cannot target tiny models (§11)"
    if a == "submerged":
        if weapon != "torpedo":
            return "a submerged model attacks only with torpedoes (§11)"
        if ts in AIR:
            return "a submerged model cannot attack flyers (§9)"
    if weapon != "mine":
        if a == "obscured" and ts == "submerged":
            return "an obscured model cannot fire at a submerged one (§11)"
        if a in ("surface", "diving") and ts == "submerged":
            if rules["surface_vs_submerged"] == "forbidden_rb1" and band == 1:
                return ("a surface model cannot fire at a submerged one in RB1 "
                        "(rules.surface_vs_submerged=forbidden_rb1, Amb 2)")
            if rules["surface_vs_submerged"] == "only_rb1" and band != 1:
                return ("a surface model fires at a submerged one only in RB1 "
                        "(rules.surface_vs_submerged=only_rb1, Amb 2)")
        if a in ("surface", "diving") and ts in AIR and band == 1:
            return "a surface model cannot fire at a flyer in RB1 (§11; it uses AA)"
    if weapon == "torpedo" and ts in AIR:
        return "torpedoes cannot affect flyers or obscured models (§11)"
    if weapon == "bomb" and a not in AIR:
        return "bombs are dropped by flyers only (§11)"
    if weapon in ("bomb", "mine") and ts in AIR and target_size not in ("large", "massive"):
        return "bombs and mines hit only large or massive flyers (§11)"
    return None


def to_hit_number(weapon: str, band: int, capital: bool, attacker_state: str, target_size: str,
                  target_state: str, fast: bool, elusive: bool, rules: dict, data: dict) -> int:
    """Final to-hit number (spec 0.8 T1-T4): the hardest set number wins (§1), primaries
    improve by one in RB1 (§11, Amb 3), never better than 2+."""
    th = data["to_hit"]
    ts = target_state
    if ts == "surface":
        s = th["vs_surface"]
    elif ts == "flying":
        s = th["vs_flying"]
    elif ts == "diving":
        s = th["vs_diving_surfaced"]
    elif ts == "submerged":
        # one mine roll's hits apply to every model under the template "sia in superficie che
        # immersi" (§11 mines): under same_roll a mine rolls as against the surface
        same_roll = rules.get("mine_vs_submerged", OPTIONS["mine_vs_submerged"].default) == "same_roll"
        s = th["vs_surface"] if weapon == "mine" and same_roll else th["vs_submerged"]
    else:
        s = th["vs_obscured"]
        if rules["obscured_to_hit"] == "size_based" and target_size in ("medium", "large", "massive"):
            s = th["vs_obscured_size_based"]
    other = []
    if weapon != "mine":
        if attacker_state == "obscured":
            other.append(th["obscured_attacker"])
        if weapon in SMALL_RULE_WEAPONS:
            if capital and target_size == "small":
                other.append(th["small_target_capital"])
            scope = capital or rules["fast_elusive_scope"] == "all"
            if scope and fast:
                other.append(th["fast_target"])
            if scope and elusive:
                other.append(th["elusive_target"])
    if weapon in ("bomb", "mine") and ts in AIR:
        other.append(th["bomb_or_mine_vs_large_flyer"])
    if weapon == "primary" and band == 1:
        m = th["primary_rb1_modifier"]
        if rules["primary_rb1_vs_set_number"] == "improve":
            t = max([s] + other) + m
        else:
            t = max([s + m] + other)
    else:
        t = max([s] + other)
    return max(t, 2)


# ---------------------------------------------------------------------------------------------
# exact distributions (spec 0.3, 0.4) on analyzer.core.exact
# ---------------------------------------------------------------------------------------------

def hits_distribution(n: int, faces: tuple[np.ndarray, np.ndarray], n_defense: int = 0,
                      cancel: tuple[np.ndarray, np.ndarray] = CANCEL_TABLE) -> exact.Distribution:
    """Exact hits of an ``n``-die pool net of ``n_defense`` cancelling AA/CC dice."""
    d = exact.pool(n, *faces)
    if n_defense > 0:
        d = exact.net_of_cancellations(d, exact.pool(n_defense, *cancel))
    return d


def critical_powers(crit_values: np.ndarray, crit_weights: np.ndarray, k_max: int) -> list[np.ndarray]:
    """pmfs of the HP damage of 0..k_max critical rolls (k-fold convolutions of one roll)."""
    one = np.zeros(int(crit_values.max()) + 1)
    np.add.at(one, crit_values, crit_weights / crit_weights.sum())
    out = [np.ones(1)]
    for _ in range(k_max):
        out.append(np.convolve(out[-1], one))
    return out


def damage_distribution(hits: np.ndarray, dr: int, cr: int, hp: int, hp_lost: int, crits_allowed: bool,
                        small_hp_rule: str, crit_values: np.ndarray, crit_weights: np.ndarray) -> np.ndarray:
    """Exact HP-damage pmf of one attack from its hits pmf (spec 0.4, §11).

    hits >= CR (crits allowed): floor(hits / CR) critical rolls, or the <= 2 HP rule;
    else hits >= DR: 1 HP; else 0. DR and CR never combine.
    """
    h = np.arange(hits.shape[0])
    if not crits_allowed:
        return np.array([hits[h < dr].sum(), hits[h >= dr].sum()])
    out = np.zeros(max(2, hp + 1))
    out[0] += hits[h < min(dr, cr)].sum()
    out[1] += hits[(h >= dr) & (h < cr)].sum()
    crit_mass = hits[h >= cr]
    if crit_mass.sum() == 0:
        return out
    if small_hp_rule != "off" and hp <= 2:
        d = 2 if small_hp_rule == "two_damage" else hp - hp_lost
        out = np.pad(out, (0, max(0, d + 1 - out.shape[0])))
        out[d] += crit_mass.sum()
        return out
    k = h[h >= cr] // cr
    pk = np.bincount(k, weights=crit_mass)
    powers = critical_powers(crit_values, crit_weights, int(k.max()))
    size = max(out.shape[0], max(p.shape[0] for p in powers))
    out = np.pad(out, (0, size - out.shape[0]))
    for kk in range(1, pk.shape[0]):
        if pk[kk] > 0:
            out[: powers[kk].shape[0]] += pk[kk] * powers[kk]
    return out
