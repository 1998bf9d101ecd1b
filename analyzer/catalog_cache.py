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

from analyzer import __version__
from analyzer.paths import shipped_scenarios


def cache_dir() -> Path:
    if os.environ.get("WARGAME_ANALYZER_CACHE"):
        return Path(os.environ["WARGAME_ANALYZER_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "wargame-analyzer"


def _source_roots() -> list[tuple[Path, tuple[str, ...]]]:
    analyzer_dir = Path(__file__).resolve().parent
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


def cached_catalog(game: str | None = None) -> dict[str, list[dict]]:
    """The catalog of :func:`analyzer.catalog.catalog` for every game (then cut to ``game``),
    from the cache when its fingerprint matches, else built and saved."""
    path = cache_dir() / f"catalog-{fingerprint()}.json"
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        from analyzer.catalog import catalog
        doc = json.loads(json.dumps(catalog(), default=str))     # what the cache holds, exactly
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            for old in path.parent.glob("catalog-*.json"):       # one listing per cache folder
                old.unlink(missing_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(doc))
            os.replace(tmp, path)
        except OSError:
            pass
    return doc if game is None else {g: qs for g, qs in doc.items() if g == game}
