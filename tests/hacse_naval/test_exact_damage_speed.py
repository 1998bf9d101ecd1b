"""The folding exact engine of the torpedo and mine questions (issue 29 item 11).

``exact_damage.fold_hits`` merges equal damage states after every hit, never enumerates a branch of
probability 0 and refuses a point too large before enumerating it. The questions now fold hex by hex
(``exact_fold.fold_by_hex``, test_exact_fold_fast.py); this whole-state fold is its oracle and its
fallback. Checked against the Monte-Carlo
kernels (5 SE, ``tests.stat_checks``), against the previous engine (its folding loop copied below
as the slow oracle, on tiny cases) and on hand-worked cases; refusals are checked by what was
enumerated, not by the clock.
"""
from __future__ import annotations

import numpy as np
import pytest
import yaml

from analyzer.core.errors import ScenarioError
from analyzer.games.hacse_naval import exact_damage as E
from analyzer.games.hacse_naval.data import Data, hit_rows
from kernels.hacse_naval import damage as kd
from tests.hacse_naval.helpers import SCEN, assert_kernel_matches_exact, context, prepare
from tests.stat_checks import SIGMAS

#: the exact engine starts a fire only when a threshold is crossed (fire_repeats = every_hit_past_threshold
#: is refused in exact mode by the question modules)
ONCE = {"fire_repeats": "once_per_threshold"}


def shipped(name):
    return yaml.safe_load((SCEN / f"{name}.yaml").read_text())


def sheet_of(question, rules=None):
    from analyzer.core import questions
    ctx = context(questions.get("hacse_naval", question), {**ONCE, **(rules or {})})
    return Data(ctx).sheet("destroyer", "ship", ctx.rules)


def old_engine(sheet, n_events, p_event, n_dice, mode="hex_then_row"):
    """The engine before issue 29 item 11 (torpedo_salvo.exact_underwater and summarise_states as
    they were), the slow oracle: whole states (row damages, tally, damage dealt) folded hit by hit
    by ``SheetExact.hit_dist`` (still the depth-charge engine) with every amount of every row,
    misses as amount 0."""
    ex = E.SheetExact(sheet)
    rows = hit_rows(sheet, mode)
    amounts = {a: q * p_event for a, q in E.nw10(n_dice).items()}
    amounts[0] = amounts.get(0, 0.0) + (1 - p_event)
    dist = {ex.initial(): 1.0}
    for _ in range(n_events):
        dist = ex.hit_dist(dist, amounts, rows, skip_if_sunk=True)
    sunk, damage, dealt, speed, fires = 0.0, {}, {}, {}, {}
    for (dmg, tally, total), p in dist.items():
        sunk += p * tally[kd.T_SUNK]
        dealt[total] = dealt.get(total, 0.0) + p
        damage[sum(dmg)] = damage.get(sum(dmg), 0.0) + p
        s = int(kd.speed_lost(sheet.rows, sheet.info, np.asarray(dmg, np.int64), np.asarray(tally, np.int64)))
        speed[s] = speed.get(s, 0.0) + p
        fires[tally[kd.T_FIRES]] = fires.get(tally[kd.T_FIRES], 0.0) + p
    return {"p_sunk": sunk, "damage": damage, "damage_dealt": dealt, "speed_lost": speed, "fires": fires}


def assert_same(new: E.Folded, old: dict, what: str):
    assert new.p_sunk == pytest.approx(old["p_sunk"], abs=1e-12), what
    for name in ("damage", "damage_dealt", "speed_lost", "fires"):
        a, b = getattr(new, name), old[name]
        b = {v: p for v, p in b.items() if p > 0}
        assert set(a) == set(b), f"{what} {name}: values {sorted(set(a) ^ set(b))} differ"
        for v in b:
            assert a[v] == pytest.approx(b[v], abs=1e-12), f"{what} {name}[{v}]"


@pytest.mark.parametrize("question,n,p,dice,rules", [
    ("torpedo_salvo", 1, 1.0, 5, {}),
    ("torpedo_salvo", 2, 0.5, 5, {}),
    ("torpedo_salvo", 2, 0.6, 5, {"threshold_less_rows": "any_hit", "engine_speed": "damage_share",
                                  "fire_spreads": "no", "half_hp": "floor"}),
    ("mine_field", 2, 0.4, 3, {}),
])
def test_fold_equals_the_previous_engine_on_tiny_cases(question, n, p, dice, rules):
    sheet = sheet_of(question, rules)
    new = E.fold_hits(sheet, n, p, E.nw10(dice), hit_rows(sheet, "hex_then_row"))
    assert_same(new, old_engine(sheet, n, p, dice), f"{question} n={n} p={p} {rules}")


def test_zero_hit_chance_gives_the_undamaged_ship_and_enumerates_no_hit(monkeypatch):
    """P(hit) = 0: probability 1 of no damage, nothing sunk, no speed lost, no fire, and no hit
    branch is ever asked of the per-hit rules."""
    def no_hit(*args, **kwargs):
        raise AssertionError("a hit branch was enumerated")
    monkeypatch.setattr(E.SheetExact, "_hit", no_hit)
    _, _, prep = prepare("torpedo_salvo", {"ship": "destroyer", "torpedoes": 24, "hit_probability": 0.0}, ONCE)
    answer = prep.exact()
    for name in ("damage", "speed_lost", "fires", "damage_dealt", "p_sunk"):
        m = answer[name]
        assert m.values.tolist() == [0] and m.probs.tolist() == [1.0], name
    sheet = sheet_of("mine_field")
    f = E.fold_hits(sheet, 60, 0.0, E.nw10(3), hit_rows(sheet, "hex_then_row"))
    assert (f.p_sunk, f.damage, f.damage_dealt, f.hit_branches) == (0.0, {0: 1.0}, {0: 1.0}, 0)


def test_a_sure_hit_enumerates_no_miss_and_one_hit_is_hand_checkable():
    """One sure 5W10 torpedo (hex_then_row: bow or stern hex, then a uniform eligible row of it): it
    sinks the ship exactly when it strikes a Rumpf row (P = 1/2 x 1/2 + 1/2 x 1/3) for 20+ damage
    (P(5W10 >= 20) from the dice), or a magazine explosion's 1W10 x 3 finishes the bow Rumpf."""
    sheet = sheet_of("torpedo_salvo")
    f = E.fold_hits(sheet, 1, 1.0, E.nw10(5), hit_rows(sheet, "hex_then_row"))
    five = E.nw10(5)
    p20 = sum(q for a, q in five.items() if a >= 20)
    direct = (0.5 * 0.5 + 0.5 / 3) * p20
    # Magazin struck (bow, P 1/4) for >= 8: explodes, 1W10 x 3 to a uniform bow row (1/3: Rumpf [20]):
    # sinks when 3 x W10 >= 20, i.e. W10 >= 7 (P 0.4)
    p8 = sum(q for a, q in five.items() if a >= 8)
    via_magazine = 0.25 * p8 * (1 / 3) * 0.4
    assert f.p_sunk == pytest.approx(direct + via_magazine, abs=1e-12)
    assert sum(f.damage_dealt.values()) == pytest.approx(1.0) and min(f.damage_dealt) == 5


def test_refused_before_enumerating_when_the_sheet_bound_is_too_large(monkeypatch):
    """The bound from the sheet is checked before any state is made: with the limit below the
    destroyer's bound, the refusal names the bound and no step or hit is enumerated."""
    def no_step(*args, **kwargs):
        raise AssertionError("enumerated before refusing")
    monkeypatch.setattr(E._Fold, "step", no_step)
    monkeypatch.setattr(E.SheetExact, "_hit", no_step)
    monkeypatch.setattr(E, "MAX_STATE_BOUND", 1000)
    sheet = sheet_of("torpedo_salvo")
    bound = E.frontier_bound(sheet, 4, E.nw10(5), hit_rows(sheet, "hex_then_row"))
    assert bound > 1000
    with pytest.raises(E.TooLarge, match=f"up to {bound:,} damage states"):
        E.fold_hits(sheet, 4, 0.5, E.nw10(5), hit_rows(sheet, "hex_then_row"))
    _, _, prep = prepare("torpedo_salvo", {"ship": "destroyer", "torpedoes": 4, "hit_probability": 0.5}, ONCE)
    with pytest.raises(ScenarioError, match=r"params\.torpedoes: .*run Monte Carlo"):
        prep.exact()


def test_the_bound_holds_on_what_is_kept():
    """frontier_bound is an upper bound on the states kept between hits (checked where it is small)."""
    sheet = sheet_of("torpedo_salvo")
    rows = hit_rows(sheet, "hex_then_row")
    for n in (1, 2, 3):
        kept = []
        orig = E._Fold.step

        def step(self, ids, vecs, last, kept=kept):
            out = orig(self, ids, vecs, last)
            kept.append(len(out[0]))
            return out
        E._Fold.step = step
        try:
            E.fold_hits(sheet, n, 0.5, E.nw10(5), rows)
        finally:
            E._Fold.step = orig
        assert max(kept[:-1] or [1]) <= E.frontier_bound(sheet, n, E.nw10(5), rows)


def test_whole_state_fold_refuses_the_shipped_mine_crossing_after_three_hexes(monkeypatch):
    """mine_field_crossing.yaml's 6 hexes folded as whole states (the engine the question used before
    exact_fold.fold_by_hex, kept as the oracle): the states kept grow about x12 a hex; the fold refuses
    with the counts before the 4th hex is enumerated (a structural check: steps counted). The question
    itself answers it now (test_exact_fold_fast.py)."""
    steps = []
    orig = E._Fold.step
    monkeypatch.setattr(E._Fold, "step", lambda self, *a, **k: steps.append(1) or orig(self, *a, **k))
    sheet = sheet_of("mine_field")
    with pytest.raises(E.TooLarge, match=r"exact mode would keep about [\d,]+ damage states after 4 of 6 hits "
                                         r".*run Monte Carlo"):
        E.fold_hits(sheet, 6, 0.1, E.nw10(3), hit_rows(sheet, "hex_then_row"))
    assert len(steps) == 3


@pytest.mark.parametrize("p_hit", [0.5, 1.0])
def test_shipped_torpedo_salvo_exact_matches_monte_carlo(p_hit):
    """torpedo_destroyer_salvo.yaml (4 torpedoes), two of its swept points: every metric's
    histogram within SIGMAS binomial SEs of the exact distribution."""
    params = {**shipped("torpedo_destroyer_salvo")["params"], "hit_probability": p_hit}
    _, _, prep = prepare("torpedo_salvo", params, ONCE)
    counts, answer = assert_kernel_matches_exact(prep, 200_000, seed=29, what=f"salvo p={p_hit}")
    assert "exact:" in answer.notes[0] and SIGMAS == 5.0


def test_mine_crossing_of_four_hexes_exact_matches_monte_carlo():
    """The shipped crossing's sheet and dice over 4 hexes (its 6 hexes: test_exact_fold_fast.py)."""
    params = {**shipped("mine_field_crossing")["params"], "hexes": 4}
    _, _, prep = prepare("mine_field", params, ONCE)
    assert_kernel_matches_exact(prep, 200_000, seed=31, what="mines 4 hexes")


# --------------------------------------------------------------------------- depth charges (issue 29 item 11)
def old_hit_dist(ex, dist, amounts, rows, skip_if_sunk=True):
    """SheetExact.hit_dist before the per-state transition cache: every state x amount x row x outcome."""
    out = {}
    for st, p in dist.items():
        if skip_if_sunk and st[1][kd.T_SUNK]:
            out[st] = out.get(st, 0.0) + p
            continue
        for a, pa in amounts.items():
            if a <= 0:
                out[st] = out.get(st, 0.0) + p * pa
                continue
            for r, pr in rows:
                for st2, q in ex.hit(st, r, a, kd.FROM_WEAPON):
                    out[st2] = out.get(st2, 0.0) + p * pa * pr * q
    return out


def old_sub_states(cc, pattern):
    """depth_charge.sub_state_distribution and overrun_exact before the prefix sharing and memo (the oracle)."""
    ex = E.SheetExact(cc.sheet)
    rows = [(r, 1.0 / cc.sheet.n_rows) for r in range(cc.sheet.n_rows)]
    total_w = sum(w for _, _, w in cc.prior)
    out = {}
    for depth, pos, w in cc.prior:
        dist = {ex.initial(): 1.0}
        for c in pattern:
            dist = old_hit_dist(ex, dist, E.w10_minus(cc.consts["per_step"] * cc.steps(cc.specs[c], depth, pos)), rows)
        after = {}
        for st, p in dist.items():
            levels = depth - (cc.max_depth - st[1][kd.T_DEPTH_LOSS])
            if levels <= 0 or st[1][kd.T_SUNK]:
                after[st] = after.get(st, 0.0) + p
                continue
            sub = {st: p}
            if cc.rules["overrun_dice"] == "per_level":
                for _ in range(levels):
                    sub = old_hit_dist(ex, sub, E.nw10(1), rows, skip_if_sunk=False)
            else:
                sub = old_hit_dist(ex, sub, E.nw10(1, levels), rows, skip_if_sunk=False)
            for s2, q in sub.items():
                after[s2] = after.get(s2, 0.0) + q
        for st, p in after.items():
            out[st] = out.get(st, 0.0) + p * w / total_w
    return out


SMALL_PATTERN = {"charges": 3, "depth_settings": [1, 2, 3], "offsets": [[0, 0]], "hex_distance_to_thrower": 1,
                 "sub": {"ship": "type_viic", "depth": [1, 2, 3, 4], "depth_weights": [1, 2, 1, 1]},
                 "thrower": {"speed": 4}}


def _pattern_compiled(params, rules):
    from analyzer.games.hacse_naval import depth_charge as D
    from analyzer.games.hacse_naval.depth_charge_pattern import PatternParams
    p = PatternParams.model_validate(params)
    from analyzer.core import questions
    ctx = context(questions.get("hacse_naval", "depth_charge_pattern"), rules)
    charges = [D.Charge(depth_setting=dep, offset=o, hex_distance_to_thrower=p.hex_distance_to_thrower)
               for o, dep in p.candidates()]
    return D.compile_depth_charge(charges, p.sub, p.thrower.speed, ctx, Data(ctx)), len(p.candidates()), p.charges


# the default rules' case takes ~35 s (the previous engine walks every pattern): make test-full runs it,
# make test the other rules' case (~8 s), which exercises the same prefix sharing and cache
@pytest.mark.parametrize("rules", [pytest.param({}, marks=pytest.mark.slow),
                                   {"overrun_dice": "one_times_levels", "sub_leak_depth": "once"}])
def test_pattern_states_equal_the_previous_engine_and_share_prefixes(rules):
    """Every pattern's state distribution (hence every metric) equals the engine before prefix sharing,
    the transition cache and the depth-damage memo within 1e-12; the charges folded are one per
    distinct prefix and prior entry (not one per charge of every pattern), and asking again
    enumerates no state's outcomes anew."""
    import itertools
    from analyzer.games.hacse_naval import depth_charge as D
    cc, n_cand, k = _pattern_compiled(SMALL_PATTERN, rules)
    patterns = list(itertools.combinations_with_replacement(range(n_cand), k))
    ex = E.SheetExact(cc.sheet)
    folds = []
    orig = ex.hit_dist
    ex.hit_dist = lambda dist, amounts, rows, **kw: folds.append(kw) or orig(dist, amounts, rows, **kw)
    for pat, new in zip(patterns, D.pattern_state_distributions(cc, patterns, ex)):
        old = old_sub_states(cc, pat)
        assert set(new) == set(old), pat
        assert max(abs(new[s] - old[s]) for s in old) < 1e-12, pat
    prefixes = {pat[:j] for pat in patterns for j in range(1, k + 1)}
    assert sum(1 for kw in folds if not kw) == len(prefixes) * len(cc.prior)
    n = ex.n_transitions
    assert n > 0
    list(D.pattern_state_distributions(cc, patterns, ex))
    assert ex.n_transitions == n


def test_shipped_pattern_exact_builds_each_state_once():
    """pattern_six_charges_unknown_depth.yaml (28 patterns of 6 charges): the charges folded are one per
    distinct prefix (83) per prior depth (3), not 28 x 6 per depth; states' outcomes are enumerated
    once per (state, kind of hit), far fewer than the (pattern, state) pairs the old engine walked."""
    import itertools
    from analyzer.games.hacse_naval import depth_charge as D
    params = shipped("pattern_six_charges_unknown_depth")["params"]
    cc, n_cand, k = _pattern_compiled(params, {})
    patterns = list(itertools.combinations_with_replacement(range(n_cand), k))
    ex = E.SheetExact(cc.sheet)
    folds = []
    orig = ex.hit_dist
    ex.hit_dist = lambda dist, amounts, rows, **kw: folds.append(kw) or orig(dist, amounts, rows, **kw)
    walked = sum(len(s) for s in D.pattern_state_distributions(cc, patterns, ex))
    assert sum(1 for kw in folds if not kw) == 83 * 3          # 3 + 6 + 10 + 15 + 21 + 28 prefixes
    assert ex.n_transitions < walked
