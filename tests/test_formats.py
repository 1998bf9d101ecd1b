"""Format versions (issue 26, docs/formats.md): scenario files say ``version`` (absent: the current
one), every JSON document the analyzer writes says ``format_version``, and every reader takes a
file without it (written before versions existed) or with a version it reads, and refuses any
other in one line naming the versions it reads. ``analyzer schema`` describes scenario files:
every shipped one validates, wrong ones do not."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from analyzer import api
from analyzer.cli.app import COMMANDS, build
from analyzer.cli.common import check_points
from analyzer.cli.schema import schema as schema_command
from analyzer.core import formats
from analyzer.core import scenario as scenario_mod
from analyzer.core.errors import RunFolderError, ScenarioError
from analyzer.core.schema import scenario_json_schema
from analyzer.outputs import checkpoint, reader
from analyzer.outputs.report import write_report
from tests.test_resume_integrity import _arrays, _interrupted, _rewrite

ROOT = Path(__file__).resolve().parent.parent
QUICK = ROOT / "scenarios" / "dice" / "any_of_n.yaml"
#: every JSON document the analyzer writes, by file name
WRITTEN = {f.file: f for f in (formats.SUMMARY_JSON, formats.MANIFEST_JSON, formats.PLOTMETA_JSON,
                               formats.COMPARISON_JSON, formats.MATCHUP_JSON, formats.SOLVE_JSON,
                               formats.SENSITIVITY_JSON)}
cli = CliRunner()


def _app():
    return build({**COMMANDS, "schema": schema_command})


def _write(folder: Path, name: str, doc: dict) -> Path:
    path = folder / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _one_line(exc: BaseException, *words: str) -> None:
    text = str(exc)
    assert "\n" not in text, text
    for w in words:
        assert w in text, (w, text)


# ----------------------------------------------------------------------------- the check
def test_version_problem_takes_absent_and_read_versions_and_names_them_otherwise():
    fmt = formats.FileFormat("x.json", "format_version", 2, (1, 2))
    assert formats.version_problem({}, fmt) is None
    assert formats.version_problem({"format_version": 1}, fmt) is None
    assert formats.version_problem({"format_version": 2}, fmt) is None
    newer = formats.version_problem({"format_version": 3}, fmt)
    assert "got 3" in newer and "reads format_version 1 or 2" in newer and "newer analyzer" in newer
    for value in (True, 2.0, "2", None, [2], 0):
        problem = formats.version_problem({"format_version": value}, fmt)
        assert problem and "reads format_version 1 or 2" in problem and "newer" not in problem, value
    required = formats.FileFormat("y", "checkpoint_format", 2, (2,), absent=None)
    assert "is missing" in formats.version_problem({}, required)
    assert formats.stamped(fmt, {"a": 1, "format_version": 1}) == {"format_version": 1, "a": 1}
    assert list(formats.stamped(fmt, {"a": 1})) == ["format_version", "a"]


# ----------------------------------------------------------------------------- scenario files
def test_scenario_version_absent_or_current_loads_and_any_other_is_refused_first(tmp_path):
    doc = yaml.safe_load(QUICK.read_text())
    assert "version" not in doc
    assert scenario_mod.load(_write(tmp_path, "absent.yaml", doc)).spec.version is None
    assert scenario_mod.load(_write(tmp_path, "one.yaml", {"version": 1, **doc})).spec.version == 1
    for value in (2, 0, "1", True, None, 1.5):
        path = _write(tmp_path, "bad.yaml", {"version": value, **doc, "a_key_of_a_newer_format": 1})
        with pytest.raises(ScenarioError) as info:
            scenario_mod.load(path)
        _one_line(info.value, str(path), "version: got", "this analyzer reads version 1")
        assert "a_key_of_a_newer_format" not in str(info.value)


# ----------------------------------------------------------------------------- written documents
@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """A run folder (``analyzer run`` on the quickest shipped scenario) and a comparison folder."""
    base = tmp_path_factory.mktemp("formats")
    doc = yaml.safe_load(QUICK.read_text())
    b = _write(base, "b.yaml", {**doc, "params": {**doc["params"], "target": 4}})
    res = cli.invoke(_app(), ["run", str(QUICK), "--trials", "1000", "--out", str(base / "runs"), "--no-progress"])
    assert res.exit_code == 0, res.output
    res = cli.invoke(_app(), ["compare", str(QUICK), str(b), "--trials", "640", "--out", str(base / "cmp")])
    assert res.exit_code == 0, res.output
    (run,) = [p.parent for p in (base / "runs").rglob("summary.json")]
    (cmp,) = [p.parent for p in (base / "cmp").rglob("comparison.json")]
    return {"base": base, "run": run, "cmp": cmp}


def test_every_json_a_run_and_a_comparison_write_says_its_format_version(folders):
    names = set()
    for folder in (folders["run"], folders["cmp"]):
        for path in folder.glob("*.json"):
            doc = json.loads(path.read_text())
            assert list(doc)[0] == formats.FORMAT_KEY, path
            assert doc[formats.FORMAT_KEY] == WRITTEN[path.name].current, path
            names.add(path.name)
    assert names == {"summary.json", "manifest.json", "plotmeta.json", "comparison.json"}


def _edited(folders, tmp_path, which: str, name: str, value) -> Path:
    """A copy of the ``which`` folder whose ``name`` has ``format_version`` set to ``value``
    (removed when ``value`` is None)."""
    folder = Path(shutil.copytree(folders[which], tmp_path / which))
    doc = json.loads((folder / name).read_text())
    doc.pop(formats.FORMAT_KEY)
    if value is not None:
        doc[formats.FORMAT_KEY] = value
    (folder / name).write_text(json.dumps(doc))
    return folder


@pytest.mark.parametrize("which,name,load", [
    ("run", "summary.json", reader.load_summary),
    ("run", "manifest.json", reader.load_manifest),
    ("run", "plotmeta.json", reader.load_plotmeta),
    ("run", "plotmeta.json", reader.load_plot_inputs),
    ("cmp", "comparison.json", reader.load_comparison),
])
@pytest.mark.parametrize("value,readable", [(None, True), (1, True), (2, False), ("1", False), (True, False)])
def test_readers_take_absent_or_version_1_and_refuse_others_in_one_line(folders, tmp_path, which, name, load, value,
                                                                         readable):
    folder = _edited(folders, tmp_path, which, name, value)
    if readable:
        load(folder)
        write_report(folder)                 # analyzer report reads the folder as before
        return
    with pytest.raises(RunFolderError) as info:
        load(folder)
    _one_line(info.value, f"{name}: format_version: got {value!r}", "this analyzer reads format_version 1")
    assert ("newer analyzer" in str(info.value)) == (value == 2)


def test_report_and_plot_commands_refuse_a_newer_folder_in_one_line(folders, tmp_path):
    folder = _edited(folders, tmp_path, "run", "plotmeta.json", 7)
    for command in ("report", "plot"):
        res = cli.invoke(_app(), [command, str(folder)])
        lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
        assert res.exit_code == 2 and len(lines) == 1, (command, res.stderr)
        assert "plotmeta.json: format_version: got 7" in res.stderr and "reads format_version 1" in res.stderr


def test_matchup_and_solve_documents_say_their_format_version(tmp_path):
    doc = {"game": "dice", "question": "count", "seed": 2, "trials": 640,
           "params": {"dice": 2, "sides": 6, "target": 5, "need": 1},
           "contenders": [{"name": "two", "params": {"dice": 2}}, {"name": "three", "params": {"dice": 3}}],
           "solve": {"param": "dice", "metric": "p_success", "target": 0.9, "range": [1, 12]}}
    path = _write(tmp_path, "m.yaml", doc)
    for command, extra, name in (("matchup", ["--bootstrap", "20"], "matchup.json"), ("solve", [], "solve.json")):
        res = cli.invoke(_app(), [command, str(path), "--json", "--out", str(tmp_path / command), *extra])
        assert res.exit_code == 0, res.output
        folder = Path(json.loads(res.stdout)["run_dir"])
        for file in (name, "manifest.json"):
            assert json.loads((folder / file).read_text())[formats.FORMAT_KEY] == WRITTEN[file].current


def test_sensitivity_json_says_its_format_version(tmp_path):
    from analyzer.analyses import sensitivity
    doc = yaml.safe_load((ROOT / "scenarios" / "hacse_naval" / "fire_by_base_number.yaml").read_text())
    doc.pop("sweep")
    sc = scenario_mod.load(_write(tmp_path, "s.yaml", {**doc, "trials": 640}))
    result = sensitivity.run(sc, trials=640)
    folder = sensitivity.write(result, tmp_path / "out", sc.digest)
    assert json.loads((folder / "sensitivity.json").read_text())[formats.FORMAT_KEY] == formats.SENSITIVITY_JSON.current


# ----------------------------------------------------------------------------- resume
@pytest.fixture(scope="module")
def interrupted(tmp_path_factory):
    """An interrupted run folder of the quick scenario: point 0 saved done, then stopped."""
    base = tmp_path_factory.mktemp("formats_resume")
    doc = yaml.safe_load(QUICK.read_text())
    return _interrupted(scenario_mod.load(_write(base, "s.yaml", {**doc, "trials": 2000})), base / "out")


def _resumable(interrupted, tmp_path, **changes) -> Path:
    run = Path(shutil.copytree(interrupted, tmp_path / "run"))
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "incomplete"
    assert manifest[formats.FORMAT_KEY] == formats.MANIFEST_JSON.current
    assert manifest["checkpoint_format"] == formats.CHECKPOINT.current == checkpoint.CHECKPOINT_FORMAT == 2
    for key, value in changes.items():
        manifest.pop(key)
        if value is not None:
            manifest[key] = value
    (run / "manifest.json").write_text(json.dumps(manifest))
    return run


def test_a_folder_interrupted_before_versions_existed_resumes(interrupted, tmp_path):
    run = _resumable(interrupted, tmp_path, format_version=None)      # format 2 checkpoints, no format_version
    run_dir, _ = api.run_to_folder(checkpoint.load_scenario(run), None, threads=1, formats=(), resume=run)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest[formats.FORMAT_KEY] == 1


@pytest.mark.parametrize("key,value,words", [
    ("format_version", 2, ["manifest.json: format_version: got 2", "reads format_version 1", "newer analyzer"]),
    ("format_version", "1", ["format_version: got '1'", "reads format_version 1"]),
    ("checkpoint_format", 3, ["checkpoint_format: got 3", "reads checkpoint_format 2"]),
    ("checkpoint_format", 1, ["checkpoint_format: got 1", "reads checkpoint_format 2", "earlier version"]),
    ("checkpoint_format", None, ["checkpoint_format: is missing", "reads checkpoint_format 2"]),
])
def test_resume_refuses_other_versions_in_one_line(interrupted, tmp_path, key, value, words):
    run = _resumable(interrupted, tmp_path, **{key: value})
    with pytest.raises(checkpoint.ResumeError) as info:
        checkpoint.load_scenario(run)
    _one_line(info.value, *words)


def test_resume_refuses_a_point_file_of_another_checkpoint_format_in_one_line(interrupted, tmp_path):
    run = _resumable(interrupted, tmp_path)
    point = run / "checkpoint" / "point-000000.npz"
    meta = _arrays(point)["meta"]
    meta[0] = 3
    _rewrite(point, meta=meta)
    with pytest.raises(checkpoint.ResumeError) as info:
        api.run_to_folder(checkpoint.load_scenario(run), None, threads=1, formats=(), resume=run)
    _one_line(info.value, "point-000000.npz: checkpoint_format: got 3", "reads checkpoint_format 2")


# ----------------------------------------------------------------------------- the schema
@pytest.fixture(scope="module")
def validator():
    schema = scenario_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_every_shipped_scenario_validates(validator):
    files = scenario_mod.expand_targets([str(ROOT / "scenarios")])
    assert len(files) > 40
    for path in files:
        errors = [f"{e.json_path}: {e.message[:200]}" for e in validator.iter_errors(yaml.safe_load(path.read_text()))]
        assert not errors, (path, errors[:3])


BASE = {"game": "dice", "question": "count", "params": {"dice": 2, "sides": 6, "target": 5, "need": 1}}
FIRE = {"game": "hacse_naval", "question": "fire", "params": {"ship": "destroyer", "hex": 1, "base_number": 5}}


@pytest.mark.parametrize("doc", [
    {**BASE, "version": 1},
    {**BASE, "params": {**BASE["params"], "dice": {"ph": 3, "note": "a guess"}}},
    {**BASE, "params": {**BASE["params"], "target": {"ex": 5, "establishes": "at_most"}}},
    {**BASE, "sweep": {"dice": [1, {"ph": 2}, 3]}},
    {**FIRE, "rules": {"fire_extinguish": "roll_under"}, "sweep": {"rules.fire_row": ["same_row"]}},
    {**BASE, "plots": [{"kind": "line", "metric": "p_success", "x": "dice"}], "sweep": {"dice": [1, 2]}},
])
def test_the_schema_and_the_loader_accept(validator, tmp_path, doc):
    assert not list(validator.iter_errors(doc))
    check_points(scenario_mod.load(_write(tmp_path, "ok.yaml", doc)))


@pytest.mark.parametrize("doc", [
    {**BASE, "trails": 100},                                                   # unknown top-level key
    {**BASE, "version": 2},
    {**BASE, "game": "chess"},
    {**BASE, "question": "pool_party"},
    {**BASE, "trials": "many"},                                                # wrong type
    {**BASE, "params": {**BASE["params"], "dice": "two"}},                     # wrong type of a parameter
    {**BASE, "params": {**BASE["params"], "dise": 2}},                         # unknown parameter
    {**BASE, "params": {**BASE["params"], "dice": {"ph": "two"}}},             # placeholder of the wrong type
    {**BASE, "params": {**BASE["params"], "dice": {"ph": 2, "why": "x"}}},     # not a placeholder
    {**BASE, "params": {**BASE["params"], "dice": {"ex": 2, "establishes": "roughly"}}},
    {**BASE, "sweep": {"dise": [1, 2]}},                                       # unknown sweep path
    {**BASE, "sweep": {"dice": []}},
    {**BASE, "sweep": {"dice": [1, "two"]}},                                   # a swept value of the wrong type
    {**FIRE, "sweep": {"base_number": [2, {"ph": "five"}]}},
    {**FIRE, "rules": {"fire_extinguish": "roll_over"}},                       # bad rule value
    {**FIRE, "rules": {"fire_extinguishing": "overroll"}},                     # unknown rule option
    {**FIRE, "sweep": {"rules.fire_row": ["same_row", "random_row"]}},
    {**BASE, "plots": [{"kind": "pie", "metric": "p_success"}]},
    {**BASE, "matchup": {"bootstrap": -1}},
])
def test_the_schema_and_the_loader_refuse(validator, tmp_path, doc):
    assert list(validator.iter_errors(doc)), doc
    with pytest.raises(ScenarioError):       # (plots: checked when the points are prepared)
        check_points(scenario_mod.load(_write(tmp_path, "bad.yaml", doc)))


def test_schema_command_prints_or_writes_the_schema(tmp_path):
    expected = json.loads(json.dumps(scenario_json_schema()))
    res = cli.invoke(_app(), ["schema"])
    assert res.exit_code == 0 and json.loads(res.stdout) == expected
    res = cli.invoke(_app(), ["schema", "--out", str(tmp_path / "scenario.schema.json")])
    assert res.exit_code == 0 and json.loads((tmp_path / "scenario.schema.json").read_text()) == expected
    assert not [p for p in tmp_path.iterdir() if p.name != "scenario.schema.json"]     # no temporary left
    res = cli.invoke(_app(), ["schema", "--out", str(tmp_path / "missing" / "s.json")])
    assert res.exit_code == 2 and "cannot write the schema" in res.stderr
    res = cli.invoke(_app(), ["schema", "--help"])
    assert "yaml-language-server: $schema=" in res.stdout
