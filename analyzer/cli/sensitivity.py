"""``analyzer sensitivity``: which missing value or rule reading moves a point's answer most."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape
from rich.table import Table

from analyzer.cli.common import out as answer_console
from analyzer.cli.common import THREADS, check_out, err, load_all, out, progress_factory, set_threads, stats
from analyzer.core import interrupt


def sensitivity(
    target: Path = typer.Argument(..., help="A scenario with one point (no sweep)."),
    metric: Optional[str] = typer.Option(None, help="Metric whose mean is compared (default: the question's "
                                                    "primary metric)."),
    trials: Optional[int] = typer.Option(None, "--trials", "-n", help="Trials per variant (default: the file's)."),
    top: int = typer.Option(15, min=1, help="Rows shown on the console and bars in tornado.png."),
    source_values: bool = typer.Option(False, "--source-values", help="Also move every plain number of every "
                                       "data file the point reads (values the source gives)."),
    kind: Optional[list[str]] = typer.Option(None, "--kind", help="Run only variants of this kind (repeatable): "
                                             "placeholder, example, parameter default, source value, value group, "
                                             "rule option, what-if rule, policy, swap (--kind swap: only the --swap variants)."),
    only: Optional[list[str]] = typer.Option(None, "--only", help="Run only the variants of this value "
                                             "(repeatable): a data path, params.x or rules.x and what lies below "
                                             "it, or a value group's name."),
    swap: Optional[list[str]] = typer.Option(None, "--swap", help="Also run, as one variant, the point with a data "
                                             "file it reads (data/campaign/events.yaml=PATH), or the part of one a "
                                             "value group names (\"event deck=PATH\"), replaced by your version "
                                             "at PATH (repeatable; run whatever --kind and --only keep)."),
    out: Path = typer.Option(Path("results"), help="Root folder for the sensitivity folder."),
    force: bool = typer.Option(False, help="Allow more than 10^10 trials per variant, or in all (the scenario "
                                           "and every variant)."),
    seed: Optional[int] = typer.Option(None, help="Random seed (overrides the file's; every variant shares the "
                                                  "scenario's streams)."),
    threads: Optional[int] = THREADS,
    json_out: bool = typer.Option(False, "--json", help="Print sensitivity.json's content to stdout and nothing "
                                                        "else (the folder is still written)."),
    no_progress: bool = typer.Option(False, "--no-progress", help="Hide the progress bar."),
):
    """Which missing value, table or rule reading moves the answer most? Every placeholder,
    example-derived value and placeholder default the point uses is moved one step down and
    up (integers by 1, other numbers by 10%); each value group (a whole deck, table or sheet
    block, e.g. U-Boat Leader's event deck and contact tables: declared by the question or named
    in the game's data/sensitivity_groups.yaml, whose copy beside the scenario replaces it) is
    moved as ONE variant, all its used numbers together; every rule option and every policy
    choice of the point is switched to each other allowed value (one that leaves the compiled
    point unchanged cannot move it: listed, not run). A variant the scenario's validation refuses
    (e.g. a campaign of 0 patrols) is listed with the reason, not run. --swap runs your version
    of a whole data file or value group (your printed Event deck) as one more variant. Each
    variant runs against the scenario on common random numbers, so each effect comes with the
    95% CI of B - A. Writes <out>/<scenario file>-sensitivity/<run-id>/:
    sensitivity.parquet, sensitivity.json, answers.parquet, a tornado chart and report.html
    (the answer first: what moves the metric most)."""
    from analyzer.analyses import sensitivity as sens
    from analyzer.outputs.writer import folder_name
    set_threads(threads)
    sc = load_all([str(target)], trials=trials, force=force, seed=seed)[0]
    check_out(out)                       # before computing: an unusable --out must not cost the results
    progress, _ = progress_factory(not no_progress and not json_out, unit="variants")
    with interrupt.handling():            # Ctrl-C stops between kernel calls
        kinds, only_, swaps = (tuple(kind) if kind else None), (tuple(only) if only else None), tuple(swap or ())
        n = len(sens.variants(sc, source_values, kinds, only_, swaps)[0])
        if progress:
            with progress:
                task = progress.add_task(sc.name, total=n)
                result = sens.run(sc, metric=metric, trials=trials, include_source_values=source_values,
                                  kinds=kinds, only=only_, swaps=swaps, force=force,
                                  on_variant=lambda i, total, v: progress.update(task, completed=i))
                progress.update(task, completed=n)
        else:
            result = sens.run(sc, metric=metric, trials=trials, include_source_values=source_values, kinds=kinds,
                              only=only_, swaps=swaps, force=force)
        folder = sens.write(result, out, sc.digest, folder_name=folder_name(sc))
    if json_out:
        import json
        typer.echo(json.dumps({**sens.document(result), "folder": str(folder)}, indent=2))
        return
    table = Table(title=f"{sc.name}: effect on mean {result.metric} (base {result.base_mean:.4g}, "
                        f"{result.trials:,} trials per variant)", title_justify="left")
    for col in ("value changed", "from → to", "effect ±se  [95% CI]"):
        table.add_column(col)
    for e in result.ranked()[:top]:
        v = e.variant
        effect = (f"cannot run: {e.error}" if e.error else f"{e.mean:+.4g}±{e.se:.2g}  [{e.ci_low:+.4g}, {e.ci_high:+.4g}]"
                  + (f"  {stats().NO_DETECTABLE_EFFECT}" if e.ci_low <= 0 <= e.ci_high else ""))
        change = (f"{v.base} → {v.value}" if v.kind in sens.LABEL_KINDS else f"{v.base!r} → {v.value!r}")
        if v.kind == "swap" and not e.error:
            change += (f" ({v.values} value(s) changed, {e.placeholders_removed} placeholder(s) removed, "
                       f"{e.placeholders} used)")
        table.add_row(escape(f"{v.what} [{v.kind}]"), escape(change), escape(effect))
    answer_console.print(table)
    for note in result.notes:
        answer_console.print(f"  note: {note}", highlight=False, markup=False)
    if result.skipped:
        refused = sum(1 for s in result.skipped if "(refused, not run:" in s)
        answer_console.print(f"  not varied or not run (not numbers, identifiers such as card numbers, options the "
                             f"point never reads, {refused} refused by validation): {len(result.skipped)}, listed "
                             f"with their reasons in sensitivity.json",
                             highlight=False, markup=False)
    answer_console.print(f"[green]wrote[/] {escape(str(folder))}")
    answer_console.print(f"report: {escape(str(folder / 'report.html'))}", highlight=False)
