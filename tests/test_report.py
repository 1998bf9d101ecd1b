"""``report.html``: one self-contained page per run (plots inline, no network), rebuilt by
``analyzer report``; a comparison folder gets the paired differences. A headless Chromium
opens a sweep's report and checks every plot image loads and no script error occurs (the
test skips, saying why, where no browser is installed: ``.ci/run`` installs Debian's
``chromium`` when it is missing)."""
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analyzer.cli.app import app
from tests.browser import SKIP, body_tag, find_browser, screenshot

#: the module's tests share one expensive module fixture: one worker runs them all under pytest -n
pytestmark = pytest.mark.xdist_group("report")

ROOT = Path(__file__).resolve().parent.parent
SWEEP = ROOT / "scenarios" / "dystopian_wars" / "attack_ad_grid.yaml"
runner = CliRunner()




@pytest.fixture(scope="module")
def sweep_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report")
    r = runner.invoke(app, ["run", str(SWEEP), "--trials", "4000", "--out", str(out), "--no-progress"])
    assert r.exit_code == 0, r.stderr
    return next(p.parent for p in out.rglob("summary.json"))


def test_report_is_one_self_contained_page(sweep_run):
    text = (sweep_run / "report.html").read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text), "the report must not load anything"
    images = re.findall(r'<img [^>]*src="data:image/png;base64,', text)
    assert len(images) == len(list(sweep_run.glob("*.png"))) > 0
    for section in ("All metrics", "Question and parameters", "Rule options in force", "Placeholders used",
                    "Notes", "Provenance", "95% CI low", "git_commit", "wall_seconds", "attack_dice"):
        assert section in text, section
    assert '<meta name="viewport"' in text          # readable on a phone


def test_analyzer_report_rebuilds_it(sweep_run):
    before = (sweep_run / "report.html").read_text()
    (sweep_run / "report.html").unlink()
    r = runner.invoke(app, ["report", str(sweep_run)])
    assert r.exit_code == 0, r.stderr
    assert (sweep_run / "report.html").read_text() == before
    r = runner.invoke(app, ["report", str(sweep_run.parent)])
    assert r.exit_code == 2 and "not a run folder" in r.stderr


def test_compare_writes_a_report_with_paired_differences(tmp_path):
    a = ROOT / "scenarios" / "dystopian_wars" / "attack_ad10.yaml"
    r = runner.invoke(app, ["compare", str(a), str(a), "--trials", "4096", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.stderr
    folder = next(p.parent for p in tmp_path.rglob("comparison.json"))
    text = (folder / "report.html").read_text()
    assert "B − A" in text and "95% CI low" in text and "common random numbers" in text


def test_report_opens_in_a_headless_browser(sweep_run, tmp_path):
    browser = find_browser()
    if browser is None:
        pytest.skip(SKIP)
    url = (sweep_run / "report.html").as_uri()
    tag = body_tag(browser, url)
    n_png = len(list(sweep_run.glob("*.png")))
    assert f'data-images="{n_png}/{n_png}"' in tag, tag
    assert 'data-errors="0"' in tag, tag
    for device, size in (("phone", "412,900"), ("desktop", "1280,1600")):
        shot = tmp_path / f"report_{device}.png"
        screenshot(browser, url, size, shot)
        keep = ROOT / "results" / f"report_screenshot_{device}.png"     # git-ignored: for a person to look at
        keep.parent.mkdir(exist_ok=True)
        shutil.copyfile(shot, keep)


def test_notes_say_which_point_they_belong_to(tmp_path):
    """Issue 28 item 9: a swept run's notes are labelled with their point's swept values (console,
    summary.json, report.html); a note every point carries is said once, unlabelled. summary.json
    keeps each point's own notes in its record (readers of the per-point list are unaffected)."""
    import json

    from analyzer.outputs.notes import labelled_notes
    scen = tmp_path / "s.yaml"
    scen.write_text("name: labelled\ngame: breaking_news\nquestion: shot\nparams: {weapon: assault_rifle, "
                    "mode: aimed, range_cm: 10, shooter: {quality: veteran}, target: {quality: veteran}}\n"
                    "sweep: {range_cm: [10, 40]}\n")
    r = runner.invoke(app, ["exact", str(scen), "--out", str(tmp_path / "out")])
    assert r.exit_code == 0, r.stderr
    folder = next((tmp_path / "out").rglob("summary.json")).parent
    summary = json.loads((folder / "summary.json").read_text())
    common = "target saves on a natural 3+"
    assert all(common in pt["notes"] for pt in summary["points"])        # per point, as before
    notes = summary["notes"]
    assert notes[0] == common and sum(common in n for n in notes) == 1
    assert any(n.startswith("[range_cm=10] table 3 (assault_rifle aimed") for n in notes)
    assert any(n.startswith("[range_cm=40] table 4 (assault_rifle aimed") for n in notes)
    assert not any(n.startswith("table ") for n in notes)                 # no unlabelled point note
    console = " ".join(r.stdout.split())                                  # undo the wrapping; the answer is on stdout
    assert f"note: {common}" in console and "note: [range_cm=40] table 4" in console
    assert "note: table" not in console
    html_text = (folder / "report.html").read_text()
    assert "[range_cm=10] table 3" in html_text and "[range_cm=40] table 4" in html_text
    # a summary.json written before the top-level list: the report labels the per-point notes itself
    assert labelled_notes([{"swept": {"a": 1}, "notes": ["x", "y"]}, {"swept": {"a": 2}, "notes": ["x"]}]) \
        == ["x", "[a=1] y"]
    assert labelled_notes([{"swept": {}, "notes": ["x", "x"]}]) == ["x"]
