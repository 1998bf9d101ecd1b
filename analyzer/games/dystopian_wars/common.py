"""Small helpers shared by the Dystopian Wars questions: kernel tables and exact-metric
constructors."""
from __future__ import annotations

import numpy as np

from analyzer.core.exact import EXPLOSION_TAIL
from analyzer.core.questions import ExactMetric
from kernels import dice as kd

#: largest pool a parameter may ask for (validation at the edge; not a rule)
MAX_DICE = 500


def table(faces: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Grouped kernel table of a face table (:func:`kernels.dice.pool_table`)."""
    return kd.pool_table(*faces)


def stacked_tables(face_list: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Several face tables as ``(value[k, g, idx], explodes[k, g, idx], group_n[g])``, so a
    kernel picks table ``k`` by index (one per target, or one per to-hit number)."""
    tabs = [kd.pool_table(*f) for f in face_list]
    return (np.ascontiguousarray(np.stack([t[0] for t in tabs])),
            np.ascontiguousarray(np.stack([t[1] for t in tabs])), tabs[0][2])


def pmf_metric(probs: np.ndarray) -> ExactMetric:
    probs = np.asarray(probs, dtype=float)
    values = np.arange(probs.shape[0])
    return ExactMetric(float(values @ probs), values, probs)


def bernoulli_metric(p: float) -> ExactMetric:
    p = float(min(max(p, 0.0), 1.0))
    return ExactMetric(p, np.array([0, 1]), np.array([1.0 - p, p]))


def truncation_note(mass: float) -> str:
    return (f"exact: explosion series summed until a longer chain has probability < {EXPLOSION_TAIL:g}; "
            f"mass left out {mass:.2e}")
