"""Digest numbers and examples of docs/rules/dystopian_wars.md as tests of the game layer
(face tables, to-hit selection, legality, AD, linked fire, damage) and of the attack kernel."""
import numpy as np
import pytest
from dw_helpers import GAME_DIR, rules_for, run, summary

from analyzer.core import exact
from analyzer.games.dystopian_wars import rules as R
from analyzer.games.dystopian_wars.fire_allocation import even_parts
from analyzer.core.gamedata import load_data
from tests.stat_checks import assert_mean_matches

DATA, _ = load_data(GAME_DIR / "data" / "dystopian_wars.yaml")


# ----------------------------------------------------------------------------- §1 hit table

def test_hit_table_faces():
    # §1: 1-3 miss, 4-5 one hit, 6 two hits and roll again; a natural 1 always fails
    v, e = R.hit_faces(4)
    assert v[1:].tolist() == [0, 0, 0, 1, 1, 2] and e[1:].tolist() == [False] * 5 + [True]
    v, e = R.hit_faces(2, mod=2)
    assert v[1] == 0                                          # natural 1 fails even at 2+ with +2
    # Amb 4: a 5 made 6 by +1 scores 2 without an extra die, or 1
    v, e = R.hit_faces(4, mod=1)
    assert v[5] == 2 and not e[5] and e[6]
    assert R.hit_faces(4, 1, True, "one_hit")[0][5] == 1
    # Amb 5 plain reading: one hit per success, never exploding
    v, e = R.hit_faces(4, explode=False)
    assert v[1:].tolist() == [0, 0, 0, 1, 1, 1] and not e.any()
    assert R.cancel_faces(DATA)[0][1:].tolist() == [0, 0, 0, 0, 1, 2]      # §11: 5 cancels 1, 6 cancels 2
    assert R.rout_faces(DATA)[0][1:].tolist() == [0, 0, 0, 1, 1, 2]        # §8: 4-5 = 1, 6 = 2


@pytest.mark.parametrize("t,expected", [(3, 1.0), (4, 0.8), (5, 0.6), (6, 0.4)])
def test_expected_hits_per_die_exact(t, expected):
    # digest §1 oracle: 3+ 1.0, 4+ 0.8, 5+ 0.6, 6 only 0.4
    assert exact.die_chain(*R.hit_faces(t)).mean() == pytest.approx(expected, abs=1e-12)
    assert (8 - t) / 5 == pytest.approx(expected)


#: attack parameters whose rules select each to-hit number (through the question's own path)
PER_DIE = [
    (3, {"range_band": 1}),                                               # primary in RB1: 4+ -> 3+
    (4, {}),                                                              # surface target: 4+
    (5, {"attacker": {"capital": True}, "target": {"size": "small"}}),    # Capital vs small: 5-6
    (6, {"target": {"state": "submerged"}}),                              # submerged: 6 (RB2 legal)
]


@pytest.mark.parametrize("t,extra", PER_DIE, ids=[f"{t}+" for t, _ in PER_DIE])
def test_expected_hits_per_die_kernel(t, extra):
    params = {"attack_dice": 10, "weapon": "primary", "range_band": 2,
              "target": {"dr": 5, "cr": 8, "hp": 6}}
    for k, v in extra.items():
        params[k] = {**params[k], **v} if isinstance(v, dict) and k in params else v
    prepared, acc = run("attack", params, trials=40_000)
    assert prepared.notes[0].startswith(f"10 dice at {t}+")
    s, _ = summary(prepared, acc, "hits")
    assert_mean_matches(s.mean / 10, s.se / 10, (8 - t) / 5, what=f"hits per die at {t}+")


# ----------------------------------------------------------------------------- to-hit and legality

def th(weapon="primary", band=2, capital=True, astate="surface", rules=None, size="medium", state="surface",
       fast=False, elusive=False):
    return R.to_hit_number(weapon, band, capital, astate, size, state, fast, elusive, rules_for("attack", rules), DATA)


def test_to_hit_selection():
    assert th() == 4
    assert th(band=1) == 3                                   # §11 primaries -1 in RB1: 4+ -> 3+
    assert th(weapon="secondary", band=1) == 4               # only primaries
    assert th(size="small") == 5                             # Capital vs small: 5-6
    assert th(size="small", capital=False) == 4              # small rule is Capital-only
    assert th(size="small", band=1) == 4                     # Amb 3 default: -1 after the hardest number
    assert th(size="small", band=1, rules={"primary_rb1_vs_set_number": "hardest_wins"}) == 5
    assert th(state="diving") == 5                           # surfaced diving model 5+
    assert th(state="submerged") == 6
    assert th(state="obscured", astate="flying") == 6        # Amb 1 default
    assert th(state="obscured", astate="flying", rules={"obscured_to_hit": "size_based"}) == 5
    assert th(state="obscured", astate="flying", size="small", capital=False,
              rules={"obscured_to_hit": "size_based"}) == 6
    assert th(astate="obscured") == 6                        # an obscured model hits on 6
    assert th(fast=True) == 6 and th(elusive=True) == 5
    assert th(fast=True, capital=False) == 4                 # Amb 7 default: Capital attackers only
    assert th(fast=True, capital=False, rules={"fast_elusive_scope": "all"}) == 6
    assert th(weapon="mine", size="small", fast=True) == 4   # mines ignore small/fast/elusive
    assert th(weapon="rocket", size="small", band=1) == 5    # the -1 is for primaries only


def test_legality():
    r = rules_for("attack")
    legal = lambda w, b, a, size, s, rr=r: R.illegal_reason(w, b, a, size, s, rr) is None  # noqa: E731
    assert not legal("primary", 1, "surface", "medium", "submerged")          # Amb 2 default: not in RB1
    assert legal("primary", 2, "surface", "medium", "submerged")
    only = rules_for("attack", {"surface_vs_submerged": "only_rb1"})
    assert legal("primary", 1, "surface", "medium", "submerged", only)
    assert not legal("primary", 2, "surface", "medium", "submerged", only)
    assert not legal("primary", 2, "surface", "tiny", "surface")              # never at tiny models
    assert not legal("primary", 2, "submerged", "medium", "surface")          # submerged: torpedoes only
    assert legal("torpedo", 2, "submerged", "medium", "surface")
    assert not legal("primary", 1, "surface", "medium", "flying")             # no gunnery at flyers in RB1
    assert not legal("torpedo", 2, "surface", "medium", "flying")
    assert not legal("bomb", 2, "surface", "medium", "surface")               # bombs: flyers only
    assert not legal("bomb", 2, "flying", "medium", "flying")                 # bombs vs large/massive flyers
    assert legal("bomb", 2, "flying", "large", "flying")


# ----------------------------------------------------------------------------- AD, linked and split fire

def test_ad_degradation():
    assert R.degrade(10, 3, "primary") == 7
    assert R.degrade(3, 5, "secondary") == 1                 # never below 1
    assert R.degrade(0, 1, "primary") == 0                   # no AD in that band stays 0
    assert R.degrade(8, 4, "rocket") == 8                    # rockets/torpedoes/bombs/mines not reduced
    assert R.degrade_aux(3, 5) == 1 and R.degrade_aux(0, 1) == 0


def test_linked_fire_formula():
    # §11: lead full, each other model half rounded down; an AD of 1 stays 1
    assert [R.half_ad(a) for a in (1, 2, 3, 7, 13)] == [1, 1, 1, 3, 6]
    assert R.linked_ad([10, 5, 1, 3], [0, 1, 2, 3], "halved") == 10 + 2 + 1 + 1
    assert R.linked_ad([13, 13], [0, 0], "halved") == 19     # two AD-13 turrets of one model (Amb 6)
    assert R.linked_ad([13, 13], [0, 0], "full") == 26
    assert even_parts(13, 2) == [7, 6]                       # the source's split: 7 + 6


def test_attack_linked_dice():
    prepared, _ = run("attack", {"attack_dice": 10, "linked_ad": [5, 1], "own_linked_ad": [4],
                                 "target": {"dr": 5, "cr": 8, "hp": 6}}, trials=10)
    assert prepared.notes[0].startswith("15 dice")           # 10 + 2 + 1 + 2
    prepared, _ = run("attack", {"attack_dice": 10, "own_linked_ad": [4], "target": {"dr": 5, "cr": 8, "hp": 6}},
                      rules={"own_weapons_link": "full"}, trials=10)
    assert prepared.notes[0].startswith("14 dice")


# ----------------------------------------------------------------------------- damage (§11)

def dmg(hits, dr=5, cr=8, hp=6, hp_lost=0, crits=True, rule="two_damage", crit=(2,)):
    h = np.zeros(hits + 1)
    h[hits] = 1.0
    d = R.damage_distribution(h, dr, cr, hp, hp_lost, crits, rule, np.array(crit), np.ones(len(crit), int))
    return int(np.argmax(d))


def test_damage_rules():
    # DR 5 / CR 8: hits >= DR -> 1 HP; >= CR -> floor(hits / CR) criticals of 2 HP instead
    assert [dmg(h) for h in (0, 4, 5, 7, 8, 15, 16, 24)] == [0, 0, 1, 1, 2, 2, 4, 6]
    assert dmg(10, dr=3, cr=5, hp=2, hp_lost=1) == 2                         # started with <= 2 HP: 2 damage
    assert dmg(10, dr=3, cr=5, hp=2, hp_lost=1, rule="destroyed") == 1       # destroyed: the remaining HP
    assert dmg(10, dr=3, cr=5, hp=2, hp_lost=1, rule="off") == 4             # two ordinary criticals
    assert dmg(9, crits=False) == 1                                          # no criticals: 1 HP
