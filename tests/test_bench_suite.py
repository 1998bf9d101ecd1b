"""``analyzer bench --quick --json``: every benchmark in one run reports rows with a ratio and
its target (the figures themselves are not asserted: timings are not tests)."""
import json
import subprocess
import sys

from analyzer import bench_suite
from analyzer.bench import BENCHMARKS, load_benchmarks

KEYS = {"name", "what", "rate", "unit", "reference", "reference_rate", "ratio", "ratio_target", "better", "met",
        "threads"}


def test_quick_suite_reports_every_kernel_with_ratio_and_target(tmp_path):
    load_benchmarks()
    res = subprocess.run([sys.executable, "-c", "from analyzer.cli import main; main()", "bench", "--quick",
                          "--json", "--out", str(tmp_path)], capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    rows = json.loads(res.stdout)["rows"]
    for r in rows:
        assert KEYS <= set(r), r
        assert r["ratio"] > 0 and r["ratio_target"] > 0 and r["better"] in ("higher", "lower")
        assert any("ratio" in k for k in r) and any("target" in k for k in r)
    names = [r["name"] for r in rows]
    for bench in BENCHMARKS:                      # every registered benchmark, by its own name
        assert any(n == bench or n.startswith(bench + ":") or n.startswith("dice-") and bench == "dice"
                   for n in names), bench
    for kernel in bench_suite.SCALING_SCENARIOS:  # thread scaling of every kernel
        assert f"threads-{kernel}" in names, kernel
    assert {"memory-trials", *bench_suite.CLI_TARGETS} <= set(names)
    assert (tmp_path / "bench.parquet").is_file() and (tmp_path / "bench_ratios.png").is_file()
