"""Kernel-against-reference rows declared as data: a game's ``bench.py`` declares a
:class:`KernelBench` for each Monte-Carlo kernel its own benchmarks do not time, and
:func:`register_kernel_benches` makes each an ``analyzer bench NAME``.

Each row times one shipped scenario point: the point's kernel (all worker threads) against
the game's pure-Python reference (``analyzer/games/<game>/reference.py``: ``simulate``) playing
the same point (one thread), in interleaved rounds in one process
(:func:`analyzer.bench.harness.kernel_vs_reference`). (A kernel with no pure-Python
reference is timed by its game's own benchmark against what it declares, e.g. numpy vectorised.)

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
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

from analyzer.bench.harness import STATEFUL_TARGET, kernel_vs_reference, register_benchmark, row, scaled
from analyzer.core.questions import SCENARIO_ROOT

#: target ratio to the pure-Python reference by kind of kernel (see the module docstring)
TARGETS = {"stateful": STATEFUL_TARGET, "multi-shot": STATEFUL_TARGET, "single-step": 100}


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
                         reference_rate=out["reference_trials_per_s"], threads=out["threads"],
                         figures=out["figures"])]}


def register_kernel_benches(reference: str, benches: dict[str, KernelBench]) -> None:
    """Make each row of ``benches`` (name -> row) an ``analyzer bench NAME`` timed against the
    pure-Python reference module ``reference`` (a game's bench.py declares its rows with this)."""
    for name, spec in benches.items():
        path = SCENARIO_ROOT / spec.scenario
        declared = dict(questions=((spec.game, spec.question),), scenarios=(path,), references=(reference,),
                        quick_trials=spec.quick_trials, scaling=path if spec.scaling else None)
        register_benchmark(name, **declared)(partial(bench_kernel, name, spec, reference))
