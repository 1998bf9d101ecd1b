"""The kernels against the independent pure-Python reference
(analyzer/games/hacse_naval/reference.py) on the stateful questions: fire (every reading of H13), depth-charge patterns with priors and effect chains,
torpedo salvos and minefields. Every metric's distribution bin by bin within 5 combined SEs.
``ANALYZER_FULL_REFERENCE=1`` runs the reference at the resolution of tests/stat_checks.RESOLVE."""
import pytest

from tests.hacse_naval.helpers import DATA, assert_distributions_agree, assert_means_agree, prepare, run
from analyzer.games.hacse_naval import reference as ref
from tests.stat_checks import FULL_REFERENCE, reference_trials, resolvable_shift

KERNEL_TRIALS = 200_000
REF_TRIALS = 20_000


def _compare(question, params, rules, seed=21):
    _, p, prep = prepare(question, params, rules)
    counts = run(prep, KERNEL_TRIALS, seed=seed)
    probs = [c[1] / c.sum() for m, c in zip(prep.metrics, counts.values()) if m.is_probability]
    n_ref = reference_trials(probs, KERNEL_TRIALS) if FULL_REFERENCE else REF_TRIALS
    sample = ref.simulate(question, p.model_dump(mode="json", exclude_unset=True), rules, DATA, n_ref, seed)
    assert set(sample) == set(counts)
    for name, c in counts.items():
        assert_distributions_agree(c, sample[name], what=f"{question} {rules} {name}")
        assert_means_agree(c, sample[name], what=f"{question} {rules} {name} mean")
    return resolvable_shift(probs, KERNEL_TRIALS, n_ref)


@pytest.mark.parametrize("rules", [
    {},
    {"extinguish_scope": "one_fire", "fire_row": "same_row", "fire_extinguish": "roll_under"},
    {"fire_spreads": "no", "threshold_less_rows": "any_hit", "half_hp": "floor"},
])
def test_fire_kernel_matches_reference(rules):
    _compare("fire", {"ship": "destroyer", "hex": 1, "base_number": 6}, rules)


def test_fire_that_cannot_be_put_out_and_cannot_sink_the_ship_hits_the_named_cap(tmp_path):
    """3W10 > 3 x Basiszahl 10 never succeeds; a fire in a hex without a hull row never sinks the
    ship: every trial stops at MAX_FIRE_ROUNDS and the counter (noted in outputs) says so."""
    from kernels.hacse_naval.fire import MAX_FIRE_ROUNDS
    from tests.hacse_naval.helpers import barge_fire
    prep = barge_fire(tmp_path, "{name: Katapult, kinds: [katapult], hp: 4}")
    hist, moments, counters = prep.run_kernel(1, 2, 0, 1, 300, 300)
    assert counters.sum() == 300 and prep.counters[0].note.startswith("fires still burning")
    # damage_dealt (metric 4, issue 29: `damage` is capped at the Katapult's [4])
    assert (moments[0, 0, 0], moments[0, 4, 0]) == (300 * MAX_FIRE_ROUNDS, 300 * (2 + 2 * MAX_FIRE_ROUNDS))
    assert moments[0, 1, 0] == 300 * 4
    assert hist[0, 3, 0] == 300                     # never sunk


@pytest.mark.parametrize("rules", [{}, {"sub_hull_rows": "all_at_half", "overrun_dice": "one_times_levels",
                                        "charge_roll": "one_per_unit"}])
def test_depth_charge_pattern_with_priors_matches_reference(rules):
    params = {"charges": [{"depth_setting": 2, "offset": [-1, 0]}, {"depth_setting": 2, "offset": [0, 0]},
                          {"depth_setting": 3, "offset": [0, 0]}, {"depth_setting": 3, "offset": [1, 0]}],
              "sub": {"depth": [1, 2, 3, 4], "position": "guess_and_ring"}, "thrower": {"speed": 2}}
    _compare("depth_charge", params, rules)


def test_torpedo_salvo_matches_reference():
    _compare("torpedo_salvo", {"ship": "destroyer", "torpedoes": 4, "hit_probability": 0.5}, {})


def test_mine_field_matches_reference():
    _compare("mine_field", {"ship": "destroyer", "hexes": 8, "density": 0.3}, {"threshold_less_rows": "any_hit"})


def test_sighting_matches_reference():
    _compare("sighting", {"sensor": "passive_sonar", "own_speed": 1, "sub_depth": 1, "distance": 2, "rounds": 6},
             {"roll_model": "dice_under"})


def test_reference_plays_every_shipped_scenario():
    """As tests/test_reference_agreement.py does for the other games: the reference plays the first
    and last point of every shipped hacse_naval scenario with the kernel's metric names, 0/1 for
    probabilities and values inside the kernel's histogram."""
    import math
    from analyzer.core import scenario as scenario_mod
    from analyzer.run.runner import prepare_point
    from tests.hacse_naval.helpers import SCEN
    for path in scenario_mod.expand_targets([str(SCEN)]):
        sc = scenario_mod.load(path)
        assert sc.spec.question in ref.QUESTIONS
        for point in {id(p): p for p in (sc.points[0], sc.points[-1])}.values():
            prepared = prepare_point(sc, point)
            params = point.params.model_dump(mode="json", exclude_unset=True)
            n = 3 if sc.spec.question in ("fire", "depth_charge_pattern") else 20
            out = ref.simulate(sc.spec.question, params, point.rules, DATA, n, sc.spec.seed)
            assert set(out) == {m.name for m in prepared.metrics}, path.name
            for metric in prepared.metrics:
                values = out[metric.name]
                assert len(values) == n and all(math.isfinite(v) and v >= 0 for v in values)
                if metric.is_probability:
                    assert set(values) <= {0, 1}
                assert max(values) <= prepared.n_bins - 1, (path.name, metric.name)
