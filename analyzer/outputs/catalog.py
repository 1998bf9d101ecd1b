"""What ``analyzer list`` shows: games, questions, parameters, rule options."""
from __future__ import annotations

from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from analyzer.core import questions
from analyzer.core.params import submodel


_SIMPLE = {int: "int", float: "number", str: "text", bool: "true | false", dict: "mapping", list: "list",
           type(None): "null"}
_PLURAL = {"int": "ints", "number": "numbers", "text": "texts", "mapping": "mappings", "list": "lists"}


def _type_name(annotation: Any) -> str:
    """A type as a user writes it in YAML: 'int', 'list of ints', 'one of a | b | c',
    'int or null', 'mapping (keys: ...)' -- never Python typing names."""
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is Annotated:
        return _type_name(args[0])
    if origin is Literal:
        return "one of " + " | ".join(str(a) for a in args)
    if origin in (Union, UnionType):
        text = " or ".join(_type_name(a) for a in args if a is not type(None))
        return text + (" or null" if type(None) in args else "")
    if origin in (list, tuple, set, frozenset):
        if not args:
            return "list"
        inner = _type_name(args[0])
        if inner.startswith("mapping ("):
            return "list of mappings " + inner[len("mapping "):]
        return f"list of {_PLURAL.get(inner, '(' + inner + ')')}"
    if origin is dict:
        return "mapping"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"mapping (keys: {', '.join(annotation.model_fields)})"
    if annotation in _SIMPLE:
        return _SIMPLE[annotation]
    return getattr(annotation, "__name__", str(annotation).replace("typing.", ""))


def _params(model: type[BaseModel], prefix: str = "") -> list[dict[str, Any]]:
    out = []
    for name, info in model.model_fields.items():
        path = f"{prefix}.{name}" if prefix else name
        sub = submodel(info.annotation)
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        default = "(required)" if info.is_required() else info.get_default(call_default_factory=True)
        if isinstance(default, BaseModel):
            default = default.model_dump(mode="json")
        elif isinstance(default, list):
            default = [d.model_dump(mode="json") if isinstance(d, BaseModel) else d for d in default]
        if sub is not None and isinstance(default, dict):
            out.extend(_params(sub, path))
            continue
        ann = _type_name(info.annotation)
        out.append({"path": path, "type": ann, "default": default,
                    "description": info.description or "",
                    "placeholder": extra.get("placeholder")})
    return out


def default_metrics(q: questions.Question) -> list[str]:
    """Metric names for the default parameters (empty when the defaults do not validate)."""
    try:
        params = q.Params()
        game_dir = questions.SCENARIO_ROOT / q.game
        ctx = questions.Context(rules={o.name: o.default for o in q.rule_options},
                                scenario_dir=game_dir, game_dir=game_dir)
        return [m.name for m in q.prepare(params, ctx).metrics]
    except Exception:  # noqa: BLE001 - listing must not fail on a question needing params
        return []


def catalog(game: str | None = None) -> dict[str, list[dict]]:
    doc = {}
    for g in questions.games_with_questions():
        if game is not None and g != game:
            continue
        doc[g] = [{
            "question": q.name, "summary": q.summary, "exact": q.supports_exact,
            "primary_metric": q.primary_metric, "params": _params(q.Params),
            "metrics": default_metrics(q),
            "rule_options": [{"name": o.name, "values": list(o.values), "default": o.default,
                              "doc": o.doc, "source": o.source, "what_if": list(o.what_if)}
                             for o in q.rule_options],
        } for q in questions.questions_of(g)]
    return doc
