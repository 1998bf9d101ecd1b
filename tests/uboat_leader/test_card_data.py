"""Issue 27: Event and Convoy cards entered as data are played as written or refused, never misread:
an Event effect the model does not play, a field an effect does not have, a Convoy contact type other
than lone / merchant / naval (l.133 'Solitario, Mercante, o Naval'), a special condition (l.133
'cualquier condición especial'; the model plays none yet) and a removed_convoys number the deck does
not hold are refused with the file, the card and the allowed values. Before, the first was refused
without naming the file, the rest were silently ignored (a condition, a removal) or misread (type
'Naval' played as a merchant convoy)."""
import shutil

import pytest
import yaml

from analyzer.core.gamedata import DataError
from tests.uboat_leader.helpers import SCEN, prepare

FLEET = [{"id": "U-47", "level": "trained"}]
ABSTRACT = {"contact_model": "abstract"}


@pytest.fixture
def folder(tmp_path):
    shutil.copytree(SCEN / "data", tmp_path / "data")
    shutil.copytree(SCEN / "campaigns", tmp_path / "campaigns")
    return tmp_path


def _edit(folder, rel, change):
    path = folder / rel
    doc = yaml.safe_load(path.read_text())
    change(doc)
    path.write_text(yaml.safe_dump(doc, allow_unicode=True))


def _campaign(folder):
    return prepare("campaign", {"fleet": FLEET}, ABSTRACT, scenario_dir=folder)


def test_the_copied_data_runs(folder):
    _campaign(folder)


def test_an_event_effect_the_model_does_not_play_is_refused_naming_file_and_card(folder):
    _edit(folder, "data/campaign/events.yaml", lambda d: d["events"]["cards"][1]["late"].update(type="damage"))
    with pytest.raises(DataError, match=r"data/campaign/events\.yaml: events\.cards\[Mar Agitado\]\.late\.type: "
                                        r"got 'damage'; allowed: none, stress, stress_roll, contact"):
        _campaign(folder)


def test_an_event_effect_with_a_field_it_does_not_have_is_refused(folder):
    _edit(folder, "data/campaign/events.yaml", lambda d: d["events"]["cards"][1]["early"].update(modifier=2))
    with pytest.raises(DataError, match=r"events\.cards\[Mar Agitado\]\.early: unknown field\(s\) modifier"):
        _campaign(folder)


def test_a_convoy_type_other_than_lone_merchant_naval_is_refused(folder):
    _edit(folder, "data/convoys.yaml", lambda d: d["convoys"][2].update(type="Naval"))
    with pytest.raises(DataError, match=r"data/convoys\.yaml: convoys\[2\] \(card 2\)\.type: got 'Naval'; "
                                        r"allowed: lone, merchant, naval"):
        _campaign(folder)
    with pytest.raises(DataError, match=r"card 2\)\.type"):
        prepare("engagement", {"convoy": 2}, None, scenario_dir=folder)


def test_a_convoy_condition_the_model_does_not_play_is_refused_not_ignored(folder):
    _edit(folder, "data/convoys.yaml", lambda d: d["convoys"][0].update(conditions=["night"]))
    with pytest.raises(DataError, match=r"convoys\[0\] \(card 37\)\.conditions: 'night' is not a condition the "
                                        r"model plays"):
        _campaign(folder)


def test_removing_a_convoy_card_the_deck_does_not_hold_is_refused(folder):
    _edit(folder, "campaigns/comienza_la_batalla.yaml", lambda d: d["campaign"].update(removed_convoys=[99]))
    with pytest.raises(DataError, match=r"removed_convoys names Convoy card\(s\) 99 that data/convoys\.yaml does "
                                        r"not hold"):
        _campaign(folder)
