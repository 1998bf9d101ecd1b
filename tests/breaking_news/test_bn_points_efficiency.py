"""``points_efficiency``: MC against the exact mode, costs from the list rules, the shipped sweep
covers every unit of the army lists, and the figures (frontier, ranking, heatmaps) are drawn with
their footers."""
import json

import matplotlib
import pytest
import yaml

from analyzer import api
from analyzer.core import scenario
from analyzer.games.breaking_news import plots
from tests.breaking_news.helpers import SCEN, assert_mc_matches_exact, prepare

matplotlib.use("Agg")


@pytest.mark.parametrize("unit,cost", [
    ({"quality": "veteran", "weapons": ["assault_rifle"]}, 12),
    ({"quality": "veteran", "weapons": ["assault_rifle", "grenade_launcher"]}, 17),
    ({"quality": "elite", "weapons": ["lmg"], "leadership": 1}, 25),
    ({"quality": "trained", "weapons": ["assault_rifle"]}, 10),
    ({"quality": "special_forces", "weapons": ["assault_rifle", "sniper_rifle"], "leadership": 1}, 40),
])
def test_cost_and_mc_matches_exact(unit, cost):
    _, _, prep = prepare("points_efficiency", {"unit": unit})
    assert prep.metrics[1].scale == cost
    ex = prep.exact()
    assert ex["casualties_per_100_points"].mean == pytest.approx(ex["casualties_per_turn"].mean * 100 / cost)
    acc = assert_mc_matches_exact(prep, 60_000, what=str(unit))
    assert acc is not None


def test_shipped_sweep_lists_every_army_list_unit():
    d = yaml.safe_load((SCEN / "data" / "armies.yaml").read_text())
    wanted = []
    for al in d["army_lists"].values():
        for q in al["qualities"]:
            for ln in al["lines"]:
                for kit in [ln["weapons"]] + [[w] for w in ln.get("alternatives", [])]:
                    wanted.append((q, tuple(kit), ln.get("leadership", 0)))
    sweep = yaml.safe_load((SCEN / "points_efficiency.yaml").read_text())["sweep"]["unit"]
    have = {(u["quality"], tuple(u["weapons"]), u.get("leadership", 0)) for u in sweep}
    assert set(wanted) == have


def _meta_points(path, tmp_path):
    """(plotmeta, points table) of an exact run written as the CLI writes it."""
    import pandas as pd
    sc = scenario.load(path)
    folder, _ = api.write_run(sc, api.exact(sc), tmp_path, mode="exact", threads=1, wall_seconds=0.0, formats=())
    return json.loads((folder / "plotmeta.json").read_text()), pd.read_parquet(folder / "points.parquet")


def test_points_efficiency_and_heatmap_figures_mark_placeholders_and_reconstructed_cells(tmp_path):
    meta, points = _meta_points(SCEN / "points_efficiency.yaml", tmp_path)
    figs = plots.points_efficiency_figures(meta, points)
    assert [n for n, _ in figs] == ["points_efficiency_frontier", "points_efficiency_ranking"]
    meta, points = _meta_points(SCEN / "shot_weapon_range_heatmap.yaml", tmp_path)
    (name, fig), = plots.shot_figures(meta, points)
    texts = [t.get_text() for t in fig.texts] + [a.get_text() for ax in fig.axes for a in ax.texts]
    assert any("RECONSTRUCTED" in t for t in texts)
    assert any("PLACEHOLDER" in t for t in texts)
    assert any(t.endswith("*") for t in texts)           # starred low-confidence cells
