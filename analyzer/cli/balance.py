"""``analyzer matchup`` and ``analyzer solve``: the balance commands (docs/balance.md).

Thin like the rest of the CLI: load, call :mod:`analyzer.analyses.balance.matchup` /
:mod:`analyzer.analyses.balance.solve`, print, write; numba, pandas and matplotlib are imported only when a
command runs (``analyzer --help`` stays fast).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional, Tuple

import typer
from rich.markup import escape
from rich.table import Table

from analyzer.cli.common import out as answer_console
from analyzer.cli.common import SVG, THREADS, check_out, err, set_threads
from analyzer.cli.summary import print_provenance
from analyzer.core import interrupt


def _execute(description: str, total: int | None, unit: str, show: bool, compute):
    """``compute(tick)`` (``tick(n)`` advances the progress bar by ``n`` ``unit``, None when it is
    hidden) with Ctrl-C / SIGTERM stopping between kernel calls; returns what ``compute`` returns."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
    progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn(unit),
                        TimeRemainingColumn(), console=err) if show else None
    with interrupt.handling():
        if not progress:
            return compute(None)
        with progress:
            task = progress.add_task(description, total=total)

            def tick(n: int) -> None:
                progress.advance(task, n)
                t = progress.tasks[task]
                if t.total is not None and t.completed > t.total:    # matchup --fair-cost adds pairs
                    progress.update(task, total=t.completed)
            return compute(tick)


def _document(folder: Path, name: str, json_out: bool) -> dict | None:
    """The folder's JSON document; printed (with ``run_dir``) and None when ``--json``."""
    doc = json.loads((folder / name).read_text())
    if json_out:
        typer.echo(json.dumps(dict(doc, run_dir=str(folder)), indent=2))
        return None
    return doc


def _names_table(title: str, headers: list[str], rows: list[list[str]], name_col: int) -> Table:
    """A table whose column ``name_col`` shows contender names in full: when the table does not
    fit the terminal, every other column is narrowed to its longest word (its text wraps) and the
    name column gets the room left, up to the longest name; a name wider still folds onto the next
    line, never cut short. ``rows`` are plain text (escaped here)."""
    n = len(headers)
    cells = [[headers[i]] + [r[i] for r in rows] for i in range(n)]
    natural = [max(len(c) for c in col) for col in cells]
    words = [max(len(w) for c in col for w in (c.split() or [""])) for col in cells]
    words[name_col] = len(headers[name_col])                  # a name wider than the room left folds
    frame = 3 * n + 1                                         # rich's borders and padding
    table = Table(title=title, title_justify="left")
    if frame + sum(natural) <= answer_console.width:
        widths: list[int | None] = [None] * n                 # it fits: rich lays it out whole
    else:
        widths = list(words)
        spare = answer_console.width - frame - sum(words)
        for i in [name_col] + [i for i in range(n) if i != name_col]:   # the names first, then the rest
            grow = max(0, min(spare, natural[i] - widths[i]))
            widths[i] += grow
            spare -= grow
    for header, width in zip(headers, widths):
        table.add_column(header, overflow="fold", width=width)
    for r in rows:
        table.add_row(*[escape(c) for c in r])
    return table


def _vs_best(row: dict, best: str) -> str:
    """A ratings row's difference to the best with its simultaneous CI and best-set membership."""
    if row["contender"] == best:
        return "the best"
    lo, hi = row["diff_to_best_low"], row["diff_to_best_high"]
    ci = "" if lo is None or hi is None else f" [{lo:+.3f}, {hi:+.3f}]"
    return f"{row['diff_to_best']:+.3f}{ci} " + ("in best set" if row["in_best_set"] else "worse")


def matchup(
    target: Path = typer.Argument(..., help="A matchup file: a scenario with contenders: (see docs/balance.md)."),
    trials: Optional[int] = typer.Option(None, "--trials", "-n", min=1,
                                         help="Trials per ordered pair (seated) or per contender (field); default: "
                                              "the file's trials."),
    seed: Optional[int] = typer.Option(None, help="Random seed (default: the file's). Every pair runs on the same "
                                                  "random streams of this seed."),
    fair_cost: bool = typer.Option(False, "--fair-cost", help="Also estimate, per contender, the points cost at "
                                   "which it would be at parity with the reference at the reference's budget, by "
                                   "scaling forces (model or figure counts, where the question says how to scale one), "
                                   "with bootstrap CIs."),
    reference: Optional[str] = typer.Option(None, help="Contender the ratings and fair costs refer to (default: "
                                                       "matchup.reference, else the first contender)."),
    bootstrap: Optional[int] = typer.Option(None, min=0, max=10_000, help="Bootstrap resamples of the paired "
                                            "batches for the rating CIs, 20 to 10000 (default: matchup.bootstrap, "
                                            "200)."),
    threads: Optional[int] = THREADS,
    out: Path = typer.Option(Path("results"), help="Root folder: writes <out>/<scenario file stem>-matchup/<run-id>/ "
                                                   "(matchups.parquet, ratings.parquet, matchup.json, plots, "
                                                   "manifest.json, report.html)."),
    json_out: bool = typer.Option(False, "--json", help="Print matchup.json to stdout and nothing else on stdout."),
    svg: bool = SVG,
    no_progress: bool = typer.Option(False, "--no-progress", help="Hide the progress bar."),
    force: bool = typer.Option(False, help="Allow more than 10^10 trials per pair, or in all (every pair, and "
                                           "with --fair-cost every scaled pair it may try)."),
):
    """Which contender beats which, and how clearly: a matchup matrix with CIs and ratings.

    Runs every ordered pair of the file's contenders on common random numbers (seated: both
    seats of a two-sided question; field: each contender alone, compared trial by trial on one
    metric), and reports the matrix with
    95% CIs (cells whose CI contains 1/2 are marked), each contender against itself (1/2 where
    the game is symmetric), a Bradley–Terry rating with bootstrap CIs, and the ranking: each
    contender's rating difference to the best with a 95% simultaneous CI (over all pairs), the set
    not distinguishable from the best, ties (identical results in every cell) and a ranking plot."""
    from analyzer.analyses.balance import matchup as mu
    used = set_threads(threads)
    check_out(out)
    sc, spec, cs, mode = mu.load(target, trials=trials, seed=seed, force=force, bootstrap=bootstrap,
                                 fair_cost=fair_cost)
    formats = ("png", "svg") if svg else ("png",)

    def compute(tick):
        m = mu.run(target, trials=trials, seed=seed, fair_cost=fair_cost, reference=reference, on_trials=tick,
                   force=force, bootstrap=bootstrap)
        r = mu.ratings(m, resamples=bootstrap)
        interrupt.check()             # a stop during the bootstrap: nothing is written
        return m, mu.write(m, r, out, threads=used, formats=formats)
    m, folder = _execute(f"{sc.name}: {mode} matchup", mu.planned_trials(sc, mode, len(cs)), "trials",
                         not no_progress and not json_out, compute)
    doc = _document(folder, "matchup.json", json_out)
    if doc is None:
        return
    # contender names in full (issue 28): the other columns wrap first; the cost column only when
    # some contender has a cost (an 80-column table has room for little more than the names)
    rk = doc["ranking"]
    costs = any(x["cost"] is not None for x in doc["ratings"])
    shared = {g for g in (x["tie_group"] for x in doc["ratings"])
              if sum(y["tie_group"] == g for y in doc["ratings"]) > 1}
    answer_console.print(_names_table(
        f"{sc.name}: Bradley–Terry ratings relative to {doc['reference']} ({mode}, {m.trials:,} trials per "
        f"{'pair' if mode == 'seated' else 'contender'}; {doc['placeholder_count']} placeholder value(s) used)",
        ["rank", "contender", "rating [95% CI]", f"vs the best [{rk['level']:.0%} sim. CI]", "P(beats ref)",
         "mean score"] + (["cost"] if costs else []),
        [[str(x["rank"]) + (f" (tie {x['tie_group']})" if x["tie_group"] in shared else ""), x["contender"],
          f"{x['rating']:+.3f} [{x['ci_low']:+.3f}, {x['ci_high']:+.3f}]", _vs_best(x, rk["best"]),
          f"{x['p_beats_reference']:.3f}", f"{x['mean_score_vs_field']:.3f}"]
         + (["" if x["cost"] is None else f"{x['cost']:g}"] if costs else []) for x in doc["ratings"]], name_col=1))
    ties = "; ".join(" = ".join(g) for g in rk["ties"])
    answer_console.print(f"  best set (not distinguishable from {rk['best']} at {rk['level']:.0%} simultaneous): "
                         f"{', '.join(rk['best_set'])}" + (f"; tied (identical results in every cell): {ties}"
                                                           if ties else ""), highlight=False, markup=False)
    answer_console.print(f"  sim. CI: {rk['method']}; winner's curse: {rk['winners_curse']}", highlight=False,
                         markup=False)
    unclear = [f"{x['a']} vs {x['b']}" for x in doc["matchups"] if x["ci_crosses_half"] and x["a"] != x["b"]]
    if unclear:
        answer_console.print(f"  cells whose 95% CI contains 1/2: {', '.join(unclear)}", highlight=False, markup=False)
    for s in doc["symmetry"]:
        mark = "ok" if s["ok"] else "NOT 1/2"
        answer_console.print(f"  {s['contender']} vs itself: seat A scores {s['mean']:.4f} [{s['ci_low']:.4f}, "
                  f"{s['ci_high']:.4f}] {mark}", highlight=False, markup=False)
    if doc["fair_cost"]:
        rows = []
        for f in doc["fair_cost"]:
            fair = "" if f["fair_cost"] is None else (
                f"{f['fair_cost']:.4g}" + ("" if f["fair_cost_ci_low"] is None else
                                           f" [{f['fair_cost_ci_low']:.4g}, {f['fair_cost_ci_high']:.4g}]"))
            change = "" if f["cost_change"] is None else f"{f['cost_change']:+.4g}"
            rows.append([f["contender"], "" if f["cost"] is None else f"{f['cost']:g}", fair, change,
                         f["method"] + (f": {f['note']}" if f["note"] else "")])
        answer_console.print(_names_table(f"fair cost: parity with {doc['reference']} at its budget",
                               ["contender", "cost", "fair cost [95% CI]", "change", "how"], rows, name_col=0))
    for note in doc["notes"][:1] + [n for n in doc["notes"] if "PLACEHOLDER" in n or "not 1/2" in n
                                    or "exactly 1/2" in n]:
        answer_console.print(f"  note: {note}", highlight=False, markup=False)
    print_provenance(doc["placeholders"], doc["example_values"], where="matchup.json")
    answer_console.print(f"[green]wrote[/] {folder}")


def solve(
    target: Path = typer.Argument(..., help="A scenario with one point (no sweep); may hold solve: defaults."),
    metric: Optional[str] = typer.Option(None, help="Metric whose mean crosses the target (default: solve.metric)."),
    target_value: Optional[float] = typer.Option(None, "--target", help="The threshold (default: solve.target)."),
    param: Optional[str] = typer.Option(None, help="Dotted parameter path solved for, an int or float parameter "
                                                   "(default: solve.param), e.g. defense_dice or target.dr."),
    range_: Optional[Tuple[float, float]] = typer.Option(None, "--range", metavar="LO HI",
                                                         help="Values searched, LO to HI (default: solve.range, "
                                                              "else the parameter's declared bounds)."),
    tol: Optional[float] = typer.Option(None, help="Continuous parameters: stop when the bracket is narrower "
                                                   "than this (default (HI - LO) / 1000)."),
    scan: bool = typer.Option(False, help="Evaluate every integer in the range (21 points for a continuous "
                                          "parameter) instead of bisecting: no monotonicity assumed."),
    monte_carlo: bool = typer.Option(False, "--monte-carlo", help="Simulate even where the question has an exact "
                                     "mode (default: exact values when it has one)."),
    trials: Optional[int] = typer.Option(None, "--trials", "-n", min=1,
                                         help="Monte Carlo: trials per evaluated value (default: the file's)."),
    seed: Optional[int] = typer.Option(None, help="Random seed (default: the file's). Every value runs on the same "
                                                  "random streams."),
    threads: Optional[int] = THREADS,
    out: Path = typer.Option(Path("results"), help="Root folder: writes <out>/<scenario file stem>-solve/<run-id>/ "
                                                   "(solve.json, evaluations.parquet, plot, manifest.json, "
                                                   "report.html)."),
    json_out: bool = typer.Option(False, "--json", help="Print solve.json to stdout ({param, value, metric, target, "
                                                        "evaluations: [{value, mean, ci_low, ci_high}, ...], ...}) "
                                                        "and nothing else on stdout."),
    svg: bool = typer.Option(False, help="Also write an SVG plot."),
    no_progress: bool = typer.Option(False, "--no-progress", help="Hide the progress display."),
    force: bool = typer.Option(False, help="Monte Carlo: allow more than 10^10 trials per value, or in all (every "
                                           "value the search may evaluate)."),
):
    """The parameter value at which a metric crosses a target (AA dice, skill, ...).

    Finds the first value of PARAM, going from LO towards HI, at which the metric's mean is on the other side of the target from its value at LO:
    bisection on common random numbers (or on exact values where the question has an exact
    mode), with every evaluated value's 95% CI, the neighbours of the answer and a plot of the
    metric against the parameter with the crossing marked."""
    from analyzer.analyses.balance import solve as sv
    used = set_threads(threads)
    check_out(out)
    kwargs = dict(metric=metric, target=target_value, param=param, range_=range_, tol=tol, trials=trials, seed=seed,
                  scan=scan, exact=False if monte_carlo else None, force=force)
    formats = ("png", "svg") if svg else ("png",)

    def compute(tick):
        sol = sv.solve(target, **kwargs, on_eval=(lambda v: tick(1)) if tick else None)
        return sol, sv.write(sol, out, threads=used, formats=formats)
    sol, folder = _execute(f"{target.stem}: evaluating", None, "values", not no_progress and not json_out, compute)
    doc = _document(folder, "solve.json", json_out)
    if doc is None:
        return
    table = Table(title=f"{sol.sc.name}: {doc['metric']} vs {doc['param']} (target {doc['target']:g}, "
                        f"{doc['method']}, {doc['mode']})", title_justify="left")
    for col in (doc["param"], "mean", "95% CI"):
        table.add_column(col, justify="right")
    for e in doc["evaluations"]:
        mark = " ←" if e["value"] == doc["value"] else ""
        table.add_row(f"{e['value']:g}{mark}", f"{e['mean']:.4g}", "exact" if doc["mode"] == "exact" else
                      f"[{e['ci_low']:.4g}, {e['ci_high']:.4g}]")
    answer_console.print(table)
    answer = (f"{doc['param']} = {doc['value']:g}" if doc["value"] is not None else "no crossing in the range")
    answer_console.print(f"[bold]answer:[/] {escape(answer)}", highlight=False)
    for note in doc["notes"][:2] + [n for n in doc["notes"] if n.startswith("not resolved")]:
        answer_console.print(f"  note: {note}", highlight=False, markup=False)
    print_provenance(doc["placeholders"], doc["example_values"], where="solve.json")
    answer_console.print(f"[green]wrote[/] {folder}")
