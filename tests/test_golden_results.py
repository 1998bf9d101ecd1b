"""Refactors leave results bit-identical: every shipped scenario, run at a fixed seed over
three chunks (two full, one partial), gives the same points and distributions tables as
when the hashes in ``golden/results_sha256.json`` were recorded.

Re-record (``python -m tests.test_golden_results``) only in a commit whose purpose is to
change results, and say so in its message."""
import hashlib
import json
import sys
from pathlib import Path

import pytest

from analyzer import api
from analyzer.outputs import writer as outputs
from analyzer.core import scenario as scenario_mod

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).with_name("golden") / "results_sha256.json"
TRIALS = 2 * 4096 + 1808  # two full chunks and a partial one


def table_sha256(df) -> str:
    """Hash of a table's column names and exact values (not of the parquet bytes, whose
    metadata names the pyarrow version)."""
    rows = [[repr(v.item() if hasattr(v, "item") else v) for v in row]
            for row in df.itertuples(index=False, name=None)]
    return hashlib.sha256(json.dumps([list(df.columns), rows]).encode()).hexdigest()


def result_hashes(path: Path) -> dict:
    sc = scenario_mod.load(path, trials=TRIALS)
    results = api.run(sc)
    return {"points": table_sha256(outputs.points_table(results)),
            "distributions": table_sha256(outputs.distributions_table(results))}


def shipped() -> list[Path]:
    return scenario_mod.expand_targets([str(ROOT / "scenarios")])


def test_every_shipped_scenario_is_recorded():
    recorded = json.loads(GOLDEN.read_text())
    names = {p.relative_to(ROOT).as_posix() for p in shipped()}
    assert names == set(recorded), "a shipped scenario was added or removed: record its hashes"


@pytest.mark.parametrize("rel", sorted(json.loads(GOLDEN.read_text())))
def test_results_bit_identical(rel):
    assert result_hashes(ROOT / rel) == json.loads(GOLDEN.read_text())[rel]


def record() -> None:
    GOLDEN.parent.mkdir(exist_ok=True)
    doc = {p.relative_to(ROOT).as_posix(): result_hashes(p) for p in shipped()}
    GOLDEN.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"recorded {len(doc)} scenarios in {GOLDEN}", file=sys.stderr)


if __name__ == "__main__":
    record()
