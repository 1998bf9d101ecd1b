"""``analyzer schema``: the JSON Schema of scenario files, for editors (docs/formats.md)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from analyzer.cli.common import err, fail, plain


def schema(out: Optional[Path] = typer.Option(
        None, "--out", "-o", help="Write the schema to this file (atomically) instead of printing it.")):
    """Print (or write) the JSON Schema (draft 2020-12) of scenario files, for completion and errors
    as you type: every top-level key, and for each game and question its params, rule options (each
    an enum of its readings) and sweepable paths. VS Code with the YAML extension
    (redhat.vscode-yaml): write it once (analyzer schema --out scenario.schema.json), then make the
    first line of a scenario file  # yaml-language-server: $schema=./scenario.schema.json  (a path
    relative to that file, or absolute), or map all scenarios at once in the settings:
    "yaml.schemas": {"./scenario.schema.json": "scenarios/**/*.yaml"}. The loader (analyzer
    validate) has the last word: it also checks what the schema leaves open (required parameters,
    which a sweep may supply; metric names; plot axes)."""
    from analyzer.core.paths import UnsafePathError, write_atomic
    from analyzer.core.schema import scenario_json_schema
    text = json.dumps(scenario_json_schema(), indent=1, ensure_ascii=False) + "\n"
    if out is None:
        typer.echo(text, nl=False)
        return
    data = text.encode("utf-8")
    try:
        path = write_atomic(out.parent, out.name, lambda fh: fh.write(data))
    except (OSError, UnsafePathError) as e:
        fail(f"{out}: cannot write the schema: {e.strerror if isinstance(e, OSError) and e.strerror else e}")
    err.print(f"[green]wrote[/] {plain(path)}", highlight=False)
