"""Rule options of U-Boat Leader: the digest's ambiguities and the placeholder rule modules.

docs/models/uboat_leader.md §2. The first value of each option is the default (the
recommended reading). Options named ``*_module``-style below (``uboat_attack``,
``escort_movement``, ``enemy_attack``, ``reload``, ``post_combat_stress``) select
PLACEHOLDER rule modules for procedures the source does not contain: the value chosen is
not a published rule, so it is listed among the run's placeholders -- unless the player's data
describes it: each module has a data block (:data:`MODULE_BLOCKS`) whose ``procedure:`` key
names the option value the block describes (shipped as ``{ph: ...}``). Written plainly, equal to
the value the run selects, in a block holding no placeholder the run uses, the module is the
player's own copy of the rule and is not listed (docs/models/uboat_leader.md §8).
"""
from __future__ import annotations

from analyzer.core.gamedata import DataError, Placeholder, is_under
from analyzer.core.questions import RuleOption

DIGEST = "docs/rules/uboat_leader.md"


def _opt(name, values, doc, source):
    return RuleOption(name, tuple(values), values[0], doc, f"{DIGEST} {source}")


ESCORT_VP = _opt("escort_vp", ["card", "zero"],
                 "VP for sinking an escort: the card's value, or 0 ('no te suponen ganancia de PV')", "A1")
TACTICS_TIMING = _opt("tactics_timing", ["per_card", "per_roll"],
                      "a Tactics counter drawn with the Escort card (returned when it leaves), or a fresh "
                      "draw at every Detection/attack roll", "A2")
RADIO_CALL_COST = _opt("radio_call_cost", ["one_purchase", "per_joiner"],
                       "SO paid for a Radio Call: one purchase covers the pack, or one per joiner", "A5")
WOLFPACK_STRESS_JOIN = _opt("wolfpack_stress_join", ["roll_decides", "stress_fails"],
                            "does a Stress result also fail the join", "A6")
SILENT_RUNNING_MOVE = _opt("silent_running_move", ["no_move", "normal_move"],
                           "a boat using Silent Running does not move that step / moves normally", "A9")
SILENT_RUNNING_MARKER = _opt("silent_running_marker", ["end_of_round", "end_of_battle"],
                             "when the Silent Running marker (no attacks, Speed 0 in Bearing) comes off", "A9")
REVEAL_TIMING = _opt("reveal_timing", ["continuous", "after_move"],
                     "reveal after every Area a U-boat enters, or only after its whole move", "A10")
BEARING_BEYOND_3 = _opt("bearing_beyond_3", ["full", "cap_3"],
                        "Bearing drift for a Speed difference above the table's 3", "A11")
DAMAGE_STACKING = _opt("damage_stacking", ["replace", "stack"],
                       "Heavy Damage replaces Light (penalty 2) or both apply (penalty 3)", "A12")
ESCORT_REDETECT = _opt("escort_redetect", ["skip_detected", "roll_anyway"],
                       "escorts do not roll against an already Detected boat / roll (only reveals the escort)",
                       "A21")
UBOAT_ATTACK = _opt("uboat_attack", ["placeholder_d10"],
                    "PLACEHOLDER module for torpedo/gun attacks and damage (spec §5.1), not a published rule",
                    "G15")
ESCORT_MOVEMENT = _opt("escort_movement", ["toward_detected_or_sweep", "toward_detected", "stationary"],
                       "PLACEHOLDER module for escort movement (spec §5.2; the source stops at 'igual a su "
                       "valor de'), not a published rule", "G18")
ENEMY_ATTACK = _opt("enemy_attack", ["placeholder_d10", "none"],
                    "PLACEHOLDER module for ship attacks on U-boats (spec §5.3), not a published rule", "G18")
RELOAD = _opt("reload", ["post_combat_only", "submerged_end_of_round"],
              "PLACEHOLDER module for reloading torpedoes during a battle (spec §5.4), not a published rule",
              "G19/G21")
POST_COMBAT_STRESS = _opt("post_combat_stress", ["plus_one", "none"],
                          "PLACEHOLDER module for Post-Combat Stress (spec §5.5), not a published rule", "G21")

#: options that select a placeholder rule module (listed as placeholders unless the data describes them)
PLACEHOLDER_MODULES = (UBOAT_ATTACK, ESCORT_MOVEMENT, ENEMY_ATTACK, RELOAD, POST_COMBAT_STRESS)

WOLFPACK_OPTIONS = (RADIO_CALL_COST, WOLFPACK_STRESS_JOIN)
ENGAGEMENT_OPTIONS = (ESCORT_VP, TACTICS_TIMING, SILENT_RUNNING_MOVE, SILENT_RUNNING_MARKER, REVEAL_TIMING,
                      BEARING_BEYOND_3, DAMAGE_STACKING, ESCORT_REDETECT) + PLACEHOLDER_MODULES

#: rule module option -> the data block that describes it (its ``procedure:`` names the option value)
MODULE_BLOCKS = {"uboat_attack": "combat.uboat_attack_module", "escort_movement": "combat.escort_movement_module",
                 "enemy_attack": "combat.enemy_attack_module", "reload": "combat.reload_module",
                 "post_combat_stress": "combat.post_combat_module"}
#: the campaign's rule modules and their blocks (data/campaign/rules.yaml); under ``contact_model:
#: abstract`` Post-Combat Stress is read from the campaign's block instead of data/combat.yaml's
CAMPAIGN_MODULE_BLOCKS = {"campaign_reload": "campaign_rules.refit_module",
                          "promotion": "campaign_rules.promotion_module",
                          "advanced_torpedoes": "campaign_rules.advanced_torpedo_module"}
ABSTRACT_POST_COMBAT_BLOCK = "campaign_rules.post_combat_module"
#: the ``procedure`` keys: reported as the rule option they describe, never as data placeholders
PROCEDURE_PATHS = frozenset(f"{block}.procedure" for block in (*MODULE_BLOCKS.values(),
                                                               *CAMPAIGN_MODULE_BLOCKS.values(),
                                                               ABSTRACT_POST_COMBAT_BLOCK))


def rule_module(option: RuleOption, value: str, block: str, gd, note: str) -> Placeholder | None:
    """The placeholder of rule module ``option`` (selected ``value``, described by data ``block``),
    or None when the data makes it the player's: the block's ``procedure`` is written plainly,
    equals ``value``, and no placeholder (or bound-only example) under the block is used (``gd.used``).
    Otherwise the note says what the data describes, when it describes something."""
    placeholder = Placeholder(f"rules.{option.name}", value, note, "rule module")
    if gd is None:
        return placeholder
    path = f"{block}.procedure"
    procedure = gd.value_at(path)
    if procedure is None:
        return placeholder
    if str(procedure) not in option.values:
        raise DataError(f"{gd.files[block.split('.')[0]]}: {path}: got {procedure!r}; allowed: "
                        f"{', '.join(option.values)} (the values of rules.{option.name})")
    if gd.wrapper_at(path) is not None:
        return placeholder
    if str(procedure) != value:
        return Placeholder(placeholder.path, value, f"{note}; your data describes {procedure} ({path}); the run "
                                                    f"selects {value}", "rule module")
    left = [ph.path for ph in gd.used if is_under(ph.path, block) and ph.refused_by_strict]
    if left:
        return Placeholder(placeholder.path, value, f"{note}; your data describes {procedure} ({path}) but "
                                                    f"{len(left)} of its values are still placeholders",
                           "rule module")
    return None


def module_placeholders(rules: dict[str, str], gd=None, blocks: dict[str, str] | None = None) -> list[Placeholder]:
    """One placeholder per placeholder rule module in use, unless the data ``gd`` (the point's
    :class:`~analyzer.games.uboat_leader.data.GameData`, after the question marked what it used)
    describes it (:func:`rule_module`; ``blocks`` overrides :data:`MODULE_BLOCKS`). Without
    ``gd`` every module in use is listed."""
    blocks = {**MODULE_BLOCKS, **(blocks or {})}
    out = [rule_module(o, rules[o.name], blocks[o.name], gd,
                       f"{o.source.split()[-1]}: placeholder rule module, not a published rule")
           for o in PLACEHOLDER_MODULES if o.name in rules]
    return [ph for ph in out if ph is not None]
