"""Issue 30, sensitivity over structured values: a whole deck or table moved as ONE variant (the
question's value groups), policy choices as variants, variants the scenario's validation refuses
listed with the reason instead of run, and placeholder counts of only what the point uses.

The acceptance checks edit the data by hand in a copy (explicitly, in this file, not through the
sensitivity code) and compare: on the same seed, common random numbers make the sensitivity
effect equal ``analyzer compare``'s B - A on the hand-edited copy; where the question has an
exact mode, the effect lies within 5 SE of the exact difference."""
import json
import math
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from analyzer import api
from analyzer.analyses import sensitivity
from analyzer.cli.app import app
from analyzer.core import scenario as scenario_mod
from analyzer.core.gamedata import load_data
from analyzer.run.runner import prepare_point

ROOT = Path(__file__).resolve().parents[1]
UBOAT = ROOT / "scenarios" / "uboat_leader"
TRIALS = 1280          # 64 paired batches of 20 trials: the smallest honest paired CI, and fast


def _scenario(folder: Path, source: Path, **changes) -> Path:
    """``source`` without its sweep, written in ``folder`` (data files beside it override the shipped)."""
    doc = yaml.safe_load(source.read_text())
    doc.pop("sweep", None)
    doc["trials"] = TRIALS
    for key, value in changes.items():
        doc[key] = value
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / source.name
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    return path


def _campaign(folder: Path, **params) -> Path:
    """The example fleet's campaign, one point, on the abstract contact model (fast)."""
    doc = yaml.safe_load((UBOAT / "campaign_example_fleet.yaml").read_text())
    doc["params"]["policy"].update(params)
    return _scenario(folder, UBOAT / "campaign_example_fleet.yaml", rules={"contact_model": "abstract"},
                     params=doc["params"])


def _diff(a: Path, b: Path, metric: str) -> dict:
    comparison = api.compare(scenario_mod.load(a), scenario_mod.load(b))
    return comparison.points[0]["metrics"][metric]["diff_b_minus_a"]


def _deck_by_hand(folder: Path, step: int) -> tuple[int, int]:
    """data/campaign/events.yaml beside a scenario in ``folder`` with every card count and every effect
    size moved by ``step``; (numbers changed, of them placeholders)."""
    doc = yaml.safe_load((UBOAT / "data" / "campaign" / "events.yaml").read_text())
    numbers = placeholders = 0
    for card in doc["events"]["cards"]:
        card["count"]["ph"] += step
        numbers, placeholders = numbers + 1, placeholders + 1
        for half in ("early", "late"):
            n = card[half].get("n")
            if n is not None:
                label = "ph" if "ph" in n else "ex"
                n[label] += step
                numbers, placeholders = numbers + 1, placeholders + (label == "ph")
    target = folder / "data" / "campaign" / "events.yaml"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    return numbers, placeholders


def _effect(result, what: str, value):
    (e,) = [e for e in result.effects if e.variant.what == what and e.variant.value == value]
    return e


def test_the_whole_event_deck_is_one_variant_equal_to_editing_the_deck_by_hand(tmp_path):
    """Used to: the deck's 13 numbers were 26 separate rows (and nothing said "what if the whole deck
    were different"). Now the campaign's event deck is one value group: one row per direction, every
    used number of the deck moved together, and its effect is exactly compare's B - A against a copy
    of the data whose deck was edited by hand (same seed, same streams)."""
    base = _campaign(tmp_path / "a")
    result = sensitivity.run(scenario_mod.load(base), only=("event deck",))
    assert {(e.variant.kind, e.variant.value) for e in result.effects} == {
        ("value group", "each one step down"), ("value group", "each one step up")}
    for step, label in ((-1, "each one step down"), (1, "each one step up")):
        edited = _campaign(tmp_path / f"b{step}")
        numbers, placeholders = _deck_by_hand(edited.parent, step)
        e = _effect(result, "event deck", label)
        assert (e.variant.values, e.variant.placeholder_values) == (numbers, placeholders)
        want = _diff(base, edited, "vp")
        assert e.se > 0 and abs(e.mean - want["mean"]) <= 5 * e.se
        assert e.mean == pytest.approx(want["mean"], rel=1e-9, abs=1e-12)     # common random numbers: identical
        assert e.se == pytest.approx(want["se"], rel=1e-6)


def test_a_table_group_against_the_exact_answer_of_the_hand_edited_sheet(tmp_path):
    """The Wolfpack notes of a campaign sheet as one group (wolfpack question, exact mode): one step up
    (join roll 6 -> 7, Stress face 1 -> 2) is within 5 SE of the exact difference of the sheet edited
    by hand; one step down moves the Stress face to 0, which validation refuses: listed with the
    reason, not run, not a row, not charted."""
    base = _scenario(tmp_path / "a", UBOAT / "wolfpack_size.yaml")
    sc = scenario_mod.load(base)
    result = sensitivity.run(sc, trials=20_000, only=("wolfpack notes",))
    (e,) = result.effects
    assert e.variant.value == "each one step up"
    sheet = yaml.safe_load((UBOAT / "campaigns" / "los_tiempos_felices.yaml").read_text())
    sheet["campaign"]["wolfpack"]["join_min"]["ph"] += 1
    sheet["campaign"]["wolfpack"]["stress_results"]["ph"] = [f + 1 for f in sheet["campaign"]["wolfpack"]
                                                            ["stress_results"]["ph"]]
    edited = _scenario(tmp_path / "b", UBOAT / "wolfpack_size.yaml")
    (edited.parent / "campaigns").mkdir()
    (edited.parent / "campaigns" / "los_tiempos_felices.yaml").write_text(yaml.safe_dump(sheet, sort_keys=False))
    exact = {}
    for side, path in (("a", base), ("b", edited)):
        s = scenario_mod.load(path)
        exact[side] = float(prepare_point(s, s.points[0]).exact()["pack_size"].mean)
    assert exact["b"] != exact["a"]
    assert e.se > 0 and abs(e.mean - (exact["b"] - exact["a"])) <= 5 * e.se
    (down,) = [s for s in result.skipped if s.startswith("wolfpack notes = each one step down")]
    assert "refused, not run" in down and "stress_results" in down
    doc = sensitivity.document(result)
    assert [v["value"] for v in doc["variants"]] == ["each one step up"]


def test_a_group_counts_and_changes_only_the_values_the_point_uses(tmp_path):
    """The wolfpack-notes group matches data/wolfpack.yaml's notes and the sheet's; the point reads the
    sheet's (they override the data's), so the group changes those 2 values only, and each row's
    placeholder count is the variant point's own (what its run lists), not every wrapper of the files."""
    base = _scenario(tmp_path / "a", UBOAT / "wolfpack_size.yaml")
    sc = scenario_mod.load(base)
    (up,) = [v for v in sensitivity.variants(sc, only=("wolfpack notes",))[0] if v.value == "each one step up"]
    paths = [path for path, *_ in up.edits]
    assert paths == ["campaign.wolfpack.join_min", "campaign.wolfpack.stress_results"] and up.values == 2
    in_files = [ph.path for f in (UBOAT / "data" / "wolfpack.yaml", UBOAT / "campaigns" / "los_tiempos_felices.yaml")
                for ph in load_data(f)[1] if ph.path.split(".")[-1] in ("join_min", "stress_results")]
    assert len(in_files) > len(paths)          # the data's own notes match the patterns but are not used
    result = sensitivity.run(sc, only=("wolfpack notes", "campaign.wolfpack.join_min"))
    base_point = prepare_point(sc, sc.points[0])
    assert result.base_placeholders == sum(not ph.is_example for ph in base_point.placeholders)
    for e in result.effects:
        assert e.placeholders == result.base_placeholders     # the same values are used, only moved
    doc = sensitivity.document(result)
    assert doc["placeholders_varied"] == 2                    # join_min (alone and in the group) and the face


def test_policy_choices_are_variants_equal_to_editing_the_policy_by_hand(tmp_path):
    """Used to: policies were never varied. Now each policy choice of the point (a parameter under a
    field named policy) is switched to every other allowed value; a choice that leaves the compiled
    point unchanged is listed, not run; a row equals compare against the scenario with that policy."""
    base = _campaign(tmp_path / "a")
    sc = scenario_mod.load(base)
    choices = set(sensitivity.policy_choices(sc.points[0].params))
    assert {("policy.patrol", "best", "spread"), ("policy.patrol", "best", "nearest"),
            ("policy.so", "intel", "none")} <= choices
    assert not any(path.startswith("fleet") for path, _, _ in choices)      # unset per-boat policies: not varied
    result = sensitivity.run(sc, kinds=("policy",), only=("params.policy.patrol", "params.policy.route"))
    assert {(e.variant.what, e.variant.value) for e in result.effects} == {
        ("params.policy.patrol", "spread"), ("params.policy.patrol", "nearest")}
    assert any(s.startswith("params.policy.route = 'fewest_areas' (cannot change this point") for s in result.skipped)
    want = _diff(base, _campaign(tmp_path / "b", patrol="spread"), "vp")
    e = _effect(result, "params.policy.patrol", "spread")
    assert e.variant.kind == "policy" and e.se > 0
    assert e.mean == pytest.approx(want["mean"], rel=1e-9, abs=1e-12)


def test_a_variant_that_breaks_a_data_invariant_is_listed_not_run(tmp_path):
    """Used to: patrols 1 -> 0 ran a campaign of no patrols, and patrols 1 -> 2 could not run (it reports
    per-patrol metrics the scenario has not). Now 0 patrols is refused by the campaign's validation
    (listed with the reason, not run, not charted) and 2 patrols runs, paired on the metric."""
    sc = scenario_mod.load(_campaign(tmp_path / "a"))
    result = sensitivity.run(sc, trials=640, only=("campaign.durations.short.patrols",))
    (e,) = result.effects
    assert e.variant.value == 2 and not e.error and e.se > 0 and math.isfinite(e.mean)
    (refused,) = [s for s in result.skipped if s.startswith("campaign.durations.short.patrols = 0 ")]
    assert "refused, not run" in refused and "patrols: got 0" in refused
    doc = sensitivity.document(result)
    assert [v["value"] for v in doc["variants"]] == ["2"]
    with pytest.raises(Exception, match="patrols: got 0"):
        doc_sc = yaml.safe_load((UBOAT / "campaigns" / "comienza_la_batalla.yaml").read_text())
        doc_sc["campaign"]["durations"]["short"]["patrols"]["ph"] = 0
        folder = tmp_path / "zero"
        path = _campaign(folder)
        (folder / "campaigns").mkdir()
        (folder / "campaigns" / "comienza_la_batalla.yaml").write_text(yaml.safe_dump(doc_sc, sort_keys=False))
        z = scenario_mod.load(path)
        prepare_point(z, z.points[0])


def test_the_folder_report_and_answers_carry_groups_and_policies(tmp_path):
    """sensitivity.json, answers.parquet, the tornado and report.html with the new kinds (the CLI's
    --kind and --only)."""
    scen = _campaign(tmp_path / "a")
    r = CliRunner().invoke(app, ["sensitivity", str(scen), "--kind", "value group", "--kind", "policy",
                                 "--only", "event deck", "--only", "VP thresholds",
                                 "--only", "params.policy.patrol", "--out", str(tmp_path / "out"), "--json"])
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    folder = Path(doc["folder"])
    kinds = {(v["what"], v["kind"]) for v in doc["variants"]}
    assert kinds == {("event deck", "value group"), ("VP thresholds", "value group"),
                     ("params.policy.patrol", "policy")}
    assert {v["value"] for v in doc["variants"] if v["what"] == "VP thresholds"} == {"each x0.8", "each x1.25"}
    answers = pd.read_parquet(folder / "answers.parquet")
    assert set(answers["input_kind"].dropna()) == {"value group", "policy"}
    assert (folder / "tornado.png").read_bytes()[:4] == b"\x89PNG"
    text = (folder / "report.html").read_text()
    assert "<h2>Value groups</h2>" in text and "event deck" in text and "params.policy.patrol" in text
    assert f"<b>{doc['placeholders_varied']} placeholder value(s)</b>" in text
    bad = CliRunner().invoke(app, ["sensitivity", str(scen), "--kind", "deck", "--out", str(tmp_path / "out")])
    assert bad.exit_code != 0 and "allowed" in bad.output + (bad.stderr or "")
