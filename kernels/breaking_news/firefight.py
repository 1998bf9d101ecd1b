"""Kernel of question ``firefight``: two teams exchange fire turn by turn until one fails morale
while behind on DP, is wiped out, or the turn limit (docs/models/breaking_news.md §6).

One turn (source §5): initiative (§5.1: 2D6 + leadership + quality bonus, -1 per turn the side has
held it); the active team acts as one fire group (§8.4): every shocked figure first takes its shock
test (§10); an advancing team with an acting figure closes one step of the range schedule; each
reactive figure not shocked reacts once with opportunity fire at an acting figure (§8.5). After a
closing move the reaction is resolved first ("los disparos se resolverán cuando decida el jugador
que reacciona", rule option movement_reaction) and an acting figure it hits loses its action;
otherwise the exchange is simultaneous ("Si el fuego de oportunidad es una reacción al fuego
enemigo, entonces los disparos serán simultáneos"). Shocked reactive figures of a team in cover are
hidden, those of a team in the open count as in cover beyond 25 cm (§10, rule option
shocked_in_cover). Saves (§9), shock for survivors of hits (§10), defeat points (§14), morale at
the end of the turn (§12). Game data arrive compiled (analyzer/games/breaking_news/firefight.py):

- ``figs[side, fig, FIG_*]``: save face (own cover, and counted in cover), leader flag, leadership,
  shock value, DP when lost, sniper;
- ``fire[j, side, fig, STILL|MOVED|REACTIVE, target_is_sniper, target_counts_covered, DICE|FACE]``:
  the compiled shot per figure after ``j`` closing moves (MOVED: the fire after the move into j);
- ``team[side, TEAM_*]``: initiative bonus, morale dice, ambush bonus, motivation, advances, hides
  its shocked figures;
- ``consts[C_*]``: turn limit, DP constants, shock and morale automatic faces, rule readings, the
  last step of the range schedule;
- ``shocked_covered[j]``: 1 when a shocked figure in the open counts as in cover at range step j;
- ``hits_cum``, ``powers``: the exact tables of ``sampling: table`` (``consts[C_SAMPLING]``): each
  shot, each figure's saves and each morale test is one draw per up to 12 dice
  (:func:`kernels.breaking_news.fire.drawn_hits`, ``drawn_survives``,
  :func:`kernels.breaking_news.morale.drawn_morale_passes`); 1x1x1 / 1x1 stubs under ``dice``.
"""
from __future__ import annotations

import numpy as np

from kernels._jit import hot_jit, jit, parallel_jit, unmanaged_jit
from kernels.breaking_news.fire import drawn_hits, drawn_survives, roll_hits
from kernels.breaking_news.morale import drawn_morale_passes, morale_passes
from kernels.driver import run_trials
from kernels.rng import roll_die

MAX_FIGURES = 24
# figs columns
FIG_SAVE, FIG_LEADER, FIG_LEADERSHIP, FIG_SHOCK, FIG_DP, FIG_SNIPER, FIG_SAVE_COVERED = range(7)
N_FIG_COLS = 7
#: fire roles: the active team standing still, the active team after its closing move, opportunity fire
STILL, MOVED, REACTIVE = 0, 1, 2
N_ROLES = 3
DICE, FACE = 0, 1
# team columns
TEAM_INIT, TEAM_MORALE, TEAM_AMBUSH, TEAM_MOTIVATION, TEAM_ADVANCES, TEAM_HIDES_SHOCKED = range(6)
N_TEAM_COLS = 6
# consts
(C_TURNS, C_DP_FIRED_FIRST, C_DP_WITHDRAWAL, C_LEADER_EXTRA, C_SHOCK_FAILS_ON, C_MORALE_CUMULATIVE,
 C_SHOCK_CLEARS, C_TIE_REROLL, C_MAX_INIT_ROLLS, C_LEADER_IN_REACH, C_SAMPLING, C_LAST_STEP,
 C_REACTION_FIRST) = range(13)
N_CONSTS = 13
#: consts[C_SAMPLING] (rule option ``sampling``, not a rule reading): dice one by one, or tables
SAMPLING_DICE, SAMPLING_TABLE = 0, 1
# metrics
(M_WIN_A, M_WIN_B, M_DRAW, M_TURNS, M_CAS_A, M_CAS_B, M_DP_A, M_DP_B, M_TURN_LIMIT) = range(9)
N_METRICS = 9
# counters
K_TURN_LIMIT, K_INIT_TIE_CAP = 0, 1
N_COUNTERS = 2


# Exceptions to the jit policy, measured with ``analyzer bench bn-firefight`` (kernels/_jit.py):
# the trial and its phase helpers are ``unmanaged_jit`` (none allocates; with NRT every call
# increfs/decrefs its arrays) and the per-shot helpers (target choice, leadership, initiative,
# hits) are ``hot_jit``. All ``jit``: 108x the reference; unmanaged only: ~150x; both: 453x.
# per-side scratch rows of the workspace's second array
S_DP, S_LOST, S_LEADER_LOST, S_HELD, S_MOTIVATION, S_DEAD, S_LEAD_DEAD, S_FAILED, S_STANDING = range(9)
N_SIDE_ROWS = 9
# grid rows
G_ALIVE, G_SHOCKED, G_HITS, G_DEAD, G_ACTING, G_TARGETS, G_HIT_COVERED = range(7)
N_GRID_ROWS = 7


@jit
def firefight_workspace(args):
    """(grid[G_*, side, figure]: alive, shocked, hits taken, dead this turn, acting this turn, the
    list of the figures of the side that may be fired at in this fire phase, hit while counted in
    cover; sides[S_*, side]: per-side counts), allocated once per chunk."""
    return np.zeros((N_GRID_ROWS, 2, MAX_FIGURES), np.int64), np.zeros((N_SIDE_ROWS, 2), np.int64)


@hot_jit
def best_leadership(ws, figs, n_fig, side):
    """Leadership of the best living leader of ``side`` (0 when none is left)."""
    best = 0
    for f in range(n_fig[side]):
        if ws[G_ALIVE, side, f] and figs[side, f, FIG_LEADERSHIP] > best:
            best = figs[side, f, FIG_LEADERSHIP]
    return best


@hot_jit
def initiative_score(state, ws, figs, n_fig, team, turn, held, s):
    score = roll_die(state, 6) + roll_die(state, 6) + best_leadership(ws, figs, n_fig, s) + team[s, TEAM_INIT] - held[s]
    if turn == 0:
        score += team[s, TEAM_AMBUSH]
    return score


@unmanaged_jit
def roll_initiative(state, counters, ws, figs, n_fig, team, consts, turn, held, previous):
    """§5.1: 2D6 + the leader's leadership + the quality bonus - 1 per turn held in a row (+ Ambush
    on the first turn). Ties (A11): roll again (capped, counted; then side A) or keep the previous."""
    for _ in range(consts[C_MAX_INIT_ROLLS]):
        a = initiative_score(state, ws, figs, n_fig, team, turn, held, 0)
        b = initiative_score(state, ws, figs, n_fig, team, turn, held, 1)
        if a > b:
            return 0
        if b > a:
            return 1
        if not consts[C_TIE_REROLL]:
            return previous if previous >= 0 else 0
    counters[K_INIT_TIE_CAP] += 1
    return 0


@unmanaged_jit
def shock_tests(state, ws, figs, n_fig, consts, side):
    """§10: each shocked figure of the activated side tests 1D6 <= Shock + leadership (a 6 always
    fails); who passes acts (and loses the shock unless A9 test_every_activation). Marks ws[G_ACTING]."""
    lead = best_leadership(ws, figs, n_fig, side) if consts[C_LEADER_IN_REACH] else 0
    for f in range(n_fig[side]):
        ws[G_ACTING, side, f] = 0
        if not ws[G_ALIVE, side, f]:
            continue
        if ws[G_SHOCKED, side, f]:
            d = roll_die(state, 6)
            if d >= consts[C_SHOCK_FAILS_ON] or d > figs[side, f, FIG_SHOCK] + lead:
                continue
            if consts[C_SHOCK_CLEARS]:
                ws[G_SHOCKED, side, f] = 0
        ws[G_ACTING, side, f] = 1


@hot_jit
def list_targets(ws, sides, n_fig, side, acting_only, hide_shocked):
    """Write the figures of ``side`` that may be fired at now into ws[G_TARGETS]: the acting figures
    (targets of opportunity fire, §8.5 "que se mueva o dispare"), or every standing figure but the
    shocked ones when they are hidden (§10 "bajo cobertura se la considerará como oculta")."""
    n = 0
    for f in range(n_fig[side]):
        if not ws[G_ALIVE, side, f]:
            continue
        if acting_only and not ws[G_ACTING, side, f]:
            continue
        if hide_shocked and ws[G_SHOCKED, side, f]:
            continue
        ws[G_TARGETS, side, n] = f
        n += 1
    sides[S_STANDING, side] = n


@hot_jit
def pick_target(state, ws, sides, side):
    """A uniformly random figure of the target list of ``side`` (-1: none)."""
    n = sides[S_STANDING, side]
    if n == 0:
        return -1
    return ws[G_TARGETS, side, roll_die(state, n) - 1]


@unmanaged_jit
def volley(state, ws, sides, figs, n_fig, fire, step, side, role, shocked_covered, table, hits_cum, powers):
    """Every figure of ``side`` allowed to fire in ``role`` shoots at a random figure of the enemy's
    target list; hits pile up in ws[G_HITS] (resolved by the caller). ``shocked_covered``: a shocked
    target counts as in cover (§10, in the open beyond 25 cm). Returns the dice rolled. ``table``:
    each shot's hits are one draw from ``hits_cum`` (``sampling: table``)."""
    enemy = 1 - side
    rolled = 0
    for f in range(n_fig[side]):
        if not ws[G_ALIVE, side, f]:
            continue
        if role != REACTIVE and not ws[G_ACTING, side, f]:
            continue
        if role == REACTIVE and ws[G_SHOCKED, side, f]:
            continue   # §10 "Las figuras conmocionadas no pueden reaccionar al fuego de oportunidad"
        t = pick_target(state, ws, sides, enemy)
        if t < 0:
            return rolled
        k = figs[enemy, t, FIG_SNIPER]
        c = 1 if shocked_covered and ws[G_SHOCKED, enemy, t] else 0
        dice = fire[step, side, f, role, k, c, DICE]
        if dice > 0:
            rolled += dice
            if c:
                ws[G_HIT_COVERED, enemy, t] = 1
            if table:
                ws[G_HITS, enemy, t] += drawn_hits(state, dice, fire[step, side, f, role, k, c, FACE], hits_cum, powers)
            else:
                ws[G_HITS, enemy, t] += roll_hits(state, dice, fire[step, side, f, role, k, c, FACE])
    return rolled


@unmanaged_jit
def resolve_hits(state, ws, figs, n_fig, dp, side, table, powers):
    """§9 one save per hit (first failure removes the figure; the save of a figure hit while counted
    in cover gets the cover +1); §10 survivors of hits are shocked, and a hit figure loses its
    action ("esa figura pierde la iniciativa"). Returns (casualties, leader lost) and adds the §14 DP
    of each loss to dp[side]. ``table``: a figure's saves are one draw per up to 12 hits."""
    dead = 0
    leader = 0
    for f in range(n_fig[side]):
        ws[G_DEAD, side, f] = 0
        h = ws[G_HITS, side, f]
        ws[G_HITS, side, f] = 0
        face = figs[side, f, FIG_SAVE_COVERED] if ws[G_HIT_COVERED, side, f] else figs[side, f, FIG_SAVE]
        ws[G_HIT_COVERED, side, f] = 0
        if h == 0 or not ws[G_ALIVE, side, f]:
            continue
        ws[G_ACTING, side, f] = 0
        survived = True
        if table:
            survived = drawn_survives(state, h, face, powers)
        else:
            for _ in range(h):
                if roll_die(state, 6) < face:
                    survived = False
                    break
        if survived:
            ws[G_SHOCKED, side, f] = 1
        else:
            ws[G_ALIVE, side, f] = 0
            ws[G_SHOCKED, side, f] = 0
            ws[G_DEAD, side, f] = 1
            dead += 1
            dp[side] += figs[side, f, FIG_DP]
            if figs[side, f, FIG_LEADER]:
                leader = 1
    return dead, leader


@unmanaged_jit
def firefight_trial(state, values, counters, workspace, args):
    n_fig, figs, fire, team, consts, shocked_covered, hits_cum, powers = args
    ws, sides = workspace
    table = consts[C_SAMPLING] == SAMPLING_TABLE
    for s in range(2):
        for f in range(MAX_FIGURES):
            ws[G_ALIVE, s, f] = 1 if f < n_fig[s] else 0
            ws[G_SHOCKED, s, f] = 0
            ws[G_HITS, s, f] = 0
            ws[G_HIT_COVERED, s, f] = 0
        for r in range(N_SIDE_ROWS):
            sides[r, s] = 0
        sides[S_MOTIVATION, s] = team[s, TEAM_MOTIVATION]
    dp = sides[S_DP]
    lost = sides[S_LOST]
    leader_lost = sides[S_LEADER_LOST]
    held = sides[S_HELD]
    motivation = sides[S_MOTIVATION]
    dead = sides[S_DEAD]
    lead_dead = sides[S_LEAD_DEAD]
    failed = sides[S_FAILED]
    previous = -1
    fired_first = False
    turns = consts[C_TURNS]
    ended = False
    turn = 0
    step = 0
    while turn < turns and not ended:
        active = roll_initiative(state, counters, ws, figs, n_fig, team, consts, turn, held, previous)
        reactive = 1 - active
        held[active] = held[active] + 1 if active == previous else 1
        held[reactive] = 0
        previous = active
        shock_tests(state, ws, figs, n_fig, consts, active)
        acted = 0
        for f in range(n_fig[active]):
            acted += ws[G_ACTING, active, f]
        for f in range(n_fig[reactive]):
            ws[G_ACTING, reactive, f] = 0
        moved = acted > 0 and team[active, TEAM_ADVANCES] == 1 and step < consts[C_LAST_STEP]
        if moved:
            step += 1          # the closing move (docs/models/breaking_news.md §6 Space)
        covered = shocked_covered[step]
        hide = team[reactive, TEAM_HIDES_SHOCKED]
        if moved and consts[C_REACTION_FIRST]:
            # §8.5 reaction to movement "se resolverán cuando decida el jugador que reacciona": first
            list_targets(ws, sides, n_fig, active, True, 0)
            rolled = volley(state, ws, sides, figs, n_fig, fire, step, reactive, REACTIVE, 0, table, hits_cum,
                            powers)
            if not fired_first and rolled > 0:
                fired_first = True
                dp[reactive] += consts[C_DP_FIRED_FIRST]
            dead[active], lead_dead[active] = resolve_hits(state, ws, figs, n_fig, dp, active, table, powers)
            list_targets(ws, sides, n_fig, reactive, False, hide)
            rolled = volley(state, ws, sides, figs, n_fig, fire, step, active, MOVED, covered, table, hits_cum,
                            powers)
            if not fired_first and rolled > 0:
                fired_first = True
                dp[active] += consts[C_DP_FIRED_FIRST]
            dead[reactive], lead_dead[reactive] = resolve_hits(state, ws, figs, n_fig, dp, reactive, table, powers)
        else:
            # "Si el fuego de oportunidad es una reacción al fuego enemigo, entonces los disparos serán simultáneos"
            list_targets(ws, sides, n_fig, active, True, 0)
            list_targets(ws, sides, n_fig, reactive, False, hide)
            rolled_active = volley(state, ws, sides, figs, n_fig, fire, step, active, MOVED if moved else STILL,
                                   covered, table, hits_cum, powers)
            rolled_reactive = 0
            if acted > 0:
                rolled_reactive = volley(state, ws, sides, figs, n_fig, fire, step, reactive, REACTIVE, 0, table,
                                         hits_cum, powers)
            if not fired_first and rolled_active + rolled_reactive > 0:
                fired_first = True
                dp[active if rolled_active > 0 else reactive] += consts[C_DP_FIRED_FIRST]
            for s in range(2):
                dead[s], lead_dead[s] = resolve_hits(state, ws, figs, n_fig, dp, s, table, powers)
        for s in range(2):
            lost[s] += dead[s]
            leader_lost[s] = max(leader_lost[s], lead_dead[s])
        # §12 morale at the end of the turn, by every team with casualties this turn
        for s in range(2):
            failed[s] = 0
            if dead[s] == 0:
                continue
            if consts[C_MORALE_CUMULATIVE]:
                counted = lost[s] + consts[C_LEADER_EXTRA] * leader_lost[s]
            else:
                counted = dead[s] + consts[C_LEADER_EXTRA] * lead_dead[s]
            half = 2 * lost[s] >= n_fig[s]
            if table:
                passed = drawn_morale_passes(state, team[s, TEAM_MORALE], counted, half, powers)
            else:
                passed = morale_passes(state, team[s, TEAM_MORALE], counted, half)
            if not passed:
                if motivation[s]:
                    motivation[s] = 0     # Extra "Motivación": "El primer test de moral fallido es ignorado"
                else:
                    failed[s] = 1
        for s in range(2):
            if failed[s]:
                if dp[s] > dp[1 - s]:
                    dp[s] += consts[C_DP_WITHDRAWAL]   # withdraws: "el juego se acaba"
                    ended = True
                else:
                    for f in range(n_fig[s]):
                        if ws[G_ALIVE, s, f]:
                            ws[G_SHOCKED, s, f] = 1            # "TODO el equipo estará conmocionado"
        if lost[0] == n_fig[0] or lost[1] == n_fig[1]:
            ended = True
        turn += 1
    values[M_TURN_LIMIT] = 0
    if not ended:
        values[M_TURN_LIMIT] = 1
        counters[K_TURN_LIMIT] += 1
    values[M_WIN_A] = 1 if dp[0] < dp[1] else 0     # §14 "el perdedor es el jugador con más puntos de derrota"
    values[M_WIN_B] = 1 if dp[1] < dp[0] else 0
    values[M_DRAW] = 1 if dp[0] == dp[1] else 0
    values[M_TURNS] = turn
    values[M_CAS_A] = lost[0]
    values[M_CAS_B] = lost[1]
    values[M_DP_A] = dp[0]
    values[M_DP_B] = dp[1]


@parallel_jit
def firefight_kernel(seed, key, chunk_lo, chunk_hi, chunk_size, n_trials, n_bins, args):
    return run_trials(firefight_trial, firefight_workspace, args, seed, key, chunk_lo, chunk_hi, chunk_size,
                      n_trials, N_METRICS, n_bins, N_COUNTERS)
