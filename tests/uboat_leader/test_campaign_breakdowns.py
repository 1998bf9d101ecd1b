"""Issue 27 outputs: the campaign's per-patrol breakdown and the loadout's per-boat VP / loss and
mission VP per fleet (docs/models/uboat_leader_campaign.md §8, §14).

The breakdowns are identities over the same trials, so they are checked exactly: the per-patrol VP
sums to the campaign VP and the per-patrol losses to boats_lost in every run (the sums of the
integer per-trial values agree, not only the means); a loadout fleet's boats' VP sums to its VP; the
first fleet's per-boat values and mission VP are bit-identical to the campaign question's. The kernel
vs the separate reference on these metrics is part of tests/uboat_leader/test_campaign_kernel.py's
cases (every metric of both, 5 SE and chi-square)."""
import numpy as np

from kernels.uboat_leader import campaign_state as CS
from tests.uboat_leader.helpers import prepare, run_acc
from tests.uboat_leader.test_campaign_kernel import MISSION_RULES, MISSIONS_MEDIUM

TRIALS = 3 * 4096
FLEET = MISSIONS_MEDIUM["fleet"]


def _sum(prep, acc, name) -> int:
    """The sum over the trials of ``name``'s per-trial values (moments[:, 0], exact integers)."""
    i = [m.name for m in prep.metrics].index(name)
    return int(round(acc.moments[i, 0]))


def test_patrol_breakdown_adds_up_to_the_campaign_vp_and_losses():
    _, _, prep = prepare("campaign", MISSIONS_MEDIUM, MISSION_RULES)
    limit = int(prep.args[0][CS.K_PATROL_LIMIT])
    assert limit == 2                                   # medium Comienza la Batalla: two patrols a boat
    acc = run_acc(prep, TRIALS, seed=9, key=21)
    patrol_vp = [_sum(prep, acc, f"patrol_vp.{k}") for k in range(1, limit + 1)]
    patrol_lost = [_sum(prep, acc, f"patrol_lost.{k}") for k in range(1, limit + 1)]
    assert sum(patrol_vp) == _sum(prep, acc, "vp")
    assert sum(patrol_lost) == _sum(prep, acc, "boats_lost")
    assert min(patrol_vp) > 0 and patrol_lost[0] > 0    # both patrols happen and earn VP; boats are lost
    boats = [b["id"] for b in FLEET]
    assert sum(_sum(prep, acc, f"boat_vp.{b}") for b in boats) == _sum(prep, acc, "vp")


def test_patrol_metrics_are_labelled_by_patrol_in_the_answers_table():
    _, _, prep = prepare("campaign", MISSIONS_MEDIUM, MISSION_RULES)
    from analyzer.outputs.answers import quantity_and_entity
    m = {x.name: x for x in prep.metrics}
    assert quantity_and_entity(m["patrol_vp.2"]) == ("patrol_vp", None) and dict(m["patrol_vp.2"].coords) == {"patrol": 2}


def test_loadout_per_boat_vp_loss_and_mission_vp():
    plans = [{"name": "missions", "fleet": FLEET}, {"name": "plain", "fleet": [{"id": b["id"], "level": b["level"]}
                                                                            for b in FLEET]}]
    _, _, lo = prepare("loadout", {"duration": "medium", "fleets": plans, "policy": MISSIONS_MEDIUM["policy"]},
                       MISSION_RULES)
    _, _, camp = prepare("campaign", MISSIONS_MEDIUM, MISSION_RULES)
    a = run_acc(lo, TRIALS, seed=3, key=777)
    b = run_acc(camp, TRIALS, seed=3, key=777)
    names = [m.name for m in lo.metrics]
    for plan in plans:
        assert sum(_sum(lo, a, f"boat_vp.{plan['name']}.{x['id']}") for x in plan["fleet"]) == \
            _sum(lo, a, f"vp.{plan['name']}")
        assert sum(_sum(lo, a, f"boat_lost.{plan['name']}.{x['id']}") for x in plan["fleet"]) == \
            _sum(lo, a, f"boats_lost.{plan['name']}")
    # the first fleet sees the campaign question's own stream: bit-identical per boat and in mission VP
    cnames = [m.name for m in camp.metrics]
    for lo_name, c_name in [(f"mission_vp.missions", "mission_vp")] + [
            (f"boat_{q}.missions.{x['id']}", f"boat_{q}.{x['id']}") for x in FLEET for q in ("vp", "lost")]:
        i, j = names.index(lo_name), cnames.index(c_name)
        assert np.array_equal(a.moments[i], b.moments[j]), lo_name
    assert _sum(lo, a, "mission_vp.missions") > 0 and _sum(lo, a, "mission_vp.plain") == 0
