"""The notebooks never rot: each one in notebooks/ is executed with nbclient and
``ANALYZER_QUICK=1`` (small trial counts) in a temporary copy of the folder, so the committed
outputs of the full run are never overwritten, and fails on any cell error. The committed
notebooks must hold the outputs of a full run (``make notebooks``), with their closing
"what this shows" paragraph and placeholder list."""
import shutil

import nbformat
import pytest

from analyzer import docgen

pytestmark = pytest.mark.slow      # six notebooks executed end to end

NOTEBOOKS = docgen.notebooks()
QUICK_MARK = "ANALYZER_QUICK=1"     # every notebook prints this in its first output in quick mode


def _outputs(cell) -> list:
    return cell.get("outputs", []) if cell.cell_type == "code" else []


def _text(output) -> str:
    if output.output_type == "stream":
        return output.text
    return "".join(str(v) for k, v in output.get("data", {}).items() if k.startswith("text/"))


def test_there_is_a_notebook_for_each_headline_analysis():
    names = {p.stem for p in NOTEBOOKS}
    assert {"01_uboat_campaign", "02_uboat_loadouts", "03_b17_gun_positions", "04_dystopian_wars_fire",
            "05_breaking_news_points", "06_hacse_depth_charges"} <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_notebook_holds_a_full_run(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.execution_count for c in code), f"{path.name}: not executed (run `make notebooks`)"
    outputs = [o for c in code for o in _outputs(c)]
    assert not [o for o in outputs if o.output_type == "error"], f"{path.name}: committed with an error"
    assert QUICK_MARK not in "".join(_text(o) for o in _outputs(code[0])), \
        f"{path.name}: committed from a quick run; run `make notebooks`"
    assert any("image/png" in o.get("data", {}) for o in outputs), f"{path.name}: no figure"
    headings = [c.source for c in nb.cells if c.cell_type == "markdown"]
    assert any(h.strip().startswith("## What this shows") for h in headings)
    closing = "".join(_text(o) for o in _outputs(code[-1]))
    assert "placeholder" in closing.lower(), f"{path.name}: the closing cell lists no placeholders"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_in_quick_mode(path, tmp_path):
    committed = path.read_bytes()
    copy_dir = tmp_path / "notebooks"
    shutil.copytree(path.parent, copy_dir, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
    copy = copy_dir / path.name
    docgen.execute_notebook(copy, quick=True)          # raises CellExecutionError on any failing cell
    nb = nbformat.read(copy, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert QUICK_MARK in "".join(_text(o) for o in _outputs(code[0]))
    assert not [o for c in code for o in _outputs(c) if o.output_type == "error"]
    closing = [o for o in _outputs(code[-1]) if "text/markdown" in o.get("data", {})]
    assert closing, f"{path.name}: the closing cell displayed no 'what this shows' paragraph"
    assert path.read_bytes() == committed                # the committed full-run outputs are untouched
