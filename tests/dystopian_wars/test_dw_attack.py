"""``attack``: Monte-Carlo kernel vs exact mode (5 SE, whole distributions), exact mode vs the
reference's Fraction oracle, the issue's reference scenario through the CLI, placeholders,
``strict: true`` and validation messages."""
import json
import shutil
from fractions import Fraction

import pytest
import yaml
from dw_helpers import GAME_DIR, ROOT, assert_matches_exact, prepare, simulate
from typer.testing import CliRunner

from analyzer.cli.app import app
from analyzer.games.dystopian_wars import reference as ref

P_DAMAGE_AD10 = Fraction(94139, 110592)      # issue 4: P(hits >= 5) of 10 dice at 4+

ATTACK_CASES = [
    ({"attack_dice": 10, "target": {"dr": 5, "cr": 8, "hp": 6}}, {}),
    ({"attack_dice": 8, "weapon": "rocket", "target": {"dr": 4, "cr": 7, "hp": 4}, "defense_dice": 4}, {}),
    ({"attack_dice": 9, "weapon": "torpedo", "attacker": {"capital": True},
      "target": {"size": "small", "dr": 3, "cr": 5, "hp": 2}, "defense_dice": 2}, {}),
    ({"attack_dice": 12, "weapon": "primary", "range_band": 1, "hp_lost": 3,
      "target": {"dr": 5, "cr": 8, "hp": 6, "hp_lost": 2}}, {}),
    ({"attack_dice": 10, "to_hit_modifier": 1, "target": {"dr": 5, "cr": 7, "hp": 6}}, {"modified_six": "one_hit"}),
    ({"attack_dice": 10, "to_hit_modifier": 2, "target": {"dr": 6, "cr": 9, "hp": 6}}, {}),
    ({"attack_dice": 6, "weapon": "mine", "target": {"dr": 3, "cr": 5, "hp": 3}}, {"mine_dice": "plain"}),
    ({"attack_dice": 10, "target": {"dr": 4, "cr": 6, "hp": 2}}, {"small_hp_critical": "destroyed"}),
    ({"attack_dice": 10, "target": {"dr": 4, "cr": 6, "hp": 2}}, {"small_hp_critical": "off"}),
    ({"attack_dice": 20, "target": {"dr": 3, "cr": 4, "hp": 9}, "critical_hp": 3}, {}),
    ({"attacker": {"profile": "battleship", "weapon": "main_turrets"}, "range_band": 1,
      "target": {"profile": "cruiser"}}, {}),
    # issue 11 item 3: Ack Ack before a flyer's attack (the target profile's AA, explicit aa_dice,
    # small flyers 5-6, plain AA dice, rockets keep their AD, linked partners unaffected)
    ({"attack_dice": 8, "range_band": 1, "attacker": {"state": "flying", "dr": 3, "cr": 5, "hp": 3},
      "target": {"profile": "battleship"}}, {}),
    ({"attack_dice": 9, "range_band": 1, "hp_lost": 1, "critical_hp": 2, "aa_dice": 5,
      "attacker": {"state": "flying", "size": "small", "dr": 2, "cr": 4, "hp": 4},
      "target": {"dr": 5, "cr": 8, "hp": 6}}, {"aa_vs_flyer_dice": "plain"}),
    ({"attack_dice": 7, "weapon": "rocket", "range_band": 1, "aa_dice": 4, "defense_dice": 2,
      "attacker": {"state": "flying", "dr": 2, "cr": 3, "hp": 2}, "target": {"dr": 4, "cr": 7, "hp": 4}}, {}),
    ({"attack_dice": 6, "linked_ad": [6, 4], "range_band": 1, "aa_dice": 3,
      "attacker": {"state": "obscured", "dr": 3, "cr": 6, "hp": 4}, "target": {"dr": 5, "cr": 8, "hp": 6}}, {}),
]
IDS = ["ad10", "rockets-aa", "torpedo-small", "rb1-degraded", "mod1-one_hit", "mod2", "mine-plain",
       "small-destroyed", "small-off", "critical_hp3", "profiles", "flyer-profile-aa", "small-flyer-plain-aa",
       "flyer-rockets-aa", "obscured-linked-aa"]


def _float_dist(d: dict) -> dict:
    return {k: float(v) for k, v in d.items()}


@pytest.mark.parametrize("params,rules", ATTACK_CASES, ids=IDS)
def test_attack_mc_matches_exact(params, rules):
    prepared, _ = prepare("attack", params, rules)
    exact = prepared.exact()
    acc = simulate(prepared, 60_000)
    assert_matches_exact(prepared, acc, exact, what=str(params))


@pytest.mark.parametrize("params,rules", ATTACK_CASES, ids=IDS)
def test_attack_exact_matches_reference_oracle(params, rules):
    """Exact mode (float convolutions on analyzer.core.exact) against the reference's Fractions."""
    prepared, _ = prepare("attack", params, rules)
    ours = prepared.exact()
    theirs = ref.exact_attack(params, rules, ref.load_data())
    for name, ex in ours.items():
        dist = _float_dist(theirs[name])
        assert ex.mean == pytest.approx(sum(v * p for v, p in dist.items()), abs=1e-9), name
        for v, p in zip(ex.values, ex.probs):
            assert p == pytest.approx(dist.get(int(v), 0.0), abs=1e-12), (name, v)


def test_critical_table_from_data(tmp_path):
    """A filled critical table (weighted draws) in a scenario folder's own data file."""
    shutil.copytree(GAME_DIR / "data", tmp_path / "data")
    path = tmp_path / "data" / "dystopian_wars.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["critical_table"] = [{"effect": "a", "hp_damage": 1, "weight": 2}, {"effect": "b", "hp_damage": 3, "weight": 1}]
    path.write_text(yaml.safe_dump(doc))
    params = {"attack_dice": 14, "target": {"dr": 4, "cr": 5, "hp": 8}}
    prepared, ctx = prepare("attack", params, scenario_dir=tmp_path)
    assert not [p for p in list(prepared.placeholders) + ctx.placeholders if "critical_default" in p.path]
    exact = prepared.exact()
    theirs = ref.exact_attack(params, {}, {**ref.load_data(), "critical_table": doc["critical_table"]})
    assert exact["hp_damage"].mean == pytest.approx(float(sum(v * p for v, p in theirs["hp_damage"].items())), abs=1e-9)
    assert_matches_exact(prepared, simulate(prepared, 60_000), exact, "critical table")


# ----------------------------------------------------------------------------- the reference scenario

REFERENCE_SCENARIO = GAME_DIR / "attack_ad10.yaml"
runner = CliRunner()


def test_reference_scenario_is_shipped_as_written():
    doc = yaml.safe_load(REFERENCE_SCENARIO.read_text())
    assert doc == {"game": "dystopian_wars", "question": "attack", "seed": 1, "trials": 200000,
                   "params": {"attack_dice": 10, "weapon": "primary", "range_band": 2, "hp_lost": 0,
                              "attacker": {"capital": True, "state": "surface"},
                              "target": {"size": "medium", "state": "surface", "dr": 5, "cr": 8, "hp": 6,
                                         "fast": False, "elusive": False},
                              "defense_dice": 0}}


@pytest.fixture(scope="module")
def reference_runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("dw-ref")
    ex = runner.invoke(app, ["exact", str(REFERENCE_SCENARIO), "--json", "--out", str(out)])
    assert ex.exit_code == 0, ex.stderr
    mc = runner.invoke(app, ["run", str(REFERENCE_SCENARIO), "--json", "--out", str(out), "--no-progress"])
    assert mc.exit_code == 0, mc.stderr
    return json.loads(ex.stdout), json.loads(mc.stdout)


def test_reference_scenario_exact_via_cli(reference_runs):
    exact, _ = reference_runs
    m = exact["points"][0]["metrics"]
    assert m["p_damage"]["mean"] == pytest.approx(float(P_DAMAGE_AD10), abs=1e-12)   # 0.851228
    assert m["hits"]["mean"] == pytest.approx(8.0, abs=1e-12)                         # 10 x 0.8
    assert m["p_damage"]["se"] == 0


def test_reference_scenario_mc_within_5_se_via_cli(reference_runs):
    exact, mc = reference_runs
    assert mc["points"][0]["trials"] == 200_000
    for name, s in mc["points"][0]["metrics"].items():
        e = exact["points"][0]["metrics"][name]["mean"]
        if name.startswith("p_"):
            se = (e * (1 - e) / 200_000) ** 0.5
        else:
            se = s["se"]
        assert abs(s["mean"] - e) < 5 * se, f"{name}: {s['mean']} vs exact {e} (se {se})"


def test_reference_scenario_reports_its_placeholders(reference_runs):
    _, mc = reference_runs
    paths = {p["path"] for p in mc["placeholders"]}
    # criticals use the placeholder default (2 HP); no profile is read
    assert paths == {"dystopian_wars.critical_table", "dystopian_wars.critical_default.hp_damage"}


def test_strict_refuses_placeholders(tmp_path):
    doc = yaml.safe_load(REFERENCE_SCENARIO.read_text())
    doc["strict"] = True
    path = tmp_path / "strict.yaml"
    path.write_text(yaml.safe_dump(doc))
    r = runner.invoke(app, ["run", str(path), "--out", str(tmp_path / "out"), "-n", "1000", "--no-progress"])
    assert r.exit_code == 2 and "strict: true refuses placeholder values" in r.stderr
    doc["params"]["critical_hp"] = 2          # nothing left that the source does not give
    path.write_text(yaml.safe_dump(doc))
    r = runner.invoke(app, ["run", str(path), "--out", str(tmp_path / "out"), "-n", "1000", "--json", "--no-progress"])
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["placeholders"] == []


def test_strict_refuses_profile_placeholders(tmp_path):
    doc = yaml.safe_load((GAME_DIR / "duel_battleship_vs_cruisers.yaml").read_text())
    doc["strict"] = True
    path = tmp_path / "duel.yaml"
    path.write_text(yaml.safe_dump(doc))
    shutil.copytree(GAME_DIR / "fleets", tmp_path / "fleets")
    r = runner.invoke(app, ["run", str(path), "--out", str(tmp_path / "out"), "-n", "100", "--no-progress"])
    assert r.exit_code == 2 and "generic_naval.profiles.battleship" in r.stderr


# ----------------------------------------------------------------------------- validation at the edge

@pytest.mark.parametrize("params,rules,message", [
    ({"attack_dice": 5, "range_band": 1, "target": {"state": "submerged", "dr": 3, "cr": 5, "hp": 3}}, {},
     "cannot fire at a submerged one in RB1"),
    ({"attack_dice": 5, "target": {"state": "submerged", "dr": 3, "cr": 5, "hp": 3}},
     {"surface_vs_submerged": "only_rb1"}, "only in RB1"),
    ({"attack_dice": 5, "weapon": "torpedo", "target": {"state": "flying", "dr": 3, "cr": 5, "hp": 3}}, {},
     "torpedoes cannot affect flyers"),
    ({"attack_dice": 5, "target": {"size": "tiny", "dr": 3, "cr": 5, "hp": 3}}, {}, "tiny"),
    ({"attack_dice": 5, "attacker": {"state": "submerged"}, "target": {"dr": 3, "cr": 5, "hp": 3}}, {},
     "only with torpedoes"),
    ({"attack_dice": 5, "target": {"profile": "dreadnought"}}, {}, "unknown profile"),
])
def test_illegal_attacks_are_refused_with_the_rule(params, rules, message):
    from analyzer.games.dystopian_wars.rules import RuleError
    with pytest.raises(RuleError, match=message):
        prepare("attack", params, rules)


@pytest.mark.parametrize("doc,expect", [
    ({"params": {"attack_dice": 5, "defense_dice": 2, "target": {"dr": 3, "cr": 5, "hp": 3}}}, "defense_dice"),
    ({"params": {"attack_dice": 5, "target": {"dr": 3, "cr": 5}}}, "hp required"),
    ({"params": {"attack_dice": 5, "target": {"dr": 3, "cr": 5, "hp": 3}, "bogus": 1}}, "unknown parameter"),
    ({"params": {"attack_dice": 5, "target": {"dr": 3, "cr": 5, "hp": 3}}, "rules": {"modified_sixes": "one_hit"}},
     "did you mean 'modified_six'"),
    ({"params": {"attack_dice": 5, "target": {"dr": 3, "cr": 5, "hp": 3}}, "rules": {"ram_dice": "plain"}},
     "attack does not use this rule option (only collision, ram read it)"),   # other questions' option
    ({"params": {"attack_dice": 5, "weapon": "laser", "target": {"dr": 3, "cr": 5, "hp": 3}}}, "allowed"),
])
def test_bad_scenarios_exit_2_with_one_line(tmp_path, doc, expect):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"game": "dystopian_wars", "question": "attack", **doc}))
    r = runner.invoke(app, ["run", str(path), "--out", str(tmp_path / "out"), "-n", "10", "--no-progress"])
    assert r.exit_code == 2 and expect in r.stderr, r.stderr


def test_every_rule_option_is_declared_once():
    from analyzer.core import questions
    from analyzer.games.dystopian_wars.rules import OPTIONS
    ref_opts = ref.RULE_OPTIONS
    assert set(OPTIONS) == set(ref_opts)
    for name, o in OPTIONS.items():
        assert o.default == ref_opts[name][0] and set(o.values) == set(ref_opts[name][1]), name
    used = {o.name for q in questions.questions_of("dystopian_wars") for o in q.rule_options}
    assert used == set(OPTIONS)
    assert (ROOT / "docs" / "models" / "dystopian_wars.md").is_file()


# ----------------------------------------------------------------- issue 11 item 3: Ack Ack first
def _mean(ex):
    return float(sum(v * p for v, p in zip(ex.values, ex.probs)))


def test_ack_ack_resolved_before_a_flyer_attacks():
    """Source: "l'AA viene risolto prima dell'attacco dei volanti". A flyer's gunnery loses 1 AD
    per HP the AA takes and a destroyed flyer does not fire: with 6 AA dice (battleship profile)
    the flyer's expected hits fall below the unopposed 8 dice, by exactly the mixture over its
    HP loss (the case is pinned against the reference's Fractions in the parametrised tests)."""
    flyer = {"state": "flying", "dr": 3, "cr": 5, "hp": 3}
    base = {"attack_dice": 8, "range_band": 1, "attacker": flyer, "target": {"profile": "battleship"}}
    opposed, _ = prepare("attack", base)
    unopposed, _ = prepare("attack", dict(base, aa_dice=0))
    hits_opposed = _mean(opposed.exact()["hits"])
    hits_unopposed = _mean(unopposed.exact()["hits"])
    assert hits_unopposed == pytest.approx(8 * (3 / 6 + 2 / 6) * 6 / 5, rel=1e-12)  # 8 dice at 3+ (RB1 primary)
    assert hits_opposed < hits_unopposed - 1.0
    assert any("Ack Ack first" in n for n in opposed.notes)
    assert any("no Ack Ack" in n for n in unopposed.notes)
    # beyond 8in no AA is fired, and every run says so
    far, _ = prepare("attack", dict(base, range_band=2))
    assert any("beyond 8in" in n for n in far.notes)
    assert _mean(far.exact()["hits"]) == pytest.approx(8 * (2 / 6 + 2 / 6) * 6 / 5, rel=1e-12)  # 4+ in RB2


def test_ack_ack_refused_where_the_source_does_not_allow_it():
    with pytest.raises(Exception, match="Ack Ack answers only a flyer"):
        prepare("attack", {"attack_dice": 8, "aa_dice": 3, "target": {"dr": 5, "cr": 8, "hp": 6}})
    with pytest.raises(Exception, match="needs dr, cr, hp"):
        prepare("attack", {"attack_dice": 8, "range_band": 1, "aa_dice": 3, "attacker": {"state": "flying"},
                           "target": {"dr": 5, "cr": 8, "hp": 6}})
