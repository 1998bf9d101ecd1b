"""Rule options of the B-17 questions: the digest's ambiguities A1-A9 (spec §0.5).

Every question declares all the options, so a scenario may carry any of them; options a
question does not use are accepted and ignored (spec §0.5). ``sampling`` is not a reading of
the source: it chooses how ``attack_wave`` and ``mission`` draw a shot (docs/models/b17.md).
"""
from __future__ import annotations

from analyzer.core.questions import RuleOption

_DIGEST = "rules/b17_defense.md"

RULE_OPTIONS = (
    RuleOption("d10_faces", ("one_to_ten", "zero_to_nine"), "one_to_ten",
               "faces of the d10 (also the placeholder fighter-fire 3d10)", f"{_DIGEST} A2"),
    RuleOption("quality_dice", ("not_distinguished", "second_colour"), "not_distinguished",
               "the fixed quality pair giving damage II: dice (1, 2), the two not distinguished / "
               "dice (0, 1) of a second colour; identical distributions", f"{_DIGEST} A1"),
    RuleOption("kill_credit", ("hitters", "shooters"), "hitters",
               "attack_wave/mission: a kill is shared by the guns that hit it (h >= 1) / that shot at "
               "it, in the attack that destroyed it", f"{_DIGEST} A3"),
    RuleOption("kill_credit_unit", ("crew", "gun"), "crew",
               "attack_wave/mission: equal shares per distinct crew member / per gun (a gun's share "
               "goes to its crew)", f"{_DIGEST} A3"),
    RuleOption("tocado_penalty", ("this_attack", "later_attacks"), "this_attack",
               "attack_wave/mission: a fighter first tocado in this attack fires at +2 now / at +0 now "
               "and +2 from the next attack", f"{_DIGEST} A4"),
    RuleOption("delayed_kill_share", ("same_attack", "separate_steps"), "same_attack",
               "attack_wave/mission: ordinary and ** hitters share a kill / the kill belongs to the step "
               "(ordinary or **) that destroyed it", f"{_DIGEST} A5"),
    RuleOption("destroyed_target", ("keep_firing", "retarget"), "keep_firing",
               "attack_wave/mission: guns aimed at a fighter already destroyed by ordinary fire still "
               "roll (simultaneous fire) / choose another target", f"{_DIGEST} A9"),
    RuleOption("danado_vp", ("none", "counts_as_kill"), "none",
               "mission: a fighter leaving damaged adds 0 / 1 to the placeholder vp (never to kills)",
               f"{_DIGEST} A8"),
    RuleOption("sampling", ("dice", "table"), "dice",
               "attack_wave/mission: how a gun's shot (and the placeholder fighter fire) is drawn: dice = "
               "its three d10 (and the effect d10) one by one; table = one draw from the exact law of its "
               "outcome over the 1000 (10,000) ordered rolls, built when the point is prepared. Not a rule "
               "reading: both give the same distributions (tests/b17/test_sampling_b17.py); gun_shot and "
               "gun_matrix always roll the dice", "docs/models/b17.md §0.5 (sampling)"),
)


def face_offset(rules: dict[str, str]) -> int:
    """0 for d10 faces 1..10, -1 for 0..9 (A2)."""
    return 0 if rules["d10_faces"] == "one_to_ten" else -1


def quality_first(rules: dict[str, str]) -> int:
    """1 when the quality pair is dice (0, 1) (A1 reading b)."""
    return 1 if rules["quality_dice"] == "second_colour" else 0
