"""``analyzer bench uboat-engagement`` / ``uboat-campaign``: the engagement and campaign kernels'
trials/s against their pure-Python references (tests/reference/uboat_leader.py,
tests/reference/uboat_leader_campaign.py) on the same battle / campaign, measured in the same run."""
from __future__ import annotations

from analyzer.bench.harness import kernel_vs_reference, register_benchmark
from analyzer.core.questions import SCENARIO_ROOT

SCENARIO = SCENARIO_ROOT / "uboat_leader" / "convoy37_engagement.yaml"
CAMPAIGN_SCENARIO = SCENARIO_ROOT / "uboat_leader" / "campaign_example_fleet.yaml"
TARGET_RATIO = 300  # issue "performance": every stateful kernel >= 300x its pure-Python reference


def bench_engagement(trials: int = 2_000_000, ref_trials: int = 3_000, console=None) -> dict:
    """Kernel and reference trials/s on convoy card 37 against a veteran U-98 (first point of
    scenarios/uboat_leader/convoy37_engagement.yaml: surfaced approach)."""
    return kernel_vs_reference(SCENARIO, point=0, game="uboat_leader", question="engagement", trials=trials,
                               ref_trials=ref_trials, target=TARGET_RATIO, params_dump={},
                               describe="battle: convoy card 37 (2 E + 4 M) vs veteran U-98, surfaced approach",
                               console=console)


def bench_campaign(trials: int = 500_000, ref_trials: int = 1_000, console=None) -> dict:
    """Kernel and reference campaigns/s on the source's example fleet (first point of
    scenarios/uboat_leader/campaign_example_fleet.yaml: short Comienza la Batalla, contacts on the
    tactical display, Intelligence bought with the 3 SO left)."""
    def simulate(ref, params, rules, n):
        ref.simulate(params, rules, ref.load_campaign_data(str(CAMPAIGN_SCENARIO.parent)), n, 1)
    return kernel_vs_reference(CAMPAIGN_SCENARIO, point=0, game="uboat_leader", question="campaign", trials=trials,
                               ref_trials=ref_trials, target=TARGET_RATIO, reference="uboat_leader_campaign",
                               simulate=simulate, params_dump={"exclude_none": True},
                               describe="campaign: example fleet (U-43, U-47, U-51, U-56), short Comienza la Batalla",
                               console=console)


LOADOUT_SCENARIO = SCENARIO_ROOT / "uboat_leader" / "loadout_example_fleets.yaml"


def bench_loadout(trials: int = 100_000, ref_trials: int = 100, console=None) -> dict:
    """Loadout trials/s (every fleet of scenarios/uboat_leader/loadout_example_fleets.yaml played
    on shared streams in each trial) against the campaign reference playing each fleet once."""
    def simulate(ref, params, rules, n):
        data = ref.load_campaign_data(str(LOADOUT_SCENARIO.parent))
        base = {k: v for k, v in params.items() if k not in ("fleets", "enumerate", "levels", "max_fleets")}
        for plan in params["fleets"]:
            policy = dict(base.get("policy") or {})
            if plan.get("so") is not None:
                policy["so"] = plan["so"]
            ref.simulate(dict(base, fleet=plan["fleet"], policy=policy), rules, data, n, 1)
    return kernel_vs_reference(LOADOUT_SCENARIO, point=0, game="uboat_leader", question="loadout", trials=trials,
                               ref_trials=ref_trials, target=TARGET_RATIO, reference="uboat_leader_campaign",
                               simulate=simulate, params_dump={"exclude_none": True},
                               describe="loadout: the example fleet and four alternatives on common random numbers",
                               console=console)


@register_benchmark("uboat-loadout")
def _bench_loadout_cli(console=None, trials: int | None = None) -> dict:
    return bench_loadout(trials or 100_000, console=console)


@register_benchmark("uboat-engagement")
def _bench_cli(console=None, trials: int | None = None) -> dict:
    return bench_engagement(trials or 2_000_000, console=console)


@register_benchmark("uboat-campaign")
def _bench_campaign_cli(console=None, trials: int | None = None) -> dict:
    return bench_campaign(trials or 500_000, console=console)
