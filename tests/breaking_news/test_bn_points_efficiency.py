"""``points_efficiency``: MC against the exact mode, costs from the list rules, the defence and the
lifetime exchange against hand-computed values and brute force, the shipped sweep covers every unit of
the army and scenario lists, and the figures (frontier, rankings, heatmaps) are drawn with their footers
and caveats."""
import itertools
import json
from fractions import Fraction

import matplotlib
import pytest
import yaml

from analyzer import api
from analyzer.core import scenario
from analyzer.games.breaking_news import plots
from analyzer.games.breaking_news.points_efficiency import MAX_LIFE_TURNS, life_laws
from tests.breaking_news.helpers import SCEN, assert_mc_matches_exact, prepare, run_acc

matplotlib.use("Agg")


@pytest.mark.parametrize("unit,cost", [
    ({"quality": "veteran", "weapons": ["assault_rifle"]}, 12),
    ({"quality": "veteran", "weapons": ["assault_rifle", "grenade_launcher"]}, 17),
    ({"quality": "elite", "weapons": ["lmg"], "leadership": 1}, 25),
    ({"quality": "trained", "weapons": ["assault_rifle"]}, 12),          # "Entrenados: 12 pts" (issue 28, 7a)
    ({"quality": "special_forces", "weapons": ["assault_rifle", "sniper_rifle"], "leadership": 1}, 40),
    ({"quality": "militia", "weapons": ["assault_rifle"], "leadership": 2, "leader": True}, 15),
    ({"quality": "trained", "weapons": ["assault_rifle"], "leadership": 1, "section_leader": True}, 17),
])
def test_cost_and_mc_matches_exact(unit, cost):
    """Every metric (the lifetime laws bin by bin) within 5 SE of the exact mode, fixed seed."""
    _, _, prep = prepare("points_efficiency", {"unit": unit})
    assert prep.metrics[1].scale == cost
    ex = prep.exact()
    assert ex["casualties_per_100_points"].mean == pytest.approx(ex["casualties_per_turn"].mean * 100 / cost)
    acc = assert_mc_matches_exact(prep, 60_000, what=str(unit))
    assert acc is not None


def _p_fall_and_shock(ph, ps, dice):
    miss_or_saved = 1 - ph + ph * ps
    return 1 - miss_or_saved ** dice, miss_or_saved ** dice - (1 - ph) ** dice


def test_defence_by_hand_save_bonuses_and_sniper():
    """One reference attacker, militia with an AR at 20 cm: the burst needs 4 + 1 (militia) = 5 on 3 dice
    (expected 1 hit, the aimed shot 1/2). A veteran (save 3+) in the open falls with 1 - (8/9)^3; as a team
    or section leader (§9 "+1 si: el objetivo es el Líder del equipo/sección") he saves on 2+: 1 - (17/18)^3;
    in cover the burst needs 6 and the leader's +1 does not add to the cover's ("no acumulativos")."""
    base = {"ranges_cm": [20], "attackers": [{"quality": "militia"}], "unit_cover": [False]}
    cases = [({"quality": "veteran"}, [False], Fraction(1, 3), Fraction(4, 6)),
             ({"quality": "veteran", "leader": True}, [False], Fraction(1, 3), Fraction(5, 6)),
             ({"quality": "veteran", "section_leader": True}, [False], Fraction(1, 3), Fraction(5, 6)),
             ({"quality": "veteran", "section_leader": True}, [True], Fraction(1, 6), Fraction(5, 6)),
             ({"quality": "trained", "section_leader": True}, [True], Fraction(1, 6), Fraction(4, 6))]
    for unit, cover, ph, ps in cases:
        _, _, prep = prepare("points_efficiency", {**base, "unit": unit, "unit_cover": cover})
        ex = prep.exact()
        fall, shock = _p_fall_and_shock(ph, ps, 3)
        assert ex["casualties_suffered_per_turn"].mean == pytest.approx(float(fall), abs=1e-15), unit
        assert ex["shocked_per_turn"].mean == pytest.approx(float(shock), abs=1e-15), unit
    # the +1 to hit a sniper (§8 "+1 si el objetivo es un francotirador"): the burst needs 6
    _, _, prep = prepare("points_efficiency", {**base, "unit": {"quality": "veteran", "weapons": ["sniper_rifle"]}})
    fall, _ = _p_fall_and_shock(Fraction(1, 6), Fraction(4, 6), 3)
    assert prep.exact()["casualties_suffered_per_turn"].mean == pytest.approx(float(fall), abs=1e-15)


def test_section_leader_suffers_less_than_the_same_rifleman():
    """Issue 28 item 7d in the defence: the section leader's save +1 lowers what he suffers (in the open);
    his offence and cost are the rifleman's with L1."""
    lead = prepare("points_efficiency", {"unit": {"quality": "elite", "leadership": 1, "section_leader": True}})[2]
    man = prepare("points_efficiency", {"unit": {"quality": "elite", "leadership": 1}})[2]
    a, b = lead.exact(), man.exact()
    assert a["casualties_suffered_per_turn"].mean < b["casualties_suffered_per_turn"].mean
    assert a["casualties_per_turn"].mean == b["casualties_per_turn"].mean


def test_lifetime_is_offence_over_defence_truncated_at_the_cap():
    """lifetime_casualties_per_100_points = o (1 - (1 - d)^L) / d x 100 / cost (spec §7)."""
    _, _, prep = prepare("points_efficiency", {"unit": {"quality": "special_forces", "weapons": ["lmg"]}})
    ex = prep.exact()
    o, d, cost = ex["casualties_per_turn"].mean, ex["casualties_suffered_per_turn"].mean, prep.metrics[1].scale
    life = (1 - (1 - d) ** MAX_LIFE_TURNS) / d
    assert ex["lifetime_turns"].mean == pytest.approx(life, rel=1e-12)
    assert ex["volleys_per_100_points"].mean == pytest.approx(life * 100 / cost, rel=1e-12)
    assert ex["lifetime_casualties_per_100_points"].mean == pytest.approx(o * life * 100 / cost, rel=1e-12)
    assert ex["lifetime_casualties_per_100_points"].mean == pytest.approx(o / d * 100 / cost, rel=1e-3)


@pytest.mark.parametrize("o,d,cap", [(Fraction(1, 3), Fraction(1, 4), 4), (Fraction(0), Fraction(1, 2), 3),
                                     (Fraction(5, 6), Fraction(0), 3), (Fraction(1, 2), Fraction(1), 2)])
def test_life_laws_match_brute_force(o, d, cap):
    """Every sequence of (killed?, fell?) per turn enumerated, in Fractions."""
    p_t, p_k = [Fraction(0)] * (cap + 1), [Fraction(0)] * (cap + 1)
    for seq in itertools.product([(k, f) for k in (0, 1) for f in (0, 1)], repeat=cap):
        pr, kills, turns = Fraction(1), 0, 0
        for k, f in seq:
            pr *= (o if k else 1 - o) * (d if f else 1 - d)
        for k, f in seq:            # the life: turns up to and including the first fall
            turns += 1
            kills += k
            if f:
                break
        p_t[turns] += pr
        p_k[kills] += pr
    got_t, got_k = life_laws(float(o), float(d), cap)
    assert got_t == pytest.approx([float(x) for x in p_t], abs=1e-15)
    assert got_k == pytest.approx([float(x) for x in p_k], abs=1e-15)


def test_life_cap_is_counted_and_matched_by_the_exact_mode():
    """Attackers that cannot fire (a pistol at 80 cm: "3 (máx 10 cm)") never remove the unit: every life
    reaches MAX_LIFE_TURNS, counted, and the exact mode truncates there too."""
    _, _, prep = prepare("points_efficiency", {"unit": {"quality": "militia"}, "ranges_cm": [80],
                                               "attackers": [{"quality": "elite", "weapons": ["pistol"]}]})
    ex = prep.exact()
    assert ex["casualties_suffered_per_turn"].mean == 0
    assert ex["lifetime_turns"].mean == MAX_LIFE_TURNS
    acc = run_acc(prep, 5_000)
    assert acc.counters[0] == 5_000
    assert_mc_matches_exact(prep, 5_000, what="cap")


def test_offence_and_combined_rankings_disagree_where_survival_counts():
    """Issue 28 item 8: per 100 points the 5-point militia rifleman out-kills everything, but falls to a
    third of the reference volleys; once survival counts the Special Forces sniper (save 2+, +1 to be hit)
    outranks him."""
    def ex(unit):
        return prepare("points_efficiency", {"unit": unit})[2].exact()
    militia = ex({"quality": "militia"})
    sniper = ex({"quality": "special_forces", "weapons": ["assault_rifle", "sniper_rifle"]})
    assert militia["casualties_per_100_points"].mean > 3 * sniper["casualties_per_100_points"].mean
    assert sniper["lifetime_casualties_per_100_points"].mean > militia["lifetime_casualties_per_100_points"].mean
    assert sniper["casualties_suffered_per_turn"].mean < militia["casualties_suffered_per_turn"].mean / 5


def test_grenade_launcher_is_noted_as_buying_nothing_here():
    """The AR's burst always has more expected hits than the launcher's one die: a note says so."""
    _, _, prep = prepare("points_efficiency", {"unit": {"quality": "veteran",
                                                        "weapons": ["assault_rifle", "grenade_launcher"]}})
    assert any(n.startswith("grenade_launcher never fires here") for n in prep.notes)
    assert any("offence only and ignore survivability" in n for n in prep.notes)


def _sweep_key(quality, weapons, leadership=0, leader=False, section_leader=False):
    return quality, tuple(weapons), leadership, bool(leader), bool(section_leader)


def test_shipped_sweep_lists_every_army_and_scenario_list_unit():
    """Every army-list unit (quality x kit x leadership, team and section leaders marked) and every infantry
    line of the scenario lists (crew-served lines field several figures: not a one-figure unit)."""
    d = yaml.safe_load((SCEN / "data" / "armies.yaml").read_text())
    wanted = set()
    for al in d["army_lists"].values():
        for q in al["qualities"]:
            for ln in al["lines"]:
                for kit in [ln["weapons"]] + [[w] for w in ln.get("alternatives", [])]:
                    wanted.add(_sweep_key(q, kit, ln.get("leadership", 0), ln.get("leader"),
                                          ln.get("role") == "section_leader"))
    for sl in d["scenario_lists"].values():
        for ln in sl["lines"]:
            if "crew" not in ln:
                wanted.add(_sweep_key(ln.get("quality", sl["quality"]), ln["weapons"], ln.get("leadership", 0),
                                      ln.get("leader")))
    sweep = yaml.safe_load((SCEN / "points_efficiency.yaml").read_text())["sweep"]["unit"]
    have = [_sweep_key(u["quality"], u["weapons"], u.get("leadership", 0), u.get("leader"), u.get("section_leader"))
            for u in sweep]
    assert len(have) == len(set(have))
    assert set(have) == wanted


def _meta_points(path, tmp_path):
    """(plotmeta, points table) of an exact run written as the CLI writes it."""
    import pandas as pd
    sc = scenario.load(path)
    folder, _ = api.write_run(sc, api.exact(sc), tmp_path, mode="exact", threads=1, wall_seconds=0.0, formats=())
    return json.loads((folder / "plotmeta.json").read_text()), pd.read_parquet(folder / "points.parquet")


def test_points_efficiency_figures_say_what_they_measure(tmp_path):
    meta, points = _meta_points(SCEN / "points_efficiency.yaml", tmp_path)
    figs = dict(plots.points_efficiency_figures(meta, points))
    assert list(figs) == ["points_efficiency_frontier", "points_efficiency_ranking", "points_efficiency_combined"]
    # the offence figures say what they measure and that it ignores survivability (issue 28 item 8)
    for name in ("points_efficiency_frontier", "points_efficiency_ranking"):
        fig = figs[name]
        assert "offence" in fig.axes[0].get_title().lower()
        assert any("ignores survivability" in t.get_text() for t in fig.texts)
    combined = figs["points_efficiency_combined"]
    assert "survival" in combined._suptitle.get_text()
    assert [ax.get_xlabel().split(":")[0] for ax in combined.axes] == ["offence", "defence", "both", "both"]
    # issue 30: the last panel is the ranking's difference to the best (exact here), the best first
    assert combined.axes[3].get_xlabel().startswith("both: difference to the best\n(exact")
    assert meta["sweep_rankings"] and {r["metric"] for r in meta["sweep_rankings"]} == \
        {"lifetime_casualties_per_100_points"}


def test_heatmap_hatching_and_legend_give_each_cell_s_confidence(tmp_path):
    """Issue 28 item 9: the heatmap hatches a cell by the confidence of its table cell (M ///, L xxx),
    the legend and the footer say which is which and how many, and an empty reconstructed cell (the
    AR beyond 100 cm, L) is marked too, not drawn as a plain 'cannot fire'."""
    doc = yaml.safe_load((SCEN / "shot_weapon_range_heatmap.yaml").read_text())
    doc["sweep"] = {"weapon": ["assault_rifle", "smg", "lmg"], "range_cm": [40, 125]}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(doc))
    meta, points = _meta_points(tmp_path / "s.yaml", tmp_path)
    (name, fig), = plots.shot_figures(meta, points)
    ax = fig.axes[0]
    hatches = {(round(p.get_x() + 0.5), round(p.get_y() + 0.5)): p.get_hatch() for p in ax.patches}
    # rows: assault_rifle, smg, lmg; columns: 40, 125 cm (the smg has no cell at 125, confidence "-")
    assert hatches == {(0, 1): "///", (1, 0): "xxx"}     # smg at 40 (M); the AR's empty cell at 125 (L)
    cells = {(round(t.get_position()[0]), round(t.get_position()[1])): t.get_text() for t in ax.texts}
    assert cells[(1, 0)] == "–*" and cells[(1, 1)] == "–" and cells[(0, 1)].endswith("*")
    legend = [t.get_text() for lg in fig.legends for t in lg.get_texts()]
    assert legend == ["confidence M: column-order parse only", "confidence L: guess"]
    footer = [t.get_text() for t in fig.texts if "RECONSTRUCTED" in t.get_text()]
    assert footer and "1 at confidence M" in footer[0] and "1 at confidence L" in footer[0]


def test_heatmap_figure_marks_placeholders_and_reconstructed_cells(tmp_path):
    meta, points = _meta_points(SCEN / "shot_weapon_range_heatmap.yaml", tmp_path)
    (name, fig), = plots.shot_figures(meta, points)
    texts = [t.get_text() for t in fig.texts] + [a.get_text() for ax in fig.axes for a in ax.texts]
    assert any("RECONSTRUCTED" in t for t in texts)
    # every target is in the open: no placeholder can change a cell (grenade_launcher.cover_applies
    # matters only against cover), so the footer lists none
    assert not meta["placeholders"] and not any("PLACEHOLDER" in t for t in texts)
    assert any(t.endswith("*") for t in texts)           # starred low-confidence cells
    # the same heatmap against targets in cover: the placeholder now can change a cell and is marked
    doc = yaml.safe_load((SCEN / "shot_weapon_range_heatmap.yaml").read_text())
    doc["params"]["target"]["cover"] = True
    doc["sweep"] = {"weapon": ["assault_rifle", "grenade_launcher"], "range_cm": [20, 40]}
    covered = tmp_path / "covered"
    covered.mkdir()
    (covered / "s.yaml").write_text(yaml.safe_dump(doc))
    meta, points = _meta_points(covered / "s.yaml", covered)
    (name, fig), = plots.shot_figures(meta, points)
    assert [ph["path"] for ph in meta["placeholders"]] == ["weapons.grenade_launcher.cover_applies"]
    texts = [t.get_text() for t in fig.texts] + [a.get_text() for ax in fig.axes for a in ax.texts]
    assert any("PLACEHOLDER" in t for t in texts)


def test_firefight_figure_shows_casualties_beside_the_winner():
    """Issue 28 item 9: the DP winner can be decided by who fires first (§14), so the outcome bars
    have the casualties of each side beside them: a second panel, casualties_a and casualties_b means
    with their 95% CIs, per swept point."""
    import pandas as pd
    names = ["p_win_a", "p_win_b", "p_draw", "casualties_a", "casualties_b"]
    rows = []
    for r, (wa, ca, cb) in zip((20, 40), ((0.36, 6.1, 8.3), (0.46, 5.2, 7.8))):
        row = {"point": len(rows), "range.start_cm": r}
        for n, v in zip(names, (wa, 1 - wa - 0.04, 0.04, ca, cb)):
            row.update({f"{n}_mean": v, f"{n}_se": 0.01, f"{n}_ci_low": v - 0.1, f"{n}_ci_high": v + 0.2})
        rows.append(row)
    meta = {"game": "breaking_news", "question": "firefight", "seed": 1, "mode": "monte_carlo",
            "swept": ["range.start_cm"], "metrics": [{"name": n, "unaffected_by": []} for n in names],
            "placeholders": [], "example_values": [],
            "params": {"side_a": {"list": "patrol_marines"}, "side_b": {"list": "patrol_taliban"}}}
    (stem, fig), = plots.firefight_figures(meta, pd.DataFrame(rows))
    outcome, casualties = fig.axes
    assert "wins" in outcome.get_title().lower() and "casualties" in casualties.get_title().lower()
    assert casualties.get_xlabel() == "figures lost (mean, 95% CI)"
    bars = sorted((round(p.get_y() + p.get_height() / 2, 2), round(p.get_width(), 2)) for p in casualties.patches)
    assert bars == [(-0.19, 6.1), (0.19, 8.3), (0.81, 5.2), (1.19, 7.8)]   # A below B at each point
    whiskers = [c for c in casualties.containers if hasattr(c, "has_xerr") and c.has_xerr]
    assert len(whiskers) == 2                                             # one CI set per side
    segs = [seg for w in whiskers for seg in w.lines[2][0].get_segments()]
    assert sorted((round(float(a[0]), 2), round(float(b[0]), 2)) for a, b in segs) == \
        [(5.1, 5.4), (6.0, 6.3), (7.7, 8.0), (8.2, 8.5)]                 # [mean - 0.1, mean + 0.2]
    assert [t.get_text() for t in casualties.get_legend().get_texts()] == ["patrol_marines lost",
                                                                            "patrol_taliban lost"]
