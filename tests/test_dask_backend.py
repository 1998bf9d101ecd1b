"""``--backend dask``: the same numbers as a local run, on a real ``distributed`` cluster.

One LocalCluster of two worker *processes* serves the module. Each check compares the
Dask run's tables with the local run's, value for value (the hash the golden test uses):
a piece's sums are integers over chunks whose streams depend only on (seed, point, chunk),
so where a piece ran cannot change them.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")
pytestmark = pytest.mark.xdist_group("dask")     # one cluster for the module under pytest -n

from analyzer import api  # noqa: E402
from analyzer.outputs import writer as outputs
from analyzer.core import scenario as scenario_mod
from analyzer.run.backends import DaskBackend, LOCAL, make_backend  # noqa: E402
from tests.test_golden_results import table_sha256  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent

#: one shipped scenario per game, with a sweep where the game ships one
ONE_PER_GAME = ["dice/pool_vs_cancel.yaml", "dystopian_wars/attack_rockets_vs_aa.yaml", "b17/attack_wave_mixed_policies.yaml",
                "uboat_leader/convoy37_engagement.yaml", "breaking_news/firefight_patrol.yaml",
                "hacse_naval/depth_charge_ring_prior.yaml"]
TRIALS = 9 * 4096 + 123          # ten chunks, the last one partial


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  env={"NUMBA_NUM_THREADS": "1"}) as c:
        yield c


def _tables(results) -> tuple[str, str]:
    return table_sha256(outputs.points_table(results)), table_sha256(outputs.distributions_table(results))


def _dask(cluster, **kw) -> DaskBackend:
    return DaskBackend(scheduler=cluster.scheduler_address, task_chunks=3, **kw).start()


@pytest.mark.parametrize("rel", ONE_PER_GAME)
def test_points_parquet_equals_the_local_backend_bit_for_bit(rel, cluster, tmp_path):
    sc = scenario_mod.load(ROOT / "scenarios" / rel, trials=TRIALS)
    local_dir, local_summary = api.run_to_folder(sc, tmp_path / "local", threads=1, formats=())
    with _dask(cluster) as backend:
        dask_dir, dask_summary = api.run_to_folder(sc, tmp_path / "dask", threads=1, formats=(), backend=backend)
    import pandas as pd
    for table in ("points.parquet", "distributions.parquet"):
        a, b = pd.read_parquet(local_dir / table), pd.read_parquet(dask_dir / table)
        assert table_sha256(a) == table_sha256(b), table
    assert dask_summary["points"] == local_summary["points"]
    manifest = json.loads((dask_dir / "manifest.json").read_text())
    assert manifest["execution"] == {"backend": "dask", "workers": 2, "scheduler": cluster.scheduler_address}
    assert dask_summary["execution"]["backend"] == "dask" and local_summary["execution"]["backend"] == "local"


def test_a_precision_target_stops_at_the_same_trial_count(cluster):
    sc = scenario_mod.load(ROOT / "scenarios/dice/pool_vs_cancel.yaml", precision=0.0015)
    local = api.run(sc)
    with _dask(cluster, max_in_flight=8) as backend:
        remote = api.run(sc, backend=backend)
        assert not backend._tasks and not backend._plans      # the tasks past the stop were dropped
    assert [r.trials for r in local] == [r.trials for r in remote]
    assert len({r.trials for r in local}) > 1        # points stopped after different batch counts
    assert _tables(local) == _tables(remote)


def test_a_killed_worker_does_not_lose_the_run(cluster):
    """SIGKILL one worker process once the run is under way: its tasks are re-run elsewhere
    (the nanny starts a new worker) and the result is the local one."""
    sc = scenario_mod.load(ROOT / "scenarios/uboat_leader/convoy37_engagement.yaml", trials=120 * 4096)
    local = api.run(sc)
    with _dask(cluster) as backend:
        backend.task_chunks = 1
        client = backend._client
        pids = client.run(os.getpid)
        victim = sorted(pids.values())[0]
        killed = threading.Event()

        def tick(n):
            if not killed.is_set():
                os.kill(victim, signal.SIGKILL)
                killed.set()

        remote = api.run(sc, backend=backend, progress=lambda name, total: tick)
    assert killed.is_set()
    assert _tables(local) == _tables(remote)


def test_cli_json_points_match_the_local_backend(tmp_path):
    """``analyzer run FILE --backend dask`` (an in-process cluster) prints the local run's points."""
    target = str(ROOT / "scenarios/dice/pool_vs_cancel.yaml")
    out = {}
    for backend in ("local", "dask"):
        res = subprocess.run([str(BIN / "analyzer"), "run", target, "--json", "-n", "50000", "--backend", backend,
                              "--out", str(tmp_path / backend)], capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr[-2000:]
        out[backend] = json.loads(res.stdout)
    assert out["dask"]["points"] == out["local"]["points"]
    assert out["dask"]["execution"] == {"backend": "dask", "workers": 2}


def test_backend_options_are_checked():
    assert make_backend("local") is LOCAL
    for kw, words in (({"name": "spark"}, "allowed: local, dask"),
                      ({"name": "local", "scheduler": "tcp://x:1"}, "need --backend dask"),
                      ({"name": "dask", "scheduler": "tcp://x:1", "workers": 2}, "one or the other")):
        with pytest.raises(ValueError, match=words):
            make_backend(kw.pop("name"), **kw)


def _readme_cluster_commands() -> list[str]:
    """The shell lines of the README's cluster section, as a user would copy them."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## Running on a cluster", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    return [ln.split("#")[0].strip() for block in blocks for ln in block.splitlines()
            if ln.strip() and not ln.lstrip().startswith("#")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow     # a scheduler and workers as separate processes
def test_readme_cluster_commands_run_against_separate_processes(tmp_path):
    """The README's commands, copied out of it: a scheduler and two workers started as separate
    processes on localhost, then ``analyzer run ... --backend dask --scheduler tcp://...``."""
    commands = _readme_cluster_commands()
    scheduler_cmd = next(c for c in commands if c.startswith("dask scheduler"))
    worker_cmd = next(c for c in commands if c.startswith("dask worker"))
    run_cmd = next(c for c in commands if c.startswith("analyzer run") and "--scheduler" in c)
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"

    def local(cmd: str) -> list[str]:      # the README's HOST and port made this machine's
        cmd = cmd.replace("tcp://HOST:8786", address).replace("--port 8786", f"--port {port}")
        cmd = cmd.replace("scenarios/", str(ROOT / "scenarios") + "/")
        words = cmd.split()
        return [str(BIN / words[0]), *words[1:]]

    assert "tcp://HOST:8786" in worker_cmd and "tcp://HOST:8786" in run_cmd
    env = {**os.environ, "NUMBA_NUM_THREADS": "1"}
    procs = [subprocess.Popen(local(scheduler_cmd) + ["--host", "127.0.0.1", "--no-dashboard"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        deadline = time.time() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.time() < deadline, "the scheduler did not start"
                time.sleep(0.2)
        procs += [subprocess.Popen(local(worker_cmd) + ["--no-dashboard"], env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL) for _ in range(2)]
        with distributed.Client(address, timeout="60s") as client:
            client.wait_for_workers(2, timeout=60)
        res = subprocess.run(local(run_cmd) + ["--json", "-n", "50000", "--out", str(tmp_path / "dask")],
                             capture_output=True, text=True, timeout=300, env=env)
        assert res.returncode == 0, res.stderr[-2000:]
        remote = json.loads(res.stdout)
        words = local(run_cmd)
        target = next(w for w in words if w.endswith(".yaml"))
        res = subprocess.run([str(BIN / "analyzer"), "run", target, "--json", "-n", "50000",
                              "--out", str(tmp_path / "local")], capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr[-2000:]
        assert remote["points"] == json.loads(res.stdout)["points"]
        assert remote["execution"] == {"backend": "dask", "workers": 2, "scheduler": address}
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
    shutil.rmtree(tmp_path, ignore_errors=True)
