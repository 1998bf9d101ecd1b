"""Every file the analyzer writes goes through this module.

Names that reach the file system come from scenario files, run folders and game data that
someone else may have written (a scenario ``name``, a metric or fighter-type name in
``plotmeta.json``). They are never used as paths: :func:`slug` turns them into one safe
path component, :func:`inside` joins components under a root and refuses any result that
resolves outside it (a link planted in the tree is not followed out), and
:func:`write_atomic` creates its temporary file exclusively (``mkstemp``: ``O_EXCL``, so a
planted link at the temporary name is never opened) and renames it over the final name
(``rename`` replaces a link at the final name; it does not write through it).
"""
from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
import unicodedata
from pathlib import Path
from typing import Callable, IO

from analyzer.core.errors import AnalyzerError

#: Longest path component :func:`slug` returns (file systems allow 255 bytes).
MAX_SLUG = 80


def shipped_scenarios() -> Path:
    """The shipped scenarios and game data: inside the installed package (wheels and ``pip
    install .``, copied there by setup.py), or the repository's ``scenarios/`` (a source
    checkout or an editable install). ``analyzer.core.questions.SCENARIO_ROOT``."""
    packaged = Path(__file__).resolve().parents[1] / "scenarios"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parents[2] / "scenarios"


class UnsafePathError(AnalyzerError, ValueError):
    """A path would leave its output root."""


def slug(name: object, fallback: str = "unnamed", max_len: int = MAX_SLUG) -> str:
    """One safe path component: ASCII letters, digits, ``-``, ``_`` and inner ``.``.

    Accented letters lose their accents (``Ü`` -> ``U``); any other run of characters
    (``/``, ``..``, spaces, NUL, other scripts) becomes one ``_``. Leading and trailing
    ``.``/``_`` are dropped, so the result is never ``.``/``..`` nor hidden. Empty results
    become ``fallback``.
    """
    text = unicodedata.normalize("NFKD", str(name)).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"\.{2,}", "_", text)
    text = re.sub(r"[^A-Za-z0-9._-]+", "_", text)
    text = text.strip("._")[:max_len].rstrip("._")
    return text or fallback


def inside(root: Path, *parts: str) -> Path:
    """``root / part / ...`` with each part passed through :func:`slug`, refused unless
    its resolved location lies under the resolved root."""
    root = Path(root)
    path = root.joinpath(*(slug(p) for p in parts))
    check_under(root, path)
    return path


def check_under(root: Path, path: Path) -> None:
    """Raise :class:`UnsafePathError` unless ``path`` resolves to a place under ``root``
    (links followed: a link in the tree that points elsewhere is refused)."""
    real_root = Path(os.path.realpath(root))
    real = Path(os.path.realpath(path))
    if real != real_root and real_root not in real.parents:
        raise UnsafePathError(f"{path}: resolves to {real}, outside the output folder {real_root}")


def make_dir(root: Path, *parts: str) -> Path:
    """Create ``inside(root, *parts)`` (and ``root``) and check again after creating it."""
    Path(root).mkdir(parents=True, exist_ok=True)
    path = inside(root, *parts)
    path.mkdir(parents=True, exist_ok=True)
    check_under(root, path)
    return path


def current_umask() -> int:
    """The process umask (read by setting and restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def check_writable_root(root: Path) -> None:
    """Before any work: ``root`` is (or can be created as) a folder this process can write in.
    Raises :class:`OSError` or :class:`UnsafePathError` with a message naming the problem."""
    root = Path(root)
    if root.is_symlink() and not root.exists():
        raise UnsafePathError("is a link to nothing (a dangling symlink); give a folder")
    if root.exists() and not root.is_dir():
        raise UnsafePathError("exists and is not a folder")
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-check-", dir=root)
    except OSError as e:
        raise OSError(f"cannot write there: {e.strerror or e}") from None
    os.close(fd)
    os.unlink(probe)


def write_atomic(folder: Path, name: str, write: Callable[[IO[bytes]], None]) -> Path:
    """Write ``folder/slug(name)`` through an exclusively created temporary file.

    ``write`` receives the open binary file. On any failure the temporary file is removed
    and the final name is untouched.
    """
    folder = Path(folder)
    stem, dot, ext = str(name).rpartition(".")
    final_name = f"{slug(stem)}.{slug(ext)}" if dot and stem else slug(name)
    # the final name is one safe component of ``folder``; a link already there is replaced
    # by the rename, never written through, so it is not resolved here
    final = folder / final_name
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".part", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.chmod(tmp, 0o666 & ~current_umask())   # mkstemp makes 0600; a result file follows the umask
        os.replace(tmp, final)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return final


#: Bytes a run may create below its output root: ``/<scenario slug>/<folder>/<file>``: a slug
#: of at most :data:`MAX_SLUG`, a run id (``20261201T120000-1a2b3c4d-12``) or temporary
#: ``.partial-<pid>-XXXXXXXX`` folder of at most 48, and a file name :func:`write_atomic`
#: makes of at most ``2 * MAX_SLUG + 1`` (the checkpoint files of a run folder are shallower).
DEEPEST_BELOW_ROOT = 1 + MAX_SLUG + 1 + 48 + 1 + 2 * MAX_SLUG + 1


def printable(path: object) -> str:
    """A path as one printable string: an undecodable byte of its name (Linux passes it on as
    a lone surrogate, which no UTF-8 writer takes) shown as ``\\xff``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def check_output_root(root: Path) -> None:
    """Before any work, everything a run will need of its output root ``root``:

    - its absolute name (the working folder's, for a relative ``root``) is valid UTF-8: an
      undecodable byte reached report.html, pyarrow and the plots as a lone surrogate and
      failed there, after every trial;
    - the deepest path the run creates (:data:`DEEPEST_BELOW_ROOT` bytes below ``root``)
      fits the system's path length limit (``PC_PATH_MAX``, 4096 bytes on Linux) as an
      absolute path (``tempfile`` makes every temporary name absolute, relative ``--out`` or
      not): a folder ~4,000 bytes deep passed the write check and failed with ENAMETOOLONG
      writing the first checkpoint;
    - :func:`check_writable_root`.

    Raises :class:`UnsafePathError` or :class:`OSError` with a message naming the problem."""
    root = Path(root)
    try:       # as tempfile makes it (joined to the working folder), ``..`` left for the system
        absolute = os.path.join(os.getcwd(), os.fspath(root))
    except OSError as e:           # the working folder was removed, or is itself too deep to name
        raise UnsafePathError(f"the working folder cannot be named ({e.strerror or e}); give an absolute path "
                              f"or run from another folder") from None
    try:
        absolute.encode("utf-8")
    except UnicodeEncodeError:
        raise UnsafePathError(f"the path {printable(absolute)} is not valid UTF-8 (undecodable bytes in a folder "
                              f"name); give a UTF-8 path") from None
    probe = Path(absolute)
    while not os.path.exists(probe) and probe != probe.parent:     # (False, not an error, when too long)
        probe = probe.parent
    try:
        limit = os.pathconf(probe, "PC_PATH_MAX")
    except (OSError, ValueError):
        limit = 4096
    if limit <= 0:
        limit = 4096
    length = len(os.fsencode(absolute))
    if length + DEEPEST_BELOW_ROOT > limit - 1:       # the limit counts the terminating NUL
        raise UnsafePathError(f"is {length:,} bytes long as an absolute path; a run creates paths up to "
                              f"{DEEPEST_BELOW_ROOT} bytes below it and the system allows {limit - 1:,} bytes in all: "
                              f"give a folder nearer the file system's root")
    check_writable_root(root)


# --- files of a folder opened without following links (checkpoints, a resumed run folder) ----
#: ``os.open`` flags of every read below: no link followed, no blocking on a FIFO, not inherited
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def _one_component(name: str) -> str:
    if not name or "/" in name or name in (".", "..") or "\0" in name:
        raise UnsafePathError(f"{name!r}: not one file name")
    return name


def open_dir_nofollow(name: str | Path, dir_fd: int | None = None) -> int:
    """An ``O_DIRECTORY | O_NOFOLLOW`` descriptor of the folder ``name`` (relative to
    ``dir_fd`` when given): a link there, even to a folder, is refused with
    :class:`UnsafePathError` (only the last component is checked: the caller's own path to a
    run folder may go through links). :class:`FileNotFoundError` passes through."""
    try:
        return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise UnsafePathError(f"{name}: is a link; links are not followed here") from None
        if e.errno == errno.ENOTDIR:
            raise UnsafePathError(f"{name}: is not a folder") from None
        raise


def read_regular_at(dir_fd: int, name: str, max_bytes: int) -> bytes:
    """The bytes of the regular file ``name`` of the folder ``dir_fd``, at most ``max_bytes``.

    A link (not followed), a FIFO, device or folder, or a larger file is refused with
    :class:`UnsafePathError` before anything is read; :class:`FileNotFoundError` passes
    through (a missing file is often not an error)."""
    try:
        fd = os.open(_one_component(name), _READ_FLAGS, dir_fd=dir_fd)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise UnsafePathError(f"{name}: is a link; links are not followed here") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePathError(f"{name}: is not a regular file")
        if st.st_size > max_bytes:
            raise UnsafePathError(f"{name}: is {st.st_size:,} bytes; at most {max_bytes:,} expected")
        chunks, left = [], max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > max_bytes:                 # grew while read
            raise UnsafePathError(f"{name}: is more than {max_bytes:,} bytes")
        return data
    finally:
        os.close(fd)


def write_atomic_at(dir_fd: int, name: str, data: bytes) -> None:
    """Write ``data`` as ``name`` in the folder ``dir_fd``: through an exclusively created
    temporary file (``O_EXCL | O_NOFOLLOW``) renamed over ``name`` (a link there is replaced,
    never written through), both relative to ``dir_fd``. Mode ``0666 & ~umask``. On failure
    the temporary file is removed and ``name`` is untouched."""
    _one_component(name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(100):
        tmp = f".tmp-{os.urandom(6).hex()}.part"
        try:
            fd = os.open(tmp, flags, 0o666, dir_fd=dir_fd)     # the umask applies
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(errno.EEXIST, "no free temporary name", name)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass
        raise


# --- the safe-I/O layer of the readers (report, plot, catalog cache) and of ``init`` --------
#: Largest JSON document a reader takes (summary.json of a 100,000-point sweep is ~150 MB).
MAX_JSON_BYTES = 512 << 20
#: Largest parquet table :mod:`analyzer.outputs.plots` reads.
MAX_TABLE_BYTES = 512 << 20
#: Largest PNG ``report.html`` inlines (figures are capped at 4000 px a side: a few MB).
MAX_IMAGE_BYTES = 64 << 20
#: Largest file ``analyzer init`` copies (the shipped scenarios and game data are kilobytes).
MAX_COPY_BYTES = 16 << 20


class UnreadableFileError(UnsafePathError):
    """A file that exists is not what a reader takes: a link (never followed), a FIFO, device or
    folder, larger than the reader's cap, not UTF-8 or not JSON. ``str()`` is one line naming
    the file."""


def _parts(name: str | Path) -> list[str]:
    """The components of a relative path below a root; absolute paths, ``.``, ``..`` and empty
    components are refused (a reader never leaves its root)."""
    text = os.fspath(name)
    parts = text.split("/")
    if not text or text.startswith("/") or any(p in ("", ".", "..") or "\0" in p for p in parts):
        raise UnsafePathError(f"{printable(text)}: not a relative path inside the folder")
    return parts


def _open_root(root: Path) -> int:
    """A descriptor of the caller's folder ``root``. The caller's own path may go through links
    (``results/latest -> ...`` named on the command line); nothing below it does."""
    try:
        return os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except NotADirectoryError:
        raise UnreadableFileError(f"{printable(root)}: is not a folder") from None


def _walk_dirs(root_fd: int, root: Path, parts: list[str], create: bool = False) -> int:
    """A descriptor of the folder ``root/parts...``, each component opened ``O_NOFOLLOW``
    relative to the previous one (created first when ``create``): a link or a file on the way
    is refused, never followed. The caller closes the result (a new descriptor even for no parts)."""
    fd = os.dup(root_fd)
    for i, part in enumerate(parts):
        if create:
            try:
                os.mkdir(part, 0o777, dir_fd=fd)
            except FileExistsError:
                pass
            except OSError:
                os.close(fd)
                raise
        try:
            nxt = open_dir_nofollow(part, dir_fd=fd)
        except UnsafePathError as e:
            why = str(e).split(": ", 1)[-1]
            try:        # O_DIRECTORY | O_NOFOLLOW on a link says ENOTDIR: name the link as a link
                if stat.S_ISLNK(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode):
                    why = "is a link; links are not followed here"
            except OSError:
                pass
            os.close(fd)
            raise UnreadableFileError(f"{printable(Path(root, *parts[:i + 1]))}: {why}") from None
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
        fd = nxt
    return fd


def read_regular(root: Path, name: str | Path, max_bytes: int) -> bytes:
    """The bytes of the regular file ``root/name`` (``name`` relative, maybe several components),
    at most ``max_bytes``: no link followed below ``root`` (``O_NOFOLLOW`` on every component),
    no FIFO opened for reading (``O_NONBLOCK``, then ``fstat`` must say regular file), and the
    size checked before reading (a link to ``/dev/zero`` or a planted FIFO neither eats memory
    nor hangs). Refused with :class:`UnreadableFileError` naming the file;
    :class:`FileNotFoundError` passes through (a missing file may be optional)."""
    root = Path(root)
    parts = _parts(name)
    root_fd = _open_root(root)
    try:
        dir_fd = _walk_dirs(root_fd, root, parts[:-1])
        try:
            return read_regular_at(dir_fd, parts[-1], max_bytes)
        except UnsafePathError as e:
            why = str(e).split(": ", 1)[-1]
            raise UnreadableFileError(f"{printable(root / name)}: {why}") from None
        finally:
            os.close(dir_fd)
    finally:
        os.close(root_fd)


def read_json(root: Path, name: str | Path, max_bytes: int = MAX_JSON_BYTES):
    """:func:`read_regular` parsed as UTF-8 JSON; a file that is not is refused with
    :class:`UnreadableFileError` (one line: file, line and column). The caller checks the shape."""
    import json
    data = read_regular(root, name, max_bytes)
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise UnreadableFileError(f"{printable(Path(root) / name)}: is not UTF-8 text (byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise UnreadableFileError(f"{printable(Path(root) / name)}: is not valid JSON ({e.msg} at line {e.lineno} "
                                  f"column {e.colno})") from None
    except RecursionError:
        raise UnreadableFileError(f"{printable(Path(root) / name)}: is nested too deeply to read") from None


def entry_kind(root: Path, name: str | Path) -> str | None:
    """What ``root/name`` is, links not followed at any component below ``root``: ``None``
    (nothing there, not even a dangling link), ``"file"``, ``"dir"``, ``"link"`` or ``"other"``
    (a FIFO, device, socket), or ``"blocked"`` when a component on the way is a link or not a
    folder. ``os.path.lexists`` for a whole path, without trusting the folders on the way."""
    parts = _parts(name)
    cur = Path(root)
    for i, part in enumerate(parts):
        cur = cur / part
        try:
            st = os.lstat(cur)
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            return "blocked"
        last = i == len(parts) - 1
        if stat.S_ISLNK(st.st_mode):
            return "link" if last else "blocked"
        if not last and not stat.S_ISDIR(st.st_mode):
            return "blocked"
        if last:
            return "file" if stat.S_ISREG(st.st_mode) else "dir" if stat.S_ISDIR(st.st_mode) else "other"
    return None


def write_regular(root: Path, name: str | Path, data: bytes, *, overwrite: bool = False) -> Path:
    """Write ``data`` as the file ``root/name`` without following a link below ``root``: the
    folders on the way are created and opened ``O_NOFOLLOW`` one by one (a planted link to a
    folder elsewhere is refused), and the file is created exclusively (``O_EXCL``: an existing
    name, a dangling link included, is refused with :class:`FileExistsError`) or, with
    ``overwrite``, written to an exclusive temporary file renamed over the name (a link there is
    replaced, never written through). On failure nothing is left at the name. Returns the path."""
    root = Path(root)
    parts = _parts(name)
    root_fd = _open_root(root)
    try:
        dir_fd = _walk_dirs(root_fd, root, parts[:-1], create=True)
        try:
            if overwrite:
                write_atomic_at(dir_fd, parts[-1], data)
            else:
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
                fd = os.open(parts[-1], flags, 0o666, dir_fd=dir_fd)
                try:
                    with os.fdopen(fd, "wb") as fh:
                        fh.write(data)
                except BaseException:
                    os.unlink(parts[-1], dir_fd=dir_fd)
                    raise
        finally:
            os.close(dir_fd)
    finally:
        os.close(root_fd)
    return root / name


def copy_regular(src_root: Path, src_name: str | Path, dest_root: Path, dest_name: str | Path, *,
                 overwrite: bool = False, max_bytes: int = MAX_COPY_BYTES) -> Path:
    """Copy the regular file ``src_root/src_name`` (:func:`read_regular`: no link followed, at
    most ``max_bytes``) to ``dest_root/dest_name`` (:func:`write_regular`). Returns the new path."""
    return write_regular(dest_root, dest_name, read_regular(src_root, src_name, max_bytes), overwrite=overwrite)
