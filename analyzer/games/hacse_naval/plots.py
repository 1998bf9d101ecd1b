"""Question-specific figures of HACSE naval (``Question.plots``), drawn from a run's tables.

- depth_charge_pattern: every pattern's P(sunk) and its paired difference to the best with the
  ranking's 95% simultaneous CI, the best set coloured, best first (the optimiser);
- depth_charge (swept): P(sunk) and mean damage against the swept parameter per rule reading;
- fire: damage and rounds burning against the Basiszahl;
- torpedo_salvo: P(sunk) and the damage distribution by salvo size;
- sighting: P(sighted within k rounds), range across and depth down, one panel per sensor.
Every figure carries the provenance footer (red when it rests on placeholders).
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from analyzer.outputs.plots import footer

MAX_BARS = 30


def _swept(meta, points) -> list[str]:
    return [s for s in meta.get("swept", []) if s in points.columns]


def _labels(meta) -> dict[str, str]:
    return {m["name"]: m["label"] for m in meta["metrics"]}


def _ranking_rows(meta, point) -> dict:
    """The point's ranking rows by pattern label (plotmeta ``rankings``, :mod:`analyzer.core.ranking`), else {}."""
    rows = (meta.get("rankings") or {}).get(str(int(point))) or []
    return {r["name"]: r for r in rows if isinstance(r, dict) and r.get("metric") == "p_sunk"}


def pattern_figures(meta, points) -> list:
    """Per sweep point, patterns best first (at most MAX_BARS): P(sunk) of each (the value, no
    whiskers) and its difference to the best with the ranking's 95% simultaneous CI (paired: the
    patterns share the U-boat draw), the best red, the rest of the best set blue, the patterns
    worse than the best grey, tied patterns hatched. Without the ranking (a run folder from before
    issue 30) the differences are drawn without intervals."""
    labels = _labels(meta)
    mc = meta["mode"] == "monte_carlo"
    figs = []
    for _, row in points.iterrows():
        names = [n for n in labels if n.startswith("p_sunk_p") and f"{n}_mean" in points.columns]
        label = {n: labels[n].removeprefix("P(sunk) with pattern ") for n in names}
        ranked = _ranking_rows(meta, row["point"])
        have = bool(ranked) and all(label[n] in ranked for n in names)
        if have:                        # the ranking's order (a tie group kept together)
            metric_of = {label[n]: n for n in names}
            order = [metric_of[name] for name in ranked]
        else:
            order = sorted(names, key=lambda n: (-row[f"{n}_mean"], names.index(n)))
        order = order[:MAX_BARS]
        best = order[0]
        mean = np.array([row[f"{n}_mean"] for n in order])
        diff = mean - row[f"{best}_mean"]
        lo = np.array([ranked[label[n]]["diff_low"] for n in order]) if have else diff
        hi = np.array([ranked[label[n]]["diff_high"] for n in order]) if have else diff
        inside = [ranked[label[n]]["in_best_set"] if have else True for n in order]
        groups = [ranked[label[n]]["tie_group"] if have else i for i, n in enumerate(order)]
        tied = [groups.count(g) > 1 for g in groups]
        colors = ["firebrick" if i == 0 else "steelblue" if inside[i] else "silver" for i in range(len(order))]
        fig, axes = plt.subplots(1, 2, figsize=(11, 1.6 + 0.28 * len(order)), sharey=True)
        y = np.arange(len(order))
        axes[0].barh(y, mean, color=colors)
        top = float(np.nanmax(mean)) if len(mean) else 1.0
        for yi, m in zip(y, mean):
            axes[0].text(m + 0.01 * max(top, 1e-9), yi, f"{m:.3f}", va="center", fontsize=7)
        axes[0].set_xlim(0, min(1.0, top * 1.25 + 1e-3))
        axes[0].set_xlabel("P(U-boat sunk)" + (" (estimate; its own CI: answers.parquet)" if mc else " (exact)"),
                           fontsize=8)
        err = np.clip(np.vstack([diff - lo, hi - diff]), 0, None) if mc and have else None
        bars = axes[1].barh(y, diff, xerr=err, capsize=2, color=colors)
        for bar, t in zip(bars, tied):
            if t:
                bar.set_hatch("//")
        axes[1].axvline(0, color="black", lw=0.8)
        for yi, v, a, b in zip(y, diff, lo, hi):
            axes[1].text(a, yi, f"{v:+.3f} ", va="center", ha="right", fontsize=7)
        axes[1].margins(x=0.2)
        if mc and have:
            what = "paired difference to the best with 95% simultaneous CI\n(grey: worse than the best; blue: the best set)"
        elif mc:
            what = "difference to the best (simultaneous CIs: the ranking notes)"
        else:
            what = "difference to the best (exact; grey: worse than the best)"
        axes[1].set_xlabel(what, fontsize=8)
        axes[0].set_yticks(y, [label[n] for n in order], fontsize=7)
        axes[0].invert_yaxis()
        shown = f"best {len(order)} of {len(names)}" if len(order) < len(names) else f"all {len(names)}"
        fig.suptitle(f"{meta['scenario']}: which depth-charge pattern sinks the U-boat? best: {label[best]} (red)\n"
                     f"dX = depth setting X, xN = N charges; {shown} patterns, best first"
                     + ("; hatched: tied (equal exact P(sunk))" if any(tied) else ""), fontsize=9)
        fig.tight_layout(rect=(0, 0.03, 1, 0.95))
        footer(fig, meta)
        figs.append((f"pattern_ranking_point{int(row['point'])}", fig))
    return figs


def _line_panels(meta, points, panels, x, title) -> list:
    """One line per combination of the other swept parameters, ``panels`` = [(metric, title)]."""
    swept = _swept(meta, points)
    if x not in swept:
        return []
    others = [s for s in swept if s != x]
    groups = points.groupby(others) if others else [((), points)]
    panels = [(m, t) for m, t in panels if f"{m}_mean" in points.columns]
    if not panels:
        return []
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.8), squeeze=False)
    mc = meta["mode"] == "monte_carlo"
    for ax, (metric, ptitle) in zip(axes[0], panels):
        for key, g in groups:
            g = g.sort_values(x)
            key = key if isinstance(key, tuple) else (key,)
            lab = ", ".join(f"{o.split('.')[-1]}={v}" for o, v in zip(others, key)) or None
            mean = g[f"{metric}_mean"].to_numpy()
            if mc:
                err = np.clip(np.vstack([mean - g[f"{metric}_ci_low"].to_numpy(),
                                         g[f"{metric}_ci_high"].to_numpy() - mean]), 0, None)
                ax.errorbar(g[x], mean, yerr=err, marker="o", capsize=3, label=lab)
            else:
                ax.plot(g[x], mean, marker="o", label=lab)
        ax.set_xlabel(x)
        ax.set_title(ptitle + (" (95% CI)" if mc else ""), fontsize=9)
        if others:
            ax.legend(fontsize=7)
    fig.suptitle(f"{meta['scenario']}: {title}", fontsize=10)
    footer(fig, meta, [m for m, _ in panels])
    fig.tight_layout(rect=(0, 0.04, 1, 0.93))
    return [(f"{x.replace('.', '_')}_lines", fig)]


def depth_charge_figures(meta, points, dists) -> list:
    swept = _swept(meta, points)
    if not swept:
        return []
    return _line_panels(meta, points, [("p_sunk", "P(U-boat sunk)"), ("damage", "mean depth-charge damage"),
                                       ("thrower_damage", "mean damage to the thrower")],
                        swept[0], "depth charges")


def fire_figures(meta, points, dists) -> list:
    swept = _swept(meta, points)
    x = "base_number" if "base_number" in swept else (swept[0] if swept else None)
    if x is None:
        return []
    return _line_panels(meta, points, [("damage", "mean fire damage taken (capped at [HP])"),
                                       ("rounds_burning", "mean rounds burning"), ("p_row_destroyed", "P(a row destroyed)")],
                        x, "what a fire on board costs, by Basiszahl")


def torpedo_figures(meta, points, dists) -> list:
    swept = _swept(meta, points)
    if not swept:
        return []
    return _line_panels(meta, points, [("p_sunk", "P(ship sunk)"), ("damage", "mean damage taken (capped at [HP])"),
                                       ("speed_lost", "mean speed lost (sunk ships included)"), ("fires", "mean fires started")],
                        swept[0], "torpedo salvo against the ship")


def mine_figures(meta, points, dists) -> list:
    swept = _swept(meta, points)
    if not swept:
        return []
    return _line_panels(meta, points, [("p_sunk", "P(ship sunk)"), ("damage", "mean damage taken (capped at [HP])")],
                        swept[0], "crossing a minefield")


def sighting_figures(meta, points) -> list:
    """Heatmaps of P(sighted within k rounds): distance across, U-boat depth down, one per sensor."""
    swept = _swept(meta, points)
    if "distance" not in swept or "sub_depth" not in swept:
        return []
    sensors = sorted(points["sensor"].unique()) if "sensor" in points.columns else [
        (meta.get("params") or {}).get("sensor", "?")]
    dist_values = sorted(points["distance"].unique())
    depth_values = sorted(points["sub_depth"].unique())
    fig, axes = plt.subplots(1, len(sensors), figsize=(1.8 + 0.55 * len(dist_values) * len(sensors) + 1.2 * len(sensors),
                                                       1.8 + 0.45 * len(depth_values)), squeeze=False)
    for ax, sensor in zip(axes[0], sensors):
        sub = points[points["sensor"] == sensor] if "sensor" in points.columns else points
        grid = np.full((len(depth_values), len(dist_values)), np.nan)
        for i, dep in enumerate(depth_values):
            for j, dis in enumerate(dist_values):
                row = sub[(sub["sub_depth"] == dep) & (sub["distance"] == dis)]
                if len(row):
                    grid[i, j] = row.iloc[0]["p_sighted_within_mean"]
        im = ax.imshow(grid, cmap="viridis", vmin=0, vmax=1, aspect="auto")
        for i in range(grid.shape[0]):
            for j in range(grid.shape[1]):
                if np.isfinite(grid[i, j]):
                    ax.text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center", fontsize=6,
                            color="white" if grid[i, j] < 0.5 else "black")
        ax.set_xticks(range(len(dist_values)), [str(v) for v in dist_values], fontsize=7)
        ax.set_yticks(range(len(depth_values)), [str(v) for v in depth_values])
        ax.set_xlabel("distance (hex)")
        ax.set_ylabel("U-boat depth (level)")
        ax.grid(False)
        ax.set_title(str(sensor), fontsize=10)
        fig.colorbar(im, ax=ax, fraction=0.04, pad=0.02)
    rounds = (meta.get("params") or {}).get("rounds", "k")
    fig.suptitle(f"{meta['scenario']}: P(U-boat sighted within {rounds} rounds) by sensor\n"
                 f"(the roll model is a PLACEHOLDER: the Basiszahl roll is not in the source)", fontsize=10)
    footer(fig, meta)
    fig.tight_layout(rect=(0, 0.04, 1, 0.9))
    return [("sighting_heatmaps", fig)]
