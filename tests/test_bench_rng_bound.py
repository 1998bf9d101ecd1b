"""The bench figures of issue 32: draws per trial counted by the profiled driver (exact against a
kernel that counts its own draws), the production kernels untouched by it, the fraction of the
RNG bound and the 1-thread ratio as :func:`analyzer.bench.harness.compare` computes them, the
"contended"/"short" status, and the summary of the rows furthest from their bound. No timing is
asserted (timings are not tests)."""
from types import SimpleNamespace

import numpy as np
import pytest

from analyzer.bench import draws, harness
from analyzer.bench import suite as bench_suite
from analyzer.core import scenario as scenario_mod
from analyzer.core.questions import SCENARIO_ROOT
from analyzer.run.runner import prepare_point
from kernels import dice as dice_kernels
from kernels._jit import jit, parallel_jit
from kernels.driver import no_workspace, run_trials
from kernels.rng import next_u64

_LOW2 = np.uint64(3)
_ZERO = np.uint64(0)


@jit(cache=False)
def geometric_trial(state, values, counters, ws, args):
    """Draws until a draw's two low bits are 0 (a geometric number of draws, mean 4), at least
    ``args[0]`` draws; counts every draw in ``counters[0]``."""
    n = 0
    while True:
        x = next_u64(state)
        n += 1
        if n >= args[0] and (x & _LOW2) == _ZERO:
            break
    counters[0] += n
    values[0] = min(n, 15)


@parallel_jit(cache=False)
def geometric_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    return run_trials(geometric_trial, no_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                      1, n_bins, 1)


def _point(rel: str, at: int = 0):
    sc = scenario_mod.load(SCENARIO_ROOT / rel)
    return prepare_point(sc, sc.points[at])


def test_draws_per_trial_equal_the_draws_a_kernel_counts_itself():
    """The stream advance the profiled driver counts is the number of 64-bit draws: on a kernel
    that draws a random number of times and counts them, the two agree exactly (two chunks of
    the same streams), for two minimum draw counts."""
    for least in (1, 3):
        prepared = SimpleNamespace(kernel=geometric_kernel, n_bins=16, args=(least,))
        trials = 2 * 500
        _, _, counters = geometric_kernel(1, 7, 0, 2, trials // 2, trials, 16, (least,))
        assert draws.count_draws(prepared, trials) == counters[:, 0].sum() / trials
        assert draws.count_draws(prepared, trials) > least          # the geometric tail is there


def test_small_dice_share_a_draw_four_ways():
    """2d6 per trial from 16-bit lanes (kernels.rng.uniform_small): 4 dice per draw, so half a
    draw per trial, plus the rare rejected lane (2**16 mod 6 / 2**16 = 6.1e-5 of lanes)."""
    counted = draws.count_draws(_point("dice/any_of_n.yaml", 1), 8192)
    lanes = 2 * 8192
    assert 0.5 <= counted <= (lanes / (1 - 6.1e-5) / 4 + 2) / 8192


def test_profiling_leaves_the_production_kernel_and_its_results_as_they_were():
    """Building and running the profiled kernel changes neither the production dispatcher nor
    what it returns; a kernel with its own chunk loop is not profiled."""
    prepared = _point("dice/roll_under_3d10.yaml")
    before = prepared.run_kernel(3, 11, 0, 3, 4096, 10_000)
    profiled = draws.profiled_kernel(prepared.kernel)
    assert profiled is not None and profiled is not prepared.kernel
    profile = draws.profile(prepared, 5000, rounds=1)
    assert profile.draws_per_trial > 0 and profile.seconds_recorded > 0 and profile.seconds_per_draw > 0
    after = prepared.run_kernel(3, 11, 0, 3, 4096, 10_000)
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)
    assert draws.profiled_kernel(dice_kernels.pool_kernel) is None


def _figures(rates_1_a, rates_1_b, *, efficiency=0.9, cpu_share=0.95, seconds=1.0, draws_per_trial=None):
    profile = None if draws_per_trial is None else draws.Profile(draws_per_trial, 1e-6, 0.8e-6, 1e-9)
    return {"a": {"rate": 1000.0, "rates_1": rates_1_a, "efficiency": efficiency, "cpu_share": cpu_share,
                  "seconds": seconds},
            "b": {"rate": 10.0, "rates_1": rates_1_b, "efficiency": None, "cpu_share": None, "seconds": seconds},
            "_raw": {"rate": 4e6}, "_run": {"threads": 2, "load": 1.5, "profiles": {"a": profile}}}


def test_compare_takes_the_median_of_the_rounds_ratios_and_the_fraction_of_the_bound():
    f = harness.compare(_figures([500.0, 100.0, 600.0], [10.0, 10.0, 5.0], draws_per_trial=8.0), "a", "b")
    assert f["ratio"] == 100.0
    assert f["ratio_1_thread"] == 50.0                     # ratios 50, 10, 120: the median
    assert f["rng_fraction"] == 1000.0 * 8.0 / 4e6
    assert f["rng_share"] == pytest.approx(8.0 * 1e-9 / 1e-6)
    assert f["recording_share"] == pytest.approx(0.2)
    assert f["trial_share"] == pytest.approx(1 - 0.008 - 0.2)
    assert f["bound"] == "control flow and memory" and f["status"] == "ok" and f["load"] == 1.5
    assert harness.compare(_figures([1.0], [1.0]), "a", "b")["draws_per_trial"] is None


def test_a_row_is_contended_when_its_threads_lost_the_cores_and_short_when_too_brief():
    status = harness.row_status
    assert status(1.0, 0.5, 0.5) == "contended"
    assert status(0.001, 0.5, 0.5) == "contended"           # contended wins over short
    assert status(1.0, 0.5, 0.97) == "ok"                   # scales badly on its own: not contended
    assert status(1.0, 0.95, 0.5) == "ok"
    assert status(harness.SHORT_SECONDS / 2, 0.95, 0.97) == "short"
    assert status(1.0, None, None) == "ok"


def _row(name, fraction, bound="recording"):
    figures = {"rng_fraction": fraction, "draws_per_trial": 2.0, "bound": bound, "rng_share": 0.1,
               "recording_share": 0.5, "trial_share": 0.4}
    return harness.row(name, "w", 1.0, "trials/s", 1.0, 1.0, figures=figures)


def test_the_summary_names_the_three_rows_furthest_from_their_bound():
    rows = [_row("a", 0.5), _row("b", 0.01), _row("b:table-vs-dice", 0.001), _row("c", 0.2), _row("d", 0.05),
            harness.row("cli-help", "w", 0.2, "s", 0.2, 0.5, better="lower")]
    lines = bench_suite.bound_summary(rows)
    assert [ln.split(":")[0].strip() for ln in lines[1:]] == ["b", "d", "c"]
    assert "bound by recording" in lines[1]
    assert set(harness.FIGURE_KEYS) <= set(rows[-1]) and rows[-1]["status"] is None


def test_measure_times_a_kernel_on_every_thread_and_on_one_with_its_draws():
    """A real (tiny) measurement: every figure a row prints is there and consistent."""
    prepared = _point("dice/any_of_n.yaml", 1)
    prepared.run_kernel(1, 7, 0, 1, 64, 64)
    timed = harness.measure({"kernel": harness.Side(harness.prepared_runner(prepared), 20_000, prepared=prepared),
                             "other": harness.Side(lambda n: sum(range(n)), 20_000, threaded=False)}, rounds=2)
    f = harness.compare(timed, "kernel", "other")
    assert len(timed["kernel"]["rates_1"]) == 2 and f["ratio_1_thread"] > 0 and f["load"] >= 0
    assert f["draws_per_trial"] == draws.count_draws(prepared, draws.COUNT_TRIALS)
    assert f["rng_fraction"] == timed["kernel"]["rate"] * f["draws_per_trial"] / timed["_raw"]["rate"]
    assert f["status"] in ("ok", "short", "contended")


def test_a_command_named_first_loads_only_its_own_module_and_help_lists_every_command():
    """``analyzer list`` imports no other command's module (issue 32: its start-up is timed by
    the ``cli-list-vs-imports`` bench row); ``analyzer --help`` still lists every command."""
    import subprocess
    import sys

    from analyzer.cli.app import COMMAND_SOURCES

    code = ("import sys; sys.argv = ['analyzer'] + sys.argv[1:]\nfrom analyzer.cli.app import main\ntry:\n"
            "    main()\nexcept SystemExit:\n    pass\n"
            "print('LOADED', *sorted(m for m in sys.modules if m.startswith('analyzer.cli.')), file=sys.stderr)")
    res = subprocess.run([sys.executable, "-c", code, "list", "--json"], capture_output=True, text=True)
    loaded = [ln for ln in res.stderr.splitlines() if ln.startswith("LOADED")][0].split()[1:]
    assert set(loaded) == {"analyzer.cli.app", "analyzer.cli.common", "analyzer.cli.catalog"}, loaded
    helped = subprocess.run([sys.executable, "-c", code, "--help"], capture_output=True, text=True,
                            env={**__import__("os").environ, "COLUMNS": "200"}).stdout
    assert all(f" {name} " in helped for name in COMMAND_SOURCES), helped
