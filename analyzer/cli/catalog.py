"""``analyzer list``: the catalog of games and questions (read from its cache: no game is imported
when the cache is current)."""
from __future__ import annotations

import json
from typing import Optional

import typer
from rich.console import Console

from analyzer.cli.common import fail, plain


def list_(
    game: Optional[str] = typer.Argument(None, help="Only this game."),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable listing on stdout."),
):
    """Games, questions, parameters (types, defaults, placeholder defaults), rule options, metrics."""
    from analyzer.outputs.catalog_cache import cached_catalog
    doc = cached_catalog(game)
    if game is not None and not doc:
        from analyzer.core.errors import suggest
        games = sorted(cached_catalog())
        fail(f"game: unknown game {game!r}{suggest(game, games)}; allowed: {', '.join(games)}")
    if json_out:
        typer.echo(json.dumps(doc, indent=2, default=str))
        return
    out = Console()              # the listing is the command's output: stdout (pipe it to less or grep)
    # every string of the listing comes from the cache file: printed with plain() (markup escaped,
    # control characters shown), so a cached '[link=...]' or a raw ESC never reaches the terminal
    lines = []                   # one print call: rich's per-call set-up was a third of the command's time
    for g, qs in doc.items():
        lines.append(f"[bold]{plain(g)}[/]")
        for q in qs:
            lines.append(f"  [cyan]{plain(q['question'])}[/] — {plain(q['summary'])}" +
                         (" \\[exact mode]" if q["exact"] else ""))
            if q.get("metrics"):
                lines.append(f"      metrics (default params): {plain(', '.join(q['metrics']))}")
            for p in q["params"]:
                ph = "  [yellow]PLACEHOLDER default[/]" if p.get("placeholder") else ""
                lines.append(f"      {plain(p['path'])}: {plain(p['type'])} = {plain(repr(p['default']))}{ph}  "
                             f"{plain(p.get('description', ''))}")
            for o in q["rule_options"]:
                what_if = (plain(f" [what-if, not a reading of the source: {', '.join(o['what_if'])}]")
                           if o["what_if"] else "")
                lines.append(f"      rules.{plain(o['name'])}: {plain(' | '.join(o['values']))} "
                             f"(default {plain(o['default'])}){what_if} {plain(o['doc'])}")
    out.print("\n".join(lines), highlight=False, soft_wrap=True)
