"""The Python API in one place: ``import analyzer`` then ``analyzer.load``, ``analyzer.simulate``
(what ``analyzer run`` does: ``analyzer.run`` is the package of the run layer),
``analyzer.exact``, ``analyzer.compare`` — each returns one :class:`Result` type, whose
answers are a pandas or polars DataFrame (the same tidy table as a run folder's
``answers.parquet``, :mod:`analyzer.outputs.answers`).

A scenario is a path to a YAML file, a mapping with the same keys (validated exactly as a file
is: :func:`analyzer.core.scenario.load_dict`), or an already loaded
:class:`~analyzer.core.scenario.Scenario`. Nothing is written unless ``out=`` is given.

    import analyzer
    r = analyzer.simulate("scenarios/dystopian_wars/attack_ad10.yaml", trials=20_000)
    r.answers()                       # pandas: point x metric rows, mean, se, CI, ...
    analyzer.exact(r.scenario).answers("polars")
    analyzer.compare("a.yaml", "b.yaml").answers().query("side == 'b_minus_a'")
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Union

from analyzer.core import scenario as scenario_mod
from analyzer.core.results import PointResult
from analyzer.core.scenario import Scenario

__all__ = ["Result", "load", "simulate", "exact", "compare"]

ScenarioLike = Union[str, Path, dict, Scenario]


@dataclass(frozen=True)
class Result:
    """What :func:`simulate`, :func:`exact` and :func:`compare` return.

    ``mode``: ``"monte_carlo"``, ``"exact"`` or ``"comparison"``; ``scenario`` (for a comparison:
    B) and ``points``, one :class:`~analyzer.core.results.PointResult` per sweep point (a
    comparison: B's); ``baseline`` / ``baseline_points``: A's, for a comparison only;
    ``differences``: per point the paired differences B - A (as ``comparison.json`` holds them);
    ``run_dir``: the folder written, when ``out=`` was given."""

    mode: str
    scenario: Scenario
    points: list[PointResult]
    baseline: Scenario | None = None
    baseline_points: tuple[PointResult, ...] = ()
    differences: tuple[dict, ...] = ()
    run_dir: Path | None = None

    def answers(self, library: Literal["pandas", "polars"] = "pandas"):
        """The tidy answers table (``answers.parquet``'s columns). A comparison's has a ``side``
        column: ``a``, ``b`` (each side's own estimates) and ``b_minus_a`` (the paired differences,
        the rows that answer the comparison)."""
        from analyzer.outputs.answers import answers_table, comparison_table
        if self.mode != "comparison":
            table = answers_table(self.points)
        else:
            table = comparison_table(list(self.baseline_points), self.points, list(self.differences))
        if library == "polars":
            import polars as pl
            return pl.from_pandas(table)
        if library != "pandas":
            raise ValueError(f"library: got {library!r}; allowed: pandas, polars")
        return table

    def summary(self) -> dict:
        """What ``--json`` prints (``summary.json``; a comparison: ``comparison.json``)."""
        from analyzer import api
        from analyzer.outputs import writer
        if self.mode == "comparison":
            return api.comparison_doc(api.Comparison(self.baseline, self.scenario, list(self.differences),
                                                     list(self.baseline_points), self.points))
        return writer.summary_dict(self.scenario, self.points, self.mode)


def load(source: ScenarioLike, **overrides: Any) -> Scenario:
    """A scenario from a file path, a mapping or a :class:`Scenario` (returned as it is when no
    override is given). ``overrides``: ``trials``, ``precision``, ``seed``, ``force``; a mapping
    also takes ``directory`` (where its data files are found, default ``.``) and ``name``."""
    if isinstance(source, Scenario):
        if overrides:
            if source.path.is_file():
                return scenario_mod.load(source.path, **overrides)
            raise TypeError("overrides need the scenario's file or mapping: pass that instead of a loaded Scenario")
        return source
    if isinstance(source, dict):
        return scenario_mod.load_dict(source, **overrides)
    if isinstance(source, (str, Path)):
        return scenario_mod.load(source, **overrides)
    raise TypeError(f"a scenario is a path, a mapping or a Scenario; got {type(source).__name__}")


def simulate(source: ScenarioLike, *, out: str | Path | None = None, threads: int | None = None,
        **overrides: Any) -> Result:
    """Monte-Carlo every sweep point (``overrides`` as :func:`load`); with ``out``, also write the
    run folder's tables, plots and report (as ``analyzer run --out``, without its checkpoints:
    a run from Python is not resumable)."""
    import time

    from analyzer import api
    sc = load(source, **overrides)
    used = api.set_threads(threads)
    t0 = time.perf_counter()
    results = api.run(sc)
    run_dir = None
    if out is not None:
        run_dir, _ = api.write_run(sc, results, Path(out), mode="monte_carlo", threads=used,
                                   wall_seconds=time.perf_counter() - t0)
    return Result("monte_carlo", sc, results, run_dir=run_dir)


def exact(source: ScenarioLike, *, out: str | Path | None = None, **overrides: Any) -> Result:
    """The exact answer of every sweep point, where the question has an exact mode (raises
    :class:`analyzer.core.errors.ScenarioError` saying so where it has none)."""
    from analyzer import api
    sc = load(source, **overrides) if isinstance(source, Scenario) else load(source, trials_guard=False, **overrides)
    results = api.exact(sc)
    run_dir = None
    if out is not None:
        run_dir, _ = api.write_run(sc, results, Path(out), mode="exact", threads=1, wall_seconds=0.0)
    return Result("exact", sc, results, run_dir=run_dir)


def compare(a: ScenarioLike, b: ScenarioLike, *, out: str | Path | None = None, **overrides: Any) -> Result:
    """B against A on common random numbers (``overrides`` apply to both); the paired differences
    are the answer (``Result.answers()`` rows with ``side == "b_minus_a"``)."""
    from analyzer import api
    sa, sb = load(a, **overrides), load(b, **overrides)
    cmp = api.compare(sa, sb)
    run_dir = api.write_comparison(cmp, Path(out)) if out is not None else None
    return Result("comparison", cmp.b, cmp.results_b, baseline=cmp.a, baseline_points=tuple(cmp.results_a),
                  differences=tuple(cmp.points), run_dir=run_dir)
