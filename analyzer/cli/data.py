"""``analyzer data``: a player's data folder. ``data check DIR``: what is still a placeholder or
an example value in each data file below DIR, and what would block ``strict: true`` for each
scenario file there (its points prepared with ``strict`` forced on; no kernel runs)."""
from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console

from analyzer.cli.common import Group, plain, runner, scenario_mod

HELP = "A player's data folder: what is still a placeholder, and what blocks strict: true."

#: exit code when something would block ``strict: true`` (2 is an error, as for every command)
EXIT_BLOCKED = 1


def _value(value) -> str:
    return plain(json.dumps(value, default=str, ensure_ascii=False))


def _entry(ph, *, source: bool = False) -> dict:
    out = {"path": ph.path, "value": ph.value, "note": ph.note}
    if ph.is_example:
        out.update(establishes=ph.establishes, blocks_strict=ph.refused_by_strict)
    else:
        out["kind"] = "placeholder"
    if source:
        out["source"] = ph.source
        out["kind"] = ph.kind
    return out


def _rel(path: Path, root: Path) -> str:
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def _scenario_check(path: Path, root: Path) -> dict:
    """The points of one scenario file and what ``strict: true`` refuses at each (merged by path
    and source, with the points that use each)."""
    sc = scenario_mod.load(path)
    blocking: dict[tuple[str, str], dict] = {}
    for point, refused in runner.strict_refusals(sc):
        for ph in refused:
            entry = blocking.setdefault((ph.path, ph.source), {**_entry(ph, source=True), "points": []})
            entry["points"].append(point.index)
    return {"file": _rel(path, root), "points": len(sc.points), "blocking": list(blocking.values()),
            "counts": {"blocking": len(blocking)}, "value_groups": _groups_check(sc, root)}


def _groups_check(sc, root: Path) -> dict | None:
    """The player's value-groups file beside the scenario (``data/sensitivity_groups.yaml``, read by
    ``sensitivity`` and ``--swap`` instead of the shipped one), validated as ``sensitivity`` reads it
    (a malformed one is an error naming the file and field, exit 2): its path and group names, or None
    when the scenario reads the shipped one."""
    from analyzer.core import value_groups as vg

    groups = vg.of_scenario(sc)
    if groups is None or groups.origin != "scenario":
        return None
    return {"file": _rel(groups.path, root), "groups": [g.name for g in groups.for_question(sc.spec.question)]}


def check_folder(root: Path) -> dict:
    """The machine-readable check of ``root`` (what ``--json`` prints)."""
    from analyzer.core import datacheck
    from analyzer.core.formats import DATA_CHECK_JSON, stamped
    found = datacheck.scan(root)
    files = [{"file": f.file, "placeholders": [_entry(ph) for ph in f.placeholders],
              "examples": [_entry(ex) for ex in f.examples],
              "counts": {"placeholders": len(f.placeholders), "examples": len(f.examples),
                         "examples_blocking_strict": len(f.blocking_examples)}}
             for f in found.data_files]
    scenarios = [_scenario_check(p, root) for p in found.scenario_files]
    counts = {"data_files": len(files), "placeholders": sum(f["counts"]["placeholders"] for f in files),
              "examples": sum(f["counts"]["examples"] for f in files),
              "examples_blocking_strict": sum(f["counts"]["examples_blocking_strict"] for f in files),
              "scenario_files": len(scenarios),
              "scenarios_blocked": sum(1 for s in scenarios if s["blocking"])}
    return stamped(DATA_CHECK_JSON, {"folder": str(root), "blocked": counts["scenarios_blocked"] > 0,
                                     "counts": counts, "data_files": files, "scenarios": scenarios})


def _print(doc: dict, out: Console, limit: int | None) -> None:
    def shown(items: list) -> tuple[list, int]:
        return (items, 0) if limit is None or len(items) <= limit else (items[:limit], len(items) - limit)

    c = doc["counts"]
    out.print(f"[bold]{plain(doc['folder'])}[/]: {c['data_files']} data file(s), {c['placeholders']} placeholder(s), "
              f"{c['examples']} example value(s) ({c['examples_blocking_strict']} blocking strict); "
              f"{c['scenario_files']} scenario file(s), {c['scenarios_blocked']} blocked by strict", highlight=False)
    out.print("\n[bold]Data files[/]")
    for f in doc["data_files"]:
        n = f["counts"]
        mark = "[green]✓[/]" if not n["placeholders"] and not n["examples_blocking_strict"] else "[yellow]☐[/]"
        out.print(f"{mark} [bold]{plain(f['file'])}[/]: {n['placeholders']} placeholder(s), {n['examples']} "
                  f"example value(s)" + (f" ({n['examples_blocking_strict']} blocking strict)"
                                         if n["examples_blocking_strict"] else ""), highlight=False)
        items, more = shown(f["placeholders"])
        for ph in items:
            note = f"  [dim]{plain(ph['note'])}[/]" if ph["note"] else ""
            out.print(f"    ☐ {plain(ph['path'])} = {_value(ph['value'])}{note}", highlight=False)
        if more:
            out.print(f"    ... and {more} more placeholder(s) (--all or --json lists them)", highlight=False)
        items, more = shown(f["examples"])
        for ex in items:
            verdict = ("[yellow]blocks strict[/]" if ex["blocks_strict"] else "[green]accepted by strict[/]")
            out.print(f"    {'☐' if ex['blocks_strict'] else '✓'} {plain(ex['path'])} = {_value(ex['value'])} "
                      f"(example, establishes {plain(ex['establishes'])}: {verdict})", highlight=False)
        if more:
            out.print(f"    ... and {more} more example value(s)", highlight=False)
    out.print("\n[bold]Scenarios (what strict: true would refuse)[/]")
    if not doc["scenarios"]:
        out.print("  (no scenario file in the folder)")
    for s in doc["scenarios"]:
        n = len(s["blocking"])
        if s["value_groups"]:
            g = s["value_groups"]
            out.print(f"  [dim]{plain(s['file'])} reads the value groups of {plain(g['file'])} (checked): "
                      f"{plain(', '.join(g['groups']) or 'none for its question')}[/]", highlight=False)
        if not n:
            out.print(f"[green]✓[/] [bold]{plain(s['file'])}[/]: nothing blocks strict: true "
                      f"({s['points']} point(s))", highlight=False)
            continue
        out.print(f"[red]✗[/] [bold]{plain(s['file'])}[/]: {n} value(s) block strict: true "
                  f"({s['points']} point(s))", highlight=False)
        items, more = shown(s["blocking"])
        for ph in items:
            where = "" if len(ph["points"]) == s["points"] else f" [dim](points {', '.join(map(str, ph['points']))})[/]"
            src = ph["source"]
            if src not in ("default", "rule module"):
                src = _rel(Path(src), Path(doc["folder"]))
            note = f"  [dim]{plain(ph['note'])}[/]" if ph["note"] else ""
            out.print(f"    ☐ {plain(ph['path'])} = {_value(ph['value'])} [dim]({plain(src)})[/]{where}{note}",
                      highlight=False)
        if more:
            out.print(f"    ... and {more} more (--all or --json lists them)", highlight=False)


def check(
    folder: Path = typer.Argument(..., metavar="DIR",
                                  help="The data folder: every YAML file below it is read (hidden folders and run "
                                       "folders skipped); a file with a top-level 'game:' is a scenario file, any "
                                       "other is a data file."),
    json_out: bool = typer.Option(False, "--json", help="Print the check as JSON on stdout (format_version, "
                                                        "counts, data_files with their placeholders and examples, "
                                                        "scenarios with what blocks strict: true at which points "
                                                        "and the value groups file each reads beside it) "
                                                        "and nothing else."),
    show_all: bool = typer.Option(False, "--all", help="List every value; without it the checklist shows the "
                                                       "first 20 of each file and says how many more there are."),
):
    """Check a data folder: what is still missing per data file, and what blocks strict: true per scenario.

    Lists, per data file below DIR, every value still written {ph: ..} (a placeholder: path = value, \
note) and every example value {ex: ..} (and whether what its example establishes lets strict: \
true accept it); then, per scenario file in DIR, what strict: true would refuse: every sweep \
point is prepared with strict forced on, as 'run' refuses it (nothing is run). A value-groups file \
beside a scenario (data/sensitivity_groups.yaml, read by 'sensitivity') is checked as sensitivity \
reads it.

    Exit code: 0 when nothing blocks strict: true for any scenario file in DIR (also when DIR holds \
none), 1 when something does, 2 on an error (a malformed file, a scenario that does not load).
    """
    doc = check_folder(folder)
    if json_out:
        typer.echo(json.dumps(doc, indent=2, default=str, ensure_ascii=False))
    else:
        _print(doc, Console(), None if show_all else 20)
    if doc["blocked"]:
        raise typer.Exit(EXIT_BLOCKED)


GROUP = Group(HELP, {"check": check})
