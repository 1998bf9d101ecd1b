"""Run outputs: tidy tables, summary JSON, manifest, written atomically.

A run folder ``results/<scenario>/<run-id>/`` (``<scenario>``: the folder name the caller
gives, :func:`folder_name` for the scenario file's stem; ``results/<scenario>/latest`` names the
newest complete one, :func:`mark_latest`) holds ``points.parquet`` (one row per sweep
point), ``distributions.parquet`` (long format: point, metric, value, probability),
``summary.json`` (what ``--json`` prints), ``manifest.json`` (provenance) and plots. An
exact run's folder is built under a temporary name and renamed into place at the end, so a
failed run leaves no partial output. A Monte-Carlo run's folder exists under its final name
from the start, holding only an incomplete manifest and checkpoints (:mod:`analyzer.outputs.checkpoint`)
until its outputs, built under a temporary name, are moved in (:func:`fill_run_dir`), the
complete manifest last.
"""
from __future__ import annotations

import datetime as _dt
import errno
import fcntl
import json
import math
import os
import platform
import shutil
import stat
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analyzer.core.version import __version__
from analyzer.core import paths
from analyzer.core.formats import FileFormat, stamped
from analyzer.core.results import PointResult
from analyzer.outputs.notes import labelled_notes
from kernels.driver import CHUNK_TRIALS

SUMMARY_STATS = ("mean", "se", "ci_low", "ci_high")


def _json_value(v: Any) -> Any:
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    if isinstance(v, np.ndarray):
        return [_json_value(x) for x in v.tolist()]
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, (list, tuple)):
        return [_json_value(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _json_value(x) for k, x in v.items()}
    return v


def _column_value(v: Any) -> Any:
    """Swept values become parquet columns: scalars as they are, anything else as JSON."""
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    return json.dumps(v, sort_keys=True)


def unique_placeholders(results: list[PointResult], examples: bool = False) -> list[dict]:
    """Every placeholder (or, with ``examples``, every example-derived value) any point used."""
    seen, out = set(), []
    for r in results:
        for ph in r.placeholders:
            if ph.is_example != examples:
                continue
            key = (ph.path, ph.source, json.dumps(_json_value(ph.value), sort_keys=True, default=str))
            if key not in seen:
                seen.add(key)
                out.append(_json_value(ph.as_dict()))
    return out


def points_table(results: list[PointResult]) -> pd.DataFrame:
    rows = []
    for r in results:
        row: dict[str, Any] = {"point": r.point.index}
        for k, v in r.point.swept.items():
            row[k] = _column_value(v)
        row["trials"] = r.trials
        for name, s in r.summaries.items():
            for stat in SUMMARY_STATS:
                row[f"{name}_{stat}"] = getattr(s, stat)
        rows.append(row)
    return pd.DataFrame(rows)


def distributions_table(results: list[PointResult]) -> pd.DataFrame:
    parts = []
    for r in results:
        for name, (values, probs) in r.distributions.items():
            parts.append(pd.DataFrame({"point": r.point.index, "metric": name,
                                       "value": np.asarray(values, dtype=np.float64),
                                       "probability": np.asarray(probs, dtype=np.float64)}))
    if not parts:
        return pd.DataFrame({"point": pd.Series(dtype="int64"), "metric": pd.Series(dtype="str"),
                             "value": pd.Series(dtype="float64"), "probability": pd.Series(dtype="float64")})
    return pd.concat(parts, ignore_index=True)


def summary_dict(scenario, results: list[PointResult], mode: str = "monte_carlo", *,
                 execution: dict | None = None) -> dict:
    points = []
    for r in results:
        points.append({
            "params": _json_value({**r.point.params.model_dump(mode="json"),
                                   **({"rules": r.point.rules} if r.point.rules else {})}),
            "swept": _json_value(r.point.swept),
            "trials": r.trials,
            "metrics": {name: _json_value(s.as_dict()) for name, s in r.summaries.items()},
            "distributions": {name: {"values": _json_value(v), "probs": _json_value(p)}
                              for name, (v, p) in r.distributions.items()},
            "notes": r.notes,
            "counters": r.counters,
        })
    return {"scenario": scenario.name, "game": scenario.spec.game, "question": scenario.spec.question,
            "primary_metric": scenario.question.primary_metric,
            "mode": mode, "seed": scenario.spec.seed, "version": __version__,
            "execution": execution or {"backend": "local", "workers": 1},
            "points": points, "notes": labelled_notes(points), "placeholders": unique_placeholders(results),
            "example_values": unique_placeholders(results, examples=True)}


def git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                             cwd=Path(__file__).parent, timeout=5)
        return out.stdout.strip() or None if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def manifest_dict(scenario, results: list[PointResult], *, threads: int, wall_seconds: float,
                  mode: str, execution: dict | None = None, reestimate: dict | None = None) -> dict:
    """Provenance of a run. ``trials``: the points' trials; a Monte-Carlo run's rankings' best options
    played again on fresh streams (:mod:`analyzer.run.reestimate`) are counted apart:
    ``reestimate_trials`` (``wall_seconds`` covers both), beside the settings ``reestimate``
    (``{"enabled", "trials"}``) when given."""
    import numba
    from analyzer.run.reestimate import FRESH_STREAM, reestimates

    trials = sum(r.trials for r in results)
    fresh = {} if mode != "monte_carlo" else {
        **({"reestimate": {**reestimate, "stream": FRESH_STREAM}} if reestimate is not None else {}),
        "reestimate_trials": sum(d["trials"] for d in reestimates(results)),
        "reestimated_rankings": len(reestimates(results))}
    return {
        "status": "complete",
        "scenario_file": str(scenario.path), "scenario_sha256": scenario.digest,
        "scenario_text": scenario.text, "seed": scenario.spec.seed, "mode": mode,
        "version": __version__, "git_commit": git_commit(), "threads": threads,
        "execution": execution or {"backend": "local", "workers": 1},
        "chunk_trials": CHUNK_TRIALS, "wall_seconds": wall_seconds, "trials": trials, **fresh,
        "trials_per_second": trials / wall_seconds if wall_seconds > 0 and trials else None,
        "python": platform.python_version(), "numpy": np.__version__, "numba": numba.__version__,
        "created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "data_files": unique_data_files(results),
        "points": [{"point": r.point.index, "swept": _json_value(r.point.swept), "rules": r.point.rules,
                    "placeholders": [{"path": ph.path, "value": _json_value(ph.value), "source": ph.source}
                                     for ph in r.placeholders if not ph.is_example],
                    "example_values": [{"path": ph.path, "value": _json_value(ph.value), "source": ph.source,
                                        "establishes": ph.establishes} for ph in r.placeholders if ph.is_example],
                    "data_files": [f["path"] + " (" + f["origin"] + ")" for f in r.data_files]}
                   for r in results],
    }


def unique_data_files(results: list[PointResult]) -> list[dict]:
    """Every data file any point read: path (relative to the scenario's folder when
    ``origin`` is ``scenario``, to the game's shipped data when ``shipped``) and SHA-256."""
    out: list[dict] = []
    for r in results:
        for f in r.data_files:
            if f not in out:
                out.append(f)
    return out


def write_parquet(df: pd.DataFrame, path: Path) -> Path:
    return paths.write_atomic(path.parent, path.name, lambda fh: df.to_parquet(fh, index=False, engine="pyarrow"))


def write_json(obj: Any, path: Path) -> Path:
    text = (json.dumps(obj, indent=2, sort_keys=False) + "\n").encode("utf-8")
    return paths.write_atomic(path.parent, path.name, lambda fh: fh.write(text))


def write_document(folder: Path, fmt: FileFormat, doc: dict) -> Path:
    """``folder/<fmt.file>``: ``doc`` with its format version first (:mod:`analyzer.core.formats`)."""
    return write_json(stamped(fmt, doc), Path(folder) / fmt.file)


def new_run_dir(out_root: Path, scenario_name: str, digest: str) -> tuple[Path, Path]:
    """(temporary folder to fill, final folder to rename it to).

    ``scenario_name`` (the scenario folder, :func:`folder_name`) is someone else's text: it
    becomes one safe folder name (:func:`analyzer.core.paths.slug`) that must lie under ``out_root``."""
    stamp = _stamp()
    base = paths.make_dir(Path(out_root), scenario_name)
    final = paths.inside(base, f"{stamp}-{digest[:8]}")
    n = 1
    while final.exists():
        n += 1
        final = paths.inside(base, f"{stamp}-{digest[:8]}-{n}")
    return new_partial_dir(base), final


#: The lock file of a temporary ``.partial-*`` folder: its owner holds an exclusive ``flock`` on
#: it from the folder's creation until :func:`release_partial` (just before the folder is
#: renamed, moved into a run folder or removed); the kernel drops the lock when the owner dies,
#: however it dies. This is what :func:`_remove_orphans` trusts, not the pid in the name.
PARTIAL_LOCK = ".owner.lock"
#: A ``.partial-*`` folder without a lock file (made before locks existed, or being released by
#: its owner this instant) is removed only when untouched for this long (7 days).
UNLOCKED_PARTIAL_SECONDS = 7 * 24 * 3600
#: open lock descriptors of this process's temporary folders (path -> fd)
_partial_locks: dict[str, int] = {}


def new_partial_dir(base: Path) -> Path:
    """A temporary ``.partial-<pid>-*`` folder in ``base`` to build outputs in, locked for
    this process (:data:`PARTIAL_LOCK`), after removing those whose owner is gone."""
    _remove_orphans(base)
    tmp = Path(tempfile.mkdtemp(prefix=f".partial-{os.getpid()}-", dir=base))
    try:
        _lock_partial(tmp)
        os.chmod(tmp, 0o777 & ~paths.current_umask())   # mkdtemp makes 0700; a run folder follows the umask
    except BaseException:
        release_partial(tmp)
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return tmp


def _lock_partial(tmp: Path) -> None:
    """Create ``tmp/PARTIAL_LOCK`` already locked: the file is made and locked under a
    temporary name, then renamed into place, so no cleaner ever sees it unlocked."""
    dir_fd = paths.open_dir_nofollow(tmp)
    try:
        name = f".owner-{os.urandom(6).hex()}.tmp"
        fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666, dir_fd=dir_fd)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)     # a new file: nobody else holds it
            os.rename(name, PARTIAL_LOCK, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            os.close(fd)
            os.unlink(name, dir_fd=dir_fd)
            raise
    finally:
        os.close(dir_fd)
    _partial_locks[os.fspath(tmp)] = fd


def release_partial(tmp: Path) -> None:
    """Remove the lock file of this process's temporary folder ``tmp`` and drop the lock
    (before ``tmp`` is renamed, emptied into a run folder or removed). Harmless when ``tmp``
    holds none."""
    fd = _partial_locks.pop(os.fspath(tmp), None)
    if fd is None:
        return
    try:
        os.unlink(Path(tmp) / PARTIAL_LOCK)      # first: a cleaner that gets the lock next sees it unlinked
    except OSError:
        pass
    os.close(fd)


def _stamp() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S")


def new_visible_run_dir(out_root: Path, scenario_name: str, digest: str) -> Path:
    """Create an empty run folder under its final name (a checkpointed run fills it as it
    goes). ``mkdir`` is exclusive: two runs starting in the same second get ``-2``, ``-3``..."""
    base = paths.make_dir(Path(out_root), scenario_name)
    _remove_orphans(base)
    name, n = f"{_stamp()}-{digest[:8]}", 1
    while True:
        final = paths.inside(base, name if n == 1 else f"{name}-{n}")
        try:
            final.mkdir()                  # mode 0777 & ~umask, like any folder
            return final
        except FileExistsError:
            n += 1
            if n > 1000:
                raise


def fill_run_dir(tmp: Path, run_dir: Path, last: str = "manifest.json") -> Path:
    """Move every file of the filled temporary folder ``tmp`` into ``run_dir`` (each rename
    atomic, ``last`` after all others, replacing the incomplete manifest), then remove ``tmp``;
    the run is complete: ``latest`` names it (:func:`mark_latest`)."""
    paths.check_under(tmp.parent, run_dir)
    release_partial(tmp)
    names = sorted(p.name for p in tmp.iterdir() if p.name != last) + [last]
    for name in names:
        os.replace(tmp / name, run_dir / name)
    tmp.rmdir()
    mark_latest(run_dir)
    return run_dir


#: the entry of a scenario's folder that names its newest complete run folder
LATEST = "latest"


def folder_name(scenario) -> str:
    """The folder a scenario's runs go in, below the output root: the scenario file's stem
    (``attack_ad10.yaml`` -> ``attack_ad10``; made one safe name by :func:`analyzer.core.paths.slug`
    where it is used), so two files with one ``name:`` never share a folder and the file a player
    ran is the folder to look in."""
    return Path(scenario.path).stem


def mark_latest(run_dir: Path) -> Path | None:
    """Point ``<scenario folder>/latest`` at the complete run folder ``run_dir`` (called once a
    run folder is complete, never before: ``latest`` never names a partial run; the most
    recently completed run wins). A relative link to the sibling folder, made under a temporary
    name and renamed over ``latest`` (atomic: a reader sees the old or the new target, and a link
    or file already there is replaced, never written through); where links cannot be made
    (some Windows and network file systems), a plain file ``latest`` holding the folder's name,
    written atomically. A folder named ``latest`` is left alone. Returns the entry, or None when
    none could be written (the run itself is complete either way). The link holds one sibling's
    name, never a path: following it cannot lead out of the scenario folder."""
    real = Path(os.path.realpath(run_dir))           # a run resumed through a link: the folder it names
    base, target = real.parent, real.name
    if target == LATEST or target.startswith("."):
        return None
    if paths.entry_kind(base, LATEST) == "dir":
        return None
    tmp = f".latest-{os.urandom(6).hex()}.tmp"
    try:
        os.symlink(target, base / tmp, target_is_directory=True)
    except (OSError, NotImplementedError):
        try:
            return paths.write_atomic(base, LATEST, lambda fh: fh.write(f"{target}\n".encode("utf-8")))
        except OSError:
            return None
    try:
        os.replace(base / tmp, base / LATEST)
    except OSError:
        try:
            os.unlink(base / tmp)
        except OSError:
            pass
        return None
    return base / LATEST


def read_latest(base: Path) -> str | None:
    """The run folder name ``base/latest`` names (a link to a sibling, or a file holding the
    name: :func:`mark_latest`), or None: nothing there, or something that does not name one
    sibling folder (never followed elsewhere)."""
    kind = paths.entry_kind(base, LATEST)
    try:
        if kind == "link":
            name = os.readlink(Path(base) / LATEST)
        elif kind == "file":
            name = paths.read_regular(base, LATEST, 4096).decode("utf-8").strip()
        else:
            return None
    except (OSError, UnicodeDecodeError, paths.UnsafePathError):
        return None
    if not name or "/" in name or name in (".", "..", LATEST) or name.startswith("."):
        return None
    return name if paths.entry_kind(base, name) == "dir" else None


def _remove_orphans(base: Path) -> None:
    """Remove ``.partial-*`` folders whose owner is provably gone (killed with SIGKILL while
    writing: they can never be completed): those whose :data:`PARTIAL_LOCK` this process can
    lock itself (non-blocking; removed while holding it). The pid in the name says nothing: a
    run in another container sharing the results folder has a pid that does not exist here.
    A folder without a lock file is left alone unless untouched for
    :data:`UNLOCKED_PARTIAL_SECONDS`; links and files named ``.partial-*`` are never touched."""
    now = time.time()
    for p in base.glob(".partial-*"):
        try:
            st = os.lstat(p)
            if not stat.S_ISDIR(st.st_mode):
                continue
            dir_fd = paths.open_dir_nofollow(p)
        except (OSError, paths.UnsafePathError):
            continue
        try:
            try:
                lock_fd = os.open(PARTIAL_LOCK, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                                  dir_fd=dir_fd)
            except FileNotFoundError:
                if now - st.st_mtime > UNLOCKED_PARTIAL_SECONDS:
                    shutil.rmtree(p, ignore_errors=True)
                continue
            except OSError:
                continue
            try:
                if not stat.S_ISREG(os.fstat(lock_fd).st_mode):
                    continue
                try:
                    fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    continue          # its owner holds it: alive, in whatever PID namespace
                # free, and still the folder's lock file: an owner that released its folder (to
                # rename it into place) unlinked the file before dropping the lock
                held = os.fstat(lock_fd)
                try:
                    linked = os.stat(PARTIAL_LOCK, dir_fd=dir_fd, follow_symlinks=False)
                except OSError:
                    continue
                if held.st_nlink == 0 or (linked.st_ino, linked.st_dev) != (held.st_ino, held.st_dev):
                    continue
                shutil.rmtree(p, ignore_errors=True)
            finally:
                os.close(lock_fd)
        finally:
            os.close(dir_fd)


def commit_run_dir(tmp: Path, final: Path) -> Path:
    """Rename the filled temporary folder to ``final``; if another process took that name in
    the meantime (two runs of one scenario finishing in the same second), the next free
    ``final-N``: both runs are kept."""
    paths.check_under(tmp.parent, final.parent)
    release_partial(tmp)
    candidate, n = final, 1
    while True:
        try:
            os.rename(tmp, candidate)     # fails on an existing non-empty folder: never replaces a run
            mark_latest(candidate)
            return candidate
        except OSError as e:
            if e.errno not in (errno.EEXIST, errno.ENOTEMPTY) or n > 1000:
                raise
            n += 1
            candidate = paths.inside(final.parent, f"{final.name}-{n}")


class RunFolderBuild:
    """The one way a command writes a finished run folder: ``with RunFolderBuild(out_root, name,
    digest) as build:`` fill ``build.tmp`` (a temporary folder under ``out_root``); on a clean exit
    it is renamed into place and ``build.path`` names it (:func:`commit_run_dir`), on any error
    or interrupt it is removed (:func:`discard_run_dir`): no partial output is ever left."""

    def __init__(self, out_root: Path, name: str, digest: str):
        self.tmp, self._final = new_run_dir(Path(out_root), name, digest)
        self.path: Path | None = None

    def __enter__(self) -> "RunFolderBuild":
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is None:
            try:
                self.path = commit_run_dir(self.tmp, self._final)
                return False
            except BaseException:
                discard_run_dir(self.tmp)
                raise
        discard_run_dir(self.tmp)
        return False


def discard_run_dir(tmp: Path) -> None:
    release_partial(tmp)
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        tmp.parent.rmdir()  # only if empty: a scenario folder that got no run
    except OSError:
        pass
