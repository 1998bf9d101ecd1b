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


@pytest.mark.parametrize("rules", [{}, {"trained_points": "table", "irregular_veteran_points": "table"}])
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
     {"trained_points": "table"}),
    # defence: a sniper (+1 to be hit) section leader (save +1, not added to cover's: "no acumulativos")
    ("points_efficiency", {"unit": {"quality": "elite", "weapons": ["sniper_rifle"], "leadership": 1,
                                    "section_leader": True},
                           "attackers": [{"quality": "militia", "weapons": ["lmg"]}, {"quality": "veteran"}],
                           "targets": [{"quality": "fanatic", "cover": True}], "ranges_cm": [30, 90]}, {}),
])
def test_reference_simulation_matches_exact(question, params, rules):
    _, p, prep = prepare(question, params, rules)
    ex = prep.exact()
    out = R.simulate(question, p.model_dump(mode="json"), rules, DATA, 8_000, 11)
    for m in prep.metrics:
        xs = np.asarray(out[m.name], float)
        assert_mean_matches(xs.mean(), xs.std() / np.sqrt(len(xs)), ex[m.name].mean, what=f"{question} {m.name}")


# ----------------------------------------------------------------------------- issue 28 rules in the reference
# (pure reference: hand-checkable values and firefight properties that the pre-issue-28 loop fails)

def _nd(weapon, quality="veteran", rules=None, range_cm=40, **kw):
    return R.needed_and_dice(DATA, rules or {}, weapon, None, range_cm, quality, **kw)


def test_reference_heavy_anti_tank_at_men():
    """§7 "(Milán) no puede realizarse a figuras": barred by default, the table cell when allowed."""
    for w in ("milan", "tank_gun"):
        assert _nd(w, range_cm=80) == (7, 0)
        assert _nd(w, rules={"heavy_at_vs_men": "allowed"}, range_cm=80)[1] == 1
    assert _nd("milan", rules={"heavy_at_vs_men": "allowed"}, range_cm=40) == (5, 1)
    assert _nd("milan", rules={"heavy_at_vs_men": "allowed"}, range_cm=80) == (6, 1)


def test_reference_poor_troops_weapons():
    """Militia +1: light arms only (MMG 5+ as a veteran's) or every small arm (MMG 6+); an AR gets it both ways."""
    assert _nd("mmg") == (5, 4)
    assert _nd("mmg", "militia") == (5, 4)
    assert _nd("mmg", "militia", {"poor_troops_weapons": "all_small_arms"}) == (6, 4)
    assert _nd("assault_rifle") == (4, 1)
    for opt in ("light_arms", "all_small_arms"):
        assert _nd("assault_rifle", "militia", {"poor_troops_weapons": opt}) == (5, 1)


def test_reference_support_weapons_after_a_cautious_move():
    """A move of 5 cm or less bars the MMG/HMG under not_moved_only, not under cautious_move (no +1 either
    way); a move above 5 cm bars them always; an AR after a cautious move has no +1."""
    for w, dice in (("mmg", 4), ("hmg", 5)):
        assert _nd(w, cautious=True) == (7, 0)
        assert _nd(w, rules={"support_after_move": "cautious_move"}, cautious=True) == (5, dice)
        assert _nd(w, rules={"support_after_move": "cautious_move"}, moved=True) == (7, 0)
    assert _nd("assault_rifle", cautious=True) == (4, 1)
    assert _nd("rpg", cautious=True) == (5, 1) and _nd("rpg", moved=True) == (7, 0)


@pytest.mark.parametrize("opts", list(itertools.product(["barred", "allowed"], ["light_arms", "all_small_arms"],
                                                        ["not_moved_only", "cautious_move"])))
def test_to_hit_matches_reference_issue_28_options(opts):
    """shooting.to_hit and the reference agree on every weapon x mode x range x quality x move x cover
    under the issue-28 options (the sweep above has no Milan, no MMG, no cautious move)."""
    rules = dict(zip(("heavy_at_vs_men", "poor_troops_weapons", "support_after_move"), opts))
    r = {**RULES, **rules}
    for weapon, spec in DATA["weapons"].items():
        for mode, rng, quality, (moved, cautious), cover in itertools.product(
                spec["modes"], [5, 20, 40, 80, 120], ["veteran", "militia", "special_forces"],
                [(False, False), (True, False), (False, True)], [False, True]):
            th = to_hit(BN, weapon, mode, rng, quality, r, moved=moved, cautious=cautious, cover=cover)
            need, dice = R.needed_and_dice(DATA, rules, weapon, mode, rng, quality, moved=moved,
                                           cautious=cautious, cover=cover)
            assert (th.dice, th.needed if th.dice else 7) == (dice, need if dice else 7), \
                (weapon, mode, rng, quality, moved, cautious, cover)


def test_reference_section_leaders():
    """Inline section_leader: true / list role: section_leader: save +1 like the team leader, but not the
    team leader (irregular loss 5 DP, not 10)."""
    _, men, _, _ = R._team(DATA, {"quality": "militia", "figures": [
        {"leader": True, "leadership": 2}, {"section_leader": True, "leadership": 1}, {"n": 2}]})
    assert [(m.is_leader, m.section_leader) for m in men] == [(True, False), (False, True), (False, False),
                                                               (False, False)]
    dp = DATA["game"]["defeat_points"]
    assert [R._loss_dp(DATA, m) for m in men] == [dp["irregular_leader_lost"]] + [dp["irregular_lost"]] * 3
    sl = men[1]
    assert R.save_on(DATA, {}, sl.quality, leader=sl.is_leader or sl.section_leader) == \
        R.save_on(DATA, {}, "militia") - 1


def test_reference_range_steps():
    assert R.range_steps({"start_cm": 40, "closing_cm": 15, "min_cm": 5}) == [40, 25, 10, 5]
    assert R.range_steps({"start_cm": 40, "closing_cm": 0, "min_cm": 5}) == [40]
    assert R.range_steps({"start_cm": 5, "closing_cm": 10, "min_cm": 5}) == [5]
    assert R.range_steps({}) == [40]


def _ff(params, rules=None, trials=300, seed=1):
    return R.simulate("firefight", params, rules or {}, DATA, trials, seed)


def _mmg_post(advancing, closing):
    """One veteran MMG in cover (side_a) against 5 militia in the open (side_b), from 80 cm: beyond
    opportunity range (50 cm) for all 3 turns, so side_a can only hurt side_b when it is the active team."""
    return {"side_a": {"quality": "veteran", "cover": True, "figures": [{"weapons": ["mmg"]}]},
            "side_b": {"quality": "militia", "figures": [{"n": 5}]}, "turn_limit": 3,
            "range": {"start_cm": 80, "closing_cm": closing, "min_cm": 5, "advancing": advancing}}


def test_reference_defender_keeps_its_support_weapon():
    """advancing: side_b: the MMG team never moves, so its MMG fires whenever it is active (it kills);
    advancing: side_a (10 cm or 5 cm moves): the MMG never fires (casualties_b is 0 in every trial),
    unless a 5 cm move allows it (cautious_move). The pre-issue-28 loop closed the range on every turn
    whoever was active, so a 10 cm step silenced the defender's MMG, and a 5 cm step never did."""
    assert sum(c > 0 for c in _ff(_mmg_post("side_b", 10))["casualties_b"]) > 100
    assert sum(_ff(_mmg_post("side_a", 10))["casualties_b"]) == 0
    assert sum(_ff(_mmg_post("side_a", 5))["casualties_b"]) == 0
    assert sum(c > 0 for c in _ff(_mmg_post("side_a", 5), {"support_after_move": "cautious_move"})
               ["casualties_b"]) > 100


def _diff_sigmas(xs, ys):
    """(mean(xs) - mean(ys)) / its standard error (independent samples)."""
    xs, ys = np.asarray(xs, float), np.asarray(ys, float)
    se = np.sqrt(xs.var(ddof=1) / len(xs) + ys.var(ddof=1) / len(ys))
    return (xs.mean() - ys.mean()) / se


PATROL = {"side_a": {"list": "patrol_marines", "cover": False}, "side_b": {"list": "patrol_taliban", "cover": True},
          "range": {"start_cm": 40, "closing_cm": 0, "min_cm": 5}}


def test_reference_shocked_in_cover_hidden_prolongs_the_patrol():
    """The Taliban are in cover: under hidden their shocked figures cannot be fired at, so the Marines run
    out of targets and more games reach the turn limit (about 0.65 against 0.31 at 2000 trials; with 800
    trials each the difference is ~15 SE; asserted > 5 SE). The old loop ignored the option: difference 0."""
    hidden = _ff(PATROL, {}, 800, 5)["p_turn_limit"]
    targetable = _ff(PATROL, {"shocked_in_cover": "targetable"}, 800, 5)["p_turn_limit"]
    assert _diff_sigmas(hidden, targetable) > 5


def test_reference_shocked_in_the_open_only_counts_covered_beyond_25_cm():
    """Both teams in the open: at 20 cm hidden and targetable are the same game (same seed, same trials);
    at 40 cm the shocked figures count as in cover and the games differ."""
    def open_game(start):
        return {"side_a": {"list": "patrol_marines"}, "side_b": {"list": "patrol_taliban"},
                "range": {"start_cm": start, "closing_cm": 0, "min_cm": 5}}
    assert _ff(open_game(20), {}, 150, 3) == _ff(open_game(20), {"shocked_in_cover": "targetable"}, 150, 3)
    assert _ff(open_game(40), {}, 150, 3) != _ff(open_game(40), {"shocked_in_cover": "targetable"}, 150, 3)


def test_reference_movement_reaction_needs_a_move():
    """No closing move (closing_cm 0): resolved_first and simultaneous are the same game."""
    assert _ff(PATROL, {}, 100, 7) == _ff(PATROL, {"movement_reaction": "simultaneous"}, 100, 7)


ADVANCE = {"side_a": {"quality": "veteran", "figures": [{"n": 5}]},
           "side_b": {"quality": "veteran", "figures": [{"n": 5}]},
           "range": {"start_cm": 40, "closing_cm": 10, "min_cm": 5, "advancing": "side_a"}}


def test_reference_resolved_first_blunts_the_advance():
    """5 veterans advancing 10 cm a turn on 5 veterans (both in the open): under resolved_first the
    opportunity fire is resolved before the movers fire, and a mover it hits loses its action, so the
    advancing side kills fewer (casualties_b ~2.3 against ~3.2 at 2000 trials; with 1000 trials each
    the difference is ~12 SE; asserted > 5 SE). The old loop had no such option: difference 0."""
    first = _ff(ADVANCE, {}, 1000, 9)["casualties_b"]
    simultaneous = _ff(ADVANCE, {"movement_reaction": "simultaneous"}, 1000, 9)["casualties_b"]
    assert _diff_sigmas(simultaneous, first) > 5
