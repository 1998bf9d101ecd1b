"""``analyzer validate``: scenario files checked as ``run`` checks them, without running them."""
from __future__ import annotations

from typing import List

import typer

from analyzer.cli.common import check_points, err, load_all


def validate(targets: List[str] = typer.Argument(..., help="Scenario files, folders or globs.")):
    """Check scenario files without running them (exit code 2 on the first error)."""
    for sc in load_all(targets):
        check_points(sc)                 # exactly what run checks before computing
        err.print(f"[green]ok[/] {sc.path} ({sc.spec.game}/{sc.spec.question}, {len(sc.points)} point(s))")
