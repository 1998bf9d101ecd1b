"""One-at-a-time sensitivity: which missing value or rule reading moves the answer most?

For one scenario point, every numeric value the point uses that the source does not fix (a
placeholder, an example-derived value, a placeholder parameter default) is moved one step
down and one step up, and every rule option of the question is switched to each of its
other readings. Each variant runs against the unchanged scenario on common random numbers
(:func:`analyzer.api.compare`), so the effect on the chosen metric comes with the paired
95% CI of B - A. The variants are built as files: a copy of the scenario and of every data
file it reads, in a temporary folder, with the one value changed (a data file beside a
scenario overrides the shipped one), so a variant is an ordinary scenario run.

Besides single values: value groups (a deck, a table, a sheet block: those a question declares,
:attr:`Question.value_groups`, and those its game's data names in ``data/sensitivity_groups.yaml``,
:mod:`analyzer.core.value_groups`) are each moved as ONE variant (every used number of the group
one step down together, then up), and every choice of the point's policies (a parameter under a
field named ``policy``: patrol best / spread / nearest...) is switched to each other allowed value.
A variant the scenario's validation refuses (a value out of its allowed range, a data
invariant such as a campaign of 0 patrols) is not run: it is listed under ``not_perturbed``
with the reason. A swap (``--swap GROUP_OR_DATAFILE=PATH``) replaces a whole data file, or the
part of one a value group names, by the user's version (their printed Event deck) as one more
variant; a swap that names nothing, a file that is missing or does not validate is refused.
"""
from __future__ import annotations

import copy
import math
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import yaml

from analyzer.core import scenario as scenario_mod
from analyzer.core.errors import ScenarioError
from analyzer.core.gamedata import DataError, is_under, is_wrapper, read_yaml, unwrap
from analyzer.core.params import allowed_choices
from analyzer.run.runner import prepare_point
from analyzer.core.stats import NO_DETECTABLE_EFFECT

#: relative step of a non-integer value (an integer moves by 1)
FLOAT_STEP = 0.10


@dataclass(frozen=True)
class Variant:
    """One changed value: ``what`` (data path, ``params.x`` or ``rules.x``), its kind, the
    value in the scenario and the value tried."""

    what: str
    kind: str            # placeholder | example | parameter default | rule option | what-if rule | source value
    #                      | value group | policy | swap
    base: Any
    value: Any
    file: str = ""       # the data file holding it (data values)
    keys: tuple = ()     # source values: the keys from the file's root
    #: a value group: every used value it changes, as (data path, file or "default", value tried,
    #: whether it is a placeholder)
    edits: tuple = ()
    #: how many used values of the game data / params the variant changes (a rule option or a policy: 0)
    values: int = 1
    #: of those, placeholders (what the rule source does not give; examples not counted)
    placeholder_values: int = 0
    #: a swap: (data file replaced, as the point reads it; the user's file; the replaced places as key
    #: paths from the file's root, None for the whole file; the data paths of the used placeholders it
    #: changes or writes plainly)
    swap: tuple = ()

    def changes(self) -> str:
        """A value group's changes, ``path: value tried; ...`` (empty for any other variant)."""
        return "; ".join(f"{path}: {value!r}" for path, _, value, _ in self.edits)


@dataclass
class Effect:
    variant: Variant
    metric: str
    mean: float = math.nan
    se: float = math.nan
    ci_low: float = math.nan
    ci_high: float = math.nan
    error: str = ""      # the variant could not run (kept for old callers: refused variants are now skipped)
    #: placeholder values the variant's point uses (as its run would list them: only what the question reads)
    placeholders: int = 0
    #: placeholder values the unchanged point uses that the variant's point no longer uses (a swap that
    #: writes them plainly, a rule reading that no longer reads them)
    placeholders_removed: int = 0

    def row(self) -> dict:
        v = self.variant
        shown = (lambda x: x) if v.kind in LABEL_KINDS else repr
        return {"what": v.what, "kind": v.kind, "base": shown(v.base), "value": shown(v.value), "file": v.file,
                "metric": self.metric, "effect": self.mean, "se": self.se, "ci_low": self.ci_low,
                "ci_high": self.ci_high, "error": self.error, "values": v.values,
                "placeholder_values": v.placeholder_values, "placeholders": self.placeholders,
                "placeholders_removed": self.placeholders_removed, "changes": v.changes()}


@dataclass
class Sensitivity:
    scenario: str
    metric: str
    base_mean: float
    trials: int
    effects: list[Effect] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)   # not varied, or refused: each with its reason
    game: str = ""
    base_placeholders: int = 0   # placeholder values the unchanged point uses
    question: str = ""
    seed: int | None = None
    created_utc: str = ""      # when the variants finished (UTC, ISO seconds)
    #: where the value groups came from (the data's groups file) and which of the question's it replaced
    notes: list[str] = field(default_factory=list)

    def ranked(self) -> list[Effect]:
        """Valid effects by decreasing |effect|, then the ones that could not run."""
        ok = sorted((e for e in self.effects if not e.error), key=lambda e: (-abs(e.mean), e.variant.what))
        return ok + [e for e in self.effects if e.error]


#: data keys that name things (card numbers, ids): moving them by one step means nothing
IDENTIFIER_KEYS = ("card", "id", "number", "name", "index", "slot")


def _is_identifier(path: str) -> bool:
    last = path.rsplit(".", 1)[-1].split("[", 1)[0]
    return last in IDENTIFIER_KEYS


def _steps(value: Any) -> list[Any]:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return []
    if isinstance(value, int):
        return [value - 1, value + 1]
    step = abs(value) * FLOAT_STEP or FLOAT_STEP
    return [value - step, value + step]


def _source_values(raw: Any, keys: tuple = ()):
    """(keys, value) of every plain number in a data file (not inside a placeholder or
    example wrapper): the values the source gives."""
    if is_wrapper(raw):
        return
    if isinstance(raw, dict):
        for k, v in raw.items():
            yield from _source_values(v, keys + (k,))
    elif isinstance(raw, list):
        for i, v in enumerate(raw):
            yield from _source_values(v, keys + (i,))
    elif isinstance(raw, (int, float)) and not isinstance(raw, bool):
        yield keys, raw


def _dotted(keys: tuple) -> str:
    out = ""
    for k in keys:
        out += f"[{k}]" if isinstance(k, int) else (f".{k}" if out else str(k))
    return out


#: every kind of variant, in the order :func:`variants` lists them
KINDS = ("placeholder", "example", "parameter default", "source value", "value group", "rule option",
         "what-if rule", "policy", "swap")
#: kinds whose base and tried values are labels (shown as written, not as Python values)
LABEL_KINDS = ("value group", "swap")


def value_groups(sc: scenario_mod.Scenario) -> tuple[list, list[str]]:
    """The value groups of the scenario's point and what to say about them: the question's declared
    groups (:attr:`Question.value_groups`), then those its game's data names
    (:data:`analyzer.core.value_groups.GROUPS_FILE` beside the scenario, else the shipped one); a data
    group of the same name as a declared one replaces it, in its place. The notes name the groups file
    and each declaration it replaced."""
    from analyzer.core import value_groups as vg

    declared = list(sc.question.value_groups)
    groups_file = vg.of_scenario(sc)
    if groups_file is None:
        return declared, []
    data = {g.name: g for g in groups_file.for_question(sc.spec.question)}
    where = (f"{vg.GROUPS_FILE} beside the scenario" if groups_file.origin == "scenario"
             else f"the game's {vg.GROUPS_FILE} (shipped)")
    notes = [f"value groups named in the data: {where}: {', '.join(data) or 'none for this question'}"]
    out = []
    for g in declared:
        if g.name in data:
            notes.append(f"value group {g.name!r}: the data's ({where}) replaces the question's declaration of "
                         f"the same name")
            out.append(data.pop(g.name))
        else:
            out.append(g)
    return out + list(data.values()), notes


def variants(sc: scenario_mod.Scenario, include_source_values: bool = False,
             kinds: tuple[str, ...] | None = None, only: tuple[str, ...] | None = None,
             swaps: tuple[str, ...] = ()) -> tuple[list[Variant], list[str]]:
    """Every one-at-a-time change of the scenario's single point, and the used values that
    are not numbers (listed, not perturbed). ``include_source_values`` adds every plain
    number of every data file the point reads (values the source gives: "what if the
    printed value were one step different"); most of them are not read by a given point and
    cannot change the answer. Then the value groups (:func:`value_groups`: each as one variant down
    and one up; a group, or a pattern of one, that matches no value the point uses is listed), its
    rule options and the point's policy choices (each other allowed value). ``kinds``
    keeps only variants of those kinds (:data:`KINDS`; None: all), ``only`` those of the values named
    (a data path, ``params.x`` or ``rules.x`` and what lies below it, or a value group's name).
    ``swaps`` (``GROUP_OR_DATAFILE=PATH`` texts, :func:`swap_variants`) are added whatever ``kinds``
    and ``only`` keep: each was asked for by name."""
    if kinds is not None:
        unknown = [k for k in kinds if k not in KINDS]
        if unknown:
            raise ScenarioError(str(sc.path), "kind", f"got {', '.join(map(repr, unknown))}; allowed: "
                                f"{', '.join(KINDS)}")
    point = sc.points[0]
    prepared = prepare_point(sc, point)
    out: list[Variant] = []
    skipped: list[str] = []
    for ph in prepared.placeholders:
        kind = "parameter default" if ph.source == "default" else ("example" if ph.is_example else "placeholder")
        steps = [] if _is_identifier(ph.path) else _steps(ph.value)
        if not steps:
            why = "an identifier" if _is_identifier(ph.path) else "not a number"
            skipped.append(f"{ph.path} = {ph.value!r} ({kind}; {why})")
        for v in steps:
            out.append(Variant(ph.path, kind, ph.value, v, "" if ph.source == "default" else ph.source,
                               placeholder_values=0 if ph.is_example else 1))
    if include_source_values:
        for entry in prepared.data_files:
            base = sc.path.parent if entry["origin"] == "scenario" else sc.context(point).game_dir
            source = base / entry["path"]
            for keys, value in _source_values(read_yaml(source)):
                if keys and keys[-1] in IDENTIFIER_KEYS:
                    continue
                for v in _steps(value):
                    out.append(Variant(f"{entry['path']}:{_dotted(keys)}", "source value", value, v, str(source),
                                       keys, placeholder_values=0))
    groups, _ = value_groups(sc)
    for group in groups:
        made = group_variants(group, prepared.placeholders)
        if not made:
            skipped.append(f"{group.name} (value group; this point uses none of its values: "
                           f"{', '.join(group.paths)})")
        else:
            for pattern in unmatched_patterns(group, prepared.placeholders):
                skipped.append(f"{group.name} (value group; its pattern {pattern} matches no value this point "
                               f"uses)")
        out.extend(made)
    for option in sc.question.rule_options:
        current = point.rules.get(option.name, option.default)
        for v in option.values:
            if v != current:
                kind = "what-if rule" if v in option.what_if else "rule option"
                out.append(Variant(f"rules.{option.name}", kind, current, v, values=0))
    for path, current, v in policy_choices(point.params):
        out.append(Variant(f"params.{path}", "policy", current, v, values=0))
    if kinds is not None:
        out = [v for v in out if v.kind in kinds]
    if only is not None:
        out = [v for v in out if any(is_under(v.what, o) for o in only)]
    return out + swap_variants(sc, prepared, groups, swaps), skipped


# -- value groups ------------------------------------------------------------------------------

def _pattern(path: str) -> re.Pattern:
    """A group's data-path pattern (``[*]`` any index, ``*`` any key) matching a value at or below it."""
    out = ""
    for token in re.split(r"(\[\*\]|\*)", path):
        out += {"[*]": r"\[\d+\]", "*": r"[^.\[\]]+"}.get(token, re.escape(token))
    return re.compile(out + r"(?=$|[.\[])")


def _leaves(value: Any, sub: tuple = ()):
    """(keys inside the value, number) of every number of a placeholder's value (itself when a number)."""
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        yield sub, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, sub + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, sub + (i,))


def _suffix(sub: tuple) -> str:
    return "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in sub)


def _scaled(value, factor: float):
    x = value * factor
    return int(math.floor(x + 0.5)) if isinstance(value, int) else x


def _members(group, placeholders) -> list:
    """(placeholder, [(sub keys, number)]) of every used placeholder or example value with a number
    that matches the group (identifiers such as card numbers left out)."""
    patterns = [_pattern(p) for p in group.paths]
    members = []
    for ph in placeholders:
        hits = [(sub, x) for sub, x in _leaves(ph.value)
                if any(rx.match(ph.path + _suffix(sub)) for rx in patterns)
                and not _is_identifier(ph.path + _suffix(sub))]
        if hits:
            members.append((ph, hits))
    return members


def unmatched_patterns(group, placeholders) -> list[str]:
    """The group's patterns that match no number of a value the point uses."""
    return [p for p in group.paths if not _members(type(group)(group.name, (p,)), placeholders)]


def group_variants(group, placeholders) -> list[Variant]:
    """The two variants of a value group (:class:`analyzer.core.questions.ValueGroup`): every number
    of every placeholder or example value the point uses (``placeholders``: the prepared point's,
    so only what the question reads) that matches the group, moved down together, then up.
    None when the point uses none of them."""
    members = _members(group, placeholders)      # (placeholder, [(sub keys, number)])
    if not members:
        return []
    n_values = sum(len(h) for _, h in members)
    n_placeholders = sum(len(h) for ph, h in members if not ph.is_example)
    if group.scale is None:
        labels = ("each one step down", "each one step up")
        moves = (lambda x: _steps(x)[0], lambda x: _steps(x)[1])
    else:
        labels = (f"each x{1 / group.scale:.4g}", f"each x{group.scale:.4g}")
        moves = (lambda x: _scaled(x, 1 / group.scale), lambda x: _scaled(x, group.scale))
    out = []
    for label, move in zip(labels, moves):
        edits = []
        for ph, hits in members:
            value = copy.deepcopy(ph.value)
            for sub, x in hits:
                if not sub:
                    value = move(x)
                    continue
                obj = value
                for k in sub[:-1]:
                    obj = obj[k]
                obj[sub[-1]] = move(x)
            edits.append((ph.path, ph.source, value, not ph.is_example))
        out.append(Variant(group.name, "value group", f"as in the data ({n_values} values)", label,
                           edits=tuple(edits), values=n_values, placeholder_values=n_placeholders))
    return out


# -- swaps: a whole data file, or the part a value group names, replaced by the user's ----------------

_MISSING = object()


def _base_file(sc: scenario_mod.Scenario, entry: dict) -> Path:
    """Where the point read data file ``entry`` (an item of ``Prepared.data_files``)."""
    base = sc.path.parent if entry["origin"] == "scenario" else sc.context(sc.points[0]).game_dir
    return base / entry["path"]


def _inner_paths(node: Any, path: str):
    """``path`` and the data path of every value at or below ``node`` (inside labelled values too)."""
    yield path
    if is_wrapper(node):
        node = node["ph"] if "ph" in node else node["ex"]
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _inner_paths(v, f"{path}.{k}" if path else str(k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _inner_paths(v, f"{path}[{i}]")


def _group_places(doc: Any, prefix: str, patterns: list) -> set[tuple]:
    """The places of a data file (key paths from its root) that a group's patterns name: the highest
    node a pattern matches, or the labelled value (``{ph: ..}``) holding what a pattern matches (a
    labelled value is swapped whole). ``prefix``: the data path of the file's root."""
    out: set[tuple] = set()

    def walk(node, keys, path):
        if is_wrapper(node):
            if keys and any(rx.match(p) for p in _inner_paths(node, path) for rx in patterns):
                out.add(keys)
            return
        if keys and any(rx.fullmatch(path) for rx in patterns):
            out.add(keys)
            return
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, keys + (k,), f"{path}.{k}" if path else str(k))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, keys + (i,), f"{path}[{i}]")
    walk(doc, (), prefix)
    return out


def _at(doc: Any, keys: tuple) -> Any:
    """The node at ``keys`` (:data:`_MISSING` when there is none)."""
    for k in keys:
        if isinstance(doc, dict) and k in doc or isinstance(doc, list) and isinstance(k, int) and 0 <= k < len(doc):
            doc = doc[k]
        else:
            return _MISSING
    return doc


def _to_label(keys: tuple, *docs) -> tuple:
    """``keys`` cut at the first labelled value on its way in any of ``docs``."""
    cut = len(keys)
    for doc in docs:
        node = doc
        for n, k in enumerate(keys[:cut]):
            if is_wrapper(node):
                cut = n
                break
            node = _at(node, (k,))
            if node is _MISSING:
                break
    return keys[:cut]


def _leaf_count(x: Any) -> int:
    if isinstance(x, dict):
        return sum(_leaf_count(v) for v in x.values())
    if isinstance(x, list):
        return sum(_leaf_count(v) for v in x)
    return 0 if x is _MISSING else 1


def _changed_values(a: Any, b: Any) -> int:
    """How many plain values (leaves, labels stripped) differ between ``a`` and ``b`` (a value on one
    side only counts as changed)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return sum(_changed_values(a.get(k, _MISSING), b.get(k, _MISSING)) for k in [*a, *(k for k in b if k not in a)])
    if isinstance(a, list) and isinstance(b, list):
        return sum(_changed_values(a[i] if i < len(a) else _MISSING, b[i] if i < len(b) else _MISSING)
                   for i in range(max(len(a), len(b))))
    if a is _MISSING or b is _MISSING or isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return max(_leaf_count(a), _leaf_count(b))
    numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
    return 0 if (numbers or type(a) is type(b)) and a == b else 1


def swap_variants(sc: scenario_mod.Scenario, prepared, groups, swaps: tuple[str, ...]) -> list[Variant]:
    """One variant per ``GROUP_OR_DATAFILE=PATH`` text of ``swaps``: the data file the point reads
    (as ``Prepared.data_files`` names it, ``data/campaign/events.yaml``) replaced whole by the file at
    PATH, or the places of one data file a value group of ``groups`` names (:func:`_group_places`)
    replaced by the same places of PATH (a copy of that data file holding the user's values: their
    printed Event deck). Refused in one line: a text without ``=``, a PATH that is not a file or not
    YAML, a target that is neither a group nor a data file the point reads, a group whose used values
    are in no data file or in several, a place the group names in one file and not the other. Whether
    the swapped point validates is checked by :func:`run` before any trial."""
    files = {e["path"]: e for e in prepared.data_files}
    by_name = {g.name: g for g in groups}
    out, seen = [], set()
    for text in swaps:
        target, sep, given = (x.strip() for x in str(text).partition("="))
        if not sep or not target or not given:
            raise ScenarioError(str(sc.path), "--swap", f"got {text!r}; give GROUP_OR_DATAFILE=PATH: a value group "
                                f"({', '.join(by_name) or 'none'}) or a data file the point reads "
                                f"({', '.join(files) or 'none'}), then your version of it")
        field_ = f"--swap {target}"
        if (target, given) in seen:
            raise ScenarioError(str(sc.path), field_, f"{given} given twice")
        seen.add((target, given))
        rel = Path(target).as_posix().removeprefix("./")
        if rel not in files and target not in by_name:
            raise ScenarioError(str(sc.path), field_, f"names nothing this point reads; allowed: a value group "
                                f"({', '.join(by_name) or 'none'}) or a data file the point reads "
                                f"({', '.join(files) or 'none'})")
        user = Path(given)
        if not user.is_file():
            raise ScenarioError(str(sc.path), field_, f"{given}: no such file" + (" (a folder?)" if user.exists()
                                                                                   else ""))
        try:
            user_doc = read_yaml(user)
            if rel in files:
                base_doc, units, doc = read_yaml(_base_file(sc, files[rel])), None, user_doc
            else:
                rel, base_doc, units = _group_swap(sc, prepared, files, by_name[target], field_, user_doc, given)
                doc = copy.deepcopy(base_doc)
                for keys in units:
                    _set_at(doc, keys, copy.deepcopy(_at(user_doc, keys)))
            values = _changed_values(unwrap(base_doc)[0], unwrap(doc)[0])
        except DataError as e:
            raise ScenarioError(str(sc.path), field_, str(e)) from None
        base_file = _base_file(sc, files[rel]).resolve()
        changed = []            # the used placeholders it changes or writes plainly
        for ph in prepared.placeholders:
            if ph.is_example or ph.source in ("", "default") or Path(ph.source).resolve() != base_file:
                continue
            loc = _data_location(doc, ph.path)
            node = None if loc is None else loc[1]
            if not (is_wrapper(node) and "ph" in node and unwrap(node)[0] == ph.value):
                changed.append(ph.path)
        out.append(Variant(target, "swap", f"{rel} ({files[rel]['origin']})", given, given,
                           swap=(rel, str(user.resolve()), units, tuple(changed)), values=values,
                           placeholder_values=len(changed)))
    return out


def _set_at(doc: Any, keys: tuple, value: Any) -> None:
    for k in keys[:-1]:
        doc = doc[k]
    doc[keys[-1]] = value


def _group_swap(sc, prepared, files: dict, group, field_: str, user_doc: Any, given: str):
    """(data file, its document, the places to replace) of a group swap: the one data file holding the
    group's used values, and the places the group names in it and in the user's version (a place
    named in one and missing in the other is refused)."""
    members = _members(group, prepared.placeholders)
    if not members:
        raise ScenarioError(str(sc.path), field_, f"the value group names no value this point uses (patterns: "
                            f"{', '.join(group.paths)})")
    rels = {}
    for ph, _ in members:
        rel = next((r for r, e in files.items() if ph.source not in ("", "default")
                    and _base_file(sc, e).resolve() == Path(ph.source).resolve()), None)
        if rel is None:
            raise ScenarioError(str(sc.path), field_, f"{ph.path} is not in a data file ({ph.source or 'a default'}):"
                                f" only values of data files can be swapped")
        rels.setdefault(rel, ph)
    if len(rels) > 1:
        raise ScenarioError(str(sc.path), field_, f"the values this point uses are in {len(rels)} data files "
                            f"({', '.join(rels)}); swap one file: --swap FILE=PATH")
    (rel, ph), = rels.items()
    base_doc = read_yaml(_base_file(sc, files[rel]))
    keys, _ = _data_location(base_doc, ph.path)
    inside = _dotted(tuple(keys))
    prefix = ph.path[: len(ph.path) - len(inside)].rstrip(".")
    patterns = [_pattern(p) for p in group.paths]
    places = {_to_label(k, base_doc, user_doc)
              for k in _group_places(base_doc, prefix, patterns) | _group_places(user_doc, prefix, patterns)}
    places = {k for k in places if not any(k[:len(o)] == o for o in places if o != k)}
    for k in sorted(places, key=str):
        where = (prefix + "." if prefix else "") + _dotted(k)
        for doc, name in ((base_doc, f"the data's {rel}"), (user_doc, given)):
            if _at(doc, k) is _MISSING:
                raise ScenarioError(str(sc.path), field_, f"{where}: the group names it but {name} has no value "
                                    f"there (a group swap replaces the same places; swap the whole file: "
                                    f"--swap {rel}=PATH)")
    return rel, base_doc, tuple(sorted(places, key=str))


# -- policies ------------------------------------------------------------------------------------

def policy_choices(params, path: str = "", in_policy: bool = False):
    """(dotted parameter path, value in the point, other allowed value) of every choice of the point's
    policies: a field with allowed values (Literal, bool) at or below a parameter whose name contains
    ``policy`` (``policy.patrol``, ``target_policy.a``, ``fleet[0].policy.endurance``). A value left
    unset (None: "use the shared policy") is not varied."""
    from pydantic import BaseModel

    for name, info in type(params).model_fields.items():
        value = getattr(params, name)
        where = f"{path}.{name}" if path else name
        policy = in_policy or "policy" in name
        if isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, BaseModel):
                    yield from policy_choices(item, f"{where}[{i}]", policy)
            continue
        if isinstance(value, BaseModel):
            yield from policy_choices(value, where, policy)
        if not policy or value is None:
            continue
        choices = [c for c in allowed_choices(info.annotation) if c is not None]
        if isinstance(value, BaseModel):
            current = value.model_dump(exclude_defaults=True)
        elif any(type(c) is type(value) and c == value for c in choices):
            current = value
        else:
            continue
        for c in choices:
            if not (type(c) is type(value) and c == value):
                yield where, current, c


def _data_location(raw: Any, full_path: str) -> tuple[list, Any] | None:
    """(keys from the file's root to the value, the wrapper or value there) for the data path
    ``full_path``, whose first component is the file's prefix (unknown here)."""
    found: list[tuple[list, Any]] = []

    def walk(obj, keys, path):
        if full_path == path or full_path.endswith("." + path):
            found.append((keys, obj))
        if is_wrapper(obj):
            return
        if isinstance(obj, dict):
            for k, v in obj.items():
                walk(v, keys + [k], f"{path}.{k}" if path else str(k))
        elif isinstance(obj, list):
            for i, v in enumerate(obj):
                walk(v, keys + [i], f"{path}[{i}]")
    walk(raw, [], "")
    found = [f for f in found if f[0]]
    return min(found, key=lambda f: len(f[0]), default=None) if found else None


def _set_in(obj: Any, keys: list, value: Any) -> None:
    for k in keys[:-1]:
        obj = obj[k]
    last = obj[keys[-1]]
    if is_wrapper(last):                 # keep the label: the value stays a placeholder / example
        last["ph" if "ph" in last else "ex"] = value
    else:
        obj[keys[-1]] = value


def _set_param(params: dict, dotted: str, value: Any) -> None:
    parts = [p for p in dotted.replace("]", "").replace("[", ".").split(".") if p]
    obj = params
    for p in parts[:-1]:
        obj = obj[int(p)] if isinstance(obj, list) else obj.setdefault(p, {})
    last = parts[-1]
    if isinstance(obj, list):
        obj[int(last)] = value
    else:
        obj[last] = value


def _variant_scenario(sc: scenario_mod.Scenario, data_files: tuple[dict, ...], variant: Variant,
                      folder: Path, trials: int) -> scenario_mod.Scenario:
    """Write the variant as files in ``folder`` and load it."""
    raw = read_yaml(sc.path)
    raw.pop("sweep", None)
    raw["name"] = sc.name
    for entry in data_files:                     # every data file the point reads, beside the copy
        base = sc.path.parent if entry["origin"] == "scenario" else sc.context(sc.points[0]).game_dir
        target = folder / entry["path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(base / entry["path"], target)
    if variant.swap:                              # the user's file, whole or at the places a group names
        rel, user, places, _ = variant.swap
        if places is None:
            shutil.copyfile(user, folder / rel)
        else:
            doc, theirs = read_yaml(folder / rel), read_yaml(Path(user))
            for keys in places:
                _set_at(doc, keys, _at(theirs, keys))
            (folder / rel).write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
        edits = ()
    elif variant.what.startswith("rules."):
        raw.setdefault("rules", {})[variant.what[len("rules."):]] = variant.value
        edits = ()
    elif variant.edits:                           # a value group: each of its used values
        edits = tuple((what, "" if file == "default" else file, (), value) for what, file, value, _ in variant.edits)
    else:
        edits = ((variant.what, variant.file, variant.keys, variant.value),)
    for what, file, keys, value in edits:
        if what.startswith("params.") and not file:
            _set_param(raw.setdefault("params", {}), what[len("params."):], value)
        elif Path(file).resolve() == sc.path.resolve():     # a labelled value in the scenario itself
            loc = _data_location(raw, what)
            if loc is None:
                raise DataError(f"{sc.path}: {what}: not found in the scenario")
            _set_in(raw, loc[0], value)
        else:
            source = Path(file).resolve()
            rel = next((e["path"] for e in data_files
                        if ((sc.path.parent if e["origin"] == "scenario" else sc.context(sc.points[0]).game_dir)
                            / e["path"]).resolve() == source), None)
            if rel is None:
                raise DataError(f"{file}: not among the data files the point read")
            doc = read_yaml(folder / rel)
            if keys:
                _set_in(doc, list(keys), value)
            else:
                loc = _data_location(doc, what)
                if loc is None:
                    raise DataError(f"{rel}: {what}: not found in the file")
                _set_in(doc, loc[0], value)
            (folder / rel).write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    path = folder / sc.path.name
    path.write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True))
    return scenario_mod.load(path, trials=trials, seed=sc.spec.seed, trials_guard=False)   # run() checked the total


#: variants that switch a reading or a choice: run only when they change the compiled point
CHOICE_KINDS = ("rule option", "what-if rule", "policy")


def _placeholder_count(prepared) -> int:
    """Placeholder values a prepared point uses (what its run lists as placeholders: only the values
    the question reads; example values not counted)."""
    return sum(1 for ph in prepared.placeholders if not ph.is_example)


def _placeholder_keys(prepared) -> set[tuple[str, str]]:
    """(data path, file name) of every placeholder value a prepared point uses (the file by name: a
    variant reads its copies in another folder)."""
    return {(ph.path, Path(ph.source).name) for ph in prepared.placeholders if not ph.is_example}


def same_kernel_input(a, b) -> bool:
    """Whether two prepared points run the same kernel on equal arguments (so every trial of one equals
    the other's on the same stream): numpy arrays compared by dtype, shape and values, tuples item by item."""
    def equal(x, y):
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            return (isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and x.dtype == y.dtype
                    and x.shape == y.shape and bool(np.array_equal(x, y)))
        if isinstance(x, tuple) and isinstance(y, tuple):
            return len(x) == len(y) and all(equal(p, q) for p, q in zip(x, y))
        return type(x) is type(y) and x == y
    return (a.kernel is b.kernel and a.kernel is not None and a.n_bins == b.n_bins
            and len(a.counters) == len(b.counters) and equal(a.args, b.args))


def _base_batches(sc: scenario_mod.Scenario, prepared, key: int, trials: int, chunk_size: int):
    """The unchanged scenario's per-batch moments (kept: every variant is paired with them),
    and its accumulator. Checks the stop flag between kernel calls (the base run of a long
    sensitivity can take hours)."""
    from analyzer.core import interrupt
    from analyzer.core.stats import MetricAccumulator
    from analyzer.run.batches import run_batches
    from kernels.record import chunk_sizes

    acc = MetricAccumulator(len(prepared.metrics), prepared.n_bins, len(prepared.counters))
    batches = []
    for lo, hi, (hist, moments, counters) in run_batches(prepared, trials, seed=sc.spec.seed, key=key,
                                                         chunk_size=chunk_size):
        acc.add_chunks(hist, moments, counters)
        batches.append((lo, hi, moments, chunk_sizes(lo, hi, trials, chunk_size)))
        interrupt.check()
    return batches, acc


def run(sc: scenario_mod.Scenario, *, metric: str | None = None, trials: int | None = None,
        include_source_values: bool = False, kinds: tuple[str, ...] | None = None,
        only: tuple[str, ...] | None = None, swaps: tuple[str, ...] = (),
        on_variant: Callable[[int, int, Variant], None] | None = None, force: bool = False) -> Sensitivity:
    """Every variant of the scenario's point against the scenario, on common random numbers:
    the unchanged point runs once, and each variant runs on the same chunk streams and is
    paired with it chunk by chunk (as ``analyzer compare`` pairs A and B). ``kinds`` / ``only``: run
    only variants of these kinds or of these values (:func:`variants`); ``swaps``: also these
    ``GROUP_OR_DATAFILE=PATH`` replacements (:func:`swap_variants`), each prepared before any trial
    runs, so a swapped point that does not validate is refused in one line, not skipped.

    The trial guard counts (1 + variants) x trials (``force`` allows more than 10^10); a stop
    request (under :func:`analyzer.core.interrupt.handling`) stops between kernel calls, the base
    run's included."""
    from analyzer.core import interrupt
    from analyzer.run.runner import MIN_PAIRED_BATCHES, paired_chunk_size, stream_key
    from analyzer.core.stats import MetricAccumulator, PairedAccumulator

    if len(sc.points) != 1:
        raise ScenarioError(str(sc.path), "sweep", f"sensitivity perturbs one point; the scenario has "
                            f"{len(sc.points)} (remove the sweep, or fix the swept values in params)")
    if trials is None and sc.spec.precision is not None:
        raise ScenarioError(str(sc.path), "precision", "sensitivity runs a fixed trial count; use --trials")
    trials = trials or sc.spec.trials
    if trials < MIN_PAIRED_BATCHES:
        raise ScenarioError(str(sc.path), "trials", f"got {trials}; sensitivity needs at least "
                            f"{MIN_PAIRED_BATCHES} trials for an honest paired CI")
    base_prepared = prepare_point(sc, sc.points[0])
    names = [m.name for m in base_prepared.metrics]
    metric = metric or sc.question.primary_metric
    if metric not in names:
        raise ScenarioError(str(sc.path), "metric", f"got {metric!r}; metrics of this point: {', '.join(names)}")
    m_index = names.index(metric)
    vs, skipped = variants(sc, include_source_values, kinds, only, swaps)
    _, notes = value_groups(sc)
    scenario_mod.check_trial_budget(str(sc.path), "trials", trials, 1 + len(vs),
                                    "runs (the scenario and each variant)", force)
    key = stream_key("compare", sc.spec.game, sc.spec.question, 0)
    chunk_size = paired_chunk_size(trials)
    base_keys = _placeholder_keys(base_prepared)
    with tempfile.TemporaryDirectory(prefix="sensitivity-") as tmp:
        def prepared_variant(i: int, v: Variant):
            folder = Path(tmp) / f"v{i}"
            folder.mkdir(exist_ok=True)
            variant = _variant_scenario(sc, base_prepared.data_files, v, folder, trials)
            prepared = prepare_point(variant, variant.points[0])
            if metric not in [x.name for x in prepared.metrics]:
                raise ScenarioError(str(sc.path), "metric", f"the variant has no metric {metric!r}")
            return folder, prepared

        swapped = {}            # the swaps, prepared before any trial: one that does not validate is refused
        for i, v in enumerate(vs):
            if v.kind == "swap":
                try:
                    swapped[i] = prepared_variant(i, v)
                except (ScenarioError, DataError) as e:
                    reason = str(e).replace(str(Path(tmp) / f"v{i}") + "/", "")
                    raise ScenarioError(str(sc.path), f"--swap {v.what}", f"with {v.value} the point does not "
                                        f"validate: {reason}") from None
        batches, base_acc = _base_batches(sc, base_prepared, key, trials, chunk_size)
        m = base_prepared.metrics[m_index]
        result = Sensitivity(sc.name, metric, base_acc.summary(m_index, m.scale, m.is_probability).mean, trials,
                             skipped=skipped, game=sc.spec.game, question=sc.spec.question, seed=sc.spec.seed,
                             base_placeholders=_placeholder_count(base_prepared), notes=notes)
        for i, v in enumerate(vs):
            if on_variant:
                on_variant(i, len(vs), v)
            folder = Path(tmp) / f"v{i}"
            effect = Effect(v, metric)
            tried = v.value if v.kind in LABEL_KINDS else repr(v.value)
            try:
                folder, prepared = swapped[i] if i in swapped else prepared_variant(i, v)
                variant_names = [x.name for x in prepared.metrics]
            except (ScenarioError, DataError) as e:
                # the scenario's validation refuses it (a value out of range, a broken data invariant):
                # not run, not charted; listed with the reason
                reason = str(e).replace(str(folder) + "/", "").replace(str(folder), "<variant>")
                result.skipped.append(f"{v.what} = {tried} (refused, not run: {reason})")
                shutil.rmtree(folder, ignore_errors=True)
                continue
            if v.kind in CHOICE_KINDS and same_kernel_input(base_prepared, prepared):
                # the point never reads this option or policy (e.g. a submerged-target rule for a surface
                # target): its compiled input is the scenario's, so no metric can move
                result.skipped.append(f"{v.what} = {tried} (cannot change this point: its compiled "
                                      f"kernel input equals the scenario's)")
                shutil.rmtree(folder, ignore_errors=True)
                continue
            m_b = variant_names.index(metric)       # the variant may report other metrics (e.g. per patrol)
            paired = PairedAccumulator(1)
            variant_acc = MetricAccumulator(len(variant_names), prepared.n_bins, len(prepared.counters))
            for lo, hi, moments_a, sizes in batches:
                hist_b, moments_b, counters_b = prepared.run_kernel(sc.spec.seed, key, lo, hi, chunk_size, trials)
                paired.add_chunks(moments_a[:, m_index:m_index + 1], moments_b[:, m_b:m_b + 1], sizes)
                variant_acc.add_chunks(hist_b, moments_b, counters_b)   # the arm's interval (few differing batches)
                interrupt.check()
            mb = prepared.metrics[m_b]
            d = paired.summary(0, m.scale, proportion=m.is_probability,
                               arm_a=base_acc.summary(m_index, m.scale, m.is_probability),
                               arm_b=variant_acc.summary(m_b, mb.scale, mb.is_probability))
            effect.mean, effect.se, effect.ci_low, effect.ci_high = d.mean, d.se, d.ci_low, d.ci_high
            effect.placeholders = _placeholder_count(prepared)
            effect.placeholders_removed = len(base_keys - _placeholder_keys(prepared))
            shutil.rmtree(folder, ignore_errors=True)
            result.effects.append(effect)
    import datetime as dt
    result.created_utc = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    return result


def tornado_figure(result: Sensitivity, top: int | None = None):
    """The tornado chart of ``result`` (:func:`analyzer.outputs.compare_plots.tornado_figure`)."""
    from analyzer.outputs import compare_plots
    return compare_plots.tornado_figure(document(result), top or compare_plots.TORNADO_TOP)


def placeholders_varied(result: Sensitivity) -> int:
    """Distinct placeholder values (not examples) the variants that ran moved: single values and the
    members of value groups, all of them values the point uses."""
    seen = set()
    for e in result.effects:
        v = e.variant
        if v.kind == "value group":
            seen.update(path for path, _, _, is_placeholder in v.edits if is_placeholder)
        elif v.kind == "swap":
            seen.update(v.swap[3])
        elif v.placeholder_values:
            seen.add(v.what)
    return len(seen)


def document(result: Sensitivity) -> dict:
    """What sensitivity.json holds (before its format stamp): the ranked variants as rows."""
    import json
    rows = [dict(rank=i + 1, **e.row()) for i, e in enumerate(result.ranked())]
    doc = {"scenario": result.scenario, "game": result.game, "question": result.question, "seed": result.seed,
           "created_utc": result.created_utc, "metric": result.metric, "base_mean": result.base_mean,
           "trials": result.trials, "base_placeholders": result.base_placeholders,
           "placeholders_varied": placeholders_varied(result), "variants": rows, "not_perturbed": result.skipped,
           "notes": result.notes}
    return json.loads(json.dumps(doc, default=str))


def write(result: Sensitivity, out_root: Path, digest: str, folder_name: str | None = None) -> Path:
    """``<out>/<folder_name>-sensitivity/<run-id>/`` (``folder_name``: the scenario file's stem,
    default the scenario's name): sensitivity.parquet (one row per variant, ranked),
    sensitivity.json, answers.parquet (:func:`analyzer.outputs.answers.sensitivity_table`),
    tornado.png and report.html; written atomically like a run folder."""
    import pandas as pd

    from analyzer.outputs import compare_plots, report
    from analyzer.outputs import writer as outputs
    from analyzer.outputs.answers import sensitivity_table
    from analyzer.outputs.reader import ANSWERS_TABLE
    from analyzer.core.formats import SENSITIVITY_JSON
    doc = document(result)
    with outputs.RunFolderBuild(Path(out_root), f"{folder_name or result.scenario}-sensitivity", digest) as build:
        tmp = build.tmp
        outputs.write_parquet(pd.DataFrame(doc["variants"]), tmp / "sensitivity.parquet")
        outputs.write_document(tmp, SENSITIVITY_JSON, doc)
        outputs.write_parquet(sensitivity_table(doc), tmp / ANSWERS_TABLE)
        compare_plots.save(compare_plots.tornado_figure(doc), tmp, compare_plots.TORNADO_FIGURE)
        report.write_report(tmp)
    return build.path
