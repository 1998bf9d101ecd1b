"""Issue 25, resume that cannot be fooled and failures that keep the work.

Checkpoints are bound to their run (scenario and data hashes, seed, trials, point index and
key) and checked when loaded; ``checkpoint/`` and the files in a run folder are never
followed through links; the incomplete manifest is checked field by field; an error after
the trials ran keeps the run folder resumable; orphaned ``.partial-*`` folders are removed
only when their owner's lock is free; a stop request while the outputs are written is
reported, not swallowed. Every test names what used to happen.
"""
from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st
from typer.testing import CliRunner

import analyzer.core.scenario as scenario_mod
from analyzer import api
from analyzer.outputs import checkpoint
from analyzer.core import interrupt
from analyzer.outputs import writer as outputs
from analyzer.cli.app import app
from analyzer.core.errors import ScenarioError
from analyzer.run.runner import prepare_point

ROOT = Path(__file__).resolve().parent.parent
QUICK = ROOT / "scenarios" / "dice" / "any_of_n.yaml"
#: 74 chunks a point: the first batch end (64 chunks) saves a checkpoint of a half-run point
TRIALS = 300_000
TABLES = ("points.parquet", "distributions.parquet")
cli = CliRunner()


# ----------------------------------------------------------------------------- helpers
def _interrupted(scenario, out: Path) -> Path:
    """Run ``scenario`` into ``out`` with a stop request at the first check between kernel
    calls after point 0 is saved done (the mechanism tests/test_resilience.py uses): point 0
    done, point 1 stopped at its first batch end (64 of 74 chunks), points 2-3 never started."""
    def check():
        for path in out.glob("*/*/checkpoint/point-000000.npz"):
            with np.load(path, allow_pickle=False) as z:
                if z["meta"][4]:
                    raise interrupt.RunInterrupted(2)
    with mock.patch.object(interrupt, "check", check), pytest.raises(interrupt.RunInterrupted) as info:
        api.run_to_folder(scenario, out, threads=1, formats=())
    return info.value.run_dir


def _resume(run: Path) -> Path:
    run_dir, _ = api.run_to_folder(checkpoint.load_scenario(run), None, threads=1, formats=(), resume=run)
    return run_dir


def _same_tables(a: Path, b: Path) -> None:
    for name in TABLES:
        pd.testing.assert_frame_equal(pd.read_parquet(a / name), pd.read_parquet(b / name), check_exact=True)


def _copy(run: Path, dest: Path) -> Path:
    """A copy of run folder ``run`` at ``dest/run`` (the scenario file stays where it is)."""
    dest.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copytree(run, dest / "run", symlinks=True))


def _arrays(path: Path) -> dict:
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k].copy() for k in z.files}


def _rewrite(path: Path, **arrays) -> None:
    """Rewrite a point file as a valid .npz with some members replaced (CRCs stay right)."""
    data = {**_arrays(path), **arrays}
    with open(path, "wb") as fh:
        np.savez(fh, **data)


def _refused(exc: BaseException, *words) -> None:
    text = str(exc)
    assert isinstance(exc, ScenarioError) and "\n" not in text, repr(exc)
    for w in words:
        assert w in text, (w, text)


def _one_line_error(res, *words) -> None:
    assert res.exit_code == 2, (res.exit_code, res.stderr, res.exception)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and "Traceback" not in res.stderr, res.stderr
    for w in words:
        assert w in res.stderr, (w, res.stderr)


def _snapshot(root: Path, skip: Path) -> dict:
    """Every entry under ``root`` except ``skip`` (and below): kind and content hash."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        d = Path(dirpath)
        if d == skip or skip in d.parents:
            dirnames[:] = []
            continue
        for name in dirnames + filenames:
            p = d / name
            if p == skip:
                continue
            if p.is_symlink():
                out[str(p)] = ("link", os.readlink(p))
            elif p.is_file():
                out[str(p)] = ("file", hashlib.sha256(p.read_bytes()).hexdigest())
            else:
                out[str(p)] = ("dir",)
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Interrupted run folders of two scenarios with the same game, question and sweep (so
    the same point keys) but another target, and the tables of an uninterrupted run."""
    base = tmp_path_factory.mktemp("resume_integrity")
    doc = yaml.safe_load(QUICK.read_text())
    doc["trials"] = TRIALS
    (base / "scen").mkdir()
    scen, other = base / "scen" / "s.yaml", base / "scen" / "other.yaml"
    scen.write_text(yaml.safe_dump(doc))
    other.write_text(yaml.safe_dump({**doc, "params": {**doc["params"], "target": 4}}))
    run = _interrupted(scenario_mod.load(scen), base / "out")
    other_run = _interrupted(scenario_mod.load(other), base / "other_out")
    ref, _ = api.write_run(scenario_mod.load(scen), api.run(scenario_mod.load(scen)), base / "ref",
                           mode="monte_carlo", threads=1, wall_seconds=1.0, formats=())
    return {"base": base, "scen": scen, "run": run, "other_run": other_run, "ref": ref}


def test_the_fixture_is_a_half_run_folder_that_resumes_to_the_uninterrupted_tables(runs, tmp_path):
    """Sanity for everything below: point 0 done, point 1 half run, 2-3 not started."""
    names = sorted(p.name for p in (runs["run"] / "checkpoint").iterdir())
    assert names == ["point-000000.npz", "point-000001.npz"]
    sc = checkpoint.load_scenario(runs["run"])
    ck = checkpoint.RunCheckpoint(runs["run"], sc, resumed=True)
    p0, p1 = (ck.load_point(i, prepare_point(sc, sc.points[i])) for i in (0, 1))
    assert p0.done and p0.acc.trials == TRIALS and not p1.done and p1.next_chunk == 64
    _same_tables(_resume(_copy(runs["run"], tmp_path)), runs["ref"])


# ------------------------------------------------------------------- links are not followed
def test_a_checkpoint_folder_that_is_a_link_is_refused_and_nothing_outside_is_touched(runs, tmp_path):
    """Used to: ``--resume`` read the point files through the link, wrote new ones there and
    left them (the link's target could be any folder the user can write)."""
    run = _copy(runs["run"], tmp_path)
    outside = tmp_path / "outside"
    shutil.move(run / "checkpoint", outside)
    (run / "checkpoint").symlink_to(outside, target_is_directory=True)
    before = _snapshot(outside, tmp_path / "none")
    with pytest.raises(checkpoint.ResumeError) as info:
        _resume(run)
    _refused(info.value, "checkpoint/ is a link")
    assert _snapshot(outside, tmp_path / "none") == before
    assert json.loads((run / "manifest.json").read_text())["status"] == "incomplete"


@pytest.mark.parametrize("what", ["point", "manifest"])
def test_a_point_file_or_manifest_that_is_a_link_is_refused(runs, tmp_path, what):
    """Used to: a planted link was followed (read, and for the manifest trusted)."""
    run = _copy(runs["run"], tmp_path)
    target = run / ("checkpoint/point-000000.npz" if what == "point" else "manifest.json")
    outside = tmp_path / "outside.bin"
    shutil.move(target, outside)
    target.symlink_to(outside)
    with pytest.raises(checkpoint.ResumeError) as info:
        _resume(run)
    _refused(info.value, "is a link")


def test_a_run_folder_reached_through_a_link_resumes(runs, tmp_path):
    """The path given to ``--resume`` may go through links (nothing inside the folder may).
    Used to: every point ran, then writing the outputs failed ("resolves to ..., outside the
    output folder") because they were built beside the link."""
    run = _copy(runs["run"], tmp_path / "real")
    (tmp_path / "elsewhere").mkdir()
    link = tmp_path / "elsewhere" / "my-run"
    link.symlink_to(run, target_is_directory=True)
    res = cli.invoke(app, ["run", "--resume", str(link), "--no-progress"])
    assert res.exit_code == 0, (res.stderr, res.exception)
    _same_tables(run, runs["ref"])
    assert sorted(p.name for p in (tmp_path / "elsewhere").iterdir()) == ["my-run"]


# ------------------------------------------------------------------ binding and consistency
def test_a_checkpoint_of_another_scenario_is_refused(runs, tmp_path):
    """Used to: the point key is (game, question, swept values) only, so another scenario's
    checkpoint passed and its sums went into this run's tables without a warning."""
    run = _copy(runs["run"], tmp_path)
    shutil.copyfile(runs["other_run"] / "checkpoint" / "point-000000.npz", run / "checkpoint" / "point-000000.npz")
    with pytest.raises(checkpoint.ResumeError) as info:
        _resume(run)
    _refused(info.value, "point-000000.npz", "another run", "scenario_sha256")


def test_swapped_point_files_are_refused(runs, tmp_path):
    run = _copy(runs["run"], tmp_path)
    a, b = run / "checkpoint" / "point-000000.npz", run / "checkpoint" / "point-000001.npz"
    a.rename(tmp_path / "x")
    b.rename(a)
    (tmp_path / "x").rename(b)
    with pytest.raises(checkpoint.ResumeError) as info:
        _resume(run)
    _refused(info.value, "is the checkpoint of point 1, not of point 0")


@pytest.mark.parametrize("edit,words", [
    ("flip_done", ["marked done after 262,144 of its 300,000 trials"]),
    ("double_trials", ["says 524,288 trials but the histogram"]),
    ("shift_hist", ["do not match the histogram"]),
    ("negative", ["negative count"]),
    ("next_chunk", ["chunks run hold"]),
])
def test_edited_sums_of_a_half_run_point_are_refused(runs, tmp_path, edit, words):
    """Used to: point files were trusted as written: flipping ``done`` on a half-run point or
    doubling its trial count (which halves every mean) passed silently."""
    run = _copy(runs["run"], tmp_path)
    path = run / "checkpoint" / "point-000001.npz"
    a = _arrays(path)
    meta, hist = a["meta"], a["hist"]
    if edit == "flip_done":
        meta[3], meta[4] = -1, 1
    elif edit == "double_trials":
        meta[2] *= 2
    elif edit == "shift_hist":               # same totals, one trial moved up a bin
        hist[0, 0] -= 1
        hist[0, 1] += 1
    elif edit == "negative":
        hist[1, 0] = -hist[1, 0]
    else:
        meta[3] = 70
    _rewrite(path, meta=meta, hist=hist)
    with pytest.raises(checkpoint.ResumeError) as info:
        _resume(run)
    _refused(info.value, "point-000001.npz", *words)


def _zip_with(path: Path, members: dict[str, bytes], deflate: tuple = ()) -> None:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data, compress_type=zipfile.ZIP_DEFLATED if name in deflate else zipfile.ZIP_STORED)


def _npy(arr) -> bytes:
    import io
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


@pytest.mark.parametrize("craft,words", [
    ("meta_of_2", ["meta.npy is int64 (2,); expected int64 (5,)"]),
    ("inflating", ["hist.npy inflates to", "(not read)"]),
    ("float_hist", ["hist.npy is float64"]),
    ("unknown_member", ["expected exactly"]),
    ("format_1", ["expected exactly"]),           # a point file of the previous format: no binding
    ("truncated", ["damaged zip"]),
    ("pickle", ["hist.npy is object"]),
])
def test_crafted_point_files_are_refused_before_their_data_is_read(runs, tmp_path, craft, words):
    """Used to: a 2-element ``meta`` gave IndexError, an object array a pickle ValueError, and a
    compressed member inflating to gigabytes was decompressed before any shape check."""
    run = _copy(runs["run"], tmp_path)
    path = run / "checkpoint" / "point-000000.npz"
    good = {f"{k}.npy": _npy(v) for k, v in _arrays(path).items()}
    if craft == "meta_of_2":
        good["meta.npy"] = _npy(np.array([2, 5], dtype=np.int64))
        _zip_with(path, good)
    elif craft == "inflating":                     # 8 MiB of zeros in a file below the size cap
        good["hist.npy"] = _npy(np.zeros((2, 512 * 1024), dtype=np.int64))
        _zip_with(path, good, deflate=("hist.npy",))
        assert path.stat().st_size < 20_000
    elif craft == "float_hist":
        good["hist.npy"] = _npy(np.zeros((2, 2)))
        _zip_with(path, good)
    elif craft == "unknown_member":
        _zip_with(path, {**good, "extra.npy": _npy(np.zeros(1))})
    elif craft == "format_1":
        good.pop("binding.npy", None)
        _zip_with(path, good)
    elif craft == "truncated":
        path.write_bytes(path.read_bytes()[:100])
    else:
        good["hist.npy"] = _npy(np.array([[1, 2], [3, 4]], dtype=object))
        _zip_with(path, good)
    with pytest.raises(checkpoint.ResumeError) as info:
        _resume(run)
    _refused(info.value, "point-000000.npz", *words)


# ---------------------------------------------------------------------- the manifest's fields
@pytest.mark.parametrize("field,value,words", [
    ("seed", 2, ["was run with seed 1", "manifest.json now says 2"]),
    ("trials", 600_000, ["was run with trials 300000", "now says 600000"]),
])
def test_an_edited_seed_or_trial_count_in_the_manifest_is_refused(runs, tmp_path, field, value, words):
    """Used to: resume took the seed and trials from the incomplete manifest, unbound to the
    checkpoints: an edited seed continued with another seed and the finished run claimed it."""
    run = _copy(runs["run"], tmp_path)
    m = json.loads((run / "manifest.json").read_text())
    m[field] = value
    (run / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(checkpoint.ResumeError) as info:
        _resume(run)
    _refused(info.value, "point-000000.npz", *words)


@pytest.mark.parametrize("field,value,words", [
    ("data_files", "x", ["data_files: got 'x'"]),
    ("scenario_sha256", 5, ["scenario_sha256: got 5", "64 lowercase hex"]),
    ("points", "4", ["points: got '4'"]),
    ("seed", "1", ["seed: got '1'"]),
    ("trials", 0, ["trials: got 0"]),
    ("scenario_file", ["s.yaml"], ["scenario_file: got ['s.yaml']"]),
    ("checkpoint_format", 1, ["checkpoint_format: got 1", "earlier version"]),
])
def test_malformed_manifest_fields_are_refused_in_one_line(runs, tmp_path, field, value, words):
    """Used to: tracebacks (``data_files: "x"``, ``scenario_sha256: 5``, ``scenario_file`` a
    list) or nonsense ("the run has 4 points, the scenario now 4"); format 1 was accepted."""
    run = _copy(runs["run"], tmp_path)
    m = json.loads((run / "manifest.json").read_text())
    m[field] = value
    (run / "manifest.json").write_text(json.dumps(m))
    _one_line_error(cli.invoke(app, ["run", "--resume", str(run), "--no-progress"]), "manifest.json", *words)


# ----------------------------------------------------------- failures after computing keep it
def _fresh_run(runs, tmp_path, *args):
    return cli.invoke(app, ["run", str(runs["scen"]), "--out", str(tmp_path / "out"), "--no-progress", *args])


def _kept_folder(tmp_path) -> Path:
    (run,) = (tmp_path / "out").glob("s/*")
    assert json.loads((run / "manifest.json").read_text())["status"] == "incomplete"
    assert not list((tmp_path / "out").rglob(".partial-*"))
    return run


def _resume_without_trials(run: Path) -> Path:
    """Resume ``run`` with the kernels disabled: every point must come from its checkpoint."""
    def no_trials(*a, **k):
        raise AssertionError("a trial was rerun")
    with mock.patch.object(api, "simulate_point", no_trials):
        return _resume(run)


def test_disk_full_while_the_tables_are_written_keeps_a_resumable_folder(runs, tmp_path, monkeypatch):
    """Used to: a chained traceback, and the run folder with every completed checkpoint deleted."""
    def full(*a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(outputs, "write_parquet", full)
    res = _fresh_run(runs, tmp_path)
    monkeypatch.undo()
    run = _kept_folder(tmp_path)
    _one_line_error(res, "could not write the results (No space left on device)", "the 4 points are saved",
                    "free space", f"analyzer run --resume {run}")
    _same_tables(_resume_without_trials(run), runs["ref"])


def test_a_read_only_run_folder_while_outputs_move_in_keeps_it_resumable(runs, tmp_path, monkeypatch):
    """Used to: the folder and its checkpoints were deleted (EROFS/EACCES when the outputs are
    moved in). Simulated (tests run as root here, where chmod does not stop a write)."""
    def read_only(*a, **k):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))
    monkeypatch.setattr(outputs, "fill_run_dir", read_only)
    res = _fresh_run(runs, tmp_path)
    monkeypatch.undo()
    run = _kept_folder(tmp_path)
    _one_line_error(res, "Read-only file system", "make the folder writable")
    _same_tables(_resume_without_trials(run), runs["ref"])


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder: chmod proves nothing")
def test_a_really_read_only_run_folder_keeps_it_resumable(runs, tmp_path, monkeypatch):
    real = outputs.fill_run_dir

    def chmod_then_fill(tmp, run_dir, *a, **k):
        os.chmod(run_dir, 0o555)
        return real(tmp, run_dir, *a, **k)
    monkeypatch.setattr(outputs, "fill_run_dir", chmod_then_fill)
    res = _fresh_run(runs, tmp_path)
    monkeypatch.undo()
    (run,) = (tmp_path / "out").glob("s/*")
    os.chmod(run, 0o755)
    _kept_folder(tmp_path)
    _one_line_error(res, "Permission denied")
    _same_tables(_resume_without_trials(run), runs["ref"])


def test_any_error_after_computing_keeps_the_folder_and_says_so(runs, tmp_path, monkeypatch):
    """Used to: an error drawing a figure (e.g. mathtext in a name) deleted the folder with every
    checkpoint after all trials had run."""
    def bad_figure(*a, **k):
        raise ValueError("$\\unknownmacro$\n       ^ ParseFatalException [x]")
    monkeypatch.setattr(api.plots, "render", bad_figure)
    res = _fresh_run(runs, tmp_path)
    monkeypatch.undo()
    run = _kept_folder(tmp_path)
    _one_line_error(res, "could not write the results (ValueError: ", "[x]", "no trial is lost", "--resume")
    _same_tables(_resume_without_trials(run), runs["ref"])


def test_disk_full_while_saving_a_checkpoint_keeps_the_points_saved(runs, tmp_path, monkeypatch):
    """Used to: the new run's folder was deleted with the points it had saved."""
    real, saves = checkpoint.RunCheckpoint.save_point, []

    def save(self, *a, **k):
        saves.append(1)
        if len(saves) > 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(self, *a, **k)
    monkeypatch.setattr(checkpoint.RunCheckpoint, "save_point", save)
    res = _fresh_run(runs, tmp_path)
    monkeypatch.undo()
    run = _kept_folder(tmp_path)
    _one_line_error(res, "could not save a checkpoint (No space left on device)", "--resume")
    assert (run / "checkpoint" / "point-000000.npz").is_file()
    _same_tables(_resume(run), runs["ref"])


# ------------------------------------------------------------------------- orphan clean-up
def _partial(base: Path, name: str) -> Path:
    p = base / name
    p.mkdir(parents=True)
    (p / "points.parquet").write_text("half")
    return p


def test_an_orphan_is_removed_only_when_its_owners_lock_is_free(tmp_path):
    """Used to: a ``.partial-<pid>-*`` folder whose pid does not exist in this PID namespace was
    deleted, so a run in another container sharing the results folder lost its output."""
    base = tmp_path / "sc"
    # another container's live run: a pid that does not exist here, its lock held
    foreign = _partial(base, ".partial-999999999-abc123")
    (foreign / outputs.PARTIAL_LOCK).write_text("")
    holder = os.open(foreign / outputs.PARTIAL_LOCK, os.O_RDONLY)
    fcntl.flock(holder, fcntl.LOCK_EX)
    # a process that died while writing (its lock file stays, unlocked)
    code = ("import sys; from pathlib import Path; from analyzer.outputs import writer as outputs; "
            "p = outputs.new_partial_dir(Path(sys.argv[1])); (p / 'points.parquet').write_text('half'); print(p)")
    dead = Path(subprocess.run([sys.executable, "-c", code, str(base)], capture_output=True, text=True,
                               check=True, cwd=ROOT).stdout.strip())
    assert (dead / outputs.PARTIAL_LOCK).is_file()
    young = _partial(base, ".partial-999999998-young1")                 # no lock file (older version)
    old = _partial(base, ".partial-999999997-old001")
    week = time.time() - outputs.UNLOCKED_PARTIAL_SECONDS - 3600
    os.utime(old, (week, week))
    try:
        mine = outputs.new_partial_dir(base)
        assert foreign.exists() and young.exists() and mine.exists()
        assert not dead.exists() and not old.exists()
        os.close(holder)                        # the foreign run ends without cleaning up: now it is an orphan
        holder = None
        outputs.discard_run_dir(outputs.new_partial_dir(base))
        assert not foreign.exists() and mine.exists()
    finally:
        if holder is not None:
            os.close(holder)
        outputs.discard_run_dir(mine)


def test_an_owner_releasing_its_folder_while_a_cleaner_looks_keeps_it(tmp_path, monkeypatch):
    """The owner drops its lock just before renaming the folder into place: a cleaner that
    opened the lock file before and gets the lock after must not remove the folder."""
    base = tmp_path / "sc"
    base.mkdir()
    theirs = outputs.new_partial_dir(base)
    real = fcntl.flock

    def owner_releases_first(fd, op):
        if os.fstat(fd).st_ino == os.stat(theirs / outputs.PARTIAL_LOCK).st_ino:
            outputs.release_partial(theirs)          # the owner, at this instant: unlink, unlock
        return real(fd, op)
    monkeypatch.setattr(outputs.fcntl, "flock", owner_releases_first)
    outputs._remove_orphans(base)
    monkeypatch.undo()
    assert theirs.exists()
    outputs.discard_run_dir(theirs)


def test_outputs_carry_no_lock_file(runs, tmp_path):
    """The lock lives in the temporary folder only: a finished run folder holds none."""
    run = _resume(_copy(runs["run"], tmp_path))
    assert not (run / outputs.PARTIAL_LOCK).exists() and not list(tmp_path.rglob(".partial-*"))


# ------------------------------------------------------------- a signal during the final write
def test_sigterm_while_the_outputs_are_written_completes_them_then_exits_143(runs, tmp_path, monkeypatch):
    """Used to: the signal was held until the write ended and the process then exited 0 as if
    never signalled."""
    real = api.report.write_report

    def signalled(folder):
        # the CLI's handler must be the one installed, or this would end the test process
        assert signal.getsignal(signal.SIGTERM) is interrupt._handler
        os.kill(os.getpid(), signal.SIGTERM)
        return real(folder)
    monkeypatch.setattr(api.report, "write_report", signalled)
    try:
        res = _fresh_run(runs, tmp_path)
    finally:
        monkeypatch.undo()
        interrupt._received.clear()        # the flag outlives handling(): later in-process runs would stop
    assert res.exit_code == 143, (res.exit_code, res.stderr, res.exception)
    (run,) = [p for p in (tmp_path / "out").glob("s/*") if p.name != "latest"]
    assert "interrupted by SIGTERM" in res.stderr and "the run is complete" in res.stderr, res.stderr
    assert "Traceback" not in res.stderr
    assert json.loads((run / "manifest.json").read_text())["status"] == "complete"
    _same_tables(run, runs["ref"])


# -------------------------------------------------------------------- random tampering
def _tamper(run: Path, outside: Path, other_run: Path, kind: str, i: int, x: int) -> None:
    """One random change of the run folder ``run`` (``i``, ``x``: which file, where, how much)."""
    ck = run / "checkpoint"
    point = ck / f"point-00000{i % 2}.npz"
    manifest = run / "manifest.json"
    if kind == "checkpoint_link":
        shutil.move(ck, outside / "checkpoint")
        ck.symlink_to(outside / "checkpoint", target_is_directory=True)
    elif kind == "file_link":
        target = point if i % 3 else manifest
        shutil.move(target, outside / target.name)
        target.symlink_to(outside / target.name)
    elif kind == "truncate":
        target = point if i % 3 else manifest
        data = target.read_bytes()
        target.write_bytes(data[: x % len(data)])
    elif kind == "flip_byte":
        data = bytearray(point.read_bytes())
        data[x % len(data)] ^= 1 + (i % 255)
        point.write_bytes(bytes(data))
    elif kind == "edit_array":
        a = _arrays(point)
        names = [k for k in ("meta", "hist", "moments", "moments_carry", "counters", "seconds") if k in a and a[k].size]
        name = names[i % len(names)]
        arr = a[name]
        if arr.ndim == 0:
            arr = np.float64(arr + (x % 7) - 3)
        else:
            flat = arr.reshape(-1)
            flat[x % flat.size] += (x % 5) - 2 or 1
        _rewrite(point, **{name: arr})
    elif kind == "edit_binding":
        a = _arrays(point)
        bound = json.loads(a["binding"].tobytes())
        key = sorted(bound)[i % len(bound)]
        bound[key] = [None, 0, 1, "x", bound[key] if isinstance(bound[key], str) else 2 ** 40][x % 5]
        _rewrite(point, binding=np.frombuffer(json.dumps(bound).encode(), dtype=np.uint8))
    elif kind == "swap":
        a, b = ck / "point-000000.npz", ck / "point-000001.npz"
        a.rename(ck / "tmp")
        b.rename(a)
        (ck / "tmp").rename(b)
    elif kind == "other_scenario":
        shutil.copyfile(other_run / "checkpoint" / point.name, point)
    elif kind == "delete_point":
        point.unlink()
    elif kind == "manifest_field":
        m = json.loads(manifest.read_text())
        key = ("seed", "trials", "scenario_sha256", "data_files", "points", "checkpoint_format", "status",
               "scenario_file")[i % 8]
        value = [None, 5, "x", [], {}, True, -1, 1.5, m.get(key), 2][x % 10]
        if value == m.get(key) and key in ("seed", "trials", "points"):
            value = m[key] + 1
        m[key] = value
        manifest.write_text(json.dumps(m))
    elif kind == "manifest_json":
        manifest.write_text(["[]", "{", "null", '"incomplete"', json.dumps({"status": "incomplete"})][x % 5])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(["checkpoint_link", "file_link", "truncate", "flip_byte", "edit_array", "edit_binding",
                             "swap", "other_scenario", "delete_point", "manifest_field", "manifest_json"]),
       i=st.integers(0, 10_000), x=st.integers(0, 10**6))
def test_random_tampering_is_refused_in_one_line_or_changes_nothing(runs, kind, i, x):
    """Acceptance: any tampering of an interrupted run folder (links, truncation, edited JSON or
    npz, swapped or foreign checkpoints) makes ``--resume`` refuse in one line or give the
    tables of an untouched run; nothing outside the folder is written."""
    with tempfile.TemporaryDirectory(dir=runs["base"]) as tmp:
        tmp = Path(tmp)
        run = _copy(runs["run"], tmp)
        outside = tmp / "outside"
        outside.mkdir()
        (outside / "sentinel").write_text("keep")
        _tamper(run, outside, runs["other_run"], kind, i, x)
        before = _snapshot(runs["base"], run)
        try:
            _resume(run)
        except ScenarioError as e:
            assert "\n" not in str(e) and str(e).startswith(str(run)), repr(e)
        else:
            _same_tables(run, runs["ref"])
            assert json.loads((run / "manifest.json").read_text())["status"] == "complete"
            latest = run.parent / "latest"          # the one entry a completed run adds beside its folder
            assert latest.is_symlink() and os.readlink(latest) == run.name
            latest.unlink()
        assert _snapshot(runs["base"], run) == before
