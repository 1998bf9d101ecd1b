"""Shared fixtures of the ``analyzer search`` tests (tests/test_search.py,
tests/test_search_reestimate.py): synthetic option spaces with planted means, and a small loadout file."""
from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import yaml

from analyzer.analyses import search as sr
from analyzer.core.ranking import pair_index


class PlantedSpace:
    """Synthetic options with known means: option ``i``'s value in trial ``t`` is
    ``round(mu_i + common_t + noise_{i,t})`` (integers), drawn per chunk of trials from the
    chunk's own generator for EVERY option, so an option's trials do not depend on which options
    are evaluated with it (common random numbers); ``copy_of[j] = i`` makes j identical to i.
    ``stream``: None draws chunk ``c`` from the generator of ``(seed, c)``; a number from
    ``(seed, stream, c)``, and :meth:`fresh` is the same options on the next stream."""

    metric = "x"
    higher_is_better = True
    scale = 1

    def __init__(self, mus, *, seed: int, sd: float = 10.0, common_sd: float = 10.0, chunk: int = 64,
                 copy_of: dict | None = None, stream: int | None = None):
        self.mus = np.asarray(mus, float)
        self.names = [f"opt{i}" for i in range(len(mus))]
        self.seed, self.sd, self.common_sd, self.chunk = seed, sd, common_sd, chunk
        self.copy_of = copy_of or {}
        self.stream = stream
        self.played = 0

    def fresh(self):
        other = copy.copy(self)
        other.stream = (self.stream or 0) + 1
        return other

    def values(self, n_from: int, n_to: int) -> np.ndarray:
        out = []
        for c in range(n_from // self.chunk, -(-n_to // self.chunk)):
            rng = np.random.default_rng([self.seed, c] if self.stream is None else [self.seed, self.stream, c])
            common = rng.normal(0, self.common_sd, self.chunk)
            noise = rng.normal(0, self.sd, (len(self.mus), self.chunk))
            for j, i in self.copy_of.items():
                noise[j] = noise[i]
            v = np.rint(self.mus[:, None] + common[None, :] + noise).astype(np.int64)
            lo, hi = c * self.chunk, min((c + 1) * self.chunk, n_to)
            out.append(v[:, max(n_from, lo) - lo: hi - lo])
        return np.concatenate(out, axis=1)

    def evaluate(self, indices, n_from, n_to, on_trials=None) -> sr.Block:
        v = self.values(n_from, n_to)[list(indices)]
        m = len(indices)
        self.played += m * (n_to - n_from)
        cross = [0] * (m * (m - 1) // 2)
        for a in range(m):
            for b in range(a + 1, m):
                cross[pair_index(a, b, m)] = int((v[a] * v[b]).sum())
        return sr.Block([int(x) for x in v.sum(axis=1)], [int(x) for x in (v * v).sum(axis=1)], cross,
                        m * (n_to - n_from))


def StreamedPlanted(mus, *, seed: int, common_sd: float = 5.0, **kw) -> PlantedSpace:
    """:class:`PlantedSpace` on stream 0 (its :meth:`~PlantedSpace.fresh` copy plays stream 1)."""
    return PlantedSpace(mus, seed=seed, common_sd=common_sd, stream=0, **kw)


def close_loadout_file(tmp_path: Path, example: Path) -> Path:
    """A loadout scenario (from ``example``) of two SO plans of one fleet whose mean VP differ little
    (Intelligence, Support: several rounds, two survivors at 8,192 trials) and a one-boat fleet,
    clearly worse (dropped in round 1: its card's placeholders are still the search's)."""
    doc = yaml.safe_load(example.read_text())
    fleet = [{"id": b, "level": "trained"} for b in ("U-20", "U-43", "U-47", "U-51")]
    doc["params"]["fleets"] = [{"name": "intel", "fleet": fleet, "so": "intel"},
                               {"name": "support", "fleet": fleet, "so": "support"},
                               {"name": "lone_u56", "fleet": [{"id": "U-56", "level": "trained"}]}]
    path = tmp_path / "loadout_close.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path
