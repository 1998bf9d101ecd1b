"""``analyzer matchup`` ranks through analyzer/core/ranking.py (issue 30; docs/balance.md "Matchup",
"Rankings"): each contender's Bradley–Terry rating difference to the best with a simultaneous CI
(max-t bootstrap over all pairs), the best set, ties (identical results in every cell) and
competition ranks, in ratings.parquet, matchup.json, on the console and in the ranking figure.

Planted truths: contenders with the same params have identical results in every cell (common
random numbers), so they must tie; a clearly weaker contender must leave the best set; and where
the true ratings are known the simultaneous intervals must cover them at the stated rate. Known
truth: B-17 ``gun_shot`` contenders differing only in skill, compared trial by trial in field mode
on the same 3d10 roll: a higher skill destroys whenever a lower one does (checked here), so the
true cell is exactly ``P(i beats j) + P(tie) / 2 = 1/2 + (p_i - p_j) / 2`` with ``p`` from the
exact mode, and the true ratings are the Bradley–Terry fit of that matrix (what the fit estimates).
"""
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from analyzer import api
from analyzer.analyses.balance import common as balance
from analyzer.analyses.balance import matchup
from analyzer.core import scenario as scenario_mod

ROOT = Path(__file__).resolve().parent.parent
LEVEL = 0.95
GUN_SHOT = {"game": "b17", "question": "gun_shot", "seed": 3, "trials": 1280,
            "params": {"gun": "tail", "clock": "6:00", "altitude": "level", "fighter": "Me109", "prior_hits": 0,
                       "intercom_ok": True, "skill": 15}, "matchup": {"metric": "p_destroyed"}}
BATTLESHIP = {"squadrons": [{"models": [{"profile": "battleship", "commodore": True}]}]}
CRUISERS = {"squadrons": [{"models": [{"profile": "cruiser", "count": 2}]}]}
FRIGATES = {"squadrons": [{"models": [{"profile": "frigate", "count": 4}]}]}
DUEL = {"game": "dystopian_wars", "question": "duel", "seed": 5, "trials": 256,
        "params": {"side_a": BATTLESHIP, "side_b": CRUISERS, "range": {"mode": "closing", "start": 24},
                   "target_policy": {"a": "weakest", "b": "weakest"}, "max_turns": 4}}


def write(folder: Path, doc: dict, name: str = "m.yaml") -> Path:
    path = folder / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def skills_file(folder: Path, skills: dict) -> Path:
    return write(folder, dict(GUN_SHOT, contenders=[{"name": n, "params": {"skill": s}} for n, s in skills.items()]))


def competition_ranks(ratings: list[float]) -> list[int]:
    """1 + how many contenders rate strictly higher (1 2 2 4)."""
    return [1 + sum(r > x for r in ratings) for x in ratings]


def check_rows(rows: list[dict]) -> None:
    """Every ratings row of a ranking: the columns answers.parquet gives a ranking, consistent."""
    best = rows[0]
    for x in rows:
        assert {"rank", "tie_group", "in_best_set", "diff_to_best", "diff_to_best_low", "diff_to_best_high"} <= set(x)
        assert x["diff_to_best"] == pytest.approx(x["rating"] - best["rating"], abs=1e-12)
        assert x["diff_to_best_low"] <= x["diff_to_best"] <= x["diff_to_best_high"]
        assert x["in_best_set"] == (x["diff_to_best_high"] >= 0)
    assert [x["rank"] for x in rows] == competition_ranks([x["rating"] for x in rows])


# ----------------------------------------------------------------------------- ties, best set
def test_field_identical_contenders_tie_and_a_weaker_one_leaves_the_best_set(tmp_path):
    """Two contenders with skill 18 (the same value in every trial): one rank, one tie group, the
    same rating and interval, both in the best set; skill 8 (P(destroyed) 0.10 against 0.73) is
    outside it; ranks are competition ranks (1 1 3 4)."""
    m = matchup.run(skills_file(tmp_path, {"weak": 8, "strong": 18, "mid": 15, "strong_copy": 18}))
    r = matchup.ratings(m, resamples=100)
    assert matchup.identical_contenders(m.sums)[m.names.index("strong"), m.names.index("strong_copy")]
    rows = matchup.document(m, r)["ratings"]
    check_rows(rows)
    by = {x["contender"]: x for x in rows}
    s, c, w = by["strong"], by["strong_copy"], by["weak"]
    assert s["rank"] == c["rank"] == 1 and s["tie_group"] == c["tie_group"] == 0
    assert s["rating"] == c["rating"] and s["in_best_set"] and c["in_best_set"]
    assert (c["diff_to_best"], c["diff_to_best_low"], c["diff_to_best_high"]) == (0, 0, 0)
    assert [x["rank"] for x in rows] == [1, 1, 3, 4] and by["mid"]["tie_group"] not in (0, w["tie_group"])
    assert not w["in_best_set"] and w["diff_to_best_high"] < 0
    assert r.ranking.best_set == ["strong", "strong_copy"]


def test_seated_identical_contenders_share_a_rank_1_2_2_4(tmp_path):
    """A DW duel: the battleship and its copy run the same simulation in every cell they meet, so
    they tie (competition ranking 1 2 2 4 here: the cruisers rate best), in matchup.json's ratings
    and its ranking's ties."""
    doc = dict(DUEL, contenders=[{"name": "battleship", "side": BATTLESHIP}, {"name": "cruisers", "side": CRUISERS},
                                 {"name": "battleship_copy", "side": BATTLESHIP},
                                 {"name": "frigates", "side": FRIGATES}])
    m = matchup.run(write(tmp_path, doc))
    r = matchup.ratings(m, resamples=50)
    doc = matchup.document(m, r)
    check_rows(doc["ratings"])
    by = {x["contender"]: x for x in doc["ratings"]}
    a, b = by["battleship"], by["battleship_copy"]
    assert a["rank"] == b["rank"] and a["tie_group"] == b["tie_group"] and a["rating"] == b["rating"]
    assert (a["diff_to_best_low"], a["diff_to_best_high"]) == (b["diff_to_best_low"], b["diff_to_best_high"])
    assert sorted(x["rank"] for x in doc["ratings"]) == competition_ranks([x["rating"] for x in doc["ratings"]]) \
        and [x["rank"] for x in doc["ratings"]].count(a["rank"]) == 2
    assert doc["ranking"]["ties"] == [[x["contender"] for x in doc["ratings"] if x["tie_group"] == a["tie_group"]]]
    others = [x for x in doc["ratings"] if x["tie_group"] != a["tie_group"]]
    assert len({x["tie_group"] for x in others}) == len(others)        # different contenders do not tie
    assert "biased upward" in doc["ranking"]["winners_curse"]
    assert any(n.startswith("ranking by Bradley–Terry rating:") and "biased upward" in n and "another seed" in n
               for n in doc["notes"])


# ----------------------------------------------------------------------------- coverage
def test_simultaneous_intervals_cover_the_true_rating_differences_at_the_stated_rate(tmp_path):
    """30 seeds of a field matchup of skills 12, 14, 15, 16 (1280 trials, 100 resamples): every
    contender's simultaneous interval to the data's best covers its true difference in >= 95% of
    seeds less 3 binomial SE, and the multiplier lies between the single-interval 1.96 and (up to
    the noise of 100 resamples) Bonferroni's normal quantile over the 6 pairs."""
    skills = {"s12": 12, "s14": 14, "s15": 15, "s16": 16}
    path = skills_file(tmp_path, skills)
    base = scenario_mod.load(path)
    exact = np.array([api.exact(scenario_mod.load(path, sweep={"skill": [s]}))[0].summaries["p_destroyed"].mean
                      for s in skills.values()])
    # the premise: a higher skill destroys whenever a lower one does, on the same roll (per trial)
    from analyzer.run.runner import prepare_point
    per_trial = []
    for s in skills.values():
        cell = scenario_mod.load(path, sweep={"skill": [s]})
        prep = prepare_point(cell, cell.points[0])
        i = [x.name for x in prep.metrics].index("p_destroyed")
        per_trial.append(prep.run_kernel(base.spec.seed, 7, 0, 4000, 1, 4000)[1][:, i, 0])
    assert all(np.all(per_trial[k] <= per_trial[k + 1]) for k in range(len(skills) - 1))
    truth_cell = 0.5 + (exact[:, None] - exact[None, :]) / 2
    games = np.full((4, 4), 1e6)
    truth, _ = balance.bradley_terry(truth_cell * games, games)
    seeds, covered = 30, 0
    bonferroni = 2.8653    # normal quantile at 1 - 0.05 / 12 (6 pairs, two-sided)
    for seed in range(seeds):
        m = matchup.run(path, seed=seed)
        r = matchup.ratings(m, resamples=100)
        rk = r.ranking
        b = m.names.index(rk.best)
        c = float(rk.method.split("multiplier ")[1].split(";")[0])
        assert 1.96 < c < bonferroni + 0.3, rk.method
        covered += all(o.diff_low <= truth[m.names.index(o.name)] - truth[b] <= o.diff_high
                       for o in rk.options if o.name != rk.best)
    least = math.floor(seeds * LEVEL - 3 * math.sqrt(seeds * LEVEL * (1 - LEVEL)))
    assert covered >= least, (covered, seeds, least)


def test_rank_bootstrap_all_equal_options_covered_whichever_the_data_make_best():
    """Synthetic Bradley–Terry data, five equal contenders (every true difference 0, so the
    best is pure selection): over 60 seeds every difference to the selected best is covered in
    >= 95% less 3 binomial SE, where a plain 95% interval on the selected differences is not."""
    theta = np.zeros(5)
    p = 1 / (1 + np.exp(theta[None, :] - theta[:, None]))
    seeds, covered, naive = 60, 0, 0
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        wins = rng.binomial(20, np.broadcast_to(p[:, :, None], (5, 5, 64))).astype(float)
        wins = np.triu(np.ones((5, 5)), 1)[:, :, None] * wins
        wins = wins + np.transpose(20 - wins, (1, 0, 2)) * np.tril(np.ones((5, 5)), -1)[:, :, None]
        r = matchup.fit_ratings(wins, np.full(64, 20), list("abcde"), 0, 100, seed=seed)
        assert r.ranking.best == "abcde"[int(np.argmax(r.theta))]
        c = float(r.ranking.method.split("multiplier ")[1].split(";")[0])
        others = [o for o in r.ranking.options if o.name != r.ranking.best]
        covered += all(o.diff_low <= 0 <= o.diff_high for o in others)
        naive += all(o.diff + (o.diff_high - o.diff) / c * 1.96 >= 0 for o in others)
    assert covered >= math.floor(seeds * LEVEL - 3 * math.sqrt(seeds * LEVEL * (1 - LEVEL))), covered
    assert naive < covered


def test_rank_bootstrap_ties_and_the_b_plus_one_rule():
    """The constructor on planted replicates: options given as identical share a tie group and
    rank and get [0, 0]; the multiplier is the ceil(level (B + 1))-th smallest max-t statistic
    (with ``batches``: taken to Student t, SEs scaled to the unbiased batch-means SE)."""
    from analyzer.core.ranking import rank_bootstrap, t_quantile
    rng = np.random.default_rng(4)
    est = np.array([1.0, 0.2, 1.0, -3.0])
    reps = est + rng.normal(0, 0.1, size=(39, 4))
    reps[:, 2] = reps[:, 0]
    same = np.eye(4, dtype=bool)
    same[0, 2] = same[2, 0] = True
    r = rank_bootstrap(["a", "b", "c", "d"], est, reps, metric="x", identical=same)
    assert [o.name for o in r.options] == ["a", "c", "b", "d"] and [o.rank for o in r.options] == [1, 1, 3, 4]
    assert r.option("c").tie_group == r.option("a").tie_group == 0 and r.best_set == ["a", "c"]
    assert (r.option("c").diff_low, r.option("c").diff_high) == (0.0, 0.0)
    free = [(0, 1), (0, 3), (1, 2), (1, 3), (2, 3)]
    d = np.array([est[i] - est[j] for i, j in free])
    rd = np.stack([reps[:, i] - reps[:, j] for i, j in free], axis=1)
    se = rd.std(axis=0, ddof=1)
    t = np.sort(np.max(np.abs(rd - d) / se, axis=1))
    c = t[math.ceil(0.95 * 40) - 1]
    b = r.option("b")
    assert b.diff_high - b.diff == pytest.approx(c * se[0])
    assert not r.option("d").in_best_set
    # resampled batches: the multiplier taken to t(batches - 1), the SEs made unbiased (n / (n - 1))
    batched = rank_bootstrap(["a", "b", "c", "d"], est, reps, metric="x", identical=same, batches=10)
    c_t = t_quantile(0.5 * (1 + math.erf(c / math.sqrt(2))), 9)
    assert batched.option("b").diff_high - b.diff == pytest.approx(c_t * se[0] * math.sqrt(10 / 9))
    assert "t(9) for 10 batches" in batched.method


# ----------------------------------------------------------------------------- outputs
def test_console_files_and_figure_show_the_ranking(tmp_path):
    """stdout: rank, the difference to the best with its simultaneous CI, best-set membership,
    the best set, the tie, the winner's-curse caveat; ratings.parquet and matchup.json carry the
    ranking columns; the ranking figure draws each difference with its simultaneous CI, best-set
    members in green."""
    path = skills_file(tmp_path, {"weak": 8, "strong": 18, "strong_copy": 18, "mid": 15})
    res = subprocess.run([sys.executable, "-m", "analyzer", "matchup", str(path), "--out", str(tmp_path / "out"),
                          "--no-progress", "--bootstrap", "40"], capture_output=True, text=True, timeout=300,
                         env={"COLUMNS": "160", "PATH": "/usr/bin:/bin"}, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    folder = next((tmp_path / "out").rglob("matchup.json")).parent
    doc = json.loads((folder / "matchup.json").read_text())
    by = {x["contender"]: x for x in doc["ratings"]}
    text = res.stdout
    assert "vs the best [95% sim. CI]" in text
    weak = next(ln for ln in text.splitlines() if "│ weak" in ln)
    assert f"{by['weak']['diff_to_best']:+.3f} [{by['weak']['diff_to_best_low']:+.3f}, " \
           f"{by['weak']['diff_to_best_high']:+.3f}] worse" in weak and weak.split("│")[1].strip() == "4"
    for name in ("strong", "strong_copy"):
        row = next(ln for ln in text.splitlines() if f"│ {name} " in ln)
        assert row.split("│")[1].strip() == "1 (tie 0)"
    assert "best set (not distinguishable from strong at 95% simultaneous): strong, strong_copy" in text
    assert "tied (identical results in every cell): strong = strong_copy" in text
    assert "biased upward" in text and "max-t bootstrap over all 6 pairs" in text
    import pandas as pd
    table = pd.read_parquet(folder / "ratings.parquet")
    assert list(table["contender"]) == [x["contender"] for x in doc["ratings"]]
    assert list(table["rank"]) == [1, 1, 3, 4] and table["in_best_set"].tolist() == [True, True, False, False]
    assert table["tie_group"].tolist()[:2] == [0, 0]
    assert np.allclose(table["diff_to_best_high"], [x["diff_to_best_high"] for x in doc["ratings"]])
    fig = matchup.ratings_figure(doc)
    ax = fig.axes[0]
    assert "simultaneous" in ax.get_xlabel()
    from matplotlib.collections import LineCollection
    bars = [c for c in ax.collections if isinstance(c, LineCollection)]
    spans = sorted((float(seg[0][0]), float(seg[1][0])) for c in bars for seg in c.get_segments())
    want = sorted((x["diff_to_best_low"], x["diff_to_best_high"]) for x in doc["ratings"])
    assert np.allclose(spans, want)
    dots = [line for line in ax.lines if line.get_marker() == "o"]
    assert [d.get_color() for d in dots] == ["tab:green" if x["in_best_set"] else "tab:gray"
                                            for x in doc["ratings"]]
