"""Issue 31: ``compare`` reports have a figure and lead with the answer; ``sensitivity`` writes a
report (tornado figure, placeholders marked) and ``answers.parquet``; ``analyzer index`` lists both
kinds of folder; a ranking's "Best by ..." headline carries the winner's-curse caveat; ``matchup``
reports how many placeholder values it used. Pages checked in headless Chromium at 412 and
1280 px: no horizontal scroll, every image decoded, the headline visible without scrolling."""
import json
import re
from pathlib import Path

import pandas as pd
import polars as pl
import pytest
import yaml
from typer.testing import CliRunner

from analyzer.cli.app import app
from tests.browser import SKIP, body_at_width, find_browser, screenshot

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()
#: P(at least one of N d6 >= 4) = 1 - 2^-N, exactly: A rolls 2 dice, B rolls 3
COUNT = {"game": "dice", "question": "count", "seed": 3, "trials": 20_000, "params": {"dice": 2, "target": 4}}
EXACT_P = {2: 0.75, 3: 0.875}
SENSITIVITY_EXAMPLE = ROOT / "scenarios/uboat_leader/escort_detection_example.yaml"


def _file(folder: Path, name: str, doc: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(yaml.safe_dump(doc))
    return folder / name


@pytest.fixture(scope="module")
def comparison(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("compare")
    a = _file(work, "two_dice.yaml", {**COUNT, "name": "two dice"})
    b = _file(work, "three_dice.yaml", {**COUNT, "name": "three dice", "params": {"dice": 3, "target": 4}})
    r = runner.invoke(app, ["compare", str(a), str(b), "--out", str(work / "results")])
    assert r.exit_code == 0, r.output
    (doc,) = list((work / "results").rglob("comparison.json"))
    return doc.parent


@pytest.fixture(scope="module")
def sensitivity(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sensitivity")
    r = runner.invoke(app, ["sensitivity", str(SENSITIVITY_EXAMPLE), "--trials", "4000", "--out", str(out),
                            "--no-progress"])
    assert r.exit_code == 0, r.output
    (doc,) = list(out.rglob("sensitivity.json"))
    return doc.parent


def _answers(text: str) -> list[int]:
    return [m.start() for m in re.finditer(r'<p class="answer">', text)]


def test_compare_report_leads_with_b_minus_a_and_its_figure(comparison):
    """Used to: a table per point and no figure. Now the headline (B - A of the primary metric with
    its paired CI) comes before every section, and comparison.png, inlined and linked to its file,
    draws A, B and B - A as comparison.json holds them; the paired CI covers the exact difference."""
    text = (comparison / "report.html").read_text()
    (first,) = _answers(text)
    assert first < text.index("<h2>")
    headline = re.search(r'<p class="answer">B − A of p_success = ([+-][\d.]+) \[95% CI ([+-][\d.]+), ([+-][\d.]+)\]',
                         text)
    assert headline, text[first:first + 300]
    doc = json.loads((comparison / "comparison.json").read_text())
    d = doc["points"][0]["metrics"]["p_success"]["diff_b_minus_a"]
    assert [float(x) for x in headline.groups()] == [float(f"{d[k]:+.4g}") for k in ("mean", "ci_low", "ci_high")]
    exact = EXACT_P[3] - EXACT_P[2]
    assert abs(d["mean"] - exact) <= 5 * d["se"], (d, exact)           # 5 sigma of the paired SE
    assert re.search(r'<a href="comparison\.png"><img [^>]*src="data:image/png;base64,', text)
    assert (comparison / "comparison.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_comparison_figure_draws_the_documents_numbers():
    """Left panel: A's and B's means with their CIs; right: B - A with its paired CI and the 0 line."""
    import matplotlib.pyplot as plt

    from analyzer.outputs.compare_plots import comparison_figure
    stat = lambda m, lo, hi: {"mean": m, "se": 0.01, "ci_low": lo, "ci_high": hi}   # noqa: E731
    doc = {"name_a": "a", "name_b": "b", "game": "dice", "question": "count", "seed": 1,
           "points": [{"point": i, "swept_a": {"dice": i}, "swept_b": {"dice": i}, "trials": 100, "placeholders": [],
                       "metrics": {"p_success": {"a": stat(0.5 + i / 10, 0.45 + i / 10, 0.55 + i / 10),
                                                 "b": stat(0.6 + i / 10, 0.55 + i / 10, 0.65 + i / 10),
                                                 "diff_b_minus_a": stat(0.1, 0.08, 0.12)}}} for i in range(3)]}
    fig = comparison_figure(doc, "p_success")
    try:
        left, right = fig.axes[:2]

        def drawn(ax):       # per errorbar: (x, mean, CI low, CI high) as drawn
            out = []
            for c in ax.containers:
                (x,), (y,) = c.lines[0].get_xdata(), c.lines[0].get_ydata()
                (seg,) = c.lines[2][0].get_segments()
                out.append(tuple(round(float(v), 9) for v in (x, y, seg[:, 1].min(), seg[:, 1].max())))
            return sorted(out)
        rounded = lambda rows: sorted(tuple(round(v, 9) for v in r) for r in rows)   # noqa: E731
        assert drawn(left) == rounded([(i - 0.12, 0.5 + i / 10, 0.45 + i / 10, 0.55 + i / 10) for i in range(3)]
                                      + [(i + 0.12, 0.6 + i / 10, 0.55 + i / 10, 0.65 + i / 10) for i in range(3)])
        assert drawn(right) == rounded([(i, 0.1, 0.08, 0.12) for i in range(3)])
        assert [float(y) for line in right.lines for y in line.get_ydata() if len(set(line.get_ydata())) == 1
                and len(line.get_ydata()) == 2] == [0.0, 0.0]                      # the 0 line
        assert [t.get_text() for t in right.get_xticklabels()] == ["dice=0", "dice=1", "dice=2"]
    finally:
        plt.close(fig)


def test_sensitivity_writes_a_report_that_leads_with_the_largest_effect(sensitivity):
    """Used to: sensitivity.parquet, sensitivity.json and tornado.png, no report. Now report.html
    leads with the variant that moves the metric most (rank 1 of sensitivity.json, its CI), then
    the tornado chart (linked to its file), placeholders marked in the chart and the table."""
    doc = json.loads((sensitivity / "sensitivity.json").read_text())
    text = (sensitivity / "report.html").read_text()
    (first,) = _answers(text)
    assert first < text.index("<h2>")
    top = doc["variants"][0]
    assert top["rank"] == 1 and not top["error"]
    headline = text[first:text.index("</p>", first)]
    assert f"Moves mean {doc['metric']} most: " in headline
    assert re.sub("&#x27;", "'", headline).count(top["what"]) == 1 and f"{top['effect']:+.4g}" in headline
    assert re.search(r'<a href="tornado\.png"><img [^>]*src="data:image/png;base64,', text)
    placeholders = {v["what"] for v in doc["variants"] if v["kind"] == "placeholder"}
    assert placeholders and all(f"* {what}" in text for what in placeholders)
    assert f"<b>{len(placeholders)} placeholder value(s)</b> were varied" in text


def test_the_tornado_marks_placeholders():
    import matplotlib.pyplot as plt

    from analyzer.outputs.compare_plots import tornado_figure
    row = lambda what, kind, effect: {"what": what, "kind": kind, "base": "1", "value": "2", "file": "", "effect": effect,   # noqa: E731
                                      "se": 0.01, "ci_low": effect - 0.02, "ci_high": effect + 0.02, "error": "", "rank": 1}
    doc = {"scenario": "s", "metric": "p", "base_mean": 0.5, "trials": 100,
           "variants": [row("a.placeholder", "placeholder", 0.3), row("rules.x", "rule option", -0.1)]}
    fig = tornado_figure(doc)
    try:
        ticks = {t.get_text(): t.get_color() for t in fig.axes[0].get_yticklabels()}
        assert ticks == {"* a.placeholder [placeholder]": "firebrick", "rules.x [rule option]": "black"}
        hatched = [p.get_width() for p in fig.axes[0].patches if p.get_hatch()]
        assert hatched == [pytest.approx(0.3)]
    finally:
        plt.close(fig)


def test_sensitivity_answers_are_its_variants(sensitivity):
    """answers.parquet of a sensitivity folder: the run table's columns where they apply (point,
    row, metric, mean, se, CI, trials, rank), a base row and one row per variant, the effect's
    numbers exactly those of sensitivity.json."""
    doc = json.loads((sensitivity / "sensitivity.json").read_text())
    answers = pd.read_parquet(sensitivity / "answers.parquet")
    assert {"point", "row", "metric", "quantity", "mean", "se", "ci_low", "ci_high", "trials", "rank",
            "side", "input", "input_kind"} <= set(answers.columns)
    base = answers[answers["row"] == "base"]
    assert len(base) == 1 and base["mean"].iloc[0] == doc["base_mean"]
    variants = answers[answers["row"] == "variant"].reset_index(drop=True)
    assert len(variants) == len(doc["variants"]) and set(variants["side"]) == {"b_minus_a"}
    for got, want in zip(variants.to_dict("records"), doc["variants"]):
        assert (got["input"], got["input_kind"], got["rank"]) == (want["what"], want["kind"], want["rank"])
        assert [got[k] for k in ("mean", "se", "ci_low", "ci_high")] == [want[k] for k in ("effect", "se", "ci_low",
                                                                                          "ci_high")]
    assert set(answers["trials"]) == {doc["trials"]}


def test_index_lists_comparison_and_sensitivity_folders_with_their_kind(comparison, sensitivity, tmp_path):
    import shutil
    root = tmp_path / "results"
    for folder in (comparison, sensitivity):
        shutil.copytree(folder.parent, root / folder.parent.name, symlinks=True)
    r = runner.invoke(app, ["index", str(root), "--json"])
    assert r.exit_code == 0, r.output
    info = json.loads(r.stdout)
    rel = f"{sensitivity.parent.name}/{sensitivity.name}"
    assert rel in info["runs"]
    combined = pl.read_parquet(root / "index.parquet")
    mine = combined.filter(pl.col("run") == rel)
    assert set(mine["run_kind"]) == {"sensitivity"}
    assert mine.height == pd.read_parquet(sensitivity / "answers.parquet").shape[0]
    page = (root / "index.html").read_text()
    for folder, kind in ((comparison, "comparison"), (sensitivity, "sensitivity")):
        assert f'href="{folder.parent.name}/{folder.name}/report.html"' in page
        assert f"<td>{kind}</td>" in page
    assert "<td>two dice vs three dice</td>" in page or "two dice vs three dice (" in page


def test_compare_folder_has_the_api_answers(comparison):
    import analyzer
    answers = pd.read_parquet(comparison / "answers.parquet")
    doc = json.loads((comparison / "comparison.json").read_text())
    result = analyzer.compare(doc["a"], doc["b"])
    pd.testing.assert_frame_equal(answers, result.answers(), check_dtype=False)


def test_ranking_headline_carries_the_winners_curse_caveat():
    """Next to "Best by ...": the best option's estimate is biased upward by the selection; run it
    again on fresh streams to estimate it without that bias."""
    from analyzer.outputs.report import _ranking_headline
    options = [{"metric": "vp", "name": n, "mean": m, "rank": k, "in_best_set": k == 1}
               for k, (n, m) in enumerate((("u47", 6.5), ("u48", 5.0)), start=1)]
    html = _ranking_headline({"rankings": {"0": options}})
    best = html.index("Best by vp: u47")
    caveat = html.index("Winner's curse", best)
    assert "biased upward" in html[caveat:] and "another seed" in html[caveat:]
    assert _ranking_headline({}) == ""           # no ranking, no caveat


def test_matchup_reports_its_placeholder_count(tmp_path):
    """matchup.json says how many distinct placeholder values the matchup used (its cells' and its
    contenders' costs'), and the console's ratings table says it too."""
    r = runner.invoke(app, ["matchup", str(ROOT / "scenarios/dystopian_wars/matchup_four_fleets.yaml"), "--trials",
                            "200", "--out", str(tmp_path), "--no-progress"])
    assert r.exit_code == 0, r.output
    (path,) = list(tmp_path.rglob("matchup.json"))
    doc = json.loads(path.read_text())
    used = {(p["path"], p.get("source"), repr(p["value"])) for p in doc["placeholders"] + doc["cost_placeholders"]}
    assert doc["placeholder_count"] == len(used) > 0
    assert f"{doc['placeholder_count']} placeholder value(s) used" in re.sub(r"[\s│┃]+", " ", r.output)


@pytest.mark.parametrize("which", ["comparison", "sensitivity", "long names"])
def test_reports_in_a_headless_browser(which, comparison, sensitivity, tmp_path):
    """"long names": a sensitivity of long dotted data paths (its headline used to push the page
    sideways on a phone)."""
    browser = find_browser()
    if browser is None:
        pytest.skip(SKIP)
    folder = {"comparison": comparison, "sensitivity": sensitivity}.get(which)
    if folder is None:
        r = runner.invoke(app, ["sensitivity", str(ROOT / "scenarios/dystopian_wars/attack_ad10.yaml"), "--trials",
                                "2000", "--out", str(tmp_path / "out"), "--no-progress"])
        assert r.exit_code == 0, r.output
        (doc,) = list((tmp_path / "out").rglob("sensitivity.json"))
        folder = doc.parent
    for device, (w, h) in (("phone", (412, 900)), ("desktop", (1280, 900))):
        tag = body_at_width(browser, folder / "report.html", w, h, tmp_path / device)
        assert 'data-overflow="false"' in tag and 'data-errors="0"' in tag, (device, tag)
        decoded, total = map(int, re.search(r'data-images="(\d+)/(\d+)"', tag).groups())
        assert decoded == total >= 1, (device, tag)
        assert int(re.search(r'data-answer-bottom="(\d+)"', tag).group(1)) < h, (device, tag)
        screenshot(browser, (folder / "report.html").as_uri(), f"{w},{h}", tmp_path / f"{which.replace(' ', '_')}_{device}.png")


