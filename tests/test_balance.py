"""Balance tools (issue 19): ``analyzer matchup`` (matrix on common random numbers, symmetry
checks, Bradley–Terry ratings, fair cost) and ``analyzer solve`` (threshold search). Oracles:
exact modes (attack, gun_shot, shot), an independent exact sweep, synthetic Bradley–Terry data
with known strengths, and identities that common random numbers make exact."""
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from analyzer import api
from analyzer.analyses.balance import common as balance
from analyzer.analyses.balance import matchup
from analyzer.core import questions
from analyzer.core import scenario as scenario_mod
from analyzer.analyses.balance import solve
from analyzer.cli.app import app
from analyzer.core.errors import ScenarioError

ROOT = Path(__file__).resolve().parent.parent
SCEN = ROOT / "scenarios"
runner = CliRunner()

BATTLESHIP = {"squadrons": [{"models": [{"profile": "battleship", "commodore": True}]}]}
CRUISERS = {"squadrons": [{"models": [{"profile": "cruiser", "count": 2}]}]}
FRIGATES = {"squadrons": [{"models": [{"profile": "frigate", "count": 4}]}]}
DUEL = {"game": "dystopian_wars", "question": "duel", "seed": 5, "trials": 640,
        "params": {"side_a": BATTLESHIP, "side_b": CRUISERS, "range": {"mode": "closing", "start": 24},
                   "target_policy": {"a": "weakest", "b": "weakest"}, "max_turns": 4}}
GUN_SHOT = {"game": "b17", "question": "gun_shot", "seed": 3, "trials": 6400,
            "params": {"gun": "tail", "clock": "6:00", "altitude": "level", "fighter": "Me109", "prior_hits": 0,
                       "intercom_ok": True, "skill": 15}}


def write(folder: Path, doc: dict, name: str = "s.yaml") -> Path:
    path = folder / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def duel_matchup(tmp_path_factory):
    doc = dict(DUEL, contenders=[{"name": "battleship", "side": BATTLESHIP},
                                 {"name": "battleship_copy", "side": BATTLESHIP},
                                 {"name": "cruisers", "side": CRUISERS}, {"name": "frigates", "side": FRIGATES}])
    m = matchup.run(write(tmp_path_factory.mktemp("duel"), doc))
    return m, matchup.ratings(m, resamples=50)


# ----------------------------------------------------------------------------- matchup
def test_identical_contenders_score_exactly_half_on_common_random_numbers(duel_matchup):
    m, r = duel_matchup
    i, j = m.names.index("battleship"), m.names.index("battleship_copy")
    assert np.array_equal(m.sums[i, j], m.sums[j, i])           # the same simulation in both cells
    p, lo, hi = matchup.score_matrix(m)
    assert p[i, j] == 0.5 and p[j, i] == 0.5 and lo[i, j] == hi[i, j] == 0.5
    assert r.theta[i] == pytest.approx(r.theta[j], abs=1e-9)
    assert np.allclose(p + p.T, 1.0)                             # seat-balanced scores: P[i, j] + P[j, i] = 1
    assert any("exactly 1/2" in n for n in m.notes)


def test_seated_matrix_is_antisymmetric_where_the_game_is_symmetric(duel_matchup):
    """Default rules: initiative ties re-rolled, same target policy on both sides, so seat A
    and seat B are alike: M[i, j] + M[j, i] - 1 and M[i, i] - 1/2 are 0 within 5 SE."""
    m, _ = duel_matchup
    for row in matchup.cells_table(m):
        se = (row["seat_advantage_ci_high"] - row["seat_advantage_ci_low"]) / 2 / 1.96
        assert abs(row["seat_advantage"]) <= 5 * se + 1e-12, row
    for i in range(m.n):
        mean, se, _, _ = balance.batch_ci(m.sums[i, i], m.sizes)
        assert abs(mean - 0.5) <= 5 * se, (m.names[i], mean, se)
    assert m.sizes.shape[0] >= 64 and m.sizes.sum() == 640


def test_symmetry_check_flags_a_seat_advantage():
    """The self-match check can fail: seat A winning 60% of 6400 trials is outside the CI."""
    sizes = np.full(64, 100)
    sums = np.zeros((1, 1, 64))
    sums[0, 0] = 60
    (check,) = matchup.symmetry_checks(SimpleNamespace(names=["x"], sums=sums, sizes=sizes))
    assert not check["ok"] and check["mean"] == pytest.approx(0.6)


def test_field_mode_compares_contenders_trial_by_trial_on_common_random_numbers(tmp_path):
    """Gun shots on the same 3d10 roll: a better skill destroys whenever a worse one does, so
    P(skill a beats skill b) + P(tie) / 2 = 1/2 + (p_a - p_b) / 2 with p from the exact mode."""
    doc = dict(GUN_SHOT, contenders=[{"name": f"skill{s}", "params": {"skill": s}} for s in (12, 15, 18)]
               + [{"name": "skill15_copy", "params": {"skill": 15}}], matchup={"metric": "p_destroyed"})
    path = write(tmp_path, doc)
    m = matchup.run(path)
    exact = {}
    for s in (12, 15, 18):
        cell = scenario_mod.load(path, sweep={"skill": [s]})
        exact[s] = api.exact(cell)[0].summaries["p_destroyed"].mean
    rows = {(x["a"], x["b"]): x for x in matchup.cells_table(m)}
    for a, b in ((15, 12), (18, 15), (18, 12)):
        x = rows[(f"skill{a}", f"skill{b}")]
        assert abs(x["mean"] - (0.5 + (exact[a] - exact[b]) / 2)) <= 5 * x["se"], (a, b, x, exact)
        assert rows[(f"skill{b}", f"skill{a}")]["mean"] == pytest.approx(1 - x["mean"])
    assert rows[("skill15", "skill15_copy")]["mean"] == 0.5
    means = {d["contender"]: d for d in matchup.document(m, matchup.ratings(m, resamples=20))["field_means"]}
    for s in (12, 15, 18):
        d = means[f"skill{s}"]
        assert abs(d["mean"] - exact[s]) <= 5 * d["se"]


def _synthetic(theta: np.ndarray, batches: int, per_batch: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Independent games per ordered pair and batch with P(i beats j) = 1 / (1 + exp(theta_j - theta_i))."""
    rng = np.random.default_rng(seed)
    n = theta.shape[0]
    p = 1 / (1 + np.exp(theta[None, :] - theta[:, None]))
    wins = rng.binomial(per_batch, np.broadcast_to(p[:, :, None], (n, n, batches))).astype(float)
    return wins, np.full(batches, per_batch)


def test_bradley_terry_fit_of_an_exact_matrix_returns_the_strengths():
    theta = np.array([-1.0, -0.3, 0.0, 0.4, 1.2])
    p = 1 / (1 + np.exp(theta[None, :] - theta[:, None]))
    games = np.full((5, 5), 1000.0)
    fit, cov = balance.bradley_terry(p * games, games)
    assert np.allclose(fit, theta - theta.mean(), atol=1e-9)
    assert abs(fit.sum()) < 1e-9 and np.all(np.diag(cov) > 0)


def test_bradley_terry_recovers_known_strengths_within_its_ci():
    """Synthetic matrix (fixed seed): each rating relative to the reference is within 5 bootstrap
    SEs of the truth, the bootstrap SE agrees with the Fisher SE (independent games here), and a
    wrong truth (one strength moved by 0.3) fails the same check."""
    theta = np.array([0.0, -1.0, -0.3, 0.4, 1.2])
    wins, games = _synthetic(theta, 64, 200, seed=11)
    r = matchup.fit_ratings(wins, games, ["r", "a", "b", "c", "d"], 0, 300, seed=2)
    truth = theta - theta[0]
    se = r.se_bootstrap[1:]
    assert np.all(np.abs(r.theta[1:] - truth[1:]) <= 5 * se), (r.theta, truth, se)
    assert np.all((r.ci_low[1:] < r.theta[1:]) & (r.theta[1:] < r.ci_high[1:]))
    assert np.all((0.7 < se / r.se_fisher[1:]) & (se / r.se_fisher[1:] < 1.4)), (se, r.se_fisher)
    wrong = truth.copy()
    wrong[3] += 0.3
    assert np.any(np.abs(r.theta[1:] - wrong[1:]) > 5 * se)
    assert not r.prior


def test_bradley_terry_without_an_mle_adds_a_prior_and_says_so():
    wins = np.array([[0, 10, 10], [0, 0, 6], [0, 4, 0]], float)[:, :, None]     # 0 never loses
    r = matchup.fit_ratings(wins, np.array([10]), ["a", "b", "c"], 1, 0, seed=1)
    assert r.prior and balance.ford_connected(wins[:, :, 0]) is False
    assert np.all(np.isfinite(r.theta)) and r.theta[0] > r.theta[2] > r.theta[1] - 1


def test_fair_cost_of_copies_of_the_reference_is_exact(tmp_path):
    """On common random numbers a copy of the reference scores exactly 1/2 (parity at 1 copy:
    its fair cost is the reference's cost whatever its own cost), and a force that is exactly
    two copies of the reference is at parity with two reference copies (fair cost 2 x)."""
    doubled = questions.get("dystopian_wars", "duel").scale_force(None, BATTLESHIP, 2)
    assert doubled["squadrons"][0]["models"] == [{"profile": "battleship", "commodore": True},
                                                 {"profile": "battleship", "commodore": False, "count": 1}]
    doc = dict(DUEL, contenders=[{"name": "ref", "side": BATTLESHIP},
                                 {"name": "copy_priced_300", "side": BATTLESHIP, "cost": 300},
                                 {"name": "two_battleships", "side": doubled}], matchup={"max_scale": 3})
    m = matchup.run(write(tmp_path, doc), fair_cost=True)
    fair = {f.name: f for f in m.fair}
    assert m.costs[0].value == 150 and m.costs[0].placeholders          # profile points: a placeholder
    assert fair["copy_priced_300"].parity == 1.0 and fair["copy_priced_300"].fair_cost == 150
    assert fair["copy_priced_300"].change == -150
    two = fair["two_battleships"]
    assert two.method == "scale reference" and two.parity == 2.0 and two.fair_cost == 300
    assert two.curve[1]["score"] == 0.5                                   # X vs 2 x R: the same forces


def test_breaking_news_scaling_keeps_one_leader():
    sc = scenario_mod.load(SCEN / "breaking_news" / "matchup_scenario_lists.yaml")
    side = sc.question.scale_force(sc, {"list": "patrol_marines"}, 3)
    figs = side["figures"]
    assert sum(f["n"] for f in figs) == 3 * 9 and sum(f["n"] for f in figs if f["leader"]) == 1
    assert side["quality"] == "veteran" and "list" not in side


# ----------------------------------------------------------------------------- solve
def _exact_sweep(path: Path, param: str, values: list, metric: str) -> dict:
    sweep = scenario_mod.load(path, sweep={param: values})
    return {r.point.swept[param]: r.summaries[metric].mean for r in api.exact(sweep)}


def test_solve_aa_dice_against_10_rockets_matches_an_exact_sweep():
    """Issue 19: 9 AA dice, P(damage) 0.479 at 9 and above 0.5 at 8 (exact sweep 0..20)."""
    path = SCEN / "dystopian_wars" / "solve_aa_dice_vs_rockets.yaml"
    sweep = _exact_sweep(path, "defense_dice", list(range(21)), "p_damage")
    first = next(v for v in range(21) if sweep[v] < 0.5)
    sol = solve.solve(path)
    assert sol.mode == "exact" and sol.value == first == 9
    assert round(sweep[9], 3) == 0.479 and sweep[8] > 0.5
    for v, e in sol.evaluations.items():
        assert e.mean == sweep[v]
    doc = solve.document(sol)
    assert doc["neighbours"]["before"]["value"] == 8 and doc["neighbours"]["at"]["mean"] == sweep[9]
    mc = solve.solve(path, exact=False, trials=20_000)              # Monte Carlo on common random numbers
    assert mc.mode == "monte_carlo" and mc.value == 9
    for v, e in mc.evaluations.items():
        assert abs(e.mean - sweep[v]) <= 5 * e.se, (v, e, sweep[v])


def test_solve_b17_tail_gunner_skill_matches_an_exact_sweep():
    path = SCEN / "b17" / "solve_tail_gunner_skill.yaml"
    sweep = _exact_sweep(path, "skill", list(range(3, 31)), "p_destroyed")
    first = next(v for v in range(3, 31) if sweep[v] >= 0.5)
    sol = solve.solve(path)
    assert sol.value == first and all(e.mean == sweep[v] for v, e in sol.evaluations.items())
    scanned = solve.solve(path, scan=True)
    assert scanned.value == first and len(scanned.evaluations) == 28


def test_solve_continuous_parameter_finds_the_range_band_edge(tmp_path):
    """Breaking News burst fire drops a column past 25 cm ('up to' range_bands_cm): bisection on a
    float parameter brackets the edge to the stated precision."""
    bands = yaml.safe_load((SCEN / "breaking_news" / "data" / "weapons.yaml").read_text())["range_bands_cm"]
    doc = {"game": "breaking_news", "question": "shot", "params": {
        "weapon": "assault_rifle", "mode": "burst", "range_cm": 10, "shooter": {"quality": "veteran"},
        "target": {"quality": "veteran", "cover": True}}}
    path = write(tmp_path, doc)
    near = _exact_sweep(path, "range_cm", [bands[0], bands[0] + 0.01], "hits")
    target = (near[bands[0]] + near[bands[0] + 0.01]) / 2
    sol = solve.solve(path, metric="hits", target=target, param="range_cm", range_=(10, 120), tol=0.01)
    assert sol.kind == "continuous" and bands[0] < sol.value <= bands[0] + 0.01
    lo, hi = solve.value_interval(sol)
    assert lo <= bands[0] < hi and hi - lo <= 0.01 + 1e-9


def test_solve_reports_no_crossing_and_refuses_non_numbers(tmp_path):
    path = SCEN / "dystopian_wars" / "solve_aa_dice_vs_rockets.yaml"
    sol = solve.solve(path, target=0.01, range_=(0, 5))
    assert sol.value is None and "no crossing" in sol.notes[0]
    with pytest.raises(ScenarioError, match=r"--param: 'weapon' is not a number parameter"):
        solve.solve(path, param="weapon")
    with pytest.raises(ScenarioError, match=r"--metric: got 'p_damge' \(did you mean 'p_damage'\?\)"):
        solve.solve(path, metric="p_damge")


# ----------------------------------------------------------------------------- files, CLI
def test_scenario_errors_name_the_field_and_what_is_allowed(tmp_path):
    cases = [
        (dict(DUEL, contenders=[{"name": "a", "side": BATTLESHIP}, {"name": "b", "sidee": BATTLESHIP}]),
         r"contenders\[1\]\.sidee: unknown key \(did you mean 'side'\?\); allowed: name, side, params, cost"),
        (dict(DUEL, contenders=[{"name": "a", "side": BATTLESHIP}, {"name": "a", "side": CRUISERS}]),
         r"contenders: contender names must be unique; repeated: a"),
        (dict(DUEL, contenders=[{"name": "a", "side": BATTLESHIP}, {"name": "b", "params": {"max_turns": 3}}]),
         r"contenders\[1\]: seated mode .* give side"),
        (dict(DUEL, contenders=[{"name": "a", "side": BATTLESHIP}, {"name": "b", "side": {"squadrons": []}}]),
         r"contenders\[1\] \(as params\)\.side_a\.squadrons"),
        (dict(DUEL, contenders=[{"name": "a", "side": BATTLESHIP}, {"name": "b", "side": CRUISERS, "cost": -3}]),
         r"contenders\[1\]\.cost: got -3; allowed: a number > 0"),
        (dict(DUEL, matchup={"seats": ["side_a", "sidez"]}, contenders=[{"name": "a", "side": BATTLESHIP},
                                                                         {"name": "b", "side": CRUISERS}]),
         r"matchup\.seats\[1\]: 'sidez' is not a parameter"),
        (dict(GUN_SHOT, solve={"param": "skil"}), r"solve\.param: 'skil' is not a parameter"),
        (dict(GUN_SHOT, solve={"target": 0.5, "range": [5, 2]}), r"solve\.range: got \[5\.0, 2\.0\]"),
    ]
    for doc, pattern in cases:
        with pytest.raises(ScenarioError, match=pattern):
            scenario_mod.load(write(tmp_path, doc))
    bad_win = write(tmp_path, dict(DUEL, matchup={"win": "p_win"}, contenders=[{"name": "a", "side": BATTLESHIP},
                                                                               {"name": "b", "side": CRUISERS}]))
    with pytest.raises(ScenarioError, match=r"matchup\.win: got 'p_win' .*metrics of this question: p_win_a"):
        matchup.run(bad_win)
    swept = write(tmp_path, dict(DUEL, sweep={"max_turns": [3, 4]}, contenders=[{"name": "a", "side": BATTLESHIP},
                                                                                 {"name": "b", "side": CRUISERS}]))
    with pytest.raises(ScenarioError, match="sweep: a matchup runs one point per pair"):
        matchup.run(swept)


def test_run_runs_a_matchup_file_as_its_base_scenario(tmp_path):
    """Decided: 'analyzer run' ignores contenders/matchup/solve and runs the params as written."""
    plain = write(tmp_path, DUEL, "plain.yaml")
    with_keys = write(tmp_path, dict(DUEL, contenders=[{"name": "a", "side": BATTLESHIP},
                                                      {"name": "b", "side": CRUISERS}],
                                     solve={"metric": "p_win_a", "target": 0.5, "param": "max_turns"}), "keys.yaml")
    a, b = api.run(scenario_mod.load(plain))[0], api.run(scenario_mod.load(with_keys))[0]
    assert {k: s.as_dict() for k, s in a.summaries.items()} == {k: s.as_dict() for k, s in b.summaries.items()}


def test_shipped_matchup_and_solve_files_load():
    for path in sorted(SCEN.rglob("matchup_*.yaml")):
        sc, spec, cs, mode = matchup.load(path)
        assert len(cs) >= 4, path
    for path in sorted(SCEN.rglob("solve_*.yaml")):
        sc = scenario_mod.load(path)
        assert solve._options(sc, None, None, None, None, None).range is not None, path


def test_matchup_cli_writes_the_run_folder_and_json(tmp_path):
    doc = dict(DUEL, trials=128, contenders=[{"name": "battleship", "side": BATTLESHIP},
                                             {"name": "cruisers", "side": CRUISERS},
                                             {"name": "frigates", "side": FRIGATES}])
    out = tmp_path / "out"
    res = runner.invoke(app, ["matchup", str(write(tmp_path, doc)), "--json", "--out", str(out), "--bootstrap", "20"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    folder = Path(got["run_dir"])
    assert {p.name for p in folder.iterdir()} >= {"matchups.parquet", "ratings.parquet", "matchup.json",
                                                  "matchup_matrix.png", "ratings.png", "manifest.json", "report.html"}
    import pandas as pd
    table = pd.read_parquet(folder / "matchups.parquet")
    assert len(table) == 9 and {"a", "b", "mean", "ci_low", "ci_high", "trials"} <= set(table.columns)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["trials"] == 9 * 128 and manifest["seed"] == 5
    assert got["placeholders"] and "PLACEHOLDER" in (folder / "report.html").read_text()
    assert [x["rank"] for x in got["ratings"]] == [1, 2, 3]
    fig = matchup.matrix_figure(got)
    footer = next(t for t in fig.texts + [t for ax in fig.axes for t in ax.texts] if "seed" in t.get_text())
    assert "PLACEHOLDER" in footer.get_text() and "matchup.json" in footer.get_text()
    res = runner.invoke(app, ["matchup", str(write(tmp_path, doc)), "--reference", "frigatez", "--out", str(out)])
    assert res.exit_code == 2 and "--reference: got 'frigatez'" in res.output


def test_solve_cli_json_has_the_promised_keys(tmp_path):
    out = tmp_path / "out"
    res = runner.invoke(app, ["solve", str(SCEN / "b17" / "solve_tail_gunner_skill.yaml"), "--json",
                              "--out", str(out)])
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert {"param", "value", "metric", "target", "evaluations"} <= set(got)
    assert got["param"] == "skill" and got["metric"] == "p_destroyed" and got["target"] == 0.5
    assert all({"value", "mean", "ci_low", "ci_high"} <= set(e) for e in got["evaluations"])
    folder = Path(got["run_dir"])
    assert (folder / "solve_p_destroyed_vs_skill.png").is_file() and (folder / "report.html").is_file()
    assert json.loads((folder / "manifest.json").read_text())["kind"] == "solve"
    res = runner.invoke(app, ["solve", str(SCEN / "b17" / "solve_tail_gunner_skill.yaml"), "--param", "fighter",
                              "--out", str(out)])
    assert res.exit_code == 2 and "not a number parameter" in res.output


def test_help_explains_every_option():
    """Every argument and option of matchup and solve has a help text, shown by --help."""
    import inspect
    for command in ("matchup", "solve"):
        res = runner.invoke(app, [command, "--help"], env={"COLUMNS": "250"})
        assert res.exit_code == 0
        cmd = next(c for c in app.registered_commands if c.callback.__name__ == command)
        params = inspect.signature(cmd.callback).parameters
        assert len(params) >= 10
        for name, param in params.items():
            info = param.default
            assert info.help, (command, name)
            decls = [d for d in (info.param_decls or ()) if d.startswith("--")]
            flag = decls[0] if decls else "--" + name.replace("_", "-")
            if type(info).__name__ == "OptionInfo":
                assert flag in res.output, (command, flag)
            assert info.help.split()[0] in res.output, (command, name)


def test_importing_the_cli_stays_light():
    code = "import sys, analyzer.cli.app; print(sorted(m for m in ('numpy', 'numba', 'pandas', 'matplotlib') " \
           "if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr
