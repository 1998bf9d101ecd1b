"""``ram``, ``collision``, ``boarding`` and ``rout_test``: kernels vs exact mode (5 SE, whole
distributions), exact mode vs the reference's Fraction oracles, and the digest's numbers."""
from fractions import Fraction

import pytest
import yaml
from dw_helpers import assert_matches_exact, prepare, simulate

from analyzer.games.dystopian_wars.rules import RuleError
from analyzer.games.dystopian_wars import reference as ref

DATA = ref.load_data()


def check(question, params, rules, oracle, trials=40_000):
    prepared, _ = prepare(question, params, rules)
    exact = prepared.exact()
    theirs = oracle(params, rules, DATA)
    for name, ex in exact.items():
        mean = float(sum(Fraction(v) * p for v, p in theirs[name].items()))
        assert ex.mean == pytest.approx(mean, abs=1e-9), (question, name)
    assert_matches_exact(prepared, simulate(prepared, trials), exact, question)
    return exact


# ----------------------------------------------------------------------------- ram and collision (§10)

RAM = {"rammer": {"rr": 4, "hp": 5, "dr": 3, "cr": 5}, "rammed": {"rr": 2, "hp": 4, "dr": 2, "cr": 4, "hp_lost": 1}}


@pytest.mark.parametrize("rules", [{}, {"ram_dice": "plain", "ram_reply": "simultaneous"},
                                   {"ram_no_crits": "no_reply_crits"}],
                         ids=["default", "plain-simultaneous", "no_reply_crits"])
def test_ram(rules):
    check("ram", RAM, rules, ref.exact_ram)


def test_ram_profiles():
    check("ram", {"rammer": {"profile": "battleship"}, "rammed": {"profile": "cruiser", "hp_lost": 2}}, {}, ref.exact_ram)


def test_ram_reply_crits_only_when_the_rammed_model_has_an_rr_value():
    """§10 'Le collisioni o i modelli speronati senza valore di RR non causano colpi critici':
    a rammed model WITH an RR value can crit with its reply (the default, literal reading)."""
    # rammer DR 1, CR 1: any reply hit is a critical when criticals are allowed (Amb 10)
    p = {"rammer": {"rr": 1, "hp": 9, "dr": 1, "cr": 1}, "rammed": {"rr": 3, "hp": 9, "dr": 9, "cr": 9}}
    prepared, _ = prepare("ram", p)                                     # the rammed model has RR 3
    assert prepared.exact()["damage_to_rammer"].values.max() >= 4
    no_rr = {**p, "rammed": {**p["rammed"], "rr": 0}}
    prepared, _ = prepare("ram", no_rr)                                 # no RR value: no criticals
    assert prepared.exact()["damage_to_rammer"].values.max() == 1
    prepared, _ = prepare("ram", p, {"ram_no_crits": "no_reply_crits"})  # the earlier default
    assert prepared.exact()["damage_to_rammer"].values.max() == 1


@pytest.mark.parametrize("rules", [{}, {"ram_no_crits": "no_reply_crits"}])
def test_collisions_never_crit(rules):
    """'Le collisioni ... non causano colpi critici' under every reading, RR values or not."""
    p = {"a": {"hp": 9, "dr": 1, "cr": 1, "rr": 3}, "b": {"hp": 9, "dr": 1, "cr": 1, "rr": 3}}
    exact = prepare("collision", p, rules)[0].exact()
    assert exact["damage_to_a"].values.max() == 1 and exact["damage_to_b"].values.max() == 1


def test_ram_needs_rr():
    with pytest.raises(RuleError, match="RR >= 1"):
        prepare("ram", {"rammer": {"hp": 4, "dr": 3, "cr": 5}, "rammed": {"hp": 4, "dr": 3, "cr": 5}})


@pytest.mark.parametrize("rules", [{}, {"ram_no_crits": "no_reply_crits"}], ids=["default", "no_reply_crits"])
def test_collision_between_models(rules):
    check("collision", {"a": {"hp": 4, "dr": 3, "cr": 5, "rr": 2}, "b": {"hp": 3, "dr": 2, "cr": 4}}, rules,
          ref.exact_collision)


@pytest.mark.parametrize("terrain,dice", [("light", 4), ("medium", 8), ("dense", 12)])
def test_terrain_dice(terrain, dice):
    # §10: light 4D6, medium 8D6, dense 12D6 at 4+, never criticals
    exact = check("collision", {"a": {"hp": 6, "dr": 4, "cr": 5}, "terrain": terrain}, {}, ref.exact_collision)
    assert exact["damage_to_a"].values.max() == 1
    assert exact["damage_to_b"].mean == 0 and exact["p_b_destroyed"].mean == 0
    prepared, _ = prepare("collision", {"a": {"hp": 6, "dr": 4, "cr": 5}, "terrain": terrain})
    assert f"rolls {dice} dice" in prepared.notes[0]


# ----------------------------------------------------------------------------- boarding (§12)

@pytest.mark.parametrize("params,rules", [
    ({"attacker_ap": 5, "defense_dice": 3, "defender_ap": 3}, {}),
    ({"attacker_ap": 4, "defense_dice": 2, "defender_ap": 2, "half_md": True}, {"melee_dice": "plain"}),
    ({"attacker_ap": 3, "defense_dice": 2, "defender_ap": 3, "defender_md": 1},
     {"boarding_defender_dice": "fig_md", "both_zero_ap": "derelict", "boarding_defense_dice": "hit_table"}),
    ({"attacker_ap": 6, "attacker_from": "diving", "defense_dice": 4, "defender_ap": 0}, {}),
], ids=["default", "half-plain", "fig_md-derelict-hit_table", "zero-ap"])
def test_boarding(params, rules):
    check("boarding", params, rules, ref.exact_boarding)


def test_boarding_digest_cases():
    p = lambda **kw: prepare("boarding", {"attacker_from": "surface", **kw})[0].exact()  # noqa: E731
    assert p(attacker_ap=2, defense_dice=5, defender_ap=0)["p_capture"].mean == 1.0   # 0 AP boarded: captured
    # one boarder, no AA, defender 1 AP: capture iff the boarder scores and the defender does not
    assert p(attacker_ap=1, defense_dice=0, defender_ap=1)["p_capture"].mean == pytest.approx(0.25)
    # AA vs boarders hits on 5-6, one AP each
    assert p(attacker_ap=1, defense_dice=1, defender_ap=1)["p_capture"].mean == pytest.approx(2 / 3 * 1 / 4)


def test_boarding_fig_md_needs_defender_md():
    with pytest.raises(RuleError, match="defender_md"):
        prepare("boarding", {"attacker_ap": 3, "defender_ap": 2}, {"boarding_defender_dice": "fig_md"})


# ----------------------------------------------------------------------------- rout test (§8)

@pytest.mark.parametrize("dice_params,n", [({"out_of_command": True}, 2), ({}, 3), ({"near_commodore": True}, 4)])
def test_rout_oracle(dice_params, n):
    # digest §8: P(>= 1) = 0.750 / 0.875 / 0.938 and P(>= 2) = 0.417 / 0.625 / 0.771 with 2 / 3 / 4 dice
    p1 = {2: 0.750, 3: 0.875, 4: 0.938}[n]
    p2 = {2: 0.417, 3: 0.625, 4: 0.771}[n]
    one = prepare("rout_test", {"squadron_size": 4, "models_lost": 1, **dice_params})[0]
    two = prepare("rout_test", {"squadron_size": 4, "models_lost": 2, **dice_params})[0]
    assert f"{n} rout dice, 1 success" in one.notes[0] and f"{n} rout dice, 2 success" in two.notes[0]
    assert one.exact()["p_pass"].mean == pytest.approx(p1, abs=0.0005 + 1e-12)   # digest rounds to 3 places
    assert two.exact()["p_pass"].mean == pytest.approx(p2, abs=0.0005 + 1e-12)


def test_rout_successes_needed():
    need = lambda **kw: prepare("rout_test", kw)[0].notes[0].split(", ")[1]  # noqa: E731
    assert need(squadron_size=3, models_lost=1) == "1 success(es) needed"
    assert need(squadron_size=3, models_lost=2) == "2 success(es) needed"      # half or more lost
    assert need(squadron_size=4, models_lost=1, commodore_lost=True) == "2 success(es) needed"
    assert need(squadron_size=4, models_lost=2, commodore_lost=True) == "3 success(es) needed"


@pytest.mark.parametrize("params", [{"squadron_size": 3, "models_lost": 2, "commodore_lost": True},
                                    {"squadron_size": 5, "models_lost": 1, "near_commodore": True}])
def test_rout_mc_matches_exact(params):
    check("rout_test", params, {}, lambda p, r, d: ref.exact_rout_test(p, r, d))


# ----------------------------------------------------------------------------- mines (§11)

MINE = {"attack_dice": 6, "weapon": "mine", "range_band": 1, "target": {"dr": 3, "cr": 5, "hp": 4}}


@pytest.mark.parametrize("rules", [{}, {"mine_vs_submerged": "submerged_number"}], ids=["same_roll", "submerged_number"])
def test_mine_against_submerged_matches_reference(rules):
    sub = {**MINE, "target": {**MINE["target"], "state": "submerged"}}
    check("attack", sub, rules, ref.exact_attack)


def test_one_mine_roll_counts_for_surface_and_submerged_models():
    """'Il numero di colpiti verrà applicato a ogni modello ... sotto la sagoma (sia in superficie
    che immersi)': by default a submerged model under the template takes the same hits."""
    surface = prepare("attack", MINE)[0].exact()
    sub_params = {**MINE, "target": {**MINE["target"], "state": "submerged"}}
    submerged = prepare("attack", sub_params)[0].exact()
    for name in ("hits", "p_damage", "p_critical"):
        assert submerged[name].mean == surface[name].mean, name
    other = prepare("attack", sub_params, {"mine_vs_submerged": "submerged_number"})[0].exact()
    assert other["hits"].mean < surface["hits"].mean          # the earlier reading: hit on the submerged number


def test_what_if_rule_values_are_noted_in_every_run(tmp_path):
    """melee_dice: plain contradicts the melee table the source spells out: it stays available
    to compare, and every run that uses it says it is not a reading of the source."""
    from analyzer import api
    from analyzer.core import scenario as scenario_mod
    from analyzer.games.dystopian_wars.rules import OPTIONS
    assert OPTIONS["melee_dice"].what_if == ("plain",)
    doc = {"game": "dystopian_wars", "question": "boarding", "trials": 4096, "rules": {"melee_dice": "plain"},
           "params": {"attacker_ap": 4, "defense_dice": 1, "defender_ap": 2}}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(doc))
    (res,) = api.exact(scenario_mod.load(tmp_path / "s.yaml"))
    assert any(n.startswith("rules.melee_dice = plain is NOT a reading of the source") for n in res.notes)
    doc["rules"] = {}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(doc))
    (res,) = api.exact(scenario_mod.load(tmp_path / "s.yaml"))
    assert not any("NOT a reading" in n for n in res.notes)
