"""Checkpointed run folders: a sweep persisted point by point (and batch by batch) as it runs.

A run folder is created under its final name when computing starts. Until the run completes
it holds only ``manifest.json`` with ``"status": "incomplete"`` (what ``--resume`` needs: the
scenario's path and SHA-256, the seed and trial settings, the data files read) and
``checkpoint/point-NNNNNN.npz``: per point, the accumulator's integer sums, the next chunk to
run, the seconds spent and whether the point is done. Every file is written through
:func:`analyzer.paths.write_atomic`, so a killed process never leaves a half-written one.

Results depend only on (seed, point key, trial count) and the sums do not depend on how
chunks are grouped, so continuing a point from its checkpoint gives the tables an
uninterrupted run gives. While a process runs or resumes a folder it holds an exclusive
``flock`` on ``checkpoint/``: a second ``--resume`` of the same folder is refused.
"""
from __future__ import annotations

import datetime as _dt
import errno
import fcntl
import io
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from analyzer import __version__, outputs, paths
from analyzer.errors import ScenarioError
from analyzer.questions import Prepared
from analyzer.runner import CHECKPOINT_SECONDS, point_key
from analyzer.scenario import Scenario
from analyzer.stats import MetricAccumulator

CHECKPOINT_DIR = "checkpoint"
MANIFEST = "manifest.json"
INCOMPLETE = "incomplete"
COMPLETE = "complete"
#: Format of the incomplete manifest and the point files (refuse what a later version wrote).
CHECKPOINT_FORMAT = 1


class ResumeError(ScenarioError):
    """A run folder that cannot be resumed (one-line message naming the folder)."""

    def __init__(self, run_dir: Path | str, message: str):
        super().__init__(str(run_dir), "", message)


def resume_command(run_dir: Path) -> str:
    return f"analyzer run --resume {run_dir}"


@dataclass
class PointState:
    """What a checkpoint knows about one point."""

    acc: MetricAccumulator
    next_chunk: int
    seconds: float
    done: bool


class RunCheckpoint:
    """The checkpoints of one run folder, locked for this process while it is open."""

    def __init__(self, run_dir: Path, scenario: Scenario, *, resumed: bool):
        self.run_dir = Path(run_dir)
        self.scenario = scenario
        self.resumed = resumed
        self.dir = self.run_dir / CHECKPOINT_DIR
        self._last_save: dict[int, float] = {}
        self._lock_fd: int | None = None
        #: seconds earlier sessions spent on the points loaded so far
        self.restored_seconds = 0.0

    # -- creating, opening, finishing --------------------------------------------------------
    @classmethod
    def start(cls, scenario: Scenario, out_root: Path, prepared: list[Prepared]) -> "RunCheckpoint":
        """Create the run folder under its final name with an incomplete manifest."""
        run_dir = outputs.new_visible_run_dir(Path(out_root), scenario.name, scenario.digest)
        ckpt = cls(run_dir, scenario, resumed=False)
        try:
            ckpt.dir.mkdir()
            ckpt._lock()
            outputs.write_json(_incomplete_manifest(scenario, prepared), run_dir / MANIFEST)
        except BaseException:
            ckpt.discard()
            raise
        return ckpt

    @classmethod
    def open(cls, run_dir: Path, scenario: Scenario, prepared: list[Prepared]) -> "RunCheckpoint":
        """Lock an incomplete run folder for resuming, after checking that the scenario it was
        started from (reloaded by :func:`read_incomplete_manifest`'s caller) and the data files
        it read are unchanged."""
        manifest = read_incomplete_manifest(run_dir)
        if scenario.digest != manifest["scenario_sha256"]:
            raise ResumeError(run_dir, f"the scenario {manifest['scenario_file']} changed since this run started "
                              f"(SHA-256 {scenario.digest[:12]}..., was {manifest['scenario_sha256'][:12]}...); "
                              f"restore it or start a new run")
        now = _data_files(prepared)
        if now != manifest["data_files"]:
            changed = sorted({f["path"] for f in now if f not in manifest["data_files"]}
                             | {f["path"] for f in manifest["data_files"] if f not in now})
            raise ResumeError(run_dir, f"data file(s) changed since this run started: {', '.join(changed)}; "
                              f"restore them or start a new run")
        if manifest["points"] != len(scenario.points):
            raise ResumeError(run_dir, f"the run has {manifest['points']} points, the scenario now "
                              f"{len(scenario.points)}")
        ckpt = cls(run_dir, scenario, resumed=True)
        if not ckpt.dir.is_dir():
            raise ResumeError(run_dir, f"no {CHECKPOINT_DIR}/ folder: not a resumable run folder")
        ckpt._lock()
        return ckpt

    def _lock(self) -> None:
        fd = os.open(self.dir, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            os.close(fd)
            if e.errno in (errno.EWOULDBLOCK, errno.EACCES):
                raise ResumeError(self.run_dir, "another process is running this folder; wait for it "
                                  "or stop it first") from None
            raise
        self._lock_fd = fd

    def release(self) -> None:
        """Unlock (the folder stays, resumable)."""
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def finish(self) -> None:
        """The run's outputs are in place: remove the checkpoints."""
        self.release()
        shutil.rmtree(self.dir, ignore_errors=True)

    def discard(self) -> None:
        """Remove the whole run folder (a new run that failed with an ordinary error)."""
        self.release()
        shutil.rmtree(self.run_dir, ignore_errors=True)
        try:
            self.run_dir.parent.rmdir()   # only if empty: a scenario folder that got no run
        except OSError:
            pass

    # -- points ------------------------------------------------------------------------------
    def _point_file(self, index: int) -> Path:
        return self.dir / f"point-{index:06d}.npz"

    def load_point(self, index: int, prepared: Prepared) -> PointState | None:
        """The saved state of point ``index`` (None when it never saved one)."""
        path = self._point_file(index)
        if not path.is_file():
            return None
        point = self.scenario.points[index]
        try:
            with np.load(path, allow_pickle=False) as z:
                meta = z["meta"]
                hist, moments, counters = z["hist"], z["moments"], z["counters"]
                seconds = float(z["seconds"])
        except (OSError, ValueError, KeyError) as e:
            raise ResumeError(self.run_dir, f"{path.name}: unreadable checkpoint ({e})") from None
        acc = MetricAccumulator(len(prepared.metrics), prepared.n_bins, len(prepared.counters))
        if (int(meta[0]) != CHECKPOINT_FORMAT or int(meta[1]) != point_key(self.scenario, point)
                or hist.shape != acc.hist.shape or moments.shape != acc.moments.shape
                or counters.shape != acc.counters.shape):
            raise ResumeError(self.run_dir, f"{path.name}: checkpoint does not match point {index} of the scenario")
        acc.hist[:] = hist
        acc.moments[:] = moments
        acc.counters[:] = counters
        acc.trials = int(meta[2])
        self.restored_seconds += seconds
        return PointState(acc, int(meta[3]), seconds, bool(meta[4]))

    def save_point(self, index: int, acc: MetricAccumulator, next_chunk: int, seconds: float, done: bool) -> None:
        point = self.scenario.points[index]
        meta = np.array([CHECKPOINT_FORMAT, point_key(self.scenario, point), acc.trials, next_chunk, int(done)],
                        dtype=np.int64)
        buf = io.BytesIO()
        np.savez(buf, meta=meta, hist=acc.hist, moments=acc.moments, counters=acc.counters,
                 seconds=np.float64(seconds))
        data = buf.getvalue()
        paths.write_atomic(self.dir, self._point_file(index).name, lambda fh: fh.write(data))
        self._last_save[index] = time.monotonic()

    def saver(self, index: int, t0: float, prior_seconds: float):
        """The runner's ``on_checkpoint`` hook for point ``index`` (started at ``t0``,
        ``perf_counter`` clock, after ``prior_seconds`` in earlier sessions)."""
        def save(acc: MetricAccumulator, next_chunk: int, urgent: bool) -> None:
            if urgent or time.monotonic() - self._last_save.get(index, 0.0) >= CHECKPOINT_SECONDS:
                self.save_point(index, acc, next_chunk, prior_seconds + time.perf_counter() - t0, False)
        self._last_save.setdefault(index, time.monotonic())
        return save


def _data_files(prepared: list[Prepared]) -> list[dict]:
    out: list[dict] = []
    for prep in prepared:
        for f in prep.data_files:
            if f not in out:
                out.append(dict(f))
    return out


def _incomplete_manifest(scenario: Scenario, prepared: list[Prepared]) -> dict:
    spec = scenario.spec
    run = ({"precision": spec.precision} if spec.precision is not None else {"trials": spec.trials})
    return {
        "status": INCOMPLETE, "checkpoint_format": CHECKPOINT_FORMAT,
        # absolute, so --resume works from any folder
        "scenario_file": os.path.abspath(scenario.path), "scenario_sha256": scenario.digest,
        "scenario_text": scenario.text, "seed": spec.seed, **run, "points": len(scenario.points),
        "data_files": _data_files(prepared), "version": __version__,
        "created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "resume": "analyzer run --resume <this folder>",
    }


def read_incomplete_manifest(run_dir: Path) -> dict:
    """The manifest of an incomplete run folder, or a :class:`ResumeError` saying why not."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise ResumeError(run_dir, "not a folder; give the run folder an interrupted run printed")
    try:
        manifest = json.loads((run_dir / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ResumeError(run_dir, f"no readable {MANIFEST} ({type(e).__name__}); not a run folder") from None
    if not isinstance(manifest, dict):
        raise ResumeError(run_dir, f"{MANIFEST} is not a run manifest")
    status = manifest.get("status", COMPLETE)
    if status != INCOMPLETE:
        raise ResumeError(run_dir, f"this run is {status} ({MANIFEST}); nothing to resume")
    keys = ("checkpoint_format", "scenario_file", "scenario_sha256", "seed", "points", "data_files")
    missing = [k for k in keys if k not in manifest]
    if missing or ("trials" not in manifest and "precision" not in manifest):
        raise ResumeError(run_dir, f"{MANIFEST} lacks {', '.join(missing) or 'trials/precision'}; not resumable")
    if manifest["checkpoint_format"] != CHECKPOINT_FORMAT:
        raise ResumeError(run_dir, f"checkpoint format {manifest['checkpoint_format']!r}; this version reads "
                          f"{CHECKPOINT_FORMAT}")
    return manifest


def load_scenario(run_dir: Path) -> Scenario:
    """Reload the scenario an incomplete run started from, with the same seed and trials."""
    from analyzer import scenario as scenario_mod
    manifest = read_incomplete_manifest(run_dir)
    # the trial limits were checked (and --force given if needed) when the run started
    return scenario_mod.load(manifest["scenario_file"], seed=manifest["seed"], trials=manifest.get("trials"),
                             precision=manifest.get("precision"), force=True)
