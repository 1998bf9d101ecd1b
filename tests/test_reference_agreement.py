"""Every shipped scenario is also playable by its game's pure-Python reference, and the two
agree on what a trial produces: the same metric names, 0/1 for probabilities, values inside
the histogram the production kernel allocates (first and last sweep point of each file)."""
import math
from pathlib import Path

import pytest

from analyzer.core import scenario as scenario_mod
from analyzer.run.runner import prepare_point
from analyzer.games.b17 import reference as b17
from analyzer.games.breaking_news import reference as breaking_news
from analyzer.games.dystopian_wars import reference as dystopian_wars
from analyzer.games.hacse_naval import reference as hacse_naval
from analyzer.games.uboat_leader import reference as uboat_leader
from analyzer.games.uboat_leader import reference_campaign as uboat_leader_campaign

ROOT = Path(__file__).resolve().parent.parent
REFERENCES = {"b17": (b17, lambda: b17.load_data(None)),
              "dystopian_wars": (dystopian_wars, dystopian_wars.load_data),
              "uboat_leader": (uboat_leader, uboat_leader.load_data),
              "breaking_news": (breaking_news, breaking_news.load_data),
              "hacse_naval": (hacse_naval, hacse_naval.load_data)}
TRIALS = {"duel": 3, "fire_allocation": 3, "mission": 5, "engagement": 5, "firefight": 5, "fire": 3,
          "depth_charge_pattern": 3, "campaign": 5}


def _campaign_simulate(question, params, rules, data, n, seed):
    """The campaign reference's own signature (analyzer/games/uboat_leader/reference_campaign.py)."""
    return uboat_leader_campaign.simulate(params, rules, None, n, seed)


def shipped():
    for path in scenario_mod.expand_targets([str(ROOT / "scenarios")]):
        sc = scenario_mod.load(path)
        # loadout plays the campaign kernel once per fleet on shared streams: its fleet 0 is pinned
        # bit-identical to the campaign question (tests/uboat_leader/test_loadout.py), which the
        # campaign reference checks
        if sc.spec.game in REFERENCES and sc.spec.question != "loadout":
            yield pytest.param(path, id=path.relative_to(ROOT / "scenarios").as_posix())


@pytest.mark.parametrize("path", list(shipped()))
def test_reference_plays_every_shipped_scenario(path):
    sc = scenario_mod.load(path)
    module, load = REFERENCES[sc.spec.game]
    simulate = module.simulate
    if (sc.spec.game, sc.spec.question) == ("uboat_leader", "campaign"):
        simulate = _campaign_simulate
    else:
        assert sc.spec.question in module.QUESTIONS
    data = load()
    for point in {id(p): p for p in (sc.points[0], sc.points[-1])}.values():
        prepared = prepare_point(sc, point)
        params = point.params.model_dump(mode="json", exclude_unset=True)
        n = TRIALS.get(sc.spec.question, 20)
        out = simulate(sc.spec.question, params, point.rules, data, n, sc.spec.seed)
        where = f"{path.name} point {point.index}"
        assert set(out) == {m.name for m in prepared.metrics}, where
        for metric in prepared.metrics:
            values = out[metric.name]
            assert len(values) == n, (where, metric.name)
            assert all(math.isfinite(v) and v >= 0 for v in values), (where, metric.name, values)
            if metric.is_probability:
                assert set(values) <= {0, 1}, (where, metric.name, values)
            top = (prepared.n_bins - 1) / metric.scale
            assert max(values) <= top, f"{where}: {metric.name} = {max(values)} beyond the kernel's bins ({top})"
