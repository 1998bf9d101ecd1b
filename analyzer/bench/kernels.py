"""``analyzer bench b17-gun-shot`` ... : a row for every Monte-Carlo kernel that its game's own
``bench`` module does not time.

Each row times one shipped scenario point: the point's kernel (all worker threads) against
the game's pure-Python reference ``tests/reference/<game>.py::simulate`` playing the same
point (one thread), in interleaved rounds in one process
(:func:`analyzer.bench.harness.kernel_vs_reference`). :data:`KERNEL_BENCHES` is the whole table
(bench name -> scenario, point, description, trial counts); :data:`BENCH_OF_QUESTION` names
the row of every question with a kernel, here or in a game's ``bench.py``, so a test can
check that no kernel goes without one.

The generic dice questions ``count`` and ``roll_under`` have no pure-Python reference
(their oracle in the tests is the exact distribution), so their rows compare with a numpy
vectorised implementation of the same rule, the reference issue 16 names for dice
primitives (as the ``dice`` rows do for the exploding pool).

Targets
-------
- ``stateful`` (a trial carries a state over several steps: a mission, a fire burning round
  after round, a damage sheet taking a salvo, a mine field or a pattern, a fire allocation
  over several targets, a wolfpack's join rolls) and ``multi-shot`` (many independent shots
  per trial: the gun matrix): 300x the pure-Python reference, issue 16's target.
- ``single-step`` (one roll, one test or one exchange per trial): 100x. Measured reason
  (2 cores, best of 7 in one process): the chunk driver alone, drawing one d6 and recording 5
  metrics, runs 1.96e8 trials/s on 2 threads, and the cheapest single-step reference
  (Breaking News ``shot`` at 40 cm: one die, 5 metrics) plays 1.03e6 trials/s, so no kernel on
  the driver can pass ~190x there (its kernel measured 175x); 100x is the round target below
  that ceiling, applied to every single-step row.
- A dice primitive against numpy vectorised: 10x, the target the suite sets for the exploding
  pool against numpy (``analyzer.bench.suite.rows_of``). It is within reach: the driver alone
  drawing 2d6 (3d10) and recording 2 metrics runs 5.9e8 (3.0e8) trials/s on 2 threads, numpy
  plays the same points at 4.5e7 (2.6e7) trials/s, ceilings of 13x and 11.5x.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numba
import numpy as np

from analyzer.bench.harness import interleaved_best, kernel_vs_reference, register_benchmark, say
from analyzer.core.questions import SCENARIO_ROOT

#: target ratio to the pure-Python reference by kind of kernel (see the module docstring)
TARGETS = {"stateful": 300, "multi-shot": 300, "single-step": 100}
#: a dice primitive's kernel against numpy vectorised (see the module docstring)
NUMPY_TARGET = 10
#: the reference's data folder inside ``scenarios/<game>/`` when it is not the game folder itself
REFERENCE_DATA = {"breaking_news": "data"}


@dataclass(frozen=True)
class KernelBench:
    """One row: ``scenario`` (under ``scenarios/``) at the sweep point whose swept values are
    ``at`` ({} = the first point); ``trials`` kernel trials in a full run and ``quick_trials``
    in ``--quick``; ``ref_trials`` reference trials in a full run, scaled with the kernel's in
    a quick one (about a third of a second a round in a full run)."""

    game: str
    question: str
    scenario: str
    describe: str
    kind: str
    trials: int
    quick_trials: int
    ref_trials: int
    at: dict = field(default_factory=dict)

    @property
    def target(self) -> float:
        return TARGETS[self.kind]


_M = 1_000_000
KERNEL_BENCHES: dict[str, KernelBench] = {
    # --- B-17 Queen of the Skies
    "b17-gun-shot": KernelBench(
        "b17", "gun_shot", "b17/gun_shot_skill15.yaml", "one gun, skill 15, one shot at a fighter (3d10 roll-under)",
        "single-step", 20 * _M, 2 * _M, 120_000),
    "b17-gun-matrix": KernelBench(
        "b17", "gun_matrix", "b17/gun_matrix_skills.yaml", "every gun x position cell against an Me109, skill 15",
        "multi-shot", 2 * _M, 200_000, 1_000, {"fighter": "Me109", "skill": 15}),
    "b17-mission": KernelBench(
        "b17", "mission", "b17/mission_5_waves.yaml", "a five-wave mission, fighters firing back (placeholder 3d10)",
        "stateful", 500_000, 50_000, 500, {"fighter_fire.model": "placeholder_3d10"}),
    # --- Breaking News
    "bn-shot": KernelBench(
        "breaking_news", "shot", "breaking_news/shot_fanatic_burst.yaml",
        "a fanatic's assault-rifle burst at 40 cm against a dodging veteran", "single-step", 20 * _M, 2 * _M,
        300_000),
    "bn-cover-fire": KernelBench(
        "breaking_news", "cover_fire", "breaking_news/cover_fire_example.yaml",
        "elite cover fire (assault rifle + LMG) against a militia figure in a bunker", "single-step", 20 * _M,
        2 * _M, 200_000),
    "bn-melee": KernelBench(
        "breaking_news", "melee", "breaking_news/melee_odds.yaml", "two militia against a veteran, ties rolled again",
        "single-step", 20 * _M, 2 * _M, 200_000,
        {"attackers": [{"quality": "militia"}, {"quality": "militia"}], "defender.shocked": False}),
    "bn-morale": KernelBench(
        "breaking_news", "morale", "breaking_news/morale_platoon_example.yaml",
        "a veteran team's morale test after 3 casualties, 4 teams under half", "single-step", 20 * _M, 2 * _M,
        100_000),
    "bn-building-assault": KernelBench(
        "breaking_news", "building_assault", "breaking_news/building_assault_example.yaml",
        "7 elite attackers against 4 militia inside a building", "single-step", 20 * _M, 2 * _M, 40_000),
    "bn-points-efficiency": KernelBench(
        "breaking_news", "points_efficiency", "breaking_news/points_efficiency.yaml",
        "a veteran with an assault rifle against the reference targets at 20/40/80 cm", "single-step", 20 * _M,
        2 * _M, 30_000, {"unit": {"quality": "veteran", "weapons": ["assault_rifle"]}}),
    # --- Dystopian Wars
    "dw-attack": KernelBench(
        "dystopian_wars", "attack", "dystopian_wars/attack_ad10.yaml",
        "10 attack dice (primary, range band 2) against DR 5 / CR 8 / 6 HP (Monte-Carlo side)", "single-step",
        20 * _M, 2 * _M, 60_000),
    "dw-boarding": KernelBench(
        "dystopian_wars", "boarding", "dystopian_wars/boarding_ap_sweep.yaml",
        "4 AP boarding 4 AP through 3 defence dice", "single-step", 20 * _M, 2 * _M, 60_000,
        {"attacker_ap": 4, "defender_ap": 4}),
    "dw-collision": KernelBench(
        "dystopian_wars", "collision", "dystopian_wars/collision_terrain.yaml",
        "a cruiser colliding with light terrain", "single-step", 20 * _M, 2 * _M, 130_000, {"terrain": "light"}),
    "dw-ram": KernelBench(
        "dystopian_wars", "ram", "dystopian_wars/ram_battleship_vs_cruiser.yaml",
        "a battleship ramming an undamaged cruiser", "single-step", 20 * _M, 2 * _M, 80_000, {"rammed.hp_lost": 0}),
    "dw-rout-test": KernelBench(
        "dystopian_wars", "rout_test", "dystopian_wars/rout_test_table.yaml",
        "a squadron of 4 after losing 1 model, in command", "single-step", 20 * _M, 2 * _M, 300_000,
        {"models_lost": 1, "commodore_lost": False, "out_of_command": False}),
    "dw-fire-allocation": KernelBench(
        "dystopian_wars", "fire_allocation", "dystopian_wars/fire_allocation_turrets_vs_frigates.yaml",
        "two AD 13 turrets, every allocation over 4 frigates", "stateful", 1 * _M, 100_000, 1_000),
    # --- HACSE naval
    "hacse-depth-charge-pattern": KernelBench(
        "hacse_naval", "depth_charge_pattern", "hacse_naval/pattern_six_charges_unknown_depth.yaml",
        "six charges at depths 1-3 against a Type VIIC at an unknown depth", "stateful", 300_000, 30_000, 300),
    "hacse-fire": KernelBench(
        "hacse_naval", "fire", "hacse_naval/fire_by_base_number.yaml",
        "a fire aboard a destroyer (hex 1, base number 5) burning until put out", "stateful", 5 * _M, 500_000,
        10_000, {"base_number": 5, "rules.fire_extinguish": "overroll"}),
    "hacse-mine-field": KernelBench(
        "hacse_naval", "mine_field", "hacse_naval/mine_field_crossing.yaml",
        "a destroyer crossing 6 hexes of a 20% mine field", "stateful", 5 * _M, 500_000, 10_000, {"density": 0.2}),
    "hacse-sighting": KernelBench(
        "hacse_naval", "sighting", "hacse_naval/sighting_asdic_vs_sonar.yaml",
        "ASDIC at speed 4 against a U-boat at depth 2, distance 3, up to 3 rounds", "single-step", 10 * _M,
        1 * _M, 10_000, {"sensor": "asdic", "sub_depth": 2, "distance": 3}),
    "hacse-torpedo-salvo": KernelBench(
        "hacse_naval", "torpedo_salvo", "hacse_naval/torpedo_destroyer_salvo.yaml",
        "4 torpedoes at a destroyer, each hitting with probability 0.5", "stateful", 5 * _M, 500_000, 10_000,
        {"hit_probability": 0.5}),
    # --- U-Boat Leader
    "uboat-escort-detection": KernelBench(
        "uboat_leader", "escort_detection", "uboat_leader/escort_detection_example.yaml",
        "one escort against a surfaced U-boat at range 3, 1 Alerted marker", "single-step", 20 * _M, 2 * _M,
        80_000),
    "uboat-wolfpack": KernelBench(
        "uboat_leader", "wolfpack", "uboat_leader/wolfpack_size.yaml", "3 candidates rolling to join the pack",
        "stateful", 20 * _M, 2 * _M, 100_000, {"candidates": 3}),
}


def point_index(scenario, at: dict) -> int:
    """The index of the sweep point whose swept values are ``at`` (the first point when {})."""
    if not at:
        return 0
    for i, pt in enumerate(scenario.points):
        if pt.swept == at:
            return i
    raise KeyError(f"{scenario.path}: no sweep point with {at}; points: {[pt.swept for pt in scenario.points]}")


def scaled(full: int, trials: int | None, full_trials: int, floor: int = 50) -> int:
    """``full`` scaled by ``trials / full_trials`` (a quick run keeps the full run's time split)."""
    return full if trials is None else max(floor, round(full * trials / full_trials))


def bench_kernel(name: str, trials: int | None = None, console=None) -> dict:
    """The row of :data:`KERNEL_BENCHES` ``name``: kernel trials/s vs the pure-Python reference."""
    from analyzer.core import scenario as scenario_mod
    from analyzer.bench.suite import row

    spec = KERNEL_BENCHES[name]
    path = SCENARIO_ROOT / spec.scenario
    sc = scenario_mod.load(path)
    if (sc.spec.game, sc.spec.question) != (spec.game, spec.question):
        raise ValueError(f"bench {name}: {path} asks {sc.spec.game}/{sc.spec.question}, "
                         f"the table says {spec.game}/{spec.question}")
    point = point_index(sc, spec.at)
    n = trials or spec.trials
    n_ref = scaled(spec.ref_trials, trials, spec.trials)
    data_dir = path.parent / REFERENCE_DATA.get(spec.game, "")
    where = f"{spec.scenario} point {point}" + (f" ({', '.join(f'{k}={v}' for k, v in spec.at.items())})"
                                                if spec.at else "")
    out = kernel_vs_reference(path, point=point, game=spec.game, question=spec.question, trials=n, ref_trials=n_ref,
                              target=spec.target, describe=f"{spec.describe}; {where}", data_dir=data_dir,
                              console=console)
    what = (f"{spec.question} kernel ({spec.kind}) trials/s vs tests/reference/{spec.game}.py on {where}: "
            f"{spec.describe}")
    return {"rows": [row(name, what, out["kernel_trials_per_s"], "trials/s", out["ratio"], spec.target,
                         reference=f"pure-Python reference tests/reference/{spec.game}.py",
                         reference_rate=out["reference_trials_per_s"], threads=out["threads"])]}


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
DICE_TRIALS, DICE_QUICK_TRIALS, DICE_NUMPY_TRIALS = 20 * _M, 2 * _M, 1 * _M


def bench_dice_question(name: str, trials: int | None = None, console=None) -> dict:
    """Trials/s of a generic dice question's kernel and of numpy vectorised on the same point."""
    from analyzer.core import scenario as scenario_mod
    from analyzer.bench.suite import row
    from analyzer.run.runner import BATCH_CHUNKS, CHUNK_TRIALS, prepare_point

    question, rel, at, numpy_fn, describe = DICE_BENCHES[name]
    sc = scenario_mod.load(SCENARIO_ROOT / rel)
    point = point_index(sc, at)
    pt = sc.points[point]
    prep = prepare_point(sc, pt)
    prep.run_kernel(1, 7, 0, 2, 64, 128)                      # compile (or load) outside the timing
    n = trials or DICE_TRIALS
    n_np = min(n, DICE_NUMPY_TRIALS)
    n_chunks = -(-n // CHUNK_TRIALS)
    params = pt.params.model_dump()

    def kernel():
        for lo in range(0, n_chunks, BATCH_CHUNKS):
            prep.run_kernel(1, 7, lo, min(lo + BATCH_CHUNKS, n_chunks), CHUNK_TRIALS, n)

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


# ----------------------------------------------------------------------------- registration
#: (game, question) -> the bench row that times its kernel: here, or in the game's bench.py
#: (a row of that name, or named ``name:...``). Every question whose prepared points carry a
#: kernel must appear (tests/test_bench_suite.py derives the questions from the registry).
BENCH_OF_QUESTION: dict[tuple[str, str], str] = {
    ("b17", "attack_wave"): "b17-attack-wave",              # analyzer/games/b17/bench.py
    ("breaking_news", "firefight"): "bn-firefight",         # analyzer/games/breaking_news/bench.py
    ("dice", "pool"): "dice-pool-vs-numpy",                 # analyzer/bench/harness.py ("dice")
    ("dystopian_wars", "duel"): "dw-duel",                  # analyzer/games/dystopian_wars/bench.py
    ("hacse_naval", "depth_charge"): "hacse-depth-charge",  # analyzer/games/hacse_naval/bench.py
    ("uboat_leader", "engagement"): "uboat-engagement",     # analyzer/games/uboat_leader/bench.py
    ("uboat_leader", "campaign"): "uboat-campaign",
    ("uboat_leader", "loadout"): "uboat-loadout",
    **{(spec.game, spec.question): name for name, spec in KERNEL_BENCHES.items()},
    **{("dice", question): name for name, (question, *_rest) in DICE_BENCHES.items()},
}


#: kernel trials of each row in ``analyzer bench --quick`` (read by analyzer.bench.suite)
QUICK_TRIALS: dict[str, int] = {**{name: spec.quick_trials for name, spec in KERNEL_BENCHES.items()},
                                **{name: DICE_QUICK_TRIALS for name in DICE_BENCHES}}


def _register(name: str, fn) -> None:
    @register_benchmark(name)
    def _bench_cli(console=None, trials: int | None = None) -> dict:
        return fn(name, trials, console)


for _name in KERNEL_BENCHES:
    _register(_name, bench_kernel)
for _name in DICE_BENCHES:
    _register(_name, bench_dice_question)
