"""``analyzer init``: a runnable example scenario and the game data it reads, copied to edit."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from analyzer.cli.common import api, err, fail, plain


def init(
    args: List[str] = typer.Argument(..., metavar="GAME [QUESTION] DIR",
                                     help="The game (see 'analyzer list'), optionally one of its questions, and the "
                                          "folder to write into."),
    force: bool = typer.Option(False, help="Overwrite files that already exist in DIR."),
    example: Optional[str] = typer.Option(None, "--example", metavar="NAME",
                                          help="Copy this shipped example (its file name; 'analyzer examples GAME' "
                                               "lists them) instead of the first of each question."),
):
    """Copy a runnable example scenario (one per question, or QUESTION's) and every game data
    file it reads into DIR. Edit the data files there: a file beside a scenario overrides the
    shipped one, and 'strict: true' in the scenario proves no placeholder is left."""
    if len(args) not in (2, 3):
        fail(f"init: expected GAME [QUESTION] DIR, got {len(args)} argument(s)")
    game, question, dest = (args[0], None, Path(args[1])) if len(args) == 2 else (args[0], args[1], Path(args[2]))
    written = api.init_example(game, question, dest, force=force, example=example)
    for p in written:
        err.print(f"[green]wrote[/] {plain(p)}", highlight=False)
    scen = [p for p in written if p.parent == dest and _is_scenario(p)]     # not the data files beside them
    err.print(f"run it: analyzer run {plain(' '.join(str(p) for p in scen))}", highlight=False)
    if example is None:
        err.print(f"other examples: analyzer examples {plain(game)}; copy one with --example NAME", highlight=False)


def _is_scenario(path: Path) -> bool:
    """A scenario file names its game at the top (a data file does not)."""
    from analyzer.core.gamedata import read_yaml
    doc = read_yaml(path)
    return isinstance(doc, dict) and "game" in doc and "question" in doc


def examples(
    game: Optional[str] = typer.Argument(None, help="Only this game's examples (default: every game)."),
    json_out: bool = typer.Option(False, "--json", help="Print [{game, question, example, name, description, "
                                                       "exact}] to stdout."),
):
    """The shipped example scenarios: game, question, the example's name (for 'analyzer init GAME
    --example NAME DIR'), what it asks, and whether it has an exact mode."""
    import json

    from rich.console import Console
    from rich.table import Table
    rows = []
    for sc in api.examples(game):
        description = " ".join((sc.spec.description or "").split())
        rows.append({"game": sc.spec.game, "question": sc.spec.question, "example": sc.path.stem,
                     "name": sc.name, "description": description,
                     "exact": bool(sc.question.supports_exact)})
    if json_out:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table(title="shipped examples (analyzer init GAME --example NAME DIR)", title_justify="left")
    for col in ("game", "question", "example", "exact", "what it asks"):
        table.add_column(col, overflow="fold", no_wrap=col == "example")     # a name to copy stays whole
    for r in rows:
        short = r["description"] if len(r["description"]) <= 90 else r["description"][:89] + "…"
        table.add_row(r["game"], r["question"], r["example"], "yes" if r["exact"] else "", short or r["name"])
    Console().print(table)          # the answer: stdout (progress and diagnostics go to stderr)
