"""``analyzer plot``: a run folder's plots, re-rendered from its tables."""
from __future__ import annotations

from pathlib import Path

import typer

from analyzer.cli.common import err, fail, plain


def plot(
    run_dir: Path = typer.Argument(..., help="A run folder written by 'analyzer run' or 'exact'."),
    svg: bool = typer.Option(False, help="Also write SVG."),
):
    """Re-render the plots of a run folder from its parquet tables."""
    from analyzer.core.errors import RunFolderError
    from analyzer.core.paths import UnsafePathError, entry_kind
    from analyzer.outputs.plots import PlotError, render
    if not run_dir.is_dir() or entry_kind(run_dir, "points.parquet") is None \
            or entry_kind(run_dir, "plotmeta.json") is None:
        fail(f"{run_dir}: not a run folder (needs points.parquet and plotmeta.json)")
    try:
        written = render(run_dir, ("png", "svg") if svg else ("png",))
    except (PlotError, RunFolderError, UnsafePathError) as e:    # a damaged folder: refused by name
        fail(f"{run_dir}: {e}")
    except OSError as e:                                          # the folder cannot be written
        fail(f"{run_dir}: cannot write the plots: {e.strerror or e}")
    for p in written:
        err.print(f"[green]wrote[/] {plain(p)}", highlight=False)
