"""B-17 single-shot kernels (``gun_shot``, ``gun_matrix``) against the digest's oracle table
(§10), the worked example (§5), the source cells (§2.2) and the pure-Python reference's exact
answers. Monte-Carlo checks: fixed seeds, 5 standard errors (tests/stat_checks.py)."""
from __future__ import annotations

import itertools
from fractions import Fraction

import pytest

from analyzer import api
from analyzer.core import scenario as scenario_mod
from analyzer.core.questions import SCENARIO_ROOT
from kernels.b17.shot import MISS, fighter_hits, shot_damage
from tests.b17.b17_support import (assert_dist_exact, assert_mean_exact, exact_as_dict, prepare,
                                   run_kernel)
from analyzer.games.b17 import reference as ref

SEED = 20261130
COUNTS = {10: 120, 11: 165, 12: 220, 13: 283, 14: 352, 15: 425, 16: 500, 17: 575, 18: 648, 20: 780, 22: 880}
# t: (P(hit), E[II|hit], E[hits|hit] Me109 II, Me109 II+2, P(>=3|hit) Me109 II, FW190 II)   digest §10
ORACLE = {11: (0.165, 6.00, 1.87, 2.37, 0.152, 0.000),
          15: (0.425, 7.88, 2.34, 2.85, 0.431, 0.212),
          17: (0.575, 8.70, 2.54, 3.06, 0.525, 0.304),
          20: (0.780, 9.73, 2.81, 3.31, 0.641, 0.423)}


def gs(t, damage="II", fighter="Me109", prior=0, **kw):
    return {"skill": t, "modifier": 0, "damage": damage, "fighter": fighter, "prior_hits": prior, **kw}


def exact(params, rules=None):
    return prepare("gun_shot", params, rules).exact()


@pytest.fixture(scope="module")
def ref_data():
    return ref.load_data(None)


# ----------------------------------------------------------------------------- §10 oracle table, exact
@pytest.mark.parametrize("t,count", sorted(COUNTS.items()))
def test_3d10_counts_exact(t, count):
    assert exact(gs(t))["p_hit"].mean == count / 1000


@pytest.mark.parametrize("t", sorted(ORACLE))
def test_oracle_table_exact(t):
    p, e_ii, e_h, e_h2, p3, p3fw = ORACLE[t]
    me, me2, fw = exact(gs(t)), exact(gs(t, "II+2")), exact(gs(t, fighter="FW190"))
    ph = me["p_hit"].mean
    assert ph == p
    assert me["damage"].mean / ph == pytest.approx(e_ii, abs=0.005)            # E[II | hit]
    assert me["hits"].mean / ph == pytest.approx(e_h, abs=0.005)               # E[hits | hit]
    assert me2["hits"].mean / ph == pytest.approx(e_h2, abs=0.005)
    assert me["p_destroyed"].mean / ph == pytest.approx(p3, abs=0.0005)        # P(>= 3 hits | hit)
    assert fw["p_destroyed"].mean / ph == pytest.approx(p3fw, abs=0.0005)


def test_oracle_exact_fractions():
    me = exact(gs(11))
    assert Fraction(me["damage"].mean).limit_denominator(1000) / Fraction(165, 1000) == 6   # E[II | 3d10<=11] = 6
    assert Fraction(me["p_destroyed"].mean).limit_denominator(1000) == Fraction(25, 1000)   # 25/165 of the hits
    assert exact(gs(11, fighter="FW190"))["p_destroyed"].mean == 0                           # II <= 10 then


@pytest.mark.parametrize("t", [15, 20])
@pytest.mark.parametrize("damage,fighter", [("II", "Me109"), ("II+2", "Me109"), ("II", "FW190")])
def test_oracle_table_monte_carlo(t, damage, fighter):
    prepared = prepare("gun_shot", gs(t, damage, fighter))
    ex = prepared.exact()
    mc = run_kernel(prepared, 200_000, SEED + t)
    for name, em in ex.items():
        var = float(((em.values - em.mean) ** 2) @ em.probs)
        assert_mean_exact(mc[name], em.mean, var, name)
        assert_dist_exact(mc[name], exact_as_dict(em), name)


def test_matches_reference_exact_with_rule_options(ref_data):
    for params, rules in ((gs(12), {"d10_faces": "zero_to_nine"}), (gs(16, "II+2", "FW190", 1), {}),
                          (gs(15, fighter="Me110", prior=2), {"quality_dice": "second_colour"}),
                          ({"gun": "tail", "clock": "1:30", "altitude": "low", "skill": 17}, {}),
                          ({"gun": "tail", "clock": "1:30", "altitude": "low", "intercom_ok": False}, {}),
                          ({"gun": "nav_left", "clock": "1:30", "altitude": "level", "skill": 40}, {}),
                          ({"gun": "top", "clock": "6:00", "altitude": "low", "prior_hits": 2}, {})):
        mine = exact(params, rules)
        theirs = ref.exact_gun_shot(params, rules, ref_data)
        for name, em in mine.items():
            assert exact_as_dict(em) == pytest.approx({float(v): float(p) for v, p in theirs[name].items() if p},
                                                      abs=1e-12), (params, name)


def test_quality_dice_readings_identical():                    # A1: the fixed pair gives one law
    for t in (11, 15, 20):
        a = exact(gs(t, fighter="FW190"))
        b = exact(gs(t, fighter="FW190"), {"quality_dice": "second_colour"})
        assert all(exact_as_dict(a[m]) == exact_as_dict(b[m]) for m in a)


def test_zero_to_nine_faces():                                 # A2
    ex = exact(gs(12), {"d10_faces": "zero_to_nine"})
    assert ex["p_hit"].mean == sum(1 for d in itertools.product(range(10), repeat=3) if sum(d) <= 12) / 1000
    assert exact_as_dict(ex["hits"])[0] > 1 - ex["p_hit"].mean    # a hit with II = 0 inflicts no hit


# ----------------------------------------------------------------------------- §4, §5 worked example
def test_worked_example_five_damage():
    assert fighter_hits(5, 4) == 2          # Me109 / Me110: one hit per 4 or fraction
    assert fighter_hits(5, 5) == 1          # FW190: one per 5
    assert [fighter_hits(d, 4) for d in (4, 8, 9)] == [1, 2, 3]
    assert [fighter_hits(d, 5) for d in (10, 11)] == [2, 3]
    assert fighter_hits(MISS, 4) == 0


def test_damage_is_the_quality_pair_of_the_same_roll():
    assert shot_damage(6, 1, 2, 3, 0, 0, 15, 0) == 5        # II = 2 + 3, die 0 is the distinguished die
    assert shot_damage(6, 1, 2, 3, 0, 0, 15, 2) == 7        # II+2
    assert shot_damage(6, 1, 2, 3, 1, 0, 15, 0) == 3        # second_colour reading: dice (0, 1)
    assert shot_damage(14, 9, 2, 3, 0, 0, 13, 0) == MISS    # 14 > 13
    assert shot_damage(14, 9, 2, 3, 0, -2, 12, 0) == 5      # 14 - 2 <= 12


# ----------------------------------------------------------------------------- §2.2 source cells, reference scenario
def test_source_cells_lookup():
    p = {"gun": "ventral", "clock": "6:00", "altitude": "low", "skill": 15}
    assert exact(p)["p_hit"].mean == 0.575                     # -2: 3d10 <= 17
    assert exact(dict(p, clock="12:00"))["p_hit"].mean == 0.165  # +4: 3d10 <= 11
    assert exact(dict(p, clock=720))["p_hit"].mean == 0.165      # unquoted YAML 12:00 is the int 720
    assert exact(dict(p, clock="6:00"))["damage"].mean > 0      # ventral is II+2 (placeholder) ...
    assert prepare("gun_shot", dict(p, clock="6:00")).placeholders  # ... and reported as such


def test_reference_scenario_exact_is_0425():
    sc = scenario_mod.load(SCENARIO_ROOT / "b17" / "gun_shot_skill15.yaml")
    assert sc.spec.params == {"skill": 15, "modifier": 0, "damage": "II", "fighter": "Me109", "prior_hits": 0,
                              "intercom_ok": True}
    (result,) = api.exact(sc)
    assert result.summaries["p_hit"].mean == 0.425
    assert result.placeholders == []                           # every value given: no placeholder used


# ----------------------------------------------------------------------------- gun_matrix
MATRIX_CASES = [({"fighter": "FW190", "skill": 15, "intercom_ok": True}, {}),
                ({"fighter": "Me109", "skills": {"tail_gunner": 18, "engineer": 12}, "skill": 14, "prior_hits": 1,
                  "intercom_ok": False, "gun_ok": {"top": False}}, {"d10_faces": "zero_to_nine"})]


@pytest.mark.parametrize("params,rules", MATRIX_CASES)
def test_gun_matrix_exact_matches_reference(ref_data, params, rules):
    prepared = prepare("gun_matrix", params, rules)
    mine = prepared.exact()
    theirs = ref.exact_gun_matrix(params, rules, ref_data)
    assert [m.name for m in prepared.metrics] == ref.gun_matrix_metric_names(params, rules, ref_data)
    for name, em in mine.items():
        want = {float(v): float(p) for v, p in theirs[name].items() if p}
        assert exact_as_dict(em) == pytest.approx(want, abs=1e-12), name


def test_gun_matrix_masks_and_combines():
    ex = prepare("gun_matrix", {"fighter": "FW190", "skill": 15, "intercom_ok": True}).exact()
    assert ex["p_hit__ventral__0600__low"].mean == 0.575        # SOURCE cell -2
    assert "p_hit__nav_right__1030__level" not in ex             # only_clock masks the table (§2.4)
    assert "p_hit__top__1200__low" not in ex                     # grey
    single = [ex[f"p_destroyed__{g}__1200__high"].mean for g in ("nose", "top", "tail")]
    assert ex["p_destroyed_all__1200__high"].mean > max(single)
    off = prepare("gun_matrix", {"fighter": "FW190", "skill": 15, "intercom_ok": False}).exact()
    assert "p_hit__tail__1200__high" not in off                 # ** cells need the intercom (§2.3)


def test_gun_matrix_monte_carlo_vs_exact():
    prepared = prepare("gun_matrix", {"fighter": "Me109", "skill": 18, "intercom_ok": True})
    ex = prepared.exact()
    mc = run_kernel(prepared, 60_000, SEED)
    for name in ("p_destroyed__tail__0600__low", "hits__nose__1200__high", "p_hit__waist_left__0900__level",
                 "p_destroyed_all__1200__high", "hits_all__0130__level", "hits_all__0600__low",
                 "p_destroyed_all__0600__low"):
        em = ex[name]
        var = float(((em.values - em.mean) ** 2) @ em.probs)
        assert_mean_exact(mc[name], em.mean, var, name)
        assert_dist_exact(mc[name], exact_as_dict(em), name)
