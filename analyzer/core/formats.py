"""Format versions of the files the analyzer reads and writes (docs/formats.md).

A scenario file may say which version of the format it is written in (``version: 1``); every
JSON document the analyzer writes says so in :data:`FORMAT_KEY` (``"format_version": 1``), beside
``version``, the analyzer's own release. A missing key means version 1 (every file written before
versions existed), so old scenario files and run folders stay readable; a version this analyzer
does not read (a newer analyzer's, or nonsense) is refused in one line naming the versions it
reads (:func:`version_problem`), never misread.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from analyzer.core.errors import show

#: The key of the format version in every JSON document the analyzer writes.
FORMAT_KEY = "format_version"


@dataclass(frozen=True)
class FileFormat:
    """One kind of file: the name messages give it, the key holding its version, the version
    this analyzer writes and those it reads."""

    file: str
    key: str
    current: int
    reads: tuple[int, ...]
    #: the version a file without ``key`` is in (None: the key is required)
    absent: int | None = 1


SCENARIO_FILE = FileFormat("scenario file", "version", 1, (1,))
SUMMARY_JSON = FileFormat("summary.json", FORMAT_KEY, 1, (1,))
MANIFEST_JSON = FileFormat("manifest.json", FORMAT_KEY, 1, (1,))
PLOTMETA_JSON = FileFormat("plotmeta.json", FORMAT_KEY, 1, (1,))
COMPARISON_JSON = FileFormat("comparison.json", FORMAT_KEY, 1, (1,))
MATCHUP_JSON = FileFormat("matchup.json", FORMAT_KEY, 1, (1,))
SOLVE_JSON = FileFormat("solve.json", FORMAT_KEY, 1, (1,))
SENSITIVITY_JSON = FileFormat("sensitivity.json", FORMAT_KEY, 1, (1,))
SEARCH_JSON = FileFormat("search.json", FORMAT_KEY, 1, (1,))
#: the state an incomplete ``analyzer search`` folder keeps after each round (``checkpoint.json``)
SEARCH_CHECKPOINT = FileFormat("search checkpoint.json", "checkpoint_format", 1, (1,), absent=None)
#: what ``analyzer data check --json`` prints (stdout only; nothing reads it back)
DATA_CHECK_JSON = FileFormat("data check JSON", FORMAT_KEY, 1, (1,))
#: The checkpoints of a resumable run folder (``checkpoint_format`` of its incomplete manifest and
#: of each point file). 2: point files bound to their run and checked when loaded (format 1 files
#: were trusted as written: a checkpoint of another scenario, or with an edited trial count,
#: passed silently).
CHECKPOINT = FileFormat("checkpoint", "checkpoint_format", 2, (2,), absent=None)


def stamped(fmt: FileFormat, doc: Mapping[str, Any]) -> dict:
    """``doc`` with the version this analyzer writes of ``fmt`` as its first key."""
    return {fmt.key: fmt.current, **doc}


def version_problem(doc: Mapping[str, Any], fmt: FileFormat) -> str | None:
    """None when this analyzer reads the version ``doc`` says it is in (its ``fmt.key``, or
    ``fmt.absent`` when the key is missing); otherwise what is wrong, one line to follow
    ``FILE: KEY: ``."""
    reads = " or ".join(str(v) for v in fmt.reads)
    if fmt.key not in doc:
        return None if fmt.absent in fmt.reads else f"is missing; this analyzer reads {fmt.key} {reads}"
    value = doc[fmt.key]
    whole = isinstance(value, int) and not isinstance(value, bool)
    if whole and value in fmt.reads:
        return None
    absent = f" (a file without {fmt.key} is {fmt.absent})" if fmt.absent is not None else ""
    newer = "; a newer analyzer wrote it: upgrade to read it" if whole and value > max(fmt.reads) else ""
    return f"got {show(value)}; this analyzer reads {fmt.key} {reads}{absent}{newer}"
