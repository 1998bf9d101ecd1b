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
