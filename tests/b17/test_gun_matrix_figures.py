"""Gun-matrix figures say what a player means: every tied best gun is framed and named
(rule fidelity 8), and "where is the bomber safest" counts kills before the fighter fires,
with ** tail kills (after its attack) shown apart (rule fidelity 9)."""
import json

import matplotlib
import numpy as np
import pandas as pd
import pytest
import yaml

from analyzer import api
from analyzer.core import scenario as scenario_mod
from analyzer.games.b17 import plots as P
from tests.b17.b17_support import assert_dist_exact, assert_mean_exact, exact_as_dict, prepare, run_kernel

SEED = 20261203


@pytest.fixture(scope="module")
def me109_15(tmp_path_factory):
    """Exact run folder of the shipped matrix scenario's Me109 / skill 15 point."""
    base = tmp_path_factory.mktemp("gm")
    doc = yaml.safe_load(open(scenario_mod.__file__.replace("analyzer/core/scenario.py",
                                                            "scenarios/b17/gun_matrix_skills.yaml")))
    doc.pop("sweep")
    doc["params"].update({"fighter": "Me109", "skill": 15})
    (base / "s.yaml").write_text(yaml.safe_dump(doc))
    sc = scenario_mod.load(base / "s.yaml")
    run_dir, _ = api.write_run(sc, api.exact(sc), base / "out", mode="exact", threads=1, wall_seconds=0.0)
    meta = json.loads((run_dir / "plotmeta.json").read_text())
    return meta, pd.read_parquet(run_dir / "points.parquet").iloc[0], run_dir


def _best_sets(meta, row):
    guns, cells = P._matrix_layout(meta)
    sets = []
    for c in range(24):
        name = lambda g, m: cells[(g["id"], c)]["name"].replace("p_destroyed__", m, 1)  # noqa: E731
        d = np.array([P._mean(row, name(g, "p_destroyed__")) if (g["id"], c) in cells else np.nan for g in guns])
        h = np.array([P._mean(row, name(g, "p_hit__")) if (g["id"], c) in cells else np.nan for g in guns])
        sets.append([guns[i]["id"] for i in P.best_guns(d, np.zeros(len(guns)), h, np.zeros(len(guns)))])
    return sets


def test_every_tied_best_gun_is_framed_and_named(me109_15):
    meta, row, run_dir = me109_15
    sets = _best_sets(meta, row)
    tied = [s for s in sets if len(s) > 1]
    # exact P(destroyed) and P(hit): the tail is co-best in every one of the 18 tied cells (table order
    # used to hide it behind the gun listed first)
    assert len(tied) == 18 and all("tail" in s for s in tied)
    figs = dict(P.gun_matrix_figures(meta, pd.DataFrame([row])))
    heatmap = next(f for k, f in figs.items() if k.startswith("kill_odds_heatmap"))
    frames = [p for p in heatmap.axes[0].patches if matplotlib.colors.to_hex(p.get_edgecolor()) == "#00a6d6"]
    assert len(frames) == sum(len(s) for s in sets)
    polar = next(f for k, f in figs.items() if k.startswith("kill_odds_polar"))
    labels = [t.get_text() for t in polar.axes[0].texts]
    assert any(label.startswith("top=tail") for label in labels)
    assert P.TIE_RULE[1:] in " ".join(t.get_text() for t in polar.texts)


def test_safest_counts_kills_before_the_fighter_fires(me109_15):
    meta, row, _ = me109_15
    all_ = row["p_destroyed_all__0130__level_mean"]
    before = row["p_destroyed_before_fire__0130__level_mean"]
    # the tail's ** shot at 1:30 level lands after the fighter has fired: 84% with it, 74% before
    # the fighter fires (the figures the issue measured; exact values are checked against the
    # reference's own enumeration in test_kernels_b17)
    assert before < all_ and round(100 * before) == 74 and round(100 * all_) == 84
    for clock in ("0300", "0600", "0900"):       # no ** gun reaches these: nothing changes
        for alt in ("high", "level", "low"):
            assert row[f"p_destroyed_before_fire__{clock}__{alt}_mean"] == row[f"p_destroyed_all__{clock}__{alt}_mean"]
    figs = dict(P.gun_matrix_figures(meta, pd.DataFrame([row])))
    polar = next(f for k, f in figs.items() if k.startswith("kill_odds_polar"))
    right = [t.get_text() for t in polar.axes[1].texts]
    assert f"{P._pct(before)}%\n+{P._pct(all_ - before)} **" in right   # headline before firing, ** apart


def test_before_fire_monte_carlo_matches_exact():
    prepared = prepare("gun_matrix", {"fighter": "Me109", "skill": 15, "intercom_ok": True})
    ex = prepared.exact()
    mc = run_kernel(prepared, 60_000, SEED)
    names = [m.name for m in prepared.metrics if m.name.startswith("p_destroyed_before_fire")]
    assert len(names) == 24
    for name in names:
        em = ex[name]
        var = float(((em.values - em.mean) ** 2) @ em.probs)
        assert_mean_exact(mc[name], em.mean, var, name)
        assert_dist_exact(mc[name], exact_as_dict(em), name)
