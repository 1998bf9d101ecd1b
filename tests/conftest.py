"""Test-session set-up shared by every test module."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def pytest_configure(config):
    """Under ``pytest -n N`` the controller first compiles every question's kernels in N
    processes, each its own share (tests/warmup.py), so the workers do not compile the same
    kernels twice. Skipped in the workers, without -n, and with ANALYZER_NO_WARMUP=1."""
    if hasattr(config, "workerinput") or os.environ.get("ANALYZER_NO_WARMUP"):
        return
    parts = getattr(config.option, "numprocesses", None)
    if not isinstance(parts, int) or parts < 2:
        return
    procs = [subprocess.Popen([sys.executable, "-m", "tests.warmup", str(k), str(parts)], cwd=ROOT)
             for k in range(parts)]
    for proc in procs:
        proc.wait()
