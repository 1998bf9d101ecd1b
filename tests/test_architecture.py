"""The layers stay apart: games are leaves that register questions; a new game or question
needs no edit to any core file; kernels return the one (hist, moments, counters) contract."""
import contextlib
import importlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

import analyzer.games
from analyzer import api
from analyzer.core import questions
from analyzer.core import scenario as scenario_mod

ROOT = Path(__file__).resolve().parent.parent


def test_games_import_no_runner_api_cli_bench_or_reference():
    code = """
        import json, sys
        from analyzer.core import questions
        questions.load_games()
        print(json.dumps(sorted(m for m in sys.modules if m.startswith(("analyzer", "tests")))))
    """
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
    forbidden = {"analyzer.run.runner", "analyzer.api", "analyzer.cli.app", "analyzer.bench.harness", "analyzer.outputs.writer"}
    assert not loaded & forbidden, loaded & forbidden
    assert not [m for m in loaded if m.endswith(".bench") or m.rpartition(".")[2].startswith("reference")
                or m.startswith("tests")]
    assert {"analyzer.games.b17.gun_shot", "analyzer.games.dystopian_wars.duel",
            "analyzer.games.uboat_leader.engagement", "analyzer.games.dice"} <= loaded


TOY_KERNEL = '''
from kernels._jit import parallel_jit, unmanaged_jit
from kernels.driver import no_workspace, run_trials
from kernels.rng import roll_die


@unmanaged_jit
def coin_trial(state, values, counters, ws, args):
    heads = 0
    for _ in range(args[0]):
        heads += roll_die(state, 2) == 2
    values[0] = heads
    counters[0] += args[0]


@parallel_jit
def coin_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    return run_trials(coin_trial, no_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                      1, n_bins, 1)
'''

TOY_QUESTION = '''
from pydantic import BaseModel, ConfigDict

from analyzer.core.questions import Counter, Metric, Prepared, Question, register
from {pkg}.kernel import coin_kernel


class CoinParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    coins: int = 3


@register
class Coins(Question):
    game = "{game}"
    name = "coins"
    summary = "heads among fair coins"
    Params = CoinParams
    primary_metric = "heads"

    def prepare(self, p, ctx):
        return Prepared([Metric("heads", "heads")], p.coins + 1, kernel=coin_kernel, args=(p.coins,),
                        counters=(Counter("coins_tossed"),))
'''


@contextlib.contextmanager
def game_in_folder(folder: Path, game: str, modules: dict[str, str]):
    """The game package ``game`` (an ``__init__`` calling ``import_modules``, and ``modules``:
    module name -> source) written into ``folder``, which joins the games' search path as a
    package dropped beside the others would; on exit the folder, the game's questions and its
    modules are gone again."""
    pkg = folder / game
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from analyzer.games import import_modules\n\n"
                                     "import_modules(__name__, __path__)\n")
    for name, source in modules.items():
        (pkg / f"{name}.py").write_text(source)
    analyzer.games.__path__.append(str(folder))
    questions._LOADED = False
    try:
        yield
    finally:
        analyzer.games.__path__.remove(str(folder))
        for key in [key for key in questions._REGISTRY if key[0] == game]:
            del questions._REGISTRY[key]
        for m in [m for m in sys.modules if m.startswith(f"analyzer.games.{game}")]:
            del sys.modules[m]


def test_a_new_game_needs_no_core_edit(tmp_path):
    """A game package dropped beside the others (here: a folder added to the games' search
    path) is found, its question runs through the runner, and nothing core was edited."""
    game = "toy_coins"
    with game_in_folder(tmp_path, game, {"kernel": TOY_KERNEL,
                                         "coins": TOY_QUESTION.format(pkg=f"analyzer.games.{game}", game=game)}):
        questions.load_games()
        assert game in questions.games_with_questions()
        sc_file = tmp_path / "s.yaml"
        sc_file.write_text(f"game: {game}\nquestion: coins\nseed: 4\ntrials: 10000\nparams: {{coins: 4}}\n")
        (res,) = api.run(scenario_mod.load(sc_file))
        assert abs(res.summaries["heads"].mean - 2.0) < 5 * res.summaries["heads"].se
        assert res.counters == {"coins_tossed": 40_000}


def test_every_question_returns_the_kernel_contract():
    """Every shipped question's kernel returns (hist, moments, counters) shaped as declared."""
    from analyzer.run.runner import prepare_point
    for path in scenario_mod.expand_targets([str(ROOT / "scenarios")]):
        sc = scenario_mod.load(path)
        prep = prepare_point(sc, sc.points[0])
        hist, moments, counters = prep.run_kernel(sc.spec.seed, 1, 0, 2, 64, 100)
        m = len(prep.metrics)
        assert hist.shape == (2, m, prep.n_bins) and moments.shape == (2, m, 3), path
        assert counters.shape == (2, len(prep.counters)), path
        assert (hist.sum(axis=2) == np.array([[64], [36]])).all(), path


def test_a_new_game_and_a_new_question_pass_the_per_question_checks(tmp_path):
    """The toy game from a temporary folder, and a new question of an existing game (a module
    in a second folder on that game package's path), go through what every shipped question
    goes through: the scenario JSON Schema (a scenario of each validates, a wrong parameter
    does not), the generated docs/scenarios.md, the kernel contract, and a run written to a
    folder with its tables, summary and figure. No file outside the two folders is edited."""
    import jsonschema

    import analyzer.games.b17 as b17_pkg
    from analyzer import docgen
    from analyzer.core import schema
    from analyzer.run.runner import prepare_point
    game = "toy_coins"
    extra = tmp_path / "b17_extra"
    extra.mkdir()
    (extra / "toy_flips.py").write_text(
        TOY_QUESTION.replace('name = "coins"', 'name = "toy_flips"').replace(".kernel import", ".toy_kernel import")
        .format(pkg="analyzer.games.b17", game="b17"))
    (extra / "toy_kernel.py").write_text(TOY_KERNEL)
    b17_pkg.__path__.append(str(extra))
    try:
        with game_in_folder(tmp_path, game, {"kernel": TOY_KERNEL,
                                             "coins": TOY_QUESTION.format(pkg=f"analyzer.games.{game}", game=game)}):
            questions.load_games()
            importlib.import_module("analyzer.games.b17.toy_flips")
            validator = jsonschema.Draft202012Validator(schema.scenario_json_schema())
            docs = docgen.scenarios_markdown()
            for g, q in ((game, "coins"), ("b17", "toy_flips")):
                assert questions.get(g, q).name == q
                doc = {"game": g, "question": q, "seed": 3, "trials": 5000, "params": {"coins": 5}}
                assert not list(validator.iter_errors(doc)), (g, q)
                assert list(validator.iter_errors({**doc, "params": {"coins": "five"}})), (g, q)
                assert f"`{q}`" in docs and "heads among fair coins" in docs, (g, q)
                path = tmp_path / f"{g}_{q}.yaml"
                path.write_text(json.dumps(doc))
                sc = scenario_mod.load(path)
                prep = prepare_point(sc, sc.points[0])
                hist, moments, counters = prep.run_kernel(sc.spec.seed, 1, 0, 2, 64, 100)
                assert hist.shape == (2, 1, prep.n_bins) and moments.shape == (2, 1, 3)
                assert (hist.sum(axis=2) == np.array([[64], [36]])).all()
                folder, summary = api.run_to_folder(sc, tmp_path / "out", threads=1)
                assert (folder / "points.parquet").is_file() and (folder / "summary.json").is_file()
                assert list(folder.glob("*.png")), "the default figure is drawn"
                heads = summary["points"][0]["metrics"]["heads"]
                assert abs(heads["mean"] - 2.5) < 5 * heads["se"], heads
    finally:
        b17_pkg.__path__.remove(str(extra))
        questions._REGISTRY.pop(("b17", "toy_flips"), None)
        for m in ("analyzer.games.b17.toy_flips", "analyzer.games.b17.toy_kernel"):
            sys.modules.pop(m, None)
