"""Question-specific figures of Dystopian Wars (``Question.plots``), drawn from a run's
tables so ``analyzer plot`` can redo them. Each answers its question at a glance: axes in
game terms, 95% CIs as bands, error bars or cell notes (exact runs have none)."""
from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator

from analyzer.outputs.plots import footer, plain_ticks, relevant, value_text
from analyzer.core.stats import Z95, wilson_interval

AXIS = {"attack_dice": "attack dice (AD)", "target.dr": "target damage rating (DR)",
        "target.cr": "target critical rating (CR)", "defense_dice": "defending AA / CC dice",
        "attacker_ap": "AP committed to the boarding", "defender_ap": "defender AP",
        "models_lost": "models lost by the squadron", "rammed.hp_lost": "rammed model's HP already lost",
        "terrain": "terrain", "range_band": "range band"}
FAMILY_COLOR = {"linked": "tab:red", "separate": "tab:blue", "split": "tab:green", "mixed": "tab:purple"}


def _axis(name: str) -> str:
    return AXIS.get(name, name)


def _err(mean, lo, hi) -> np.ndarray:
    """Error-bar lengths from a CI (clipped at 0: a Wilson bound may sit a rounding error
    inside the mean)."""
    mean, lo, hi = (np.asarray(v, float) for v in (mean, lo, hi))
    return np.clip(np.vstack([mean - lo, hi - mean]), 0.0, None)


def _mc(meta: dict) -> bool:
    return meta["mode"] == "monte_carlo"


def _title(fig, meta: dict, what: str) -> None:
    fig.suptitle(f"{meta['scenario']}: {what}", fontsize=10)


def _finish(fig, meta: dict, metrics: list[str] | None = None):
    footer(fig, meta, metrics)
    fig.tight_layout(rect=(0, 0.03, 1, 0.95))
    return fig


def _pooled(points: pd.DataFrame, metric: str, keys: list[str]) -> pd.DataFrame:
    """Mean of ``metric`` over the points sharing ``keys`` (independent points of a quantity
    that does not depend on the other swept values), with the combined 95% half-width."""
    g = points.groupby(keys, sort=True)
    out = g[f"{metric}_mean"].mean().to_frame("mean")
    out["half"] = Z95 * np.sqrt((g[f"{metric}_se"].apply(lambda s: (s ** 2).sum()))) / g.size()
    return out.reset_index()


# ------------------------------------------------------------------------------------------ attack

def _heat(ax, fig, table: pd.DataFrame, x: str, y: str, label: str):
    grid = table.pivot(index=y, columns=x, values="mean")
    vals = grid.to_numpy(float)
    im = ax.imshow(vals, origin="lower", aspect="auto", cmap="viridis", vmin=0, vmax=1)
    ax.set_xticks(range(grid.shape[1]), [str(c) for c in grid.columns])
    ax.set_yticks(range(grid.shape[0]), [str(i) for i in grid.index])
    ax.set_xlabel(_axis(x))
    ax.set_ylabel(_axis(y))
    ax.grid(False)
    small = grid.shape[1] > 12
    for (i, j), v in np.ndenumerate(vals):
        if math.isfinite(v):
            txt = f"{v:.2f}"
            ax.text(j, i, txt[1:] if txt.startswith("0.") else txt.rstrip("0").rstrip("."), ha="center", va="center",
                    fontsize=6 if small else 7, color="white" if v < 0.55 else "black")
    if vals.shape[0] > 1 and vals.shape[1] > 1:
        cs = ax.contour(vals, levels=[0.5, 0.9], colors=["white", "orange"], linewidths=1.2)
        ax.clabel(cs, fmt={0.5: "50%", 0.9: "90%"}, fontsize=7)
    fig.colorbar(im, ax=ax, label=label, fraction=0.05)


def attack_figures(meta: dict, points: pd.DataFrame, dists: pd.DataFrame) -> list:
    swept = meta["swept"]
    figs = []
    grid_keys = {"attack_dice", "target.dr", "target.cr"}
    if "attack_dice" in swept and set(swept) <= grid_keys and len(swept) >= 2:
        panels = [(m, y) for m, y in (("p_damage", "target.dr"), ("p_critical", "target.cr")) if y in swept]
        fig, axes = plt.subplots(1, len(panels), figsize=(6.8 * len(panels), 4.6), squeeze=False)
        worst = 0.0
        for ax, (metric, y) in zip(axes[0], panels):
            # p_damage depends on AD and DR only, p_critical on AD and CR only: pool the rest
            t = _pooled(points, metric, ["attack_dice", y])
            worst = max(worst, float(t["half"].max()))
            what = "P(hits ≥ DR): at least 1 HP" if metric == "p_damage" else "P(hits ≥ CR): a critical"
            _heat(ax, fig, t, "attack_dice", y, what)
            ax.set_title(what, fontsize=9)
        ci = f"; 95% CI half-width ≤ {worst:.3f}" if _mc(meta) else " (exact)"
        _title(fig, meta, f"chance to damage and to crit by attack dice{ci}; lines at 50% and 90%")
        figs.append(("dw_attack_heatmaps", _finish(fig, meta, [m for m, _ in panels])))
    if "defense_dice" in swept:
        group = [s for s in swept if s != "defense_dice"]
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        groups = list(points.groupby(group[0], sort=True)) if group else [(None, points)]
        for gval, g in groups:
            g = g.sort_values("defense_dice")
            lab = None if gval is None else f"{_axis(group[0])} = {gval}"
            for ax, metric in zip(axes, ("hits", "p_damage")):
                x = g["defense_dice"].to_numpy()
                line, = ax.plot(x, g[f"{metric}_mean"], marker="o", label=lab)
                if _mc(meta):
                    ax.fill_between(x, g[f"{metric}_ci_low"], g[f"{metric}_ci_high"], alpha=0.25,
                                    color=line.get_color())
        axes[0].set_ylabel("expected hits after cancellation")
        axes[1].set_ylabel("P(hits ≥ DR): at least 1 HP")
        axes[1].set_ylim(0, 1.02)
        for ax in axes:
            ax.set_xlabel("defending AA / CC dice (a 5 cancels 1 hit, a 6 cancels 2)")
            if group:
                ax.legend(fontsize=8)
        _title(fig, meta, "how much AA (vs rockets) or CC (vs torpedoes) protects" +
               (" (95% CI bands)" if _mc(meta) else " (exact)"))
        figs.append(("dw_defense_dice_lines", _finish(fig, meta, ["hits", "p_damage"])))
    return figs


# ---------------------------------------------------------------------------------- fire allocation

def _split_label(label: str) -> tuple[str, str, str]:
    """'A03 name [family]: what' -> (id, name, family)."""
    head = label.split("]: ")[0]
    alloc_id, rest = head.split(" ", 1)
    name, family = rest.rsplit(" [", 1)
    return alloc_id, name, family


def fire_allocation_figures(meta: dict, points: pd.DataFrame, dists: pd.DataFrame) -> list:
    metrics = meta["metrics"]
    objective = metrics[0]["name"].split(".")[0]
    groups = ["hp_damage", "p_damage", "p_critical", "kills", "p_kill_all", "criticals"]
    titles = {"hp_damage": "expected HP damage", "kills": "expected targets destroyed",
              "p_kill_all": "P(every target destroyed)", "p_damage": "P(some attack reaches DR)",
              "p_critical": "P(at least one critical)", "criticals": "expected critical results"}
    first = {m["name"].split(".")[0]: m["name"] for m in reversed(metrics)}
    # an objective "uses placeholders" when a placeholder this run used can change it (e.g. the
    # HP a critical deals changes HP damage and kills, not whether DR or CR is reached)
    uses_ph = {g: bool(relevant(meta.get("placeholders", []), meta, [first[g]])) for g in first}
    shown = [objective] + [g for g in groups if g != objective][:3]
    figs = []
    for idx, (_, row) in enumerate(points.head(4).iterrows()):
        allocs = {}
        for m in metrics:
            g, alloc_id = m["name"].split(".")
            _, name, family = _split_label(m["label"])
            allocs.setdefault(alloc_id, {"name": name, "family": family})
            allocs[alloc_id][g] = (row[f"{m['name']}_mean"], row[f"{m['name']}_ci_low"], row[f"{m['name']}_ci_high"])
        order = sorted(allocs, key=lambda a: (-allocs[a][objective][0], a))
        n = len(order)
        # at least 3.4 in tall: one or two allocations (a swept list of targets) must still read
        fig, axes = plt.subplots(1, len(shown), figsize=(4.6 * len(shown), max(3.4, 1.2 + 0.32 * n)), sharey=True)
        ypos = np.arange(n)[::-1]
        for ax, g in zip(axes, shown):
            means = np.array([allocs[a][g][0] for a in order])
            lo = np.array([allocs[a][g][1] for a in order])
            hi = np.array([allocs[a][g][2] for a in order])
            colors = [FAMILY_COLOR.get(allocs[a]["family"], "gray") for a in order]
            ax.barh(ypos, means, color=colors, alpha=0.85,
                    xerr=_err(means, lo, hi) if _mc(meta) else None, capsize=2)
            for y, v in zip(ypos, means):
                ax.text(v, y, f" {value_text(v)}", va="center", fontsize=7)
            ax.set_xlabel(titles[g] + (" (95% CI)" if _mc(meta) else " (exact)"))
            ax.set_title(("ranked by: " if g == objective else "") + titles[g]
                         + ("\nuses PLACEHOLDER values" if uses_ph.get(g) else "\nno placeholder affects it"),
                         fontsize=9, color="firebrick" if uses_ph.get(g) else "black")
            ax.set_xlim(0, max(1e-9, float(hi.max() if _mc(meta) else means.max())) * 1.25)
            ax.xaxis.set_major_locator(MaxNLocator(4))
            plain_ticks(ax.xaxis)
        axes[0].set_yticks(ypos, [f"{a} {allocs[a]['name']}" for a in order], fontsize=7)
        handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in FAMILY_COLOR.values()]
        axes[-1].legend(handles, list(FAMILY_COLOR), fontsize=7, title="family",
                         loc="upper left", bbox_to_anchor=(1.01, 1.0))   # beside the panels, not over bars
        best = order[0]
        _title(fig, meta, f"fire allocations ranked by {titles[objective]}; best: {best} "
               f"{allocs[best]['name']} ({allocs[best]['family']})")
        figs.append((f"dw_allocation_ranking{'' if idx == 0 else f'_{idx}'}", _finish(fig, meta)))
    return figs


# ------------------------------------------------------------------------------ ram and collision

def two_sided_damage_figures(meta: dict, points: pd.DataFrame, damage: tuple[str, str],
                             destroyed: tuple[str, str], who: tuple[str, str]) -> list:
    swept = meta["swept"]
    if len(swept) != 1:
        return []
    x = swept[0]
    pts = points.sort_values(x) if pd.api.types.is_numeric_dtype(points[x]) else points
    labels = [str(v) for v in pts[x]]
    pos = np.arange(len(pts))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.0))
    # a terrain collision never reaches a second model: draw only the first
    sides = 1 if not (points[f"{damage[1]}_mean"].any() or points[f"{destroyed[1]}_mean"].any()) else 2
    for ax, pair, ylab in ((axes[0], damage, "expected HP damage"), (axes[1], destroyed, "P(destroyed)")):
        top = 0.0
        for k, (metric, name) in enumerate(list(zip(pair, who))[:sides]):
            mean = pts[f"{metric}_mean"].to_numpy()
            err = _err(mean, pts[f"{metric}_ci_low"], pts[f"{metric}_ci_high"]) if _mc(meta) else None
            shift = (k - (sides - 1) / 2) * 0.38
            ax.bar(pos + shift, mean, width=0.38, yerr=err, capsize=3, label=f"to {name}")
            for xx, v in zip(pos + shift, mean):
                ax.text(xx, v, f"{v:.3f}", ha="center", va="bottom", fontsize=7)
            top = max(top, float(pts[f"{metric}_ci_high"].max() if _mc(meta) else mean.max()))
        ax.set_ylim(0, max(top, 0.01) * 1.2)
        ax.set_xticks(pos, labels)
        ax.set_xlabel(_axis(x))
        ax.set_ylabel(ylab + (" (95% CI)" if _mc(meta) else " (exact)"))
        ax.legend(fontsize=8)
    _title(fig, meta, f"damage to each side by {_axis(x)}")
    return [("dw_damage_each_side", _finish(fig, meta))]


# ------------------------------------------------------------------------------------------ boarding

def boarding_figures(meta: dict, points: pd.DataFrame, dists: pd.DataFrame) -> list:
    swept = meta["swept"]
    if "attacker_ap" not in swept:
        return []
    group = [s for s in swept if s != "attacker_ap"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    groups = list(points.groupby(group[0], sort=True)) if group else [(None, points)]
    for gval, g in groups:
        g = g.sort_values("attacker_ap")
        x = g["attacker_ap"].to_numpy()
        lab = None if gval is None else f"{_axis(group[0])} = {gval}"
        for ax, metric in zip(axes, ("p_capture", "attacker_ap_lost")):
            line, = ax.plot(x, g[f"{metric}_mean"], marker="o", label=lab)
            if _mc(meta):
                ax.fill_between(x, g[f"{metric}_ci_low"], g[f"{metric}_ci_high"], alpha=0.25, color=line.get_color())
    axes[0].set_ylabel("P(capture)")
    axes[0].set_ylim(0, 1.02)
    axes[1].set_ylabel("boarders' AP lost (AA/CC + melee)")
    for ax in axes:
        ax.set_xlabel(_axis("attacker_ap"))
        if group:
            ax.legend(fontsize=8)
    _title(fig, meta, "how many AP to commit" + (" (95% CI bands)" if _mc(meta) else " (exact)"))
    return [("dw_boarding_ap", _finish(fig, meta))]


# ------------------------------------------------------------------------------------------ rout test

def rout_figures(meta: dict, points: pd.DataFrame, dists: pd.DataFrame) -> list:
    swept = meta["swept"]
    if not swept:
        return []
    col = "models_lost" if "models_lost" in swept else swept[0]
    rows = [s for s in swept if s != col]
    pts = points.copy()
    word = {"True": "yes", "False": "no"}
    pts["_row"] = (pts.apply(lambda r: ", ".join(f"{k.replace('_', ' ')}: {word.get(str(r[k]), r[k])}" for k in rows),
                             axis=1) if rows else "pass")
    grid = pts.pivot_table(index="_row", columns=col, values="p_pass_mean", aggfunc="first", sort=False)
    lo = pts.pivot_table(index="_row", columns=col, values="p_pass_ci_low", aggfunc="first", sort=False)
    hi = pts.pivot_table(index="_row", columns=col, values="p_pass_ci_high", aggfunc="first", sort=False)
    vals = grid.to_numpy(float)
    fig, ax = plt.subplots(figsize=(2.2 + 1.3 * vals.shape[1], 1.2 + 0.55 * vals.shape[0]))
    im = ax.imshow(vals, cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
    for (i, j), v in np.ndenumerate(vals):
        txt = f"{v:.3f}"
        if _mc(meta):
            txt += f"\n[{lo.to_numpy()[i, j]:.3f}, {hi.to_numpy()[i, j]:.3f}]"
        ax.text(j, i, txt, ha="center", va="center", fontsize=7)
    ax.set_xticks(range(vals.shape[1]), [str(c) for c in grid.columns])
    ax.set_yticks(range(vals.shape[0]), list(grid.index), fontsize=8)
    ax.set_xlabel(_axis(col))
    ax.grid(False)
    fig.colorbar(im, ax=ax, label="P(pass)", fraction=0.04)
    label = next((m["label"] for m in meta["metrics"] if m["name"] == "p_pass"), "P(pass)")
    _title(fig, meta, f"{label}" + (" with 95% CI" if _mc(meta) else " (exact)"))
    return [("dw_rout_table", _finish(fig, meta))]


# ------------------------------------------------------------------------------------------ duel

def _wilson_err(p: np.ndarray, n: int) -> np.ndarray:
    lo = np.array([wilson_interval(x * n, n)[0] for x in p])
    hi = np.array([wilson_interval(x * n, n)[1] for x in p])
    return _err(p, lo, hi)


def duel_figures(meta: dict, points: pd.DataFrame, dists: pd.DataFrame) -> list:
    labels = {m["name"]: m["label"] for m in meta["metrics"]}
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.3))
    outcomes = ["p_win_a", "p_win_b", "p_draw"]
    names = ["A wins", "B wins", "draw"]
    width = 0.8 / max(1, len(points))
    n_any = int(points["trials"].max()) if _mc(meta) else 0
    side_name = lambda m: labels[m].split(": ", 1)[-1].rstrip(")")  # noqa: E731
    for k, (_, row) in enumerate(points.iterrows()):
        n = int(row["trials"]) if _mc(meta) else 0      # exact runs: no sampling interval
        means = np.array([row[f"{m}_mean"] for m in outcomes])
        lab = ", ".join(f"{c}={row[c]}" for c in meta["swept"]) or None
        pos = np.arange(3) + (k - (len(points) - 1) / 2) * width
        axes[0].bar(pos, means, width=width, yerr=_wilson_err(means, n) if n else None, capsize=3,
                    color=["tab:blue", "tab:red", "tab:gray"] if len(points) == 1 else None, label=lab)
        if len(points) == 1:
            for x, v in zip(pos, means):
                axes[0].text(x, v, f"{v:.3f}", ha="center", va="bottom", fontsize=8)
        d = dists[(dists.point == row["point"]) & (dists.metric == "turns")]
        if len(d):
            err = _wilson_err(d.probability.to_numpy(), n) if n else None
            axes[1].bar(d.value + (k - (len(points) - 1) / 2) * width, d.probability, width=width, yerr=err,
                        capsize=2, label=lab, color="tab:green" if len(points) == 1 else None)
        if k == 0:
            for side_k, (side, color) in enumerate((("a", "tab:blue"), ("b", "tab:red"))):
                d = dists[(dists.point == row["point"]) & (dists.metric == f"points_destroyed_{side}")]
                if len(d):
                    values = np.unique(dists[(dists.point == row["point"]) &
                                             dists.metric.str.startswith("points_destroyed")].value)
                    step = float(np.min(np.diff(values))) if len(values) > 1 else 1.0
                    axes[2].bar(d.value + (side_k - 0.5) * 0.4 * step, d.probability, width=0.4 * step,
                                color=color, yerr=_wilson_err(d.probability.to_numpy(), n) if n else None,
                                capsize=2, label=labels[f"points_destroyed_{side}"])
    ci = " (95% CI)" if n_any else " (exact)"
    axes[0].set_xticks(range(3), names)
    axes[0].set_ylabel("probability" + ci)
    axes[0].set_ylim(0, 1.05)
    axes[0].set_title(f"A: {side_name('p_win_a')}  vs  B: {side_name('p_win_b')}", fontsize=9)
    axes[1].set_xlabel("turn in which the duel ended (draws: the last turn)")
    axes[1].set_ylabel("probability" + ci)
    axes[1].set_title("how long it lasts", fontsize=9)
    axes[2].set_xlabel("points destroyed")
    axes[2].set_ylabel("probability" + ci)
    axes[2].set_title("points lost by each side" + (" (first point)" if len(points) > 1 else ""), fontsize=9)
    # beside the panels, never over the bars
    axes[2].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    if len(points) > 1:
        axes[0].legend(fontsize=7, loc="upper left", bbox_to_anchor=(0.0, -0.12), frameon=False)
    _title(fig, meta, "duel outcome, length and losses")
    return [("dw_duel_outcome", _finish(fig, meta))]
