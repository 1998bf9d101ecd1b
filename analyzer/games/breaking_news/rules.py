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
    "trained_points", ["list", "table"],
    "cost of a Trained (R4) AR soldier: the list price 'Entrenados: 12 pts' (COSTE DE UN SOLDADO CON "
    "FUSIL DE ASALTO, the section a team is costed by: 'debes seleccionar una lista ... y calcular el "
    "coste de cada soldado'; the default, as irregular_veteran_points) or the troop table's PUNTOS '10'",
    "A1 (§3, LISTAS DISPONIBLES)")
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
    "melee_group", ["one_die_sum_modifiers", "best_individual", "one_die_each_summed"],
    "two or three against one: 'se añaden los modificadores de cada uno de las figuras envueltas' (the "
    "modifiers of every figure involved are added): one die plus the sum of their Melee values; or each "
    "attacker rolls its own die plus its own Melee and the best counts; or 'se resuelve tirando 1D6 por "
    "cada figura combatiente' (one D6 per fighting figure): every attacker rolls one die and the attackers' "
    "dice and Melee values are all summed against the defender's die + Melee", "A10 (§11)")
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

HEAVY_AT_VS_MEN = _opt(
    "heavy_at_vs_men", ["barred", "allowed"],
    "'El disparo de cañón de carros de combate o de armas antitanque pesadas (Milán) no puede realizarse a "
    "figuras' (tank guns and heavy AT weapons cannot fire at figures): barred, the literal reading; or "
    "allowed (the reading before issue 28)", "§7")
POOR_TROOPS_WEAPONS = _opt(
    "poor_troops_weapons", ["light_arms", "all_small_arms"],
    "'+1 si un recluta, fanático o milicia dispara (sólo pequeñas armas, no granadas, RPG´s...)': the "
    "light arms of §6.1 ('armas ligeras (pistola, rifle de asalto, subfusil y LMG)'), or every small-arm "
    "weapon of the data (also MMG, HMG and the sniper rifle; the reading before issue 28)", "§8, §6.1")
SUPPORT_AFTER_MOVE = _opt(
    "support_after_move", ["not_moved_only", "cautious_move"],
    "'La infantería con MMG o HMG u otras armas de apoyo sólo podrán disparar si no se han movido': a "
    "support weapon fires only when its team did not move, or also after a cautious move of up to 5 cm "
    "(the reading before issue 28)", "§6.1")
SHOCKED_IN_COVER = _opt(
    "shocked_in_cover", ["hidden", "targetable"],
    "'Si la figura se encuentra bajo cobertura se la considerará como oculta al enemigo. Si se encuentra en "
    "campo abierto se le considerará en cobertura más allá de 25 cm de cualquier figura enemiga': a shocked "
    "figure in cover is hidden and one in the open counts as in cover beyond 25 cm; or shocked figures are "
    "ordinary targets (the reading before issue 28)", "§10")
MOVEMENT_REACTION = _opt(
    "movement_reaction", ["resolved_first", "simultaneous"],
    "'Si el fuego de oportunidad es una reacción al movimiento enemigo, los disparos se resolverán cuando "
    "decida el jugador que reacciona': opportunity fire at a team that closed in is resolved before the "
    "team fires (a figure it hits loses its action); or it is simultaneous with the team's fire (the "
    "reading before issue 28)", "§8.5")

SAMPLING = _opt(
    "sampling", ["dice", "table"],
    "not a rule reading: how the firefight draws a shot's hits, a figure's saves and a morale test: dice = "
    "one D6 at a time; table = one draw per up to 12 dice from the exact law of the outcome (integer "
    "counts over the 6**n ordered rolls, built when the point is prepared). Both give the same "
    "distributions (tests/breaking_news/test_bn_sampling.py)", "§6 (sampling)")

#: options whose every value is a placeholder reading (the source states nothing)
PLACEHOLDER_READINGS = (MELEE_TIES, INITIATIVE_TIES)

SHOT_OPTIONS = (BURST_OVERFLOW, BURST_WEAPONS, AIMED_OVER_6, NATURAL_1_TO_HIT, SAVE_BONUS, HEAVY_AT_VS_MEN,
                POOR_TROOPS_WEAPONS)
#: none: the morale question is given the casualties counted (its ``casualties``), so which casualties count
#: (``morale_casualties``) is a choice of the firefight, which counts them
MORALE_OPTIONS: tuple = ()
MELEE_OPTIONS = (MELEE_GROUP, MELEE_TIES)
POINTS_OPTIONS = (TRAINED_POINTS, IRREGULAR_VETERAN_POINTS)
FIREFIGHT_OPTIONS = SHOT_OPTIONS + (MORALE_CASUALTIES, SHOCK_RECOVERY, INITIATIVE_TIES, SUPPORT_AFTER_MOVE,
                                    SHOCKED_IN_COVER, MOVEMENT_REACTION, SAMPLING)
