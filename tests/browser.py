"""The headless browser the page tests open reports and index pages in (``.ci/run`` installs
Debian's ``chromium`` when it is missing; a test skips, saying why, where none is found)."""
import shutil

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


def screenshot(browser: str, url: str, size: str, shot) -> None:
    """A PNG screenshot of ``url`` at window ``size`` into ``shot`` (asserted to be a PNG image)."""
    import subprocess
    res = subprocess.run([browser, *FLAGS, f"--window-size={size}", f"--screenshot={shot}", url],
                         capture_output=True, text=True, timeout=120)
    assert shot.is_file() and shot.read_bytes()[:8] == PNG, res.stderr[-2000:]
