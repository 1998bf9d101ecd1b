"""Checkpointed run folders: a sweep persisted point by point (and batch by batch) as it runs.

A run folder is created under its final name when computing starts. Until the run completes
it holds only ``manifest.json`` with ``"status": "incomplete"`` (what ``--resume`` needs: the
scenario's path and SHA-256, the seed and trial settings, the data files read) and
``checkpoint/point-NNNNNN.npz``: per point, the accumulator's integer sums, the next chunk to
run, the seconds spent and whether the point is done. Every file is written through
:func:`analyzer.core.paths.write_atomic`, so a killed process never leaves a half-written one.

Results depend only on (seed, point key, trial count) and the sums do not depend on how
chunks are grouped, so continuing a point from its checkpoint gives the tables an
uninterrupted run gives. While a process runs or resumes a folder it holds an exclusive
``flock`` on ``checkpoint/``: a second ``--resume`` of the same folder is refused.

Nothing in a run folder is trusted as written (format 2): ``checkpoint/`` must be a real
folder (opened ``O_DIRECTORY | O_NOFOLLOW``; point files are read and written relative to it,
no link followed); each point file is a size-capped regular file whose zip members and
``.npy`` headers (dtype, shape, byte size) are checked before any data is read; it carries a
binding record (scenario and data-file hashes, seed, trials, chunk size, point index and key)
that must match the run being resumed; and its sums must be consistent (every histogram
totals the trial count, which is what the chunks run give; a done point ran its trials, or
met its precision target at a batch end; no negative count; sums that match the histogram
where they are derivable from it). The incomplete manifest's fields are checked by type and
range. Any mismatch is a one-line :class:`ResumeError` naming the file.
"""
from __future__ import annotations

import datetime as _dt
import errno
import fcntl
import hashlib
import io
import json
import math
import os
import re
import shutil
import stat
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from analyzer.core.version import __version__
from analyzer.outputs import writer as outputs
from analyzer.core import paths
from analyzer.core.errors import ScenarioError
from analyzer.core.formats import CHECKPOINT, MANIFEST_JSON, version_problem
from analyzer.core.questions import Prepared
from analyzer.run.runner import (BATCH_CHUNKS, CHECKPOINT_SECONDS, CHUNK_TRIALS, _check_precision_metric, _precision_met,
                             point_chunks, point_key)
from analyzer.core.scenario import Scenario
from analyzer.core.stats import MetricAccumulator

CHECKPOINT_DIR = "checkpoint"
#: the re-estimation's settings of a run that gives none (and of a folder started before it):
#: on, each best for its point's trials (:func:`analyzer.api.run`)
DEFAULT_REESTIMATE = {"enabled": True, "trials": None}
MANIFEST = MANIFEST_JSON.file
INCOMPLETE = "incomplete"
COMPLETE = "complete"
#: Format of the checkpoints (the incomplete manifest's ``checkpoint_format`` and each point
#: file's): :data:`analyzer.core.formats.CHECKPOINT`, refused when another version wrote them.
CHECKPOINT_FORMAT = CHECKPOINT.current
#: Largest ``manifest.json`` read (it holds the scenario's text: at most 16 MiB of YAML, escaped).
MAX_MANIFEST_BYTES = 128 * 1024 * 1024
#: Members of a point file and their dtypes (shapes come from the prepared point).
POINT_MEMBERS = {"meta": np.dtype("<i8"), "hist": np.dtype("<i8"), "moments": np.dtype("<i8"),
                 "counters": np.dtype("<i8"), "seconds": np.dtype("<f8"), "binding": np.dtype("u1"),
                 "moments_carry": np.dtype("<i8")}    # the high words of exact sums, where stats keeps them
#: ``meta`` of a point file: format, point key, trials, next chunk (-1 when done), done.
META_FIELDS = ("format", "point_key", "trials", "next_chunk", "done")
#: Largest binding record (JSON) and ``.npy`` header accepted in a point file.
MAX_BINDING_BYTES = 4096
MAX_NPY_HEADER = 4096


class ResumeError(ScenarioError):
    """A run folder that cannot be resumed (one-line message naming the folder)."""

    def __init__(self, run_dir: Path | str, message: str):
        super().__init__(str(run_dir), "", message)


class RunKept(ScenarioError):
    """A run stopped by an error after some (or all) of its points were saved: the run folder
    is kept, incomplete and resumable; the one-line message says why and how to go on."""

    def __init__(self, run_dir: Path | str, message: str):
        self.run_dir = Path(run_dir)
        super().__init__(str(run_dir), "", message)


class _Bad(Exception):
    """A point file that fails a check (the reason; :meth:`RunCheckpoint.load_point` names the file)."""


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

    def __init__(self, run_dir: Path, scenario: Scenario, *, resumed: bool,
                 prepared: list[Prepared] | None = None):
        self.run_dir = Path(run_dir)
        self.scenario = scenario
        self.resumed = resumed
        self.dir = self.run_dir / CHECKPOINT_DIR
        self._last_save: dict[int, float] = {}
        #: ``O_DIRECTORY | O_NOFOLLOW`` descriptor of ``checkpoint/``, locked (point files are
        #: read and written relative to it)
        self._lock_fd: int | None = None
        #: per point index: the digest of the data files it read (bound into its point file)
        self._data_digests: dict[int, str] = {}
        for prep, point in zip(prepared or [], scenario.points):
            self._data_digests[point.index] = _data_digest(prep)
        #: seconds earlier sessions spent on the points loaded so far
        self.restored_seconds = 0.0
        #: the re-estimation's settings (:func:`analyzer.api.run`): ``{"enabled", "trials"}``, kept
        #: in the incomplete manifest so that a resumed run uses the ones it started with
        self.reestimate = dict(DEFAULT_REESTIMATE)

    # -- creating, opening, finishing --------------------------------------------------------
    @classmethod
    def start(cls, scenario: Scenario, out_root: Path, prepared: list[Prepared],
              reestimate: dict | None = None) -> "RunCheckpoint":
        """Create the run folder under its final name with an incomplete manifest (``reestimate``:
        the re-estimation's settings, :data:`DEFAULT_REESTIMATE` when None)."""
        run_dir = outputs.new_visible_run_dir(Path(out_root), outputs.folder_name(scenario), scenario.digest)
        ckpt = cls(run_dir, scenario, resumed=False, prepared=prepared)
        if reestimate is not None:
            ckpt.reestimate = {"enabled": bool(reestimate["enabled"]), "trials": reestimate["trials"]}
        try:
            ckpt.dir.mkdir()
            ckpt._lock()
            outputs.write_document(run_dir, MANIFEST_JSON, _incomplete_manifest(scenario, prepared, ckpt.reestimate))
        except BaseException:
            ckpt.discard()
            raise
        return ckpt

    @classmethod
    def open(cls, run_dir: Path, scenario: Scenario, prepared: list[Prepared]) -> "RunCheckpoint":
        """Lock an incomplete run folder for resuming, after checking that the scenario it was
        started from (reloaded by :func:`read_incomplete_manifest`'s caller) and the data files
        it read are unchanged. ``run_dir`` may be reached through links (the user's choice): it is
        resolved once, here, so the outputs are built beside the real folder; nothing inside
        it is followed."""
        run_dir = Path(os.path.realpath(run_dir))
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
        spec = scenario.spec
        for key, now_value in (("seed", spec.seed), ("trials", spec.trials if spec.precision is None else None),
                               ("precision", spec.precision)):
            if manifest.get(key) != now_value:       # load_scenario reloads with the manifest's values
                raise ResumeError(run_dir, f"{MANIFEST}: {key} is {manifest.get(key)!r}, the scenario being "
                                  f"resumed has {now_value!r}; resume with 'analyzer run --resume' as printed")
        ckpt = cls(run_dir, scenario, resumed=True, prepared=prepared)
        ckpt.reestimate = dict(manifest.get("reestimate", DEFAULT_REESTIMATE))   # absent: started before it
        try:
            st = os.lstat(ckpt.dir)
        except FileNotFoundError:
            raise ResumeError(run_dir, f"no {CHECKPOINT_DIR}/ folder: not a resumable run folder") from None
        except OSError as e:
            raise ResumeError(run_dir, f"{CHECKPOINT_DIR}/: cannot be read ({e.strerror or e})") from None
        if stat.S_ISLNK(st.st_mode):
            raise ResumeError(run_dir, f"{CHECKPOINT_DIR}/ is a link; a run folder's checkpoints are never links "
                              f"and it is not followed: start a new run")
        if not stat.S_ISDIR(st.st_mode):
            raise ResumeError(run_dir, f"{CHECKPOINT_DIR} is not a folder: not a resumable run folder")
        ckpt._lock()
        return ckpt

    def _lock(self) -> None:
        try:
            fd = paths.open_dir_nofollow(self.dir)       # a link put there since the check: refused
        except paths.UnsafePathError:
            raise ResumeError(self.run_dir, f"{CHECKPOINT_DIR}/ is a link or not a folder; it is not followed: "
                              f"start a new run") from None
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
        return self.dir / _point_name(index)

    def _dir_fd(self) -> tuple[int, bool]:
        """(descriptor of ``checkpoint/``, whether the caller must close it): the locked one,
        or (a checkpoint made only to read a point, as the tests do) a fresh one."""
        if self._lock_fd is not None:
            return self._lock_fd, False
        try:
            return paths.open_dir_nofollow(self.dir), True
        except paths.UnsafePathError:
            raise ResumeError(self.run_dir, f"{CHECKPOINT_DIR}/ is a link or not a folder; it is not followed: "
                              f"start a new run") from None

    def binding(self, index: int, prepared: Prepared | None = None) -> dict:
        """What point ``index``'s file is bound to: the run (scenario and data hashes, seed,
        trials per point or a precision target's max_trials, chunk size) and the point."""
        spec = self.scenario.spec
        if prepared is not None:
            self._data_digests[index] = _data_digest(prepared)
        n_trials, _ = point_chunks(self.scenario)
        return {"format": CHECKPOINT_FORMAT, "scenario_sha256": self.scenario.digest,
                "data_sha256": self._data_digests[index], "seed": spec.seed, "trials": n_trials,
                "precision": spec.precision, "chunk_trials": CHUNK_TRIALS, "point": index,
                "point_key": point_key(self.scenario, self.scenario.points[index])}

    def load_point(self, index: int, prepared: Prepared) -> PointState | None:
        """The saved state of point ``index`` (None when it never saved one), after every check
        (see the module's docstring): a :class:`ResumeError` naming the file otherwise."""
        name = _point_name(index)
        acc = MetricAccumulator(len(prepared.metrics), prepared.n_bins, len(prepared.counters))
        shapes = {"meta": (len(META_FIELDS),), "seconds": (), "binding": None,
                  **{k: v.shape for k, v in _sums(acc).items()}}
        fd, close = self._dir_fd()
        try:
            try:
                data = paths.read_regular_at(fd, name, _max_point_bytes(shapes))
            except FileNotFoundError:
                return None
            except (OSError, paths.UnsafePathError) as e:
                raise ResumeError(self.run_dir, f"{CHECKPOINT_DIR}/{name}: "
                                  f"{_reason(e).removeprefix(name + ': ')}; not resumable") from None
        finally:
            if close:
                os.close(fd)
        try:
            # the binding first (its shape is the same at every point): a file of another point
            # or run is named as such, not as an array of the wrong shape
            arrays = _read_members(data, shapes, only=("meta", "binding"))
            self._check_binding(index, prepared, arrays)
            arrays = _read_members(data, shapes)
            state = self._check(index, prepared, acc, arrays)
        except _Bad as e:
            raise ResumeError(self.run_dir, f"{CHECKPOINT_DIR}/{name}: {e}") from None
        self.restored_seconds += state.seconds
        return state

    def _check_binding(self, index: int, prepared: Prepared, arrays: dict) -> None:
        """The point file's format and binding record are those of point ``index`` of this run."""
        meta = dict(zip(META_FIELDS, (int(v) for v in arrays["meta"])))
        problem = version_problem({CHECKPOINT.key: meta["format"]}, CHECKPOINT)
        if problem:
            raise _Bad(f"{CHECKPOINT.key}: {problem}: start a new run")
        try:
            bound = json.loads(arrays["binding"].tobytes().decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise _Bad("its binding record is not JSON; the file is damaged or was edited: start a new run") from None
        expected = self.binding(index, prepared)
        if not isinstance(bound, dict) or set(bound) != set(expected):
            raise _Bad("its binding record lacks or adds fields; the file is damaged or was edited: start a new run")
        for key, want in expected.items():
            got = bound[key]
            if got == want and type(got) is type(want):
                continue
            if key == "point":
                raise _Bad(f"is the checkpoint of point {got!r}, not of point {index} (swapped or copied files): "
                           f"start a new run")
            if key in ("seed", "trials", "precision"):
                raise _Bad(f"was run with {key} {got!r}, but {MANIFEST} now says {want!r} (edited?): restore "
                           f"{MANIFEST} or start a new run")
            raise _Bad(f"belongs to another run ({key} {_short(got)}, this run's is {_short(want)}): a checkpoint "
                       f"of another scenario or data cannot be resumed here; start a new run")
        if meta["point_key"] != expected["point_key"]:
            raise _Bad(f"point key {meta['point_key']} is not point {index}'s {expected['point_key']}: start a new run")

    def _check(self, index: int, prepared: Prepared, acc: MetricAccumulator, arrays: dict) -> PointState:
        """The point file's state checked against point ``index`` of this run (binding checked)."""
        meta = dict(zip(META_FIELDS, (int(v) for v in arrays["meta"])))
        if meta["done"] not in (0, 1):
            raise _Bad(f"done is {meta['done']}; expected 0 or 1")
        for key, arr in _sums(acc).items():
            arr[:] = arrays[key]
        acc.trials = meta["trials"]
        seconds = float(arrays["seconds"])
        if not math.isfinite(seconds) or seconds < 0:
            raise _Bad(f"seconds is {seconds}; expected a finite time >= 0")
        self._check_sums(prepared, acc, meta["next_chunk"], bool(meta["done"]))
        return PointState(acc, meta["next_chunk"], seconds, bool(meta["done"]))

    def _check_sums(self, prepared: Prepared, acc: MetricAccumulator, next_chunk: int, done: bool) -> None:
        """Counts non-negative; every histogram totals ``trials``, which is what the chunks
        before ``next_chunk`` hold (a done point: its trials, or a met precision target at a
        batch end); sums that match the histogram where it determines them."""
        spec = self.scenario.spec
        n_trials, n_chunks = point_chunks(self.scenario)
        trials = acc.trials
        exact = [[_moment(acc, m, k) for k in range(3)] for m in range(acc.hist.shape[0])]
        if ((acc.hist < 0).any() or (acc.counters < 0).any() or trials < 0
                or any(s1 < 0 or clipped < 0 for _, s1, clipped in exact)):
            raise _Bad("holds a negative count; the file is damaged or was edited: start a new run")
        names = [m.name for m in prepared.metrics]
        top = acc.hist.shape[1] - 1
        bins = np.arange(acc.hist.shape[1], dtype=object)
        for m, name in enumerate(names):
            total = int(acc.hist[m].sum(dtype=object))
            if total != trials:
                raise _Bad(f"says {trials:,} trials but the histogram of {name} holds {total:,}; the file is "
                           f"damaged or was edited: start a new run")
            s0, s1, clipped = exact[m]
            if clipped > int(acc.hist[m, top]):
                raise _Bad(f"{name}: {clipped:,} trials above the top bin, but the bin holds {int(acc.hist[m, top]):,}")
            if s0 * s0 > trials * s1:
                raise _Bad(f"{name}: the sums are impossible for {trials:,} trials (sum^2 > n x sum of squares)")
            # a value in range is its bin; a clipped one (> top) adds more than top and, squared,
            # at least 2 top + 1 more than top^2; a negative one (counted in bin 0) less than 0
            # and, squared, more than 0
            h = acc.hist[m].astype(object)
            h1, h2 = int((bins * h).sum()), int((bins * bins * h).sum())
            if clipped == 0:
                ok = (s0 == h1 and s1 == h2) or (s0 < h1 and s1 > h2)
            else:
                ok = s1 >= h2 + clipped * (2 * top + 1)
            if not ok:
                raise _Bad(f"{name}: the sums ({s0:,}, {s1:,}, {clipped:,} clipped) do not match the histogram; "
                           f"the file is damaged or was edited: start a new run")
        if not done:
            if not 0 <= next_chunk <= n_chunks:
                raise _Bad(f"next chunk {next_chunk}; expected 0..{n_chunks}")
            if trials != min(next_chunk * CHUNK_TRIALS, n_trials):
                raise _Bad(f"says {trials:,} trials, but {next_chunk} chunks run hold "
                           f"{min(next_chunk * CHUNK_TRIALS, n_trials):,}: start a new run")
            return
        if next_chunk != -1:
            raise _Bad(f"is done with next chunk {next_chunk}; expected -1")
        if trials == n_trials:
            return
        if spec.precision is None:
            raise _Bad(f"is marked done after {trials:,} of its {n_trials:,} trials; the file is damaged or was "
                       f"edited: start a new run")
        batch = BATCH_CHUNKS * CHUNK_TRIALS
        if trials == 0 or trials % batch or not _precision_met(spec, acc, _check_precision_metric(self.scenario, prepared),
                                                               prepared):
            raise _Bad(f"is marked done after {trials:,} trials, where its precision target is not met at a batch "
                       f"end: start a new run")

    def save_point(self, index: int, acc: MetricAccumulator, next_chunk: int, seconds: float, done: bool) -> None:
        point = self.scenario.points[index]
        meta = np.array([CHECKPOINT_FORMAT, point_key(self.scenario, point), acc.trials, next_chunk, int(done)],
                        dtype=np.int64)
        binding = np.frombuffer(json.dumps(self.binding(index), sort_keys=True).encode("utf-8"), dtype=np.uint8)
        buf = io.BytesIO()
        np.savez(buf, meta=meta, seconds=np.float64(seconds), binding=binding, **_sums(acc))
        data = buf.getvalue()
        fd, close = self._dir_fd()
        try:
            paths.write_atomic_at(fd, _point_name(index), data)
        finally:
            if close:
                os.close(fd)
        self._last_save[index] = time.monotonic()

    def saver(self, index: int, t0: float, prior_seconds: float):
        """The runner's ``on_checkpoint`` hook for point ``index`` (started at ``t0``,
        ``perf_counter`` clock, after ``prior_seconds`` in earlier sessions)."""
        def save(acc: MetricAccumulator, next_chunk: int, urgent: bool) -> None:
            if urgent or time.monotonic() - self._last_save.get(index, 0.0) >= CHECKPOINT_SECONDS:
                self.save_point(index, acc, next_chunk, prior_seconds + time.perf_counter() - t0, False)
        self._last_save.setdefault(index, time.monotonic())
        return save


def _sums(acc: MetricAccumulator) -> dict[str, np.ndarray]:
    """The accumulator's arrays a point file holds (``moments_carry`` where the accumulator
    keeps its sums in two words)."""
    out = {"hist": acc.hist, "moments": acc.moments, "counters": acc.counters}
    if getattr(acc, "moments_carry", None) is not None:
        out["moments_carry"] = acc.moments_carry
    return out


def _moment(acc: MetricAccumulator, m: int, k: int) -> int:
    """``moments[m, k]`` as an exact integer (both words where there are two)."""
    if hasattr(acc, "exact_moment"):
        return acc.exact_moment(m, k)
    return int(acc.moments[m, k])


def _point_name(index: int) -> str:
    return f"point-{index:06d}.npz"


def _data_digest(prepared: Prepared) -> str:
    """SHA-256 of the data files (paths, origins, hashes) a point read."""
    blob = json.dumps(sorted(json.dumps(f, sort_keys=True) for f in prepared.data_files)).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 24 else text[:20] + "..."


def _reason(e: BaseException) -> str:
    return e.strerror if isinstance(e, OSError) and e.strerror else str(e)


def _npy_bytes(dtype: np.dtype, shape: tuple | None) -> int:
    """Most bytes the ``.npy`` member holding ``shape`` (None: the binding record) may have."""
    data = MAX_BINDING_BYTES if shape is None else math.prod(shape) * dtype.itemsize
    return MAX_NPY_HEADER + data


def _max_point_bytes(shapes: dict) -> int:
    """Largest point file with these members (zip headers and directory included)."""
    return sum(_npy_bytes(POINT_MEMBERS[k], shp) + 2 * (30 + 46 + len(k) + 4 + 64) for k, shp in shapes.items()) + 1024


def _read_members(data: bytes, shapes: dict, only: tuple[str, ...] | None = None) -> dict:
    """The arrays of a point file, each checked before it is read: exactly the expected
    members, none encrypted nor inflating beyond its expected size, a ``.npy`` header of the
    expected dtype and shape (C order); ``binding`` a 1-D byte array of at most
    :data:`MAX_BINDING_BYTES`. ``only``: read just these members (all are listed and
    checked for presence). Raises :class:`_Bad`."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError):
        raise _Bad("not a readable point file (damaged zip); not resumable") from None
    want = {f"{k}.npy": k for k in shapes}
    names = [i.filename for i in infos]
    if sorted(names) != sorted(want):
        raise _Bad(f"holds members {', '.join(sorted(map(repr, names)))[:200]}; expected exactly "
                   f"{', '.join(sorted(want))}: not a point file of this version")
    out = {}
    for info in infos:
        key = want[info.filename]
        if only is not None and key not in only:
            continue
        dtype, shape = POINT_MEMBERS[key], shapes[key]
        if info.flag_bits & 0x1 or info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise _Bad(f"member {info.filename} is encrypted or compressed with an unsupported method")
        if info.file_size > _npy_bytes(dtype, shape):
            raise _Bad(f"member {info.filename} inflates to {info.file_size:,} bytes; at most "
                       f"{_npy_bytes(dtype, shape):,} expected (not read)")
        try:
            with zf.open(info) as fh:
                version = np.lib.format.read_magic(fh)
                if version == (1, 0):
                    got_shape, fortran, got_dtype = np.lib.format.read_array_header_1_0(fh, MAX_NPY_HEADER)
                elif version == (2, 0):
                    got_shape, fortran, got_dtype = np.lib.format.read_array_header_2_0(fh, MAX_NPY_HEADER)
                else:
                    raise _Bad(f"member {info.filename}: .npy format {version}; expected 1.0 or 2.0")
                if shape is None:
                    ok = len(got_shape) == 1 and got_shape[0] <= MAX_BINDING_BYTES
                else:
                    ok = tuple(got_shape) == tuple(shape)
                if got_dtype != dtype or fortran or not ok:
                    raise _Bad(f"member {info.filename} is {got_dtype} {tuple(got_shape)}; expected {dtype} "
                               f"{'(<= ' + str(MAX_BINDING_BYTES) + ',)' if shape is None else tuple(shape)} "
                               f"for this point")
                nbytes = math.prod(got_shape) * got_dtype.itemsize
                raw = fh.read(nbytes + 1)            # one more: reach the end, where the CRC is checked
        except _Bad:
            raise
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, KeyError) as e:
            raise _Bad(f"member {info.filename} is damaged ({type(e).__name__}); not resumable") from None
        if len(raw) != nbytes:
            raise _Bad(f"member {info.filename} holds {len(raw):,} data bytes; its header says {nbytes:,}")
        out[key] = np.frombuffer(raw, dtype=got_dtype).reshape(got_shape).copy()
    return out


def _data_files(prepared: list[Prepared]) -> list[dict]:
    out: list[dict] = []
    for prep in prepared:
        for f in prep.data_files:
            if f not in out:
                out.append(dict(f))
    return out


def _incomplete_manifest(scenario: Scenario, prepared: list[Prepared], reestimate: dict) -> dict:
    spec = scenario.spec
    run = ({"precision": spec.precision} if spec.precision is not None else {"trials": spec.trials})
    return {
        "status": INCOMPLETE, "checkpoint_format": CHECKPOINT_FORMAT,
        # absolute, so --resume works from any folder
        "scenario_file": os.path.abspath(scenario.path), "scenario_sha256": scenario.digest,
        "scenario_text": scenario.text, "seed": spec.seed, **run, "points": len(scenario.points),
        "data_files": _data_files(prepared), "reestimate": dict(reestimate), "version": __version__,
        "created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "resume": "analyzer run --resume <this folder>",
    }


def read_incomplete_manifest(run_dir: Path) -> dict:
    """The manifest of an incomplete run folder, or a :class:`ResumeError` saying why not.

    ``run_dir`` may be reached through links (the caller's choice); ``manifest.json`` in it
    must be a regular file (a link is not followed), and every field ``--resume`` uses is
    checked by type and range (a one-line refusal naming the field)."""
    run_dir = Path(run_dir)
    try:
        dir_fd = os.open(run_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        raise ResumeError(run_dir, "not a folder; give the run folder an interrupted run printed") from None
    try:
        data = paths.read_regular_at(dir_fd, MANIFEST, MAX_MANIFEST_BYTES)
        manifest = json.loads(data.decode("utf-8"))
    except FileNotFoundError:
        raise ResumeError(run_dir, f"no {MANIFEST}; not a run folder") from None
    except paths.UnsafePathError as e:
        raise ResumeError(run_dir, f"{e}; not resumable") from None
    except (OSError, ValueError) as e:
        raise ResumeError(run_dir, f"no readable {MANIFEST} ({type(e).__name__}); not a run folder") from None
    finally:
        os.close(dir_fd)
    if not isinstance(manifest, dict):
        raise ResumeError(run_dir, f"{MANIFEST} is not a run manifest")
    status = manifest.get("status", COMPLETE)
    if status != INCOMPLETE:
        shown = status if isinstance(status, str) and len(status) <= 40 else _short(status)
        raise ResumeError(run_dir, f"this run is {shown} ({MANIFEST}); nothing to resume")
    for fmt in (MANIFEST_JSON, CHECKPOINT):       # absent format_version: written before versions (format 2)
        problem = version_problem(manifest, fmt)
        if problem:
            value = manifest.get(fmt.key)
            earlier = " (1: an earlier version's, its checkpoints are not bound to their run)" \
                if fmt is CHECKPOINT and type(value) is int and value == 1 else ""
            raise ResumeError(run_dir, f"{MANIFEST}: {fmt.key}: {problem}{earlier}; not resumable by this analyzer")
    keys = ("scenario_file", "scenario_sha256", "seed", "points", "data_files")
    missing = [k for k in keys if k not in manifest]
    if missing or ("trials" not in manifest and "precision" not in manifest):
        raise ResumeError(run_dir, f"{MANIFEST} lacks {', '.join(missing) or 'trials/precision'}; not resumable")
    _check_manifest_fields(run_dir, manifest)
    return manifest


_SHA256 = re.compile(r"[0-9a-f]{64}")


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _check_manifest_fields(run_dir: Path, manifest: dict) -> None:
    """Every field ``--resume`` reads has the type and range this version writes."""
    def bad(field: str, allowed: str):
        raise ResumeError(run_dir, f"{MANIFEST}: {field}: got {_short(manifest.get(field))}; expected {allowed} "
                          f"(the file is damaged or was edited): not resumable")
    f = manifest["scenario_file"]
    if not isinstance(f, str) or not f or "\0" in f or not os.path.isabs(f):
        bad("scenario_file", "the absolute path of the scenario file")
    if not isinstance(manifest["scenario_sha256"], str) or not _SHA256.fullmatch(manifest["scenario_sha256"]):
        bad("scenario_sha256", "64 lowercase hex digits")
    if not _is_int(manifest["seed"]) or not 0 <= manifest["seed"] < 2**63:
        bad("seed", "an integer 0 <= seed < 2^63")
    if not _is_int(manifest["points"]) or manifest["points"] < 1:
        bad("points", "an integer >= 1")
    files = manifest["data_files"]
    if not isinstance(files, list) or not all(
            isinstance(e, dict) and set(e) == {"path", "origin", "sha256"} and isinstance(e["path"], str)
            and e["origin"] in ("scenario", "shipped") and isinstance(e["sha256"], str)
            and _SHA256.fullmatch(e["sha256"]) for e in files):
        bad("data_files", "a list of {path, origin: scenario|shipped, sha256}")
    if ("trials" in manifest) == ("precision" in manifest):
        raise ResumeError(run_dir, f"{MANIFEST}: holds both trials and precision (or neither); expected one: "
                          f"not resumable")
    if "trials" in manifest and (not _is_int(manifest["trials"]) or manifest["trials"] < 1):
        bad("trials", "an integer >= 1")
    if "precision" in manifest:
        p = manifest["precision"]
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not math.isfinite(p) or p <= 0:
            bad("precision", "a number > 0")
    if "reestimate" in manifest:                     # absent in folders started before the re-estimation
        r = manifest["reestimate"]
        if not (isinstance(r, dict) and set(r) == {"enabled", "trials"} and isinstance(r["enabled"], bool)
                and (r["trials"] is None or _is_int(r["trials"]) and r["trials"] >= 2)):
            bad("reestimate", "{enabled: true|false, trials: null or an integer >= 2}")


def load_scenario(run_dir: Path) -> Scenario:
    """Reload the scenario an incomplete run started from, with the same seed and trials."""
    from analyzer.core import scenario as scenario_mod
    manifest = read_incomplete_manifest(run_dir)
    # the trial limits were checked (and --force given if needed) when the run started
    return scenario_mod.load(manifest["scenario_file"], seed=manifest["seed"], trials=manifest.get("trials"),
                             precision=manifest.get("precision"), force=True)
