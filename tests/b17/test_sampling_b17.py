"""``sampling: table`` (issue 16) in ``attack_wave`` and ``mission``: one draw per shot from the
exact outcome table of its 3d10 (and one per placeholder fighter-fire roll) instead of rolling
the dice. The tables against the pure-Python reference's own enumeration; the table kernel
against the exact answer; table against dice on drawn positions and on a mission (every
metric's mean within 5 combined SE, every histogram bin, and Pearson's chi-square on the
histograms). Fixed seeds; independent streams for the two samplings."""
from __future__ import annotations

import itertools
import math

import pytest
import yaml

from analyzer.core.questions import SCENARIO_ROOT
from kernels.b17 import attack as ka
from kernels.b17 import mission as km
from tests.b17.b17_support import (assert_chi_square_same_law, assert_dist_exact, assert_mean_exact,
                                   assert_same_law, chi2_sf, exact_as_dict, prepare, run_kernel)
from tests.b17.b17_support import HEADON, MIXED3
from analyzer.games.b17 import reference as ref

SEED = 20261216
SCEN = SCENARIO_ROOT / "b17"
FACES_0_9 = {"d10_faces": "zero_to_nine", "quality_dice": "second_colour"}
MISSION = {"waves": [{"fighters": [{"type": "Me109", "clock": "12:00", "altitude": "high", "count": 3}]},
                     {"fighters": [{"type": "FW190", "count": 2}]},
                     {"fighters": [{"type": "Me110", "clock": "6:00", "altitude": "level", "count": 2}]}],
           "policy": "max_kill_probability", "return_probability": 0.7, "return_position": "redraw",
           "fighter_fire": {"model": "placeholder_3d10", "skill": 14,
                            "effects": {"gun_out": [1, 3], "intercom_out": [4, 5], "none": [4, 10]}}}


def test_chi2_sf_matches_closed_forms():
    """The chi-square tail used below: 1 dof is erfc(sqrt(x / 2)), 2 dof is exp(-x / 2)."""
    for x in (0.1, 1.0, 3.841458820694124, 12.0, 40.0):
        assert chi2_sf(x, 1) == pytest.approx(math.erfc(math.sqrt(x / 2)), rel=1e-9)
        assert chi2_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-9)
    # 4 dof: exp(-x/2) (1 + x/2)
    for x in (0.5, 5.0, 30.0):
        assert chi2_sf(x, 4) == pytest.approx(math.exp(-x / 2) * (1 + x / 2), rel=1e-9)


@pytest.mark.parametrize("rules", [{}, FACES_0_9], ids=["faces-1-10", "faces-0-9"])
def test_shot_tables_are_the_reference_enumeration(rules):
    """Every usable (gun, cell, fighter type) draws from a table whose 1000 outcomes have the
    fighter-hits counts of the reference's own enumeration of the 3d10 (hit test and damage
    II / II+2 from the same dice)."""
    prepared = prepare("attack_wave", dict(HEADON, skill=16), dict(rules, sampling="table"))
    cells, gun_table, type_table, cfg = prepared.args[2], prepared.args[4], prepared.args[5], prepared.args[6]
    shot_law, law_hits = prepared.args[-2], prepared.args[-1]
    assert cfg[ka.C_SAMPLING] == ka.SAMPLING_TABLE and law_hits.shape[1] == 1000
    ref_rules = ref.resolve_rules(rules, "attack_wave")
    checked = 0
    for g in range(cells.shape[0]):
        for c in range(cells.shape[1]):
            if cells[g, c, ka.CELL_KIND] == 0:
                continue
            for t in range(type_table.shape[0]):
                want: dict[int, int] = {}
                for (_, h), n in ref.outcome_counts(int(cells[g, c, ka.CELL_MOD]), int(gun_table[g, ka.GUN_SKILL]),
                                                    int(gun_table[g, ka.GUN_BONUS]), int(type_table[t, ka.TYPE_K]),
                                                    ref_rules).items():
                    want[h] = want.get(h, 0) + n
                row = law_hits[shot_law[g, c, t]]
                got = {int(h): int((row == h).sum()) for h in set(row.tolist())}
                assert got == want, (g, c, t)
                checked += 1
    assert checked > 100


def test_fighter_fire_table_is_the_placeholder_rule():
    """The placeholder fighter fire's table: out of 10,000 ordered (3d10, d10) rolls, the
    misses and each effect counted by enumerating the rule (first matching range wins)."""
    prepared = prepare("mission", MISSION, dict(FACES_0_9, sampling="table"))
    fire_outcome = prepared.args[-1]
    penalty = prepared.args[20]
    skill = MISSION["fighter_fire"]["skill"]
    effects = list(MISSION["fighter_fire"]["effects"].items())
    for cls, pen in enumerate(penalty):
        hits = sum(1 for d in itertools.product(range(0, 10), repeat=3) if sum(d) + pen <= skill)
        want = {km.FIRE_MISS: (1000 - hits) * 10}
        for e in range(1, 11):
            name = next((n for n, (lo, hi) in effects if lo <= e <= hi), "none")
            code = km.FIRE_HIT + ("none", "gun_out", "intercom_out").index(name)
            want[code] = want.get(code, 0) + hits
        row = fire_outcome[cls]
        got = {int(o): int((row == o).sum()) for o in set(row.tolist())}
        assert got == {o: n for o, n in want.items() if n}, cls


@pytest.mark.parametrize("params,rules", [
    (dict(HEADON, intercom_ok=True), {}),                                       # memoised plans
    ({"fighters": MIXED3, "policy": "spread"}, {"destroyed_target": "retarget", **FACES_0_9}),   # shot by shot
], ids=["headon-memo", "mixed-retarget-faces-0-9"])
def test_table_kernel_matches_exact(params, rules):
    """The table kernel against the exact enumeration (an oracle that rolls nothing)."""
    prepared = prepare("attack_wave", params, dict(rules, sampling="table"))
    ex = prepared.exact()
    mc = run_kernel(prepared, 200_000, SEED)
    for name, em in ex.items():
        var = float(((em.values - em.mean) ** 2) @ em.probs)
        assert_mean_exact(mc[name], em.mean, var, name)
        assert_dist_exact(mc[name], exact_as_dict(em), name)


def test_table_matches_dice_attack_wave_drawn_positions():
    """The shipped mixed wave (one position drawn per trial, max_kill_probability): table and
    dice give the same law of every metric."""
    params = dict(yaml.safe_load((SCEN / "attack_wave_mixed_policies.yaml").read_text())["params"],
                  policy="max_kill_probability")
    table = run_kernel(prepare("attack_wave", params, {"sampling": "table"}), 400_000, SEED)
    dice = run_kernel(prepare("attack_wave", params, {"sampling": "dice"}), 400_000, SEED + 1)
    for name in table:
        assert_same_law(table[name], dice[name], name)
        assert_chi_square_same_law(table[name], dice[name], name)


def test_table_matches_dice_mission():
    """A mission with returns, redrawn positions and the placeholder fighter fire (faces 0-9,
    overlapping effect ranges): table and dice give the same law of every metric."""
    table = run_kernel(prepare("mission", MISSION, dict(FACES_0_9, sampling="table")), 150_000, SEED)
    dice = run_kernel(prepare("mission", MISSION, dict(FACES_0_9, sampling="dice")), 150_000, SEED + 1)
    assert table["bomber_hits"].mean > 0 and table["guns_lost"].mean > 0 and table["p_intercom_lost"].mean > 0
    for name in table:
        assert_same_law(table[name], dice[name], name)
        assert_chi_square_same_law(table[name], dice[name], name)
