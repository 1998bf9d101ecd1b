"""``attack_wave``: kernel and exact enumeration against the pure-Python reference
(analyzer/games/b17/reference.py) and the digest's rules: kill split (§7), delayed tail shots (§2.3),
navigator guns (§2.4), rule options A3-A5, A9. Fixed seeds; 5 standard errors."""
from __future__ import annotations

from fractions import Fraction

import numba
import numpy as np
import pytest
import yaml

from analyzer.core import scenario as scenario_mod
from analyzer.games.b17 import compile as cc
from analyzer.games.b17 import data as b17data
from analyzer.core.questions import SCENARIO_ROOT, Context, get
from kernels.b17.attack_wave import attack_wave_kernel
from tests.b17.b17_support import (FULL_KERNEL_TRIALS, assert_dist_exact, assert_mean_exact, assert_same_law,
                                   exact_as_dict, only_guns, reference_run,
                                   prepare, reference_metric, run_kernel)
from tests.b17.b17_support import HEADON, MIXED3
from analyzer.games.b17 import reference as ref

SEED = 20261201
SCEN = SCENARIO_ROOT / "b17"


@pytest.fixture(scope="module")
def ref_data():
    return ref.load_data(None)


def wave(fighters, **kw):
    return {"fighters": fighters, **kw}


def frac_dist(em) -> dict[Fraction, float]:
    return {Fraction(float(v)).limit_denominator(840): float(p) for v, p in zip(em.values, em.probs) if p > 0}


# ----------------------------------------------------------------------------- exact vs reference exact
EXACT_CASES = [
    (dict(HEADON, intercom_ok=True), {}),
    (dict(HEADON, intercom_ok=False), {}),
    (wave(MIXED3, policy="spread"), {"destroyed_target": "retarget"}),
    (wave(MIXED3[1:], policy="max_kill_probability", skill=17, gun_ok=only_guns("nav_right", "top", "tail",
                                                                                 "waist_right")),
     {"kill_credit": "shooters", "kill_credit_unit": "gun", "delayed_kill_share": "separate_steps",
      "tocado_penalty": "later_attacks"}),
    (wave([{"type": "Me109", "clock": "12:00", "altitude": "high", "count": 2}], skill=20),
     {"d10_faces": "zero_to_nine", "quality_dice": "second_colour"}),
]


@pytest.mark.parametrize("params,rules", EXACT_CASES)
def test_exact_matches_reference_exact(ref_data, params, rules):
    mine = prepare("attack_wave", params, rules).exact()
    theirs = ref.exact_attack_wave(params, rules, ref_data)
    assert set(mine) == set(theirs)
    for name, em in mine.items():
        want = {float(v): float(p) for v, p in theirs[name].items() if p}
        assert exact_as_dict(em) == pytest.approx({round(v, 9): p for v, p in want.items()}, abs=1e-12), name


@pytest.mark.parametrize("intercom_ok", [True, False])
def test_kernel_vs_exact_headon(intercom_ok):
    prepared = prepare("attack_wave", dict(HEADON, intercom_ok=intercom_ok))
    ex = prepared.exact()
    mc = run_kernel(prepared, 200_000, SEED)
    for name, em in ex.items():
        var = float(((em.values - em.mean) ** 2) @ em.probs)
        assert_mean_exact(mc[name], em.mean, var, name)
        assert_dist_exact(mc[name], exact_as_dict(em), name)


@pytest.mark.parametrize("policy", ["focus_most_dangerous", "spread", "max_kill_probability"])
def test_kernel_vs_reference_mixed_wave_with_drawn_position(ref_data, policy):
    sc = yaml.safe_load((SCEN / "attack_wave_mixed_policies.yaml").read_text())
    params = dict(sc["params"], policy=policy)
    mc = run_kernel(prepare("attack_wave", params), FULL_KERNEL_TRIALS, SEED)
    out = reference_run("attack_wave", params, {}, ref_data, mc, SEED)   # resolves a 1-point shift
    for name, values in out.items():
        assert_same_law(mc[name], reference_metric(values), f"{policy}: {name}")


def test_kernel_vs_reference_rule_options_and_distribution(ref_data):
    params = wave([{"type": "FW190", "count": 3}, {"type": "Me109", "prior_hits": 1, "count": 2}],
                  policy="spread", skill=16,
                  position_distribution=[{"clock": "12:00", "altitude": "high", "weight": 3},
                                         {"clock": "6:00", "altitude": "level", "weight": 1},
                                         {"clock": "10:30", "altitude": "low", "weight": 2}])
    rules = {"destroyed_target": "retarget", "kill_credit_unit": "gun", "delayed_kill_share": "separate_steps"}
    mc = run_kernel(prepare("attack_wave", params, rules), FULL_KERNEL_TRIALS, SEED)
    out = reference_run("attack_wave", params, rules, ref_data, mc, SEED)   # resolves a 1-point shift
    for name, values in out.items():
        assert_same_law(mc[name], reference_metric(values), name)


# ----------------------------------------------------------------------------- §7 kill credit
@pytest.mark.parametrize("guns,clock,share", [(("nose", "top"), "12:00", Fraction(1, 2)),
                                              (("nose", "nav_right", "waist_right"), "1:30", Fraction(1, 3))])
def test_kill_split_half_and_third(guns, clock, share):
    params = wave([{"type": "Me109", "clock": clock, "altitude": "level", "prior_hits": 2}],
                  gun_ok=only_guns(*guns), skill=40)        # every shot hits: each crew shares the kill
    crews = {"nose": "bombardier", "top": "engineer", "nav_right": "navigator", "waist_right": "waist_r"}
    prepared = prepare("attack_wave", params)
    ex = prepared.exact()
    mc = run_kernel(prepared, 8192, SEED)
    for g in guns:
        assert frac_dist(ex[f"kills_{crews[g]}"]) == {share: 1.0}
        assert mc[f"kills_{crews[g]}"].dist == {round(float(share), 9): 1.0}   # exact integers in 1/scale units
    assert mc["kills_total"].dist == {1.0: 1.0} and mc["destroyed_before_firing"].dist == {1.0: 1.0}


def test_kill_split_with_delayed_shot_and_hitters_only():
    p = wave([{"type": "Me109", "clock": "12:00", "altitude": "high", "prior_hits": 2}],
             gun_ok=only_guns("nose", "top", "tail"), skill=40, intercom_ok=True)
    assert frac_dist(prepare("attack_wave", p).exact()["kills_tail_gunner"]) == {Fraction(1, 3): 1.0}   # A5
    ex = prepare("attack_wave", p, {"delayed_kill_share": "separate_steps"}).exact()
    assert frac_dist(ex["kills_tail_gunner"]) == {0: 1.0} and frac_dist(ex["kills_bombardier"]) == {Fraction(1, 2): 1.0}
    p = wave(p["fighters"], gun_ok=only_guns("nose", "top"), skill=40, skills={"engineer": 0})
    ex = prepare("attack_wave", p).exact()                    # A3: the engineer missed
    assert frac_dist(ex["kills_bombardier"]) == {1: 1.0} and frac_dist(ex["kills_engineer"]) == {0: 1.0}
    ex = prepare("attack_wave", p, {"kill_credit": "shooters"}).exact()
    assert frac_dist(ex["kills_engineer"]) == {Fraction(1, 2): 1.0}


def test_kill_shares_sum_to_kills():
    prepared = prepare("attack_wave", wave(MIXED3, policy="spread", skill=18))
    ex = prepared.exact()
    crews = [m.name for m in prepared.metrics if m.name.startswith("kills_") and m.name != "kills_total"]
    assert sum(ex[c].mean for c in crews) == pytest.approx(ex["kills_total"].mean, abs=1e-12)
    hits = [m.name for m in prepared.metrics if m.name.startswith("hits_") and m.name != "hits_total"]
    assert sum(ex[h].mean for h in hits) == pytest.approx(ex["hits_total"].mean, abs=1e-12)
    n = 4
    assert sum(ex[m].mean for m in ("destroyed", "damaged", "tocado", "intact")) == pytest.approx(n)
    assert sum(ex[f"firing_plus{k}"].mean for k in (0, 2, 4)) == pytest.approx(ex["fighters_firing"].mean)


# ----------------------------------------------------------------------------- §2.3 delayed tail shots
@pytest.mark.parametrize("prior", [0, 1, 2])
def test_delayed_tail_shots_never_stop_the_attack(prior):
    params = wave([{"type": "Me109", "clock": "12:00", "altitude": "high", "prior_hits": prior, "count": 2}],
                  gun_ok=only_guns("tail"), skill=40, intercom_ok=True)
    mc = run_kernel(prepare("attack_wave", params), 20_000, SEED)
    assert mc["fighters_firing"].dist == {2.0: 1.0}            # both fire, whatever the ** roll did
    assert mc["destroyed_before_firing"].dist == {0.0: 1.0}
    assert mc[{0: "firing_plus0", 1: "firing_plus2", 2: "firing_plus4"}[prior]].dist == {2.0: 1.0}
    if prior == 2:
        assert mc["destroyed"].dist == {1.0: 1.0} and mc["kills_tail_gunner"].dist == {1.0: 1.0}
    else:
        assert mc["destroyed"].mean > 0                         # ... and the tail shot still counts afterwards


def test_intercom_out_disables_star_cells():
    params = wave([{"type": "Me109", "clock": "12:00", "altitude": "high"}], gun_ok=only_guns("tail"),
                  skill=40, intercom_ok=False)
    mc = run_kernel(prepare("attack_wave", params), 8192, SEED)
    assert mc["guns_firing"].dist == {0.0: 1.0} and mc["hits_total"].dist == {0.0: 1.0}


# ----------------------------------------------------------------------------- §2.4 navigator
@pytest.mark.parametrize("policy", ["focus_most_dangerous", "spread", "max_kill_probability"])
def test_navigator_never_fires_at_the_other_side(policy):
    # the placeholder table "appears to allow" nav_right at 10:30 level: only_clock masks it
    p = wave([{"type": "Me109", "clock": "10:30", "altitude": "level"}], gun_ok=only_guns("nav_right"),
             skill=40, policy=policy)
    assert run_kernel(prepare("attack_wave", p), 8192, SEED)["guns_firing"].dist == {0.0: 1.0}
    p = wave([{"type": "Me109", "clock": "1:30", "altitude": "level"}], gun_ok=only_guns("nav_left"),
             skill=40, policy=policy)
    assert run_kernel(prepare("attack_wave", p), 8192, SEED)["guns_firing"].dist == {0.0: 1.0}
    # two targets, one per side: one navigator gun fires (one at a time), at its own side
    p = wave([{"type": "FW190", "clock": "10:30", "altitude": "level"},
              {"type": "Me109", "clock": "1:30", "altitude": "level", "prior_hits": 2}],
             gun_ok=only_guns("nav_right", "nav_left"), skill=40, policy=policy)
    mc = run_kernel(prepare("attack_wave", p), 8192, SEED)
    assert mc["guns_firing"].dist == {1.0: 1.0}
    assert mc["hits_navigator"].mean > 0


# ----------------------------------------------------------------------------- reproducibility
@pytest.mark.parametrize("sampling", ["dice", "table"])
def test_memoised_target_plans_change_nothing(sampling):
    """Declared targets reused per drawn-position combination give the very same trials."""
    question = get("b17", "attack_wave")
    params = question.Params.model_validate(
        wave([{"type": "FW190", "count": 2}, {"type": "Me109", "clock": "6:00", "altitude": "high"},
              {"type": "Me110", "prior_hits": 1}], policy="spread"))
    ctx = Context(rules=scenario_mod.validate_rules("test", question, {"sampling": sampling}), scenario_dir=SCEN,
                  game_dir=SCEN)
    data = b17data.load(ctx)
    bomber = cc.compile_bomber(ctx, data, params, ctx.rules, ["FW190", "Me109", "Me110"])
    f_type, f_cell, f_prior = cc.fighter_arrays(ctx, data, bomber, params.fighters, "params.fighters")
    cells, cumulative = cc.position_arrays(params, [], True)
    args = (*bomber.arrays, bomber.cfg, f_type, f_cell, f_prior, cells, cumulative, bomber.gun_ok,
            bomber.intercom_ok, len(data.crews))
    plain = attack_wave_kernel(SEED, 3, 0, 3, 4096, 12_000, 900, (*args, 0, *bomber.tables))
    memo = attack_wave_kernel(SEED, 3, 0, 3, 4096, 12_000, 900, (*args, 24 ** 3, *bomber.tables))
    assert np.array_equal(plain[0], memo[0]) and np.array_equal(plain[1], memo[1])


def test_same_seed_same_result_with_1_and_2_threads():
    params = dict(wave([{"type": "FW190", "count": 2}, {"type": "Me109", "clock": "6:00", "altitude": "high"}]),
                  policy="max_kill_probability")
    prepared = prepare("attack_wave", params)
    before = numba.get_num_threads()
    runs = []
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            runs.append(prepared.run_kernel(SEED, 5, 0, 6, 4096, 6 * 4096 - 100))
    finally:
        numba.set_num_threads(before)
    assert np.array_equal(runs[0][0], runs[1][0]) and np.array_equal(runs[0][1], runs[1][1])
