"""``fire_allocation``: the source's split-fire example (two AD-13 turrets against four
frigates in RB2), the enumeration against the reference, kernel vs exact, exact vs the
reference's Fraction oracle, and the ranking notes."""
import pytest
import yaml
from dw_helpers import GAME_DIR, assert_matches_exact, prepare, simulate

from analyzer.games.dystopian_wars.data import GameData
from analyzer.games.dystopian_wars.fire_allocation import FireAllocationParams, compile_fire_allocation
from analyzer.games.dystopian_wars import reference as ref

TURRETS = yaml.safe_load((GAME_DIR / "fire_allocation_turrets_vs_frigates.yaml").read_text())
SMALL = {"weapon": "primary", "range_band": 2, "attacker": {"capital": True},
         "weapons": [{"model": 0, "ad": 7}, {"model": 1, "ad": 5}, {"model": 2, "ad": 1}],
         "targets": [{"profile": "frigate"}, {"size": "medium", "dr": 4, "cr": 7, "hp": 4}]}
ROCKETS = {"weapon": "rocket", "range_band": 2,
           "weapons": [{"ad": 6}, {"ad": 4}],
           "targets": [{"dr": 3, "cr": 6, "hp": 3, "defense_dice": 2, "count": 3}]}


def compiled(params, rules=None):
    prepared, ctx = prepare("fire_allocation", params, rules)
    gd = GameData(ctx, profiles=True)
    from dw_helpers import rules_for
    return prepared, compile_fire_allocation(FireAllocationParams.model_validate(params), gd,
                                             rules_for("fire_allocation", rules))


def test_two_turret_split_example():
    # §11 split fire: "two AD-13 turrets against 4 frigates in RB2 -> each splits 7 + 6, hitting on 5-6"
    prepared, c = compiled(TURRETS["params"])
    assert [t["t"] for t in c["targets"]] == [5, 5, 5, 5]          # Capital Class vs small targets
    split = [a for a in c["allocations"] if a["family"] == "split"]
    assert len(split) == 1
    parts = sorted((a["weapons"][0], a["ad"]) for a in split[0]["attacks"])
    assert parts == [(0, 6), (0, 7), (1, 6), (1, 7)]
    assert sorted(a["target"] for a in split[0]["attacks"]) == [0, 1, 2, 3]   # every frigate
    assert split[0]["name"] == "w0:7>T0, w0:6>T2, w1:7>T1, w1:6>T3"
    assert {a["family"] for a in c["allocations"]} == {"separate", "linked", "split"}
    assert len(c["allocations"]) == 4 ** 2 + 4 + 1
    linked = [a for a in c["allocations"] if a["family"] == "linked"]
    assert {a["attacks"][0]["ad"] for a in linked} == {19}          # 13 + 13 // 2 (Amb 6 default)


@pytest.mark.parametrize("params", [TURRETS["params"], SMALL, ROCKETS], ids=["turrets", "mixed", "rockets"])
def test_allocations_match_the_reference(params):
    _, c = compiled(params)
    theirs = ref.allocations(params, {}, ref.load_data())
    assert [(a["id"], a["name"], a["family"]) for a in c["allocations"]] == \
        [(a["id"], a["name"], a["family"]) for a in theirs]
    assert [[at["ad"] for at in a["attacks"]] for a in c["allocations"]] == \
        [[at["ad"] for at in a["attacks"]] for a in theirs]


@pytest.mark.parametrize("params", [SMALL, ROCKETS], ids=["mixed", "rockets"])
def test_fire_allocation_mc_matches_exact(params):
    prepared, _ = prepare("fire_allocation", params)
    exact = prepared.exact()
    assert_matches_exact(prepared, simulate(prepared, 30_000), exact, "fire_allocation")


@pytest.mark.parametrize("params", [SMALL, TURRETS["params"]], ids=["mixed", "turrets"])
def test_fire_allocation_exact_matches_reference_oracle(params):
    prepared, _ = prepare("fire_allocation", params)
    ours = prepared.exact()
    theirs = ref.exact_fire_allocation(params, {}, ref.load_data())
    for alloc_id, metrics in theirs.items():
        for name, value in metrics.items():
            assert ours[f"{name}.{alloc_id}"].mean == pytest.approx(float(value), abs=1e-9), (alloc_id, name)


def test_ranking_notes_name_the_best_allocation():
    from analyzer.run.runner import exact_point, summarize
    prepared, _ = prepare("fire_allocation", TURRETS["params"])
    notes = summarize(None, prepared, simulate(prepared, 20_000)).notes
    ranking = sorted(n for n in notes if n.startswith("ranked "))
    assert len(ranking) == 21
    assert ranking[0].startswith("ranked 01 by hp_damage: A20 rank 1") and ranking[0].endswith("w1:6>T3")  # split wins
    assert "[95% CI" in ranking[0] and "; the best; in the best set;" in ranking[0]
    assert "simultaneous CI" in ranking[1]
    exact = exact_point(None, prepared)
    assert sorted(n for n in exact.notes if n.startswith("ranked "))[0].startswith("ranked 01 by hp_damage: A20 ")
    assert exact.rankings[0].best == "A20" and exact.rankings[0].method.startswith("exact")
    assert not [n for n in prepared.notes if n.startswith("rank")]  # nothing written back into Prepared


def test_equal_exact_allocations_share_a_rank():
    """Issue 30: exactly equal allocations (an exact run) are tied, not ranked by list order."""
    from analyzer.run.runner import exact_point
    prepared, _ = prepare("fire_allocation", TURRETS["params"])
    r = exact_point(None, prepared).rankings[0]
    means = {}
    for o in r.options:
        means.setdefault(round(o.mean, 12), []).append(o)
    tied = [g for g in means.values() if len(g) > 1]
    assert [len(g) for g in tied] == [12, 4, 4]  # A02..A17 rank 2, then ranks 14 and 18 (measured)
    for g in tied:
        assert len({o.rank for o in g}) == 1 and len({o.tie_group for o in g}) == 1
    assert [o.rank for o in r.options] == sorted(o.rank for o in r.options)


def test_explicit_allocations_are_checked():
    from analyzer.games.dystopian_wars.rules import RuleError
    bad = {**SMALL, "allocations": [{"attacks": [{"target": 0, "weapons": [0, 1]}, {"target": 1, "weapon": 1, "ad": 2}]}]}
    with pytest.raises(RuleError, match="never mixed with linked fire"):
        prepare("fire_allocation", bad)
    over = {**SMALL, "allocations": [{"attacks": [{"target": 0, "weapon": 0, "ad": 5}, {"target": 1, "weapon": 0, "ad": 3}]}]}
    with pytest.raises(RuleError, match="add up to 8"):
        prepare("fire_allocation", over)
    ok = {**SMALL, "allocations": [{"name": "all in", "attacks": [{"target": 1, "weapons": [0, 1, 2]}]}]}
    prepared, _ = prepare("fire_allocation", ok)
    assert "all in" in prepared.metrics[0].label


def test_critical_objectives_rank_differently_from_hp_damage():
    """Rule fidelity 4: objectives that do not depend on the 2-HP critical placeholder. On the
    source's split-fire example the split allocation is best by HP damage, not by P(critical)."""
    from analyzer import api
    from analyzer.core import scenario as scenario_mod
    sc = scenario_mod.load(GAME_DIR / "fire_allocation_turrets_vs_frigates.yaml")
    (r,) = api.exact(sc)
    best = {obj: max((s.mean, n.split(".")[1]) for n, s in r.summaries.items() if n.startswith(obj + "."))[1]
            for obj in ("hp_damage", "p_critical", "p_damage", "criticals")}
    assert best["hp_damage"] == "A20"                        # w0:7>T0, w0:6>T2, w1:7>T1, w1:6>T3 (split)
    assert best["p_critical"] != "A20" and r.summaries["p_critical.A20"].mean < r.summaries[
        f"p_critical.{best['p_critical']}"].mean


def test_ranking_figure_marks_which_objectives_use_placeholders(tmp_path):
    from analyzer import api
    from analyzer.core import scenario as scenario_mod
    from analyzer.games.dystopian_wars import plots as dw_plots
    import json
    import pandas as pd
    doc = {"game": "dystopian_wars", "question": "fire_allocation", "trials": 4096,
           "params": {**SMALL, "targets": [{"size": "medium", "dr": 3, "cr": 6, "hp": 5},
                                           {"size": "medium", "dr": 4, "cr": 7, "hp": 4}],
                      "critical_hp": {"ph": 2, "note": "HP per critical"}, "objective": "p_critical"}}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(doc))
    sc = scenario_mod.load(tmp_path / "s.yaml")
    run_dir, _ = api.write_run(sc, api.exact(sc), tmp_path / "out", mode="exact", threads=1, wall_seconds=0.0)
    meta = json.loads((run_dir / "plotmeta.json").read_text())
    assert [p["path"] for p in meta["placeholders"]] == ["params.critical_hp"]
    ((_, fig),) = dw_plots.fire_allocation_figures(meta, pd.read_parquet(run_dir / "points.parquet"),
                                                    pd.read_parquet(run_dir / "distributions.parquet"))
    titles = {ax.get_title().split("\n")[0]: ax.get_title() for ax in fig.axes if ax.get_title()}
    assert "no placeholder affects it" in titles["ranked by: P(at least one critical)"]
    assert "uses PLACEHOLDER values" in titles["expected HP damage"]


def test_auto_allocations_include_partial_links():
    """'più o tutti i modelli' (§11 linked fire): some of the squadron's weapons linked on one
    target while the others fire elsewhere are among the auto allocations."""
    three = {"weapon": "primary", "range_band": 2, "weapons": [{"ad": 6}, {"ad": 5}, {"ad": 4}],
             "targets": [{"dr": 4, "cr": 7, "hp": 4}, {"dr": 4, "cr": 7, "hp": 4}]}
    prepared, _ = prepare("fire_allocation", three)
    labels = [m.label for m in prepared.metrics if m.name.startswith("hp_damage.")]
    partial = [lab for lab in labels if "[mixed]" in lab]
    assert any("L[w0+w1]>T0, w2>T1" in lab for lab in partial)
    assert {pair for pair in ("w0+w1", "w0+w2", "w1+w2") if any(f"L[{pair}]" in lab for lab in partial)} == {
        "w0+w1", "w0+w2", "w1+w2"}
    assert len([lab for lab in labels if "[linked]" in lab]) == 2        # all three linked, on each target


def test_flyers_in_rb1_say_ack_ack_is_not_modelled():
    """Issue 11 item 3: where a question cannot model Ack Ack, every run says so."""
    flyers = dict(SMALL, range_band=1, attacker={"capital": False, "state": "flying"})
    prepared, _ = prepare("fire_allocation", flyers)
    assert any("Ack Ack is NOT modelled" in n for n in prepared.notes)
    prepared, _ = prepare("fire_allocation", SMALL)
    assert not any("Ack Ack" in n for n in prepared.notes)


def test_identical_allocations_are_tied_in_a_monte_carlo_run():
    """Issue 30: every allocation of a trial plays from the same trial-local stream (common random
    numbers), so allocations equal in every trial are tied in a Monte-Carlo run, as in an exact one:
    on the turrets example the allocations that fire the same dice at identical frigates (the same
    attacks on either of two identical targets, dice consumed in the same order) share the exact
    run's tie groups; an allocation listed twice is tied with itself. Independent dice per
    allocation (the old kernel) tied none."""
    from analyzer.run.runner import exact_point, summarize
    prepared, _ = prepare("fire_allocation", TURRETS["params"])
    mc = summarize(None, prepared, simulate(prepared, 4096)).rankings[0]
    ex = exact_point(None, prepared).rankings[0]

    def groups(r):
        out = {}
        for o in r.options:
            out.setdefault(o.tie_group, []).append(o.name)
        return sorted(sorted(g) for g in out.values())
    assert groups(mc) == groups(ex)
    assert sorted(len(g) for g in groups(mc) if len(g) > 1) == [4, 4, 12]
    assert mc.method.startswith("differences to the best paired on common random numbers")
    for o in mc.options:
        tied_best = o.tie_group == mc.option(mc.best).tie_group
        assert (o.diff_low == o.diff_high == 0.0) == tied_best, o
    twice = {**SMALL, "allocations": [{"name": "x", "attacks": [{"target": 0, "weapons": [0]}, {"target": 1, "weapons": [1]}]},
                                      {"attacks": [{"target": 1, "weapons": [0, 1, 2]}]},
                                      {"name": "x again", "attacks": [{"target": 0, "weapons": [0]},
                                                                      {"target": 1, "weapons": [1]}]}]}
    prepared, _ = prepare("fire_allocation", twice)
    r = summarize(None, prepared, simulate(prepared, 4096)).rankings[0]
    assert r.option("A00").tie_group == r.option("A02").tie_group != r.option("A01").tie_group
    assert r.option("A00").rank == r.option("A02").rank


def test_above_the_pair_cap_the_ranking_uses_the_bound(monkeypatch):
    """More than MAX_PAIRED_ALLOCATIONS: no pair sums (the kernel returns only the pool counters) and
    every difference's SE is the bound SE_i + SE_j (valid for any correlation; the allocations share
    their dice, so the independent formula would not be), no ties; at or below the cap the paired
    SE, which is smaller here (positively correlated allocations)."""
    from analyzer.games.counters import POOL_COUNTERS
    from analyzer.games.dystopian_wars import fire_allocation as fa
    from analyzer.run.runner import summarize
    paired, _ = prepare("fire_allocation", SMALL)
    n_alloc = len(paired.metrics) // len(fa.OBJECTIVES)
    assert len(paired.counters) == len(POOL_COUNTERS) + n_alloc * (n_alloc - 1) // 2
    monkeypatch.setattr(fa, "MAX_PAIRED_ALLOCATIONS", n_alloc - 1)
    bounded, _ = prepare("fire_allocation", SMALL)
    assert bounded.counters == POOL_COUNTERS and bounded.paired_groups == ()
    acc_p, acc_b = simulate(paired, 4096), simulate(bounded, 4096)
    assert [acc_p.exact_moment(m, 0) for m in range(len(paired.metrics))] == \
        [acc_b.exact_moment(m, 0) for m in range(len(bounded.metrics))]     # the pair sums draw nothing
    rp, rb = summarize(None, paired, acc_p).rankings[0], summarize(None, bounded, acc_b).rankings[0]
    assert "bounded: SE_i + SE_j" in rb.method and "paired on common random numbers" in rp.method
    assert len({o.tie_group for o in rb.options}) == n_alloc
    for o in rb.options:
        if o.name != rb.best:
            assert o.diff_high - o.diff_low > rp.option(o.name).diff_high - rp.option(o.name).diff_low


def test_a_run_plays_at_most_max_run_allocations_and_only_names_known_ids(monkeypatch):
    from analyzer.games.dystopian_wars import fire_allocation as fa
    from analyzer.games.dystopian_wars.rules import RuleError
    with pytest.raises(RuleError, match=r"params.only: got A99; allowed: the allocations' ids A00..A15"):
        prepare("fire_allocation", {**SMALL, "only": ["A03", "A99"]})
    with pytest.raises(Exception, match="less than or equal to 1024"):
        prepare("fire_allocation", {**SMALL, "max_allocations": 1025})
    with pytest.raises(RuleError, match=r"16 allocations > max_allocations = 15; raise it \(up to 1024\)"):
        prepare("fire_allocation", {**SMALL, "max_allocations": 15})
    monkeypatch.setattr(fa, "MAX_RUN_ALLOCATIONS", 10)
    with pytest.raises(RuleError, match="16 allocations to play; a run plays at most 10"):
        prepare("fire_allocation", SMALL)
    prepared, _ = prepare("fire_allocation", {**SMALL, "only": ["A15", "A03"]})
    assert [m.name for m in prepared.metrics[:2]] == ["hp_damage.A03", "hp_damage.A15"]   # the list's order
