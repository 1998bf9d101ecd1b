"""The shipped example of a player's own data folder (scenarios/uboat_leader/player_copy/, made
by ``analyzer init``): its files override the shipped ones, a value entered plainly stops being
a placeholder, and ``strict: true`` refuses the copy until every placeholder is replaced."""
import shutil
from pathlib import Path

import pytest
import yaml

from analyzer.core import scenario as scenario_mod
from analyzer.core.errors import ScenarioError
from analyzer.run.runner import prepare_point

COPY = Path(__file__).resolve().parents[2] / "scenarios" / "uboat_leader" / "player_copy"


def _prepare(path):
    sc = scenario_mod.load(path)
    return prepare_point(sc, sc.points[0])


def test_every_file_read_comes_from_the_copy():
    prepared = _prepare(COPY / "my_campaign.yaml")
    origins = {d["path"]: d["origin"] for d in prepared.data_files}
    assert origins and set(origins.values()) == {"scenario"}, origins
    assert "campaigns/comienza_la_batalla.yaml" in origins and "data/uboats.yaml" in origins
    assert all(str(COPY) in ph.source for ph in prepared.placeholders if ph.source not in ("default", "rule module"))


def test_a_value_entered_plainly_is_no_longer_a_placeholder_and_strict_refuses_the_rest(tmp_path):
    mine = tmp_path / "mine"
    shutil.copytree(COPY, mine)
    sheet = mine / "campaigns" / "comienza_la_batalla.yaml"
    doc = yaml.safe_load(sheet.read_text())
    assert isinstance(doc["campaign"]["durations"]["short"]["patrols"], dict)       # still {ph: ..}
    doc["campaign"]["durations"]["short"]["patrols"] = 2                           # "from my copy"
    sheet.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    before = {ph.path for ph in _prepare(COPY / "my_campaign.yaml").placeholders}
    after = {ph.path for ph in _prepare(mine / "my_campaign.yaml").placeholders}
    assert "campaign.durations.short.patrols" in before and "campaign.durations.short.patrols" not in after
    scenario = yaml.safe_load((mine / "my_campaign.yaml").read_text())
    scenario["strict"] = True
    (mine / "my_campaign.yaml").write_text(yaml.safe_dump(scenario, sort_keys=False))
    with pytest.raises(ScenarioError, match="strict: true refuses placeholder values"):
        _prepare(mine / "my_campaign.yaml")
