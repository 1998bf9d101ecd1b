"""Game data files and labelled placeholders.

Rule values the sources do not give are data, never constants in code. In YAML a value
is written plainly when the source gives it, ``{ph: VALUE, note: "..."}`` when it is a
placeholder, and ``{ex: VALUE, note: "...", establishes: exact|at_most|at_least}`` when it
is derived from a worked example in the source: ``exact`` (the default) when the example
fixes the value, ``at_most``/``at_least`` when it only bounds it (HMS Arbutus detects on
a roll of 5, so its Detection value is at most 5). :func:`unwrap` replaces the wrappers by
their values and records every one it met, so outputs list placeholders and example-derived
values separately and ``strict: true`` refuses placeholders and bound-only examples.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from analyzer.core.errors import AnalyzerError

_WRAPPER_KEYS = ({"ph"}, {"ph", "note"}, {"ex"}, {"ex", "note"}, {"ex", "establishes"},
                 {"ex", "note", "establishes"})
#: what a worked example establishes about the value it gives
ESTABLISHES = ("exact", "at_most", "at_least")


@dataclass(frozen=True)
class Placeholder:
    """A value used in a run that the rule source does not give."""

    path: str
    value: Any
    note: str = ""
    source: str = ""  # file it came from, or "default" for a parameter default
    kind: str = "placeholder"  # or "example": derived from a worked example of the source
    establishes: str = ""      # for examples: exact | at_most | at_least

    @property
    def is_example(self) -> bool:
        return self.kind == "example"

    @property
    def refused_by_strict(self) -> bool:
        """Placeholders, and example values the example only bounds."""
        return not self.is_example or self.establishes != "exact"

    def as_dict(self) -> dict:
        out = {"path": self.path, "value": self.value, "note": self.note, "source": self.source}
        if self.is_example:
            out["establishes"] = self.establishes
        return out

    def __str__(self) -> str:
        where = f" ({self.source})" if self.source else ""
        note = f": {self.note}" if self.note else ""
        bound = {"at_most": " (example: at most)", "at_least": " (example: at least)",
                 "exact": " (example)"}.get(self.establishes, "")
        return f"{self.path} = {self.value!r}{bound}{where}{note}"


def is_wrapper(obj: Any) -> bool:
    return isinstance(obj, dict) and set(obj) in _WRAPPER_KEYS


def unwrap(obj: Any, path: str = "", source: str = "",
           found: list[Placeholder] | None = None) -> tuple[Any, list[Placeholder]]:
    """Strip ``{ph: ..}`` / ``{ex: ..}`` wrappers; return (plain data, placeholders met)."""
    found = [] if found is None else found
    if is_wrapper(obj):
        if "ph" in obj:
            value, _ = unwrap(obj["ph"], path, source, [])
            found.append(Placeholder(path, value, str(obj.get("note", "")), source))
            return value, found
        value, _ = unwrap(obj["ex"], path, source, found)
        establishes = str(obj.get("establishes", "exact"))
        if establishes not in ESTABLISHES:
            raise DataError(f"{source or 'data'}: {path}: establishes: got {establishes!r}; allowed: "
                            f"{', '.join(ESTABLISHES)}")
        found.append(Placeholder(path, value, str(obj.get("note", "")), source, "example", establishes))
        return value, found
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            out[k], _ = unwrap(v, f"{path}.{k}" if path else str(k), source, found)
        return out, found
    if isinstance(obj, list):
        return [unwrap(v, f"{path}[{i}]", source, found)[0] for i, v in enumerate(obj)], found
    return obj, found


class DataError(AnalyzerError, ValueError):
    """A game data file is missing or malformed (message names file and field)."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a key written twice in one mapping (YAML says keys
    are unique; PyYAML would silently keep the last). Keys brought in by a ``<<`` merge may
    still be overridden by the mapping's own keys, as YAML merge keys intend."""


def _construct_unique_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False):
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=True)
        try:
            first = seen.setdefault(key, key_node.start_mark.line)
        except TypeError:
            continue  # an unhashable key: construct_mapping reports it
        if first != key_node.start_mark.line:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping", node.start_mark,
                f"duplicate key {key!r} (first given on line {first + 1}); each key may appear once",
                key_node.start_mark)
    return yaml.SafeLoader.construct_mapping(loader, node, deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)

if getattr(yaml, "__with_libyaml__", False):
    class _UniqueKeyCLoader(yaml.CSafeLoader):
        """The same rules on libyaml's parser (about ten times faster than the pure-Python one)."""

    _UniqueKeyCLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)
    _LOADER = _UniqueKeyCLoader
else:   # pragma: no cover - PyYAML built without libyaml
    _LOADER = _UniqueKeyLoader


#: limits on a YAML file read from someone else: size, expanded size (aliases counted every
#: time they are used, so an "alias bomb" is refused before it is built) and nesting depth
MAX_YAML_BYTES = 16 * 1024 * 1024
MAX_YAML_NODES = 2_000_000
MAX_YAML_DEPTH = 100


def _expanded_size(node, memo: dict, depth: int = 0) -> int:
    """Nodes the document would have with every alias expanded (memoised per node)."""
    key = id(node)
    if key in memo:
        return memo[key]
    if depth > MAX_YAML_DEPTH:
        raise DataError(f"nested deeper than {MAX_YAML_DEPTH} levels")
    size = 1
    if isinstance(node, yaml.SequenceNode):
        size += sum(_expanded_size(child, memo, depth + 1) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        size += sum(_expanded_size(k, memo, depth + 1) + _expanded_size(v, memo, depth + 1) for k, v in node.value)
    memo[key] = size
    return size


def read_text(path: Path) -> str:
    """A scenario or data file's text: only a regular file (never a device or a pipe behind a
    link), at most :data:`MAX_YAML_BYTES`, decoded as UTF-8 -- or a one-line :class:`DataError`."""
    path = Path(path)
    try:
        if not path.is_file():
            raise DataError(f"{path}: not a regular file" + (" (a link to a device or a folder?)"
                                                              if path.exists() else " (not found)"))
        size = path.stat().st_size
        if size > MAX_YAML_BYTES:
            raise DataError(f"{path}: {size:,} bytes; a scenario or data file may have at most {MAX_YAML_BYTES:,}")
        with open(path, "rb") as fh:
            raw = fh.read(MAX_YAML_BYTES + 1)
    except OSError as e:
        raise DataError(f"{path}: cannot read file: {e.strerror}") from None
    if len(raw) > MAX_YAML_BYTES:
        raise DataError(f"{path}: more than {MAX_YAML_BYTES:,} bytes")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: not UTF-8 text (byte {e.start}: {raw[e.start:e.start + 1]!r}); save the file "
                        f"as UTF-8") from None


def read_yaml(path: Path) -> Any:
    """Parse a YAML file safely: a regular file below :data:`MAX_YAML_BYTES`, UTF-8, never
    constructs Python objects, duplicate keys refused, at most :data:`MAX_YAML_NODES` nodes
    with aliases expanded and :data:`MAX_YAML_DEPTH` levels of nesting."""
    text = read_text(path)
    try:
        loader = _LOADER(text)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            try:
                size = _expanded_size(node, {})
            except RecursionError:
                raise DataError(f"nested deeper than {MAX_YAML_DEPTH} levels") from None
            if size > MAX_YAML_NODES:
                raise DataError(f"{size:,} values once its aliases are expanded; at most {MAX_YAML_NODES:,} "
                                f"(an alias used many times over?)")
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except DataError as e:
        if str(e).startswith(str(path)):
            raise
        raise DataError(f"{path}: {e}") from None
    except RecursionError:
        raise DataError(f"{path}: nested too deep") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" line {mark.line + 1} column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise DataError(f"{path}:{where}: malformed YAML: {problem}") from None


def load_data(path: Path, prefix: str = "") -> tuple[Any, list[Placeholder]]:
    """Load a game data YAML file and unwrap it; placeholders carry the file name."""
    raw = read_yaml(path)
    return unwrap(raw, prefix, source=str(path))


_LOADED: dict[tuple[Path, int, str], tuple[Any, list[Placeholder]]] = {}


def load_data_cached(path: Path, prefix: str = "") -> tuple[Any, list[Placeholder]]:
    """:func:`load_data`, parsed once per (file, modification time, prefix).

    Callers must not mutate the returned data (it is shared between sweep points)."""
    key = (Path(path), Path(path).stat().st_mtime_ns, prefix)
    if key not in _LOADED:
        _LOADED[key] = load_data(path, prefix)
    return _LOADED[key]


def is_under(path: str, prefix: str) -> bool:
    """True when data path ``path`` is ``prefix`` or lies below it (``a.b``, ``a[0]``)."""
    return path == prefix or path.startswith(prefix + ".") or path.startswith(prefix + "[")


def file_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_FILE_SHA: dict[tuple[Path, int, int], str] = {}


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes, computed once per (file, modification time, size)."""
    st = Path(path).stat()
    key = (Path(path), st.st_mtime_ns, st.st_size)
    if key not in _FILE_SHA:
        _FILE_SHA[key] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return _FILE_SHA[key]


class DataFiles:
    """The game data files one sweep point reads, by top-level key: ``files`` maps each key
    to the file that holds it (e.g. ``{"merchants": "data/merchants.yaml"}``). Files load
    through the point's context (a copy beside the scenario first), once per point; ``use``
    marks the placeholders under a data path as read, so outputs and ``strict`` see exactly
    those (``used``). ``unlisted``: data paths ``use`` never lists, values the question reports
    in its own way (a rule module's ``procedure``, listed as the rule option it describes)."""

    def __init__(self, ctx, files: dict[str, str], unlisted: frozenset[str] = frozenset()):
        self.ctx = ctx
        self.files = files
        self.unlisted = unlisted
        self.used: list[Placeholder] = []
        self._used_keys: set[tuple[str, str]] = set()     # (path, file) of ``used``: O(1) membership
        self._files: dict[str, tuple[Any, list[Placeholder]]] = {}

    def _file(self, relpath: str) -> tuple[Any, list[Placeholder]]:
        if relpath not in self._files:
            self._files[relpath] = self.ctx.load(relpath, "")
        return self._files[relpath]

    def get(self, key: str) -> Any:
        """The plain value of top-level data key ``key``."""
        data, _ = self._file(self.files[key])
        if not isinstance(data, dict) or key not in data:
            raise DataError(f"{self.files[key]}: missing top-level key {key!r}")
        return data[key]

    def _relpath(self, key_path: str) -> str:
        return self.files[key_path.split(".")[0].split("[")[0]]

    def value_at(self, key_path: str) -> Any:
        """The plain value at data path ``key_path`` (``combat.reload_module``); None when absent."""
        top, *rest = key_path.split(".")
        value = self.get(top)
        for key in rest:
            if not isinstance(value, dict) or key not in value:
                return None
            value = value[key]
        return value

    def wrapper_at(self, key_path: str, relpath: str | None = None) -> Placeholder | None:
        """The ``{ph: ..}`` / ``{ex: ..}`` written exactly at ``key_path`` (used or not); None when
        the value there is written plainly (or absent)."""
        _, found = self._file(relpath or self._relpath(key_path))
        return next((ph for ph in found if ph.path == key_path), None)

    def use(self, key_path: str, relpath: str | None = None) -> None:
        """Mark the data at ``key_path`` (``combat.attack_module``, ``convoys[0]``) as used:
        its placeholders join ``used``."""
        relpath = relpath or self._relpath(key_path)
        _, found = self._file(relpath)
        for ph in found:
            if (ph.path, ph.source) not in self._used_keys and is_under(ph.path, key_path) \
                    and ph.path not in self.unlisted:
                self._used_keys.add((ph.path, ph.source))
                self.used.append(ph)

