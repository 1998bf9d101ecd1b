"""campaign: the numba campaign kernel (kernels/uboat_leader/campaign.py) against the pure-Python
reference (analyzer/games/uboat_leader/reference_campaign.py) on small campaigns covering every rule
option and policy value of the abstract contact model, the four sheets, Special Missions,
advanced torpedoes, half-SO budgets, the turn cap and Seeker/Cool data, and the engagement
contact model (the tactical display) on two of them; the precomputed route and plan tables
entry by entry; thread-count independence; placeholders and ``strict``.

Spec: docs/models/uboat_leader_campaign.md. Tolerances: 5 combined standard errors
(tests/stat_checks.py SIGMAS) on every metric's mean (pooled two-proportion SE for the 0/1
metrics) and bin by bin on the VP and turns distributions; fixed seeds.
"""
import concurrent.futures
import math
import multiprocessing
import shutil

import numba
import numpy as np
import pytest
import yaml

from analyzer.core import scenario as scenario_mod
from analyzer.core.errors import ScenarioError
from analyzer.run.runner import prepare_point
from kernels.uboat_leader import campaign_state as CS
from analyzer.games.uboat_leader import reference_campaign as C
from tests.stat_checks import SIGMAS
from tests.uboat_leader.helpers import (SCEN, assert_distributions_agree, assert_means_agree,
                                        assert_thread_count_independent, prepare, run, run_acc)

KERNEL_TRIALS = 40_000
REF_TRIALS = 3_000
FLEET = [{"id": "U-43", "level": "trained"}, {"id": "U-47", "level": "trained"},
         {"id": "U-51", "level": "trained"}, {"id": "U-56", "level": "ace"}]
ABSTRACT = {"contact_model": "abstract"}

#: mine-laying, Attack and Raider missions, FAT/T5, half-SO left, and the mission rule options b
MISSIONS_MEDIUM = {
    "duration": "medium",
    "fleet": [{"id": "U-43", "level": "trained", "advanced": {"fat": 2, "t5": 1}, "missions": ["attack", "raider"]},
              {"id": "U-47", "level": "trained", "mines": 8},
              {"id": "U-51", "level": "trained", "missions": ["raider"]},
              {"id": "U-56", "level": "ace"}],
    "policy": {"mission": {"abort_band": "unfit", "salvo": 2, "keep_torpedoes": 1},
               "raider": {"weapons": "torpedoes_first", "keep_torpedoes": 2}, "so": "none"}}
MISSION_RULES = {"mission_box_events": "box_plus_move", "mine_box_events": "box_number", "mine_unfit": "too_late",
                 "raider_roll": "natural", "raider_xp": "per_vp"}

# name -> (params, rules, data override {"abilities": {U-boat id: [...]}, "split_year": year} or None)
CASES = {
    # the source's example fleet (l.202), every default
    "example_fleet": ({"fleet": FLEET}, {}, None),
    # mine-laying, Attack and Raider missions, FAT/T5, half-SO left; mission rule options b
    "missions_medium": (MISSIONS_MEDIUM, MISSION_RULES, None),
    # the same bought once at set-up (so_purchases b, the model before issue 27 item 4)
    "missions_medium_setup_only": (MISSIONS_MEDIUM, {"so_purchases": "setup_only", **MISSION_RULES}, None),
    # Attack and Raider missions bought again at sea (policy.so.missions_at_sea, l.296, l.311)
    "missions_at_sea": ({**MISSIONS_MEDIUM, "policy": {**MISSIONS_MEDIUM["policy"],
                                                       "so": {"order": [], "missions_at_sea": True}}},
                        MISSION_RULES, None),
    # per-boat patrol, endurance and activation order; loadouts bought after Intelligence, with a reserve
    "per_boat_policies": (
        {"duration": "medium",
         "fleet": [{"id": "U-43", "level": "trained", "advanced": {"fat": 1},
                    "policy": {"patrol": {"area": "Islas Británicas"}, "endurance": "aggressive"}},
                   {"id": "U-47", "level": "trained", "mines": 4, "policy": {"endurance": {"max_turns_at_sea": 2}}},
                   {"id": "U-51", "level": "trained", "missions": ["attack"], "policy": {"patrol": "nearest"}},
                   {"id": "U-56", "level": "ace", "policy": {"order": 0}}],
         "policy": {"so": {"order": ["intelligence", "loadout"], "reserve": 1}}},
        {}, None),
    # packs in one Area, Radio Calls, support purchases; Warning / Attacked options b
    "packs_support_long": (
        {"duration": "long",
         "fleet": [{"id": "U-47", "level": "veteran"}, {"id": "U-51", "level": "green"},
                   {"id": "U-20", "level": "trained"}, {"id": "U-23", "level": "green"},
                   {"id": "U-56", "level": "trained"}],
         "policy": {"patrol": "nearest", "endurance": "aggressive",
                    "wolfpack": {"escorts_at_least": 1}, "radio_call": {"escorts_at_least": 2},
                    "so": {"order": ["priority_rr", "supply_ship", "intelligence"], "reserve": 4,
                           "rr_min_stress": 2}}},
        {"radio_call_cost": "per_joiner", "wolfpack_stress_join": "stress_fails",
         "attacked_marker": "joiners_not_searched", "attacked_duration": "until_port",
         "warning_placement": "attack_only", "warning_duration": "campaign"}, None),
    # two ports, Air Search, spread patrols, fewest_areas routes; calendar / movement / Unfit options b
    "tiempos_air_search": (
        {"campaign": "los_tiempos_felices", "duration": "medium",
         "fleet": [{"id": "U-43", "level": "veteran"}, {"id": "U-98", "level": "green", "port": "Lorient"},
                   {"id": "U-201", "level": "trained", "port": "Lorient"}, {"id": "U-47", "level": "trained"}],
         "policy": {"so": "air_search", "air_search_choice": "fewest_escorts", "patrol": "spread",
                    "route": "fewest_areas", "endurance": "cautious", "attack": "no_naval", "radio_call": "always"}},
        {"calendar": "advancing", "map_movement": "one_area", "unfit_return": "tactical", "cool": "in_port"}, None),
    # Tactics cup in use, submerged approach, advanced torpedoes as normal; reload / promotion options
    "presa_tactics_long": (
        {"campaign": "la_presa", "duration": "long",
         "fleet": [{"id": "U-98", "level": "ace", "advanced": {"fat": 3, "t5": 1}},
                   {"id": "U-201", "level": "veteran"}, {"id": "U-43", "level": "trained", "stored": 6}],
         "policy": {"so": {"order": ["intelligence"], "reserve": 2},
                    "tactical": {"approach": "submerged", "salvo": 3}}},
        {"campaign_reload": "port_only", "promotion": "in_port", "advanced_torpedoes": "as_normal",
         "counter_duration": "strategic_only", "damage_stacking": "stack", "post_combat_stress": "none"}, None),
    # a fixed patrol Area, no attacks, the named turn cap reached
    "drumbeat_turn_cap": (
        {"campaign": "operacion_drumbeat", "max_turns": 4,
         "fleet": [{"id": "U-98", "level": "trained"}, {"id": "U-43", "level": "trained", "missions": ["raider"]}],
         "policy": {"patrol": {"area": "Costa Este"}, "attack": "never",
                    "endurance": {"return_band": "unfit", "max_turns_at_sea": 20}}},
        {"campaign_reload": "refit_only", "promotion": "none"}, None),
    # contact model engagement (C§7.4): the example fleet on the tactical display, every default
    "engagement_example": ({"fleet": FLEET}, {"contact_model": "engagement"}, None),
    # engagement model with the Tactics cup, FAT/T5 (escorts are targets), packs, engagement options
    "engagement_presa_advanced": (
        {"campaign": "la_presa", "duration": "medium",
         "fleet": [{"id": "U-98", "level": "ace", "advanced": {"fat": 3, "t5": 2}},
                   {"id": "U-201", "level": "veteran"}, {"id": "U-43", "level": "trained"}],
         "policy": {"patrol": "nearest", "tactical": {"approach": "dive_on_detection", "salvo": 3,
                                                      "attack_escorts": True}}},
        {"contact_model": "engagement", "tactics_timing": "per_roll", "escort_vp": "zero",
         "reload": "submerged_end_of_round", "campaign_reload": "refit_only"}, None),
    # Seeker and Cool (abilities from a data folder beside the scenario)
    "seeker_cool": (
        {"duration": "medium", "fleet": FLEET, "policy": {"wolfpack": "never", "attack": {"max_escorts": 0}}},
        {"cool": "every_refit"}, {"abilities": {"U-43": ["seeker"], "U-47": ["cool"], "U-51": ["seeker", "cool"]}}),
    # Cool in port only; an advancing calendar that crosses the Events' split year (data: 1940);
    # the Attacked markers placed once every boat has acted (attacked_timing b)
    "cool_in_port_calendar": (
        {"duration": "medium", "fleet": FLEET, "policy": {"so": "air_search", "wolfpack": {"escorts_at_least": 2}}},
        {"cool": "in_port", "calendar": "advancing", "attacked_timing": "end_of_turn"},
        {"abilities": {"U-47": ["cool"], "U-56": ["cool"]}, "split_year": 1940}),
}


def _override(tmp_root, override):
    """A copy of the game data with U-boat abilities (and the Events' split year) set: a
    folder beside the scenario."""
    shutil.copytree(SCEN / "data", tmp_root / "data")
    shutil.copytree(SCEN / "campaigns", tmp_root / "campaigns")
    doc = yaml.safe_load((SCEN / "data" / "uboats.yaml").read_text())
    for card in doc["uboats"]:
        if card["id"] in override["abilities"]:
            card["abilities"] = override["abilities"][card["id"]]
    (tmp_root / "data" / "uboats.yaml").write_text(yaml.safe_dump(doc, allow_unicode=True))
    if "split_year" in override:
        events = tmp_root / "data" / "campaign" / "events.yaml"
        doc = yaml.safe_load(events.read_text())
        doc["events"]["split_year"] = override["split_year"]
        events.write_text(yaml.safe_dump(doc, allow_unicode=True))
    return tmp_root


def _reference_part(params, rules, folder, n, seed):
    data = C.load_campaign_data(folder) if folder else None
    return C.simulate(params, rules, data, n, seed)


def reference(params, rules, folder, n, seed, workers=2):
    """C.simulate over n trials in ``workers`` forked processes (part i seeded seed * 1009 + i)."""
    parts = [n // workers + (1 if i < n % workers else 0) for i in range(workers)]
    ctx = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=ctx) as pool:
        futures = [pool.submit(_reference_part, params, rules, folder, k, seed * 1009 + i) for i, k in enumerate(parts)]
        results = [f.result() for f in futures]
    return {k: [v for r in results for v in r[k]] for k in results[0]}


@pytest.fixture(scope="module")
def data_root(tmp_path_factory):
    return tmp_path_factory.mktemp("campaign_data")


#: the three longest cases (30-45 s of pure-Python reference each on 2 busy cores) are marked
#: slow: they run in `make test-full`, which CI runs after `make test`. They are the only cases
#: of some options (packs with Radio Calls and support purchases, the Warning/Attacked options b;
#: the Tactics cup, reload and promotion options; the engagement model with FAT/T5 and packs), so
#: a change to those rules is checked against the reference by `make test-full`, not `make test`
SLOW_CASES = ("packs_support_long", "presa_tactics_long", "engagement_presa_advanced")


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.slow) if c in SLOW_CASES else c for c in CASES])
def test_kernel_matches_reference(case, data_root):
    params, rules, override = CASES[case]
    rules = {**ABSTRACT, **rules}
    folder = None
    scenario_dir = SCEN
    if override:
        folder = _override(data_root / case, override)
        scenario_dir = folder
    _, _, prep = prepare("campaign", params, rules, scenario_dir=scenario_dir)
    ours = run(prep, KERNEL_TRIALS, seed=3)
    ref = reference(params, rules, str(folder) if folder else None, REF_TRIALS, 29)
    names = [m.name for m in prep.metrics]
    assert sorted(names) == sorted(ref), "the kernel's metrics are the reference's (C§8)"
    for m in prep.metrics:
        if m.is_probability:
            assert_proportions_agree(ours[m.name], ref[m.name], f"{case}: {m.name}")
        else:
            assert_means_agree(ours[m.name], [v * m.scale for v in ref[m.name]], f"{case}: mean {m.name}")
    assert_distributions_agree(ours["vp"], ref["vp"], f"{case}: distribution of vp")
    assert_distributions_agree(ours["turns"], ref["turns"], f"{case}: distribution of turns")


def assert_proportions_agree(kernel_counts, sample, what):
    """Two-proportion test with the pooled SE: a rare event (a success level almost never
    reached) that the reference sample never shows still gets an honest SE."""
    nk = kernel_counts.sum()
    k = kernel_counts[1] if len(kernel_counts) > 1 else 0
    nr = len(sample)
    r = sum(sample)
    pooled = (k + r) / (nk + nr)
    se = math.sqrt(max(pooled * (1 - pooled), 1e-12) * (1 / nk + 1 / nr))
    z = abs(k / nk - r / nr) / se
    assert z < SIGMAS, f"{what}: kernel {k / nk:.5g} vs reference {r / nr:.5g}: {z:.2f} pooled SE"


def test_cases_exercise_what_they_name():
    """The comparison cases are not vacuous: missions score, packs and purchases happen, the
    turn cap is reached, half SO are kept (kernel means)."""
    def means(case):
        params, rules, _ = CASES[case]
        _, _, prep = prepare("campaign", params, {**ABSTRACT, **rules})
        acc = run_acc(prep, 8192, seed=5)
        return {m.name: acc.summary(i, m.scale).mean for i, m in enumerate(prep.metrics)}
    m = means("missions_medium")  # bought at every Strategic Segment: the SO the boats left is spent on them
    assert m["mine_vp"] > 0 and m["attack_vp"] > 0 and m["raider_vp"] > 0 and m["missions_failed"] > 0
    assert m["so_left"] + m["so_spent"] == 16 and m["so_spent"] > 3.5  # 45 - (8 + 7 + 6 + 8); > one patrol's
    at_sea = means("missions_at_sea")  # the Attack / Raider missions bought again at sea: more SO spent on them
    assert at_sea["attack_vp"] > 0 and at_sea["raider_vp"] > 0 and at_sea["so_spent"] > m["so_spent"] + 1
    m = means("missions_medium_setup_only")
    assert m["mine_vp"] > 0 and m["attack_vp"] > 0 and m["raider_vp"] > 0 and m["missions_failed"] > 0
    assert m["so_left"] == 10.5 and m["so_spent"] == 0  # 45 - (11.5 + 8 + 7 + 8)
    m = means("per_boat_policies")
    assert m["mine_vp"] > 0 and m["attack_vp"] > 0 and m["so_spent"] > 0
    m = means("packs_support_long")
    assert m["so_spent"] > 0
    for case in ("tiempos_air_search", "seeker_cool"):  # no_naval / max_escorts withdraw from some cards
        m = means(case)
        assert 0 < m["attacks"] < m["contacts"]
    m = means("drumbeat_turn_cap")
    assert 0 < m["p_turn_cap"] and m["contacts"] == 0 and m["turns"] <= 4
    m = means("example_fleet")
    assert m["so_left"] + m["so_spent"] == 3 and m["p_turn_cap"] == 0


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 numba threads")
@pytest.mark.parametrize("case", ["packs_support_long", "engagement_presa_advanced", "missions_medium", "per_boat_policies",
                                  "missions_at_sea"])
def test_same_seed_identical_with_1_and_2_threads(case):
    params, rules, _ = CASES[case]
    _, _, prep = prepare("campaign", params, {**ABSTRACT, **rules})
    assert_thread_count_independent(prep)


def test_deck_counters_stay_clean():
    _, _, prep = prepare("campaign", CASES["missions_medium"][0], {**ABSTRACT, **CASES["missions_medium"][1]})
    _, _, counters = prep.run_kernel(1, 3, 0, 1, 4096, 4096)
    names = [c.name for c in prep.counters]
    c = dict(zip(names, counters.sum(axis=0)))
    assert c["draws"] > 0 and c["reshuffles"] > 0
    assert c["draw_failed"] == 0 and c["duplicate_card"] == 0 and c["route_failed"] == 0


def test_engagement_model_is_the_default_and_differs_from_abstract():
    _, _, eng = prepare("campaign", {"fleet": FLEET})
    _, _, abstract = prepare("campaign", {"fleet": FLEET}, ABSTRACT)
    assert eng.args[0][CS.K_CONTACT_ENGAGEMENT] == 1 and abstract.args[0][CS.K_CONTACT_ENGAGEMENT] == 0
    assert "rules.escort_movement" in {p.path for p in eng.placeholders}
    assert not np.array_equal(run(eng, 4096)["vp"], run(abstract, 4096)["vp"])


def test_engagement_model_refuses_fleets_larger_than_a_pack(monkeypatch):
    """The shipped roster has 8 U-boats, the engagement's pack limit: lower the limit to see
    the check (a fleet may not outgrow the battle arrays)."""
    from kernels.uboat_leader import state as S
    fleet = [{"id": i, "level": "green"} for i in ("U-20", "U-23", "U-43", "U-47", "U-51", "U-56")]
    prepare("campaign", {"duration": "long", "fleet": fleet})  # 6 boats: fine
    monkeypatch.setattr(S, "MAX_BOATS", 5)
    with pytest.raises(ScenarioError, match="packs of at most 5"):
        prepare("campaign", {"duration": "long", "fleet": fleet})


def test_placeholders_listed_and_strict_refuses(tmp_path):
    path = SCEN / "campaign_example_fleet.yaml"
    sc = scenario_mod.load(path)
    prep = prepare_point(sc, sc.points[0])
    paths = {p.path for p in prep.placeholders}
    assert {"rules.uboat_attack", "rules.enemy_attack", "rules.escort_movement", "rules.post_combat_stress",
            "rules.campaign_reload", "rules.promotion", "campaign.durations.short.patrols", "campaign.vp_thresholds",
            "campaign_map.areas[1].contact_table", "events.cards[0].count", "tactical_display.layout",
            "combat.uboat_attack_module.damage_table", "convoys[0].slots[0].area"} <= paths
    assert "rules.advanced_torpedoes" not in paths  # no FAT/T5 in this fleet
    assert "campaign_map.layout" in paths  # the Areas and links beyond the examples are invented (G1)
    assert not any(p.startswith("campaign_rules.abstract_contact_module") for p in paths)
    _, _, abstract = prepare("campaign", {"fleet": FLEET}, ABSTRACT)
    abstract_paths = {p.path for p in abstract.placeholders}
    assert "campaign_rules.abstract_contact_module.escort_rolls_per_boat" in abstract_paths
    assert "rules.escort_movement" not in abstract_paths and "tactical_display.layout" not in abstract_paths
    examples = {p.path for p in prep.placeholders if p.is_example}
    assert "campaign.durations.short.so" in examples
    assert any("PLACEHOLDER" in n for n in prep.notes)
    strict = tmp_path / "strict.yaml"
    strict.write_text(path.read_text().replace("strict: false", "strict: true"))
    sc = scenario_mod.load(strict)
    with pytest.raises(ScenarioError, match="strict: true refuses placeholder values: rules.uboat_attack"):
        prepare_point(sc, sc.points[0])


@pytest.mark.parametrize("params,match", [
    ({"fleet": [{"id": "U-99"}]}, "unknown U-boat 'U-99'"),
    ({"fleet": FLEET + [{"id": "U-20", "level": "ace"}]}, "costs? 35 SO; the sheet gives 32"),
    ({"fleet": [{"id": "U-98"}]}, "outside the campaign"),
    ({"campaign": "operacion_drumbeat", "fleet": [{"id": "U-47"}]}, "allows VIIC, IX"),
    ({"fleet": [{"id": "U-56", "mines": 6}]}, "must fit in ready"),
    ({"fleet": [{"id": "U-47", "port": "Lorient"}]}, "not a Port box"),
    ({"fleet": [{"id": "U-47"}], "policy": {"patrol": {"area": "Canal Inglés"}}}, "not a sea Area"),
])
def test_bad_params_rejected(params, match):
    with pytest.raises(ScenarioError, match=match):
        prepare("campaign", params, ABSTRACT)


def test_params_model_rejects_unknown_keys_mines_mission_and_duplicates():
    from pydantic import ValidationError
    with pytest.raises(ValidationError):
        prepare("campaign", {"fleet": FLEET, "policy": {"bogus": 1}}, ABSTRACT)
    with pytest.raises(ValidationError, match="mines: n"):
        prepare("campaign", {"fleet": [{"id": "U-47", "missions": ["mine"]}]}, ABSTRACT)
    with pytest.raises(ValidationError, match="only once"):
        prepare("campaign", {"fleet": [{"id": "U-47"}, {"id": "U-47"}]}, ABSTRACT)


def test_metric_layout_matches_the_kernel_constants():
    _, _, prep = prepare("campaign", {"fleet": FLEET}, ABSTRACT)
    names = [m.name for m in prep.metrics]
    assert names[CS.M_VP] == "vp" and names[CS.M_MISSIONS_FAILED] == "missions_failed"
    assert names[CS.N_FIXED_METRICS:CS.N_FIXED_METRICS + 4] == ["p_level_poor", "p_level_adequate", "p_level_good",
                                                                "p_level_outstanding"]
    limit = int(prep.args[0][CS.K_PATROL_LIMIT])
    tail = 2 * limit                               # then patrol_vp.<k>, patrol_lost.<k> per patrol
    assert names[-5 - tail:-tail] == ["boat_vp.U-56", "boat_xp.U-56", "boat_lost.U-56", "boat_patrols.U-56",
                                      "boat_level.U-56"]
    assert names[-tail:] == [f"patrol_{q}.{k}" for k in range(1, limit + 1) for q in ("vp", "lost")]
    assert prep.args[0][CS.K_N_METRICS] == len(names)


ROUTE_FLEETS = {
    "comienza_la_batalla": [{"id": "U-20"}, {"id": "U-47"}, {"id": "U-56", "mines": 2}],
    "los_tiempos_felices": [{"id": "U-23"}, {"id": "U-98", "port": "Lorient", "missions": ["raider"]}, {"id": "U-43"}],
    "la_presa": [{"id": "U-98"}, {"id": "U-201"}],
    "operacion_drumbeat": [{"id": "U-98", "missions": ["raider"]}, {"id": "U-43"}],
}


@pytest.mark.parametrize("sheet", list(ROUTE_FLEETS))
@pytest.mark.parametrize("route,patrol", [("fewest_events", "best"), ("fewest_areas", "spread"),
                                          ("fewest_events", "nearest")])
def test_precomputed_routes_and_plans_match_the_reference_map(sheet, route, patrol):
    """C§4.3 / C§6: every entry of the kernel's next-Area, nearest-port, nearest-box and
    patrol-Area tables equals the reference's search from that Area (every map, class, home
    port and route policy), including the routes the comparison cases never take. A barred
    Area is never a destination (plans pick only Areas the class may enter)."""
    params = {"campaign": sheet, "duration": "long", "fleet": ROUTE_FLEETS[sheet],
              "policy": {"route": route, "patrol": patrol}}
    _, _, prep = prepare("campaign", params, ABSTRACT)
    nxt, nport, boxa, patrol_tab = prep.args[7:11]
    ref = C.new_campaign(params, ABSTRACT)
    cmap = ref.map
    checked = 0
    for i, b in enumerate(ref.boats):
        for a in range(len(cmap.names)):
            if cmap.barred(a, b["cls"]):
                continue
            near = cmap.nearest_port(a, b["cls"])
            assert nport[i, a] == (-1 if near is None else near), (b["id"], cmap.names[a])
            for dest in range(len(cmap.names)):
                if dest != a and not cmap.barred(dest, b["cls"]) and cmap.dist_to(dest, b["cls"])[a] is not None:
                    assert nxt[i, dest, a] == cmap.next_step(a, dest, b["cls"], route), (b["id"], a, dest)
                    checked += 1
            b["area"] = a
            for ms, t in (("mine", CS.MS_MINE), ("attack", CS.MS_ATTACK), ("raider", CS.MS_RAIDER)):
                if any(tt == ms and not cmap.barred(x, b["cls"]) and cmap.dist_to(x, b["cls"])[a] is not None
                       for (x, tt) in cmap.boxes):
                    assert boxa[i, a, t] == ref.mission_box_area(b, ms), (b["id"], a, ms)
            for home in cmap.ports:
                if cmap.dist_to(home, b["cls"])[a] is None:
                    continue
                b["home"] = home
                if not any(not cmap.barred(x, b["cls"]) and cmap.dist_to(x, b["cls"])[a] is not None
                           for x in cmap.seas):  # e.g. a Type II in Lorient (l.102): no patrol from here
                    assert patrol_tab[i, home, a] == -1, (b["id"], cmap.names[home], cmap.names[a])
                    continue
                assert patrol_tab[i, home, a] == ref.patrol_area(b), (b["id"], cmap.names[home], cmap.names[a])
    assert checked > 0
