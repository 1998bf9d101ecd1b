"""``analyzer search`` (issue 30): racing many options on common random numbers finds a planted
best at the stated confidence, ties identical options, never drops a best option more often
than the guarantee allows, spends fewer trials than evaluating every option, and on the U-Boat
``loadout`` question plays exactly the trials ``analyzer run`` plays (docs/balance.md "Search")."""
from __future__ import annotations

import json
import math
import signal
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from analyzer.analyses import search as sr
from analyzer.core import interrupt
from analyzer.core.ranking import t_quantile
from analyzer.games.uboat_leader.search_space import LoadoutSpace
from tests.planted_spaces import PlantedSpace, close_loadout_file

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "scenarios" / "uboat_leader" / "loadout_example_fleets.yaml"


def test_finds_the_planted_best_over_seeds_and_spends_less_than_exhaustive():
    # 40 options: one best, the others 4..40 units below (noise sd 10 per trial)
    mus = [0.0] + [-4.0 - i for i in range(39)]
    found, ratios = 0, []
    seeds = range(20)
    for seed in seeds:
        space = PlantedSpace(mus, seed=seed)
        s = sr.run_search(space, first=64, max_trials=64 * 2 ** 9)
        found += s.chosen == "opt0"
        assert s.trials_spent == space.played
        assert s.trials_spent < s.exhaustive_trials
        ratios.append(s.trials_spent / s.exhaustive_trials)
        if s.stop == "one_left":
            assert s.tied == [s.chosen] and s.gap_bound == 0
    assert found >= math.ceil(0.95 * len(seeds)), found
    assert max(ratios) < 0.5, ratios


def test_lower_is_better_finds_the_planted_lowest_and_its_margin_stop():
    mus = [0.0, 1.0] + [8.0 + i for i in range(15)]
    for seed in range(5):
        space = PlantedSpace(mus, seed=seed)
        space.higher_is_better = False
        s = sr.run_search(space, first=64, max_trials=64 * 2 ** 12, margin=2.0)
        assert s.chosen in ("opt0", "opt1") and "opt0" in s.tied and s.stop != "max_trials"
        assert mus[int(s.chosen[3:])] - mus[0] <= s.gap_bound <= 2.0     # the guarantee, lower is better


def test_stops_within_the_margin_and_the_chosen_option_is_within_it():
    # the best and a runner-up 1 unit below it (margin 2): either is an acceptable answer,
    # and the search must stop on the margin, not run to max_trials
    mus = [0.0, -1.0] + [-8.0 - i for i in range(20)]
    ok = 0
    for seed in range(20):
        s = sr.run_search(PlantedSpace(mus, seed=seed), first=64, max_trials=64 * 2 ** 12, margin=2.0)
        assert s.stop in ("within_margin", "one_left"), s.stop
        assert s.final_trials < 64 * 2 ** 12
        ok += -mus[int(s.chosen[3:])] <= s.gap_bound <= 2.0 or s.chosen == "opt0"
        assert "opt0" in s.tied or s.chosen == "opt0"
    assert ok >= 19


def test_identical_options_end_up_tied():
    # opt1 is opt0 in every trial: they can never be told apart, so they are a tie at margin 0
    mus = [0.0, 0.0] + [-10.0 - i for i in range(10)]
    s = sr.run_search(PlantedSpace(mus, seed=3, copy_of={1: 0}), first=64, max_trials=64 * 2 ** 8)
    assert s.stop == "within_margin" and s.gap_bound == 0.0
    assert set(s.tied) == {"opt0", "opt1"}
    doc = sr.document(s)
    assert set(doc["identical_to_chosen"]) == {"opt0", "opt1"}
    assert all(o["diff_low"] == o["diff_high"] == 0 for o in doc["survivors"])


def test_no_best_option_is_dropped_more_often_than_the_level_allows():
    # every option is the best (equal means): dropping ANY of them is an error the guarantee bounds
    # by 1 - level over all rounds; intervals without the Bonferroni correction drop one often
    mus = [0.0] * 12
    runs = 40
    dropped = 0
    for seed in range(runs):
        s = sr.run_search(PlantedSpace(mus, seed=100 + seed, common_sd=0.0), first=64, max_trials=64 * 2 ** 5)
        dropped += any(r.dropped for r in s.rounds)
    assert dropped <= 0.05 * runs, dropped


def test_multiplier_is_bonferroni_over_every_pair_in_every_planned_round():
    assert sr.schedule(4096, 40_000) == [4096, 8192, 16384, 32768, 40_000]
    k, rounds, n = 59, 5, 8192
    assert sr.multiplier(k, rounds, n, 0.95) == t_quantile(1 - 0.05 / (2 * rounds * k * (k - 1) // 2), n - 1)
    s = sr.run_search(PlantedSpace([0.0, -3.0, -30.0], seed=1), first=64, max_trials=256)
    assert [r.multiplier for r in s.rounds] == [sr.multiplier(3, 3, r.trials, 0.95) for r in s.rounds]


def _loadout_file(tmp_path: Path) -> Path:
    doc = yaml.safe_load(EXAMPLE.read_text())
    example = doc["params"]["fleets"][0]["fleet"]
    doc["params"]["fleets"] = [
        {"name": "example", "fleet": example},
        {"name": "example_copy", "fleet": example},                       # the same fleet: a tie
        {"name": "lone_u43", "fleet": [{"id": "U-43", "level": "trained"}]},  # one boat: clearly worse
        {"name": "example_no_so", "fleet": example, "so": "none"}]
    path = tmp_path / "loadout_tie.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_loadout_search_plays_the_trials_run_plays_and_ties_identical_fleets(tmp_path):
    from analyzer.core import scenario as scenario_mod
    from analyzer.run.runner import prepare_point, simulate_point, summarize
    path = _loadout_file(tmp_path)
    sc, space = sr.load(path)
    assert space.names == ["example", "example_copy", "lone_u43", "example_no_so"]
    s = sr.run_search(space, max_trials=16384)
    assert "lone_u43" not in s.tied
    assert {"example", "example_copy"} <= set(s.tied) or s.chosen not in ("example", "example_copy")
    if s.chosen in ("example", "example_copy"):
        assert {"example", "example_copy"} <= set(sr.document(s)["identical_to_chosen"])
    # every survivor's mean is the one 'analyzer run' of the file gives at the same trial count
    full = scenario_mod.load(path, trials=s.final_trials)
    point = full.points[0]
    prep = prepare_point(full, point)
    res = summarize(point, prep, simulate_point(full, point, prep)[0])
    for o in s.survivors:
        assert o["mean"] == res.summaries[f"vp.{o['option']}"].mean, o


def test_loadout_so_plans_cross_every_fleet_and_refuse_unknown_plans(tmp_path):
    from analyzer.core.errors import ScenarioError
    _, space = sr.load(EXAMPLE, so_plans=["intel", "none"])
    assert len(space.names) == 10 and space.names[:2] == ["example_intel--intel", "example_intel--none"]
    with pytest.raises(ScenarioError, match="--so"):
        sr.load(EXAMPLE, so_plans=["bribes"])


def _app():
    from analyzer.cli.app import build, load_commands
    return build(load_commands({"search"}))


def test_cli_writes_search_json_and_prints_the_answer(tmp_path):
    out = tmp_path / "out"
    res = CliRunner().invoke(_app(), ["search", str(EXAMPLE), "--max-trials", "8192", "--out", str(out), "--json",
                                      "--seed", "7"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    folder = Path(doc["run_dir"])
    assert folder.parent == out / "loadout_example_fleets" and folder.name.startswith("search-")
    written = json.loads((folder / "search.json").read_text())
    assert written["chosen"] == doc["chosen"] and written["seed"] == 7
    assert doc["trials_spent"] <= doc["exhaustive_trials"] and doc["guarantee"].startswith("with probability >= 95%")
    assert not (out / "loadout_example_fleets" / "latest").exists()      # latest names runs, not searches
    res = CliRunner().invoke(_app(), ["search", str(EXAMPLE), "--max-trials", "8192", "--out", str(out),
                                      "--no-progress", "--margin", "0.5", "--level", "0.9"])
    assert res.exit_code == 0, res.output
    assert "chosen:" in res.stdout and "with probability >= 90%" in res.stdout


def _close_file(tmp_path: Path) -> Path:
    return close_loadout_file(tmp_path, EXAMPLE)


def _stop_on_call(monkeypatch, call: int):
    """Ctrl-C during the ``call``-th evaluation (round ``call``, counted from 1)."""
    real = LoadoutSpace.evaluate
    calls = []

    def evaluate(self, *a, **k):
        calls.append(1)
        if len(calls) == call:
            interrupt._received.append(signal.SIGINT)
        return real(self, *a, **k)
    monkeypatch.setattr(LoadoutSpace, "evaluate", evaluate)


def _answer(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k not in ("wall_seconds", "run_dir")}


@pytest.mark.parametrize("stop_in_round", [1, 2])
def test_cli_interrupted_search_resumes_to_the_uninterrupted_answer(tmp_path, monkeypatch, stop_in_round):
    path = _close_file(tmp_path)
    args = ["--max-trials", "16384", "--no-progress"]
    whole = CliRunner().invoke(_app(), ["search", str(path), *args, "--out", str(tmp_path / "a"), "--json"])
    assert whole.exit_code == 0, whole.output
    expected = json.loads(whole.stdout)
    assert len(expected["rounds"]) >= 2           # the stop in round 2 happens inside the search
    assert expected["rounds"][0]["dropped"] == ["lone_u56"]
    with monkeypatch.context() as m:
        _stop_on_call(m, stop_in_round)
        res = CliRunner().invoke(_app(), ["search", str(path), *args, "--out", str(tmp_path / "b")])
    assert res.exit_code == 130, res.output
    (folder,) = (tmp_path / "b" / path.stem).glob("search-*")
    assert json.loads((folder / "manifest.json").read_text())["status"] == "incomplete"
    assert not (folder / "search.json").exists()
    assert (folder / sr.SEARCH_CHECKPOINT).exists() == (stop_in_round > 1)
    assert f"analyzer search --resume {folder}" in " ".join(res.output.split())
    refused = CliRunner().invoke(_app(), ["search", "--resume", str(folder), "--margin", "0"])
    assert refused.exit_code == 2 and "--margin" in refused.output
    done = CliRunner().invoke(_app(), ["search", "--resume", str(folder), "--json", "--no-progress"])
    assert done.exit_code == 0, done.output
    assert _answer(json.loads(done.stdout)) == _answer(expected)
    assert json.loads((folder / "manifest.json").read_text())["status"] == "complete"
    assert not (folder / sr.SEARCH_CHECKPOINT).exists()
    again = CliRunner().invoke(_app(), ["search", "--resume", str(folder)])
    assert again.exit_code == 2 and "complete" in again.output


def test_resume_refuses_a_changed_scenario_or_a_foreign_checkpoint(tmp_path, monkeypatch):
    path = _close_file(tmp_path)
    with monkeypatch.context() as m:
        _stop_on_call(m, 2)
        res = CliRunner().invoke(_app(), ["search", str(path), "--max-trials", "16384", "--no-progress",
                                          "--out", str(tmp_path / "o")])
    assert res.exit_code == 130, res.output
    (folder,) = (tmp_path / "o" / path.stem).glob("search-*")
    ck = json.loads((folder / sr.SEARCH_CHECKPOINT).read_text())
    original = (folder / sr.SEARCH_CHECKPOINT).read_text()
    ck["settings"]["margin"] = 1.0
    (folder / sr.SEARCH_CHECKPOINT).write_text(json.dumps(ck))
    res = CliRunner().invoke(_app(), ["search", "--resume", str(folder)])
    assert res.exit_code == 2 and "another search" in res.output
    ck["settings"]["margin"] = 0.0
    ck["state"]["sums"] = ck["state"]["sums"][:1]
    (folder / sr.SEARCH_CHECKPOINT).write_text(json.dumps(ck))
    res = CliRunner().invoke(_app(), ["search", "--resume", str(folder)])
    assert res.exit_code == 2 and "damaged checkpoint" in res.output
    (folder / sr.SEARCH_CHECKPOINT).write_text(original)
    path.write_text(path.read_text() + "\n# edited\n")
    res = CliRunner().invoke(_app(), ["search", "--resume", str(folder)])
    assert res.exit_code == 2 and "scenario file changed" in res.output


def test_cli_guards_the_trial_budget_before_any_kernel_runs(tmp_path, monkeypatch):
    def no_kernels(*a, **k):
        raise AssertionError("kernels ran before the trial guard")
    monkeypatch.setattr(LoadoutSpace, "evaluate", no_kernels)
    res = CliRunner().invoke(_app(), ["search", str(EXAMPLE), "--max-trials", str(3 * 10**9), "--out", str(tmp_path),
                                      "--no-progress"])
    assert res.exit_code == 2 and "--force" in res.output and "options" in res.output, res.output
    assert not any(tmp_path.rglob("search-*"))


def test_answer_on_stdout_progress_and_placeholders_on_stderr(tmp_path):
    import subprocess
    import sys
    res = subprocess.run([sys.executable, "-m", "analyzer", "search", str(EXAMPLE), "--max-trials", "8192",
                          "--out", str(tmp_path)], capture_output=True, text=True, timeout=300,
                         env={"COLUMNS": "100", "PATH": "/usr/bin:/bin"}, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert "│" in res.stdout and "chosen:" in res.stdout and "wrote" in res.stdout
    assert "│" not in res.stderr and "wrote" not in res.stderr and "placeholder" in res.stderr
