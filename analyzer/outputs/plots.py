"""Plots rendered from a run folder's tables (so ``analyzer plot`` can redo them).

Defaults by sweep shape: no sweep -> distribution bars with Wilson 95% intervals per bar
and a bar chart of probabilities; one swept parameter -> metric vs parameter with CI
bands; two or more -> heatmaps of the probability metrics. A scenario's ``plots:`` list
adds explicit plots (``{kind: heatmap|line|bars, metric: NAME, x: PATH, y: PATH}``) and a
question may add its own figures.
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
    labelled = [a for a in fig.axes if a.get_visible() and a.xaxis.label.get_text()]
    if labelled:   # just under the lowest x-axis label, wherever layout puts it when drawn
        anchor = min(labelled, key=lambda a: a.get_position().y0)
        anchor.annotate(text, xy=(0.01, 0), xycoords=("figure fraction", anchor.xaxis.label), xytext=(0, -4),
                        textcoords="offset points", fontsize=7, color=colour, ha="left", va="top",
                        annotation_clip=False)
    else:
        fig.text(0.01, 0.005, text, fontsize=7, color=colour, ha="left", va="bottom")


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
        if n > 0:
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
    means = [row[f"{m}_mean"] for m in probs]
    err = np.clip(np.array([[row[f"{m}_mean"] - row[f"{m}_ci_low"], row[f"{m}_ci_high"] - row[f"{m}_mean"]]
                            for m in probs]).T, 0, None)
    ax.bar(probs, means, yerr=err, capsize=4, color="steelblue")
    for i, v in enumerate(means):
        ax.text(i, v, f"{v:.3f}", ha="center", va="bottom", fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("probability (95% CI)")
    ax.set_title(_title(meta, "probabilities"))
    footer(fig, meta, probs)
    return fig


def default_figures(meta: dict, points: pd.DataFrame, dists: pd.DataFrame) -> list[tuple[str, plt.Figure]]:
    swept = meta["swept"]
    metrics = meta["metrics"]
    primary = meta["primary_metric"]
    ordered = sorted(metrics, key=lambda m: m["name"] != primary)[:MAX_DEFAULT_METRICS]
    figs = []
    numeric = [s for s in swept if pd.api.types.is_numeric_dtype(points[s])]
    if not swept:
        f = _probability_bars(meta, points)
        if f is not None:
            figs.append(("probabilities", f))
        for m in ordered:
            if m["kind"] != "probability" and m["distribution"] and (dists.metric == m["name"]).any():
                figs.append((f"dist_{m['name']}", _bars(meta, points, dists, m["name"])))
    elif len(swept) == 1:
        x = swept[0]
        for m in ordered:
            if x in numeric:
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
                suffix = "".join(f"_{_safe(k)}-{_safe(str(v))}" for k, v in fixed.items())
                figs.append((f"heatmap_{m['name']}{suffix}", _heatmap(meta, points, m["name"], x, y, fixed)))
    return figs


def _category_bars(meta, points, metric, x):
    info = _metric_info(meta)[metric]
    cap = MAX_FIGURE_PX / float(plt.rcParams["figure.dpi"])
    width = max(4, 1.1 * len(points) + 2)
    fig, ax = plt.subplots(figsize=(min(width, cap), 3.8))
    means = points[f"{metric}_mean"].to_numpy()
    err = np.clip(np.vstack([means - points[f"{metric}_ci_low"].to_numpy(),
                             points[f"{metric}_ci_high"].to_numpy() - means]), 0, None)
    # bars at positions, labelled with the (shortened) values: two long values cut to the
    # same text stay two bars; past a capped width, at most 20 labels
    ax.bar(range(len(points)), means, yerr=err, capsize=4, color="steelblue")
    ticks = range(len(points)) if width <= cap else range(0, len(points), max(1, -(-len(points) // 20)))
    ax.set_xticks(list(ticks), [drawn(points[x].iloc[k], MAX_DRAWN_VALUE) for k in ticks])
    ax.set_xlabel(x)
    ax.set_ylabel(info["label"] + " (95% CI)")
    ax.set_title(_title(meta, f"{metric} by {x}"))
    footer(fig, meta, [metric])
    return fig


def _safe(s: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in str(s))


def requested_figures(meta, points, dists, specs: list) -> list[tuple[str, plt.Figure]]:
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
        use_defaults = question is None or question.default_plots
        figs: list = []
        before = set(plt.get_fignums())
        try:
            if use_defaults:
                figs += default_figures(meta, points, dists)
            figs += requested_figures(meta, points, dists, specs if specs is not None else meta.get("plots", []))
            if question is not None:
                figs += question.plots(meta, points, dists)
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
