"""Question ``depth_charge``: one charge or a pattern against a U-boat (source "Wasserbomben", l.70-75).

docs/models/hacse_naval.md §4.1. Each charge: 1W10 minus 2 per depth level and per hex between
the charge and the unit; the thrower also minus its speed. The U-boat's position is fixed
(``hex_distance_to_sub`` on each charge) or a prior over depths and hex offsets from the
guessed hex (``offset`` on each charge). Exact mode enumerates the prior, every W10, every
random row and every follow-up of the damage sheet.
"""
from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from analyzer.games.hacse_naval import rules as R
from analyzer.games.hacse_naval.data import Data, Sheet, guess_and_ring, hex_distance, param_error
from analyzer.games.hacse_naval.exact_damage import SheetExact, TooLarge, nw10, w10_minus
from analyzer.core.errors import ScenarioError
from analyzer.core.gamedata import Placeholder
from analyzer.core.questions import Context, ExactAnswer, ExactMetric, Metric, Prepared, Question, register
from kernels.hacse_naval import damage as kd
from kernels.hacse_naval import depth_charge as k

MAX_CHARGES = 40
#: the prior is drawn from a table holding each entry once per unit of weight (kernels.rng.uniform_int)
MAX_PRIOR_WEIGHT = 100_000
Offset = tuple[int, int]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Charge(_Strict):
    depth_setting: int = Field(..., ge=0, le=20, description="depth level the charge is set to explode at")
    hex_distance_to_sub: int | None = Field(None, ge=0, le=20,
                                            description="hexes from the charge to the U-boat (fixed position)")
    offset: Offset | None = Field(None, description="axial hex (q, r) of the charge relative to the guessed "
                                                    "U-boat hex (with a position prior)")
    hex_distance_to_thrower: int = Field(1, ge=0, le=20, description="hexes from the charge to the throwing "
                                         "ship ('meist in das Hex neben oder hinter dem werfenden Schiff')")

    @model_validator(mode="after")
    def _one_position(self):
        if (self.hex_distance_to_sub is None) == (self.offset is None):
            raise ValueError("give exactly one of hex_distance_to_sub (U-boat position fixed) or offset "
                             "(axial [q, r] from the guessed U-boat hex)")
        return self


class SubParams(_Strict):
    ship: str = Field("type_viic", description="damage sheet ships/<ship>.yaml")
    depth: int | list[int] = Field(..., description="depth level, or a list: a prior over these levels")
    depth_weights: list[int] | None = Field(None, description="integer weights of the listed depths (default equal)")
    position: Literal["guess", "guess_and_ring"] | list[Offset] = Field(
        "guess", description="guess = the charges' hex_distance_to_sub is exact; guess_and_ring = uniform over "
                             "the guessed hex and its 6 neighbours; or a list of axial offsets")
    position_weights: list[int] | None = Field(None, description="integer weights of the positions (default equal)")

    @model_validator(mode="after")
    def _weights(self):
        depths = self.depth if isinstance(self.depth, list) else [self.depth]
        if not depths or any(not 0 <= d <= 20 for d in depths):
            raise ValueError(f"depth: got {self.depth!r}; allowed: levels 0..20 (0 = surface, 1 = periscope depth)")
        if self.depth_weights is not None and (len(self.depth_weights) != len(depths)
                                               or any(w < 0 for w in self.depth_weights) or sum(self.depth_weights) == 0):
            raise ValueError(f"depth_weights: need {len(depths)} non-negative integers, not all 0")
        n_pos = len(self.positions())
        if self.position_weights is not None and (len(self.position_weights) != n_pos
                                                  or any(w < 0 for w in self.position_weights)
                                                  or sum(self.position_weights) == 0):
            raise ValueError(f"position_weights: need {n_pos} non-negative integers, not all 0")
        if self.prior_total() > MAX_PRIOR_WEIGHT:
            raise ValueError(f"the prior's weights (depth weight x position weight, summed) come to "
                             f"{self.prior_total():,}; allowed: at most {MAX_PRIOR_WEIGHT:,} (use smaller integers)")
        return self

    def depths(self) -> list[int]:
        return self.depth if isinstance(self.depth, list) else [self.depth]

    def positions(self) -> list[Offset]:
        if self.position == "guess":
            return [(0, 0)]
        if self.position == "guess_and_ring":
            return guess_and_ring()
        return [tuple(p) for p in self.position]

    def prior_total(self) -> int:
        return sum(w for _, _, w in self.prior())

    def prior(self) -> list[tuple[int, int, int]]:
        """[(depth, position index, integer weight)], weight 0 entries dropped."""
        dw = self.depth_weights or [1] * len(self.depths())
        pw = self.position_weights or [1] * len(self.positions())
        return [(d, i, a * b) for d, a in zip(self.depths(), dw) for i, b in enumerate(pw) if a * b > 0]


class ThrowerParams(_Strict):
    speed: int = Field(..., ge=0, le=40, description="the thrower's current speed (hex/round)")


class DepthChargeParams(_Strict):
    charges: list[Charge] = Field(..., min_length=1, max_length=MAX_CHARGES)
    sub: SubParams
    thrower: ThrowerParams

    @model_validator(mode="after")
    def _positions_match(self):
        fixed = [c.hex_distance_to_sub is not None for c in self.charges]
        if any(fixed) and self.sub.position != "guess":
            raise ValueError("with a U-boat position prior (sub.position) every charge needs `offset`, not "
                             "hex_distance_to_sub")
        if any(fixed) and not all(fixed):
            raise ValueError("charges mix hex_distance_to_sub and offset: use one form for all")
        return self


@register
class DepthCharge(Question):
    game = "hacse_naval"
    name = "depth_charge"
    summary = "Depth charges (Wasserbomben) against a U-boat of known or guessed depth and hex (exact mode)"
    Params = DepthChargeParams
    rule_options = (R.CHARGE_ROLL, R.DEPTH_UNIT) + R.DAMAGE_OPTIONS + R.SUB_OPTIONS + R.FIRE_OPTIONS
    primary_metric = "p_sunk"
    supports_exact = True

    def prepare(self, p: DepthChargeParams, ctx: Context) -> Prepared:
        d = Data(ctx)
        compiled = compile_depth_charge(p.charges, p.sub, p.thrower.speed, ctx, d)
        sheet = compiled.sheet
        metrics = depth_charge_metrics(sheet)
        n_bins = compiled.max_damage + 1

        def exact_answer():
            try:
                return exact_depth_charge(compiled)
            except TooLarge as e:
                raise param_error(ctx, "charges", str(e)) from None

        notes = [f"U-boat damage sheet: {sheet.name} ({sheet.sheet.name}); charges hit a random row "
                 f"(placeholder G11); the U-boat keeps its depth for the round (placeholder G8)"]
        notes += below_max_depth_notes(p.sub, compiled.max_depth)
        return Prepared(metrics, n_bins, kernel=k.depth_charge_kernel, args=compiled.args(list(range(len(p.charges)))),
                        exact=refusing_repeated_fires(ctx, exact_answer), placeholders=tuple(d.used),
                        notes=tuple(notes))

    def plots(self, meta, points, dists):
        from analyzer.games.hacse_naval import plots
        return plots.depth_charge_figures(meta, points, dists)


def refusing_repeated_fires(ctx: Context, exact_answer):
    """``exact_answer`` refused at once under fire_repeats = every_hit_past_threshold: the
    exact engine starts a fire only when a threshold is crossed (as torpedo_salvo.refuse_in_exact)."""
    def exact():
        if ctx.rules.get("fire_repeats") == "every_hit_past_threshold":
            raise ScenarioError(str(ctx.scenario_file or ctx.scenario_dir), "rules.fire_repeats", "exact mode does "
                                "not support fire_repeats = every_hit_past_threshold (the default, l.53): run "
                                "Monte Carlo, or set fire_repeats: once_per_threshold")
        return exact_answer()
    return exact


def sheet_placeholders() -> list[Placeholder]:
    """Nothing: the depth charges' hit-location module (rules.hit_location = uniform_row, G11) is marked in
    ``Data.used`` by :func:`compile_depth_charge` (unless the data describes it), for both depth-charge
    questions; kept for depth_charge_pattern, which adds this list to ``d.used``."""
    return []


def charge_hit_location(d: Data) -> list[Placeholder]:
    """[rules.hit_location = uniform_row] (G11: a depth charge strikes a uniform row of the U-boat's sheet),
    or [] when the data describes the module (block hacse.charge_hit_location_module)."""
    return R.module(d, R.CHARGE_HIT_LOCATION, "uniform_row", "charge_hit_location",
                    "G4/G11: the row a hit strikes is not in the source; uniform over the eligible rows")


def below_max_depth_notes(sub: SubParams, max_depth: int) -> list[str]:
    """A note when the U-boat (or a depth of its prior) is below its sheet's maximum depth: legal,
    and it costs W10 per level at the end of the round (source l.39), so the user should see it."""
    deep = [dep for dep in sub.depths() if dep > max_depth]
    if not deep:
        return []
    return [f"sub.depth {', '.join(map(str, deep))} is below the U-boat's maximum depth {max_depth} "
            f"(ships/{sub.ship}.yaml max_depth): there it takes W10 per level below at the end of the "
            f"round ('W10 Schaden je Lvl Unterschied', source l.39)"]


def depth_charge_metrics(sheet: Sheet) -> list[Metric]:
    return [Metric("damage", "depth-charge damage to the U-boat: the sum of max(0, W10 - 2 x steps) over the "
                             "charges", unaffected_by=("ships", "rules.hit_location")),
            Metric("p_sunk", "P(U-boat sunk: a Rumpf row destroyed)", "probability"),
            Metric("p_leaking", "P(U-boat leaking: a Rumpf row at half its hit points)", "probability"),
            Metric("thrower_damage", "damage to the throwing ship", unaffected_by=("ships", "rules.hit_location")),
            Metric("total_damage", f"damage the U-boat's rows ({sheet.sheet.name}) took, each row at most its [HP]: "
                                   f"the charges', fires' and the end-of-round depth damage (W10 je Lvl)"),
            Metric("damage_dealt", "damage dealt to the U-boat's rows, not capped (charges, fires' first 2, depth "
                                   "damage; points beyond a destroyed row's [HP] counted)")]


class CompiledCharges:
    """A pattern of charge specs and a U-boat prior compiled to kernel arrays."""

    def __init__(self, specs, sub: SubParams, speed: int, sheet: Sheet, consts: dict, rules: dict):
        self.specs = specs                     # [(depth_setting, distance per position, thrower steps)]
        self.sub = sub
        self.speed = speed
        self.sheet = sheet
        self.consts = consts
        self.rules = rules
        self.prior = sub.prior()
        self.max_depth = sheet.sheet.max_depth if sheet.sheet.max_depth is not None else 99

    def steps(self, spec, depth: int, pos: int) -> int:
        return abs(spec[0] - depth) // self.consts["depth_divisor"] + spec[1][pos]

    @property
    def max_damage(self) -> int:
        """Histogram top: every charge at full W10, the depth damage and the sheet's follow-ups."""
        follow = int(self.sheet.rows[:, kd.HE].sum()) * 10 + 2 * 3 * self.sheet.n_rows
        overrun = 10 * max(1, max(d for d, _, _ in self.prior) + self.sheet.n_rows)
        return 10 * len(self.specs) + follow + overrun

    def args(self, pattern_or_patterns) -> tuple:
        sheet = self.sheet
        prior_depth = np.array([d for d, _, _ in self.prior], np.int64)
        prior_table = np.repeat(np.arange(len(self.prior)), [w for _, _, w in self.prior]).astype(np.int64)
        steps = np.array([[self.steps(spec, d, pos) for d, pos, _ in self.prior] for spec in self.specs], np.int64)
        thrower_steps = np.array([s[2] for s in self.specs], np.int64)
        c = self.consts
        consts = np.array([c["per_step"], c["depth_divisor"], c["per_speed"],
                           int(self.rules["charge_roll"] == "one_per_unit"),
                           int(self.rules["overrun_dice"] == "one_times_levels")], np.int64)
        pat = np.asarray(pattern_or_patterns, np.int64)
        return (prior_depth, prior_table, pat, steps, thrower_steps, self.speed,
                self.max_depth, consts, sheet.rows, sheet.hex_rows, sheet.hex_n, sheet.info)


def compile_depth_charge(charges: list[Charge], sub: SubParams, speed: int, ctx: Context, d: Data,
                         ship_field: str = "sub.ship") -> CompiledCharges:
    rules = ctx.rules
    sheet = d.sheet(sub.ship, ship_field, rules, uses=("hexes", "max_depth"))
    if not sheet.sheet.submarine:
        raise param_error(ctx, ship_field, f"{sub.ship!r} is not a submarine sheet (submarine: true)")
    dc = d.rule("depth_charge")
    consts = {"per_step": int(dc["damage_per_step"]), "per_speed": int(dc["per_thrower_speed"]),
              "depth_divisor": 10 if rules["depth_unit"] == "per_75m" else 1}
    thrower_depth = int(dc["thrower_depth"])
    positions = sub.positions()
    specs = []
    for c in charges:
        if c.hex_distance_to_sub is not None:
            dist = [c.hex_distance_to_sub]
        else:
            dist = [hex_distance(tuple(c.offset), pos) for pos in positions]
        thrower_steps = abs(c.depth_setting - thrower_depth) // consts["depth_divisor"] + c.hex_distance_to_thrower
        specs.append((c.depth_setting, dist, thrower_steps))
    for ph in charge_hit_location(d):        # listed after the data the question reads (as before)
        if ph not in d.used:
            d.used.append(ph)
    return CompiledCharges(specs, sub, speed, sheet, consts, rules)


# --------------------------------------------------------------------------- exact mode
def sub_state_distribution(cc: CompiledCharges, pattern: list[int], ex: SheetExact | None = None):
    """{(depth, state): p} after the pattern and the end-of-round depth damage, over the prior."""
    return next(pattern_state_distributions(cc, [pattern], ex))


def pattern_state_distributions(cc: CompiledCharges, patterns, ex: SheetExact | None = None):
    """:func:`sub_state_distribution` of each pattern in turn (a generator). Patterns sharing their first
    charges (itertools.combinations_with_replacement lists them so) share those charges' distributions:
    per prior entry the distribution after each prefix of the previous pattern is kept and only the
    charges past the common prefix are folded; the states' outcomes are cached in ``ex``."""
    ex = ex or SheetExact(cc.sheet)
    n_rows = cc.sheet.n_rows
    all_rows = [(r, 1.0 / n_rows) for r in range(n_rows)]
    total_w = sum(w for _, _, w in cc.prior)
    prev: list[int] = []
    stacks = [[{ex.initial(): 1.0}] for _ in cc.prior]    # per prior entry: dist after 0, 1, ... charges of prev
    for pattern in patterns:
        pattern = list(pattern)
        common = 0
        while common < min(len(prev), len(pattern)) and prev[common] == pattern[common]:
            common += 1
        out: dict = {}
        for (depth, pos, w), stack in zip(cc.prior, stacks):
            del stack[common + 1:]
            for c in pattern[common:]:
                amounts = w10_minus(cc.consts["per_step"] * cc.steps(cc.specs[c], depth, pos))
                stack.append(ex.hit_dist(stack[-1], amounts, all_rows))
            dist = overrun_exact(ex, stack[-1], depth, cc.max_depth, cc.rules["overrun_dice"], all_rows)
            for st, p in dist.items():
                out[st] = out.get(st, 0.0) + p * w / total_w
        prev = pattern
        yield out


def overrun_exact(ex: SheetExact, dist: dict, depth: int, max_depth: int, mode: str, rows) -> dict:
    """``dist`` after the end-of-round depth damage (W10 per level below the maximum depth, source
    l.39); each state's outcome distribution is computed once per (levels, mode) and kept in ``ex.memo``."""
    rows = tuple(rows)
    memo = ex.memo.setdefault(("overrun", mode, rows), {})     # (state, levels) -> (ids, p) arrays
    one = np.ones(1, np.float64)
    outcomes = []
    for st in dist:
        levels = depth - (max_depth - st[1][kd.T_DEPTH_LOSS])
        if levels <= 0 or st[1][kd.T_SUNK]:
            outcomes.append((np.array([ex.state_id(st)], np.int64), one))
            continue
        key = (st, levels)
        after = memo.get(key)
        if after is None:
            sub = {st: 1.0}
            if mode == "per_level":
                for _ in range(levels):
                    sub = ex.hit_dist(sub, nw10(1), rows, skip_if_sunk=False)
            else:
                sub = ex.hit_dist(sub, nw10(1, levels), rows, skip_if_sunk=False)
            after = memo[key] = (np.array([ex.state_id(s2) for s2 in sub], np.int64),
                                 np.fromiter(sub.values(), np.float64, len(sub)))
        outcomes.append(after)
    return ex.mix(dist, outcomes)


def charge_damage_distribution(cc: CompiledCharges, pattern: list[int]) -> dict[int, float]:
    """The charges' formula damage to the U-boat, summed over the pattern, mixed over the prior."""
    total_w = sum(w for _, _, w in cc.prior)
    out: dict[int, float] = {}
    for depth, pos, w in cc.prior:
        dist = {0: 1.0}
        for c in pattern:
            one = w10_minus(cc.consts["per_step"] * cc.steps(cc.specs[c], depth, pos))
            dist = _convolve(dist, one)
        for v, p in dist.items():
            out[v] = out.get(v, 0.0) + p * w / total_w
    return out


def _convolve(a: dict[int, float], b: dict[int, float]) -> dict[int, float]:
    out: dict[int, float] = {}
    for x, p in a.items():
        for y, q in b.items():
            out[x + y] = out.get(x + y, 0.0) + p * q
    return out


def thrower_distribution(cc: CompiledCharges, pattern: list[int]) -> dict[int, float]:
    """The thrower's damage: a sum over charges of max(0, W10 - 2 x steps - speed)."""
    dist = {0: 1.0}
    for c in pattern:
        dist = _convolve(dist, w10_minus(cc.consts["per_step"] * cc.specs[c][2] + cc.consts["per_speed"] * cc.speed))
    return dist


def _metric(dist: dict[int, float]) -> ExactMetric:
    """An exact distribution {value: p} as an ExactMetric (values of probability 0 left out)."""
    dist = {v: p for v, p in dist.items() if p > 0} or {0: 1.0}
    values = np.array(sorted(dist), np.int64)
    probs = np.array([dist[v] for v in values])
    return ExactMetric(float(values @ probs), values, probs)


def exact_depth_charge(cc: CompiledCharges) -> ExactAnswer:
    pattern = list(range(len(cc.specs)))
    states = sub_state_distribution(cc, pattern)
    total_damage: dict[int, float] = {}
    dealt: dict[int, float] = {}
    sunk = leaking = 0.0
    for st, p in states.items():
        took = sum(st[0])                  # the rows' damage, each capped at its [HP] (SheetExact keeps it so)
        total_damage[took] = total_damage.get(took, 0.0) + p
        dealt[st[2]] = dealt.get(st[2], 0.0) + p
        sunk += p * st[1][kd.T_SUNK]
        leaking += p * (st[1][kd.T_LEAKS] > 0)
    metrics = {"damage": _metric(charge_damage_distribution(cc, pattern)), "p_sunk": _metric({0: 1 - sunk, 1: sunk}),
               "p_leaking": _metric({0: 1 - leaking, 1: leaking}),
               "thrower_damage": _metric(thrower_distribution(cc, pattern)),
               "total_damage": _metric(total_damage), "damage_dealt": _metric(dealt)}
    return ExactAnswer(metrics, (f"exact: {len(states):,} damage states enumerated",))
