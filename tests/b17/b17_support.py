"""Shared helpers of the B-17 kernel tests: prepare a question point, run its kernel, and
compare Monte-Carlo results with exact answers or with the pure-Python reference using
tolerances derived from standard errors (never tuned)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from analyzer import scenario as scenario_mod
from analyzer.questions import SCENARIO_ROOT, Context, get
from analyzer.runner import BATCH_CHUNKS, CHUNK_TRIALS
from analyzer.stats import MetricAccumulator
from tests.stat_checks import MIN_EXPECTED, SIGMAS as K_SE  # 5 SE; bins expecting < 25 are lumped
from tests.stat_checks import reference_trials, run_reference

ALL_GUNS = ("nose", "nav_right", "nav_left", "top", "radio", "ventral", "waist_left", "waist_right", "tail")


def only_guns(*keep):
    return {g: (g in keep) for g in ALL_GUNS}


def prepare(question: str, params: dict, rules: dict | None = None):
    """Validate ``params`` and compile the point against the shipped data (scenarios/b17)."""
    q = get("b17", question)
    p = q.Params.model_validate(params)
    r = scenario_mod.validate_rules("test", q, rules or {})
    game_dir = SCENARIO_ROOT / "b17"
    return q.prepare(p, Context(rules=r, scenario_dir=game_dir, game_dir=game_dir))


@dataclass
class McMetric:
    n: int
    mean: float
    se: float
    dist: dict[float, float]      # value -> probability


def run_kernel(prepared, trials: int, seed: int, key: int = 11) -> dict[str, McMetric]:
    """Run a prepared point's kernel batch by batch, as the runner does."""
    acc = MetricAccumulator(len(prepared.metrics), prepared.n_bins)
    n_chunks = -(-trials // CHUNK_TRIALS)
    for lo in range(0, n_chunks, BATCH_CHUNKS):
        hist, moments, _ = prepared.run_kernel(seed, key, lo, min(lo + BATCH_CHUNKS, n_chunks), CHUNK_TRIALS, trials)
        acc.add_chunks(hist, moments)
    out = {}
    for m, metric in enumerate(prepared.metrics):
        assert acc.clipped(m) == 0, f"{metric.name}: values above the histogram"
        s = acc.summary(m, metric.scale)
        values, probs = acc.distribution(m, metric.scale)
        out[metric.name] = McMetric(acc.trials, s.mean, s.se, {round(float(v), 9): float(p)
                                                                for v, p in zip(values, probs)})
    return out


#: kernel trials of a comparison that must resolve a 1-point shift (tests/stat_checks.RESOLVE)
FULL_KERNEL_TRIALS = 1_000_000


def reference_run(question: str, params: dict, rules: dict, data: dict, mc: dict[str, McMetric], seed: int,
                  full: bool = True, quick: int = 2000) -> dict:
    """The reference's per-trial values for a comparison with the kernel run ``mc``: sized
    by :func:`tests.stat_checks.reference_trials` from the kernel's bin probabilities (so a
    1-point shift in any of them is detected at 5 SE) when ``full``, else ``quick`` trials;
    run on two processes."""
    n_kernel = min(m.n for m in mc.values())
    probs = [p for m in mc.values() for p in m.dist.values()]
    n = reference_trials(probs, n_kernel) if full else quick
    return run_reference("tests.reference.b17", question, params, rules, data, n, seed)


def reference_metric(values: list[float]) -> McMetric:
    n = len(values)
    a = np.asarray(values, dtype=np.float64)
    se = float(a.std(ddof=1) / math.sqrt(n)) if n > 1 else 0.0
    vals, counts = np.unique(np.round(a, 9), return_counts=True)
    return McMetric(n, float(a.mean()), se, {float(v): c / n for v, c in zip(vals, counts)})


def exact_as_dict(em) -> dict[float, float]:
    return {round(float(v), 9): float(p) for v, p in zip(em.values, em.probs) if p > 0}


def assert_mean_exact(mc: McMetric, mean: float, var: float, what: str = "") -> None:
    se = math.sqrt(max(var, 0.0) / mc.n)
    if se == 0:
        assert mc.mean == pytest.approx(mean, abs=1e-12), what
    else:
        assert abs(mc.mean - mean) <= K_SE * se, (what, mc.mean, mean, se)


def _lumped(p: dict[float, float], q: dict[float, float], n_small: int) -> list[tuple[float, float, str]]:
    """Pairs of probabilities per bin; rare bins (expected count < 25) lumped into one tail."""
    keys = sorted(set(p) | set(q))
    out, tail_p, tail_q = [], 0.0, 0.0
    for k in keys:
        pk, qk = p.get(k, 0.0), q.get(k, 0.0)
        if max(pk, qk) * n_small < MIN_EXPECTED:
            tail_p += pk
            tail_q += qk
        else:
            out.append((pk, qk, str(k)))
    out.append((tail_p, tail_q, "tail"))
    return out


def assert_dist_exact(mc: McMetric, exact: dict[float, float], what: str = "") -> None:
    """Every bin of a Monte-Carlo distribution within 5 SE of the exact probability."""
    for pk, qk, label in _lumped(mc.dist, exact, mc.n):
        se = math.sqrt(qk * (1 - qk) / mc.n)
        if se == 0:
            assert pk == pytest.approx(qk, abs=1e-12), (what, label)
        else:
            assert abs(pk - qk) <= K_SE * se, (what, label, pk, qk, se)


def assert_same_law(a: McMetric, b: McMetric, what: str = "") -> None:
    """Two Monte-Carlo samples of one law: means within 5 combined SE, then every bin."""
    se = math.hypot(a.se, b.se)
    if se == 0:
        assert a.mean == pytest.approx(b.mean, abs=1e-12), what
    else:
        assert abs(a.mean - b.mean) <= K_SE * se, (what, a.mean, b.mean, se)
    for pa, pb, label in _lumped(a.dist, b.dist, min(a.n, b.n)):
        pooled = (pa * a.n + pb * b.n) / (a.n + b.n)
        se = math.sqrt(pooled * (1 - pooled) * (1 / a.n + 1 / b.n))
        if se == 0:
            assert pa == pytest.approx(pb, abs=1e-12), (what, label)
        else:
            assert abs(pa - pb) <= K_SE * se, (what, label, pa, pb, se)
