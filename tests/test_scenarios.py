"""Every shipped scenario file is a runnable example: it loads, validates and compiles
every sweep point (running them all is `analyzer run scenarios/`)."""
from pathlib import Path

import pytest

from analyzer.run import runner
from analyzer.core import scenario

ROOT = Path(__file__).resolve().parent.parent
FILES = scenario.expand_targets([str(ROOT / "scenarios")])


def test_there_are_scenarios_for_every_implemented_game():
    games = {scenario.load(f).spec.game for f in FILES}
    assert {"dice", "dystopian_wars", "b17", "uboat_leader", "breaking_news", "hacse_naval"} <= games


@pytest.mark.parametrize("path", FILES, ids=[str(f.relative_to(ROOT / "scenarios")) for f in FILES])
def test_scenario_validates_and_compiles(path):
    sc = scenario.load(path)
    for point in sc.points:
        prepared = runner.prepare_point(sc, point)
        assert prepared.metrics and prepared.n_bins > 0
