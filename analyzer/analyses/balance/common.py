"""Balance tools, shared part: the ``contenders:`` / ``matchup:`` / ``solve:`` keys of a
scenario file, the Bradley–Terry fit, batch-means intervals and the run-folder helpers that
``analyzer matchup`` (:mod:`analyzer.analyses.balance.matchup`) and ``analyzer solve`` (:mod:`analyzer.analyses.balance.solve`)
share. See docs/balance.md.

A matchup or solve file is a normal scenario (its ``params`` are one runnable point, which
``analyzer run`` runs as it would any scenario, ignoring these keys) plus:

- ``contenders:`` a list of named parameter overrides: ``{name, side}`` (seated: the value
  placed at each seat of a two-sided question, e.g. a fleet at ``side_a`` / ``side_b``) or
  ``{name, params: {dotted.path: value}}`` (field: any question; contenders compared trial by
  trial on one metric), each with an optional ``cost``;
- ``matchup:`` options (seats, outcome metrics, score metric, reference, bootstrap size);
- ``solve:`` defaults of ``analyzer solve`` (metric, target, param, range, tol).

This module imports no numba, pandas or matplotlib (the scenario loader checks the keys).
"""
from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from analyzer.core.errors import ScenarioError, show, suggest
from analyzer.core.stats import t_quantile_975

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
    from analyzer.core.scenario import _allowed_from_error, _loc_path

    err = e.errors()[0]
    loc = tuple(err["loc"])
    path = where + ("." + _loc_path(loc) if loc else "")
    if err["type"] == "extra_forbidden":
        return ScenarioError(file, path, "unknown key; allowed: see docs/balance.md")
    if err["type"] == "missing":
        return ScenarioError(file, path, "required key is missing")
    return ScenarioError(file, path, f"got {show(err.get('input'))}; {_allowed_from_error(err)}")


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
    from analyzer.core.scenario import _check_param_path, _set_path, refuse_coercion

    if spec.solve is not None:
        s = _model(file, "solve", SolveSpec, spec.solve)
        if s.param is not None:
            _check_param_path(file, question.Params, s.param, "solve.param")
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
            _check_param_path(file, question.Params, seat, f"matchup.seats[{k}]")
    from analyzer.core.gamedata import DataError, unwrap
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
                _check_param_path(file, question.Params, path, f"{where}.params.{path}")
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
            _set_path(params, p, v)
        try:
            model = question.Params.model_validate(params)
            refuse_coercion(file, params, model, "params")
        except ValidationError as e:
            raise _pydantic_error(file, f"{where} (as params)", e) from None


# ----------------------------------------------------------------------------- statistics
def batch_ci(sums: np.ndarray, sizes: np.ndarray) -> tuple[float, float, float, float]:
    """(mean, se, ci_low, ci_high) of ``sum(sums) / sum(sizes)`` from independent batches
    (the ratio estimator and batch-means variance of :class:`analyzer.core.stats.PairedAccumulator`,
    Student t with k - 1 degrees of freedom)."""
    sums = np.asarray(sums, np.float64)
    sizes = np.asarray(sizes, np.float64)
    n = sizes.sum()
    mean = float(sums.sum() / n)
    k = sums.shape[0]
    if k < 2:
        return mean, math.nan, math.nan, math.nan
    resid = sums - sizes * mean
    se = math.sqrt(float((resid * resid).sum()) * k / (k - 1)) / n
    t = t_quantile_975(k - 1)
    return mean, se, mean - t * se, mean + t * se


def ford_connected(wins: np.ndarray) -> bool:
    """Ford's condition for the Bradley–Terry MLE to exist: for every split of the contenders
    in two groups, each group won something against the other (the "beat" graph is strongly
    connected)."""
    n = wins.shape[0]
    beat = (wins > 0) & ~np.eye(n, dtype=bool)
    for graph in (beat, beat.T):
        seen = np.zeros(n, bool)
        seen[0] = True
        frontier = [0]
        while frontier:
            nxt = np.nonzero(graph[frontier].any(axis=0) & ~seen)[0]
            seen[nxt] = True
            frontier = list(nxt)
        if not seen.all():
            return False
    return True


def bradley_terry(wins: np.ndarray, games: np.ndarray, *, tol: float = 1e-12,
                  max_iter: int = 500) -> tuple[np.ndarray, np.ndarray]:
    """Maximum-likelihood Bradley–Terry strengths: P(i beats j) = 1 / (1 + exp(theta_j - theta_i)).

    ``wins[i, j]``: what i scored against j (a draw counts 1/2), ``games[i, j] = games[j, i]``:
    how many times they met. Newton's method on the log-likelihood with step halving, from
    theta = 0; the likelihood is invariant to adding a constant, so theta sums to zero (the
    Newton system is solved with the all-ones direction pinned). Returns (theta, Fisher
    covariance of theta under that constraint: the pseudo-inverse of the observed information,
    which assumes independent games)."""
    n = wins.shape[0]
    w = np.asarray(wins, np.float64) * (1 - np.eye(n))
    g = np.asarray(games, np.float64) * (1 - np.eye(n))
    won = w.sum(axis=1)
    ones = np.ones((n, n)) / n

    def loglik(th):
        d = th[:, None] - th[None, :]
        return float((w * -np.logaddexp(0, -d)).sum())

    theta = np.zeros(n)
    ll = loglik(theta)
    for _ in range(max_iter):
        p = 1 / (1 + np.exp(theta[None, :] - theta[:, None]))
        grad = won - (g * p).sum(axis=1)
        info = np.diag((g * p * p.T).sum(axis=1)) - g * p * p.T
        step = np.linalg.solve(info + ones, grad)
        t = 1.0
        while True:
            cand = theta + t * step
            cand -= cand.mean()
            new = loglik(cand)
            if new >= ll - 1e-12 or t < 1e-8:
                break
            t /= 2
        done = np.max(np.abs(cand - theta)) < tol
        theta, ll = cand, new
        if done:
            break
    p = 1 / (1 + np.exp(theta[None, :] - theta[:, None]))
    info = np.diag((g * p * p.T).sum(axis=1)) - g * p * p.T
    return theta, np.linalg.pinv(info)


def bootstrap_counts(n_batches: int, resamples: int, seed: int) -> np.ndarray:
    """``[resample, batch]``: how often each batch is drawn (batches resampled with replacement)."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_batches, size=(resamples, n_batches))
    return np.stack([np.bincount(d, minlength=n_batches) for d in draws]) if resamples else \
        np.zeros((0, n_batches), np.int64)


# ----------------------------------------------------------------------------- run folders
def manifest(sc, *, kind: str, trials: int, wall_seconds: float, threads: int, data_files: list[dict],
             extra: dict | None = None) -> dict:
    """The ``manifest.json`` of a matchup or solve folder: what the run folder conventions record
    (scenario text and hash, seed, versions, git commit, threads, wall time, data files)."""
    import datetime as dt
    import platform

    import numba

    from analyzer import __version__
    from analyzer.outputs.writer import git_commit
    return {"status": "complete", "kind": kind, "scenario_file": str(sc.path), "scenario_sha256": sc.digest,
            "scenario_text": sc.text, "seed": sc.spec.seed, "version": __version__, "git_commit": git_commit(),
            "threads": threads, "wall_seconds": wall_seconds, "trials": trials,
            "trials_per_second": trials / wall_seconds if wall_seconds > 0 and trials else None,
            "python": platform.python_version(), "numpy": np.__version__, "numba": numba.__version__,
            "created_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "data_files": data_files, **(extra or {})}


def report_page(title: str, subtitle: str, sections: list[str], run_dir, doc: dict, manifest_doc: dict) -> str:
    """A self-contained ``report.html`` (the run report's page, figures inlined) for a matchup or
    solve folder: the title, the placeholder warning, the figures, ``sections`` (HTML), the
    placeholders and example values, notes and provenance."""
    from analyzer.outputs import report as r

    parts = [f"<h1>{r._e(title)}</h1>", f"<p class=\"sub\">{r._e(subtitle)}</p>"]
    if doc.get("placeholders"):
        parts.append(f"<div class=\"warn\"><b>{len(doc['placeholders'])} placeholder value(s)</b> were used: values "
                     "the rule source does not give (listed below). These results are only as good as those "
                     "values.</div>")
    parts.append("<h2>Plots</h2>" + r._figures(run_dir))
    parts += sections
    parts.append(r._values_section("Placeholders used", doc.get("placeholders", []), examples=False))
    parts.append(r._values_section("Values derived from worked examples", doc.get("example_values", []),
                                   examples=True))
    if doc.get("notes"):
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{r._e(n)}</li>" for n in doc["notes"]) + "</ul>")
    parts.append("<h2>Provenance</h2>" + r._table(["", ""], r._provenance_rows(manifest_doc)))
    if manifest_doc.get("scenario_text"):
        parts.append(f"<details><summary>Scenario file</summary><pre>{r._e(manifest_doc['scenario_text'])}</pre>"
                     "</details>")
    return r._page(title, "".join(parts))


def footer(fig, doc: dict, mode: str, where: str, metric: dict | None = None) -> None:
    """The provenance footer of :func:`analyzer.outputs.plots.footer` (red when placeholders were used)
    under a balance figure; ``doc`` is the matchup / solve document, saved as ``where``;
    ``metric`` (``{name, unaffected_by}``): count only the placeholders it can depend on."""
    from analyzer.outputs.plots import footer as plots_footer

    plots_footer(fig, {"game": doc["game"], "question": doc["question"], "seed": doc["seed"], "mode": mode,
                       "placeholders": doc.get("placeholders", []), "example_values": doc.get("example_values", []),
                       "metrics": [metric] if metric else []}, [metric["name"]] if metric else None)
    for text in list(fig.texts) + [t for ax in fig.axes for t in ax.texts]:
        if "summary.json" in text.get_text():         # the footer names the file that lists them
            text.set_text(text.get_text().replace("summary.json", where))
