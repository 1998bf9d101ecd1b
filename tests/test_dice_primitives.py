"""Every dice primitive: the exact engine against icepool (to 1e-12), and the Monte-Carlo
kernels against the exact engine (5 binomial SEs per bin, sparse tails lumped)."""
import icepool
import numpy as np
import pytest

from analyzer.run import dice
from analyzer.core import exact
from tests.stat_checks import assert_histogram_matches

ICEPOOL_DEPTH = 20  # explosions kept by icepool; beyond that the tail is < 6**-21 per die


def icepool_probs(die: icepool.Die) -> np.ndarray:
    outcomes = list(die.outcomes())
    out = np.zeros(max(outcomes) + 1)
    total = die.denominator()
    for o in outcomes:
        out[o] = die.quantity(o) / total
    return out


def icepool_hit_die(face_value, face_explodes):
    faces = [int(face_value[f]) for f in range(1, len(face_value))]
    die = icepool.Die(faces)
    exploding = sorted({int(face_value[f]) for f in range(1, len(face_value)) if face_explodes[f]})
    # an exploding value must not also be produced by a non-exploding face
    assert not {int(face_value[f]) for f in range(1, len(face_value)) if not face_explodes[f]} & set(exploding)
    return die.explode(exploding, depth=ICEPOOL_DEPTH) if exploding else die


def close(a, b, tol=1e-12):
    n = max(len(a), len(b))
    a2, b2 = np.zeros(n), np.zeros(n)
    a2[: len(a)], b2[: len(b)] = a, b
    return float(np.abs(a2 - b2).max()) < tol


TABLES = {
    "4+": dice.hit_table(4, 6, 6),
    "3+": dice.hit_table(3, 6, 6),
    "5+": dice.hit_table(5, 6, 6),
    "6 only": dice.hit_table(6, 6, 6),
}


@pytest.mark.parametrize("n_dice", [1, 5, 10, 20, 40])
@pytest.mark.parametrize("table", list(TABLES))
def test_exploding_pool_exact_matches_icepool(n_dice, table):
    fv, fe = TABLES[table]
    mine = exact.pool(n_dice, fv, fe)
    theirs = icepool_probs(n_dice @ icepool_hit_die(fv, fe))
    assert close(mine.probs, theirs)
    assert mine.truncated_mass < 1e-12


def test_expected_hits_per_die_oracle():
    """docs/rules/dystopian_wars.md §1 oracle: 3+ 1.0, 4+ 0.8, 5+ 0.6, 6 only 0.4."""
    for table, want in [("3+", 1.0), ("4+", 0.8), ("5+", 0.6), ("6 only", 0.4)]:
        assert exact.die_chain(*TABLES[table]).mean() == pytest.approx(want, abs=1e-13)


def test_reference_p_damage_of_the_ad10_scenario():
    """Issue 4: P(hits >= 5) for 10 dice at 4+ = 94139/110592."""
    assert exact.pool(10, *TABLES["4+"]).p_at_least(5) == pytest.approx(94139 / 110592, abs=1e-12)


def test_modified_six_without_explosion():
    """A 6 reached only through a modifier scores 2 but rolls no extra die: the face table
    carries it (natural 5 -> 2 hits, no explosion, when a +1 turns 5 into 6)."""
    fv = np.array([0, 0, 0, 1, 1, 2, 2])
    fe = np.array([0, 0, 0, 0, 0, 0, 1], bool)
    faces = icepool.Die([0, 0, 1, 1, 2, 3])  # 3 marks the exploding natural 6
    # a chain of k exploding 6s ending on v in {0, 1, 2} sums to x = 3k + v in icepool;
    # each 6 scores 2, so the hits are 2k + v = x - x // 3
    ice = faces.explode([3], depth=ICEPOOL_DEPTH).map(lambda x: x - x // 3)
    for n in (1, 4):
        assert close(exact.pool(n, fv, fe).probs, icepool_probs(n @ ice))


def test_cancellation_pool_matches_icepool():
    cv, ce = dice.CANCEL_TABLE
    for n in (1, 3, 8):
        theirs = icepool_probs(n @ icepool.Die([0, 0, 0, 0, 1, 2]))
        assert close(exact.pool(n, cv, ce).probs, theirs)


@pytest.mark.parametrize("n_attack,n_cancel", [(10, 3), (4, 6), (20, 5)])
def test_net_of_cancellations_matches_icepool(n_attack, n_cancel):
    fv, fe = TABLES["4+"]
    hits = n_attack @ icepool_hit_die(fv, fe)
    cancels = n_cancel @ icepool.Die([0, 0, 0, 0, 1, 2])
    theirs = icepool_probs(icepool.map(lambda h, c: max(0, h - c), hits, cancels))
    mine = exact.net_of_cancellations(exact.pool(n_attack, fv, fe), exact.pool(n_cancel, *dice.CANCEL_TABLE))
    assert close(mine.probs, theirs)


@pytest.mark.parametrize("modifier", [-2, 0, 4])
@pytest.mark.parametrize("skill", [11, 15, 17, 20])
def test_roll_under_matches_icepool(skill, modifier):
    d10 = icepool.Die(range(1, 11))
    p_hit_ice = (3 @ d10 + modifier <= skill).probability(True)
    # damage joint with a hit: quality pair q = d2 + d3, distinguished d1
    joint = icepool.map(lambda a, b, c: (b + c) if a + b + c + modifier <= skill else -1, d10, d10, d10)
    p_hit, damage = exact.roll_under(skill, modifier)
    assert abs(p_hit - float(p_hit_ice)) < 1e-12
    for q in range(2, 21):
        assert abs(damage[q] - float(joint.probability(q))) < 1e-12


def test_roll_under_oracle_counts():
    """rules/b17_defense.md §10: combinations (of 1000) with 3d10 <= t."""
    counts = {10: 120, 11: 165, 12: 220, 13: 283, 14: 352, 15: 425, 16: 500, 17: 575, 18: 648, 20: 780, 22: 880}
    for t, c in counts.items():
        assert round(exact.roll_under(t)[0] * 1000, 9) == c


def test_threshold_and_count_exact():
    assert exact.p_roll_at_least(10, 5, 1) == pytest.approx(0.7)   # Arbutus: d10 + 1 >= 5
    assert exact.p_roll_at_most(10, 4) == pytest.approx(0.4)
    d = exact.count_at_least(3, 6, 4)
    ice = icepool_probs(3 @ icepool.Die([0, 0, 0, 1, 1, 1]))
    assert close(d.probs, ice)
    assert exact.count_at_least(2, 6, 5).p_at_least(1) == pytest.approx(1 - (4 / 6) ** 2)


# ---------------- Monte Carlo against exact ----------------

@pytest.mark.parametrize("n_dice", [1, 5, 10, 20, 40])
def test_exploding_pool_mc_matches_exact(n_dice):
    fv, fe = TABLES["4+"]
    r = dice.simulate_pool(n_dice, fv, fe, trials=400_000, seed=11, key=n_dice)
    assert r.explosion_caps_hit == 0 and r.clipped == 0
    assert_histogram_matches(r.counts, exact.pool(n_dice, fv, fe).probs, what=f"{n_dice} dice")


@pytest.mark.parametrize("table", ["3+", "5+", "6 only"])
def test_other_thresholds_mc_match_exact(table):
    fv, fe = TABLES[table]
    r = dice.simulate_pool(10, fv, fe, trials=200_000, seed=12)
    assert_histogram_matches(r.counts, exact.pool(10, fv, fe).probs, what=table)


def test_net_hits_mc_matches_exact():
    fv, fe = TABLES["4+"]
    r = dice.simulate_pool(10, fv, fe, trials=300_000, seed=13, cancel_dice=4)
    want = exact.net_of_cancellations(exact.pool(10, fv, fe), exact.pool(4, *dice.CANCEL_TABLE))
    assert_histogram_matches(r.counts, want.probs, what="net hits")


@pytest.mark.parametrize("modifier", [-2, 0, 4])
def test_roll_under_mc_matches_exact(modifier):
    counts = dice.simulate_roll_under(trials=300_000, seed=14, key=modifier + 10)
    joint = exact.roll_under_joint()
    assert_histogram_matches(counts.ravel(), joint.ravel(), what="3d10 joint (total, quality)")
    skill = 15
    limit = skill - modifier
    n = counts.sum()
    p_hit_mc = counts[: limit + 1].sum() / n
    p_hit, damage = exact.roll_under(skill, modifier)
    se = np.sqrt(p_hit * (1 - p_hit) / n)
    assert abs(p_hit_mc - p_hit) < 5 * se
    dmg_mc = counts[: limit + 1].sum(axis=0)
    dmg_mc = np.append(dmg_mc, counts[limit + 1:].sum())  # misses in one extra bin
    assert_histogram_matches(dmg_mc, np.append(damage, 1 - p_hit), what="damage joint with hit")


def test_count_mc_matches_exact():
    counts = dice.simulate_count(4, 6, 5, trials=200_000, seed=15)
    assert_histogram_matches(counts, exact.count_at_least(4, 6, 5).probs, what="count >= 5 of 4d6")


def test_modified_roll_mc():
    counts = dice.simulate_modified_roll(10, 1, trials=100_000, seed=16)
    n = sum(counts.values())
    p = sum(c for v, c in counts.items() if v >= 5) / n
    assert abs(p - 0.7) < 5 * np.sqrt(0.21 / n)


# ---------------- bad input ----------------

@pytest.mark.parametrize("call,param", [
    (lambda: dice.simulate_pool(-1, *TABLES["4+"], trials=10, seed=1), "n_dice"),
    (lambda: dice.simulate_pool(3, *TABLES["4+"], trials=0, seed=1), "trials"),
    (lambda: dice.hit_table(hit_on=7), "hit_on"),
    (lambda: dice.hit_table(hit_on=0), "hit_on"),
    (lambda: dice.simulate_count(3, 6, 7, trials=10, seed=1), "target"),
    (lambda: dice.simulate_count(-2, 6, 4, trials=10, seed=1), "n_dice"),
    (lambda: dice.simulate_roll_under(trials=-5, seed=1), "trials"),
    (lambda: dice.simulate_modified_roll(1, trials=10, seed=1), "sides"),
    (lambda: dice.simulate_pool(3, [0, 1, 1, 1, 1, 1, 1], [0, 1, 1, 1, 1, 1, 1], trials=10, seed=1), "face_explodes"),
])
def test_bad_input_names_the_parameter(call, param):
    with pytest.raises(ValueError, match=param):
        call()
