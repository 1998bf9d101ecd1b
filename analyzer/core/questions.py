"""The question interface and registry.

A *question* is one kind of thing a user asks about a game ("one attack", "a squadron
duel", "escort detection"). Each game module defines its questions as subclasses of
:class:`Question` and registers them with :func:`register`; the scenario loader, the
sweep runner, the CLI and the outputs only ever talk to this interface.
"""
from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar

import numpy as np
from pydantic import BaseModel

from analyzer.core.gamedata import Placeholder
from analyzer.core.paths import shipped_scenarios


#: The shipped scenarios and game data: inside the installed package (wheels and
#: ``pip install .``, copied there by setup.py), or the repository's ``scenarios/`` (a source
#: checkout or an editable install). A data file beside a scenario overrides the shipped one
#: (:meth:`Context.find`).
SCENARIO_ROOT = shipped_scenarios()


@dataclass(frozen=True)
class Metric:
    """A per-trial quantity. Values reach the kernel as integers in units of ``1/scale``."""

    name: str
    label: str
    kind: str = "count"  # "probability" (0/1 per trial) | "count" | "value"
    scale: int = 1
    distribution: bool = True  # whether outputs keep its full distribution
    #: placeholder paths (or path prefixes) that cannot change this metric: a figure of it
    #: does not list them (e.g. the HP a critical deals does not change P(hits >= DR))
    unaffected_by: tuple[str, ...] = ()
    #: what the metric measures and of which game entity (fleet, gun, allocation, pattern, unit),
    #: the ``quantity`` / ``entity`` columns of ``answers.parquet``; unset, a name ``q.e`` reads as
    #: quantity ``q`` of entity ``e`` and any other name as a quantity of no entity
    quantity: str | None = None
    entity: str | None = None
    #: further coordinates of the metric as ``answers.parquet`` columns, e.g. a B-17 cell's
    #: ``(("clock", "10:30"), ("altitude", "high"))``
    coords: tuple[tuple[str, object], ...] = ()

    @property
    def is_probability(self) -> bool:
        return self.kind == "probability"


def quantity_and_entity(metric: Metric) -> tuple[str, str | None]:
    """What ``metric`` measures and of which entity: its declared ``quantity`` / ``entity``, else
    ``vp.fleet_a`` -> ``("vp", "fleet_a")`` and ``p_hit`` -> ``("p_hit", None)``. A ranking's option
    is the metric of quantity ``Ranking.metric`` and entity the option, or the metric named as the
    option (``answers.parquet``'s rank columns, :func:`analyzer.core.ranking.option_metric`)."""
    if metric.quantity is not None or metric.entity is not None:
        return metric.quantity or metric.name, metric.entity
    quantity, dot, entity = metric.name.partition(".")
    return (quantity, entity) if dot else (metric.name, None)


@dataclass(frozen=True)
class RuleOption:
    """A named reading of an ambiguous rule; ``values[0]``-style docs live in ``doc``."""

    name: str
    values: tuple[str, ...]
    default: str
    doc: str
    source: str = ""  # where the ambiguity is stated, e.g. "docs/models/<game>.md A4"
    #: values kept to compare against that are NOT readings of the source (what-ifs): every
    #: run that uses one says so in its notes
    what_if: tuple[str, ...] = ()


@dataclass(frozen=True)
class ValueGroup:
    """A table, deck or sheet block that ``analyzer sensitivity`` varies as ONE variant: every
    number of a placeholder or example value the point uses whose data path matches one of
    ``paths`` moves together (one row "down", one row "up"), the question being "what if the
    whole table were different", not which of its cells matters.

    A pattern is a data path as placeholders are named (``events.cards``,
    ``campaign_map.areas[*].contact_table[*][0]``): ``[*]`` stands for any list index, ``*`` for
    any key, and a pattern covers every value at or below it (numbers inside a list- or
    dict-valued placeholder included). ``scale``: None moves each number by the single-value
    step (integers by 1, other numbers by 10%); a factor ``f`` multiplies every number by ``1/f``
    and by ``f`` (integers rounded to the nearest)."""

    name: str
    paths: tuple[str, ...]
    doc: str = ""
    scale: float | None = None


@dataclass(frozen=True)
class ExactMetric:
    """An exact answer: the mean and (optionally) the whole distribution."""

    mean: float
    values: np.ndarray | None = None
    probs: np.ndarray | None = None


KernelFn = Callable[..., tuple[np.ndarray, np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class PointsCost:
    """A contender's points cost as its game's data give it (:attr:`Question.points_cost`):
    ``points`` (None when the data give none: ``how`` says why), how it was read, and the
    placeholders (``Placeholder.as_dict()``) it rests on."""

    points: float | None
    how: str
    placeholders: tuple[dict, ...] = ()


@dataclass(frozen=True)
class Counter:
    """One column of a kernel's per-chunk ``counters``: what it counts and whether a
    non-zero total is worth a note in every output (a cap hit, a clip, a rule cut)."""

    name: str
    note: str = ""  # the note's text before ": N"; empty = recorded, never noted


@dataclass(frozen=True)
class ExactAnswer(Mapping):
    """What an exact mode returns when it has something to say beside the metrics (e.g.
    the probability mass an explosion series left out). Reads like the dict of metrics;
    a plain dict is the same answer with no notes."""

    metrics: dict[str, ExactMetric]
    notes: tuple[str, ...] = ()

    def __getitem__(self, name: str) -> ExactMetric:
        return self.metrics[name]

    def __iter__(self):
        return iter(self.metrics)

    def __len__(self) -> int:
        return len(self.metrics)


@dataclass(frozen=True)
class Prepared:
    """A validated sweep point compiled to arrays: the kernel-result contract.

    The runner calls ``kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins,
    args)``, which returns ``(hist[chunk, metric, bin], moments[chunk, metric, N_MOMENTS],
    counters[chunk, k])`` (:mod:`kernels.driver`). The first ``len(metrics)`` metric
    columns are the question's (a kernel may record more that a point does not report);
    column ``k`` of the counters means ``counters[k]``, summed by the runner and noted
    when non-zero. ``derived_notes(summaries, exact)``, when given, runs after the point
    is summarised (rankings and other notes computed from the final metrics).

    Rankings (:mod:`analyzer.core.ranking`): ``paired_groups`` declares options whose per-trial
    values the kernel also records pairwise, as counter columns (declared in ``counters`` like any
    other, with no note; :func:`kernels.driver.add_pair_products`): the runner turns each group's
    sums into :class:`~analyzer.core.ranking.PairedDifferences` (the first metric of the group
    names it; an exact run passes none: rank on ``PairedDifferences.exact``). ``derived_ranking(summaries, exact,
    pairs, trials)``
    returns the point's :class:`~analyzer.core.ranking.Ranking` list (``PointResult.rankings``);
    with it, ``derived_notes`` is called as ``derived_notes(summaries, exact, rankings)``.
    Nothing here changes after ``prepare`` returns.
    """

    metrics: list[Metric]
    n_bins: int
    kernel: KernelFn | None = field(default=None, kw_only=True)
    args: tuple = field(default=(), kw_only=True)
    counters: tuple[Counter, ...] = field(default=(), kw_only=True)
    exact: Callable[[], "dict[str, ExactMetric] | ExactAnswer"] | None = field(default=None, kw_only=True)
    placeholders: tuple[Placeholder, ...] = field(default=(), kw_only=True)
    notes: tuple[str, ...] = field(default=(), kw_only=True)
    derived_notes: Callable[..., list[str]] | None = field(default=None, kw_only=True)
    paired_groups: tuple = field(default=(), kw_only=True)  # tuple[ranking.PairedGroup, ...]
    derived_ranking: Callable[[dict, bool, dict, int], list] | None = field(default=None, kw_only=True)
    #: per entity (as in :attr:`Metric.entity`) the structured facts a table row about it carries,
    #: e.g. ``{"fleet_a": {"cost": 30.0, "budget": 32.0}}``, and under ``None`` the point's own
    #: (``{None: {"cost": 95}}``): columns of ``answers.parquet``
    entity_columns: dict[str, dict] = field(default_factory=dict, kw_only=True)
    data_files: tuple[dict, ...] = field(default=(), kw_only=True)  # set by the runner from Context

    def run_kernel(self, seed: int, key: int, chunk_lo: int, chunk_hi: int, chunk_size: int,
                   n_trials: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One batch of chunks: the kernel's arrays cut to this point's metrics."""
        hist, moments, counters = self.kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials,
                                              self.n_bins, self.args)
        m = len(self.metrics)
        return hist[:, :m], moments[:, :m], counters


@dataclass
class Context:
    """What a question may read besides its parameters: rule options and data files."""

    rules: dict[str, str]
    scenario_dir: Path
    game_dir: Path
    scenario_file: Path | None = None  # for error messages that must name the file
    placeholders: list[Placeholder] = field(default_factory=list)
    #: every data file this point read: {"path", "origin" (scenario|shipped), "sha256"}
    data_files: list[dict] = field(default_factory=list)

    def find(self, relpath: str) -> Path:
        """A game data file: relative to the scenario's folder first, then the game's.

        The file found is recorded in :attr:`data_files` with its SHA-256, so a run's
        manifest says which data (a copy beside the scenario, or the shipped one) made it.
        """
        from analyzer.core.gamedata import DataError, file_sha256

        try:       # a globbed name (fleets/*.yaml) with an undecodable byte: refused before any trial
            str(relpath).encode("utf-8")
        except UnicodeEncodeError:
            from analyzer.core.paths import printable
            raise DataError(f"{printable(relpath)}: the file name is not valid UTF-8 (undecodable bytes); "
                            f"rename it to a UTF-8 name") from None
        for origin, base in (("scenario", self.scenario_dir), ("shipped", self.game_dir)):
            p = (Path(base) / relpath).resolve()
            if p.is_file():
                entry = {"path": Path(relpath).as_posix(), "origin": origin, "sha256": file_sha256(p)}
                if entry not in self.data_files:
                    self.data_files.append(entry)
                return p
        raise DataError(f"{relpath}: data file not found in {self.scenario_dir} or {self.game_dir}")

    def load(self, relpath: str, prefix: str | None = None) -> tuple[Any, list[Placeholder]]:
        """(plain data, every placeholder in the file) without recording any as used.

        Questions that read only part of a file record what they read with :meth:`use`,
        so outputs and ``strict`` see just the placeholders a point depends on.
        Placeholder paths start with ``prefix`` (default: the file's stem).
        """
        from analyzer.core.gamedata import load_data_cached

        return load_data_cached(self.find(relpath), prefix if prefix is not None else Path(relpath).stem)

    def use(self, placeholders: list[Placeholder], under: str | None = None) -> None:
        """Record the placeholders at or below the data path ``under`` (all when None)."""
        from analyzer.core.gamedata import is_under

        seen = {(p.path, p.source, p.kind) for p in self.placeholders}
        for ph in placeholders:
            key = (ph.path, ph.source, ph.kind)
            if key not in seen and (under is None or is_under(ph.path, under)):
                seen.add(key)
                self.placeholders.append(ph)

    def data(self, relpath: str, prefix: str | None = None) -> Any:
        """Load a game data file and record every placeholder in it as used."""
        value, placeholders = self.load(relpath, prefix)
        self.use(placeholders)
        return value


class Question:
    """Base class of every question. Subclasses set the class attributes and ``prepare``."""

    game: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    Params: ClassVar[type[BaseModel]]
    rule_options: ClassVar[tuple[RuleOption, ...]] = ()
    #: tables, decks and sheet blocks ``analyzer sensitivity`` varies each as one variant (a game's data may
    #: name its own in ``data/sensitivity_groups.yaml``, :mod:`analyzer.core.value_groups`; one of the same
    #: name replaces a group declared here)
    value_groups: ClassVar[tuple[ValueGroup, ...]] = ()
    primary_metric: ClassVar[str]
    supports_exact: ClassVar[bool] = False
    #: False when the question's own figures replace the generic ones (see analyzer.outputs.plots)
    default_plots: ClassVar[bool] = True
    #: ``analyzer matchup``'s fair-cost hooks (docs/balance.md); None: the question has none.
    #: ``points_cost(sc, values) -> PointsCost``: a contender's cost from the game's data when its
    #: entry gives no ``cost:`` (``values``: its side in a seated matchup, its params in a field one);
    #: ``scale_force(sc, side, copies) -> side``: ``copies`` copies of a seated contender's force.
    points_cost: ClassVar[Callable[..., PointsCost] | None] = None
    scale_force: ClassVar[Callable[..., dict] | None] = None
    #: why the fair cost cannot scale this question's forces (said in place of the generic reason)
    not_scalable: ClassVar[str] = ""
    #: ``analyzer search``'s option space (docs/balance.md "Search"): ``search_space(sc, so_plans)
    #: -> Space`` (:class:`analyzer.analyses.search.Space`); None: the question has no options to race.
    search_space: ClassVar[Callable[..., Any] | None] = None

    def prepare(self, params: BaseModel, ctx: Context) -> Prepared:
        raise NotImplementedError

    def option_params(self, params: BaseModel, options: list[str]) -> BaseModel | None:
        """The point's parameters restricted to the ranked ``options`` (names as the point's
        :class:`~analyzer.core.ranking.Ranking` gives them, in the question's order), so that a run
        of the returned parameters plays exactly those options and reports each under the same
        metric names: what a search space races and what the fresh-stream re-estimation of a
        ranking's winner plays (docs/balance.md "Rankings", "Search"). None: the question cannot
        play a subset of its options (the default)."""
        return None

    def rank_points(self, results: list) -> None:
        """Rankings whose options are the sweep's points (the units of a ``points_efficiency``
        sweep), once every point is summarised (:func:`analyzer.api.run`, :func:`analyzer.api.exact`):
        a question that has them appends to each point's ``PointResult.rankings`` the
        :class:`~analyzer.core.ranking.Ranking` with ``own`` naming that point's option, and may add
        notes. Default: none."""

    def plots(self, meta: dict, points, dists) -> list:
        """Question-specific figures from a run's tables (``points``/``dists`` DataFrames,
        ``meta`` from ``plotmeta.json``): a list of ``(file stem, matplotlib Figure)``."""
        return []


_REGISTRY: dict[tuple[str, str], Question] = {}


def register(cls: type[Question]) -> type[Question]:
    """Class decorator: make a question available to scenarios and the CLI."""
    key = (cls.game, cls.name)
    if key in _REGISTRY and type(_REGISTRY[key]) is not cls:
        raise RuntimeError(f"question {key} registered twice")
    _REGISTRY[key] = cls()
    return cls


_LOADED = False


def load_games() -> None:
    """Import every module and package of :mod:`analyzer.games` once (each registers its
    questions on import): the games are whatever is there, no list to keep."""
    global _LOADED
    if _LOADED:
        return
    import analyzer.games as games
    for info in pkgutil.iter_modules(games.__path__):
        importlib.import_module(f"analyzer.games.{info.name}")
    _LOADED = True


def load_game(game: str) -> None:
    """Import the one game a scenario names: ``analyzer.games.<game>`` when there is such a
    module (a run need not import the other games: CLI start time), else every game."""
    if _LOADED or any(g == game for g, _ in _REGISTRY):
        return
    if game.isidentifier() and importlib.util.find_spec(f"analyzer.games.{game}") is not None:
        importlib.import_module(f"analyzer.games.{game}")
    if not any(g == game for g, _ in _REGISTRY):
        load_games()


def games_with_questions() -> list[str]:
    load_games()
    return sorted({g for g, _ in _REGISTRY})


def has_game(game: str) -> bool:
    load_game(game)
    return any(g == game for g, _ in _REGISTRY)


def questions_of(game: str) -> list[Question]:
    load_game(game)
    return [q for (g, _), q in sorted(_REGISTRY.items()) if g == game]


def get(game: str, question: str) -> Question | None:
    load_game(game)
    return _REGISTRY.get((game, question))
