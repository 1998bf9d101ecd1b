"""The pattern optimiser finds the best pattern of a small case solved by exact enumeration,
and every pattern's Monte-Carlo P(sunk) lies within 5 SE of its exact value."""
import math

from analyzer.games.hacse_naval.depth_charge_pattern import n_patterns, pattern_ranking, rank_notes
from analyzer.core.stats import MetricAccumulator
from analyzer.run.runner import CHUNK_TRIALS
from tests.hacse_naval.helpers import prepare
from tests.stat_checks import SIGMAS

ONCE = {"fire_repeats": "once_per_threshold"}      # the reading the exact mode plays
SMALL = {"charges": 2, "depth_settings": [1, 2, 3],
         "sub": {"depth": [1, 2, 3], "depth_weights": [1, 3, 1]}, "thrower": {"speed": 4}}


def test_pattern_count_is_multisets():
    assert n_patterns(3, 2) == 6 and n_patterns(3, 6) == 28 and n_patterns(21, 2) == 231


def test_optimiser_finds_the_enumerated_best_pattern():
    _, _, prep = prepare("depth_charge_pattern", SMALL, ONCE)
    exact = prep.exact()
    best_exact = max(prep.metrics, key=lambda m: exact[m.name].mean)
    assert best_exact.label.endswith("d2x2")          # both charges at the likeliest depth
    trials = 60_000
    acc = MetricAccumulator(len(prep.metrics), prep.n_bins, len(prep.counters))
    acc.add_chunks(*prep.run_kernel(11, 99, 0, -(-trials // CHUNK_TRIALS), CHUNK_TRIALS, trials))
    summaries = {m.name: acc.summary(i, 1, True) for i, m in enumerate(prep.metrics)}
    for m in prep.metrics:
        p = exact[m.name].mean
        se = math.sqrt(p * (1 - p) / trials)
        assert abs(summaries[m.name].mean - p) < SIGMAS * se, m.label
    ranked = pattern_ranking(prep.metrics, summaries, False, None, trials)     # the bound, no pair sums
    assert ranked.best == best_exact.entity == "d2x2"
    notes = rank_notes(ranked, prep.metrics, summaries, False)
    assert notes[0].startswith(f"pattern ranked 1: d2x2 ({best_exact.name}) rank 1;") and "the best;" in notes[0]
    assert prep.derived_notes(summaries, False, [ranked]) == notes


def test_patterns_over_hexes_with_a_position_prior_match_exact():
    """Drops on two hexes (the guess and its east neighbour) against a U-boat anywhere in the ring:
    labels name the hexes and every pattern's P(sunk) is within 5 SE of the enumeration."""
    _, _, prep = prepare("depth_charge_pattern", {
        "charges": 2, "depth_settings": [3], "offsets": [[0, 0], [1, 0]],
        "sub": {"depth": 3, "position": "guess_and_ring"}, "thrower": {"speed": 4}}, ONCE)
    assert [m.label.removeprefix("P(sunk) with pattern ") for m in prep.metrics] == \
        ["d3@(0,0)x2", "d3@(0,0)x1 d3@(1,0)x1", "d3@(1,0)x2"]
    exact = prep.exact()
    trials = 40_000
    acc = MetricAccumulator(len(prep.metrics), prep.n_bins, len(prep.counters))
    acc.add_chunks(*prep.run_kernel(5, 3, 0, -(-trials // CHUNK_TRIALS), CHUNK_TRIALS, trials))
    for i, m in enumerate(prep.metrics):
        p = exact[m.name].mean
        assert 0 < p < 1
        assert abs(acc.summary(i, 1, True).mean - p) < SIGMAS * math.sqrt(p * (1 - p) / trials), m.label
