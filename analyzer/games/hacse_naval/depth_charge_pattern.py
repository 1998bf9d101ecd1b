"""Question ``depth_charge_pattern``: the pattern optimiser (docs/models/hacse_naval.md §4.2).

For a budget of ``charges`` depth charges, every pattern (a multiset of candidate drops, each a
depth setting at a hex offset from the guessed U-boat hex) is dropped on the same U-boat draw
from the prior in every trial; each pattern's P(sunk) is one metric. The patterns are ranked by
:mod:`analyzer.core.ranking` (docs/balance.md "Rankings"): the difference of each to the best
with 95% simultaneous CIs over all pairs, the best set, ties. The patterns share the U-boat draw
but roll their own dice one after the other, so their results are correlated (either sign: a
pattern for deep boats and one for shallow boats are negatively correlated); the kernel records
every pair's sum of ``sunk_i * sunk_j`` (up to :data:`MAX_PAIRED_PATTERNS` patterns), which gives
each difference's variance exactly; above that the bound SE_i + SE_j (any correlation). No two
patterns roll the same dice, so no two are tied in a Monte-Carlo run; in an exact run equal P(sunk)
tie. Exact mode computes every pattern's P(sunk) by enumeration.
"""
from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from analyzer.games.hacse_naval import rules as R
from analyzer.games.hacse_naval.data import Data, param_error
from analyzer.games.hacse_naval.depth_charge import (Charge, Offset, SubParams, ThrowerParams, _metric,
                                                     below_max_depth_notes, compile_depth_charge, sheet_placeholders,
                                                     pattern_state_distributions, refusing_repeated_fires)
from analyzer.games.hacse_naval.exact_damage import SheetExact, TooLarge
from analyzer.core.questions import Context, Counter, ExactAnswer, Metric, Prepared, Question, register
from analyzer.core.ranking import PairedDifferences, PairedGroup, Ranking, rank
from kernels.hacse_naval import damage as kd
from kernels.hacse_naval import depth_charge as k

#: more patterns than this is refused at the edge (each is a metric of every trial)
MAX_PATTERNS = 1000
#: ranked patterns written into the notes (every pattern's rank is in answers.parquet)
RANKED_IN_NOTES = 10
#: up to this many patterns the kernel records every pair's cross sum (K(K-1)/2 counters: 7,140
#: at 120); more patterns are ranked on the bound SE_i + SE_j of a difference's SE
MAX_PAIRED_PATTERNS = 120
#: the ranked quantity (answers.parquet ``quantity``; each pattern's label is its ``entity``)
RANKED = "p_sunk"


class PatternParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    charges: int = Field(..., ge=1, le=12, description="the budget: depth charges per pattern")
    depth_settings: list[int] = Field(..., min_length=1, description="candidate depth settings (levels)")
    offsets: list[Offset] = Field(default_factory=lambda: [(0, 0)],
                                  description="candidate axial hexes (q, r) relative to the guessed U-boat hex")
    hex_distance_to_thrower: int = Field(1, ge=0, le=20, description="hexes from every drop to the thrower")
    sub: SubParams
    thrower: ThrowerParams

    @model_validator(mode="after")
    def _size(self):
        if any(not 0 <= d <= 20 for d in self.depth_settings):
            raise ValueError(f"depth_settings: got {self.depth_settings}; allowed: levels 0..20")
        n = n_patterns(len(self.candidates()), self.charges)
        if n > MAX_PATTERNS:
            raise ValueError(f"{n:,} patterns ({len(self.candidates())} candidate drops, {self.charges} charges) "
                             f"exceed {MAX_PATTERNS}: fewer depth_settings or offsets, or a smaller budget")
        return self

    def candidates(self) -> list[tuple[Offset, int]]:
        """Every (offset, depth setting): offsets in the order given, each once (a repeated offset
        would make patterns that are the same drops under two names), depth settings sorted, each once."""
        offsets = list(dict.fromkeys(tuple(o) for o in self.offsets))
        return [(o, d) for o in offsets for d in sorted(set(self.depth_settings))]


def n_patterns(n_candidates: int, k_charges: int) -> int:
    """Multisets of ``k_charges`` drops from ``n_candidates``: C(n + k - 1, k)."""
    return math.comb(n_candidates + k_charges - 1, k_charges)


def pattern_label(pattern, candidates) -> str:
    """'d2x3 d3x3' (a single offset) or 'd2@(0,0)x2 ...': each drop with its multiplicity."""
    counts: dict[int, int] = {}
    for c in pattern:
        counts[c] = counts.get(c, 0) + 1
    single = len({o for o, _ in candidates}) == 1
    parts = []
    for c, n in counts.items():
        o, d = candidates[c]
        parts.append(f"d{d}x{n}" if single else f"d{d}@({o[0]},{o[1]})x{n}")
    return " ".join(parts)


@register
class DepthChargePattern(Question):
    game = "hacse_naval"
    name = "depth_charge_pattern"
    summary = "Pattern optimiser: rank every k-charge pattern (depth settings x hexes) by P(sunk), with CIs"
    Params = PatternParams
    rule_options = (R.CHARGE_ROLL, R.DEPTH_UNIT) + R.DAMAGE_OPTIONS + R.SUB_OPTIONS + R.FIRE_OPTIONS
    primary_metric = "p_sunk_p000"
    supports_exact = True
    default_plots = False

    def prepare(self, p: PatternParams, ctx: Context) -> Prepared:
        d = Data(ctx)
        candidates = p.candidates()
        charges = [Charge(depth_setting=dep, offset=o, hex_distance_to_thrower=p.hex_distance_to_thrower)
                   for o, dep in candidates]
        cc = compile_depth_charge(charges, p.sub, p.thrower.speed, ctx, d)
        patterns = list(itertools.combinations_with_replacement(range(len(candidates)), p.charges))
        labels = [pattern_label(pat, candidates) for pat in patterns]
        metrics = [Metric(f"p_sunk_p{i:03d}", f"P(sunk) with pattern {lab}", "probability", quantity=RANKED,
                          entity=lab) for i, lab in enumerate(labels)]
        paired = len(patterns) <= MAX_PAIRED_PATTERNS

        def exact_answer():
            ex = SheetExact(cc.sheet)
            out = {}
            try:
                for i, states in enumerate(pattern_state_distributions(cc, patterns, ex)):
                    ps = sum(q for st, q in states.items() if st[1][kd.T_SUNK])
                    out[metrics[i].name] = _metric({0: 1 - ps, 1: ps})
            except TooLarge as e:
                raise param_error(ctx, "charges", str(e)) from None
            return ExactAnswer(out)

        names = [m.name for m in metrics]
        group = PairedGroup(tuple(names), 0)
        counters = tuple(Counter(f"sunk_pair.{names[i].removeprefix('p_sunk_')}.{names[j].removeprefix('p_sunk_')}")
                         for i in range(len(names)) for j in range(i + 1, len(names))) if paired else ()

        def ranking(summaries: dict, exact: bool, pairs: dict, trials: int) -> list[Ranking]:
            return [pattern_ranking(metrics, summaries, exact, pairs.get(names[0]), trials)]

        def ranking_notes(summaries: dict, exact: bool, rankings: list[Ranking]) -> list[str]:
            return rank_notes(rankings[0], metrics, summaries, exact)

        notes = [f"{len(patterns)} patterns of {p.charges} charges from {len(candidates)} candidate drops; U-boat "
                 f"sheet {cc.sheet.name}; each trial drops every pattern on the same U-boat draw (each pattern "
                 f"rolls its own dice)",
                 pattern_key_note(metrics)]
        notes += below_max_depth_notes(p.sub, cc.max_depth)
        args = cc.args(np.asarray(patterns, np.int64)) + (np.int64(paired),)
        return Prepared(metrics, 2, kernel=k.pattern_kernel, args=args, counters=counters,
                        exact=refusing_repeated_fires(ctx, exact_answer), derived_notes=ranking_notes,
                        paired_groups=(group,) if paired else (), derived_ranking=ranking,
                        placeholders=tuple(d.used + sheet_placeholders()), notes=tuple(notes))

    def plots(self, meta, points, dists):
        from analyzer.games.hacse_naval import plots
        return plots.pattern_figures(meta, points)


def pattern_key_note(metrics: list[Metric]) -> str:
    """The metric names' patterns, in the table's order: 'patterns: p000 = d1x6, p001 = d1x5 d2x1, ...'."""
    return "patterns: " + ", ".join(f"{m.name.removeprefix('p_sunk_')} = {_label(m)}" for m in metrics)


def _label(m: Metric) -> str:
    return m.label.removeprefix("P(sunk) with pattern ")


#: how the pairs are formed, for the ranking's method text
PAIRED_HOW = "paired (every pattern on the same U-boat draw, its own dice; pair sums recorded)"
BOUNDED_HOW = (f"bounded: SE_i + SE_j, valid for any correlation (more than {MAX_PAIRED_PATTERNS} patterns: "
               f"pair sums not recorded)")


def pattern_ranking(metrics: list[Metric], summaries: dict, exact: bool, pairs: PairedDifferences | None,
                    trials: int) -> Ranking:
    """The patterns (named by their labels) ranked by P(sunk), higher is better
    (:mod:`analyzer.core.ranking`): from the kernel's pair sums when it recorded them, else on the
    bound SE_i + SE_j; exact differences and ties (equal exact P(sunk)) in an exact run."""
    means = [summaries[m.name].mean for m in metrics]
    if exact:
        diffs = PairedDifferences.exact(means)
    elif pairs is not None:
        diffs = dataclasses.replace(pairs, how=PAIRED_HOW)
    else:
        diffs = PairedDifferences.bounded(trials, means, [summaries[m.name].se for m in metrics], BOUNDED_HOW)
    return rank([_label(m) for m in metrics], means, diffs, metric=RANKED)


def rank_notes(ranking: Ranking, metrics: list[Metric], summaries: dict, exact: bool) -> list[str]:
    """The first :data:`RANKED_IN_NOTES` patterns of the ranking, one self-contained line each (the
    zero-padded position keeps the order when notes are sorted): pattern, its metric, rank (tied
    patterns share it), tie group, P(sunk) [95% CI], the difference to the best [95% simultaneous
    CI], best set; then the best, the best set and how the intervals were formed."""
    metric_of = {_label(m): m.name for m in metrics}
    opts = ranking.options
    width = len(str(len(opts)))
    out = []
    for pos, o in enumerate(opts[:RANKED_IN_NOTES], 1):
        s = summaries[metric_of[o.name]]
        val = f"{s.mean:.4f} (exact)" if exact else f"{s.mean:.4f} [95% CI {s.ci_low:.4f}, {s.ci_high:.4f}]"
        tie, diff, where = ranking.note_phrases(o, exact)
        out.append(f"pattern ranked {pos:0{width}d}: {o.name} ({metric_of[o.name]}) rank {o.rank}{tie}; P(sunk) = "
                   f"{val}; {diff}; {where}")
    best_set = ranking.best_set
    shown = ", ".join(best_set[:20]) + (f" and {len(best_set) - 20} more (answers.parquet)" if len(best_set) > 20 else "")
    more = f"; patterns ranked below {RANKED_IN_NOTES}: answers.parquet" if len(opts) > RANKED_IN_NOTES else ""
    what = ("the best and the patterns tied with it" if exact else
            f"not distinguishable from the best at {ranking.level:.0%} simultaneous")
    out.append(f"ranking by P(sunk): best pattern {ranking.best}; best set ({what}): {shown}; {ranking.method}" + ("" if exact else
               f"; the best's P(sunk) is the largest of {len(opts)} noisy estimates, biased upward (re-run it with "
               f"another seed for an unbiased estimate)") + more)
    return out
