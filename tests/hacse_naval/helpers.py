"""Shared helpers of the HACSE naval tests: compile a question point, run its kernel, compare
with exact answers and with the pure-Python reference at standard-error tolerances."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from analyzer.core import questions
from analyzer.core.questions import Context
from analyzer.run.runner import CHUNK_TRIALS
from analyzer.core.scenario import validate_rules
from analyzer.games.hacse_naval import reference as ref
from tests.stat_checks import assert_histogram_matches
# kernel histogram vs reference sample, bin by bin and by mean, at SIGMAS combined SEs (generic)
from tests.uboat_leader.helpers import assert_distributions_agree, assert_means_agree  # noqa: F401 (re-exported)

__all__ = ["assert_distributions_agree", "assert_means_agree", "assert_kernel_matches_exact", "barge_fire", "context",
           "exact_probs", "prepare", "run", "DATA", "SCEN"]
ROOT = Path(__file__).resolve().parents[2]
SCEN = ROOT / "scenarios" / "hacse_naval"
DATA = ref.load_data(str(SCEN))


def context(question, rules=None) -> Context:
    return Context(rules=validate_rules("test", question, rules or {}), scenario_dir=SCEN, game_dir=SCEN)


def prepare(name, params, rules=None):
    """(question, validated params, Prepared) of one point of ``hacse_naval/<name>``."""
    q = questions.get("hacse_naval", name)
    p = q.Params.model_validate(params)
    return q, p, q.prepare(p, context(q, rules))


def run(prep, trials, seed=1, key=4242):
    """Per-metric summed histograms ``{name: counts}`` of ``trials`` kernel trials."""
    n_chunks = -(-trials // CHUNK_TRIALS)
    hist, _, counters = prep.run_kernel(seed, key, 0, n_chunks, CHUNK_TRIALS, trials)
    total = hist.sum(axis=0)
    return {m.name: total[i] for i, m in enumerate(prep.metrics)}


def exact_probs(metric) -> np.ndarray:
    """An ExactMetric as a probability vector indexed by value."""
    values = np.asarray(metric.values, int)
    out = np.zeros(values.max() + 1)
    out[values] = metric.probs
    return out


def assert_kernel_matches_exact(prep, trials, seed=1, what=""):
    """Every metric's histogram within SIGMAS binomial SEs of the exact distribution, bin by bin."""
    counts = run(prep, trials, seed)
    answer = prep.exact()
    for name, c in counts.items():
        assert_histogram_matches(c, exact_probs(answer[name]), what=f"{what} {name}")
    return counts, answer


def barge_fire(tmp_path, second_row: str):
    """The fire question's Prepared for a fire no roll puts out (3W10 > 3 x Basiszahl 10) in hex 1
    of a barge whose hex 0 is its Rumpf [20] and hex 1 holds the one row ``second_row`` (YAML)."""
    (tmp_path / "ships").mkdir()
    (tmp_path / "ships" / "barge.yaml").write_text(
        "ship: {name: Barge, bm: -1, max_speed: 2, hexes: [{rows: [{name: Rumpf, kinds: [rumpf], hp: 20}]},"
        f" {{rows: [{second_row}]}}]}}\n")
    q = questions.get("hacse_naval", "fire")
    ctx = context(q)
    ctx.scenario_dir = tmp_path
    return q.prepare(q.Params.model_validate({"ship": "barge", "hex": 1, "base_number": 10}), ctx)
