"""B-17 figures, rendered from a run folder's tables (``analyzer plot`` can redo them).

* ``gun_matrix``: the heatmap "kill odds per gun position" (guns x 24 clock/altitude cells,
  plus the row "all guns together") and a bomber-centred polar chart: the best single gun per
  position and the kill odds when every eligible gun fires.
* ``attack_wave`` / ``mission``: kills and hits per crew member with 95% CIs; what happens to
  the fighters; the mission ledger.

What a figure needs beyond the tables travels in the metric labels written by the questions
(:func:`analyzer.games.b17.gun_matrix.cell_label`), e.g. ``"P(destroyed) tail [tail_gunner, II+2] at 12:00 high (mod +4 **)"``.
"""
from __future__ import annotations

import math
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import to_rgb  # noqa: E402
from matplotlib.patches import Ellipse, Polygon, Rectangle  # noqa: E402

from analyzer.games.b17.data import ALTITUDES, CLOCK_IDS, CLOCKS  # noqa: E402

KILL_CMAP = "magma_r"
GREY = "#d9d9d9"
INK = "#222222"
MUTED = "#666666"
GUN_COLOURS = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d",
               "#1f78b4", "#b2df8a", "#fb9a99", "#cab2d6", "#ff7f00", "#6a3d9a", "#b15928",
               "#8dd3c7", "#bebada"]
ALT_SHORT = {"high": "high", "level": "level", "low": "low"}
_CELL_RE = re.compile(r"^P\(destroyed\) (?P<gun>\S+) \[(?P<crew>[^,\]]+), (?P<damage>[^\]]+)\] at "
                      r"(?P<clock>\S+) (?P<alt>\S+) \(mod (?P<mod>[+-]\d+)(?P<star> \*\*)?\)$")




# ----------------------------------------------------------------------------- shared helpers
def _swept(meta: dict, points, i: int) -> dict:
    """The swept values of point row ``i`` with their column dtypes (a row Series would turn
    an int sweep into floats)."""
    out = {}
    for k in meta["swept"]:
        v = points[k].iloc[i]
        if isinstance(v, (float, np.floating)) and float(v).is_integer():
            v = int(v)
        out[k] = v.item() if hasattr(v, "item") else v
    return out


def _point_title(swept: dict) -> str:
    parts = []
    for k, v in swept.items():
        name = k.split(".")[-1]
        if name == "skill":
            parts.append(f"gunner skill {v}")
        elif name == "fighter":
            parts.append(str(v))
        elif k == "fighter_fire.model":
            parts.append(f"fighter fire: {v}")
        elif isinstance(v, bool):
            parts.append(f"{name.replace('_ok', '')} {'on' if v else 'off'}")
        else:
            parts.append(f"{name}: {v}")
    return ", ".join(parts)


def footer(fig, meta: dict, extra: str = "") -> None:
    n_ph = len(meta.get("placeholders", []))
    text = f"{meta['scenario']} · {meta['game']}/{meta['question']} · seed {meta['seed']} · {meta['mode']}"
    if extra:
        text += f" · {extra}"
    if n_ph:
        text += (f"\nuses {n_ph} PLACEHOLDER value(s) not in the rule source (most of the gun-arc table is "
                 f"a plausible B-17G layout, not the article's image): see summary.json")
    fig.text(0.01, 0.005, text, fontsize=7, color="firebrick" if n_ph else MUTED, ha="left", va="bottom")


def _text_colour(rgb) -> str:
    r, g, b = to_rgb(rgb)
    return "white" if 0.299 * r + 0.587 * g + 0.114 * b < 0.5 else INK


def _pct(v: float) -> str:
    if not math.isfinite(v):
        return ""
    if v <= 0:
        return "0"
    if v < 0.005:
        return "<1"
    return f"{100 * v:.0f}"


def _mean(row, name: str) -> float:
    key = f"{name}_mean"
    return float(row[key]) if key in row.index and row[key] is not None else float("nan")


# ----------------------------------------------------------------------------- gun_matrix
def _matrix_layout(meta: dict):
    guns: list[dict] = []
    cells = {}
    for m in meta["metrics"]:
        if not m["name"].startswith("p_destroyed__"):
            continue
        hit = _CELL_RE.match(m["label"])
        if hit is None:
            continue
        gun = hit["gun"]
        if not any(g["id"] == gun for g in guns):
            guns.append({"id": gun, "crew": hit["crew"], "damage": hit["damage"]})
        c = CLOCKS.index(hit["clock"]) * 3 + ALTITUDES.index(hit["alt"])
        cells[(gun, c)] = {"name": m["name"], "mod": int(hit["mod"]), "star": bool(hit["star"])}
    return guns, cells


def _se(row, name: str) -> float:
    key = f"{name}_se"
    return float(row[key]) if key in row.index and row[key] is not None else 0.0


#: Monte-Carlo estimates closer than this many combined standard errors count as a tie.
TIE_SE = 3.0


#: How ties are shown (spec §2), printed on the figures.
TIE_RULE = ("best = highest P(destroyed), ties broken by P(hit); guns still tied are all best "
            "(exact runs: equal values; Monte-Carlo runs: within 3 SE)")


def best_guns(p_destroyed, se_destroyed, p_hit, se_hit, allowed=None) -> list[int]:
    """Spec §2: the guns with the highest P(destroyed), then among them the highest P(hit);
    every gun still tied is returned (table order), none when no gun can fire.

    In Monte-Carlo runs two guns whose estimates differ by less than ``TIE_SE`` combined
    standard errors are tied (exact runs have se = 0: exact ties only), so the frame does
    not follow the noise. ``allowed[i]`` False leaves gun i out (e.g. ``**`` shots).
    """
    cand = [i for i in range(p_destroyed.shape[0])
            if math.isfinite(p_destroyed[i]) and (allowed is None or allowed[i])]
    for value, se in ((p_destroyed, se_destroyed), (p_hit, se_hit)):
        if not cand:
            return []
        top = max(cand, key=lambda i: value[i])
        cand = [i for i in cand if value[top] - value[i] <= TIE_SE * math.hypot(se[top], se[i])]
    return cand


def gun_matrix_figures(meta: dict, points) -> list:
    guns, cells = _matrix_layout(meta)
    if not guns:
        return []
    figs = []
    colours = {g["id"]: GUN_COLOURS[i % len(GUN_COLOURS)] for i, g in enumerate(guns)}
    for i in range(len(points)):
        row = points.iloc[i]
        swept = _swept(meta, points, i)
        single = np.full((len(guns), 24), np.nan)
        single_se = np.zeros((len(guns), 24))
        p_hit = np.full((len(guns), 24), np.nan)
        p_hit_se = np.zeros((len(guns), 24))
        for i, g in enumerate(guns):
            for c in range(24):
                if (g["id"], c) in cells:
                    name = cells[(g["id"], c)]["name"]
                    single[i, c], single_se[i, c] = _mean(row, name), _se(row, name)
                    hit_name = name.replace("p_destroyed__", "p_hit__", 1)
                    p_hit[i, c], p_hit_se[i, c] = _mean(row, hit_name), _se(row, hit_name)
        combined = np.full(24, np.nan)
        before = np.full(24, np.nan)
        for c in range(24):
            where = f"{CLOCK_IDS[c // 3]}__{ALTITUDES[c % 3]}"
            combined[c] = _mean(row, f"p_destroyed_all__{where}")
            before[c] = _mean(row, f"p_destroyed_before_fire__{where}")
        # heatmap: any shot; polar ("safest"): only shots that land before the fighter fires
        best = [best_guns(single[:, c], single_se[:, c], p_hit[:, c], p_hit_se[:, c]) for c in range(24)]
        not_delayed = [[not cells.get((g["id"], c), {"star": True})["star"] for g in guns] for c in range(24)]
        best_before = [best_guns(single[:, c], single_se[:, c], p_hit[:, c], p_hit_se[:, c], not_delayed[c])
                       for c in range(24)]
        title = _point_title(swept)
        stem = "_".join(str(v).replace(" ", "") for v in swept.values()) or "point"
        figs.append((f"kill_odds_heatmap_{stem}", _heatmap(meta, guns, cells, single, combined, best, title)))
        figs.append((f"kill_odds_polar_{stem}", _polar(meta, guns, colours, single, combined, before, best_before,
                                                      title)))
    return figs


def _heatmap(meta, guns, cells, single, combined, best, title):
    n = len(guns)
    cmap = plt.get_cmap(KILL_CMAP).with_extremes(bad=GREY)
    height = 2.6 + 0.46 * (n + 1.6)
    fig = plt.figure(figsize=(15.5, height))
    gs = fig.add_gridspec(2, 2, height_ratios=[n, 1.15], width_ratios=[24, 2.6], hspace=0.08, wspace=0.03,
                          left=0.14, right=0.985, top=1 - 1.45 / height, bottom=1.25 / height)
    ax = fig.add_subplot(gs[0, 0])
    ax_all = fig.add_subplot(gs[1, 0])
    ax_bar = fig.add_subplot(gs[0, 1], sharey=ax)
    for a, data, rows in ((ax, single, n), (ax_all, combined[None, :], 1)):
        im = a.imshow(np.ma.masked_invalid(data), cmap=cmap, vmin=0, vmax=1, aspect="auto",
                      interpolation="nearest")
        a.grid(False)
        for (i, c), v in np.ndenumerate(data):
            if not math.isfinite(v):
                a.add_patch(Rectangle((c - 0.5, i - 0.5), 1, 1, facecolor=GREY, edgecolor="white",
                                      hatch="////", linewidth=0, zorder=1))
                continue
            a.text(c, i, _pct(v), ha="center", va="center", fontsize=8.5,
                   color=_text_colour(cmap(v)), zorder=3, fontweight="bold" if rows == 1 else "normal")
        for x in range(3, 24, 3):
            a.axvline(x - 0.5, color="white", linewidth=3.5, zorder=2)
        for s in a.spines.values():
            s.set_visible(False)
        a.tick_params(length=0)
    for i, g in enumerate(guns):
        for c in range(24):
            key = (g["id"], c)
            if key in cells and cells[key]["star"]:
                ax.text(c + 0.40, i - 0.40, "**", ha="right", va="top", fontsize=8, fontweight="bold", zorder=4,
                        color=_text_colour(cmap(single[i, c])) if math.isfinite(single[i, c]) else INK)
    for c in range(24):
        for i in best[c]:   # every tied best gun is framed
            ax.add_patch(Rectangle((c - 0.46, i - 0.46), 0.92, 0.92, fill=False, edgecolor="#00a6d6",
                                   linewidth=2.0, zorder=5))
    ax.set_yticks(range(n), [f"{g['id']}  ·  {g['crew']}  ·  {g['damage']}" for g in guns], fontsize=9)
    ax_all.set_yticks([0], ["all guns together\n(** tail shots included)"], fontsize=9, fontweight="bold")
    ax.xaxis.tick_top()
    ax.set_xticks([3 * k + 1 for k in range(8)], CLOCKS, fontsize=11, fontweight="bold")
    ax_all.set_xticks(range(24), [ALT_SHORT[ALTITUDES[c % 3]] for c in range(24)], fontsize=7.5, rotation=0,
                      color=MUTED)
    ax_all.xaxis.tick_bottom()
    plt.setp(ax_all.get_xticklabels()[1::3], fontsize=7.5)

    # right: mean kill odds over the 24 positions (a fighter from a uniformly random cell)
    avg = np.nan_to_num(single, nan=0.0).mean(axis=1)
    covered = np.isfinite(single).sum(axis=1)
    ax_bar.barh(range(n), avg, color="#8c2d04", height=0.62)
    for i, (v, k) in enumerate(zip(avg, covered)):
        ax_bar.text(v + 0.004, i, f"{100 * v:.1f}%  ({k}/24)", va="center", fontsize=7.5, color=INK)
    ax_bar.set_xlim(0, max(0.05, avg.max() * 2.6))
    ax_bar.tick_params(left=False, labelleft=False, bottom=False, labelbottom=False)
    for s in ax_bar.spines.values():
        s.set_visible(False)
    ax_bar.grid(False)
    ax_bar.set_title("mean over 24 cells\n(cells it can reach)", fontsize=8, color=MUTED)

    cax = fig.add_axes([0.26, 0.62 / height, 0.22, 0.14 / height])
    cb = fig.colorbar(im, cax=cax, orientation="horizontal")
    cb.set_ticks([0, 0.25, 0.5, 0.75, 1], labels=["0%", "25%", "50%", "75%", "100%"])
    cb.ax.tick_params(labelsize=8)
    fig.text(0.25, 0.69 / height, "P(fighter destroyed)", fontsize=8.5, ha="right", va="center", color=INK)
    fig.text(0.50, 0.69 / height, "hatched = gun cannot fire there   ·   ** = tail shot after the fighter's attack "
             "(needs intercom)   ·   blue frames = best single gun(s)", fontsize=8, color=MUTED, va="center")
    fig.text(0.50, 0.35 / height, TIE_RULE, fontsize=7.5, color=MUTED, va="center")
    fig.suptitle(f"Kill odds per gun position — {title}", fontsize=15, fontweight="bold", x=0.14, ha="left",
                 y=1 - 0.22 / height)
    fig.text(0.14, 1 - 0.5 / height,
             "Percent chance that ONE shot from the gun destroys a fresh fighter attacking from that clock "
             "position and altitude (3d10 + cell modifier ≤ skill; hits = ⌈damage / k⌉, 3 hits destroy). "
             "Bottom row: every crew position that can reach the cell fires at that one fighter.",
             fontsize=9, color=MUTED, ha="left", va="top", wrap=True)
    footer(fig, meta)
    return fig


# -- polar chart -------------------------------------------------------------------
R_BOMBER = 1.35          # the bomber sits inside this radius
RING = 1.05              # ring width per altitude (low inside, high outside)


def _ring(alt_index: int) -> float:
    """Bottom radius of an altitude ring: low innermost, high outermost."""
    return R_BOMBER + (2 - alt_index) * RING


def _polar(meta, guns, colours, single, combined, before, best, title):
    """Left: the best gun(s) whose shot lands before the fighter fires; right: all eligible
    guns together, headline = P(destroyed before it fires), ``**`` kills (after it fired)
    added underneath."""
    fig = plt.figure(figsize=(15, 9.2))
    axes = [fig.add_axes([0.03, 0.14, 0.44, 0.68], projection="polar"),
            fig.add_axes([0.53, 0.14, 0.44, 0.68], projection="polar")]
    cmap = plt.get_cmap(KILL_CMAP)
    width = 2 * math.pi / 8
    for k, ax in enumerate(axes):
        ax.set_theta_zero_location("N")
        ax.set_theta_direction(-1)
        ax.set_ylim(0, R_BOMBER + 3 * RING + 0.05)
        ax.set_yticks([])
        ax.set_xticks([i * width for i in range(8)], CLOCKS, fontsize=12, fontweight="bold")
        ax.tick_params(axis="x", pad=6)
        ax.grid(False)
        ax.spines["polar"].set_visible(False)
        for c in range(24):
            ci, ai = c // 3, c % 3
            theta = ci * width
            bottom = _ring(ai)
            if k == 0:
                has = bool(best[c])
                face = colours[guns[best[c][0]]["id"]] if has else GREY
                value = single[best[c][0], c] if has else float("nan")
                label = f"{'='.join(guns[i]['id'] for i in best[c])}\n{_pct(value)}%" if has else ""
            else:
                value = before[c]
                has = math.isfinite(value)
                face = cmap(value) if has else GREY
                late = combined[c] - value if has and math.isfinite(combined[c]) else 0.0
                label = (f"{_pct(value)}%" + (f"\n+{_pct(late)} **" if late >= 0.0005 else "")) if has else ""
            ax.bar(theta, RING, width=width, bottom=bottom, color=face, edgecolor="white", linewidth=1.6,
                   hatch=None if has else "////", align="center")
            if label:
                size = 8.5 if k == 0 else 11
                if ai == 2:
                    size -= 1.5
                ax.text(theta, bottom + RING / 2, label, ha="center", va="center", fontsize=size,
                        color=_text_colour(face), fontweight="bold" if k == 1 else "normal")
        _bomber(fig, ax)
    axes[0].set_title("Best single gun per position, shots before the fighter fires\n(colour = gun, "
                      "number = its P(destroyed); a = b: tied)", fontsize=12, pad=34)
    axes[1].set_title("All eligible guns fire at one fighter: P(destroyed before it fires)\n"
                      "(+N ** = extra kills by tail shots after its attack)", fontsize=12, pad=34)
    shown = [g for i, g in enumerate(guns) if any(i in b for b in best)]
    handles = [Rectangle((0, 0), 1, 1, facecolor=colours[g["id"]]) for g in shown]
    fig.legend(handles, [f"{g['id']} ({g['crew']})" for g in shown], loc="lower left", ncol=min(4, len(shown)),
               fontsize=8.5, frameon=False, bbox_to_anchor=(0.02, 0.04))
    sm = plt.cm.ScalarMappable(cmap=cmap, norm=plt.Normalize(0, 1))
    cax = fig.add_axes([0.62, 0.075, 0.26, 0.016])
    cb = fig.colorbar(sm, cax=cax, orientation="horizontal")
    cb.set_ticks([0, 0.25, 0.5, 0.75, 1], labels=["0%", "25%", "50%", "75%", "100%"])
    cb.ax.tick_params(labelsize=8)
    cb.set_label("P(fighter destroyed)", fontsize=8)
    fig.suptitle(f"Where is the bomber safest? — {title}", fontsize=16, fontweight="bold", y=0.985)
    fig.text(0.5, 0.94, "Bomber seen from above, nose at 12:00. Rings: outer = high, middle = level, "
             "inner = low. Hatched = no gun can fire there.", ha="center", fontsize=10, color=MUTED)
    fig.text(0.5, 0.915, TIE_RULE[0].upper() + TIE_RULE[1:] + ".", ha="center", fontsize=8.5, color=MUTED)
    footer(fig, meta)
    return fig


def _bomber(fig, ax) -> None:
    """A small top-down B-17 silhouette at the centre of a polar axes (nose up = 12:00)."""
    box = ax.get_position()
    fw, fh = fig.get_size_inches()
    radius_in = min(box.width * fw, box.height * fh) / 2 * R_BOMBER / ax.get_ylim()[1] * 0.9
    w, h = radius_in / fw, radius_in / fh
    cx, cy = box.x0 + box.width / 2, box.y0 + box.height / 2
    inset = fig.add_axes([cx - w, cy - h, 2 * w, 2 * h])
    inset.set_xlim(-1, 1)
    inset.set_ylim(-1, 1)
    inset.set_aspect("equal")
    inset.axis("off")
    body = "#4d4d4d"
    inset.add_patch(Polygon([(-1.0, 0.22), (-0.95, 0.30), (0.95, 0.30), (1.0, 0.22), (0.10, 0.05),
                             (-0.10, 0.05)], closed=True, facecolor=body, edgecolor="none"))      # wings
    inset.add_patch(Polygon([(-0.42, -0.72), (-0.40, -0.64), (0.40, -0.64), (0.42, -0.72), (0.05, -0.78),
                             (-0.05, -0.78)], closed=True, facecolor=body, edgecolor="none"))     # tailplane
    inset.add_patch(Ellipse((0, -0.02), 0.22, 1.72, facecolor=body, edgecolor="none"))          # fuselage
    for x in (-0.62, -0.32, 0.32, 0.62):                                                            # engines
        inset.add_patch(Ellipse((x, 0.30), 0.09, 0.22, facecolor=body, edgecolor="none"))
    inset.text(0, -0.97, "B-17", ha="center", va="center", fontsize=7, color=MUTED)


# ----------------------------------------------------------------------------- attack_wave / mission
def _crews(meta: dict) -> list[str]:
    return [m["name"][6:] for m in meta["metrics"] if m["name"].startswith("kills_") and m["name"] != "kills_total"]


def _series(points, meta):
    labels = [_point_title(_swept(meta, points, i)) or meta["scenario"] for i in range(len(points))]
    palette = ["#08519c", "#e6550d", "#31a354", "#756bb1", "#636363", "#d6616b"]
    return labels, [palette[i % len(palette)] for i in range(len(labels))]


def _err(row, name: str, mode: str):
    m = _mean(row, name)
    if mode != "monte_carlo":
        return m, 0.0, 0.0
    return m, m - float(row[f"{name}_ci_low"]), float(row[f"{name}_ci_high"]) - m


def _scored(row, name: str) -> bool:
    """Whether the metric ``name`` was ever nonzero at this point (mean or spread above 0)."""
    return _mean(row, name) > 0 or float(row.get(f"{name}_se", 0.0) or 0.0) > 0


def _silent_text(meta: dict, row) -> str:
    """What a crew without a single hit is marked with: in an exact run no hit is possible (its
    guns cannot fire at this attack); a Monte-Carlo run only saw none."""
    if meta["mode"] != "monte_carlo":
        return "cannot fire here (no hit possible)"
    return f"no hit in {int(row['trials']):,} trials"


def crew_figures(meta: dict, points) -> list:
    crews = _crews(meta)
    if not crews:
        return []
    labels, colours = _series(points, meta)
    n = len(labels)
    fig, axes = plt.subplots(1, 2, figsize=(13, 1.9 + 0.27 * len(crews) * max(n, 1.6)), sharey=True)
    per = "per mission" if meta["question"] == "mission" else "per attack"
    height = 0.8 / n
    for ax, what, title in ((axes[0], "kills", f"Kills {per} (shared kills split equally)"),
                            (axes[1], "hits", f"Hits scored {per} (all recorded, even past 3)")):
        for j, ((_, row), label, colour) in enumerate(zip(points.iterrows(), labels, colours)):
            ys = np.arange(len(crews)) + (j - (n - 1) / 2) * height
            vals = [_err(row, f"{what}_{c}", meta["mode"]) for c in crews]
            means = np.array([v[0] for v in vals])
            xerr = np.array([[v[1] for v in vals], [v[2] for v in vals]])
            # a crew that never hit (no arc to the attack's clock/altitude, ** without intercom...)
            # gets no bar: a zero-length bar with a whisker reads as "0 kills, measured"
            silent = [not _scored(row, f"hits_{c}") for c in crews]
            drawn_at = [k for k in range(len(crews)) if not silent[k]]
            ax.barh(ys[drawn_at], means[drawn_at], height=height * 0.92, color=colour, label=label,
                    xerr=xerr[:, drawn_at] if meta["mode"] == "monte_carlo" else None, capsize=2.5,
                    error_kw={"elinewidth": 1, "ecolor": INK})
            for k, (y, m, e) in enumerate(zip(ys, means, xerr[1])):
                if silent[k]:
                    ax.text(0, y, " " + _silent_text(meta, row), va="center", fontsize=7.5, color=MUTED,
                            style="italic")
                    continue
                ax.text(m + e + 0.003 * max(1e-9, means.max()), y, f"{m:.3f}" if m > 0 else f"no {what}",
                        va="center", fontsize=7.5, color=INK if m > 0 else MUTED)
        ax.set_title(title, fontsize=11, loc="left")
        ax.set_yticks(range(len(crews)), crews)
        ax.invert_yaxis() if ax is axes[0] else None
        ax.grid(axis="y", visible=False)
        right = max(float(points[f"{what}_{c}_mean"].max()) for c in crews)
        ax.set_xlim(0, right * 1.28 + 1e-9)
    ci = " · bars: 95% CI" if meta["mode"] == "monte_carlo" else ""
    fig.suptitle(f"Who earns the kills? {meta['scenario']}", fontsize=14, fontweight="bold", x=0.01, ha="left")
    if n > 1:
        fig.legend(*axes[0].get_legend_handles_labels(), loc="upper right", ncol=min(n, 3), fontsize=9,
                   frameon=False, bbox_to_anchor=(0.995, 0.995))
    fig.tight_layout(rect=(0, 0.05, 1, 0.93))
    footer(fig, meta, f"mean {per}{ci}")
    return [("crew_kills_hits", fig)]


FATES = (("destroyed before firing", "#7f0000"), ("destroyed after firing (** tail shots)", "#d7301f"),
         ("damaged (leaves)", "#fc8d59"), ("tocado (1 hit)", "#fdd49e"), ("intact", "#d9d9d9"))
FIRING = (("does not fire", "#7f0000"), ("fires at +4 (dañado)", "#fc8d59"), ("fires at +2 (tocado)", "#fdd49e"),
          ("fires at +0", "#969696"))


def wave_fate_figures(meta: dict, points) -> list:
    labels, _ = _series(points, meta)
    n = len(labels)
    panel = 0.8 + 0.5 * n
    fig, axes = plt.subplots(2, 1, figsize=(12.5, 1.6 + 2 * panel), sharex=True)
    n_fighters = 0.0
    for ax, parts, title in ((axes[0], FATES, "What happens to the fighters (mean number per attack)"),
                             (axes[1], FIRING, "Who still shoots at the bomber, and at which penalty")):
        for j, (_, row) in enumerate(points.iterrows()):
            d, b = _mean(row, "destroyed"), _mean(row, "destroyed_before_firing")
            if parts is FATES:
                vals = [b, d - b, _mean(row, "damaged"), _mean(row, "tocado"), _mean(row, "intact")]
            else:
                vals = [b, _mean(row, "firing_plus4"), _mean(row, "firing_plus2"), _mean(row, "firing_plus0")]
            total = sum(vals)
            n_fighters = max(n_fighters, total)
            if parts is FATES:
                caption = (f"destroyed {d:.3f} ({b:.3f} before firing) · damaged {vals[2]:.3f} · "
                           f"tocado {vals[3]:.3f} · intact {vals[4]:.3f}")
            else:
                caption = (f"fire at the bomber {total - b:.3f}: at +0 {vals[3]:.3f}, +2 {vals[2]:.3f}, "
                           f"+4 {vals[1]:.3f}")
            ax.text(0, j - 0.36, caption, fontsize=7.5, color=MUTED, va="bottom", ha="left")
            left = 0.0
            for (name, colour), v in zip(parts, vals):
                ax.barh(j, v, left=left, color=colour, height=0.56, label=name if j == 0 else None,
                        edgecolor="white", linewidth=1)
                if v >= 0.045 * total:
                    ax.text(left + v / 2, j, f"{v:.2f}", ha="center", va="center", fontsize=8.5,
                            color=_text_colour(colour))
                left += v
        ax.set_title(title, fontsize=11, loc="left")
        ax.set_yticks(range(n), labels)
        ax.set_ylim(n - 0.6, -0.75)
        ax.grid(axis="y", visible=False)
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8.5, frameon=False)
    axes[1].set_xlabel("fighters in the attack")
    axes[1].set_xlim(0, n_fighters * 1.001 + 1e-9)
    fig.suptitle(f"The attack, fighter by fighter — {meta['scenario']}", fontsize=14, fontweight="bold", x=0.01,
                 ha="left")
    fig.tight_layout(rect=(0, 0.06, 1, 0.97))
    footer(fig, meta, "means per attack" + (" (points.parquet has SEs and CIs)" if meta["mode"] == "monte_carlo" else ""))
    return [("fighter_fates", fig)]


LEDGER = (("kills_total", "destroyed"), ("damaged_total", "left damaged"),
          ("fighters_remaining", "still flying at the end"), ("fighters_withdrawn", "withdrew"), ("fighter_attacks", "attacks on the bomber"),
          ("bomber_hits", "hits on the bomber (PH model)"), ("hits_total", "hits scored by the crew"))


def mission_figures(meta: dict, points) -> list:
    labels, colours = _series(points, meta)
    n = len(labels)
    fig, ax = plt.subplots(figsize=(11, 1.6 + 0.5 * len(LEDGER) * max(1, n / 1.5)))
    height = 0.8 / n
    top = 0.0
    for j, ((_, row), label, colour) in enumerate(zip(points.iterrows(), labels, colours)):
        vals = [_err(row, m, meta["mode"]) for m, _ in LEDGER]
        means = np.array([v[0] for v in vals])
        ys = np.arange(len(LEDGER)) + (j - (n - 1) / 2) * height
        xerr = np.array([[v[1] for v in vals], [v[2] for v in vals]])
        ax.barh(ys, means, height=height * 0.92, color=colour, label=label,
                xerr=xerr if meta["mode"] == "monte_carlo" else None, capsize=2.5)
        for y, m in zip(ys, means):
            ax.text(m + 0.1, y, f"{m:.2f}", va="center", fontsize=8)
        top = max(top, means.max())
    ax.set_yticks(range(len(LEDGER)), [t for _, t in LEDGER])
    ax.invert_yaxis()
    ax.set_xlim(0, top * 1.15 + 0.5)
    ax.grid(axis="y", visible=False)
    ax.set_xlabel("mean per mission" + (" (95% CI)" if meta["mode"] == "monte_carlo" else " (exact)"))
    if n > 1:
        ax.legend(fontsize=9, frameon=False, loc="lower right")
    ax.set_title(f"Mission ledger — {meta['scenario']}", fontsize=13, fontweight="bold", loc="left")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    footer(fig, meta)
    return [("mission_ledger", fig)]
