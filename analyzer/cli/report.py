"""``analyzer report``: a run's or a comparison's report.html, rebuilt from its folder."""
from __future__ import annotations

from pathlib import Path

import typer

from analyzer.cli.common import err, fail, plain


def report(run_dir: Path = typer.Argument(..., help="A run folder (analyzer run / exact) or a comparison folder.")):
    """Rebuild report.html, the self-contained page of a run: question, parameters, metrics with
    CIs, plots, placeholders, rule options, notes and provenance."""
    from analyzer.core.paths import entry_kind
    from analyzer.outputs.report import write_report
    # (a link or FIFO at either name counts as there: reading it is then refused, by name)
    if not run_dir.is_dir() or (entry_kind(run_dir, "summary.json") is None
                                and entry_kind(run_dir, "comparison.json") is None):
        fail(f"{run_dir}: not a run folder (needs summary.json, or comparison.json)")
    try:
        path = write_report(run_dir)
    except (OSError, ValueError) as e:    # a damaged folder (RunFolderError: a ValueError), or a failed write
        fail(f"{run_dir}: cannot build the report: {e}")
    err.print(f"[green]wrote[/] {plain(path)}", highlight=False)
