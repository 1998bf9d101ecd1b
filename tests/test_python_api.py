"""Issue 31 (Python API): ``import analyzer`` gives load / simulate / exact / compare with one Result type
whose answers are pandas or polars DataFrames; a scenario loads from a mapping as from its file."""
import subprocess
import sys
from pathlib import Path

import pandas as pd
import polars as pl
import pytest
import yaml

import analyzer
from analyzer.core.errors import ScenarioError

ROOT = Path(__file__).resolve().parent.parent
QUICK = ROOT / "scenarios" / "dice" / "any_of_n.yaml"


def test_the_public_names_are_declared():
    assert set(analyzer.__all__) == {"Result", "load", "simulate", "exact", "compare", "__version__"}
    for name in analyzer.__all__:
        assert getattr(analyzer, name) is not None
    with pytest.raises(AttributeError):
        analyzer.no_such_name       # noqa: B018


def test_import_analyzer_stays_light():
    """The API is imported on first use: ``import analyzer`` loads neither numba nor pandas."""
    code = "import sys, analyzer; print(sorted(m for m in ('numba', 'pandas', 'polars') if m in sys.modules))"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and res.stdout.strip() == "[]", res.stdout + res.stderr


def test_a_mapping_loads_as_its_file_does():
    doc = yaml.safe_load(QUICK.read_text())
    from_file = analyzer.load(QUICK, trials=3000)
    from_dict = analyzer.load(doc, trials=3000, directory=QUICK.parent, name=QUICK.name)
    assert [p.params for p in from_dict.points] == [p.params for p in from_file.points]
    a, b = analyzer.simulate(from_file), analyzer.simulate(from_dict)
    assert a.answers().equals(b.answers())              # same seed, same streams: bit for bit
    with pytest.raises(ScenarioError, match="unknown question"):
        analyzer.load({**doc, "question": "nope"})
    with pytest.raises(TypeError, match="a path, a mapping or a Scenario"):
        analyzer.load([1, 2])


def test_run_exact_and_compare_return_one_result_type(tmp_path):
    r = analyzer.simulate(QUICK, trials=3000)
    e = analyzer.exact(QUICK)
    c = analyzer.compare(QUICK, QUICK, trials=3000)
    assert type(r) is type(e) is type(c) is analyzer.Result
    assert (r.mode, e.mode, c.mode) == ("monte_carlo", "exact", "comparison")
    for result in (r, e, c):
        pd_table, pl_table = result.answers(), result.answers("polars")
        assert isinstance(pd_table, pd.DataFrame) and isinstance(pl_table, pl.DataFrame)
        assert pl_table.height == len(pd_table) > 0 and pl_table.columns == list(pd_table.columns)
    exact_rows = e.answers().query("row == 'metric'")
    assert exact_rows["exact"].all() and (exact_rows["se"] == 0).all()
    diffs = c.answers().query("side == 'b_minus_a'")
    assert len(diffs) == len(r.answers().query("row == 'metric'")) and (diffs["mean"] == 0).all()
    assert c.summary()["points"] == list(c.differences)
    written = analyzer.simulate(QUICK, trials=3000, out=tmp_path)
    assert (written.run_dir / "answers.parquet").is_file()
    assert pd.read_parquet(written.run_dir / "answers.parquet").equals(written.answers())
