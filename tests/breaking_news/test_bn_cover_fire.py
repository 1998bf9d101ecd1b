"""``cover_fire``: the §8.6 worked example, the cap, the A7 option, MC against exact, and the
reference's simulation against the exact mode."""
from fractions import Fraction

import numpy as np
import pytest

from analyzer.core.errors import ScenarioError
from tests.breaking_news.helpers import assert_mc_matches_exact, prepare
from analyzer.games.breaking_news import reference as R
from tests.stat_checks import assert_mean_matches

EXAMPLE = {"shooters": [{"weapon": "assault_rifle", "range_cm": 32}, {"weapon": "lmg", "range_cm": 32}],
           "quality": "elite", "enemy": {"quality": "militia", "cover": True, "bunker": True}}


def test_rangers_bunker_example():
    """"El valor es 6 (2 + 4) al cual se le añade 3 por ser tropa de Élite (Total 9 ...) ... debe sacar con
    los dados más de 9 con 3D6 para no recibir un impacto en cada figura que haga el fuego de cobertura"."""
    _, _, prep = prepare("cover_fire", EXAMPLE)
    assert prep.args[:3] == (9, 3, 2)
    ex = prep.exact()
    p_hit = Fraction(sum(1 for a in range(1, 7) for b in range(1, 7) for c in range(1, 7) if a + b + c <= 9), 216)
    assert p_hit == Fraction(81, 216)
    assert ex["p_hit"].mean == pytest.approx(float(p_hit))
    assert ex["hits"].mean == pytest.approx(float(2 * p_hit))
    # militia save 5+, +1 in cover: 4+; dies if either save fails
    assert ex["casualties"].mean == pytest.approx(float(p_hit * (1 - Fraction(1, 4))))


def test_cap_nine_and_one_hit_reading():
    params = {"shooters": [{"weapon": "mmg", "range_cm": 20}, {"weapon": "lmg", "range_cm": 20}],
              "quality": "elite", "enemy": {"quality": "veteran"}}
    _, _, prep = prepare("cover_fire", params)
    assert prep.args[0] == 9 and any("capped at 9" in n for n in prep.notes)
    _, _, prep = prepare("cover_fire", params, {"cover_fire_hits": "one_hit"})
    assert prep.args[2] == 1
    # "Como el máximo valor es siempre un 9, siempre pasará el test con un 10+"
    assert prep.exact()["p_hit"].mean == pytest.approx(float(Fraction(30, 36)))


def test_pistol_beyond_25_cm_is_refused():
    with pytest.raises(ScenarioError, match=r"shooters\[0\]"):
        prepare("cover_fire", {"shooters": [{"weapon": "pistol", "range_cm": 40}], "quality": "elite",
                               "enemy": {"quality": "militia"}})


@pytest.mark.parametrize("rules", [{}, {"cover_fire_hits": "one_hit"}])
def test_mc_and_reference_match_exact(rules):
    _, p, prep = prepare("cover_fire", EXAMPLE, rules)
    assert_mc_matches_exact(prep, 50_000, what="cover fire")
    out = R.simulate("cover_fire", p.model_dump(mode="json"), rules, R.load_data(), 20_000, 3)
    ex = prep.exact()
    for name in ("p_hit", "hits", "casualties", "shocked"):
        xs = np.asarray(out[name], float)
        assert_mean_matches(xs.mean(), xs.std() / np.sqrt(len(xs)), ex[name].mean, what=name)


def test_cover_fire_notes_name_each_reconstructed_cell_and_its_confidence():
    """Issue 28 item 9: the note of a reconstructed cover-fire cell says which cell and its confidence
    (it said 'confidence M' whatever the cells were); a confirmed (H) cell gets no note."""
    _, _, prep = prepare("cover_fire", EXAMPLE)          # AR and LMG at 32 cm: both H (the example)
    assert not any("reconstructed" in n for n in prep.notes)
    params = {"shooters": [{"weapon": "smg", "range_cm": 20}, {"weapon": "assault_rifle", "range_cm": 40}],
              "quality": "veteran", "enemy": {"quality": "militia"}}
    _, _, prep = prepare("cover_fire", params)
    low = [n for n in prep.notes if "reconstructed" in n]
    assert low == ["reconstructed table cell cover fire smg at 20 cm (band <= 25 cm): confidence M "
                   "(column-order parse only)"]
