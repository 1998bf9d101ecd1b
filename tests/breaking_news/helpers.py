"""Shared helpers of the Breaking News tests: compile a question point, run its kernel, merge
it as the runner does, compare with the exact mode at SE-derived tolerances."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from analyzer.core import questions
from analyzer.games.breaking_news.data import BNData
from analyzer.core.questions import Context
from analyzer.run.runner import CHUNK_TRIALS
from analyzer.core.scenario import validate_rules
from tests.stat_checks import assert_histogram_matches, assert_mean_matches

ROOT = Path(__file__).resolve().parents[2]
SCEN = ROOT / "scenarios" / "breaking_news"


def context(question, rules=None, scenario_dir=SCEN) -> Context:
    return Context(rules=validate_rules("test", question, rules or {}), scenario_dir=Path(scenario_dir),
                   game_dir=SCEN)


def data(rules=None) -> tuple[BNData, dict]:
    """The shipped data and the rule options of ``shot`` (defaults filled in)."""
    q = questions.get("breaking_news", "shot")
    ctx = context(q, rules)
    return BNData(ctx), ctx.rules


def prepare(name, params, rules=None, scenario_dir=SCEN):
    """(question, validated params, Prepared) of one point of ``breaking_news/<name>``."""
    q = questions.get("breaking_news", name)
    p = q.Params.model_validate(params)
    return q, p, q.prepare(p, context(q, rules, scenario_dir))


def run_acc(prep, trials, seed=1, key=12345):
    """``trials`` kernel trials merged as the runner merges them."""
    from analyzer.core.stats import MetricAccumulator
    acc = MetricAccumulator(len(prep.metrics), prep.n_bins, len(prep.counters))
    acc.add_chunks(*prep.run_kernel(seed, key, 0, -(-trials // CHUNK_TRIALS), CHUNK_TRIALS, trials))
    return acc


def assert_mc_matches_exact(prep, trials, seed=1, what=""):
    """Every metric's histogram within 5 binomial SEs per bin and its mean within 5 SEs."""
    acc = run_acc(prep, trials, seed)
    exact = prep.exact()
    n_chunks = -(-trials // CHUNK_TRIALS)
    hist, moments, _ = prep.run_kernel(seed, 12345, 0, n_chunks, CHUNK_TRIALS, trials)
    hist = hist.sum(axis=0)
    moments = moments.sum(axis=0)
    for i, m in enumerate(prep.metrics):
        ex = exact[m.name]
        mean = moments[i, 0] / trials / m.scale
        var = max(moments[i, 1] / trials / m.scale ** 2 - mean ** 2, 0.0)
        if ex.values is not None and len(ex.values) > 1:
            probs = np.zeros(prep.n_bins)
            for v, pr in zip(ex.values, ex.probs):
                probs[int(v)] += pr
            assert_histogram_matches(hist[i], probs, what=f"{what} {m.name}")
        se = np.sqrt(var / trials)
        assert_mean_matches(mean, se, ex.mean, what=f"{what} {m.name}")
    return acc
