"""Shared helpers of the U-Boat Leader kernel tests: compile a question point, run its
kernel, compare samples with standard-error tolerances (tests/stat_checks.py conventions)."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from analyzer.core import questions
from analyzer.games.uboat_leader.compile import compile_engagement
from analyzer.games.uboat_leader.data import GameData
from analyzer.games.uboat_leader.escort_detection import tactics_chits
from analyzer.core.questions import Context
from analyzer.run.runner import CHUNK_TRIALS
from analyzer.core.scenario import validate_rules
from tests.stat_checks import MIN_EXPECTED, SIGMAS

ROOT = Path(__file__).resolve().parents[2]
SCEN = ROOT / "scenarios" / "uboat_leader"


def context(question, rules=None, scenario_dir=SCEN) -> Context:
    return Context(rules=validate_rules("test", question, rules or {}), scenario_dir=Path(scenario_dir),
                   game_dir=SCEN)


def prepare(name, params, rules=None, scenario_dir=SCEN):
    """(question, validated params, Prepared) of one point of ``uboat_leader/<name>``."""
    q = questions.get("uboat_leader", name)
    p = q.Params.model_validate(params)
    return q, p, q.prepare(p, context(q, rules, scenario_dir))


def run(prep, trials, seed=1, key=12345):
    """Per-metric summed histograms ``{name: counts}`` of ``trials`` kernel trials."""
    n_chunks = -(-trials // CHUNK_TRIALS)
    hist, _, _ = prep.run_kernel(seed, key, 0, n_chunks, CHUNK_TRIALS, trials)
    total = hist.sum(axis=0)
    return {m.name: total[i] for i, m in enumerate(prep.metrics)}


def run_acc(prep, trials, seed=1, key=12345):
    """``trials`` kernel trials merged as the runner merges them (histograms, moments, counters)."""
    from analyzer.core.stats import MetricAccumulator
    acc = MetricAccumulator(len(prep.metrics), prep.n_bins, len(prep.counters))
    acc.add_chunks(*prep.run_kernel(seed, key, 0, -(-trials // CHUNK_TRIALS), CHUNK_TRIALS, trials))
    return acc


def battle(params, rules=None, scenario_dir=SCEN):
    """The compiled engagement arrays of ``params`` (kernel-level tests)."""
    q = questions.get("uboat_leader", "engagement")
    p = q.Params.model_validate(params)
    ctx = context(q, rules, scenario_dir)
    gd = GameData(ctx)
    chits = tactics_chits(p.tactics, gd, ctx) if p.tactics != "none" else [0]
    return compile_engagement(p, ctx, gd, chits)


def moments(counts):
    counts = np.asarray(counts, float)
    n = counts.sum()
    v = np.arange(len(counts))
    mean = (v * counts).sum() / n
    var = ((v - mean) ** 2 * counts).sum() / (n - 1)
    return mean, var, n


def assert_means_agree(kernel_counts, sample, what=""):
    """Kernel mean vs a reference sample mean within SIGMAS combined standard errors."""
    mk, vk, nk = moments(kernel_counts)
    r = np.asarray(sample, float)
    mr, vr = r.mean(), r.var(ddof=1) if len(r) > 1 else 0.0
    se = math.sqrt(vk / nk + vr / len(r))
    if se == 0:
        assert mk == mr, f"{what}: {mk} vs {mr} with zero variance"
        return 0.0
    z = abs(mk - mr) / se
    assert z < SIGMAS, f"{what}: kernel {mk:.5g} vs reference {mr:.5g}: {z:.2f} combined SE"
    return z


def assert_distributions_agree(kernel_counts, sample, what=""):
    """Bin by bin, the reference sample's frequencies vs the kernel's, within SIGMAS combined
    binomial SEs; bins whose expected count in the reference sample is below MIN_EXPECTED
    are lumped into the tail bins (tests/stat_checks.lump_tail)."""
    kc = np.asarray(kernel_counts, float)
    r = np.asarray(sample, int)
    size = max(len(kc), int(r.max()) + 1)
    k = np.zeros(size)
    k[: len(kc)] = kc
    c = np.bincount(r, minlength=size).astype(float)
    nk, nr = k.sum(), len(r)
    p = k / nk
    lo, hi = 0, size - 1  # lump sparse tails (by the kernel's probability) from both ends
    while lo < hi and p[lo] * nr < MIN_EXPECTED:
        p[lo + 1] += p[lo]; c[lo + 1] += c[lo]; lo += 1  # noqa: E702
    while hi > lo and p[hi] * nr < MIN_EXPECTED:
        p[hi - 1] += p[hi]; c[hi - 1] += c[hi]; hi -= 1  # noqa: E702
    p, c = p[lo: hi + 1], c[lo: hi + 1]
    if len(p) == 1:
        return 0.0
    f = c / nr
    se = np.sqrt(np.maximum(p * (1 - p), 1e-12) * (1 / nr + 1 / nk))
    z = np.abs(f - p) / se
    worst = float(z.max())
    assert worst < SIGMAS, f"{what}: bin {int(z.argmax()) + lo} reference {f[z.argmax()]:.4f} vs kernel " \
                           f"{p[z.argmax()]:.4f}: {worst:.2f} combined SE"
    return worst


def assert_thread_count_independent(prep) -> None:
    """Three chunks (the last one short) on 1 and on 2 numba threads: bit-identical arrays."""
    import numba

    before = numba.get_num_threads()
    out = []
    try:
        for threads in (1, 2):
            numba.set_num_threads(threads)
            out.append(prep.run_kernel(7, 42, 0, 3, 4096, 3 * 4096 - 100))
    finally:
        numba.set_num_threads(before)
    for a, b in zip(out[0], out[1]):
        assert np.array_equal(a, b)

