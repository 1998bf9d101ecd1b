"""What a run knows about one sweep point once it is summarised: the type the runner returns and
every output (tables, plots, report, checkpoints) reads."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from analyzer.core.questions import Metric
from analyzer.core.scenario import SweepPoint
from analyzer.core.stats import MetricSummary


@dataclass
class PointResult:
    """Everything known about one sweep point after a run (or an exact computation)."""

    point: SweepPoint
    metrics: list[Metric]
    trials: int
    summaries: dict[str, MetricSummary]
    distributions: dict[str, tuple[np.ndarray, np.ndarray]]
    clipped: dict[str, int] = field(default_factory=dict)
    placeholders: list = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    exact: bool = False
    data_files: list[dict] = field(default_factory=list)  # see Context.data_files
    counters: dict[str, int] = field(default_factory=dict)  # kernel counters, summed
    entity_columns: dict[str, dict] = field(default_factory=dict)  # see Prepared.entity_columns
    rankings: list = field(default_factory=list)  # analyzer.core.ranking.Ranking: see Prepared.derived_ranking
