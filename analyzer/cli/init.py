"""``analyzer init``: a runnable example scenario and the game data it reads, copied to edit."""
from __future__ import annotations

from pathlib import Path
from typing import List

import typer

from analyzer.cli.common import api, err, fail, plain


def init(
    args: List[str] = typer.Argument(..., metavar="GAME [QUESTION] DIR",
                                     help="The game (see 'analyzer list'), optionally one of its questions, and the "
                                          "folder to write into."),
    force: bool = typer.Option(False, help="Overwrite files that already exist in DIR."),
):
    """Copy a runnable example scenario (one per question, or QUESTION's) and every game data
    file it reads into DIR. Edit the data files there: a file beside a scenario overrides the
    shipped one, and 'strict: true' in the scenario proves no placeholder is left."""
    if len(args) not in (2, 3):
        fail(f"init: expected GAME [QUESTION] DIR, got {len(args)} argument(s)")
    game, question, dest = (args[0], None, Path(args[1])) if len(args) == 2 else (args[0], args[1], Path(args[2]))
    written = api.init_example(game, question, dest, force=force)
    for p in written:
        err.print(f"[green]wrote[/] {plain(p)}", highlight=False)
    scen = [p for p in written if p.parent == dest]
    err.print(f"run it: analyzer run {plain(' '.join(str(p) for p in scen))}", highlight=False)
