"""Rule options of HACSE naval: one per ambiguity of the source (docs/models/hacse_naval.md §2).

The first value of each option is its default: the recommended reading of the ambiguity where
the source suggests one, otherwise the reading argued in the spec. Each ``doc`` quotes the German source.
``roll_model`` is different: the source has no roll rule at all (gap G1), so whichever model
is chosen is a placeholder and is listed among a run's placeholders (:func:`model_placeholders`).
"""
from __future__ import annotations

from analyzer.core.gamedata import Placeholder
from analyzer.core.questions import RuleOption

SPEC = "docs/models/hacse_naval.md §2"   # H# / G# are the labels of docs/rules/hacse_naval.md


def _opt(name, values, doc, source, what_if=()):
    return RuleOption(name, tuple(values), values[0], doc, f"{SPEC} {source}", tuple(what_if))


HALF_HP = _opt("half_hp", ["ceil", "floor"],
               "'wenn die Hälfte der Trefferpunkte als Schaden verursacht wurde': ceil = damage >= HP/2 "
               "(for whole damage points the same as damage >= ceil(HP/2)); floor = damage >= floor(HP/2)",
               "H8")
SUB_HULL_ROWS = _opt("sub_hull_rows", ["functions_at_half", "all_at_half"],
                     "'Bei U-Booten wird jeder Schaden an Zeilen, in welchen auch der Rumpf aufgeführt ist, "
                     "bereits ab der Hälfte der Trefferpunkte verursacht': functions_at_half = the row's other "
                     "functions (e.g. Batterie) fail at half HP, the hull still sinks at full HP (so the U-boat "
                     "leak rule keeps a meaning); all_at_half = sinking too at half HP", "H9")
SUB_LEAK_DEPTH = _opt("sub_leak_depth", ["per_row", "once"],
                      "'Ab der Hälfte der Treffer leckt das Schiff ... bei U-Booten stattdessen die maximale "
                      "Tauchtiefe': each leaking hull row lowers the maximum depth by 1 level, or the boat "
                      "loses 1 level once however many hull rows leak", "H10")
OVERRUN_DICE = _opt("overrun_dice", ["per_level", "one_times_levels"],
                    "'erleidet es am Ende der Runde W10 Schaden je Lvl Unterschied': one W10 per level below the "
                    "maximum depth, or one W10 multiplied by the levels", "H10")
THRESHOLD_LESS_ROWS = _opt("threshold_less_rows", ["destroyed", "any_hit"],
                           "Tank ('Geschwindigkeit -1'), Flugbenzin ('Ein Feuer bricht aus'), Magazin ('1W10 mal "
                           "den HE-Wert') and Batterie give no threshold: the effect happens when the row is "
                           "destroyed (the general rule 'Wenn eine Schiffszeile vollständig zerstört ist') or "
                           "at its first hit", "H11")
ENGINE_SPEED = _opt("engine_speed", ["destroyed_rows", "damage_share"],
                    "'Wird die Zeile zerstört, verringert sich die Geschwindigkeit anteilsmässig': maximum speed "
                    "times the share of engine rows destroyed (rounded down to the speed kept), or times the "
                    "share of engine hit points lost", "H12")
FIRE_EXTINGUISH = _opt("fire_extinguish", ["overroll", "roll_under"],
                       "'Fertigkeitswurf zum Löschen des Schiffes ... (dreifache Basiszahl überwürfeln)': success "
                       "when the roll is above 3 x Basiszahl (literal 'überwürfeln'), or at most 3 x Basiszahl",
                       "H13")
EXTINGUISH_SCOPE = _opt("extinguish_scope", ["all_fires", "one_fire"],
                        "'Je Runde kann auf dem ganzen Schiff nur ein Löschversuch unternommen werden': a "
                        "successful attempt puts out every fire, or one fire", "H13")
FIRE_ROW = _opt("fire_row", ["new_random_row", "same_row"],
                "'2 Schaden an einer zufälligen Zeile des Hexes ... sowie 2 Schaden in jeder weiteren Runde': "
                "each round a new random row of the fire's hex, or the row first hit", "H13")
FIRE_SPREADS = _opt("fire_spreads", ["yes", "no"],
                    "the source does not say whether fire damage can start further fires ('Ein Feuer kann in "
                    "der selben Zeile wiederholt ausbrechen'); yes = fire damage triggers row effects like any "
                    "damage (the recommended kernel loop), no = fire damage starts no new fire", "H13")
CHARGE_ROLL = _opt("charge_roll", ["one_per_charge", "one_per_unit"],
                   "'Wasserbomben erzeugen 1W10 Schaden an Einheiten im gleichen Feld': one W10 per charge, "
                   "each unit deducting its own steps, or a W10 per unit (only the correlation between the "
                   "U-boat's and the thrower's damage differs)", "H21")
DEPTH_UNIT = _opt("depth_unit", ["levels", "per_75m"],
                  "'Je 75m Höhenunterschied ... 2 Schaden': the worked example counts depth levels ('auf Tiefe 2 "
                  "... auf Tiefe 3 ... 1W10 - 4'); per_75m reads 75 m as 10 water-depth levels of 7.5 m, which "
                  "contradicts the example", "H17", what_if=("per_75m",))
PERISCOPE = _opt("periscope_difficulty", ["added_to_range", "whole"],
                 "'werden sie gesichtet mit einer Erschwernis von 3': +3 on top of the range steps of a normal "
                 "sighting roll, or +3 is the whole difficulty", "H14")
SONAR_TERMS = _opt("sonar_terms", ["replace", "add_range"],
                   "'Der Sichtwurf ist erschwert um die eigene Geschwindigkeit, die doppelte Tauchtiefe sowie um 1 "
                   "je Hex Entfernung': the sonar terms are the whole difficulty, or they add to the range steps "
                   "of a normal sighting roll", "H15")
RANGE_STEPS = _opt("range_steps", ["floor", "ceil"],
                   "'um 1 je 3 Hex Entfernung' / '+1 je 10 Hex': whole steps only (floor), or a started step "
                   "counts (ceil)", "H7/H16")
ROLL_MODEL = _opt("roll_model", ["linear", "dice_under"],
                  "PLACEHOLDER (gap G1, the Basiszahl roll is not in the source): linear = P(success) = "
                  "clamp(p0 - step x net difficulty, 0, 1); dice_under = success when the sum of `dice` W10 "
                  "+ net difficulty <= target", "G1")

DAMAGE_OPTIONS = (HALF_HP, THRESHOLD_LESS_ROWS, FIRE_SPREADS)
SUB_OPTIONS = (SUB_HULL_ROWS, SUB_LEAK_DEPTH, OVERRUN_DICE)
SIGHTING_OPTIONS = (ROLL_MODEL, PERISCOPE, SONAR_TERMS, RANGE_STEPS)


def model_placeholders(rules: dict[str, str]) -> list[Placeholder]:
    """The roll model in use is itself a placeholder rule (G1), whatever its value."""
    if "roll_model" not in rules:
        return []
    return [Placeholder("rules.roll_model", rules["roll_model"],
                        "G1: placeholder roll model; the Basiszahl roll is not in the source", "rule module")]
