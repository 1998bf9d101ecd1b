"""No result is quietly wrong: extreme explosions, compare's paired CI at few trials, YAML
coercions and duplicate keys, command-line overrides, data files beside a scenario, and
placeholders replaced by a sweep."""
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st
from typer.testing import CliRunner

from analyzer import api
from analyzer.run import dice
from analyzer.core import exact
from analyzer.core import scenario as scenario_mod
from analyzer.cli.app import app
from analyzer.core.errors import ScenarioError
from analyzer.core.questions import Metric, Prepared
from analyzer.run.runner import simulate_point, summarize

MIN_PAIRED_BATCHES = 64  # analyzer.run.runner.MIN_PAIRED_BATCHES (checked below)

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()
SIGMAS = 5.0


def write(folder: Path, doc, name="s.yaml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / name
    p.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc))
    return p


def pool_doc(trials=100_000, seed=7, **params):
    return {"game": "dice", "question": "pool", "seed": seed, "trials": trials, "params": params}


def run_and_exact(path: Path):
    sc = scenario_mod.load(path)
    mc = api.run(sc)[0]
    ex = api.exact(scenario_mod.load(path))[0]
    return mc, ex


def assert_mc_matches_exact(mc, ex):
    """Every metric within 5 standard errors, the SE taken from the exact distribution (the
    sample SE is 0 when a rare tail happened not to occur)."""
    for name, s in mc.summaries.items():
        want = ex.summaries[name].mean
        values, probs = ex.distributions[name]
        var = float(probs @ (np.asarray(values, float) - want) ** 2)
        se = math.sqrt(var / mc.trials)
        assert abs(s.mean - want) <= SIGMAS * se + 1e-12, f"{name}: MC {s.mean} ± {s.se} vs exact {want} (se {se})"


# --- exploding pools: means and tails exact whatever the histogram's size --------------------

@pytest.mark.parametrize("params", [
    dict(dice=10, sides=10, hit_on=4, double_on=6, explode_on=2, need=100),   # mean 120, was 68 capped
    dict(dice=1, sides=100, hit_on=4, double_on=6, explode_on=2, need=150),   # chains ~100 long, were cut at 64
    dict(dice=3, sides=6, hit_on=2, double_on=None, explode_on=2, need=20),
])
def test_pool_extreme_explosions_match_exact(tmp_path, params):
    mc, ex = run_and_exact(write(tmp_path, pool_doc(**params)))
    assert_mc_matches_exact(mc, ex)
    assert not any("explosion chains cut" in n for n in mc.notes)
    assert mc.counters["explosion_caps"] == 0 and mc.counters["dice_rolled"] >= params["dice"] * mc.trials


def test_pool_moments_and_tail_exact_even_when_clipped():
    """A histogram far too small for the pool: only its last bin is 'or more'; the mean,
    its SE and P(>= need) come from exact in-kernel sums and counters."""
    fv, fe = dice.hit_table(4, 6, 2, 10)
    r = dice.simulate_pool(10, fv, fe, trials=100_000, seed=3, n_bins=8, need=100)
    assert r.clipped > 90_000 and r.counts.sum() == 100_000
    d = exact.pool(10, fv, fe)
    mean = r.total / 100_000
    var = r.total_sq / 100_000 - mean ** 2
    assert abs(mean - d.mean()) < SIGMAS * math.sqrt(var / 100_000)
    p = r.at_least_need / 100_000
    want = d.p_at_least(100)
    assert abs(p - want) < SIGMAS * math.sqrt(want * (1 - want) / 100_000)


def test_counters_reach_the_notes():
    """A kernel's declared counters are summed by the runner and noted when non-zero."""
    from analyzer.core.questions import Counter
    def kernel(seed, key, lo, hi, chunk_size, n_trials, n_bins, args):
        hist = np.zeros((hi - lo, 1, n_bins), np.int64)
        hist[:, 0, 0] = chunk_size
        return hist, np.zeros((hi - lo, 1, 3), np.int64), np.full((hi - lo, 2), 3, np.int64)
    prep = Prepared([Metric("x", "x")], 2, kernel=kernel, counters=(Counter("cut", "chains cut"), Counter("rolled")))
    sc = scenario_mod.load(write(Path(__import__("tempfile").mkdtemp()), pool_doc(trials=4096 * 2)))
    acc, _, _ = simulate_point(sc, sc.points[0], prep)
    res = summarize(sc.points[0], prep, acc)
    assert "chains cut: 6" in res.notes and not any("rolled" in n for n in res.notes)
    assert res.counters == {"cut": 6, "rolled": 6}


POOLS = st.fixed_dictionaries({
    "dice": st.integers(0, 12),
    "sides": st.sampled_from([4, 6, 8, 10, 12, 20, 100]),
    "hit_frac": st.floats(0.0, 1.0), "double_frac": st.one_of(st.none(), st.floats(0.0, 1.0)),
    "explode_frac": st.one_of(st.none(), st.floats(0.0, 1.0)),
    "cancel_dice": st.integers(0, 4), "need": st.integers(0, 60),
})


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(spec=POOLS)
def test_random_pools_match_exact(tmp_path_factory, spec):
    sides = spec["sides"]
    face = lambda frac, lo: lo + int(round(frac * (sides - lo)))  # noqa: E731
    params = dict(dice=spec["dice"], sides=sides, hit_on=face(spec["hit_frac"], 1),
                  double_on=None if spec["double_frac"] is None else face(spec["double_frac"], 1),
                  explode_on=None if spec["explode_frac"] is None else face(spec["explode_frac"], 2),
                  cancel_dice=spec["cancel_dice"], need=spec["need"])
    if sides == 100 and params["explode_on"] is not None and params["explode_on"] < 30:
        params["dice"] = min(params["dice"], 3)  # keep a 100-long chain per die affordable
    mc, ex = run_and_exact(write(tmp_path_factory.mktemp("p"), pool_doc(trials=20_000, **params)))
    assert_mc_matches_exact(mc, ex)


# --- compare: an honest paired CI at any trial count -------------------------------------------

def _compare(tmp_path, trials, seed):
    a = write(tmp_path, {"game": "dice", "question": "count", "seed": seed, "trials": trials,
                         "params": {"dice": 1, "sides": 6, "target": 6}}, "a.yaml")
    b = write(tmp_path, {"game": "dice", "question": "count", "seed": seed, "trials": trials,
                         "params": {"dice": 2, "sides": 6, "target": 6}}, "b.yaml")
    cmp = api.compare(scenario_mod.load(a), scenario_mod.load(b))
    return cmp.points[0]["metrics"]["successes"]["diff_b_minus_a"]


@pytest.mark.parametrize("trials", [64, 4096, 4097, 20_000])
def test_compare_ci_covers_the_true_difference(tmp_path, trials):
    """Mean successes of 2 dice vs 1 die at 6: the true difference is 1/6. Over 150 seeds
    the 95% CI must cover it about 95% of the time (was 0% at 4096 trials: zero width),
    and the reported SE must match the spread of the estimates."""
    diffs, ses, covered = [], [], 0
    for seed in range(150):
        d = _compare(tmp_path, trials, seed)
        diffs.append(d["mean"])
        ses.append(d["se"])
        covered += d["ci_low"] <= 1 / 6 <= d["ci_high"]
    # coverage: binomial(150, 0.95) has SD 0.018; 5 SD below 0.95 is 0.86
    assert covered / 150 >= 0.86, covered
    spread = float(np.std(diffs, ddof=1))
    # the SD of 150 estimates is within +-30% of the truth with probability > 0.99999
    assert 0.7 < float(np.mean(ses)) / spread < 1.3, (np.mean(ses), spread)


def test_compare_refuses_too_few_trials(tmp_path):
    from analyzer.run import runner as runner_mod
    assert runner_mod.MIN_PAIRED_BATCHES == MIN_PAIRED_BATCHES
    with pytest.raises(ScenarioError, match=f"at least {MIN_PAIRED_BATCHES} trials"):
        _compare(tmp_path, MIN_PAIRED_BATCHES - 1, 1)


# --- strict types at the edge --------------------------------------------------------------------

def refusal(tmp_path, text: str) -> str:
    """``analyzer validate`` on a scenario text: must exit 2 with one line naming the file."""
    p = write(tmp_path, text)
    r = runner.invoke(app, ["validate", str(p)])
    assert r.exit_code == 2
    line = r.stderr.strip()
    assert "\n" not in line and str(p) in line
    return line


@pytest.mark.parametrize("text,field", [
    ("game: dice\nquestion: count\ntrials: yes\n", "trials"),
    ("game: dice\nquestion: count\nseed: true\n", "seed"),
    ("game: dice\nquestion: count\nparams: {dice: yes}\n", "params.dice"),
    ("game: dice\nquestion: count\nsweep: {dice: [2, true]}\n", "params.dice"),
    ("game: dice\nquestion: count\nstrict: 1\n", "strict"),
    ("game: dice\nquestion: pool\nparams: {double_on: no}\n", "params.double_on"),
])
def test_yaml_booleans_are_not_numbers(tmp_path, text, field):
    assert field in refusal(tmp_path, text)


@pytest.mark.parametrize("text,key", [
    ("game: dice\nquestion: count\ntrials: 100\ntrials: 200\n", "trials"),
    ("game: dice\nquestion: count\nparams:\n  dice: 2\n  dice: 3\n", "dice"),
])
def test_duplicate_keys_are_refused(tmp_path, text, key):
    line = refusal(tmp_path, text)
    assert "duplicate key" in line and repr(key) in line


def test_yaml_merge_keys_may_still_be_overridden(tmp_path):
    p = write(tmp_path, "base: &b {dice: 2, sides: 6}\ngame: dice\nquestion: count\n")
    with pytest.raises(ScenarioError, match="base"):  # unknown top-level key, not a duplicate
        scenario_mod.load(p)
    from analyzer.core.gamedata import read_yaml
    q = write(tmp_path, "a: &b {x: 1, y: 2}\nc:\n  <<: *b\n  x: 3\n", "m.yaml")
    assert read_yaml(q) == {"a": {"x": 1, "y": 2}, "c": {"x": 3, "y": 2}}


@pytest.mark.parametrize("args,field", [
    (["--precision", "0"], "--precision"), (["--precision", "-1"], "--precision"),
    (["--precision", "nan"], "--precision"), (["--precision", "inf"], "--precision"),
    (["--seed", "-1"], "--seed"), (["--trials", "0"], "--trials"), (["--trials", "-5"], "--trials"),
])
def test_command_line_overrides_validated_like_the_file(tmp_path, args, field):
    p = write(tmp_path, {"game": "dice", "question": "count", "trials": 1000})
    r = runner.invoke(app, ["run", str(p), "--out", str(tmp_path / "out"), *args])
    assert r.exit_code == 2, r.stdout
    assert field in r.stderr and "\n" not in r.stderr.strip()
    assert not (tmp_path / "out").exists()


# --- the manifest says which data made the numbers ----------------------------------------------

DW_ATTACK = {"game": "dystopian_wars", "question": "attack", "seed": 1, "trials": 8192,
             "params": {"attack_dice": 12, "weapon": "primary", "range_band": 2,
                        "target": {"size": "medium", "dr": 4, "cr": 6, "hp": 2}}}


def test_manifest_lists_data_files_read(tmp_path):
    shipped = write(tmp_path / "a", DW_ATTACK)
    beside = write(tmp_path / "b", DW_ATTACK)
    (tmp_path / "b" / "data").mkdir()
    src = ROOT / "scenarios" / "dystopian_wars" / "data" / "dystopian_wars.yaml"
    text = src.read_text()
    assert "small_hp" in text or "critical_default" in text
    shutil.copy(src, tmp_path / "b" / "data" / "dystopian_wars.yaml")
    with open(tmp_path / "b" / "data" / "dystopian_wars.yaml", "a") as fh:
        fh.write("\n# a local edit\n")
    manifests = []
    for sc in (shipped, beside):
        r = runner.invoke(app, ["run", str(sc), "--out", str(tmp_path / "out"), "--no-progress", "--json"])
        assert r.exit_code == 0, r.stderr
        run_dir = Path(json.loads(r.stdout)["run_dir"])
        manifests.append(json.loads((run_dir / "manifest.json").read_text()))
    a, b = manifests
    assert a["scenario_sha256"] == b["scenario_sha256"] and a["seed"] == b["seed"]
    fa = {f["path"]: f for f in a["data_files"]}
    fb = {f["path"]: f for f in b["data_files"]}
    assert fa["data/dystopian_wars.yaml"]["origin"] == "shipped"
    assert fb["data/dystopian_wars.yaml"]["origin"] == "scenario"
    assert fa["data/dystopian_wars.yaml"]["sha256"] != fb["data/dystopian_wars.yaml"]["sha256"]
    assert all(len(f["sha256"]) == 64 for f in a["data_files"])
    (pt,) = a["points"]
    assert pt["rules"] and "placeholders" in pt and "data/dystopian_wars.yaml (shipped)" in pt["data_files"]


# --- placeholders: a swept value replaces the placeholder ---------------------------------------

SWEPT_PH = {**DW_ATTACK, "trials": 4096,
            "params": {**DW_ATTACK["params"], "critical_hp": {"ph": 2, "note": "not in the source"}},
            "sweep": {"critical_hp": [1, 3]}}


def test_swept_value_replaces_the_placeholder(tmp_path):
    sc = scenario_mod.load(write(tmp_path, SWEPT_PH))
    for point in sc.points:
        assert not [ph for ph in point.placeholders if ph.path == "params.critical_hp"]
    results = api.run(sc)
    for r in results:
        assert not [ph for ph in r.placeholders if ph.path == "params.critical_hp"]
    # without the sweep the placeholder is used and listed
    plain = {k: v for k, v in SWEPT_PH.items() if k != "sweep"}
    (r,) = api.run(scenario_mod.load(write(tmp_path, plain, "plain.yaml")))
    assert [ph for ph in r.placeholders if ph.path == "params.critical_hp"]


def test_strict_runs_when_the_sweep_replaces_every_placeholder(tmp_path):
    doc = {**SWEPT_PH, "strict": True}
    sc = scenario_mod.load(write(tmp_path, doc))
    try:
        api.run(sc)
    except ScenarioError as e:  # another placeholder may remain; it must not be critical_hp
        assert "params.critical_hp" not in str(e)
        assert "strict" in str(e)


def test_placeholder_written_in_a_sweep_value_is_listed(tmp_path):
    doc = {**SWEPT_PH, "params": DW_ATTACK["params"], "sweep": {"critical_hp": [{"ph": 2, "note": "guess"}, 3]}}
    sc = scenario_mod.load(write(tmp_path, doc))
    first, second = sc.points
    assert [ph.value for ph in first.placeholders if ph.path == "params.critical_hp"] == [2]
    assert not [ph for ph in second.placeholders if ph.path == "params.critical_hp"]
    assert first.swept == {"critical_hp": 2}
