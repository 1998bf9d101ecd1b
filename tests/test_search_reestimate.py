"""``analyzer search`` re-estimates the chosen option on fresh streams (issue 30): the race's
mean of the chosen option is the largest of several noisy means (the winner's curse), the fresh
mean is not; the fresh streams are not the race's, yet reproducible for a seed and independent
of the thread count; on the U-Boat ``loadout`` example the fresh mean agrees with an independent
``analyzer run`` (docs/balance.md "Search")."""
from __future__ import annotations

import copy
import json
import math
import signal
from pathlib import Path

import numpy as np
import yaml
from typer.testing import CliRunner

from analyzer.analyses import search as sr
from analyzer.core import interrupt
from analyzer.games.uboat_leader.search_space import LoadoutSpace
from tests.planted_spaces import StreamedPlanted, close_loadout_file

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "scenarios" / "uboat_leader" / "loadout_example_fleets.yaml"


def test_race_winner_is_biased_upward_the_fresh_estimate_is_not():
    # 20 options of the SAME true mean 0: whichever is chosen, its true mean is 0; the race reports
    # the largest of 20 noisy means, the fresh streams an unbiased one
    mus = [0.0] * 20
    race, fresh, bias, covered = [], [], [], 0
    seeds = range(150)
    for seed in seeds:
        space = StreamedPlanted(mus, seed=seed)
        s = sr.run_search(space, first=64, max_trials=512)
        played = space.played
        re = sr.reestimate(space, s)
        c = re.chosen
        assert c["option"] == s.chosen and re.trials == s.final_trials == 512
        assert c["race_mean"] == next(o["mean"] for o in s.survivors if o["option"] == s.chosen)
        assert [o["option"] for o in re.options] == [s.chosen] + [o["option"] for o in s.survivors
                                                                  if o["option"] != s.chosen]
        assert re.option_trials == len(s.survivors) * 512 and s.trials_spent == played   # counted apart
        race.append(c["race_mean"])
        fresh.append(c["fresh_mean"])
        bias.append(c["race_minus_fresh"])
        covered += c["race_minus_fresh_low"] <= c["race_mean"] - 0.0 <= c["race_minus_fresh_high"]
    n = len(seeds)
    race_se = np.std(race, ddof=1) / math.sqrt(n)
    fresh_se = np.std(fresh, ddof=1) / math.sqrt(n)
    one_se = 10.0 / math.sqrt(512)          # the SE of one option's mean (common noise aside)
    # the race's winner: biased upward by a clear margin (E max of 20 normals ~ 1.87 SE)
    assert np.mean(race) > 5 * race_se and np.mean(race) > one_se, (np.mean(race), race_se)
    # the fresh estimate of the same option: unbiased
    assert abs(np.mean(fresh)) < 5 * fresh_se, (np.mean(fresh), fresh_se)
    assert np.mean(bias) > 5 * np.std(bias, ddof=1) / math.sqrt(n)
    # the interval of race - fresh covers this search's overestimate (race - true mean) at ~95%
    assert covered >= 0.9 * n, covered


def test_fresh_streams_differ_from_the_race_yet_reproduce_for_a_seed():
    mus = [0.0, -1.0, -2.0, -30.0]
    s = sr.run_search(StreamedPlanted(mus, seed=5), first=64, max_trials=1024)
    assert len(s.survivors) >= 2
    re = sr.reestimate(StreamedPlanted(mus, seed=5), s)
    for o in re.options:
        assert o["fresh_mean"] != o["race_mean"]          # other values: not the race's streams
    again = sr.run_search(StreamedPlanted(mus, seed=5), first=64, max_trials=1024)
    assert sr.reestimate(StreamedPlanted(mus, seed=5), again).options == re.options
    other = sr.run_search(StreamedPlanted(mus, seed=6), first=64, max_trials=1024)
    assert sr.reestimate(StreamedPlanted(mus, seed=6), other).chosen["fresh_mean"] != re.chosen["fresh_mean"]
    short = sr.reestimate(StreamedPlanted(mus, seed=5), again, 128)
    assert short.trials == 128 and short.option_trials == 128 * len(again.survivors)
    doc = sr.document(again)
    assert doc["reestimate"]["trials"] == 128 and doc["trials_spent"] == s.trials_spent
    assert doc["total_option_trials"] == doc["trials_spent"] + 128 * len(again.survivors)


def test_loadout_fresh_mean_agrees_with_an_independent_run_and_ignores_the_thread_count():
    import numba

    from analyzer.core import scenario as scenario_mod
    from analyzer.run.runner import prepare_point, simulate_point, summarize
    sc, space = sr.load(EXAMPLE)
    s = sr.run_search(space, max_trials=8192)
    n = 8192
    re = sr.reestimate(space, s, n)
    c = re.chosen
    assert space.fresh().key != space.key
    # the fresh streams are an 'analyzer run' of the file on the fresh key: the chosen fleet's mean
    # is that run's, to the last bit; and it is not the race's
    full = scenario_mod.load(EXAMPLE, trials=n)
    point = full.points[0]
    prep = prepare_point(full, point)
    on_fresh = summarize(point, prep, simulate_point(full, point, prep, key=space.fresh().key)[0])
    assert c["fresh_mean"] == on_fresh.summaries[f"vp.{s.chosen}"].mean
    on_race = summarize(point, prep, simulate_point(full, point, prep)[0])
    assert c["fresh_mean"] != on_race.summaries[f"vp.{s.chosen}"].mean
    # an independent run of that fleet at another seed: within 5 SE
    other = scenario_mod.load(EXAMPLE, trials=n, seed=sc.spec.seed + 1000)
    p2 = other.points[0]
    prep2 = prepare_point(other, p2)
    ind = summarize(p2, prep2, simulate_point(other, p2, prep2)[0]).summaries[f"vp.{s.chosen}"]
    assert abs(c["fresh_mean"] - ind.mean) < 5 * math.hypot(c["fresh_se"], ind.se), (c, ind)
    # bit-identical for one thread
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        _, space1 = sr.load(EXAMPLE)
        assert sr.reestimate(space1, copy.deepcopy(s), n).options == re.options
    finally:
        numba.set_num_threads(threads)


def _app():
    from analyzer.cli.app import build, load_commands
    return build(load_commands({"search"}))


def _close_file(tmp_path: Path) -> Path:
    return close_loadout_file(tmp_path, EXAMPLE)


def _answer(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k not in ("wall_seconds", "run_dir")}


def test_cli_reports_the_fresh_estimate_counts_it_apart_and_resumes_through_it(tmp_path, monkeypatch):
    path = _close_file(tmp_path)
    args = ["search", str(path), "--max-trials", "8192", "--no-progress"]
    res = CliRunner().invoke(_app(), [*args, "--out", str(tmp_path / "a"), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    re = doc["reestimate"]
    assert re["trials"] == doc["final_trials"] and re["chosen"]["option"] == doc["chosen"]
    assert [o["option"] for o in re["options"]] == doc["tied"]       # the survivors, the chosen first
    assert re["option_trials"] == len(doc["tied"]) * re["trials"]
    assert doc["total_option_trials"] == doc["trials_spent"] + re["option_trials"]
    assert doc["total_kernel_option_trials"] == doc["kernel_option_trials"] + re["kernel_option_trials"]
    man = json.loads((Path(doc["run_dir"]) / "manifest.json").read_text())
    assert man["trials"] == doc["total_kernel_option_trials"] and man["settings"]["reestimate"] is True
    # --no-reestimate: the same race, the same trials spent, no re-estimation
    res = CliRunner().invoke(_app(), [*args, "--out", str(tmp_path / "b"), "--json", "--no-reestimate"])
    assert res.exit_code == 0, res.output
    plain = json.loads(res.stdout)
    assert plain["reestimate"] is None and plain["trials_spent"] == doc["trials_spent"]
    assert plain["survivors"] == doc["survivors"] and plain["total_option_trials"] == plain["trials_spent"]
    res = CliRunner().invoke(_app(), [*args, "--out", str(tmp_path / "c"), "--reestimate-trials", "4096"])
    assert res.exit_code == 0, res.output
    text = " ".join(res.stdout.split())
    assert "re-estimated on fresh streams: 4,096 trials" in text and "selection bias race - fresh" in text
    assert "counted apart from the trials spent" in text
    res = CliRunner().invoke(_app(), [*args, "--out", str(tmp_path / "d"), "--reestimate-trials", "4096",
                                      "--no-reestimate"])
    assert res.exit_code == 2 and "--no-reestimate" in res.output
    # Ctrl-C during the re-estimation (the call after the race's rounds): --resume gives the answer
    real = LoadoutSpace.evaluate
    calls = []

    def evaluate(self, *a, **k):
        calls.append(1)
        if len(calls) == len(doc["rounds"]) + 1:
            assert self.key != sr.load(path)[1].key          # the fresh space
            interrupt._received.append(signal.SIGINT)
        return real(self, *a, **k)
    with monkeypatch.context() as m:
        m.setattr(LoadoutSpace, "evaluate", evaluate)
        res = CliRunner().invoke(_app(), [*args, "--out", str(tmp_path / "e")])
    assert res.exit_code == 130, res.output
    (folder,) = (tmp_path / "e" / path.stem).glob("search-*")
    refused = CliRunner().invoke(_app(), ["search", "--resume", str(folder), "--no-reestimate"])
    assert refused.exit_code == 2 and "--no-reestimate" in refused.output
    done = CliRunner().invoke(_app(), ["search", "--resume", str(folder), "--json", "--no-progress"])
    assert done.exit_code == 0, done.output
    assert _answer(json.loads(done.stdout)) == _answer(doc)
