"""Rule options of Breaking News: the source's ambiguities, each with the recommended reading
as its default (docs/models/breaking_news.md §8 quotes the source for every one).

The source is the Spanish v2.1 rulebook; ``source`` names the ambiguity's number in the
spec's list (A1..A14) and the rulebook section.
"""
from __future__ import annotations

from analyzer.core.questions import RuleOption


def _opt(name, values, doc, source, what_if=()):
    return RuleOption(name, tuple(values), values[0], doc, f"docs/models/breaking_news.md {source}",
                      tuple(what_if))


TRAINED_POINTS = _opt(
    "trained_points", ["table", "list"],
    "cost of a Trained (R4) AR soldier: the troop table's PUNTOS '10' or the list price "
    "'Entrenados: 12 pts'", "A1 (§3, LISTAS DISPONIBLES)")
IRREGULAR_VETERAN_POINTS = _opt(
    "irregular_veteran_points", ["list", "table"],
    "cost of an Irr1 (commando / mercenary / trained militia) AR soldier: the list price "
    "'Comandos Terroristas: 12 pts' (the scenario lines 'Líder AR L2 Comando Terrorista: 22' and "
    "'6 Combatientes AR Comando Terrorista: 72' use it) or the troop table's '11' "
    "('2 RPG Comando Terrorista: 36' uses it)", "A1 (§3, LISTAS DISPONIBLES)")
BURST_OVERFLOW = _opt(
    "burst_overflow", ["per_point_over_6", "per_modifier"],
    "'si el número a obtener (con modificadores) es más de 6, en vez de añadir 1 al número necesario, "
    "se pierde un dado por cada modificador' (if the number needed is more than 6, instead of adding 1 "
    "a die is lost per modifier): one die lost per point above 6, or one per +1 modifier with the base "
    "number kept; both give 2 dice lost in the fanatic AK example", "A3 (§8)")
BURST_WEAPONS = _opt(
    "burst_weapons", ["multi_die", "ar_burst_only"],
    "which fire is a 'ráfaga' (for the overflow rule and the SF '-1 ... (no ráfagas)'): any mode "
    "rolling more than one die (AR burst, SMG, LMG, MMG, HMG), or only the AR's burst mode", "A4 (§8)")
AIMED_OVER_6 = _opt(
    "aimed_over_6", ["no_hit", "six_hits"],
    "a non-burst shot needing more than 6: the source gives the overflow rule for 'ráfagas' only, so "
    "no hit is possible; or a 6 still hits", "A5 (§8)")
NATURAL_1_TO_HIT = _opt(
    "natural_1_to_hit", ["miss", "hit"],
    "a shot needing less than 2 (an SF sniper at 25 cm needs 2 - 1 = 1): a natural 1 still misses, "
    "or every die hits (the source says nothing)", "A5 (§8)")
SAVE_BONUS = _opt(
    "save_bonus", ["max_single", "sum"],
    "save modifiers '+1 ... (no acumulativos)': the largest single bonus applies (the source's "
    "reading); 'sum' adds them all, a what-if against the source's words", "S1 (§9)", what_if=("sum",))
MORALE_CASUALTIES = _opt(
    "morale_casualties", ["this_turn", "cumulative"],
    "'al menos un D6 sea igual o superior al número de bajas sufridas' (a die at least the casualties "
    "suffered): this turn's casualties (the platoon example tests '3 bajas durante un turno') or all "
    "casualties so far", "A8 (§12)")
SHOCK_RECOVERY = _opt(
    "shock_recovery", ["pass_clears", "test_every_activation"],
    "'estará conmocionado durante el juego hasta que consiga superar el test de conmoción cada vez que se "
    "active' (shocked until it passes the shock test each time it activates): a pass clears the shock, "
    "or the figure stays shocked and tests at every activation", "A9 (§9, §10)")
MELEE_GROUP = _opt(
    "melee_group", ["one_die_sum_modifiers", "best_individual"],
    "two or three against one: 'se añaden los modificadores de cada uno de las figuras envueltas' (the "
    "modifiers of every figure involved are added): one die plus the sum of their Melee values, or each "
    "attacker rolls its own die plus its own Melee and the best counts", "A10 (§11)")
MELEE_TIES = _opt(
    "melee_ties", ["reroll", "no_result"],
    "ties are not stated ('El dado más alto gana y mata al enemigo'): PLACEHOLDER reading, roll again "
    "or nobody dies this round", "A10 (§11)")
INITIATIVE_TIES = _opt(
    "initiative_ties", ["reroll", "keep_previous"],
    "initiative ties are not stated ('El jugador que consiga la puntuación más alta será el jugador "
    "activo'): PLACEHOLDER reading, roll again or the previous active side keeps it (side A on turn 1)",
    "A11 (§5)")
COVER_FIRE_HITS = _opt(
    "cover_fire_hits", ["per_covering_figure", "one_hit"],
    "a figure that fails the cover-fire test: the example's 'un impacto en cada figura que haga el fuego "
    "de cobertura' (one hit per covering figure) or the rule text's 'es impactado una vez' (one hit)",
    "A7 (§8.6)")

SAMPLING = _opt(
    "sampling", ["dice", "table"],
    "not a rule reading: how the firefight draws a shot's hits, a figure's saves and a morale test: dice = "
    "one D6 at a time; table = one draw per up to 12 dice from the exact law of the outcome (integer "
    "counts over the 6**n ordered rolls, built when the point is prepared). Both give the same "
    "distributions (tests/breaking_news/test_bn_sampling.py)", "§6 (sampling)")

#: options whose every value is a placeholder reading (the source states nothing)
PLACEHOLDER_READINGS = (MELEE_TIES, INITIATIVE_TIES)

SHOT_OPTIONS = (BURST_OVERFLOW, BURST_WEAPONS, AIMED_OVER_6, NATURAL_1_TO_HIT, SAVE_BONUS)
MORALE_OPTIONS = (MORALE_CASUALTIES,)
MELEE_OPTIONS = (MELEE_GROUP, MELEE_TIES)
POINTS_OPTIONS = (TRAINED_POINTS, IRREGULAR_VETERAN_POINTS)
FIREFIGHT_OPTIONS = SHOT_OPTIONS + (MORALE_CASUALTIES, SHOCK_RECOVERY, INITIATIVE_TIES, SAMPLING)
