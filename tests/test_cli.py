"""The CLI end to end (Typer's runner and the installed command): run, exact, compare,
validate, list, plot, and one clear line with exit code 2 for every kind of bad input."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import polars as pl
import pytest
import yaml
from typer.testing import CliRunner

from analyzer.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()

POOL = {"game": "dice", "question": "pool", "seed": 3, "trials": 20000,
        "params": {"dice": 6, "need": 3}, "sweep": {"dice": [4, 8], "cancel_dice": [0, 2]}}


def write(tmp_path, doc, name="s.yaml"):
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc))
    return p


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def run_dirs(out: Path):
    return [p for p in out.rglob("*") if p.is_dir() and not p.is_symlink() and (p / "summary.json").exists()]


def test_run_writes_tables_plots_and_json(tmp_path):
    sc = write(tmp_path, POOL)
    out = tmp_path / "out"
    r = invoke("run", sc, "--out", out, "--json")
    assert r.exit_code == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["game"] == "dice" and len(summary["points"]) == 4
    for pt in summary["points"]:
        assert set(pt["metrics"]) == {"hits", "p_success"}
        assert set(pt["metrics"]["hits"]) == {"mean", "se", "ci_low", "ci_high"}
        assert pt["trials"] == 20000
    (run_dir,) = run_dirs(out)
    pts_pd = pd.read_parquet(run_dir / "points.parquet")
    pts_pl = pl.read_parquet(run_dir / "points.parquet")
    assert len(pts_pd) == 4 and pts_pl.height == 4
    assert {"dice", "cancel_dice", "trials", "p_success_mean", "p_success_ci_low"} <= set(pts_pd.columns)
    dists = pl.read_parquet(run_dir / "distributions.parquet")
    assert set(dists.columns) == {"point", "metric", "value", "probability"}
    sums = dists.group_by(["point", "metric"]).agg(pl.col("probability").sum())
    assert all(abs(s - 1) < 1e-9 for s in sums["probability"])
    assert list(run_dir.glob("*.png"))
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["seed"] == 3 and manifest["scenario_sha256"] and manifest["trials_per_second"] > 0
    assert json.loads((run_dir / "summary.json").read_text())["points"] == summary["points"]


def test_same_seed_same_points_table(tmp_path):
    sc = write(tmp_path, POOL)
    for out in ("a", "b"):
        assert invoke("run", sc, "--out", tmp_path / out, "--no-progress").exit_code == 0
    (a,), (b,) = run_dirs(tmp_path / "a"), run_dirs(tmp_path / "b")
    pd.testing.assert_frame_equal(pd.read_parquet(a / "points.parquet"), pd.read_parquet(b / "points.parquet"))


def test_run_a_directory_runs_every_scenario(tmp_path):
    d = tmp_path / "batch"
    d.mkdir()
    write(d, POOL, "one.yaml")
    write(d, {"game": "dice", "question": "count", "trials": 5000, "params": {"dice": 3}}, "two.yaml")
    write(d, {"not": "a scenario"}, "data.yaml")  # game data beside scenarios is skipped
    r = invoke("run", d, "--out", tmp_path / "out", "--no-progress")
    assert r.exit_code == 0, r.stderr
    assert len(run_dirs(tmp_path / "out")) == 2


def test_exact_matches_reference_answer(tmp_path):
    sc = write(tmp_path, {"game": "dice", "question": "pool", "params": {"dice": 10, "need": 5}})
    r = invoke("exact", sc, "--json", "--out", tmp_path / "out")
    assert r.exit_code == 0, r.stderr
    m = json.loads(r.stdout)["points"][0]["metrics"]["p_success"]
    assert m["mean"] == pytest.approx(94139 / 110592, abs=1e-12)
    assert m["se"] == 0 and m["ci_low"] == m["ci_high"] == m["mean"]


def test_exact_unsupported_question_exits_2(tmp_path, monkeypatch):
    from analyzer.games.dice import Count
    monkeypatch.setattr(Count, "supports_exact", False)
    sc = write(tmp_path, {"game": "dice", "question": "count", "params": {}})
    r = invoke("exact", sc, "--out", tmp_path / "out")
    assert r.exit_code == 2 and "no exact mode" in r.stderr
    assert not (tmp_path / "out").exists() or not run_dirs(tmp_path / "out")


def test_compare_identical_scenarios_gives_exact_zero(tmp_path):
    a = write(tmp_path, POOL, "a.yaml")
    b = write(tmp_path, POOL, "b.yaml")
    r = invoke("compare", a, b, "--json", "--out", tmp_path / "out")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    for pt in doc["points"]:
        for name, m in pt["metrics"].items():
            d = m["diff_b_minus_a"]
            # difference exactly 0 (se 0), but the CI is never zero-width (issue 25): a
            # Newcombe-style bound from the per-arm intervals, around 0
            assert (d["mean"], d["se"]) == (0.0, 0.0) and d["ci_low"] < 0 < d["ci_high"], name


def test_compare_detects_a_real_difference(tmp_path):
    a = write(tmp_path, {**POOL, "sweep": {}}, "a.yaml")
    b = write(tmp_path, {**POOL, "sweep": {}, "params": {"dice": 7, "need": 3}}, "b.yaml")
    r = invoke("compare", a, b, "--json", "--trials", 50000, "--no-write")
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)["points"][0]["metrics"]["hits"]["diff_b_minus_a"]
    # one more die adds 0.8 expected hits exactly
    assert d["ci_low"] < 0.8 < d["ci_high"] and d["se"] > 0


def test_validate_list_and_plot(tmp_path):
    sc = write(tmp_path, POOL)
    r = invoke("validate", sc)
    assert r.exit_code == 0 and "ok" in r.stderr
    r = invoke("list", "--json")
    doc = json.loads(r.stdout)
    pool = next(q for q in doc["dice"] if q["question"] == "pool")
    assert {"path": "dice", "type": "int", "default": 10} .items() <= next(p for p in pool["params"] if p["path"] == "dice").items()
    out = tmp_path / "out"
    assert invoke("run", sc, "--out", out, "--no-progress").exit_code == 0
    (run_dir,) = run_dirs(out)
    for png in run_dir.glob("*.png"):
        png.unlink()
    r = invoke("plot", run_dir)
    assert r.exit_code == 0, r.stderr
    assert list(run_dir.glob("*.png"))


def test_help_explains_every_option():
    for cmd in ("run", "exact", "compare", "validate", "list", "plot", "bench"):
        r = invoke(cmd, "--help")
        assert r.exit_code == 0
    r = invoke("run", "--help")
    for opt in ("--trials", "--precision", "--seed", "--threads", "--out", "--json", "--force"):
        assert opt in r.stdout


BAD = [
    ("game: dice\nquestion: [pool\n", "malformed YAML"),
    ({"game": "dystopia_wars", "question": "attack"}, "did you mean"),
    ({"game": "dice", "question": "pol"}, "did you mean 'pool'"),
    ({"game": "dice", "question": "pool", "params": {"dise": 3}}, "did you mean 'dice'"),
    ({"game": "dice", "question": "pool", "params": {"dice": "many"}}, "params.dice"),
    ({"game": "dice", "question": "pool", "params": {"dice": -2}}, "params.dice"),
    ({"game": "dice", "question": "pool", "params": {"hit_on": 9}}, "hit_on"),
    ({"game": "dice", "question": "pool", "sweep": {"dice": []}}, "empty"),
    ({"game": "dice", "question": "pool", "sweep": {"target.dr": [1, 2]}}, "sweep.target.dr"),
    ({"game": "dice", "question": "pool", "trials": 0}, "trials"),
    ({"game": "dice", "question": "pool", "trials": -5}, "trials"),
    ({"game": "dice", "question": "pool", "trials": 10**12}, "--force"),
    ({"game": "dice", "question": "pool", "seeed": 4}, "did you mean 'seed'"),
    ({"game": "dice", "question": "pool", "rules": {"nope": "x"}}, "rules.nope"),
    ("- just\n- a list\n", "YAML mapping"),
    ({"game": "dystopian_wars", "question": "attack",
      "params": {"attack_dice": 10, "target": {"profile": "frigatte"}}}, "did you mean 'frigate'"),
    ({**POOL, "plots": [{"kind": "heatmap", "metric": "p_sucess", "x": "dice", "y": "cancel_dice"}]}, "plots[0].metric"),
    ({**POOL, "plots": [{"kind": "line", "metric": "hits", "x": "sides"}]}, "plots[0].x"),
    ("game: dice\nquestion: pool\nparams: !!python/object/apply:os.system ['echo hi']\n", "malformed YAML"),
]


@pytest.mark.parametrize("doc,expect", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_input_one_line_exit_2_no_output(tmp_path, doc, expect):
    sc = write(tmp_path, doc)
    out = tmp_path / "out"
    r = invoke("run", sc, "--out", out)
    assert r.exit_code == 2
    lines = [ln for ln in r.stderr.strip().splitlines() if ln.strip()]
    assert len(lines) == 1, r.stderr
    assert str(sc) in r.stderr.replace("\n", "") and expect in r.stderr.replace("\n", "")
    assert not out.exists()


def test_force_allows_huge_trial_counts_past_validation(tmp_path):
    from analyzer.core import scenario
    sc = write(tmp_path, {"game": "dice", "question": "pool", "trials": 10**12})
    assert scenario.load(sc, force=True).spec.trials == 10**12


def test_interrupted_run_leaves_no_output(tmp_path, monkeypatch):
    from analyzer.outputs import plots
    sc = write(tmp_path, POOL)

    def boom(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr(plots, "render", boom)
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        from analyzer import api
        from analyzer.core import scenario
        s = scenario.load(sc)
        api.write_run(s, api.run(s), out, mode="monte_carlo", threads=1, wall_seconds=1.0)
    assert not any(out.rglob("*.parquet"))


def test_installed_command(tmp_path):
    exe = shutil.which("analyzer") or str(Path(sys.executable).parent / "analyzer")
    if not Path(exe).exists():
        pytest.skip("package not installed as a command (run through `make test`)")
    sc = write(tmp_path, {"game": "dice", "question": "count", "trials": 4096, "params": {"dice": 2}})
    out = subprocess.run([exe, "run", str(sc), "--out", str(tmp_path / "o"), "--json"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["points"][0]["trials"] == 4096


def test_precision_option_stops_at_target(tmp_path):
    sc = write(tmp_path, {"game": "dice", "question": "count", "params": {"dice": 2, "target": 5},
                          "max_trials": 2_000_000})
    r = invoke("run", sc, "--precision", 0.005, "--json", "--out", tmp_path / "o")
    assert r.exit_code == 0, r.stderr
    pt = json.loads(r.stdout)["points"][0]
    m = pt["metrics"]["p_success"]
    assert (m["ci_high"] - m["ci_low"]) / 2 < 0.005
    assert pt["trials"] < 2_000_000


def test_bad_threads_exit_2(tmp_path):
    sc = write(tmp_path, POOL)
    r = invoke("run", sc, "--threads", 0, "--out", tmp_path / "o")
    assert r.exit_code == 2 and "--threads" in r.stderr


def test_list_marks_what_if_rule_values():
    r = runner.invoke(app, ["list", "dystopian_wars"], env={"COLUMNS": "250"})
    assert r.exit_code == 0
    line = next(line for line in r.stdout.splitlines() if "rules.melee_dice" in line)
    assert "[what-if, not a reading of the source: plain]" in line
