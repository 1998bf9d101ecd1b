"""Shared helpers of the B-17 kernel tests: prepare a question point, run its kernel, and
compare Monte-Carlo results with exact answers or with the pure-Python reference using
tolerances derived from standard errors (never tuned)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from analyzer.core import scenario as scenario_mod
from analyzer.core.questions import SCENARIO_ROOT, Context, get
from analyzer.run.runner import BATCH_CHUNKS, CHUNK_TRIALS
from analyzer.core.stats import MetricAccumulator
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
    return run_reference("analyzer.games.b17.reference", question, params, rules, data, n, seed)


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


#: rejection level of the chi-square tests: the two-sided tail of a 5-SE normal deviation (5.7e-7)
CHI2_ALPHA = math.erfc(K_SE / math.sqrt(2))


def chi2_sf(x: float, dof: int) -> float:
    """P(X > x) for X chi-square with ``dof`` degrees of freedom: the regularised upper
    incomplete gamma Q(dof / 2, x / 2), by its series below a + 1 and its continued fraction
    (modified Lentz) above (Numerical Recipes ``gammq``; scipy is not a dependency)."""
    a, z = dof / 2.0, x / 2.0
    if z <= 0:
        return 1.0
    log_front = a * math.log(z) - z - math.lgamma(a)
    if z < a + 1:
        term = total = 1.0 / a
        n = 0
        while abs(term) > abs(total) * 1e-16:
            n += 1
            term *= z / (a + n)
            total += term
        return max(0.0, 1.0 - total * math.exp(log_front))
    tiny = 1e-300
    b = z + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 100_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = d if abs(d) > tiny else tiny
        c = b + an / c
        c = c if abs(c) > tiny else tiny
        d = 1.0 / d
        h *= d * c
        if abs(d * c - 1.0) < 1e-16:
            break
    return math.exp(log_front) * h


def assert_chi_square_same_law(a: McMetric, b: McMetric, what: str = "") -> float:
    """Pearson's chi-square test of homogeneity of two samples' histograms (a 2 x bins table;
    bins expecting fewer than 25 in the smaller sample lumped into one tail), rejected below
    :data:`CHI2_ALPHA`. Returns the p-value (1 when there is a single bin: nothing to test)."""
    table = [(pa * a.n, pb * b.n) for pa, pb, _ in _lumped(a.dist, b.dist, min(a.n, b.n)) if pa + pb > 0]
    if len(table) < 2:
        return 1.0
    n = a.n + b.n
    chi2 = 0.0
    for ca, cb in table:
        col = ca + cb
        for count, row_n in ((ca, a.n), (cb, b.n)):
            expected = row_n * col / n
            chi2 += (count - expected) ** 2 / expected
    p = chi2_sf(chi2, len(table) - 1)
    assert p > CHI2_ALPHA, (what, chi2, len(table) - 1, p)
    return p


#: fighter waves several b17 test files use
HEADON = {"fighters": [{"type": "Me109", "clock": "12:00", "altitude": "high", "count": 4}]}
MIXED3 = [{"type": "FW190", "clock": "12:00", "altitude": "high", "count": 2},
          {"type": "Me109", "clock": "1:30", "altitude": "level", "prior_hits": 1},
          {"type": "Me110", "clock": "6:00", "altitude": "low", "prior_hits": 2}]
