"""The best option of every ``analyzer run`` ranking re-estimated on fresh streams (issue 30;
analyzer/run/reestimate.py, docs/balance.md "Rankings"): the run's best mean is the largest of K
noisy means (the winner's curse), the fresh mean is not, and run - fresh estimates the selection
bias. Planted options of one true mean (a question registered for these tests only, a numpy
kernel: no compilation) and the U-Boat ``loadout`` question's ``option_params`` on a small file."""
from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from unittest import mock

import numba
import numpy as np
import pandas as pd
import pytest
import yaml
from pydantic import BaseModel, ConfigDict, Field
from typer.testing import CliRunner

from analyzer import api
from analyzer.core import interrupt, questions
from analyzer.core import scenario as scenario_mod
from analyzer.core.questions import Metric, Prepared, Question
from analyzer.core.ranking import PairedDifferences, rank
from analyzer.run import reestimate as re_mod
from analyzer.run.runner import point_key, prepare_point, simulate_point, summarize
from tests.planted_spaces import close_loadout_file

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "scenarios/uboat_leader/loadout_example_fleets.yaml"
#: every planted option's per-trial value: Binomial(N_DRAWS, 1/2), true mean N_DRAWS / 2
N_DRAWS = 20
TRUE_MEAN = N_DRAWS / 2


def planted_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    """The kernel-result contract in numpy: chunk ``c`` draws every option's values from the
    generator of ``(seed, key, c)``; ``args = (options, played)``: the options played, in order."""
    options, played = args
    n = chunk_hi - chunk_lo
    hist = np.zeros((n, len(played), n_bins), np.int64)
    moments = np.zeros((n, len(played), 3), np.int64)
    for c in range(chunk_lo, chunk_hi):
        size = min(chunk_size, n_trials - c * chunk_size)
        v = np.random.default_rng([seed, key, c]).binomial(N_DRAWS, 0.5, (options, size))[list(played)]
        for m in range(len(played)):
            hist[c - chunk_lo, m] = np.bincount(v[m], minlength=n_bins)
        moments[c - chunk_lo, :, 0] = v.sum(axis=1)
        moments[c - chunk_lo, :, 1] = (v * v).sum(axis=1)
    return hist, moments, np.zeros((n, 0), np.int64)


class PlantedParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    options: int = Field(10, ge=2, le=50)
    played: list[int] | None = None     # option_params: the options played (None: all)


class PlantedOptions(Question):
    """``options`` options of one true mean on independent streams, ranked by ``x``."""

    game = "planted_ranking"
    name = "options"
    summary = "planted options of one true mean (tests only)"
    Params = PlantedParams
    primary_metric = "x.o0"
    default_plots = False

    def option_params(self, params, options):
        return params.model_copy(update={"played": [int(o[1:]) for o in options]})

    def prepare(self, p, ctx):
        played = list(range(p.options)) if p.played is None else p.played
        names = [f"o{i}" for i in played]

        def ranking(summaries, exact, pairs, trials):
            s = [summaries[f"x.{n}"] for n in names]
            means = [x.mean for x in s]
            return [rank(names, means, PairedDifferences.independent(trials, means, [x.se for x in s]), metric="x")]
        return Prepared([Metric(f"x.{n}", f"option {n}") for n in names], N_DRAWS + 1, kernel=planted_kernel,
                        args=(p.options, tuple(played)), derived_ranking=ranking)


class Uncooperative(PlantedOptions):
    """The same options, but the question cannot play a subset of them (the hook's default)."""

    name = "uncooperative"

    def option_params(self, params, options):
        return None


class Broken(PlantedOptions):
    """A hook that breaks its contract: the point it gives does not play the option asked for."""

    name = "broken"

    def option_params(self, params, options):
        return params.model_copy(update={"played": [int(o[1:]) + 1 for o in options]})


PLANTED = (PlantedOptions, Uncooperative, Broken)


@pytest.fixture(scope="module", autouse=True)
def planted_question():
    """Register the planted questions for this module only (other tests list every question)."""
    questions.load_games()
    for cls in PLANTED:
        questions.register(cls)
    yield
    for cls in PLANTED:
        questions._REGISTRY.pop((cls.game, cls.name), None)


def planted(seed: int, trials: int, options: int = 10, question: str = "options", **extra):
    return scenario_mod.load_dict({"name": "planted", "game": "planted_ranking", "question": question,
                                   "seed": seed, "trials": trials, "params": {"options": options}, **extra})


def planted_file(tmp_path: Path, trials: int = 256, question: str = "options", **extra) -> Path:
    path = tmp_path / "planted.yaml"
    path.write_text(yaml.safe_dump({"name": "planted", "game": "planted_ranking", "question": question, "seed": 3,
                                    "trials": trials, "params": {"options": 6}, **extra}))
    return path


def test_winner_biased_fresh_unbiased_and_the_bias_interval_covers():
    """Ten options of true mean 10 (sd 2.24), 256 trials each, 200 seeds: the run's best mean
    overestimates the truth (the expected largest of 10 is ~1.5 SE above it), the fresh mean does
    not (mean over seeds within 3 SE of the truth), and the run - fresh interval covers the run's
    own overestimate (run mean - 10) at least at the stated 95% (it is conservative: only the fresh
    error is random given the run's mean), less 3 binomial SDs of 200 draws."""
    seeds = range(200)
    over, fresh_err, covered = [], [], 0
    for seed in seeds:
        (r,) = api.run(planted(seed, 256))
        doc = r.rankings[0].reestimate
        assert doc["option"] == r.rankings[0].best and doc["trials"] == 256 and doc["stream"] == re_mod.FRESH_STREAM
        over.append(doc["race_mean"] - TRUE_MEAN)
        fresh_err.append(doc["fresh_mean"] - TRUE_MEAN)
        covered += doc["race_minus_fresh_low"] <= doc["race_mean"] - TRUE_MEAN <= doc["race_minus_fresh_high"]
    n = len(seeds)
    se = lambda xs: np.std(xs, ddof=1) / math.sqrt(len(xs))  # noqa: E731
    assert np.mean(over) > 5 * se(over)                               # the winner's curse is there
    assert abs(np.mean(fresh_err)) < 3 * se(fresh_err)                # and the fresh mean is free of it
    assert np.mean(fresh_err) < np.mean(over) - 5 * math.hypot(se(over), se(fresh_err))
    assert covered >= 0.95 * n - 3 * math.sqrt(n * 0.95 * 0.05)


def test_fresh_streams_are_not_the_runs_and_match_a_run_on_the_fresh_key():
    """The best is played on stream key stream_key(game, question, swept, 'run-reestimate'): its
    fresh sums are exactly those of the best alone run on that key, not those of the run's key."""
    sc = planted(7, 300)
    (r,) = api.run(sc)
    doc = r.rankings[0].reestimate
    point = sc.points[0]
    sub = dataclasses.replace(point, params=PlantedOptions().option_params(point.params, [doc["option"]]))
    prep = prepare_point(sc, sub)
    fresh, _, _ = simulate_point(sc, sub, prep, key=re_mod.fresh_key(sc, point))
    same, _, _ = simulate_point(sc, sub, prep, key=point_key(sc, point))
    assert fresh.exact_moment(0, 0) / 300 == doc["fresh_mean"]
    assert same.exact_moment(0, 0) / 300 == r.summaries[doc["metric"]].mean == doc["race_mean"]
    assert re_mod.fresh_key(sc, point) != point_key(sc, point)


def test_note_answers_manifest_and_report(tmp_path):
    """A written run: the note (one self-contained line), the answers.parquet columns on the best's
    row of the ranked metric (and nowhere else), the manifest's counts and the report's measured bias;
    --reestimate-trials sets the fresh trials."""
    from analyzer.cli.app import app
    r = CliRunner().invoke(app, ["run", str(planted_file(tmp_path)), "--out", str(tmp_path / "out"), "--no-progress",
                                 "--reestimate-trials", "512"])
    assert r.exit_code == 0, r.output
    (run_dir,) = [p.parent for p in (tmp_path / "out").rglob("answers.parquet")]
    answers = pd.read_parquet(run_dir / "answers.parquet")
    rows = answers[answers["fresh_mean"].notna()]
    assert len(rows) == 1
    row = rows.iloc[0]
    assert row["rank"] == 1 and row["fresh_trials"] == 512 and row["trials"] == 256
    assert row["fresh_low"] < row["fresh_mean"] < row["fresh_high"]
    assert row["selection_bias"] == pytest.approx(row["mean"] - row["fresh_mean"], abs=1e-12)
    assert row["selection_bias_low"] < row["selection_bias"] < row["selection_bias_high"]
    notes = [n for n in answers["note"].dropna() if "re-estimated on 512 fresh trials" in n]
    assert len(notes) == 1 and f"the best, {row['entity']}," in notes[0] and "selection bias (run - fresh)" in notes[0]
    assert "re-estimated on 512 fresh trials" in " ".join(r.output.split())      # the console prints the notes
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["trials"] == 256 and manifest["reestimate_trials"] == 512
    assert manifest["reestimate"] == {"enabled": True, "trials": 512, "stream": re_mod.FRESH_STREAM}
    html = (run_dir / "report.html").read_text()
    assert "Winner&#x27;s curse, measured" in html and "512 trials of fresh random streams" in html
    plotmeta = json.loads((run_dir / "plotmeta.json").read_text())
    best = [x for x in plotmeta["rankings"]["0"] if "reestimate" in x]
    assert [x["name"] for x in best] == [row["entity"]]


def test_no_reestimate_leaves_the_folder_without_it(tmp_path):
    from analyzer.cli.app import app
    r = CliRunner().invoke(app, ["run", str(planted_file(tmp_path)), "--out", str(tmp_path / "out"), "--no-progress",
                                 "--no-reestimate"])
    assert r.exit_code == 0, r.output
    (run_dir,) = [p.parent for p in (tmp_path / "out").rglob("answers.parquet")]
    answers = pd.read_parquet(run_dir / "answers.parquet")
    assert answers["fresh_mean"].isna().all() and answers["selection_bias"].isna().all()
    assert not any("fresh" in n for n in answers["note"].dropna())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["reestimate_trials"] == 0 and manifest["reestimate"]["enabled"] is False
    html = (run_dir / "report.html").read_text()
    assert "measured" not in html and "another seed" in html            # the bare caveat
    assert not any("reestimate" in x for x in json.loads((run_dir / "plotmeta.json").read_text())["rankings"]["0"])
    r = CliRunner().invoke(app, ["run", "--resume", str(run_dir), "--no-reestimate", "--reestimate-trials", "9"])
    assert r.exit_code == 2 and "drop --reestimate-trials, --no-reestimate" in " ".join(r.output.split())


def test_a_question_that_cannot_play_one_option_is_skipped_with_a_note():
    (r,) = api.run(planted(1, 64, question="uncooperative"))
    assert r.rankings[0].reestimate is None
    (line,) = [n for n in r.notes if "not re-estimated" in n]
    assert "planted_ranking/uncooperative cannot play one of its options alone" in line and r.rankings[0].best in line


def test_an_error_in_the_reestimation_keeps_the_computed_points(tmp_path):
    """A hook that plays another option than the best is refused (the re-estimation would measure
    something else), after every point is computed: the folder is kept, resumable, no point lost; a
    --reestimate-trials below 2 is refused before any trial runs."""
    from analyzer.outputs.checkpoint import RunKept
    path = planted_file(tmp_path, question="broken")
    with pytest.raises(RunKept) as info:
        api.run_to_folder(scenario_mod.load(path), tmp_path / "out", threads=1)
    assert "has no metric of that option" in str(info.value) and "--resume" in str(info.value)
    run_dir = info.value.run_dir
    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "incomplete"
    assert [p.name for p in (run_dir / "checkpoint").iterdir()] == ["point-000000.npz"]
    with pytest.raises(ValueError, match="--reestimate-trials"):
        api.run_to_folder(scenario_mod.load(path), tmp_path / "out2", threads=1, reestimate_trials=1)
    assert not (tmp_path / "out2").exists()


def test_every_point_of_a_sweep_gets_its_own():
    """Every point of a sweep gets its own re-estimate (its own fresh key), counted in the manifest."""
    sc = planted(2, 128, sweep={"options": [3, 5]})
    results = api.run(sc)
    docs = [r.rankings[0].reestimate for r in results]
    assert all(d is not None for d in docs) and docs[0]["fresh_mean"] != docs[1]["fresh_mean"]
    assert re_mod.reestimates(results) == docs
    from analyzer.outputs import writer
    man = writer.manifest_dict(sc, results, threads=1, wall_seconds=1.0, mode="monte_carlo")
    assert man["reestimate_trials"] == 256 and man["reestimated_rankings"] == 2


def test_resume_during_the_reestimation_gives_the_uninterrupted_answer(tmp_path):
    """Stopped inside the re-estimation (every point saved done), the folder resumes with the
    settings it started with (--reestimate-trials 640 is not given again) to the answers, notes and
    manifest counts of an uninterrupted run."""
    path = planted_file(tmp_path, sweep={"options": [3, 4]})
    ref_dir, _ = api.run_to_folder(scenario_mod.load(path), tmp_path / "ref", threads=1, reestimate_trials=640)
    sc = scenario_mod.load(path)
    fresh = {re_mod.fresh_key(sc, p) for p in sc.points}
    calls = []
    real = planted_kernel

    def spy(seed, key, *rest):
        calls.append(key)
        return real(seed, key, *rest)

    def check():
        if calls and calls[-1] in fresh:            # the first piece of the re-estimation is done
            raise interrupt.RunInterrupted(2)
    with mock.patch(f"{__name__}.planted_kernel", spy), mock.patch.object(interrupt, "check", check), \
            pytest.raises(interrupt.RunInterrupted) as info:
        api.run_to_folder(scenario_mod.load(path), tmp_path / "stopped", threads=1, reestimate_trials=640)
    run_dir = info.value.run_dir
    assert sum(k in fresh for k in calls) == 1
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "incomplete" and manifest["reestimate"] == {"enabled": True, "trials": 640}
    from analyzer.outputs import checkpoint
    done, _ = api.run_to_folder(checkpoint.load_scenario(run_dir), None, threads=1, resume=run_dir)
    a, b = pd.read_parquet(ref_dir / "answers.parquet"), pd.read_parquet(done / "answers.parquet")
    pd.testing.assert_frame_equal(a, b)
    assert (b["fresh_trials"].dropna() == 640).all() and b["fresh_mean"].notna().sum() == 2
    for key in ("trials", "reestimate_trials", "reestimate"):
        assert json.loads((done / "manifest.json").read_text())[key] == \
            json.loads((ref_dir / "manifest.json").read_text())[key]


def test_options_that_are_sweep_points_rerun_the_best_point_and_exact_runs_are_left_alone(tmp_path):
    """Breaking News points_efficiency ranks the units of a sweep (Ranking.own): the best unit's point
    is run again on its fresh key, every point of the group carries the same re-estimate, and the
    answers columns sit on the best's point's row of the ranked metric only. An exact run of the same
    file re-estimates nothing (no selection bias)."""
    from analyzer.games.breaking_news.points_efficiency import RANKED_BY
    from analyzer.outputs.answers import answers_table
    doc = yaml.safe_load((ROOT / "scenarios/breaking_news/points_efficiency.yaml").read_text())
    doc["sweep"]["unit"] = doc["sweep"]["unit"][7:10]
    sc = scenario_mod.load_dict(doc, directory=ROOT / "scenarios/breaking_news", trials=512)
    results = api.run(sc)
    docs = [rk.reestimate for r in results for rk in r.rankings]
    assert len(docs) == 3 and all(d is docs[0] for d in docs) and re_mod.reestimates(results) == [docs[0]]
    best = next(r for r in results if r.rankings[0].own == r.rankings[0].best)
    prep = prepare_point(sc, best.point)
    acc, _, _ = simulate_point(sc, best.point, prep, key=re_mod.fresh_key(sc, best.point))
    assert summarize(best.point, prep, acc).summaries[RANKED_BY].mean == docs[0]["fresh_mean"]
    assert docs[0]["race_mean"] == best.summaries[RANKED_BY].mean and docs[0]["metric"] == RANKED_BY
    table = answers_table(results)
    marked = table[table["fresh_mean"].notna()]
    assert list(zip(marked["point"], marked["metric"])) == [(best.point.index, RANKED_BY)]
    exact = api.exact(sc)
    assert all(rk.reestimate is None for r in exact for rk in r.rankings)
    assert not any("fresh" in n for r in exact for n in r.notes)


# -- the U-Boat loadout question ---------------------------------------------------------------------------------

def test_loadout_option_params_play_each_fleet_exactly_as_the_run(tmp_path):
    """option_params(params, [first, other]) on the run's stream key gives both fleets exactly the
    run's values (the first fleet anchors the stream as in the run); one fleet alone is a valid point
    of that fleet only; an unknown name gives None."""
    sc = scenario_mod.load(close_loadout_file(tmp_path, EXAMPLE), trials=4096)
    (r,) = api.run(sc, reestimate=False)
    q, point = sc.question, sc.points[0]
    for pair in (["intel", "lone_u56"], ["intel", "support"]):
        sub = dataclasses.replace(point, params=q.option_params(point.params, pair))
        prep = prepare_point(sc, sub)
        acc, _, _ = simulate_point(sc, sub, prep, key=point_key(sc, point))
        got = summarize(sub, prep, acc)
        for fleet in pair:
            assert got.summaries[f"vp.{fleet}"] == r.summaries[f"vp.{fleet}"]
            assert prep.entity_columns[fleet] == r.entity_columns[fleet]
    alone = prepare_point(sc, dataclasses.replace(point, params=q.option_params(point.params, ["support"])))
    assert [m.name for m in alone.metrics if m.name.startswith("vp.")] == ["vp.support"]
    assert q.option_params(point.params, ["no_such_fleet"]) is None


def test_loadout_enumerated_fleet_is_rebuilt_from_its_name():
    """An enumerated fleet (named by its boats) is played as enumeration makes it: the same boats,
    cost, SO policy and note line as in the full point."""
    from analyzer.games.uboat_leader.loadout import fleet_name, parse_fleet_name
    assert parse_fleet_name("U-20t+U-43v+U-56a") == [("U-20", "trained"), ("U-43", "veteran"), ("U-56", "ace")]
    assert parse_fleet_name("example") is None and parse_fleet_name("U-20x") is None
    assert fleet_name(parse_fleet_name("U-201g+U-47t")) == "U-201g+U-47t"
    sc = scenario_mod.load(ROOT / "scenarios/uboat_leader/loadout_enumerate.yaml", trials=4096)
    point = sc.points[0]
    full = prepare_point(sc, point)
    fleets = list(full.entity_columns)
    pick = [fleets[0], fleets[7], fleets[-1]]
    sub = prepare_point(sc, dataclasses.replace(point, params=sc.question.option_params(point.params, pick)))
    for name in pick:
        assert sub.entity_columns[name] == full.entity_columns[name]
        assert [n for n in sub.notes if n.startswith(f"fleet {name}:")] == \
            [n for n in full.notes if n.startswith(f"fleet {name}:")]


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 numba threads")
def test_loadout_reestimate_bit_identical_for_1_and_2_threads(tmp_path):
    sc = scenario_mod.load(close_loadout_file(tmp_path, EXAMPLE), trials=2 * 4096 + 100)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        (one,) = api.run(sc)
        numba.set_num_threads(2)
        (two,) = api.run(sc)
    finally:
        numba.set_num_threads(before)
    assert one.rankings[0].reestimate is not None
    assert one.rankings[0].reestimate == two.rankings[0].reestimate
    assert one.rankings[0].reestimate["option"] == one.rankings[0].best
    assert [n for n in one.notes if "fresh" in n] == [n for n in two.notes if "fresh" in n]
