"""The ``contenders:`` / ``matchup:`` / ``solve:`` sections of a scenario file (docs/balance.md):
their models and the checks :func:`analyzer.core.scenario.load` runs on them. They are part of the
file format (``analyzer schema`` describes them); ``analyzer matchup`` / ``analyzer solve``
(:mod:`analyzer.analyses.balance`) read them.

A matchup or solve file is a normal scenario (its ``params`` are one runnable point, which
``analyzer run`` runs as it would any scenario, ignoring these keys) plus:

- ``contenders:`` a list of named parameter overrides: ``{name, side}`` (seated: the value
  placed at each seat of a two-sided question, e.g. a fleet at ``side_a`` / ``side_b``) or
  ``{name, params: {dotted.path: value}}`` (field: any question; contenders compared trial by
  trial on one metric), each with an optional ``cost``;
- ``matchup:`` options (seats, outcome metrics, score metric, reference, bootstrap size);
- ``solve:`` defaults of ``analyzer solve`` (metric, target, param, range, tol).
"""
from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from analyzer.core.errors import ScenarioError, show, suggest
from analyzer.core.gamedata import DataError, unwrap
from analyzer.core.params import allowed_from_error, check_param_path, loc_path, refuse_coercion, set_path

#: contender names become column values and plot labels: keep them plain
NAME = r"^[A-Za-z0-9_+\-. ]+$"
#: typo guard: a matchup runs n^2 ordered pairs (seated) or n runs (field)
MAX_CONTENDERS = 40
#: bootstrap resamples of the paired batches for the rating CIs (``matchup.bootstrap``)
DEFAULT_BOOTSTRAP = 200


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ContenderSpec(_Strict):
    name: str = Field(..., min_length=1, max_length=60, pattern=NAME, description="label in tables and plots")
    side: Any = Field(None, description="seated mode: the value placed at each seat path (e.g. a side of a duel)")
    params: dict[str, Any] | None = Field(None, description="field mode: dotted parameter path -> value")
    cost: Any = Field(None, description="points cost (number or {ph: number, note: ...}); default: read from the "
                                        "game where it can (docs/balance.md)")


class MatchupSpec(_Strict):
    mode: Literal["seated", "field"] | None = Field(
        None, description="seated: every ordered pair meets in the question's two seats; field: each contender "
                          "runs alone and pairs are compared trial by trial on one metric (default: seated when "
                          "the question has side_a and side_b parameters)")
    seats: list[str] = Field(["side_a", "side_b"], min_length=2, max_length=2,
                             description="seated: parameter paths of seat A and seat B")
    win: str = Field("p_win_a", description="seated: metric of a seat-A win (0/1 per trial)")
    loss: str = Field("p_win_b", description="seated: metric of a seat-B win (0/1 per trial)")
    draw: str | None = Field("p_draw", description="seated: metric of a draw (counts 1/2); null: none")
    metric: str | None = Field(None, description="field: the per-trial metric compared (default: the question's "
                                                 "primary metric)")
    better: Literal["higher", "lower"] = Field("higher", description="field: which value of metric wins a trial")
    reference: str | None = Field(None, description="the contender ratings and fair costs refer to (default: first)")
    bootstrap: int = Field(DEFAULT_BOOTSTRAP, ge=0, le=10_000, description="bootstrap resamples for rating CIs")
    max_scale: int = Field(6, ge=2, le=50, description="fair cost: most copies of a force tried")


class SolveSpec(_Strict):
    metric: str | None = Field(None, description="metric whose mean crosses the target")
    target: float | None = Field(None, allow_inf_nan=False, description="the threshold")
    param: str | None = Field(None, description="dotted parameter path solved for")
    range: list[float] | None = Field(None, min_length=2, max_length=2, description="[LO, HI] searched")
    tol: float | None = Field(None, gt=0, allow_inf_nan=False, description="continuous parameters: bracket width")


def _pydantic_error(file: str, where: str, e: ValidationError) -> ScenarioError:
    err = e.errors()[0]
    loc = tuple(err["loc"])
    path = where + ("." + loc_path(loc) if loc else "")
    if err["type"] == "extra_forbidden":
        return ScenarioError(file, path, "unknown key; allowed: see docs/balance.md")
    if err["type"] == "missing":
        return ScenarioError(file, path, "required key is missing")
    return ScenarioError(file, path, f"got {show(err.get('input'))}; {allowed_from_error(err)}")


def _model(file: str, where: str, model: type[BaseModel], raw: Any) -> BaseModel:
    if not isinstance(raw, dict):
        raise ScenarioError(file, where, f"got {show(raw)}; allowed: a mapping of {', '.join(model.model_fields)}")
    unknown = [k for k in raw if k not in model.model_fields]
    if unknown:
        raise ScenarioError(file, f"{where}.{unknown[0]}", f"unknown key{suggest(unknown[0], model.model_fields)}; "
                            f"allowed: {', '.join(model.model_fields)}")
    try:
        return model.model_validate(raw)
    except ValidationError as e:
        raise _pydantic_error(file, where, e) from None


def default_mode(question) -> str:
    fields = question.Params.model_fields
    return "seated" if "side_a" in fields and "side_b" in fields else "field"


def matchup_spec(file: str, spec) -> MatchupSpec:
    return _model(file, "matchup", MatchupSpec, spec.matchup or {})


def contenders(file: str, spec) -> list[ContenderSpec]:
    raw = spec.contenders or []
    return [_model(file, f"contenders[{i}]", ContenderSpec, c) for i, c in enumerate(raw)]


def check_balance_keys(file: str, spec, question) -> None:
    """Validate ``contenders`` / ``matchup`` / ``solve`` of a loaded scenario file (called by
    :func:`analyzer.core.scenario.load`): names, modes, parameter paths, and every contender's
    values against the question's parameters. Raises :class:`ScenarioError`."""
    if spec.solve is not None:
        s = _model(file, "solve", SolveSpec, spec.solve)
        if s.param is not None:
            check_param_path(file, question.Params, s.param, "solve.param")
        if s.range is not None and not s.range[0] < s.range[1]:
            raise ScenarioError(file, "solve.range", f"got {s.range}; allowed: [LO, HI] with LO < HI")
    if spec.contenders is None and spec.matchup is None:
        return
    m = matchup_spec(file, spec)
    mode = m.mode or default_mode(question)
    cs = contenders(file, spec)
    if len(cs) < 2 or len(cs) > MAX_CONTENDERS:
        raise ScenarioError(file, "contenders", f"got {len(cs)} contender(s); allowed: 2 to {MAX_CONTENDERS}")
    names = [c.name for c in cs]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ScenarioError(file, "contenders", f"contender names must be unique; repeated: {', '.join(dup)}")
    if m.reference is not None and m.reference not in names:
        raise ScenarioError(file, "matchup.reference", f"got {m.reference!r}{suggest(m.reference, names)}; "
                            f"allowed: {', '.join(names)}")
    if mode == "seated":
        for k, seat in enumerate(m.seats):
            check_param_path(file, question.Params, seat, f"matchup.seats[{k}]")
    for i, c in enumerate(cs):
        where = f"contenders[{i}]"
        if mode == "seated":
            if c.side is None or c.params is not None:
                raise ScenarioError(file, where, f"seated mode ({question.game}/{question.name} has seats "
                                    f"{', '.join(m.seats)}): give side (the value placed at each seat), not params")
            overrides = {seat: c.side for seat in m.seats}
        else:
            if c.params is None or c.side is not None:
                raise ScenarioError(file, where, "field mode: give params (dotted path -> value), not side")
            for path in c.params:
                check_param_path(file, question.Params, path, f"{where}.params.{path}")
            overrides = c.params
        if c.cost is not None:
            try:
                cost, _ = unwrap(c.cost, f"{where}.cost", file)
            except DataError as e:
                raise ScenarioError(file, f"{where}.cost", str(e)) from None
            if isinstance(cost, bool) or not isinstance(cost, (int, float)) or not math.isfinite(cost) or cost <= 0:
                raise ScenarioError(file, f"{where}.cost", f"got {show(c.cost)}; allowed: a number > 0, or "
                                    f"{{ph: number, note: why}}")
        try:
            params, _ = unwrap(dict(spec.params), "params", file)
            values = {p: unwrap(v, p, file)[0] for p, v in overrides.items()}
        except DataError as e:
            raise ScenarioError(file, where, str(e)) from None
        for p, v in values.items():
            set_path(params, p, v)
        try:
            model = question.Params.model_validate(params)
            refuse_coercion(file, params, model, "params")
        except ValidationError as e:
            raise _pydantic_error(file, f"{where} (as params)", e) from None
