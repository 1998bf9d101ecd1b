"""Value groups named in a game's data: ``data/sensitivity_groups.yaml``.

A value group (:class:`~analyzer.core.questions.ValueGroup`) is a table, deck or sheet block
that ``analyzer sensitivity`` moves as ONE variant, or replaces as a whole with ``--swap``. A
question module may declare groups (``Question.value_groups``); a game's data names its own in
``data/sensitivity_groups.yaml``, found like every data file: beside the scenario first (a
player's copy, ``<scenario folder>/data/sensitivity_groups.yaml``), then the shipped one
(:meth:`~analyzer.core.questions.Context.find`'s order), the first found replacing the other
whole. A data group of the same name as a question's replaces it.

Why a file of its own and not a key inside the data files: a group may span files (a campaign
sheet's notes and data/wolfpack.yaml's), its ``scale`` is a setting and not a value of the rule
source (``--source-values`` would move it and the data's source-value checks would refuse it),
and the game loaders never see it. The file is validated here, at the edge: unknown keys, a
labelled value (``{ph: ..}``: a group is not a rule value), a malformed path pattern, a scale
that is not a number above 1 and a question the game does not have are each refused in one
line naming the file and the field. A pattern that matches nothing the point uses is not an
error (``sensitivity`` lists it under ``not_perturbed``)::

    groups:
      - name: event deck                      # unique in the file
        paths: [events.cards]                 # data-path patterns: [*] any index, * any key
        doc: every card count and effect size one step down / up together
        scale: 1.25                           # optional: x1/1.25 and x1.25 instead of one step
        questions: [campaign]                 # optional: the questions it applies to (default all)
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from analyzer.core.errors import ScenarioError, suggest
from analyzer.core.gamedata import DataError, is_wrapper, read_yaml
from analyzer.core.questions import ValueGroup, questions_of

#: where a game's data names its value groups (relative to the scenario folder, then the game's)
GROUPS_FILE = "data/sensitivity_groups.yaml"
#: the keys of one group (``name`` and ``paths`` required)
GROUP_KEYS = ("name", "paths", "doc", "scale", "questions")
#: a data-path pattern: a key (or ``*``), then ``.key``, ``.*``, ``[N]`` or ``[*]`` steps
_PATTERN = re.compile(r"[^.\[\]\s][^.\[\]]*(?:\.[^.\[\]]+|\[(?:\d+|\*)\])*")


@dataclass(frozen=True)
class DataGroup:
    """One group of the file: the :class:`ValueGroup` and the questions it applies to (empty: all)."""

    group: ValueGroup
    questions: tuple[str, ...] = ()


@dataclass(frozen=True)
class GroupsFile:
    """The groups file a scenario reads: its path, ``origin`` (``scenario``: beside the scenario,
    ``shipped``: the game's) and every group in it."""

    path: Path
    origin: str
    groups: tuple[DataGroup, ...]

    def for_question(self, question: str) -> tuple[ValueGroup, ...]:
        return tuple(g.group for g in self.groups if not g.questions or question in g.questions)


def find(scenario_dir: Path, game_dir: Path) -> tuple[Path, str] | None:
    """(path, origin) of the groups file a scenario in ``scenario_dir`` reads, None when neither
    the scenario's folder nor the game's has one."""
    for origin, base in (("scenario", scenario_dir), ("shipped", game_dir)):
        p = Path(base) / GROUPS_FILE
        if p.is_file():
            return p, origin
    return None


def of_scenario(sc) -> GroupsFile | None:
    """The groups file the scenario ``sc`` reads (:func:`find`), read and validated against its game's
    questions (:func:`read`); None when there is none."""
    found = find(sc.path.parent, sc.context(sc.points[0]).game_dir)
    if found is None:
        return None
    return read(found[0], [q.name for q in questions_of(sc.spec.game)], found[1])


def _fail(path: Path, field: str, message: str) -> ScenarioError:
    return ScenarioError(str(path), field, message)


def _text(path: Path, field: str, value, *, empty: bool = False) -> str:
    if is_wrapper(value):
        raise _fail(path, field, f"got a labelled value {value!r}; a group is not a rule value: write it plainly")
    if not isinstance(value, str) or (not empty and not value.strip()):
        raise _fail(path, field, f"got {value!r}; allowed: a{'' if empty else ' non-empty'} text")
    return value


def check_pattern(path: Path, field: str, pattern) -> str:
    """``pattern`` when it is a data-path pattern (``events.cards``, ``areas[*].contact_table[*][0]``,
    ``skills.*``), else a one-line refusal naming ``field``."""
    pattern = _text(path, field, pattern)
    if not _PATTERN.fullmatch(pattern):
        raise _fail(path, field, f"got {pattern!r}; allowed: a data path as placeholders are named (keys joined "
                                 f"by '.', list indexes [N]), with [*] for any index and * for any key")
    return pattern


def read(path: Path, questions: list[str], origin: str = "shipped") -> GroupsFile:
    """Read and validate the groups file ``path`` of a game whose questions are ``questions``."""
    path = Path(path)
    try:
        doc = read_yaml(path)
    except DataError as e:
        raise _fail(path, "", str(e).removeprefix(f"{path}: ")) from None
    if not isinstance(doc, dict) or set(doc) != {"groups"}:
        got = sorted(map(str, doc)) if isinstance(doc, dict) else type(doc).__name__
        raise _fail(path, "", f"got {got}; a groups file holds one key, groups: a list of "
                              f"{{{', '.join(GROUP_KEYS)}}}")
    raw = doc["groups"]
    if not isinstance(raw, list):
        raise _fail(path, "groups", f"got {type(raw).__name__}; allowed: a list of groups")
    out, seen = [], set()
    for i, g in enumerate(raw):
        where = f"groups[{i}]"
        if not isinstance(g, dict):
            raise _fail(path, where, f"got {g!r}; allowed: a mapping of {', '.join(GROUP_KEYS)}")
        for key in g:
            if key not in GROUP_KEYS:
                raise _fail(path, f"{where}.{key}", f"unknown key{suggest(str(key), GROUP_KEYS)}; allowed: "
                                                    f"{', '.join(GROUP_KEYS)}")
        for key in ("name", "paths"):
            if key not in g:
                raise _fail(path, f"{where}.{key}", "missing (required: name and paths)")
        name = _text(path, f"{where}.name", g["name"]).strip()
        if "=" in name:
            raise _fail(path, f"{where}.name", f"got {name!r}; a name without '=' (--swap NAME=PATH splits at it)")
        if name in seen:
            raise _fail(path, f"{where}.name", f"{name!r} given twice; each group's name is unique in the file")
        seen.add(name)
        paths = g["paths"]
        if not isinstance(paths, list) or not paths:
            raise _fail(path, f"{where}.paths", f"got {paths!r}; allowed: a non-empty list of data-path patterns")
        patterns = tuple(check_pattern(path, f"{where}.paths[{k}]", p) for k, p in enumerate(paths))
        doc_text = _text(path, f"{where}.doc", g.get("doc", ""), empty=True)
        scale = g.get("scale")
        if scale is not None:
            if is_wrapper(scale) or isinstance(scale, bool) or not isinstance(scale, (int, float)) \
                    or not math.isfinite(scale) or scale <= 1:
                raise _fail(path, f"{where}.scale", f"got {scale!r}; allowed: a number above 1 (the group's "
                                                    f"numbers are multiplied by 1/scale and by scale), or no scale "
                                                    f"(one step down / up)")
            scale = float(scale)
        asked = g.get("questions", [])
        if not isinstance(asked, list) or not all(isinstance(q, str) for q in asked):
            raise _fail(path, f"{where}.questions", f"got {asked!r}; allowed: a list of question names: "
                                                    f"{', '.join(questions)}")
        for k, q in enumerate(asked):
            if q not in questions:
                raise _fail(path, f"{where}.questions[{k}]", f"got {q!r}{suggest(q, questions)}; allowed: "
                                                             f"{', '.join(questions)}")
        out.append(DataGroup(ValueGroup(name, patterns, doc_text, scale), tuple(asked)))
    return GroupsFile(path, origin, tuple(out))
