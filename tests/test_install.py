"""Installable anywhere: a wheel built from the repository, installed into a fresh virtualenv
outside it, runs a shipped scenario of every game from a temporary folder (copied there with
``analyzer init``) and writes the same ``points.parquet`` as the in-repository run; and its
benchmarks run there too, against the pure-Python references that ship with each game.

The fresh virtualenv gets the wheel itself (``pip --python VENV install --no-deps``) and
borrows the already-installed third-party dependencies through a ``.pth`` line naming this
environment's site-packages (a path added that way is not scanned for ``.pth`` files, so the
repository's editable install is not visible there; the test checks ``analyzer`` is imported
from the new environment)."""
import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pandas as pd
import pytest

pytestmark = pytest.mark.slow      # builds a wheel and installs it into a fresh venv

ROOT = Path(__file__).resolve().parent.parent
#: one quick shipped example per game: (game, question, scenario file name)
EXAMPLES = [("dice", "pool", "pool_vs_cancel.yaml"),
            ("dystopian_wars", "attack", "attack_ad10.yaml"),
            ("b17", "gun_shot", "gun_shot_skill15.yaml"),
            ("uboat_leader", "escort_detection", "escort_detection_example.yaml"),
            ("breaking_news", "shot", "shot_assault_rifle_modes.yaml"),
            ("hacse_naval", "depth_charge", "depth_charge_example.yaml")]
TRIALS = "5000"


def _run(cmd, **kw):
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=900, **kw)
    assert res.returncode == 0, f"{' '.join(map(str, cmd))}\n{res.stdout}\n{res.stderr}"
    return res


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory):
    base = tmp_path_factory.mktemp("install")
    wheels = base / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(ROOT)], cwd=base)
    wheel = next(wheels.glob("*.whl"))
    venv = base / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    py = venv / "bin" / "python"
    site = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    (site / "borrowed_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "-q", str(wheel)], cwd=base)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    where = _run([str(py), "-c", "import analyzer; print(analyzer.__file__)"], cwd=base, env=env).stdout.strip()
    assert Path(where).is_relative_to(venv), f"analyzer imported from {where}, not the fresh virtualenv"
    return venv, env, base


@pytest.mark.parametrize("game,question,name", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_wheel_runs_every_game_from_any_folder(fresh_venv, game, question, name, tmp_path):
    venv, env, _ = fresh_venv
    work = tmp_path / "player"
    _run([str(venv / "bin" / "analyzer"), "init", game, question, str(work)], cwd=tmp_path, env=env)
    assert (work / name).is_file(), sorted(p.name for p in work.iterdir())
    _run([str(venv / "bin" / "analyzer"), "run", name, "--trials", TRIALS, "--out", str(tmp_path / "out"),
          "--no-progress"], cwd=work, env=env)
    _run([sys.executable, "-c", "from analyzer.cli.app import main; main()", "run",
          str(ROOT / "scenarios" / game / name), "--trials", TRIALS, "--out", str(tmp_path / "repo_out"),
          "--no-progress"], cwd=ROOT)
    installed = pd.read_parquet(next((tmp_path / "out").glob("*/*/points.parquet")))
    in_repo = pd.read_parquet(next((tmp_path / "repo_out").glob("*/*/points.parquet")))
    pd.testing.assert_frame_equal(installed, in_repo, check_exact=True)


#: run by the installed interpreter: every reference a benchmark declares, imported by name, and the
#: shipped data it reads when given no folder; every scenario a benchmark declares
REFERENCES_OF_THE_BENCHMARKS = """
import importlib, json
from analyzer.bench import harness
harness.load_benchmarks()
found = {}
for bench in harness.BENCHMARKS.values():
    assert all(path.is_file() for path in bench.scenarios), bench.name
    for name in bench.references:
        ref = importlib.import_module(name)
        data = (getattr(ref, "load_data", None) or ref.load_campaign_data)()
        found[name] = [ref.__file__, bool(data)]
print(json.dumps(found))
"""


def test_wheel_runs_a_benchmark_against_its_reference_from_an_empty_folder(fresh_venv, tmp_path):
    """``analyzer bench --quick uboat-wolfpack`` (the smallest benchmark that times a kernel
    against a reference) from an empty folder outside the repository, and every reference the
    benchmarks declare importable from the installed package with its shipped data."""
    venv, env, _ = fresh_venv
    work = tmp_path / "empty"
    work.mkdir()
    res = _run([str(venv / "bin" / "analyzer"), "bench", "--quick", "--json", "uboat-wolfpack"], cwd=work, env=env)
    (row,) = json.loads(res.stdout)["rows"]
    assert row["name"] == "uboat-wolfpack" and row["ratio"] > 0 and row["reference_rate"] > 0, row
    assert "analyzer.games.uboat_leader.reference" in row["reference"], row
    found = json.loads(_run([str(venv / "bin" / "python"), "-c", REFERENCES_OF_THE_BENCHMARKS], cwd=work,
                            env=env).stdout)
    assert {"analyzer.games.b17.reference", "analyzer.games.uboat_leader.reference_campaign"} <= set(found)
    for name, (file, has_data) in found.items():
        assert Path(file).is_relative_to(venv) and has_data, (name, file)
    assert not list(work.iterdir())
