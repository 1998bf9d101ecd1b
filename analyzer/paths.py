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

import os
import re
import tempfile
import unicodedata
from pathlib import Path
from typing import Callable, IO

#: Longest path component :func:`slug` returns (file systems allow 255 bytes).
MAX_SLUG = 80


def shipped_scenarios() -> Path:
    """The shipped scenarios and game data: inside the installed package (wheels and ``pip
    install .``, copied there by setup.py), or the repository's ``scenarios/`` (a source
    checkout or an editable install). ``analyzer.questions.SCENARIO_ROOT``."""
    packaged = Path(__file__).resolve().parent / "scenarios"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parent.parent / "scenarios"


class UnsafePathError(ValueError):
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
