"""Slow, obviously-correct pure-Python reference for Breaking News (issue 13).

Written from docs/models/breaking_news.md (and the Spanish source it quotes), separately from
the production code: nothing is imported from ``analyzer`` or ``kernels``. Randomness comes only
from ``random.Random(seed)``. The data are the YAML files of ``scenarios/breaking_news/data``,
whose ``{ph: ..}`` wrappers are stripped here.

Entry points: ``load_data``, ``needed_and_dice`` (to-hit), ``exact_shot`` (Fractions),
``morale_pass_probability``, ``melee_odds``, ``building_casualties_enumerated``, ``list_cost`` and
``simulate(question, params, rules, data, trials, seed)`` for every question (per-trial lists of
each metric).
"""
from __future__ import annotations

import itertools
import os
import random
from fractions import Fraction

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
# the shipped data: the installed package's copy (analyzer/scenarios) or the repository's scenarios/
SHIPPED = os.path.join(HERE, "..", "..", "scenarios")
if not os.path.isdir(SHIPPED):
    SHIPPED = os.path.join(HERE, "..", "..", "..", "scenarios")
DATA_DIR = os.path.join(SHIPPED, "breaking_news", "data")

DEFAULT_RULES = {
    "burst_overflow": "per_point_over_6", "burst_weapons": "multi_die", "aimed_over_6": "no_hit",
    "natural_1_to_hit": "miss", "save_bonus": "max_single", "morale_casualties": "this_turn",
    "shock_recovery": "pass_clears", "initiative_ties": "reroll", "trained_points": "list",
    "irregular_veteran_points": "list", "melee_group": "one_die_sum_modifiers", "melee_ties": "reroll",
    "cover_fire_hits": "per_covering_figure", "building_saves": "per_figure", "building_save_cover": "none",
    "heavy_at_vs_men": "barred", "poor_troops_weapons": "light_arms", "support_after_move": "not_moved_only",
    "shocked_in_cover": "hidden", "movement_reaction": "resolved_first",
}
QUESTIONS = ("shot", "morale", "melee", "building_assault", "cover_fire", "firefight", "points_efficiency")
FIREFIGHT_METRICS = ("p_win_a", "p_win_b", "p_draw", "turns", "casualties_a", "casualties_b", "dp_a", "dp_b",
                     "p_turn_limit")


# ----------------------------------------------------------------------------- data
def _strip(node):
    if isinstance(node, dict):
        if "ph" in node and set(node) <= {"ph", "note"}:
            return _strip(node["ph"])
        if "ex" in node and set(node) <= {"ex", "note", "establishes"}:
            return _strip(node["ex"])
        return {key: _strip(val) for key, val in node.items()}
    if isinstance(node, list):
        return [_strip(val) for val in node]
    return node


def load_data(folder=None) -> dict:
    """Every top-level key of the four data files, wrappers stripped."""
    folder = folder or DATA_DIR
    merged = {}
    for name in ("troops", "weapons", "game", "armies"):
        with open(os.path.join(folder, name + ".yaml"), encoding="utf-8") as fh:
            merged.update(yaml.safe_load(fh))
    return _strip(merged)


def all_rules(rules=None) -> dict:
    out = dict(DEFAULT_RULES)
    out.update(rules or {})
    return out


# ----------------------------------------------------------------------------- shooting (§8)
def column(data, range_cm):
    """Which 'up to' column of the shooting table a range falls in (None beyond the last)."""
    for idx, edge in enumerate(data["range_bands_cm"]):
        if range_cm <= edge:
            return idx
    return None


#: §7 "El disparo de cañón de carros de combate o de armas antitanque pesadas (Milán) no puede realizarse
#: a figuras"
HEAVY_AT = ("milan", "tank_gun")


def needed_and_dice(data, rules, weapon, mode, range_cm, quality, moved=False, sf=None, cover=False,
                    dodge=False, target_sniper=False, crew=None, fixed=False, cautious=False):
    """(needed, dice) of one figure's fire; dice 0 when it cannot fire or cannot hit. ``moved``: the
    shooter moved more than 5 cm (at most 15); ``cautious``: it moved more than 0 and at most 5 cm."""
    rules = all_rules(rules)
    wpn = data["weapons"][weapon]
    if mode is None:
        mode = list(wpn["modes"])[0]
    row = wpn["modes"][mode]
    col = column(data, range_cm)
    if col is None or row["needed"][col] is None:
        return 7, 0
    if wpn.get("max_cm") is not None and range_cm > wpn["max_cm"]:
        return 7, 0
    if wpn.get("min_cm") is not None and range_cm < wpn["min_cm"]:
        return 7, 0
    if moved and wpn["after_move"] != "light":          # §6.1: only light arms after a 5-15 cm move
        return 7, 0
    if (cautious and not moved and wpn["after_move"] == "static"
            and rules["support_after_move"] == "not_moved_only"):   # §6.1 "sólo ... si no se han movido"
        return 7, 0
    if weapon in HEAVY_AT and rules["heavy_at_vs_men"] == "barred":
        return 7, 0
    table_value = row["needed"][col]
    n = row["dice"]
    if rules["burst_weapons"] == "ar_burst_only":
        burst = (weapon, mode) == ("assault_rifle", "burst")
    else:
        burst = n >= 2
    is_sf = quality == "special_forces" if sf is None else sf
    plus = 0        # count of +1 modifiers
    plus += 1 if moved else 0
    plus += 1 if (cover and wpn["cover_applies"]) else 0
    # §8 "+1 si un recluta, fanático o milicia dispara (sólo pequeñas armas, no granadas, RPG´s...)"
    if rules["poor_troops_weapons"] == "light_arms":
        poor_applies = wpn["small_arm"] and wpn["after_move"] == "light"
    else:
        poor_applies = wpn["small_arm"]
    aimed = data["troop_qualities"][quality]["aimed_fire"]
    plus += aimed if (poor_applies and aimed > 0) else 0
    plus += 1 if (dodge and wpn["dodge_applies"]) else 0
    plus += 1 if target_sniper else 0
    plus += 1 if (wpn.get("crew_served") and crew == 1 and not fixed) else 0
    minus = 1 if (is_sf and not burst) else 0
    target = table_value + plus - minus
    if target > 6:
        if burst:
            if rules["burst_overflow"] == "per_point_over_6":
                n -= target - 6
                target = 6
            else:
                n -= plus
                target = table_value - minus
            if n <= 0:
                return 7, 0
        elif rules["aimed_over_6"] == "no_hit":
            return 7, 0
        else:
            target = 6
    if target < 2:
        target = 1 if rules["natural_1_to_hit"] == "hit" else 2
    return target, n


def save_on(data, rules, quality, leader=False, cover=False):
    """Lowest natural die that saves (a 1 always dies)."""
    rules = all_rules(rules)
    bonus_list = [b for b, on in ((1, leader), (1, cover)) if on]
    if rules["save_bonus"] == "sum":
        bonus = sum(bonus_list)
    else:
        bonus = max(bonus_list, default=0)
    return max(2, data["troop_qualities"][quality]["save"] - bonus)


def _shot_setup(data, rules, params):
    sh, tg = params["shooter"], params["target"]
    needed, dice = needed_and_dice(data, rules, params["weapon"], params.get("mode"), params["range_cm"],
                                   sh["quality"], moved=sh.get("moved", False), sf=sh.get("sf"),
                                   cover=tg.get("cover", False), dodge=tg.get("dodge", False),
                                   target_sniper=tg.get("sniper", False), crew=params.get("crew"),
                                   fixed=params.get("fixed", False))
    dice *= params.get("shooters", 1)
    face = save_on(data, rules, tg["quality"], tg.get("leader", False), tg.get("cover", False))
    # §6.5: with no cover within 5 cm the dodging figure "puede tirarse al suelo, pero se encontrará,
    # automáticamente, conmocionada"; sniper fire cannot be dodged; no die rolled, no shot to dodge
    prone = (tg.get("dodge", False) and not tg.get("cover", False)
             and data["weapons"][params["weapon"]]["dodge_applies"] and dice > 0)
    return needed, dice, face, prone


def exact_shot(params, rules=None, data=None) -> dict:
    """{metric: {value: Fraction}} by enumerating every die as hit / miss (2**dice patterns)."""
    data = data or load_data()
    needed, dice, face, prone = _shot_setup(data, rules, params)
    p_hit = Fraction(max(0, 7 - needed), 6) if dice else Fraction(0)
    p_keep = Fraction(7 - face, 6)
    hits_d, cas_d, shock_d = {}, {0: Fraction(0), 1: Fraction(0)}, {0: Fraction(0), 1: Fraction(0)}
    for pattern in itertools.product((True, False), repeat=dice):
        h = pattern.count(True)
        p = p_hit ** h * (1 - p_hit) ** (dice - h)
        hits_d[h] = hits_d.get(h, 0) + p
        lives = p_keep ** h
        cas_d[1] += p * (1 - lives)
        cas_d[0] += p * lives
        # shocked: alive after >= 1 hit, or alive after throwing itself down (§10)
        shock_d[1] += p * lives if (h or prone) else 0
        shock_d[0] += p * (1 - lives) if (h or prone) else p
    return {"target_number": {needed if dice else 7: Fraction(1)}, "dice": {dice: Fraction(1)},
            "hits": hits_d, "casualties": cas_d, "shocked": shock_d}


def _simulate_shot(params, rules, data, trials, rng):
    needed, dice, face, prone = _shot_setup(data, rules, params)
    out = {m: [] for m in ("target_number", "dice", "hits", "casualties", "shocked")}
    for _ in range(trials):
        h = sum(1 for _ in range(dice) if rng.randint(1, 6) >= needed)
        dead = any(rng.randint(1, 6) < face for _ in range(h))
        out["target_number"].append(needed if dice else 7)
        out["dice"].append(dice)
        out["hits"].append(h)
        out["casualties"].append(int(dead))
        out["shocked"].append(int((h > 0 or prone) and not dead))
    return out


# ----------------------------------------------------------------------------- morale (§12) and melee (§11)
def morale_pass_probability(dice, casualties, half_losses=False) -> Fraction:
    if casualties < 1:
        return Fraction(1)
    good = 0
    for faces in itertools.product(range(1, 7), repeat=dice):
        if any(f >= casualties for f in faces) or (not half_losses and 6 in faces):
            good += 1
    return Fraction(good, 6 ** dice)


def melee_odds(attackers, defender, group="one_die_sum_modifiers", ties="reroll", shocked_mod=-2):
    """(P attackers win, P defender wins, P no result); fighters are (melee value, shocked)."""
    def own(m, s):
        return m + (shocked_mod if s else 0)
    outcomes = [0, 0, 0]
    n_dice = 1 if group == "one_die_sum_modifiers" else len(attackers)
    for faces in itertools.product(range(1, 7), repeat=n_dice + 1):
        if group == "one_die_sum_modifiers":
            att = faces[0] + sum(own(m, s) for m, s in attackers)
        elif group == "one_die_each_summed":   # §11 "tirando 1D6 por cada figura combatiente": all summed
            att = sum(f + own(m, s) for f, (m, s) in zip(faces, attackers))
        else:
            att = max(f + own(m, s) for f, (m, s) in zip(faces, attackers))
        dfd = faces[-1] + own(*defender)
        outcomes[0 if att > dfd else 1 if dfd > att else 2] += 1
    total = sum(outcomes)
    w, l_, t = (Fraction(x, total) for x in outcomes)
    if ties == "reroll":
        return w / (w + l_), l_ / (w + l_), Fraction(0)
    return w, l_, t


# ----------------------------------------------------------------------------- points
def list_cost(data, rules, name) -> int:
    """Total points of a scenario list (lines + extras)."""
    rules = all_rules(rules)
    sl = data["scenario_lists"][name]
    troops = data["troop_qualities"]

    def man(q):
        if q == "trained" and rules["trained_points"] == "table":
            return troops[q]["points_table"]
        if q == "commando" and rules["irregular_veteran_points"] == "table":
            return troops[q]["points_table"]
        return troops[q]["points_list"]
    total = 0
    for line in sl["lines"]:
        kit = sum(data["weapons"][w]["points"] for w in line["weapons"])
        if "crew" in line:
            veh = data["vehicles"][line["vehicle"]] if line.get("vehicle") else 0
            total += line["n"] * (line["crew"] * man(sl["quality"]) + kit + veh)
        else:
            lead = data["game"]["leadership_points"][line["leadership"] - 1] if line.get("leadership") else 0
            total += line["n"] * (man(line.get("quality", sl["quality"])) + lead + kit)
    for ex in sl.get("extras", []):
        total += ex.get("count", 1) * data["extras"][ex["extra"]]
    return total


# ----------------------------------------------------------------------------- firefight (spec §6)
class Man:
    def __init__(self, quality, kit, leadership, is_leader, section_leader=False):
        self.quality = quality
        self.kit = list(kit)
        self.leadership = leadership
        self.is_leader = is_leader            # the team leader: counts 2 for morale, 10 DP if irregular
        self.section_leader = section_leader  # §9 save +1 like the team leader, nothing else
        self.is_sniper = "sniper_rifle" in kit
        self.up = True
        self.shaken = False
        self.hits = 0
        self.hit_covered = False              # hit while counted in cover (§10, shocked in the open > 25 cm)


def _team(data, side):
    """(quality, men, ambush, motivation) of a side given as a scenario list or inline lines."""
    if side.get("list"):
        sl = data["scenario_lists"][side["list"]]
        q = sl["quality"]
        men = []
        for line in sl["lines"]:
            for _ in range(line["n"]):
                if "crew" in line:
                    if line["crew"] > 0:
                        men.append(Man(q, line["weapons"], 0, False))
                    men += [Man(q, ["assault_rifle"], 0, False) for _ in range(line["crew"] - 1)]
                else:
                    men.append(Man(line.get("quality", q), line["weapons"], line.get("leadership", 0),
                                   bool(line.get("leader")), line.get("role") == "section_leader"))
        extras = [e["extra"] for e in sl.get("extras", [])]
    else:
        q = side["quality"]
        men = [Man(line.get("quality") or q, line.get("weapons", ["assault_rifle"]), line.get("leadership", 0),
                   bool(line.get("leader", False)), bool(line.get("section_leader", False)))
               for line in side["figures"] for _ in range(line.get("n", 1))]
        extras = []
    if side.get("extras") is not None:
        extras = side["extras"]
    return q, men, "ambush" in extras, "motivation" in extras


def _choose(data, rules, man, rng_cm, fire_mode, opportunity, moved, enemy_cover, sniper_target, cautious=False):
    """(needed, dice, weapon, mode) of the kit's fire with the highest dice x P(hit); (7, 0, None,
    None) when none."""
    best_value, best = Fraction(-1), (7, 0, None, None)
    for w in man.kit:
        wpn = data["weapons"][w]
        if opportunity and (wpn["opportunity"] == "never" or (rng_cm > 50 and w != "sniper_rifle")):
            continue
        for mode in wpn["modes"]:
            if fire_mode != "best" and len(wpn["modes"]) > 1 and mode != fire_mode:
                continue
            need, n = needed_and_dice(data, rules, w, mode, rng_cm, man.quality, moved=moved,
                                      cover=enemy_cover, target_sniper=sniper_target, cautious=cautious)
            value = n * Fraction(max(0, 7 - need), 6)
            if n > 0 and value > best_value:
                best_value, best = value, (need, n, w, mode)
    return best


def _loss_dp(data, man):
    dp = data["game"]["defeat_points"]
    if man.quality == "special_forces":
        return dp["special_forces_lost"]
    if data["troop_qualities"][man.quality]["regular"]:
        return dp["regular_lost"]
    return dp["irregular_leader_lost"] if man.is_leader else dp["irregular_lost"]


def range_steps(sched):
    """Spec §6 Space: [r_0, ..., r_J], r_j = max(min_cm, start_cm - closing_cm * j), r_J = min_cm
    (only r_0 when closing_cm is 0 or the start is already at or inside min_cm)."""
    start, closing, closest = sched.get("start_cm", 40), sched.get("closing_cm", 0), sched.get("min_cm", 5)
    steps = [start]
    if closing and closing > 0:
        while steps[-1] > closest:
            steps.append(max(closest, start - closing * len(steps)))
    return steps


def _firefight_game(params, rules, data, rng):
    """One game of spec §6 (a closing-move range schedule, one fire group per activation, opportunity
    fire resolved first against a move, shocked figures in cover hidden)."""
    g = data["game"]
    turn_limit = params.get("turn_limit") or g["turn_limit"]
    sched = params.get("range") or {}
    steps = range_steps(sched)
    advancing = sched.get("advancing")
    advances = [advancing in ("side_a", "both"), advancing in ("side_b", "both")]
    fire_mode = params.get("fire_mode", "best")
    sides = [params["side_a"], params["side_b"]]
    teams = [_team(data, s) for s in sides]
    covered = [bool(s.get("cover", False)) for s in sides]
    men = [t[1] for t in teams]
    initial = [len(m) for m in men]
    quality = [t[0] for t in teams]
    bonus_init = [data["troop_qualities"][q]["initiative_morale"] for q in quality]
    motivated = [t[3] for t in teams]
    dp = [0, 0]
    losses = [0, 0]
    leader_gone = [False, False]
    streak = [0, 0]
    last = None
    first_shot_done = False
    over = False
    turn = 0
    j = 0

    def top_leadership(s):
        return max([m.leadership for m in men[s] if m.up], default=0)

    while turn < turn_limit and not over:
        # 1. initiative
        winner = None
        for _ in range(g["max_initiative_rolls"] if rules["initiative_ties"] == "reroll" else 1):
            rolls = []
            for s in (0, 1):
                r = rng.randint(1, 6) + rng.randint(1, 6) + top_leadership(s) + bonus_init[s] - streak[s]
                if turn == 0 and teams[s][2]:
                    r += 1
                rolls.append(r)
            if rolls[0] != rolls[1]:
                winner = 0 if rolls[0] > rolls[1] else 1
                break
            if rules["initiative_ties"] != "reroll":
                winner = last if last is not None else 0
                break
        if winner is None:
            winner = 0
        streak[winner] = streak[winner] + 1 if last == winner else 1
        streak[1 - winner] = 0
        last = winner
        act, rea = winner, 1 - winner
        # 2. shock tests of the active team -> the acting figures
        lead = top_leadership(act) if g["leader_within_5cm"] else 0
        acting = []
        for m in men[act]:
            if not m.up:
                continue
            if m.shaken:
                roll = rng.randint(1, 6)
                if roll == g["shock_always_fails_on"] or roll > data["troop_qualities"][m.quality]["shock"] + lead:
                    continue
                if rules["shock_recovery"] == "pass_clears":
                    m.shaken = False
            acting.append(m)
        # 3. closing move
        moved_cm = 0
        if advances[act] and acting and j < len(steps) - 1:
            moved_cm = steps[j] - steps[j + 1]
            j += 1
        here = steps[j]
        run = moved_cm > 15
        moved = 5 < moved_cm <= 15
        cautious = 0 < moved_cm <= 5
        dice_thrown = [0, 0]

        # 4. targets
        def active_targets():
            """[(figure, counted in cover)] the active team may fire at: the standing reactive figures,
            a shocked one hidden (team in cover) or counted in cover (open, range > 25 cm) under
            shocked_in_cover: hidden."""
            out = []
            for m in men[rea]:
                if not m.up:
                    continue
                if m.shaken and rules["shocked_in_cover"] == "hidden":
                    if covered[rea]:
                        continue
                    out.append((m, here > 25))
                else:
                    out.append((m, False))
            return out

        def volley(shooters, targets, side, opportunity):
            """Each shooter fires at a uniform valid target; hits accumulate on the targets."""
            for m in shooters:
                if not targets:
                    return
                victim, counted = targets[rng.randrange(len(targets))]
                cover = covered[1 - side] or counted
                if opportunity:
                    need, n, _, _ = _choose(data, rules, m, here, fire_mode, True, False, cover, victim.is_sniper)
                else:
                    need, n, _, _ = _choose(data, rules, m, here, fire_mode, False, moved, cover, victim.is_sniper,
                                            cautious=cautious)
                if n:
                    dice_thrown[side] += n
                    h = sum(1 for _ in range(n) if rng.randint(1, 6) >= need)
                    victim.hits += h
                    if h and counted:
                        victim.hit_covered = True

        fallen = [0, 0]
        leader_fell = [False, False]

        def resolve(s):
            """6. saves (one per hit, the first failure removes) and shock of side s's hit figures."""
            for m in men[s]:
                if not m.up or not m.hits:
                    m.hits, m.hit_covered = 0, False
                    continue
                face = save_on(data, rules, m.quality, leader=m.is_leader or m.section_leader,
                               cover=covered[s] or m.hit_covered)
                ok = True
                for _ in range(m.hits):
                    if rng.randint(1, 6) < face:
                        ok = False
                        break
                m.hits, m.hit_covered = 0, False
                if ok:
                    m.shaken = True
                else:
                    m.up = False
                    m.shaken = False
                    fallen[s] += 1
                    dp[s] += _loss_dp(data, m)
                    leader_fell[s] = leader_fell[s] or m.is_leader

        def fired_first(side):
            nonlocal first_shot_done
            if not first_shot_done and dice_thrown[side]:
                first_shot_done = True
                dp[side] += g["defeat_points"]["fired_first"]

        # 5. fire
        reactors = [m for m in men[rea] if m.up and not m.shaken] if acting else []
        if moved_cm > 0 and rules["movement_reaction"] == "resolved_first":
            volley(reactors, [(m, False) for m in acting], rea, True)
            fired_first(rea)
            hit = {id(m) for m in acting if m.hits}
            resolve(act)
            left = [m for m in acting if m.up and id(m) not in hit]
            if not run:
                volley(left, active_targets(), act, False)
            fired_first(act)
            resolve(rea)
        else:
            targets_a = active_targets()
            targets_r = [(m, False) for m in acting]
            if not run:
                volley(acting, targets_a, act, False)
            volley(reactors, targets_r, rea, True)
            fired_first(act)
            fired_first(rea)
            resolve(0)
            resolve(1)
        for s in (0, 1):
            losses[s] += fallen[s]
            leader_gone[s] = leader_gone[s] or leader_fell[s]
        # 7. morale
        broke = [False, False]
        for s in (0, 1):
            if not fallen[s]:
                continue
            extra = g["leader_loss_casualties"] - 1
            if rules["morale_casualties"] == "cumulative":
                count = losses[s] + (extra if leader_gone[s] else 0)
            else:
                count = fallen[s] + (extra if leader_fell[s] else 0)
            dice = [rng.randint(1, 6) for _ in range(bonus_init[s])]
            half = 2 * losses[s] >= initial[s]
            passed = any(d >= count for d in dice) or (not half and 6 in dice)
            if not passed:
                if motivated[s]:
                    motivated[s] = False
                else:
                    broke[s] = True
        for s in (0, 1):
            if broke[s]:
                if dp[s] > dp[1 - s]:
                    dp[s] += g["defeat_points"]["withdrawal"]
                    over = True
                else:
                    for m in men[s]:
                        if m.up:
                            m.shaken = True
        if losses[0] == initial[0] or losses[1] == initial[1]:
            over = True
        turn += 1
    return {"p_win_a": int(dp[0] < dp[1]), "p_win_b": int(dp[1] < dp[0]), "p_draw": int(dp[0] == dp[1]),
            "turns": turn, "casualties_a": losses[0], "casualties_b": losses[1], "dp_a": dp[0], "dp_b": dp[1],
            "p_turn_limit": int(not over)}


def _simulate_morale(params, rules, data, trials, rng):
    dice = params.get("morale_dice") or data["troop_qualities"][params["quality"]]["initiative_morale"]
    dice += params.get("teams_under_half", 0)
    count = params["casualties"] + ((data["game"]["leader_loss_casualties"] - 1) if params.get("leader_lost") else 0)
    half = params.get("half_losses", False)
    out = {"p_pass": [], "p_fail": []}
    for _ in range(trials):
        faces = [rng.randint(1, 6) for _ in range(dice)]
        ok = count < 1 or any(f >= count for f in faces) or (not half and 6 in faces)
        out["p_pass"].append(int(ok))
        out["p_fail"].append(int(not ok))
    return out


def _simulate_melee(params, rules, data, trials, rng):
    melee = {q: v["melee"] for q, v in data["troop_qualities"].items()}
    mod = data["game"]["melee_shocked_modifier"]
    att = [(melee[a["quality"]], a.get("shocked", False)) for a in params["attackers"]]
    dfd = (melee[params["defender"]["quality"]], params["defender"].get("shocked", False))
    out = {"p_attacker_wins": [], "p_defender_wins": [], "p_no_result": []}
    for _ in range(trials):
        result = 2
        for _ in range(1000):
            if rules["melee_group"] == "one_die_sum_modifiers":
                a = rng.randint(1, 6) + sum(m + (mod if sh else 0) for m, sh in att)
            elif rules["melee_group"] == "one_die_each_summed":
                a = sum(rng.randint(1, 6) + m + (mod if sh else 0) for m, sh in att)
            else:
                a = max(rng.randint(1, 6) + m + (mod if sh else 0) for m, sh in att)
            d = rng.randint(1, 6) + dfd[0] + (mod if dfd[1] else 0)
            if a != d:
                result = 0 if a > d else 1
                break
            if rules["melee_ties"] != "reroll":
                break
        for k, name in enumerate(("p_attacker_wins", "p_defender_wins", "p_no_result")):
            out[name].append(int(result == k))
    return out


def _building_faces(data, rules, params):
    """(attacker save face, defender save face) in a building (§11.1 + §9; option building_save_cover)."""
    return (save_on(data, rules, params["attacker_quality"]),
            save_on(data, rules, params["defender_quality"], cover=rules["building_save_cover"] == "defenders"))


def _removed(rng, hits, figures, face, pooled):
    """Figures removed by ``hits`` saves: pooled, one per failed save (at most all); else the hits go
    round the figures one at a time (hit k to figure k mod figures, so each takes one before any takes
    a second) and each figure rolls its saves until one fails."""
    if pooled:
        return min(figures, sum(rng.randint(1, 6) < face for _ in range(hits)))
    saves = [0] * figures
    for k in range(hits):
        saves[k % figures] += 1
    return sum(any(rng.randint(1, 6) < face for _ in range(n)) for n in saves)


def _simulate_building(params, rules, data, trials, rng):
    melee = {q: v["melee"] for q, v in data["troop_qualities"].items()}
    g = data["game"]
    n_att = params["attackers"] * melee[params["attacker_quality"]]
    n_def = params["defenders"] * melee[params["defender_quality"]]
    att_face, def_face = _building_faces(data, rules, params)
    pooled = rules["building_saves"] == "pooled"
    out = {"attacker_hits": [], "defender_hits": [], "attacker_casualties": [], "defender_casualties": []}
    for _ in range(trials):
        a_hits = sum(rng.randint(1, 6) >= g["building_attacker_hits_on"] for _ in range(n_att))
        d_hits = sum(rng.randint(1, 6) >= g["building_defender_hits_on"] for _ in range(n_def))
        out["attacker_hits"].append(a_hits)
        out["defender_hits"].append(d_hits)
        out["attacker_casualties"].append(_removed(rng, d_hits, params["attackers"], att_face, pooled))
        out["defender_casualties"].append(_removed(rng, a_hits, params["defenders"], def_face, pooled))
    return out


def building_casualties_enumerated(dice, hit_face, figures, save_face, pooled=False) -> dict:
    """{casualties: Fraction} of ``figures`` figures under ``dice`` dice hitting on ``hit_face``,
    by enumerating every hit die as hit / miss and every save die's face (small cases only)."""
    p_hit = Fraction(7 - hit_face, 6)
    out = {}
    for pattern in itertools.product((True, False), repeat=dice):
        h = pattern.count(True)
        p = p_hit ** h * (1 - p_hit) ** (dice - h)
        for faces in itertools.product(range(1, 7), repeat=h):
            failed = [f < save_face for f in faces]
            if pooled:
                c = min(figures, sum(failed))
            else:   # save k belongs to figure k mod figures
                c = len({k % figures for k, bad in enumerate(failed) if bad})
            out[c] = out.get(c, 0) + p / 6 ** h
    return out


def cover_value(data, shooters, quality):
    """§8.6: Σ table values at each shooter's range + the group's troop modifier, capped."""
    value = data["troop_qualities"][quality]["cover_fire"]
    for sh in shooters:
        row = data["cover_fire"][sh["weapon"]]["values"]
        value += (row[0] if sh["range_cm"] <= data["cover_fire_bands_cm"][0] else row[1]) or 0
    return min(value, data["cover_fire_cap"])


def _simulate_cover_fire(params, rules, data, trials, rng):
    value = cover_value(data, params["shooters"], params["quality"])
    enemy = params["enemy"]
    n_test = data["game"]["cover_fire_test_dice_bunker" if enemy.get("bunker") else "cover_fire_test_dice"]
    n_hits = len(params["shooters"]) if rules["cover_fire_hits"] == "per_covering_figure" else 1
    face = save_on(data, rules, enemy["quality"], enemy.get("leader", False), enemy.get("cover", False))
    out = {"value": [], "p_hit": [], "hits": [], "casualties": [], "shocked": []}
    for _ in range(trials):
        hit = sum(rng.randint(1, 6) for _ in range(n_test)) <= value
        h = n_hits if hit else 0
        dead = any(rng.randint(1, 6) < face for _ in range(h))
        out["value"].append(value)
        out["p_hit"].append(int(hit))
        out["hits"].append(h)
        out["casualties"].append(int(dead))
        out["shocked"].append(int(h > 0 and not dead))
    return out


#: the spec's cap of a unit's life in points_efficiency (§7): at most 100 turns of trading volleys
POINTS_LIFE_TURNS = 100
POINTS_METRICS = ("casualties_per_turn", "casualties_per_100_points", "hits", "reconstructed_share",
                  "casualties_suffered_per_turn", "shocked_per_turn", "lifetime_turns", "lifetime_casualties",
                  "volleys_per_100_points", "lifetime_casualties_per_100_points")


def _simulate_points(params, rules, data, trials, rng):
    """Spec §7: each trial is one life of the unit. A turn: it fires (best weapon, not moved) at a random
    reference target and range; then a random reference attacker fires at it at a random range, the unit
    in the open or in cover at random; the life ends when it falls or after POINTS_LIFE_TURNS turns. The
    first turn gives the per-turn metrics."""
    unit = params["unit"]
    man = Man(unit["quality"], unit.get("weapons", ["assault_rifle"]), unit.get("leadership", 0),
              unit.get("leader", False))
    leader_bonus = unit.get("leader", False) or unit.get("section_leader", False)
    ranges = params.get("ranges_cm", [20, 40, 80])
    qualities = ("elite", "veteran", "trained", "commando", "fanatic", "militia")
    targets = params.get("targets") or [{"quality": q, "cover": c} for q in qualities for c in (False, True)]
    attackers = params.get("attackers") or [{"quality": q, "weapons": ["assault_rifle"]} for q in qualities]
    covers = params.get("unit_cover") or [False, True]
    troops = data["troop_qualities"]
    soldier = troops[unit["quality"]]["points_list"]
    if unit["quality"] == "trained" and rules["trained_points"] == "table":
        soldier = troops["trained"]["points_table"]
    if unit["quality"] == "commando" and rules["irregular_veteran_points"] == "table":
        soldier = troops["commando"]["points_table"]
    lead = data["game"]["leadership_points"][unit["leadership"] - 1] if unit.get("leadership") else 0
    cost = soldier + lead + sum(data["weapons"][w]["points"] for w in man.kit)
    combos = [(t, r) for t in targets for r in ranges]
    incoming = [(Man(a["quality"], a.get("weapons", ["assault_rifle"]), 0, False), c, r)
                for a in attackers for c in covers for r in ranges]

    def fire_at_target():
        t, r = combos[rng.randrange(len(combos))]
        need, n, w, mode = _choose(data, rules, man, r, "best", False, False, t.get("cover", False), False)
        shaky = bool(n) and data["weapons"][w]["modes"][mode]["confidence"][column(data, r)] in ("M", "L")
        h = sum(1 for _ in range(n) if rng.randint(1, 6) >= need)
        face = save_on(data, rules, t["quality"], False, t.get("cover", False))
        return h, any(rng.randint(1, 6) < face for _ in range(h)), shaky

    def fired_at():
        att, cover, r = incoming[rng.randrange(len(incoming))]
        need, n, _, _ = _choose(data, rules, att, r, "best", False, False, cover, man.is_sniper)
        h = sum(1 for _ in range(n) if rng.randint(1, 6) >= need)
        face = save_on(data, rules, unit["quality"], leader_bonus, cover)
        return h, any(rng.randint(1, 6) < face for _ in range(h))

    out = {m: [] for m in POINTS_METRICS}
    for _ in range(trials):
        h, dead, shaky = fire_at_target()
        taken, fell = fired_at()
        out["casualties_per_turn"].append(int(dead))
        out["casualties_per_100_points"].append(100 * int(dead) / cost)
        out["hits"].append(h)
        out["reconstructed_share"].append(int(shaky))
        out["casualties_suffered_per_turn"].append(int(fell))
        out["shocked_per_turn"].append(int(taken > 0 and not fell))
        kills, turns = int(dead), 1
        while not fell and turns < POINTS_LIFE_TURNS:
            turns += 1
            kills += int(fire_at_target()[1])
            fell = fired_at()[1]
        out["lifetime_turns"].append(turns)
        out["lifetime_casualties"].append(kills)
        out["volleys_per_100_points"].append(100 * turns / cost)
        out["lifetime_casualties_per_100_points"].append(100 * kills / cost)
    return out


def simulate(question, params, rules, data, trials, seed) -> dict:
    """Per-trial metric lists of ``trials`` trials of ``question`` (any of :data:`QUESTIONS`)."""
    rng = random.Random(seed)
    rules = all_rules(rules)
    data = data or load_data()
    simple = {"shot": _simulate_shot, "morale": _simulate_morale, "melee": _simulate_melee,
              "building_assault": _simulate_building, "points_efficiency": _simulate_points,
              "cover_fire": _simulate_cover_fire}
    if question in simple:
        return simple[question](params, rules, data, trials, rng)
    if question != "firefight":
        raise ValueError(f"unknown question {question!r}")
    out = {m: [] for m in FIREFIGHT_METRICS}
    for _ in range(trials):
        for key, val in _firefight_game(params, rules, data, rng).items():
            out[key].append(val)
    return out
