"""Honest rankings of options: paired differences to the best with simultaneous intervals,
ties shown as ties (docs/balance.md "Rankings").

A question that ranks options (fleets, allocations, patterns, units) gives the per-option means
and the statistics of the per-trial differences between options (:class:`PairedDifferences`);
:func:`rank` turns them into a :class:`Ranking`:

* **best**: the option of highest mean (lowest with ``higher_is_better=False``); equal means:
  the first in the question's order.
* **difference to the best** ``mean_i - mean_best`` with a **simultaneous** interval: Bonferroni
  over ALL ``K(K-1)/2`` pairs of options, Student t with ``n - 1`` degrees of freedom at
  ``1 - (1 - level) / K(K-1)``. The best is chosen from the same trials, so the ``K - 1``
  differences to it are not a family fixed in advance; intervals simultaneous over every pair
  hold whichever option the data make the best (for K = 59 the multiplier is 4.18 against 3.39
  for a fixed family of 58: the price of that guarantee).
* **best set** (``in_best_set``): the options whose interval to the best does not lie wholly
  below 0 (above 0 when lower is better): not distinguishable from the best at ``level``
  simultaneous. It contains the true best option with probability >= ``level``.
* **ties**: options whose paired difference is exactly 0 in every trial (identical options on
  common random numbers; equal means in an exact run) form one tie group and share a rank
  (competition ranking, 1 2 2 4). Not being distinguishable is not transitive, so it makes no
  tie groups: that is what the best set says.
* **order**: by mean (best first), a tie group kept together at its first member's place,
  then the question's order. Deterministic for a seed.

The best's own mean is the largest of K noisy means, biased upward (the winner's curse); after a
Monte-Carlo run it is played again on fresh streams (:mod:`analyzer.run.reestimate`,
:func:`fresh_estimate`, ``Ranking.reestimate``), which measures that selection bias.

Options played on independent streams (no common random numbers) give
:meth:`PairedDifferences.independent`: the variance of a difference is the sum of the two
variances and no two options are ever identical. Options on correlated streams whose cross sums
were not recorded give :meth:`PairedDifferences.bounded` (SE_i + SE_j, valid for any correlation). An exact run gives
:meth:`PairedDifferences.exact`: zero-width intervals, ties where the exact means are equal.

Estimates without a per-trial pairing but with **bootstrap replicates** (the Bradley–Terry ratings
of ``analyzer matchup``: every replicate refits all the ratings from one joint resample of the
paired batches) give :func:`rank_bootstrap`: the same :class:`Ranking`, with the simultaneous
intervals formed by the **max-t** bootstrap over ALL ``K(K-1)/2`` pairs instead of Student t.
For every pair ``d_ij = est_i - est_j`` and its bootstrap SE ``s_ij`` (SD of the replicates'
differences); per replicate ``T_b = max over pairs |d*_ij - d_ij| / s_ij``; the multiplier ``c`` is
the ``ceil(level (B + 1))``-th smallest of the ``B`` values ``T_b``; every pair's interval is
``d_ij +- c s_ij``. When the replicates resample ``batches`` independent batches (a matchup's), the
interval is made a batch-means t interval like the module's others: ``c`` is taken to Student t with
``batches - 1`` degrees of freedom, ``c = t_quantile(Phi(c), batches - 1)``, and ``s`` by
``sqrt(batches / (batches - 1))`` (the bootstrap's plug-in variance of a mean of ``n`` batches is
``(n - 1) / n`` of the unbiased one); for two options and a mean this is the batch-means t interval.
The intervals hold for all pairs at once (approximately, as bootstrap intervals do), so, as above,
whichever option the data make the best. The best is the point estimate's. Bonferroni
percentile intervals were not chosen: at ``1 - (1 - level) / K(K-1)`` they need far more
replicates than the 200 a matchup draws by default (K = 6: the 0.17% tails). Options given as
``identical`` (e.g. contenders with identical results in every cell) tie: their estimates and
replicates, equal up to the fit's rounding, are given their mean, and their interval is [0, 0].
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from analyzer.core.stats import _t_cdf

#: relative tolerance under which two exact means are equal (float rounding of the same fraction
#: computed in different orders is ~1e-16)
EXACT_TIE_RTOL = 1e-12


def exact_se(n: int, total: int, total_sq: int, scale: int = 1) -> float:
    """The standard error of a mean of ``n`` integer values (units of ``1/scale``) from their exact
    sum and sum of squares: the sample variance is formed in Python integers before one division,
    so equal values give exactly 0. NaN below 2 values."""
    if n < 2:
        return math.nan
    var = max(n * int(total_sq) - int(total) * int(total), 0) / (n * (n - 1))
    return math.sqrt(var / n) / scale


def pair_index(i: int, j: int, k: int) -> int:
    """Column of pair ``i < j`` among ``k`` options, row by row: (0,1), (0,2), ..., (1,2), ...
    (the order :func:`kernels.driver.add_pair_products` writes)."""
    return i * k - i * (i + 1) // 2 + (j - i - 1)


@dataclass(frozen=True)
class PairedGroup:
    """Options whose per-trial values a kernel records pairwise: ``metrics`` (one per option, in
    the option order) and the ``k(k-1)/2`` counter columns from ``counter_offset`` that hold
    ``sum over trials of value_i * value_j`` for every pair ``i < j`` (:func:`pair_index` order),
    in the metrics' integer units."""

    metrics: tuple[str, ...]
    counter_offset: int

    @property
    def n_pairs(self) -> int:
        k = len(self.metrics)
        return k * (k - 1) // 2


@dataclass(frozen=True)
class PairedDifferences:
    """Per pair of options ``(i, j)``: the mean of ``x_i - x_j`` over the trials, its standard
    error, and whether the two were equal in every trial. ``n`` trials (0: exact); ``how`` names
    the pairing (paired, independent, exact) for the method text."""

    n: int
    diff: np.ndarray        # [i, j] mean of x_i - x_j
    se: np.ndarray          # [i, j] its standard error (NaN below 2 trials)
    identical: np.ndarray   # [i, j] bool: x_i == x_j in every trial (exact: equal means)
    how: str

    @classmethod
    def from_sums(cls, n: int, sums, sumsq, cross, scale: int = 1) -> "PairedDifferences":
        """From exact integer sums: ``sums[i]`` = sum x_i, ``sumsq[i]`` = sum x_i^2 and ``cross`` the
        pair sums sum x_i x_j (:class:`PairedGroup` order), all in units of ``1/scale``. The sums of
        the differences are formed in Python integers, so "equal in every trial" (sum of squared
        differences exactly 0) is exact."""
        k = len(sums)
        sums = [int(s) for s in sums]
        sumsq = [int(s) for s in sumsq]
        diff = np.zeros((k, k))
        se = np.full((k, k), np.nan) if n < 2 else np.zeros((k, k))
        identical = np.eye(k, dtype=bool)
        for i in range(k):
            for j in range(i + 1, k):
                s = sums[i] - sums[j]
                q = sumsq[i] + sumsq[j] - 2 * int(cross[pair_index(i, j, k)])
                identical[i, j] = identical[j, i] = q == 0
                if n:
                    diff[i, j], diff[j, i] = s / (n * scale), -s / (n * scale)
                if n >= 2:
                    se[i, j] = se[j, i] = exact_se(n, s, q, scale)
        return cls(n, diff, se, identical, "paired on common random numbers")

    @classmethod
    def independent(cls, n: int, means, ses) -> "PairedDifferences":
        """Options on independent streams: var(x_i - x_j) = se_i^2 + se_j^2, never identical."""
        m, s = np.asarray(means, float), np.asarray(ses, float)
        return cls(n, m[:, None] - m[None, :], np.sqrt(s[:, None] ** 2 + s[None, :] ** 2),
                   np.eye(len(m), dtype=bool), "independent streams")

    @classmethod
    def bounded(cls, n: int, means, ses, how: str) -> "PairedDifferences":
        """Options played on correlated streams whose cross sums were not recorded: the standard
        error of a difference bounded for ANY correlation, SE_i + SE_j (Cauchy-Schwarz:
        var(x_i - x_j) <= (sd_i + sd_j)^2); never identical. ``how`` says why."""
        m, s = np.asarray(means, float), np.asarray(ses, float)
        return cls(n, m[:, None] - m[None, :], s[:, None] + s[None, :], np.eye(len(m), dtype=bool), how)

    @classmethod
    def exact(cls, means) -> "PairedDifferences":
        """Exact means: exact differences, zero-width, ties where the means are equal."""
        m = np.asarray(means, float)
        same = np.isclose(m[:, None], m[None, :], rtol=EXACT_TIE_RTOL, atol=0.0)
        return cls(0, m[:, None] - m[None, :], np.zeros((len(m), len(m))), same, "exact")


@dataclass(frozen=True)
class RankedOption:
    """One option of a :class:`Ranking`: its mean, its difference to the best with the
    simultaneous interval (``diff_low``/``diff_high``, NaN when there is none: fewer than 2
    trials), its rank (competition ranking: tied options share it), its tie group (0 = the best's),
    and whether it is in the set not distinguishable from the best."""

    name: str
    mean: float
    diff: float
    diff_low: float
    diff_high: float
    rank: int
    tie_group: int
    in_best_set: bool


@dataclass(frozen=True)
class Ranking:
    """Options best first (:func:`rank`), what was ranked (``metric``) and how (``method``).

    ``own``: set when the options are sweep points (:meth:`analyzer.core.questions.Question.rank_points`,
    e.g. the units of a ``points_efficiency`` sweep): the option that the point carrying this
    ranking is; its ``metric`` row in ``answers.parquet`` gets that option's rank.

    ``reestimate``: the best option played again on fresh streams after a Monte-Carlo run
    (:mod:`analyzer.run.reestimate`): ``option``, ``metric`` (the metric played), ``trials``,
    ``stream``, ``level``, :func:`fresh_estimate`'s numbers (``race_*`` are the run's) and ``method``;
    None when it was not re-estimated (an exact run, ``--no-reestimate``, a question that cannot
    play one option alone)."""

    metric: str
    best: str
    options: tuple[RankedOption, ...]
    level: float
    method: str
    higher_is_better: bool = True
    own: str | None = None
    reestimate: dict | None = field(default=None, hash=False)

    def option(self, name: str) -> RankedOption:
        return next(o for o in self.options if o.name == name)

    @property
    def best_set(self) -> list[str]:
        return [o.name for o in self.options if o.in_best_set]

    def note_phrases(self, o: RankedOption, exact: bool) -> tuple[str, str, str]:
        """The phrases a ranking note gives option ``o``: its tie (`` (tied: group g)`` when another
        option shares its tie group, else ""), its difference to the best (``the best``; exact; or
        with the simultaneous CI) and whether it is in the best set."""
        shared = sum(q.tie_group == o.tie_group for q in self.options) > 1
        tie = f" (tied: group {o.tie_group})" if shared else ""
        if o.name == self.best:
            diff = "the best"
        elif exact:
            diff = f"{o.diff:+.4f} vs the best (exact)"
        else:
            diff = f"{o.diff:+.4f} vs the best [{self.level:.0%} simultaneous CI {o.diff_low:+.4f}, {o.diff_high:+.4f}]"
        return tie, diff, "in the best set" if o.in_best_set else "worse than the best"


#: the confidence of a re-estimation's intervals (the option's own, not simultaneous)
REESTIMATE_LEVEL = 0.95


def fresh_estimate(race_mean: float, race_se: float, race_trials: int, trials: int, total: int, total_sq: int,
                   scale: int = 1, level: float = REESTIMATE_LEVEL) -> dict:
    """A selected option re-estimated on fresh streams (``analyzer search``'s chosen option,
    :func:`analyzer.analyses.search.reestimate`; a run's ranking's best, :mod:`analyzer.run.reestimate`):
    from the exact sums of its ``trials`` fresh values (units of ``1/scale``) its ``fresh_mean`` with
    ``fresh_se`` and the Student t ``level`` interval ``fresh_low`` / ``fresh_high`` (t with trials - 1
    dof), beside the selecting run's ``race_mean`` / ``race_se`` (over ``race_trials``), and
    ``race_minus_fresh`` with its SE ``sqrt(race_se^2 + fresh_se^2)`` (independent streams: the
    variances add) and interval (t with min(trials, race_trials) - 1 dof): the estimated selection
    bias of the race's mean. The choice depends on the race's streams only, so the fresh mean is
    unbiased for the option's true mean given the choice."""
    mean = total / (trials * scale)
    se = exact_se(trials, total, total_sq, scale)
    t_fresh = t_quantile(1 - (1 - level) / 2, trials - 1)
    t_diff = t_quantile(1 - (1 - level) / 2, min(trials, race_trials) - 1)
    bias, bias_se = race_mean - mean, math.sqrt(race_se ** 2 + se ** 2)
    return {"fresh_mean": mean, "fresh_se": se, "fresh_low": mean - t_fresh * se,
            "fresh_high": mean + t_fresh * se, "race_mean": race_mean, "race_se": race_se,
            "race_minus_fresh": bias, "race_minus_fresh_se": bias_se,
            "race_minus_fresh_low": bias - t_diff * bias_se,
            "race_minus_fresh_high": bias + t_diff * bias_se}


def option_metric(metrics, ranked: str, option: str):
    """The metric of ``metrics`` that holds option ``option`` of a ranking of ``ranked`` (its
    ``Ranking.metric``): the one of quantity ``ranked`` and entity ``option``
    (:func:`analyzer.core.questions.quantity_and_entity`: ``vp.<fleet>``, ``p_sunk`` of a pattern),
    else the one named ``option``; None when there is none. The rule ``answers.parquet`` places a
    ranking's columns by. (Options that are sweep points, ``Ranking.own``, are each point's metric
    named ``ranked``.)"""
    from analyzer.core.questions import quantity_and_entity
    found = ([m for m in metrics if quantity_and_entity(m) == (ranked, option)]
             or [m for m in metrics if m.name == option])
    return found[0] if found else None


def t_quantile(p: float, dof: int) -> float:
    """The ``p`` quantile (p >= 0.5) of Student t with ``dof`` degrees of freedom (bisection on the
    CDF of :mod:`analyzer.core.stats`; exact to ~1e-12)."""
    lo, hi = 0.0, 1.0
    while _t_cdf(hi, dof) < p:
        lo, hi = hi, hi * 2
        if hi > 1e12:
            return math.inf
    for _ in range(200):
        mid = (lo + hi) / 2
        if _t_cdf(mid, dof) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return hi


def simultaneous_multiplier(k: int, n: int, level: float = 0.95) -> float:
    """Bonferroni multiplier over all ``k(k-1)/2`` pairs: t(n - 1) at ``1 - (1 - level) / (k(k-1))``."""
    pairs = max(1, k * (k - 1) // 2)
    return t_quantile(1 - (1 - level) / (2 * pairs), max(n - 1, 1))


def rank(names: list[str], means, pairs: PairedDifferences, *, metric: str, higher_is_better: bool = True,
         level: float = 0.95) -> Ranking:
    """Rank ``names`` (the question's order) by ``means`` with the pair statistics ``pairs``
    (the module docstring says what every field means and the rules)."""
    k = len(names)
    exact = pairs.how == "exact"
    c = 0.0 if exact else simultaneous_multiplier(k, pairs.n, level)
    if exact:
        method = "exact differences to the best; ties = equal exact means"
    else:
        method = (f"differences to the best {pairs.how}, {level:.0%} simultaneous: Bonferroni over all "
                  f"{max(1, k * (k - 1) // 2)} pairs, t({max(pairs.n - 1, 1)}) multiplier {c:.3f}; ties = "
                  f"equal in every trial")
    return _ranked(names, means, pairs, c, method, metric=metric, higher_is_better=higher_is_better, level=level)


def _ranked(names: list[str], means, pairs: PairedDifferences, c: float, method: str, *, metric: str,
            higher_is_better: bool, level: float) -> Ranking:
    """The :class:`Ranking` of ``names`` by ``means``: the differences to the best with the
    intervals ``diff +- c se`` of ``pairs`` (zero-width when exact), ties, best set and order of
    the module docstring."""
    k = len(names)
    m = np.asarray(means, float)
    sign = 1.0 if higher_is_better else -1.0
    best = min(range(k), key=lambda i: (-sign * m[i], i))
    group = tie_groups(pairs.identical)        # exact equality is transitive (identical in every trial)
    # a group sits at its best member's mean (its members' means are equal: identical trials)
    head = {g: min((i for i in range(k) if group[i] == g), key=lambda i: (-sign * m[i], i)) for g in set(group)}
    order = sorted(range(k), key=lambda i: (-sign * m[head[group[i]]], head[group[i]], i))
    exact = pairs.how == "exact"
    ids: dict[int, int] = {}
    options, rank_of = [], {}
    for pos, i in enumerate(order):
        g = group[i]
        if g not in ids:
            ids[g] = len(ids)
            rank_of[g] = pos + 1
        tied_best = bool(pairs.identical[i, best])
        d = 0.0 if tied_best else float(m[i] - m[best]) if exact else float(pairs.diff[i, best])
        half = 0.0 if exact or tied_best else c * float(pairs.se[i, best])
        lo, hi = d - half, d + half
        if math.isnan(half):
            inside = True                      # one trial: nothing is distinguishable
        elif exact:
            inside = tied_best
        else:
            inside = (hi >= 0) if higher_is_better else (lo <= 0)
        options.append(RankedOption(names[i], float(m[i]), d, lo, hi, rank_of[g], ids[g], inside))
    return Ranking(metric, names[best], tuple(options), level, method, higher_is_better)


def tie_groups(identical) -> list[int]:
    """Per option the first option of its tie group (``identical[i, j]``: options i and j are
    equal; an equivalence, so the first match in order is the group's)."""
    same = np.asarray(identical, bool)
    group = list(range(same.shape[0]))
    for i in range(same.shape[0]):
        group[i] = next((j for j in range(i) if same[i, j]), i)
    return group


def tie_mean(values, identical) -> np.ndarray:
    """``values[..., option]`` (one estimate per option, or replicates x options) with the members
    of each tie group (:func:`tie_groups` of ``identical``) set to their mean: options known equal,
    whose estimates differ only by a fit's rounding."""
    out = np.array(values, float)
    group = tie_groups(np.asarray(identical, bool) | np.eye(out.shape[-1], dtype=bool))
    for g in set(group):
        members = [i for i in range(len(group)) if group[i] == g]
        if len(members) > 1:
            out[..., members] = out[..., members].mean(axis=-1, keepdims=True)
    return out


def max_t_multiplier(diff: np.ndarray, replicate_diffs: np.ndarray, se: np.ndarray, level: float) -> float:
    """The max-t bootstrap multiplier (module docstring) of the pairs ``diff[p]`` (estimates),
    ``replicate_diffs[b, p]`` (their bootstrap replicates) and ``se[p]`` (bootstrap SEs); pairs of
    SE 0 (no variation in any replicate) take no part. NaN with fewer than 2 replicates; 0 when no
    pair varies."""
    b = replicate_diffs.shape[0]
    if b < 2:
        return math.nan
    use = se > 0
    if not use.any():
        return 0.0
    t = np.max(np.abs(replicate_diffs[:, use] - diff[use]) / se[use], axis=1)
    order = min(b, math.ceil(level * (b + 1)))        # the (B + 1) rule: a level quantile of B draws
    return float(np.sort(t)[order - 1])


def rank_bootstrap(names: list[str], estimates, replicates, *, metric: str, identical=None,
                   higher_is_better: bool = True, level: float = 0.95, what: str = "bootstrap replicates",
                   batches: int | None = None) -> Ranking:
    """Rank ``names`` by ``estimates`` (one per option) with bootstrap ``replicates[b, option]``:
    max-t simultaneous intervals over all pairs (module docstring); ``batches``: the replicates
    resample that many independent batches (t with ``batches - 1`` dof, unbiased SEs).
    ``identical[i, j]``: options known equal (tied: their estimates and replicates are set to the
    group's mean, the pair's interval is [0, 0]); default none. ``what`` names the replicates in
    the method text."""
    k = len(names)
    same = np.eye(k, dtype=bool) if identical is None else np.asarray(identical, bool) | np.eye(k, dtype=bool)
    group = tie_groups(same)
    est = tie_mean(estimates, same)
    reps = tie_mean(np.asarray(replicates, float).reshape(-1, k), same)
    b = reps.shape[0]
    same = np.array([[group[i] == group[j] for j in range(k)] for i in range(k)])
    iu, ju = np.triu_indices(k, 1)
    pair_d = est[iu] - est[ju]
    pair_r = reps[:, iu] - reps[:, ju]
    pair_se = pair_r.std(axis=0, ddof=1) if b >= 2 else np.full(iu.shape[0], np.nan)
    pair_se[same[iu, ju]] = 0.0
    free = ~same[iu, ju]
    c = max_t_multiplier(pair_d[free], pair_r[:, free], pair_se[free], level)
    df = ""
    if batches is not None and batches >= 2:
        if c > 0 and math.isfinite(c):
            c = t_quantile(0.5 * (1 + math.erf(c / math.sqrt(2))), batches - 1)
        pair_se = pair_se * math.sqrt(batches / (batches - 1))
        df = f", t({batches - 1}) for {batches} batches"
    diff = est[:, None] - est[None, :]
    se = np.full((k, k), np.nan) if b < 2 else np.zeros((k, k))
    se[iu, ju] = se[ju, iu] = pair_se
    pairs = PairedDifferences(b, diff, se, same, f"from {b} {what}")
    method = (f"differences to the best from {b} {what}, {level:.0%} simultaneous: max-t bootstrap over all "
              f"{max(1, k * (k - 1) // 2)} pairs{df}, multiplier {c:.3f}; ties = identical results")
    return _ranked(names, est, pairs, c, method, metric=metric, higher_is_better=higher_is_better, level=level)


def group_differences(group: PairedGroup, n: int, sums, sumsq, counters, scale: int = 1) -> PairedDifferences:
    """:meth:`PairedDifferences.from_sums` of a :class:`PairedGroup` from a run's exact sums
    (``sums[i]``/``sumsq[i]`` of the group's metrics) and its counter totals."""
    cross = counters[group.counter_offset: group.counter_offset + group.n_pairs]
    return PairedDifferences.from_sums(n, sums, sumsq, cross, scale)
