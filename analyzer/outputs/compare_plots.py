"""The figures of a comparison folder (``analyzer compare``) and of a sensitivity folder
(``analyzer sensitivity``), drawn from the documents those folders hold (``comparison.json``,
``sensitivity.json``), so a report can be rebuilt from the folder alone.

- :func:`comparison_figure`: the primary metric of A and of B with their 95% CIs, and beside it
  the paired difference B - A with its 95% CI (common random numbers: the CI of the difference is
  far narrower than the two sides' CIs suggest), one position per sweep point.
- :func:`tornado_figure`: per varied input, a bar from 0 to each variant's effect on the metric
  (B - A on common random numbers) with its 95% CI, the largest first; placeholders (values the rule
  source does not give) are hatched and their labels red.
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from analyzer.core import paths  # noqa: E402
from analyzer.core.stats import NO_DETECTABLE_EFFECT  # noqa: E402
from analyzer.outputs.plots import STYLE, MAX_DRAWN_VALUE, bounded_bbox, drawn, footer  # noqa: E402

COMPARISON_FIGURE = "comparison.png"
TORNADO_FIGURE = "tornado.png"
#: bars drawn in a tornado chart (the variants with the largest effects)
TORNADO_TOP = 15
#: the variant kinds whose base value the rule source does not give
PLACEHOLDER_KINDS = ("placeholder", "parameter default")
DPI = 120


def primary_metric(doc: dict) -> str:
    """The metric a comparison answers with: the question's primary metric where the document's
    points carry it, else their first metric."""
    from analyzer.core import questions
    names = list(doc["points"][0]["metrics"])
    q = questions.get(str(doc["game"]), str(doc["question"]))
    wanted = getattr(q, "primary_metric", None)
    return wanted if wanted in names else names[0]


def _point_label(pt: dict) -> str:
    def one(swept: dict) -> str:
        return ", ".join(f"{k}={drawn(v, MAX_DRAWN_VALUE)}" for k, v in swept.items())
    if pt["swept_a"] == pt["swept_b"]:
        return one(pt["swept_a"]) or f"point {pt['point']}"
    return f"A: {one(pt['swept_a'])}\nB: {one(pt['swept_b'])}"


def _ci_bar(ax, x: float, s: dict, colour: str, label: str | None = None) -> None:
    mean, lo, hi = s.get("mean"), s.get("ci_low"), s.get("ci_high")
    if mean is None:
        return
    err = None if lo is None or hi is None else [[max(mean - lo, 0.0)], [max(hi - mean, 0.0)]]
    ax.errorbar([x], [mean], yerr=err, fmt="o", color=colour, capsize=4, lw=1.5, label=label)


def comparison_figure(doc: dict, metric: str):
    """A and B (left) and B - A (right) of ``metric`` at every point, each with its 95% CI."""
    pts = doc["points"]
    labels = [_point_label(pt) for pt in pts]
    width = min(14.0, 7.0 + 0.35 * len(pts))
    with plt.rc_context(STYLE):
        fig, (left, right) = plt.subplots(1, 2, figsize=(width, 4.2), constrained_layout=True)
        for i, pt in enumerate(pts):
            m = pt["metrics"][metric]
            _ci_bar(left, i - 0.12, m["a"], "tab:blue", "A" if i == 0 else None)
            _ci_bar(left, i + 0.12, m["b"], "tab:orange", "B" if i == 0 else None)
            _ci_bar(right, i, m["diff_b_minus_a"], "black", "B − A (paired)" if i == 0 else None)
        right.axhline(0, color="gray", lw=0.8)
        for ax in (left, right):
            ax.set_xticks(range(len(pts)), labels, rotation=30 if len(pts) > 3 else 0,
                          ha="right" if len(pts) > 3 else "center", fontsize=8)
            ax.set_xlim(-0.6, len(pts) - 0.4)
            ax.set_xlabel("sweep point" if len(pts) > 1 else "")
        left.set_ylabel(f"mean {drawn(metric)} (95% CI)")
        right.set_ylabel("B − A (paired 95% CI)")
        left.legend(fontsize=8, loc="best")
        left.set_title("A and B, each with its 95% CI", fontsize=9)
        right.set_title("difference B − A on common random numbers", fontsize=9)
        fig.suptitle(textwrap.fill(f"{drawn(doc['name_a'])} (A) vs {drawn(doc['name_b'])} (B): {drawn(metric)}", 80),
                     fontsize=10)
        footer(fig, {"game": doc["game"], "question": doc["question"], "seed": doc["seed"], "mode": "comparison",
                     "placeholders": unique_values(pts, "placeholders"),
                     "example_values": unique_values(pts, "example_values")})
        for text in fig.texts + [t for ax in fig.axes for t in ax.texts]:   # the footer names the run's file
            text.set_text(text.get_text().replace("summary.json", "comparison.json"))
    return fig


def unique_values(points: list[dict], key: str) -> list[dict]:
    """The values under ``key`` of every point, each once (by path, source and value)."""
    seen: dict[tuple, dict] = {}
    for pt in points:
        for v in pt.get(key, []):
            seen.setdefault((v.get("path"), v.get("source"), repr(v.get("value"))), v)
    return list(seen.values())


def _is_lower(row: dict) -> bool:
    if row.get("kind") == "value group":       # "each one step down" / "each x0.8": the lower variant
        return "down" in str(row["value"]) or _factor_below_one(str(row["value"]))
    try:
        return float(row["value"]) < float(row["base"])
    except (TypeError, ValueError):
        return True


def _factor_below_one(label: str) -> bool:
    try:
        return float(label.rsplit("x", 1)[1]) < 1
    except (IndexError, ValueError):
        return False


def _short(what: str, kind: str) -> str:
    text = what if len(what) <= 48 else "…" + what[-47:]
    return f"{'* ' if kind in PLACEHOLDER_KINDS else ''}{text} [{kind}]"


def tornado_figure(doc: dict, top: int = TORNADO_TOP):
    """The ``top`` inputs of ``sensitivity.json``'s ``doc`` with the largest effect: per input, a
    bar from 0 to the effect of each variant (one step down, one step up, each other reading or
    policy choice; a value group's two variants on one row) with its 95% CI; a placeholder's bars
    hatched and its label red."""
    ok = [r for r in doc["variants"] if not r.get("error")]
    by_what: dict[str, list[dict]] = {}
    for r in ok:
        by_what.setdefault(r["what"], []).append(r)
    order = sorted(by_what, key=lambda w: -max(abs(r["effect"]) for r in by_what[w]))[:top]
    fig, ax = plt.subplots(figsize=(9, 0.45 * max(len(order), 3) + 1.8))
    for row, what in enumerate(reversed(order)):
        effects = by_what[what]
        none = [e for e in effects if e["effect"] == 0 and e["se"] == 0]   # every paired batch equal (CI still > 0 wide)
        moved = [e for e in effects if e not in none]
        readings = any(e["kind"] in ("rule option", "what-if rule", "policy") for e in moved)
        for k, e in enumerate(moved):
            spread = len(moved) > 2 or (readings and len(moved) > 1)   # one bar per other reading
            y = row + (0.5 / len(moved) * (k - (len(moved) - 1) / 2) if spread else 0)
            colour = "tab:blue" if _is_lower(e) else "tab:orange"
            ax.barh(y, e["effect"], color=colour, alpha=0.75, height=0.6 / len(moved) if spread else 0.6,
                    hatch="//" if e["kind"] in PLACEHOLDER_KINDS else None, edgecolor="white")
            ax.plot([e["ci_low"], e["ci_high"]], [y, y], color="black", lw=1)
            ax.annotate(f" {drawn(e['value'], MAX_DRAWN_VALUE)} ", (e["effect"], y), fontsize=7, va="center",
                        ha="left" if e["effect"] >= 0 else "right")
        if none:
            ax.annotate(f"  {NO_DETECTABLE_EFFECT}: " + ", ".join(drawn(e["value"], MAX_DRAWN_VALUE) for e in none),
                        (0, row), fontsize=7, va="center", ha="left", color="gray")
    ax.set_yticks(range(len(order)), [_short(w, by_what[w][0]["kind"]) for w in reversed(order)], fontsize=8)
    for tick, what in zip(ax.get_yticklabels(), reversed(order)):
        if by_what[what][0]["kind"] in PLACEHOLDER_KINDS:
            tick.set_color("firebrick")
    ax.axvline(0, color="gray", lw=0.8)
    ax.set_ylim(-0.7, len(order) - 0.3)
    ax.set_xlabel(f"change of mean {drawn(doc['metric'])} (B − A, 95% CI; base {doc['base_mean']:.4g})")
    ax.set_title(textwrap.fill(f"{drawn(doc['scenario'])}: what moves mean {drawn(doc['metric'])} most, one variant "
                               "at a time", 90) + "\nblue = one step down or another reading, orange = one step "
                 "up; black = 95% CI; * hatched, red = a placeholder", fontsize=9)
    fig.tight_layout()
    return fig


def save(fig, folder: Path, name: str) -> Path:
    """``folder/name`` as PNG (bounded: :func:`analyzer.outputs.plots.bounded_bbox`), atomically; closes ``fig``."""
    try:
        bbox = bounded_bbox(fig, dpi=DPI)
        return paths.write_atomic(Path(folder), name, lambda fh: fig.savefig(fh, format="png", dpi=DPI,
                                                                              bbox_inches=bbox))
    finally:
        plt.close(fig)
