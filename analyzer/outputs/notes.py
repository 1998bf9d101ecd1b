"""The notes of a run as every output shows them (console, ``summary.json``'s ``notes``,
``report.html``): a note of one sweep point labelled with its swept values, a note every point
carries said once. Light (no numpy): the console imports it."""
from __future__ import annotations

import json
from typing import Any


def point_label(swept: dict) -> str:
    """A sweep point as its swept values, ``"morale_dice=3, casualties=2"`` ("" for a run
    without a sweep); values that are not scalars as compact JSON."""
    def show(v: Any) -> str:
        return json.dumps(v, ensure_ascii=False, default=str) if isinstance(v, (list, dict)) else str(v)
    return ", ".join(f"{k}={show(v)}" for k, v in swept.items())


def labelled_notes(points: list[dict]) -> list[str]:
    """The notes of a run, each said once: a note every point carries unlabelled, first; every
    other note prefixed by the swept values of its point (``"[morale_dice=3, casualties=2] ..."``),
    point by point. ``points`` are summary.json point records (``swept`` and ``notes``)."""
    per_point = [list(dict.fromkeys(pt.get("notes") or [])) for pt in points]
    if not per_point:
        return []
    common = [n for n in per_point[0] if all(n in notes for notes in per_point[1:])]
    out = list(common)
    for pt, notes in zip(points, per_point):
        label = point_label(pt.get("swept") or {})
        out += [f"[{label}] {n}" if label else n for n in notes if n not in common]
    return list(dict.fromkeys(out))
