"""The escort-detection heatmap shows range: cells where the boat is beyond Detection range
are hatched and say so, instead of reading 0 as if never detected (rule fidelity 12)."""
import json

import pandas as pd

from analyzer import api
from analyzer.core import scenario as scenario_mod
from analyzer.games.uboat_leader import plots
from tests.uboat_leader.helpers import SCEN


def test_out_of_range_cells_are_marked_not_zero(tmp_path):
    sc = scenario_mod.load(SCEN / "escort_detection_table.yaml")
    results = api.exact(sc)
    out_of_range = [r for r in results if r.summaries["in_range"].mean == 0]
    in_range = [r for r in results if r.summaries["in_range"].mean == 1]
    assert out_of_range and in_range and len(out_of_range) + len(in_range) == len(results)
    assert all(r.summaries["p_detected"].mean == 0 for r in out_of_range)
    run_dir, _ = api.write_run(sc, results, tmp_path, mode="exact", threads=1, wall_seconds=0.0)
    meta = json.loads((run_dir / "plotmeta.json").read_text())
    ((_, fig),) = plots.escort_detection_figures(meta, pd.read_parquet(run_dir / "points.parquet"))
    for ax in fig.axes[:2]:
        marked = [t for t in ax.texts if t.get_text() == "out of\nrange"]
        hatched = [p for p in ax.patches if p.get_hatch() == "////"]
        assert len(marked) == len(hatched) == len(out_of_range)
        assert not [t for t in ax.texts if t.get_text() == "0"]
    assert "range" in fig._suptitle.get_text() and "beyond Detection range" in fig._suptitle.get_text()
