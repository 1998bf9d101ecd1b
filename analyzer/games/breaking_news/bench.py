"""``analyzer bench bn-firefight``: firefight kernel trials/s against the pure-Python reference
(tests/reference/breaking_news.py) on the same battle, measured in the same run."""
from __future__ import annotations

from analyzer.bench import kernel_vs_reference, register_benchmark
from analyzer.questions import SCENARIO_ROOT

SCENARIO = SCENARIO_ROOT / "breaking_news" / "firefight_patrol.yaml"
TARGET_RATIO = 300


def bench_firefight(trials: int = 1_000_000, ref_trials: int = 2_000, console=None) -> dict:
    """Kernel and reference trials/s on scenario 1 "Patrulla" (Marines 148 pts vs Taliban 147 pts,
    second point of scenarios/breaking_news/firefight_patrol.yaml: 40 cm)."""
    return kernel_vs_reference(SCENARIO, point=1, game="breaking_news", question="firefight", trials=trials,
                               ref_trials=ref_trials, target=TARGET_RATIO, data_dir=SCENARIO.parent / "data",
                               describe="battle: Patrulla, US Marines (148 pts) vs Taliban (147 pts) at 40 cm",
                               console=console)


@register_benchmark("bn-firefight")
def _bench_cli(console=None, trials: int | None = None) -> dict:
    return bench_firefight(trials or 1_000_000, console=console)
