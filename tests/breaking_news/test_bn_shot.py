"""``shot``: the source's worked example (the issue's reference scenario), every to-hit modifier
and rule option, MC against the exact mode within 5 SE, placeholders and validation."""
from fractions import Fraction

import pytest

from analyzer import api
from analyzer.run import runner
from analyzer.core import scenario
from analyzer.core.errors import ScenarioError
from analyzer.games.breaking_news.shooting import NO_HIT, save_face, to_hit
from tests.breaking_news.helpers import SCEN, assert_mc_matches_exact, data, prepare

BN, RULES = data()


def th(weapon, mode, rng, quality, rules=None, **kw):
    return to_hit(BN, weapon, mode, rng, quality, {**RULES, **(rules or {})}, **kw)


def test_fanatic_ak_burst_example():
    """§8: "un fanático armado con un Kalashnikov dispara una ráfaga (3 disparos) a un enemigo situado
    a 40 cm y éste declara esquivar ... El resultado necesario sería 8. En este caso la figura que
    dispara pierde 2D6 e impacta a 6." """
    t = th("assault_rifle", "burst", 40, "fanatic", dodge=True)
    assert t.base == 6 and sum(v for _, v in t.modifiers) == 2
    assert (t.needed, t.dice) == (6, 1)
    # the other reading of the overflow rule (A3) gives the same answer here
    t2 = th("assault_rifle", "burst", 40, "fanatic", {"burst_overflow": "per_modifier"}, dodge=True)
    assert (t2.needed, t2.dice) == (6, 1)


def test_reference_scenario_exact_answer():
    """Issue 13: target_number = 6, dice = 1, P(hits >= 1) = 1/6 for shot_fanatic_burst.yaml."""
    res = api.exact(scenario.load(SCEN / "shot_fanatic_burst.yaml"))
    s = res[0].summaries
    assert s["target_number"].mean == 6 and s["dice"].mean == 1
    assert s["hits"].mean == pytest.approx(1 / 6, abs=1e-15)
    _, _, prep = prepare("shot", {"weapon": "assault_rifle", "mode": "burst", "range_cm": 40,
                                  "shooter": {"quality": "fanatic"}, "target": {"quality": "veteran", "dodge": True}})
    ex = prep.exact()
    assert ex["hits"].probs[1] == pytest.approx(1 / 6, abs=1e-15)
    # veteran saves 3+: casualty = 1/6 * 2/6; the dodging veteran is in the open, so it throws itself to
    # the ground and is shocked whenever it survives (§6.5, §10): 1 - 1/18 (it was 1/6 * 4/6 = 1/9, the
    # hit-and-saved case only, before issue 28)
    assert ex["casualties"].mean == pytest.approx(float(Fraction(1, 6) * Fraction(2, 6)), abs=1e-15)
    assert ex["shocked"].mean == pytest.approx(float(1 - Fraction(1, 18)), abs=1e-15)


@pytest.mark.parametrize("kw,expected", [
    ({}, 4),                                             # AR aimed <= 50
    ({"moved": True}, 5),                                # +1 moved more than 5 cm
    ({"cover": True}, 5),                                # +1 target in cover
    ({"dodge": True}, 5),                                # +1 dodges
    ({"target_sniper": True}, 5),                        # +1 target is a sniper
    ({"cover": True, "dodge": True, "moved": True}, 7),  # aimed needing 7: no hit (A5 default)
])
def test_modifiers_add_to_the_number_needed(kw, expected):
    t = th("assault_rifle", "aimed", 40, "veteran", **kw)
    assert t.base + sum(v for _, v in t.modifiers) == expected
    assert t.needed == (expected if expected <= 6 else NO_HIT)
    assert t.dice == (1 if expected <= 6 else 0)


def test_quality_modifier_small_arms_only():
    """"+1 si un recluta, fanático o milicia dispara (sólo pequeñas armas, no granadas, RPG´s...)"."""
    for q in ("recruit", "fanatic", "militia"):
        assert th("assault_rifle", "aimed", 20, q).needed == 4
        assert th("rpg", "aimed", 20, q).needed == 4
    assert th("assault_rifle", "aimed", 20, "commando").needed == 3


def test_special_forces_minus_one_not_on_bursts():
    """"-1 si el que dispara es de las Fuerzas Especiales (no ráfagas)"; applied once (A4 default:
    every multi-die fire is a burst)."""
    assert th("assault_rifle", "aimed", 40, "special_forces").needed == 3
    assert th("assault_rifle", "burst", 40, "special_forces").needed == 6
    assert th("lmg", "burst", 40, "special_forces").needed == 5
    assert th("lmg", "burst", 40, "special_forces", {"burst_weapons": "ar_burst_only"}).needed == 4
    assert th("assault_rifle", "aimed", 40, "special_forces", sf=False).needed == 4


def test_sf_sniper_needing_1_natural_1_option():
    """A5: an SF sniper at 25 cm needs 2 - 1 = 1."""
    assert th("sniper_rifle", None, 20, "special_forces").needed == 2
    assert th("sniper_rifle", None, 20, "special_forces", {"natural_1_to_hit": "hit"}).needed == 1


def test_cover_and_dodge_exemptions():
    """Cover "no es aplicable a francotiradores, granadas, RPG y lanzallamas"; "El fuego de
    francotiradores no puede ser esquivado"."""
    for w in ("sniper_rifle", "rpg", "flamethrower", "grenade"):
        rng = 5 if w in ("grenade", "flamethrower") else 20
        assert not any("cover" in n for n, _ in th(w, None, rng, "veteran", cover=True).modifiers), w
    assert th("sniper_rifle", None, 20, "veteran", dodge=True).modifiers == ()


def test_burst_overflow_readings_differ_beyond_the_example():
    """Base 6 + moved + cover + fanatic = 9: per point over 6 loses 3 dice (none left); per modifier
    also 3. Base 5 (100 cm AR aimed is 5; LMG at 50 is 5) + 2 = 7: per point loses 1, per modifier 2."""
    t = th("lmg", "burst", 50, "fanatic", cover=True)
    assert (t.needed, t.dice) == (6, 3)
    t = th("lmg", "burst", 50, "fanatic", {"burst_overflow": "per_modifier"}, cover=True)
    assert (t.needed, t.dice) == (5, 2)
    t = th("assault_rifle", "burst", 40, "fanatic", moved=True, cover=True, dodge=True)
    assert t.dice == 0


def test_aimed_over_6_option():
    t = th("assault_rifle", "aimed", 80, "fanatic", {"aimed_over_6": "six_hits"}, cover=True)
    assert (t.needed, t.dice) == (6, 1)
    assert th("assault_rifle", "aimed", 80, "fanatic", cover=True).dice == 0


def test_crew_served_and_movement_limits():
    """"+1 si una MMG o HMG se queda con sólo 1 soldado de dotación (salvo que ... esté fija o en una
    torreta)"; §6.1 RPG / sniper only after moving up to 5 cm, MMG/HMG only if they did not move."""
    assert th("mmg", None, 40, "veteran", crew=1).needed == 6
    assert th("mmg", None, 40, "veteran", crew=1, fixed=True).needed == 5
    assert th("mmg", None, 40, "veteran", crew=2).needed == 5
    for w in ("mmg", "hmg", "rpg", "sniper_rifle", "milan"):
        assert th(w, None, 40, "veteran", moved=True).dice == 0, w
    assert th("lmg", None, 40, "veteran", moved=True).dice == 4


def test_range_limits():
    assert th("pistol", None, 10, "veteran").dice == 1
    assert th("pistol", None, 11, "veteran").dice == 0
    assert th("light_mortar", None, 9, "veteran").dice == 0
    assert th("light_mortar", None, 10, "veteran").dice == 1
    assert th("assault_rifle", "aimed", 151, "veteran").dice == 0


def test_save_faces():
    """§9: die >= Save; +1 leader / cover not cumulative (A6); a natural 1 always dies."""
    assert save_face(BN, "veteran", RULES) == 3
    assert save_face(BN, "veteran", RULES, leader=True, cover=True) == 2
    assert save_face(BN, "militia", RULES, leader=True, cover=True) == 4
    assert save_face(BN, "militia", {**RULES, "save_bonus": "sum"}, leader=True, cover=True) == 3
    assert save_face(BN, "special_forces", RULES, cover=True) == 2   # 1+ would save on a 1: the 1 still dies


SHOT_CASES = [
    ({"weapon": "assault_rifle", "mode": "burst", "range_cm": 40, "shooter": {"quality": "fanatic"},
      "target": {"quality": "veteran", "dodge": True}}, {}),
    ({"weapon": "lmg", "range_cm": 20, "shooter": {"quality": "elite"}, "target": {"quality": "militia"}}, {}),
    ({"weapon": "hmg", "range_cm": 120, "shooter": {"quality": "veteran"}, "target": {"quality": "elite",
      "cover": True, "leader": True}, "shooters": 2}, {}),
    ({"weapon": "sniper_rifle", "range_cm": 20, "shooter": {"quality": "special_forces"},
      "target": {"quality": "commando"}}, {"natural_1_to_hit": "hit"}),
    ({"weapon": "rpg", "range_cm": 60, "shooter": {"quality": "militia", "moved": False},
      "target": {"quality": "trained", "cover": True}}, {}),
]


@pytest.mark.parametrize("params,rules", SHOT_CASES, ids=["example", "lmg", "hmg-group", "sf-sniper", "rpg"])
def test_shot_mc_matches_exact(params, rules):
    _, _, prep = prepare("shot", params, rules)
    assert_mc_matches_exact(prep, 100_000, what=str(params))


def test_placeholders_are_listed_and_strict_refuses(tmp_path):
    """A placeholder is listed only where it can change the metric: the grenade launcher's
    ``cover_applies`` placeholder at a target in cover (see the test below for the open)."""
    _, _, prep = prepare("shot", {"weapon": "grenade_launcher", "range_cm": 30, "shooter": {"quality": "veteran"},
                                  "target": {"quality": "militia", "cover": True}})
    assert any(ph.path == "weapons.grenade_launcher.cover_applies" for ph in prep.placeholders)
    assert any("confidence M" in n for n in prep.notes)
    _, _, prep = prepare("shot", {"weapon": "assault_rifle", "mode": "burst", "range_cm": 40,
                                  "shooter": {"quality": "fanatic"}, "target": {"quality": "veteran"}})
    assert not prep.placeholders
    f = tmp_path / "s.yaml"
    f.write_text("game: breaking_news\nquestion: shot\nstrict: true\nparams: {weapon: grenade_launcher, "
                 "range_cm: 30, shooter: {quality: veteran}, target: {quality: militia, cover: true}}\n")
    with pytest.raises(ScenarioError, match="placeholder"):
        sc = scenario.load(f)
        runner.prepare_point(sc, sc.points[0])


def test_grenade_launcher_cover_placeholder_only_for_a_target_in_cover():
    """Issue 28 item 9: ``weapons.grenade_launcher.cover_applies`` (a PLACEHOLDER: the cover exemption
    names 'granadas, RPG', the table groups the grenade launcher with them) can change the shot only
    when the target is in cover; in the open it is not listed, and a strict scenario runs."""
    path = "weapons.grenade_launcher.cover_applies"
    shot = {"weapon": "grenade_launcher", "range_cm": 30, "shooter": {"quality": "veteran"}}
    _, _, covered = prepare("shot", {**shot, "target": {"quality": "militia", "cover": True}})
    assert [ph.path for ph in covered.placeholders] == [path]
    _, _, open_ = prepare("shot", {**shot, "target": {"quality": "militia"}})
    assert path not in [ph.path for ph in open_.placeholders] and not open_.placeholders
    # dodge_applies is a shipped value (no placeholder), used only when the target dodges
    _, _, dodging = prepare("shot", {**shot, "target": {"quality": "militia", "dodge": True}})
    assert path not in [ph.path for ph in dodging.placeholders]


def test_table_cell_notes_carry_the_cell_confidence():
    """Issue 28 item 9: a shot's notes give the confidence of the shooting-table cell it rests on, an
    empty reconstructed cell too (the AR has no cell beyond 100 cm: confidence L, a guess)."""
    _, _, prep = prepare("shot", {"weapon": "assault_rifle", "mode": "aimed", "range_cm": 40,
                                  "shooter": {"quality": "veteran"}, "target": {"quality": "veteran"}})
    assert any(n.startswith("table 4 (assault_rifle aimed, cell confidence H)") for n in prep.notes)
    _, _, prep = prepare("shot", {"weapon": "smg", "range_cm": 40, "shooter": {"quality": "veteran"},
                                  "target": {"quality": "veteran"}})
    assert any(n.startswith("table 6 (smg burst, cell confidence M)") for n in prep.notes)
    _, _, prep = prepare("shot", {"weapon": "assault_rifle", "mode": "aimed", "range_cm": 125,
                                  "shooter": {"quality": "veteran"}, "target": {"quality": "veteran"}})
    assert prep.args[1] == 0                                       # no dice: the cell is empty
    assert "no table cell at 125 cm (confidence L)" in prep.notes
    assert "reconstructed table cell assault_rifle aimed at 125 cm (band <= 150 cm), empty (no shot): " \
           "confidence L (guess)" in prep.notes
    t = th("assault_rifle", "aimed", 125, "veteran")
    assert (t.base, t.dice, t.confidence) == (None, 0, "L")
    t = th("pistol", "aimed", 40, "veteran")                       # an empty cell nobody doubts: no note
    assert t.confidence == "-" and not t.notes


def test_validation_names_field_and_allowed_values(tmp_path):
    f = tmp_path / "s.yaml"
    f.write_text("game: breaking_news\nquestion: shot\nparams: {weapon: lmg, mode: aimed, range_cm: 30, "
                 "shooter: {quality: veteran}, target: {quality: militia}}\n")
    with pytest.raises(ScenarioError, match=r"params\.mode.*allowed: burst"):
        sc = scenario.load(f)
        runner.prepare_point(sc, sc.points[0])
    f.write_text("game: breaking_news\nquestion: shot\nparams: {weapon: laser, range_cm: 30, "
                 "shooter: {quality: veteran}, target: {quality: militia}}\n")
    with pytest.raises(ScenarioError, match=r"weapon.*assault_rifle"):
        scenario.load(f)


# ----------------------------------------------------------------------------- dodging (§6.5, §10), issue 28

def _fanatic_burst(target, weapon="assault_rifle", mode="burst", range_cm=40):
    return {"weapon": weapon, "mode": mode, "range_cm": range_cm, "shooter": {"quality": "fanatic"},
            "target": target}


def test_dodging_into_the_open_shocks_automatically():
    """§6.5 "Si no encuentra protección a esa distancias la figura puede tirarse al suelo, pero se
    encontrará, automáticamente, conmocionada (ver 10)"; §10 "Un soldado estará conmocionado cuando ...
    o cuando se tire al suelo buscando protección". The shipped example: the veteran dodging a fanatic's
    AK burst in the open is shocked unless killed: P = 1 - (1/6)(2/6) = 17/18 (0.111 before issue 28)."""
    res = api.exact(scenario.load(SCEN / "shot_fanatic_burst.yaml"))
    s = res[0].summaries
    assert s["shocked"].mean == pytest.approx(17 / 18, abs=1e-15)
    assert s["shocked"].mean + s["casualties"].mean == pytest.approx(1.0, abs=1e-15)
    _, _, prep = prepare("shot", _fanatic_burst({"quality": "veteran", "dodge": True}))
    assert prep.args[-1] is True
    assert any("throws itself to the ground" in n for n in prep.notes)


def test_dodging_into_cover_is_not_shocked_by_the_dodge():
    """``dodge`` with ``cover``: the figure reached cover within 5 cm ("alcancen la cobertura"): only a
    hit it saves shocks it. Fanatic AK burst at 40 cm: 6 + 1 fanatic + 1 dodge + 1 cover = 9, 3 dice
    lost: no dice left, no shot. AK aimed at 20 cm by a veteran: 3 + 1 + 1 = 5, 1 die at 1/3; the
    veteran in cover saves on 2+ (5/6): shocked = 1/3 * 5/6."""
    _, _, prep = prepare("shot", _fanatic_burst({"quality": "veteran", "dodge": True, "cover": True}))
    assert prep.exact()["shocked"].mean == 0.0
    params = {"weapon": "assault_rifle", "mode": "aimed", "range_cm": 20, "shooter": {"quality": "veteran"},
              "target": {"quality": "veteran", "dodge": True, "cover": True}}
    _, _, prep = prepare("shot", params)
    assert prep.args[-1] is False
    assert prep.exact()["shocked"].mean == pytest.approx(float(Fraction(1, 3) * Fraction(5, 6)), abs=1e-15)


def test_sniper_fire_cannot_be_dodged_so_no_dodge_shock():
    """§6.5 "El fuego de francotiradores no puede ser esquivado": no +1 and no throw to the ground.
    Veteran sniper at 20 cm needs 2 (5/6); the veteran target saves 3+ (4/6): shocked = 5/6 * 4/6."""
    params = {"weapon": "sniper_rifle", "range_cm": 20, "shooter": {"quality": "veteran"},
              "target": {"quality": "veteran", "dodge": True}}
    _, _, prep = prepare("shot", params)
    assert prep.args[-1] is False
    assert prep.exact()["shocked"].mean == pytest.approx(float(Fraction(5, 6) * Fraction(4, 6)), abs=1e-15)


def test_no_die_rolled_is_no_shot_to_dodge():
    """A fire that rolls no die (pistol beyond 10 cm) is no shot: the dodging target is not shocked."""
    _, _, prep = prepare("shot", {"weapon": "pistol", "range_cm": 20, "shooter": {"quality": "veteran"},
                                  "target": {"quality": "militia", "dodge": True}})
    assert prep.args[1] == 0 and prep.args[-1] is False
    assert prep.exact()["shocked"].mean == 0.0


DODGE_CASES = [
    _fanatic_burst({"quality": "veteran", "dodge": True}),
    {"weapon": "lmg", "range_cm": 40, "shooter": {"quality": "elite"}, "target": {"quality": "militia", "dodge": True}},
    {"weapon": "lmg", "range_cm": 40, "shooter": {"quality": "elite"},
     "target": {"quality": "militia", "dodge": True, "cover": True, "leader": True}},
    {"weapon": "sniper_rifle", "range_cm": 60, "shooter": {"quality": "veteran"},
     "target": {"quality": "trained", "dodge": True}},
]
DODGE_IDS = ["example", "lmg-open", "lmg-cover", "sniper"]


@pytest.mark.parametrize("params", DODGE_CASES, ids=DODGE_IDS)
def test_dodge_exact_matches_reference_enumeration(params):
    from analyzer.games.breaking_news import reference as R
    _, _, prep = prepare("shot", params)
    theirs = R.exact_shot(params, None, R.load_data())
    for name, ex in prep.exact().items():
        assert ex.mean == pytest.approx(float(sum(v * p for v, p in theirs[name].items())), abs=1e-12), name
        for v, p in zip(ex.values, ex.probs):
            assert p == pytest.approx(float(theirs[name].get(int(v), 0)), abs=1e-12), (name, v)


@pytest.mark.parametrize("params", DODGE_CASES, ids=DODGE_IDS)
def test_dodge_mc_matches_exact(params):
    _, _, prep = prepare("shot", params)
    assert_mc_matches_exact(prep, 100_000, what=str(params))


def test_dodge_reference_simulation_matches_exact():
    import numpy as np
    from analyzer.games.breaking_news import reference as R
    from tests.stat_checks import assert_mean_matches
    params = DODGE_CASES[1]
    _, p, prep = prepare("shot", params)
    out = R.simulate("shot", p.model_dump(mode="json"), {}, R.load_data(), 20_000, 7)
    for name, ex in prep.exact().items():
        xs = np.asarray(out[name], float)
        assert_mean_matches(xs.mean(), xs.std() / np.sqrt(len(xs)), ex.mean, what=name)
