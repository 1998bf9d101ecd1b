"""``analyzer bench``: the benchmark suite (each figure against another measured in the same run,
or against its target)."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from analyzer.cli.common import err, fail, set_threads
from analyzer.core.paths import UnsafePathError


def bench(
    names: Optional[List[str]] = typer.Argument(None, help="Benchmarks to run (default: all; 'list' shows them). "
                                                           "Also: scaling, memory, cli."),
    quick: bool = typer.Option(False, help="Small trial counts (the whole suite in a few minutes)."),
    smoke: bool = typer.Option(False, help="Tiny trial counts: checks every benchmark runs on this install "
                                           "(about a minute); the ratios are too noisy to compare with targets."),
    json_out: bool = typer.Option(False, "--json", help="Print {\"rows\": [...]} to stdout and nothing else."),
    out: Optional[Path] = typer.Option(None, help="Also write bench.parquet, bench.json and bench_ratios.png here."),
    trials: Optional[int] = typer.Option(None, "--trials", "-n", min=1,
                                         help="Kernel trials of a single named benchmark (default per benchmark)."),
    threads: Optional[int] = typer.Option(None, help="Worker threads."),
):
    """Benchmarks: each row a figure measured against another measured in the same run (raw RNG,
    numpy, the pure-Python reference, icepool) or against its target (CLI start, memory), with
    the ratio, its target and whether it is met; plus thread scaling (1 vs all threads)."""
    from analyzer.bench import suite as bench_suite
    from analyzer.bench.harness import BENCHMARKS, load_benchmarks
    load_benchmarks()
    names = list(names or [])
    if names == ["list"]:
        for n in sorted(BENCHMARKS) + ["scaling", "memory", "cli"]:
            err.print(n)
        return
    set_threads(threads)
    if trials is not None:
        if len(names) != 1 or names[0] not in BENCHMARKS:
            fail("bench: --trials needs exactly one benchmark name (see 'analyzer bench list')")
        from analyzer.bench.harness import MAX_BENCH_TRIALS
        if trials > MAX_BENCH_TRIALS:
            fail(f"bench: --trials: got {trials:,}; allowed: 1..{MAX_BENCH_TRIALS:,} (a benchmark runs its kernel "
                 f"several times)")
        from analyzer.bench.harness import check_available
        check_available(BENCHMARKS[names[0]])
        rows = bench_suite.rows_of(names[0], BENCHMARKS[names[0]](err, trials),
                                   bench_suite.target_of(BENCHMARKS[names[0]]))
    else:
        try:
            rows = bench_suite.run_suite(names or None, quick=quick, smoke=smoke, console=err)
        except KeyError as e:
            fail(f"bench: {e.args[0]}")
    if out is not None:
        try:
            for p in bench_suite.write_outputs(rows, out):
                err.print(f"[green]wrote[/] {p}")
        except (OSError, UnsafePathError) as e:
            fail(f"bench: --out {out}: {e}")
    if json_out:
        typer.echo(bench_suite.dumps(rows))
    else:
        bench_suite.print_table(rows, err)
    for line in bench_suite.bound_summary(rows):         # to stderr with --json too
        err.print(line, highlight=False, markup=False)
        if smoke:
            err.print("--smoke: every row ran on too little work for its ratio to be compared with its target; "
                      "use --quick or no option for figures")

