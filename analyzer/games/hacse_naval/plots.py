"""Question-specific figures of HACSE naval (``Question.plots``), drawn from a run's tables.

- depth_charge_pattern: every pattern's P(sunk) with its 95% CI, best first (the optimiser);
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


def pattern_figures(meta, points) -> list:
    """Horizontal bars: P(sunk) of each pattern (best first, at most MAX_BARS) with 95% CIs."""
    labels = _labels(meta)
    figs = []
    for _, row in points.iterrows():
        names = [n for n in labels if n.startswith("p_sunk_p") and f"{n}_mean" in points.columns]
        ranked = sorted(names, key=lambda n: -row[f"{n}_mean"])[:MAX_BARS]
        mean = np.array([row[f"{n}_mean"] for n in ranked])
        mc = meta["mode"] == "monte_carlo"
        err = (np.clip(np.vstack([mean - [row[f"{n}_ci_low"] for n in ranked],
                                  np.array([row[f"{n}_ci_high"] for n in ranked]) - mean]), 0, None) if mc else None)
        fig, ax = plt.subplots(figsize=(8, 1.2 + 0.28 * len(ranked)))
        y = np.arange(len(ranked))
        colors = ["firebrick" if i == 0 else "steelblue" for i in range(len(ranked))]
        ax.barh(y, mean, xerr=err, capsize=2, color=colors)
        ax.set_yticks(y, [labels[n].removeprefix("P(sunk) with pattern ") for n in ranked], fontsize=7)
        ax.invert_yaxis()
        top = float(np.nanmax(mean)) if len(mean) else 1.0
        for yi, m in zip(y, mean):
            ax.text(m + 0.01 * max(top, 1e-9), yi, f"{m:.3f}", va="center", fontsize=7)
        ax.set_xlim(0, min(1.0, top * 1.25 + 1e-3))
        ax.set_xlabel("P(U-boat sunk)" + (" with 95% CI" if mc else " (exact)"))
        ax.set_title(f"{meta['scenario']}: which depth-charge pattern sinks the U-boat?\n"
                     f"dX = depth setting X, xN = N charges; best first (of {len(names)} patterns)", fontsize=9)
        footer(fig, meta)
        fig.tight_layout()
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
