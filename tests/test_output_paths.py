"""Outputs stay inside their folder: hostile scenario names, metric names in a run folder's
plotmeta.json, and links planted in a run folder never make the analyzer write elsewhere."""
import json
import os
from pathlib import Path

import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st
from typer.testing import CliRunner

from analyzer import api
from analyzer.core import scenario as scenario_mod
from analyzer.cli.app import app

runner = CliRunner()
COUNT = {"game": "dice", "question": "count", "seed": 1, "trials": 4096, "params": {"dice": 2}}


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*")}


def scenario_file(folder: Path, doc: dict, name: str = "s.yaml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / name
    p.write_text(yaml.safe_dump(doc, allow_unicode=True))
    return p


@pytest.mark.parametrize("name", ["../../x", "../x", "ABSOLUTE", "a/../../b", ".."])
def test_scenario_name_cannot_leave_out(tmp_path, name):
    elsewhere = tmp_path / "absolute-elsewhere"
    name = str(elsewhere) if name == "ABSOLUTE" else name
    sc = scenario_file(tmp_path / "in", {**COUNT, "name": name})
    out = tmp_path / "box" / "r"
    before = files_under(tmp_path)
    r = runner.invoke(app, ["run", str(sc), "--out", str(out), "--no-progress"])
    assert r.exit_code == 0, r.stderr
    new = files_under(tmp_path) - before
    assert new, "the run wrote nothing"
    ancestors = {out.resolve(), *out.resolve().parents}  # --out itself is created, with its parents
    outside = [p for p in new if out.resolve() not in p.resolve().parents and p.resolve() not in ancestors]
    assert outside == [], outside
    assert not elsewhere.exists()


def test_slug_is_one_safe_component():
    from analyzer.core import paths
    for name in ["../../x", "/etc/passwd", "a\0b", "..", ".", "", "x" * 300, "Über Boot", "名前"]:
        s = paths.slug(name)
        assert s and "/" not in s and "\0" not in s and s not in (".", "..") and not s.startswith(".")
        assert len(s) <= paths.MAX_SLUG
    assert paths.slug("Über-Boot_7") == "Uber-Boot_7"


def test_a_link_in_the_output_tree_is_not_followed_out(tmp_path):
    """results/<name> planted as a link to another folder: the run refuses to write there."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "victim").symlink_to(elsewhere, target_is_directory=True)
    sc = scenario_file(tmp_path / "in", {**COUNT, "name": "victim"})
    with pytest.raises(ValueError, match="outside the output folder"):
        api.write_run(scenario_mod.load(sc), api.run(scenario_mod.load(sc)), out, mode="monte_carlo",
                      threads=1, wall_seconds=0.0)
    assert list(elsewhere.iterdir()) == []


def _one_sweep_run(tmp_path) -> Path:
    sc = scenario_file(tmp_path / "in", {**COUNT, "sweep": {"dice": [1, 2]}})
    out = tmp_path / "out"
    r = runner.invoke(app, ["run", str(sc), "--out", str(out), "--no-progress"])
    assert r.exit_code == 0, r.stderr
    (run_dir,) = [p for p in out.rglob("summary.json")]
    return run_dir.parent


def test_plot_with_hostile_metric_name_stays_in_run_folder(tmp_path):
    run_dir = _one_sweep_run(tmp_path)
    hostile = "../../../escaped"
    meta = json.loads((run_dir / "plotmeta.json").read_text())
    for m in meta["metrics"]:
        if m["name"] == "successes":
            m["name"] = hostile
    (run_dir / "plotmeta.json").write_text(json.dumps(meta))
    pts = pd.read_parquet(run_dir / "points.parquet")
    pts = pts.rename(columns={c: c.replace("successes", hostile) for c in pts.columns})
    pts.to_parquet(run_dir / "points.parquet", index=False)
    before = files_under(tmp_path)
    r = runner.invoke(app, ["plot", str(run_dir)])
    assert r.exit_code == 0, r.stderr
    new = files_under(tmp_path) - before
    assert all(run_dir in p.parents for p in new), new
    assert [p for p in tmp_path.rglob("escaped*") if run_dir not in p.parents] == []
    assert any("escaped" in p.name for p in run_dir.iterdir())


def test_plot_does_not_write_through_planted_links(tmp_path):
    run_dir = _one_sweep_run(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    pngs = sorted(run_dir.glob("*.png"))
    assert pngs
    # a link at the old temporary name, and one at a final name
    (run_dir / f".{pngs[0].name}.tmp").symlink_to(victim)
    pngs[1 if len(pngs) > 1 else 0].unlink()
    (run_dir / pngs[1 if len(pngs) > 1 else 0].name).symlink_to(victim)
    r = runner.invoke(app, ["plot", str(run_dir)])
    assert r.exit_code == 0, r.stderr
    assert victim.read_text() == "precious"
    assert not (run_dir / pngs[1 if len(pngs) > 1 else 0].name).is_symlink()


NAMES = st.one_of(      # up to the name cap (longer names are refused at load: test_after_compute.py)
    st.text(min_size=0, max_size=scenario_mod.MAX_NAME_CHARS),
    st.lists(st.sampled_from(["..", "/", ".", "a", "\0", "\\", "~", "ü", " ", "名"]), max_size=40).map("".join),
    st.sampled_from(["/tmp/x", "/", "../" * 20 + "etc", "x" * scenario_mod.MAX_NAME_CHARS, "C:\\x", "..\\..\\x"]),
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=NAMES)
def test_random_names_never_write_outside_out(tmp_path_factory, name):
    base = tmp_path_factory.mktemp("h")
    sc = scenario_file(base / "in", {**COUNT, "name": name})
    out = base / "box" / "out"
    before = files_under(base)
    loaded = scenario_mod.load(sc)
    api.write_run(loaded, api.exact(loaded), out, mode="exact", threads=1, wall_seconds=0.0)
    new = files_under(base) - before
    assert new
    real_out = Path(os.path.realpath(out))
    assert all(real_out in Path(os.path.realpath(p)).parents for p in new if p != out and p != out.parent)
