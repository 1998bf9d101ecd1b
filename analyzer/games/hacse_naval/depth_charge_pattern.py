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

``patterns`` plays a chosen subset of the enumerated patterns (issue 30): each keeps its metric
name (its number in the full enumeration) and label, and each pattern's dice come from its own
trial-local stream (seeded by one per-trial draw and that number), so a subset run gives every
pattern exactly the values the full run gives it. :meth:`DepthChargePattern.option_params` and
the ``analyzer search`` option space (:mod:`.search_space`) are built on it.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
import re

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

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

#: more patterns than this (enumerated, so also played or raced by ``analyzer search``) is refused
#: at the edge: each is a metric of every trial, and a search keeps every pair's cross sum
#: (K(K-1)/2: 499,500 at 1000; docs/balance.md "Search")
MAX_PATTERNS = 1000
#: ranked patterns written into the notes (every pattern's rank is in answers.parquet)
RANKED_IN_NOTES = 10
#: up to this many patterns the kernel records every pair's cross sum (K(K-1)/2 counters: 7,140
#: at 120); more patterns are ranked on the bound SE_i + SE_j of a difference's SE
MAX_PAIRED_PATTERNS = 120
#: the ranked quantity (answers.parquet ``quantity``; each pattern's label is its ``entity``)
RANKED = "p_sunk"


#: one drop of a pattern given as ((q, r), depth setting)
Drop = tuple[Offset, int]
#: a pattern as ``params.patterns`` takes it: a label ('d2x3 d3x3', 'd2@(0,0)x2 d3@(1,0)x4'), a list of
#: depth settings (one offset) or a list of drops
PatternSpec = str | list[int] | list[Drop]
_TOKEN = re.compile(r"d(\d+)(?:@\((-?\d+),(-?\d+)\))?x(\d+)")


class PatternParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    charges: int = Field(..., ge=1, le=12, description="the budget: depth charges per pattern")
    depth_settings: list[int] = Field(..., min_length=1, description="candidate depth settings (levels)")
    offsets: list[Offset] = Field(default_factory=lambda: [(0, 0)],
                                  description="candidate axial hexes (q, r) relative to the guessed U-boat hex")
    hex_distance_to_thrower: int = Field(1, ge=0, le=20, description="hexes from every drop to the thrower")
    sub: SubParams
    thrower: ThrowerParams
    patterns: list[PatternSpec] | None = Field(
        None, description="play only these patterns (default: every one enumerated), each a label as the "
                          "'patterns:' note prints it ('d2x3 d3x3', 'd2@(0,0)x2 d3@(1,0)x4'), a list of depth "
                          "settings (one offset: [2, 2, 2, 3, 3, 3]) or a list of drops [[q, r], depth]; each "
                          "keeps its metric name and label (played in the enumeration's order)")

    @field_validator("patterns")
    @classmethod
    def _known_patterns(cls, given, info: ValidationInfo):
        """Every pattern once, each ``charges`` drops from the candidates (refused naming the
        pattern's position and what is allowed)."""
        data = info.data
        if given is None or not {"charges", "depth_settings", "offsets"} <= set(data):
            return given
        if not given:
            raise ValueError("an empty list; allowed: at least one pattern, or leave patterns out to play every "
                             "enumerated one")
        cands = candidate_drops(data["offsets"], data["depth_settings"])
        seen: dict[tuple, int] = {}
        for j, spec in enumerate(given):
            pat = pattern_of(spec, cands, data["charges"], f"patterns[{j}]")
            if pat in seen:
                raise ValueError(f"patterns[{j}] ({pattern_label(pat, cands)}) is patterns[{seen[pat]}] again; "
                                 f"allowed: each pattern once")
            seen[pat] = j
        return given

    def played(self) -> list[int]:
        """The numbers (in the full enumeration, :func:`enumerate_patterns`) of the patterns played,
        in the enumeration's order: ``patterns`` when given, else all."""
        cands = self.candidates()
        if self.patterns is None:
            return list(range(n_patterns(len(cands), self.charges)))
        number = {pat: i for i, pat in enumerate(enumerate_patterns(len(cands), self.charges))}
        return sorted(number[pattern_of(spec, cands, self.charges, f"patterns[{j}]")]
                      for j, spec in enumerate(self.patterns))

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
        return candidate_drops(self.offsets, self.depth_settings)


def candidate_drops(offsets, depth_settings) -> list[tuple[Offset, int]]:
    """:meth:`PatternParams.candidates` of these offsets and depth settings."""
    offsets = list(dict.fromkeys(tuple(o) for o in offsets))
    return [(o, d) for o in offsets for d in sorted(set(depth_settings))]


def n_patterns(n_candidates: int, k_charges: int) -> int:
    """Multisets of ``k_charges`` drops from ``n_candidates``: C(n + k - 1, k)."""
    return math.comb(n_candidates + k_charges - 1, k_charges)


def enumerate_patterns(n_candidates: int, k_charges: int) -> list[tuple[int, ...]]:
    """Every pattern as a sorted tuple of candidate numbers, in the question's order (pattern ``i``
    is metric ``p_sunk_p{i:03d}``)."""
    return list(itertools.combinations_with_replacement(range(n_candidates), k_charges))


def pattern_of(spec, candidates: list[tuple[Offset, int]], charges: int, where: str) -> tuple[int, ...]:
    """The pattern (sorted tuple of candidate numbers) a ``params.patterns`` entry names: a label,
    depth settings (one offset) or drops ``[[q, r], depth]``. ValueError naming ``where`` and what is
    allowed: a drop that is not a candidate, a wrong count of drops, a label that does not parse."""
    offsets = list(dict.fromkeys(o for o, _ in candidates))
    depths = sorted({d for _, d in candidates})
    shown_offsets = ", ".join(f"({q},{r})" for q, r in offsets)
    if isinstance(spec, str):
        drops = []
        for token in spec.split():
            m = _TOKEN.fullmatch(token)
            if m is None or (m.group(2) is None and len(offsets) > 1):
                example = pattern_label(tuple(sorted([0] * charges)), candidates)
                raise ValueError(f"{where}: got {spec!r}; allowed: a label as the 'patterns:' note prints it, "
                                 f"depth setting and count per drop (e.g. {example!r}"
                                 + (", the offset after @ since the candidates span several hexes" if len(offsets) > 1
                                    else "") + ")")
            o = offsets[0] if m.group(2) is None else (int(m.group(2)), int(m.group(3)))
            drops += [(o, int(m.group(1)))] * int(m.group(4))
    elif all(isinstance(x, int) for x in spec):
        if len(offsets) > 1:
            raise ValueError(f"{where}: got {spec!r}: depth settings alone name no hex; allowed with the offsets "
                             f"{shown_offsets}: drops [[q, r], depth] or a label like "
                             f"{pattern_label(tuple([0] * charges), candidates)!r}")
        drops = [(offsets[0], d) for d in spec]
    else:
        drops = [(tuple(o), d) for o, d in spec]
    if len(drops) != charges:
        raise ValueError(f"{where}: got {spec!r}, {len(drops)} drops; allowed: exactly charges = {charges}")
    index = {c: i for i, c in enumerate(candidates)}
    for o, d in drops:
        if (o, d) not in index:
            raise ValueError(f"{where}: got {spec!r}: a drop at depth {d}, offset ({o[0]},{o[1]}) is not a "
                             f"candidate; allowed: depth settings {', '.join(map(str, depths))} at the offsets "
                             f"{shown_offsets}")
    return tuple(sorted(index[c] for c in drops))


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
        every = enumerate_patterns(len(candidates), p.charges)
        played = p.played()
        patterns = [every[i] for i in played]
        labels = [pattern_label(pat, candidates) for pat in patterns]
        metrics = [Metric(f"p_sunk_p{i:03d}", f"P(sunk) with pattern {lab}", "probability", quantity=RANKED,
                          entity=lab) for i, lab in zip(played, labels)]
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

        which = (f"{len(patterns)} patterns" if len(patterns) == len(every) else
                 f"{len(patterns)} of the {len(every)} patterns (params.patterns)")
        notes = [f"{which} of {p.charges} charges from {len(candidates)} candidate drops; U-boat "
                 f"sheet {cc.sheet.name}; each trial drops every pattern on the same U-boat draw (each pattern "
                 f"rolls its own dice, from its own stream: the same values whichever patterns are played)",
                 pattern_key_note(metrics)]
        notes += below_max_depth_notes(p.sub, cc.max_depth)
        args = cc.args(np.asarray(patterns, np.int64).reshape(len(patterns), p.charges)) + (
            np.asarray(played, np.int64), np.int64(paired))
        return Prepared(metrics, 2, kernel=k.pattern_kernel, args=args, counters=counters,
                        exact=refusing_repeated_fires(ctx, exact_answer), derived_notes=ranking_notes,
                        paired_groups=(group,) if paired else (), derived_ranking=ranking,
                        placeholders=tuple(d.used + sheet_placeholders()), notes=tuple(notes))

    def option_params(self, params: PatternParams, options: list[str]) -> PatternParams:
        """The params playing only the patterns labelled ``options`` (labels as the ranking names
        them): each keeps its metric name and label, and its values are the full run's."""
        return type(params).model_validate({**params.model_dump(), "patterns": list(options)})

    @staticmethod
    def search_space(sc, so_plans=None, policies=None):
        """``analyzer search``: the scenario's patterns raced by P(sunk) (:mod:`.search_space`)."""
        from analyzer.games.hacse_naval.search_space import PatternSpace
        return PatternSpace(sc, so_plans, policies, with_pair_sums)

    def plots(self, meta, points, dists):
        from analyzer.games.hacse_naval import plots
        return plots.pattern_figures(meta, points)


def with_pair_sums(prep: Prepared) -> Prepared:
    """``prep`` with every pair's cross sum recorded whatever the number of patterns (a run records
    them up to :data:`MAX_PAIRED_PATTERNS`: K(K-1)/2 counters per chunk in 64-chunk batches): for
    callers that run few chunks per kernel call (the search space). The counters come back as the
    kernel's last array, in :func:`analyzer.core.ranking.pair_index` order; the metrics are unchanged."""
    k_ = len(prep.metrics)
    names = [m.name.removeprefix("p_sunk_") for m in prep.metrics]
    counters = tuple(Counter(f"sunk_pair.{names[i]}.{names[j]}") for i in range(k_) for j in range(i + 1, k_))
    group = PairedGroup(tuple(m.name for m in prep.metrics), 0)
    return dataclasses.replace(prep, args=prep.args[:-1] + (np.int64(1),), counters=counters,
                               paired_groups=(group,))


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
