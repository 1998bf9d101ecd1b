"""escort_detection and wolfpack: kernels against their exact answers and the reference's
exact enumeration, the digest's worked examples, placeholder listing and ``strict``.

Digest: docs/rules/uboat_leader.md §7.5, §7.3, §6.5. Spec: docs/models/uboat_leader.md §3.
"""
from fractions import Fraction

import numpy as np
import pytest
import yaml

from analyzer.core import scenario as scenario_mod
from analyzer.core.errors import ScenarioError
from analyzer.run.runner import exact_point, prepare_point
from kernels.uboat_leader import detection as kd
from analyzer.games.uboat_leader import reference as U
from tests.stat_checks import assert_histogram_matches
from tests.uboat_leader.helpers import SCEN, prepare, run

DATA = U.load_data()
TRIALS = 60_000


def _exact_probs(exact_metric, n_bins):
    probs = np.zeros(n_bins)
    for v, p in zip(exact_metric.values, exact_metric.probs):
        probs[int(v)] += p
    return probs


def _check_against_exact(prep, trials=TRIALS, seed=3):
    counts = run(prep, trials, seed)
    for name, ex in prep.exact().items():
        assert_histogram_matches(counts[name], _exact_probs(ex, len(counts[name])), what=name)
    return counts


def _reference_exact(ref_dist, n_bins):
    probs = np.zeros(n_bins)
    for v, p in ref_dist.items():
        probs[int(v)] += float(p)
    return probs


# ----------------------------------------------------------------- §7.5 worked example (HMS Arbutus)
def test_arbutus_roll_4_plus_1_alerted_is_5_and_detects():
    mod = kd.detection_modifier(1, 1, 0, 0)           # one Alerted counter, undamaged, no Tactics
    assert 4 + mod == 5
    assert kd.detects(4, mod, 5) and not kd.detects(3, mod, 5)
    assert kd.in_detection_range(3, 2, 1)             # surfaced range 2 + 1 Alerted reaches 3 Areas
    assert not kd.in_detection_range(3, 2, 0)
    assert kd.evades(4, 4) and not kd.evades(5, 4)    # §7.3: d10 <= EV


def test_reference_scenario_exact_is_0_7_and_labels_what_the_source_does_not_give():
    sc = scenario_mod.load(SCEN / "escort_detection_example.yaml")
    (point,) = sc.points
    prep = prepare_point(sc, point)
    assert {p.path for p in prep.placeholders if not p.is_example} == {"params.detection.submerged",
                                                                      "params.uboat.evasion"}
    assert [(p.path, p.value, p.establishes) for p in prep.placeholders if p.is_example] == [
        ("params.detection.surfaced", 5, "at_most")]                # Arbutus: 4 + 1 = 5 detects, so <= 5
    res = exact_point(point, prep)
    assert res.summaries["p_detected"].mean == pytest.approx(0.7, abs=1e-15)
    assert Fraction(res.summaries["p_detected"].mean).limit_denominator(100) == Fraction(7, 10)
    _check_against_exact(prep)


# the reference test module's exact cases, plus silent running and Tactics pools
CASES = [
    {"detection": {"surfaced": 5, "submerged": 7}, "uboat": {"state": "surfaced", "range": 3}},
    {"detection": {"surfaced": 5, "submerged": 7}, "uboat": {"state": "submerged", "range": 1}},
    {"detection": {"surfaced": 5, "submerged": 7}, "uboat": {"state": "submerged", "range": 2}, "alerted": 1},
    {"detection": {"surfaced": 5, "submerged": 7}, "uboat": {"state": "surfaced", "range": 0},
     "escort_damage": "heavy"},
    {"detection": {"surfaced": 5, "submerged": 7}, "uboat": {"state": "surfaced", "range": 0},
     "escort_damage": "light", "alerted": 2},
    {"detection": {"surfaced": 5, "submerged": 7}, "uboat": {"state": "surfaced", "range": 0},
     "tactics": [-1, 0, 2]},
    {"detection": {"surfaced": 12, "submerged": 7}, "uboat": {"state": "surfaced", "range": 0}},
    {"detection": {"surfaced": 1, "submerged": 7}, "uboat": {"state": "surfaced", "range": 0},
     "escort_damage": "heavy"},
    {"escort": "HMS Arbutus", "uboat": {"state": "surfaced", "range": 3}, "alerted": 1},
    {"uboat": {"state": "surfaced", "range": 0}, "tactics": "pool"},
    {"detection": {"surfaced": 5, "submerged": 7},
     "uboat": {"state": "submerged", "range": 1, "evasion": 4, "silent_running": True}},
    {"detection": {"surfaced": 4, "submerged": 6}, "alerted": 2, "escort_damage": "light", "tactics": [0, 1, 1, 3],
     "uboat": {"state": "submerged", "range": 3, "evasion": 7, "silent_running": True}},
    {"uboat": {"state": "surfaced", "range": 0, "silent_running": True}},
]


@pytest.mark.parametrize("params", CASES)
def test_escort_detection_exact_matches_reference_and_kernel(params):
    _, _, prep = prepare("escort_detection", params)
    ours = prep.exact()
    ref = U.exact_escort_detection(params, {}, DATA)
    for name in ("p_detected", "p_evaded", "stress_added"):
        n_bins = prep.n_bins
        assert np.allclose(_exact_probs(ours[name], n_bins), _reference_exact(ref[name], n_bins), atol=1e-15), name
    _check_against_exact(prep, 30_000)


def test_silent_running_exact_values():
    params = {"detection": {"surfaced": 5, "submerged": 7},
              "uboat": {"state": "submerged", "range": 1, "evasion": 4, "silent_running": True}}
    ex = prepare("escort_detection", params)[2].exact()
    assert ex["p_detected"].mean == pytest.approx(0.4)
    assert ex["p_evaded"].mean == pytest.approx(0.4 * 0.4)              # detected, then d10 <= EV 4
    assert ex["stress_added"].mean == pytest.approx(2 * 0.4 * 0.6)       # detected, then d10 > EV: +2 Stress


def test_escort_detection_placeholders_listed_only_when_used():
    ph = lambda params: {p.path for p in prepare("escort_detection", params)[2].placeholders  # noqa: E731
                         if not p.is_example}
    ex = lambda params: {(p.path, p.establishes) for p in prepare("escort_detection", params)[2].placeholders  # noqa: E731
                         if p.is_example}
    assert ph({"uboat": {"state": "surfaced"}}) == {"params.detection"}
    # HMS Arbutus: surfaced value bounded by the source example (listed as such), submerged a placeholder
    assert ph({"escort": "HMS Arbutus", "uboat": {"state": "surfaced"}}) == set()
    assert ex({"escort": "HMS Arbutus", "uboat": {"state": "surfaced"}}) == {("escorts[0].detection.surfaced",
                                                                              "at_most")}
    assert ex({"escort": "HMS Arbutus", "uboat": {"state": "submerged"}}) == set()
    assert ph({"escort": "HMS Arbutus", "uboat": {"state": "submerged"}}) == {"escorts[0].detection.submerged"}
    assert ph({"detection": {"surfaced": 5, "submerged": 7}, "tactics": "pool"}) == {"tactics.chits"}
    assert ph({"detection": {"surfaced": 5, "submerged": 7},
               "uboat": {"state": "submerged", "silent_running": True}}) == {"params.uboat.evasion"}


def test_strict_refuses_placeholders_and_bound_only_examples_accepts_exact_examples(tmp_path):
    text = (SCEN / "escort_detection_example.yaml").read_text()
    bounded = tmp_path / "strict_bounded.yaml"
    bounded.write_text(text + "strict: true\n")
    sc = scenario_mod.load(bounded)
    with pytest.raises(ScenarioError, match=r"params.detection.surfaced = 5 \(example: at most\)"):
        prepare_point(sc, sc.points[0])
    exact_doc = yaml.safe_load(text)
    exact_doc["strict"] = True
    exact_doc["params"]["detection"] = {"surfaced": {"ex": 5}, "submerged": 7}   # an exact example value
    exact_doc["params"]["uboat"]["evasion"] = 4
    ok = tmp_path / "strict_ok.yaml"
    ok.write_text(yaml.safe_dump(exact_doc))
    sc = scenario_mod.load(ok)
    used = prepare_point(sc, sc.points[0]).placeholders
    assert [(p.path, p.establishes) for p in used] == [("params.detection.surfaced", "exact")]
    bad = tmp_path / "strict_bad.yaml"
    bad.write_text("game: uboat_leader\nquestion: escort_detection\nstrict: true\n"
                   "params: {uboat: {state: surfaced, range: 1}}\n")
    sc = scenario_mod.load(bad)
    with pytest.raises(ScenarioError, match="strict: true refuses placeholder values: params.detection"):
        prepare_point(sc, sc.points[0])


def test_escort_detection_bad_params_rejected(tmp_path):
    def load(params):
        f = tmp_path / "bad.yaml"
        f.write_text(f"game: uboat_leader\nquestion: escort_detection\nparams: {params}\n")
        sc = scenario_mod.load(f)
        prepare_point(sc, sc.points[0])
    with pytest.raises(ScenarioError, match="uboat.state"):
        load("{uboat: {state: deep}}")
    with pytest.raises(ScenarioError, match="unknown parameter"):
        load("{bogus: 1}")
    with pytest.raises(ScenarioError, match="no Escort or Fleet Escort card named 'HMS Arbutos'.*did you mean"):
        load("{escort: HMS Arbutos}")


# ----------------------------------------------------------------- §6.5 wolfpack
WOLFPACK_CASES = [
    ({"candidates": 3, "attacked": 1}, {}),
    ({"candidates": 5, "attacked": 2, "campaign": "los_tiempos_felices"}, {}),
    ({"candidates": 1, "notes": {"join_min": 6, "stress_results": [10]}}, {}),
    ({"candidates": 1, "notes": {"join_min": 6, "stress_results": [10]}}, {"wolfpack_stress_join": "stress_fails"}),
    ({"candidates": 4, "notes": {"stress_results": [1, 2], "stress_per_result": 2}}, {}),
    ({"candidates": 4, "radio_call": True}, {}),
    ({"candidates": 4, "radio_call": True}, {"radio_call_cost": "per_joiner"}),
    ({"candidates": 0}, {}),
]


@pytest.mark.parametrize("params,rules", WOLFPACK_CASES)
def test_wolfpack_exact_matches_reference_and_kernel(params, rules):
    _, _, prep = prepare("wolfpack", params, rules)
    ours = prep.exact()
    ref = U.exact_wolfpack(params, rules, DATA)
    for name in ("pack_size", "alerted", "stress_added", "so_spent"):
        assert np.allclose(_exact_probs(ours[name], prep.n_bins), _reference_exact(ref[name], prep.n_bins),
                           atol=1e-15), name
    counts = _check_against_exact(prep, 30_000)
    assert counts["pack_size"].sum() == 30_000


def test_wolfpack_placeholder_notes_join_on_6_stress_on_1():
    ex = prepare("wolfpack", {"candidates": 3, "attacked": 1})[2].exact()
    p_plain, p_att = 0.5, 0.3                          # d10 >= 6; d10 - 2 >= 6 with an Attacked counter
    pack = dict(zip(ex["pack_size"].values, ex["pack_size"].probs))
    assert pack[4] == pytest.approx(p_plain ** 2 * p_att)
    assert pack[1] == pytest.approx((1 - p_plain) ** 2 * (1 - p_att))
    assert ex["alerted"].mean == pytest.approx(0.3) and ex["stress_added"].mean == pytest.approx(0.3)


def test_wolfpack_radio_call_a5():
    for rules, so in (({}, 2), ({"radio_call_cost": "per_joiner"}, 8)):
        ex = prepare("wolfpack", {"candidates": 4, "radio_call": True}, rules)[2].exact()
        assert ex["pack_size"].mean == 5 and ex["alerted"].mean == 0 and ex["so_spent"].mean == so


def test_wolfpack_placeholders_and_strict():
    paths = lambda params: {p.path for p in prepare("wolfpack", params)[2].placeholders}  # noqa: E731
    assert paths({"candidates": 3}) == {"wolfpack.join_min", "wolfpack.stress_results"}
    assert paths({"candidates": 3, "campaign": "la_presa"}) == {"campaign.wolfpack.join_min",
                                                                "campaign.wolfpack.stress_results"}
    assert paths({"candidates": 3, "radio_call": True}) == {"wolfpack.radio_call_cost"}
    # a user who fills the sheet's notes runs with no placeholder
    assert paths({"candidates": 3, "notes": {"join_min": 5, "stress_results": [1]}}) == set()


def test_wolfpack_bad_params():
    from pydantic import ValidationError
    with pytest.raises(ValidationError, match="attacked = 4 is more than candidates = 3"):
        prepare("wolfpack", {"candidates": 3, "attacked": 4})
    with pytest.raises(ScenarioError, match="no campaign sheet 'la_pressa'.*did you mean 'la_presa'"):
        prepare("wolfpack", {"campaign": "la_pressa"})
