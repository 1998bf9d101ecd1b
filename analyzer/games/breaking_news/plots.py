"""Question-specific figures of Breaking News (``Question.plots``), drawn from a run's tables.

- shot: "which weapon kills at which range?": one heatmap of expected casualties per target
  quality, weapon down and range across; cells resting on a reconstructed shooting-table cell
  (an empty one too) are starred and hatched by its confidence (M ///, L xxx), the legend and
  the footer say which and how many;
- morale: pass probability by morale dice x casualties, one panel per leader loss x 50% losses;
- melee: P(attacker wins) by attacker x defender quality;
- firefight: outcome bars (A wins / draw / B wins) with 95% CIs per swept point, and casualties;
- points_efficiency: the offence frontier, cost against casualties inflicted per turn with 95% CIs
  (the Pareto frontier drawn), the offence ranking per 100 points (both say offence alone ignores
  survivability), and the combined ranking: offence, defence (volleys to remove 100 points) and the
  casualties 100 points inflict before they fall, side by side.
Placeholders are counted in the red footer (:func:`analyzer.outputs.plots.footer`).
"""
from __future__ import annotations

import json

import matplotlib.pyplot as plt
import numpy as np

from analyzer.core.gamedata import load_data_cached
from analyzer.games.breaking_news.data import CONFIDENCE_WORDS
from analyzer.outputs.plots import ci_suffix, exact_run, footer
from analyzer.core.questions import SCENARIO_ROOT

WEAPONS_FILE = SCENARIO_ROOT / "breaking_news" / "data" / "weapons.yaml"


def _swept(meta, points) -> list[str]:
    return [s for s in meta.get("swept", []) if s in points.columns]


def _value(meta, points, name, default=None):
    """A parameter's value: the swept column when swept, else the scenario's."""
    if name in points.columns:
        return None
    node = meta.get("params", {})
    for part in name.split("."):
        node = node.get(part, {}) if isinstance(node, dict) else default
    return node if node != {} else default


def _note(fig, text, y=0.0):
    """A second footer line (under analyzer.outputs.plots.footer's) in red."""
    fig.text(0.01, y, text, fontsize=7, color="firebrick", ha="left", va="bottom")


#: hatching of a heatmap cell by the confidence of the shooting-table cell it rests on
CONFIDENCE_HATCH = {"M": "///", "L": "xxx"}


def _cell_confidence(weapon: str, mode: str | None, range_cm: float) -> tuple[str, bool]:
    """(confidence, empty) of the shooting-table cell of ``weapon``/``mode`` at ``range_cm``:
    H, M, L or "-" (no cell), and whether the table leaves it empty (no shot)."""
    data, _ = load_data_cached(WEAPONS_FILE, "")
    w = data["weapons"].get(weapon)
    if w is None:
        return "-", True
    m = w["modes"][mode] if mode in w["modes"] else next(iter(w["modes"].values()))
    for i, edge in enumerate(data["range_bands_cm"]):
        if range_cm <= edge:
            return m["confidence"][i], m["needed"][i] is None
    return "-", True


def shot_figures(meta, points) -> list:
    """Expected casualties, weapon x range, one panel per target quality (when swept)."""
    swept = _swept(meta, points)
    if "weapon" not in swept or "range_cm" not in swept:
        return []
    panel_key = "target.quality" if "target.quality" in swept else None
    panels = list(dict.fromkeys(points[panel_key])) if panel_key else [None]
    weapons = list(dict.fromkeys(points["weapon"]))
    ranges = sorted(points["range_cm"].unique())
    mode = _value(meta, points, "mode")
    fig, axes = plt.subplots(1, len(panels), figsize=(1.2 + 0.55 * len(ranges) * len(panels) + 1.5,
                                                       1.8 + 0.38 * len(weapons)), squeeze=False)
    low = {c: 0 for c in CONFIDENCE_HATCH}
    for ax, panel in zip(axes[0], panels):
        sub = points if panel is None else points[points[panel_key] == panel]
        grid = np.full((len(weapons), len(ranges)), np.nan)
        for i, w in enumerate(weapons):
            for j, r in enumerate(ranges):
                row = sub[(sub["weapon"] == w) & (sub["range_cm"] == r)]
                if len(row):
                    grid[i, j] = row["casualties_mean"].iloc[0]
        im = ax.imshow(grid, aspect="auto", cmap="magma", vmin=0, vmax=max(0.05, np.nanmax(points["casualties_mean"])))
        for (i, j), v in np.ndenumerate(grid):
            conf, empty = _cell_confidence(weapons[i], mode, ranges[j])
            fired = np.isfinite(v) and v > 0
            # a cell rests on a reconstructed table cell when it fires from it, or when "cannot fire" is
            # the table's reconstructed empty cell (not a maximum range or another rule)
            shaky = conf in CONFIDENCE_HATCH and (fired or (empty and np.isfinite(v)))
            star = "*" if shaky else ""
            if shaky:
                low[conf] += 1
                ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch=CONFIDENCE_HATCH[conf],
                                           edgecolor="deepskyblue", lw=0))
            if not fired:
                ax.text(j, i, "–" + star, ha="center", va="center", fontsize=7, color="gray")
                continue
            ax.text(j, i, f"{v:.2f}{star}", ha="center", va="center", fontsize=7,
                    color="white" if v < 0.5 * np.nanmax(grid) else "black")
        ax.set_xticks(range(len(ranges)), [f"{r:g}" for r in ranges])
        ax.set_yticks(range(len(weapons)), weapons if ax is axes[0][0] else [""] * len(weapons))
        ax.set_xlabel("range (cm)")
        ax.grid(False)
        ax.set_title(f"target: {panel}" if panel is not None else "", fontsize=9)
    fig.subplots_adjust(bottom=0.2, wspace=0.05)
    fig.colorbar(im, ax=axes[0].tolist(), label="expected casualties (one shot)")
    shooter = _value(meta, points, "shooter.quality") or "swept"
    fig.suptitle(f"Which weapon kills at which range? ({shooter} shooter, one target figure)\n"
                 f"cell = P(the target is removed) after hits and saves; – = cannot fire", fontsize=10)
    footer(fig, meta, ["casualties"])
    if any(low.values()):
        from matplotlib.patches import Patch
        shown = [c for c in CONFIDENCE_HATCH if low[c]]
        fig.legend(handles=[Patch(facecolor="white", edgecolor="deepskyblue", hatch=CONFIDENCE_HATCH[c] * 2,
                                  label=f"confidence {c}: {CONFIDENCE_WORDS[c]}") for c in shown],
                   title="reconstructed table cell", title_fontsize=7, fontsize=7, loc="lower right",
                   bbox_to_anchor=(0.99, 0.0), frameon=False)
        _note(fig, "* hatched: cell(s) using a RECONSTRUCTED shooting-table value (data/weapons.yaml): "
                   + ", ".join(f"{low[c]} at confidence {c} ({CONFIDENCE_WORDS[c]}, {CONFIDENCE_HATCH[c]})"
                               for c in shown))
    return [("casualties_by_weapon_and_range", fig)]


def morale_figures(meta, points) -> list:
    swept = _swept(meta, points)
    if not {"casualties", "morale_dice"} <= set(swept):
        return []
    facets = [k for k in ("leader_lost", "half_losses") if k in swept]
    combos = points[facets].drop_duplicates().to_dict("records") if facets else [{}]
    dice = sorted(points["morale_dice"].unique())
    cas = sorted(points["casualties"].unique())
    ncols = 2 if len(combos) == 4 else len(combos)
    nrows = -(-len(combos) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(1.5 + 0.55 * len(cas) * ncols + 1.2,
                                                    1.6 + (0.45 * len(dice) + 0.9) * nrows), squeeze=False)
    axes = [list(axes.ravel())]
    for ax, combo in zip(axes[0], combos):
        sub = points
        for k, v in combo.items():
            sub = sub[sub[k] == v]
        grid = sub.pivot_table(index="morale_dice", columns="casualties", values="p_pass_mean").reindex(
            index=dice, columns=cas).to_numpy(float)
        im = ax.imshow(grid, aspect="auto", origin="lower", cmap="RdYlGn", vmin=0, vmax=1)
        for (i, j), v in np.ndenumerate(grid):
            if np.isfinite(v):
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=7)
        ax.set_xticks(range(len(cas)), cas)
        ax.set_yticks(range(len(dice)), dice)
        ax.set_xlabel("casualties this turn")
        ax.set_ylabel("morale dice")
        ax.grid(False)
        ax.set_title(", ".join(f"{k}={v}" for k, v in combo.items()), fontsize=8)
    fig.subplots_adjust(top=0.82, hspace=0.6, bottom=0.14)
    fig.colorbar(im, ax=axes[0], label="P(pass)")
    fig.suptitle("Does the team hold? P(pass the morale test)\n(any die >= casualties; a 6 passes unless 50% "
                 "losses; the leader counts 2)", fontsize=10)
    footer(fig, meta, ["p_pass"])
    return [("morale_pass_table", fig)]


def _attacker_label(v) -> str:
    try:
        att = json.loads(v) if isinstance(v, str) else v
        return " + ".join(a["quality"] + ("(shocked)" if a.get("shocked") else "") for a in att)
    except (TypeError, ValueError, KeyError):
        return str(v)


def melee_figures(meta, points) -> list:
    swept = _swept(meta, points)
    if "attackers" not in swept or len(swept) != 2:
        return []
    other = [s for s in swept if s != "attackers"][0]
    rows = list(dict.fromkeys(points["attackers"]))
    cols = list(dict.fromkeys(points[other]))
    grid = np.full((len(rows), len(cols)), np.nan)
    for i, a in enumerate(rows):
        for j, d in enumerate(cols):
            r = points[(points["attackers"] == a) & (points[other] == d)]
            if len(r):
                grid[i, j] = r["p_attacker_wins_mean"].iloc[0]
    fig, ax = plt.subplots(figsize=(2.5 + 0.8 * len(cols), 1.8 + 0.45 * len(rows)))
    im = ax.imshow(grid, aspect="auto", cmap="RdBu", vmin=0, vmax=1)
    for (i, j), v in np.ndenumerate(grid):
        ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=7)
    ax.set_xticks(range(len(cols)), [str(c) for c in cols], rotation=30, ha="right")
    ax.set_yticks(range(len(rows)), [_attacker_label(a) for a in rows])
    ax.set_xlabel(f"defender ({other})")
    ax.set_ylabel("attackers")
    ax.grid(False)
    fig.colorbar(im, ax=ax, label="P(attackers kill the defender)")
    ax.set_title("Who wins the melee? (1D6 + Melee each, shocked -2)", fontsize=10)
    footer(fig, meta, ["p_attacker_wins"])
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return [("melee_win_table", fig)]


def firefight_figures(meta, points) -> list:
    swept = _swept(meta, points)
    labels = [" · ".join(f"{s.split('.')[-1]}={points.iloc[i][s]}" for s in swept) or "as given"
              for i in range(len(points))]
    names = []
    for side in ("side_a", "side_b"):
        sp = meta.get("params", {}).get(side, {}) or {}
        names.append(sp.get("list") or f"{sp.get('quality', '?')} team")
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 2.2 + 0.5 * len(points)))
    fig.suptitle(f"A = {names[0]}   vs   B = {names[1]}", fontsize=10, x=0.7)
    y = np.arange(len(points))
    left = np.zeros(len(points))
    for metric, colour, name in (("p_win_a", "tab:blue", f"{names[0]} wins"), ("p_draw", "lightgray", "draw"),
                                 ("p_win_b", "tab:red", f"{names[1]} wins")):
        vals = points[f"{metric}_mean"].to_numpy()
        ax.barh(y, vals, left=left, color=colour, label=name)
        if meta["mode"] == "monte_carlo" and metric != "p_draw":
            lo = points[f"{metric}_ci_low"].to_numpy()
            hi = points[f"{metric}_ci_high"].to_numpy()
            edge = left + vals if metric == "p_win_a" else left
            ax.errorbar(edge, y, xerr=np.clip(np.vstack([vals - lo, hi - vals]), 0, None), fmt="none",
                        ecolor="black", capsize=3, lw=1)
        for i, v in enumerate(vals):
            if v > 0.06:
                ax.text(left[i] + v / 2, i, f"{v:.2f}", ha="center", va="center", fontsize=8, color="white")
        left += vals
    ax.set_yticks(y, labels)
    ax.set_xlim(0, 1)
    ax.set_xlabel("probability (95% CI whiskers)")
    fig.legend(fontsize=7, loc="upper left", bbox_to_anchor=(0.01, 0.99), ncol=3)
    ax.set_title("Who wins the firefight? (fewer defeat points)", fontsize=10)
    w = 0.38
    for k, (metric, colour) in enumerate((("casualties_a", "tab:blue"), ("casualties_b", "tab:red"))):
        vals = points[f"{metric}_mean"].to_numpy()
        err = np.clip(np.vstack([vals - points[f"{metric}_ci_low"], points[f"{metric}_ci_high"] - vals]), 0, None)
        ax2.barh(y + (k - 0.5) * w, vals, height=w, color=colour, xerr=err, capsize=2,
                 label=f"{names[k]} lost")
    ax2.set_yticks(y, labels)
    ax2.set_xlabel("figures lost (mean, 95% CI)")
    ax2.legend(fontsize=7)
    # the winner is the side with fewer defeat points, which also count who fired first (§14): the
    # figures each side lost, beside it, show what the fire did
    ax2.set_title("Casualties per side (the DP winner can differ)", fontsize=10)
    footer(fig, meta, ["p_win_a", "p_win_b", "casualties_a", "casualties_b"])
    shaky = _reconstructed_kit_weapons(meta)
    if shaky:
        _note(fig, "the teams' kits include weapons with RECONSTRUCTED shooting-table cells (confidence M/L): "
                   + ", ".join(shaky))
    fig.tight_layout(rect=(0, 0.07, 1, 0.95))
    return [("firefight_outcomes", fig)]


def _reconstructed_kit_weapons(meta) -> list[str]:
    """Weapons of either team whose shooting-table row has an M or L cell (the run's notes say
    which cells were actually used)."""
    weapons_data, _ = load_data_cached(WEAPONS_FILE, "")
    armies, _ = load_data_cached(SCENARIO_ROOT / "breaking_news" / "data" / "armies.yaml", "")
    kit: set[str] = set()
    for side in ("side_a", "side_b"):
        sp = meta.get("params", {}).get(side) or {}
        lines = armies["scenario_lists"].get(sp.get("list"), {}).get("lines", []) if sp.get("list") else \
            sp.get("figures") or []
        for ln in lines:
            kit.update(ln.get("weapons", ["assault_rifle"]))
    out = []
    for w in sorted(kit):
        confs = {c for m in weapons_data["weapons"].get(w, {}).get("modes", {}).values() for c in m["confidence"]}
        worst = "L" if "L" in confs else "M" if "M" in confs else None
        if worst:
            out.append(f"{w} ({worst})")
    return out


def _ranking_bars(ax, meta, points, rank, name, colour):
    """Horizontal bars of ``name``'s mean with its 95% CI (none in an exact run), in the order ``rank``."""
    mean = points[f"{name}_mean"].to_numpy()
    lo = points[f"{name}_ci_low"].to_numpy()
    hi = points[f"{name}_ci_high"].to_numpy()
    ax.barh(range(len(rank)), mean[rank], color=colour, capsize=2,
            xerr=None if exact_run(meta) else np.clip(np.vstack([mean[rank] - lo[rank], hi[rank] - mean[rank]]), 0, None))


def _sweep_ranking(meta, points, metric) -> list[dict] | None:
    """Per row of ``points`` its unit's place in the ranking by ``metric`` (plotmeta
    ``sweep_rankings``, :meth:`PointsEfficiency.rank_points`), or None when the run folder has none
    for every point or ranks several groups (other swept values)."""
    rows = {r["point"]: r for r in meta.get("sweep_rankings") or [] if r.get("metric") == metric}
    if not rows or len({r.get("group") for r in rows.values()}) != 1 or not all(int(p) in rows for p in points["point"]):
        return None
    return [rows[int(p)] for p in points["point"]]


def _difference_bars(ax, meta, points, rank, ranked, both) -> None:
    """Each unit's difference to the best with the ranking's 95% simultaneous CI (the best red, the
    best set green, the units worse than the best grey); without the ranking, the plain difference."""
    best = int(rank[0])
    if ranked is not None:
        diff = np.array([ranked[i]["diff"] for i in rank])
        lo = np.array([ranked[i]["diff_low"] for i in rank])
        hi = np.array([ranked[i]["diff_high"] for i in rank])
        inside = [ranked[i]["in_best_set"] for i in rank]
    else:
        diff = both[rank] - both[best]
        lo, hi, inside = diff, diff, [True] * len(rank)
    colors = ["firebrick" if k == 0 else "tab:green" if inside[k] else "silver" for k in range(len(rank))]
    mc = not exact_run(meta) and ranked is not None
    ax.barh(range(len(rank)), diff, color=colors, capsize=2,
            xerr=np.clip(np.vstack([diff - lo, hi - diff]), 0, None) if mc else None)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_xlabel("both: difference to the best\n" + ("(95% simultaneous CI; grey: worse than the best)" if mc else
                                                       "(exact; grey: worse than the best)" if ranked is not None
                                                       else "(no ranking in this run folder)"), fontsize=8)


#: said on every offence-only figure (issue 28 item 8)
OFFENCE_ONLY = ("OFFENCE ONLY: ignores survivability (saves, cover, leaders' +1); "
                "points_efficiency_combined weighs both")


def points_efficiency_figures(meta, points) -> list:
    if "unit" not in _swept(meta, points):
        return []
    shaky = (points["reconstructed_share_mean"].to_numpy() > 0 if "reconstructed_share_mean" in points
             else np.zeros(len(points), bool))
    labels = [_unit_label(u) + ("*" if sh else "") for u, sh in zip(points["unit"], shaky)]
    eff = points["casualties_per_turn_mean"].to_numpy()
    per100 = points["casualties_per_100_points_mean"].to_numpy()
    cost = np.where(per100 > 0, 100 * eff / np.where(per100 > 0, per100, 1), np.nan)
    fig, ax = plt.subplots(figsize=(9, 6))
    lo = points["casualties_per_turn_ci_low"].to_numpy()
    hi = points["casualties_per_turn_ci_high"].to_numpy()
    err = None if exact_run(meta) else np.clip(np.vstack([eff - lo, hi - eff]), 0, None)
    ax.errorbar(cost[~shaky], eff[~shaky], yerr=None if err is None else err[:, ~shaky], fmt="o", capsize=3, ms=4,
                label="unit")
    if shaky.any():
        ax.errorbar(cost[shaky], eff[shaky], yerr=None if err is None else err[:, shaky], fmt="o", mfc="none",
                    capsize=3, ms=6,
                    label="unit* (fire partly on reconstructed table cells)")
    order = np.lexsort((-eff, cost))
    frontier, best = [], -1.0
    for i in order:
        if np.isfinite(cost[i]) and eff[i] > best:
            frontier.append(i)
            best = eff[i]
    for i in frontier:   # the other units are named in the ranking figure
        ax.annotate(labels[i], (cost[i], eff[i]), fontsize=7, xytext=(4, -10), textcoords="offset points")
    ax.plot(cost[frontier], eff[frontier], "--", color="tab:green", label="frontier (no cheaper unit does more)")
    ax.set_xlabel("cost (points)")
    ax.set_ylabel("expected casualties inflicted per turn" + ci_suffix(meta))
    ax.set_title("What do the points buy in offence? Casualties inflicted per turn against the reference "
                 "targets, by cost", fontsize=10)
    ax.legend(fontsize=8)
    footer(fig, meta, ["casualties_per_turn"])
    _note(fig, OFFENCE_ONLY, 0.03)
    if shaky.any():
        _note(fig, f"* {int(shaky.sum())} unit(s) fire partly with RECONSTRUCTED shooting-table cells "
                   f"(confidence M/L; metric reconstructed_share)")
    fig.tight_layout(rect=(0, 0.08, 1, 1))

    rank = np.argsort(-per100, kind="stable")
    fig2, ax2 = plt.subplots(figsize=(8, 1.8 + 0.25 * len(rank)))
    _ranking_bars(ax2, meta, points, rank, "casualties_per_100_points", "tab:purple")
    ax2.set_yticks(range(len(rank)), [labels[i] for i in rank], fontsize=7)
    ax2.invert_yaxis()
    ax2.set_xlabel("casualties inflicted per turn per 100 points" + ci_suffix(meta))
    ax2.set_title("Offence only: casualties inflicted per turn per 100 points", fontsize=10)
    footer(fig2, meta, ["casualties_per_100_points"])
    _note(fig2, OFFENCE_ONLY, 0.02)
    if shaky.any():
        _note(fig2, "* fire partly on RECONSTRUCTED shooting-table cells (confidence M/L)")
    fig2.tight_layout(rect=(0, 0.05, 1, 1))
    figs = [("points_efficiency_frontier", fig), ("points_efficiency_ranking", fig2)]

    if "lifetime_casualties_per_100_points_mean" in points:   # runs from before issue 28 lack it
        both = points["lifetime_casualties_per_100_points_mean"].to_numpy()
        ranked = _sweep_ranking(meta, points, "lifetime_casualties_per_100_points")
        if ranked is not None:     # the ranking's order: a tie group kept together
            rank = np.array(sorted(range(len(points)), key=lambda i: (ranked[i]["rank"], -both[i], i)))
        else:
            rank = np.argsort(-both, kind="stable")
        fig3, axes = plt.subplots(1, 4, figsize=(16, 2.2 + 0.25 * len(rank)), sharey=True)
        panels = (("casualties_per_100_points", "tab:purple", "offence: casualties inflicted\nper turn per 100 points"),
                  ("volleys_per_100_points", "tab:blue", "defence: reference volleys\nto remove 100 points"),
                  ("lifetime_casualties_per_100_points", "tab:green",
                   "both: casualties 100 points inflict\nbefore they fall"))
        for axk, (name, colour, xlabel) in zip(axes, panels):
            _ranking_bars(axk, meta, points, rank, name, colour)
            axk.set_xlabel(xlabel + ci_suffix(meta), fontsize=8)
        _difference_bars(axes[3], meta, points, rank, ranked, both)
        axes[0].set_yticks(range(len(rank)), [labels[i] for i in rank], fontsize=7)
        axes[0].invert_yaxis()
        fig3.suptitle("Which unit gives most for its points once survival counts? Ranked by the casualties 100 "
                      "points of it inflict before the reference fire removes them\n= offence per turn / P(falls to "
                      "one volley) x 100 / cost (one volley each way a turn, at most 100 turns); shock and morale "
                      "not counted", fontsize=9)
        footer(fig3, meta, ["casualties_per_100_points", "volleys_per_100_points",
                            "lifetime_casualties_per_100_points"])
        if shaky.any():
            _note(fig3, "* fire partly on RECONSTRUCTED shooting-table cells (confidence M/L)")
        fig3.tight_layout(rect=(0, 0.04, 1, 0.96))
        fig3.subplots_adjust(wspace=0.08)   # tight_layout spaces every panel for the first's unit labels
        figs.append(("points_efficiency_combined", fig3))
    return figs


def _unit_label(u) -> str:
    try:
        d = json.loads(u) if isinstance(u, str) else u
        s = f"{d['quality']} {'+'.join(d['weapons'])}"
        s += f" L{d['leadership']}" if d.get("leadership") else ""
        return s + (" team leader" if d.get("leader") else " section leader" if d.get("section_leader") else "")
    except (TypeError, ValueError, KeyError):
        return str(u)
