"""Figure defects of issue 31, one image test each: measured on the drawn figure (matplotlib's
renderer: text and axes extents in pixels, tick-label bounding boxes pairwise, the PNG savefig
writes), never by looking at it.

1. the Dystopian Wars duel figure: panels of a usable size, tick labels apart, legend off the bars;
2. list-valued sweep parameters: category labels apart and in words (no JSON), the allocation
   ranking tall enough, no offset/multiplier label printed apart;
3. footers: the saved canvas is the figure's, not stretched by a long footer line;
4. panels comparing one quantity (U-Boat campaign VP distributions) share their y axis;
5. exact runs: no "95% CI" text and no error bars;
6. B-17: a crew that cannot fire at the attack gets no (zero) bar, it is marked "cannot fire";
7. a metric constant at every point (p_turn_cap 0) gets no default figure;
8. a scenario's ``plots:`` figure equal to a default one is written once, and says so.
"""
from __future__ import annotations

import io
import itertools
import json
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import pytest
import yaml
from matplotlib.container import BarContainer, ErrorbarContainer
from matplotlib.patches import Rectangle
from matplotlib.text import Text
from PIL import Image

from analyzer import api
from analyzer.core import questions
from analyzer.core import scenario as scenario_mod
from analyzer.outputs import plots

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


# ------------------------------------------------------------------------- measuring helpers
def renderer_of(fig):
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def shown_texts(items) -> list[Text]:
    return [t for t in items if t.get_visible() and t.get_text().strip()]


def overlapping(texts: list[Text], renderer) -> list[tuple[str, str]]:
    """Pairs of texts whose drawn bounding boxes overlap."""
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in shown_texts(texts)]
    return [(a, b) for (a, ba), (b, bb) in itertools.combinations(boxes, 2) if ba.overlaps(bb)]


def tick_labels(axis) -> list[Text]:
    return [t for t in axis.get_ticklabels() if t.get_visible() and t.get_text()]


def saved_png_size(fig) -> tuple[int, int]:
    """(width, height) in pixels of the PNG ``plots.render`` would write."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches=plots.bounded_bbox(fig))
    return Image.open(io.BytesIO(buf.getvalue())).size


def figure_px(fig) -> tuple[float, float]:
    w, h = fig.get_size_inches()
    return w * fig.dpi, h * fig.dpi


def all_texts(fig) -> list[str]:
    return [t.get_text() for t in fig.findobj(Text) if t.get_visible()]


def error_bars(fig) -> list:
    """Every error-bar set that draws whiskers (ax.errorbar, a bar's xerr/yerr; an errorbar call
    without xerr/yerr only places markers)."""
    found = []
    for ax in fig.axes:
        for c in ax.containers:
            bars = c if isinstance(c, ErrorbarContainer) else c.errorbar if isinstance(c, BarContainer) else None
            if bars is not None and bars.lines[2]:
                found.append(bars)
    return found


def run_folder(tmp_path_factory, game: str, doc: dict, *, exact: bool):
    """Run ``doc`` (as a scenario file in scenarios/<game>/) into a run folder; returns
    (run_dir, meta, points, dists)."""
    sc = scenario_mod.load_dict(doc, directory=SCENARIOS / game, name="figure_defects.yaml")
    results = api.exact(sc) if exact else api.run(sc)
    out = tmp_path_factory.mktemp(game)
    run_dir, _ = api.write_run(sc, results, out, mode="exact" if exact else "monte_carlo", threads=1,
                               wall_seconds=0.0)
    meta = json.loads((run_dir / "plotmeta.json").read_text())
    return (run_dir, meta, pd.read_parquet(run_dir / "points.parquet"),
            pd.read_parquet(run_dir / "distributions.parquet"))


_FIGURES: dict[str, list] = {}


def every_figure(meta, points, dists) -> list[tuple[str, plt.Figure]]:
    """The figures ``plots.render`` draws for a run folder (defaults, requested, the question's),
    drawn once per run folder of this module (the tests only measure them)."""
    key = json.dumps(meta, sort_keys=True, default=str) + str(len(points))
    if key not in _FIGURES:
        with plt.rc_context(plots.STYLE):
            _FIGURES[key] = plots.all_figures(meta, points, dists, questions.get(meta["game"], meta["question"]))
    return _FIGURES[key]


def scenario_doc(game: str, file: str, **changes) -> dict:
    doc = yaml.safe_load((SCENARIOS / game / file).read_text())
    doc.update(changes)
    return doc


@pytest.fixture(scope="module", autouse=True)
def _close_figures():
    yield
    _FIGURES.clear()
    plt.close("all")


# ------------------------------------------------------------------------------- run folders
@pytest.fixture(scope="module")
def duel(tmp_path_factory):
    return run_folder(tmp_path_factory, "dystopian_wars",
                      scenario_doc("dystopian_wars", "duel_battleship_vs_cruisers.yaml", trials=2000), exact=False)


#: a sweep whose values are lists (the fire allocation's targets), exact
TARGET_LISTS = [[{"profile": "frigate", "count": 1}], [{"profile": "frigate", "count": 2}],
                [{"profile": "cruiser", "count": 1}], [{"profile": "battleship", "count": 2}]]


@pytest.fixture(scope="module")
def allocation_lists(tmp_path_factory):
    doc = scenario_doc("dystopian_wars", "fire_allocation_turrets_vs_frigates.yaml", sweep={"targets": TARGET_LISTS})
    return run_folder(tmp_path_factory, "dystopian_wars", doc, exact=True)


@pytest.fixture(scope="module")
def attack_exact(tmp_path_factory):
    """One Dystopian Wars attack, no sweep, exact: the narrow probability-bar figure."""
    return run_folder(tmp_path_factory, "dystopian_wars", scenario_doc("dystopian_wars", "attack_ad10.yaml"),
                      exact=True)


@pytest.fixture(scope="module")
def units_exact(tmp_path_factory):
    """Breaking News points efficiency, exact, over a list-valued sweep of three units."""
    units = [{"quality": "elite", "weapons": ["assault_rifle"]}, {"quality": "elite", "weapons": ["lmg"]},
             {"quality": "veteran", "weapons": ["assault_rifle", "grenade_launcher"]}]
    doc = scenario_doc("breaking_news", "points_efficiency.yaml", sweep={"unit": units})
    return run_folder(tmp_path_factory, "breaking_news", doc, exact=True)


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    return run_folder(tmp_path_factory, "uboat_leader",
                      scenario_doc("uboat_leader", "campaign_example_fleet.yaml", trials=200), exact=False)


@pytest.fixture(scope="module")
def headon_exact(tmp_path_factory):
    doc = scenario_doc("b17", "attack_wave_headon_intercom.yaml")
    doc["params"]["fighters"] = [{"type": "Me109", "clock": "12:00", "altitude": "high", "count": 1}]
    return run_folder(tmp_path_factory, "b17", doc, exact=True)


def _figure(figs, stem: str):
    return dict(figs)[stem]


# ------------------------------------------------------------------------- 1. the duel figure
def test_duel_panels_are_full_size_with_separate_labels_and_the_legend_off_the_bars(duel):
    _, meta, points, dists = duel
    fig = _figure(every_figure(meta, points, dists), "dw_duel_outcome")
    renderer = renderer_of(fig)
    fig_w, _ = figure_px(fig)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == 3
    for ax in panels:   # three panels side by side: each at least a fifth of the width
        assert ax.get_window_extent(renderer).width >= 0.2 * fig_w, ax.get_title()
        assert not overlapping(tick_labels(ax.xaxis), renderer), ax.get_title()
        assert not overlapping(tick_labels(ax.yaxis), renderer), ax.get_title()
    assert not overlapping([ax.xaxis.label for ax in panels] + [ax.title for ax in panels], renderer)
    legend = panels[2].get_legend()
    box = legend.get_window_extent(renderer)
    bars = [p for p in panels[2].patches if isinstance(p, Rectangle) and p.get_height() > 0]
    assert bars and not [p for p in bars if p.get_window_extent(renderer).overlaps(box)]


# ---------------------------------------------------------------- 2. list-valued sweep values
@pytest.mark.parametrize("run, swept, word", [("allocation_lists", "targets", "profile"), ("units_exact", "unit", "quality")])
def test_list_valued_sweep_labels_are_words_and_never_overprint(run, swept, word, request):
    _, meta, points, dists = request.getfixturevalue(run)
    figs = every_figure(meta, points, dists)
    category = [(stem, f) for stem, f in figs if stem.endswith(f"_by_{swept}")]
    assert category
    for stem, fig in category:
        renderer = renderer_of(fig)
        ax = fig.axes[0]
        labels = tick_labels(ax.xaxis) + tick_labels(ax.yaxis)
        assert len([t for t in labels if word in t.get_text()]) == len(points), stem
        assert not overlapping(labels, renderer), stem
        assert not [t.get_text() for t in labels if '"' in t.get_text() or "{" in t.get_text()], stem
        assert not overlapping([ax.xaxis.label, ax.yaxis.label, ax.title], renderer), stem
        assert ax.yaxis.label.get_window_extent(renderer).height <= figure_px(fig)[1], stem


def test_allocation_ranking_of_a_list_sweep_is_tall_enough_and_has_no_stray_offset_label(allocation_lists):
    _, meta, points, dists = allocation_lists
    rankings = [(stem, f) for stem, f in every_figure(meta, points, dists) if stem.startswith("dw_allocation_ranking")]
    assert len(rankings) == len(TARGET_LISTS)
    for stem, fig in rankings:
        renderer = renderer_of(fig)
        assert saved_png_size(fig)[1] >= 300, stem
        for ax in fig.axes:
            assert ax.get_window_extent(renderer).height >= 100, stem
            for axis in (ax.xaxis, ax.yaxis):
                assert not axis.get_offset_text().get_text(), (stem, axis.get_offset_text().get_text())
            assert not overlapping(tick_labels(ax.xaxis), renderer), stem
        legend = fig.axes[-1].get_legend()
        bars = [p for p in fig.axes[-1].patches if p.get_width() > 0]
        assert not [p for p in bars if p.get_window_extent(renderer).overlaps(legend.get_window_extent(renderer))]


# ---------------------------------------------------------------------------------- 3. footers
def _canvas_is_the_figure(stem, fig):
    fig_w, fig_h = figure_px(fig)
    w, h = saved_png_size(fig)
    pad = 2 * plt.rcParams["savefig.pad_inches"] * fig.dpi
    # the tight box may trim the figure's white margin, never widen it past a padded figure
    assert w <= fig_w + pad + 2, (stem, w, fig_w)


def test_footer_never_stretches_the_saved_canvas(attack_exact, campaign, duel):
    for _, meta, points, dists in (attack_exact, campaign, duel):
        figs = every_figure(meta, points, dists)
        assert any("PLACEHOLDER" in " ".join(all_texts(f)) for _, f in figs)   # long footers are drawn
        for stem, fig in figs:
            renderer = renderer_of(fig)
            footer = next(t for t in fig.texts if "seed" in t.get_text())
            assert footer.get_window_extent(renderer).x1 <= figure_px(fig)[0], stem
            _canvas_is_the_figure(stem, fig)
            axes = [a for a in fig.axes if a.get_visible()]
            assert not [a for a in axes if a.get_tightbbox(renderer).overlaps(footer.get_window_extent(renderer))]


# ------------------------------------------------------------------------ 4. one y for panels
def test_campaign_vp_panels_share_their_probability_axis(campaign):
    _, meta, points, dists = campaign
    fig = _figure(every_figure(meta, points, dists), "campaign_vp_levels")
    renderer_of(fig)
    limits = {ax.get_ylim() for ax in fig.axes}
    assert len(fig.axes) == len(points) > 1 and len(limits) == 1
    top = max(p.get_height() for ax in fig.axes for c in ax.containers if isinstance(c, BarContainer) for p in c)
    assert limits.pop()[1] >= top


# ------------------------------------------------------------------------------ 5. exact runs
def test_exact_runs_draw_no_ci_and_no_error_bars(allocation_lists, attack_exact, headon_exact, units_exact):
    for _, meta, points, dists in (allocation_lists, attack_exact, headon_exact, units_exact):
        assert meta["mode"] == "exact"
        for stem, fig in every_figure(meta, points, dists):
            assert not error_bars(fig), stem
            assert not [t for t in all_texts(fig) if "CI" in t], stem


def test_monte_carlo_runs_keep_their_ci(duel):
    _, meta, points, dists = duel
    fig = _figure(every_figure(meta, points, dists), "dw_duel_outcome")
    assert error_bars(fig) and any("95% CI" in t for t in all_texts(fig))


# ------------------------------------------------------------------ 6. B-17 guns that cannot fire
def test_b17_crews_that_cannot_fire_get_no_zero_bar_but_a_mark(headon_exact):
    _, meta, points, dists = headon_exact
    fig = _figure(every_figure(meta, points, dists), "crew_kills_hits")
    crews = [m["name"][5:] for m in meta["metrics"] if m["name"].startswith("hits_") and m["name"] != "hits_total"]
    silent = {(i, c) for i, (_, row) in enumerate(points.iterrows()) for c in crews if row[f"hits_{c}_mean"] == 0}
    firing = len(points) * len(crews) - len(silent)
    assert silent and firing          # head-on: the waist and ball guns have no arc at 12:00 high
    for ax in fig.axes:
        bars = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_height() > 0 and p.get_y() != 0]
        assert not [p for p in bars if p.get_width() == 0]
        assert len([p for p in bars if p.get_width() > 0]) >= firing - len(points)   # kills may be 0 where hits are not
        assert len([t for t in ax.texts if "cannot fire" in t.get_text()]) == len(silent)


# --------------------------------------------------------------- 7. default figure of a constant
def test_a_metric_constant_at_every_point_gets_no_default_figure(campaign):
    _, meta, points, dists = campaign
    assert (points["p_turn_cap_mean"] == 0).all() and (points["p_turn_cap_se"] == 0).all()
    with plt.rc_context(plots.STYLE):
        stems = [stem for stem, _ in plots.default_figures(meta, points, dists)]
    assert not [s for s in stems if s.startswith("p_turn_cap")]
    assert [s for s in stems if s.startswith(meta["primary_metric"])]     # the varying answer still has its own


# ------------------------------------------------------------- 8. a requested default figure
def test_a_requested_figure_equal_to_a_default_is_written_once(tmp_path_factory):
    doc = scenario_doc("dystopian_wars", "attack_ad10.yaml", sweep={"attack_dice": [4, 8], "target.dr": [4, 5]},
                       plots=[{"kind": "heatmap", "metric": "p_damage", "x": "attack_dice", "y": "target.dr"}])
    run_dir, meta, points, dists = run_folder(tmp_path_factory, "dystopian_wars", doc, exact=True)
    pngs = sorted(run_dir.glob("*.png"))
    contents = [p.read_bytes() for p in pngs]
    assert len(set(contents)) == len(contents), [p.name for p in pngs]
    names = {p.stem for p in pngs}
    assert "plot0_heatmap_p_damage" in names and "heatmap_p_damage" not in names
    assert "heatmap_p_critical" in names           # other defaults stay
    figs = dict(every_figure(meta, points, dists))
    assert "also the default figure heatmap_p_damage" in figs["plot0_heatmap_p_damage"].axes[0].get_title()
