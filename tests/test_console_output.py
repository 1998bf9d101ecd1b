"""What a user reads on the console: the summary table fits an 80-column terminal without
wrapping cells, and ``analyzer list`` writes types as they are written in YAML."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analyzer.cli.app import app

ROOT = Path(__file__).resolve().parent.parent


def _run_cli(args, columns, tmp_path):
    env = dict(os.environ, COLUMNS=str(columns), TERM="dumb")
    cmd = [sys.executable, "-c", "from analyzer.cli.app import main; main()", *args]
    return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)


def test_summary_fits_80_columns_and_keeps_cells_whole(tmp_path):
    for scenario in ("b17/gun_matrix_skills.yaml", "dystopian_wars/attack_ad10.yaml"):
        res = _run_cli(["run", str(ROOT / "scenarios" / scenario), "--trials", "3000", "--out", str(tmp_path),
                        "--no-progress"], 80, tmp_path)
        assert res.returncode == 0, res.stderr
        lines = res.stderr.splitlines()
        too_long = [ln for ln in lines if len(ln) > 80]
        assert not too_long, "\n".join(too_long)
        # no cell wrapped: a wrapped cell continues on a row whose first cell is blank
        rows = [ln for ln in lines if ln.startswith("│")]
        assert rows and all(ln.split("│")[1].strip() for ln in rows), "\n".join(rows)


@pytest.mark.slow     # one CLI run per terminal width
def test_wider_terminals_show_more_metrics(tmp_path):
    narrow = _run_cli(["run", str(ROOT / "scenarios" / "b17" / "gun_matrix_skills.yaml"), "--trials", "2000",
                       "--out", str(tmp_path), "--no-progress"], 80, tmp_path).stderr
    wide = _run_cli(["run", str(ROOT / "scenarios" / "b17" / "gun_matrix_skills.yaml"), "--trials", "2000",
                     "--out", str(tmp_path), "--no-progress"], 200, tmp_path).stderr

    def hidden(text):
        return int(re.search(r"\((\d+) more metric", text).group(1))
    assert hidden(wide) < hidden(narrow)


def test_list_writes_types_as_yaml_users_write_them():
    res = CliRunner().invoke(app, ["list", "--json"])
    assert res.exit_code == 0
    types = {p["type"] for qs in json.loads(res.stdout).values() for q in qs for p in q["params"]}
    python_names = [t for t in types if re.search(r"Annotated|typing|NoneType|Optional|Union|Literal|\bstr\b|"
                                                     r"\bfloat\b|\bbool\b|\bdict\b|[A-Z][a-z]+[A-Z]", t)]
    assert not python_names, python_names
    assert "list of ints" in types and "int or null" in types and "true | false" in types
    assert any(t.startswith("one of ") for t in types)
