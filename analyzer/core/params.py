"""Dotted parameter paths of a scenario file's ``params`` and the checks at the edge that
every file section shares (``params``, ``sweep``, ``contenders``, ``solve``): naming a path,
setting one, turning a pydantic error into ``file: field: got ...; allowed ...``, refusing
YAML booleans read as numbers."""
from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel

from analyzer.core.errors import ScenarioError, show, suggest


def loc_path(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def get_path(d: Any, path: list[str]) -> Any:
    for p in path:
        if isinstance(d, dict) and p in d:
            d = d[p]
        else:
            return None
    return d


def allowed_from_error(err: dict) -> str:
    ctx = err.get("ctx") or {}
    if "expected" in ctx:
        return f"allowed: {ctx['expected']}"
    for key, word in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
        if key in ctx:
            return f"must be {word} {ctx[key]}"
    return err.get("msg", "invalid value")


def fields_of(model: type[BaseModel]) -> dict[str, Any]:
    return dict(model.model_fields)


def submodel(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        sub = submodel(arg)
        if sub is not None:
            return sub
    return None


def check_param_path(file: str, model: type[BaseModel], dotted: str, where: str) -> None:
    """Raise unless ``dotted`` names a field of ``model`` (descending into sub-models)."""
    current: type[BaseModel] | None = model
    parts = dotted.split(".")
    for i, part in enumerate(parts):
        fields = fields_of(current) if current else {}
        if current is None or current.model_config.get("extra") == "allow":
            return  # free-form mapping below this point; the model validates it
        if part not in fields:
            prefix = ".".join(parts[:i])
            choices = [f"{prefix}.{f}" if prefix else f for f in fields]
            raise ScenarioError(file, where, f"{dotted!r} is not a parameter of this question"
                                f"{suggest('.'.join(parts[: i + 1]), choices)}; "
                                f"parameters here: {', '.join(sorted(choices))}")
        current = submodel(fields[part].annotation)


def set_path(d: dict, dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    for p in parts[:-1]:
        if not isinstance(d.get(p), dict):
            d[p] = {}
        d = d[p]
    d[parts[-1]] = value


def plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return getattr(value, "value", value)


def refuse_coercion(file: str, raw: Any, validated: Any, path: str, where: str = "") -> None:
    """Raise where validation turned a YAML boolean into a number or a number (or string)
    into a boolean: pydantic's lax mode reads ``trials: yes`` as 1 trial. ``raw`` is the
    data as written, ``validated`` the model built from it, walked together."""
    if isinstance(raw, bool) and not isinstance(validated, bool) and isinstance(validated, (int, float)):
        raise ScenarioError(file, path + where, f"got {show(raw)} (a YAML boolean); allowed: a number")
    if isinstance(validated, bool) and not isinstance(raw, bool):
        raise ScenarioError(file, path + where, f"got {show(raw)}; allowed: true or false")
    if isinstance(raw, dict):
        for key, value in raw.items():
            if isinstance(validated, BaseModel):
                if key not in type(validated).model_fields:
                    continue
                sub = getattr(validated, key)
            elif isinstance(validated, dict) and key in validated:
                sub = validated[key]
            else:
                continue
            refuse_coercion(file, value, sub, f"{path}.{key}" if path else str(key), where)
    elif isinstance(raw, list) and isinstance(validated, (list, tuple)) and len(raw) == len(validated):
        for i, (r, v) in enumerate(zip(raw, validated)):
            refuse_coercion(file, r, v, f"{path}[{i}]", where)


def allowed_choices(annotation) -> tuple:
    """The allowed values of a choice field: its Literal values (through Optional / Union, each
    once, in order), or False / True for a bool; () for any other field."""
    if annotation is bool:
        return (False, True)
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        out = ()
        for arg in typing.get_args(annotation):
            out += tuple(c for c in allowed_choices(arg) if c not in out)
        return out
    return ()
