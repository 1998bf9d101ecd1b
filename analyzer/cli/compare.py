"""``analyzer compare``: two scenarios on common random numbers and their paired difference."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape
from rich.table import Table

from analyzer.cli.common import api, check_out, err, load_all, progress_factory, reported, set_threads, stats
from analyzer.cli.common import out as answer_console
from analyzer.cli.summary import print_provenance
from analyzer.core import interrupt


def compare(
    a: Path = typer.Argument(..., help="Scenario A."),
    b: Path = typer.Argument(..., help="Scenario B (same game and question, same sweep size)."),
    trials: Optional[int] = typer.Option(None, "--trials", "-n", help="Trials per point (default: A's)."),
    seed: Optional[int] = typer.Option(None, help="Seed for both (default: A's)."),
    threads: Optional[int] = typer.Option(None, help="Worker threads."),
    json_out: bool = typer.Option(False, "--json", help="Print the comparison JSON to stdout only."),
    out: Path = typer.Option(Path("results"), help="Root folder for the comparison folder (comparison.json, "
                                                   "comparison.png, report.html)."),
    write: bool = typer.Option(True, help="Write the comparison folder."),
    force: bool = typer.Option(False, help="Allow more than 10^10 trials per point, or in all (A and B at every "
                                           "point)."),
):
    """Run A and B on common random numbers; report A, B and the paired difference B - A
    (console, and a folder with comparison.json, the figure comparison.png and report.html,
    which leads with B - A of the primary metric). Ctrl-C / SIGTERM stop it
    between kernel calls (exit 130 / 143; nothing is written)."""
    set_threads(threads)
    sa = load_all([str(a)], trials=trials, seed=seed, force=force)[0]
    sb = load_all([str(b)], trials=trials or sa.spec.trials, seed=seed if seed is not None else sa.spec.seed,
                  force=force)[0]
    if write:
        check_out(out)                   # before computing: an unusable --out must not cost the results
    progress, factory = progress_factory(not json_out)
    with reported("compare stopped between kernel calls; nothing was written"), \
            interrupt.handling():         # Ctrl-C / SIGTERM: stop between kernel calls
        if progress:
            with progress:
                cmp = api.compare(sa, sb, progress=factory, force=force)
        else:
            cmp = api.compare(sa, sb, force=force)
        interrupt.check()
    doc = api.comparison_doc(cmp)
    folder = None
    if write:
        folder = api.write_comparison(cmp, out)
        doc["run_dir"] = str(folder)
    if json_out:
        typer.echo(json.dumps(doc, indent=2, default=str))
        return
    for pt in cmp.points:
        table = Table(title=f"{sa.name} (A) vs {sb.name} (B), common random numbers, {pt['trials']:,} trials",
                      title_justify="left")
        for col in ("metric", "A", "B", "B - A  [95% CI]"):
            table.add_column(col)
        for name, m in pt["metrics"].items():
            d = m["diff_b_minus_a"]
            table.add_row(name, f"{m['a']['mean']:.4f}", f"{m['b']['mean']:.4f}",
                          f"{d['mean']:+.4f}  [{d['ci_low']:+.4f}, {d['ci_high']:+.4f}]"
                          + (f"  {stats().NO_DETECTABLE_EFFECT}" if stats().contains_zero(d) else ""))
        answer_console.print(table)
    placeholders: list[dict] = []
    examples: list[dict] = []
    for pt in cmp.points:
        placeholders += [ph for ph in pt["placeholders"] if ph not in placeholders]
        examples += [ex for ex in pt["example_values"] if ex not in examples]
    print_provenance(placeholders, examples, where="compare --json")
    if folder is not None:
        answer_console.print(f"[green]wrote[/] {escape(str(folder))}")
        answer_console.print(f"report: {escape(str(folder / 'report.html'))}", highlight=False)
