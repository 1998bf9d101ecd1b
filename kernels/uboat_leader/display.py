"""The tactical display as arrays: adjacency lists and shortest-path distances (digest §1.3).

``adj[a, :area[a, 0]]`` lists the neighbours of area ``a`` in increasing index order and
``dist[g, a]`` is the number of Area steps from ``a`` to ``g`` (BFS, "Usa siempre el camino
más corto"); ``dist[K_LONG_ROW, a]`` is the distance to the nearest Long Range Area.
"""
from __future__ import annotations

from kernels._jit import unmanaged_jit

#: area[a, AREA_DEGREE] = number of neighbours, area[a, AREA_KIND] = AREA_CONVOY..AREA_WAKE
AREA_DEGREE, AREA_KIND = 0, 1


@unmanaged_jit
def step_toward(adj, area, a, goal):
    """The neighbour of ``a`` with the smallest goal distance ``goal[.]``, strictly smaller
    than ``goal[a]``; ties go to the lowest area index (spec §4.2, A11). -1 if none."""
    best = -1
    here = goal[a]
    for k in range(area[a, AREA_DEGREE]):
        n = adj[a, k]
        if goal[n] < here and (best < 0 or goal[n] < goal[best]):
            best = n
    return best
