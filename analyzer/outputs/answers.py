"""``answers.parquet``: a run's answers as one tidy long table, the table notebooks, reports and
``analyzer index`` read instead of parsing notes.

One row per sweep point x metric (``row == "metric"``): the point, its swept values as columns,
the metric split into what it measures (``quantity``) and of which game entity (``entity``: a
fleet, gun, allocation, pattern, unit; empty for a metric of the whole point), the metric's further
coordinates (:attr:`~analyzer.core.questions.Metric.coords`, e.g. a B-17 cell's clock and
altitude) as columns, mean, SE, 95% CI,
whether the value is exact, the trials behind it, and the facts a question gives per entity
(:attr:`analyzer.core.questions.Prepared.entity_columns`, e.g. a fleet's ``cost``; under the key
``None``, facts of the whole point, e.g. a unit's points cost, on every metric row of the point; a
fact named like a swept parameter or a fixed column is written as ``fact.<name>``). Where a
question ranks entities, ``rank`` / ``tie_group`` / ``in_best_set`` and the paired difference to
the best with its simultaneous CI (``diff_to_best``, ``_low``, ``_high``) come from its rankings
(``PointResult.rankings``, :mod:`analyzer.core.ranking`; a ranking of the sweep's points, e.g. units, on each
point's row of the ranked metric); otherwise they are empty. The best option's row of a Monte-Carlo
ranking also holds its re-estimate on fresh streams (``Ranking.reestimate``, :mod:`analyzer.run.reestimate`):
``fresh_mean`` with its 95% CI ``fresh_low`` / ``fresh_high`` over ``fresh_trials`` trials, and
``selection_bias`` = the run's mean - the fresh mean with its 95% CI (``_low``, ``_high``). Then one row per note of a point
(``row == "note"``, the note in ``note``), in the order the point carries them.
"""
from __future__ import annotations

import json
from typing import Any

import pandas as pd

from analyzer.core.questions import quantity_and_entity
from analyzer.core.results import PointResult

#: the table's own columns, in order; a swept parameter of the same name is written as ``param.<name>``
FIXED_COLUMNS = ("point", "row", "metric", "quantity", "entity", "kind", "mean", "se", "ci_low", "ci_high",
                 "exact", "trials", "rank", "tie_group", "in_best_set", "diff_to_best", "diff_to_best_low",
                 "diff_to_best_high", "fresh_mean", "fresh_low", "fresh_high", "fresh_trials", "selection_bias",
                 "selection_bias_low", "selection_bias_high", "note")
#: the columns of a ranking's best re-estimated on fresh streams (``Ranking.reestimate``) and its keys
FRESH_COLUMNS = {"fresh_mean": "fresh_mean", "fresh_low": "fresh_low", "fresh_high": "fresh_high",
                 "fresh_trials": "trials", "selection_bias": "race_minus_fresh",
                 "selection_bias_low": "race_minus_fresh_low", "selection_bias_high": "race_minus_fresh_high"}


def _swept_column(name: str) -> str:
    return f"param.{name}" if name in FIXED_COLUMNS else name


def _scalar(v: Any) -> Any:
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    return json.dumps(v, sort_keys=True, default=str)


def _ranks(result: PointResult) -> dict[tuple[str, str | None], dict]:
    """The point's rankings (:class:`analyzer.core.ranking.Ranking`) by (quantity, entity) and by
    (metric name, None): an option is named by the entity it ranks or by its metric."""
    out: dict[tuple[str, str | None], dict] = {}
    for ranking in result.rankings:
        for option in ranking.options:
            facts = {"rank": option.rank, "tie_group": option.tie_group, "in_best_set": option.in_best_set,
                     "diff_to_best": option.diff, "diff_to_best_low": option.diff_low,
                     "diff_to_best_high": option.diff_high}
            if ranking.reestimate is not None and option.name == ranking.best:
                facts.update((c, ranking.reestimate[k]) for c, k in FRESH_COLUMNS.items())
            if ranking.own is not None:       # options are sweep points: this point's metric row
                if option.name == ranking.own:
                    out[(ranking.metric, None)] = facts
                continue
            out[(ranking.metric, option.name)] = facts
            out[(option.name, None)] = facts
    return out


def answers_table(results: list[PointResult]) -> pd.DataFrame:
    """The tidy long table of ``results`` (see the module docstring)."""
    swept = list(dict.fromkeys(k for r in results for k in r.point.swept))
    coords = list(dict.fromkeys(c for r in results for m in r.metrics for c, _ in m.coords))
    coords = [c for c in coords if c not in FIXED_COLUMNS and c not in swept]
    extra = list(dict.fromkeys(c for r in results for cols in r.entity_columns.values() for c in cols))
    taken = {*FIXED_COLUMNS, *(_swept_column(k) for k in swept), *coords}
    fact_column = {c: f"fact.{c}" if c in taken else c for c in extra}   # a fact never hides a swept value
    rows: list[dict[str, Any]] = []
    for r in results:
        where = {_swept_column(k): _scalar(v) for k, v in r.point.swept.items()}
        ranks = _ranks(r)
        for metric in r.metrics:
            s = r.summaries.get(metric.name)
            if s is None:
                continue
            quantity, entity = quantity_and_entity(metric)
            row = {"point": r.point.index, "row": "metric", **where, "metric": metric.name,
                   "quantity": quantity, "entity": entity, "kind": metric.kind, "mean": s.mean, "se": s.se,
                   "ci_low": s.ci_low, "ci_high": s.ci_high, "exact": bool(r.exact), "trials": r.trials}
            row.update((c, _scalar(v)) for c, v in metric.coords if c in coords)
            row.update(ranks.get((quantity, entity)) or ranks.get((metric.name, None)) or {})
            facts = {**r.entity_columns.get(None, {}), **(r.entity_columns.get(entity, {}) if entity is not None else {})}
            row.update((fact_column[c], _scalar(v)) for c, v in facts.items())
            rows.append(row)
        for note in dict.fromkeys(r.notes):
            rows.append({"point": r.point.index, "row": "note", **where, "exact": bool(r.exact),
                         "trials": r.trials, "note": note})
    columns = ["point", "row", *(_swept_column(k) for k in swept), *FIXED_COLUMNS[2:5], *coords,
               *FIXED_COLUMNS[5:], *fact_column.values()]
    table = pd.DataFrame(rows, columns=columns)
    for c in ("mean", "se", "ci_low", "ci_high", "diff_to_best", "diff_to_best_low", "diff_to_best_high",
              *(c for c in FRESH_COLUMNS if c != "fresh_trials")):
        table[c] = table[c].astype("float64")
    table["fresh_trials"] = table["fresh_trials"].astype("Int64")
    table["point"] = table["point"].astype("int64")
    table["trials"] = table["trials"].astype("int64")
    table["exact"] = table["exact"].astype("bool")
    table["rank"] = table["rank"].astype("Int64")
    table["tie_group"] = table["tie_group"].astype("Int64")
    table["in_best_set"] = table["in_best_set"].astype("boolean")
    for c in ("row", "metric", "quantity", "entity", "kind", "note"):
        table[c] = table[c].astype("string")
    for c, column in fact_column.items():   # an integer fact stays an integer beside the note rows' gaps
        given = [cols[c] for r in results for cols in r.entity_columns.values() if c in cols]
        if given and all(isinstance(v, int) and not isinstance(v, bool) for v in given):
            table[column] = table[column].astype("Int64")
    return table


def comparison_table(results_a: list[PointResult], results_b: list[PointResult], differences: list[dict]) -> pd.DataFrame:
    """A comparison's answers: :func:`answers_table` of each side with a ``side`` column (``a``,
    ``b``), then the paired differences B - A (``side == "b_minus_a"``, B's metric rows with the
    difference's mean, SE and CI from ``differences``, per point as ``comparison.json`` holds them):
    the rows that answer the comparison."""
    a, b = answers_table(list(results_a)), answers_table(list(results_b))
    a.insert(0, "side", "a")
    b.insert(0, "side", "b")
    diffs = b[b["row"] == "metric"].copy()
    diffs["side"] = "b_minus_a"
    by_point = {d["point"]: d["metrics"] for d in differences}
    for stat in ("mean", "se", "ci_low", "ci_high"):
        diffs[stat] = [by_point[pt][m]["diff_b_minus_a"][stat] for pt, m in zip(diffs["point"], diffs["metric"])]
    table = pd.concat([a, b, diffs], ignore_index=True)
    table["side"] = table["side"].astype("string")
    return table


#: the columns of a sensitivity folder's answers that say which input a row varies
SENSITIVITY_COLUMNS = ("input", "input_kind", "base_value", "variant_value", "file", "error")


def sensitivity_table(doc: dict) -> pd.DataFrame:
    """A sensitivity folder's answers (``sensitivity.json``'s ``doc``): the unchanged point's mean
    of the metric (``row == "base"``), then one row per variant (``row == "variant"``, ``side ==
    "b_minus_a"``): its effect on the metric, B - A on common random numbers, as mean, SE and 95%
    CI, ranked by size (``rank``), with the input it moves (``input``, ``input_kind``: placeholder,
    rule option...), the value in the scenario and the value tried; a variant that could not run
    has its reason in ``error`` and no effect."""
    quantity, _, entity = doc["metric"].partition(".")
    common = {"point": 0, "metric": doc["metric"], "quantity": quantity, "entity": entity or None,
              "exact": False, "trials": doc["trials"]}
    rows = [{"side": "base", "row": "base", **common, "mean": doc["base_mean"]}]
    for v in doc["variants"]:
        rows.append({"side": "b_minus_a", "row": "variant", **common, "mean": v["effect"], "se": v["se"],
                     "ci_low": v["ci_low"], "ci_high": v["ci_high"], "rank": v["rank"], "input": v["what"],
                     "input_kind": v["kind"], "base_value": v["base"], "variant_value": v["value"],
                     "file": v["file"], "error": v["error"] or None})
    table = pd.DataFrame(rows, columns=["side", "point", "row", *FIXED_COLUMNS[2:5], "mean", "se", "ci_low",
                                        "ci_high", "exact", "trials", "rank", *SENSITIVITY_COLUMNS])
    for c in ("mean", "se", "ci_low", "ci_high"):
        table[c] = table[c].astype("float64")
    table["point"] = table["point"].astype("int64")
    table["trials"] = table["trials"].astype("int64")
    table["exact"] = table["exact"].astype("bool")
    table["rank"] = table["rank"].astype("Int64")
    for c in ("side", "row", "metric", "quantity", "entity", *SENSITIVITY_COLUMNS):
        table[c] = table[c].astype("string")
    return table
