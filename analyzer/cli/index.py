"""``analyzer index``: every run below a results folder in one table (``index.parquet``) and one page
(``index.html``)."""
from __future__ import annotations

import json
from pathlib import Path

import typer

from analyzer.cli.common import err, fail, plain


def index(
    results_dir: Path = typer.Argument(Path("results"), help="A results folder: <scenario>/<run-id>/ run folders "
                                       "below it (analyzer run's --out)."),
    json_out: bool = typer.Option(False, "--json", help="Print what was indexed as JSON to stdout."),
):
    """Combine every complete run's answers.parquet below RESULTS_DIR into RESULTS_DIR/index.parquet
    (rows keyed by scenario and run) and write RESULTS_DIR/index.html: each scenario's latest report
    and answer, then every run. Runs without answers.parquet (older versions), incomplete or damaged
    ones are listed with the reason and add no rows. 'analyzer run' does this by itself after a run
    of several scenarios."""
    from analyzer.outputs.index import INDEX_PAGE, INDEX_TABLE, build_index
    try:
        idx = build_index(results_dir)
    except (OSError, ValueError) as e:      # not a folder (RunFolderError is a ValueError), a failed write
        fail(f"{results_dir}: cannot index it: {e}")
    if json_out:
        typer.echo(json.dumps({"table": str(results_dir / INDEX_TABLE), "page": str(results_dir / INDEX_PAGE),
                               "rows": idx.rows, "runs": [r.rel for r in idx.used],
                               "skipped": {r.rel: r.skipped for r in idx.runs if r.skipped}}, indent=2))
        return
    print_index(idx)


def print_index(idx) -> None:
    from analyzer.outputs.index import INDEX_PAGE, INDEX_TABLE
    skipped = [r for r in idx.runs if r.skipped]
    typer.echo(f"{len(idx.used)} run(s), {idx.rows} rows: {plain(idx.root / INDEX_TABLE)}")
    typer.echo(f"index page: {plain(idx.root / INDEX_PAGE)}")
    for r in skipped:
        err.print(f"  not in the table: {plain(r.rel)}: {plain(r.skipped)}", highlight=False, markup=False)
