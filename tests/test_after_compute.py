"""Issue 25, "failures after computing keep the work": what used to fail only after every
trial had run (mathtext in a name, a figure too large to save, an undecodable file name, an
output path too deep, an unusable ``--out`` of compare/exact/sensitivity) is drawn literally,
bounded, or refused in one line before any work."""
import io
import json
import os
import shutil
import struct
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from analyzer import api
from analyzer.outputs import plots
from analyzer.core import scenario
from analyzer.cli.app import app
from analyzer.core.errors import ScenarioError

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()

#: a two-parameter sweep: default figures are heatmaps; 4 points x 2000 trials take well under 1 s
SWEEP = {"game": "dice", "question": "count", "seed": 5, "trials": 2000,
         "params": {"dice": 3, "sides": 6, "target": 4, "need": 1}, "sweep": {"dice": [1, 2], "target": [4, 5]}}
ONE = {"game": "dice", "question": "count", "seed": 5, "trials": 2000,
       "params": {"dice": 3, "sides": 6, "target": 4, "need": 1}}


def write(folder: Path, doc: dict, name: str = "s.yaml") -> Path:
    path = folder / name
    path.write_text(yaml.safe_dump(doc))
    return path


def png_size(path_or_bytes) -> tuple[int, int]:
    data = path_or_bytes if isinstance(path_or_bytes, bytes) else Path(path_or_bytes).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def invoke(*args):
    return runner.invoke(app, [os.fspath(a) for a in args])


def one_line_error(res, *words):
    assert res.exit_code == 2, (res.exit_code, res.stderr, res.exception)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and "Traceback" not in res.stderr, res.stderr
    for w in words:
        assert w in res.stderr, (w, res.stderr)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """One ordinary finished run folder (a two-parameter sweep) that tests copy and tamper with."""
    folder = tmp_path_factory.mktemp("base")
    sc = scenario.load(write(folder, {**SWEEP, "name": "base"}))
    run_dir, _ = api.run_to_folder(sc, folder / "out", threads=1)
    return run_dir


# -- names drawn literally -------------------------------------------------------------------

@pytest.mark.parametrize("name", ["$\\unknownmacro$", "$x^$", "\\\\ $5 and $6", "w" * 200])
def test_a_name_with_mathtext_runs_and_writes_its_plots(tmp_path, name):
    """``$\\unknownmacro$`` and ``$x^$`` passed validate, ran every trial, then matplotlib's
    mathtext raised in savefig and the run folder went with all its checkpoints. Names (and
    every other string) are now drawn literally: the title shows the name as written (``$``
    and ``\\`` kept), and a 200-character word is cut for the title, not refused."""
    sc = scenario.load(write(tmp_path, {**SWEEP, "name": name}))
    run_dir, _ = api.run_to_folder(sc, tmp_path / "out", threads=1)
    pngs = sorted(run_dir.glob("*.png"))
    assert pngs and (run_dir / "report.html").is_file()
    assert all(max(png_size(p)) <= plots.MAX_FIGURE_PX for p in pngs)
    meta = json.loads((run_dir / "plotmeta.json").read_text())
    points = pd.read_parquet(run_dir / "points.parquet")
    dists = pd.read_parquet(run_dir / "distributions.parquet")
    import matplotlib.pyplot as plt
    with plt.rc_context(plots.STYLE):
        stem, fig = plots.default_figures(meta, points, dists)[0]
        title = fig.axes[0].title
        assert title.get_text().replace("\n", "").startswith(plots.drawn(name))
        assert title._preprocess_math(title.get_text())[1] is False     # never parsed as mathtext
        plt.close(fig)


def test_a_figure_built_outside_the_style_is_drawn_literally():
    """The tornado chart is built outside :data:`plots.STYLE`: :func:`plots.literal` (called by
    ``bounded_bbox`` before saving) turns mathtext off on every text of a figure."""
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    ax.set_title("$\\unknownmacro$")
    ax.set_yticks([0], ["$x^$"])
    with pytest.raises(ValueError):                    # as matplotlib draws it by default
        fig.savefig(io.BytesIO(), format="png")
    plots.bounded_bbox(fig, dpi=100)
    fig.savefig(io.BytesIO(), format="png")
    plt.close(fig)


def test_drawn_is_one_short_line_without_surrogates():
    assert plots.drawn("a\nb\tc\x1bd") == "a b c d"
    assert plots.drawn("sc\udcff") == "sc?"                 # the font code raised TypeError on it
    cut = plots.drawn("x" * 500)
    assert len(cut) == plots.MAX_DRAWN_NAME and cut.endswith("…")


# -- sizes bounded before work ---------------------------------------------------------------

def test_a_name_longer_than_the_cap_is_refused_at_load(tmp_path):
    """No limit used to exist: a 10,000-character name made 130,000 x 449 px PNGs (1.2 GB) and
    100,000 characters a MemoryError, after the run. Now refused at load (so by validate, and
    before any trial), naming the field and the cap."""
    ok = scenario.load(write(tmp_path, {**ONE, "name": "n" * scenario.MAX_NAME_CHARS}))
    assert len(ok.name) == scenario.MAX_NAME_CHARS
    with pytest.raises(ScenarioError) as e:
        scenario.load(write(tmp_path, {**ONE, "name": "n" * (scenario.MAX_NAME_CHARS + 1)}))
    assert e.value.path == "name" and str(scenario.MAX_NAME_CHARS) in str(e.value)
    one_line_error(invoke("validate", tmp_path / "s.yaml"), "name", str(scenario.MAX_NAME_CHARS))


def test_an_old_run_folder_with_a_huge_name_renders_bounded_figures(tmp_path, run_dir):
    """A run folder written before the cap (or edited) names its scenario with 10,000
    characters and a mathtext macro: ``analyzer plot`` redraws it with every PNG at most
    MAX_FIGURE_PX a side (it made 130,000-px-wide PNGs, or raised in mathtext)."""
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    meta = json.loads((copy / "plotmeta.json").read_text())
    meta["scenario"] = "w" * 10_000 + " $\\unknownmacro$"
    (copy / "plotmeta.json").write_text(json.dumps(meta))
    written = plots.render(copy)
    assert written and all(max(png_size(p)) <= plots.MAX_FIGURE_PX for p in written)


def test_a_heatmap_of_250_by_400_values_is_capped_and_saves():
    """Heatmaps were sized per swept value with no cap: 250 x 400 values asked for a 16,600 x
    19,900 px canvas and ``exact`` died in savefig after computing ~100 s. Now the figure is
    capped, cells keep no labels and each axis at most 20 tick labels."""
    import matplotlib.pyplot as plt
    rows = [{"x": x, "y": y, "m_mean": (x * y % 97) / 97, "m_se": 0.0} for x in range(400) for y in range(250)]
    meta = {"scenario": "big", "game": "dice", "question": "count", "seed": 1, "mode": "exact",
            "metrics": [{"name": "m", "label": "m", "kind": "probability", "distribution": True,
                         "unaffected_by": []}], "placeholders": [], "example_values": [], "swept": ["x", "y"]}
    with plt.rc_context(plots.STYLE):
        fig = plots._heatmap(meta, pd.DataFrame(rows), "m", "x", "y")
        w, h = fig.get_size_inches() * fig.dpi
        assert round(w) <= plots.MAX_FIGURE_PX and round(h) <= plots.MAX_FIGURE_PX
        ax = fig.axes[0]
        assert len(ax.get_xticks()) <= 20 and len(ax.get_yticks()) <= 20 and len(ax.texts) <= 1   # the footer only
        buf = io.BytesIO()
        fig.savefig(buf, format="png", bbox_inches=plots.bounded_bbox(fig))
        plt.close(fig)
    assert max(png_size(buf.getvalue())) <= plots.MAX_FIGURE_PX


def test_category_bars_of_many_long_values_are_capped():
    """One swept parameter of 500 text values: the bar chart was 1.1 inch per value wide
    (552 in, 60,000 px) with every full value as a label. Now capped, at most 20 labels, each
    shortened; two values cut to the same text still make two bars."""
    import matplotlib.pyplot as plt
    rows = [{"point": i, "v": f"{'same long prefix ' * 5}{i}", "trials": 10, "m_mean": 0.5, "m_se": 0.1,
             "m_ci_low": 0.4, "m_ci_high": 0.6} for i in range(500)]
    meta = {"scenario": "cats", "game": "dice", "question": "count", "seed": 1, "mode": "monte_carlo",
            "metrics": [{"name": "m", "label": "m", "kind": "probability", "distribution": False,
                         "unaffected_by": []}], "placeholders": [], "example_values": [], "swept": ["v"]}
    with plt.rc_context(plots.STYLE):
        fig = plots._category_bars(meta, pd.DataFrame(rows), "m", "v")
        assert round(fig.get_size_inches()[0] * fig.dpi) <= plots.MAX_FIGURE_PX
        ax = fig.axes[0]
        assert len(ax.patches) == 500
        labels = [t.get_text() for t in ax.get_xticklabels()]
        assert len(labels) <= 20 and all(len(t) <= plots.MAX_DRAWN_VALUE for t in labels)
        plt.close(fig)


def test_a_question_figure_with_a_huge_data_name_is_saved_bounded(tmp_path, run_dir):
    """A game's own figure draws data names (fighter types, weapons, sensors) from files the
    user edits: a 5,000-character one made the tight box 35,000 px wide. ``render`` now caps
    every figure: past MAX_FIGURE_PX the figure is saved at its own (capped) size."""
    import matplotlib.pyplot as plt
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)

    class Question:
        default_plots = False

        @staticmethod
        def plots(meta, points, dists):
            fig, ax = plt.subplots(figsize=(7, 4))
            ax.set_title("weapon " + "W" * 5000)
            return [("big", fig)]

    written = plots.render(copy, question=Question(), specs=[])
    assert [p.name for p in written] == ["big.png"]
    assert max(png_size(written[0])) <= plots.MAX_FIGURE_PX


# -- undecodable file names ------------------------------------------------------------------

def test_a_scenario_file_name_that_is_not_utf8_is_refused_before_any_trial(tmp_path):
    """``sc\\xff.yaml`` ran every trial, then the plot title (the file's stem) raised TypeError
    in the font code and the run folder was deleted. Refused in one line, nothing written."""
    path = Path(os.fsdecode(os.fsencode(tmp_path) + b"/sc\xff.yaml"))
    path.write_text(yaml.safe_dump(ONE))
    out = tmp_path / "out"
    res = invoke("run", path, "--out", out, "--no-progress")
    one_line_error(res, "not valid UTF-8", "sc\\xff.yaml")
    assert not out.exists()


def test_a_fleets_file_name_that_is_not_utf8_is_refused_before_any_trial(tmp_path):
    """Dystopian Wars reads every ``fleets/*.yaml`` beside the scenario: one named
    ``generic\\xff.yaml`` ran every trial, then report.html could not be encoded (its
    placeholders name the file). Refused in one line when the point is prepared."""
    folder = tmp_path / "dw"
    (folder / "fleets").mkdir(parents=True)
    doc = yaml.safe_load((ROOT / "scenarios/dystopian_wars/fleets/generic_naval.yaml").read_text())
    doc["profiles"] = {f"my_{k}": v for k, v in doc["profiles"].items()}
    Path(os.fsdecode(os.fsencode(folder) + b"/fleets/generic\xff.yaml")).write_text(yaml.safe_dump(doc))
    sc = yaml.safe_load((ROOT / "scenarios/dystopian_wars/duel_battleship_vs_cruisers.yaml").read_text())
    sc["trials"] = 2000
    path = write(folder, sc)
    out = tmp_path / "out"
    one_line_error(invoke("run", path, "--out", out, "--no-progress"), "generic\\xff.yaml", "not valid UTF-8")
    assert not out.exists()


def test_an_out_folder_name_that_is_not_utf8_is_refused_before_any_trial(tmp_path):
    """``--out o\\xff/x`` ran every trial, then pyarrow could not take the path (a lone
    surrogate) and the run folder was deleted. Refused in one line; nothing created."""
    sc = write(tmp_path, ONE)
    out = Path(os.fsdecode(os.fsencode(tmp_path) + b"/o\xff/x"))
    one_line_error(invoke("run", sc, "--out", out, "--no-progress"), "--out", "o\\xff/x", "not valid UTF-8")
    assert os.listdir(tmp_path) == ["s.yaml"]


# -- output paths too deep -------------------------------------------------------------------

def _deep_folder(base: Path, total: int = 3950) -> Path:
    """A folder whose absolute path is about ``total`` bytes (created step by step: one mkdir
    call per 200-byte component, each a short relative path)."""
    here = os.getcwd()
    os.chdir(base)
    try:
        while len(os.fsencode(os.getcwd())) + 201 < total:
            os.mkdir("d" * 200)
            os.chdir("d" * 200)
        return Path(os.getcwd())
    finally:
        os.chdir(here)


@pytest.fixture
def deep(tmp_path):
    folder = _deep_folder(tmp_path)
    yield folder
    shutil.rmtree(tmp_path / ("d" * 200), ignore_errors=True)


def test_an_out_folder_too_deep_for_the_deepest_file_is_refused_before_any_trial(tmp_path, deep, monkeypatch):
    """A folder ~3,950 bytes deep passed the write check, ran every trial and died with
    ENAMETOOLONG writing the checkpoint (run) or the tables (exact). Now the preflight measures
    the deepest path the run creates against PC_PATH_MAX; a relative ``--out`` from a deep
    working folder counts as absolute (tempfile makes it so)."""
    sc = write(tmp_path, ONE)
    one_line_error(invoke("run", sc, "--out", deep / "results", "--no-progress"), "--out", "bytes long")
    one_line_error(invoke("exact", sc, "--out", deep / "results"), "--out", "bytes long")
    monkeypatch.chdir(deep)
    one_line_error(invoke("run", sc, "--no-progress"), "--out results", "bytes long")
    assert not (deep / "results").exists()
    monkeypatch.chdir(tmp_path)
    res = invoke("run", sc, "--out", "out", "--no-progress")   # a short path still runs
    assert res.exit_code == 0, res.stderr


# -- compare, exact and sensitivity check --out before computing -----------------------------

def _unusable(tmp_path: Path, kind: str, deep: Path) -> Path:
    if kind == "file":
        (tmp_path / "file").write_text("not a folder")
        return tmp_path / "file"
    if kind == "dangling_link":
        (tmp_path / "link").symlink_to(tmp_path / "nowhere")
        return tmp_path / "link"
    return deep / "results"


@pytest.mark.parametrize("kind", ["file", "dangling_link", "too_deep"])
@pytest.mark.parametrize("command", ["compare", "exact", "sensitivity"])
def test_compare_exact_and_sensitivity_check_out_before_computing(tmp_path, deep, monkeypatch, command, kind):
    """``compare``, ``exact`` and ``sensitivity`` computed everything, then met an unusable
    ``--out`` (a file, a dangling link, a folder too deep) with a traceback: results lost.
    They now run the preflight of ``run`` first (the computation is replaced by a failure
    here: reaching it means the check came too late)."""
    import analyzer.analyses.sensitivity as sens

    def computed(*a, **k):
        raise AssertionError("computed before checking --out")
    monkeypatch.setattr(api, "compare", computed)
    monkeypatch.setattr(api, "exact", computed)
    monkeypatch.setattr(sens, "run", computed)
    sc = write(tmp_path, {**ONE, "trials": 20_000})
    out = _unusable(tmp_path, kind, deep)
    args = {"compare": ["compare", sc, sc], "exact": ["exact", sc], "sensitivity": ["sensitivity", sc]}[command]
    one_line_error(invoke(*args, "--out", out), "--out")


def test_an_out_folder_with_markup_brackets_is_printed_as_written(tmp_path):
    """``--out 'x[/]'``: the run and the comparison were written, then printing "wrote ..."
    read the path as rich markup and raised MarkupError (a traceback, exit 1)."""
    sc = write(tmp_path, ONE)
    out = tmp_path / "x[/]"
    for args in (["run", sc, "--no-progress"], ["compare", sc, sc]):
        res = invoke(*args, "--out", out)
        assert res.exit_code == 0, (res.stderr, res.exception)
        assert "x[/]" in res.stdout.replace("\n", "")
