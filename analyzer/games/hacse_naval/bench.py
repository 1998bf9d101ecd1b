"""``analyzer bench hacse-depth-charge``: depth-charge pattern trials/s of the kernel against the
pure-Python reference (``reference.py`` beside this module) on the same pattern, measured in the
same run; and the rows of the other HACSE kernels (:func:`analyzer.bench.kernels.register_kernel_benches`)."""
from __future__ import annotations

from analyzer.bench.harness import STATEFUL_TARGET, kernel_vs_reference, register_benchmark, scaled
from analyzer.bench.kernels import KernelBench, register_kernel_benches
from analyzer.core.questions import SCENARIO_ROOT

#: the pure-Python reference (ships with the game, not imported with it)
REFERENCE = f"{__package__}.reference"
SCENARIO = SCENARIO_ROOT / "hacse_naval" / "depth_charge_ring_prior.yaml"
TARGET_RATIO = STATEFUL_TARGET
ROUNDS = 3
#: kernel and reference trials of a full run
TRIALS, REF_TRIALS = 2_000_000, 10_000


def bench_depth_charge(trials: int = TRIALS, ref_trials: int = REF_TRIALS, console=None) -> dict:
    """Kernel and reference trials/s: three charges set to depth 2 in a line through the guessed
    hex, the U-boat drawn uniformly from 7 hexes x depths 1-3 (first point of
    scenarios/hacse_naval/depth_charge_ring_prior.yaml), its damage sheet and effects included."""
    return kernel_vs_reference(SCENARIO, point=0, question="depth_charge", reference=REFERENCE, trials=trials,
                               ref_trials=ref_trials, target=TARGET_RATIO, rounds=ROUNDS,
                               describe="pattern: 3 charges at depth 2 vs a U-boat in 7 hexes x depths 1-3 "
                                        "(Type VIIC sheet)", console=console)


@register_benchmark("hacse-depth-charge", questions=(("hacse_naval", "depth_charge"),), scenarios=(SCENARIO,),
                    references=(REFERENCE,), scaling=SCENARIO, target=TARGET_RATIO)
def _bench_cli(console=None, trials: int | None = None) -> dict:
    return bench_depth_charge(trials or TRIALS, scaled(REF_TRIALS, trials, TRIALS), console=console)


_M = 1_000_000
register_kernel_benches(REFERENCE, {
    "hacse-depth-charge-pattern": KernelBench(
        "hacse_naval", "depth_charge_pattern", "hacse_naval/pattern_six_charges_unknown_depth.yaml",
        "six charges at depths 1-3 against a Type VIIC at an unknown depth", "stateful", 300_000, 30_000, 300),
    "hacse-fire": KernelBench(
        "hacse_naval", "fire", "hacse_naval/fire_by_base_number.yaml",
        "a fire aboard a destroyer (hex 1, base number 5) burning until put out", "stateful", 5 * _M, 500_000,
        10_000, {"base_number": 5, "rules.fire_extinguish": "overroll"}),
    "hacse-mine-field": KernelBench(
        "hacse_naval", "mine_field", "hacse_naval/mine_field_crossing.yaml",
        "a destroyer crossing 6 hexes of a 20% mine field", "stateful", 5 * _M, 500_000, 10_000, {"density": 0.2}),
    "hacse-sighting": KernelBench(
        "hacse_naval", "sighting", "hacse_naval/sighting_asdic_vs_sonar.yaml",
        "ASDIC at speed 4 against a U-boat at depth 2, distance 3, up to 3 rounds", "single-step", 10 * _M,
        1 * _M, 10_000, {"sensor": "asdic", "sub_depth": 2, "distance": 3}),
    "hacse-torpedo-salvo": KernelBench(
        "hacse_naval", "torpedo_salvo", "hacse_naval/torpedo_destroyer_salvo.yaml",
        "4 torpedoes at a destroyer, each hitting with probability 0.5", "stateful", 5 * _M, 500_000, 10_000,
        {"hit_probability": 0.5}),
})
