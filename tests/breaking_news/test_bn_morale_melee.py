"""``morale``, ``melee`` and ``building_assault``: the source's worked examples, exact tables
checked by hand, and MC against the exact mode within 5 SE."""
from fractions import Fraction

import pytest

from analyzer.games.breaking_news.melee import MELEE_GROUP_CODES, casualties_given_hits, exact_melee, saves_per_figure
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
    w, l_, t = exact_melee([3], [False], 1, False, -2, "one_die_sum_modifiers", reroll=False)
    # P(d_a + 3 > d_d + 1) = P(d_d - d_a < 2); tie when d_d - d_a = 2 (4 ways)
    assert (w, l_, t) == (Fraction(26, 36), Fraction(6, 36), Fraction(4, 36))
    w, l_, t = exact_melee([3], [False], 1, False, -2, "one_die_sum_modifiers", reroll=True)
    assert (w, l_, t) == (Fraction(26, 32), Fraction(6, 32), 0)
    # shocked veteran: 3 - 2 = 1: even fight
    w, l_, _ = exact_melee([3], [True], 1, False, -2, "one_die_sum_modifiers", reroll=True)
    assert w == l_ == Fraction(1, 2)
    # three militia against one veteran: one die + 1 + 1 + 1 = even with the veteran's +3
    w, l_, _ = exact_melee([1, 1, 1], [False] * 3, 3, False, -2, "one_die_sum_modifiers", reroll=True)
    assert w == l_ == Fraction(1, 2)
    w, _, _ = exact_melee([1, 1, 1], [False] * 3, 3, False, -2, "best_individual", reroll=True)
    assert w < Fraction(1, 2)


@pytest.mark.parametrize("params,rules", [
    ({"attackers": [{"quality": "veteran"}], "defender": {"quality": "militia"}}, {}),
    ({"attackers": [{"quality": "militia"}, {"quality": "fanatic", "shocked": True}],
      "defender": {"quality": "elite"}}, {"melee_group": "best_individual"}),
    ({"attackers": [{"quality": "militia"}] * 3, "defender": {"quality": "veteran", "shocked": True}},
     {"melee_ties": "no_result"}),
    ({"attackers": [{"quality": "militia"}, {"quality": "fanatic", "shocked": True}, {"quality": "recruit"}],
      "defender": {"quality": "elite"}}, {"melee_group": "one_die_each_summed"}),
    ({"attackers": [{"quality": "militia"}, {"quality": "militia"}], "defender": {"quality": "special_forces"}},
     {"melee_group": "one_die_each_summed", "melee_ties": "no_result"}),
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
    assert prep.args[:4] == (28, 6, 4, 5)
    ex = prep.exact()
    assert ex["attacker_hits"].mean == pytest.approx(28 / 6)
    assert ex["defender_hits"].mean == pytest.approx(4 / 3)
    assert_mc_matches_exact(prep, 50_000, what="building")


# ----------------------------------------------------------------------------- melee_group one_die_each_summed

def _two_d6(total):
    return 6 - abs(total - 7) if 2 <= total <= 12 else 0


def test_melee_group_values_match_the_kernel_codes():
    from analyzer.games.breaking_news.rules import MELEE_GROUP
    assert set(MELEE_GROUP.values) == set(MELEE_GROUP_CODES) and MELEE_GROUP.default == "one_die_sum_modifiers"


def test_melee_one_die_each_summed_by_hand():
    """§11 "se resuelve tirando 1D6 por cada figura combatiente ... se añaden los modificadores de cada uno
    de las figuras envueltas": two militia (Melee 1 each) roll 2D6 + 2 against a veteran's 1D6 + 3. They win
    when 2D6 - D6 > 1, tie when it is 1 (counted over the 2D6 totals, not by enumeration)."""
    win = sum(Fraction(_two_d6(t), 36) * Fraction(min(max(t - 2, 0), 6), 6) for t in range(2, 13))
    tie = sum(Fraction(_two_d6(t), 36) * Fraction(1 if 1 <= t - 1 <= 6 else 0, 6) for t in range(2, 13))
    w, l_, t = exact_melee([1, 1], [False, False], 3, False, -2, "one_die_each_summed", reroll=False)
    assert (w, t, l_) == (win, tie, 1 - win - tie)
    # 2D6 totals 3..12 win against 1, 2, ... 6 defender faces: (2 + 6 + 12 + 20 + 30 + 30 + 24 + 18 + 12 + 6)
    # / 216; ties: the defender die is total - 1, for totals 2..7: 21 / 216
    assert (w, t) == (Fraction(160, 216), Fraction(21, 216))
    # the default reading: one die + 2 against 1D6 + 3 wins when d_a - d_d >= 2 (10 of 36)
    w0, _, _ = exact_melee([1, 1], [False, False], 3, False, -2, "one_die_sum_modifiers", reroll=False)
    assert w0 == Fraction(10, 36) and w0 < w
    # one attacker: every reading is the same fight
    for group in MELEE_GROUP_CODES:
        assert exact_melee([3], [True], 1, False, -2, group, True) == exact_melee([3], [True], 1, False, -2,
                                                                                  "one_die_sum_modifiers", True)
    with pytest.raises(ValueError, match="allowed: one_die_sum_modifiers"):
        exact_melee([1], [False], 1, False, -2, True, reroll=True)


def test_melee_one_die_each_summed_is_a_rule_option():
    """Regression (issue 28): the value was refused before; the default is unchanged."""
    params = {"attackers": [{"quality": "militia"}, {"quality": "militia"}], "defender": {"quality": "veteran"}}
    _, _, prep = prepare("melee", params, {"melee_group": "one_die_each_summed"})
    assert prep.args[6] == MELEE_GROUP_CODES["one_die_each_summed"]
    ex = prep.exact()
    assert ex["p_attacker_wins"].mean == pytest.approx(160 / 195, abs=1e-15)   # ties re-rolled: 160 / (216 - 21)
    _, _, default = prepare("melee", params)
    assert default.args[6] == 0 and default.exact()["p_attacker_wins"].mean == pytest.approx(10 / 31, abs=1e-15)


@pytest.mark.parametrize("att,dfd", [(("militia", False), ("veteran", False)),
                                     (("fanatic", True), ("elite", True)),
                                     (("special_forces", False), ("militia", False))])
@pytest.mark.parametrize("ties", ["reroll", "no_result"])
@pytest.mark.parametrize("n_att", [2, 3])
def test_melee_summed_exact_matches_reference(att, dfd, ties, n_att):
    from analyzer.games.breaking_news import reference as R
    data = R.load_data()
    melee = {q: v["melee"] for q, v in data["troop_qualities"].items()}
    attackers = [{"quality": att[0], "shocked": att[1]}] + [{"quality": "recruit"}] * (n_att - 1)
    _, _, prep = prepare("melee", {"attackers": attackers, "defender": {"quality": dfd[0], "shocked": dfd[1]}},
                         {"melee_group": "one_die_each_summed", "melee_ties": ties})
    ex = prep.exact()
    w, l_, t = R.melee_odds([(melee[a["quality"]], a.get("shocked", False)) for a in attackers],
                            (melee[dfd[0]], dfd[1]), group="one_die_each_summed", ties=ties)
    assert (ex["p_attacker_wins"].mean, ex["p_defender_wins"].mean, ex["p_no_result"].mean) == \
        pytest.approx((float(w), float(l_), float(t)), abs=1e-15)


# ----------------------------------------------------------------------------- building casualties (§11.1)

EXAMPLE = {"attackers": 7, "attacker_quality": "elite", "defenders": 4, "defender_quality": "militia"}


def _binom(n, k, p):
    from math import comb
    return comb(n, k) * p ** k * (1 - p) ** (n - k)


def _expected_removed(dice, p_hit, figures, p_sv, pooled=False):
    """E[figures removed], by linearity (not from the distribution): per figure, P(removed) = 1 - p_sv**saves
    with the hits dealt one per figure in turn; pooled, E[min(figures, failed saves)]."""
    total = Fraction(0)
    for h in range(dice + 1):
        if pooled:
            e = sum(_binom(h, k, 1 - p_sv) * min(k, figures) for k in range(h + 1))
        else:
            q, r = divmod(h, figures)
            e = r * (1 - p_sv ** (q + 1)) + (figures - r) * (1 - p_sv ** q)
        total += _binom(dice, h, p_hit) * e
    return total


def test_building_assault_example_casualties():
    """§11.1: 28 Ranger dice hit on 6 against 4 militia saving on 5+ (1/3); 4 militia dice hit on 5+ against
    7 Elite saving on 3+ (2/3). Each side spreads the saves it takes over its figures ("una de las 4 figuras,
    a elección del jugador, tendrá que hacer doble tirada"), a figure goes at its first failed save.
    Regression (issue 28): the question reported hits only."""
    _, _, prep = prepare("building_assault", EXAMPLE)
    ex = prep.exact()
    militia = _expected_removed(28, Fraction(1, 6), 4, Fraction(1, 3))
    rangers = _expected_removed(4, Fraction(1, 3), 7, Fraction(2, 3))
    assert float(militia) == pytest.approx(2.599118882, abs=1e-9)
    assert rangers == Fraction(4, 9)   # at most 4 hits on 7 figures: one save each, E = 4/3 * 1/3
    assert ex["defender_casualties"].mean == pytest.approx(float(militia), abs=1e-12)
    assert ex["attacker_casualties"].mean == pytest.approx(float(rangers), abs=1e-12)
    assert sum(ex["defender_casualties"].probs) == pytest.approx(1.0, abs=1e-12)
    # every failed save removing a figure (rule option building_saves: pooled) gives 2.791
    _, _, pooled = prepare("building_assault", EXAMPLE, {"building_saves": "pooled"})
    e_pooled = _expected_removed(28, Fraction(1, 6), 4, Fraction(1, 3), pooled=True)
    assert float(e_pooled) == pytest.approx(2.791010963, abs=1e-9)
    assert pooled.exact()["defender_casualties"].mean == pytest.approx(float(e_pooled), abs=1e-12)
    # the building as cover for the defenders (building_save_cover: defenders): militia save 4+
    _, _, cover = prepare("building_assault", EXAMPLE, {"building_save_cover": "defenders"})
    assert cover.args[-2] == 4
    assert cover.exact()["defender_casualties"].mean == pytest.approx(
        float(_expected_removed(28, Fraction(1, 6), 4, Fraction(1, 2))), abs=1e-12)
    assert cover.exact()["attacker_casualties"].mean == pytest.approx(float(rangers), abs=1e-12)


def test_building_assault_example_narrative():
    """The example's facts: "Los americanos consiguen 5 impactos y los Talibanes 1. Éstos tienen ahora 5
    tiradas de salvación (una de las 4 figuras ... tendrá que hacer doble tirada). 2 de las figuras pasan el
    test. Los Ranger deben realizar solo un test, el cual es pasado. El próximo turno, los Ranger tendrán 28
    dados ... mientras que los Talibanes sólo 2"."""
    _, _, prep = prepare("building_assault", EXAMPLE)
    ex = prep.exact()
    assert ex["attacker_hits"].probs[5] == pytest.approx(float(_binom(28, 5, Fraction(1, 6))), abs=1e-15)
    assert ex["defender_hits"].probs[1] == pytest.approx(32 / 81, abs=1e-15)
    assert saves_per_figure(5, 4) == [2, 1, 1, 1]
    # 2 of 4 militia pass: the double-save figure dies (8/9) and 1 of 3 singles (3 * 2/3 * 1/9), or it lives
    # (1/9) and 2 of 3 singles die (3 * 4/9 * 1/3)
    given5 = casualties_given_hits(5, 4, Fraction(1, 3), "per_figure")
    assert given5[2] == Fraction(8, 9) * Fraction(6, 27) + Fraction(1, 9) * Fraction(12, 27) == Fraction(20, 81)
    assert sum(given5) == 1
    # the Rangers' one save passes with 2/3: no Ranger lost, 28 dice next turn; 2 militia left: 2 dice
    assert casualties_given_hits(1, 7, Fraction(2, 3), "per_figure")[0] == Fraction(2, 3)
    _, _, nxt = prepare("building_assault", {**EXAMPLE, "defenders": 2})
    assert nxt.args[:4] == (28, 6, 2, 5)


@pytest.mark.parametrize("dice,hit_face,figures,save_face,saves", [
    (4, 6, 2, 5, "per_figure"), (5, 5, 2, 3, "per_figure"), (6, 5, 3, 4, "per_figure"),
    (5, 5, 2, 3, "pooled"), (6, 6, 4, 2, "pooled"), (3, 5, 7, 3, "per_figure"),
])
def test_building_casualties_match_reference_enumeration(dice, hit_face, figures, save_face, saves):
    from analyzer.games.breaking_news import reference as R
    from analyzer.games.breaking_news.melee import exact_building_side
    _, cas = exact_building_side(dice, hit_face, figures, Fraction(7 - save_face, 6), saves)
    theirs = R.building_casualties_enumerated(dice, hit_face, figures, save_face, pooled=saves == "pooled")
    assert cas == [theirs.get(c, Fraction(0)) for c in range(figures + 1)]


@pytest.mark.parametrize("params,rules", [
    (EXAMPLE, {"building_saves": "pooled"}),
    (EXAMPLE, {"building_save_cover": "defenders"}),
    ({"attackers": 10, "attacker_quality": "special_forces", "defenders": 2, "defender_quality": "recruit"}, {}),
    ({"attackers": 3, "attacker_quality": "militia", "defenders": 5, "defender_quality": "veteran"},
     {"building_saves": "pooled", "building_save_cover": "defenders"}),
])
def test_building_mc_matches_exact(params, rules):
    _, _, prep = prepare("building_assault", params, rules)
    assert_mc_matches_exact(prep, 50_000, what=f"{params} {rules}")


@pytest.mark.parametrize("rules", [{}, {"building_saves": "pooled", "building_save_cover": "defenders"}])
def test_building_reference_simulation_matches_exact(rules):
    import numpy as np
    from analyzer.games.breaking_news import reference as R
    from tests.stat_checks import assert_mean_matches
    params = {"attackers": 4, "attacker_quality": "veteran", "defenders": 3, "defender_quality": "fanatic"}
    _, p, prep = prepare("building_assault", params, rules)
    out = R.simulate("building_assault", p.model_dump(mode="json"), rules, R.load_data(), 20_000, 5)
    for m in prep.metrics:
        xs = np.asarray(out[m.name], float)
        assert_mean_matches(xs.mean(), xs.std() / np.sqrt(len(xs)), prep.exact()[m.name].mean, what=m.name)


def test_building_rule_options_are_validated(tmp_path):
    from analyzer.run import runner
    from analyzer.core import scenario
    from analyzer.core.errors import ScenarioError
    f = tmp_path / "b.yaml"
    f.write_text("game: breaking_news\nquestion: building_assault\nrules: {building_saves: spread}\n"
                 "params: {attackers: 2, attacker_quality: elite, defenders: 1, defender_quality: militia}\n")
    with pytest.raises(ScenarioError, match=r"rules\.building_saves.*allowed: per_figure, pooled"):
        sc = scenario.load(f)
        runner.prepare_point(sc, sc.points[0])


# ----------------------------------------------------------------------------- rule options a question uses

def test_morale_refuses_the_firefight_s_morale_casualties(tmp_path):
    """Issue 28 item 9: ``morale`` is given the casualties counted, so ``rules.morale_casualties`` (which
    casualties count: the firefight's choice) changes nothing there; it was accepted and silently
    ignored. It is refused, naming the file, the field, the question that reads it and the options
    morale uses (none), in ``rules:`` and in a sweep alike."""
    from analyzer.core import scenario
    from analyzer.core.errors import ScenarioError
    f = tmp_path / "m.yaml"
    base = "game: breaking_news\nquestion: morale\nparams: {morale_dice: 3, casualties: 2}\n"
    f.write_text(base + "rules: {morale_casualties: cumulative}\n")
    with pytest.raises(ScenarioError) as e:
        scenario.load(f)
    text = str(e.value)
    assert str(f) in text and "rules.morale_casualties" in text
    assert "morale does not use this rule option" in text and "firefight" in text
    assert "the rule options morale uses: none" in text
    f.write_text(base + "sweep: {rules.morale_casualties: [this_turn, cumulative]}\n")
    with pytest.raises(ScenarioError, match=r"sweep\.rules\.morale_casualties: morale does not use"):
        scenario.load(f)
    # an option of the same name family that no question has stays an unknown option
    f.write_text(base + "rules: {morale_casualty: cumulative}\n")
    with pytest.raises(ScenarioError, match=r"rules\.morale_casualty: unknown rule option"):
        scenario.load(f)


def test_every_question_lists_exactly_the_rule_options_it_reads():
    """Each Breaking News question's ``rule_options`` are the options its ``prepare`` reads: over every
    point of the shipped scenarios, plus a few points reaching the options read only in corners (a
    needed score under 2, a heavy anti-tank weapon, a support weapon after a cautious move), the options
    read are exactly the options listed."""
    from collections import defaultdict

    from analyzer.core import questions, scenario
    from tests.breaking_news.helpers import SCEN, context

    class Recording(dict):
        def __init__(self, rules, log):
            super().__init__(rules)
            self.log = log

        def __getitem__(self, key):
            self.log.add(key)
            return super().__getitem__(key)

        def get(self, key, *default):
            self.log.add(key)
            return super().get(key, *default)

    read = defaultdict(set)

    def run(q, params, ctx):
        ctx.rules = Recording(ctx.rules, read[q.name])
        q.prepare(params, ctx)

    for path in sorted(SCEN.glob("*.yaml")):
        sc = scenario.load(path)
        for pt in sc.points:
            run(sc.question, pt.params, sc.context(pt))
    corners = {
        "shot": [{"weapon": "sniper_rifle", "range_cm": 25, "shooter": {"quality": "special_forces"},
                  "target": {"quality": "veteran"}}],
        "points_efficiency": [{"unit": {"quality": "veteran", "weapons": ["milan"]}}],
        "firefight": [{"side_a": {"quality": "veteran", "figures": [{"n": 1, "leadership": 1, "leader": True},
                                                                    {"n": 1, "weapons": ["mmg"]}]},
                       "side_b": {"quality": "militia", "figures": [{"n": 3}]},
                       "range": {"start_cm": 40, "closing_cm": 5, "min_cm": 20, "advancing": "side_a"}}],
    }
    for name, cases in corners.items():
        q = questions.get("breaking_news", name)
        for params in cases:
            run(q, q.Params.model_validate(params), context(q))
    for q in questions.questions_of("breaking_news"):
        assert read[q.name] == {o.name for o in q.rule_options}, q.name
