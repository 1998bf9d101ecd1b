"""The production exact modes against the reference's brute-force Fractions (analyzer/games/
breaking_news/reference.py, written separately): shot distributions, morale, melee, list costs, to-hit."""
import itertools

import pytest

from analyzer.games.breaking_news.data import QUALITIES
from analyzer.games.breaking_news.lists import scenario_list_points
from analyzer.games.breaking_news.shooting import to_hit
from tests.breaking_news.helpers import data, prepare
from tests.breaking_news.test_bn_shot import SHOT_CASES
from analyzer.games.breaking_news import reference as R

DATA = R.load_data()
BN, RULES = data()


@pytest.mark.parametrize("params,rules", SHOT_CASES, ids=["example", "lmg", "hmg-group", "sf-sniper", "rpg"])
def test_shot_exact_matches_reference_enumeration(params, rules):
    _, _, prep = prepare("shot", params, rules)
    ours = prep.exact()
    theirs = R.exact_shot(params, rules, DATA)
    for name, ex in ours.items():
        mean = sum(v * p for v, p in theirs[name].items())
        assert ex.mean == pytest.approx(float(mean), abs=1e-12), name
        for v, p in zip(ex.values, ex.probs):
            assert p == pytest.approx(float(theirs[name].get(int(v), 0)), abs=1e-12), (name, v)


SWEEP = list(itertools.product(["assault_rifle", "lmg", "hmg", "sniper_rifle", "rpg", "pistol", "light_mortar"],
                               [5, 20, 40, 80, 120], ["special_forces", "veteran", "fanatic"],
                               [False, True], [False, True]))


@pytest.mark.parametrize("rules", [{}, {"burst_overflow": "per_modifier", "aimed_over_6": "six_hits"},
                                   {"burst_weapons": "ar_burst_only", "natural_1_to_hit": "hit"}])
def test_to_hit_matches_reference_everywhere(rules):
    """Every weapon x range x quality x cover x dodge (and moved) cell, both modes, three rule sets."""
    r = {**RULES, **rules}
    for weapon, rng, quality, cover, dodge in SWEEP:
        for mode in DATA["weapons"][weapon]["modes"]:
            for moved in (False, True):
                th = to_hit(BN, weapon, mode, rng, quality, r, moved=moved, cover=cover, dodge=dodge)
                need, dice = R.needed_and_dice(DATA, rules, weapon, mode, rng, quality, moved=moved, cover=cover,
                                               dodge=dodge)
                assert (th.dice, th.needed if th.dice else 7) == (dice, need if dice else 7), \
                    (weapon, mode, rng, quality, cover, dodge, moved)


@pytest.mark.parametrize("n,cas,half", [(n, c, h) for n in (2, 3, 4) for c in (1, 3, 6, 7) for h in (False, True)])
def test_morale_exact_matches_reference(n, cas, half):
    _, _, prep = prepare("morale", {"morale_dice": n, "casualties": cas, "half_losses": half})
    assert prep.exact()["p_pass"].mean == pytest.approx(float(R.morale_pass_probability(n, cas, half)), abs=1e-15)


@pytest.mark.parametrize("att,dfd", [(a, d) for a in QUALITIES[:4] for d in QUALITIES[4:]])
@pytest.mark.parametrize("rules", [{}, {"melee_ties": "no_result"}])
def test_melee_exact_matches_reference(att, dfd, rules):
    _, _, prep = prepare("melee", {"attackers": [{"quality": att, "shocked": True}, {"quality": "militia"}],
                                   "defender": {"quality": dfd}}, rules)
    ex = prep.exact()
    melee = {q: DATA["troop_qualities"][q]["melee"] for q in QUALITIES}
    w, l_, t = R.melee_odds([(melee[att], True), (melee["militia"], False)], (melee[dfd], False),
                            ties=rules.get("melee_ties", "reroll"))
    assert (ex["p_attacker_wins"].mean, ex["p_defender_wins"].mean, ex["p_no_result"].mean) == \
        pytest.approx((float(w), float(l_), float(t)), abs=1e-15)


@pytest.mark.parametrize("rules", [{}, {"trained_points": "list", "irregular_veteran_points": "table"}])
def test_list_costs_match_reference(rules):
    for name in DATA["scenario_lists"]:
        assert scenario_list_points(BN, name, {**RULES, **rules})[0] == R.list_cost(DATA, rules, name), name


# ----------------------------------------------------------------------------- reference simulations

import numpy as np  # noqa: E402

from analyzer.core import scenario as scenario_mod  # noqa: E402
from analyzer.run.runner import prepare_point  # noqa: E402
from tests.breaking_news.helpers import SCEN  # noqa: E402
from tests.stat_checks import assert_mean_matches  # noqa: E402


@pytest.mark.parametrize("path", sorted(SCEN.glob("*.yaml")), ids=lambda p: p.name)
def test_reference_plays_every_shipped_scenario(path):
    """What tests/test_reference_agreement.py checks for the other games: same metric names, 0/1
    probabilities, values inside the kernel's histogram (first and last sweep point)."""
    sc = scenario_mod.load(path)
    assert sc.spec.question in R.QUESTIONS
    for point in {id(p): p for p in (sc.points[0], sc.points[-1])}.values():
        prepared = prepare_point(sc, point)
        params = point.params.model_dump(mode="json", exclude_unset=True)
        n = 5 if sc.spec.question == "firefight" else 20
        out = R.simulate(sc.spec.question, params, point.rules, DATA, n, sc.spec.seed)
        assert set(out) == {m.name for m in prepared.metrics}
        for m in prepared.metrics:
            assert len(out[m.name]) == n and min(out[m.name]) >= 0
            if m.is_probability:
                assert set(out[m.name]) <= {0, 1}
            assert max(out[m.name]) <= (prepared.n_bins - 1) / m.scale


@pytest.mark.parametrize("question,params,rules", [
    ("morale", {"quality": "militia", "casualties": 3, "leader_lost": True}, {}),
    ("melee", {"attackers": [{"quality": "militia"}, {"quality": "fanatic", "shocked": True}],
               "defender": {"quality": "elite"}}, {"melee_group": "best_individual", "melee_ties": "no_result"}),
    ("building_assault", {"attackers": 3, "attacker_quality": "veteran", "defenders": 2,
                          "defender_quality": "commando"}, {}),
    ("points_efficiency", {"unit": {"quality": "veteran", "weapons": ["lmg"]}, "ranges_cm": [20, 60]}, {}),
    ("points_efficiency", {"unit": {"quality": "trained", "weapons": ["assault_rifle", "grenade_launcher"]}},
     {"trained_points": "list"}),
])
def test_reference_simulation_matches_exact(question, params, rules):
    _, p, prep = prepare(question, params, rules)
    ex = prep.exact()
    out = R.simulate(question, p.model_dump(mode="json"), rules, DATA, 8_000, 11)
    for m in prep.metrics:
        xs = np.asarray(out[m.name], float)
        assert_mean_matches(xs.mean(), xs.std() / np.sqrt(len(xs)), ex[m.name].mean, what=f"{question} {m.name}")
