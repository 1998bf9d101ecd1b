"""The JSON Schema (draft 2020-12) of scenario files: what ``analyzer schema`` writes, for editors
(VS Code's YAML extension completes keys and flags errors as you type; docs/formats.md).

Built from the models the loader validates with, so it cannot drift from them: the top-level keys
of :class:`analyzer.core.scenario.ScenarioFile`, the ``contenders`` / ``matchup`` / ``solve``
sections of :mod:`analyzer.core.balance_spec`, and, for each registered question (an ``if``
``game`` and ``question`` are these ``then`` ...), its ``params`` model, its rule options (each an
enum of its readings) and the paths its ``sweep`` may name.

Where the schema is looser than the loader, the loader still decides: no parameter is marked
required (a sweep may supply one, at any depth), and the values a point computes with (metric
names, contender seats, plot axes) are checked when the scenario is loaded. Wherever the
loader strips a placeholder or example wrapper (:func:`analyzer.core.gamedata.unwrap`: in
``params`` and swept values), the schema allows ``{ph: X, note: ...}`` / ``{ex: X, note: ...,
establishes: ...}`` around any value ``X`` allowed there.
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from analyzer.core import questions as registry
from analyzer.core.balance_spec import ContenderSpec, MatchupSpec, SolveSpec
from analyzer.core.formats import SCENARIO_FILE
from analyzer.core.gamedata import ESTABLISHES
from analyzer.core.params import submodel
from analyzer.core.scenario import ScenarioFile

DRAFT = "https://json-schema.org/draft/2020-12/schema"
#: the wrapper of a placeholder or example value (its value is checked where it is used: :func:`_value`)
LABELLED = "labelled_value"
_LABELLED_SCHEMA = {
    "description": "a value the rule source does not give ({ph: VALUE, note: why}) or one derived from a "
                   "worked example ({ex: VALUE, note: ..., establishes: exact | at_most | at_least})",
    "oneOf": [{"type": "object", "required": ["ph"], "additionalProperties": False,
               "properties": {"ph": {}, "note": {"type": "string"}}},
              {"type": "object", "required": ["ex"], "additionalProperties": False,
               "properties": {"ex": {}, "note": {"type": "string"}, "establishes": {"enum": list(ESTABLISHES)}}}]}
_PLOT = {
    "type": "object", "required": ["kind", "metric"], "additionalProperties": False,
    "properties": {"kind": {"enum": ["heatmap", "line", "bars"]}, "metric": {"type": "string"},
                   "x": {"type": "string"}, "y": {"type": "string"}, "group": {"type": "string"}},
    "allOf": [{"if": {"properties": {"kind": {"const": "heatmap"}}}, "then": {"required": ["x", "y"]}},
              {"if": {"properties": {"kind": {"const": "line"}}}, "then": {"required": ["x"]}}]}


def scenario_json_schema() -> dict:
    """The JSON Schema of scenario files (every registered game and question)."""
    defs: dict[str, Any] = {LABELLED: _LABELLED_SCHEMA}
    top = ScenarioFile.model_json_schema()
    props = top["properties"]
    games = registry.games_with_questions()
    props["version"] = {"enum": list(SCENARIO_FILE.reads),
                        "description": f"version of the scenario file format (absent: {SCENARIO_FILE.absent})"}
    props["game"] = {"enum": games}
    props["sweep"]["additionalProperties"]["minItems"] = 1
    props["plots"]["items"] = _PLOT
    for key, model in (("contenders", ContenderSpec), ("matchup", MatchupSpec), ("solve", SolveSpec)):
        section = _model_schema(model, "balance.", defs)
        props[key] = {"type": "array", "items": section} if key == "contenders" else section
    branches = []
    for game in games:
        asked = registry.questions_of(game)
        branches.append({"if": _names(game), "then": {"properties": {"question": {"enum": [q.name for q in asked]}}}})
        branches.extend({"if": _names(game, q.name), "then": {"properties": _question_keys(q, defs)}} for q in asked)
    return {"$schema": DRAFT, "title": "analyzer scenario file", "description": top.get("description", ""),
            "type": "object", "required": top["required"], "additionalProperties": False,
            "properties": props, "allOf": branches, "$defs": defs}


def _names(game: str, question: str | None = None) -> dict:
    """The ``if`` of a branch: the file names this game (and question)."""
    keys = {"game": game} if question is None else {"game": game, "question": question}
    return {"required": list(keys), "properties": {k: {"const": v} for k, v in keys.items()}}


def _model_schema(model: type[BaseModel], prefix: str, defs: dict) -> dict:
    """``model``'s JSON Schema, its sub-models moved into ``defs`` under ``prefix``."""
    schema = model.model_json_schema(ref_template=f"#/$defs/{prefix}{{model}}")
    defs.update({prefix + name: sub for name, sub in schema.pop("$defs", {}).items()})
    return schema


def _question_keys(q: registry.Question, defs: dict) -> dict:
    """``params``, ``rules`` and ``sweep`` of a file asking ``q``: its parameters are the
    definition ``GAME.QUESTION`` (its sub-models ``GAME.QUESTION.MODEL``), to which each swept
    path refers for its values."""
    root = f"{q.game}.{q.name}"
    models: dict[str, Any] = {}
    models[root] = _model_schema(q.Params, root + ".", models)
    swept = {path: {"$ref": ref} for path, ref in _param_paths(q.Params, root, models)}
    swept.update({f"rules.{o.name}": {"enum": list(o.values)} for o in q.rule_options})
    defs.update({name: _open(model) for name, model in models.items()})
    rules = {o.name: {"enum": list(o.values), "description": o.doc} for o in q.rule_options}
    return {"params": {"$ref": f"#/$defs/{root}"},
            "rules": {"type": "object", "properties": rules, "additionalProperties": False},
            "sweep": {"type": "object", "additionalProperties": False,
                      "properties": {path: {"type": "array", "minItems": 1, "items": item}
                                     for path, item in swept.items()}}}


def _param_paths(model: type[BaseModel], owner: str, defs: dict, at: str = "",
                 seen: tuple = ()) -> list[tuple[str, str]]:
    """Every dotted parameter path a sweep may name (those
    :func:`analyzer.core.params.check_param_path` accepts) and the JSON pointer of the schema of
    its value (``model``'s schema is ``defs[owner]``, as pydantic writes it: before :func:`_open`)."""
    out = []
    for name, info in model.model_fields.items():
        path = f"{at}.{name}" if at else name
        out.append((path, f"#/$defs/{owner}/properties/{name}"))
        sub, ref = submodel(info.annotation), _ref(defs[owner]["properties"][name])
        if sub is not None and sub not in seen and ref is not None:
            out.extend(_param_paths(sub, ref.removeprefix("#/$defs/"), defs, path, (*seen, model)))
    return out


def _ref(field: dict) -> str | None:
    """The ``$ref`` of a field holding one sub-model (possibly optional), else None."""
    refs = [f["$ref"] for f in [field, *field.get("anyOf", [])] if "$ref" in f]
    return refs[0] if len(refs) == 1 else None


def _open(schema: Any) -> Any:
    """``schema`` with a labelled value allowed wherever a value is (:func:`_value`) and nothing
    required (the sweep may supply it)."""
    if not isinstance(schema, dict):
        return schema
    out = {k: v for k, v in schema.items() if k != "required"}
    if "properties" in out:
        out["properties"] = {k: _value(_open(v)) for k, v in out["properties"].items()}
    for key in ("items", "additionalProperties"):
        if isinstance(out.get(key), dict):
            out[key] = _value(_open(out[key]))
    if "prefixItems" in out:
        out["prefixItems"] = [_value(_open(v)) for v in out["prefixItems"]]
    for key in ("anyOf", "oneOf", "allOf"):
        if key in out:
            out[key] = [_open(v) for v in out[key]]
    return out


def _value(schema: dict) -> dict:
    """A value of ``schema``, or a labelled one whose ``ph`` / ``ex`` is a value of ``schema``."""
    return {"anyOf": [schema, {"allOf": [{"$ref": f"#/$defs/{LABELLED}"},
                                         {"patternProperties": {"^(ph|ex)$": schema}}]}]}
