"""Issue 30: the HACSE ``depth_charge_pattern`` and the Breaking News ``points_efficiency``
questions rank through :mod:`analyzer.core.ranking` (docs/balance.md "Rankings"), checked on
planted truths: the best agrees with the exact mode, a dominated option is outside the best set,
equal options are tied (same tie group and rank), the paired standard error of a pattern
difference is the one the U-boat prior implies (the patterns share the U-boat draw: a deep and a
shallow pattern are negatively correlated), and every ranked row of answers.parquet says so."""
import math

import pytest

from analyzer import api
from analyzer.core import scenario as scenario_mod
from analyzer.outputs.answers import answers_table

ONCE = {"fire_repeats": "once_per_threshold"}      # the reading the HACSE exact mode plays


def _pattern(params: dict, trials: int = 0, seed: int = 7) -> dict:
    doc = {"name": "rank-test", "game": "hacse_naval", "question": "depth_charge_pattern", "seed": seed,
           "rules": ONCE, "params": {"hex_distance_to_thrower": 1, "thrower": {"speed": 4}, **params}}
    if trials:
        doc["trials"] = trials
    return doc


def _load(doc: dict, tmp_path):
    return scenario_mod.load_dict(doc, directory=tmp_path)


def _rows(results, quantity: str):
    t = answers_table(results)
    return t[(t["row"] == "metric") & (t["quantity"] == quantity)]


def _by_entity(rows) -> dict:
    return {e: r for e, r in zip(rows["entity"], rows.to_dict("records"))}


# ------------------------------------------------------------------------------------------ HACSE

DEEP_LIKELY = {"charges": 2, "depth_settings": [1, 3],
               "sub": {"ship": "type_viic", "depth": [1, 3], "depth_weights": [1, 2]}}


def test_pattern_ranking_finds_the_exact_best_and_leaves_the_dominated_pattern_out(tmp_path):
    """U-boat at depth 3 twice as often as at depth 1: two charges at depth 3 are best (exact), two at
    depth 1 clearly worse; the Monte-Carlo ranking names the same best, puts d1x2 outside the best
    set, and every pattern's answers row carries its rank, tie group and difference to the best."""
    sc = _load(_pattern(DEEP_LIKELY, trials=20_000), tmp_path)
    exact = _by_entity(_rows(api.exact(sc), "p_sunk"))
    best_exact = max(exact, key=lambda e: exact[e]["mean"])
    assert best_exact == "d3x2"
    assert exact["d1x2"]["mean"] < exact["d3x2"]["mean"] - 0.1          # planted: clearly dominated
    assert exact[best_exact]["rank"] == 1 and exact["d1x2"]["in_best_set"] == False  # noqa: E712

    results = api.run(sc)
    mc = _by_entity(_rows(results, "p_sunk"))
    assert set(mc) == {"d1x2", "d1x1 d3x1", "d3x2"}                    # patterns named, not p_sunk_p000
    best_mc = next(e for e, r in mc.items() if r["rank"] == 1)
    assert best_mc == best_exact
    assert mc[best_mc]["in_best_set"] and mc[best_mc]["diff_to_best"] == 0
    assert not mc["d1x2"]["in_best_set"] and mc["d1x2"]["diff_to_best_high"] < 0
    assert sorted(r["rank"] for r in mc.values()) == [1, 2, 3]           # never tied on their own dice
    assert len({r["tie_group"] for r in mc.values()}) == 3
    assert any(n.startswith("pattern ranked 1: d3x2 (") for n in results[0].notes)
    assert any(n.startswith("ranking by P(sunk): best pattern d3x2;") and "paired" in n for n in results[0].notes)


def test_paired_se_of_a_difference_is_the_one_the_shared_u_boat_draw_implies(tmp_path):
    """Given the U-boat's depth the patterns roll their own dice (independent), so with w the prior,
    p(s) a pattern's P(sunk) at depth s (exact, fixed depth) and n trials:
    var(x_1 - x_3) = p_1 + p_3 - 2 sum_s w_s p_1(s) p_3(s) - (p_1 - p_3)^2. Four charges at depth 1 and
    four at depth 3 rarely both sink, so this is well above the independent-streams variance
    p_1(1 - p_1) + p_3(1 - p_3); the SE the runner forms from the kernel's pair sums must be its root."""
    from analyzer.core.ranking import group_differences
    from analyzer.core.stats import MetricAccumulator
    from analyzer.run.runner import CHUNK_TRIALS
    from tests.hacse_naval.helpers import prepare

    params = {"charges": 4, "depth_settings": [1, 3], "thrower": {"speed": 4}, "hex_distance_to_thrower": 1}
    per_depth = {}
    for depth in (1, 3):
        fixed = _pattern({**params, "sub": {"ship": "type_viic", "depth": depth}})
        per_depth[depth] = {e: r["mean"] for e, r in _by_entity(_rows(api.exact(_load(fixed, tmp_path)),
                                                                      "p_sunk")).items()}
    w = {1: 0.5, 3: 0.5}
    p = {e: sum(w[s] * per_depth[s][e] for s in w) for e in ("d1x4", "d3x4")}
    both = sum(w[s] * per_depth[s]["d1x4"] * per_depth[s]["d3x4"] for s in w)
    var = p["d1x4"] + p["d3x4"] - 2 * both - (p["d1x4"] - p["d3x4"]) ** 2
    independent = p["d1x4"] * (1 - p["d1x4"]) + p["d3x4"] * (1 - p["d3x4"])
    assert var > 1.15 * independent                                 # planted: the pairing matters here

    _, _, prep = prepare("depth_charge_pattern", {**params, "sub": {"ship": "type_viic", "depth": [1, 3]}}, ONCE)
    assert len(prep.paired_groups) == 1 and len(prep.counters) == 5 * 4 // 2
    n = 40_000
    acc = MetricAccumulator(len(prep.metrics), prep.n_bins, len(prep.counters))
    acc.add_chunks(*prep.run_kernel(13, 77, 0, -(-n // CHUNK_TRIALS), CHUNK_TRIALS, n))
    rows = range(len(prep.metrics))
    pairs = group_differences(prep.paired_groups[0], acc.trials, [acc.exact_moment(r, 0) for r in rows],
                              [acc.exact_moment(r, 1) for r in rows], acc.counters)
    i, j = [next(k for k, m in enumerate(prep.metrics) if m.entity == e) for e in ("d1x4", "d3x4")]
    assert pairs.se[i, j] == pytest.approx(math.sqrt(var / n), rel=0.04)
    assert pairs.diff[i, j] == pytest.approx(p["d1x4"] - p["d3x4"], abs=5 * math.sqrt(var / n))


def test_equal_patterns_are_tied_in_the_exact_ranking(tmp_path):
    """A U-boat on the guessed hex at depth 1, three charges set to 1 over the guess and two of its
    neighbours: the neighbours are the same distance away, so patterns that differ only by which
    neighbour takes a charge have equal exact P(sunk) and share a tie group and a rank (competition
    ranks 1 2 2 4 4 4 7 7 7 7); only the three charges on the guessed hex are in the best set."""
    doc = _pattern({"charges": 3, "depth_settings": [1], "offsets": [[0, 0], [1, 0], [0, 1]],
                    "sub": {"ship": "type_viic", "depth": 1}})
    rows = _by_entity(_rows(api.exact(_load(doc, tmp_path)), "p_sunk"))
    assert sorted(r["rank"] for r in rows.values()) == [1, 2, 2, 4, 4, 4, 7, 7, 7, 7]
    east, south = rows["d1@(0,0)x2 d1@(1,0)x1"], rows["d1@(0,0)x2 d1@(0,1)x1"]
    assert east["mean"] == pytest.approx(south["mean"], rel=1e-12) and east["mean"] > 0
    assert east["tie_group"] == south["tie_group"] and east["rank"] == south["rank"] == 2
    far = [rows[e] for e in ("d1@(1,0)x3", "d1@(1,0)x2 d1@(0,1)x1", "d1@(1,0)x1 d1@(0,1)x2", "d1@(0,1)x3")]
    assert len({r["tie_group"] for r in far}) == 1 and {r["rank"] for r in far} == {7}
    assert [e for e, r in rows.items() if r["in_best_set"]] == ["d1@(0,0)x3"]


def test_a_repeated_offset_makes_no_second_copy_of_its_patterns():
    """Offsets [(0,0), (0,0)] are the drops of [(0,0)]: one set of patterns (used to: every pattern
    twice under the same label, so a ranking could not tell them apart)."""
    from analyzer.games.hacse_naval.depth_charge_pattern import PatternParams
    base = {"charges": 2, "depth_settings": [1, 2], "sub": {"ship": "type_viic", "depth": 1}, "thrower": {"speed": 4}}
    once = PatternParams.model_validate({**base, "offsets": [[0, 0]]}).candidates()
    twice = PatternParams.model_validate({**base, "offsets": [[0, 0], [0, 0]]}).candidates()
    assert twice == once and len(once) == 2


# ---------------------------------------------------------------------------------- Breaking News

SF_SNIPER = {"quality": "special_forces", "weapons": ["assault_rifle", "sniper_rifle"]}
VETERAN = {"quality": "veteran", "weapons": ["assault_rifle"]}
VETERAN_AGAIN = {"quality": "veteran", "leadership": 0}            # the same unit, spelled another way
FANATIC_RPG = {"quality": "fanatic", "weapons": ["rpg"]}


def _efficiency(units: list, trials: int = 0, **sweep) -> dict:
    doc = {"name": "rank-units", "game": "breaking_news", "question": "points_efficiency", "seed": 5,
           "params": {"unit": VETERAN, "ranges_cm": [20, 40, 80]}, "sweep": {"unit": units, **sweep}}
    if trials:
        doc["trials"] = trials
    return doc


def _unit_rows(results) -> list[dict]:
    t = answers_table(results)
    return t[(t["row"] == "metric") & (t["metric"] == "lifetime_casualties_per_100_points")].to_dict("records")


def test_identical_units_are_tied_and_a_dominated_unit_is_out_exact(tmp_path):
    """Exact: the same veteran rifleman listed twice (two spellings) is one tie group sharing one rank;
    the fanatic with an RPG, far below the best, is outside the best set; the best is the unit of
    highest exact value, and each point's lifetime_casualties_per_100_points row carries its rank."""
    results = api.exact(_load(_efficiency([SF_SNIPER, VETERAN, VETERAN_AGAIN, FANATIC_RPG]), tmp_path))
    rows = _unit_rows(results)
    assert len(rows) == 4 and all(r["rank"] is not None and r["rank"] == r["rank"] for r in rows)
    sf, vet, vet2, rpg = rows
    assert vet["mean"] == pytest.approx(vet2["mean"], rel=1e-12)
    assert vet["tie_group"] == vet2["tie_group"] and vet["rank"] == vet2["rank"]
    assert sorted(r["rank"] for r in rows) == [1, 2, 2, 4]                  # competition ranks
    best = max(rows, key=lambda r: r["mean"])
    assert best["rank"] == 1 and best is sf and sf["diff_to_best"] == 0
    assert not rpg["in_best_set"] and rpg["diff_to_best"] < 0
    notes = results[1].notes
    assert any(n.startswith("unit ranked 2 of 4 by lifetime_casualties_per_100_points: veteran assault_rifle "
                            "(point 1) rank 2 (tied: group 1)") for n in notes)


def test_monte_carlo_unit_ranking_matches_exact_and_ranks_within_each_range(tmp_path):
    """Monte Carlo (independent streams per point): the best unit is the exact best and the dominated
    unit is outside the best set at 95% simultaneous; a second swept parameter (ranges) gives one
    ranking per range, each with its own best."""
    units = [SF_SNIPER, VETERAN, FANATIC_RPG]
    sc = _load(_efficiency(units, trials=4000), tmp_path)
    exact_rows = _unit_rows(api.exact(sc))
    mc_rows = _unit_rows(api.run(sc))
    best_exact = max(range(3), key=lambda i: exact_rows[i]["mean"])
    assert [r["rank"] for r in mc_rows].index(1) == best_exact
    assert not mc_rows[2]["in_best_set"] and mc_rows[2]["diff_to_best_high"] < 0
    assert mc_rows[best_exact]["in_best_set"] and mc_rows[best_exact]["diff_to_best"] == 0

    by_range = _unit_rows(api.exact(_load(_efficiency(units, ranges_cm=[[20], [80]]), tmp_path)))
    assert len(by_range) == 6
    for rng in ("[20]", "[80]"):
        group = [r for r in by_range if str(r["ranges_cm"]).replace(" ", "") == rng]
        assert sorted(r["rank"] for r in group) == [1, 2, 3], rng
