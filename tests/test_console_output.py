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


def _a_path_line(line: str) -> bool:
    """The folder written and its report: a path is printed whole (never wrapped), to be copied."""
    return line.startswith("wrote ") or line.startswith("  report: ")


def test_summary_fits_80_columns_and_keeps_cells_whole(tmp_path):
    for scenario in ("b17/gun_matrix_skills.yaml", "dystopian_wars/attack_ad10.yaml"):
        res = _run_cli(["run", str(ROOT / "scenarios" / scenario), "--trials", "3000", "--out", str(tmp_path),
                        "--no-progress"], 80, tmp_path)
        assert res.returncode == 0, res.stderr
        assert "│" not in res.stderr                   # the answer is on stdout (issue 31)
        lines = [ln for ln in (res.stdout + res.stderr).splitlines() if not _a_path_line(ln)]
        too_long = [ln for ln in lines if len(ln) > 80]
        assert not too_long, "\n".join(too_long)
        # no cell wrapped: a wrapped cell continues on a row whose first cell is blank
        rows = [ln for ln in lines if ln.startswith("│")]
        assert rows and all(ln.split("│")[1].strip() for ln in rows), "\n".join(rows)


@pytest.mark.slow     # one CLI run per terminal width
def test_wider_terminals_show_more_metrics(tmp_path):
    narrow = _run_cli(["run", str(ROOT / "scenarios" / "b17" / "gun_matrix_skills.yaml"), "--trials", "2000",
                       "--out", str(tmp_path), "--no-progress"], 80, tmp_path).stdout
    wide = _run_cli(["run", str(ROOT / "scenarios" / "b17" / "gun_matrix_skills.yaml"), "--trials", "2000",
                     "--out", str(tmp_path), "--no-progress"], 200, tmp_path).stdout

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


def test_matchup_shows_contender_names_in_full(tmp_path):
    """Issue 28 item 9: on an 80-column console the ratings table gave long contender names as
    'journalist_in…'. Names now show in full (the other columns wrap first); a name wider than the
    room left folds onto the next line instead of being cut."""
    import yaml
    names = ["tail_gunner_of_lead_bomber_12", "tail_gunner_of_lead_bomber_15",
             "tail_gunner_skill_18", "a_contender_name_too_long_for_any_column_of_an_80_col_table"]
    doc = {"game": "b17", "question": "gun_shot", "seed": 3, "trials": 640,
           "params": {"gun": "tail", "clock": "6:00", "altitude": "level", "fighter": "Me109", "prior_hits": 0,
                      "intercom_ok": True, "skill": 15},
           "contenders": [{"name": n, "params": {"skill": s}} for n, s in zip(names, (12, 15, 18, 16))],
           "matchup": {"metric": "p_destroyed"}}
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    res = _run_cli(["matchup", str(path), "--out", str(tmp_path), "--no-progress", "--bootstrap", "20"], 80, tmp_path)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()                    # the ratings are the answer: stdout
    assert not [ln for ln in lines if len(ln) > 80 and not _a_path_line(ln)]
    assert "…" not in res.stdout
    rows = [ln.split("│")[2].strip() for ln in lines if ln.startswith("│")]
    for name in names[:3]:
        assert name in rows, name                          # whole, on one line
    assert names[3] not in rows and names[3] in "".join(rows)   # folded over two lines, all of it


def test_few_points_many_metrics_show_every_metric():
    """Issue 28 item 9: a 3-point firefight sweep showed 3 of its 9 metrics on 80 columns ("5 more
    metric(s) in summary.json"). A sweep of few points whose metrics do not fit as columns is shown
    one row per metric, one column per point headed by its swept values: every metric, no cell cut."""
    from rich.console import Console

    from analyzer.cli.summary import _summary_table
    names = ["p_win_a", "p_win_b", "p_draw", "turns", "casualties_a", "casualties_b", "dp_a", "dp_b", "p_turn_limit"]
    stat = {"mean": 0.4575, "se": 0.0079, "ci_low": 0.4421, "ci_high": 0.4731}
    summary = {"scenario": "s", "game": "breaking_news", "question": "firefight", "mode": "monte_carlo",
               "primary_metric": "p_win_a",
               "points": [{"swept": {"range.start_cm": r}, "metrics": {n: stat for n in names}} for r in (20, 40, 80)]}
    table, left_out = _summary_table(summary, 80)
    assert left_out == ""
    console = Console(width=80, record=True, file=open(os.devnull, "w"))
    console.print(table)
    text = console.export_text()
    assert all(f"{n} ±se" in text for n in names)
    assert all(len(ln) <= 80 for ln in text.splitlines())
    assert "range.start_cm" in text and all(str(r) in text for r in (20, 40, 80))
    rows = [ln for ln in text.splitlines() if ln.startswith("│")]
    assert len(rows) == len(names) and all(ln.count("0.4575±0.0079") == 3 for ln in rows)


def test_firefight_console_shows_all_nine_metrics(tmp_path):
    res = _run_cli(["run", str(ROOT / "scenarios" / "breaking_news" / "firefight_patrol.yaml"), "--trials", "500",
                    "--out", str(tmp_path), "--no-progress"], 80, tmp_path)
    assert res.returncode == 0, res.stderr
    for name in ("p_win_a", "p_win_b", "p_draw", "turns", "casualties_a", "casualties_b", "dp_a", "dp_b",
                 "p_turn_limit"):
        assert f"│ {name} ±se" in res.stdout, name
    assert "more metric" not in res.stdout
    assert not [ln for ln in (res.stdout + res.stderr).splitlines() if len(ln) > 80 and not _a_path_line(ln)]
