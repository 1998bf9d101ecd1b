"""Question-specific figures of U-Boat Leader (``Question.plots``), drawn from a run's tables.

- escort_detection: one heatmap of P(detected), Alerted counters across, U-boat state and
  escort damage down (and P(evaded) beside it when Silent Running is in play);
- wolfpack: pack size against the boats that can be called, mean with CI and the whole
  distribution;
- engagement: the swept policies side by side, VP / ships sunk / P(U-boat lost) with 95% CIs.
"""
from __future__ import annotations

import re

import matplotlib.pyplot as plt
import numpy as np

from analyzer.outputs.plots import fit_text, footer, plain_ticks, wrapped

STAT_SUFFIXES = ("_mean", "_se", "_ci_low", "_ci_high")


def _swept(meta, points) -> list[str]:
    return [s for s in meta.get("swept", []) if s in points.columns]


def _row_label(row, keys) -> str:
    return " · ".join(f"{row[k]}" for k in keys) if keys else "as given"


def _ci_text(meta, row, metric) -> str:
    if meta["mode"] != "monte_carlo":
        return ""
    half = (row[f"{metric}_ci_high"] - row[f"{metric}_ci_low"]) / 2
    return f"\n±{half:.3f}"


def _yerr(pts, metric):
    """Error-bar lengths from the CI columns, clipped at 0: a Wilson bound computed for a
    constant metric can land a rounding error inside the mean (e.g. 0.9999999999999999 < 1)."""
    mean = pts[f"{metric}_mean"].to_numpy()
    return np.clip(np.vstack([mean - pts[f"{metric}_ci_low"].to_numpy(),
                              pts[f"{metric}_ci_high"].to_numpy() - mean]), 0, None)


def escort_detection_figures(meta, points) -> list:
    """P(detected) by Alerted counters (across) and the other swept parameters (down); when
    Silent Running is in play, beside it the chance the boat is still Detected afterwards.
    A cell where the boat is beyond the escort's Detection range (metric ``in_range`` = 0)
    is hatched and says so: 0 there means "not rolled for", not "never detected"."""
    swept = _swept(meta, points)
    if "alerted" not in swept:
        return []
    others = [s for s in swept if s != "alerted"]
    alerted = sorted(points["alerted"].unique())
    combos = points[others].drop_duplicates().to_dict("records") if others else [{}]
    silent = "p_evaded_mean" in points and points["p_evaded_mean"].max() > 0
    panels = ["p_detected"] + (["still_detected"] if silent else [])
    titles = {"p_detected": "P(escort detects the U-boat)",
              "still_detected": "P(still Detected after Silent Running)\n"
                                "(only a submerged boat can run silent: surfaced rows = left panel)"}
    fig, axes = plt.subplots(1, len(panels), figsize=(2.2 + 1.0 * len(alerted) * len(panels) + 1.6 * len(panels),
                                                      1.6 + 0.5 * len(combos)), squeeze=False)
    for ax, panel in zip(axes[0], panels):
        grid = np.full((len(combos), len(alerted)), np.nan)
        text = [["" for _ in alerted] for _ in combos]
        for i, combo in enumerate(combos):
            sub = points
            for k_, v in combo.items():
                sub = sub[sub[k_] == v]
            for j, a in enumerate(alerted):
                row = sub[sub["alerted"] == a]
                if not len(row):
                    continue
                r = row.iloc[0]
                if "in_range_mean" in r and r["in_range_mean"] == 0:
                    text[i][j] = "out of\nrange"      # grid stays NaN: hatched below
                    continue
                if panel == "p_detected":
                    value = r["p_detected_mean"]
                    exact_zero = value == 0 and r["p_detected_se"] == 0
                    ci = _ci_text(meta, r, "p_detected") if len(combos) * len(alerted) <= 40 else ""
                    text[i][j] = "0" if exact_zero else f"{value:.2f}{ci}"
                else:  # detected and not evaded (joint, from the two means)
                    value = r["p_detected_mean"] - r["p_evaded_mean"]
                    text[i][j] = f"{value:.2f}"
                grid[i, j] = value
        im = ax.imshow(grid, cmap="RdYlGn_r", vmin=0, vmax=1, aspect="auto")  # red = bad for the U-boat
        for i in range(len(combos)):
            for j in range(len(alerted)):
                if not np.isfinite(grid[i, j]):
                    ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor="#dddddd", edgecolor="white",
                                               hatch="////", linewidth=0))
                    ax.text(j, i, text[i][j], ha="center", va="center", fontsize=7, color="#555555")
                    continue
                v = grid[i, j]
                ax.text(j, i, text[i][j], ha="center", va="center", fontsize=8,
                        color="black" if 0.2 < v < 0.8 else "white")
        ax.set_xticks(range(len(alerted)), [str(a) for a in alerted])
        ax.set_yticks(range(len(combos)), [_row_label(c, others) for c in combos])
        ax.set_xlabel("Alerted counters (+1 to the roll and +1 to both ranges each)")
        if others:
            ax.set_ylabel(" · ".join(o.replace("uboat.", "") for o in others))
        ax.grid(False)
        ax.set_title(titles[panel], fontsize=10)
        fig.colorbar(im, ax=ax, fraction=0.04, pad=0.02)
    if "uboat.range" in swept:
        where = "range = U-boat's distance in Areas (rows)"
    else:
        where = f"U-boat {((meta.get('params') or {}).get('uboat') or {}).get('range', '?')} Areas from the escort"
    fig.suptitle(f"{meta['scenario']}: escort detection by Alerted counters, U-boat state and escort damage; "
                 f"{where}; hatched = beyond Detection range", fontsize=10)
    footer(fig, meta)
    fig.tight_layout(rect=(0, 0.04, 1, 0.96))
    return [("escort_detection_heatmap", fig)]


def wolfpack_figures(meta, points, dists) -> list:
    swept = _swept(meta, points)
    if "candidates" not in swept:
        return []
    pts = points.sort_values("candidates")
    x = pts["candidates"].to_numpy()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    mean = pts["pack_size_mean"].to_numpy()
    err = _yerr(pts, "pack_size")
    ax1.plot(x, x + 1, ls="--", color="gray", label="every boat joins (Radio Call)")
    ax1.errorbar(x, mean, yerr=err, marker="o", capsize=3, label="mean pack size (95% CI)")
    for xi, m in zip(x, mean):
        ax1.annotate(f"{m:.2f}", (xi, m), textcoords="offset points", xytext=(0, -14), ha="center", fontsize=8)
    if "alerted_mean" in pts:
        ax1.bar(x, pts["alerted_mean"].to_numpy(), width=0.4, color="firebrick", alpha=0.5,
                label="mean Alerted counters placed")
    ax1.set_xlabel("U-boats in the Area that can be called")
    ax1.set_ylabel("U-boats")
    ax1.set_xticks(x)
    ax1.legend(fontsize=8, loc="upper left")
    ax1.set_title("pack size (active boat included)", fontsize=10)
    d = dists[dists.metric == "pack_size"]
    sizes = sorted(d["value"].unique())
    cmap = plt.get_cmap("viridis", max(2, len(sizes)))
    bottom = np.zeros(len(x))
    for i, sz in enumerate(sizes):
        probs = np.array([d[(d.point == pt) & (d.value == sz)]["probability"].sum() for pt in pts["point"]])
        ax2.bar(x, probs, bottom=bottom, color=cmap(i), label=f"{int(sz)}")
        bottom += probs
    ax2.set_xlabel("U-boats in the Area that can be called")
    ax2.set_ylabel("probability")
    ax2.set_xticks(x)
    ax2.set_ylim(0, 1)
    ax2.legend(title="pack size", fontsize=7, title_fontsize=8, bbox_to_anchor=(1.01, 1), loc="upper left")
    ax2.set_title("distribution of the pack size", fontsize=10)
    fig.suptitle(f"{meta['scenario']}: wolfpack size vs boats in the Area", fontsize=10)
    footer(fig, meta)
    fig.tight_layout(rect=(0, 0.04, 1, 0.95))
    return [("wolfpack_pack_size", fig)]


ENGAGEMENT_PANELS = (("vp", "VP of ships sunk"), ("ships_sunk", "ships sunk"),
                     ("p_uboat_lost", "P(a U-boat is sunk)"), ("torpedoes_used", "torpedoes fired"))


def engagement_figures(meta, points, dists) -> list:
    swept = _swept(meta, points)
    pts = points.sort_values("point")
    labels = [_row_label(r, swept) for _, r in pts.iterrows()]
    panels = [(m, t) for m, t in ENGAGEMENT_PANELS if f"{m}_mean" in pts]
    fig, axes = plt.subplots(1, len(panels), figsize=(1.2 + len(panels) * max(2.6, 0.9 * len(labels) + 1.0), 4.2))
    colors = plt.get_cmap("tab10")(np.arange(len(labels)) % 10)
    for ax, (metric, title) in zip(np.atleast_1d(axes), panels):
        mean = pts[f"{metric}_mean"].to_numpy()
        err = _yerr(pts, metric)
        ax.bar(range(len(labels)), mean, yerr=err if meta["mode"] == "monte_carlo" else None, capsize=4, color=colors)
        top = max(float(np.nanmax(mean + err[1])), 1e-9)
        for i, m in enumerate(mean):
            ax.text(i, m + 0.02 * top, f"{m:.2f}" if metric != "p_uboat_lost" else f"{m:.3f}", ha="center",
                    va="bottom", fontsize=8)
        slanted = len(labels) > 2
        ax.set_xticks(range(len(labels)), labels, rotation=20 if slanted else 0, ha="right" if slanted else "center",
                      fontsize=8)
        ax.set_ylim(0, 1.05 if metric == "p_uboat_lost" else top * 1.18)
        ax.set_title(title + (" (95% CI)" if meta["mode"] == "monte_carlo" else ""), fontsize=9)
    what = ", ".join(swept) if swept else "the scenario"
    fig.suptitle(f"{meta['scenario']}: one contact, compared by {what}\n"
                 "combat after escort detection uses PLACEHOLDER rule modules, not published rules",
                 fontsize=10)
    footer(fig, meta)
    fig.tight_layout(rect=(0, 0.05, 1, 0.92))
    return [("engagement_policies", fig)]


def _ranking_of(meta, point) -> dict:
    """The point's ranking rows by fleet, when the run folder carries them (``meta["rankings"]``:
    ``{point: [{"name", "diff", "diff_low", "diff_high", "rank", "tie_group", "in_best_set"}, ...]}``,
    :class:`analyzer.core.ranking.RankedOption`), else {}."""
    rows = (meta.get("rankings") or {}).get(str(int(point))) or []
    return {r["name"]: r for r in rows}


def loadout_figures(meta, points, dists) -> list:
    """loadout: per fleet, best mean VP at the top, the mean VP (95% CI), the paired VP
    difference to the BEST fleet (the same trials: the mean of vp_i - vp_best, exact from the
    vp_diff columns; the 95% simultaneous CI and the best set where the run folder has the
    ranking, :mod:`analyzer.core.ranking`) and P(each success level) stacked; one figure per
    sweep point (the first four)."""
    names = [m["name"][3:] for m in meta["metrics"] if m["name"].startswith("vp.")]
    levels = []
    for m in meta["metrics"]:
        lv = m["name"].split(".")[0]
        if lv.startswith("p_level_") and lv[8:] not in levels:
            levels.append(lv[8:])
    mc = meta["mode"] == "monte_carlo"
    figs = []
    for idx, (_, row) in enumerate(points.sort_values("point").head(4).iterrows()):
        order = sorted(names, key=lambda n: (-row[f"vp.{n}_mean"], names.index(n)))
        n = len(order)
        ypos = np.arange(n)[::-1]
        fig, axes = plt.subplots(1, 3, figsize=(14, max(3.2, 1.6 + 0.3 * n)), sharey=True)   # one fleet still reads
        best = order[0]
        ranked = _ranking_of(meta, row["point"])
        sim = mc and len(ranked) == n
        for ax, group, title in ((axes[0], "vp", "mean campaign VP"),
                                 (axes[1], "vp_diff", f"VP minus the best, {best} (paired)")):
            if group == "vp":
                mean = np.array([row[f"vp.{f}_mean"] for f in order])
                lo = np.array([row[f"vp.{f}_ci_low"] for f in order])
                hi = np.array([row[f"vp.{f}_ci_high"] for f in order])
                colors = ["firebrick" if f == best else "steelblue" for f in order]
            else:   # the same trials: mean(vp_i - vp_0) - mean(vp_best - vp_0) = mean(vp_i - vp_best)
                mean = np.array([row[f"vp_diff.{f}_mean"] - row[f"vp_diff.{best}_mean"] for f in order])
                lo = np.array([ranked[f]["diff_low"] for f in order]) if sim else mean
                hi = np.array([ranked[f]["diff_high"] for f in order]) if sim else mean
                colors = ["firebrick" if f == best else "steelblue" if not sim or ranked[f]["in_best_set"]
                          else "silver" for f in order]
            err = np.clip(np.vstack([mean - lo, hi - mean]), 0, None)
            ax.barh(ypos, mean, xerr=err if mc and (group == "vp" or sim) else None, capsize=2, color=colors,
                    alpha=0.85)
            for y, v, a, b in zip(ypos, mean, lo, hi):  # beside the CI bar's end, away from zero
                ax.text(b if v >= 0 else a, y, f" {v:.2f} " if mc else f" {v:.2f}", va="center", fontsize=7,
                        ha="left" if v >= 0 else "right")
            ax.margins(x=0.15)
            plain_ticks(ax.xaxis)
            if group == "vp_diff":
                ax.axvline(0, color="black", lw=0.8)
            if group == "vp":
                ax.set_xlabel(wrapped(title + (" (95% CI)" if mc else " (exact)"), 45))
            else:
                ax.set_xlabel(wrapped(title + (" (95% simultaneous CI; grey: outside the best set)" if sim else
                                               " (simultaneous CIs: the ranking notes)" if mc else " (exact)"), 45))
        cmap = plt.get_cmap("viridis", max(2, len(levels)))
        left = np.zeros(n)
        for k, lv in enumerate(levels):
            probs = np.array([row[f"p_level_{lv}.{f}_mean"] for f in order])
            axes[2].barh(ypos, probs, left=left, color=cmap(k), label=lv)
            left += probs
        axes[2].set_xlim(0, 1)
        axes[2].set_xlabel("P(success level)")
        axes[2].legend(fontsize=7, title="level", title_fontsize=8, bbox_to_anchor=(1.01, 1), loc="upper left")
        axes[0].set_yticks(ypos, order, fontsize=7 if n > 20 else 8)
        fig.suptitle(f"{meta['scenario']}: which fleet scores most? ranked by mean VP (the best, {best}, "
                     f"red)\nall fleets on the same random numbers; PLACEHOLDER campaign data and modules",
                     fontsize=10)
        fig.tight_layout(rect=(0, 0.03, 1, 0.95))
        footer(fig, meta)  # after the layout: the long footer line must not squeeze the panels
        figs.append((f"loadout_ranking{'' if idx == 0 else f'_{idx}'}", fig))
    return figs


_LEVEL_LABEL = re.compile(r"^P\(success level (?P<name>.+): VP >= (?P<total>-?\d+)\)$")


def campaign_figures(meta, points, dists) -> list:
    """campaign: the VP distribution of each sweep point (up to four panels) with the success
    levels of the campaign sheet as shaded bands from each level's VP total, and P(level) written
    in its band (the default figures still show the other metrics)."""
    levels = []
    for m in meta["metrics"]:
        hit = _LEVEL_LABEL.match(m.get("label", ""))
        if hit:
            levels.append((hit["name"], int(hit["total"]), m["name"]))
    levels.sort(key=lambda lv: lv[1])
    vp = dists[dists["metric"] == "vp"]
    keys = _swept(meta, points)
    rows = list(points.sort_values("point").head(4).iterrows())
    # one VP axis and one probability axis for every panel: the points are compared by eye
    fig, axes = plt.subplots(len(rows), 1, figsize=(9, 2.4 * len(rows) + 1.0), sharex=True, sharey=True,
                             squeeze=False)
    top = int(vp["value"].max()) if len(vp) else 1
    highest = float(vp["probability"].max()) if len(vp) else 1.0
    cmap = plt.get_cmap("viridis", max(2, len(levels)))
    for ax, (_, row) in zip(axes[:, 0], rows):
        d = vp[vp["point"] == row["point"]]
        for k, (name, total, metric) in enumerate(levels):
            end = levels[k + 1][1] if k + 1 < len(levels) else top + 1
            ax.axvspan(total - 0.5, end - 0.5, color=cmap(k), alpha=0.18, lw=0)
            ax.text((total + end - 1) / 2, 1.0, f"{name}\nP = {row[f'{metric}_mean']:.2f}", transform=ax.get_xaxis_transform(),
                    ha="center", va="top", fontsize=7)
        ax.bar(d["value"], d["probability"], width=0.85, color="steelblue")
        mean = row["vp_mean"]
        ax.axvline(mean, color="firebrick", lw=1.2)
        ax.annotate(f" mean {mean:.2f}", (mean, 0.55), xycoords=("data", "axes fraction"), color="firebrick",
                    fontsize=8)
        ax.set_ylabel("probability")
        ax.set_ylim(0, highest * 1.3)           # room above the tallest bar for the level names
        ax.set_title(_row_label(row, keys) if keys else "", fontsize=9, loc="left")
    axes[-1, 0].set_xlabel("campaign VP (bands: the sheet's success levels from their VP totals)")
    fig.suptitle(fit_text(fig, f"{meta['scenario']}: campaign VP distribution and success levels "
                          f"(PLACEHOLDER sheet, map, card and module values)", 10), fontsize=10)
    fig.tight_layout(rect=(0, 0.03, 1, 0.96))
    footer(fig, meta, ["vp"] + [lv[2] for lv in levels])
    return [("campaign_vp_levels", fig)]
