"""Compile every shipped question's kernels once, before the test workers start (tests/conftest.py).

A cold clone has no numba cache, and under ``pytest -n 2`` both workers would otherwise compile
the same kernels side by side, each the first time one of its tests needs them. Here process
``part`` of ``parts`` runs its share of the shipped scenarios' first points for 2 chunks of 64
trials (the kernels' own signatures, written to the on-disk cache); the workers then load them.
Run by hand: ``python -m tests.warmup 0 1``.
"""
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def scenario_groups() -> list[list[Path]]:
    """The shipped scenarios grouped by (game, question): one group compiles one question's kernels."""
    from analyzer.core import scenario as scenario_mod
    groups: dict[tuple[str, str], list[Path]] = {}
    for path in scenario_mod.expand_targets([str(ROOT / "scenarios")]):
        sc = scenario_mod.load(path)
        groups.setdefault((sc.spec.game, sc.spec.question), []).append(path)
    return [groups[key] for key in sorted(groups)]


def warm(part: int, parts: int) -> int:
    from analyzer.core import scenario as scenario_mod
    from analyzer.run.runner import prepare_point
    failed = 0
    for paths in scenario_groups()[part::parts]:
        path = paths[0]
        try:
            sc = scenario_mod.load(path)
            prepare_point(sc, sc.points[0]).run_kernel(sc.spec.seed, 1, 0, 2, 64, 100)
        except Exception as exc:  # the tests that use this scenario report it properly
            failed += 1
            print(f"warm-up: {path.relative_to(ROOT)}: {type(exc).__name__}: {exc}", file=sys.stderr)
    return failed


if __name__ == "__main__":
    t0 = time.perf_counter()
    part, parts = int(sys.argv[1]), int(sys.argv[2])
    failed = warm(part, parts)
    print(f"warm-up {part + 1}/{parts}: {time.perf_counter() - t0:.0f} s" + (f", {failed} failed" if failed else ""),
          file=sys.stderr)
