"""Question ``duel``: two squadrons (or small fleets) fight turn by turn
(spec ``docs/models/dystopian_wars.md`` §7; rules §4 initiative, §8 rout and bravery,
§11 shooting and damage).

All models share one distance (fixed band schedule, or closing from a start distance at
the squadrons' speeds). No positions, arcs, linked/split fire or ramming; boarding is optional
(``boarding.enabled``, off by default: spec §7 "Boarding step"). This
module validates the sides, compiles them into one record (:class:`DuelRecord`: the fleet
profiles as arrays, including the legal to-hit number of every attacker weapon against every
target in every band, the settings and the dice tables) and runs
:func:`kernels.dystopian_wars.duel.duel_kernel` on it.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from analyzer.games.dystopian_wars.common import stacked_tables
from analyzer.games.dystopian_wars.data import GameData, State, Strict, crit_cumulative
from analyzer.games.dystopian_wars.rules import (AIR, SMALL_HP_CODE, WEAPON_CODE, RuleError, cancel_faces,
                                                  hit_faces, hits_distribution, illegal_reason, options, plain_faces,
                                                  rout_faces, to_hit_number)
from analyzer.games.counters import POOL_COUNTERS
from analyzer.core.questions import Context, Counter, Metric, PointsCost, Prepared, Question, register
from kernels.dystopian_wars import duel as k

Policy = Literal["first", "weakest", "strongest", "spread", "random"]
POLICY_CODE = {"first": k.P_FIRST, "weakest": k.P_WEAKEST, "strongest": k.P_STRONGEST,
               "spread": k.P_SPREAD, "random": k.P_RANDOM}
TIE_CODE = {"reroll": k.TIE_REROLL, "a_first": k.TIE_A_FIRST, "b_first": k.TIE_B_FIRST}
#: profile fields the duel reads (marked as used placeholders)
PROFILE_FIELDS = ("size", "capital", "hp", "dr", "cr", "aa", "cc", "mv", "points", "fast", "elusive", "weapons")


class ModelEntry(Strict):
    profile: str = Field(..., description="fleet profile (fleets/*.yaml)")
    count: int = Field(1, ge=1, le=k.MAX_MODELS, description="identical copies")
    hp_lost: int = Field(0, ge=0, le=1000, description="HP lost before the duel")
    state: State = Field("surface", description="fixed for the whole duel")
    commodore: bool = Field(False, description="the side's fleet commodore (at most one per side)")


class SquadronSpec(Strict):
    name: str | None = Field(None, description="label")
    models: list[ModelEntry] = Field(..., min_length=1)


class SideSpec(Strict):
    squadrons: list[SquadronSpec] = Field(..., min_length=1, description="activation order = list order")

    @model_validator(mode="after")
    def _one_commodore(self):
        n = sum(m.count for sq in self.squadrons for m in sq.models if m.commodore)
        if n > 1:
            raise ValueError(f"at most one commodore per side; got {n} (a commodore entry needs count: 1)")
        return self


class RangeSpec(Strict):
    mode: Literal["fixed", "closing"] = Field("fixed", description="fixed band schedule, or closing distance")
    bands: list[int] | None = Field(None, description="fixed: band of turn t = bands[min(t, len) - 1] (default [2])")
    start: float | None = Field(None, ge=0, le=1000, description="closing: start distance in inches")
    speed_a: float | None = Field(None, ge=0, le=100,
                                  description="closing: inches per activation of A (null: slowest alive model's MV)")
    speed_b: float | None = Field(None, ge=0, le=100, description="closing: same for B")
    min_distance: float = Field(0, ge=0, le=1000, description="closing: the distance never drops below this")

    @model_validator(mode="after")
    def _mode_keys(self):
        if self.mode == "fixed":
            if self.start is not None or self.speed_a is not None or self.speed_b is not None or self.min_distance:
                raise ValueError("start, speed_a, speed_b and min_distance belong to mode: closing")
            if self.bands is not None and (not self.bands or any(b not in (1, 2, 3, 4) for b in self.bands)):
                raise ValueError(f"bands must be a non-empty list of range bands 1..4; got {self.bands}")
        else:
            if self.bands is not None:
                raise ValueError("bands belongs to mode: fixed")
            if self.start is None:
                raise ValueError("mode: closing needs start (inches)")
        return self


class TargetPolicy(Strict):
    a: Policy = Field("first", description="side A: first | weakest | strongest | spread | random")
    b: Policy = Field("first", description="side B: first | weakest | strongest | spread | random")


class BoardingSpec(Strict):
    enabled: bool = Field(False, description="boardings within 4in after the fire (§4 step 6, §12)")
    ap_committed: Literal["all", "half"] = Field(
        "all", description="AP a boarder commits: all its current AP, or half (rounded down, at least 1)")


class DuelParams(Strict):
    side_a: SideSpec = Field(..., description="side A: squadrons of fleet-profile models")
    side_b: SideSpec = Field(..., description="side B: squadrons of fleet-profile models")
    range: RangeSpec = Field(default_factory=RangeSpec)
    target_policy: TargetPolicy = Field(default_factory=TargetPolicy)
    max_turns: int = Field(6, ge=1, le=100, description="turn cap; both sides alive after it = draw",
                           json_schema_extra={"placeholder": "game length is not in the source: a turn cap "
                                                             "for the simulation"})
    critical_hp: int | None = Field(None, ge=0, le=100, description="HP per critical roll (null: data)")
    boarding: BoardingSpec = Field(default_factory=BoardingSpec,
                                   description="optional boarding step (off: the duel without boarding)")


def compile_sides(p: DuelParams, gd: GameData) -> list[dict]:
    """Per side: models (profile stats, squadron index, commodore flag) and squadrons."""
    sides = []
    for x, (key, side) in enumerate((("side_a", p.side_a), ("side_b", p.side_b))):
        models, squads, names = [], [], []
        for s_i, sq in enumerate(side.squadrons):
            first = len(models)
            for e_i, m in enumerate(sq.models):
                where = f"params.{key}.squadrons[{s_i}].models[{e_i}]"
                prof = gd.profile(m.profile, f"{where}.profile")
                gd.use_profile(m.profile, *PROFILE_FIELDS, *(("ap",) if p.boarding.enabled else ()))
                for f in ("size", "hp", "dr", "cr"):
                    if f not in prof:
                        raise RuleError(f"{where}: profile {m.profile!r} has no {f}")
                weapons = [w for w in (prof.get("weapons") or []) if w["type"] != "mine"]   # mines not modelled
                if len(weapons) > k.MAX_WEAPONS:
                    raise RuleError(f"{where}: profile {m.profile!r} has {len(weapons)} weapons; the duel kernel "
                                    f"takes at most {k.MAX_WEAPONS}")
                for w in weapons:
                    if len(w["ad"]) != 4:
                        raise RuleError(f"{where}: weapon {w.get('name')!r} of {m.profile!r} needs 4 AD values (RB1..RB4)")
                hp = int(prof["hp"])
                if m.hp_lost >= hp:
                    raise RuleError(f"{where}.hp_lost: got {m.hp_lost}; allowed 0..{hp - 1} ({m.profile} has {hp} HP)")
                for _ in range(m.count):
                    models.append({"profile": m.profile, "squadron": s_i, "size": prof["size"],
                                   "capital": bool(prof.get("capital", False)), "hp": hp, "dr": int(prof["dr"]),
                                   "cr": int(prof["cr"]), "aa": int(prof.get("aa", 0)), "cc": int(prof.get("cc", 0)),
                                   "mv": float(prof.get("mv", 0)), "points": float(prof.get("points", 0)),
                                   "fast": bool(prof.get("fast", False)), "elusive": bool(prof.get("elusive", False)),
                                   "state": m.state, "hp_lost": m.hp_lost, "commodore": m.commodore,
                                   "ap": int(prof.get("ap", 0)) if p.boarding.enabled else 0,
                                   "weapons": [(w["type"], [int(a) for a in w["ad"]]) for w in weapons]})
            squads.append((first, len(models) - first))
            names.append(sq.name or "+".join(dict.fromkeys(e.profile for e in sq.models)))
        if len(models) > k.MAX_MODELS:
            raise RuleError(f"params.{key}: {len(models)} models; the duel kernel takes at most {k.MAX_MODELS} per side")
        sides.append({"models": models, "squads": squads, "names": names})
    return sides


def compile_arrays(sides: list[dict], rules: dict, data: dict) -> dict:
    """The kernel arrays: model fields, weapons, and the to-hit table (0 = illegal target)."""
    M, W = k.MAX_MODELS, k.MAX_WEAPONS
    points = [m["points"] for s in sides for m in s["models"]]
    scale = 1 if all(float(v).is_integer() for v in points) else 100
    models = np.zeros((2, M, k.N_FIELDS), np.int64)
    mv = np.zeros((2, M), np.float64)
    w_type = np.zeros((2, M, W), np.int64)
    w_ad = np.zeros((2, M, W, 4), np.int64)
    to_hit = np.zeros((2, M, W, M, 4), np.int64)
    squads = np.zeros((2, M, 2), np.int64)
    for x, side in enumerate(sides):
        for s_i, (first, count) in enumerate(side["squads"]):
            squads[x, s_i] = first, count
        for i, m in enumerate(side["models"]):
            models[x, i, k.F_SQUAD] = m["squadron"]
            models[x, i, k.F_HP] = m["hp"]
            models[x, i, k.F_DR] = m["dr"]
            models[x, i, k.F_CR] = m["cr"]
            models[x, i, k.F_AA] = m["aa"]
            models[x, i, k.F_CC] = m["cc"]
            models[x, i, k.F_POINTS] = round(m["points"] * scale)
            models[x, i, k.F_HP_LOST0] = m["hp_lost"]
            models[x, i, k.F_COMMODORE] = int(m["commodore"])
            models[x, i, k.F_N_WEAPONS] = len(m["weapons"])
            models[x, i, k.F_AP] = m["ap"]
            models[x, i, k.F_CAN_BOARD] = int(m["state"] != "submerged")
            models[x, i, k.F_BOARDABLE] = int(m["state"] != "submerged" and m["size"] != "tiny")
            models[x, i, k.F_DIVING] = int(m["state"] == "diving")
            if m["state"] in AIR and m["size"] == "tiny":
                raise RuleError(f"side {'AB'[x]}: model {m['profile']!r} is a tiny flyer: wings take AA by their own "
                                f"rule (a 6 destroys a base, §13), not modelled by the duel")
            if m["state"] in AIR:     # §11 Ack Ack: small flyers are hit on 5-6, others on 4+
                models[x, i, k.F_ACK_ACK_DICE] = k.DICE_ACK_ACK_5 if m["size"] == "small" else k.DICE_ACK_ACK_4
            mv[x, i] = m["mv"]
            for w, (wtype, ad) in enumerate(m["weapons"]):
                w_type[x, i, w] = WEAPON_CODE[wtype]
                w_ad[x, i, w] = ad
                for j, tm in enumerate(sides[1 - x]["models"]):
                    for b in range(4):
                        if illegal_reason(wtype, b + 1, m["state"], tm["size"], tm["state"], rules) is None:
                            to_hit[x, i, w, j, b] = to_hit_number(wtype, b + 1, m["capital"], m["state"], tm["size"],
                                                                  tm["state"], tm["fast"], tm["elusive"], rules, data)
    return {"models": models, "mv": mv, "w_type": w_type, "w_ad": w_ad, "to_hit": to_hit, "squads": squads,
            "n_models": np.array([len(s["models"]) for s in sides], np.int64),
            "n_squads": np.array([len(s["squads"]) for s in sides], np.int64), "points_scale": scale}


#: counters[k] of the kernel (kernels.dystopian_wars.duel.CT_*): the pool counters, then initiative caps
DUEL_COUNTERS = (*POOL_COUNTERS, Counter("initiative_reroll_caps",
                                         f"initiative re-roll cap (kernels.dystopian_wars.duel.INITIATIVE_REROLL_CAP "
                                         f"= {k.INITIATIVE_REROLL_CAP} ties, then A first) reached"))
assert len(DUEL_COUNTERS) == k.N_DUEL_COUNTERS

DUEL_NOTES = (
    "Break (failed rout tests) has no effect on the fire in this duel: it forbids cards, linked/split fire and "
    "starting boardings (§8), none of which are modelled; it is tracked, removed by bravery tests and counted "
    "in rout_fails_*",
    "left out: positions, arcs, movement templates, terrain, command distance, linked/split fire, ramming, "
    "boarding (unless boarding.enabled), critical effects (only their HP damage), MARs, cards",
    "one shared distance for every model of both sides: range bands, boarding reach and rout-test "
    "'within 8in of the commodore' are read from it, not from positions (docs/models/dystopian_wars.md §7)",
    "rout tests: the +1D6 'near the commodore' goes to the squadron that contains its side's alive commodore, "
    "and to no other squadron (without positions no other squadron can be shown within 8in)",
    "AA and CC defend only the model attacked: no squadron linking of AA/CC dice",
    "Ack Ack (§11 'l'AA viene risolto prima dell'attacco dei volanti'): before each attack of a flyer (or "
    "obscured model) in range band 1, the attacked model alone fires its AA at it (no squadron-mates); HP lost "
    "lower the flyer's gunnery AD at once and a flyer shot down does not fire; against a flyer's rockets that AA "
    "is spent on Ack Ack, not on cancelling; a squadron that loses flyers to Ack Ack takes its rout test after "
    "the enemy's; tiny flyers (wings) are not modelled; mines are ignored",
)
BOARDING_NOTES = (
    "boarding on: within 4in (fixed range: every model in range band 1 counts as within 4in; closing: "
    "distance <= 4in) each model of the active squadron "
    "without Break with AP >= 1 boards one enemy (target policy); only the boarded model's AA/CC defends (no "
    "linking); one melee round; captured and derelict models count as lost (points_destroyed, survivors, win)",
    "boarding left out: squadron-mates' AA, the 'no fire at the model you board' restriction, several boarders "
    "on one model, prizes and recaptures, creatures and robots",
)


@dataclass(frozen=True)
class DuelRecord:
    """One duel compiled for :func:`kernels.dystopian_wars.duel.duel_kernel`: the sides as
    arrays (:func:`compile_arrays`), the settings ``S_*`` and geometry ``G_*``, the dice
    (:func:`dice_tables`) and the critical table."""

    models: np.ndarray          # [side, model, F_*]
    mv: np.ndarray              # [side, model] inches per activation
    w_type: np.ndarray          # [side, model, weapon]
    w_ad: np.ndarray            # [side, model, weapon, band]
    to_hit: np.ndarray          # [side, model, weapon, target, band]; 0 = not a legal target
    n_models: np.ndarray        # [side]
    n_squads: np.ndarray        # [side]
    squads: np.ndarray          # [side, squadron, (first model, count)]
    settings: np.ndarray        # [S_*]
    geometry: np.ndarray        # [G_*]
    bands: np.ndarray           # fixed range: band of turn t = bands[min(t, len) - 1]
    dice: tuple                 # (value[DICE_*, g, idx], explodes[DICE_*, g, idx], n[g])
    crit: tuple                 # (critical damage values, cumulative weights)
    hit_cdf: np.ndarray         # [to-hit, dice, AA/CC dice, hits]: exact CDF of an attack's hits (sampling: table)

    def kernel_args(self) -> k.DuelArgs:
        """The record as the kernel receives it (:class:`kernels.dystopian_wars.duel.DuelArgs`)."""
        return k.DuelArgs(self.models, self.mv, self.w_type, self.w_ad, self.to_hit, self.n_models, self.n_squads,
                          self.squads, self.settings, self.geometry, self.bands, *self.dice, *self.crit,
                          self.hit_cdf)


def hit_cdf_table(arrays: dict, rules: dict, data: dict, enabled: bool) -> np.ndarray:
    """``cdf[t, n, d, h]`` = P(hits <= h) of ``n`` hit dice at to-hit ``t`` net of ``d`` AA/CC
    cancel dice (:func:`analyzer.games.dystopian_wars.rules.hits_distribution`), for every
    ``n`` up to the largest AD and ``d`` up to the largest AA/CC in the duel; hits past the
    table (a tail below 1e-15) are not drawn. A 1x1x1x1 stub when ``sampling: dice``."""
    if not enabled:
        return np.ones((1, 1, 1, 1), np.float64)
    n_max = int(arrays["w_ad"].max())
    d_max = int(max(arrays["models"][:, :, k.F_AA].max(), arrays["models"][:, :, k.F_CC].max()))
    size = 3 * n_max + 61
    cdf = np.ones((7, n_max + 1, d_max + 1, size), np.float64)
    cancel = cancel_faces(data)
    for t in range(2, 7):
        faces = hit_faces(t, 0, True, rules["modified_six"])
        for n in range(n_max + 1):
            for d in range(d_max + 1):
                probs = hits_distribution(n, faces, d, cancel).probs[:size]
                c = np.cumsum(probs)
                cdf[t, n, d, :c.shape[0]] = c
                cdf[t, n, d, c.shape[0]:] = 1.0
    return cdf


def dice_tables(rules: dict, data: dict, board: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pool of the duel as one stack of D6 tables, in the kernel's ``DICE_*`` order: the
    hit dice by to-hit number (rows 0 and 1 are never used: t >= 2), AA/CC cancel dice, rout
    dice, initiative (face sums), the boarded model's defence dice, melee dice."""
    t_def = data["boarding_defense_to_hit"] if board else 5
    faces = {t: hit_faces(max(t, 2), 0, True, rules["modified_six"]) for t in range(7)}
    faces[k.DICE_CANCEL] = cancel_faces(data)
    faces[k.DICE_ROUT] = rout_faces(data)
    faces[k.DICE_INITIATIVE] = (np.arange(7, dtype=np.int64), np.zeros(7, np.bool_))   # face sums: 2D6
    faces[k.DICE_BOARD_DEFENSE] = (plain_faces(t_def) if rules["boarding_defense_dice"] == "one_per_success"
                                   else hit_faces(t_def, 0, True, rules["modified_six"]))
    faces[k.DICE_MELEE] = hit_faces(data["to_hit"]["melee_dice"] if board else 4, 0,
                                    rules["melee_dice"] == "exploding", rules["modified_six"])
    aa_explodes = rules["aa_vs_flyer_dice"] == "exploding"
    faces[k.DICE_ACK_ACK_4] = hit_faces(data["to_hit"]["aa_vs_flyer"], 0, aa_explodes, rules["modified_six"])
    faces[k.DICE_ACK_ACK_5] = hit_faces(data["to_hit"]["aa_vs_small_flyer"], 0, aa_explodes, rules["modified_six"])
    return stacked_tables([faces[row] for row in range(k.N_DICE_TABLES)])


@register
class Duel(Question):
    game = "dystopian_wars"
    name = "duel"
    summary = "Two squadrons (or small fleets) fight turn by turn: initiative, fire, criticals, rout and bravery"
    Params = DuelParams
    rule_options = options("obscured_to_hit", "surface_vs_submerged", "primary_rb1_vs_set_number",
                           "modified_six", "fast_elusive_scope", "fractional_range", "initiative_tie",
                           "small_hp_critical", "melee_dice", "boarding_defender_dice", "both_zero_ap",
                           "boarding_defense_dice", "aa_vs_flyer_dice", "sampling")
    primary_metric = "p_win_a"
    supports_exact = False

    def prepare(self, p: DuelParams, ctx: Context) -> Prepared:
        rules = ctx.rules
        gd = GameData(ctx, profiles=True)
        data = gd.core
        sides = compile_sides(p, gd)
        all_models = sides[0]["models"] + sides[1]["models"]
        if any(m["hp"] > 2 for m in all_models) or rules["small_hp_critical"] == "off":
            crit = gd.critical(p.critical_hp)
        else:
            crit = (np.array([0], np.int64), np.array([1], np.int64))
        board = p.boarding.enabled
        if board and rules["boarding_defender_dice"] == "fig_md":
            raise RuleError("rules.boarding_defender_dice: fig_md is not available in the duel (fleet profiles have "
                            "no MD); use current_ap or turn boarding off")
        gd.finish()
        arrays = compile_arrays(sides, rules, data)
        rng = p.range
        settings = np.zeros(k.N_SETTINGS, np.int64)
        settings[k.S_POLICY_A] = POLICY_CODE[p.target_policy.a]
        settings[k.S_POLICY_B] = POLICY_CODE[p.target_policy.b]
        settings[k.S_TIE] = TIE_CODE[rules["initiative_tie"]]
        settings[k.S_INIT_DICE] = data["initiative_dice"]
        settings[k.S_ROUT_DICE] = data["rout_test"]["dice"]
        settings[k.S_COMMODORE_BONUS] = data["rout_test"]["commodore_bonus_dice"]
        settings[k.S_SMALL_HP] = SMALL_HP_CODE[rules["small_hp_critical"]]
        settings[k.S_MAX_TURNS] = p.max_turns
        settings[k.S_RANGE_MODE] = k.RANGE_CLOSING if rng.mode == "closing" else k.RANGE_FIXED
        settings[k.S_LOWER_BAND] = int(rules["fractional_range"] == "lower_band")
        settings[k.S_RANGE_BANDS] = data["range_bands"]
        settings[k.S_BOARDING] = int(board)
        settings[k.S_BOARD_HALF] = int(p.boarding.ap_committed == "half")
        settings[k.S_BOARD_DERELICT] = int(rules["both_zero_ap"] == "derelict")
        settings[k.S_SAMPLING] = k.SAMPLING_TABLE if rules["sampling"] == "table" else k.SAMPLING_DICE
        geometry = np.zeros(k.N_GEOMETRY, np.float64)
        geometry[k.G_BOARD_INCHES] = k.BOARDING_INCHES
        if rng.mode == "closing":
            geometry[k.G_START] = rng.start
            geometry[k.G_SPEED_A] = np.nan if rng.speed_a is None else rng.speed_a
            geometry[k.G_SPEED_B] = np.nan if rng.speed_b is None else rng.speed_b
            geometry[k.G_MIN_DISTANCE] = rng.min_distance
        geometry[k.G_BAND_INCHES] = data["range_band_inches"]
        bands = np.array(rng.bands if rng.bands else [2], np.int64)
        total_points = int(arrays["models"][:, :, k.F_POINTS].sum(axis=1).max())
        n_bins = max(p.max_turns, total_points, k.MAX_MODELS) + 2
        scale = arrays["points_scale"]
        label = [" + ".join(s["names"]) for s in sides]
        metrics = [
            Metric("p_win_a", f"P(side A wins: {label[0]})", "probability"),
            Metric("p_win_b", f"P(side B wins: {label[1]})", "probability"),
            Metric("p_draw", f"P(both sides alive after {p.max_turns} turns)", "probability"),
            Metric("turns", "turn in which the duel ended"),
            Metric("points_destroyed_a", f"points of side A destroyed ({label[0]})", "value", scale),
            Metric("points_destroyed_b", f"points of side B destroyed ({label[1]})", "value", scale),
            Metric("survivors_a", f"side A models alive at the end ({label[0]})"),
            Metric("survivors_b", f"side B models alive at the end ({label[1]})"),
            Metric("rout_fails_a", f"failed rout tests of side A ({label[0]})"),
            Metric("rout_fails_b", f"failed rout tests of side B ({label[1]})"),
        ]
        assert tuple(m.name for m in metrics) == k.DUEL_METRICS
        notes = list(DUEL_NOTES)
        if board:
            metrics += [Metric("captured_a", f"side A models captured by boarding ({label[0]})"),
                        Metric("captured_b", f"side B models captured by boarding ({label[1]})")]
            notes += BOARDING_NOTES
        a = arrays
        record = DuelRecord(a["models"], a["mv"], a["w_type"], a["w_ad"], a["to_hit"], a["n_models"], a["n_squads"],
                            a["squads"], settings, geometry, bands, dice=dice_tables(rules, data, board),
                            crit=crit_cumulative(*crit),
                            hit_cdf=hit_cdf_table(a, rules, data, rules["sampling"] == "table"))
        return Prepared(metrics, n_bins, kernel=k.duel_kernel, args=record.kernel_args(), counters=DUEL_COUNTERS,
                        notes=tuple(notes))

    def plots(self, meta, points, dists):
        from analyzer.games.dystopian_wars import plots as dw_plots  # matplotlib only when plotting
        return dw_plots.duel_figures(meta, points, dists)

    def points_cost(self, sc, side: dict) -> PointsCost:
        """Sum of the fleet profiles' ``points`` x count (profiles of fleets/*.yaml)."""
        ctx = sc.context(sc.points[0])
        gd = GameData(ctx, profiles=True)
        total = 0.0
        for s_i, sq in enumerate(side["squadrons"]):
            for e_i, e in enumerate(sq["models"]):
                prof = gd.profile(e["profile"], f"squadrons[{s_i}].models[{e_i}].profile")
                if "points" not in prof:
                    return PointsCost(None, f"profile {e['profile']} has no points")
                gd.use_profile(e["profile"], "points")
                total += float(prof["points"]) * int(e.get("count", 1))
        gd.finish()
        return PointsCost(total, "fleet profile points x count", tuple(ph.as_dict() for ph in ctx.placeholders))

    def scale_force(self, sc, side: dict, copies: int) -> dict:
        """``copies`` copies of a side: every model entry's count times ``copies``; the fleet
        commodore stays one model (the other copies are plain models of its profile)."""
        side = copy.deepcopy(side)
        for sq in side["squadrons"]:
            models = []
            for e in sq["models"]:
                if e.get("commodore"):
                    models.append(e)
                    models.append({**e, "commodore": False, "count": int(e.get("count", 1)) * copies - 1})
                else:
                    models.append({**e, "count": int(e.get("count", 1)) * copies})
            sq["models"] = [e for e in models if e.get("count", 1) > 0]
        return side
