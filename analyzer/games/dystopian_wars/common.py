"""Small helpers shared by the Dystopian Wars questions: kernel tables, the simulate wrapper
that counts cap hits into ``Prepared.notes``, and exact-metric constructors."""
from __future__ import annotations

from typing import Callable

import numpy as np

from analyzer.exact import EXPLOSION_TAIL
from analyzer.questions import ExactMetric
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


class CapNotes:
    """Counts chains and loops cut at their named caps across simulate calls and keeps one
    note per cap in ``notes`` (the runner reads the notes after the last batch)."""

    def __init__(self, notes: list[str], names: tuple[str, ...]):
        self.notes = notes
        self.names = names
        self.counts = np.zeros(len(names), np.int64)
        self._written: list[str] = []

    def add(self, counts: np.ndarray) -> None:
        self.counts += counts
        for text in self._written:
            if text in self.notes:
                self.notes.remove(text)
        self._written = [f"{name}: cut {int(n)} time(s) (the cut dice/rolls are dropped)"
                         for name, n in zip(self.names, self.counts) if n > 0]
        self.notes.extend(self._written)


EXPLOSION_CAP_NOTE = f"explosion chain cap (kernels.dice.EXPLOSION_DEPTH_CAP = {kd.EXPLOSION_DEPTH_CAP} generations)"


def simulate_fn(kernel_call: Callable, notes: list[str], cap_columns: dict[int, str] | None = None):
    """Wrap ``kernel_call(seed, key, lo, hi, chunk_size, n_trials) -> (hist, moments, counters)``
    into the runner's ``simulate``; counter column 0 (explosion caps) and any
    ``cap_columns`` are reported in ``notes`` when hit."""
    cols = {0: EXPLOSION_CAP_NOTE, **(cap_columns or {})}
    caps = CapNotes(notes, tuple(cols.values()))

    def simulate(seed, key, lo, hi, chunk_size, n_trials):
        hist, moments, counters = kernel_call(seed, key, lo, hi, chunk_size, n_trials)
        caps.add(counters[:, list(cols)].sum(axis=0))
        return hist, moments
    return simulate


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
