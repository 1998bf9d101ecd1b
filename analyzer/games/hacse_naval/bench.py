"""``analyzer bench hacse-depth-charge``: depth-charge pattern trials/s of the kernel against the
pure-Python reference (tests/reference/hacse_naval.py) on the same pattern, measured in the same run."""
from __future__ import annotations

from analyzer.bench.harness import kernel_vs_reference, register_benchmark
from analyzer.core.questions import SCENARIO_ROOT

SCENARIO = SCENARIO_ROOT / "hacse_naval" / "depth_charge_ring_prior.yaml"
TARGET_RATIO = 300
ROUNDS = 3


def bench_depth_charge(trials: int = 2_000_000, ref_trials: int = 10_000, console=None) -> dict:
    """Kernel and reference trials/s: three charges set to depth 2 in a line through the guessed
    hex, the U-boat drawn uniformly from 7 hexes x depths 1-3 (first point of
    scenarios/hacse_naval/depth_charge_ring_prior.yaml), its damage sheet and effects included."""
    return kernel_vs_reference(SCENARIO, point=0, game="hacse_naval", question="depth_charge", trials=trials,
                               ref_trials=ref_trials, target=TARGET_RATIO, rounds=ROUNDS,
                               describe="pattern: 3 charges at depth 2 vs a U-boat in 7 hexes x depths 1-3 "
                                        "(Type VIIC sheet)", console=console)


@register_benchmark("hacse-depth-charge")
def _bench_cli(console=None, trials: int | None = None) -> dict:
    return bench_depth_charge(trials or 2_000_000, console=console)
