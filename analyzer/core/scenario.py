"""Scenario files: loading, validation at the edge, and expansion of the sweep grid.

A scenario names a game and a question, the question's ``params`` (validated by the
question's own pydantic model), optional rule options, and an optional ``sweep``: a
cartesian product over dotted parameter paths (``target.dr``) or rule options
(``rules.modified_six``). Every problem is reported as a :class:`ScenarioError` naming
the file, the field path, the given value and what is allowed, before any kernel runs.
"""
from __future__ import annotations

import copy
import glob
import itertools
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from analyzer.core import questions as registry
from analyzer.core.errors import ScenarioError, show, suggest
from analyzer.core.formats import SCENARIO_FILE, version_problem
from analyzer.core.gamedata import DataError, Placeholder, file_digest, is_under, read_text, read_yaml, unwrap
from analyzer.core.balance_spec import check_balance_keys
from analyzer.core.params import allowed_from_error, check_param_path, fields_of, loc_path, plain, refuse_coercion, set_path, submodel

DEFAULT_SEED = 20261129
DEFAULT_TRIALS = 200_000
#: Above this many trials per point, or in total over the sweep, a run needs ``--force`` (a
#: typo guard: 10^10 trials of a fast question take about an hour on 2 cores).
MAX_TRIALS_WITHOUT_FORCE = 10_000_000_000
#: Never more than this many trials per point, even with ``--force`` (counters stay exact in int64).
MAX_TRIALS_EVER = 10**13
#: Most sweep points one scenario may expand to (counted before expanding).
MAX_SWEEP_POINTS = 100_000
#: Longest scenario ``name`` (characters). The name titles every plot, the report and the
#: console table and names the run folder: a 10,000-character name made 130,000-pixel-wide
#: PNGs after the whole run. Plots also shorten whatever name they draw
#: (:func:`analyzer.outputs.plots.drawn`), for run folders written before this cap.
MAX_NAME_CHARS = 200
#: Trial cap of a precision target when the scenario gives no ``max_trials`` (the runner stops
#: there; the trial guard counts a precision run at this cap, the most it can run).
DEFAULT_MAX_TRIALS = 100_000_000


class ScenarioDataError(ScenarioError, DataError):
    """A :class:`DataError` from a question, re-raised naming the scenario file."""


def planned_trials_per_point(spec: "ScenarioFile") -> int:
    """The most trials one point of ``spec`` can run: its ``trials``, or for a precision target
    its ``max_trials`` (default :data:`DEFAULT_MAX_TRIALS`): what the trial guard counts."""
    if spec.precision is None:
        return spec.trials if spec.trials is not None else DEFAULT_TRIALS
    return spec.max_trials or DEFAULT_MAX_TRIALS


def check_trial_budget(file: str, field_name: str, per_item: int, items: int, what: str, force: bool) -> int:
    """The one trial guard of every command that runs kernels (run, compare, sensitivity,
    matchup, solve): ``per_item`` trials for each of ``items`` ``what`` (points, variants,
    pairs, values...). More than :data:`MAX_TRIALS_EVER` per item is refused even with
    ``--force`` (the counters must stay exact); more than :data:`MAX_TRIALS_WITHOUT_FORCE` per
    item, or in all, needs ``--force`` (a typo guard: ``trials: 1e12`` would run for days).
    Returns the total. ``exact`` runs no trials and never calls this."""
    total = per_item * items
    if per_item > MAX_TRIALS_EVER:
        raise ScenarioError(file, field_name, f"got {per_item:,}; at most {MAX_TRIALS_EVER:,} trials per point, "
                            f"even with --force")
    if per_item > MAX_TRIALS_WITHOUT_FORCE and not force:
        raise ScenarioError(file, field_name,
                            f"got {per_item:,}; more than {MAX_TRIALS_WITHOUT_FORCE:,} trials per point needs --force")
    if total > MAX_TRIALS_WITHOUT_FORCE and not force:
        raise ScenarioError(file, field_name, f"{per_item:,} trials x {items:,} {what} = {total:,} trials in all; "
                            f"more than {MAX_TRIALS_WITHOUT_FORCE:,} needs --force")
    return total


class ScenarioFile(BaseModel):
    """The top-level keys of a scenario file (``params`` is checked by the question)."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    game: str
    question: str
    seed: int = Field(DEFAULT_SEED, ge=0, lt=2**63)
    trials: int | None = Field(None, gt=0)
    precision: float | None = Field(None, gt=0, allow_inf_nan=False)
    max_trials: int | None = Field(None, gt=0)
    precision_metric: str | None = None
    strict: bool = False
    rules: dict[str, Any] = Field(default_factory=dict)
    params: dict[str, Any] = Field(default_factory=dict)
    sweep: dict[str, list[Any]] = Field(default_factory=dict)
    plots: list[Any] = Field(default_factory=list)
    description: str | None = None
    # ``analyzer matchup`` / ``analyzer solve`` (checked by analyzer.analyses.balance.common; ``run`` ignores them)
    contenders: list[Any] | None = None
    matchup: dict[str, Any] | None = None
    solve: dict[str, Any] | None = None
    #: the version of the file format (:data:`analyzer.core.formats.SCENARIO_FILE`; checked by
    #: :func:`load` before any other key, absent = the current one)
    version: int | None = None

    @field_validator("sweep")
    @classmethod
    def _non_empty(cls, v: dict[str, list[Any]]):
        for key, values in v.items():
            if not values:
                raise ValueError(f"sweep list for {key!r} is empty; give at least one value")
        return v


@dataclass
class SweepPoint:
    index: int
    swept: dict[str, Any]          # the swept values at this point (dotted path -> value)
    params: BaseModel              # validated parameters
    rules: dict[str, str]          # all rule options, defaults filled in
    #: placeholders in this point's parameters: those of ``params`` that no swept value
    #: replaces, those written in its swept values, and placeholder defaults it left unset
    placeholders: list[Placeholder] = field(default_factory=list)


@dataclass
class Scenario:
    path: Path
    text: str
    spec: ScenarioFile
    question: registry.Question
    points: list[SweepPoint]

    @property
    def name(self) -> str:
        return self.spec.name or self.path.stem

    @property
    def digest(self) -> str:
        return file_digest(self.text)

    def context(self, point: SweepPoint) -> registry.Context:
        return registry.Context(rules=point.rules, scenario_dir=self.path.parent,
                                game_dir=registry.SCENARIO_ROOT / self.spec.game, scenario_file=self.path)


def validate_rules(file: str, question: registry.Question, rules: dict[str, Any],
                   where: str = "rules") -> dict[str, str]:
    """All rule options of ``question`` with defaults filled in; unknown names or values raise.
    A question's ``rule_options`` are the options it reads: an option of another question of the
    game is refused too (it would change nothing here), saying which questions read it."""
    options = {o.name: o for o in question.rule_options}
    out = {name: o.default for name, o in options.items()}
    for name, value in rules.items():
        if name not in options:
            allowed = ", ".join(sorted(options)) or "none (this question has no rule options)"
            readers = [q.name for q in registry.questions_of(question.game)
                       if q.name != question.name and any(o.name == name for o in q.rule_options)]
            if readers:
                raise ScenarioError(file, f"{where}.{name}", f"{question.name} does not use this rule option "
                                    f"(only {', '.join(readers)} read{'s' if len(readers) == 1 else ''} it): "
                                    f"remove it; the rule options {question.name} uses: {allowed}")
            raise ScenarioError(file, f"{where}.{name}", f"unknown rule option{suggest(name, options)}; "
                                f"allowed: {allowed}")
        opt = options[name]
        if isinstance(value, bool) and str(value) not in opt.values:
            # YAML 1.1 reads unquoted yes/no/on/off/true/false as booleans
            meant = next((v for v in opt.values if v in (("yes", "on", "true") if value else ("no", "off", "false"))),
                         opt.values[-1])
            raise ScenarioError(file, f"{where}.{name}", f"got {show(value)} (YAML reads an unquoted yes/no, on/off or "
                                f"true/false as a boolean); allowed: {', '.join(opt.values)}: quote the value, e.g. "
                                f'{name}: "{meant}"')
        if str(value) not in opt.values:
            raise ScenarioError(file, f"{where}.{name}", f"got {show(value)}; allowed: "
                                f"{', '.join(opt.values)}{suggest(value, opt.values)}")
        out[name] = str(value)
    return out


def param_default_placeholders(model: BaseModel, prefix: str = "") -> list[Placeholder]:
    """Placeholders among the parameter defaults that the scenario did not set.

    A field is a placeholder default when declared with
    ``Field(..., json_schema_extra={"placeholder": "why"})``.
    """
    out: list[Placeholder] = []
    for name, info in type(model).model_fields.items():
        path = f"{prefix}.{name}" if prefix else name
        value = getattr(model, name)
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        if name not in model.model_fields_set and "placeholder" in extra:
            out.append(Placeholder(f"params.{path}", plain(value), str(extra["placeholder"]), "default"))
        elif isinstance(value, BaseModel):
            out.extend(param_default_placeholders(value, path))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                if isinstance(v, BaseModel):
                    out.extend(param_default_placeholders(v, f"{path}[{i}]"))
    return out


def _validate_params(file: str, question: registry.Question, params: dict, where: str) -> BaseModel:
    try:
        model = question.Params.model_validate(params)
        refuse_coercion(file, params, model, "params", where)
        return model
    except ValidationError as e:
        err = e.errors()[0]
        loc = tuple(err["loc"])
        path = "params" + ("." + loc_path(loc) if loc else "")
        if err["type"] == "extra_forbidden":
            parent = question.Params
            for part in loc[:-1]:
                sub = submodel(fields_of(parent).get(part).annotation) if parent and part in fields_of(parent) else None
                parent = sub
            choices = list(fields_of(parent)) if parent else []
            raise ScenarioError(file, path, f"unknown parameter{suggest(loc[-1], choices)}; allowed: "
                                f"{', '.join(choices)}") from None
        given = err.get("input")
        if err["type"] == "missing":
            raise ScenarioError(file, path, "required parameter is missing") from None
        raise ScenarioError(file, path + where, f"got {show(given)}; {allowed_from_error(err)}") from None


def load(path: str | Path, *, trials: int | None = None, precision: float | None = None,
         seed: int | None = None, force: bool = False, sweep: dict[str, list] | None = None,
         trials_guard: bool = True) -> Scenario:
    """Read, validate and expand a scenario file. Raises :class:`ScenarioError`.

    ``trials_guard``: check the trial budget (:func:`check_trial_budget`, over the sweep's
    points); ``analyzer exact`` turns it off (it runs no trials), and the commands that run
    each point several times (compare, sensitivity, matchup, solve) check their own totals.

    ``sweep`` replaces the file's sweep (``analyzer matchup`` / ``solve`` place contenders and
    solved values through it, validated like the file's own)."""
    path = Path(path)
    file = str(path)
    if not _is_utf8(file) or not _is_utf8(_absolute(path)):
        # an undecodable byte in the file or folder name (Linux hands it over as a lone
        # surrogate) cannot be drawn, written into report.html nor given to pyarrow (the
        # manifest records the absolute path): refused here, before any trial, not after all
        from analyzer.core.paths import printable
        raise ScenarioError(printable(path), "", f"the path {printable(_absolute(path))} is not valid "
                            f"UTF-8 (undecodable bytes in a file or folder name); rename it to a UTF-8 name")
    try:
        text = read_text(path)
    except DataError as e:
        raise ScenarioError(file, "", str(e).split(": ", 1)[1]) from None
    try:
        raw = read_yaml(path)
    except DataError as e:
        raise ScenarioError(file, "", str(e).split(": ", 1)[1]) from None
    return _scenario(path, text, raw, trials=trials, precision=precision, seed=seed, force=force, sweep=sweep,
                     trials_guard=trials_guard)


def load_dict(doc: dict, *, directory: str | Path = ".", name: str = "scenario.yaml", trials: int | None = None,
              precision: float | None = None, seed: int | None = None, force: bool = False,
              trials_guard: bool = True) -> Scenario:
    """A scenario from a mapping, as if it were the file ``directory/name`` (no file is read or
    written): validated exactly as :func:`load` validates a file; data files beside it are looked
    up in ``directory``; its text (recorded in manifests, hashed into the run id) is the mapping
    as YAML. Errors name ``directory/name`` as the file. A run of it cannot be resumed (no file
    to reload)."""
    import yaml
    path = Path(directory) / name
    if not isinstance(doc, dict):
        raise ScenarioError(str(path), "", f"a scenario must be a mapping with keys game, question, params...; "
                            f"got {type(doc).__name__}")
    try:
        text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    except yaml.YAMLError as e:
        raise ScenarioError(str(path), "", f"cannot be written as YAML: {e}") from None
    return _scenario(path, text, yaml.safe_load(text), trials=trials, precision=precision, seed=seed, force=force,
                     sweep=None, trials_guard=trials_guard)


def _scenario(path: Path, text: str, raw: Any, *, trials, precision, seed, force, sweep, trials_guard) -> Scenario:
    """Validate and expand the parsed scenario ``raw`` (of file ``path``, whose text is ``text``)."""
    file = str(path)
    if not isinstance(raw, dict):
        raise ScenarioError(file, "", f"a scenario must be a YAML mapping with keys game, question, "
                            f"params...; got {type(raw).__name__}")
    problem = version_problem(raw, SCENARIO_FILE)
    if problem:         # first: a newer format may have keys this version does not know
        raise ScenarioError(file, SCENARIO_FILE.key, problem)
    # command-line overrides pass through the same model as the file's own values
    overrides = {k: v for k, v in (("seed", seed), ("trials", trials), ("precision", precision)) if v is not None}
    if "trials" in overrides:
        raw = {k: v for k, v in raw.items() if k != "precision"}
    if "precision" in overrides:
        raw = {k: v for k, v in raw.items() if k != "trials"}
    given = raw
    raw = {**raw, **overrides, **({"sweep": sweep} if sweep is not None else {})}
    try:
        spec = ScenarioFile.model_validate(raw)
        refuse_coercion(file, {k: v for k, v in raw.items() if k not in ("params", "sweep", "plots", "rules")},
                        spec, "")
    except ValidationError as e:
        err = e.errors()[0]
        loc = loc_path(tuple(err["loc"]))
        if err["loc"] and err["loc"][0] in overrides and given.get(err["loc"][0]) != overrides[err["loc"][0]]:
            raise ScenarioError(file, f"--{err['loc'][0]} (command line)",
                                f"got {show(err.get('input'))}; {allowed_from_error(err)}") from None
        if err["type"] == "extra_forbidden":
            raise ScenarioError(file, loc, f"unknown key{suggest(err['loc'][-1], ScenarioFile.model_fields)}; "
                                f"allowed: {', '.join(ScenarioFile.model_fields)}") from None
        if err["type"] == "missing":
            raise ScenarioError(file, loc, "required key is missing") from None
        raise ScenarioError(file, loc, f"got {show(err.get('input'))}; {allowed_from_error(err)}") from None

    if spec.name is not None and len(spec.name) > MAX_NAME_CHARS:
        raise ScenarioError(file, "name", f"{len(spec.name):,} characters; at most {MAX_NAME_CHARS} (the name "
                            f"titles every plot and names the run folder): use description: for longer text")
    if not registry.has_game(spec.game):
        games = registry.games_with_questions()
        raise ScenarioError(file, "game", f"unknown game {spec.game!r}{suggest(spec.game, games)}; "
                            f"allowed: {', '.join(games)}")
    available = registry.questions_of(spec.game)
    question = registry.get(spec.game, spec.question)
    if question is None:
        names = [q.name for q in available]
        raise ScenarioError(file, "question", f"unknown question {spec.question!r} for game {spec.game}"
                            f"{suggest(spec.question, names)}; allowed: {', '.join(names)}")

    if spec.trials is None and spec.precision is None:
        spec.trials = DEFAULT_TRIALS
    n_points = math.prod(len(v) for v in spec.sweep.values()) if spec.sweep else 1
    if n_points > MAX_SWEEP_POINTS:
        raise ScenarioError(file, "sweep", f"{n_points:,} points (the product of the swept lists' lengths); at most "
                            f"{MAX_SWEEP_POINTS:,}: split the sweep into several files")
    if trials_guard:        # a precision run counts at max_trials: the most it can run
        check_trial_budget(file, "trials" if spec.precision is None else "max_trials",
                           planned_trials_per_point(spec), n_points, "points", force)
    if spec.precision_metric is not None and spec.precision is None:
        raise ScenarioError(file, "precision_metric", "only meaningful together with precision")

    try:
        params_raw, param_placeholders = unwrap(copy.deepcopy(spec.params), "params", source=file)
        sweep_values = {k: [unwrap(v, f"params.{k}", source=file) for v in spec.sweep[k]] for k in spec.sweep}
    except DataError as e:
        raise ScenarioError(file, "", str(e).split(": ", 1)[1]) from None
    rules = validate_rules(file, question, spec.rules)
    if spec.contenders is not None or spec.matchup is not None or spec.solve is not None:
        check_balance_keys(file, spec, question)

    for key in spec.sweep:
        if key.startswith("rules."):
            validate_rules(file, question, {key[6:]: spec.sweep[key][0]}, where="sweep.rules")
            for v in spec.sweep[key]:
                validate_rules(file, question, {key[6:]: v}, where=f"sweep.{key}")
        else:
            check_param_path(file, question.Params, key, f"sweep.{key}")

    keys = list(spec.sweep)
    # a swept value may itself be a labelled placeholder ({ph: 3, note: ...}): sweep_values above
    points: list[SweepPoint] = []
    for index, combo in enumerate(itertools.product(*(sweep_values[k] for k in keys))):
        p = copy.deepcopy(params_raw)
        point_rules = dict(rules)
        swept = {k: value for k, (value, _) in zip(keys, combo)}
        for k, v in swept.items():
            if k.startswith("rules."):
                point_rules[k[6:]] = str(v)
            else:
                set_path(p, k, v)
        where = "" if not swept else f" (at sweep point {', '.join(f'{k}={show(v)}' for k, v in swept.items())})"
        params = _validate_params(file, question, p, where)
        replaced = [f"params.{k}" for k in keys if not k.startswith("rules.")]
        used = [ph for ph in param_placeholders if not any(is_under(ph.path, r) for r in replaced)]
        for _, found in combo:
            used.extend(found)
        used.extend(param_default_placeholders(params))
        points.append(SweepPoint(index, swept, params, point_rules, used))
    # precision_metric is checked against the prepared metrics by the runner
    return Scenario(path, text, spec, question, points)


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _absolute(path: Path) -> str:
    import os
    try:
        return os.path.abspath(path)
    except OSError:                 # no working folder to name: the path as given
        return str(path)


def expand_targets(targets: list[str]) -> list[Path]:
    """Files, directories (all ``*.yaml`` below, recursively, skipping ``data``/``fleets``
    style folders that hold game data) and globs -> scenario file paths, sorted."""
    out: list[Path] = []
    for t in targets:
        p = Path(t)
        if p.is_dir():
            for f in sorted(p.rglob("*.yaml")):
                if not set(f.relative_to(p).parts[:-1]) & DATA_FOLDERS and _is_scenario(f):
                    out.append(f)
        elif any(ch in t for ch in "*?["):
            out.extend(sorted(Path(f) for f in glob.glob(t)))     # absolute patterns too
        else:
            out.append(p)
    return out


#: Folders under ``scenarios/<game>/`` that hold game data, not scenarios.
DATA_FOLDERS = {"data", "fleets", "campaigns", "decks"}


def _is_scenario(path: Path) -> bool:
    """A YAML file in a scenario folder is a scenario when it names a game and a question
    (game data such as ``scenarios/<game>/gun_arcs.yaml`` lives beside scenarios)."""
    try:
        raw = read_yaml(path)
    except DataError:
        return True  # let the loader report the malformed file
    return isinstance(raw, dict) and "game" in raw and "question" in raw
