"""The headless browser the page tests open reports and index pages in (``.ci/run`` installs
Debian's ``chromium`` when it is missing; a test skips, saying why, where none is found)."""
import shutil
from pathlib import Path

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=10000"]
SKIP = "no headless browser found (install Debian's 'chromium'; .ci/run does it when missing)"


def find_browser() -> str | None:
    for name in NAMES:
        if shutil.which(name):
            return shutil.which(name)
    return None

PNG = b"\x89PNG\r\n\x1a\n"


def body_tag(browser: str, url: str, size: str | None = None) -> str:
    """The page's ``<body ...>`` tag once loaded (its ``data-*`` attributes are what the page's script
    recorded: images decoded, script errors, overflow); ``size`` = ``"W,H"`` window. Fails with the
    browser's stderr when the page did not load."""
    import re
    import subprocess
    window = [f"--window-size={size}"] if size else []
    dom = subprocess.run([browser, *FLAGS, *window, "--dump-dom", url], capture_output=True, text=True, timeout=120)
    body = re.search(r"<body[^>]*>", dom.stdout)
    assert body, dom.stderr[-2000:]
    return body.group(0)


def body_at_width(browser: str, page: Path, width: int, height: int, work: Path) -> str:
    """The ``<body ...>`` tag of the HTML file ``page`` laid out exactly ``width`` px wide: headless
    Chromium's ``--dump-dom`` lays a page out at least 500 px wide whatever ``--window-size`` says, so
    the page is opened in an iframe of that width served with it from one local HTTP server (one
    origin: the outer page copies the inner body's ``data-*`` attributes once both have loaded).
    ``work`` is an empty scratch folder; the page's folder is linked into it, never written."""
    import threading
    from functools import partial
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    work.mkdir(parents=True, exist_ok=True)
    (work / "page").symlink_to(page.parent.resolve(), target_is_directory=True)
    (work / "narrow.html").write_text(
        f'<!DOCTYPE html><html><body><iframe id="r" src="page/{page.name}" width="{width}" height="{height}" '
        'style="border:0"></iframe><script>window.addEventListener("load",function(){var b=document.getElementById("r")'
        '.contentDocument.body;for(var i=0;i<b.attributes.length;i++){var a=b.attributes[i];'
        'if(a.name.indexOf("data-")===0){document.body.setAttribute(a.name,a.value)}}});</script></body></html>')
    handler = partial(type("Quiet", (SimpleHTTPRequestHandler,), {"log_message": lambda *a: None}), directory=str(work))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        tag = body_tag(browser, f"http://127.0.0.1:{server.server_address[1]}/narrow.html", f"{width + 40},{height + 40}")
    finally:
        server.shutdown()
        server.server_close()
    assert "data-" in tag, f"{page}: the page recorded no data-* attributes inside the {width} px frame: {tag}"
    return tag


def screenshot(browser: str, url: str, size: str, shot) -> None:
    """A PNG screenshot of ``url`` at window ``size`` into ``shot`` (asserted to be a PNG image)."""
    import subprocess
    res = subprocess.run([browser, *FLAGS, f"--window-size={size}", f"--screenshot={shot}", url],
                         capture_output=True, text=True, timeout=120)
    assert shot.is_file() and shot.read_bytes()[:8] == PNG, res.stderr[-2000:]
