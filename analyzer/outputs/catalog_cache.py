"""``analyzer list`` without importing the games: the catalog, cached on disk.

Building the catalog imports every game (numba, numpy, pydantic models) and prepares each
question with its defaults to name its metrics: about half a second. Its content depends only
on the package's source files and its shipped data, so it is kept as JSON under a name that
fingerprints those files (relative path, size and modification time of every ``.py`` under
``analyzer/`` and ``kernels/`` and every file under the shipped scenarios, plus the package
and Python versions). Any edit, install or upgrade changes the fingerprint, so a stale
listing is never shown; an unwritable cache folder only costs the rebuild.

The folder is ``$WARGAME_ANALYZER_CACHE`` if set, else ``$XDG_CACHE_HOME/wargame-analyzer``
(``~/.cache/wargame-analyzer``).
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
from pathlib import Path

from analyzer.core.version import __version__
from analyzer.core.paths import UnsafePathError, read_json, shipped_scenarios, write_atomic


def cache_dir() -> Path:
    if os.environ.get("WARGAME_ANALYZER_CACHE"):
        return Path(os.environ["WARGAME_ANALYZER_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "wargame-analyzer"


def _source_roots() -> list[tuple[Path, tuple[str, ...]]]:
    analyzer_dir = Path(__file__).resolve().parents[1]
    spec = importlib.util.find_spec("kernels")          # finds the package without importing it
    kernels_dirs = [Path(p) for p in (spec.submodule_search_locations or [])] if spec else []
    return [(analyzer_dir, (".py",)), *[(d, (".py",)) for d in kernels_dirs], (shipped_scenarios(), ())]


def fingerprint() -> str:
    """A hash of everything the catalog is computed from (see the module docstring)."""
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{__version__}|{sys.version}".encode())
    for root, suffixes in _source_roots():
        h.update(str(root).encode())
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if suffixes and not name.endswith(suffixes):
                    continue
                path = os.path.join(dirpath, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                h.update(f"{os.path.relpath(path, root)}|{st.st_size}|{st.st_mtime_ns}".encode())
    return h.hexdigest()


#: Largest cache file read (the whole catalog is ~100 KB): a planted link to ``/dev/zero`` or a
#: huge file is refused by :func:`analyzer.core.paths.read_regular` before it is read.
MAX_CACHE_BYTES = 8 << 20


def _is_str_list(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def valid_catalog(doc) -> bool:
    """``doc`` has exactly the shape :func:`analyzer.outputs.catalog.catalog` gives (after the JSON round
    trip), down to every field ``analyzer list`` prints: ``{game: [question, ...]}`` with text
    ``question``/``summary``, true/false ``exact``, ``params`` (text ``path``/``type``/
    ``description``), ``metrics`` (texts) and ``rule_options`` (text ``name``/``default``/``doc``,
    text lists ``values``/``what_if``). A cache file that is not (edited, from a broken writer, a
    JSON list) is rebuilt, never shown or half-printed with a traceback."""
    if not isinstance(doc, dict):
        return False
    for game, qs in doc.items():
        if not isinstance(game, str) or not isinstance(qs, list):
            return False
        for q in qs:
            if not isinstance(q, dict) or not isinstance(q.get("question"), str) \
                    or not isinstance(q.get("summary"), str) or not isinstance(q.get("exact"), bool) \
                    or not (q.get("primary_metric") is None or isinstance(q["primary_metric"], str)) \
                    or not _is_str_list(q.get("metrics")) or not isinstance(q.get("params"), list) \
                    or not isinstance(q.get("rule_options"), list):
                return False
            for p in q["params"]:
                if not isinstance(p, dict) or "default" not in p \
                        or not all(isinstance(p.get(k), str) for k in ("path", "type", "description")):
                    return False
            for o in q["rule_options"]:
                if not isinstance(o, dict) or not all(isinstance(o.get(k), str) for k in ("name", "default", "doc")) \
                        or not _is_str_list(o.get("values")) or not _is_str_list(o.get("what_if")):
                    return False
    return True


def _read_cache(folder: Path, name: str):
    """The cached document, or None when there is none usable: missing, a link (not followed),
    not a regular file, too large, not JSON, or not the catalog's shape (:func:`valid_catalog`)."""
    try:
        doc = read_json(folder, name, MAX_CACHE_BYTES)
    except (OSError, UnsafePathError):
        return None
    return doc if valid_catalog(doc) else None


def cached_catalog(game: str | None = None) -> dict[str, list[dict]]:
    """The catalog of :func:`analyzer.outputs.catalog.catalog` for every game (then cut to ``game``),
    from the cache when its fingerprint matches, else built and saved.

    The cache folder may be shared or prepared by someone else: the file is read without
    following a link and with a size cap, its shape is checked (anything else is rebuilt), and
    it is written through :func:`analyzer.core.paths.write_atomic` (an exclusively created temporary
    file renamed into place: a link planted at any name is replaced, never written through)."""
    folder = cache_dir()
    name = f"catalog-{fingerprint()}.json"
    doc = _read_cache(folder, name)
    if doc is None:
        from analyzer.outputs.catalog import catalog
        doc = json.loads(json.dumps(catalog(), default=str))     # what the cache holds, exactly
        data = json.dumps(doc).encode("utf-8")
        try:
            folder.mkdir(parents=True, exist_ok=True)
            for old in folder.glob("catalog-*.json"):            # one listing per cache folder
                try:
                    old.unlink(missing_ok=True)                  # (a link is removed, not its target)
                except OSError:
                    pass
            write_atomic(folder, name, lambda fh: fh.write(data))
        except (OSError, UnsafePathError):
            pass
    return doc if game is None else {g: qs for g, qs in doc.items() if g == game}
