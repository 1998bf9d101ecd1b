"""Reading a run or comparison folder back (``analyzer report``, ``analyzer plot``).

A run folder is data someone may have edited, damaged or prepared: every file is read through
:func:`analyzer.core.paths.read_json` / :func:`analyzer.core.paths.read_regular` (no link followed, regular
files only, a size cap) and then checked for the shape ``analyzer run`` / ``compare`` writes, so
a damaged folder (``points: []``, ``metrics: {}``, a JSON list, ``swept: null``, ``trials:
"<script>"``) is refused in one line naming the file and the field
(:class:`analyzer.core.errors.RunFolderError`), never a traceback half-way through drawing.

Each document's ``format_version`` is checked first (:mod:`analyzer.core.formats`): absent (a
folder written before versions existed) or one this analyzer reads, else refused in one line.

Only what the readers use is checked, and only as strictly as they need: a field that is only
shown (a name, a seed, a note) may hold any scalar, since every value is escaped where it is
written (``report.html``) or drawn literally (the plots); a field that is computed with (means
and bounds, trial counts, the swept parameters, metric names) must have its exact type.
"""
from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from analyzer.core import paths
from analyzer.core.errors import RunFolderError, show
from analyzer.core.formats import (COMPARISON_JSON, MANIFEST_JSON, PLOTMETA_JSON, SENSITIVITY_JSON, SUMMARY_JSON,
                                   FileFormat, version_problem)

SUMMARY, MANIFEST, PLOTMETA, COMPARISON = (fmt.file for fmt in (SUMMARY_JSON, MANIFEST_JSON, PLOTMETA_JSON,
                                                                 COMPARISON_JSON))
POINTS_TABLE, DISTRIBUTIONS_TABLE = "points.parquet", "distributions.parquet"
ANSWERS_TABLE = "answers.parquet"  # analyzer.outputs.answers: the tidy long table
SENSITIVITY = SENSITIVITY_JSON.file
MODES = ("monte_carlo", "exact")


def _fail(file: str, field: str, message: str):
    raise RunFolderError(file, field, message)


def _type(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "text", bool: "true/false", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def _dict(value: Any, file: str, field: str, *, nonempty: bool = False) -> dict:
    if not isinstance(value, dict):
        _fail(file, field, f"expected a mapping, got {_type(value)}")
    if nonempty and not value:
        _fail(file, field, "is empty; expected at least one entry")
    for key in value:
        if not isinstance(key, str):       # (JSON keys are text; a parsed document cannot fail here)
            _fail(file, field, f"key {show(key)} is not text")
    return value


def _list(value: Any, file: str, field: str, *, nonempty: bool = False) -> list:
    if not isinstance(value, list):
        _fail(file, field, f"expected a list, got {_type(value)}")
    if nonempty and not value:
        _fail(file, field, "is empty; expected at least one entry")
    return value


def _text(value: Any, file: str, field: str) -> str:
    if not isinstance(value, str):
        _fail(file, field, f"expected text, got {_type(value)} {show(value)}")
    return value


def _scalar(value: Any, file: str, field: str) -> Any:
    """A value that is only shown: text, a number, true/false or null (not a list or mapping)."""
    if isinstance(value, (dict, list)):
        _fail(file, field, f"expected text or a number, got {_type(value)}")
    return value


def _count(value: Any, file: str, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        _fail(file, field, f"expected a whole number >= 0, got {show(value)}")
    return value


def _number(value: Any, file: str, field: str, *, null: bool = True) -> float | None:
    """A statistic: a number (NaN allowed: JSON ``NaN``), or null where ``null`` (no se or CI
    at one trial)."""
    if value is None and null:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        _fail(file, field, f"expected a number{' or null' if null else ''}, got {show(value)}")
    return value


def _key(doc: dict, key: str, file: str, where: str) -> Any:
    if key not in doc:
        _fail(file, f"{where}.{key}" if where else key, "is missing")
    return doc[key]


def _values(doc: dict, key: str, file: str, *, required: bool, prefix: str = "") -> list[dict]:
    """A placeholders / example_values list (of the document, or of ``prefix``, e.g.
    ``points[0]``): mappings with ``path`` and ``value``."""
    if key not in doc and not required:
        return []
    field = f"{prefix}.{key}" if prefix else key
    items = _list(_key(doc, key, file, prefix), file, field)
    for i, v in enumerate(items):
        where = f"{field}[{i}]"
        _dict(v, file, where)
        _scalar(_key(v, "path", file, where), file, f"{where}.path")
        _key(v, "value", file, where)
        for opt in ("note", "source", "establishes"):
            if opt in v:
                _scalar(v[opt], file, f"{where}.{opt}")
    return items


def _read(run_dir: Path, name: str) -> Any:
    try:
        return paths.read_json(run_dir, name)
    except FileNotFoundError:
        _fail(f"{paths.printable(Path(run_dir) / name)}", "", "is missing")


def _document(run_dir: Path, fmt: FileFormat) -> dict:
    """The mapping ``fmt.file`` holds, in a format version this analyzer reads."""
    doc = _dict(_read(run_dir, fmt.file), fmt.file, "(the document)")
    problem = version_problem(doc, fmt)
    if problem:
        _fail(fmt.file, fmt.key, problem)
    return doc


def load_summary(run_dir: Path) -> dict:
    """``summary.json``, checked: scenario, game, question, seed, mode; ``points`` a non-empty
    list of mappings, each with ``swept`` (the same parameters at every point), ``params``,
    ``trials`` and ``metrics`` (non-empty, at every point at least point 0's names, each with
    numeric (or null) ``mean``, ``se``, ``ci_low`` and ``ci_high``); ``placeholders`` and ``example_values``."""
    f = SUMMARY
    doc = _document(run_dir, SUMMARY_JSON)
    for key in ("scenario", "game", "question", "seed"):
        _scalar(_key(doc, key, f, ""), f, key)
    mode = _key(doc, "mode", f, "")
    if mode not in MODES:
        _fail(f, "mode", f"got {show(mode)}; allowed: {', '.join(MODES)}")
    points = _list(_key(doc, "points", f, ""), f, "points", nonempty=True)
    swept_keys: list[str] | None = None
    names: list[str] | None = None
    for i, pt in enumerate(points):
        where = f"points[{i}]"
        _dict(pt, f, where)
        swept = _dict(_key(pt, "swept", f, where), f, f"{where}.swept")
        if swept_keys is None:
            swept_keys = list(swept)
        elif sorted(swept) != sorted(swept_keys):
            _fail(f, f"{where}.swept", f"has the parameters {sorted(swept)}; points[0] has {sorted(swept_keys)}")
        _dict(_key(pt, "params", f, where), f, f"{where}.params")
        _count(_key(pt, "trials", f, where), f, f"{where}.trials")
        metrics = _dict(_key(pt, "metrics", f, where), f, f"{where}.metrics", nonempty=True)
        if names is None:
            names = list(metrics)
        elif not set(names) <= set(metrics):     # the report's tables are point 0's metrics
            _fail(f, f"{where}.metrics", f"lacks {', '.join(sorted(set(names) - set(metrics)))} (points[0] has it)")
        for name, s in metrics.items():
            mw = f"{where}.metrics.{name}"
            _dict(s, f, mw)
            for stat in ("mean", "se", "ci_low", "ci_high"):
                _number(_key(s, stat, f, mw), f, f"{mw}.{stat}")
        if "notes" in pt:
            for j, note in enumerate(_list(pt["notes"], f, f"{where}.notes")):
                _scalar(note, f, f"{where}.notes[{j}]")
    if "notes" in doc:           # the labelled notes (written since issue 28; absent before)
        for j, note in enumerate(_list(doc["notes"], f, "notes")):
            _scalar(note, f, f"notes[{j}]")
    _values(doc, "placeholders", f, required=True)
    _values(doc, "example_values", f, required=False)
    return doc


#: manifest.json fields shown in the report's provenance table
PROVENANCE = ("seed", "mode", "trials", "reestimate_trials", "wall_seconds", "trials_per_second", "threads",
              "version", "git_commit", "created_utc", "python", "numpy", "numba", "scenario_file", "scenario_sha256")


def load_manifest(run_dir: Path) -> dict:
    """``manifest.json``, checked where the report reads it: the provenance fields are scalars,
    ``points`` (if there) a list of mappings whose ``rules`` are mappings, ``data_files`` (if
    there) a list of mappings with text ``path``, ``origin`` and ``sha256``, ``scenario_text``
    (if there) text."""
    f = MANIFEST
    doc = _document(run_dir, MANIFEST_JSON)
    for key in PROVENANCE:
        if key in doc:
            _scalar(doc[key], f, key)
    for i, pt in enumerate(_list(doc.get("points", []), f, "points")):
        _dict(pt, f, f"points[{i}]")
        if "rules" in pt:
            _dict(pt["rules"], f, f"points[{i}].rules")
    for i, d in enumerate(_list(doc.get("data_files") or [], f, "data_files")):
        _dict(d, f, f"data_files[{i}]")
        for key in ("path", "origin", "sha256"):
            _text(_key(d, key, f, f"data_files[{i}]"), f, f"data_files[{i}].{key}")
    if doc.get("scenario_text") is not None:
        _text(doc["scenario_text"], f, "scenario_text")
    return doc


def load_plotmeta(run_dir: Path, *, required: bool = True) -> dict:
    """``plotmeta.json``, checked: scenario, game, question, seed, mode; ``swept`` a list of
    parameter names; ``primary_metric`` text or null; ``metrics`` a non-empty list of mappings with text
    ``name``, ``label`` and ``kind``, true/false ``distribution`` and a list ``unaffected_by``;
    ``placeholders`` and ``example_values``; ``plots`` (if there) a list (its entries are checked
    by :func:`analyzer.core.plotspec.check_specs`). ``{}`` when missing and not ``required``."""
    f = PLOTMETA
    if not required and paths.entry_kind(run_dir, f) is None:
        return {}
    doc = _document(run_dir, PLOTMETA_JSON)
    for key in ("scenario", "game", "question", "seed"):
        _scalar(_key(doc, key, f, ""), f, key)
    for key in ("game", "question"):
        _text(doc[key], f, key)
    mode = _key(doc, "mode", f, "")
    if mode not in MODES:
        _fail(f, "mode", f"got {show(mode)}; allowed: {', '.join(MODES)}")
    swept = _list(_key(doc, "swept", f, ""), f, "swept")
    for i, s in enumerate(swept):
        _text(s, f, f"swept[{i}]")
    if len(set(swept)) != len(swept):
        _fail(f, "swept", f"names a parameter twice: {show(swept)}")
    metrics = _list(_key(doc, "metrics", f, ""), f, "metrics", nonempty=True)
    seen = set()
    for i, m in enumerate(metrics):
        where = f"metrics[{i}]"
        _dict(m, f, where)
        for key in ("name", "label", "kind"):
            _text(_key(m, key, f, where), f, f"{where}.{key}")
        if m["name"] in seen:
            _fail(f, f"{where}.name", f"{show(m['name'])} is listed twice")
        seen.add(m["name"])
        if not isinstance(_key(m, "distribution", f, where), bool):
            _fail(f, f"{where}.distribution", f"expected true or false, got {show(m['distribution'])}")
        for j, p in enumerate(_list(m.get("unaffected_by", []), f, f"{where}.unaffected_by")):
            _text(p, f, f"{where}.unaffected_by[{j}]")
    # (the question's primary metric: not always among a point's metrics, the readers then use the first)
    if _key(doc, "primary_metric", f, "") is not None:
        _text(doc["primary_metric"], f, "primary_metric")
    for key in ("placeholders", "example_values"):
        for i, v in enumerate(_values(doc, key, f, required=key == "placeholders")):
            _text(v["path"], f, f"{key}[{i}].path")
            if "establishes" in v:
                _scalar(v["establishes"], f, f"{key}[{i}].establishes")
    if "plots" in doc:
        _list(doc["plots"], f, "plots")
    if "params" in doc:
        _dict(doc["params"], f, "params")
    return doc


def load_table(run_dir: Path, name: str, columns: dict[str, str], min_rows: int = 1):
    """A parquet table of the folder as a DataFrame (read from its bytes: :func:`paths.read_regular`),
    with every column of ``columns`` present (``{"col": "numeric" | "any"}``) and at least
    ``min_rows`` rows."""
    import pandas as pd
    try:
        data = paths.read_regular(run_dir, name, paths.MAX_TABLE_BYTES)
    except FileNotFoundError:
        _fail(f"{paths.printable(Path(run_dir) / name)}", "", "is missing")
    try:
        table = pd.read_parquet(io.BytesIO(data))
    except Exception as e:  # noqa: BLE001 - pyarrow raises its own types for every damaged file
        why = (str(e).splitlines() or [""])[0][:160]
        _fail(name, "", f"is not a readable parquet table ({type(e).__name__}: {why})")
    for col, kind in columns.items():
        if col not in table.columns:
            _fail(name, col, "column is missing")
        if kind == "numeric" and not (pd.api.types.is_numeric_dtype(table[col])
                                      and not pd.api.types.is_bool_dtype(table[col])):
            _fail(name, col, f"expected a numeric column, got {table[col].dtype}")
    if len(table) < min_rows:
        _fail(name, "", f"has {len(table)} row(s); expected at least {min_rows}")
    return table


def load_plot_inputs(run_dir: Path):
    """``(plotmeta, points, distributions)`` of a run folder for :func:`analyzer.outputs.plots.render`:
    the points table has ``point``, ``trials``, every swept parameter and every metric's mean,
    se and CI bounds; the distributions table has ``point``, ``metric``, ``value`` and
    ``probability``."""
    meta = load_plotmeta(run_dir)
    cols = {"point": "numeric", "trials": "numeric", **{s: "any" for s in meta["swept"]}}
    for m in meta["metrics"]:
        cols.update({f"{m['name']}{suffix}": "numeric" for suffix in ("_mean", "_se", "_ci_low", "_ci_high")})
    points = load_table(run_dir, POINTS_TABLE, cols)
    dists = load_table(run_dir, DISTRIBUTIONS_TABLE,   # (no rows when no metric keeps its distribution)
                       {"point": "numeric", "metric": "any", "value": "numeric", "probability": "numeric"},
                       min_rows=0)
    return meta, points, dists


def load_comparison(run_dir: Path) -> dict:
    """``comparison.json``, checked: names, game, question, seed; ``points`` a non-empty list of
    mappings with ``point``, ``swept_a``, ``swept_b``, ``trials``, ``placeholders`` and ``metrics``
    (non-empty; each with ``a``, ``b`` and ``diff_b_minus_a`` holding numeric statistics)."""
    f = COMPARISON
    doc = _document(run_dir, COMPARISON_JSON)
    for key in ("name_a", "name_b", "game", "question", "seed"):
        _scalar(_key(doc, key, f, ""), f, key)
    for key in ("a", "b", "version", "git_commit", "created_utc"):
        if key in doc:
            _scalar(doc[key], f, key)
    points = _list(_key(doc, "points", f, ""), f, "points", nonempty=True)
    for i, pt in enumerate(points):
        where = f"points[{i}]"
        _dict(pt, f, where)
        _scalar(_key(pt, "point", f, where), f, f"{where}.point")
        _dict(_key(pt, "swept_a", f, where), f, f"{where}.swept_a")
        _dict(_key(pt, "swept_b", f, where), f, f"{where}.swept_b")
        _count(_key(pt, "trials", f, where), f, f"{where}.trials")
        _values(pt, "placeholders", f, required=True, prefix=where)
        metrics = _dict(_key(pt, "metrics", f, where), f, f"{where}.metrics", nonempty=True)
        for name, m in metrics.items():
            mw = f"{where}.metrics.{name}"
            _dict(m, f, mw)
            for side in ("a", "b", "diff_b_minus_a"):
                s = _dict(_key(m, side, f, mw), f, f"{mw}.{side}")
                _number(_key(s, "mean", f, f"{mw}.{side}"), f, f"{mw}.{side}.mean")
            for stat in ("ci_low", "ci_high"):
                _number(_key(m["diff_b_minus_a"], stat, f, f"{mw}.diff_b_minus_a"), f,
                        f"{mw}.diff_b_minus_a.{stat}")
    return doc



def load_sensitivity(run_dir: Path) -> dict:
    """``sensitivity.json``, checked: scenario, metric, base mean and trials; ``variants`` a list of
    mappings with ``what``, ``kind``, ``base``, ``value``, ``rank``, ``error`` and numeric ``effect``,
    ``se``, ``ci_low``, ``ci_high`` (NaN where the variant could not run); ``not_perturbed`` a list."""
    f = SENSITIVITY
    doc = _document(run_dir, SENSITIVITY_JSON)
    for key in ("scenario", "metric"):
        _scalar(_key(doc, key, f, ""), f, key)
    for key in ("game", "question", "seed", "created_utc"):
        if key in doc:
            _scalar(doc[key], f, key)
    _number(_key(doc, "base_mean", f, ""), f, "base_mean")
    _count(_key(doc, "trials", f, ""), f, "trials")
    for i, v in enumerate(_list(_key(doc, "variants", f, ""), f, "variants")):
        where = f"variants[{i}]"
        _dict(v, f, where)
        for key in ("what", "kind", "base", "value", "file", "error"):
            _scalar(_key(v, key, f, where), f, f"{where}.{key}")
        _count(_key(v, "rank", f, where), f, f"{where}.rank")
        for key in ("effect", "se", "ci_low", "ci_high"):
            _number(_key(v, key, f, where), f, f"{where}.{key}")
    _list(doc.get("not_perturbed", []), f, "not_perturbed")
    return doc
