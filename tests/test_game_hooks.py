"""A game declares its own fair-cost hooks and benchmark rows: a game package dropped beside the
others (:func:`tests.test_architecture.game_in_folder`) with a points-cost and a force-scaling hook
on its question, a pure-Python reference and a ``bench.py`` row is used by ``analyzer matchup``'s
cost lookup and fair cost, and by the benchmark list and suite, with no core file edited."""
import sys

import pytest

from analyzer.analyses.balance import matchup
from analyzer.bench import harness
from analyzer.bench import suite as bench_suite
from analyzer.core import questions
from tests.test_architecture import TOY_KERNEL, game_in_folder

GAME = "toy_coin_duel"

#: the toy coin game's kernel, and a duel of two purses built on its trial
KERNEL = TOY_KERNEL + '''

@unmanaged_jit
def coin_duel_trial(state, values, counters, ws, args):
    coin_trial(state, values, counters, ws, (args[0],))
    heads_a = values[0]
    coin_trial(state, values, counters, ws, (args[1],))
    heads_b = values[0]
    values[0] = heads_a > heads_b
    values[1] = heads_b > heads_a
    values[2] = heads_a == heads_b


@parallel_jit
def coin_duel_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    return run_trials(coin_duel_trial, no_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                      3, n_bins, 1)
'''

QUESTION = '''
from pydantic import BaseModel, ConfigDict

from analyzer.core.questions import Counter, Metric, PointsCost, Prepared, Question, register
from {pkg}.kernel import coin_duel_kernel

POINTS_PER_COIN = 10


class Purse(BaseModel):
    model_config = ConfigDict(extra="forbid")
    coins: int


class DuelParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    side_a: Purse
    side_b: Purse


@register
class CoinDuel(Question):
    game = "{game}"
    name = "duel"
    summary = "two purses of fair coins tossed: more heads wins"
    Params = DuelParams
    primary_metric = "p_win_a"

    def prepare(self, p, ctx):
        metrics = [Metric("p_win_a", "P(A wins)", "probability"), Metric("p_win_b", "P(B wins)", "probability"),
                   Metric("p_draw", "P(draw)", "probability")]
        return Prepared(metrics, 2, kernel=coin_duel_kernel, args=(p.side_a.coins, p.side_b.coins),
                        counters=(Counter("coins_tossed"),))

    def points_cost(self, sc, purse):
        return PointsCost(POINTS_PER_COIN * purse["coins"], "10 points a coin")

    def scale_force(self, sc, purse, copies):
        return {{"coins": purse["coins"] * copies}}
'''

REFERENCE = '''
import random


def load_data(folder=None):
    return None


def simulate(question, params, rules, data, n, seed):
    rng = random.Random(seed)
    out = {"p_win_a": [], "p_win_b": [], "p_draw": []}
    for _ in range(n):
        a = sum(rng.random() < 0.5 for _ in range(params["side_a"]["coins"]))
        b = sum(rng.random() < 0.5 for _ in range(params["side_b"]["coins"]))
        out["p_win_a"].append(int(a > b))
        out["p_win_b"].append(int(b > a))
        out["p_draw"].append(int(a == b))
    return out
'''

BENCH = '''
from analyzer.bench.kernels import KernelBench, register_kernel_benches

register_kernel_benches(f"{{__package__}}.reference", {{
    "toy-coin-duel": KernelBench("{game}", "duel", "{scenario}", "two coins against four", "single-step",
                                 20_000, 2_000, 200),
}})
'''

SCENARIO = f"""game: {GAME}
question: duel
seed: 3
trials: 640
params: {{side_a: {{coins: 2}}, side_b: {{coins: 4}}}}
"""
MATCHUP = SCENARIO + """contenders:
  - {name: two, side: {coins: 2}}
  - {name: four, side: {coins: 4}}
matchup: {bootstrap: 20, max_scale: 3}
"""


@pytest.fixture(scope="module")
def toy_game(tmp_path_factory):
    """The toy game installed for this module's tests, with its scenario and matchup files;
    its benchmark is unregistered again afterwards (the shipped games' stay: their modules stay
    imported)."""
    folder = tmp_path_factory.mktemp("games")
    (folder / "duel.yaml").write_text(SCENARIO)
    (folder / "matchup.yaml").write_text(MATCHUP)
    modules = {"kernel": KERNEL, "duel": QUESTION.format(pkg=f"analyzer.games.{GAME}", game=GAME),
               "reference": REFERENCE, "bench": BENCH.format(game=GAME, scenario=folder / "duel.yaml")}
    with game_in_folder(folder, GAME, modules):
        questions.load_games()
        yield folder
    for name in [name for name, bench in harness.BENCHMARKS.items() if (GAME, "duel") in bench.questions]:
        del harness.BENCHMARKS[name]


def test_matchup_reads_costs_and_scales_forces_through_the_question_hooks(toy_game):
    """The costs come from ``points_cost`` (no ``cost:`` in the file) and the fair cost scales the
    reference with ``scale_force``: two copies of the 2-coin purse are the 4-coin purse, so on
    common random numbers the score is exactly 1/2 there and the fair cost is exactly 2 x 20."""
    m = matchup.run(toy_game / "matchup.yaml", fair_cost=True)
    assert [(c.value, c.source) for c in m.costs] == [(20, "10 points a coin"), (40, "10 points a coin")]
    four = next(fc for fc in m.fair if fc.name == "four")
    assert four.method == "scale reference" and four.parity == 2.0, four
    assert (four.fair_cost, four.ci_low, four.ci_high) == (40.0, 40.0, 40.0), four


def test_the_game_bench_row_is_listed_timed_and_loads_the_reference_by_name(toy_game):
    """``bench.py`` of the new game declares a kernel row: it times the question, and the suite
    runs it against the game's reference (imported by module name, not with the game)."""
    reference = f"analyzer.games.{GAME}.reference"
    assert reference not in sys.modules                  # import_modules leaves the references out
    harness.load_benchmarks()
    assert harness.bench_of_question()[(GAME, "duel")] == "toy-coin-duel"
    bench = harness.BENCHMARKS["toy-coin-duel"]
    assert bench.references == (reference,) and bench.scenarios == (toy_game / "duel.yaml",)
    (row,) = bench_suite.run_suite(["toy-coin-duel"], quick=True)
    assert row["name"] == "toy-coin-duel" and row["reference_rate"] > 0 and row["ratio"] > 0, row
    assert reference in row["reference"]
