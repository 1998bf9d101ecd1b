"""``analyzer sensitivity``: one value at a time against the unchanged scenario on common
random numbers. Checked on the escort-detection worked example, where each effect is known
exactly: the surfaced Detection value 5 -> 4 adds P(d10 + 1 = 4) = 0.1 to P(detected), and
values the surfaced case never reads move nothing (exactly 0, by common random numbers)."""
import json

import pytest
import yaml
from typer.testing import CliRunner

from analyzer.core import scenario as scenario_mod
from analyzer.analyses import sensitivity
from analyzer.cli.app import app
from analyzer.core.errors import ScenarioError

from analyzer.run.runner import prepare_point
from tests.stat_checks import assert_mean_matches

EXAMPLE = "scenarios/uboat_leader/escort_detection_example.yaml"


def _effects(result):
    return {(e.variant.what, e.variant.value): e for e in result.effects}


def test_escort_detection_effects_are_the_exact_ones():
    sc = scenario_mod.load(EXAMPLE)
    result = sensitivity.run(sc, trials=40_000)
    assert result.metric == "p_detected"
    effects = _effects(result)
    assert set(effects) == {("params.detection.surfaced", 4), ("params.detection.surfaced", 6),
                            ("params.detection.submerged", 6), ("params.detection.submerged", 8),
                            ("params.uboat.evasion", 3), ("params.uboat.evasion", 5)}
    for value, exact in ((4, 0.1), (6, -0.1)):
        e = effects[("params.detection.surfaced", value)]
        assert e.variant.kind == "example" and not e.error
        assert_mean_matches(e.mean, e.se, exact, what=f"surfaced 5 -> {value}")
    for what in ("params.detection.submerged", "params.uboat.evasion"):
        for e in (v for k, v in effects.items() if k[0] == what):
            assert (e.mean, e.se) == (0.0, 0.0), what
    ranked = result.ranked()
    assert {ranked[0].variant.what, ranked[1].variant.what} == {"params.detection.surfaced"}


def test_rule_options_data_files_and_invalid_values(tmp_path):
    """A data-file placeholder (the critical HP) and every other reading of each rule option are
    variants; a step that leaves a value's allowed range is reported, not a crash. Issue 30: it is
    listed under not_perturbed with the validation's reason, not run and not a row (it was a row
    with an error, last in the ranking)."""
    sc = scenario_mod.load("scenarios/dystopian_wars/attack_ad10.yaml")
    vs, _ = sensitivity.variants(sc)
    whats = {v.what for v in vs}
    assert "dystopian_wars.critical_default.hp_damage" in whats
    assert {f"rules.{o.name}" for o in sc.question.rule_options} <= whats
    doc = yaml.safe_load(open(EXAMPLE))
    doc["params"]["alerted"] = {"ph": 0, "note": "test: -1 is out of range"}
    path = tmp_path / "example.yaml"
    path.write_text(yaml.safe_dump(doc))
    result = sensitivity.run(scenario_mod.load(path), trials=2_000)
    assert ("params.alerted", -1) not in _effects(result) and ("params.alerted", 1) in _effects(result)
    (bad,) = [s for s in result.skipped if s.startswith("params.alerted = -1 ")]
    assert "refused, not run" in bad and "alerted" in bad.split("refused, not run", 1)[1]
    assert not any(e.error for e in result.ranked())


def test_a_sweep_is_refused():
    with pytest.raises(ScenarioError, match="sensitivity perturbs one point"):
        sensitivity.run(scenario_mod.load("scenarios/uboat_leader/escort_detection_table.yaml"))


def test_cli_writes_table_json_and_tornado(tmp_path):
    r = CliRunner().invoke(app, ["sensitivity", EXAMPLE, "--trials", "4000", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.stderr
    folder = next(p.parent for p in tmp_path.rglob("sensitivity.json"))
    doc = json.loads((folder / "sensitivity.json").read_text())
    assert doc["metric"] == "p_detected" and len(doc["variants"]) == 6 and doc["variants"][0]["rank"] == 1
    assert (folder / "tornado.png").read_bytes()[:4] == b"\x89PNG"
    assert (folder / "sensitivity.parquet").is_file()


def test_source_values_on_request_match_the_exact_difference():
    """--source-values moves the plain numbers too: 10 dice at 4+ -> 5+ against DR 5 changes
    P(damage) by exactly P5(hits >= 5) - P4(hits >= 5) (exact engine)."""
    from analyzer.games.dystopian_wars.rules import hit_faces, hits_distribution
    sc = scenario_mod.load("scenarios/dystopian_wars/attack_ad10.yaml")
    plain, _ = sensitivity.variants(sc)
    with_source, _ = sensitivity.variants(sc, include_source_values=True)
    added = [v for v in with_source if v not in plain]
    assert added and all(v.kind == "source value" for v in added)
    target = next(v for v in added if v.what.endswith(":to_hit.vs_surface") and v.value == 5)
    exact = (hits_distribution(10, hit_faces(5)).probs[5:].sum() - hits_distribution(10, hit_faces(4)).probs[5:].sum())
    result = sensitivity.run(sc, trials=20_000, include_source_values=True)
    e = next(e for e in result.effects if e.variant == target)
    assert_mean_matches(e.mean, e.se, exact, what="vs_surface 4 -> 5")


def test_rule_options_the_point_never_reads_are_listed_not_run():
    """Issue 31: `sensitivity` varied every rule option of the question, so attack_ad10 (a surface
    attack on a surface target) showed a dozen rows of exactly +0 +- 0. A rule variant whose compiled
    kernel input equals the scenario's cannot move any metric: it is listed under not_perturbed with the
    reason, and only options that change the point are run (each with a nonzero effect or a real CI)."""
    sc = scenario_mod.load("scenarios/dystopian_wars/attack_ad10.yaml")
    result = sensitivity.run(sc, trials=2_000)
    rule_rows = [e for e in result.effects if e.variant.what.startswith("rules.")]
    unread = [s for s in result.skipped if s.startswith("rules.") and "cannot change this point" in s]
    n_rule_variants = sum(len(o.values) - 1 for o in sc.question.rule_options)
    assert unread and len(rule_rows) + len(unread) == n_rule_variants
    assert all(not (e.mean == 0 and e.se == 0) for e in rule_rows if e.error is None), \
        [(e.variant.what, e.mean, e.se) for e in rule_rows]
    base = prepare_point(sc, sc.points[0])
    assert sensitivity.same_kernel_input(base, prepare_point(sc, sc.points[0]))
