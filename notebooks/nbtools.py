"""Small helpers the notebooks share: trial counts, scenario files, CI text, placeholder lists.

Everything that computes goes through the public API (``analyzer.core.scenario.load``,
``analyzer.api.run`` / ``exact`` / ``compare``); this module only chooses trial counts, writes
scenario variants as YAML files (the way a user writes them) and formats what the results carry.
``ANALYZER_QUICK=1`` in the environment selects the small trial counts (the tests set it).
"""
from __future__ import annotations

import io
import os
import tempfile
from collections import defaultdict
from pathlib import Path

import pandas as pd
import yaml
from IPython.display import Image, Markdown, display

from analyzer import api
from analyzer.core import scenario
from analyzer.core.questions import SCENARIO_ROOT

#: True when the notebook runs with small trial counts (``ANALYZER_QUICK=1``).
QUICK = os.environ.get("ANALYZER_QUICK") == "1"
#: Scenario variants and run folders written by a notebook go here (removed when the kernel exits).
_WORK = tempfile.TemporaryDirectory(prefix="analyzer-notebook-")
WORK = Path(_WORK.name)


def trials(full: int, quick: int) -> int:
    """``full`` trials per point, or ``quick`` with ``ANALYZER_QUICK=1``."""
    return quick if QUICK else full


def shipped(game: str, name: str) -> Path:
    """A shipped scenario file (the scenarios travel with the package)."""
    return SCENARIO_ROOT / game / name


def read_yaml(path: Path) -> dict:
    return yaml.safe_load(Path(path).read_text(encoding="utf-8"))


def write_scenario(doc: dict, name: str) -> Path:
    """Write a scenario (a dict as it would be written in YAML) to a file and return its path.
    Game data is found as for any scenario: beside the file first, then the shipped data."""
    path = WORK / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def load(doc_or_path, name: str | None = None, **overrides) -> scenario.Scenario:
    """``scenario.load`` of a file, or of a dict written to a file first."""
    if isinstance(doc_or_path, dict):
        doc_or_path = write_scenario(doc_or_path, name or doc_or_path.get("name", "scenario"))
    return scenario.load(doc_or_path, **overrides)


def ci(s, digits: int = 3, signed: bool = False) -> str:
    """``mean [low, high]`` of a MetricSummary (or of its dict); exact values (se 0) alone."""
    d = s if isinstance(s, dict) else s.as_dict()
    f = f"{{:+.{digits}f}}" if signed else f"{{:.{digits}f}}"
    if d["se"] == 0:
        return f.format(d["mean"])
    return f"{f.format(d['mean'])} [{f.format(d['ci_low'])}, {f.format(d['ci_high'])}]"


def table(results, metrics: list[str], swept: bool = True) -> pd.DataFrame:
    """One row per sweep point: the swept values, then mean, CI low/high of each metric."""
    rows = []
    for r in results:
        row = {k: (v if isinstance(v, (int, float, str, bool)) else str(v)) for k, v in r.point.swept.items()} \
            if swept else {}
        for m in metrics:
            s = r.summaries[m]
            row[m] = s.mean
            if s.se:
                row[f"{m} ci_low"], row[f"{m} ci_high"] = s.ci_low, s.ci_high
        rows.append(row)
    return pd.DataFrame(rows)


def _short_source(source: str) -> str:
    if not source or source in ("default", "rule module"):
        return source or "scenario"
    p = Path(source)
    try:
        return p.resolve().relative_to(SCENARIO_ROOT.resolve()).as_posix()
    except ValueError:
        return p.name


def placeholders(results) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(placeholders, example-derived values) the results used: one row per distinct value with
    its path, value, the file it comes from (relative to the shipped scenarios) and note."""
    seen, rows = set(), {"placeholder": [], "example": []}
    for r in results:
        for ph in r.placeholders:
            key = (ph.path, ph.source, repr(ph.value))
            if key in seen:
                continue
            seen.add(key)
            rows["example" if ph.is_example else "placeholder"].append(
                {"path": ph.path, "value": ph.value, "file": _short_source(ph.source), "note": ph.note,
                 **({"establishes": ph.establishes} if ph.is_example else {})})
    return pd.DataFrame(rows["placeholder"]), pd.DataFrame(rows["example"])


def show_placeholders(results, full_list_up_to: int = 40) -> None:
    """List the placeholders the results depend on: every one when there are few, otherwise
    how many come from each file with the first paths (the full list: ``placeholders(results)``)."""
    ph, ex = placeholders(results)
    display(Markdown(f"**{len(ph)} placeholder value(s)** (not in the rule source) and **{len(ex)} value(s) derived "
                     f"from worked examples** of the source were used."))
    for what, df in (("placeholders", ph), ("example-derived values", ex)):
        if df.empty:
            continue
        if len(df) <= full_list_up_to:
            display(df)
            continue
        groups = defaultdict(list)
        for row in df.itertuples(index=False):
            groups[row.file].append(row.path)
        summary = pd.DataFrame([{"file": f, what: len(paths), "first paths": ", ".join(paths[:4]) +
                                 (", ..." if len(paths) > 4 else "")} for f, paths in sorted(groups.items())])
        display(summary)


def show_figures(results, scenario_obj, figures: list[str], mode: str = "monte_carlo", width: int = 1000) -> None:
    """Write the run folder the CLI would write (``api.write_run``, into a temporary folder) and
    display some of the tool's own figures from it, scaled down for the notebook."""
    from analyzer.docgen import shrink_png
    run_dir, _ = api.write_run(scenario_obj, results, WORK / "runs", mode=mode, threads=api.set_threads(None),
                               wall_seconds=0.0)
    for figure in figures:
        display(Image(data=shrink_png((run_dir / figure).read_bytes(), width=width)))


def figure_png(fig, dpi: int = 80) -> Image:
    """A matplotlib figure as a compact PNG (palette, moderate dpi) for the notebook."""
    import matplotlib.pyplot as plt

    from analyzer.docgen import shrink_png
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return Image(data=shrink_png(buf.getvalue(), width=10_000))


def errorbars(summaries) -> tuple[list[float], list[list[float]]]:
    """(means, [[below], [above]]) of MetricSummary objects for matplotlib's ``yerr``/``xerr``
    (a Wilson interval at 0 or 1 can sit a rounding error past its mean: clipped to 0)."""
    means = [s.mean for s in summaries]
    below = [max(s.mean - s.ci_low, 0.0) for s in summaries]
    above = [max(s.ci_high - s.mean, 0.0) for s in summaries]
    return means, [below, above]
