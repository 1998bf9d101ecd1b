"""``analyzer matchup``: every contender against every other on common random numbers, a
matrix with CIs, a Bradley–Terry rating with bootstrap CIs, and fair-cost estimates.

Two modes (docs/balance.md):

- **seated** (two-sided questions, params ``side_a`` and ``side_b``: a duel, a firefight): every ordered
  pair (i in seat A, j in seat B, i = j included) runs on the same random streams: one stream
  key for the whole matrix, chunk by chunk. Cell ``M[i, j]`` = P(seat A wins) + P(draw) / 2.
  The seat-balanced score ``P[i, j] = (M[i, j] + 1 - M[j, i]) / 2`` plays each pair once in
  each seat; two contenders with the same values run the same simulation in both cells, so
  their ``P`` is exactly 1/2, and ``P[i, j] + P[j, i] = 1`` always.
- **field** (any question, e.g. the fleets of a campaign): each contender runs alone
  on the common streams with one trial per chunk, so trial t of every contender used the same
  random numbers; ``M[i, j]`` = P(metric of i beats that of j in the same trial) + P(tie) / 2.

The paired batches (chunks) are kept per cell, so every CI is a batch-means CI and the rating's
CIs come from resampling the batches jointly for all cells (the cells are correlated: they
share random numbers).

The contenders are ranked through :mod:`analyzer.core.ranking` (:func:`~analyzer.core.ranking.rank_bootstrap`
on the same bootstrap replicates): every contender's rating difference to the best-rated one with
a 95% simultaneous interval (max-t over all pairs), the best set, and ties: contenders whose
results are identical in every cell, batch by batch (:func:`identical_contenders`).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from analyzer.core import interrupt
from analyzer.core import scenario as scenario_mod
from analyzer.analyses.balance.common import batch_ci, bootstrap_counts, bradley_terry, ford_connected
from analyzer.core.balance_spec import ContenderSpec, MatchupSpec, contenders, default_mode, matchup_spec
from analyzer.core.errors import ScenarioError
from analyzer.core.gamedata import DataError, unwrap
from analyzer.core.ranking import Ranking, rank_bootstrap, tie_mean
from analyzer.run.batches import batch_ranges
from analyzer.run.runner import MIN_PAIRED_BATCHES, paired_chunk_size, prepare_point, stream_key
from kernels.record import chunk_sizes

#: field mode: one trial per chunk; a kernel call's histogram stays under this many cells
FIELD_CALL_CELLS = 2_000_000
#: fewest bootstrap resamples for the rating CIs: with 0 or 1 there is no interval (the ratings
#: figure and the fair-cost CIs have nothing to draw), and below ~20 the 2.5% / 97.5% percentiles
#: are the extreme draws; checked before any pair runs
MIN_BOOTSTRAP = 20


@dataclass
class Cost:
    value: float | None
    source: str = ""                                     # "file" | what the game reader used | ""
    placeholders: list[dict] = field(default_factory=list)


@dataclass
class FairCost:
    """Fair cost of one contender against the reference (see :func:`fair_costs`)."""

    name: str
    cost: float | None
    method: str                      # "scale contender" | "scale reference" | "reference" | "n/a"
    curve: list[dict] = field(default_factory=list)   # per copies k: score of the contender and its CI
    parity: float | None = None      # copies at parity (interpolated)
    parity_ci: tuple = (None, None)
    fair_cost: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    note: str = ""

    @property
    def change(self) -> float | None:
        return None if self.fair_cost is None or self.cost is None else self.fair_cost - self.cost

    def row(self) -> dict:
        return {"contender": self.name, "cost": self.cost, "method": self.method, "parity_copies": self.parity,
                "fair_cost": self.fair_cost, "fair_cost_ci_low": self.ci_low, "fair_cost_ci_high": self.ci_high,
                "cost_change": self.change, "note": self.note}


@dataclass
class Matchup:
    """The raw material of a matchup: per ordered pair and batch, the score sums."""

    sc: Any                          # the scenario (base file)
    spec: MatchupSpec
    mode: str
    names: list[str]
    values: list[Any]                # each contender's side (seated) or overrides (field)
    trials: int
    sums: np.ndarray                 # [i, j, batch]: seat-A score (seated) / score of i over j (field)
    sizes: np.ndarray                # [batch] trials
    outcome: str                     # what a cell means, in words
    costs: list[Cost]
    placeholders: list[dict]
    example_values: list[dict]
    data_files: list[dict]
    notes: list[str]
    metric_sums: np.ndarray | None = None   # field: [contender, batch] sums of the compared metric
    wall_seconds: float = 0.0
    kernel_trials: int = 0
    fair: list[FairCost] | None = None

    @property
    def n(self) -> int:
        return len(self.names)

    @property
    def reference(self) -> int:
        return reference_index(self.spec, self.names)


def reference_index(spec, names: list[str]) -> int:
    """Index in ``names`` of the matchup's reference contender (``spec.reference``; default the first)."""
    return names.index(spec.reference) if spec.reference else 0


def load(path: str | Path, *, trials: int | None = None, seed: int | None = None, force: bool = False,
         bootstrap: int | None = None, fair_cost: bool = False):
    """(scenario, matchup spec, contenders, mode) of a matchup file; refuses a file without
    contenders, with a sweep or a precision target, a bootstrap count below
    :data:`MIN_BOOTSTRAP` (``bootstrap``: the command line's, over the file's), and more than
    10^10 trials in all (pairs x trials, with ``fair_cost`` its scaled pairs at most) unless
    ``force``."""
    sc = scenario_mod.load(path, trials=trials, seed=seed, force=force)
    file = str(sc.path)
    if not sc.spec.contenders:
        raise ScenarioError(file, "contenders", "a matchup file needs contenders: (a list of {name, side} or "
                            "{name, params}); see docs/balance.md")
    if sc.spec.sweep:
        raise ScenarioError(file, "sweep", "a matchup runs one point per pair: remove sweep (the contenders are "
                            "the sweep)")
    if sc.spec.precision is not None:
        raise ScenarioError(file, "precision", "a matchup runs a fixed trial count per pair; use trials or --trials")
    if sc.spec.trials < MIN_PAIRED_BATCHES:
        raise ScenarioError(file, "trials", f"got {sc.spec.trials}; a matchup needs at least {MIN_PAIRED_BATCHES} "
                            f"trials per pair for honest batch CIs")
    spec = matchup_spec(file, sc.spec)
    cs = contenders(file, sc.spec)
    mode = spec.mode or default_mode(sc.question)
    for where, count in (("--bootstrap", bootstrap), ("matchup.bootstrap", spec.bootstrap)):
        if count is not None and count < MIN_BOOTSTRAP and (where == "--bootstrap" or bootstrap is None or fair_cost):
            raise ScenarioError(file, where, f"got {count}; allowed: {MIN_BOOTSTRAP} to 10000 bootstrap resamples "
                                f"(the rating CIs are percentiles of the resamples)")
    runs = planned_trials(sc, mode, len(cs)) // sc.spec.trials
    if fair_cost and mode == "seated":       # at most max_scale - 1 scaled pairs, both seats, per contender
        runs += (len(cs) - 1) * 2 * (spec.max_scale - 1)
    scenario_mod.check_trial_budget(file, "trials", sc.spec.trials, runs,
                                    "pairs" if mode == "seated" else "contenders", force)
    return sc, spec, cs, mode


def planned_trials(sc, mode: str, n: int) -> int:
    return sc.spec.trials * (n * n if mode == "seated" else n)


# ----------------------------------------------------------------------------- running cells
def _check_outcomes(sc, spec: MatchupSpec, prepared) -> list[tuple[int, int]]:
    """(index, scale) of the win, loss and draw metrics in a seated point."""
    names = [m.name for m in prepared.metrics]
    out = []
    for key in ("win", "loss", "draw"):
        name = getattr(spec, key)
        if name is None:
            out.append((-1, 1))
            continue
        if name not in names:
            from analyzer.core.errors import suggest
            raise ScenarioError(str(sc.path), f"matchup.{key}", f"got {name!r}{suggest(name, names)}; metrics of "
                                f"this question: {', '.join(names)}")
        metric = prepared.metrics[names.index(name)]
        if not metric.is_probability:
            raise ScenarioError(str(sc.path), f"matchup.{key}", f"{name} is not a 0/1 (probability) metric")
        out.append((names.index(name), metric.scale))
    return out


def _seated_scores(preps: list, sc, spec: MatchupSpec, key: int, n_trials: int,
                   on_trials: Callable[[int], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Seat-A score sums ``[cell, chunk]`` (wins + draws / 2) of seated points run on the same
    streams, and the chunk sizes. Checks per chunk that win + loss + draw counts every trial."""
    chunk_size = paired_chunk_size(n_trials)
    n_chunks = -(-n_trials // chunk_size)
    sizes = chunk_sizes(0, n_chunks, n_trials, chunk_size)
    out = np.zeros((len(preps), n_chunks))
    outcomes = [_check_outcomes(sc, spec, p) for p in preps]
    for lo, hi in batch_ranges(n_chunks):
        for c, prep in enumerate(preps):
            _, moments, _ = prep.run_kernel(sc.spec.seed, key, lo, hi, chunk_size, n_trials)
            (w, sw), (loss, sl), (d, sd) = outcomes[c]
            win = moments[:, w, 0] / sw
            draw = moments[:, d, 0] / sd if d >= 0 else 0.0
            total = win + moments[:, loss, 0] / sl + draw
            if not np.array_equal(total, sizes[lo:hi]):
                raise ScenarioError(str(sc.path), "matchup", f"{spec.win} + {spec.loss} + {spec.draw} do not count "
                                    f"every trial exactly once: not the outcome metrics of a two-sided question")
            out[c, lo:hi] = win + 0.5 * draw
            if on_trials is not None:
                on_trials(int(sizes[lo:hi].sum()))
            interrupt.check()
    return out, sizes


def _load_cells(sc, seats: list[str], pairs: list[tuple[Any, Any]], trials: int) -> list:
    """Prepared points, one per (seat A value, seat B value): each loaded through the
    scenario loader with the pair as a one-point sweep (validated like the file)."""
    out = []
    for a, b in pairs:
        cell = scenario_mod.load(sc.path, trials=trials, seed=sc.spec.seed, sweep={seats[0]: [a], seats[1]: [b]},
                                 trials_guard=False)          # load() checked the matchup's total
        out.append(prepare_point(cell, cell.points[0]))
    return out


def _union(preps: list, examples: bool = False) -> list[dict]:
    from analyzer.outputs.writer import unique_placeholders
    return unique_placeholders(preps, examples=examples)


def run(path: str | Path, *, trials: int | None = None, seed: int | None = None, fair_cost: bool = False,
        reference: str | None = None, on_trials: Callable[[int], None] | None = None, force: bool = False,
        bootstrap: int | None = None) -> Matchup:
    """Run a matchup file (see the module docstring); with ``fair_cost`` also the fair-cost
    search against the reference (:func:`fair_costs`). ``force`` and ``bootstrap`` as for
    :func:`load` (checked before any pair runs)."""
    t0 = time.perf_counter()
    sc, spec, cs, mode = load(path, trials=trials, seed=seed, force=force, bootstrap=bootstrap, fair_cost=fair_cost)
    if reference is not None:
        names = [c.name for c in cs]
        if reference not in names:
            from analyzer.core.errors import suggest
            raise ScenarioError(str(sc.path), "--reference", f"got {reference!r}{suggest(reference, names)}; "
                                f"allowed: {', '.join(names)}")
        spec = spec.model_copy(update={"reference": reference})
    n_trials = sc.spec.trials
    key = stream_key("matchup", sc.spec.game, sc.spec.question)
    names = [c.name for c in cs]
    if mode == "seated":
        m = _run_seated(sc, spec, cs, key, n_trials, on_trials)
    else:
        m = _run_field(sc, spec, cs, key, n_trials, on_trials)
    m.costs = contender_costs(sc, spec, cs, mode)
    p = score_matrix(m)[0]
    for i in range(len(cs)):
        for j in range(i + 1, len(cs)):
            if m.values[i] == m.values[j]:
                m.notes.append(f"{names[i]} and {names[j]} have the same values: on common random numbers their "
                               f"seat-balanced score is exactly 1/2 ({p[i, j]:.6g})")
    if fair_cost:
        m.fair = fair_costs(m, key, on_trials)
    m.wall_seconds = time.perf_counter() - t0
    return m


def _run_seated(sc, spec, cs: list[ContenderSpec], key, n_trials, on_trials) -> Matchup:
    n = len(cs)
    sides = [c.side for c in cs]
    # one load: the seats swept over every contender = every ordered pair, point i * n + j
    pairs_sc = scenario_mod.load(sc.path, trials=n_trials, seed=sc.spec.seed,
                                 sweep={spec.seats[0]: sides, spec.seats[1]: sides}, trials_guard=False)
    preps = [prepare_point(pairs_sc, p) for p in pairs_sc.points]
    scores, sizes = _seated_scores(preps, sc, spec, key, n_trials, on_trials)
    sums = scores.reshape(n, n, -1)
    draw = " + P(draw) / 2" if spec.draw else ""
    notes = list(dict.fromkeys(note for p in preps for note in p.notes))
    notes.insert(0, f"seated: {n * n} ordered pairs (i in seat {spec.seats[0]}, j in seat {spec.seats[1]}) on one "
                    f"set of random streams, {n_trials:,} trials each; cell = P({spec.win}){draw}")
    names = [c.name for c in cs]
    notes += placeholder_caveats(names, [[preps[i * n + i]] for i in range(n)], reference_index(spec, names))
    return Matchup(sc, spec, "seated", names, [unwrap(s)[0] for s in sides], n_trials, sums, sizes,
                   f"P(row in seat A beats column in seat B){draw}", [], _union(preps), _union(preps, True),
                   _data_files(preps), notes, kernel_trials=n * n * n_trials)


def placeholder_caveats(names: list[str], own: list, reference: int) -> list[str]:
    """One note per contender whose games use PLACEHOLDER values that the reference's games do not,
    or the other way round (``own[i]``: the prepared points of contender i's own games): its
    difference to the reference may come from those values rather than from the rules (issue 30:
    an Air Search fleet scored -0.79 VP against Intel on placeholder decks, shown without a word)."""
    def keys(preps) -> dict:
        return {(ph.path, ph.source): ph.path for p in preps for ph in p.placeholders if not ph.is_example}
    sets = [keys(p) for p in own]
    out = []
    for i, name in enumerate(names):
        if i == reference:
            continue
        only = {k: v for k, v in {**sets[i], **sets[reference]}.items() if (k in sets[i]) != (k in sets[reference])}
        if not only:
            continue
        paths = sorted(set(only.values()))
        shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
        out.append(f"{name} vs {names[reference]}: {len(only)} PLACEHOLDER value(s) are used by one of the two and "
                   f"not the other ({shown}); the difference between them may come from those values, not from the "
                   f"rules: enter the real values, or run analyzer sensitivity on either's scenario")
    return out


def _data_files(preps: list) -> list[dict]:
    from analyzer.outputs.writer import unique_data_files
    return unique_data_files(preps)


def _run_field(sc, spec, cs: list[ContenderSpec], key, n_trials, on_trials) -> Matchup:
    n = len(cs)
    preps = []
    for c in cs:
        cell = scenario_mod.load(sc.path, trials=n_trials, seed=sc.spec.seed,
                                 sweep={p: [v] for p, v in c.params.items()}, trials_guard=False)
        preps.append(prepare_point(cell, cell.points[0]))
    metric = spec.metric or sc.question.primary_metric
    idx = []
    for c, p in zip(cs, preps):
        names = [x.name for x in p.metrics]
        if metric not in names:
            from analyzer.core.errors import suggest
            raise ScenarioError(str(sc.path), "matchup.metric", f"got {metric!r}{suggest(metric, names)} for "
                                f"contender {c.name}; metrics: {', '.join(names)}")
        idx.append(names.index(metric))
    n_batches = MIN_PAIRED_BATCHES
    # trial t is in batch t * n_batches // n_trials; batch b starts at ceil(b * n_trials / n_batches).
    # Computed per kernel call (no array of n_trials: 10^9 trials would need 7.45 GiB up front)
    starts = np.array([-(-b * n_trials // n_batches) for b in range(n_batches + 1)], dtype=np.int64)
    sizes = np.diff(starts)
    sums = np.zeros((n, n, n_batches))
    metric_sums = np.zeros((n, n_batches))
    per_call = max(1, min(4096, FIELD_CALL_CELLS // max(len(p.metrics) * p.n_bins for p in preps)))
    sign = 1.0 if spec.better == "higher" else -1.0
    for lo in range(0, n_trials, per_call):
        hi = min(lo + per_call, n_trials)
        vals = np.empty((n, hi - lo))
        for c, p in enumerate(preps):
            _, moments, _ = p.run_kernel(sc.spec.seed, key, lo, hi, 1, n_trials)   # one trial per chunk
            vals[c] = moments[:, idx[c], 0] / p.metrics[idx[c]].scale
            if on_trials is not None:
                on_trials(hi - lo)
            interrupt.check()
        b = (np.arange(lo, hi, dtype=np.int64) * n_batches) // n_trials
        for c in range(n):
            metric_sums[c] += np.bincount(b, weights=vals[c], minlength=n_batches)
        for i in range(n):
            for j in range(i + 1, n):
                d = sign * (vals[i] - vals[j])
                sums[i, j] += np.bincount(b, weights=(d > 0) + 0.5 * (d == 0), minlength=n_batches)
    for i in range(n):
        sums[i, i] = sizes / 2
        for j in range(i + 1, n):
            sums[j, i] = sizes - sums[i, j]
    notes = list(dict.fromkeys(note for p in preps for note in p.notes))
    better = "higher" if spec.better == "higher" else "lower"
    notes.insert(0, f"field: each contender runs alone on the same random streams (trial t of every contender "
                    f"uses the same numbers), {n_trials:,} trials; cell = P(row's {metric} is {better} than the "
                    f"column's in the same trial) + P(equal) / 2")
    names = [c.name for c in cs]
    notes += placeholder_caveats(names, [[p] for p in preps], reference_index(spec, names))
    return Matchup(sc, spec, "field", names, [unwrap(c.params)[0] for c in cs], n_trials, sums, sizes,
                   f"P(row's {metric} {better} than column's, same trial) + P(tie) / 2", [], _union(preps),
                   _union(preps, True), _data_files(preps), notes, metric_sums=metric_sums,
                   kernel_trials=n * n_trials)


# ----------------------------------------------------------------------------- analysis
def balanced_batches(m: Matchup) -> tuple[np.ndarray, np.ndarray]:
    """(wins[i, j, batch], games[batch]): what i scored against j per batch, both seats played
    (seated: ``M[i, j]`` sums + the seat-B score of i in ``M[j, i]``; field: the sums)."""
    if m.mode == "seated":
        wins = m.sums + (m.sizes[None, None, :] - np.transpose(m.sums, (1, 0, 2)))
        return wins, 2 * m.sizes
    return m.sums, m.sizes


def score_matrix(m: Matchup) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(seat-balanced score P, its CI low, CI high) per ordered pair."""
    wins, games = balanced_batches(m)
    p = np.full((m.n, m.n), np.nan)
    lo, hi = p.copy(), p.copy()
    for i in range(m.n):
        for j in range(m.n):
            p[i, j], _, lo[i, j], hi[i, j] = batch_ci(wins[i, j], games)
    return p, lo, hi


def cells_table(m: Matchup) -> list[dict]:
    """One row per ordered pair: the cell mean with its CI (seat A's score when seated), the
    seat-balanced score with its CI and, seated, the seat advantage M[i, j] + M[j, i] - 1."""
    p, plo, phi = score_matrix(m)
    rows = []
    for i in range(m.n):
        for j in range(m.n):
            mean, se, lo, hi = batch_ci(m.sums[i, j], m.sizes)
            row = {"a": m.names[i], "b": m.names[j], "mean": mean, "se": se, "ci_low": lo, "ci_high": hi,
                   "trials": int(m.sizes.sum()), "ci_crosses_half": bool(lo <= 0.5 <= hi),
                   "balanced": p[i, j], "balanced_ci_low": plo[i, j], "balanced_ci_high": phi[i, j]}
            if m.mode == "seated":
                adv = m.sums[i, j] + m.sums[j, i] - m.sizes
                row["seat_advantage"], _, row["seat_advantage_ci_low"], row["seat_advantage_ci_high"] = \
                    batch_ci(adv, m.sizes)
            rows.append(row)
    return rows


def symmetry_checks(m: Matchup) -> list[dict]:
    """Seated: each contender against itself (seat A's score should be 1/2 where the game is
    symmetric: checked against its CI). Field: trivially 1/2."""
    out = []
    for i, name in enumerate(m.names):
        mean, _, lo, hi = batch_ci(m.sums[i, i], m.sizes)
        out.append({"contender": name, "mean": mean, "ci_low": lo, "ci_high": hi,
                    "ok": bool(lo <= 0.5 <= hi)})
    return out


def identical_contenders(sums: np.ndarray) -> np.ndarray:
    """``[i, j]``: contenders i and j have identical results in every cell, batch by batch:
    exchanging them (their rows and their columns) leaves ``sums[a, b, batch]`` unchanged. On
    common random numbers two contenders with the same values do (seated: the same simulation in
    every cell they meet; field: the same value in every trial); then every bootstrap replicate
    gives them the same rating (the fit sees only these sums), so they tie. An equivalence
    (exchanges compose)."""
    n = sums.shape[0]
    same = np.eye(n, dtype=bool)
    for i in range(n):
        for j in range(i + 1, n):
            if not (np.array_equal(sums[i, i], sums[j, j]) and np.array_equal(sums[i, j], sums[j, i])):
                continue
            perm = np.arange(n)
            perm[i], perm[j] = j, i
            same[i, j] = same[j, i] = np.array_equal(sums[perm][:, perm], sums)
    return same


@dataclass
class Ratings:
    names: list[str]
    reference: str
    theta: np.ndarray                # log-strength minus the reference's
    ci_low: np.ndarray
    ci_high: np.ndarray
    se_bootstrap: np.ndarray
    se_fisher: np.ndarray            # assumes independent games (the cells share random numbers)
    resamples: int
    prior: bool                      # pseudo-draws added (the MLE would not exist)
    ranking: Ranking | None = None   # by rating: differences to the best, simultaneous CIs, ties

    def rows(self, m: Matchup) -> list[dict]:
        """One row per contender in the ranking's order (best first, tie groups together): the
        rating with its marginal CI and, from the ranking, the rank (tied contenders share it),
        tie group, difference to the best with its simultaneous CI and best-set membership (the
        columns ``answers.parquet`` gives a ranking)."""
        p, _, _ = score_matrix(m)
        out = []
        for o in self.ranking.options:
            i = self.names.index(o.name)
            others = [j for j in range(len(self.names)) if j != i]
            out.append({"rank": o.rank, "contender": self.names[i], "rating": float(self.theta[i]),
                        "ci_low": float(self.ci_low[i]), "ci_high": float(self.ci_high[i]),
                        "tie_group": o.tie_group, "in_best_set": o.in_best_set, "diff_to_best": o.diff,
                        "diff_to_best_low": o.diff_low, "diff_to_best_high": o.diff_high,
                        "se_bootstrap": float(self.se_bootstrap[i]), "se_fisher_independent": float(self.se_fisher[i]),
                        "p_beats_reference": float(0.5 * (1 + math.tanh(self.theta[i] / 2))),   # logistic
                        "mean_score_vs_field": float(np.mean(p[i, others])),
                        "cost": m.costs[i].value if m.costs else None})
        return out

    def note_lines(self) -> list[str]:
        """The ranking as note lines (the phrases of :meth:`Ranking.note_phrases`, as the other
        rankings give them): one per contender, best first, then the best set, how the intervals
        were formed and the winner's-curse caveat."""
        rk = self.ranking
        width = len(str(len(rk.options)))
        lines = []
        for pos, o in enumerate(rk.options, 1):
            i = self.names.index(o.name)
            tie, diff, where = rk.note_phrases(o, False)
            rating = f"{self.theta[i]:+.4f} [95% CI {self.ci_low[i]:+.4f}, {self.ci_high[i]:+.4f}]"
            lines.append(f"ranked {pos:0{width}d} by Bradley–Terry rating: {o.name} rank {o.rank}{tie}; rating "
                         f"{rating}; {diff}; {where}")
        lines.append(f"ranking by Bradley–Terry rating: best {rk.best}; best set (not distinguishable from the best "
                     f"at {rk.level:.0%} simultaneous): {', '.join(rk.best_set)}; {rk.method}; the best's rating is "
                     f"the largest of {len(rk.options)} noisy estimates, biased upward (re-run it with another seed "
                     f"for an unbiased estimate)")
        return lines

    def tie_groups(self) -> list[list[str]]:
        """The contenders sharing a tie group (groups of two or more), best first."""
        groups: dict[int, list[str]] = {}
        for o in self.ranking.options:
            groups.setdefault(o.tie_group, []).append(o.name)
        return [g for g in groups.values() if len(g) > 1]


def _fit(wins: np.ndarray, games: np.ndarray, prior: bool) -> tuple[np.ndarray, np.ndarray]:
    """Bradley–Terry of ``wins`` over ``games`` (matrices); ``prior``: one virtual draw per pair
    (half a win each way), when the MLE would not exist."""
    off = 1 - np.eye(wins.shape[0])
    return bradley_terry(wins + 0.5 * off, games + off) if prior else bradley_terry(wins, games)


def ratings(m: Matchup, resamples: int | None = None, seed: int | None = None) -> Ratings:
    """Bradley–Terry fit of the seat-balanced scores, relative to the reference contender, with
    percentile CIs from resampling the paired batches (jointly for all cells)."""
    wins_b, games_b = balanced_batches(m)
    return fit_ratings(wins_b, games_b, m.names, m.reference,
                       m.spec.bootstrap if resamples is None else resamples, m.sc.spec.seed if seed is None else seed,
                       identical=identical_contenders(m.sums))


def fit_ratings(wins_b: np.ndarray, games_b: np.ndarray, names: list[str], reference: int, resamples: int,
                seed: int, identical: np.ndarray | None = None) -> Ratings:
    """Bradley–Terry ratings from per-batch scores ``wins_b[i, j, batch]`` over ``games_b[batch]``
    games per ordered pair and batch (see :func:`ratings`), and their ranking
    (:func:`~analyzer.core.ranking.rank_bootstrap` on the same replicates). ``identical``: the
    contenders tied (default :func:`identical_contenders` of ``wins_b``); their ratings, equal up
    to the fit's rounding, are set to their mean, in the estimate and in every replicate."""
    n = len(names)
    if identical is None:
        identical = identical_contenders(wins_b)
    off = 1 - np.eye(n)
    wins = wins_b.sum(axis=2) * off
    games = float(games_b.sum())
    prior = not ford_connected(wins)
    theta, cov = _fit(wins, games * off, prior)
    theta = tie_mean(theta, identical)
    rel = theta - theta[reference]
    # SE of theta_i - theta_ref from the constrained Fisher covariance
    var = np.diag(cov) + cov[reference, reference] - 2 * cov[:, reference]
    se_f = np.sqrt(np.clip(var, 0, None))
    counts = bootstrap_counts(wins_b.shape[2], resamples, seed)
    boot = np.empty((resamples, n))
    for r in range(resamples):
        if r % 16 == 0:
            interrupt.check()          # 10^4 resamples of a large field take a while
        w = np.tensordot(wins_b, counts[r], axes=([2], [0])) * off
        t, _ = _fit(w, float(counts[r] @ games_b) * off, prior)
        t = tie_mean(t, identical)
        boot[r] = t - t[reference]
    if resamples:
        lo, hi = np.percentile(boot, [2.5, 97.5], axis=0)
        se_b = boot.std(axis=0, ddof=1) if resamples > 1 else np.full(n, np.nan)
    else:
        lo = hi = se_b = np.full(n, np.nan)
    ranking = rank_bootstrap(list(names), rel, boot, metric="rating", identical=identical,
                             what="bootstrap resamples of the paired batches", batches=wins_b.shape[2])
    return Ratings(list(names), names[reference], rel, lo, hi, se_b, se_f, resamples, prior, ranking)


# ----------------------------------------------------------------------------- costs
def contender_costs(sc, spec: MatchupSpec, cs: list[ContenderSpec], mode: str) -> list[Cost]:
    """Each contender's cost: the file's ``cost:``, else what the question's
    :attr:`~analyzer.core.questions.Question.points_cost` hook reads from the game's data."""
    out = []
    reader = sc.question.points_cost
    for i, c in enumerate(cs):
        if c.cost is not None:
            value, found = unwrap(c.cost, f"contenders[{i}].cost", str(sc.path))
            out.append(Cost(float(value), "file", [ph.as_dict() for ph in found]))
        elif reader is not None:
            try:
                read = reader(sc, unwrap(c.side if mode == "seated" else c.params)[0])
                out.append(Cost(read.points, read.how, list(read.placeholders)))
            except (DataError, ScenarioError, KeyError, TypeError, ValueError) as e:
                out.append(Cost(None, f"not readable: {e}"))
        else:
            out.append(Cost(None))
    return out


# ----------------------------------------------------------------------------- fair cost
def _parity(scores: np.ndarray) -> float:
    """Copies at which ``scores`` (score at 1, 2, ... copies, moving towards 1/2 from its first
    value) crosses 1/2, interpolated linearly in log-odds between whole copies (Bradley–Terry
    strengths add in log-odds); nan if it never does."""
    logit = np.log(np.clip(scores, 1e-6, 1 - 1e-6)) - np.log(np.clip(1 - scores, 1e-6, 1 - 1e-6))
    below = scores[0] < 0.5
    for k in range(1, scores.shape[0]):
        if (scores[k] >= 0.5) == below:
            l0, l1 = logit[k - 1], logit[k]
            return float(k + l0 / (l0 - l1)) if l1 != l0 else float(k + 1)
    return math.nan


def fair_costs(m: Matchup, key: int, on_trials=None) -> list[FairCost]:
    """Per contender X, the cost at which it would be at parity with the reference R at R's budget.

    If X scores under 1/2 against R, X's force is scaled up (2, 3, ... copies, at most
    ``matchup.max_scale``) until it scores 1/2 or more; the copies at parity ``k*`` come from
    interpolating the seat-balanced score between whole copies (:func:`_parity`), and X's fair
    cost is ``cost(R) / k*``. If X scores over 1/2, R is scaled up instead and X's fair cost is
    ``k* x cost(R)``. Every evaluation runs on the matchup's random streams; the CI comes from
    resampling the paired batches (jointly over the evaluated copies) and repeating the
    interpolation: it covers the Monte-Carlo noise, not the interpolation between whole copies.
    Seated mode only, for questions whose forces can be scaled (their
    :attr:`~analyzer.core.questions.Question.scale_force` hook)."""
    question = m.sc.question
    ref = m.reference
    scale = question.scale_force
    out = []
    wins, games = balanced_batches(m)
    counts = bootstrap_counts(m.sizes.shape[0], m.spec.bootstrap, m.sc.spec.seed + 1)
    for i, name in enumerate(m.names):
        cost = m.costs[i].value if m.costs else None
        fc = FairCost(name, cost, "n/a")
        if i == ref:
            fc.method, fc.fair_cost, fc.note = "reference", cost, "the reference"
        elif m.mode != "seated":
            fc.note = question.not_scalable or "fair cost needs a seated matchup (forces meeting in two seats)"
        elif scale is None:
            fc.note = question.not_scalable or f"no force scaling is defined for {question.game}/{question.name}"
        elif cost is None or m.costs[ref].value is None:
            fc.note = "no points cost for this contender or the reference (give cost: in the file)"
        else:
            _search(m, fc, i, ref, scale, key, wins[i, ref], games, counts, on_trials)
        out.append(fc)
    return out


def _search(m: Matchup, fc: FairCost, i: int, ref: int, scale, key: int, wins_1: np.ndarray, games: np.ndarray,
            counts: np.ndarray, on_trials) -> None:
    c_ref = m.costs[ref].value
    s1 = float(wins_1.sum() / games.sum())
    up_x = s1 < 0.5
    fc.method = "scale contender" if up_x else "scale reference"
    curve = [wins_1]                                   # per-batch score of X (scaled) over R (scaled)
    for k in range(2, m.spec.max_scale + 1):
        try:
            x = scale(m.sc, m.values[i], k) if up_x else m.values[i]
            r = m.values[ref] if up_x else scale(m.sc, m.values[ref], k)
            preps = _load_cells(m.sc, m.spec.seats, [(x, r), (r, x)], m.trials)
        except (ScenarioError, DataError) as e:      # e.g. past the kernel's model cap
            fc.note = f"stopped at {k} copies: {e}"
            break
        scores, _ = _seated_scores(preps, m.sc, m.spec, key, m.trials, on_trials)
        m.kernel_trials += 2 * m.trials
        curve.append(scores[0] + (m.sizes - scores[1]))
        s = float(curve[-1].sum() / games.sum())
        if (s >= 0.5) == up_x:
            break
    sums = np.stack(curve)                             # [copies, batch]
    for k in range(sums.shape[0]):
        mean, _, lo, hi = batch_ci(sums[k], games)
        fc.curve.append({"copies": k + 1, "scaled": "contender" if up_x else "reference", "score": mean,
                         "ci_low": lo, "ci_high": hi})
    fc.parity = _parity(sums.sum(axis=1) / games.sum())
    if math.isnan(fc.parity):
        fc.parity = None
        fc.note = fc.note or f"no parity within {sums.shape[0]} copies (matchup.max_scale)"
        return
    boot = np.array([_parity((sums @ c) / (games @ c)) for c in counts])
    to_cost = (lambda k: c_ref / k) if up_x else (lambda k: c_ref * k)
    fc.fair_cost = float(to_cost(fc.parity))
    missing = np.isnan(boot).mean() if boot.size else 1.0
    if boot.size and missing <= 0.025:
        lo, hi = np.nanpercentile(boot, [2.5, 97.5])
        fc.parity_ci = (float(lo), float(hi))
        a, b = to_cost(lo), to_cost(hi)
        fc.ci_low, fc.ci_high = float(min(a, b)), float(max(a, b))
    else:
        fc.note = (fc.note + "; " if fc.note else "") + (f"{missing:.0%} of the bootstrap resamples find no parity "
                                                         f"within the copies tried: CI open")


# ----------------------------------------------------------------------------- outputs
def document(m: Matchup, r: Ratings) -> dict:
    """Everything ``matchup --json`` prints and ``matchup.json`` holds."""
    from analyzer.outputs.writer import _json_value
    sym = symmetry_checks(m) if m.mode == "seated" else []
    notes = list(m.notes)
    if r.prior:
        notes.append("a contender won (or lost) every trial against the rest: the Bradley–Terry MLE does not exist; "
                     "one virtual draw per pair was added")
    notes += r.note_lines()
    for s in sym:
        if not s["ok"]:
            notes.append(f"{s['contender']} against itself: seat A scores {s['mean']:.4f} [95% CI {s['ci_low']:.4f}, "
                         f"{s['ci_high']:.4f}], not 1/2: the seats are not symmetric (rule options or seat settings)")
    cost_ph = [dict(ph, contender=m.names[i]) for i, c in enumerate(m.costs) for ph in cost_values(c)[0]]
    cost_ex = [dict(ph, contender=m.names[i]) for i, c in enumerate(m.costs) for ph in cost_values(c)[1]]
    notes += [n for name, c in zip(m.names, m.costs) if (n := cost_note(name, c))]
    return _json_value({
        "scenario": m.sc.name, "game": m.sc.spec.game, "question": m.sc.spec.question, "mode": m.mode,
        "seed": m.sc.spec.seed, "trials_per_pair": m.trials, "batches": int(m.sizes.shape[0]),
        "cell": m.outcome, "contenders": [{"name": n, "value": v, "cost": c.value, "cost_source": c.source,
                                          "cost_placeholders": cost_values(c)[0],
                                          "cost_example_values": cost_values(c)[1]}
                                         for n, v, c in zip(m.names, m.values, m.costs)],
        "reference": r.reference, "matchups": cells_table(m), "symmetry": sym,
        "ratings": r.rows(m), "rating_model": {"model": "Bradley-Terry, P(i beats j) = 1/(1+exp(r_j - r_i)), "
                                               "r relative to the reference", "ci": f"percentile, {r.resamples} "
                                               "bootstrap resamples of the paired batches", "prior": r.prior},
        "ranking": {"by": "Bradley-Terry rating", "best": r.ranking.best, "best_set": r.ranking.best_set,
                    "level": r.ranking.level, "method": r.ranking.method, "ties": r.tie_groups(),
                    "winners_curse": f"the best's rating is the largest of {len(m.names)} noisy estimates, biased "
                                     f"upward: re-run it with another seed for an unbiased estimate"},
        "field_means": [dict(zip(("contender", "mean", "se", "ci_low", "ci_high"), (n, *batch_ci(m.metric_sums[i],
                                                                                                  m.sizes))))
                        for i, n in enumerate(m.names)] if m.metric_sums is not None else [],
        "fair_cost": [f.row() | {"curve": f.curve} for f in m.fair] if m.fair is not None else None,
        "placeholders": m.placeholders, "cost_placeholders": cost_ph, "example_values": m.example_values,
        "cost_example_values": cost_ex,
        "placeholder_count": placeholder_count(m), "notes": notes})


def cost_values(c: Cost) -> tuple[list[dict], list[dict]]:
    """(placeholders, example values) a contender's cost rests on (an example value carries
    ``establishes``; :meth:`analyzer.core.gamedata.Placeholder.as_dict`)."""
    return ([ph for ph in c.placeholders if "establishes" not in ph],
            [ph for ph in c.placeholders if "establishes" in ph])


def cost_note(name: str, c: Cost) -> str:
    """The note on a contender's cost when it rests on placeholder or example values ('' when on
    neither): placeholders and example values counted apart (an example's value is the source's)."""
    ph, ex = cost_values(c)
    if not ph and not ex:
        return ""
    parts = ([f"{len(ph)} PLACEHOLDER value(s)"] if ph else []) + ([f"{len(ex)} example value(s)"] if ex else [])
    value = "unknown" if c.value is None else format(c.value, "g")
    return f"cost of {name} ({value}) uses " + " and ".join(parts) + ("" if ph else ", no placeholder")


def placeholder_count(m: Matchup) -> int:
    """How many distinct placeholder values the matchup used: those of every cell it ran and
    those its contenders' costs read (each value once, by path, file and value; example values,
    listed apart, not counted)."""
    used = [*m.placeholders, *(ph for c in m.costs for ph in cost_values(c)[0])]
    return len({(ph["path"], ph.get("source"), repr(ph["value"])) for ph in used})


def write(m: Matchup, r: Ratings, out_root: Path, *, threads: int, formats: tuple[str, ...] = ("png",)) -> Path:
    """``<out>/<scenario file stem>-matchup/<run-id>/``: matchups.parquet (one row per ordered pair),
    ratings.parquet, fair_cost.parquet (with --fair-cost), matchup.json, the matrix heatmap, the
    ranking plot (and the fair-cost plot), manifest.json and report.html; built under a
    temporary name and renamed into place."""
    import pandas as pd

    from analyzer.outputs import writer as outputs
    from analyzer.core import paths
    from analyzer.core.formats import MANIFEST_JSON, MATCHUP_JSON
    from analyzer.analyses.balance.common import manifest, report_page
    doc = document(m, r)
    with outputs.RunFolderBuild(Path(out_root), f"{outputs.folder_name(m.sc)}-matchup", m.sc.digest) as build:
        tmp = build.tmp
        outputs.write_parquet(pd.DataFrame(doc["matchups"]), tmp / "matchups.parquet")
        outputs.write_parquet(pd.DataFrame(doc["ratings"]), tmp / "ratings.parquet")
        if m.fair is not None:
            outputs.write_parquet(pd.DataFrame([f.row() for f in m.fair]), tmp / "fair_cost.parquet")
        outputs.write_document(tmp, MATCHUP_JSON, doc)
        import matplotlib.pyplot as plt
        from analyzer.outputs.plots import bounded_bbox
        for stem, fig in figures(doc):
            bbox = bounded_bbox(fig)
            for fmt in formats:
                paths.write_atomic(tmp, f"{stem}.{fmt}", lambda fh: fig.savefig(fh, format=fmt, bbox_inches=bbox))
            plt.close(fig)
        man = manifest(m.sc, kind="matchup", trials=m.kernel_trials, wall_seconds=m.wall_seconds, threads=threads,
                       data_files=m.data_files, extra={"mode": m.mode, "contenders": m.names})
        outputs.write_document(tmp, MANIFEST_JSON, man)
        html = report_page(f"{m.sc.name}: matchup", f"{doc['game']} / {doc['question']} · {m.mode} · "
                           f"{m.trials:,} trials per pair · seed {m.sc.spec.seed}", _report_sections(doc), tmp, doc,
                           man).encode("utf-8")
        paths.write_atomic(tmp, "report.html", lambda fh: fh.write(html))
    return build.path


def _report_sections(doc: dict) -> list[str]:
    from analyzer.outputs import report as rp
    rk = doc["ranking"]
    parts = ["<h2>Ratings</h2><p>" + rp._e(doc["rating_model"]["model"]) + "; " + rp._e(doc["rating_model"]["ci"])
             + ". Best set (not distinguishable from the best at " + rp._e(f"{rk['level']:.0%}") + " simultaneous): "
             + rp._e(", ".join(rk["best_set"])) + "; " + rp._e(rk["method"]) + ". Winner's curse: "
             + rp._e(rk["winners_curse"]) + ".</p>",
             rp._table(["rank", "contender", "tie group", "in best set", "rating", "95% CI low", "95% CI high",
                        "vs the best", "simultaneous CI low", "simultaneous CI high", "P(beats reference)",
                        "mean score vs field", "cost"],
                       [[x["rank"], x["contender"], x["tie_group"], x["in_best_set"], x["rating"], x["ci_low"],
                         x["ci_high"], x["diff_to_best"], x["diff_to_best_low"], x["diff_to_best_high"],
                         x["p_beats_reference"], x["mean_score_vs_field"], x["cost"]]
                        for x in doc["ratings"]], numeric_from=4),
             "<h2>Matchups</h2><p>" + rp._e(doc["cell"]) + "</p>",
             rp._table(["A", "B", "mean", "95% CI low", "95% CI high", "seat-balanced", "CI crosses 1/2"],
                       [[x["a"], x["b"], x["mean"], x["ci_low"], x["ci_high"], x["balanced"], x["ci_crosses_half"]]
                        for x in doc["matchups"]], numeric_from=2)]
    if doc["symmetry"]:
        parts += ["<h2>Each contender against itself</h2>", rp._table(
            ["contender", "seat A score", "95% CI low", "95% CI high", "contains 1/2"],
            [[s["contender"], s["mean"], s["ci_low"], s["ci_high"], s["ok"]] for s in doc["symmetry"]], 1)]
    if doc["fair_cost"]:
        parts += ["<h2>Fair cost against the reference</h2>", rp._table(
            ["contender", "cost", "method", "copies at parity", "fair cost", "95% CI low", "95% CI high", "change",
             "note"], [[f["contender"], f["cost"], f["method"], f["parity_copies"], f["fair_cost"],
                        f["fair_cost_ci_low"], f["fair_cost_ci_high"], f["cost_change"], f["note"]]
                       for f in doc["fair_cost"]], 1)]
    return parts


def figures(doc: dict) -> list:
    """(stem, figure): the matrix heatmap, the ranking and, with fair costs, the fair-cost plot."""
    out = [("matchup_matrix", matrix_figure(doc)), ("ratings", ratings_figure(doc))]
    if doc["fair_cost"] and any(f["fair_cost"] is not None and f["method"] != "reference" for f in doc["fair_cost"]):
        out.append(("fair_cost", fair_cost_figure(doc)))
    return out


def matrix_figure(doc: dict):
    """Rows beat columns: the cell mean (seat A's score when seated), hatched and marked '~'
    where the cell's 95% CI contains 1/2."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from analyzer.analyses.balance.common import footer
    from analyzer.outputs.plots import STYLE
    names = [c["name"] for c in doc["contenders"]]
    n = len(names)
    cell = {(x["a"], x["b"]): x for x in doc["matchups"]}
    vals = np.array([[cell[(a, b)]["mean"] for b in names] for a in names])
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(2.2 + 0.9 * n, 1.8 + 0.75 * n))
        im = ax.imshow(vals, cmap="RdBu", vmin=0, vmax=1)
        ax.grid(False)
        ax.set_xticks(range(n), names, rotation=30, ha="right", fontsize=8)
        ax.set_yticks(range(n), names, fontsize=8)
        for i, a in enumerate(names):
            for j, b in enumerate(names):
                x = cell[(a, b)]
                crosses = x["ci_crosses_half"]
                if crosses:
                    ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///", ec="gray", lw=0))
                if n <= 12:
                    ax.text(j, i, f"{x['mean']:.2f}{'~' if crosses else ''}\n±{(x['ci_high'] - x['ci_low']) / 2:.2f}",
                            ha="center", va="center", fontsize=7,
                            color="white" if abs(x["mean"] - 0.5) > 0.3 else "black")
        seat = " (row in seat A)" if doc["mode"] == "seated" else ""
        ax.set_xlabel("column (opponent)")
        ax.set_ylabel(f"row{seat}")
        fig.colorbar(im, ax=ax, label="score of the row against the column")
        import textwrap
        ax.set_title(f"{doc['scenario']}: who beats whom?\n" + textwrap.fill(
            f"cell = {doc['cell']}; hatched and ~: 95% CI contains 1/2", 40 + 8 * n), fontsize=8)
        footer(fig, doc, "monte_carlo", "matchup.json")
    return fig


def ratings_figure(doc: dict):
    """The ranking: left, each contender's difference in rating to the best with its 95%
    simultaneous CI (best-set members in green, the rest grey; tied contenders marked); right,
    its Bradley–Terry rating (relative to the reference) with its marginal 95% CI."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from analyzer.analyses.balance.common import footer
    from analyzer.outputs.plots import STYLE
    rows = doc["ratings"]
    rk = doc["ranking"]
    groups = {}
    for x in rows:
        groups[x["tie_group"]] = groups.get(x["tie_group"], 0) + 1

    def nan(v):
        return math.nan if v is None else v
    with plt.rc_context(STYLE):
        fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 1.6 + 0.45 * len(rows)), sharey=True,
                                      gridspec_kw={"width_ratios": [1.3, 1]})
        ys = np.arange(len(rows))[::-1]
        for y, x in zip(ys, rows):
            color = "tab:green" if x["in_best_set"] else "tab:gray"
            d, lo, hi = x["diff_to_best"], nan(x["diff_to_best_low"]), nan(x["diff_to_best_high"])
            err = [[max(0.0, d - lo)], [max(0.0, hi - d)]] if not (math.isnan(lo) or math.isnan(hi)) else None
            ax.errorbar(d, y, xerr=err, fmt="o", color=color, capsize=3)
            # a percentile CI need not contain the estimate: the bar spans what it can (no negative extent)
            ax2.errorbar(x["rating"], y, xerr=[[max(0.0, x["rating"] - x["ci_low"])],
                                               [max(0.0, x["ci_high"] - x["rating"])]], fmt="o",
                         color="tab:red" if x["contender"] == doc["reference"] else "tab:blue", capsize=3)
            cost = f", cost {x['cost']:g}" if x.get("cost") is not None else ""
            ax2.annotate(f"  P(beats {doc['reference']}) {x['p_beats_reference']:.2f}{cost}", (x["ci_high"], y),
                         fontsize=7, va="center")
        labels = [f"{x['rank']}. {x['contender']}" + (f" (tie {x['tie_group']})" if groups[x["tie_group"]] > 1 else "")
                  for x in rows]
        ax.set_yticks(ys, labels, fontsize=8)
        ax.axvline(0, color="gray", lw=0.8)
        ax.set_xlabel(f"rating − the best's ({rk['best']}), {rk['level']:.0%} simultaneous CI", fontsize=8)
        ax.set_title(f"green: best set ({rk['level']:.0%} simultaneous); grey: worse than the best", fontsize=8)
        ax2.axvline(0, color="gray", lw=0.8)
        ax2.set_title("the ratings, marginal 95% CIs", fontsize=8)
        ax2.set_xlabel(f"rating relative to {doc['reference']} (log-odds; 95% bootstrap CI)", fontsize=8)
        fig.suptitle(f"{doc['scenario']}: ranking of the contenders (Bradley–Terry)", fontsize=9)
        footer(fig, doc, "monte_carlo", "matchup.json")
    return fig


def fair_cost_figure(doc: dict):
    """Per contender, its cost and the fair cost (parity with the reference) with the CI."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from analyzer.analyses.balance.common import footer
    from analyzer.outputs.plots import STYLE
    rows = [f for f in doc["fair_cost"] if f["cost"] is not None]
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(7, 1.4 + 0.5 * len(rows)))
        ys = np.arange(len(rows))[::-1]
        for y, f in zip(ys, rows):
            ax.plot(f["cost"], y, "s", color="gray", label="cost" if y == ys[0] else None)
            if f["fair_cost"] is not None:
                lo = f["fair_cost_ci_low"] if f["fair_cost_ci_low"] is not None else f["fair_cost"]
                hi = f["fair_cost_ci_high"] if f["fair_cost_ci_high"] is not None else f["fair_cost"]
                ax.errorbar(f["fair_cost"], y, xerr=[[f["fair_cost"] - lo], [hi - f["fair_cost"]]], fmt="o",
                            color="tab:green", capsize=3, label="fair cost (95% CI)" if y == ys[0] else None)
        ax.set_yticks(ys, [f["contender"] for f in rows], fontsize=8)
        ax.set_xlabel(f"points: parity with {doc['reference']} at its budget")
        ax.set_title(f"{doc['scenario']}: what would each contender have to cost?", fontsize=9)
        ax.legend(fontsize=7)
        footer(fig, doc, "monte_carlo", "matchup.json")
    return fig
