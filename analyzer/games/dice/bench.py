"""Benchmarks of the generic dice questions, and the scenarios of the whole-process rows.

``analyzer bench dice``: the exploding pool (the ``pool`` question's kernel) in dice/s against
the raw RNG draws/s and against a numpy vectorised implementation of the same rule, rows
``dice-pool-vs-raw`` (target 0.6) and ``dice-pool-vs-numpy`` (target 10).

The dice questions ``count`` and ``roll_under`` have no pure-Python reference (their oracle in
the tests is the exact distribution), so their rows (``analyzer bench dice-count``,
``dice-roll-under``) compare with a numpy vectorised implementation of the same rule, the
reference issue 16 names for dice primitives (as the ``dice`` rows do for the exploding pool).

Target of a dice primitive against numpy vectorised: 10x, the target of the exploding pool
against numpy. It is within reach: the driver alone drawing 2d6 (3d10) and recording 2 metrics
runs 5.9e8 (3.0e8) trials/s on 2 threads, numpy plays the same points at 4.5e7 (2.6e7)
trials/s, ceilings of 13x and 11.5x.

The whole-process rows of ``analyzer bench`` (CLI start, memory, stop latency) run scenarios of
this game (:func:`analyzer.bench.harness.declare_process_scenarios`): the cheapest questions, so
the rows measure the process, not a kernel.
"""
from __future__ import annotations

from functools import partial

import numba
import numpy as np

from analyzer.bench.harness import (Side, compare, declare_process_scenarios, figures_line, measure, prepared_runner,
                                    register_benchmark, row, say)
from analyzer.bench.kernels import point_index
from analyzer.core.questions import SCENARIO_ROOT
from analyzer.run import dice
from analyzer.run.batches import batch_ranges
from analyzer.run.runner import CHUNK_TRIALS
from kernels import dice as k

GAME = "dice"
#: the exploding pool against the raw RNG draws (dice/s per draw/s) and against numpy vectorised
POOL_RAW_TARGET, NUMPY_TARGET = 0.6, 10


# ----------------------------------------------------------------------------- exploding pool
def numpy_exploding_pool(n_dice: int, trials: int, rng: np.random.Generator,
                         face_value: np.ndarray, face_explodes: np.ndarray) -> tuple[np.ndarray, int]:
    """Vectorised numpy reference of the same rule: roll all dice, re-roll the exploding
    faces as a new (smaller) batch until none explode. Returns (hits per trial, dice rolled)."""
    sides = face_value.shape[0] - 1
    faces = rng.integers(1, sides + 1, size=(trials, n_dice))
    hits = face_value[faces].sum(axis=1)
    rolled = faces.size
    extra = face_explodes[faces].sum(axis=1)
    while extra.any():
        owners = np.repeat(np.arange(trials), extra)
        faces = rng.integers(1, sides + 1, size=owners.shape[0])
        rolled += faces.size
        np.add.at(hits, owners, face_value[faces])
        extra = np.bincount(owners[face_explodes[faces]], minlength=trials)
    return hits, rolled


def bench_dice(n_dice: int = 10, trials: int = 4_000_000, console=None) -> dict:
    """Raw draws/s, exploding-pool dice/s (kernel) and numpy dice/s, with ratios (interleaved
    rounds, :func:`analyzer.bench.harness.measure`: the raw draws and the pool also on 1 thread)."""
    from analyzer.bench.draws import raw_draws

    fv, fe = dice.hit_table()
    table = k.pool_table(fv, fe)
    cancel = k.pool_table(*dice.CANCEL_TABLE)
    raw_draws(32)
    k.pool_kernel(1, 0, 0, 2, 16, 32, 64, (n_dice, *table, 0, *cancel, 1))
    rolled = {}

    def pool(n):
        # calls of at most BATCH_CHUNKS chunks, as the runner makes them: a kernel's outputs have a row
        # per chunk, so one call over every chunk grows with the trials (10^10: MemoryError)
        total = 0
        for lo, hi in batch_ranges(-(-n // CHUNK_TRIALS)):
            _, _, c = k.pool_kernel(1, 0, lo, hi, CHUNK_TRIALS, n, 128, (n_dice, *table, 0, *cancel, 1))
            total += int(c[:, 1].sum())
        rolled[n] = total

    np_trials = min(trials, 1_000_000)

    def numpy_pool(n):
        _, r = numpy_exploding_pool(n_dice, n, np.random.default_rng(1), fv, fe)
        rolled["numpy"] = r

    # interleaved rounds, best time of each: a slow spell of the machine hits all three
    timed = measure({"raw": Side(raw_draws, trials * n_dice), "pool": Side(pool, trials),
                     "numpy": Side(numpy_pool, np_trials, threaded=False, calls=3)}, rounds=5, raw=False)
    pool_dice, np_dice = rolled[trials] / trials, rolled["numpy"] / np_trials     # dice per trial
    raw_per_s = timed["raw"]["rate"]
    pool_per_s = timed["pool"]["rate"] * pool_dice
    np_per_s = timed["numpy"]["rate"] * np_dice
    figures = {"dice-pool-vs-raw": compare(timed, "pool", "raw", scale=pool_dice),
               "dice-pool-vs-numpy": compare(timed, "pool", "numpy", scale=pool_dice / np_dice)}
    out = {"threads": numba.get_num_threads(), "raw_draws_per_s": raw_per_s,
           "pool_dice_per_s": pool_per_s, "numpy_dice_per_s": np_per_s,
           "pool_vs_raw": pool_per_s / raw_per_s, "pool_vs_numpy": pool_per_s / np_per_s, "figures": figures}
    lines = [
        f"threads: {out['threads']}  pool: {n_dice} dice at 4+, 6 = 2 hits and explodes; {trials:,} trials",
        f"raw RNG draws/s (xoshiro256**):     {raw_per_s:,.0f}",
        f"exploding pool kernel dice/s:       {pool_per_s:,.0f}",
        f"numpy vectorised pool dice/s:       {np_per_s:,.0f}  ({np_trials:,} trials)",
        f"ratio pool / raw draws:             {out['pool_vs_raw']:.2f}  (target >= {POOL_RAW_TARGET:g})",
        figures_line(figures["dice-pool-vs-raw"]),
        f"ratio pool / numpy:                 {out['pool_vs_numpy']:.1f}  (target >= {NUMPY_TARGET:g})",
        figures_line(figures["dice-pool-vs-numpy"]),
    ]
    for line in lines:
        say(console, line)
    return out


def pool_rows(out: dict) -> list[dict]:
    """The rows ``dice-pool-vs-raw`` and ``dice-pool-vs-numpy`` of a :func:`bench_dice` result."""
    return [row("dice-pool-vs-raw", "exploding pool dice/s vs raw RNG draws/s", out["pool_dice_per_s"], "dice/s",
                out["pool_vs_raw"], POOL_RAW_TARGET, reference="raw xoshiro256** draws/s",
                reference_rate=out["raw_draws_per_s"], figures=out["figures"]["dice-pool-vs-raw"]),
            row("dice-pool-vs-numpy", "exploding pool dice/s vs numpy vectorised", out["pool_dice_per_s"],
                "dice/s", out["pool_vs_numpy"], NUMPY_TARGET, reference="numpy vectorised dice/s",
                reference_rate=out["numpy_dice_per_s"], figures=out["figures"]["dice-pool-vs-numpy"])]


@register_benchmark("dice", questions=((GAME, "pool"),), quick_trials=2_000_000)
def _bench_dice_cli(console=None, trials: int | None = None) -> dict:
    out = bench_dice(10, trials or 4_000_000, console)
    return {**out, "rows": pool_rows(out)}


# ----------------------------------------------------------------------------- count, roll_under vs numpy
def numpy_count(rng: np.random.Generator, trials: int, dice: int, sides: int, target: int, need: int,
                n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``count`` question vectorised: per trial the dice >= ``target`` and whether at least
    ``need`` are; returns the two metrics' histograms and sums (what the kernel returns)."""
    successes = (rng.integers(1, sides + 1, size=(trials, dice)) >= target).sum(axis=1)
    return _histograms_and_sums([successes, successes >= need], n_bins)


def numpy_roll_under(rng: np.random.Generator, trials: int, dice: int, sides: int, face_offset: int, skill: int,
                     modifier: int, n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``roll_under`` question vectorised: hit when the dice total + ``modifier`` <= ``skill``,
    damage = the quality dice (all but die 0) on a hit, 0 on a miss."""
    faces = rng.integers(1, sides + 1, size=(trials, dice)) + face_offset
    total = faces.sum(axis=1)
    hit = total + modifier <= skill
    return _histograms_and_sums([hit, np.where(hit, total - faces[:, 0], 0)], n_bins)


def _histograms_and_sums(metrics: list[np.ndarray], n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    values = [np.asarray(m, np.int64) for m in metrics]
    hist = np.stack([np.bincount(np.minimum(v, n_bins - 1), minlength=n_bins) for v in values])
    sums = np.array([[v.sum(), (v * v).sum()] for v in values])
    return hist, sums


#: bench name -> (question, scenario, swept values of the point, numpy reference, describe)
DICE_BENCHES = {
    "dice-count": ("count", "dice/any_of_n.yaml", {"dice": 2}, numpy_count,
                   "2d6, a die succeeds on 5+, P(at least 1)"),
    "dice-roll-under": ("roll_under", "dice/roll_under_3d10.yaml", {"modifier": 0}, numpy_roll_under,
                        "3d10 roll-under skill 15, damage from the two quality dice"),
}
#: dice benches: kernel trials in a full run and in ``--quick``, numpy trials (at most; one vectorised call)
DICE_TRIALS, DICE_QUICK_TRIALS, DICE_NUMPY_TRIALS = 20_000_000, 2_000_000, 1_000_000


def bench_dice_question(name: str, console=None, trials: int | None = None) -> dict:
    """Trials/s of a generic dice question's kernel and of numpy vectorised on the same point."""
    from analyzer.core import scenario as scenario_mod
    from analyzer.run.runner import prepare_point

    question, rel, at, numpy_fn, describe = DICE_BENCHES[name]
    sc = scenario_mod.load(SCENARIO_ROOT / rel)
    point = point_index(sc, at)
    pt = sc.points[point]
    prep = prepare_point(sc, pt)
    prep.run_kernel(1, 7, 0, 2, 64, 128)                      # compile (or load) outside the timing
    n = trials or DICE_TRIALS
    n_np = min(n, DICE_NUMPY_TRIALS)
    params = pt.params.model_dump()

    def vectorised(m):
        numpy_fn(np.random.default_rng(1), m, n_bins=prep.n_bins, **params)

    timed = measure({"kernel": Side(prepared_runner(prep), n, prepared=prep),
                     "numpy": Side(vectorised, n_np, threaded=False, calls=3)})     # as the pool's numpy side
    figures = compare(timed, "kernel", "numpy")
    rate, np_rate = timed["kernel"]["rate"], timed["numpy"]["rate"]
    threads = numba.get_num_threads()
    where = f"{rel} point {point} ({', '.join(f'{k}={v}' for k, v in at.items())})"
    for line in (f"threads: {threads}  {describe}; {where}",
                 f"{question} kernel trials/s:          {rate:,.0f}  ({n:,} trials, best of 3)",
                 f"numpy vectorised trials/s:         {np_rate:,.0f}  ({n_np:,} trials, best of 3)",
                 f"ratio kernel / numpy:              {rate / np_rate:,.1f}  (target >= {NUMPY_TARGET:g})",
                 figures_line(figures)):
        say(console, line)
    what = (f"{question} kernel trials/s vs numpy vectorised (no pure-Python reference exists for the generic "
            f"dice questions) on {where}: {describe}")
    return {"rows": [row(name, what, rate, "trials/s", rate / np_rate, NUMPY_TARGET,
                         reference=f"numpy vectorised ({__name__})", reference_rate=np_rate, threads=threads,
                         figures=figures)]}


for _name, (_question, _rel, *_rest) in DICE_BENCHES.items():
    register_benchmark(_name, questions=((GAME, _question),), scenarios=(SCENARIO_ROOT / _rel,),
                       quick_trials=DICE_QUICK_TRIALS)(partial(bench_dice_question, _name))


# ----------------------------------------------------------------------------- whole-process rows
declare_process_scenarios(
    # the CLI rows validate and run it (one shot: 3d10 roll-under at skill 15, one point)
    cli={"game": GAME, "question": "roll_under", "seed": 1, "trials": 200_000,
         "params": {"skill": 15, "modifier": 0}},
    # the memory row runs it (an exploding pool of 10 dice, one point)
    memory={"game": GAME, "question": "pool", "seed": 1, "trials": 200_000,
            "params": {"dice": 10, "hit_on": 4, "double_on": 6, "explode_on": 6, "need": 4}},
    memory_describe="10-die exploding pool run",
    # the stop-latency row runs it with 10^9 trials and interrupts it
    stop=SCENARIO_ROOT / "dice" / "any_of_n.yaml",
)
