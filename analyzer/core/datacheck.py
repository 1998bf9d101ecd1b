"""What is still missing in a folder of game data (``analyzer data check DIR``).

Every YAML file under a folder is either a scenario file (a mapping with a top-level
``game:``) or a data file. For each data file :func:`scan` lists the values still written
``{ph: ..}`` (placeholders) and ``{ex: ..}`` (worked-example values, with whether what the
example establishes lets ``strict: true`` accept it); the scenario files are returned for the
run layer to prepare with ``strict`` forced on (:func:`analyzer.run.runner.prepare_point`).
Nothing here knows a game: the wrappers are those of :mod:`analyzer.core.gamedata`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from analyzer.core.gamedata import DataError, Placeholder, read_yaml, unwrap

#: file endings read as YAML
YAML_SUFFIXES = (".yaml", ".yml")
#: a folder holding this file is a run folder (outputs, not the player's data): not scanned
RUN_FOLDER_MARK = "manifest.json"


@dataclass
class DataFileCheck:
    """One data file: its placeholders and its example-derived values, in file order."""

    file: str                      # relative to the scanned folder (POSIX)
    placeholders: list[Placeholder] = field(default_factory=list)
    examples: list[Placeholder] = field(default_factory=list)

    @property
    def blocking_examples(self) -> list[Placeholder]:
        """Example values ``strict: true`` refuses (the example only bounds them)."""
        return [ex for ex in self.examples if ex.refused_by_strict]


@dataclass
class FolderScan:
    root: Path
    data_files: list[DataFileCheck]
    scenario_files: list[Path]


def is_scenario_document(doc) -> bool:
    """A scenario file is a mapping with a top-level ``game:``; any other YAML file is data."""
    return isinstance(doc, dict) and "game" in doc


def yaml_files(root: Path) -> list[Path]:
    """Every YAML file below ``root``, sorted, skipping hidden folders and run folders."""
    out = []
    for path in sorted(Path(root).rglob("*")):
        rel = path.relative_to(root)
        if path.suffix.lower() not in YAML_SUFFIXES or not path.is_file():
            continue
        if any(part.startswith(".") for part in rel.parts):
            continue
        if any((Path(root) / Path(*rel.parts[:i]) / RUN_FOLDER_MARK).is_file() for i in range(len(rel.parts))):
            continue
        out.append(path)
    return out


def scan(root: Path) -> FolderScan:
    """Sort the YAML files below ``root`` into data files (checked) and scenario files."""
    root = Path(root)
    if not root.is_dir():
        raise DataError(f"{root}: not a folder" + ("" if root.exists() else " (not found)"))
    data_files, scenarios = [], []
    for path in yaml_files(root):
        doc = read_yaml(path)
        if is_scenario_document(doc):
            scenarios.append(path)
            continue
        rel = path.relative_to(root).as_posix()
        _, found = unwrap(doc, "", source=rel)
        data_files.append(DataFileCheck(rel, [ph for ph in found if not ph.is_example],
                                        [ph for ph in found if ph.is_example]))
    return FolderScan(root, data_files, scenarios)
