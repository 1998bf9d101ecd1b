"""Benchmarks of Dystopian Wars (``analyzer bench dw-duel``, ``analyzer bench dw-attack-exact``).

Every figure is measured in the same run as the figure it is compared with:

- ``dw-duel``: the duel kernel's trials/s on the shipped battleship-vs-three-cruisers
  scenario against the slow pure-Python reference (``reference.py`` beside this module)
  on the same scenario (target ratio >= 300).
- ``balance-matchup``: ``analyzer matchup`` of six DW fleets (36 ordered pairs on common random
  numbers, ratings with 200 bootstrap resamples) against the same pairs as 15 separate
  ``compare`` calls (each unordered pair in both seats), as trials/s (target >= 0.9: the matrix
  costs no more than the pairwise comparisons it replaces).
- ``dw-attack-exact``: exact mode of ``attack`` for a 40-die query (prepare + every metric)
  against icepool computing only the hits distribution of the same 40 dice, with its
  explosion depth set to the same 1e-15 tail (target: under a tenth of icepool's time).
- ``dask``: the Dask backend on the duel (:mod:`analyzer.bench.cluster`), and the kernel rows of
  the other Dystopian Wars kernels (:func:`analyzer.bench.kernels.register_kernel_benches`).
"""
from __future__ import annotations


import numba
import numpy as np

from analyzer.bench.cluster import register_dask_benchmark
from analyzer.bench.harness import (STATEFUL_TARGET, best_time, interleaved_best, load_reference, register_benchmark,
                                    row, sampling_rows, say, scaled)
from analyzer.bench.kernels import KernelBench, register_kernel_benches
from analyzer.core.questions import SCENARIO_ROOT
from analyzer.run.runner import CHUNK_TRIALS

#: the pure-Python reference (ships with the game, not imported with it)
REFERENCE = f"{__package__}.reference"
DUEL_SCENARIO = SCENARIO_ROOT / "dystopian_wars" / "duel_battleship_vs_cruisers.yaml"
#: kernel and reference trials of a full duel run
DUEL_TRIALS, DUEL_REF_TRIALS = 2_000_000, 4000


def bench_duel(trials: int = DUEL_TRIALS, ref_trials: int = DUEL_REF_TRIALS, console=None) -> dict:
    """The duel kernel with ``sampling: table`` (one draw per attack) and ``sampling: dice``
    (die by die) against the pure-Python reference, all timed in interleaved rounds
    (:func:`analyzer.bench.harness.sampling_rows`)."""
    import yaml

    from analyzer.core import scenario as scenario_mod
    from analyzer.run.runner import point_key, prepare_point

    prepared = {}
    for sampling in ("table", "dice"):
        sc = scenario_mod.load(DUEL_SCENARIO, trials=trials)
        point = sc.points[0]
        point.rules["sampling"] = sampling
        prepared[sampling] = prepare_point(sc, point)
        key = point_key(sc, point)
        prepared[sampling].run_kernel(sc.spec.seed, key, 0, 2, CHUNK_TRIALS, 2 * CHUNK_TRIALS)  # compile / load
    ref = load_reference(REFERENCE)
    raw = yaml.safe_load(DUEL_SCENARIO.read_text())
    data = ref.load_data()
    say(console, f"threads: {numba.get_num_threads()}  scenario: {DUEL_SCENARIO.name} (battleship vs three cruisers, "
                 f"closing from 30in)")
    rows, _ = sampling_rows("dw-duel", "duel kernel", prepared["table"], prepared["dice"],
                            lambda n: ref.simulate("duel", raw["params"], raw.get("rules") or {}, data, n, 1), trials,
                            ref_trials, STATEFUL_TARGET, "one draw per attack vs die by die", console)
    return {"rows": rows}


def bench_attack_exact(n_dice: int = 40, console=None) -> dict:
    import icepool

    from analyzer.core.exact import EXPLOSION_TAIL
    from analyzer.games.dystopian_wars.attack import Attack
    from analyzer.core.questions import Context

    q = Attack()
    params = q.Params.model_validate({"attack_dice": n_dice, "weapon": "primary", "range_band": 2,
                                      "target": {"size": "medium", "dr": 15, "cr": 25, "hp": 8}})
    rules = {o.name: o.default for o in q.rule_options}
    game_dir = SCENARIO_ROOT / "dystopian_wars"

    def ours():
        prepared = q.prepare(params, Context(rules=rules, scenario_dir=game_dir, game_dir=game_dir))
        return prepared.exact()

    # icepool: one die = 0 (1-3), 1 (4-5), 2 (6) exploding on the 2, to the same 1e-15 tail
    depth = int(np.ceil(np.log(EXPLOSION_TAIL) / np.log(1 / 6)))

    def theirs(d=depth):
        pool = n_dice @ icepool.Die({0: 3, 1: 2, 2: 1}).explode([2], depth=d)
        return pool.probabilities()

    answer = ours()
    t_ours = best_time(ours, 20)
    t_ice = best_time(theirs, 3)
    t_ice_default = best_time(lambda: theirs(9), 3)
    ice = theirs()
    ice_probs = np.array([float(p) for p in ice], float)
    ours_probs = answer["hits"].probs
    size = max(ice_probs.shape[0], ours_probs.shape[0])
    diff = np.abs(np.pad(ice_probs, (0, size - ice_probs.shape[0])) - np.pad(ours_probs, (0, size - ours_probs.shape[0])))
    out = {"ours_s": t_ours, "icepool_s": t_ice, "icepool_default_depth_s": t_ice_default,
           "fraction_of_icepool": t_ours / t_ice, "max_abs_diff": float(diff.max())}
    for line in (
        f"query: {n_dice} dice at 4+ (6 = 2 hits + extra die), DR 15 / CR 25: every attack metric",
        f"attack exact mode (prepare + all metrics): {t_ours * 1e3:9.3f} ms  (best of 20)",
        f"icepool, hits distribution only, depth {depth}: {t_ice * 1e3:9.3f} ms  (same 1e-15 tail; best of 3)",
        f"icepool, default explode depth 9:         {t_ice_default * 1e3:9.3f} ms",
        f"ours / icepool:                            {out['fraction_of_icepool']:.4f}  (target < 0.1)",
        f"largest |P(hits = k)| difference:          {out['max_abs_diff']:.1e}",
    ):
        say(console, line)
    return out


@register_benchmark("dw-duel", questions=(("dystopian_wars", "duel"),), scenarios=(DUEL_SCENARIO,),
                    references=(REFERENCE,), scaling=DUEL_SCENARIO)
def _bench_duel_cli(console=None, trials: int | None = None) -> dict:
    return bench_duel(trials or DUEL_TRIALS, scaled(DUEL_REF_TRIALS, trials, DUEL_TRIALS), console)


register_dask_benchmark(DUEL_SCENARIO)          # analyzer bench dask: the Dask backend on the duel


@register_benchmark("dw-attack-exact", requires=("icepool",))
def _bench_attack_exact_cli(console=None, trials: int | None = None) -> dict:
    return bench_attack_exact(40, console)


#: the six fleets of the ``balance-matchup`` benchmark (placeholder profiles of fleets/generic_naval.yaml)
MATCHUP_FLEETS = {
    "battleship": [{"models": [{"profile": "battleship", "commodore": True}]}],
    "three_cruisers": [{"models": [{"profile": "cruiser", "count": 3}]}],
    "two_cruisers": [{"models": [{"profile": "cruiser", "count": 2}]}],
    "six_frigates": [{"models": [{"profile": "frigate", "count": 6}]}],
    "four_frigates": [{"models": [{"profile": "frigate", "count": 4}]}],
    "cruiser_and_frigates": [{"models": [{"profile": "cruiser", "commodore": True}]},
                             {"models": [{"profile": "frigate", "count": 3}]}],
}


def bench_balance_matchup(trials: int = 100_000, console=None, rounds: int = 1) -> dict:
    """Six-fleet duel matchup (``analyzer.analyses.balance.matchup``: run + ratings) vs the same ordered pairs as
    separate ``api.compare`` calls (pair i-j as A, j-i as B), trials/s of each, interleaved."""
    import tempfile
    from pathlib import Path

    import yaml

    from analyzer import api
    from analyzer.analyses.balance import matchup
    from analyzer.core import scenario as scenario_mod

    base = {"game": "dystopian_wars", "question": "duel", "seed": 1, "trials": trials,
            "params": {"range": {"mode": "closing", "start": 30, "min_distance": 4},
                       "target_policy": {"a": "weakest", "b": "weakest"}, "max_turns": 6}}
    names = list(MATCHUP_FLEETS)
    with tempfile.TemporaryDirectory(prefix="bench-matchup-") as tmp:
        folder = Path(tmp)
        doc = dict(base, params=dict(base["params"], side_a={"squadrons": MATCHUP_FLEETS[names[0]]},
                                     side_b={"squadrons": MATCHUP_FLEETS[names[1]]}),
                   contenders=[{"name": n, "side": {"squadrons": MATCHUP_FLEETS[n]}} for n in names])
        (folder / "matchup.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
        pairs = []
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                files = []
                for x, y in ((a, b), (b, a)):
                    f = folder / f"{x}-vs-{y}.yaml"
                    f.write_text(yaml.safe_dump(dict(base, params=dict(base["params"],
                                                                       side_a={"squadrons": MATCHUP_FLEETS[x]},
                                                                       side_b={"squadrons": MATCHUP_FLEETS[y]}))))
                    files.append(f)
                pairs.append(files)
        matchup.run(folder / "matchup.yaml", trials=MIN_TRIALS)        # compile / load the kernel outside timing
        done = {}

        def run_matchup():
            m = matchup.run(folder / "matchup.yaml")
            done["ratings"] = matchup.ratings(m)
            done["matchup_trials"] = m.kernel_trials

        def run_compares():
            for fa, fb in pairs:
                api.compare(scenario_mod.load(fa), scenario_mod.load(fb))

        t_matchup, t_compare = interleaved_best([run_matchup, run_compares], rounds)
    m_rate = done["matchup_trials"] / t_matchup
    c_rate = 2 * len(pairs) * trials / t_compare
    threads = numba.get_num_threads()
    for line in (
        f"threads: {threads}  six DW fleets, {trials:,} trials per ordered pair",
        f"matchup (36 ordered pairs + ratings): {t_matchup:.2f} s, {m_rate:,.0f} trials/s",
        f"15 compare calls (30 ordered pairs):  {t_compare:.2f} s, {c_rate:,.0f} trials/s",
        f"ratio matchup / compare trials/s:     {m_rate / c_rate:.2f}  (target >= 0.9)",
    ):
        say(console, line)
    return {"rows": [row("balance-matchup", f"6-fleet DW duel matchup trials/s, {trials:,} trials per pair "
                         f"(wall {t_matchup:.1f} s) vs the pairs as 15 separate compare calls", m_rate, "trials/s",
                         m_rate / c_rate, 0.9, reference="api.compare per unordered pair", reference_rate=c_rate)]}


#: the warm-up matchup's trials per pair (the fewest a matchup accepts)
MIN_TRIALS = 64


@register_benchmark("balance-matchup", quick_trials=10_000)
def _bench_balance_matchup_cli(console=None, trials: int | None = None) -> dict:
    n = trials or 100_000
    return bench_balance_matchup(n, console, rounds=2 if n >= 50_000 else 1)   # --quick: one round


_M = 1_000_000
register_kernel_benches(REFERENCE, {
    "dw-attack": KernelBench(
        "dystopian_wars", "attack", "dystopian_wars/attack_ad10.yaml",
        "10 attack dice (primary, range band 2) against DR 5 / CR 8 / 6 HP (Monte-Carlo side)", "single-step",
        20 * _M, 2 * _M, 60_000, scaling=True),
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
})
