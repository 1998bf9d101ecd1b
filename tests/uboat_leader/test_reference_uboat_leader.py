"""Tests of the U-Boat Leader reference against the digest's worked examples and exact values.

Digest: docs/rules/uboat_leader.md. Spec: docs/models/uboat_leader.md.
Monte-Carlo checks use a fixed seed and a 5-standard-error tolerance from the trial count.
"""
import math
import random
from fractions import Fraction
from pathlib import Path

import pytest
import yaml

from analyzer.games.uboat_leader import reference as U

ROOT = Path(__file__).resolve().parents[2]
SCEN = ROOT / "scenarios" / "uboat_leader"
DATA = U.load_data()
PLAIN = U.unwrap(DATA)


def _mean(xs):
    return sum(xs) / len(xs)


def _close(sample, p_exact_mean, var, n):
    se = math.sqrt(var / n) if var > 0 else 0.0
    assert abs(_mean(sample) - p_exact_mean) <= 5 * se + 1e-12, (_mean(sample), p_exact_mean, se)


def _moments(dist):
    m = sum(Fraction(v) * p for v, p in dist.items())
    v = sum((Fraction(x) - m) ** 2 * p for x, p in dist.items())
    return float(m), float(v)


class FixedDice(random.Random):
    """A Random whose d10 rolls come from a script (randint only)."""

    def __init__(self, rolls):
        super().__init__(0)
        self.rolls = list(rolls)

    def randint(self, a, b):
        return self.rolls.pop(0)


# ----------------------------------------------------------------- §6.2 contact modifiers
def test_contact_modifiers_each_source_value():
    assert U.contact_modifier(intel=True) == 2
    assert U.contact_modifier(seeker=True) == 1
    assert U.contact_modifier(warnings=1) == -2
    assert U.contact_modifier(warnings=2) == -4
    assert U.contact_modifier(attacked=True) == -2
    assert U.contact_modifier(event=3) == 3
    assert U.contact_modifier(intel=True, seeker=True, warnings=1, attacked=True, event=1) == 0


def test_contact_table_lookup_placeholder_g5():
    table = [[1, 0], [6, 1], [9, 2]]  # digest G5 placeholder: <=5 none, 6-8 one, >=9 two
    assert [U.contact_count(r, table) for r in (-3, 5, 6, 8, 9, 12)] == [0, 0, 1, 1, 2, 2]


# ----------------------------------------------------------------- §2 SO example, §1.6 bands
def test_so_purchase_example_from_roster():
    roster = {b["id"]: b for b in PLAIN["uboats"]}
    cost = (roster["U-43"]["levels"]["trained"]["cost"] + roster["U-47"]["levels"]["trained"]["cost"]
            + roster["U-51"]["levels"]["trained"]["cost"] + roster["U-56"]["levels"]["ace"]["cost"])
    so = PLAIN["campaigns"]["comienza_la_batalla"]["durations"]["short"]["so"]
    assert (cost, so, so - cost) == (29, 32, 3)


def test_stress_bands_example_card():
    assert [U.stress_band(s, 8, 12) for s in (0, 5, 8, 9, 12, 13)] == \
        ["okay", "okay", "okay", "shaken", "shaken", "unfit"]


# ----------------------------------------------------------------- §7.5 escort detection
def test_arbutus_example_roll_4_plus_1_is_5_detects():
    mod = U.detection_modifier(alerted=1, damage="none", tactics=0)
    assert 4 + mod == 5
    assert U.detected(4, mod, 5)
    assert U.detection_in_range("surfaced", 3, alerted=1)      # range 2 + 1 Alerted
    assert not U.detection_in_range("surfaced", 3, alerted=0)
    arb = [e for e in PLAIN["escorts"] if e["name"] == "HMS Arbutus"][0]
    assert arb["detection"]["surfaced"] <= 5


def test_detection_ranges_and_modifiers():
    assert U.detection_in_range("submerged", 1, 0) and not U.detection_in_range("submerged", 2, 0)
    assert U.detection_in_range("submerged", 2, 1)
    assert U.detection_modifier(2, "light", 0) == 1
    assert U.detection_modifier(0, "heavy", 1) == -1


def test_reference_scenario_file_exact_0_7():
    sc = yaml.safe_load((SCEN / "escort_detection_example.yaml").read_text())
    assert sc["question"] == "escort_detection" and sc["game"] == "uboat_leader"
    params = U.unwrap(sc["params"])   # the file labels its Detection and EV values ({ex}, {ph})
    ex = U.exact_escort_detection(params, sc.get("rules"), DATA)
    assert ex["p_detected"][1] == Fraction(7, 10)
    assert ex["p_evaded"] == {0: 1} and ex["stress_added"] == {0: 1}
    n = 20000
    res = U.simulate("escort_detection", params, sc.get("rules") or {}, DATA, n, sc["seed"])
    _close(res["p_detected"], 0.7, 0.21, n)


@pytest.mark.parametrize("params,p_det", [
    ({"detection": {"surfaced": 5, "submerged": 7}, "uboat": {"state": "surfaced", "range": 3}}, 0),
    ({"detection": {"surfaced": 5, "submerged": 7}, "uboat": {"state": "submerged", "range": 1}}, Fraction(4, 10)),
    ({"detection": {"surfaced": 5, "submerged": 7}, "uboat": {"state": "submerged", "range": 2}, "alerted": 1},
     Fraction(5, 10)),
    ({"detection": {"surfaced": 5, "submerged": 7}, "uboat": {"state": "surfaced", "range": 0},
      "escort_damage": "heavy"}, Fraction(4, 10)),
    ({"detection": {"surfaced": 5, "submerged": 7}, "uboat": {"state": "surfaced", "range": 0},
      "escort_damage": "light", "alerted": 2}, Fraction(7, 10)),
    ({"detection": {"surfaced": 5, "submerged": 7}, "uboat": {"state": "surfaced", "range": 0},
      "tactics": [-1, 0, 2]}, (Fraction(5) + 6 + 8) / 30),
    ({"detection": {"surfaced": 12, "submerged": 7}, "uboat": {"state": "surfaced", "range": 0}}, 0),
    ({"detection": {"surfaced": 1, "submerged": 7}, "uboat": {"state": "surfaced", "range": 0},
      "escort_damage": "heavy"}, Fraction(8, 10)),
    ({"escort": "HMS Arbutus", "uboat": {"state": "surfaced", "range": 3}, "alerted": 1}, Fraction(7, 10)),
    ({"uboat": {"state": "surfaced", "range": 0}, "tactics": "pool"}, Fraction(6, 10)),
])
def test_escort_detection_exact_and_mc(params, p_det):
    ex = U.exact_escort_detection(params, {}, DATA)
    assert ex["p_detected"].get(1, 0) == p_det
    n = 4000
    res = U.simulate("escort_detection", params, {}, DATA, n, 7)
    p = float(p_det)
    _close(res["p_detected"], p, p * (1 - p), n)


def test_silent_running_evasion_exact():
    params = {"detection": {"surfaced": 5, "submerged": 7},
              "uboat": {"state": "submerged", "range": 1, "evasion": 4, "silent_running": True}}
    ex = U.exact_escort_detection(params, {}, DATA)
    assert ex["p_detected"][1] == Fraction(4, 10)
    assert ex["p_evaded"][1] == Fraction(4, 10) * Fraction(4, 10)      # d10 <= EV
    assert ex["stress_added"] == {0: 1 - Fraction(4, 10) * Fraction(6, 10), 2: Fraction(24, 100)}
    n = 6000
    res = U.simulate("escort_detection", params, {}, DATA, n, 3)
    _close(res["p_evaded"], 0.16, 0.16 * 0.84, n)
    m, v = _moments(ex["stress_added"])
    _close(res["stress_added"], m, v, n)
    assert U.evades(4, 4) and not U.evades(5, 4)


def test_silent_running_ignored_when_surfaced():
    params = {"uboat": {"state": "surfaced", "range": 0, "silent_running": True}}
    ex = U.exact_escort_detection(params, {}, DATA)
    assert ex["p_evaded"] == {0: 1} and ex["stress_added"] == {0: 1}


def test_bad_params_rejected():
    with pytest.raises(ValueError):
        U.simulate("escort_detection", {"uboat": {"state": "deep"}}, {}, DATA, 1, 1)
    with pytest.raises(ValueError):
        U.simulate("escort_detection", {"bogus": 1}, {}, DATA, 1, 1)
    with pytest.raises(ValueError):
        U.simulate("escort_detection", {}, {"damage_stacking": "both"}, DATA, 1, 1)


# ----------------------------------------------------------------- §6.5 wolfpack
def test_wolfpack_exact_and_mc():
    params = {"candidates": 3, "attacked": 1}
    ex = U.exact_wolfpack(params, {}, DATA)
    # placeholder notes: join on d10 (-2 if Attacked) >= 6, Stress on an unmodified 1
    p_plain, p_att = Fraction(5, 10), Fraction(3, 10)
    assert ex["pack_size"][4] == p_plain ** 2 * p_att
    assert ex["pack_size"][1] == (1 - p_plain) ** 2 * (1 - p_att)
    assert ex["alerted"][0] == Fraction(9, 10) ** 3
    assert ex["stress_added"] == ex["alerted"]
    n = 5000
    res = U.simulate("wolfpack", params, {}, DATA, n, 11)
    for m in ("pack_size", "alerted"):
        mu, var = _moments(ex[m])
        _close(res[m], mu, var, n)


def test_wolfpack_radio_call_a5():
    ex = U.exact_wolfpack({"candidates": 4, "radio_call": True}, {}, DATA)
    assert ex["pack_size"] == {5: 1} and ex["alerted"] == {0: 1} and ex["so_spent"] == {2: 1}
    ex = U.exact_wolfpack({"candidates": 4, "radio_call": True}, {"radio_call_cost": "per_joiner"}, DATA)
    assert ex["so_spent"] == {8: 1}


def test_wolfpack_stress_join_a6():
    notes = {"join_min": 6, "stress_results": [10]}
    a = U.exact_wolfpack({"candidates": 1, "notes": notes}, {}, DATA)
    b = U.exact_wolfpack({"candidates": 1, "notes": notes}, {"wolfpack_stress_join": "stress_fails"}, DATA)
    assert a["pack_size"][2] == Fraction(5, 10) and b["pack_size"][2] == Fraction(4, 10)
    assert a["alerted"][1] == b["alerted"][1] == Fraction(1, 10)


# ----------------------------------------------------------------- §7.4 bearing movement
def test_bearing_example_u201_enid_u20():
    ref = 2
    assert U.bearing_drift(ref, 1) == 1          # U-201 at Speed 1 drifts 1
    assert U.bearing_drift(ref, 0) == 2          # ... or 2 treated as Speed 0
    enid = U.damaged_speed(2, light=True)         # Enid: Speed cut to 1 by damage
    assert enid == 1 and U.bearing_drift(ref, enid) == 1
    assert U.bearing_drift(ref, 2) == 0          # U-20 at Speed 2 stays
    assert [U.bearing_drift(ref, s) for s in (1, 0)] == [1, 2]  # or drifts 1 / 2 going slow
    assert U.bearing_drift(ref, 3) == 0
    assert U.bearing_drift(6, 1) == 5 and U.bearing_drift(6, 1, "cap_3") == 3   # A11
    assert U.damaged_speed(1, heavy=True) == 0   # never below 0
    assert U.damaged_speed(4, light=True, heavy=True, stacking="stack") == 1   # A12


def test_wake_removal_needs_movement_left():
    e = U.run_engagement({"convoy": 4, "max_rounds": 1}, {}, DATA, seed=1)
    disp = e.disp
    ship = {"area": disp.index["L4"], "on": True, "revealed": False}
    e._drift(ship, 1, disp.wake, is_ship=True)
    assert ship["area"] == disp.wake and ship["on"]          # reached the Wake exactly: stays
    e._drift(ship, 1, disp.wake, is_ship=True)
    assert not ship["on"]                                     # movement left in the Wake: out
    boat = {"area": disp.index["M4"], "on": True}
    e._drift(boat, 3, disp.wake, is_ship=False)
    assert not boat["on"]


# ----------------------------------------------------------------- §7.2 / §7.5 U-98 example
def _card(deck, name):
    return [c for c in PLAIN[deck] if c["name"] == name][0]


def test_u98_reveals_m3_m4_then_arbutus_detects():
    stacked = {"merchant": [_card("merchants", "Tiberton"), _card("merchants", "Telena")]
               + [c for c in PLAIN["merchants"] if c["name"] not in ("Tiberton", "Telena")],
               "escort": [_card("escorts", "HMS Arbutus")]
               + [c for c in PLAIN["escorts"] if c["name"] != "HMS Arbutus"]}
    params = {"convoy": 37, "alerted": 1, "uboats": [{"id": "U-98", "level": "veteran", "start": "L4"}]}
    rules = U._rules({})
    e = U.Engagement(params, rules, PLAIN, FixedDice([4]), stacked=stacked)
    b = e.boats[0]
    assert b["cls"]["speed"]["surfaced"] == 2 and b["surfaced"]
    assert e.trace["revealed"] == []                   # nothing within 2 of a Long area
    b["area"] = e.disp.index["M4"]                     # slow movement: 1 Area instead of 2
    e.reveal_all()
    assert e.trace["revealed"] == [("M3", "merchant", 78, "Tiberton"), ("M4", "merchant", 56, "Telena")]
    e2 = [s for s in e.ships if s["label"] == "E2"][0]
    e1 = [s for s in e.ships if s["label"] == "E1"][0]
    assert e.D(e2["area"], b["area"]) == 3 and e.D(e1["area"], b["area"]) > 3
    e.escorts_step()                                   # E1 out of range; E2 rolls a 4 (+1 Alerted)
    assert e2["revealed"] and e2["card"]["name"] == "HMS Arbutus"
    assert not e1["revealed"]
    assert b["detected"]


# ----------------------------------------------------------------- decks (§2.3)
def test_deck_draws_without_replacement_and_reshuffles_discards():
    rng = random.Random(5)
    d = U.Deck(range(5), rng)
    drawn = [d.draw() for _ in range(5)]
    assert sorted(drawn) == [0, 1, 2, 3, 4]
    assert d.draw() is None                         # empty deck, no discards
    d.discard(drawn[0])
    d.discard(drawn[1])
    assert sorted([d.draw(), d.draw()]) == sorted(drawn[:2]) and d.reshuffles == 1


def test_engagement_reveals_never_repeat_a_card():
    params = {"convoy": 3, "uboats": [{"id": "U-98", "level": "veteran"}],
              "policy": {"break_off": "never"}, "max_rounds": 6}
    for seed in range(150):
        e = U.run_engagement(params, {"escort_movement": "toward_detected_or_sweep"}, DATA, seed=seed)
        cards = [(deck, c) for _, deck, c, _ in e.trace["revealed"]]
        assert len(cards) == len(set(cards))


# ----------------------------------------------------------------- engagement, exact small case
def _one_salvo_sink_probability(p_hit, p_hit_heavy, table=(0.5, 0.3, 0.2)):
    """Independent oracle: 2 torpedoes at one undamaged ship under the placeholder module."""
    light, heavy, sunk = table
    p = 0.0
    # first torpedo
    p += p_hit * sunk
    after = {"none": 1 - p_hit, "heavy": p_hit * heavy, "light": p_hit * light}
    p += after["none"] * p_hit * sunk
    p += after["heavy"] * p_hit_heavy                 # any damage on Heavy sinks
    p += after["light"] * p_hit * sunk                 # Light -> Heavy unless 'sunk'
    return p


def test_engagement_one_round_two_unescorted_merchants_exact():
    # card 4: two merchants in C2/C3, no escorts. U-98 (surfaced Speed 2) from L4 ends at S4 (range 1),
    # fires a salvo of 2 at M1: hit on d10 + 0 (TS) - 1 (range 1) >= 7, +1 vs Heavy.
    params = {"convoy": 4, "max_rounds": 1, "policy": {"salvo": 2}}
    p = _one_salvo_sink_probability(0.3, 0.4)
    assert abs(p - 0.147) < 1e-12
    n = 6000
    res = U.simulate("engagement", params, {}, DATA, n, 21)
    _close(res["vp"], p, p * (1 - p), n)
    assert set(res["torpedoes_used"]) == {2}
    assert set(res["rounds"]) == {1} and set(res["p_round_cap"]) == {1}
    assert set(res["p_uboat_lost"]) == {0}
    assert set(res["stress_added"]) == {1}          # placeholder post-combat +1 only
    e = U.run_engagement(params, {}, DATA, seed=1)
    assert e.disp.names[e.boats[0]["area"]] == "S4"


def test_engagement_metrics_consistent():
    n = 400
    res = U.simulate("engagement", {"convoy": 37}, {}, DATA, n, 2)
    ready = PLAIN["uboats"][[b["id"] for b in PLAIN["uboats"]].index("U-98")]["levels"]["veteran"]["okay"]["ready"]
    for i in range(n):
        assert 0 <= res["torpedoes_used"][i] <= ready
        assert res["vp"][i] == res["ships_sunk"][i]      # placeholder merchants: 1 VP, escorts 0 (not targeted)
        assert 1 <= res["rounds"][i] <= 20
        assert res["p_uboat_lost"][i] == res["uboats_lost"][i]
    sub = U.simulate("engagement", {"convoy": 37, "policy": {"approach": "submerged"}},
                     {"enemy_attack": "none"}, DATA, 100, 2)
    assert set(sub["p_uboat_lost"]) == {0}


def test_wolfpack_on_display_runs_and_is_deterministic():
    params = {"convoy": 3, "uboats": [{"id": "U-98", "level": "veteran"},
                                      {"id": "U-201", "level": "trained", "start": "L2"}]}
    a = U.simulate("engagement", params, {}, DATA, 50, 9)
    b = U.simulate("engagement", params, {}, DATA, 50, 9)
    assert a == b and max(a["torpedoes_used"]) <= 8


def test_infiltrator_start_rule():
    with pytest.raises(ValueError):
        U.simulate("engagement", {"uboats": [{"id": "U-98", "level": "veteran", "start": "M4"}]},
                   {}, DATA, 1, 1)


# ----------------------------------------------------------------- shipped scenarios
def test_placeholders_listed():
    paths = U.placeholder_paths(DATA)
    assert any(p.startswith("combat.enemy_attack_module") for p in paths)
    assert not any(p.startswith("combat.detection_range") for p in paths)   # source values
