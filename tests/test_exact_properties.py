"""Property tests of the exact engine against closed forms, over random face tables."""
import numpy as np
from hypothesis import given, settings, strategies as st

from analyzer.core import exact

faces = st.integers(min_value=2, max_value=10).flatmap(
    lambda sides: st.tuples(
        st.lists(st.integers(0, 3), min_size=sides, max_size=sides),
        st.lists(st.booleans(), min_size=sides, max_size=sides).filter(lambda e: not all(e)),
    ))


@settings(max_examples=60, deadline=None)
@given(faces, st.integers(min_value=0, max_value=12))
def test_pool_mass_and_mean_match_closed_form(table, n_dice):
    values, explodes = table
    fv = np.array([0] + values)
    fe = np.array([False] + explodes)
    d = exact.pool(n_dice, fv, fe)
    assert abs(d.probs.sum() + d.truncated_mass - 1.0) < 1e-12
    sides = len(values)
    p_explode = sum(explodes) / sides
    # one die's chain: E[Y] = E[value of one face] / (1 - P(explode)) (Wald's identity)
    die_mean = (sum(values) / sides) / (1 - p_explode)
    assert abs(d.mean() - n_dice * die_mean) < 1e-9 * max(1.0, n_dice * die_mean)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 15), st.integers(0, 10))
def test_cancellations_never_increase_hits(n_attack, n_cancel):
    from analyzer.run.dice import CANCEL_TABLE, hit_table
    hits = exact.pool(n_attack, *hit_table())
    net = exact.net_of_cancellations(hits, exact.pool(n_cancel, *CANCEL_TABLE))
    assert abs(net.probs.sum() - hits.probs.sum()) < 1e-12
    assert net.mean() <= hits.mean() + 1e-12
    for k in range(len(net.probs)):
        assert net.p_at_least(k) <= hits.p_at_least(k) + 1e-12


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 40), st.integers(-10, 10))
def test_roll_under_by_brute_force(skill, modifier):
    brute_hit = 0
    brute_dmg = np.zeros(21)
    for a in range(1, 11):
        for b in range(1, 11):
            for c in range(1, 11):
                if a + b + c + modifier <= skill:
                    brute_hit += 1
                    brute_dmg[b + c] += 1
    p, dmg = exact.roll_under(skill, modifier)
    assert abs(p - brute_hit / 1000) < 1e-12
    assert np.allclose(dmg, brute_dmg / 1000, atol=1e-12, rtol=0)
