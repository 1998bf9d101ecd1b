"""Issue 30, sensitivity over structured values named in the data: value groups a game's data
declares (``data/sensitivity_groups.yaml``: the shipped one, or a player's copy beside the
scenario), ``--swap GROUP_OR_DATAFILE=PATH`` (a whole data file, or the part a group names,
replaced by the user's version as one variant), contact models as variants, and placeholder
counts of only the values an option uses (a matchup contender's cost).

As in tests/test_sensitivity_structured.py, the acceptance checks edit the data by hand in a copy
(explicitly, here, not through the sensitivity code) and compare on the same seed: common random
numbers make the variant's effect equal ``analyzer compare``'s B - A on the hand-edited copy."""
import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from analyzer.analyses import sensitivity
from analyzer.analyses.balance import matchup
from analyzer.cli.app import app
from analyzer.core import scenario as scenario_mod
from analyzer.core.errors import ScenarioError
from analyzer.core.questions import ValueGroup
from analyzer.core.value_groups import GROUPS_FILE
from analyzer.games.uboat_leader.campaign import Campaign
from tests.test_sensitivity_structured import TRIALS, UBOAT, _campaign, _diff, _scenario

ROOT = Path(__file__).resolve().parents[1]
B17 = ROOT / "scenarios" / "b17"
#: the event deck as the campaign question module declared it before the data named it
MODULE_DECK = ValueGroup("event deck", ("events.cards",), "every card count and effect size of the Event deck")


def _groups_file(folder: Path, groups) -> Path:
    """A player's groups file beside the scenarios of ``folder``."""
    path = folder / GROUPS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(groups if isinstance(groups, dict) else {"groups": groups}, sort_keys=False))
    return path


def _rows(result) -> dict:
    return {e.variant.value: (e.variant.values, e.variant.placeholder_values, e.mean, e.se, e.ci_low, e.ci_high)
            for e in result.effects}


def test_a_data_group_has_exactly_the_effect_of_the_module_declared_group_it_replaced(tmp_path, monkeypatch):
    """The shipped event deck is now named by the data (scenarios/uboat_leader/data/
    sensitivity_groups.yaml), not by the campaign module: at the same seed its two rows are exactly
    those of the module's old declaration (run with a player's groups file naming none). With both, the
    data's group of the same name replaces the module's (a player's narrower 'event deck', the counts
    only: 5 values, not 13), and the notes say so."""
    data_run = sensitivity.run(scenario_mod.load(_campaign(tmp_path / "data")), only=("event deck",))
    assert Campaign.value_groups == ()
    assert data_run.notes == ["value groups named in the data: the game's data/sensitivity_groups.yaml (shipped): "
                              "event deck, contact tables, VP thresholds, wolfpack notes"]
    monkeypatch.setattr(Campaign, "value_groups", (MODULE_DECK,))
    module = _campaign(tmp_path / "module")
    _groups_file(module.parent, [])
    module_run = sensitivity.run(scenario_mod.load(module), only=("event deck",))
    assert set(_rows(data_run)) == {"each one step down", "each one step up"}
    assert _rows(data_run) == _rows(module_run)                  # exactly: same values moved, same streams
    both = _campaign(tmp_path / "both")
    _groups_file(both.parent, [{"name": "event deck", "paths": ["events.cards[*].count"], "doc": "counts only"}])
    both_run = sensitivity.run(scenario_mod.load(both), only=("event deck",))
    assert [e.variant.values for e in both_run.effects] == [5, 5]
    assert ("value group 'event deck': the data's (data/sensitivity_groups.yaml beside the scenario) replaces the "
            "question's declaration of the same name") in both_run.notes


def test_a_players_group_beside_the_scenario_is_used(tmp_path):
    """A player's data/sensitivity_groups.yaml beside the scenario (it replaces the shipped one) groups
    their own values: the escort-detection example's two Detection values (labelled in the scenario
    itself) move as one variant. The point is surfaced, so on common random numbers the group's effect
    is exactly the surfaced value's alone (the submerged value is never read), within 5 SE of the exact
    +-0.1 (P(d10 + 1 = 4)). A pattern or a group that matches nothing the point uses is listed under
    not_perturbed with the reason, not an error."""
    scen = _scenario(tmp_path, UBOAT / "escort_detection_example.yaml")
    _groups_file(tmp_path, [{"name": "detection values", "paths": ["params.detection.*", "params.escort.sonar"],
                             "doc": "the escort's Detection values"},
                            {"name": "my typo", "paths": ["params.detection.surfacd"]}])
    result = sensitivity.run(scenario_mod.load(scen), trials=20_000, only=("detection values",
                                                                           "params.detection.surfaced"))
    assert result.notes == ["value groups named in the data: data/sensitivity_groups.yaml beside the scenario: "
                            "detection values, my typo"]
    single = {e.variant.value: e for e in result.effects if e.variant.kind == "example"}
    group = {e.variant.value: e for e in result.effects if e.variant.kind == "value group"}
    assert set(group) == {"each one step down", "each one step up"}
    for label, value, exact in (("each one step down", 4, 0.1), ("each one step up", 6, -0.1)):
        g, s = group[label], single[value]
        assert g.variant.values == 2 and [p for p, *_ in g.variant.edits] == ["params.detection.surfaced",
                                                                            "params.detection.submerged"]
        assert (g.mean, g.se) == (s.mean, s.se) and g.se > 0
        assert abs(g.mean - exact) <= 5 * g.se
    assert ("detection values (value group; its pattern params.escort.sonar matches no value this point uses)"
            in result.skipped)
    assert any(s.startswith("my typo (value group; this point uses none of its values") for s in result.skipped)


BAD_GROUPS = [
    ({"groups": [{"name": "deck", "path": ["events.cards"]}]}, "groups[0].path",
     "unknown key (did you mean 'paths'?)"),
    ({"groups": [{"name": "deck", "paths": ["events.cards"], "scale": 1}]}, "groups[0].scale", "a number above 1"),
    ({"groups": [{"name": "deck", "paths": ["events.cards"], "scale": True}]}, "groups[0].scale", "got True"),
    ({"groups": [{"name": "deck", "paths": ["events.cards"], "scale": "1.25"}]}, "groups[0].scale", "got '1.25'"),
    ({"groups": [{"name": "deck", "paths": ["events.cards"], "scale": {"ph": 1.25}}]}, "groups[0].scale",
     "a number above 1"),
    ({"groups": [{"name": "deck", "paths": ["events..cards"]}]}, "groups[0].paths[0]", "list indexes [N]"),
    ({"groups": [{"name": "deck", "paths": ["events.cards["]}]}, "groups[0].paths[0]", "got 'events.cards['"),
    ({"groups": [{"name": "deck", "paths": []}]}, "groups[0].paths", "a non-empty list"),
    ({"groups": [{"name": "deck"}]}, "groups[0].paths", "missing"),
    ({"groups": [{"name": "deck", "paths": ["a"]}, {"name": "deck", "paths": ["b"]}]}, "groups[1].name",
     "given twice"),
    ({"groups": [{"name": "deck", "paths": ["a"], "questions": ["campain"]}]}, "groups[0].questions[0]",
     "(did you mean 'campaign'?)"),
    ({"groups": [{"name": "a=b", "paths": ["a"]}]}, "groups[0].name", "without '='"),
    ({"groups": [{"name": {"ph": "deck"}, "paths": ["a"]}]}, "groups[0].name", "labelled value"),
    ({"group": []}, "", "a groups file holds one key, groups"),
]


BAD_IDS = ["unknown key", "scale 1", "scale bool", "scale text", "scale labelled", "empty step", "open bracket",
           "no patterns", "no paths", "name twice", "unknown question", "name with =", "labelled name", "top key"]


@pytest.mark.parametrize("doc, field, message", BAD_GROUPS, ids=BAD_IDS)
def test_a_bad_group_declaration_is_refused_in_one_line(tmp_path, doc, field, message):
    scen = _scenario(tmp_path, UBOAT / "escort_detection_example.yaml")
    path = _groups_file(tmp_path, doc)
    with pytest.raises(ScenarioError) as err:
        sensitivity.variants(scenario_mod.load(scen))
    text = str(err.value)
    assert "\n" not in text and text.startswith(f"{path}: {field}: " if field else f"{path}: ") and message in text


def _my_deck(folder: Path) -> tuple[Path, int]:
    """A player's Event deck, edited by hand from the shipped one: two counts written plainly or moved,
    a late effect written plainly, one card added; (the file, plain values that differ)."""
    doc = yaml.safe_load((UBOAT / "data" / "campaign" / "events.yaml").read_text())
    cards = doc["events"]["cards"]
    cards[0]["count"] = cards[0]["count"]["ph"] - 2           # printed value, no longer a placeholder
    cards[1]["count"]["ph"] += 1
    cards[2]["late"]["n"] = cards[2]["late"]["n"]["ph"] - 1   # printed value
    cards.append({"name": "Niebla", "count": 2, "early": {"type": "stress", "n": 1}, "late": {"type": "none"}})
    path = folder / "my_events.yaml"
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    return path, 3 + 5                                         # 3 values changed, 5 of the added card


def test_swap_of_the_event_deck_is_exactly_compare_against_the_hand_edited_copy(tmp_path):
    """The issue's acceptance for the swap form: a deck-as-a-whole variant (the player's deck at PATH,
    named by the group or by the data file) gives exactly the effect of 'analyzer compare' of the
    scenario against a copy that reads the edited deck; the row says how many values it changes, how
    many used placeholders it changes or writes plainly and how many the swapped point no longer uses."""
    base = _campaign(tmp_path / "a")
    mine, changed = _my_deck(tmp_path / "mine")
    edited = _campaign(tmp_path / "b")
    (edited.parent / "data" / "campaign").mkdir(parents=True)
    shutil.copyfile(mine, edited.parent / "data" / "campaign" / "events.yaml")
    want = _diff(base, edited, "vp")
    result = sensitivity.run(scenario_mod.load(base), kinds=("swap",),
                             swaps=(f"event deck={mine}", f"data/campaign/events.yaml={mine}"))
    assert [e.variant.what for e in result.effects] == ["event deck", "data/campaign/events.yaml"]
    for e in result.effects:
        assert e.variant.kind == "swap" and e.se > 0
        assert (e.mean, e.se) == (want["mean"], want["se"])
        row = e.row()
        assert (row["values"], row["placeholder_values"], row["placeholders_removed"]) == (changed, 3, 2)
        assert row["placeholders"] == result.base_placeholders - 2
        assert row["base"] == "data/campaign/events.yaml (shipped)" and row["value"] == str(mine)
    assert sensitivity.placeholders_varied(result) == 3


def _refusal(sc, *swaps) -> str:
    with pytest.raises(ScenarioError) as err:
        sensitivity.run(sc, kinds=("swap",), swaps=swaps)
    text = str(err.value)
    assert "\n" not in text
    return text


def test_refusals_of_swap(tmp_path, monkeypatch):
    """Each refused in one line naming the scenario and the --swap, before any trial runs: a path that
    does not exist, a target that names nothing the point reads, a text without '=', a file that is not
    YAML, a deck the campaign does not accept (the swapped point does not validate), a group swap whose
    file lacks the place the group names."""
    sc = scenario_mod.load(_campaign(tmp_path / "a"))
    monkeypatch.setattr(sensitivity, "_base_batches", lambda *a, **k: pytest.fail("a trial ran"))
    deck = UBOAT / "data" / "campaign" / "events.yaml"
    assert f"--swap event deck: {tmp_path}/nope.yaml: no such file" in _refusal(sc, f"event deck={tmp_path}/nope.yaml")
    text = _refusal(sc, f"the deck={deck}")
    assert "--swap the deck: names nothing this point reads; allowed: a value group (event deck, contact tables, " \
           "VP thresholds, wolfpack notes) or a data file the point reads (" in text and "data/campaign/events.yaml" in text
    assert "give GROUP_OR_DATAFILE=PATH" in _refusal(sc, "event deck")
    (tmp_path / "broken.yaml").write_text("events: [unclosed\n")
    assert "malformed YAML" in _refusal(sc, f"data/campaign/events.yaml={tmp_path / 'broken.yaml'}")
    doc = yaml.safe_load(deck.read_text())
    doc["events"]["cards"][0]["early"]["type"] = "boom"
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    text = _refusal(sc, f"event deck={tmp_path / 'bad.yaml'}")
    assert f"--swap event deck: with {tmp_path / 'bad.yaml'} the point does not validate: " in text and "boom" in text
    (tmp_path / "no_cards.yaml").write_text(yaml.safe_dump({"events": {"split_year": 1942}}))
    text = _refusal(sc, f"event deck={tmp_path / 'no_cards.yaml'}")
    assert "events.cards: the group names it but" in text and "no_cards.yaml has no value there" in text


def test_the_cli_runs_and_refuses_swaps(tmp_path):
    scen = _campaign(tmp_path / "a")
    mine, _ = _my_deck(tmp_path / "mine")
    r = CliRunner().invoke(app, ["sensitivity", str(scen), "--kind", "swap", "--swap", f"event deck={mine}",
                                 "--out", str(tmp_path / "out"), "--json"])
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    (row,) = doc["variants"]
    assert (row["what"], row["kind"], row["value"], row["placeholders_removed"]) == ("event deck", "swap", str(mine), 2)
    assert doc["notes"][0].startswith("value groups named in the data")
    report = (Path(doc["folder"]) / "report.html").read_text()
    assert "<h2>Swaps</h2>" in report and str(mine) in report and "<h2>Notes</h2>" in report
    bad = CliRunner().invoke(app, ["sensitivity", str(scen), "--swap", f"event deck={tmp_path}/nope.yaml",
                                   "--out", str(tmp_path / "out")])
    assert bad.exit_code == 2 and "no such file" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def test_a_b17_table_group_equals_editing_the_crew_sheet_by_hand(tmp_path):
    """Another game's table named in its data: the B-17 crew's skills (every gunner a placeholder 15)
    one lower / higher together, exactly compare against crew.yaml edited by hand."""
    base = _scenario(tmp_path / "a", B17 / "attack_wave_headon_intercom.yaml")
    result = sensitivity.run(scenario_mod.load(base), only=("crew skills",))
    crew = yaml.safe_load((B17 / "data" / "crew.yaml").read_text())
    for step, label in ((-1, "each one step down"), (1, "each one step up")):
        doc = yaml.safe_load((B17 / "data" / "crew.yaml").read_text())
        for who in doc["skills"]:
            doc["skills"][who]["ph"] += step
        edited = _scenario(tmp_path / f"b{step}", B17 / "attack_wave_headon_intercom.yaml")
        (edited.parent / "data").mkdir()
        (edited.parent / "data" / "crew.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
        want = _diff(base, edited, "destroyed")
        (e,) = [e for e in result.effects if e.variant.value == label]
        assert (e.variant.values, e.variant.placeholder_values) == (len(crew["skills"]), len(crew["skills"]))
        assert e.se > 0 and (e.mean, e.se) == (want["mean"], want["se"])
    assert "crew skills (value group; its pattern crew.default_skill matches no value this point uses)" \
        in result.skipped


def test_the_contact_model_is_a_rule_option_variant_equal_to_the_hand_edit(tmp_path):
    """contact_model (a rule option of the campaign) is run as a variant: engagement against the
    scenario's abstract model equals compare against the scenario with that rule."""
    base = _campaign(tmp_path / "a")
    result = sensitivity.run(scenario_mod.load(base), only=("rules.contact_model",))
    (e,) = result.effects
    assert (e.variant.kind, e.variant.base, e.variant.value) == ("rule option", "abstract", "engagement")
    edited = _scenario(tmp_path / "b", base, rules={"contact_model": "engagement"})
    want = _diff(base, edited, "vp")
    assert e.se > 0 and (e.mean, e.se) == (want["mean"], want["se"])


def test_a_contenders_cost_rests_only_on_the_values_it_adds_up():
    """Issue 30: 'cost of example_intel (29) uses 17 PLACEHOLDER value(s)': the campaign's cost listed
    every crew level of each boat's card (and the SO plan's price), though it adds up one level per boat.
    Now it lists the four levels the fleet is bought at (examples of the source, §2: no placeholder) and,
    for a boat with a mission, that mission's price; the note counts placeholders and examples apart."""
    sc, spec, cs, mode = matchup.load(UBOAT / "matchup_loadouts.yaml")
    costs = dict(zip([c.name for c in cs], matchup.contender_costs(sc, spec, cs, mode)))
    levels = ["uboats[2].levels.trained.cost", "uboats[3].levels.trained.cost", "uboats[4].levels.trained.cost",
              "uboats[5].levels.ace.cost"]
    intel = costs["example_intel"]
    assert sorted(ph["path"] for ph in intel.placeholders) == levels
    assert intel.value == sum(ph["value"] for ph in intel.placeholders)
    assert matchup.cost_note("example_intel", intel) == "cost of example_intel (29) uses 4 example value(s), no placeholder"
    mines = costs["u47_mines"]
    assert sorted(ph["path"] for ph in mines.placeholders) == sorted(levels + ["campaign.so_options.mine_laying.cost"])
    assert matchup.cost_note("u47_mines", mines) == ("cost of u47_mines (30) uses 1 PLACEHOLDER value(s) and "
                                                     "4 example value(s)")


def test_data_check_validates_a_players_groups_file_beside_a_scenario(tmp_path):
    """``data check`` reads a player's groups file as ``sensitivity`` would: a good one is listed
    (JSON ``value_groups``: the file and the group names for the scenario's question), a malformed one
    is an error (exit 2) naming the file and the field, before any sensitivity run would have met it."""
    folder = tmp_path / "player"
    _campaign(folder)
    _groups_file(folder, [{"name": "deck counts", "paths": ["events.cards[*].count"]},
                          {"name": "wolfpack only", "paths": ["x"], "questions": ["wolfpack"]}])
    res = CliRunner().invoke(app, ["data", "check", str(folder), "--json"])
    assert res.exit_code in (0, 1), res.output
    scen = json.loads(res.output)["scenarios"]
    assert [s["value_groups"] for s in scen] == [{"file": GROUPS_FILE, "groups": ["deck counts"]}]
    text = CliRunner().invoke(app, ["data", "check", str(folder)]).output
    assert f"reads the value groups of {GROUPS_FILE} (checked): deck counts" in " ".join(text.split())

    _groups_file(folder, [{"name": "deck counts", "paths": ["events.cards[*].count"], "scale": 0.5}])
    res = CliRunner().invoke(app, ["data", "check", str(folder)])
    assert res.exit_code == 2
    assert f"{GROUPS_FILE}: groups[0].scale: got 0.5; allowed: a number above 1" in " ".join(res.output.split())

    (folder / GROUPS_FILE).unlink()
    res = CliRunner().invoke(app, ["data", "check", str(folder), "--json"])
    assert [s["value_groups"] for s in json.loads(res.output)["scenarios"]] == [None]
