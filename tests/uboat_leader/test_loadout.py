"""loadout: fleets on common random numbers (analyzer/games/uboat_leader/loadout.py,
kernels/uboat_leader/loadout.py; spec docs/models/uboat_leader_campaign.md §14).

Two identical fleets differ by exactly 0 in every trial; the first fleet is bit-identical to
the campaign question run alone with the same seed and key, the others agree with it in
distribution (5 SE, tests/stat_checks.py); the paired CI of a VP difference is measured
against the CI from two independent runs; enumeration is checked against hand-counted
fleets; max_fleets refuses; 1 and 2 threads give identical arrays.
"""
import math

import numba
import numpy as np
import pytest

from analyzer.core import questions
from analyzer.core.errors import ScenarioError
from analyzer.games.uboat_leader.data import GameData
from analyzer.games.uboat_leader.loadout import affordable_fleets, fleet_name
from analyzer.core.ranking import simultaneous_multiplier
from analyzer.core.stats import Z95
from analyzer.run.runner import summarize
from tests.stat_checks import assert_two_samples_match
from tests.uboat_leader.helpers import assert_thread_count_independent, context, prepare, run_acc

#: the source's example fleet (l.202): 29 of 32 SO, short "Comienza la Batalla"
FLEET = [{"id": "U-43", "level": "trained"}, {"id": "U-47", "level": "trained"},
         {"id": "U-51", "level": "trained"}, {"id": "U-56", "level": "ace"}]
#: U-56 veteran instead of ace: 2 SO cheaper, so the default Intel policy buys one more Intel
VETERAN = FLEET[:3] + [{"id": "U-56", "level": "veteran"}]
TRIALS = 3 * 4096


def summaries(prep, acc):
    return {m.name: acc.summary(i, m.scale, m.is_probability) for i, m in enumerate(prep.metrics)}


def column(prep, name):
    return [m.name for m in prep.metrics].index(name)


def test_identical_fleets_differ_by_exactly_zero_in_every_trial():
    _, _, prep = prepare("loadout", {"fleets": [{"name": "a", "fleet": FLEET}, {"name": "b", "fleet": FLEET}]})
    acc = run_acc(prep, TRIALS, seed=5, key=99)
    d = column(prep, "vp_diff.b")
    assert acc.moments[d, 0] == 0 and acc.moments[d, 1] == 0  # sum of squares 0: every trial's difference is 0
    for group in ("vp", "boats_lost", "p_level_poor", "p_level_good"):
        a, b = column(prep, f"{group}.a"), column(prep, f"{group}.b")
        assert np.array_equal(acc.hist[a], acc.hist[b]) and np.array_equal(acc.moments[a], acc.moments[b])
    assert acc.moments[column(prep, "vp.a"), 0] > 0


@pytest.mark.parametrize("first", ["example", "air_search"])
def test_first_fleet_is_bit_identical_to_the_campaign_question(first):
    plans = {"example": {"name": "example", "fleet": FLEET},
             "air_search": {"name": "air_search", "fleet": FLEET, "so": "air_search"}}
    other = "air_search" if first == "example" else "example"
    _, _, lo = prepare("loadout", {"fleets": [plans[first], plans[other]]})
    so = plans[first].get("so", "intel")
    _, _, camp = prepare("campaign", {"fleet": FLEET, "policy": {"so": so}})
    a = run_acc(lo, TRIALS, seed=3, key=777)
    b = run_acc(camp, TRIALS, seed=3, key=777)
    for group, name in (("vp", "vp"), ("boats_lost", "boats_lost"), ("p_level_poor", "p_level_poor"),
                        ("p_level_adequate", "p_level_adequate"), ("p_level_good", "p_level_good"),
                        ("p_level_outstanding", "p_level_outstanding")):
        i, j = column(lo, f"{group}.{first}"), column(camp, name)
        assert np.array_equal(a.hist[i], b.hist[j]), group
        assert np.array_equal(a.moments[i], b.moments[j]), group


def test_later_fleets_agree_with_the_campaign_question_in_distribution():
    _, _, lo = prepare("loadout", {"fleets": [{"name": "example", "fleet": FLEET},
                                              {"name": "air", "fleet": FLEET, "so": "air_search"}]})
    _, _, camp = prepare("campaign", {"fleet": FLEET, "policy": {"so": "air_search"}})
    s = summaries(lo, run_acc(lo, 5 * 4096, seed=11, key=1))
    c = summaries(camp, run_acc(camp, 5 * 4096, seed=12, key=2))
    for name in ("vp", "boats_lost", "p_level_poor", "p_level_adequate", "p_level_good"):
        x, y = s[f"{name}.air"], c[name]
        assert_two_samples_match(x.mean, x.se, y.mean, y.se, what=name)


def test_common_random_numbers_narrow_the_ci_of_a_vp_difference_at_least_2_5x():
    """Example fleet vs the same fleet with U-56 veteran (one more Intel bought): the paired
    CI of the VP difference against 1.96 * hypot(SE, SE) of two independent campaign runs."""
    n = 5 * 4096
    _, _, lo = prepare("loadout", {"fleets": [{"name": "example", "fleet": FLEET},
                                              {"name": "veteran", "fleet": VETERAN}]})
    paired = summaries(lo, run_acc(lo, n, seed=1, key=10))["vp_diff.veteran"]
    _, _, ca = prepare("campaign", {"fleet": FLEET})
    _, _, cb = prepare("campaign", {"fleet": VETERAN})
    a = summaries(ca, run_acc(ca, n, seed=1, key=20))["vp"]
    b = summaries(cb, run_acc(cb, n, seed=2, key=30))["vp"]
    independent = Z95 * math.hypot(a.se, b.se)
    assert paired.se > 0  # the fleets do differ
    # measured with these seeds: 3.0x before the issue-27 rule corrections, 2.99x after; the bound
    # says "materially narrower", the paired CI's calibration is tested in tests/test_intervals.py
    assert independent / paired.half_width >= 2.5, (independent, paired.half_width)


def test_ranking_notes_order_fleets_by_mean_vp():
    _, _, prep = prepare("loadout", {"fleets": [{"name": "none", "fleet": FLEET, "so": "none"},
                                                {"name": "example", "fleet": FLEET}]})
    r = summarize(None, prep, run_acc(prep, 4096, seed=2, key=3))
    s, lines = r.summaries, [n for n in r.notes if n.startswith("ranked ")]
    best = max(("none", "example"), key=lambda f: s[f"vp.{f}"].mean)
    assert len(lines) == 2 and lines[0].startswith(f"ranked 1 by mean VP: {best} rank 1; ")
    assert "; the best; in the best set;" in lines[0]
    assert r.rankings[0].best == best


def test_identical_fleets_share_a_rank_and_the_best_is_re_differenced():
    """Issue 30: two identical fleets (same boats, same SO policy) play the same campaign in every
    trial, so they are tied (one rank, one tie group, difference exactly 0); the difference of a
    third fleet is to the best (kernel VP pair sums), with the simultaneous multiplier. Before
    the ranking module the two got ranks 1 and 2 and differences were to the first fleet only."""
    _, _, prep = prepare("loadout", {"fleets": [{"name": "none", "fleet": FLEET, "so": "none"},
                                                {"name": "a", "fleet": FLEET}, {"name": "b", "fleet": FLEET}]})
    acc = run_acc(prep, 4096, seed=2, key=3)
    r = summarize(None, prep, acc)
    ranking = r.rankings[0]
    a, b, none = ranking.option("a"), ranking.option("b"), ranking.option("none")
    assert a.rank == b.rank and a.tie_group == b.tie_group and a.mean == b.mean
    assert [o.name for o in ranking.options].index("b") == [o.name for o in ranking.options].index("a") + 1
    assert none.rank in (1, 3) and none.tie_group != a.tie_group
    # the paired difference of "none" to the best, against the per-trial VP columns of a direct run
    n = 4096
    vp = {f: column(prep, f"vp.{f}") for f in ("none", "a")}
    m, sq = acc.exact_moment, lambda f: acc.exact_moment(vp[f], 1)
    cross = acc.counters[len(prep.counters) - 3:]           # pairs (none,a), (none,b), (a,b)
    d_sum = m(vp["none"], 0) - m(vp["a"], 0)
    d_sq = sq("none") + sq("a") - 2 * int(cross[0])
    se = math.sqrt((n * d_sq - d_sum ** 2) / (n * (n - 1)) / n)
    best = ranking.option(ranking.best)
    if ranking.best in ("a", "b"):
        assert none.diff == pytest.approx(d_sum / n, abs=1e-12)
        assert none.diff_high - none.diff == pytest.approx(simultaneous_multiplier(3, n) * se, rel=1e-9)
    assert best.diff == 0.0 and best.in_best_set
    lines = [ln for ln in r.notes if ln.startswith("ranked ")]
    assert "(tied: group" in [ln for ln in lines if ln.startswith("ranked ") and " a rank" in ln][0]
    assert not any(k.startswith("vp_pair.") for k in r.counters)   # pair sums stay out of the outputs


def _enumerated(params, rules=None):
    q = questions.get("uboat_leader", "loadout")
    p = q.Params.model_validate(params)
    ctx = context(q, rules)
    return [fleet_name(f) for f in affordable_fleets(p, ctx, GameData(ctx))]


def test_enumeration_budget_and_service_years_hand_count():
    """Comienza la Batalla (1939-09..1940-05), 32 SO, trained crews: U-98 and U-201 serve from
    1941 (out); U-20, U-23, U-51, U-56 cost 6, U-47 7, U-43 8. Every 1-4 boat fleet of the six
    fits (at most 27 SO): 6 + 15 + 20 + 15 = 56; of the 5-boat fleets only those without a 6-SO
    boat dropped: without U-43 (31 SO) and without U-47 (32 SO) -> 58."""
    names = _enumerated({"enumerate": True, "levels": ["trained"]})
    assert len(names) == len(set(names)) == 58
    assert not any("U-98" in n or "U-201" in n for n in names)
    five = sorted(n for n in names if n.count("+") == 4)
    assert five == ["U-20t+U-23t+U-43t+U-51t+U-56t", "U-20t+U-23t+U-47t+U-51t+U-56t"]
    assert "U-43t+U-47t+U-51t+U-56t" in names  # the source's example boats (U-56 trained here)


def test_enumeration_class_limits_hand_count():
    """Operación Drumbeat (1942-02..1942-06) allows Types VIIC and IX only: U-43 (IX), U-98 and
    U-201 (VIIC); everyone else is another class or out of service. Two levels each, every
    subset affordable (at most 20 of 30 SO): 3^3 - 1 = 26 fleets."""
    names = _enumerated({"campaign": "operacion_drumbeat", "enumerate": True, "levels": ["trained", "ace"]})
    assert len(names) == 26
    assert {b.rstrip("ta") for n in names for b in n.split("+")} == {"U-43", "U-98", "U-201"}


def test_enumeration_with_explicit_baseline_and_max_fleets_refusal():
    params = {"fleets": [{"name": "example", "fleet": FLEET}], "enumerate": True, "levels": ["trained"],
              "max_fleets": 10}
    with pytest.raises(ScenarioError) as e:
        prepare("loadout", params)
    assert "params.max_fleets" in str(e.value) and "59 fleets" in str(e.value) and "\n" not in str(e.value)
    # Drumbeat, trained crews: the 7 subsets of U-43, U-98, U-201 (test above); a listed fleet
    # comes first (the vp_diff baseline) and one equal to an enumerated fleet is not run twice
    drum = [{"id": "U-98", "level": "ace"}]
    pair = [{"id": "U-43", "level": "trained"}, {"id": "U-98", "level": "trained"}]
    base = {"campaign": "operacion_drumbeat", "enumerate": True, "levels": ["trained"]}
    _, _, prep = prepare("loadout", {**base, "fleets": [{"name": "ace98", "fleet": drum},
                                                        {"name": "pair", "fleet": pair}]})
    names = [m.name[3:] for m in prep.metrics if m.name.startswith("vp.")]
    assert names[:2] == ["ace98", "pair"] and len(names) == 2 + 6 and "U-43t+U-98t" not in names


def test_fleet_errors_name_the_fleet():
    bad = [{"id": "U-98", "level": "trained"}]
    with pytest.raises(ScenarioError) as e:
        prepare("loadout", {"fleets": [{"name": "ok", "fleet": FLEET}, {"name": "late", "fleet": bad}]})
    assert "params.fleets[1].fleet[0].id" in str(e.value) and "fleet late" in str(e.value)
    with pytest.raises(Exception, match="at least two fleets"):
        prepare("loadout", {"fleets": [{"name": "ok", "fleet": FLEET}]})


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 numba threads")
def test_same_seed_identical_with_1_and_2_threads():
    _, _, prep = prepare("loadout", {"fleets": [{"name": "example", "fleet": FLEET},
                                                {"name": "air", "fleet": FLEET, "so": "air_search"}]})
    assert_thread_count_independent(prep)


def test_ranking_figure_orders_fleets_and_carries_the_placeholder_footer(tmp_path):
    import json

    import matplotlib.pyplot as plt
    import pandas as pd

    from analyzer import api
    from analyzer.outputs import plots as core_plots
    from analyzer.core import scenario as scenario_mod
    from analyzer.games.uboat_leader import plots
    from tests.uboat_leader.helpers import SCEN

    sc = scenario_mod.load(SCEN / "loadout_example_fleets.yaml", trials=4096)
    results = api.run(sc)
    run_dir, _ = api.write_run(sc, results, tmp_path, mode="monte_carlo", threads=1, wall_seconds=0.0)
    meta = json.loads((run_dir / "plotmeta.json").read_text())
    with plt.rc_context(core_plots.STYLE):
        ((stem, fig),) = plots.loadout_figures(meta, pd.read_parquet(run_dir / "points.parquet"),
                                               pd.read_parquet(run_dir / "distributions.parquet"))
    s = results[0].summaries
    best_first = sorted((n for n in s if n.startswith("vp.")), key=lambda n: -s[n].mean)
    ticks = fig.axes[0].get_yticklabels()
    shown = [t.get_text() for t in sorted(ticks, key=lambda t: -t.get_position()[1])]  # top to bottom
    assert stem == "loadout_ranking" and shown == [n[3:] for n in best_first]
    texts = list(fig.texts) + [t for ax in fig.axes for t in ax.texts]
    assert any("PLACEHOLDER" in t.get_text() and "seed 1" in t.get_text() for t in texts)
    assert any(ln.startswith("ranked 1 by mean VP: " + best_first[0][3:] + " rank 1") for ln in results[0].notes)
    # the middle panel: paired differences to the best (0 for the best itself), not to the first fleet
    diff_ax = fig.axes[1]
    assert "minus the best" in diff_ax.get_xlabel()
    bars = sorted(diff_ax.patches, key=lambda b: -b.get_y())
    d = {o.name: o.diff for o in results[0].rankings[0].options}
    assert [b.get_width() for b in bars] == pytest.approx([d[n[3:]] for n in best_first], abs=1e-9)
    plt.close(fig)
