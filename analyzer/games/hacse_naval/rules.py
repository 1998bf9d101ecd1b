"""Rule options of HACSE naval: one per ambiguity of the source (docs/models/hacse_naval.md §2).

The first value of each option is its default: the recommended reading of the ambiguity where
the source suggests one, otherwise the reading argued in the spec. Each ``doc`` quotes the German source.
``roll_model`` is different: the source has no roll rule at all (gap G1), so whichever model
is chosen is a placeholder and is listed among a run's placeholders (:func:`model_placeholders`).
"""
from __future__ import annotations

from analyzer.core.gamedata import Placeholder, is_under
from analyzer.core.questions import RuleOption

SPEC = "docs/models/hacse_naval.md §2"   # H# / G# are the labels of docs/rules/hacse_naval.md


def _opt(name, values, doc, source, what_if=()):
    return RuleOption(name, tuple(values), values[0], doc, f"{SPEC} {source}", tuple(what_if))


HALF_HP = _opt("half_hp", ["ceil", "floor"],
               "'wenn die Hälfte der Trefferpunkte als Schaden verursacht wurde': ceil = damage >= HP/2 "
               "(for whole damage points the same as damage >= ceil(HP/2)); floor = damage >= floor(HP/2)",
               "H8")
SUB_HULL_ROWS = _opt("sub_hull_rows", ["functions_at_half", "all_at_half", "combined_rows_at_half"],
                     "'Bei U-Booten wird jeder Schaden an Zeilen, in welchen auch der Rumpf aufgeführt ist, "
                     "bereits ab der Hälfte der Trefferpunkte verursacht' (source l.37): functions_at_half = the "
                     "row's other functions (e.g. Batterie) fail at half HP, the hull still sinks at full HP (so "
                     "the U-boat leak rule keeps a meaning); all_at_half = sinking too at half HP, on every row "
                     "listing the hull; combined_rows_at_half = sinking at half HP only on rows that list the hull "
                     "*and* another kind ('auch der Rumpf': Rumpf / Batterie), a pure Rumpf row sinks at full HP",
                     "H9")
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
FIRE_REPEATS = _opt("fire_repeats", ["every_hit_past_threshold", "once_per_threshold"],
                    "'Ist an Bord eines Schiffes ein Feuer ausgebrochen (durch Treffer auf Schornstein, "
                    "Maschinenraum, Flugbenzin) ... Ein Feuer kann in der selben Zeile wiederholt ausbrechen' "
                    "(source l.53): every_hit_past_threshold = fires break out by hits on those rows, and again "
                    "in the same row: every hit on a row at or past its fire threshold (Maschinenraum at half, "
                    "Schornstein destroyed, Flugbenzin per threshold_less_rows) starts a new fire (the literal "
                    "reading: 'wiederholt ausbrechen'); once_per_threshold = a row starts a fire only when its "
                    "damage crosses the threshold, and the sentence only says that a new fire's random row may "
                    "be one that burns already", "H13")
FIRE_DAMAGE = _opt("fire_damage", ["per_fire", "per_ship"],
                   "'Ist ... ein Feuer ausgebrochen ..., werden SOFORT 2 Schaden ... verursacht, sowie 2 Schaden in "
                   "jeder weiteren Runde ..., falls vorher kein Fertigkeitswurf zum Löschen des Schiffes gelingt' "
                   "(source l.53): per_fire = each burning fire deals its 2 every round (the sentence's subject is "
                   "'ein Feuer'); per_ship = a burning ship takes 2 per round however many fires burn (one "
                   "'Löschen des Schiffes' for the whole ship); every outbreak still deals its immediate 2", "H13")
HIT_LOCATION = _opt("hit_location", ["hex_then_row", "uniform_row"],
                    "PLACEHOLDER (gaps G4/G11: the source gives only the rows a torpedo may hit, 'jedoch nur an "
                    "Rumpf, Maschinenraum, Tank oder Magazin', source l.89, not how the row is chosen): "
                    "hex_then_row = a uniform hex among those holding such a row, then a uniform such row of it; "
                    "uniform_row = uniform over every such row of the ship", "G4")
MINE_HIT_LOCATION = _opt("mine_hit_location", ["hex_then_row", "uniform_row", "bow_hex"],
                         "PLACEHOLDER (gaps G4/G12): 'See-Minen lösen aus, wenn ein Schiff das gleiche Hex "
                         "betritt ... treffen wie Torpedos nur Rumpf, Maschinenraum, Tank oder Magazin' (source "
                         "l.95): hex_then_row / uniform_row as the torpedo's hit_location; bow_hex = the ship's "
                         "first hex on its sheet (the bow, which enters the mine's hex first), a uniform such row "
                         "of it", "G4")
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
SIGHTED_BM = _opt("sub_target_bm", ["not_a_ship", "ease"],
                  "'Schiffe sind einfacher zu sichten als andere Einheiten: Wird ein Sichtversuch auf ein Schiff "
                  "unternommen, wird der Beschussmodifikator des Ziels immer als Erleichterung eingerechnet' "
                  "(source l.27): not_a_ship = a U-boat is not a 'Schiff' of that sentence (the source lists "
                  "U-boats apart from ships, 'Danach bewegen sich U-Boote', l.9, '(Flugzeug, Schiff oder "
                  "aufgetauchtes U-Boot)', l.87), its sighting is l.58-62 alone; ease = the U-boat's |BM| "
                  "(sheet `bm`, a placeholder, G2) eases every sighting roll on it", "H22")
RADAR_LIMIT = _opt("radar_limit", ["penalty_at_least_1_per_5_hex", "step_at_least_5_hex"],
                   "'Ein mit Radar ausgestattetes Schiff verdreifacht die Sicht-Distanz bei jedem Wetter, und der "
                   "Aufschlag fällt nie unter +1 je 5 Hex' (source l.32): penalty_at_least_1_per_5_hex = the "
                   "literal reading, the radar ship's range step is at most 5 hex (so in clear weather, the only "
                   "weather modelled, radar gains nothing); step_at_least_5_hex = radar is never worse than "
                   "clear weather, the tripled step is at least 5 hex", "H5")
RADAR_WITH_RANGEFINDER = _opt("radar_with_rangefinder", ["multiply", "better", "radar_only"],
                              "a ship with optical rangefinders ('Dies verdoppelt die Distanz', source l.31) and "
                              "radar ('verdreifacht die Sicht-Distanz', l.32): multiply = both apply (x6, then "
                              "radar_limit); better = the better of the rangefinder step and the radar step; "
                              "radar_only = the rangefinder does not apply with radar", "H6")
ROLL_MODEL = _opt("roll_model", ["linear", "dice_under"],
                  "PLACEHOLDER (gap G1, the Basiszahl roll is not in the source): linear = P(success) = "
                  "clamp(p0 - step x net difficulty, 0, 1); dice_under = success when the sum of `dice` W10 "
                  "+ net difficulty <= target", "G1")

TORPEDO_ARMING = _opt("torpedo_arming", ["unarmed_below_nah", "unarmed_through_nah"],
                      "'Die bei 'Nah' angegebene Zahl stellt die Mindestreichweite des Torpedos dar, bis zu dieser "
                      "der Torpedo nicht scharf ist' (source l.81): unarmed_below_nah = 'Mindestreichweite', the "
                      "shortest range at which the torpedo works, so a target at exactly Nah hexes is struck armed; "
                      "unarmed_through_nah = 'bis zu dieser ... nicht scharf' read inclusively, a target at Nah "
                      "hexes is struck unarmed. An unarmed torpedo deals no damage. Read only when "
                      "params.range_hexes is given", "H23")
TORPEDO_SIGHTING_DIFFICULTY = _opt("torpedo_sighting_difficulty", ["added_to_range", "whole"],
                                   "'Ansonsten wird ein Torpedo gesichtet mit einer Erschwernis von 3, Radar "
                                   "bringt jedoch keine Erleichterung' (source l.87): +3 on top of the range steps "
                                   "of a normal sighting roll (as periscope_difficulty, H14), or +3 is the whole "
                                   "difficulty. Either way radar does not shorten the steps ('keine "
                                   "Erleichterung'). Read only with params.torpedo_sighting", "H24")
MINE_AVOIDANCE = _opt("mine_avoidance", ["holds_course", "avoids_seen"],
                      "PLACEHOLDER module (gap G14): 'See-Minen werden pauschal auf 10 Hex (modifiziert nach "
                      "Sichtverhältnis) gesehen' (source l.99), so in clear weather (the only weather modelled) every "
                      "mine is seen before the ship enters its hex; what the ship then does is not in the source: "
                      "holds_course = it keeps its course through the field (every mine in a hex it enters goes "
                      "off, what the code always did); avoids_seen = it steers clear of a seen mine with the "
                      "placeholder chance hacse.mine_avoidance_module.avoid_if_seen", "G14")

DAMAGE_OPTIONS = (HALF_HP, THRESHOLD_LESS_ROWS, FIRE_SPREADS)
#: the options the fire, torpedo and mine questions read beyond DAMAGE_OPTIONS (issue 29)
FIRE_OPTIONS = (FIRE_REPEATS,)
SUB_OPTIONS = (SUB_HULL_ROWS, SUB_LEAK_DEPTH, OVERRUN_DICE)
SIGHTING_OPTIONS = (ROLL_MODEL, PERISCOPE, SONAR_TERMS, RANGE_STEPS, SIGHTED_BM, RADAR_LIMIT,
                    RADAR_WITH_RANGEFINDER)


#: the torpedo's evasion module (not a rule option: the parameter given selects it, params.hit_difficulty
#: -> evasion_roll, params.torpedo_sighting -> evade_if_seen; gap G13)
TORPEDO_EVASION = RuleOption("torpedo_evasion", ("evade_if_seen", "evasion_roll"), "evade_if_seen",
                             "PLACEHOLDER module (gap G13): what decides whether a torpedo on its way meets the "
                             "target. The source gives the torpedo sighting roll (l.87) and says success 'ist daher "
                             "stark beeinflusst von der Fähigkeit des Ziels, den Torpedo zu erkennen und ihm "
                             "auszuweichen' (l.85), not how a target evades: evade_if_seen = a torpedo the target "
                             "saw hits with hit_if_seen, one it did not see with hit_if_unseen (data "
                             "hacse.torpedo_evasion_module); evasion_roll = P(hit) = 1 - P(an evasion roll at "
                             "params.hit_difficulty) under the roll model", f"{SPEC} G13")
#: the depth charges' row (not a rule option: always uniform over the sheet's rows, gap G11)
CHARGE_HIT_LOCATION = RuleOption("hit_location", ("uniform_row",), "uniform_row",
                                 "PLACEHOLDER module (gap G11): a depth charge's damage strikes a uniform row of the "
                                 "U-boat's sheet", f"{SPEC} G11")

#: placeholder rule module -> the data block (data/hacse.yaml) that describes it; its ``procedure:``
#: names the module's value (shipped as {ph: ..}). Written plainly, equal to the value the run uses, in a
#: block holding no placeholder the run uses, the module is the player's and is not listed (spec §8)
MODULE_BLOCKS = {"roll_model": "hacse.roll_model", "hit_location": "hacse.hit_location_module",
                 "mine_hit_location": "hacse.mine_hit_location_module",
                 "charge_hit_location": "hacse.charge_hit_location_module",
                 "fire_extinguish": "hacse.fire.extinguish_module",
                 "torpedo_evasion": "hacse.torpedo_evasion_module",
                 "mine_avoidance": "hacse.mine_avoidance_module"}
#: the ``procedure`` keys: reported as the module they describe, never as data placeholders
PROCEDURE_PATHS = frozenset(f"{block}.procedure" for block in MODULE_BLOCKS.values())


def model_placeholders(rules: dict[str, str], d=None) -> list[Placeholder]:
    """The roll model in use is itself a placeholder rule module (G1), whatever its value, unless
    the data ``d`` (the point's :class:`~analyzer.games.hacse_naval.data.Data`, after the roll model
    was read) describes it (block ``hacse.roll_model``)."""
    if "roll_model" not in rules:
        return []
    return module(d, ROLL_MODEL, rules["roll_model"], "roll_model",
                  "G1: placeholder roll model; the Basiszahl roll is not in the source")


def module(d, option: RuleOption, value: str, key: str, note: str) -> list[Placeholder]:
    """[the placeholder of rule module ``option`` at ``value``], or [] when the point's data ``d``
    describes it: block :data:`MODULE_BLOCKS` [``key``] has a plain ``procedure: <value>`` (or a list of
    the values the player's copy gives, e.g. both readings of a sentence) naming ``value``, and no
    placeholder (or bound-only example) under the block is used. Call it after the question read
    the block's values (so ``d.used`` holds them). Otherwise the note says what the data describes."""
    placeholder = Placeholder(f"rules.{option.name}", value, note, "rule module")
    if d is None:
        return [placeholder]
    block = MODULE_BLOCKS[key]
    path = f"{block}.procedure"
    procedure, wrapped = d.procedure(path)
    if procedure is None:
        return [placeholder]
    described = [str(v) for v in procedure] if isinstance(procedure, list) else [str(procedure)]
    bad = [v for v in described if v not in option.values]
    if bad or not described:
        from analyzer.core.gamedata import DataError
        raise DataError(f"data/hacse.yaml: {path}: got {procedure!r}; allowed: one of {', '.join(option.values)} "
                        f"(the values of rules.{option.name}) or a list of them")
    if wrapped:
        return [placeholder]
    if value not in described:
        return [Placeholder(placeholder.path, value, f"{note}; your data describes {', '.join(described)} ({path}); "
                                                     f"the run uses {value}", "rule module")]
    left = [ph.path for ph in d.used if is_under(ph.path, block) and ph.refused_by_strict]
    if left:
        return [Placeholder(placeholder.path, value, f"{note}; your data describes {procedure} ({path}) but "
                                                     f"{len(left)} of its values are still placeholders",
                            "rule module")]
    return []
