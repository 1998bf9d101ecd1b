"""The safe-I/O layer of the readers and of ``init`` (issue 25): ``report``, ``plot``, the catalog
cache and ``init`` follow no link, read regular files only (size caps, no FIFO opened for reading),
write through exclusive temporary files, escape every value written into HTML, and refuse a damaged
folder in one line (``error: ...``, exit 2) instead of a traceback.

Each test's docstring says what the code did before. A hypothesis test tampers with copies of one
complete run folder (links out of it, to /dev/zero, FIFOs, truncation, edited JSON, swapped
files) and checks ``report`` and ``plot`` either refuse in one line or give the untouched result,
never hang, and never change anything outside the folder."""
from __future__ import annotations

import base64
import json
import os
import re
import shutil
import stat
import subprocess
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st
from typer.testing import CliRunner

from analyzer.outputs import catalog_cache
from analyzer.core import paths
from analyzer.outputs import report
from analyzer.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios" / "dice" / "any_of_n.yaml"
runner = CliRunner()

#: what a hostile folder puts into every string field
PAYLOAD = "<img src=x onerror=alert(1)><script>window.__pwned=1</script>"
SECRET = b"TOP-SECRET: this file is outside the run folder\n"


def _invoke(args: list[str], timeout: float = 60):
    """``CliRunner.invoke`` in a thread with a bounded wait: a reader that blocks (a FIFO opened
    for reading) fails the test instead of hanging it."""
    box = {}
    t = threading.Thread(target=lambda: box.setdefault("r", runner.invoke(app, args)), daemon=True)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), f"analyzer {' '.join(args)} still running after {timeout} s (blocked on a FIFO?)"
    return box["r"]


def _one_line_refusal(r) -> str:
    """The command refused as a user error: exit 2, one ``error:`` line, no traceback."""
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert r.exit_code == 2, (r.exit_code, r.stderr, r.exception)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    return lines[0]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """One run folder (4-point sweep, 2,000 trials a point) and one comparison folder, built once."""
    out = tmp_path_factory.mktemp("safe_io")
    r = runner.invoke(app, ["run", str(SCENARIO), "--trials", "2000", "--out", str(out / "runs"), "--no-progress"])
    assert r.exit_code == 0, r.stderr
    r = runner.invoke(app, ["compare", str(SCENARIO), str(SCENARIO), "--trials", "2000", "--out", str(out / "cmp")])
    assert r.exit_code == 0, r.stderr
    run = next(p.parent for p in (out / "runs").rglob("summary.json"))
    cmp = next(p.parent for p in (out / "cmp").rglob("comparison.json"))
    return run, cmp


def _copy(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, symlinks=True)
    return dest


# --- paths: the reading primitives -------------------------------------------------------------
def test_read_regular_refuses_links_fifos_devices_and_oversize(tmp_path):
    """New primitives (the readers used ``read_text``/``read_bytes``, which follow links, block
    on a FIFO and read /dev/zero until memory runs out)."""
    (tmp_path / "ok.json").write_text('{"a": 1}')
    (tmp_path / "outside").write_bytes(SECRET)
    os.symlink(tmp_path / "outside", tmp_path / "link.json")
    os.symlink("/dev/zero", tmp_path / "zero.json")
    os.mkfifo(tmp_path / "fifo.json")
    (tmp_path / "sub").mkdir()
    os.symlink(tmp_path / "sub", tmp_path / "dirlink")
    (tmp_path / "sub" / "x.json").write_text("[1]")
    assert paths.read_json(tmp_path, "ok.json") == {"a": 1}
    assert paths.read_json(tmp_path, "sub/x.json") == [1]
    for name, why in (("link.json", "is a link"), ("zero.json", "is a link"), ("fifo.json", "not a regular file"),
                      ("dirlink/x.json", "is a link"), ("sub", "not a regular file")):
        with pytest.raises(paths.UnreadableFileError, match=why) as e:
            paths.read_regular(tmp_path, name, 1 << 20)
        assert "\n" not in str(e.value) and str(tmp_path) in str(e.value)
    with pytest.raises(paths.UnreadableFileError, match="at most 4 expected"):
        paths.read_regular(tmp_path, "ok.json", 4)
    for bad in ("../outside", "/etc/passwd", "a//b", ""):
        with pytest.raises(paths.UnsafePathError):
            paths.read_regular(tmp_path, bad, 100)
    (tmp_path / "bad.json").write_text("{nope")
    with pytest.raises(paths.UnreadableFileError, match=r"bad.json: is not valid JSON .*line 1 column 2"):
        paths.read_json(tmp_path, "bad.json")
    with pytest.raises(FileNotFoundError):
        paths.read_regular(tmp_path, "missing.json", 10)


# --- report: escaping and the images it inlines ---------------------------------------------------
def test_comparison_point_is_escaped(folders, tmp_path):
    """``comparison.json``'s ``points[].point`` was written into report.html unescaped: a
    tampered value ran script in the browser."""
    cmp = _copy(folders[1], tmp_path / "cmp")
    doc = json.loads((cmp / "comparison.json").read_text())
    doc["points"][0]["point"] = PAYLOAD
    (cmp / "comparison.json").write_text(json.dumps(doc))
    r = _invoke(["report", str(cmp)])
    assert r.exit_code == 0, r.stderr
    text = (cmp / "report.html").read_text()
    assert PAYLOAD not in text and "onerror=alert" not in text.replace("onerror=alert(1)&gt;", "")
    assert "&lt;img src=x onerror=alert(1)&gt;&lt;script&gt;" in text
    assert text.count("<script>") == 1


def test_report_does_not_inline_links_fifos_or_non_png(folders, tmp_path):
    """``report`` inlined every ``*.png`` with ``read_bytes()``: ``x.png -> secret`` embedded the
    secret in a report meant to be shared, ``-> /dev/zero`` ate memory, a FIFO hung forever. Now
    each is left out with a one-line note in the Plots section; the folder's own images stay."""
    run = _copy(folders[0], tmp_path / "world" / "run")
    secret = tmp_path / "world" / "secret.txt"
    secret.write_bytes(SECRET)
    own = sorted(p.name for p in run.glob("*.png"))
    os.symlink(secret, run / "leak.png")
    os.symlink("/dev/zero", run / "zero.png")
    os.mkfifo(run / "fifo.png")
    (run / "text.png").write_text("not an image")
    r = _invoke(["report", str(run)])
    assert r.exit_code == 0, r.stderr
    text = (run / "report.html").read_text()
    assert base64.b64encode(SECRET).decode() not in text and "TOP-SECRET" not in text
    assert len(re.findall(r'<img [^>]*src="data:image/png;base64,', text)) == len(own) == 2
    for line in ("leak.png: is a link; links are not followed here", "zero.png: is a link; links are not followed here",
                 "fifo.png: is not a regular file", "text.png: is not a PNG image"):
        assert line in text, line


def test_report_skips_an_oversize_png(folders, tmp_path, monkeypatch):
    """A PNG larger than the cap was read whole. Now it is left out, named, with the cap."""
    run = _copy(folders[0], tmp_path / "run")
    monkeypatch.setattr(paths, "MAX_IMAGE_BYTES", 1000)
    text = report.run_report_html(run)
    assert "<img " not in text and "at most 1,000 expected" in text


# --- damaged folders: one line, naming the file and the field ------------------------------------
def _edit(name: str, change):
    def apply(folder: Path):
        doc = json.loads((folder / name).read_text())
        doc = change(doc)
        (folder / name).write_text(json.dumps(doc))
    return apply


def _set(path: tuple, value):
    def change(doc):
        node = doc
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = value
        return doc
    return change


DAMAGED_REPORT = [   # (what is done, what the one-line refusal names)
    (_edit("summary.json", _set(("points",), [])), "summary.json: points: is empty"),
    (_edit("summary.json", _set(("points", 0, "metrics"), {})), "summary.json: points[0].metrics: is empty"),
    (_edit("summary.json", lambda d: [d]), "summary.json: (the document): expected a mapping, got a list"),
    (_edit("summary.json", _set(("points", 1, "swept"), None)), "summary.json: points[1].swept: expected a mapping"),
    (_edit("summary.json", _set(("points", 0, "trials"), "<script>")), "summary.json: points[0].trials: expected a whole"),
    (_edit("summary.json", _set(("points", 2, "metrics", "p_success", "mean"), "0.5")),
     "points[2].metrics.p_success.mean: expected a number"),
    (_edit("summary.json", _set(("mode",), "[/x]")), "summary.json: mode: got '[/x]'"),
    (_edit("manifest.json", _set(("points",), "x")), "manifest.json: points: expected a list"),
    (_edit("manifest.json", _set(("data_files",), [{"path": 1, "origin": "x", "sha256": 5}])),
     "manifest.json: data_files[0].path: expected text"),
    (_edit("plotmeta.json", _set(("metrics",), [])), "plotmeta.json: metrics: is empty"),
]


@pytest.mark.parametrize("damage, message", DAMAGED_REPORT, ids=[m for _, m in DAMAGED_REPORT])
def test_report_refuses_a_damaged_folder_in_one_line(folders, tmp_path, damage, message):
    """``points: []``, ``metrics: {}``, a JSON list, ``swept: null`` gave IndexError/TypeError
    tracebacks; ``trials: "<script>"`` a format error; a value with rich markup (``[/x]``) in the
    refusal raised MarkupError while printing it."""
    run = _copy(folders[0], tmp_path / "run")
    before = (run / "report.html").read_bytes()
    damage(run)
    line = _one_line_refusal(_invoke(["report", str(run)]))
    assert message in line
    assert (run / "report.html").read_bytes() == before          # nothing (half-)written


def test_comparison_report_refuses_damaged_points(folders, tmp_path):
    """A comparison folder with ``points: []`` or ``metrics`` of the wrong shape gave tracebacks."""
    for change, message in ((_set(("points",), []), "comparison.json: points: is empty"),
                            (_set(("points", 0, "metrics", "p_success", "a"), 3), "p_success.a: expected a mapping"),
                            (_set(("points", 0, "trials"), "many"), "points[0].trials: expected a whole number")):
        cmp = _copy(folders[1], tmp_path / f"cmp{len(os.listdir(tmp_path))}")
        _edit("comparison.json", change)(cmp)
        assert message in _one_line_refusal(_invoke(["report", str(cmp)]))


DAMAGED_PLOT = [
    (_edit("plotmeta.json", _set(("swept",), None)), "plotmeta.json: swept: expected a list"),
    (_edit("plotmeta.json", lambda d: [d]), "plotmeta.json: (the document): expected a mapping"),
    (_edit("plotmeta.json", _set(("metrics",), [])), "plotmeta.json: metrics: is empty"),
    (_edit("plotmeta.json", _set(("metrics", 0, "name"), 7)), "plotmeta.json: metrics[0].name: expected text"),
    (_edit("plotmeta.json", _set(("swept",), ["nope"])), "points.parquet: nope: column is missing"),
    (_edit("plotmeta.json", _set(("metrics", 1, "distribution"), "yes")),
     "plotmeta.json: metrics[1].distribution: expected true or false, got 'yes'"),
    (lambda f: (f / "points.parquet").write_bytes((f / "points.parquet").read_bytes()[:300]),
     "points.parquet: is not a readable parquet table"),
    (lambda f: (f / "plotmeta.json").write_text('{"a": '), "plotmeta.json: is not valid JSON"),
    (_edit("plotmeta.json", lambda d: {**d, "game": "b17", "question": "mission"}),
     "plotmeta.json: the figures of b17/mission cannot be drawn from this folder's tables (KeyError"),
]


@pytest.mark.parametrize("damage, message", DAMAGED_PLOT, ids=[m for _, m in DAMAGED_PLOT])
def test_plot_refuses_a_damaged_folder_in_one_line(folders, tmp_path, damage, message):
    """``plot`` on a damaged plotmeta.json (``swept: null``, a JSON list, no metrics, a metric
    name that is not text) gave TypeError/IndexError tracebacks or a message naming no field."""
    run = _copy(folders[0], tmp_path / "run")
    damage(run)
    assert message in _one_line_refusal(_invoke(["plot", str(run)]))


# --- the catalog cache ---------------------------------------------------------------------------
def _cache(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    folder.mkdir()
    monkeypatch.setenv("WARGAME_ANALYZER_CACHE", str(folder))
    return folder


def test_catalog_cache_never_writes_through_a_planted_link(tmp_path, monkeypatch):
    """The cache wrote its temporary file at ``catalog-<fingerprint>.<pid>.tmp`` with
    ``Path.write_text`` (follows links): a link planted there in a shared cache folder made
    ``analyzer list`` overwrite the file it pointed to."""
    folder = _cache(tmp_path, monkeypatch)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    fp = catalog_cache.fingerprint()
    os.symlink(victim, folder / f"catalog-{fp}.{os.getpid()}.tmp")
    os.symlink(tmp_path / "created-by-list", folder / f"catalog-{fp}.json")     # dangling, at the final name
    doc = catalog_cache.cached_catalog("dice")
    assert doc and list(doc) == ["dice"]
    assert victim.read_text() == "keep me" and not (tmp_path / "created-by-list").exists()
    final = folder / f"catalog-{fp}.json"
    assert not final.is_symlink() and catalog_cache.valid_catalog(json.loads(final.read_text()))


def test_catalog_cache_does_not_follow_a_link_to_a_crafted_listing(tmp_path, monkeypatch):
    """The cache file was read with ``read_text`` (follows links): a link to a crafted listing
    elsewhere was shown as the catalog."""
    folder = _cache(tmp_path, monkeypatch)
    real = catalog_cache.cached_catalog()
    crafted = {"dice": [dict(real["dice"][0], summary="CRAFTED")]}
    (tmp_path / "crafted.json").write_text(json.dumps(crafted))
    final = folder / f"catalog-{catalog_cache.fingerprint()}.json"
    final.unlink()
    os.symlink(tmp_path / "crafted.json", final)
    assert catalog_cache.cached_catalog() == real


@pytest.mark.parametrize("cached", ["[]", '{"dice": 5}', '{"dice": [{"question": 1}]}', '{"dice": [5]}',
                                    "{truncated", '"text"'])
def test_a_cached_listing_of_the_wrong_shape_is_rebuilt(tmp_path, monkeypatch, cached):
    """Cached JSON of the wrong shape (a list, a number where the questions are, a question that
    is not a mapping) gave AttributeError/TypeError tracebacks in ``analyzer list``."""
    folder = _cache(tmp_path, monkeypatch)
    good = runner.invoke(app, ["list", "dice"])
    assert good.exit_code == 0
    (folder / f"catalog-{catalog_cache.fingerprint()}.json").write_text(cached)
    r = runner.invoke(app, ["list", "dice"])
    assert r.exit_code == 0 and r.exception is None, (r.stderr, r.exception)
    assert r.stdout == good.stdout


def test_cached_strings_are_printed_as_text_not_markup_or_escapes(tmp_path, monkeypatch):
    """Cached strings were printed as rich markup: ``[link=...]`` became a terminal link, a
    closing tag ``[/]`` in a question name raised MarkupError, raw ESC bytes (OSC-8 links,
    colour codes) reached the terminal."""
    folder = _cache(tmp_path, monkeypatch)
    doc = catalog_cache.cached_catalog()
    q = doc["dice"][0]
    q["summary"] = "[link=https://evil.example]click[/link] \x1b]8;;https://evil.example\x1b\\here\x1b]8;;\x1b\\"
    q["question"] = "[/]odd[bold]"
    q["params"][0]["path"] = "\x1b[31mred[/x]"
    (folder / f"catalog-{catalog_cache.fingerprint()}.json").write_text(json.dumps(doc))
    r = runner.invoke(app, ["list", "dice"])
    assert r.exit_code == 0 and r.exception is None, (r.stderr, repr(r.exception))
    assert "\x1b" not in r.stdout
    assert "[link=https://evil.example]click[/link]" in r.stdout and "\\x1b]8;;https://evil.example" in r.stdout
    assert "[/]odd[bold]" in r.stdout and "\\x1b[31mred[/x]" in r.stdout


# --- init ---------------------------------------------------------------------------------------
def test_init_never_writes_through_a_link_in_dir(tmp_path):
    """``init`` checked "already exists" with ``Path.exists()`` (False for a dangling link) and
    copied with ``shutil.copyfile`` (follows links): a prepared DIR made it create or overwrite
    files outside DIR."""
    outside = tmp_path / "outside"
    outside.mkdir()
    dest = tmp_path / "dest"
    dest.mkdir()
    os.symlink(outside / "planted.yaml", dest / "attack_ad10.yaml")          # dangling
    line = _one_line_refusal(runner.invoke(app, ["init", "dystopian_wars", "attack", str(dest)]))
    assert "attack_ad10.yaml already exist(s)" in line
    r = runner.invoke(app, ["init", "dystopian_wars", "attack", str(dest), "--force"])
    assert r.exit_code == 0, r.stderr
    assert list(outside.iterdir()) == []                                       # nothing written through the link
    assert not (dest / "attack_ad10.yaml").is_symlink() and (dest / "attack_ad10.yaml").is_file()

    dest2 = tmp_path / "dest2"
    dest2.mkdir()
    os.symlink(outside, dest2 / "data")                                        # a folder on the way
    for extra in ([], ["--force"]):
        line = _one_line_refusal(runner.invoke(app, ["init", "dystopian_wars", "attack", str(dest2), *extra]))
        assert "data/dystopian_wars.yaml (a link or a file on the way)" in line
    assert list(outside.iterdir()) == [] and sorted(os.listdir(dest2)) == ["data"]


def test_init_refuses_dir_that_is_a_file_under_a_file_or_unwritable(tmp_path):
    """DIR a file, under a file or unwritable gave FileExistsError/NotADirectoryError/
    PermissionError tracebacks."""
    f = tmp_path / "file"
    f.write_text("x")
    assert "file: exists and is not a folder" in _one_line_refusal(runner.invoke(app, ["init", "dice", str(f)]))
    line = _one_line_refusal(runner.invoke(app, ["init", "dice", str(f / "sub" / "dir")]))
    assert f"{f} is a file, not a folder" in line
    os.symlink(tmp_path / "nothing", tmp_path / "dangling")
    assert "is a link to nothing" in _one_line_refusal(runner.invoke(app, ["init", "dice", str(tmp_path / "dangling")]))
    if os.geteuid() == 0:             # root writes anywhere a mode allows nothing: use a file system that refuses
        unwritable = Path("/sys/analyzer-init-test")
    else:
        (tmp_path / "ro").mkdir(mode=0o500)
        unwritable = tmp_path / "ro" / "dir"
    line = _one_line_refusal(runner.invoke(app, ["init", "dice", str(unwritable)]))
    assert "cannot write there" in line


# --- everything a hostile folder can put in a string, rendered by Chromium --------------------------
def _browser() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if shutil.which(name):
            return shutil.which(name)
    return None


STRUCTURAL_KEYS = {"swept", "swept_a", "swept_b", "params", "metrics", "rules", "distributions", "counters"}


def _poison(node, key=None):
    """Every string value (``mode`` excepted: it selects the page) gets :data:`PAYLOAD`
    appended; the keys of the name-keyed mappings too (metric and parameter names)."""
    if isinstance(node, str):
        return node if key == "mode" else node + PAYLOAD
    if isinstance(node, list):
        return [_poison(v) for v in node]
    if isinstance(node, dict):
        rename = key in STRUCTURAL_KEYS and not (key == "metrics" and any(k in node for k in ("mean", "a")))
        return {(k + PAYLOAD if rename else k): _poison(v, k) for k, v in node.items()}
    return node


def _elements(dom: str) -> list[tuple[str, dict]]:
    """Every element of the DOM Chromium dumped: (tag, attributes)."""
    from html.parser import HTMLParser
    found = []

    class Collect(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append((tag, {k: v or "" for k, v in attrs}))
    Collect().feed(dom)
    return found


def _dump_dom(browser: str, page: Path) -> str:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000"]
    res = subprocess.run([browser, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert "<body" in res.stdout, res.stderr[-2000:]
    return res.stdout


def test_markup_in_every_string_field_stays_text_in_chromium(folders, tmp_path):
    """Every string field of summary.json, manifest.json, plotmeta.json and comparison.json holds
    ``<img onerror>`` and ``<script>`` markup (and a PNG is named with it): the page rendered by
    headless Chromium has only its own script, no injected element or handler, the markup as
    text, and ``window.__pwned`` never set. (``points[].point`` of a comparison was not escaped.)"""
    browser = _browser()
    if browser is None:
        pytest.skip("no headless browser found (install Debian's 'chromium'; .ci/run does it when missing)")
    run = _copy(folders[0], tmp_path / "run")
    cmp = _copy(folders[1], tmp_path / "cmp")
    for folder, names in ((run, ("summary.json", "manifest.json", "plotmeta.json")), (cmp, ("comparison.json",))):
        for name in names:
            (folder / name).write_text(json.dumps(_poison(json.loads((folder / name).read_text()))))
    cmp_doc = json.loads((cmp / "comparison.json").read_text())
    cmp_doc["points"][0]["point"] = PAYLOAD
    (cmp / "comparison.json").write_text(json.dumps(cmp_doc))
    shutil.copyfile(next(run.glob("*.png")), run / "<img src=x onerror=alert(2)>.png")
    for folder in (run, cmp):
        r = _invoke(["report", str(folder)])
        assert r.exit_code == 0, r.stderr
        text = (folder / "report.html").read_text()
        assert text.count("<script") == 1 and "<img src=x" not in text
        dom = _dump_dom(browser, folder / "report.html")
        tags = _elements(dom)
        assert [t for t, _ in tags].count("script") == 1, "an injected <script> element exists"
        handlers = [(t, a) for t, attrs in tags for a in attrs if a.startswith("on")]
        assert not handlers, f"elements with event handlers exist: {handlers}"
        assert not [t for t, attrs in tags if t == "img" and "src" in attrs and not attrs["src"].startswith("data:")]
        assert "__pwned=1</script>" not in dom.replace("__pwned=1&lt;/script&gt;", "")
        assert dom.count("&lt;img src=x onerror=alert(1)&gt;&lt;script&gt;window.__pwned=1&lt;/script&gt;") >= 3
        assert 'data-errors="0"' in dom
    assert "alert(2)&gt;.png" in _dump_dom(browser, run / "report.html")


# --- hypothesis: random tampering of a run folder -----------------------------------------------------
FILES = ["summary.json", "manifest.json", "plotmeta.json", "points.parquet", "distributions.parquet",
         "report.html", "p_success_vs_dice.png", "successes_vs_dice.png"]
JSON_FILES = FILES[:3]
REPORT_INPUTS = ("summary.json", "manifest.json", "plotmeta.json")
PLOT_INPUTS = ("plotmeta.json", "points.parquet", "distributions.parquet")
VALUES = [None, [], {}, 0, -1, 2.5, float("nan"), True, "", PAYLOAD, "[/x]", "\x1b]8;;x\x1b\\", [PAYLOAD], {"a": PAYLOAD}]


def _json_paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _json_paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _json_paths(v, prefix + (i,))


tampering = st.one_of(
    st.tuples(st.just("link_out"), st.sampled_from(FILES + ["extra.png"])),
    st.tuples(st.just("link_zero"), st.sampled_from(FILES + ["extra.png"])),
    st.tuples(st.just("link_in"), st.sampled_from(FILES), st.sampled_from(FILES)),
    st.tuples(st.just("fifo"), st.sampled_from(FILES + ["extra.png"])),
    st.tuples(st.just("truncate"), st.sampled_from(FILES), st.floats(0, 0.99)),
    st.tuples(st.just("set"), st.sampled_from(JSON_FILES), st.integers(0, 10_000), st.sampled_from(VALUES)),
    st.tuples(st.just("delete"), st.sampled_from(JSON_FILES), st.integers(0, 10_000)),
    st.tuples(st.just("swap"), st.sampled_from(FILES), st.sampled_from(FILES)),
)


def _apply(run: Path, op: tuple, outside: Path) -> None:
    kind, name = op[0], op[1]
    target = run / name
    if kind in ("link_out", "link_zero", "link_in", "fifo"):
        if os.path.lexists(target):
            target.unlink()
        if kind == "fifo":
            os.mkfifo(target)
        else:
            os.symlink({"link_out": str(outside), "link_zero": "/dev/zero"}.get(kind, op[-1]), target)
        return
    if not (os.path.lexists(target) and stat.S_ISREG(os.lstat(target).st_mode)):
        return                                       # (an earlier tampering made it a link or FIFO)
    if kind == "truncate":
        data = target.read_bytes()
        target.write_bytes(data[:int(len(data) * op[2])])
    elif kind == "swap":
        other = run / op[2]
        if other != target and stat.S_ISREG(os.lstat(other).st_mode):
            a, b = target.read_bytes(), other.read_bytes()
            target.write_bytes(b)
            other.write_bytes(a)
    else:
        try:
            doc = json.loads(target.read_text())
        except ValueError:
            return
        where = list(_json_paths(doc))
        path = where[op[2] % len(where)]
        if kind == "set":
            if not path:
                doc = op[3]
            else:
                node = doc
                for k in path[:-1]:
                    node = node[k]
                node[path[-1]] = op[3]
        elif path:
            node = doc
            for k in path[:-1]:
                node = node[k]
            del node[path[-1]]
        target.write_text(json.dumps(doc))


def _snapshot(folder: Path, skip: Path) -> dict:
    """Every entry under ``folder`` except ``skip``'s tree: type, size, mtime and content."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        if Path(dirpath) == skip or skip in Path(dirpath).parents:
            continue
        for n in dirnames + filenames:
            p = Path(dirpath, n)
            if p == skip:
                continue
            st_ = os.lstat(p)
            out[str(p)] = (stat.S_IFMT(st_.st_mode), st_.st_size, st_.st_mtime_ns,
                           p.read_bytes() if stat.S_ISREG(st_.st_mode) else None)
    return out


def _regular(folder: Path, name: str) -> bytes | None:
    p = folder / name
    return p.read_bytes() if os.path.lexists(p) and stat.S_ISREG(os.lstat(p).st_mode) else None


@pytest.fixture(scope="module")
def baseline(folders, tmp_path_factory):
    """The untouched folder's report.html and re-rendered plots (``analyzer plot``)."""
    run = _copy(folders[0], tmp_path_factory.mktemp("baseline") / "run")
    assert _invoke(["report", str(run)]).exit_code == 0
    assert _invoke(["plot", str(run)]).exit_code == 0
    pngs = {p.name: p.read_bytes() for p in run.glob("*.png")}
    return {name: _regular(run, name) for name in FILES}, (run / "report.html").read_bytes(), pngs


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(ops=st.lists(tampering, min_size=1, max_size=3))
def test_tampered_run_folders_are_refused_or_give_the_untouched_result(folders, baseline, tmp_path_factory, ops):
    """Random tampering (links out of the folder, to /dev/zero and inside it, FIFOs, truncation,
    a JSON value set to another type or to markup, a key deleted, two files swapped) makes
    ``report`` and ``plot`` refuse in one line or give what the untouched folder gives (whenever
    the files they read are untouched); neither hangs, inlines anything from outside, nor changes
    anything outside the folder."""
    files, base_report, base_pngs = baseline
    world = tmp_path_factory.mktemp("world")
    secret = world / "secret.txt"
    secret.write_bytes(SECRET)
    run = _copy(folders[0], world / "run")
    for op in ops:
        _apply(run, op, secret)
    before = _snapshot(world, run)
    report_inputs_same = all(_regular(run, n) == files[n] for n in REPORT_INPUTS) and \
        sorted(n for n in os.listdir(run) if n.endswith(".png")) == sorted(base_pngs) and \
        all(_regular(run, n) == base_pngs[n] for n in base_pngs)
    plot_inputs_same = all(_regular(run, n) == files[n] for n in PLOT_INPUTS)

    r = _invoke(["report", str(run)])
    event(f"report: {'refused' if r.exit_code else 'written'}")
    if r.exit_code != 0:
        _one_line_refusal(r)
    else:
        text = (run / "report.html").read_bytes()
        assert not os.path.islink(run / "report.html")
        assert SECRET not in text and base64.b64encode(SECRET) not in text
        assert text.count(b"<script") == 1 and b"<img src=x" not in text
        if report_inputs_same:
            assert text == base_report

    r = _invoke(["plot", str(run)])
    event(f"plot: {'refused' if r.exit_code else 'written'}")
    if r.exit_code != 0:
        _one_line_refusal(r)
    else:
        written = [Path(line.split("wrote ", 1)[1]) for line in r.stderr.splitlines() if line.startswith("wrote ")]
        assert written and all(p.parent == run and stat.S_ISREG(os.lstat(p).st_mode) for p in written)
        if plot_inputs_same:
            assert {p.name: p.read_bytes() for p in written} == base_pngs

    assert _snapshot(world, run) == before, "something outside the run folder changed"
    assert secret.read_bytes() == SECRET
    shutil.rmtree(world)
