"""Issue 30: a matchup difference that rests on PLACEHOLDER values one contender's games use and the
reference's do not is said in the notes (an Air Search fleet's -0.79 VP against Intel on placeholder
decks used to be shown without a word)."""
from __future__ import annotations

from types import SimpleNamespace

from analyzer.analyses.balance.matchup import placeholder_caveats
from analyzer.core import scenario as scenario_mod
from analyzer.core.questions import SCENARIO_ROOT
from analyzer.run.runner import prepare_point

MATCHUP = SCENARIO_ROOT / "uboat_leader" / "matchup_loadouts.yaml"


def _own_point(so: str):
    sc = scenario_mod.load(MATCHUP, sweep={"policy.so": [so]}, trials_guard=False)
    return prepare_point(sc, sc.points[0])


def test_a_contender_using_placeholders_the_reference_does_not_gets_a_caveat():
    intel, air, none = _own_point("intel"), _own_point("air_search"), _own_point("none")
    air_only = {ph.path for ph in air.placeholders if not ph.is_example} - \
        {ph.path for ph in intel.placeholders if not ph.is_example}
    assert air_only, "the shipped Air Search plan reads placeholder values Intel does not"
    notes = placeholder_caveats(["example_intel", "example_air_search", "example_no_so"], [[intel], [air], [none]], 0)
    air_note = [n for n in notes if n.startswith("example_air_search vs example_intel")]
    assert len(air_note) == 1
    assert "PLACEHOLDER" in air_note[0] and sorted(air_only)[0] in air_note[0]
    assert not any(n.startswith("example_intel vs") for n in notes)      # no note for the reference itself


def test_contenders_on_the_same_placeholders_get_no_caveat():
    ph = SimpleNamespace(path="events.cards", source="x", is_example=False)
    ex = SimpleNamespace(path="campaign.so", source="y", is_example=True)
    same = [SimpleNamespace(placeholders=[ph, ex])]
    assert placeholder_caveats(["a", "b"], [same, same], 0) == []
    other = [SimpleNamespace(placeholders=[ph])]                 # an example value does not count
    assert placeholder_caveats(["a", "b"], [same, other], 0) == []
    extra = [SimpleNamespace(placeholders=[ph, SimpleNamespace(path="air.table", source="z", is_example=False)])]
    notes = placeholder_caveats(["a", "b"], [same, extra], 0)
    assert len(notes) == 1 and "1 PLACEHOLDER value(s)" in notes[0] and "air.table" in notes[0]
