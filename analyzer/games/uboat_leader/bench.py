"""``analyzer bench uboat-engagement`` / ``uboat-campaign`` / ``uboat-loadout``: the engagement,
campaign and loadout kernels' trials/s against their pure-Python references (``reference.py`` and
``reference_campaign.py`` beside this module) on the same battle / campaign, measured in the same
run; and the rows of the other U-Boat Leader kernels (:func:`analyzer.bench.kernels.register_kernel_benches`)."""
from __future__ import annotations

from analyzer.bench.harness import STATEFUL_TARGET, kernel_vs_reference, register_benchmark, scaled
from analyzer.bench.kernels import KernelBench, register_kernel_benches
from analyzer.core.questions import SCENARIO_ROOT

#: the pure-Python references (ship with the game, not imported with it): the tactical
#: questions' and the campaign's
REFERENCE = f"{__package__}.reference"
CAMPAIGN_REFERENCE = f"{__package__}.reference_campaign"
SCENARIO = SCENARIO_ROOT / "uboat_leader" / "convoy37_engagement.yaml"
CAMPAIGN_SCENARIO = SCENARIO_ROOT / "uboat_leader" / "campaign_example_fleet.yaml"
LOADOUT_SCENARIO = SCENARIO_ROOT / "uboat_leader" / "loadout_example_fleets.yaml"
TARGET_RATIO = STATEFUL_TARGET  # issue "performance": every stateful kernel >= 300x its pure-Python reference
#: kernel and reference trials of a full run
ENGAGEMENT_TRIALS, ENGAGEMENT_REF_TRIALS = 2_000_000, 3_000
CAMPAIGN_TRIALS, CAMPAIGN_REF_TRIALS = 500_000, 1_000
LOADOUT_TRIALS, LOADOUT_REF_TRIALS = 100_000, 100


def bench_engagement(trials: int = ENGAGEMENT_TRIALS, ref_trials: int = ENGAGEMENT_REF_TRIALS,
                     console=None) -> dict:
    """Kernel and reference trials/s on convoy card 37 against a veteran U-98 (first point of
    scenarios/uboat_leader/convoy37_engagement.yaml: surfaced approach)."""
    return kernel_vs_reference(SCENARIO, point=0, question="engagement", reference=REFERENCE, trials=trials,
                               ref_trials=ref_trials, target=TARGET_RATIO, params_dump={},
                               describe="battle: convoy card 37 (2 E + 4 M) vs veteran U-98, surfaced approach",
                               console=console)


def bench_campaign(trials: int = CAMPAIGN_TRIALS, ref_trials: int = CAMPAIGN_REF_TRIALS, console=None) -> dict:
    """Kernel and reference campaigns/s on the source's example fleet (first point of
    scenarios/uboat_leader/campaign_example_fleet.yaml: short Comienza la Batalla, contacts on the
    tactical display, Intelligence bought with the 3 SO left)."""
    def simulate(ref, params, rules, n):
        ref.simulate(params, rules, ref.load_campaign_data(str(CAMPAIGN_SCENARIO.parent)), n, 1)
    return kernel_vs_reference(CAMPAIGN_SCENARIO, point=0, question="campaign", reference=CAMPAIGN_REFERENCE,
                               trials=trials, ref_trials=ref_trials, target=TARGET_RATIO, simulate=simulate,
                               params_dump={"exclude_none": True},
                               describe="campaign: example fleet (U-43, U-47, U-51, U-56), short Comienza la Batalla",
                               console=console)


def bench_loadout(trials: int = LOADOUT_TRIALS, ref_trials: int = LOADOUT_REF_TRIALS, console=None) -> dict:
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
    return kernel_vs_reference(LOADOUT_SCENARIO, point=0, question="loadout", reference=CAMPAIGN_REFERENCE,
                               trials=trials, ref_trials=ref_trials, target=TARGET_RATIO, simulate=simulate,
                               params_dump={"exclude_none": True},
                               describe="loadout: the example fleet and four alternatives on common random numbers",
                               console=console)


@register_benchmark("uboat-loadout", questions=(("uboat_leader", "loadout"),), scenarios=(LOADOUT_SCENARIO,),
                    references=(CAMPAIGN_REFERENCE,), quick_trials=20_000, target=TARGET_RATIO)
def _bench_loadout_cli(console=None, trials: int | None = None) -> dict:
    # a reference trial plays every fleet (5 campaigns): 20 of them already time 100 campaigns
    return bench_loadout(trials or LOADOUT_TRIALS, scaled(LOADOUT_REF_TRIALS, trials, LOADOUT_TRIALS, floor=20),
                         console=console)


#: ``analyzer search`` on every affordable fleet of 32 SO (trained crews) x every SO plan
SEARCH_SCENARIO = SCENARIO_ROOT / "uboat_leader" / "loadout_enumerate.yaml"
SEARCH_SO_PLANS = ["intel", "none", "air_search", "support"]
SEARCH_MAX_TRIALS = 262_144
#: issue 30's acceptance: the search spends at most 1/10 of evaluating every option to its final trials
SEARCH_TARGET = 0.1


def bench_search(max_trials: int = SEARCH_MAX_TRIALS, console=None) -> dict:
    """``analyzer search`` (margin 0, 95%) on the options of scenarios/uboat_leader/loadout_enumerate.yaml
    (59 affordable fleets of trained crews for 32 SO) x the four SO plans: option-trials the kernel
    played (the stream's anchor fleet included) against every option at the final trial count.
    Below 16,384 trials (``--smoke``) it races the five plans of loadout_example_fleets.yaml instead
    (the row's shape, not its ratio)."""
    from analyzer.analyses import search as sr
    from analyzer.bench.harness import row, say
    if max_trials < 16_384:
        _, space = sr.load(LOADOUT_SCENARIO)
        what = "search: kernel option-trials / exhaustive (smoke: the 5 example plans)"
    else:
        _, space = sr.load(SEARCH_SCENARIO, so_plans=SEARCH_SO_PLANS)
        what = (f"search: kernel option-trials / exhaustive ({len(space.names)} options: fleets for 32 SO x "
                f"{len(SEARCH_SO_PLANS)} SO plans, margin 0, 95%)")
    s = sr.run_search(space, max_trials=max_trials)
    doc = sr.document(s)
    say(console, f"    {len(space.names)} options, {len(s.rounds)} rounds to {s.final_trials:,} trials, chosen "
                 f"{s.chosen} ({s.stop}; tied: {', '.join(s.tied)}); option-trials spent {s.trials_spent:,} "
                 f"(kernel {s.runs:,} with the anchor) vs exhaustive {s.exhaustive_trials:,}: "
                 f"{doc['spent_over_exhaustive']:.4f} ({doc['kernel_over_exhaustive']:.4f}); {s.wall_seconds:.1f} s")
    return {"rows": [row("uboat-search", what, s.runs, "option-trials", doc["kernel_over_exhaustive"], SEARCH_TARGET,
                         better="lower", reference="every option at the final trial count",
                         reference_rate=s.exhaustive_trials)]}


@register_benchmark("uboat-search", scenarios=(SEARCH_SCENARIO, LOADOUT_SCENARIO), quick_trials=32_768,
                    target=SEARCH_TARGET)
def _bench_search_cli(console=None, trials: int | None = None) -> dict:
    return bench_search(trials or SEARCH_MAX_TRIALS, console=console)


@register_benchmark("uboat-engagement", questions=(("uboat_leader", "engagement"),), scenarios=(SCENARIO,),
                    references=(REFERENCE,), scaling=SCENARIO, target=TARGET_RATIO)
def _bench_cli(console=None, trials: int | None = None) -> dict:
    return bench_engagement(trials or ENGAGEMENT_TRIALS, scaled(ENGAGEMENT_REF_TRIALS, trials, ENGAGEMENT_TRIALS),
                            console=console)


@register_benchmark("uboat-campaign", questions=(("uboat_leader", "campaign"),), scenarios=(CAMPAIGN_SCENARIO,),
                    references=(CAMPAIGN_REFERENCE,), scaling=CAMPAIGN_SCENARIO, quick_trials=50_000,
                    target=TARGET_RATIO)
def _bench_campaign_cli(console=None, trials: int | None = None) -> dict:
    return bench_campaign(trials or CAMPAIGN_TRIALS, scaled(CAMPAIGN_REF_TRIALS, trials, CAMPAIGN_TRIALS),
                          console=console)


_M = 1_000_000
register_kernel_benches(REFERENCE, {
    "uboat-escort-detection": KernelBench(
        "uboat_leader", "escort_detection", "uboat_leader/escort_detection_example.yaml",
        "one escort against a surfaced U-boat at range 3, 1 Alerted marker", "single-step", 20 * _M, 2 * _M,
        80_000),
    "uboat-wolfpack": KernelBench(
        "uboat_leader", "wolfpack", "uboat_leader/wolfpack_size.yaml", "3 candidates rolling to join the pack",
        "stateful", 20 * _M, 2 * _M, 100_000, {"candidates": 3}),
})
