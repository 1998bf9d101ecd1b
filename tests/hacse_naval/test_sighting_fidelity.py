"""Issue 29 items 7, 10 and 12 (sighting): the searcher's rangefinders and radar (source l.31-32),
the target's BM (l.27) as a declared reading, ASDIC and the passive-sonar paragraph (l.61-62),
an honest time-to-sighting metric and the shipped scenario's console and exact mode.

Each test's docstring says what the code did before issue 29."""
import json
import os
import subprocess
import sys
from fractions import Fraction

import pytest
import yaml

from analyzer.games.hacse_naval import reference as ref
from analyzer.games.hacse_naval import sighting as sighting_mod
from tests.hacse_naval.helpers import DATA, SCEN, assert_distributions_agree, assert_kernel_matches_exact, \
    assert_means_agree, prepare, run

SCENARIO = SCEN / "sighting_asdic_vs_sonar.yaml"


def _net(params, rules=None):
    """Net difficulty from the question's notes and from the reference (they must agree)."""
    _, p, prep = prepare("sighting", params, rules)
    note = next(n for n in prep.notes if "net difficulty" in n)
    net = int(note.split("net difficulty ")[1].split(";")[0])
    assert net == ref.sighting_difficulty(p.model_dump(), {**ref.DEFAULT_RULES, **(rules or {})}, DATA)
    return net


PERISCOPE = {"sensor": "periscope", "sub_depth": 1}


def test_rangefinder_doubles_the_periscope_range_step():
    """Before: every sighting used the clear-weather step of 5 hex whatever the searcher carried
    (no rangefinder parameter: a 10-hex periscope sighting was +3 + 2 steps = +5). Source l.31:
    "Dies verdoppelt die Distanz ... also +1 je 10 Hex bei klarem Wetter"."""
    assert _net({**PERISCOPE, "distance": 10}) == 5
    assert _net({**PERISCOPE, "distance": 10, "rangefinder": True}) == 4
    assert _net({**PERISCOPE, "distance": 19, "rangefinder": True}) == 4
    assert _net({**PERISCOPE, "distance": 20, "rangefinder": True}) == 5


# periscope at 30 hex: +3 and 30 // step; clear step 5, rangefinder 10, radar x3 limited at 5 hex
@pytest.mark.parametrize("radar_limit,combine,rangefinder,step", [
    ("penalty_at_least_1_per_5_hex", "multiply", False, 5),     # literal: min(15, 5)
    ("step_at_least_5_hex", "multiply", False, 15),             # max(15, 5)
    ("penalty_at_least_1_per_5_hex", "multiply", True, 5),      # min(30, 5)
    ("step_at_least_5_hex", "multiply", True, 30),
    ("penalty_at_least_1_per_5_hex", "better", True, 10),       # max(10, min(15, 5))
    ("step_at_least_5_hex", "better", True, 15),                # max(10, 15)
    ("penalty_at_least_1_per_5_hex", "radar_only", True, 5),
    ("step_at_least_5_hex", "radar_only", True, 15),
])
def test_radar_triples_the_step_under_each_reading(radar_limit, combine, rangefinder, step):
    """Before: radar was not modelled (no parameter, no H5/H6 option): a 30-hex periscope sighting
    was always +3 + 6. Source l.32: "verdreifacht die Sicht-Distanz bei jedem Wetter, und der
    Aufschlag fällt nie unter +1 je 5 Hex"."""
    rules = {"radar_limit": radar_limit, "radar_with_rangefinder": combine}
    params = {**PERISCOPE, "distance": 30, "radar": True, "rangefinder": rangefinder}
    assert _net(params, rules) == 3 + 30 // step


def test_the_searchers_step_is_the_range_term_of_passive_sonar_under_add_range():
    """Before: passive sonar under sonar_terms: add_range added clear-weather steps of 5 hex for
    every searcher; now the searcher's own step (here a rangefinder's 10 hex)."""
    sonar = {"sensor": "passive_sonar", "sub_depth": 1, "distance": 10}
    assert _net(sonar, {"sonar_terms": "add_range"}) == 2 + 10 + 2
    assert _net({**sonar, "rangefinder": True}, {"sonar_terms": "add_range"}) == 2 + 10 + 1
    assert _net({**sonar, "rangefinder": True}) == 2 + 10          # replace: no range steps at all


def test_asdic_keeps_its_own_terms_whatever_sonar_terms_says():
    """Pins a reading (no change): the sonar paragraph (l.61, "(passives) Sonar") does not cover
    ASDIC, which l.62 gives its own terms, so sonar_terms leaves ASDIC alone (+6 at depth 2, 7 hex)."""
    asdic = {"sensor": "asdic", "own_speed": 4, "sub_depth": 2, "distance": 7}
    assert _net(asdic) == _net(asdic, {"sonar_terms": "add_range"}) == 6
    assert _net({**asdic, "rangefinder": True, "radar": True}, {"sonar_terms": "add_range"}) == 6


def test_the_u_boats_bm_is_a_declared_reading():
    """Before: whether l.27's BM ease ("wird der Beschussmodifikator des Ziels immer als
    Erleichterung eingerechnet") applies to a U-boat was an undeclared reading (never applied,
    no option). Default not_a_ship keeps that; ease subtracts the sheet's |BM| (placeholder -2)
    and lists it among the placeholders."""
    asdic = {"sensor": "asdic", "own_speed": 4, "sub_depth": 2, "distance": 3}
    assert _net(asdic) == 5
    assert _net(asdic, {"sub_target_bm": "ease"}) == 3
    _, _, default = prepare("sighting", asdic)
    _, _, eased = prepare("sighting", asdic, {"sub_target_bm": "ease"})
    assert not any(ph.path.endswith(".bm") for ph in default.placeholders)
    assert any(ph.path == "ships.type_viic.ship.bm" for ph in eased.placeholders)
    assert eased.exact()["p_sighted_round"].mean == pytest.approx(0.4)      # 0.7 - 0.1 x 3


def test_rounds_to_sighting_if_seen_is_the_conditional_round_exactly():
    """Before: only rounds_to_sighting, whose mean counts k + 1 for every unsighted trial (ASDIC
    at p = 1/2, k = 3: 1.875), labelled as if it were the round of the first sighting. Now that
    one says so and rounds_to_sighting_if_seen is E[first round | sighted within k] = 11/7."""
    _, _, prep = prepare("sighting", {"sensor": "asdic", "own_speed": 4, "sub_depth": 1, "distance": 1,
                                      "rounds": 3})
    labels = {m.name: m.label for m in prep.metrics}
    assert "4 counted for 'not sighted within 3'" in labels["rounds_to_sighting"]
    ans = prep.exact()
    assert ans["rounds_to_sighting"].mean == pytest.approx(1.875, abs=1e-15)
    seen = ans["rounds_to_sighting_if_seen"]
    assert Fraction(seen.mean).limit_denominator(1000) == Fraction(11, 7)
    assert list(seen.values) == [1, 2, 3]
    assert list(seen.probs) == pytest.approx([4 / 7, 2 / 7, 1 / 7], abs=1e-15)


def test_rounds_to_sighting_if_seen_is_0_where_no_sighting_is_possible():
    """Before: no such metric. Where P(sighted) = 0 the conditional round is undefined: 0, noted."""
    _, _, prep = prepare("sighting", {"sensor": "asdic", "own_speed": 7, "sub_depth": 1, "distance": 1})
    assert prep.exact()["rounds_to_sighting_if_seen"].mean == 0
    assert any("rounds_to_sighting_if_seen is 0" in n for n in prep.notes)
    assert run(prep, 5000)["rounds_to_sighting_if_seen"][0] == 5000


@pytest.mark.parametrize("params,rules", [
    # p = 0.1, k = 2: most trials do not sight, so the conditional draw is exercised
    ({"sensor": "asdic", "own_speed": 4, "sub_depth": 3, "distance": 1, "rounds": 2}, {}),
    ({"sensor": "periscope", "sub_depth": 1, "distance": 30, "radar": True, "rangefinder": True, "rounds": 6},
     {"radar_limit": "step_at_least_5_hex", "radar_with_rangefinder": "better", "roll_model": "dice_under"}),
])
def test_sighting_kernel_matches_exact_with_the_new_metric(params, rules):
    """Before: the kernel wrote three metrics; the conditional one is checked bin by bin here."""
    _, _, prep = prepare("sighting", params, rules)
    counts, _ = assert_kernel_matches_exact(prep, 200_000, seed=31, what=f"sighting {params} {rules}")
    assert "rounds_to_sighting_if_seen" in counts


@pytest.mark.parametrize("params,rules", [
    ({"sensor": "asdic", "own_speed": 4, "sub_depth": 3, "distance": 2, "rounds": 3}, {"sub_target_bm": "ease"}),
    ({"sensor": "periscope", "sub_depth": 1, "distance": 12, "radar": True, "rounds": 4},
     {"radar_limit": "step_at_least_5_hex", "roll_model": "dice_under"}),
])
def test_sighting_kernel_matches_reference_with_the_new_rules(params, rules):
    """Before: the reference had no radar, rangefinder, BM or conditional metric; kernel and
    reference agree within 5 combined SEs on every metric."""
    _, p, prep = prepare("sighting", params, rules)
    counts = run(prep, 200_000, seed=33)
    sample = ref.simulate("sighting", p.model_dump(mode="json", exclude_unset=True), rules, DATA, 20_000, 33)
    assert set(sample) == set(counts)
    for name, c in counts.items():
        assert_distributions_agree(c, sample[name], what=f"sighting {rules} {name}")
        assert_means_agree(c, sample[name], what=f"sighting {rules} {name} mean")


def test_the_shipped_scenario_explains_its_zeros_and_is_exact():
    """Before: no description; 42 of 64 points exactly 0 unexplained and the scenario read as a
    Monte-Carlo one. Its description names `analyzer exact`, and every zero point is one whose
    net difficulty reaches p0 / step = +7 under the placeholder linear model."""
    spec = yaml.safe_load(SCENARIO.read_text())
    assert "analyzer exact" in spec["description"] and "42 of the 64 points" in spec["description"]
    out = subprocess.run([sys.executable, "-c", "from analyzer.cli.app import main; main()", "exact", str(SCENARIO),
                          "--no-write", "--json"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    points = json.loads(out.stdout)["points"]
    zeros = [pt for pt in points if pt["metrics"]["p_sighted_within"]["mean"] == 0]
    assert len(points) == 64 and len(zeros) == 42
    s = {**DATA["hacse"]["sighting"], "clear_hexes_per_step": 5}
    for pt in points:
        params = dict(pt["params"])
        rules = {**ref.DEFAULT_RULES, **params.pop("rules", {})}
        net = sighting_mod.net_difficulty(sighting_mod.SightingParams(**params), rules, s)
        assert (pt["metrics"]["p_sighted_within"]["mean"] == 0) == (net >= 7), pt["swept"]


def test_the_console_shows_the_asked_metric_first_at_80_columns(tmp_path):
    """Before: at 80 columns `analyzer run` showed only p_sighted_round (and `exact` showed it
    first), hiding P(sighted within 3 rounds), the metric the scenario asks about."""
    env = dict(os.environ, COLUMNS="80", TERM="dumb")
    for cmd in (["exact", str(SCENARIO), "--no-write"],
                ["run", str(SCENARIO), "--trials", "2000", "--no-write", "--no-progress"]):
        res = subprocess.run([sys.executable, "-c", "from analyzer.cli.app import main; main()", *cmd], cwd=tmp_path,
                             env=env, capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr
        head = next(ln for ln in res.stdout.splitlines() if "sensor" in ln and "distance" in ln)
        metric_cells = [c.strip() for c in head.split("┃")[4:] if c.strip()]
        assert metric_cells[0].startswith("p_sighted_within"), head
        assert not [ln for ln in (res.stdout + res.stderr).splitlines() if len(ln) > 80]
