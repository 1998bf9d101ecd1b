"""Statistical assertions shared by the tests: tolerances come from standard errors."""
from __future__ import annotations

import concurrent.futures
import importlib
import math
import multiprocessing
import os

import numpy as np

SIGMAS = 5.0
MIN_EXPECTED = 25.0


def lump_tail(counts: np.ndarray, probs: np.ndarray, n: int, min_expected: float = MIN_EXPECTED):
    """Merge bins (from both ends inward) whose expected count is below ``min_expected``,
    so every compared bin has a well-behaved binomial standard error."""
    size = max(len(counts), len(probs))
    c = np.zeros(size)
    p = np.zeros(size)
    c[: len(counts)] = counts
    p[: len(probs)] = probs
    lo, hi = 0, size - 1
    while lo < hi and p[lo] * n < min_expected:
        p[lo + 1] += p[lo]
        c[lo + 1] += c[lo]
        lo += 1
    while hi > lo and p[hi] * n < min_expected:
        p[hi - 1] += p[hi]
        c[hi - 1] += c[hi]
        hi -= 1
    return c[lo: hi + 1], p[lo: hi + 1]


def assert_histogram_matches(counts, probs, sigmas: float = SIGMAS, what: str = "") -> float:
    """Every bin's Monte-Carlo frequency within ``sigmas`` binomial SEs of the exact
    probability (after lumping sparse tails). Returns the largest deviation in SEs."""
    counts = np.asarray(counts, dtype=float)
    n = int(counts.sum())
    c, p = lump_tail(counts, np.asarray(probs, dtype=float), n)
    freq = c / n
    se = np.sqrt(np.maximum(p * (1 - p), 1e-300) / n)
    z = np.abs(freq - p) / se
    worst = float(z.max())
    assert worst < sigmas, f"{what}: bin {int(z.argmax())} off by {worst:.2f} SE (freq {freq[z.argmax()]:.6g} vs {p[z.argmax()]:.6g})"
    return worst


def assert_mean_matches(mc_mean: float, mc_se: float, exact_mean: float, sigmas: float = SIGMAS, what: str = ""):
    assert mc_se > 0 or mc_mean == exact_mean, f"{what}: zero SE but {mc_mean} != {exact_mean}"
    z = abs(mc_mean - exact_mean) / mc_se if mc_se > 0 else 0.0
    assert z < sigmas, f"{what}: mean {mc_mean:.6g} vs exact {exact_mean:.6g}: {z:.2f} SE"


def assert_two_samples_match(mean_a, se_a, mean_b, se_b, sigmas: float = SIGMAS, what: str = ""):
    se = math.hypot(se_a, se_b)
    z = abs(mean_a - mean_b) / se if se > 0 else (0.0 if mean_a == mean_b else math.inf)
    assert z < sigmas, f"{what}: {mean_a:.6g} vs {mean_b:.6g}: {z:.2f} combined SE"


#: A kernel-vs-reference comparison should detect a shift of this size in any probability
#: metric at SIGMAS combined standard errors.
RESOLVE = 0.01
#: ``make test-reference`` sets this: every comparison runs at RESOLVE, not only the designated one
FULL_REFERENCE = os.environ.get("ANALYZER_FULL_REFERENCE") == "1"


def reference_trials(probabilities, kernel_trials: int, resolve: float = RESOLVE, sigmas: float = SIGMAS) -> int:
    """Reference trials for a two-sample comparison whose SIGMAS-SE band is at most
    ``resolve`` wide for every probability in ``probabilities`` (the kernel's estimates):
    ``sigmas * sqrt(v / n_ref + v / kernel_trials) <= resolve`` with ``v = p (1 - p)``."""
    v = max([p * (1.0 - p) for p in probabilities] + [1e-4])
    room = (resolve / sigmas) ** 2 - v / kernel_trials
    if room <= 0:
        raise ValueError(f"{kernel_trials} kernel trials cannot resolve {resolve}: raise them")
    return int(math.ceil(v / room))


def resolvable_shift(probabilities, kernel_trials: int, ref_trials: int, sigmas: float = SIGMAS) -> float:
    """The smallest shift in a probability the comparison detects at ``sigmas`` SEs."""
    v = max([p * (1.0 - p) for p in probabilities] + [1e-4])
    return sigmas * math.sqrt(v / ref_trials + v / kernel_trials)


def _reference_part(module: str, question: str, params, rules, data, trials: int, seed: int) -> dict:
    return importlib.import_module(module).simulate(question, params, rules, data, trials, seed)


def run_reference(module: str, question: str, params, rules, data, trials: int, seed: int,
                  workers: int = 2) -> dict:
    """``simulate`` of the reference module ``module`` over ``trials`` trials split across ``workers``
    processes (part ``i`` seeded ``seed * 1009 + i``); per-trial lists concatenated in part
    order, so the result depends only on the arguments."""
    parts = [trials // workers + (1 if i < trials % workers else 0) for i in range(workers)]
    ctx = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=ctx) as pool:
        futures = [pool.submit(_reference_part, module, question, params, rules, data, n, seed * 1009 + i)
                   for i, n in enumerate(parts) if n]
        results = [f.result() for f in futures]
    return {k: [v for r in results for v in r[k]] for k in results[0]}
