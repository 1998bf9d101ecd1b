"""Issue 31 (report): the answer first — the primary metric's headline with its CI right under the
title (a ranking question: the best option and those not distinguishable from it), images that
open full size on tap, placeholders collapsed and grouped by file with their counts; in headless
Chromium at 1280 and 412 px (laid out at exactly that width, tests/browser.body_at_width) the headline is visible without scrolling and nothing scrolls sideways."""
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analyzer.cli.app import app
from tests.browser import SKIP, body_at_width, find_browser, screenshot

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("answer_first")
    r = runner.invoke(app, ["run", str(ROOT / "scenarios/uboat_leader/loadout_example_fleets.yaml"), "--trials", "300",
                            "--out", str(out), "--no-progress"])
    assert r.exit_code == 0, r.stderr
    return next(out.rglob("report.html"))


def test_the_headline_comes_before_everything_else(report):
    text = report.read_text()
    first_h2 = text.index("<h2>")
    answers = [m.start() for m in re.finditer(r'<p class="answer">', text)]
    assert len(answers) == 2 and all(a < first_h2 for a in answers)
    headline = re.search(r'<p class="answer"><b>([^<]+)</b> = ([^<]+)</p>', text)
    assert headline and "95% CI" in headline.group(2)
    assert re.search(r'<p class="answer">Best by vp: \S+ \([\d.]+\); ', text)


def test_images_open_full_size_and_placeholders_are_folded_by_file(report):
    text = report.read_text()
    links = re.findall(r'<a href="([^"]+)"><img ', text)
    assert links and all((report.parent / link).is_file() for link in links)
    section = text[text.index("<h2>Placeholders used"):]
    section = section[:section.index("<h2>", 5)]
    assert re.search(r"<details><summary>\d+ value\(s\) by file: [^<]*uboats\.yaml \d+", section)
    assert "<details open" not in section


def test_the_headline_is_visible_on_a_phone_and_a_desktop(report, tmp_path):
    browser = find_browser()
    if browser is None:
        pytest.skip(SKIP)
    for device, (w, h) in (("phone", (412, 900)), ("desktop", (1280, 900))):
        tag = body_at_width(browser, report, w, h, tmp_path / device)
        assert 'data-overflow="false"' in tag and 'data-errors="0"' in tag, (device, tag)
        bottom = int(re.search(r'data-answer-bottom="(\d+)"', tag).group(1))
        assert bottom < h, (device, bottom)
        screenshot(browser, report.as_uri(), f"{w},{h}", tmp_path / f"report_{device}.png")
