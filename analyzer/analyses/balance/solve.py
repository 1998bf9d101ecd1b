"""``analyzer solve``: the parameter value at which a metric crosses a target.

The scenario's point is evaluated at chosen values of one numeric parameter, every value on
the same random streams (common random numbers: one stream key for the whole search), or by
the question's exact mode when it has one (then every value is exact). The answer ``value`` is
the first parameter value, going from LO towards HI, at which the metric's mean is on the other
side of the target from its mean at LO (a mean equal to the target counts as "at or above").

- Integer parameters: bisection between LO and HI (which assumes the metric is monotone in the
  parameter there; ``scan`` evaluates every value instead), reporting the value found and its
  neighbours with their CIs.
- Continuous parameters: bisection on common random numbers until the bracket is narrower than
  ``tol`` (the stated precision; default (HI - LO) / 1000). On common random numbers the
  estimated metric is one fixed function of the parameter, so bisection converges to its
  crossing (sample-average root finding); the Monte-Carlo uncertainty of that crossing is the
  bracket between the nearest evaluated values whose CIs exclude the target (``value_interval``).
"""
from __future__ import annotations

import math
import time
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from analyzer.core import interrupt
from analyzer.core import scenario as scenario_mod
from analyzer.core.balance_spec import SolveSpec
from analyzer.core.params import check_param_path, submodel
from analyzer.core.errors import ScenarioError, suggest
from analyzer.run.runner import exact_point, prepare_point, simulate_point, stream_key, summarize

#: ``scan`` of an integer range evaluates at most this many values
MAX_SCAN = 2000
#: continuous parameters: scan points, and most bisection steps
CONTINUOUS_SCAN = 21
MAX_STEPS = 60


@dataclass
class Evaluation:
    value: float
    mean: float
    se: float
    ci_low: float
    ci_high: float
    trials: int

    def as_dict(self) -> dict:
        return {"value": self.value, "mean": self.mean, "se": self.se, "ci_low": self.ci_low,
                "ci_high": self.ci_high, "trials": self.trials}


@dataclass
class Solution:
    sc: Any
    param: str
    metric: str
    target: float
    lo: float
    hi: float
    kind: str                        # integer | continuous
    mode: str                        # exact | monte_carlo
    method: str                      # bisection | scan
    tol: float | None
    evaluations: dict = field(default_factory=dict)     # value -> Evaluation
    value: float | None = None
    notes: list[str] = field(default_factory=list)
    placeholders: list[dict] = field(default_factory=list)
    example_values: list[dict] = field(default_factory=list)
    data_files: list[dict] = field(default_factory=list)
    wall_seconds: float = 0.0
    trials: int = 0
    unaffected_by: list[str] = field(default_factory=list)   # placeholder paths that cannot move the metric

    def side(self, v) -> bool:
        """True when the metric's mean at ``v`` is at or above the target."""
        return self.evaluations[v].mean >= self.target


def param_kind(question, dotted: str) -> tuple[str | None, float | None, float | None]:
    """(``integer`` | ``continuous`` | None, lower bound, upper bound) of a parameter path,
    from its pydantic field (``Optional[int]`` counts as int; bounds from ``ge/gt/le/lt``)."""
    model = question.Params
    info = None
    for part in dotted.split("."):
        if model is None or part not in model.model_fields:
            return None, None, None
        info = model.model_fields[part]
        model = submodel(info.annotation)
    ann = info.annotation
    args = [a for a in typing.get_args(ann) if a is not type(None)] \
        if typing.get_origin(ann) in (typing.Union, types.UnionType) else [ann]
    kind = "integer" if args == [int] else "continuous" if set(args) <= {int, float} else None
    lo = hi = None
    for meta in info.metadata:
        for attr, bound in (("ge", "lo"), ("gt", "lo"), ("le", "hi"), ("lt", "hi")):
            v = getattr(meta, attr, None)
            if v is not None:
                if bound == "lo":
                    lo = v + (1 if attr == "gt" and kind == "integer" else 0)
                else:
                    hi = v - (1 if attr == "lt" and kind == "integer" else 0)
    return kind, lo, hi


def _options(sc, metric, target, param, range_, tol) -> SolveSpec:
    """The file's ``solve:`` block with the command-line values over it; every key required."""
    file = str(sc.path)
    s = SolveSpec.model_validate(sc.spec.solve or {})
    given = {"metric": metric, "target": target, "param": param, "range": list(range_) if range_ else None,
             "tol": tol}
    s = s.model_copy(update={k: v for k, v in given.items() if v is not None})   # (model_copy does not validate)
    for key in ("metric", "target", "param"):
        if getattr(s, key) is None:
            raise ScenarioError(file, f"solve.{key}", f"missing: give --{key} or solve: {{{key}: ...}} in the file")
    # checked before anything runs: an infinite or NaN bound, target or tolerance made solve compute
    # every value and then fail (int(inf), a bracket that never narrows, no side of NaN)
    where = {key: f"--{key}" if given[key] is not None else f"solve.{key}" for key in given}
    if not math.isfinite(s.target):
        raise ScenarioError(file, where["target"], f"got {s.target}; allowed: a finite number")
    if s.tol is not None and not (math.isfinite(s.tol) and s.tol > 0):
        raise ScenarioError(file, where["tol"], f"got {s.tol}; allowed: a finite number > 0")
    if s.range is not None and not all(math.isfinite(x) for x in s.range):
        raise ScenarioError(file, where["range"], f"got {s.range[0]} {s.range[1]}; allowed: finite numbers LO < HI")
    return s


def planned_values(kind: str, lo: float, hi: float, scan: bool, tol: float | None) -> int:
    """The most values a search evaluates (what the trial guard counts): every value of a scan;
    bisection: both ends, the halvings of the bracket (at most :data:`MAX_STEPS`) and, for an
    integer, the neighbour past the crossing."""
    if scan:
        return int(hi - lo + 1) if kind == "integer" else CONTINUOUS_SCAN
    if kind == "integer":
        return 3 + min(MAX_STEPS, math.ceil(math.log2(max(hi - lo, 1))))
    return 2 + min(MAX_STEPS, max(0, math.ceil(math.log2((hi - lo) / tol))))


def solve(path: str | Path, *, metric: str | None = None, target: float | None = None, param: str | None = None,
          range_: tuple[float, float] | None = None, tol: float | None = None, trials: int | None = None,
          seed: int | None = None, scan: bool = False, exact: bool | None = None,
          on_eval: Callable[[float], None] | None = None, force: bool = False) -> Solution:
    """Find where ``metric`` crosses ``target`` as ``param`` goes from LO to HI (module docstring).
    ``exact``: None = exact mode when the question has one, False = Monte Carlo. Monte Carlo
    checks the trial budget (trials x :func:`planned_values`; ``force`` allows more than 10^10)
    before the first kernel runs. A continuous parameter that accepts only a grid of values
    (e.g. densities in multiples of 0.001) is evaluated at grid values (:func:`_on_grid` below)."""
    t0 = time.perf_counter()
    sc = scenario_mod.load(path, trials=trials, seed=seed, force=force)
    file = str(sc.path)
    s = _options(sc, metric, target, param, range_, tol)
    if sc.spec.sweep:
        raise ScenarioError(file, "sweep", "solve evaluates one point per parameter value: remove sweep")
    if sc.spec.precision is not None:
        raise ScenarioError(file, "precision", "solve runs a fixed trial count per value; use trials or --trials")
    check_param_path(file, sc.question.Params, s.param, "--param")
    kind, f_lo, f_hi = param_kind(sc.question, s.param)
    if kind is None:
        raise ScenarioError(file, "--param", f"{s.param!r} is not a number parameter; solve needs an int or float "
                            f"parameter (see 'analyzer list {sc.spec.game}')")
    if s.range is None:
        if f_lo is None or f_hi is None:
            raise ScenarioError(file, "--range", f"{s.param} has no declared bounds: give --range LO HI")
        lo, hi = f_lo, f_hi
    else:
        lo, hi = s.range
    if kind == "integer":
        if lo != int(lo) or hi != int(hi):
            raise ScenarioError(file, "--range", f"got {lo:g} {hi:g}; {s.param} is an integer: whole numbers")
        lo, hi = int(lo), int(hi)
    if not lo < hi:
        raise ScenarioError(file, "--range", f"got {lo:g} {hi:g}; allowed: LO < HI")
    if kind == "integer" and scan and hi - lo + 1 > MAX_SCAN:
        raise ScenarioError(file, "--scan", f"{hi - lo + 1} values; at most {MAX_SCAN}: narrow --range")
    key = stream_key("solve", sc.spec.game, sc.spec.question, s.param)
    sol = Solution(sc, s.param, s.metric, float(s.target), lo, hi, kind, "monte_carlo",
                   "scan" if scan else "bisection",
                   (s.tol or (hi - lo) / 1000) if kind == "continuous" else None)
    use_exact = [exact]
    budget_checked = [False]
    cells: dict = {}

    def cell_at(v):
        """The scenario at ``v``, loaded and validated once, or the ScenarioError the parameter raised."""
        if v not in cells:
            value = int(v) if kind == "integer" else float(v)
            try:
                cells[v] = scenario_mod.load(sc.path, trials=sc.spec.trials, seed=sc.spec.seed,
                                             sweep={s.param: [value]}, trials_guard=False)   # budget: below
            except ScenarioError as e:
                cells[v] = e
        return cells[v]

    def on_grid(v, a=None, b=None):
        """``v`` if the parameter accepts it, else the first of ``v`` rounded to 15, 14, ... 0
        decimals that it accepts (strictly between ``a`` and ``b`` when given); None when none
        is. Integers are always on their grid."""
        if kind == "integer":
            return v
        for c in dict.fromkeys([v] + [round(v, d) for d in range(15, -1, -1)]):
            if (a is None or a < c < b) and not isinstance(cell_at(c), ScenarioError):
                return c
        return None

    def evaluate(v):
        if v in sol.evaluations:
            return
        value = int(v) if kind == "integer" else float(v)
        cell = cell_at(v)
        if isinstance(cell, ScenarioError):
            raise cell
        point = cell.points[0]
        prep = prepare_point(cell, point)
        names = [m.name for m in prep.metrics]
        if s.metric not in names:
            raise ScenarioError(file, "--metric", f"got {s.metric!r}{suggest(s.metric, names)}; metrics at "
                                f"{s.param} = {value}: {', '.join(names)}")
        if use_exact[0] is None:      # decided at the first value: exact mode throughout, or never
            use_exact[0] = sc.question.supports_exact and prep.exact is not None
        if use_exact[0]:
            if prep.exact is None:
                raise ScenarioError(file, "--param", f"no exact answer at {s.param} = {value}; use --monte-carlo")
            try:
                res = exact_point(point, prep)
            except ScenarioError as e:
                if exact is not None:
                    raise
                raise ScenarioError(e.file, e.path, f"{e.message} (solve uses the exact mode where the question "
                                    f"has one: --monte-carlo simulates instead)") from None
            sol.mode = "exact"
        else:
            if not budget_checked[0]:        # before the first kernel call
                scenario_mod.check_trial_budget(file, "trials", sc.spec.trials,
                                                planned_values(kind, lo, hi, scan, sol.tol), "values", force)
                budget_checked[0] = True
            acc, _, _ = simulate_point(cell, point, prep, key=key)
            res = summarize(point, prep, acc)
            sol.trials += acc.trials
        m = res.summaries[s.metric]
        sol.unaffected_by = list(prep.metrics[names.index(s.metric)].unaffected_by)
        sol.evaluations[v] = Evaluation(value, m.mean, m.se, m.ci_low, m.ci_high, res.trials)
        for ph, examples in ((ph, ph.is_example) for ph in res.placeholders):
            target_list = sol.example_values if examples else sol.placeholders
            d = ph.as_dict()
            if d not in target_list:
                target_list.append(d)
        for f in res.data_files:
            if f not in sol.data_files:
                sol.data_files.append(f)
        for note in res.notes:
            if note not in sol.notes:
                sol.notes.append(note)
        if on_eval is not None:
            on_eval(value)
        interrupt.check()

    if scan:
        values = list(range(lo, hi + 1)) if kind == "integer" else \
            [lo + (hi - lo) * k / (CONTINUOUS_SCAN - 1) for k in range(CONTINUOUS_SCAN)]
        values = list(dict.fromkeys(on_grid(v) if on_grid(v) is not None else v for v in values))
        for v in values:
            evaluate(v)
        start = sol.side(values[0])
        sol.value = next((sol.evaluations[v].value for v in values if sol.side(v) != start), None)
    else:
        evaluate(lo)
        evaluate(hi)
        start = sol.side(lo)
        if sol.side(hi) != start:
            a, b = lo, hi
            for _ in range(MAX_STEPS):
                if kind == "integer" and b - a <= 1 or kind == "continuous" and b - a <= sol.tol:
                    break
                mid = (a + b) // 2 if kind == "integer" else on_grid((a + b) / 2, a, b)
                if mid is None:
                    sol.notes.append(f"{s.param} accepts no value between {a:g} and {b:g}: the bracket is at the "
                                     f"parameter's resolution")
                    break
                evaluate(mid)
                a, b = (mid, b) if sol.side(mid) == start else (a, mid)
            sol.value = sol.evaluations[b].value
            if kind == "integer" and b + 1 <= hi:
                evaluate(b + 1)                     # the neighbour past the crossing
        sol.notes.insert(0, f"bisection assumes {s.metric} is monotone in {s.param} between {lo:g} and {hi:g}; "
                            f"--scan evaluates every value")
    _explain(sol, start)
    sol.wall_seconds = time.perf_counter() - t0
    return sol


def _explain(sol: Solution, start: bool) -> None:
    where = "at or above" if start else "below"
    if sol.value is None:
        sol.notes.insert(0, f"{sol.metric} stays {where} {sol.target:g} over {sol.param} = {sol.lo:g} .. {sol.hi:g}: "
                            f"no crossing in the range")
        return
    after = "below" if start else "at or above"
    sol.notes.insert(0, f"{sol.metric} is {where} {sol.target:g} at {sol.param} = {sol.lo:g} and first {after} it at "
                        f"{sol.param} = {sol.value:g}")
    if sol.mode == "monte_carlo":
        ordered = sorted(sol.evaluations)
        k = ordered.index(next(v for v in ordered if sol.evaluations[v].value == sol.value))
        for v in ordered[max(0, k - 1):k + 1]:
            e = sol.evaluations[v]
            if e.ci_low <= sol.target <= e.ci_high:
                sol.notes.append(f"not resolved at this trial count: the 95% CI of {sol.metric} at {sol.param} = "
                                 f"{e.value:g} [{e.ci_low:.4g}, {e.ci_high:.4g}] contains the target; run more trials")


def value_interval(sol: Solution) -> tuple[float | None, float | None]:
    """Monte Carlo: the nearest evaluated values on each side of the crossing whose 95% CIs
    exclude the target (the crossing lies between them, at this confidence); exact: the
    crossing's own bracket."""
    if sol.value is None:
        return None, None
    ordered = sorted(sol.evaluations)
    start = sol.side(ordered[0])
    k = next(i for i, v in enumerate(ordered) if sol.evaluations[v].value == sol.value)

    def clear(v):
        e = sol.evaluations[v]
        return e.ci_high < sol.target or e.ci_low > sol.target

    before = next((sol.evaluations[v].value for v in reversed(ordered[:k]) if clear(v) and sol.side(v) == start),
                  None)
    after = next((sol.evaluations[v].value for v in ordered[k:] if clear(v) and sol.side(v) != start), None)
    return before, after


def document(sol: Solution) -> dict:
    """What ``solve --json`` prints and ``solve.json`` holds."""
    from analyzer.outputs.writer import _json_value
    evs = [sol.evaluations[v].as_dict() for v in sorted(sol.evaluations)]
    neighbours = {}
    if sol.value is not None and sol.kind == "integer":
        for name, v in (("before", sol.value - 1), ("at", sol.value), ("after", sol.value + 1)):
            match = [e for e in evs if e["value"] == v]
            if match:
                neighbours[name] = match[0]
    return _json_value({
        "param": sol.param, "value": sol.value, "metric": sol.metric, "target": sol.target,
        "evaluations": evs, "scenario": sol.sc.name, "game": sol.sc.spec.game, "question": sol.sc.spec.question,
        "seed": sol.sc.spec.seed, "mode": sol.mode, "kind": sol.kind, "method": sol.method,
        "range": [sol.lo, sol.hi], "tol": sol.tol, "metric_unaffected_by": sol.unaffected_by,
        "trials_per_value": None if sol.mode == "exact" else sol.sc.spec.trials,
        "value_interval": list(value_interval(sol)), "neighbours": neighbours,
        "placeholders": sol.placeholders, "example_values": sol.example_values, "notes": sol.notes})


def figure(doc: dict):
    """The metric against the parameter (every evaluated value, with its 95% CI), the target
    and the crossing."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from analyzer.analyses.balance.common import footer
    from analyzer.outputs.plots import STYLE
    evs = doc["evaluations"]
    xs = [e["value"] for e in evs]
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(7, 4))
        means = [e["mean"] for e in evs]
        err = [[max(0.0, e["mean"] - e["ci_low"]) for e in evs], [max(0.0, e["ci_high"] - e["mean"]) for e in evs]]
        ax.errorbar(xs, means, yerr=err if doc["mode"] != "exact" else None, fmt="o-", capsize=3, ms=4,
                    label=f"{doc['metric']} ({'exact' if doc['mode'] == 'exact' else '95% CI'})")
        ax.axhline(doc["target"], color="tab:red", lw=1, ls="--", label=f"target {doc['target']:g}")
        if doc["value"] is not None:
            at = next(e for e in evs if e["value"] == doc["value"])
            ax.axvline(doc["value"], color="tab:green", lw=1)
            ax.annotate(f" {doc['param']} = {doc['value']:g}: {at['mean']:.4g}", (doc["value"], at["mean"]),
                        fontsize=8, color="tab:green")
        ax.set_xlabel(doc["param"])
        ax.set_ylabel(doc["metric"])
        found = f"first crossing at {doc['value']:g}" if doc["value"] is not None else "no crossing in the range"
        ax.set_title(f"{doc['scenario']}: where does {doc['metric']} cross {doc['target']:g}?\n{found} "
                     f"({doc['method']}, {doc['mode'].replace('_', ' ')})", fontsize=9)
        ax.legend(fontsize=8)
        footer(fig, doc, doc["mode"], "solve.json",
               {"name": doc["metric"], "unaffected_by": doc.get("metric_unaffected_by", [])})
    return fig


def write(sol: Solution, out_root: Path, *, threads: int, formats: tuple[str, ...] = ("png",)) -> Path:
    """``<out>/<scenario file stem>-solve/<run-id>/``: solve.json, evaluations.parquet, the plot,
    manifest.json and report.html, written atomically."""
    import matplotlib.pyplot as plt
    import pandas as pd

    from analyzer.outputs import writer as outputs
    from analyzer.core import paths
    from analyzer.outputs import report as rp
    from analyzer.core.formats import MANIFEST_JSON, SOLVE_JSON
    from analyzer.analyses.balance.common import manifest, report_page
    doc = document(sol)
    with outputs.RunFolderBuild(Path(out_root), f"{outputs.folder_name(sol.sc)}-solve", sol.sc.digest) as build:
        tmp = build.tmp
        outputs.write_parquet(pd.DataFrame(doc["evaluations"]), tmp / "evaluations.parquet")
        outputs.write_document(tmp, SOLVE_JSON, doc)
        fig = figure(doc)
        from analyzer.outputs.plots import bounded_bbox
        bbox = bounded_bbox(fig)
        for fmt in formats:
            paths.write_atomic(tmp, f"solve_{doc['metric']}_vs_{doc['param']}.{fmt}",
                               lambda fh: fig.savefig(fh, format=fmt, bbox_inches=bbox))
        plt.close(fig)
        man = manifest(sol.sc, kind="solve", trials=sol.trials, wall_seconds=sol.wall_seconds, threads=threads,
                       data_files=sol.data_files, extra={"mode": sol.mode})
        outputs.write_document(tmp, MANIFEST_JSON, man)
        answer = (f"{doc['param']} = {doc['value']:g}" if doc["value"] is not None else "no crossing in the range")
        sections = [f"<h2>Answer: {rp._e(answer)}</h2>",
                    rp._table(["value", "mean", "se", "95% CI low", "95% CI high", "trials"],
                              [[e["value"], e["mean"], e["se"], e["ci_low"], e["ci_high"], e["trials"]]
                               for e in doc["evaluations"]], numeric_from=0)]
        html = report_page(f"{sol.sc.name}: solve {doc['metric']} = {doc['target']:g}",
                           f"{doc['game']} / {doc['question']} · {doc['param']} in [{sol.lo:g}, {sol.hi:g}] · "
                           f"{doc['method']} · {doc['mode']} · seed {doc['seed']}", sections, tmp, doc, man)
        data = html.encode("utf-8")
        paths.write_atomic(tmp, "report.html", lambda fh: fh.write(data))
    return build.path
