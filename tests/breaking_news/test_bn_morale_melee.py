"""``morale``, ``melee`` and ``building_assault``: the source's worked examples, exact tables
checked by hand, and MC against the exact mode within 5 SE."""
from fractions import Fraction

import pytest

from analyzer.games.breaking_news.melee import exact_melee
from analyzer.games.breaking_news.morale import exact_p_pass
from tests.breaking_news.helpers import assert_mc_matches_exact, prepare


def test_platoon_morale_8d6_example():
    """§13: "Un pelotón veterano compuesto por 3 escuadras y una sección antitanque ... 3 bajas ...
    El test se realizará con la tirada de 8D6 ... Pasarán el test con al menos un 3." """
    _, _, prep = prepare("morale", {"quality": "veteran", "casualties": 3, "teams_under_half": 4})
    assert prep.args[:2] == (8, 3)
    assert prep.exact()["p_pass"].mean == pytest.approx(float(1 - Fraction(2, 6) ** 8), abs=1e-15)


@pytest.mark.parametrize("n,cas,half,expected", [
    (3, 0, False, Fraction(1)),                         # no casualties: no test
    (3, 1, False, Fraction(1)),
    (2, 4, False, 1 - Fraction(3, 6) ** 2),             # a 4, 5 or 6
    (4, 7, False, 1 - Fraction(5, 6) ** 4),             # only the automatic 6
    (4, 7, True, Fraction(0)),                          # 50% losses: the 6 no longer passes by itself
    (5, 6, True, 1 - Fraction(5, 6) ** 5),              # ... but a 6 still meets 6 casualties
])
def test_morale_exact_by_hand(n, cas, half, expected):
    assert exact_p_pass(n, cas, half) == expected


def test_leader_loss_counts_two():
    """§12: "La pérdida de líder del equipo contará como 2 bajas (en vez de 1)"."""
    _, _, prep = prepare("morale", {"morale_dice": 3, "casualties": 2, "leader_lost": True})
    assert prep.args[1] == 3


@pytest.mark.parametrize("params", [
    {"morale_dice": 2, "casualties": 4},
    {"quality": "militia", "casualties": 3, "leader_lost": True},
    {"morale_dice": 5, "casualties": 8, "half_losses": True},
    {"morale_dice": 5, "casualties": 8},
])
def test_morale_mc_matches_exact(params):
    _, _, prep = prepare("morale", params)
    assert_mc_matches_exact(prep, 50_000, what=str(params))


def test_melee_exact_by_hand():
    """1D6 + Melee each, highest wins: veteran (3) vs militia (1): the veteran wins unless the militia
    die beats it by 3+. Ties re-rolled by default (placeholder reading)."""
    w, l_, t = exact_melee([3], [False], 1, False, -2, True, reroll=False)
    # P(d_a + 3 > d_d + 1) = P(d_d - d_a < 2); tie when d_d - d_a = 2 (4 ways)
    assert (w, l_, t) == (Fraction(26, 36), Fraction(6, 36), Fraction(4, 36))
    w, l_, t = exact_melee([3], [False], 1, False, -2, True, reroll=True)
    assert (w, l_, t) == (Fraction(26, 32), Fraction(6, 32), 0)
    # shocked veteran: 3 - 2 = 1: even fight
    w, l_, _ = exact_melee([3], [True], 1, False, -2, True, reroll=True)
    assert w == l_ == Fraction(1, 2)
    # three militia against one veteran: one die + 1 + 1 + 1 = even with the veteran's +3
    w, l_, _ = exact_melee([1, 1, 1], [False] * 3, 3, False, -2, True, reroll=True)
    assert w == l_ == Fraction(1, 2)
    w, _, _ = exact_melee([1, 1, 1], [False] * 3, 3, False, -2, False, reroll=True)
    assert w < Fraction(1, 2)


@pytest.mark.parametrize("params,rules", [
    ({"attackers": [{"quality": "veteran"}], "defender": {"quality": "militia"}}, {}),
    ({"attackers": [{"quality": "militia"}, {"quality": "fanatic", "shocked": True}],
      "defender": {"quality": "elite"}}, {"melee_group": "best_individual"}),
    ({"attackers": [{"quality": "militia"}] * 3, "defender": {"quality": "veteran", "shocked": True}},
     {"melee_ties": "no_result"}),
])
def test_melee_mc_matches_exact(params, rules):
    _, _, prep = prepare("melee", params, rules)
    assert_mc_matches_exact(prep, 50_000, what=str(params))
    assert any(ph.path == "rules.melee_ties" for ph in prep.placeholders)


def test_building_assault_example_dice_counts():
    """§11.1: "los Ranger lanzan 28 dados (4x7) impactando con 6. Los Talibanes tiran 4 dados impactando
    con 5 ó 6." (Its "21 dice next turn" follows from no rule: spec §5.4.)"""
    _, _, prep = prepare("building_assault", {"attackers": 7, "attacker_quality": "elite", "defenders": 4,
                                              "defender_quality": "militia"})
    assert prep.args == (28, 6, 4, 5)
    ex = prep.exact()
    assert ex["attacker_hits"].mean == pytest.approx(28 / 6)
    assert ex["defender_hits"].mean == pytest.approx(4 / 3)
    assert_mc_matches_exact(prep, 50_000, what="building")
