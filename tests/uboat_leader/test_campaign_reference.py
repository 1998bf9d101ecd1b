"""The campaign reference (analyzer/games/uboat_leader/reference_campaign.py) against the source's worked
examples, hand-derived probabilities and the campaign sheets' fields.

Spec: docs/models/uboat_leader_campaign.md (C§n). Scripted dice make the examples exact;
Monte-Carlo checks use a fixed seed and a 5-standard-error tolerance (tests/stat_checks.py).
"""
import copy
import math
import random
from math import comb

import pytest

from analyzer.games.uboat_leader import reference_campaign as C
from tests.stat_checks import assert_histogram_matches, assert_mean_matches

DATA = C._plain(None)
FLEET = [{"id": "U-43", "level": "trained"}, {"id": "U-47", "level": "trained"},
         {"id": "U-51", "level": "trained"}, {"id": "U-56", "level": "ace"}]
BASE = {"campaign": "comienza_la_batalla", "duration": "short", "fleet": FLEET}
ABSTRACT = {"contact_model": "abstract"}
#: the loadout bought at set-up (so_purchases b, the model before issue 27 item 4)
SETUP_ONLY = {"so_purchases": "setup_only"}


class Scripted(random.Random):
    """A generator whose d10 results are given in order (the examples' dice); fails loudly if
    the code rolls more dice than the example has."""

    def __init__(self, rolls, seed=0):
        super().__init__(seed)
        self.rolls = list(rolls)

    def randint(self, a, b):
        assert (a, b) == (1, 10), (a, b)
        assert self.rolls, "more dice rolled than scripted"
        return self.rolls.pop(0)


def event(name):
    return next(c for c in DATA["events"]["cards"] if c["name"] == name)


def campaign(params, rules=None, data=None, rolls=None, seed=0, stacked=None):
    rng = Scripted(rolls) if rolls is not None else random.Random(seed)
    return C.Campaign(params, rules, data or DATA, rng, stacked=stacked)


def boat(c, bid):
    return next(b for b in c.boats if b["id"] == bid)


def events_of(c, bid=None):
    return [t[3] for t in c.trace if t[2] == "event" and (bid is None or t[1] == bid)]


def one_turn_ops(c):
    c.turn = 1
    c.strategic()
    c.operations()


def mean_se(xs):
    n = len(xs)
    m = sum(xs) / n
    v = sum((x - m) ** 2 for x in xs) / (n - 1)
    return m, math.sqrt(v / n)


# ------------------------------------------------------------------ §3.3 SO purchase example (l.202)
def test_so_purchase_example_29_of_32_leaves_3():
    c = campaign(BASE)
    assert c.so_total == 32
    assert sum(b["cost"] for b in c.boats) == 29
    assert c.so == 3
    m = C.run_campaign(dict(BASE, policy={"so": "none"}), ABSTRACT, DATA, seed=1, plain=True)
    assert (m["so_left"], m["so_spent"]) == (3, 0)


def test_advanced_torpedoes_cost_half_so_each_and_budget_is_enforced():
    fleet = copy.deepcopy(FLEET)
    fleet[0]["advanced"] = {"fat": 2, "t5": 2}          # 4 x 1/2 SO (l.275)
    assert campaign(dict(BASE, fleet=fleet), SETUP_ONLY).so == 1
    c = campaign(dict(BASE, fleet=fleet))                # bought at the first Strategic Segment (l.238)
    assert c.so == 3
    c.turn = 1
    c.strategic()
    assert c.so == 1 and (c.boats[0]["fat"], c.boats[0]["t5"]) == (2, 2)  # 3 - 2; Intel (2) no longer affordable
    fleet[1]["advanced"] = {"fat": 4}                    # 2 more SO: 31 + 2 = 33 > 32
    with pytest.raises(ValueError, match="costs"):
        campaign(dict(BASE, fleet=fleet), SETUP_ONLY)


@pytest.mark.parametrize("fleet, msg", [
    ([{"id": "U-47"}, {"id": "U-47", "level": "veteran"}], "only once"),      # l.196-197
    ([], "at least one"),                                                     # l.195
    ([{"id": "U-47", "mines": 13}], "fit"),                                   # 12 torpedoes on the card
    ([{"id": "U-47", "ready": 5}], "within"),
    ([{"id": "U-47", "missions": ["mine"]}], "mines: n"),
])
def test_fleet_validation(fleet, msg):
    with pytest.raises(ValueError, match=msg):
        campaign(dict(BASE, fleet=fleet))


# ------------------------------------------------------------------ §4.2 U-51 / U-20 example (l.326-327)
def test_u51_moves_germany_north_sea_british_isles_western_approaches_one_event_each():
    p = dict(BASE, fleet=[{"id": "U-51"}], policy={"patrol": {"area": "Accesos Occidentales"}})
    c = campaign(p, stacked={"events": [event("Sin Novedad")] * 20})
    one_turn_ops(c)
    steps = [(t[2], t[3]) for t in c.trace if t[1] == "U-51"]
    assert steps == [("move", "Mar del Norte"), ("event", "Sin Novedad"),
                     ("move", "Islas Británicas"), ("event", "Sin Novedad"),
                     ("move", "Accesos Occidentales"), ("event", "Sin Novedad")]
    # under fewest_areas the tie with the Channel route is broken by the Event count: same path
    c2 = campaign(dict(p, policy={"patrol": {"area": "Accesos Occidentales"}, "route": "fewest_areas"}),
                  stacked={"events": [event("Sin Novedad")] * 20})
    one_turn_ops(c2)
    assert [t[3] for t in c2.trace if t[2] == "move"] == ["Mar del Norte", "Islas Británicas", "Accesos Occidentales"]


def test_u20_moves_to_the_british_isles_mission_box_drawing_events_on_the_way():
    p = dict(BASE, fleet=[{"id": "U-20", "level": "trained", "mines": 4}])
    c = campaign(p, stacked={"events": [event("Sin Novedad")] * 20})
    one_turn_ops(c)
    steps = [(t[2], t[3]) for t in c.trace if t[1] == "U-20" and t[2] != "so"]
    assert ("so", "mine") in [(t[2], t[3]) for t in c.trace if t[1] == "U-20"]  # bought in port (l.238, l.288)
    assert steps == [("move", "Mar del Norte"), ("event", "Sin Novedad"),
                     ("move", "Islas Británicas"), ("event", "Sin Novedad"),
                     ("box", "mine"), ("event", "Sin Novedad")]        # l.292: 1 card to enter the box
    assert c.m["mine_vp"] == 2 and boat(c, "U-20")["search"]             # ph row 4 mines -> 2 VP


def test_movement_events_are_drawn_one_per_movement_value():
    data = copy.deepcopy(DATA)
    data["campaign_maps"]["comienza_la_batalla"]["areas"][1]["move_events"] = 3   # Mar del Norte
    p = dict(BASE, fleet=[{"id": "U-51"}], policy={"patrol": {"area": "Mar del Norte"}})
    c = campaign(p, data=data, stacked={"events": [event("Sin Novedad")] * 20})
    one_turn_ops(c)
    assert len(events_of(c)) == 3
    c.turn = 2                                      # not moving: the Patrol value (ph 1)
    c.strategic()
    c.operations()
    assert len(events_of(c)) == 4


def test_english_channel_unfit_goes_to_previous_area_search_box_and_cannot_be_a_destination():
    data = copy.deepcopy(DATA)
    areas = data["campaign_maps"]["comienza_la_batalla"]["areas"]
    areas[2]["move_events"] = 1        # Channel
    areas[3]["move_events"] = 5        # British Isles: the Channel route is now cheaper
    p = dict(BASE, fleet=[{"id": "U-51"}], policy={"patrol": {"area": "Accesos Occidentales"},
                                                   "endurance": "aggressive"})
    c = campaign(p, data=data, stacked={"events": [event("Ataque Submarino Aliado")] * 20})
    b = boat(c, "U-51")
    b["stress"] = 9                    # Shaken; +2 in the Mar del Norte = 11, +2 in the Channel = 13 Unfit
    one_turn_ops(c)
    assert [t[3] for t in c.trace if t[2] == "move"] == ["Mar del Norte", "Canal Inglés"]
    assert c.map.names[b["area"]] == "Mar del Norte" and b["search"] and c.band(b) == "unfit"
    with pytest.raises(ValueError, match="not reachable"):
        c2 = campaign(dict(BASE, fleet=[{"id": "U-51"}], policy={"patrol": {"area": "Canal Inglés"}}))
        one_turn_ops(c2)


# ------------------------------------------------------------------ §4.5 U-47 Attack mission (l.307-309)
U47 = dict(BASE, fleet=[{"id": "U-47", "level": "veteran", "missions": ["attack"]}],
           policy={"mission": {"abort_band": "shaken", "salvo": 4, "keep_torpedoes": 7}})
U47_EVENTS = [event(n) for n in ("Mar Agitado", "Avión Enemigo", "Ataque Submarino Aliado", "Radio Interceptada")] \
    + [event("Sin Novedad")] * 10
# dice: Avión Enemigo roll 8 > EV 5 (+2); torpedoes at Royal Oak 3, 3, 3, 9 -> hit, damage 10 = sunk;
# the fifth torpedo 8 -> hit, damage 2 = Light Damage (no credit, l.306)
U47_DICE = [8, 3, 3, 3, 9, 10, 8, 2]


def test_u47_attack_mission_three_events_three_naval_cards_4_vp_3_xp():
    c = campaign(U47, rolls=list(U47_DICE), stacked={"events": U47_EVENTS,
                                                     "naval": ["Royal Oak", "Cumberland", "Sirius"]})
    one_turn_ops(c)
    b = boat(c, "U-47")
    assert events_of(c) == ["Mar Agitado", "Avión Enemigo", "Ataque Submarino Aliado", "Radio Interceptada"]
    assert [t[3] for t in c.trace if t[2] == "naval"] == [["Royal Oak", "Cumberland", "Sirius"]]
    assert b["stress"] == 5 and c.band(b) == "okay"          # "un total de 5 Puntos de Estrés"
    assert (c.m["attack_vp"], c.m["vp"], c.m["xp"], c.m["ships_sunk"]) == (4, 4, 3, 1)
    assert b["ready"] + b["stored"] == 12 - 5                 # 4 at Royal Oak + 1
    assert b["missions"] == [] and b["search"]
    assert b["contact_bonus"] == 1                           # Radio Interceptada (ph +1 contact)


def test_u47_box_plus_move_reading_draws_the_area_movement_value_as_well():
    c = campaign(U47, {"mission_box_events": "box_plus_move"}, rolls=[8] + U47_DICE,
                 stacked={"events": [event("Sin Novedad")] * 2 + U47_EVENTS[1:],
                          "naval": ["Royal Oak", "Cumberland", "Sirius"]})
    one_turn_ops(c)
    assert len(events_of(c)) == 1 + 1 + 3                    # move + box's Area value + 3 box cards


def test_u47_aborts_before_a_draw_when_shaken_and_keeps_the_counter():
    c = campaign(U47, rolls=[], stacked={"events": [event("Ataque Submarino Aliado")] * 10})
    b = boat(c, "U-47")
    b["stress"] = 7                                           # +2 entering the Mar del Norte -> 9 Shaken
    c.pol["endurance"] = "aggressive"
    c.endurance = dict(C.ENDURANCE["aggressive"])
    one_turn_ops(c)
    assert events_of(c) == ["Ataque Submarino Aliado"] and ("abort" in [t[2] for t in c.trace])
    assert b["missions"] == ["attack"] and b["search"] and c.m["attack_vp"] == 0


def test_unfit_from_a_box_event_fails_the_attack_mission():
    c = campaign(U47, rolls=[], stacked={"events": [event("Ataque Submarino Aliado")] * 10})
    b = boat(c, "U-47")
    b["stress"] = 3
    c.mission_pol["abort_band"] = "unfit"                   # never abort
    c.endurance = dict(C.ENDURANCE["aggressive"])
    one_turn_ops(c)  # 3 + 2 = 5 (move), box: 7, 9, 11 -> Unfit (Veteran U-47: Okay to 5 (l.307), Shaken to 9 ph)
    assert events_of(c) == ["Ataque Submarino Aliado"] * 4
    assert c.m["missions_failed"] == 1 and b["missions"] == [] and c.m["attack_vp"] == 0 and b["search"]


def test_unfit_on_the_way_fails_the_mission():
    p = dict(BASE, fleet=[{"id": "U-51", "mines": 8}], policy={"endurance": "aggressive"})
    c = campaign(p, stacked={"events": [event("Ataque Submarino Aliado")] * 10})
    b = boat(c, "U-51")
    b["stress"] = 11                                         # Mar del Norte: 13 -> Unfit before the box
    one_turn_ops(c)
    assert c.m["missions_failed"] == 1 and c.m["mine_vp"] == 0 and c.map.names[b["area"]] == "Mar del Norte"


# ------------------------------------------------------------------ §4.5 mine laying (l.294)
def test_mine_vp_table_8_torpedoes_give_4_vp():
    box = DATA["campaign_maps"]["comienza_la_batalla"]["areas"][3]["boxes"][0]
    assert box["type"] == "mine"
    assert C.mine_vp(box["vp_table"], 8) == 4
    assert [C.mine_vp(box["vp_table"], n) for n in (0, 1, 2, 7, 12)] == [0, 0, 1, 3, 6]


def test_mine_laying_vii_b_in_the_british_isles_8_mines_4_vp():
    p = dict(BASE, fleet=[{"id": "U-51", "mines": 8}])       # VIIB (ph), 4 Ready + 8 Stored
    c = campaign(p, stacked={"events": [event("Sin Novedad")] * 20})
    b = boat(c, "U-51")
    c.turn = 1
    c.strategic()                                            # the mission is bought and loaded in port (l.288)
    assert (b["ready"], b["stored"]) == (4, 0)               # mines replace Stored first
    c.operations()
    assert (c.m["mine_vp"], c.m["mission_vp"], c.m["vp"], c.m["xp"]) == (4, 4, 4, 0)
    assert b["missions"] == [] and b["mines"] == 0


@pytest.mark.parametrize("rule, vp", [("fails", 0), ("too_late", 4)])
def test_mine_box_event_making_the_boat_unfit_a16(rule, vp):
    p = dict(BASE, fleet=[{"id": "U-51", "mines": 8}], policy={"endurance": "aggressive"})
    c = campaign(p, {"mine_unfit": rule},
                 stacked={"events": [event("Sin Novedad")] * 2 + [event("Ataque Submarino Aliado")] * 5})
    boat(c, "U-51")["stress"] = 11                           # Shaken; the box card makes it 13 = Unfit
    one_turn_ops(c)
    assert c.m["mine_vp"] == vp


# ------------------------------------------------------------------ §4.5 raider (l.316)
def _raider_runs(fleet_boat, rules=None, data=None, n=3000, seed=5):
    c = campaign(dict(BASE, fleet=[fleet_boat]), rules, data=data, seed=seed)
    b = boat(c, fleet_boat["id"])
    out, used = [], []
    for _ in range(n):
        c.load_out(b)
        b["stress"] = 0
        before = c.m["raider_vp"]
        t0 = b["ready"] + b["stored"] + b["ammo"]
        c.raider_box(b)
        out.append(c.m["raider_vp"] - before)
        used.append(t0 - (b["ready"] + b["stored"] + b["ammo"]))
    return out, used


def _binom(k, p):
    return [comb(k, i) * p ** i * (1 - p) ** (k - i) for i in range(k + 1)]


def test_raider_one_vp_per_roll_of_8_plus_up_to_10_attacks():
    vp, used = _raider_runs({"id": "U-47"})                  # 6 ammunition + 12 torpedoes -> capped at 10
    assert set(used) == {10}
    counts = [vp.count(i) for i in range(11)]
    assert_histogram_matches(counts, _binom(10, 0.3), what="raider VP ~ Bin(10, 3/10)")


def test_raider_type_ii_has_no_gun_and_stops_when_out_of_torpedoes():
    vp, used = _raider_runs({"id": "U-56", "level": "ace"}, n=2000)   # IIC: 3 + 2 torpedoes, no ammunition
    assert set(used) == {5}
    assert_histogram_matches([vp.count(i) for i in range(6)], _binom(5, 0.3), what="Bin(5, 3/10)")


@pytest.mark.parametrize("rule, p", [("modified", 0.5), ("natural", 0.3)])
def test_raider_roll_uses_the_modified_die_a17(rule, p):
    data = copy.deepcopy(DATA)
    u47 = next(u for u in data["uboats"] if u["id"] == "U-47")
    u47["levels"]["trained"]["okay"].update(gs=2, ts=2)    # +2 for gun and torpedo: 6+ succeeds
    vp, _ = _raider_runs({"id": "U-47"}, {"raider_roll": rule}, data=data, n=2000)
    assert_histogram_matches([vp.count(i) for i in range(11)], _binom(10, p), what=f"raider {rule}")


# ------------------------------------------------------------------ §7.2 contact modifiers (l.358-362)
def test_contact_modifiers_plus2_intel_plus1_seeker_minus2_per_warning_minus2_attacked():
    data = copy.deepcopy(DATA)
    next(u for u in data["uboats"] if u["id"] == "U-51")["abilities"] = ["seeker"]
    c = campaign(dict(BASE, fleet=[{"id": "U-51"}, {"id": "U-47"}]), data=data)
    b51, b47 = boat(c, "U-51"), boat(c, "U-47")
    ib = c.map.index["Islas Británicas"]
    b51["area"] = b47["area"] = ib
    assert (c.contact_modifier(b51), c.contact_modifier(b47)) == (1, 0)          # Seeker +1
    c.counters_active = {"intelligence": {ib}, "air_search": set(), "supply_ship": set()}
    assert (c.contact_modifier(b51), c.contact_modifier(b47)) == (3, 2)          # Intel +2
    c.warnings[ib] = 2
    assert c.contact_modifier(b47) == 2 - 4                                       # -2 per Warning
    b47["attacked"] = True
    assert c.contact_modifier(b47) == 2 - 4 - 2                                   # Attacked -2
    b47["contact_bonus"] = 1
    assert c.contact_modifier(b47) == -3                                          # +X from Events


def _contacts_hist(rules=None, intel=False, warnings=0, n=3000, seed=11):
    """Distribution of the number of Convoy cards a boat draws in the Islas Británicas
    (all withdrawn: policy max_escorts -1 fights nothing)."""
    c = campaign(dict(BASE, fleet=[{"id": "U-51"}], policy={"attack": {"max_escorts": -1}}), rules, seed=seed)
    b = boat(c, "U-51")
    ib = c.map.index["Islas Británicas"]
    b["area"] = ib
    out = []
    for _ in range(n):
        c.counters_active = {"intelligence": {ib} if intel else set(), "air_search": set(), "supply_ship": set()}
        c.warnings, c.warned = ({ib: warnings} if warnings else {}), set()
        b["stress"] = 0  # each withdrawal adds Post-Combat Stress (l.370): start every roll fresh
        before = c.m["contacts"]
        c.contact_phase(b)
        out.append(c.m["contacts"] - before)
    return [out.count(k) for k in range(3)]


@pytest.mark.parametrize("intel, warnings, probs", [
    (False, 0, [0.5, 0.3, 0.2]),     # table (ph) <=5: 0, 6-8: 1, >=9: 2
    (True, 0, [0.3, 0.3, 0.4]),      # +2: rolls 3..12
    (True, 1, [0.5, 0.3, 0.2]),      # +2 - 2
    (False, 1, [0.7, 0.3, 0.0]),     # -2: rolls -1..8
])
def test_contact_roll_distribution_with_intel_and_warnings(intel, warnings, probs):
    counts = _contacts_hist(intel=intel, warnings=warnings)
    if probs[2] == 0:
        assert counts[2] == 0
        counts, probs = counts[:2], probs[:2]
    assert_histogram_matches(counts, probs, what=f"contacts intel={intel} warnings={warnings}")


def test_warning_placed_at_first_card_per_boat_and_area_a3():
    c = campaign(dict(BASE, fleet=[{"id": "U-51"}], policy={"attack": {"max_escorts": -1}}),
                 rolls=[10, 10, 10])
    b = boat(c, "U-51")
    b["area"] = c.map.index["Islas Británicas"]
    c.contact_phase(b)                       # 10 -> 2 cards, one Warning (first card only)
    assert c.m["contacts"] == 2 and c.warnings == {b["area"]: 1}
    c2 = campaign(dict(BASE, fleet=[{"id": "U-51"}], policy={"attack": {"max_escorts": -1}}),
                  {"warning_placement": "attack_only"}, rolls=[10])
    b2 = boat(c2, "U-51")
    b2["area"] = c2.map.index["Islas Británicas"]
    c2.contact_phase(b2)                     # withdrawn -> no Warning under (b)
    assert c2.warnings == {}


def test_air_search_draws_two_convoy_cards_and_keeps_the_policy_choice():
    c = campaign(dict(BASE, fleet=[{"id": "U-51"}]), stacked={"convoys": [1, 37, 2, 3]})
    b = boat(c, "U-51")
    b["area"] = c.map.index["Islas Británicas"]
    c.counters_active = {"intelligence": set(), "air_search": {b["area"]}, "supply_ship": set()}
    assert c.draw_convoy(b) == 37                       # 1 (lone, 1 target) vs 37 (4 merchants): most_targets
    assert c.convoys.discards == [1]                    # G22 ph: the other card is discarded
    c2 = campaign(dict(BASE, fleet=[{"id": "U-51"}], policy={"air_search_choice": "fewest_escorts"}),
                  stacked={"convoys": [37, 1]})
    b2 = boat(c2, "U-51")
    b2["area"] = b["area"]
    c2.counters_active = c.counters_active
    assert c2.draw_convoy(b2) == 1                      # the Lone card has no escorts


# ------------------------------------------------------------------ deck mechanics (l.191), year halves (l.129)
def test_event_deck_is_drawn_without_replacement_and_reshuffled_from_discards():
    size = sum(cd["count"] for cd in DATA["events"]["cards"])
    c = campaign(BASE, seed=3)
    b = c.boats[0]
    b["stress"] = -1000                                  # never Unfit while drawing
    names = []
    for _ in range(3 * size):
        c.draw_event(b)
        names.append(c.trace[-1][3])
    want = sorted(cd["name"] for cd in DATA["events"]["cards"] for _ in range(cd["count"]))
    for k in range(3):
        assert sorted(names[k * size:(k + 1) * size]) == want
    assert c.events.reshuffles == 2


def test_year_split_event_uses_the_campaign_year():
    def stress_after(year, rule="fixed"):
        data = copy.deepcopy(DATA)
        data["campaigns"]["comienza_la_batalla"]["calendar_year"] = year
        c = campaign(dict(BASE, fleet=[{"id": "U-51"}]), {"calendar": rule}, data=data,
                     rolls=[10], stacked={"events": [event("Avión Enemigo")]})
        c.turn = 1
        c.draw_event(c.boats[0])
        return c.boats[0]["stress"]
    assert stress_after(1939) == 2                      # early half (ex 2)
    assert stress_after(1943) == 3                      # late half (ph 3)
    assert stress_after(1943, "advancing") == 2         # advancing: 1939-09 + 0 months -> 1939


def test_convoy_deck_persists_and_removed_cards_never_appear():
    cards = sorted(cd["card"] for cd in DATA["convoys"])
    data = copy.deepcopy(DATA)
    data["campaigns"]["comienza_la_batalla"]["removed_convoys"] = [37, 2]
    c = campaign(BASE, data=data)
    left = [k for k in cards if k not in (37, 2)]
    for _ in range(4):                                   # four passes: each a permutation of the rest
        drawn = [c.convoys.draw() for _ in left]
        assert sorted(drawn) == left
        assert c.convoys.draw() is None                  # deck and discards both empty
        for k in drawn:
            c.convoys.discard(k)
    assert c.convoys.reshuffles == 3


# ------------------------------------------------------------------ patrol limits end the campaign (l.244, 336)
@pytest.mark.parametrize("duration, limit", [("short", 1), ("medium", 2)])
def test_patrol_limits_end_the_campaign(duration, limit):
    out = C.simulate(dict(BASE, duration=duration), ABSTRACT, DATA, n=60, seed=7)
    assert sum(out["p_turn_cap"]) == 0
    for i in range(60):
        for b in FLEET:
            pat, lost = out[f"boat_patrols.{b['id']}"][i], out[f"boat_lost.{b['id']}"][i]
            assert pat == limit or (lost == 1 and pat < limit)
        assert out["patrols"][i] == sum(out[f"boat_patrols.{b['id']}"][i] for b in FLEET)


def test_campaign_stops_on_the_turn_the_last_boat_retires():
    c = campaign(dict(BASE, fleet=[{"id": "U-51"}]), ABSTRACT, seed=2)
    m = c.run()
    last_port = max(t[0] for t in c.trace if t[2] == "port")
    assert m["turns"] == last_port and boat(c, "U-51")["retired"]


def test_turn_cap_is_named_and_counted():
    m = C.run_campaign(dict(BASE, max_turns=1), ABSTRACT, DATA, seed=1, plain=True)
    assert (m["turns"], m["p_turn_cap"]) == (1, 1)


# ------------------------------------------------------------------ Refit (§4.7): Port number, Cool, Supply, R&R, promotion
def test_refit_stress_recovery_port_cool_supply_and_priority_rr():
    data = copy.deepcopy(DATA)
    next(u for u in data["uboats"] if u["id"] == "U-51")["abilities"] = ["cool"]
    c = campaign(dict(BASE, fleet=[{"id": "U-51"}, {"id": "U-47"}, {"id": "U-43"}]), data=data)
    b51, b47, b43 = (boat(c, i) for i in ("U-51", "U-47", "U-43"))
    for b in (b51, b47, b43):
        b["stress"] = 10
    wa = c.map.index["Accesos Occidentales"]
    b43["area"] = wa
    c.counters_active = {"intelligence": set(), "air_search": set(), "supply_ship": {wa}}
    c.refit()
    assert (b51["stress"], b47["stress"], b43["stress"]) == (10 - 3 - 1, 10 - 3, 10 - 2)   # ph Refit 3, Cool -1, Supply -2
    c2 = campaign(dict(BASE, fleet=[{"id": "U-51"}, {"id": "U-47"}], policy={"so": "support"}))
    for b in c2.boats:
        b["stress"] = 6
    c2.turn = 1
    c2.strategic()
    # R&R -4 to every boat in port (2 SO, ph); then a Supply Ship where both boats head (2 SO, ph)
    assert [b["stress"] for b in c2.boats] == [2, 2] and c2.so == 32 - 7 - 6 - 2 - 2
    assert [t[3] for t in c2.trace if t[2] == "so"] == ["priority_rr", "supply_ship@Accesos Occidentales"]
    c2.turn = 2
    c2.strategic()
    assert [b["stress"] for b in c2.boats] == [2, 2]                        # below rr_min_stress: no purchase


def test_cool_in_port_only_a14():
    data = copy.deepcopy(DATA)
    next(u for u in data["uboats"] if u["id"] == "U-51")["abilities"] = ["cool"]
    for rule, want in (("every_refit", 4), ("in_port", 5)):
        c = campaign(dict(BASE, fleet=[{"id": "U-51"}]), {"cool": rule}, data=data)
        b = c.boats[0]
        b["area"], b["stress"] = c.map.index["Mar del Norte"], 5
        c.refit()
        assert b["stress"] == want


def test_promotion_by_xp():
    c = campaign(dict(BASE, fleet=[{"id": "U-51"}]))
    b = c.boats[0]
    b["xp"] = 25                                          # trained xp_next ph 20
    c.refit()
    assert (C.LEVELS[b["level"]], b["xp"]) == ("veteran", 5)
    c2 = campaign(dict(BASE, fleet=[{"id": "U-51"}]), {"promotion": "none"})
    c2.boats[0]["xp"] = 25
    c2.refit()
    assert c2.boats[0]["level"] == 1


def test_reload_and_resupply():
    c = campaign(dict(BASE, fleet=[{"id": "U-51"}]))
    b = c.boats[0]
    b["area"], b["ready"], b["stored"] = c.map.index["Mar del Norte"], 1, 8
    c.refit()                                             # reload at sea: Stored -> Ready up to the 4 tubes
    assert (b["ready"], b["stored"]) == (4, 5)
    b["area"], b["ready"], b["stored"], b["ammo"] = c.map.ports[0], 0, 0, 0
    c.refit()                                             # resupply in port (ph: full)
    assert (b["ready"], b["stored"], b["ammo"]) == (4, 8, 6)
    c3 = campaign(dict(BASE, fleet=[{"id": "U-51"}]), {"campaign_reload": "port_only"})
    b3 = c3.boats[0]
    b3["area"], b3["ready"], b3["stored"] = c3.map.index["Mar del Norte"], 1, 8
    c3.refit()
    assert (b3["ready"], b3["stored"]) == (1, 8)


# ------------------------------------------------------------------ wolfpack in the campaign (§7.3)
def test_wolfpack_join_roll_and_stress_result_use_the_sheet_notes():
    data = copy.deepcopy(DATA)
    c = campaign(dict(BASE, fleet=[{"id": "U-51"}, {"id": "U-47"}, {"id": "U-43"}]), data=data, rolls=[1, 7])
    a, j1, j2 = c.boats
    for b in c.boats:
        b["area"] = c.map.index["Islas Británicas"]
    joiners, alerted = c.form_pack(a, c.convoy_by_card[37])
    # face 1: Stress result (ph [1]) -> +1 Stress, +1 Alerted, no join (1 < 6); face 7 joins
    assert [o["id"] for o in joiners] == ["U-43"] and alerted == 1 and a["stress"] == 1
    c.turn = 1
    c.so = 10
    c.pol["radio_call"] = {"escorts_at_least": 1}
    joiners, alerted = c.form_pack(a, c.convoy_by_card[37])     # Radio Call: no dice, all join
    assert [o["id"] for o in joiners] == ["U-47", "U-43"] and c.so == 8


# ------------------------------------------------------------------ whole campaigns: consistency and loadouts
@pytest.mark.parametrize("model", ["abstract", "engagement"])
def test_metrics_are_consistent(model):
    n = 40 if model == "engagement" else 100
    out = C.simulate(dict(BASE, fleet=FLEET[:2] + [{"id": "U-51", "mines": 8}, {"id": "U-56", "level": "ace",
                                                                                 "missions": ["raider"]}]),
                     {"contact_model": model}, DATA, n=n, seed=4)
    ids = ["U-43", "U-47", "U-51", "U-56"]
    for i in range(n):
        assert out["vp"][i] == sum(out[f"boat_vp.{b}"][i] for b in ids)
        assert out["xp"][i] == sum(out[f"boat_xp.{b}"][i] for b in ids)
        assert out["boats_lost"][i] == sum(out[f"boat_lost.{b}"][i] for b in ids)
        assert out["mission_vp"][i] == out["mine_vp"][i] + out["attack_vp"][i] + out["raider_vp"][i]
        assert sum(out[f"p_level_{k}"][i] for k in ("poor", "adequate", "good", "outstanding")) == 1
    assert sum(out["vp"]) > sum(out["mission_vp"]) > 0


def test_stored_torpedoes_change_results():
    full = C.simulate(BASE, ABSTRACT, DATA, n=250, seed=21)
    no_stored = C.simulate(dict(BASE, fleet=[dict(b, stored=0) for b in FLEET]), ABSTRACT, DATA, n=250, seed=21)
    m1, s1 = mean_se(full["vp"])
    m0, s0 = mean_se(no_stored["vp"])
    assert m1 - m0 > 5 * math.hypot(s1, s0), (m1, m0)


def test_fat_torpedoes_bonus_is_a_placeholder_module():
    fleet = [{"id": "U-47", "advanced": {"fat": 4}}]
    a = C.simulate(dict(BASE, fleet=fleet, policy={"so": "none"}), ABSTRACT, DATA, n=300, seed=8)
    b = C.simulate(dict(BASE, fleet=fleet, policy={"so": "none"}), dict(ABSTRACT, advanced_torpedoes="as_normal"), DATA, n=300, seed=8)
    assert a["so_left"][0] == b["so_left"][0] == 32 - 7 - 2
    assert sum(a["ships_sunk"]) > sum(b["ships_sunk"])


# ------------------------------------------------------------------ every campaign-sheet field is read
def _sheet_runs(mutate, metric, n=80, seed=31, params=BASE, rules=ABSTRACT):
    data = copy.deepcopy(DATA)
    mutate(data["campaigns"]["comienza_la_batalla"], data)
    return sum(C.simulate(params, rules, data, n=n, seed=seed)[metric])


def _base(metric, **kw):
    return _sheet_runs(lambda s, d: None, metric, **kw)


def test_sheet_name_is_a_label_only():
    """`name` is reported, never simulated: changing it changes nothing (documented, C§3.1)."""
    assert _sheet_runs(lambda s, d: s.update(name="x"), "vp") == _base("vp")


def test_sheet_period_is_read():
    data = copy.deepcopy(DATA)
    data["campaigns"]["comienza_la_batalla"]["period"] = {"start": "1942-01", "end": "1942-12"}
    with pytest.raises(ValueError, match="does not serve"):
        C.Campaign(BASE, None, data, random.Random(0))      # U-47 serves 1939-09..1941-05 (ph)


def test_sheet_map_is_read():
    data = copy.deepcopy(DATA)
    data["campaigns"]["comienza_la_batalla"]["map"] = "los_tiempos_felices"
    c = C.Campaign(BASE, None, data, random.Random(0))
    assert c.map.names[0] == "Alemania" and "Lorient" in c.map.names


def test_sheet_allowed_classes_is_read():
    data = copy.deepcopy(DATA)
    data["campaigns"]["comienza_la_batalla"]["allowed_classes"] = ["IX"]
    with pytest.raises(ValueError, match="not allowed"):
        C.Campaign(BASE, None, data, random.Random(0))
    with pytest.raises(ValueError, match="not allowed"):   # the source's Drumbeat rule (l.103)
        C.Campaign(dict(BASE, campaign="operacion_drumbeat", fleet=[{"id": "U-23"}]), None, DATA, random.Random(0))


def test_sheet_durations_patrols_and_so_are_read():
    assert _sheet_runs(lambda s, d: s["durations"]["short"].update(patrols=2), "patrols") > _base("patrols")
    assert _sheet_runs(lambda s, d: s["durations"]["short"].update(so=40), "so_left") > _base("so_left")
    data = copy.deepcopy(DATA)
    data["campaigns"]["comienza_la_batalla"]["durations"]["short"]["so"] = 28
    with pytest.raises(ValueError, match="costs 29"):
        C.Campaign(BASE, None, data, random.Random(0))


def test_sheet_vp_thresholds_are_read():
    assert _base("p_level_poor") < _sheet_runs(
        lambda s, d: s.update(vp_thresholds={"poor": 0, "adequate": 50, "good": 60, "outstanding": 70}), "p_level_poor")


def test_sheet_removed_convoys_is_read():
    """Only the Lone card 1 (1 merchant, no escorts) is left: at most one ship sunk per attack, in
    every trial; with every card some attack sinks more."""
    def per_trial(mutate):
        data = copy.deepcopy(DATA)
        mutate(data["campaigns"]["comienza_la_batalla"])
        out = C.simulate(BASE, ABSTRACT, data, n=80, seed=31)
        return list(zip(out["ships_sunk"], out["attacks"]))
    lone = per_trial(lambda s: s.update(removed_convoys=[c["card"] for c in DATA["convoys"] if c["card"] != 1]))
    assert all(sunk <= attacks for sunk, attacks in lone) and sum(a for _, a in lone) > 0
    assert any(sunk > attacks for sunk, attacks in per_trial(lambda s: None))


def test_sheet_tactics_in_use_is_read():
    def mutate(s, d):
        s["tactics_in_use"] = True
        d["tactics"]["chits"] = [{"value": 5, "count": 10}]    # strong escorts, to see the switch
    assert _sheet_runs(mutate, "boats_lost") > _base("boats_lost")


def test_sheet_wolfpack_notes_are_read():
    params = dict(BASE, policy={"patrol": "best"})
    # join_min 1: every candidate joins -> more packs; stress on every face -> more Stress / fewer patrols
    def packs(data):
        out = 0
        for s in range(30):
            c = C.Campaign(params, ABSTRACT, data, random.Random(s))
            c.run()
            out += sum(len(t[3][1]) > 1 for t in c.trace if t[2] == "fight")
        return out
    d1 = copy.deepcopy(DATA)
    d1["campaigns"]["comienza_la_batalla"]["wolfpack"]["join_min"] = 1
    d2 = copy.deepcopy(DATA)
    d2["campaigns"]["comienza_la_batalla"]["wolfpack"]["join_min"] = 11
    assert packs(d1) > packs(DATA) > packs(d2) == 0
    assert _sheet_runs(lambda s, d: s["wolfpack"].update(stress_results=list(range(1, 11)), join_min=11),
                       "xp", n=80) != _base("xp", n=80)


@pytest.mark.parametrize("field", ["cost", "max"])
def test_sheet_so_options_are_read(field):
    value = 1 if field == "cost" else 0
    changed = _sheet_runs(lambda s, d: s["so_options"]["intelligence"].update({field: value}), "so_spent")
    assert changed != _base("so_spent")


def test_sheet_mission_costs_are_read():
    p = dict(BASE, fleet=FLEET[:3] + [{"id": "U-56", "level": "ace", "missions": ["raider"]}])
    data = copy.deepcopy(DATA)
    assert C.Campaign(p, SETUP_ONLY, data, random.Random(0)).so == 3 - 1
    data["campaigns"]["comienza_la_batalla"]["so_options"]["raider"]["cost"] = 3
    assert C.Campaign(p, SETUP_ONLY, data, random.Random(0)).so == 0
    c = C.Campaign(dict(p, policy={"so": "none"}), None, data, random.Random(0))  # bought at the Strategic Segment
    c.turn = 1
    c.strategic()
    assert c.so == 0 and c.boats[3]["missions"] == ["raider"]


def test_sheet_advanced_torpedo_cost_is_read():
    fleet = [dict(FLEET[0], advanced={"fat": 2})] + FLEET[1:]
    data = copy.deepcopy(DATA)
    assert C.Campaign(dict(BASE, fleet=fleet), SETUP_ONLY, data, random.Random(0)).so == 2
    data["campaigns"]["comienza_la_batalla"]["advanced_torpedo_cost"] = 1
    assert C.Campaign(dict(BASE, fleet=fleet), SETUP_ONLY, data, random.Random(0)).so == 1
    c = C.Campaign(dict(BASE, fleet=fleet, policy={"so": "none"}), None, data, random.Random(0))
    c.turn = 1
    c.strategic()
    assert c.so == 1 and c.boats[0]["fat"] == 2


def test_sheet_calendar_year_is_read():
    assert _sheet_runs(lambda s, d: s.update(calendar_year=1943), "xp") != _base("xp")


# ------------------------------------------------------------------ an exact whole campaign
def test_raider_only_campaign_vp_is_exactly_binomial_10_030():
    """One VIIB trained boat, raider mission, no Contact rolls: the route Alemania -> ... ->
    Atlántico Norte draws 4 + 2 Event cards, at most +11 Stress (never Unfit, 13+), so the raid
    always happens: 6 gun + 4 torpedo attacks, each 8+ on a d10 (GS = TS = 0, range mod 0):
    campaign VP ~ Bin(10, 3/10) exactly; success levels (ph 0/5/10/20) follow."""
    p = dict(BASE, fleet=[{"id": "U-51", "missions": ["raider"]}], policy={"attack": "never", "so": "none"})
    out = C.simulate(p, ABSTRACT, DATA, n=3000, seed=13)
    assert set(out["boat_patrols.U-51"]) == {1} and sum(out["missions_failed"]) == 0
    assert out["vp"] == out["raider_vp"]
    probs = _binom(10, 0.3)
    assert_histogram_matches([out["vp"].count(k) for k in range(11)], probs, what="campaign VP")
    p_adequate = sum(probs[5:10])
    m, se = mean_se(out["p_level_adequate"])
    assert_mean_matches(m, se, p_adequate, what="P(adequate) = P(5 <= VP <= 9)")


# ------------------------------------------------------------------ rule options (C§5)
def test_unfit_return_a8_operations_vs_tactical():
    for rule in ("operations", "tactical"):
        c = campaign(dict(BASE, fleet=[{"id": "U-51"}]), {"unfit_return": rule},
                     stacked={"events": [event("Sin Novedad")] * 20})
        b = c.boats[0]
        b["area"], b["stress"], b["home"] = c.map.index["Islas Británicas"], 13, c.map.ports[0]
        c.turn = 1
        c.strategic()
        c.operations()
        assert c.in_port(b) == (rule == "operations")
        c.tactical()
        assert c.in_port(b) and b["patrols"] == 1 and b["retired"]


def test_counter_duration_a15_strategic_only_makes_intel_inert():
    for rule, want in (("turn", 2), ("strategic_only", 0)):
        c = campaign(dict(BASE, fleet=[{"id": "U-51"}]), {"counter_duration": rule})
        c.turn = 1
        c.strategic()                                   # Intel bought where U-51 heads (Accesos Occidentales)
        b = c.boats[0]
        b["area"] = c.map.index["Accesos Occidentales"]
        assert c.contact_modifier(b) == want


def test_map_movement_a19_one_area_per_turn():
    p = dict(BASE, fleet=[{"id": "U-51"}], policy={"patrol": {"area": "Accesos Occidentales"}})
    c = campaign(p, {"map_movement": "one_area"}, stacked={"events": [event("Sin Novedad")] * 40})
    b = c.boats[0]
    where = []
    for t in (1, 2, 3):
        c.turn = t
        c.strategic()
        c.operations()
        where.append(c.map.names[b["area"]])
    assert where == ["Mar del Norte", "Islas Británicas", "Accesos Occidentales"]


def test_warning_duration_and_attacked_markers():
    c = campaign(dict(BASE, fleet=[{"id": "U-51"}]), {"warning_duration": "campaign"})
    c.warnings = {3: 1}
    c.refit()
    assert c.warnings == {3: 1}
    c2 = campaign(dict(BASE, fleet=[{"id": "U-51"}]))
    c2.warnings = {3: 1}
    c2.refit()
    assert c2.warnings == {}
    # Attacked: one_turn re-sets it each Tactical Segment; until_port keeps it
    for rule, want in (("one_turn", False), ("until_port", True)):
        c3 = campaign(dict(BASE, fleet=[{"id": "U-51"}], policy={"attack": "never"}), {"attacked_duration": rule})
        b = c3.boats[0]
        b["area"], b["attacked"] = c3.map.index["Islas Británicas"], True
        c3.tactical()
        assert b["attacked"] == want


def test_attacked_marker_a4_joiners_that_did_not_search():
    for rule, want in (("all_attackers", [True, True, False]), ("joiners_not_searched", [False, True, False])):
        c = campaign(dict(BASE, fleet=[{"id": "U-51"}, {"id": "U-47"}, {"id": "U-43"}]), {"attacked_marker": rule})
        a, j, idle = c.boats
        a["attacked_now"], a["searched"] = True, True        # the active boat: attacked after its own roll
        j["attacked_now"], j["searched"] = True, False       # a joiner that made no roll of its own
        c.update_attacked_markers()
        assert [b["attacked"] for b in c.boats] == want


def test_attacked_marker_in_a_real_wolfpack_turn():
    """U-51 (no torpedoes) finds a contact and calls U-47, which fires, then makes its own roll:
    U-47 is Attacked under all_attackers, not under joiners_not_searched; U-51 never attacked."""
    data = copy.deepcopy(DATA)
    data["campaign_maps"]["comienza_la_batalla"]["areas"][3]["contact_table"] = [[-99, 1]]   # always 1 contact
    data["campaigns"]["comienza_la_batalla"]["wolfpack"].update(join_min=-99, stress_results=[])
    for rule, want in (("all_attackers", [False, True]), ("joiners_not_searched", [False, False])):
        c = campaign(dict(BASE, fleet=[{"id": "U-51"}, {"id": "U-47"}]), dict(ABSTRACT, attacked_marker=rule),
                     data=data, seed=3, stacked={"convoys": [4] * 6})
        a, j = c.boats
        for b in c.boats:
            b["area"] = c.map.index["Islas Británicas"]
        a["ready"] = a["stored"] = 0
        c.tactical()
        fights = [t[3] for t in c.trace if t[2] == "fight"]
        assert fights[0] == (4, ["U-51", "U-47"]) and fights[1] == (4, ["U-47"])
        assert [a["attacked"], j["attacked"]] == want


# ------------------------------------------------------------------ the engagement bridge (C§7.4)
def test_engagement_model_uses_the_campaign_torpedoes_and_credits_the_boat():
    c = campaign(dict(BASE, fleet=[{"id": "U-47", "level": "veteran"}]), seed=5)
    b = c.boats[0]
    b["area"] = c.map.index["Islas Británicas"]
    b["ready"] = b["stored"] = b["ammo"] = 0
    c.fight(b, c.convoy_by_card[37])
    assert (b["ready"], b["stored"], b["vp"], b["attacked_now"]) == (0, 0, 0, False)
    fought = sunk = 0
    for s in range(25):
        c = campaign(dict(BASE, fleet=[{"id": "U-47", "level": "veteran"}]), seed=s)
        b = c.boats[0]
        b["area"] = c.map.index["Islas Británicas"]
        c.fight(b, c.convoy_by_card[37])
        fought += b["attacked_now"]
        sunk += c.m["ships_sunk"]
        assert b["vp"] == c.m["vp"] and b["xp_total"] == c.m["xp"]
        assert b["lost"] or b["ready"] == b["tubes"] or b["stored"] == 0   # post-combat reload
    assert fought > 0 and sunk > 0


# ------------------------------------------------------------------ policies (C§6)
def test_patrol_policies_pick_areas():
    c = campaign(dict(BASE, fleet=FLEET))

    def names(policy):
        c.pol["patrol"] = policy
        return [c.map.names[c.patrol_area(b)] for b in c.boats]
    assert names("best") == ["Accesos Occidentales"] * 4               # E = 1.0 contacts (ph table)
    assert names("nearest") == ["Mar del Norte"] * 4
    assert names("spread") == ["Accesos Occidentales", "Islas Británicas", "Atlántico Norte", "Mar del Norte"]
    assert names({"area": "Islas Británicas"}) == ["Islas Británicas"] * 4


def test_endurance_policy_changes_time_at_sea():
    m = {}
    for pol in ("cautious", "balanced", "aggressive"):
        out = C.simulate(dict(BASE, policy={"endurance": pol}), ABSTRACT, DATA, n=60, seed=17)
        m[pol] = sum(out["turns"]) / 60
    assert m["cautious"] < m["balanced"] < m["aggressive"]
