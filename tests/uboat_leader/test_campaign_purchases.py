"""campaign: Special Option purchases at every Strategic Segment (issue 27 item 4) and per-boat
policies (docs/models/uboat_leader_campaign.md §4.1, §6, §13.2).

l.238 "Al inicio de cada Segmento Estratégico, gasta puntos de Opción Especial y asigna Misiones
Especiales"; l.255-256 the SO left after the U-boats "para adquirir opciones durante la Campaña ...
alguno, ninguno, o todos ... durante un Segmento Estratégico"; l.273 advanced torpedoes for a boat
"en un recuadro de Puerto"; l.288 mine-laying only in port; l.285 more than one mission per boat.
Checked step by step on the pure-Python reference and as exact outcomes of the kernel (the
kernel matches the reference within 5 SE on `missions_medium`, `missions_medium_setup_only` and
`per_boat_policies` in tests/uboat_leader/test_campaign_kernel.py).
"""
import re

import numpy as np
import pytest

from analyzer.core.errors import ScenarioError
from analyzer.core import scenario as scenario_mod
from analyzer.games.uboat_leader import reference_campaign as C
from kernels.uboat_leader import campaign_state as CS
from tests.uboat_leader.helpers import SCEN, prepare, run

ABSTRACT = {"contact_model": "abstract"}
#: U-47 (trained, 7 SO) laying 8 mines in a medium campaign (2 patrols, placeholder), nothing else bought
MINES_MEDIUM = {"duration": "medium", "fleet": [{"id": "U-47", "level": "trained", "mines": 8}],
                "policy": {"so": "none"}}
FLEET = [{"id": "U-43", "level": "trained"}, {"id": "U-47", "level": "trained"},
         {"id": "U-51", "level": "trained"}, {"id": "U-56", "level": "ace"}]


def _boxes(camp, kind):
    return [t for t in camp.trace if t[2] == "box" and t[3] == kind]


# ------------------------------------------------------------------ item 4: purchases every Strategic Segment
def test_a_medium_campaign_boat_lays_mines_on_each_patrol_reference():
    """The mine mission is bought again when the boat sails on its second patrol (l.238, l.288)."""
    camp = C.new_campaign(MINES_MEDIUM, ABSTRACT, None, seed=3)
    m = camp.run()
    assert len(_boxes(camp, "mine")) == 2 and m["mine_vp"] == 8  # 8 mines -> 4 VP (l.294), twice
    assert [t[3] for t in camp.trace if t[2] == "so"] == ["mine", "mine"]
    assert m["so_spent"] == 2 and m["so_left"] == camp.so_total - 7 - 2  # 1 SO a mission (ph), the rest kept
    old = C.new_campaign(MINES_MEDIUM, {**ABSTRACT, "so_purchases": "setup_only"}, None, seed=3)
    m_old = old.run()
    assert len(_boxes(old, "mine")) == 1 and m_old["mine_vp"] == 4 and m_old["so_spent"] == 0


def test_a_medium_campaign_boat_lays_mines_on_each_patrol_kernel():
    """Kernel: under the default some trials score two mine missions (8 VP); under setup_only none
    scores more than one (the model before issue 27 item 4)."""
    _, _, prep = prepare("campaign", MINES_MEDIUM, ABSTRACT)
    mine = run(prep, 8192, seed=5)["mine_vp"]
    assert mine[8] > 0 and mine[5:].sum() == mine[8]
    _, _, prep_old = prepare("campaign", MINES_MEDIUM, {**ABSTRACT, "so_purchases": "setup_only"})
    old = run(prep_old, 8192, seed=5)["mine_vp"]
    assert old[5:].sum() == 0 and old[4] > 0


def test_unspent_so_is_carried_through_the_campaign_kernel():
    """l.256: points not spent stay for later Segments; so_spent + so_left is the SO the U-boats left,
    in every trial (its histogram is one value)."""
    params = {"duration": "medium", "fleet": [{"id": "U-47", "level": "trained", "mines": 8},
                                              {"id": "U-43", "level": "trained", "advanced": {"fat": 2, "t5": 1},
                                               "missions": ["attack"]}], "policy": {"so": "none"}}
    _, _, prep = prepare("campaign", params, ABSTRACT)
    hist, _, _ = prep.run_kernel(5, 7, 0, 1, 4096, 4096)
    names = [m.name for m in prep.metrics]
    left = hist.sum(axis=0)[names.index("so_left")]
    spent = hist.sum(axis=0)[names.index("so_spent")]
    so_total = prep.args.config[CS.K_SO_START]  # half points: the sheet's SO minus the boats only
    assert so_total == 2 * (45 - 7 - 8)
    values = np.arange(len(left))
    assert (left * values).sum() + (spent * values).sum() == so_total * left.sum()
    assert (spent * values).sum() > 0


def test_advanced_torpedoes_only_for_a_boat_in_a_port_box():
    """l.273: at sea nothing is bought; back in a Port box the boat tops up to its entry's counts."""
    params = {"fleet": [{"id": "U-43", "level": "trained", "advanced": {"fat": 2, "t5": 1}}], "policy": {"so": "none"}}
    camp = C.new_campaign(params, ABSTRACT, None, seed=1)
    b = camp.boats[0]
    assert (b["fat"], b["t5"]) == (0, 0)  # nothing aboard before the first Strategic Segment
    camp.turn = 1
    b["area"] = camp.map.kind.index("sea")
    so0 = camp.so
    camp.strategic()
    assert (b["fat"], b["t5"], camp.so) == (0, 0, so0)
    b["area"] = camp.map.ports[0]
    camp.strategic()
    assert (b["fat"], b["t5"]) == (2, 1) and camp.so == so0 - 1.5  # ½ SO each (l.275)
    b["fat"] = 0  # two fired: the next sailing buys two again
    camp.strategic()
    assert b["fat"] == 2 and camp.so == so0 - 2.5


def test_missions_respect_the_reserve_and_max():
    """A purchase needs so - cost >= reserve (policy) and bought + 1 <= max (l.179)."""
    params = {**MINES_MEDIUM, "policy": {"so": {"order": [], "reserve": 100}}}
    camp = C.new_campaign(params, ABSTRACT, None, seed=3)
    assert camp.run()["mine_vp"] == 0
    data = C.load_campaign_data()
    data["campaigns"]["comienza_la_batalla"]["so_options"]["mine_laying"]["max"] = 1
    camp = C.new_campaign(MINES_MEDIUM, ABSTRACT, data, seed=3)
    assert camp.run()["mine_vp"] == 4 and len(_boxes(camp, "mine")) == 1


def test_setup_only_keeps_the_old_budget_check_and_default_checks_the_boats_only():
    """setup_only refuses a fleet whose loadout overruns the SO at set-up (the old check); the default
    refuses only U-boats that cost more than the sheet gives (l.198) and buys what it can later."""
    fleet = [{"id": "U-43", "level": "trained", "advanced": {"fat": 6}}, {"id": "U-47", "level": "trained"},
             {"id": "U-51", "level": "trained"}, {"id": "U-56", "level": "ace"}]  # 29 + 3 = 32 of 32
    fleet[1]["missions"] = ["attack"]  # 33 > 32
    with pytest.raises(Exception, match="costs 33 SO"):
        prepare("campaign", {"fleet": fleet}, {**ABSTRACT, "so_purchases": "setup_only"})
    _, _, prep = prepare("campaign", {"fleet": fleet}, ABSTRACT)
    assert prep.args.config[CS.K_SO_START] == 2 * 3
    assert "U-boats cost 29 of 32 SO" in prep.notes[1]


# ------------------------------------------------------------------ per-boat policies
OWN = {"patrol": {"area": "Islas Británicas"}, "endurance": "aggressive"}


def _fleet_with(k, policy):
    fleet = [dict(b) for b in FLEET]
    fleet[k]["policy"] = policy
    return fleet


def test_a_boat_policy_equal_to_the_shared_one_gives_identical_results():
    """The default (no fleet[i].policy) is the shared policy: writing it out per boat changes no bit."""
    _, _, shared = prepare("campaign", {"fleet": FLEET}, ABSTRACT)
    _, _, own = prepare("campaign", {"fleet": _fleet_with(1, {"patrol": "best", "endurance": "balanced"})}, ABSTRACT)
    for a, b in zip(shared.args, own.args):
        assert np.array_equal(a, b)
    ra, rb = run(shared, 4096, seed=2), run(own, 4096, seed=2)
    assert all(np.array_equal(ra[k], rb[k]) for k in ra)


def test_a_boat_override_changes_only_that_boats_plan():
    """Compiled: only boat 1's patrol table and endurance columns differ; reference: only boat 1's
    plan moves (to its own Area), and it stays out longer."""
    _, _, shared = prepare("campaign", {"fleet": FLEET}, ABSTRACT)
    _, _, own = prepare("campaign", {"fleet": _fleet_with(1, OWN)}, ABSTRACT)
    diff = np.argwhere((shared.args.patrol_area != own.args.patrol_area).any(axis=(1, 2))).ravel()
    assert list(diff) == [1]
    rows = np.argwhere((shared.args.loadouts != own.args.loadouts).any(axis=1)).ravel()
    assert list(rows) == [1]
    row = own.args.loadouts[1]
    assert row[CS.BS_RETURN_BAND] == CS.BAND_UNFIT and row[CS.BS_MAX_TURNS_AT_SEA] == 8  # aggressive
    a = C.new_campaign({"fleet": FLEET}, ABSTRACT, None, seed=1)
    b = C.new_campaign({"fleet": _fleet_with(1, OWN)}, ABSTRACT, None, seed=1)
    a.turn = b.turn = 1
    a.strategic()
    b.strategic()
    plans_a = [x["dest"] for x in a.boats]
    plans_b = [x["dest"] for x in b.boats]
    assert plans_b[1] == b.map.index["Islas Británicas"] != plans_a[1]
    assert plans_a[:1] + plans_a[2:] == plans_b[:1] + plans_b[2:]
    for camp in (a, b):
        camp.boats[1]["area"] = camp.map.index["Islas Británicas"]
        camp.boats[1]["turns_at_sea"] = 5
    assert a.should_return(a.boats[1]) and not b.should_return(b.boats[1])
    assert not b.should_return(b.boats[2]) or a.should_return(a.boats[2])


def test_a_boat_override_moves_that_boats_results_kernel():
    """Boat 1 patrolling the Islas Británicas instead of the best Area scores differently (kernel)."""
    _, _, shared = prepare("campaign", {"fleet": FLEET}, ABSTRACT)
    _, _, own = prepare("campaign", {"fleet": _fleet_with(1, {"patrol": {"area": "Islas Británicas"}})}, ABSTRACT)
    assert not np.array_equal(run(shared, 4096, seed=2)["boat_vp.U-47"], run(own, 4096, seed=2)["boat_vp.U-47"])


def test_a_boat_order_makes_it_move_and_search_first():
    """fleet[i].policy.order: the activation order of Operations and the Tactical Segment ('uno por uno',
    l.240, l.246): U-56 with order 0 moves first, the others keep list order (ties by list order)."""
    params = {"fleet": _fleet_with(3, {"order": 0})}
    _, _, prep = prepare("campaign", params, ABSTRACT)
    assert list(prep.args.loadouts[:4, CS.BS_ACTIVATION]) == [0, 3, 1, 2]  # U-43 (0) ties U-56 (0): list order
    _, _, plain = prepare("campaign", {"fleet": FLEET}, ABSTRACT)
    assert list(plain.args.loadouts[:4, CS.BS_ACTIVATION]) == [0, 1, 2, 3]
    fleet = _fleet_with(3, {"order": 0})
    fleet[0]["policy"] = {"order": 5}  # U-43 after everyone
    first = C.new_campaign({"fleet": fleet, "policy": {"so": "none"}}, ABSTRACT, None, seed=1)
    first.turn = 1
    first.strategic()
    first.operations()
    movers = []
    for t in first.trace:
        if t[2] == "move" and t[1] not in movers:
            movers.append(t[1])
    assert movers == ["U-56", "U-47", "U-51", "U-43"]
    camp = C.new_campaign({"fleet": _fleet_with(0, {"order": 9})}, ABSTRACT, None, seed=1)
    assert [b["id"] for b in camp.acting] == ["U-47", "U-51", "U-56", "U-43"]


def test_a_boat_order_moves_the_results_kernel():
    _, _, shared = prepare("campaign", {"fleet": FLEET}, ABSTRACT)
    _, _, own = prepare("campaign", {"fleet": _fleet_with(0, {"order": 9})}, ABSTRACT)
    a, b = run(shared, 4096, seed=2), run(own, 4096, seed=2)
    assert not np.array_equal(a["vp"], b["vp"])


@pytest.mark.parametrize("policy, match", [
    ({"endurance": "reckless"},
     r"params.fleet\[1\].policy.endurance.*'reckless'.*'balanced', 'cautious' or 'aggressive'"),
    ({"patrol": {"area": "Nowhere"}}, r"params.fleet\[1\].policy.patrol.area: 'Nowhere' is not a sea Area U-47 can "
                                      r"reach.*allowed: Mar del Norte"),
    ({"route": "fewest_areas"}, r"params.fleet\[1\].policy.*route"),
    ({"order": -1}, r"params.fleet\[1\].policy.order.*got -1; must be >= 0"),
])
def test_a_bad_boat_policy_is_refused_naming_file_field_and_values(tmp_path, policy, match):
    """Validated at the edge: the error names the scenario file, the field and the allowed values."""
    from analyzer.core import questions
    text = (SCEN / "campaign_example_fleet.yaml").read_text()
    old = "    - {id: U-47, level: trained}"
    assert old in text
    path = tmp_path / "bad.yaml"
    path.write_text(text.replace(old, f"    - {{id: U-47, level: trained, policy: {policy!r}}}"))
    q = questions.get("uboat_leader", "campaign")
    with pytest.raises(ScenarioError) as err:
        cell = scenario_mod.load(path)
        for point in cell.points:
            q.prepare(point.params, cell.context(point))
    assert str(path) in str(err.value)
    assert re.search(match, str(err.value)), str(err.value)


# ------------------------------------------------------------------ Attack / Raider missions bought at sea
AT_SEA = {"duration": "medium", "fleet": [{"id": "U-43", "level": "trained", "missions": ["attack"]},
                                          {"id": "U-47", "level": "trained", "missions": ["raider"]}],
          "policy": {"so": {"order": [], "missions_at_sea": True}}}


def test_a_boat_at_sea_buys_its_attack_and_raider_missions_again_reference():
    """'Esta Misión Especial puede ser adquirida para cualquier U-Boat que no esté Incapacitado' (l.296,
    l.311): with policy.so.missions_at_sea a boat at sea with no mission pending buys them again, so a
    boat resolves more missions than it makes patrols; without it, one per patrol (bought in port)."""
    at_sea = C.new_campaign(AT_SEA, ABSTRACT, None, seed=3)
    at_sea.run()
    bought = [t for t in at_sea.trace if t[2] == "so at sea"]
    assert bought and {t[3] for t in bought} <= {"attack", "raider"}
    plain = {**AT_SEA, "policy": {"so": {"order": []}}}
    camp = C.new_campaign(plain, ABSTRACT, None, seed=3)
    m = camp.run()
    assert not [t for t in camp.trace if t[2] == "so at sea"]
    assert len([t for t in camp.trace if t[2] == "so"]) <= m["patrols"] + m["boats_lost"]


def test_missions_at_sea_raise_mission_vp_and_never_rebuy_mine_laying_kernel():
    """Kernel: at sea the two boats score more mission VP and spend more SO (20,000 trials, both well past
    5 SE); a boat whose only mission is mine-laying (port only, l.288) plays bit-identically with and
    without the option; under setup_only the option is refused naming it."""
    def means(params):
        _, _, prep = prepare("campaign", params, ABSTRACT)
        counts = run(prep, 20_000, seed=3)
        return {k: float(np.arange(len(c)) @ c / c.sum()) for k, c in counts.items()}
    on, off = means(AT_SEA), means({**AT_SEA, "policy": {"so": {"order": []}}})
    assert on["mission_vp"] > off["mission_vp"] + 2 and on["so_spent"] > off["so_spent"] + 2
    mines = {**MINES_MEDIUM, "policy": {"so": {"order": [], "missions_at_sea": True}}}
    _, _, a = prepare("campaign", mines, ABSTRACT)
    _, _, b = prepare("campaign", {**mines, "policy": {"so": {"order": []}}}, ABSTRACT)
    ra, rb = a.run_kernel(7, 9, 0, 2, 4096, 8192), b.run_kernel(7, 9, 0, 2, 4096, 8192)
    assert all(np.array_equal(x, y) for x, y in zip(ra, rb))
    with pytest.raises(ScenarioError, match="missions_at_sea"):
        prepare("campaign", AT_SEA, {**ABSTRACT, "so_purchases": "setup_only"})
