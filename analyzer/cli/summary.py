"""How a run's results are shown on the console: the summary table of ``run`` and ``exact`` (as
wide as the terminal, no cell wrapped) and the placeholders and example-derived values a result
used (every command that computes)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

from rich.markup import escape
from rich.table import Table

from analyzer.cli.common import err, out
from analyzer.outputs.notes import labelled_notes


def natural_key(text: str) -> list:
    """Sort key reading digit runs as numbers ("6 dice" before "10 dice")."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def _fmt(s: dict) -> str:
    """``mean ± se [CI]``; the bare value when the interval has no width (an exact answer); a
    dash for the CI of a single trial (NaN bounds: one trial gives no interval)."""
    if s["ci_low"] is None or s["ci_low"] != s["ci_low"]:   # NaN (null in JSON): no CI at n = 1
        return f"{s['mean']:.6g} ± —  [—: one trial gives no CI]"
    if s["ci_low"] == s["ci_high"]:
        return f"{s['mean']:.6g}"
    return f"{s['mean']:.4g} ± {s['se']:.2g}  [{s['ci_low']:.4g}, {s['ci_high']:.4g}]"


def _cell(s: dict, mc: bool) -> str:
    """One compact cell: ``mean±se`` (Monte Carlo), ``mean±—`` for one trial, ``mean [low,
    high]`` when every trial agreed (se 0, the CI still has width), or the exact value."""
    if not mc:
        return f"{s['mean']:.4g}"
    if s["se"] is None or s["se"] != s["se"] or s["ci_low"] is None:
        return f"{s['mean']:.4g}±—"
    if s["ci_low"] == s["ci_high"]:
        return f"{s['mean']:.4g}"
    if s["se"] == 0:
        return f"{s['mean']:.4g} [{s['ci_low']:.3g}, {s['ci_high']:.3g}]"
    return f"{s['mean']:.4g}±{s['se']:.2g}"


def _table_width(columns: list[list[str]]) -> int:
    """Width rich needs for these columns (header + cells) without wrapping any cell."""
    return 1 + sum(max(len(c) for c in col) + 3 for col in columns)


#: the most metrics shown one row each (one column per point): more would scroll off a screen
MAX_METRIC_ROWS = 40


def _summary_table(summary: dict, width: int) -> tuple[Table, str]:
    """The summary as a table no wider than ``width`` (so no cell wraps): one metric per
    row for a single point; otherwise one row per point with a column per metric when they all
    fit, else one row per metric with a column per point (headed by its swept values) when that
    fits (at most :data:`MAX_METRIC_ROWS` metrics), else as many metric columns as fit (the
    primary first), or, when even one does not fit, one row per (point, metric). Returns the table and what was left out ("" when nothing)."""
    points = summary["points"]
    mc = summary["mode"] == "monte_carlo"
    title = f"{summary['scenario']} ({summary['game']}/{summary['question']}, {summary['mode']})"
    table = Table(title=title, title_justify="left")
    names = list(points[0]["metrics"])
    if len(points) == 1:
        pt = points[0]
        full = [_fmt(pt["metrics"][n]) for n in names]
        use_full = _table_width([["metric"] + names, ["mean ± se  [95% CI]"] + full]) <= width
        table.add_column("metric")
        table.add_column(("mean ± se  [95% CI]" if use_full else "mean±se") if mc else "exact")
        for name, text in zip(names, full):
            table.add_row(name, text if use_full else _cell(pt["metrics"][name], mc))
        return table, "" if use_full or not mc else "95% CIs in summary.json / points.parquet"
    swept = list(points[0]["swept"])
    swept_cols = [[c] + [str(pt["swept"][c]) for pt in points] for c in swept]
    metric_cols = {n: [n + (" ±se" if mc else "")] + [_cell(pt["metrics"][n], mc) for pt in points] for n in names}
    primary = summary.get("primary_metric")
    order = ([primary] if primary in metric_cols else []) + [n for n in names if n != primary]
    shown: list[str] = []
    for name in order:
        if _table_width(swept_cols + [metric_cols[n] for n in shown + [name]]) <= width:
            shown.append(name)
    if len(shown) < len(names) <= MAX_METRIC_ROWS:
        # a few points and many metrics: one row per metric, one column per point shows them all
        heads = ["\n".join(str(pt["swept"][c]) for c in swept) for pt in points]
        cols = [["\n".join(swept)] + [n + (" ±se" if mc else "") for n in names]] + \
            [[head] + [_cell(pt["metrics"][n], mc) for n in names] for head, pt in zip(heads, points)]
        if _table_width([[line for c in col for line in c.split("\n")] for col in cols]) <= width:
            for i, col in enumerate(cols):
                table.add_column(col[0], justify="left" if i == 0 else "right")
            for r in range(1, len(names) + 1):
                table.add_row(*[col[r] for col in cols])
            return table, ""
    if shown:
        shown = [n for n in names if n in shown]        # the question's own metric order
        for col in swept:
            table.add_column(col)
        for name in shown:
            table.add_column(metric_cols[name][0], justify="right")
        for i, pt in enumerate(points):
            table.add_row(*[str(pt["swept"][c]) for c in swept], *[metric_cols[n][i + 1] for n in shown])
        hidden = len(names) - len(shown)
        return table, f"{hidden} more metric(s) in summary.json / points.parquet (a wider terminal shows more)" \
            if hidden else ""
    table.add_column("point")
    table.add_column("metric")
    table.add_column("mean±se" if mc else "exact", justify="right")
    for pt in points:
        label = ", ".join(f"{c}={pt['swept'][c]}" for c in swept)
        for n in names:
            table.add_row(label, n, _cell(pt["metrics"][n], mc))
            label = ""
    return table, ""


def print_summary(summary: dict, run_dir: Optional[Path], max_rows: int = 0) -> None:
    """The answer on stdout (table, notes, the folder written and its report); the placeholders
    used, on stderr. ``max_rows`` > 0: the first that many sweep points (and their notes) only."""
    points = summary["points"]
    hidden_points = len(points) - max_rows if 0 < max_rows < len(points) else 0
    if hidden_points:
        points = points[:max_rows]
        summary = {**summary, "points": points}
    table, left_out = _summary_table(summary, out.width)
    trials = points[0]["trials"]
    caption = f"{trials:,} trials per point" if trials else "exact"
    if summary["placeholders"]:
        caption += f" · {len(summary['placeholders'])} PLACEHOLDER value(s) used (not in the rule source)"
    table.caption = caption
    out.print(table)
    if hidden_points:
        out.print(f"  ({hidden_points} more sweep point(s) not shown: --rows 0 shows all; every point is in "
                  f"answers.parquet, points.parquet and report.html)", highlight=False)
    if left_out:
        out.print(f"  ({left_out})", highlight=False)
    for note in labelled_notes(points):      # each point's own notes labelled with its swept values
        out.print(f"  note: {note}", highlight=False, markup=False)
    print_provenance(summary["placeholders"], summary.get("example_values", []))
    if run_dir is not None:      # --out is the user's text: "[/]" in it raised MarkupError after the run
        out.print(f"[green]wrote[/] {escape(str(run_dir))}", soft_wrap=True)   # a path is never wrapped
        if (Path(run_dir) / "report.html").is_file():
            out.print(f"  report: {escape(str(Path(run_dir) / 'report.html'))}", highlight=False, soft_wrap=True)


SHOWN_VALUES = 12
_ESTABLISHES = {"exact": "fixed by the example", "at_most": "the example only shows it is at most this",
                "at_least": "the example only shows it is at least this"}


def print_provenance(placeholders: list[dict], examples: list[dict], where: str = "summary.json") -> None:
    """The placeholders and example-derived values a run used (the first few of each)."""
    if placeholders:
        err.print(f"[yellow]{len(placeholders)} placeholder(s) used (values the rule sources do not give; "
                  f"replace them with your copy of the game):[/]")
        for ph in placeholders[:SHOWN_VALUES]:
            note = f" — {ph['note']}" if ph.get("note") else ""
            err.print(f"  {ph['path']} = {ph['value']!r}{note}", highlight=False, markup=False)
        if len(placeholders) > SHOWN_VALUES:
            err.print(f"  ... and {len(placeholders) - SHOWN_VALUES} more ({where})")
    if examples:
        err.print(f"[yellow]{len(examples)} value(s) derived from worked examples of the source:[/]")
        for ex in examples[:SHOWN_VALUES]:
            what = _ESTABLISHES.get(ex.get("establishes", "exact"), "")
            err.print(f"  {ex['path']} = {ex['value']!r} ({what})", highlight=False, markup=False)
        if len(examples) > SHOWN_VALUES:
            err.print(f"  ... and {len(examples) - SHOWN_VALUES} more ({where})")
