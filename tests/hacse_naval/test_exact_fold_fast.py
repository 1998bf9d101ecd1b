"""The torpedo and mine exact modes folded hex by hex (``exact_fold.fold_by_hex``, issue 29 item 11).

Checked against the whole-state fold (``exact_damage.fold_hits``, the engine before, kept as the
oracle) and the slow engine before it (``old_engine`` of test_exact_damage_speed.py) on cases both
answer, against the Monte-Carlo kernels on the shipped crossing (5 SE), and by what was enumerated
(hex steps, states), never by the clock.
"""
from __future__ import annotations

import pytest

from analyzer.core.errors import ScenarioError
from analyzer.games.hacse_naval import exact_damage as E
from analyzer.games.hacse_naval import exact_fold as F
from analyzer.games.hacse_naval.data import hit_rows
from tests.hacse_naval.helpers import assert_kernel_matches_exact, prepare
from tests.hacse_naval.test_exact_damage_speed import SCEN, ONCE, assert_same, old_engine, sheet_of, shipped


def as_old(f: E.Folded) -> dict:
    return {"p_sunk": f.p_sunk, "damage": f.damage, "damage_dealt": f.damage_dealt, "speed_lost": f.speed_lost,
            "fires": f.fires}


@pytest.fixture
def fresh(monkeypatch):
    """An empty cache of hex chains and a count of the hex steps folded."""
    monkeypatch.setattr(F, "_CHAINS", {})
    steps = []
    orig = F._HexFold.step
    monkeypatch.setattr(F._HexFold, "step", lambda self, *a, **k: steps.append(self.h) or orig(self, *a, **k))
    return steps


@pytest.mark.parametrize("question,n,p,dice,rules", [
    ("torpedo_salvo", 4, 0.5, 5, {}),                      # the shipped salvo's point
    ("torpedo_salvo", 4, 1.0, 5, {}),
    ("torpedo_salvo", 3, 0.6, 5, {"threshold_less_rows": "any_hit", "engine_speed": "damage_share",
                                  "fire_spreads": "no", "half_hp": "floor"}),
    ("mine_field", 3, 0.2, 3, {}),                         # the shipped crossing's sheet and dice, 3 hexes
    ("mine_field", 3, 0.5, 3, {"fire_spreads": "no"}),
])
def test_hex_fold_equals_the_whole_state_fold(question, n, p, dice, rules, fresh):
    """Every metric value within 1e-12 of the whole-state fold, from far fewer states."""
    sheet = sheet_of(question, rules)
    rows = hit_rows(sheet, "hex_then_row")
    new = F.fold_by_hex(sheet, n, p, E.nw10(dice), rows)
    old = E.fold_hits(sheet, n, p, E.nw10(dice), rows)
    assert_same(new, as_old(old), f"{question} n={n} p={p} {rules}")
    assert new.n_states < old.n_states
    assert sorted(fresh) == [0] * n + [1] * n               # each hex folded once per hit


@pytest.mark.parametrize("mode", ["hex_then_row", "uniform_row", "bow_hex"])
def test_hex_fold_equals_the_slow_engine_on_tiny_cases(mode):
    """Two torpedoes under each hit location (bow_hex: one hex struck) against the engine before
    the fold (whole states, every amount of every row)."""
    sheet = sheet_of("torpedo_salvo")
    new = F.fold_by_hex(sheet, 2, 0.7, E.nw10(5), hit_rows(sheet, mode))
    assert_same(new, old_engine(sheet, 2, 0.7, 5, mode), mode)


def test_a_sweep_folds_each_hex_once(fresh):
    """The chains do not depend on the hit chance: a sweep over it (and a shorter salvo after a longer
    one) folds each hex's hits once, and every point still equals the whole-state fold."""
    sheet = sheet_of("torpedo_salvo")
    rows = hit_rows(sheet, "hex_then_row")
    for p in (0.25, 0.5, 1.0):
        assert_same(F.fold_by_hex(sheet, 3, p, E.nw10(5), rows), as_old(E.fold_hits(sheet, 3, p, E.nw10(5), rows)),
                    f"p={p}")
    assert_same(F.fold_by_hex(sheet, 2, 0.5, E.nw10(5), rows), as_old(E.fold_hits(sheet, 2, 0.5, E.nw10(5), rows)),
                "2 torpedoes")
    assert sorted(fresh) == [0, 0, 0, 1, 1, 1]


@pytest.mark.parametrize("name,question,key", [("torpedo_destroyer_salvo", "torpedo_salvo", "hit_probability"),
                                               ("mine_field_crossing", "mine_field", "density")])
def test_shipped_scenarios_answer_exactly_under_once_per_threshold(name, question, key, fresh):
    """Every swept point of both shipped files answers; the hexes are folded once for the sweep (2 hexes
    x the events), the states enumerated stay in the thousands (the whole-state fold kept 97,839 for the
    salvo and refused the crossing at about 326,532 after 4 of 6 hexes)."""
    scen = shipped(name)
    n = scen["params"]["torpedoes" if question == "torpedo_salvo" else "hexes"]
    for value in scen["sweep"][key]:
        _, _, prep = prepare(question, {**scen["params"], key: value}, ONCE)
        answer = prep.exact()
        states = int(answer.notes[0].split()[1].replace(",", ""))
        assert 0 < states < 10_000, answer.notes
        assert 0 < answer["p_sunk"].mean < 1
    assert sorted(fresh) == [0] * n + [1] * n


def test_shipped_mine_crossing_exact_matches_monte_carlo():
    """mine_field_crossing.yaml's 6 hexes at density 0.3: every metric's histogram within 5 binomial
    SEs of the exact distribution (100,000 trials)."""
    params = {**shipped("mine_field_crossing")["params"], "density": 0.3}
    _, _, prep = prepare("mine_field", params, ONCE)
    assert_kernel_matches_exact(prep, 100_000, seed=43, what="mines 6 hexes")


@pytest.mark.parametrize("name,question", [("torpedo_destroyer_salvo", "torpedo_salvo"),
                                           ("mine_field_crossing", "mine_field")])
def test_literal_default_is_refused_before_anything_is_enumerated(name, question, monkeypatch):
    """Under the default fire_repeats = every_hit_past_threshold the exact mode refuses, naming the
    option, before any hex step or hit is enumerated."""
    def enumerated(*args, **kwargs):
        raise AssertionError("enumerated before refusing")
    monkeypatch.setattr(E._Fold, "step", enumerated)
    monkeypatch.setattr(E.SheetExact, "_hit", enumerated)
    _, _, prep = prepare(question, shipped(name)["params"])
    with pytest.raises(ScenarioError, match=r"rules\.fire_repeats: .*every_hit_past_threshold.*once_per_threshold"):
        prep.exact()


def test_refused_before_enumerating_when_a_hex_bound_is_too_large(monkeypatch, fresh):
    """With the limit below the stern hex's bound from the sheet, the hex fold refuses naming the hex
    and its bound, no hex step folded."""
    monkeypatch.setattr(E, "MAX_STATE_BOUND", 1000)
    sheet = sheet_of("mine_field")
    rows = hit_rows(sheet, "hex_then_row")
    p_h, b_h = E.hex_bounds(sheet, E.nw10(3), rows)
    assert p_h[1] > 1000 and b_h[1] > 1
    with pytest.raises(E.TooLarge, match=r"up to [\d,]+ damage states of hex \d"):
        F.fold_by_hex(sheet, 6, 0.2, E.nw10(3), rows)
    assert fresh == []


def test_a_hex_keeping_too_many_states_is_refused(fresh):
    sheet = sheet_of("mine_field")
    with pytest.raises(E.TooLarge, match="more than 50 damage states of hex"):
        F.fold_by_hex(sheet, 6, 0.2, E.nw10(3), hit_rows(sheet, "hex_then_row"), max_states=50)


def test_the_bound_holds_on_what_each_hex_keeps(monkeypatch):
    """hex_bounds' P_h bounds the states a hex keeps afloat after any number of its hits."""
    monkeypatch.setattr(F, "_CHAINS", {})
    sheet = sheet_of("torpedo_salvo")
    rows = hit_rows(sheet, "hex_then_row")
    kept = {0: [], 1: []}
    orig = F._HexFold.step

    def step(self, ids, vecs, last):
        out = orig(self, ids, vecs, last)
        kept[self.h].append(len(out[0]))
        return out
    monkeypatch.setattr(F._HexFold, "step", step)
    F.fold_by_hex(sheet, 8, 0.5, E.nw10(5), rows)
    p_h, _ = E.hex_bounds(sheet, E.nw10(5), rows)
    assert all(0 < max(kept[h]) <= p_h[h] for h in kept)


@pytest.mark.parametrize("name", ["torpedo_destroyer_salvo", "mine_field_crossing"])
def test_the_once_per_threshold_companion_files_are_the_shipped_files_under_that_reading(name):
    """<name>_once_per_threshold.yaml is <name>.yaml (same params, sweep, seed, trials) with
    rules.fire_repeats: once_per_threshold, so `analyzer exact` on a shipped file answers the salvo and
    the crossing; the file as a whole runs exactly through the CLI's path (every point)."""
    from analyzer.core import scenario as scenario_mod
    from analyzer.run.runner import exact_point, prepare_point
    literal, companion = shipped(name), shipped(f"{name}_once_per_threshold")
    assert companion.pop("rules") == ONCE and "rules" not in literal
    assert {k: v for k, v in companion.items() if k != "name"} == {k: v for k, v in literal.items() if k != "name"}
    sc = scenario_mod.load(SCEN / f"{name}_once_per_threshold.yaml")
    for point in sc.points:
        res = exact_point(point, prepare_point(sc, point))
        assert 0 < res.summaries["p_sunk"].mean < 1
