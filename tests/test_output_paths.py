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
    sc = scenario_file(tmp_path / "in", {**COUNT, "name": "victim"}, "victim.yaml")   # name and file alike
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


# --- results/<scenario>/latest (issue 31) -------------------------------------------------------
def _exact_run(sc: Path, out: Path) -> Path:
    loaded = scenario_mod.load(sc)
    run_dir, _ = api.write_run(loaded, api.exact(loaded), out, mode="exact", threads=1, wall_seconds=0.0)
    return run_dir


def test_latest_names_the_newest_complete_run_and_never_a_partial_one(tmp_path, monkeypatch):
    """Used to: no ``latest``. Now ``<scenario folder>/latest`` is a relative link to the run folder
    completed last, replaced atomically; a run that fails while writing leaves it where it was."""
    from analyzer.outputs import writer
    sc = scenario_file(tmp_path / "in", COUNT)
    out = tmp_path / "out"
    first = _exact_run(sc, out)
    latest = first.parent / "latest"
    assert latest.is_symlink() and os.readlink(latest) == first.name
    second = _exact_run(sc, out)
    assert second != first and os.readlink(latest) == second.name and latest.resolve() == second.resolve()
    assert writer.read_latest(first.parent) == second.name

    def broken(*a, **k):
        raise RuntimeError("disk full while drawing")
    monkeypatch.setattr(api.plots, "render", broken)
    with pytest.raises(RuntimeError):
        _exact_run(sc, out)
    assert os.readlink(latest) == second.name
    assert sorted(p.name for p in first.parent.iterdir()) == sorted([first.name, second.name, "latest"])


def test_a_checkpointed_run_marks_latest_once_complete(tmp_path):
    sc = scenario_file(tmp_path / "in", COUNT)
    r = runner.invoke(app, ["run", str(sc), "--out", str(tmp_path / "out"), "--no-progress"])
    assert r.exit_code == 0, r.stderr
    (manifest,) = [p for p in (tmp_path / "out").rglob("manifest.json")]      # rglob follows no link
    assert json.loads(manifest.read_text())["status"] == "complete"
    assert os.readlink(manifest.parent.parent / "latest") == manifest.parent.name


@pytest.mark.parametrize("planted", ["link_out", "file", "dangling"])
def test_a_planted_latest_is_replaced_never_written_through(tmp_path, planted):
    """A ``latest`` someone left in the scenario folder (a link to a folder elsewhere, a file, a
    link to nothing) is replaced by the run's own link; nothing is written where it pointed."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    sc = scenario_file(tmp_path / "in", COUNT)
    out = tmp_path / "out"
    (out / "s").mkdir(parents=True)
    latest = out / "s" / "latest"
    if planted == "link_out":
        latest.symlink_to(elsewhere, target_is_directory=True)
    elif planted == "file":
        latest.write_text("../../elsewhere\n")
    else:
        latest.symlink_to(tmp_path / "nothing")
    from analyzer.outputs import writer
    if planted == "file":
        assert writer.read_latest(out / "s") is None            # a name that leaves the folder is not read
    run_dir = _exact_run(sc, out)
    assert latest.is_symlink() and os.readlink(latest) == run_dir.name
    assert list(elsewhere.iterdir()) == [] and not (tmp_path / "nothing").exists()


def test_latest_is_a_plain_file_where_links_cannot_be_made(tmp_path, monkeypatch):
    from analyzer.outputs import writer

    def no_links(*a, **k):
        raise OSError(1, "Operation not permitted")
    monkeypatch.setattr(writer.os, "symlink", no_links)
    run_dir = _exact_run(scenario_file(tmp_path / "in", COUNT), tmp_path / "out")
    latest = run_dir.parent / "latest"
    assert not latest.is_symlink() and latest.read_text() == f"{run_dir.name}\n"
    assert writer.read_latest(run_dir.parent) == run_dir.name


def test_run_folders_follow_the_scenario_file_not_its_name(tmp_path):
    sc = scenario_file(tmp_path / "in", {**COUNT, "name": "Some Name"}, "my_file.yaml")
    r = runner.invoke(app, ["run", str(sc), "--out", str(tmp_path / "out"), "--no-progress"])
    assert r.exit_code == 0, r.stderr
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["my_file"]
