"""Plots rendered from a run folder's tables (so ``analyzer plot`` can redo them).

Defaults by sweep shape: no sweep -> distribution bars with Wilson 95% intervals per bar
and a bar chart of probabilities; one swept parameter -> metric vs parameter with CI
bands; two or more -> heatmaps of the probability metrics. A scenario's ``plots:`` list
adds explicit plots (``{kind: heatmap|line|bars, metric: NAME, x: PATH, y: PATH}``) and a
question may add its own figures. A default figure is left out when its metric is constant
(:func:`constant`) or when a ``plots:`` entry draws the same figure (:func:`all_figures`).
Exact runs draw no intervals and say "exact". Footers and long labels are wrapped to the figure.
"""
from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from analyzer.core import paths  # noqa: E402
from analyzer.core.stats import Z95  # noqa: E402

#: ``text.parse_math: False``: every string is drawn literally. Scenario names, parameter
#: values, metric labels and data names (fighter types, weapons, sensors) are someone else's
#: text, and mathtext raised on ``$\unknownmacro$`` only in ``savefig``, after every trial had
#: run (and the run folder went with it). No figure of the analyzer uses mathtext on purpose.
STYLE = {"figure.dpi": 110, "axes.spines.top": False, "axes.spines.right": False,
         "axes.grid": True, "grid.alpha": 0.3, "font.size": 10, "text.parse_math": False}
MAX_DEFAULT_METRICS = 6
#: Longest scenario name drawn in a title (the full name is in summary.json and report.html).
MAX_DRAWN_NAME = 100
#: Longest parameter value drawn as a tick label, legend entry or heatmap slice.
MAX_DRAWN_VALUE = 40
#: Largest side of any saved figure, in pixels. A heatmap sized per swept value (250 x 400
#: values: 16,600 x 19,900 px) or a title stretched by ``bbox_inches="tight"`` (a
#: 10,000-character name: 130,000 px) would otherwise die in savefig, after the whole run.
MAX_FIGURE_PX = 4000
#: Most entries a legend lists (one per sweep point in an explicit ``bars`` plot).
MAX_LEGEND_ENTRIES = 20


from analyzer.core.plotspec import PlotError, check_specs  # noqa: E402,F401  (re-exported)


def drawn(value: object, limit: int = MAX_DRAWN_NAME) -> str:
    """A user- or data-supplied value as a figure draws it: one line (line breaks, control and
    format characters become spaces; a lone surrogate, an undecodable byte of a file name that
    the font code cannot take, becomes ``?``) of at most ``limit`` characters (longer: cut,
    ending in ``…``). Mathtext is off in :data:`STYLE` (and :func:`literal`): ``$`` stays ``$``."""
    import unicodedata
    text = "".join("?" if unicodedata.category(ch) == "Cs" else
                   " " if unicodedata.category(ch)[0] == "C" or ch in "\u2028\u2029" else ch for ch in str(value))
    return text if len(text) <= limit else text[:limit - 1] + "…"


def literal(fig) -> None:
    """Draw every text of ``fig`` literally (no mathtext), whatever rcParams were in force when
    its texts were made: for figures built outside :data:`STYLE` (the tornado chart)."""
    from matplotlib.text import Text
    for t in fig.findobj(Text):
        t.set_parse_math(False)


def bounded_bbox(fig, dpi: float | None = None):
    """Make ``fig`` fit :data:`MAX_FIGURE_PX` (saved at ``dpi``, default savefig's) and return
    the ``bbox_inches`` to save it with: ``"tight"`` (as always), or ``None`` (the figure's own,
    capped, area; text reaching past it is cut) when the tight box would exceed the cap (a long
    data name in a game's figure). Checked on the figure's tight box before saving (cheap: no
    pixels are drawn). Also :func:`literal`."""
    if dpi is None:
        dpi = plt.rcParams["savefig.dpi"]
        dpi = fig.dpi if dpi == "figure" else float(dpi)
    cap = MAX_FIGURE_PX / dpi
    w, h = fig.get_size_inches()
    if w > cap or h > cap:
        fig.set_size_inches(min(w, cap), min(h, cap))
    literal(fig)
    box = fig.get_tightbbox()
    pad = 2 * float(plt.rcParams["savefig.pad_inches"])
    if box is None or (box.width + pad) * dpi <= MAX_FIGURE_PX and (box.height + pad) * dpi <= MAX_FIGURE_PX:
        return "tight"
    return None


#: A title longer than this many characters is wrapped (a long name must not widen the figure).
TITLE_WRAP = 80


def _title(meta: dict, what: str) -> str:
    import textwrap
    return textwrap.fill(f"{drawn(meta['scenario'])} — {what}", TITLE_WRAP)


def relevant(values: list[dict], meta: dict, metrics: list[str] | None) -> list[dict]:
    """The placeholders (or example values) that can change at least one of ``metrics``
    (all of them when ``metrics`` is None), by each metric's ``unaffected_by``."""
    if metrics is None:
        return list(values)
    info = {m["name"]: m for m in meta["metrics"]}

    def affects(ph: dict, name: str) -> bool:
        return not any(ph["path"] == p or ph["path"].startswith((p + ".", p + "["))
                       for p in info.get(name, {}).get("unaffected_by", []))
    return [ph for ph in values if any(affects(ph, name) for name in metrics)]


def footer(fig, meta: dict, metrics: list[str] | None = None) -> None:
    """The provenance line under a figure (below the axes, so it never covers a label); red
    when the plotted ``metrics`` (all, when None) depend on placeholder values."""
    n_ph = len(relevant(meta.get("placeholders", []), meta, metrics))
    examples = relevant(meta.get("example_values", []), meta, metrics)
    bounds = sum(1 for e in examples if e.get("establishes") != "exact")
    text = f"{meta['game']} / {meta['question']} · seed {meta['seed']} · {meta['mode']}"
    if n_ph:
        text += f" · uses {n_ph} PLACEHOLDER value(s) not in the rule source (see summary.json)"
    if examples:
        text += f" · {len(examples)} value(s) derived from source examples" + \
            (f", {bounds} only bounded by them" if bounds else "")
    colour = "firebrick" if n_ph or bounds else "gray"
    place_footer(fig, text, colour)


#: Font size of a figure's provenance footer.
FOOTER_SIZE = 7


def fit_text(fig, text: str, fontsize: float, width_fraction: float = 0.98) -> str:
    """``text`` wrapped (at its " · " joints first, then at spaces) so that no line is wider
    than ``width_fraction`` of ``fig``: a footer or caption never widens the saved canvas."""
    import textwrap
    from matplotlib.font_manager import FontProperties
    renderer = fig.canvas.get_renderer()
    font = FontProperties(size=fontsize)
    room = width_fraction * fig.get_size_inches()[0] * fig.dpi

    def width(line: str) -> float:
        return renderer.get_text_width_height_descent(line, font, ismath=False)[0]
    lines: list[str] = []
    for line in text.split("\n"):
        if width(line) <= room:
            lines.append(line)
            continue
        per_char = width(line) / max(1, len(line))
        chars = max(10, int(room / per_char))
        current = ""
        for part in line.split(" · "):
            joined = f"{current} · {part}" if current else part
            if width(joined) <= room:
                current = joined
                continue
            if current:
                lines.append(current)
            pieces = textwrap.wrap(part, chars) or [""]
            lines.extend(pieces[:-1])
            current = pieces[-1]
        lines.append(current)
    return "\n".join(lines)


def place_footer(fig, text: str, colour: str) -> None:
    """Draw ``text`` (fitted to the figure's width) as a figure-level line just under everything
    the axes draw (tick labels, x labels: wherever the layout puts them when drawn). It is one
    of the figure's texts, not an axes child: ``tight_layout`` never shrinks the panels for it."""
    from matplotlib.text import Annotation
    from matplotlib.transforms import Bbox
    shown = [a for a in fig.axes if a.get_visible()]
    if not shown:
        fig.text(0.01, 0.005, fit_text(fig, text, FOOTER_SIZE), fontsize=FOOTER_SIZE, color=colour,
                 ha="left", va="bottom")
        return

    def under_the_axes(renderer):
        return Bbox.union([a.get_tightbbox(renderer) for a in shown])
    note = Annotation(fit_text(fig, text, FOOTER_SIZE), xy=(0.01, 0), xycoords=("figure fraction", under_the_axes),
                      xytext=(0, -4), textcoords="offset points", fontsize=FOOTER_SIZE, color=colour, ha="left",
                      va="top", annotation_clip=False)
    note.set_figure(fig)          # among the figure's texts, as fig.text places them
    fig.texts.append(note)
    note._remove_method = fig.texts.remove


def plain_ticks(axis) -> None:
    """Tick labels of ``axis`` (``ax.xaxis`` / ``ax.yaxis``) each written in full (``4e-06``, ``0.25``):
    no offset or ``1e-5`` multiplier printed apart in a corner, where it reads as a stray label."""
    from matplotlib.ticker import FuncFormatter
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:.3g}"))


def value_text(v: float) -> str:
    """A bar's value as written beside it: three decimals, or three significant digits below 0.001."""
    return f"{v:.3f}" if v == 0 or abs(v) >= 1e-3 else f"{v:.2g}"


def _metric_info(meta: dict) -> dict[str, dict]:
    return {m["name"]: m for m in meta["metrics"]}


def _bars(meta, points, dists, metric: str):
    info = _metric_info(meta)[metric]
    d = dists[dists.metric == metric]
    fig, ax = plt.subplots(figsize=(7, 4))
    for i, (pt, g) in enumerate(d.groupby("point")):
        n = int(points.loc[points.point == pt, "trials"].iloc[0])
        values, probs = g.value.to_numpy(), g.probability.to_numpy()
        width = 0.8 / max(1, d.point.nunique())
        if n > 0 and not exact_run(meta):     # an exact run has no sampling interval
            lo = np.array([_wilson(p, n)[0] for p in probs])
            hi = np.array([_wilson(p, n)[1] for p in probs])
            yerr = np.clip(np.vstack([probs - lo, hi - probs]), 0, None)  # Wilson bounds may round past p
        else:
            yerr = None
        label = drawn(_point_label(points, pt), 2 * MAX_DRAWN_VALUE)
        step = np.min(np.diff(np.unique(values))) if len(values) > 1 else 1.0
        ax.bar(values + (i - (d.point.nunique() - 1) / 2) * width * step, probs, width=width * step,
               yerr=yerr, capsize=2, label=label, alpha=0.85)
    ax.set_xlabel(info["label"])
    ax.set_ylabel("probability")
    ax.set_title(_title(meta, f"distribution of {metric}"))
    if 1 < d.point.nunique() <= MAX_LEGEND_ENTRIES:      # beyond that a legend only hides the plot
        ax.legend(fontsize=7)
    footer(fig, meta, [metric])
    return fig


def _wilson(p: float, n: int) -> tuple[float, float]:
    from analyzer.core.stats import wilson_interval
    return wilson_interval(p * n, n)


def _point_label(points: pd.DataFrame, pt: int) -> str:
    swept = [c for c in points.columns if c not in _NON_PARAM and not _is_stat(c)]
    row = points.loc[points.point == pt].iloc[0]
    return ", ".join(f"{c}={row[c]}" for c in swept) or f"point {pt}"


_NON_PARAM = {"point", "trials"}
_STATS = ("_mean", "_se", "_ci_low", "_ci_high")


def _is_stat(col: str) -> bool:
    return col.endswith(_STATS)


def _line(meta, points, metric: str, x: str, group: str | None = None):
    info = _metric_info(meta)[metric]
    fig, ax = plt.subplots(figsize=(7, 4))
    groups = [(None, points)] if group is None else list(points.groupby(group, sort=True))
    for gval, g in groups:
        g = g.sort_values(x)
        xs = g[x].to_numpy()
        label = None if group is None else drawn(f"{group}={gval}", 2 * MAX_DRAWN_VALUE)
        ax.plot(xs, g[f"{metric}_mean"], marker="o", label=label)
        ax.fill_between(xs, g[f"{metric}_ci_low"], g[f"{metric}_ci_high"], alpha=0.25)
    ax.set_xlabel(x)
    ax.set_ylabel(info["label"] + (" (95% CI band)" if meta["mode"] == "monte_carlo" else ""))
    ax.set_title(_title(meta, f"{metric} vs {x}"))
    if group is not None and len(groups) <= MAX_LEGEND_ENTRIES:
        ax.legend(fontsize=8)
    footer(fig, meta, [metric])
    return fig


#: a heatmap writes its value in each cell only up to this many cells
MAX_LABELLED_CELLS = 600


def _heatmap(meta, points, metric: str, x: str, y: str, fixed: dict | None = None):
    info = _metric_info(meta)[metric]
    sub = points
    for k, v in (fixed or {}).items():
        sub = sub[sub[k] == v]
    table = sub.pivot_table(index=y, columns=x, values=f"{metric}_mean", aggfunc="mean")
    half = sub.pivot_table(index=y, columns=x, values=f"{metric}_se", aggfunc="mean") * Z95
    # sized per swept value, but never past MAX_FIGURE_PX (250 x 400 values asked for a
    # 16,600 x 19,900 px canvas): a capped heatmap keeps every cell, smaller
    cap = MAX_FIGURE_PX / float(plt.rcParams["figure.dpi"])
    width, height = 1.0 + 0.6 * max(4, table.shape[1]), 1.4 + 0.45 * max(3, table.shape[0])
    fig, ax = plt.subplots(figsize=(min(width, cap), min(height, cap)))
    im = ax.imshow(table.to_numpy(dtype=float), aspect="auto", origin="lower", cmap="viridis",
                   vmin=0 if info["kind"] == "probability" else None, vmax=1 if info["kind"] == "probability" else None)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.grid(False)
    fmt = "{:.2f}" if info["kind"] == "probability" else "{:.2g}"
    vals = table.to_numpy(dtype=float)
    # a value in each cell, and a tick label per value, only while every cell has its full
    # size: past MAX_LABELLED_CELLS (or a capped figure) they are unreadable (and slow)
    full = vals.size <= MAX_LABELLED_CELLS and width <= cap and height <= cap
    labelled = vals if full else np.empty((0, 0))
    xs = range(table.shape[1]) if full else range(0, table.shape[1], max(1, -(-table.shape[1] // 20)))
    ys = range(table.shape[0]) if full else range(0, table.shape[0], max(1, -(-table.shape[0] // 20)))
    ax.set_xticks(list(xs), [drawn(table.columns[k], MAX_DRAWN_VALUE) for k in xs])   # at most 20 per axis
    ax.set_yticks(list(ys), [drawn(table.index[k], MAX_DRAWN_VALUE) for k in ys])
    for (i, j), v in np.ndenumerate(labelled):
        if math.isfinite(v):
            hw = half.to_numpy(dtype=float)[i, j]
            show_hw = meta["mode"] == "monte_carlo" and table.size <= 48 and math.isfinite(hw)
            txt = fmt.format(v) + (f"\n±{hw:.1g}" if show_hw else "")
            ax.text(j, i, txt, ha="center", va="center", fontsize=7,
                    color="white" if (v - np.nanmin(vals)) < 0.5 * (np.nanmax(vals) - np.nanmin(vals) + 1e-12) else "black")
    fig.colorbar(im, ax=ax, label=info["label"])
    extra = "" if not fixed else " (" + ", ".join(f"{k}={drawn(v, MAX_DRAWN_VALUE)}" for k, v in fixed.items()) + ")"
    ax.set_title(_title(meta, f"{metric}{extra}"), fontsize=9)
    footer(fig, meta, [metric])
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


def _probability_bars(meta, points):
    probs = [m["name"] for m in meta["metrics"] if m["kind"] == "probability"]
    if not probs:
        return None
    row = points.iloc[0]
    fig, ax = plt.subplots(figsize=(max(4, 1.2 * len(probs) + 2), 3.6))
    means = np.array([row[f"{m}_mean"] for m in probs])
    err = None if exact_run(meta) else _ci_lengths(means, [row[f"{m}_ci_low"] for m in probs],
                                                   [row[f"{m}_ci_high"] for m in probs])
    ax.bar(probs, means, yerr=err, capsize=4, color="steelblue")
    for i, v in enumerate(means):
        ax.text(i, v, f"{v:.3f}", ha="center", va="bottom", fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("probability" + ci_suffix(meta))
    ax.set_title(_title(meta, "probabilities"))
    footer(fig, meta, probs)
    return fig


def constant(meta: dict, points: pd.DataFrame, metric: str) -> bool:
    """True when ``metric`` took one and the same value in every trial of every point: a figure
    of it carries nothing a sentence would not (a campaign that never reaches its turn cap:
    p_turn_cap 0 everywhere). Monte Carlo: zero standard error at every point and one mean; exact
    (every SE is 0 there): a probability that is 0 at every point, or 1 at every point."""
    means, ses = points[f"{metric}_mean"].to_numpy(float), points[f"{metric}_se"].to_numpy(float)
    if not np.all(means == means[0]):
        return False
    if exact_run(meta):
        return _metric_info(meta)[metric]["kind"] == "probability" and means[0] in (0.0, 1.0)
    return bool(np.all(ses == 0))


def default_figures(meta: dict, points: pd.DataFrame, dists: pd.DataFrame, skip: frozenset = frozenset(),
                    skipped: set | None = None) -> list[tuple[str, plt.Figure]]:
    """The figures drawn by sweep shape. A metric other than the primary one that is
    :func:`constant` gets none; ``skip``: the :func:`signature` of figures a scenario's ``plots:``
    list draws anyway (its copy is the one written); each one left out is added to ``skipped``."""
    skipped = set() if skipped is None else skipped

    def wanted(sig: tuple) -> bool:
        if sig in skip:
            skipped.add(sig)
            return False
        return True
    swept = meta["swept"]
    metrics = meta["metrics"]
    primary = meta["primary_metric"]
    ordered = sorted(metrics, key=lambda m: m["name"] != primary)[:MAX_DEFAULT_METRICS]
    ordered = [m for m in ordered if m["name"] == primary or not constant(meta, points, m["name"])]
    figs = []
    numeric = [s for s in swept if pd.api.types.is_numeric_dtype(points[s])]
    if not swept:
        f = _probability_bars(meta, points)
        if f is not None:
            figs.append(("probabilities", f))
        for m in ordered:
            if m["kind"] != "probability" and m["distribution"] and (dists.metric == m["name"]).any() \
                    and wanted(("bars", m["name"], None, None)):
                figs.append((f"dist_{m['name']}", _bars(meta, points, dists, m["name"])))
    elif len(swept) == 1:
        x = swept[0]
        for m in ordered:
            if x in numeric:
                if wanted(("line", m["name"], x, None)):
                    figs.append((f"{m['name']}_vs_{_safe(x)}", _line(meta, points, m["name"], x)))
            elif m["kind"] == "probability" or m["name"] == primary:
                figs.append((f"{m['name']}_by_{_safe(x)}", _category_bars(meta, points, m["name"], x)))
    else:
        x, y = swept[0], swept[1]
        rest = swept[2:]
        combos = [dict()] if not rest else [dict(zip(rest, vals)) for vals in
                                            points[rest].drop_duplicates().itertuples(index=False, name=None)][:6]
        # beyond two swept parameters every metric would need one heatmap per slice:
        # keep the primary metric only (questions add their own summaries)
        for m in (ordered[:4] if not rest else ordered[:1]):
            for fixed in combos:
                if not fixed and not wanted(("heatmap", m["name"], x, y)):
                    continue
                suffix = "".join(f"_{_safe(k)}-{_safe(str(v))}" for k, v in fixed.items())
                figs.append((f"heatmap_{m['name']}{suffix}", _heatmap(meta, points, m["name"], x, y, fixed)))
    return figs


def signature(spec: dict, swept: list[str]) -> tuple:
    """What a ``plots:`` entry draws, as :func:`default_figures` would name the same figure:
    (kind, metric, x, y). A ``bars`` plot draws every point (the default one exists only
    without a sweep); a ``line`` without a group is the default line of a one-parameter sweep."""
    kind = spec["kind"]
    if kind == "heatmap":
        return ("heatmap", spec["metric"], spec["x"], spec["y"])
    if kind == "line":
        return ("line", spec["metric"], spec["x"], None) if "group" not in spec and len(swept) == 1 else ()
    return ("bars", spec["metric"], None, None) if not swept else ()


def default_stem(sig: tuple) -> str:
    """The file stem :func:`default_figures` gives the figure of a :func:`signature`."""
    kind, metric, x, y = sig
    return {"heatmap": f"heatmap_{metric}", "line": f"{metric}_vs_{_safe(x)}", "bars": f"dist_{metric}"}[kind]


def value_label(value: object, limit: int = MAX_DRAWN_VALUE) -> str:
    """A swept value as a tick label: a list or mapping (a fleet, a unit, an allocation; a
    points table holds it as JSON) in plain words, ``key: value`` joined by commas and list items
    by " + ", instead of its JSON with quotes and braces; other values as they are."""
    import json
    if isinstance(value, str) and value[:1] in "[{":
        try:
            value = json.loads(value)
        except ValueError:
            pass

    def plain(v) -> str:
        if isinstance(v, dict):
            return ", ".join(f"{k}: {plain(x)}" for k, x in v.items())
        if isinstance(v, (list, tuple)):
            return " + ".join(plain(x) for x in v)
        return str(v)
    return drawn(plain(value), limit)


#: A category figure turns its bars sideways (labels down the left, one per line) past this
#: many categories or this many characters in one label: upright labels would overprint.
MAX_UPRIGHT_CATEGORIES = 12
MAX_UPRIGHT_LABEL = 12


def exact_run(meta: dict) -> bool:
    """An exact run: no sampling CI to draw (its figures say "exact" and draw no whiskers)."""
    return meta["mode"] != "monte_carlo"


def ci_suffix(meta: dict, what: str = "95% CI") -> str:
    return " (exact)" if exact_run(meta) else f" ({what})"


def _ci_lengths(means, lows, highs):
    return np.clip(np.vstack([means - np.asarray(lows, float), np.asarray(highs, float) - means]), 0, None)


def _category_bars(meta, points, metric, x):
    info = _metric_info(meta)[metric]
    cap = MAX_FIGURE_PX / float(plt.rcParams["figure.dpi"])
    means = points[f"{metric}_mean"].to_numpy()
    err = None if exact_run(meta) else _ci_lengths(means, points[f"{metric}_ci_low"], points[f"{metric}_ci_high"])
    n = len(points)
    labels = [value_label(v, 2 * MAX_DRAWN_VALUE) for v in points[x]]
    sideways = n > MAX_UPRIGHT_CATEGORIES or max(len(t) for t in labels) > MAX_UPRIGHT_LABEL
    # bars at positions, labelled with the (shortened) values: two long values cut to the
    # same text stay two bars; past a capped size, at most 20 labels
    if sideways:
        size = 1.6 + 0.28 * n
        fig, ax = plt.subplots(figsize=(8, min(max(3.0, size), cap)))
        ypos = np.arange(n)[::-1]
        ax.barh(ypos, means, xerr=err, capsize=3, color="steelblue")
        ticks = range(n) if size <= cap else range(0, n, max(1, -(-n // 20)))
        ax.set_yticks([ypos[k] for k in ticks], [labels[k] for k in ticks], fontsize=7 if n > 20 else 8)
        ax.set_ylabel(x)
        ax.set_xlabel(wrapped(info["label"] + ci_suffix(meta)))
        ax.grid(axis="y", visible=False)
    else:
        width = max(4, 1.1 * n + 2)
        fig, ax = plt.subplots(figsize=(min(width, cap), 3.8))
        ax.bar(range(n), means, yerr=err, capsize=4, color="steelblue")
        ax.set_xticks(range(n), labels)
        ax.set_xlabel(x)
        ax.set_ylabel(wrapped(info["label"] + ci_suffix(meta), 45))
    ax.set_title(_title(meta, f"{metric} by {x}"))
    fig.tight_layout()
    footer(fig, meta, [metric])
    return fig


def wrapped(text: str, width: int = 70) -> str:
    """``text`` on lines of at most ``width`` characters (a long axis label must not run into its neighbour)."""
    import textwrap
    return textwrap.fill(text, width)


def _safe(s: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in str(s))


def requested_figures(meta, points, dists, specs: list, replaced: frozenset = frozenset()) -> list[tuple[str, plt.Figure]]:
    """The figures of a scenario's ``plots:`` list. One whose :func:`signature` is in ``replaced``
    (a default figure left out for it) says so in its title: the same figure is written once."""
    names = {m["name"] for m in meta["metrics"]}
    check_specs(specs, names, meta["swept"])
    figs = []
    for i, spec in enumerate(specs):
        if not isinstance(spec, dict) or "kind" not in spec or "metric" not in spec:
            raise PlotError(f"plots[{i}]: each plot needs kind and metric, e.g. "
                            "{kind: heatmap, metric: p_damage, x: attack_dice, y: target.dr}")
        kind, metric = spec["kind"], spec["metric"]
        if metric not in names:
            raise PlotError(f"plots[{i}].metric: got {metric!r}; allowed: {', '.join(sorted(names))}")
        for axis in ("x", "y", "group"):
            if axis in spec and spec[axis] not in points.columns:
                raise PlotError(f"plots[{i}].{axis}: got {spec[axis]!r}; allowed: swept parameters "
                                f"{', '.join(meta['swept']) or '(none)'}")
        if kind == "heatmap":
            figs.append((f"plot{i}_heatmap_{metric}", _heatmap(meta, points, metric, spec["x"], spec["y"])))
        elif kind == "line":
            figs.append((f"plot{i}_line_{metric}", _line(meta, points, metric, spec["x"], spec.get("group"))))
        elif kind == "bars":
            figs.append((f"plot{i}_bars_{metric}", _bars(meta, points, dists, metric)))
        else:
            raise PlotError(f"plots[{i}].kind: got {kind!r}; allowed: heatmap, line, bars")
        if signature(spec, meta["swept"]) in replaced:
            title = figs[-1][1].axes[0].title
            title.set_text(f"{title.get_text()}\n(also the default figure {default_stem(signature(spec, meta['swept']))}:"
                           " written once, here)")
    return figs


def all_figures(meta, points, dists, question=None, specs: list | None = None) -> list[tuple[str, plt.Figure]]:
    """Every figure of a run folder as :func:`render` writes them (inside :data:`STYLE`): the
    defaults (unless ``question.default_plots`` is off), the ``plots:`` list (``specs``, default
    plotmeta's) and the question's own. A default figure that a ``plots:`` entry draws anyway is
    left out (the entry's copy says so in its title): no figure is written twice."""
    asked = specs if specs is not None else meta.get("plots", [])
    check_specs(asked, {m["name"] for m in meta["metrics"]}, meta["swept"])
    replaced: set = set()
    figs = []
    if question is None or question.default_plots:
        figs += default_figures(meta, points, dists, skip=frozenset(signature(s, meta["swept"]) for s in asked),
                                skipped=replaced)
    figs += requested_figures(meta, points, dists, asked, frozenset(replaced))
    if question is not None:
        figs += question.plots(meta, points, dists)
    return figs


def _close_new(before: set) -> None:
    """Close every figure opened since ``before`` (``plt.get_fignums()``): a figure function
    that raised half-way leaves none behind."""
    for num in set(plt.get_fignums()) - before:
        plt.close(num)


def render(run_dir: Path, formats: tuple[str, ...] = ("png",), question=None, specs: list | None = None) -> list[Path]:
    """(Re-)render every plot of a run folder from its tables; returns the files written.

    The folder's files are read through :func:`analyzer.outputs.reader.load_plot_inputs` (no link
    followed, regular files only, size caps, the shape of plotmeta.json and the tables checked:
    a damaged folder is refused in one line, :class:`analyzer.core.errors.RunFolderError`). Without
    ``question`` (``analyzer plot``: the question is the one plotmeta.json names), a figure that
    still cannot be drawn from the tables (a plotmeta.json edited to name another question) is
    refused the same way; a run passes its question, and a drawing error there is a bug and
    raises as it is."""
    from analyzer.outputs import reader as runfolder
    from analyzer.core.errors import RunFolderError
    run_dir = Path(run_dir)
    meta, points, dists = runfolder.load_plot_inputs(run_dir)
    from_folder = question is None
    if question is None:
        from analyzer.core import questions
        question = questions.get(meta["game"], meta["question"])
    written = []
    # every figure, the question's own too, titles with the name as drawn: one line, shortened
    meta = {**meta, "scenario": drawn(meta["scenario"])} if isinstance(meta, dict) and "scenario" in meta else meta
    with plt.rc_context(STYLE):
        figs: list = []
        before = set(plt.get_fignums())
        try:
            figs = all_figures(meta, points, dists, question, specs)
        except PlotError:
            _close_new(before)
            raise
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
            _close_new(before)
            if not from_folder:
                raise
            why = (str(e).splitlines() or [""])[0][:160]
            raise RunFolderError(runfolder.PLOTMETA, "", f"the figures of {meta['game']}/{meta['question']} cannot "
                                 f"be drawn from this folder's tables ({type(e).__name__}: {why})") from None
        except BaseException:
            _close_new(before)
            raise
        for stem, fig in figs:
            bbox = bounded_bbox(fig)        # at most MAX_FIGURE_PX a side, drawn literally
            for fmt in formats:
                # stems carry metric and data names: paths.write_atomic makes them one safe
                # file name inside the run folder and never writes through a planted link
                written.append(paths.write_atomic(
                    run_dir, f"{stem}.{fmt}", lambda fh: fig.savefig(fh, format=fmt, bbox_inches=bbox)))
            plt.close(fig)
    return written
