"""Clean interrupts: Ctrl-C (SIGINT) and SIGTERM stop a run between kernel calls.

Python's default SIGINT handler raises ``KeyboardInterrupt`` in the main thread while numba's
worker threads are inside a parallel kernel, which crashes the process (numba issues #2324,
#5551). While :func:`handling` is active a signal only sets a flag; the runner checks it
between kernel calls (:func:`check`), which it keeps short, saves the point's checkpoint and
raises :class:`RunInterrupted`; the CLI prints the run folder and ``analyzer run --resume``.
"""
from __future__ import annotations

import contextlib
import signal
import threading

from analyzer.core.errors import AnalyzerError

_received: list[int] = []


class RunInterrupted(AnalyzerError):
    """The run stopped on a signal; ``exit_code`` is 128 + the signal number (130, 143).
    ``run_dir``: the incomplete, resumable run folder (set by ``api.run_to_folder``)."""

    def __init__(self, signum: int):
        self.signum = signum
        self.exit_code = 128 + signum
        self.run_dir = None
        super().__init__(f"interrupted by {signal.Signals(signum).name}")


def _handler(signum, frame):   # noqa: ARG001 (signal handler signature)
    _received.append(signum)


@contextlib.contextmanager
def handling():
    """SIGINT and SIGTERM set the stop flag instead of killing the process (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _received.clear()
    old = {s: signal.signal(s, _handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        _received.clear()      # a stop request belongs to this block: a later run in the process is not stopped by it


def check() -> None:
    """Raise :class:`RunInterrupted` if a signal arrived since :func:`handling` began."""
    if _received:
        raise RunInterrupted(_received[0])


def stop_handler_installed(pid: int) -> bool | None:
    """Whether process ``pid`` catches SIGTERM (its :func:`handling` is active: a stop request
    now is a clean stop, not a kill). Reads ``/proc/PID/status`` (Linux); None where that
    cannot be read (another OS, or the process is gone). Tests and the ``stop-latency`` bench
    row wait for it before sending a signal, instead of sleeping a guessed start-up time."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) >> (signal.SIGTERM - 1) & 1)
    except (OSError, ValueError):
        return None
    return None
