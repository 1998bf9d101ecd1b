"""Issue 31: ``answers.parquet`` (one tidy long table per run folder: point x entity x metric, notes
as rows keyed by point) and ``analyzer index`` (polars: every run's answers in one table, an index
page with each scenario's latest report), also written by itself after a run of several scenarios."""
import json
import os
import re
import shutil
from pathlib import Path

import pandas as pd
import polars as pl
import pytest
from typer.testing import CliRunner

from analyzer.cli.app import app
from tests.browser import SKIP, body_at_width, find_browser, screenshot
from analyzer.core.questions import Metric
from analyzer.outputs.answers import quantity_and_entity

#: the module's tests share one expensive module fixture: one worker runs them all under pytest -n
pytestmark = pytest.mark.xdist_group("answers_index")

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()


def _run(*args: str) -> None:
    r = runner.invoke(app, list(args))
    assert r.exit_code == 0, r.stderr


def _run_dir(out: Path) -> Path:
    (summary,) = list(out.rglob("summary.json"))
    return summary.parent


def test_metric_names_split_into_quantity_and_entity():
    assert quantity_and_entity(Metric("vp.fleet_a", "")) == ("vp", "fleet_a")
    assert quantity_and_entity(Metric("p_level_Good.fleet_a", "")) == ("p_level_Good", "fleet_a")
    assert quantity_and_entity(Metric("p_hit", "")) == ("p_hit", None)
    assert quantity_and_entity(Metric("kills_tail", "", quantity="kills", entity="tail")) == ("kills", "tail")


def test_answers_table_holds_every_point_metric_and_note(tmp_path):
    """Its metric rows equal points.parquet's means/SEs/CIs, keyed by point and swept values; the notes
    are rows of the point that carries them, in its order."""
    _run("run", str(ROOT / "scenarios/dystopian_wars/attack_ad_grid.yaml"), "--trials", "400", "--out",
         str(tmp_path), "--no-progress")
    run_dir = _run_dir(tmp_path)
    answers = pd.read_parquet(run_dir / "answers.parquet")
    points = pd.read_parquet(run_dir / "points.parquet")
    summary = json.loads((run_dir / "summary.json").read_text())
    metric_rows = answers[answers["row"] == "metric"]
    names = list(summary["points"][0]["metrics"])
    assert len(metric_rows) == len(points) * len(names)
    swept = list(summary["points"][0]["swept"])
    assert swept and all(c in answers.columns for c in swept)
    for _, row in metric_rows.iterrows():
        p = points[points["point"] == row["point"]].iloc[0]
        for stat in ("mean", "se", "ci_low", "ci_high"):
            assert row[stat] == p[f"{row['metric']}_{stat}"]
        for c in swept:
            assert row[c] == p[c]
    for i, pt in enumerate(summary["points"]):
        notes = answers[(answers["row"] == "note") & (answers["point"] == i)]["note"].tolist()
        assert notes == list(dict.fromkeys(pt["notes"]))
    assert not answers["exact"].any() and (metric_rows["trials"] == 400).all()


def test_answers_table_names_entities_and_cells(tmp_path):
    """The B-17 gun matrix's metrics are a gun (entity) at a cell: clock and altitude are columns, not
    parts of the metric name that a reader must parse."""
    _run("run", str(ROOT / "scenarios/b17/gun_matrix_skills.yaml"), "--trials", "200", "--out", str(tmp_path),
         "--no-progress")
    answers = pd.read_parquet(_run_dir(tmp_path) / "answers.parquet")
    row = answers[answers["metric"] == "p_hit__nose__1030__level"].iloc[0]
    assert (row["quantity"], row["entity"], row["clock"], row["altitude"]) == ("p_hit", "nose", "10:30", "level")
    assert set(answers[answers["quantity"] == "p_destroyed"]["entity"]) >= {"nose", "all guns"}


def test_exact_run_answers_are_marked_exact(tmp_path):
    _run("exact", str(ROOT / "scenarios/dystopian_wars/attack_ad_grid.yaml"), "--out", str(tmp_path))
    answers = pd.read_parquet(_run_dir(tmp_path) / "answers.parquet")
    metric_rows = answers[answers["row"] == "metric"]
    assert metric_rows["exact"].all() and (metric_rows["se"] == 0).all()


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> Path:
    """``analyzer run scenarios/dystopian_wars/``: a folder batch, indexed by itself."""
    out = tmp_path_factory.mktemp("batch")
    r = runner.invoke(app, ["run", str(ROOT / "scenarios/dystopian_wars"), "--trials", "300", "--out", str(out),
                            "--no-progress"])
    assert r.exit_code == 0, r.stderr
    assert "index page:" in r.stdout            # results on stdout: the index was built by the batch
    return out


def test_index_table_is_the_union_of_the_runs_answer_tables(batch):
    _run("index", str(batch))
    combined = pl.read_parquet(batch / "index.parquet")
    run_dirs = sorted({p.parent for p in batch.rglob("answers.parquet")})
    assert len(run_dirs) == len([p for p in batch.glob("*/*/manifest.json") if p.parent.name != "latest"]) >= 10
    assert combined["run"].n_unique() == len(run_dirs)
    assert combined.height == sum(pl.read_parquet(d / "answers.parquet").height for d in run_dirs)
    for d in run_dirs:
        own = pl.read_parquet(d / "answers.parquet")
        rel = f"{d.parent.name}/{d.name}"
        mine = combined.filter(pl.col("run") == rel).select(own.columns)
        assert mine.equals(own.cast(mine.schema), null_equal=True), rel
        summary = json.loads((d / "summary.json").read_text())
        assert combined.filter(pl.col("run") == rel)["scenario"].unique().to_list() == [summary["scenario"]]


def test_index_page_links_every_runs_report_and_the_latest(batch):
    page = (batch / "index.html").read_text()
    links = re.findall(r'href="([^"]+)"', page)
    reports = {f"{p.parent.parent.name}/{p.parent.name}/report.html" for p in batch.rglob("report.html")}
    assert reports and reports <= set(links)
    assert page.count(">latest</a>") == len({p.parent.parent.name for p in batch.rglob("report.html")})
    for link in links:
        assert (batch / link).is_file(), link


def test_index_lists_what_it_cannot_use_and_escapes_names(batch, tmp_path):
    """A run folder without answers.parquet (an older version), an incomplete one and a link are
    listed with the reason and add no rows; a scenario name is text on the page, never markup."""
    root = tmp_path / "results"
    shutil.copytree(batch, root, symlinks=True)         # each scenario folder's latest stays a link
    runs = sorted(p.parent for p in root.rglob("answers.parquet"))
    (runs[0] / "answers.parquet").unlink()
    manifest = json.loads((runs[1] / "manifest.json").read_text())
    manifest["status"] = "incomplete"
    (runs[1] / "manifest.json").write_text(json.dumps(manifest))
    (root / "elsewhere").symlink_to(runs[2].parent)
    summary_file = runs[3] / "summary.json"
    summary = json.loads(summary_file.read_text())
    summary["scenario"] = "<script>alert(1)</script>"
    summary_file.write_text(json.dumps(summary))
    r = runner.invoke(app, ["index", str(root), "--json"])
    assert r.exit_code == 0, r.stderr
    info = json.loads(r.stdout)
    rel = lambda d: f"{d.parent.name}/{d.name}"   # noqa: E731
    assert "older version" in info["skipped"][rel(runs[0])]
    assert "incomplete" in info["skipped"][rel(runs[1])]
    assert "link" in info["skipped"]["elsewhere"]
    assert len(info["runs"]) == len(runs) - 2
    combined = pl.read_parquet(root / "index.parquet")
    assert combined.height == sum(pl.read_parquet(d / "answers.parquet").height for d in runs[2:])
    page = (root / "index.html").read_text()
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)" in page


def test_index_follows_each_scenario_folders_latest(batch, tmp_path):
    """Each scenario folder's ``latest`` (a link the run wrote, :func:`analyzer.outputs.writer.mark_latest`)
    is not a run to list or skip: the page's "latest" link goes to the run it names, even when
    another run of the folder says it was created later."""
    root = tmp_path / "results"
    shutil.copytree(batch, root, symlinks=True)
    runs = sorted(p.parent for p in root.rglob("answers.parquet"))
    named = runs[0]
    assert os.readlink(named.parent / "latest") == named.name
    later = named.parent / "29990101T000000-later"
    shutil.copytree(named, later)
    manifest = json.loads((later / "manifest.json").read_text())
    manifest["created_utc"] = "2999-01-01T00:00:00+00:00"
    (later / "manifest.json").write_text(json.dumps(manifest))
    r = runner.invoke(app, ["index", str(root), "--json"])
    assert r.exit_code == 0, r.stderr
    info = json.loads(r.stdout)
    assert not [k for k in info["skipped"] if k.endswith("/latest")]
    assert len(info["runs"]) == len(runs) + 1
    page = (root / "index.html").read_text()
    assert f'<a href="{named.parent.name}/{named.name}/report.html">latest</a>' in page
    assert f'<a href="{named.parent.name}/{later.name}/report.html">latest</a>' not in page


def test_index_refuses_what_is_not_a_folder(tmp_path):
    r = runner.invoke(app, ["index", str(tmp_path / "nothing")])
    assert r.exit_code != 0 and "not a folder" in r.stderr
    assert not (tmp_path / "nothing").exists()




def test_index_page_in_a_headless_browser(batch, tmp_path):
    """At a desktop (1280 px) and a phone (412 px) width: no script error, no horizontal scrolling."""
    browser = find_browser()
    if browser is None:
        pytest.skip(SKIP)
    url = (batch / "index.html").as_uri()
    for device, (w, h) in (("phone", (412, 900)), ("desktop", (1280, 900))):
        size = f"{w},{h}"
        tag = body_at_width(browser, batch / "index.html", w, h, tmp_path / device)
        assert 'data-errors="0"' in tag and 'data-overflow="false"' in tag, (device, tag)
        screenshot(browser, url, size, tmp_path / f"index_{device}.png")


def test_a_fact_never_hides_a_swept_value_and_integers_stay_integers():
    """Breaking News points_efficiency sweeps ``unit`` (a mapping) and gives each point's ``unit``
    label and ``cost`` as facts: the label is ``fact.unit`` beside the swept ``unit``, the cost an integer."""
    import analyzer
    r = analyzer.simulate(ROOT / "scenarios/breaking_news/points_efficiency.yaml", trials=64)
    table = r.answers()
    assert {"unit", "fact.unit", "cost"} <= set(table.columns)
    assert str(table["cost"].dtype) == "Int64"
    rows = table[table["row"] == "metric"]
    for point in r.points:
        mine = rows[rows["point"] == point.point.index]
        assert set(mine["fact.unit"]) == {point.entity_columns[None]["unit"]}
        assert set(mine["cost"]) == {point.entity_columns[None]["cost"]}
