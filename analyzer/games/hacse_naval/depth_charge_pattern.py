"""Question ``depth_charge_pattern``: the pattern optimiser (docs/models/hacse_naval.md §4.2).

For a budget of ``charges`` depth charges, every pattern (a multiset of candidate drops, each a
depth setting at a hex offset from the guessed U-boat hex) is dropped on the same U-boat draw
from the prior in every trial; each pattern's P(sunk) is one metric, and the notes rank them
with 95% Wilson intervals. Exact mode computes every pattern's P(sunk) by enumeration.
"""
from __future__ import annotations

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
from analyzer.core.questions import Context, ExactAnswer, Metric, Prepared, Question, register
from kernels.hacse_naval import damage as kd
from kernels.hacse_naval import depth_charge as k

#: more patterns than this is refused at the edge (each is a metric of every trial)
MAX_PATTERNS = 1000
#: ranked patterns written into the notes
RANKED_IN_NOTES = 10


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
        return [(tuple(o), d) for o in self.offsets for d in sorted(set(self.depth_settings))]


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
        metrics = [Metric(f"p_sunk_p{i:03d}", f"P(sunk) with pattern {lab}", "probability")
                   for i, lab in enumerate(labels)]

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

        def ranking(summaries, exact):
            return rank_notes(summaries, metrics, exact)

        notes = [f"{len(patterns)} patterns of {p.charges} charges from {len(candidates)} candidate drops; U-boat "
                 f"sheet {cc.sheet.name}; each trial drops every pattern on the same U-boat draw",
                 pattern_key_note(metrics)]
        notes += below_max_depth_notes(p.sub, cc.max_depth)
        return Prepared(metrics, 2, kernel=k.pattern_kernel, args=cc.args(np.asarray(patterns, np.int64)),
                        exact=refusing_repeated_fires(ctx, exact_answer), derived_notes=ranking,
                        placeholders=tuple(d.used + sheet_placeholders()), notes=tuple(notes))

    def plots(self, meta, points, dists):
        from analyzer.games.hacse_naval import plots
        return plots.pattern_figures(meta, points)


def pattern_key_note(metrics: list[Metric]) -> str:
    """The metric names' patterns, in the table's order: 'patterns: p000 = d1x6, p001 = d1x5 d2x1, ...'."""
    return "patterns: " + ", ".join(f"{m.name.removeprefix('p_sunk_')} = {_label(m)}" for m in metrics)


def _label(m: Metric) -> str:
    return m.label.removeprefix("P(sunk) with pattern ")


def ranking(summaries: dict, metrics: list[Metric]) -> list[tuple[str, str, float, float, float]]:
    """[(metric name, pattern label, P(sunk), CI low, CI high)], best first (ties: listed order)."""
    rows = []
    for m in metrics:
        s = summaries.get(m.name)
        if s is not None:
            rows.append((m.name, _label(m), s.mean, s.ci_low, s.ci_high))
    return sorted(rows, key=lambda r: -r[2])


def rank_notes(summaries: dict, metrics: list[Metric], exact: bool) -> list[str]:
    rows = ranking(summaries, metrics)
    if not rows:
        return []
    out = []
    for i, (name, label, mean, lo, hi) in enumerate(rows[:RANKED_IN_NOTES]):
        ci = "" if exact else f" [95% CI {lo:.4f}, {hi:.4f}]"
        out.append(f"pattern rank {i + 1}: {label} ({name}): P(sunk) = {mean:.4f}{ci}")
    if not exact and len(rows) > 1:
        best, second = rows[0], rows[1]
        clear = best[3] > second[4]
        out.append(f"best pattern {best[1]} is {'clearly' if clear else 'NOT clearly'} ahead of {second[1]} "
                   f"(95% CIs {'do not overlap' if clear else 'overlap'})")
    return out
