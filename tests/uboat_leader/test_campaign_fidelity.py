"""campaign: the rule-fidelity corrections of issue 27 (docs/models/uboat_leader_campaign.md §13.2),
each checked where it lives: step by step on the pure-Python reference (which the kernel matches
within 5 SE, tests/uboat_leader/test_campaign_kernel.py, on cases that exercise each step), and
as exact outcomes of the kernel where the rule makes one certain.

Source lines are the Spanish text's.
"""
import pytest

from analyzer.games.uboat_leader import reference_campaign as C
from tests.uboat_leader.helpers import prepare, run

FLEET = [{"id": "U-43", "level": "trained"}, {"id": "U-47", "level": "trained"},
         {"id": "U-51", "level": "trained"}, {"id": "U-56", "level": "ace"}]


def _at_sea(camp, boats):
    sea = camp.map.kind.index("sea")
    for b in boats:
        b["area"] = sea
    return sea


def _record_attacked_at_contact_roll(camp) -> dict:
    """{boat id: whether it had the Attacked marker when it made its Contact roll}, filled as
    ``camp`` plays on."""
    marked_at_roll = {}
    modifier = camp.contact_modifier

    def recording_modifier(b):
        marked_at_roll[b["id"]] = b["attacked"]
        return modifier(b)
    camp.contact_modifier = recording_modifier
    return marked_at_roll


@pytest.mark.parametrize("timing, joiner_marked", [("end_of_boat_segment", True), ("end_of_turn", False)])
def test_a_joiner_searches_with_the_attacked_marker_of_the_segment_it_attacked_in(timing, joiner_marked, monkeypatch):
    """l.76 'al final de un Segmento Táctico en el que ha atacado' with l.351 'Completa el Segmento
    Táctico para el U-Boat activo antes de empezar el Segmento Táctico con otro U-Boat': a boat that
    joined the first boat's attack carries the marker (-2, l.362) into its own Contact roll later
    in the same turn. ``end_of_turn`` is the earlier reading (markers only once every boat acted)."""
    camp = C.new_campaign({"fleet": FLEET[:2]}, {"contact_model": "abstract", "attacked_timing": timing}, seed=1)
    first, joiner = camp.boats
    _at_sea(camp, camp.boats)
    monkeypatch.setattr(C, "contact_count", lambda roll, table: 1)

    def fight(b, conv):  # both boats fire at the first boat's contact
        for o in camp.boats:
            o["attacked_now"] = True
    camp.fight = fight
    marked_at_roll = _record_attacked_at_contact_roll(camp)
    camp.tactical()
    assert marked_at_roll == {first["id"]: False, joiner["id"]: joiner_marked}
    assert first["attacked"] and joiner["attacked"], "both attacked this turn: both keep the marker (one_turn)"


def test_joiners_not_searched_marks_only_the_joiner_and_drops_it_once_the_joiner_searched(monkeypatch):
    """A4 (b) 'muestran qué U-Boats han participado en los ataques de una Wolfpack ... pero que no
    han realizado sus propias búsquedas' (l.76) with the segment timing: the joiner rolls with it;
    the active boat never gets it; at the end of the turn a boat that searched has none."""
    camp = C.new_campaign({"fleet": FLEET[:2]}, {"contact_model": "abstract",
                                                  "attacked_marker": "joiners_not_searched"}, seed=1)
    first, joiner = camp.boats
    _at_sea(camp, camp.boats)
    monkeypatch.setattr(C, "contact_count", lambda roll, table: 1)
    fought = []

    def fight(b, conv):
        fought.append(b["id"])
        if b is first:
            first["attacked_now"] = joiner["attacked_now"] = True
    camp.fight = fight
    marked_at_roll = _record_attacked_at_contact_roll(camp)
    camp.tactical()
    assert fought == [first["id"], joiner["id"]]
    assert marked_at_roll == {first["id"]: False, joiner["id"]: True}
    assert not first["attacked"] and not joiner["attacked"]


@pytest.mark.parametrize("model", ["abstract", "engagement"])
def test_a_withdrawing_boat_goes_to_post_combat(model, monkeypatch):
    """l.370 'Puedes decidir no atacar ... pasa directamente a la Fase de Resolución Post-Combate':
    the Post-Combat Phase adds Stress and reloads ('Añadir Estrés, Recargar Torpedos', l.220-222)."""
    camp = C.new_campaign({"fleet": [{"id": "U-47", "level": "trained"}]}, {"contact_model": model}, seed=2)
    (b,) = camp.boats
    b["ready"] = 1  # torpedoes fired at an earlier contact
    _at_sea(camp, camp.boats)
    monkeypatch.setattr(C, "contact_count", lambda roll, table: 1)
    camp.decide_attack = lambda conv: False
    camp.fight = lambda b_, conv: pytest.fail("the boat withdrew: no fight")
    stored, tubes = b["stored"], b["tubes"]
    assert stored > 0 and tubes > 1
    camp.contact_phase(b)
    module = camp.data["combat" if model == "engagement" else "campaign_rules"]["post_combat_module"]
    assert b["stress"] == module["stress"] == 1
    assert b["ready"] == min(tubes, 1 + stored) and b["ready"] + b["stored"] == 1 + stored


def test_a_withdrawing_boat_takes_no_post_combat_stress_when_the_module_is_off(monkeypatch):
    camp = C.new_campaign({"fleet": [{"id": "U-47", "level": "trained"}]},
                          {"contact_model": "abstract", "post_combat_stress": "none"}, seed=2)
    (b,) = camp.boats
    _at_sea(camp, camp.boats)
    monkeypatch.setattr(C, "contact_count", lambda roll, table: 1)
    camp.decide_attack = lambda conv: False
    camp.contact_phase(b)
    assert b["stress"] == 0


def test_priority_rr_comes_before_the_movement_plans():
    """l.271 'Haz esto antes de pasar al Segmento de Operaciones': a boat in port that Priority R&R
    brings back to Okay sails this turn (it waited a turn when plans were fixed first)."""
    policy = {"so": {"order": ["priority_rr"], "reserve": 0, "rr_min_stress": 4}}
    camp = C.new_campaign({"fleet": [{"id": "U-47", "level": "trained"}], "policy": policy},
                          {"contact_model": "abstract"}, seed=3)
    (b,) = camp.boats
    assert camp.in_port(b)
    for stress in range(4, 40):
        b["stress"] = stress
        shaken = camp.band(b) != "okay"
        b["stress"] = stress - 4
        if shaken and camp.band(b) == "okay":
            break
    else:
        pytest.fail("no Stress value that Priority R&R takes from Shaken to Okay")
    b["stress"] = stress
    camp.turn = 1
    camp.strategic()
    assert b["stress"] == stress - 4 and camp.band(b) == "okay"
    assert camp.m["so_spent"] > 0, "Priority R&R was bought"
    assert b["dest"] != b["area"], "made Okay before Operations, the boat sails this turn"


@pytest.mark.parametrize("model", ["abstract", "engagement"])
def test_no_enemy_attack_loses_no_boat_under_either_contact_model(model):
    """``rules.enemy_attack: none``: the escorts never attack, so no boat is ever lost, in the
    kernel (exactly 0 in every trial) and in the reference."""
    params = {"fleet": FLEET, "duration": "medium"}
    rules = {"contact_model": model, "enemy_attack": "none"}
    _, _, prep = prepare("campaign", params, rules)
    ours = run(prep, 4096, seed=7)
    lost = ours["boats_lost"]
    assert lost.sum() == 4096 and lost[0] == 4096, "no trial loses a boat"
    assert ours["attacks"][0] < 4096, "contacts are fought (the check is not vacuous)"
    ref = C.simulate(params, rules, n=40, seed=11)
    assert set(ref["boats_lost"]) == {0}
    # and with the placeholder escorts boats are lost, in both
    _, _, prep = prepare("campaign", params, {"contact_model": model})
    assert run(prep, 4096, seed=7)["boats_lost"][0] < 4096


def test_the_u47_example_stress_is_almost_shaken():
    """l.307: the Veteran U-47 at 5 Stress is 'llegando casi a Tripulación Conmocionada', so the
    example's decision (abort or draw the third Event) arises: 5 is Okay, 7 no longer is. The
    data's bands (okay 0-8 on every card before) made 5 far from Shaken."""
    camp = C.new_campaign({"fleet": [{"id": "U-47", "level": "veteran"}]}, {"contact_model": "abstract"})
    (b,) = camp.boats
    b["stress"] = 5
    assert camp.band(b) == "okay"
    b["stress"] = 7
    assert camp.band(b) != "okay"


def test_type_ii_stays_on_the_areas_of_the_comienza_map():
    """l.102 'El Tipo II de U-Boat sólo puede moverse en las Áreas que se muestran en el Mapa de
    Campaña de "Comienza la Batalla"': on Los Tiempos Felices a Type II is barred from the Areas
    that map lacks (Biscay, the open Atlantic), and the invented parts are placeholders."""
    data = C._plain(None)
    comienza = {a["name"] for a in data["campaign_maps"]["comienza_la_batalla"]["areas"]}
    tiempos = C.CampaignMap(data["campaign_maps"]["los_tiempos_felices"])
    for x, name in enumerate(tiempos.names):
        if tiempos.kind[x] == "sea":
            # the open Atlantic: on our (placeholder) Comienza map, barred on this one (a placeholder either way)
            assert tiempos.barred(x, "IIB") == (name not in comienza) or name == "Atlántico Norte", name
    assert tiempos.barred(tiempos.index["Golfo de Vizcaya"], "IIC")
    _, _, prep = prepare("campaign", {"campaign": "los_tiempos_felices", "duration": "medium",
                                      "fleet": [{"id": "U-43", "level": "trained"}]}, {"contact_model": "abstract"})
    paths = {p.path for p in prep.placeholders}
    assert "campaign_map.layout" in paths
    assert any(p.startswith("campaign_map.areas") and p.endswith("barred_classes") for p in paths)
