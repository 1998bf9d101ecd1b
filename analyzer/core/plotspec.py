"""The ``plots:`` entries of a scenario, checked before any trial runs (and by ``validate``)
without importing matplotlib."""
from __future__ import annotations

from analyzer.core.errors import AnalyzerError


class PlotError(AnalyzerError, ValueError):
    pass


def check_specs(specs: list, metric_names: set[str], swept: list[str]) -> None:
    """Raise :class:`PlotError` for a ``plots:`` entry that cannot be drawn."""
    for i, spec in enumerate(specs):
        if not isinstance(spec, dict) or "kind" not in spec or "metric" not in spec:
            raise PlotError(f"plots[{i}]: each plot needs kind and metric, e.g. "
                            "{kind: heatmap, metric: p_damage, x: attack_dice, y: target.dr}")
        unknown = set(spec) - {"kind", "metric", "x", "y", "group"}
        if unknown:
            raise PlotError(f"plots[{i}].{sorted(unknown)[0]}: unknown key; allowed: kind, metric, x, y, group")
        if spec["kind"] not in ("heatmap", "line", "bars"):
            raise PlotError(f"plots[{i}].kind: got {spec['kind']!r}; allowed: heatmap, line, bars")
        if spec["metric"] not in metric_names:
            raise PlotError(f"plots[{i}].metric: got {spec['metric']!r}; allowed: {', '.join(sorted(metric_names))}")
        need = {"heatmap": ("x", "y"), "line": ("x",), "bars": ()}[spec["kind"]]
        for axis in need:
            if axis not in spec:
                raise PlotError(f"plots[{i}].{axis}: a {spec['kind']} plot needs {' and '.join(need)}")
        for axis in ("x", "y", "group"):
            if axis in spec and spec[axis] not in swept:
                raise PlotError(f"plots[{i}].{axis}: got {spec[axis]!r}; allowed: swept parameters "
                                f"{', '.join(swept) or '(none: add a sweep)'}")


def check_scenario_plots(scenario, prepared) -> None:
    """A scenario's ``plots:`` list against its first point's metrics and its sweep, as a
    :class:`analyzer.core.errors.ScenarioError` naming the file."""
    from analyzer.core.errors import ScenarioError
    try:
        check_specs(scenario.spec.plots, {m.name for m in prepared.metrics}, list(scenario.spec.sweep))
    except PlotError as e:
        raise ScenarioError(str(scenario.path), "", str(e)) from None
