"""No unlabelled value the source does not give (rule fidelity 11): every plain number in the
shipped U-Boat Leader data is one the source states (listed here with the digest line that
quotes it); in scenario files plain numbers are only the user's own settings. Anything else
must be written {ph: ..} or {ex: ..} so that runs report it."""
import re
from pathlib import Path

import pytest

from analyzer.core.gamedata import is_wrapper, read_yaml
from analyzer.core.value_groups import GROUPS_FILE

ROOT = Path(__file__).resolve().parents[2] / "scenarios" / "uboat_leader"

#: (file, path) -> (value, where the source gives it: digest section and quote)
SOURCE_VALUES = {
    ("data/combat.yaml", "combat.detection_range.surfaced"): (2, "§7.5 'each surfaced U-boat at range 0–2'"),
    ("data/combat.yaml", "combat.detection_range.submerged"): (1, "§7.5 'each submerged one at 0–1'"),
    ("data/combat.yaml", "combat.alerted_roll_bonus"): (1, "§7.5 modifiers '+1 per Alerted'"),
    ("data/combat.yaml", "combat.damage_penalty.light"): (1, "§1.5 '-1 sus tiradas de Detección'"),
    ("data/combat.yaml", "combat.damage_penalty.heavy"): (2, "§1.5 Heavy Damage: Detection −2"),
    ("data/combat.yaml", "combat.heavy_damage_attack_bonus"): (1, "§1.5 '+1 en todos los futuros ataques'"),
    ("data/combat.yaml", "combat.silent_running_fail_stress"): (2, "§7.3 '> EV gives +2 Stress'"),
    ("data/combat.yaml", "combat.bearing_table_max"): (3, "§7.4 'a difference of 1, 2, 3 gives 1, 2, 3 Areas'"),
    ("data/convoys.yaml", "convoys[0].card"): (37, "§7.2 example 'carta de Convoy nº 37'"),
    ("data/merchants.yaml", "merchants[0].card"): (78, "§7.2 example 'Tiberton (card 78)'"),
    ("data/merchants.yaml", "merchants[1].card"): (56, "§7.2 example 'Telena (card 56)'"),
    ("data/tactical_display.yaml", "tactical_display.reveal_range"): (2, "§7.2 'en un alcance de 0, 1 o 2 Áreas'"),
    ("data/wolfpack.yaml", "wolfpack.attacked_modifier"): (-2, "§6.5 '-2 si el U-Boat tiene una ficha Atacado'"),
    ("data/wolfpack.yaml", "wolfpack.stress_per_result"): (1, "§6.5 'añade 1 Punto de Estrés al U-Boat activo'"),
    ("data/wolfpack.yaml", "wolfpack.alerted_per_result"): (1, "§6.5 'and an Alerted counter is placed'"),
    **{("data/uboats.yaml", f"uboat_classes.{c}.ammunition"): (6, "§2.5 'una ficha de Munición 6'")
       for c in ("VIIA", "VIIB", "VIIC", "IX")},
    **{("data/uboats.yaml", f"uboat_classes.{c}.ammunition"): (0, "§2.5 'Types II and XXI have no deck gun and "
                                                                  "no ammunition'") for c in ("IIB", "IIC")},
    **{(f"campaigns/{c}.yaml", "campaign.advanced_torpedo_cost"): (0.5, "§3 'Cada Torpedo avanzado cuesta ½ punto "
                                                                        "de SO'")
       for c in ("comienza_la_batalla", "la_presa", "los_tiempos_felices", "operacion_drumbeat")},
    # campaign layer (issue 12): source line numbers refer to the Spanish source text
    **{("data/campaign/rules.yaml", f"campaign_rules.{k}"): v for k, v in {
        "contact_modifiers.intel": (2, "§6.2 l.358 '+2 si hay una ficha Intel en el Área'"),
        "contact_modifiers.seeker": (1, "§6.2 l.359 '+1 Si el U-Boat tiene la Habilidad Especial Buscador'"),
        "contact_modifiers.warning": (-2, "§6.2 l.360 '-2 por cada ficha Peligro de U-Boat'"),
        "contact_modifiers.attacked": (-2, "§6.2 l.361 '-2 si el U-Boat tiene una ficha Atacado'"),
        "air_search_cards": (2, "§4 l.260 'robar dos cartas de Convoy para cada Contacto'"),
        "counters_per_area": (1, "§4 l.261/265/269 'Sólo se puede colocar una ficha ... en cada Área'"),
        "supply_ship_stress": (-2, "§4 l.264 'los Puntos de Estrés ... se reduce en dos'"),
        "priority_rr_stress": (-4, "§4 l.271 'eliminar 4 Puntos de Tensión'"),
        "priority_rr_per_turn": (1, "§4 l.271 'una vez por Segmento Estratégico'"),
        "cool_stress": (-1, "§1.6 l.112 'Quita 1 Punto de Estrés ... Reacondicionamiento'"),
        "mine_box_events": (1, "§4 l.292 'roba 1 carta de Evento para entrar en el recuadro'"),
        "mission_attack_range": (0, "§4 l.304/316 'Trata los ataques como desde el alcance 0'"),
        "raider_max_attacks": (10, "§4 l.316 'hasta un máximo de 10 ataques en total'"),
        "raider_success_roll": (8, "§4 l.316 'por cada resultado del dado de 8 o más alto'"),
        "raider_vp_per_success": (1, "§4 l.316 'Ganas 1 Punto de Victoria por cada resultado'"),
    }.items()},
}

#: plain numbers a scenario file may hold: run settings and the user's choices, not rule values
USER_SETTINGS = re.compile(r"^(seed|trials|max_trials|sweep\..*|(contenders\[\d+\]\.)?params\.(convoy|alerted|max_rounds|tactics|"
                           r"candidates|attacked|uboats\[\d+\]\.stress|uboat\.range|policy\..*|max_turns|"
                           r"max_fleets|(fleets\[\d+\]\.)?fleet\[\d+\]\.(mines|ready|stored|advanced\..*)))$")


def plain_numbers(x, path=""):
    if is_wrapper(x):
        return
    if isinstance(x, dict):
        for k, v in x.items():
            yield from plain_numbers(v, f"{path}.{k}" if path else str(k))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from plain_numbers(v, f"{path}[{i}]")
    elif isinstance(x, (int, float)) and not isinstance(x, bool):
        yield path, x


FILES = sorted(p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.yaml"))


@pytest.mark.parametrize("rel", FILES)
def test_every_plain_number_is_given_by_the_source_or_is_a_setting(rel):
    # player_copy/ holds a player's copy of the shipped files (same relative paths)
    shipped = rel.split("/", 1)[1] if rel.startswith("player_copy/") else rel
    if shipped == GROUPS_FILE:      # what `sensitivity` moves together, not rule data: its numbers are scales
        assert all(re.fullmatch(r"groups\[\d+\]\.scale", path) for path, _ in plain_numbers(read_yaml(ROOT / rel)))
        return
    data_file = shipped.startswith(("data/", "campaigns/"))
    for path, value in plain_numbers(read_yaml(ROOT / rel)):
        if data_file:
            assert (shipped, path) in SOURCE_VALUES, (f"{rel}: {path} = {value} is plain but not in the source "
                                                      f"list: label it {{ph: {value}, note: ...}} or cite the "
                                                      f"source here")
            assert SOURCE_VALUES[(shipped, path)][0] == value, (rel, path, value)
        else:
            assert USER_SETTINGS.match(path), (f"{rel}: {path} = {value} looks like a rule value: label it "
                                               f"{{ph: ..}} or {{ex: ..}}")


def test_every_listed_source_value_is_still_there():
    for (rel, path), (value, _) in SOURCE_VALUES.items():
        assert (path, value) in set(plain_numbers(read_yaml(ROOT / rel))), (rel, path)
