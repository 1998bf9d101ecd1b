"""The issue's reference scenario through the CLI (Typer's runner), exactly as written: exact
target_number 6, dice 1, P(hits >= 1) = 1/6; Monte Carlo within 5 SE; the figures written."""
import json

from typer.testing import CliRunner

from analyzer.cli.app import app
from tests.breaking_news.helpers import SCEN

runner = CliRunner()
REFERENCE = SCEN / "shot_fanatic_burst.yaml"


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_reference_scenario_runs_as_written(tmp_path):
    r = invoke("exact", REFERENCE, "--out", tmp_path, "--json")
    assert r.exit_code == 0, r.stderr
    ex = json.loads(r.stdout)["points"][0]["metrics"]
    assert ex["target_number"]["mean"] == 6 and ex["dice"]["mean"] == 1
    assert abs(ex["hits"]["mean"] - 1 / 6) < 1e-12
    r = invoke("run", REFERENCE, "--out", tmp_path, "--json", "--no-progress")
    assert r.exit_code == 0, r.stderr
    mc = json.loads(r.stdout)
    assert mc["points"][0]["trials"] == 200_000 and mc["seed"] == 1
    hits = mc["points"][0]["metrics"]["hits"]
    assert abs(hits["mean"] - 1 / 6) < 5 * hits["se"]
    assert not mc["placeholders"]


def test_firefight_scenario_writes_its_outcome_figure(tmp_path):
    r = invoke("run", SCEN / "firefight_journalist.yaml", "--out", tmp_path, "--trials", 8192, "--no-progress")
    assert r.exit_code == 0, r.stderr
    assert list(tmp_path.rglob("firefight_outcomes.png"))
