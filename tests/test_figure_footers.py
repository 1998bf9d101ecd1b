"""Figure footers (rule fidelity 7): they never cover an axis label, they list only the
placeholders the plotted metric depends on, and console notes sort numbers numerically."""
import json

import matplotlib.pyplot as plt
import pandas as pd
import yaml

from analyzer import api
from analyzer.outputs import plots
from analyzer.core import scenario as scenario_mod
from analyzer.cli.summary import natural_key

ATTACK = {"game": "dystopian_wars", "question": "attack", "seed": 1, "trials": 4096,
          "params": {"attack_dice": 10, "weapon": "primary", "range_band": 2,
                     "target": {"size": "medium", "dr": 5, "cr": 8, "hp": 6},
                     "critical_hp": {"ph": 2, "note": "HP per critical"}},
          "sweep": {"attack_dice": [6, 10]}}


def _run(tmp_path, doc):
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(doc))
    sc = scenario_mod.load(tmp_path / "s.yaml")
    run_dir, _ = api.write_run(sc, api.exact(sc), tmp_path / "out", mode="exact", threads=1, wall_seconds=0.0)
    meta = json.loads((run_dir / "plotmeta.json").read_text())
    return meta, pd.read_parquet(run_dir / "points.parquet"), pd.read_parquet(run_dir / "distributions.parquet")


def _footer_text(fig):
    texts = list(fig.texts) + [t for ax in fig.axes for t in ax.texts]
    return next(t for t in texts if "seed" in t.get_text())


def test_footer_lists_only_placeholders_the_metric_depends_on(tmp_path):
    meta, points, _ = _run(tmp_path, ATTACK)
    assert any(p["path"] == "params.critical_hp" for p in meta["placeholders"])
    with plt.rc_context(plots.STYLE):
        p_damage = plots._line(meta, points, "p_damage", "attack_dice")
        hp_damage = plots._line(meta, points, "hp_damage", "attack_dice")
    assert "PLACEHOLDER" not in _footer_text(p_damage).get_text()     # DR is reached or not: no crit HP in it
    assert "PLACEHOLDER" in _footer_text(hp_damage).get_text()        # HP damage counts critical HP
    assert plots.relevant(meta["placeholders"], meta, None) == meta["placeholders"]


def test_footer_never_overlaps_the_x_label(tmp_path):
    meta, points, dists = _run(tmp_path, ATTACK)
    with plt.rc_context(plots.STYLE):
        for fig in (plots._line(meta, points, "hp_damage", "attack_dice"),
                    plots._bars(meta, points, dists, "hits")):
            renderer = fig.canvas.get_renderer()
            footer = _footer_text(fig).get_window_extent(renderer)
            label = fig.axes[0].xaxis.label.get_window_extent(renderer)
            assert not footer.overlaps(label) and footer.y1 <= label.y0
            plt.close(fig)


def test_notes_sort_numbers_numerically():
    notes = ["10 dice at 4+", "6 dice at 4+", "6 dice at 4+ vs 10 AA dice", "6 dice at 4+ vs 2 AA dice"]
    assert sorted(notes, key=natural_key) == ["6 dice at 4+", "6 dice at 4+ vs 2 AA dice",
                                              "6 dice at 4+ vs 10 AA dice", "10 dice at 4+"]
