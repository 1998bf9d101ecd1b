"""Kernel-against-reference rows declared as data: a game's ``bench.py`` declares a
:class:`KernelBench` for each Monte-Carlo kernel its own benchmarks do not time, and
:func:`register_kernel_benches` makes each an ``analyzer bench NAME``.

Each row times one shipped scenario point: the point's kernel (all worker threads) against
the game's pure-Python reference (``analyzer/games/<game>/reference.py``: ``simulate``) playing
the same point (one thread), in interleaved rounds in one process
(:func:`analyzer.bench.harness.kernel_vs_reference`).

The generic dice questions ``count`` and ``roll_under`` have no pure-Python reference
(their oracle in the tests is the exact distribution), so their rows, declared here, compare
with a numpy vectorised implementation of the same rule, the reference issue 16 names for dice
primitives (as the ``dice`` rows do for the exploding pool).

Targets
-------
- ``stateful`` (a trial carries a state over several steps: a mission, a fire burning round
  after round, a damage sheet taking a salvo, a mine field or a pattern, a fire allocation
  over several targets, a wolfpack's join rolls) and ``multi-shot`` (many independent shots
  per trial: the gun matrix): 300x the pure-Python reference, issue 16's target.
- ``single-step`` (one roll, one test or one exchange per trial): 100x. Measured reason
  (2 cores, best of 7 in one process): the chunk driver alone, drawing one d6 and recording 5
  metrics, runs 1.96e8 trials/s on 2 threads, and the cheapest single-step reference (one shot
  at 40 cm: one die, 5 metrics) plays 1.03e6 trials/s, so no kernel on the driver can pass
  ~190x there (its kernel measured 175x); 100x is the round target below that ceiling,
  applied to every single-step row.
- A dice primitive against numpy vectorised: 10x, the target the suite sets for the exploding
  pool against numpy (``analyzer.bench.suite.rows_of``). It is within reach: the driver alone
  drawing 2d6 (3d10) and recording 2 metrics runs 5.9e8 (3.0e8) trials/s on 2 threads, numpy
  plays the same points at 4.5e7 (2.6e7) trials/s, ceilings of 13x and 11.5x.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

import numba
import numpy as np

from analyzer.bench.harness import (STATEFUL_TARGET, interleaved_best, kernel_vs_reference, register_benchmark, row,
                                    say, scaled)
from analyzer.core.questions import SCENARIO_ROOT

#: target ratio to the pure-Python reference by kind of kernel (see the module docstring)
TARGETS = {"stateful": STATEFUL_TARGET, "multi-shot": STATEFUL_TARGET, "single-step": 100}
#: a dice primitive's kernel against numpy vectorised (see the module docstring)
NUMPY_TARGET = 10


@dataclass(frozen=True)
class KernelBench:
    """One row: ``scenario`` (a path under ``scenarios/``, or an absolute one) at the sweep
    point whose swept values are ``at`` ({} = the first point); ``trials`` kernel trials in a
    full run and ``quick_trials`` in ``--quick``; ``ref_trials`` reference trials in a full run,
    scaled with the kernel's in a quick one (about a third of a second a round in a full run).
    The reference reads its data from the scenario's folder, or its subfolder
    ``reference_data``; ``scaling``: the row's kernel also gets a thread-scaling row on
    ``scenario``'s first point."""

    game: str
    question: str
    scenario: str
    describe: str
    kind: str
    trials: int
    quick_trials: int
    ref_trials: int
    at: dict = field(default_factory=dict)
    reference_data: str = ""
    scaling: bool = False

    @property
    def target(self) -> float:
        return TARGETS[self.kind]


def point_index(scenario, at: dict) -> int:
    """The index of the sweep point whose swept values are ``at`` (the first point when {})."""
    if not at:
        return 0
    for i, pt in enumerate(scenario.points):
        if pt.swept == at:
            return i
    raise KeyError(f"{scenario.path}: no sweep point with {at}; points: {[pt.swept for pt in scenario.points]}")


def bench_kernel(name: str, spec: KernelBench, reference: str, console=None, trials: int | None = None) -> dict:
    """The row ``name``: ``spec``'s kernel trials/s vs the pure-Python reference module ``reference``."""
    from analyzer.core import scenario as scenario_mod

    path = SCENARIO_ROOT / spec.scenario
    sc = scenario_mod.load(path)
    if (sc.spec.game, sc.spec.question) != (spec.game, spec.question):
        raise ValueError(f"bench {name}: {path} asks {sc.spec.game}/{sc.spec.question}, "
                         f"the row says {spec.game}/{spec.question}")
    point = point_index(sc, spec.at)
    n = trials or spec.trials
    n_ref = scaled(spec.ref_trials, trials, spec.trials)
    where = f"{spec.scenario} point {point}" + (f" ({', '.join(f'{k}={v}' for k, v in spec.at.items())})"
                                                if spec.at else "")
    out = kernel_vs_reference(path, point=point, question=spec.question, reference=reference, trials=n,
                              ref_trials=n_ref, target=spec.target, describe=f"{spec.describe}; {where}",
                              data_dir=path.parent / spec.reference_data, console=console)
    what = f"{spec.question} kernel ({spec.kind}) trials/s vs {reference} on {where}: {spec.describe}"
    return {"rows": [row(name, what, out["kernel_trials_per_s"], "trials/s", out["ratio"], spec.target,
                         reference=f"pure-Python reference {reference}",
                         reference_rate=out["reference_trials_per_s"], threads=out["threads"])]}


def register_kernel_benches(reference: str, benches: dict[str, KernelBench]) -> None:
    """Make each row of ``benches`` (name -> row) an ``analyzer bench NAME`` timed against the
    pure-Python reference module ``reference`` (a game's bench.py declares its rows with this)."""
    for name, spec in benches.items():
        path = SCENARIO_ROOT / spec.scenario
        declared = dict(questions=((spec.game, spec.question),), scenarios=(path,), references=(reference,),
                        quick_trials=spec.quick_trials, scaling=path if spec.scaling else None)
        register_benchmark(name, **declared)(partial(bench_kernel, name, spec, reference))


# ----------------------------------------------------------------------------- dice primitives vs numpy
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
    from analyzer.run.batches import run_batches
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

    def kernel():
        for _ in run_batches(prep, n, seed=1, key=7):
            pass

    def vectorised():
        numpy_fn(np.random.default_rng(1), n_np, n_bins=prep.n_bins, **params)

    t_kernel, t_np = interleaved_best([kernel, vectorised], 3)
    rate, np_rate = n / t_kernel, n_np / t_np
    threads = numba.get_num_threads()
    where = f"{rel} point {point} ({', '.join(f'{k}={v}' for k, v in at.items())})"
    for line in (f"threads: {threads}  {describe}; {where}",
                 f"{question} kernel trials/s:          {rate:,.0f}  ({n:,} trials, best of 3)",
                 f"numpy vectorised trials/s:         {np_rate:,.0f}  ({n_np:,} trials, best of 3)",
                 f"ratio kernel / numpy:              {rate / np_rate:,.1f}  (target >= {NUMPY_TARGET:g})"):
        say(console, line)
    what = (f"{question} kernel trials/s vs numpy vectorised (no pure-Python reference exists for the generic "
            f"dice questions) on {where}: {describe}")
    return {"rows": [row(name, what, rate, "trials/s", rate / np_rate, NUMPY_TARGET,
                         reference="numpy vectorised (analyzer.bench.kernels)", reference_rate=np_rate,
                         threads=threads)]}


for _name, (_question, _rel, *_rest) in DICE_BENCHES.items():
    register_benchmark(_name, questions=(("dice", _question),), scenarios=(SCENARIO_ROOT / _rel,),
                       quick_trials=DICE_QUICK_TRIALS)(partial(bench_dice_question, _name))
