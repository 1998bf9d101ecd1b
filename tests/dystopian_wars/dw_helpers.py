"""Shared helpers of the Dystopian Wars kernel tests: run a question's kernel through its
``Prepared``, and compare Monte-Carlo results with exact answers or with the reference's
per-trial samples (tolerances from standard errors, tests/stat_checks.py)."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from analyzer.core import questions
from analyzer.core.questions import Context
from analyzer.run.runner import BATCH_CHUNKS, CHUNK_TRIALS
from analyzer.core.stats import MetricAccumulator
from tests.stat_checks import MIN_EXPECTED, SIGMAS, assert_histogram_matches, assert_mean_matches

GAME = "dystopian_wars"
ROOT = Path(__file__).resolve().parents[2]
GAME_DIR = ROOT / "scenarios" / GAME
SEED = 20261129


def rules_for(question: str, rules: dict | None = None) -> dict:
    q = questions.get(GAME, question)
    out = {o.name: o.default for o in q.rule_options}
    out.update(rules or {})
    return out


def prepare(question: str, params: dict, rules: dict | None = None, scenario_dir: Path = GAME_DIR):
    """(Prepared, Context) of one parameter set, as the runner compiles a sweep point."""
    q = questions.get(GAME, question)
    ctx = Context(rules=rules_for(question, rules), scenario_dir=Path(scenario_dir), game_dir=GAME_DIR)
    return q.prepare(q.Params.model_validate(params), ctx), ctx


def simulate(prepared, trials: int, seed: int = SEED, key: int = 7) -> MetricAccumulator:
    """The kernel's sums over ``trials``, counters included (a ranking's pair sums are counters)."""
    acc = MetricAccumulator(len(prepared.metrics), prepared.n_bins, len(prepared.counters))
    n_chunks = -(-trials // CHUNK_TRIALS)
    for lo in range(0, n_chunks, BATCH_CHUNKS):
        hist, moments, counters = prepared.run_kernel(seed, key, lo, min(lo + BATCH_CHUNKS, n_chunks), CHUNK_TRIALS,
                                                      trials)
        acc.add_chunks(hist, moments, counters)
    return acc


def run(question: str, params: dict, rules: dict | None = None, trials: int = 40_000, seed: int = SEED):
    prepared, _ = prepare(question, params, rules)
    return prepared, simulate(prepared, trials, seed)


def summary(prepared, acc: MetricAccumulator, name: str):
    m = [x.name for x in prepared.metrics].index(name)
    metric = prepared.metrics[m]
    return acc.summary(m, metric.scale, metric.is_probability), acc.hist[m]


def assert_matches_exact(prepared, acc: MetricAccumulator, exact: dict, what: str = "") -> None:
    """Every metric: mean within 5 SE of the exact mean (binomial SE from the exact p for
    0/1 metrics); the whole distribution bin by bin (sparse tails lumped)."""
    n = acc.trials
    for m, metric in enumerate(prepared.metrics):
        ex = exact[metric.name]
        s = acc.summary(m, metric.scale, metric.is_probability)
        if metric.is_probability:
            se = math.sqrt(max(ex.mean * (1 - ex.mean), 0.0) / n)
            if se == 0:
                assert s.mean == ex.mean, f"{what} {metric.name}: {s.mean} vs exact {ex.mean}"
                continue
            assert abs(s.mean - ex.mean) < SIGMAS * se, f"{what} {metric.name}: {s.mean} vs {ex.mean} (se {se})"
        else:
            assert_mean_matches(s.mean, s.se, ex.mean, what=f"{what} {metric.name}")
        if ex.values is not None and metric.distribution and metric.scale == 1:
            probs = np.zeros(max(int(np.max(ex.values)) + 1, acc.n_bins))
            probs[np.asarray(ex.values, int)] = ex.probs
            counts = acc.hist[m]
            top = acc.n_bins - 1      # the last histogram bin means "or more"
            probs = np.concatenate([probs[:top], [probs[top:].sum()]])
            assert_histogram_matches(counts, probs, what=f"{what} {metric.name}")


def assert_two_sample_histograms(counts_a, counts_b, what: str = "") -> float:
    """Two Monte-Carlo histograms of one quantity agree bin by bin within 5 combined SE
    (pooled proportion per bin; bins with expected count < 25 in the smaller sample lumped
    from both ends). Returns the largest deviation in SEs."""
    size = max(len(counts_a), len(counts_b))
    a = np.zeros(size)
    b = np.zeros(size)
    a[: len(counts_a)] = counts_a
    b[: len(counts_b)] = counts_b
    na, nb = a.sum(), b.sum()
    pooled = (a + b) / (na + nb)
    n_small = min(na, nb)
    lo, hi = 0, size - 1
    while lo < hi and pooled[lo] * n_small < MIN_EXPECTED:
        a[lo + 1] += a[lo]
        b[lo + 1] += b[lo]
        pooled[lo + 1] += pooled[lo]
        lo += 1
    while hi > lo and pooled[hi] * n_small < MIN_EXPECTED:
        a[hi - 1] += a[hi]
        b[hi - 1] += b[hi]
        pooled[hi - 1] += pooled[hi]
        hi -= 1
    a, b, p = a[lo: hi + 1], b[lo: hi + 1], pooled[lo: hi + 1]
    se = np.sqrt(np.maximum(p * (1 - p), 1e-300) * (1 / na + 1 / nb))
    z = np.abs(a / na - b / nb) / se
    worst = float(z.max()) if z.size else 0.0
    assert worst < SIGMAS, f"{what}: bin {lo + int(z.argmax())} off by {worst:.2f} combined SE"
    return worst


def sample_histogram(xs) -> np.ndarray:
    xs = np.asarray(xs, dtype=np.int64)
    return np.bincount(xs)


def sample_mean_se(xs) -> tuple[float, float]:
    xs = np.asarray(xs, dtype=float)
    return float(xs.mean()), float(xs.std(ddof=1) / math.sqrt(len(xs)))
