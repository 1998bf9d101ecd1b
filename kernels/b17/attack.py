"""One German attack against the bomber (spec §3.1; digest §1, §3, §6, §7).

Shared by the ``attack_wave`` and ``mission`` kernels and by the exact enumeration of
``attack_wave`` (which calls :func:`choose_target`, :func:`finish_attack` and
:func:`wave_values` from Python with scripted shot outcomes).

Everything comes in as plain arrays compiled by ``analyzer.games.b17.compile`` (static for a
sweep point). They are passed one by one, and per-candidate work is written out in the loops:
measured, an inlined helper taking the arrays (or a tuple of them) made the target choice
about 15x slower, as every call re-counts its array references.

``shooter_start[S+1]``, ``shooter_guns[..]``
    the guns of shooter s, in table order (an exclusive group such as the navigator is one
    shooter, §2.4).
``cells[G, 24, 2]``
    ``[.., CELL_KIND]``: 0 cannot fire (grey or masked by ``only_clock``), 1 ordinary,
    2 delayed ``**`` (needs the intercom, §2.3); ``[.., CELL_MOD]``: the to-hit modifier.
``counts[G, 24, T, D + 1]``
    the exact single-shot counts out of 1000 (spec §0.2) used by ``max_kill_probability``:
    ``[.., h]`` shots that destroy a fighter with ``h`` prior hits (``h < D``), ``[.., D]``
    shots that hit.
``gun_table[G, 3]``
    skill of the gun's crew, damage bonus (II: 0, II+2: 2), crew index (``GUN_*``).
``type_table[T, 2]``
    damage per hit and dense danger rank (0 = most dangerous) of each fighter type.
``cfg`` int64 array
    rule options and thresholds, indices ``C_*``.
``shot_law[G, 24, T]``, ``law_hits[L, 1000]``
    ``sampling: table`` (``cfg[C_SAMPLING]``): a shot of gun g from cell c at a fighter of
    type t has the outcome table ``law_hits[shot_law[g, c, t]]``, its fighter hits for each of
    the 1000 ordered 3d10 outcomes (:func:`drawn_hits`); 1x1x1 / 1x1 stubs under
    ``sampling: dice``.

Fighters of the attack: ``f_type``, ``f_cell`` (0..23), ``f_hits`` (hits at the start of the
attack), in fighter index order. Shots: ``shots[k] = (gun, fighter, delayed, hits, scratch)``.
"""
from __future__ import annotations

import numpy as np

from kernels._jit import hot_jit, jit
from kernels.b17.shot import D10, SHOT_DICE, fighter_hits, shot_damage
from kernels.dice import roll_under_identified
from kernels.rng import roll_die, uniform01

CELL_KIND = 0
CELL_MOD = 1
GUN_SKILL = 0
GUN_BONUS = 1
GUN_CREW = 2
TYPE_K = 0
TYPE_RANK = 1
SHOT_GUN = 0
SHOT_FIGHTER = 1
SHOT_DELAYED = 2
SHOT_HITS = 3
SHOT_POOL = 4           # scratch: the shot shares the kill being credited
SHOT_COLUMNS = 5

# cfg indices
C_POLICY = 0            # POLICY_* below
C_RETARGET = 1          # A9: 1 = guns skip fighters already destroyed by ordinary fire
C_TOCADO_NOW = 2        # A4: 1 = a fighter first tocado this attack fires at +2 now
C_CREDIT_SHOOTERS = 3   # A3: 1 = every gun that shot at it shares the kill (0: those that hit)
C_CREDIT_PER_GUN = 4    # A3: 1 = split per shot (gun), 0 = per distinct crew member
C_SHARE_SAME_ATTACK = 5  # A5: 1 = ordinary and ** hitters share; 0 = the destroying step only
C_FACE_OFFSET = 6       # A2: 0 faces 1..10, -1 faces 0..9
C_QUALITY_FIRST = 7     # A1: 1 = quality pair is dice (0, 1)
C_TOCADO_AT = 8
C_DANADO_AT = 9
C_DESTROYED_AT = 10
C_SCALE = 11            # kill shares are recorded in units of 1/scale
C_N_RANK = 12
C_SAMPLING = 13         # SAMPLING_* below (rule option ``sampling``; not a rule reading)
N_CFG = 14

SAMPLING_DICE = 0       # each shot rolls its three d10
SAMPLING_TABLE = 1      # each shot is one draw from the exact law of its hits (law_hits)

POLICY_FOCUS = 0        # focus_most_dangerous
POLICY_SPREAD = 1       # spread
POLICY_MAX_KILL = 2     # max_kill_probability

#: Packing bounds of the target keys (validated caps, spec §0.6).
MAX_FIGHTERS = 64
MAX_GUNS = 16
SHOT_OUTCOMES = 1000    # 10**3 ordered 3d10 outcomes: counts are out of this

# fighter class after ordinary fire: who fires, at which penalty (§6)
NOT_FIRING = -1
FIRES_INTACT = 0
FIRES_TOCADO = 1
FIRES_DANADO = 2


@jit
def usable_kind(cells, g, cell, gun_ok, intercom_ok):
    """§3.2 eligibility of gun ``g`` at position ``cell``: 0 no, 1 ordinary, 2 delayed ``**``."""
    kind = cells[g, cell, CELL_KIND]
    if kind == 0 or not gun_ok[g]:
        return 0
    if kind == 2 and not intercom_ok:
        return 0
    return kind


@jit
def choose_target(s, shooter_start, shooter_guns, cells, counts, type_table, cfg, n_f, f_type, f_cell, f_hits,
                  assigned, running, gun_ok, intercom_ok):
    """Target of shooter ``s``: the candidate (gun, fighter) with the smallest key (§3.1 step 1).

    Danger key ``dk = (hits, danger rank, index)``; ``focus_most_dangerous``: ``(dk, gun)``;
    ``spread``: ``(assigned, dk, gun)``; ``max_kill_probability``:
    ``(-kill_count, -hit_count, dk, gun)``. Keys are packed into one int64 (all parts are
    bounded). Returns ``(gun, fighter)`` or ``(-1, -1)`` when the shooter has no target.
    """
    policy = cfg[C_POLICY]
    retarget = cfg[C_RETARGET]
    destroyed_at = cfg[C_DESTROYED_AT]
    n_rank = cfg[C_N_RANK]
    dk_span = destroyed_at * n_rank * MAX_FIGHTERS
    best_key = 0
    best_g = -1
    best_f = -1
    for j in range(shooter_start[s], shooter_start[s + 1]):
        g = shooter_guns[j]
        for f in range(n_f):
            if retarget and f_hits[f] + running[f] >= destroyed_at:
                continue
            cell = f_cell[f]
            kind = cells[g, cell, CELL_KIND]           # usable_kind(), written out (see module doc)
            if kind == 0 or not gun_ok[g] or (kind == 2 and not intercom_ok):
                continue
            dk = (f_hits[f] * n_rank + type_table[f_type[f], TYPE_RANK]) * MAX_FIGHTERS + f
            if policy == POLICY_FOCUS:
                key = dk * MAX_GUNS + g
            elif policy == POLICY_SPREAD:
                key = (assigned[f] * dk_span + dk) * MAX_GUNS + g
            else:
                kc = counts[g, cell, f_type[f], f_hits[f]]
                hc = counts[g, cell, f_type[f], destroyed_at]
                lead = (SHOT_OUTCOMES - kc) * (SHOT_OUTCOMES + 1) + (SHOT_OUTCOMES - hc)
                key = (lead * dk_span + dk) * MAX_GUNS + g
            if best_g < 0 or key < best_key:
                best_key = key
                best_g = g
                best_f = f
    return best_g, best_f


@jit
def plan_attack(shooter_start, shooter_guns, cells, counts, type_table, cfg, n_f, f_type, f_cell, f_hits,
                gun_ok, intercom_ok, assigned, running, shots):
    """§3.1 step 1 without the rolls: every shooter's (gun, fighter, delayed) into ``shots``.

    Only valid when no choice depends on a roll (``destroyed_target: keep_firing``): then this
    is exactly "declare every target, then fire simultaneously" (§3.5, A9). Returns the
    number of shots.
    """
    for f in range(n_f):
        assigned[f] = 0
        running[f] = 0
    n_shots = 0
    for s in range(shooter_start.shape[0] - 1):
        g, f = choose_target(s, shooter_start, shooter_guns, cells, counts, type_table, cfg, n_f, f_type, f_cell,
                             f_hits, assigned, running, gun_ok, intercom_ok)
        if g < 0:
            continue
        shots[n_shots, SHOT_GUN] = g
        shots[n_shots, SHOT_FIGHTER] = f
        shots[n_shots, SHOT_DELAYED] = 1 if cells[g, f_cell[f], CELL_KIND] == 2 else 0
        n_shots += 1
        assigned[f] += 1
    return n_shots


@jit
def guns_by_position(shooter_start, shooter_guns, cells):
    """For every position (cell) the (shooter, gun) pairs whose gun can fire there at all
    (``CELL_KIND`` not 0), in shooter order: ``(start[24 + 1], shooter[..], gun[..])``, the pairs
    of cell ``c`` at ``start[c]:start[c + 1]``. Built once per chunk from the point's tables, it
    lets :func:`plan_by_position` skip every gun that cannot reach a fighter without testing it."""
    n_cells = cells.shape[1]
    n_shooters = shooter_start.shape[0] - 1
    start = np.zeros(n_cells + 1, np.int64)
    for c in range(n_cells):
        n = 0
        for s in range(n_shooters):
            for j in range(shooter_start[s], shooter_start[s + 1]):
                if cells[shooter_guns[j], c, CELL_KIND] != 0:
                    n += 1
        start[c + 1] = start[c] + n
    shooter = np.zeros(max(start[n_cells], 1), np.int64)
    gun = np.zeros(max(start[n_cells], 1), np.int64)
    for c in range(n_cells):
        k = start[c]
        for s in range(n_shooters):
            for j in range(shooter_start[s], shooter_start[s + 1]):
                if cells[shooter_guns[j], c, CELL_KIND] != 0:
                    shooter[k] = s
                    gun[k] = shooter_guns[j]
                    k += 1
    return start, shooter, gun


@jit
def plan_by_position(position_start, position_shooter, position_gun, n_shooters, cells, counts, type_table, cfg,
                     n_f, f_type, f_cell, f_hits, gun_ok, intercom_ok, shots):
    """:func:`plan_attack` under ``focus_most_dangerous`` or ``max_kill_probability`` (not
    ``spread``, whose keys read the choices already made), on the pairs of
    :func:`guns_by_position`: a shooter's key does not depend on the other shooters' choices, so
    every shooter's smallest key of :func:`choose_target` is found in one pass over the fighters,
    each fighter meeting only the guns that reach its position (measured on the mission: the
    test of every gun against every fighter was about 40% of a trial). Keys are unique, so the
    choices are :func:`choose_target`'s (tested). Each shooter's best is kept in ``shots[s]`` (its
    key in the ``SHOT_HITS`` column) until the shots are written in shooter order; returns their
    number."""
    policy = cfg[C_POLICY]
    retarget = cfg[C_RETARGET]
    destroyed_at = cfg[C_DESTROYED_AT]
    n_rank = cfg[C_N_RANK]
    dk_span = destroyed_at * n_rank * MAX_FIGHTERS
    for s in range(n_shooters):
        shots[s, SHOT_GUN] = -1
    for f in range(n_f):
        h = f_hits[f]
        if retarget and h >= destroyed_at:      # running is 0 while declaring
            continue
        cell = f_cell[f]
        t = f_type[f]
        dk = (h * n_rank + type_table[t, TYPE_RANK]) * MAX_FIGHTERS + f
        for k in range(position_start[cell], position_start[cell + 1]):
            g = position_gun[k]
            if not gun_ok[g] or (cells[g, cell, CELL_KIND] == 2 and not intercom_ok):
                continue
            if policy == POLICY_FOCUS:
                key = dk * MAX_GUNS + g
            else:
                kc = counts[g, cell, t, h]
                hc = counts[g, cell, t, destroyed_at]
                lead = (SHOT_OUTCOMES - kc) * (SHOT_OUTCOMES + 1) + (SHOT_OUTCOMES - hc)
                key = (lead * dk_span + dk) * MAX_GUNS + g
            s = position_shooter[k]
            if shots[s, SHOT_GUN] < 0 or key < shots[s, SHOT_HITS]:
                shots[s, SHOT_HITS] = key
                shots[s, SHOT_GUN] = g
                shots[s, SHOT_FIGHTER] = f
    n_shots = 0
    for s in range(n_shooters):
        g = shots[s, SHOT_GUN]
        if g < 0:
            continue
        f = shots[s, SHOT_FIGHTER]
        shots[n_shots, SHOT_GUN] = g
        shots[n_shots, SHOT_FIGHTER] = f
        shots[n_shots, SHOT_DELAYED] = 1 if cells[g, f_cell[f], CELL_KIND] == 2 else 0
        n_shots += 1
    return n_shots


@hot_jit
def drawn_hits(state, law_hits, law):
    """§3.3-§5 in one draw (``sampling: table``): the fighter hits of one shot. One uniform
    index in 0..999 picks one of the 1000 equally likely ordered 3d10 outcomes, and
    ``law_hits[law]`` holds the hits of each (``analyzer.games.b17.shotlaw.outcomes``: hit test,
    damage II from the same dice, ceil(damage / k)), so the law is exactly that of
    :func:`shot_damage` and :func:`fighter_hits` on rolled dice. A lookup, not a search: the
    measured step is about half the cost of rolling the three dice (docs/models/b17.md §0.5)."""
    return law_hits[law, roll_die(state, SHOT_OUTCOMES) - 1]


@jit
def roll_planned(state, dice, cells, gun_table, type_table, cfg, f_type, f_cell, n_shots, shots, shot_law, law_hits):
    """Roll the declared shots: fills ``shots[:, SHOT_HITS]`` (§3.3-§3.4, §4, §5)."""
    face_offset, quality_first = cfg[C_FACE_OFFSET], cfg[C_QUALITY_FIRST]
    table = cfg[C_SAMPLING] == SAMPLING_TABLE
    for k in range(n_shots):
        g = shots[k, SHOT_GUN]
        f = shots[k, SHOT_FIGHTER]
        if table:
            shots[k, SHOT_HITS] = drawn_hits(state, law_hits, shot_law[g, f_cell[f], f_type[f]])
            continue
        total = roll_under_identified(state, SHOT_DICE, D10, face_offset, dice)
        damage = shot_damage(total, dice[0], dice[1], dice[2], quality_first, cells[g, f_cell[f], CELL_MOD],
                             gun_table[g, GUN_SKILL], gun_table[g, GUN_BONUS])
        shots[k, SHOT_HITS] = fighter_hits(damage, type_table[f_type[f], TYPE_K])


@jit
def defensive_fire(state, dice, shooter_start, shooter_guns, cells, counts, gun_table, type_table, cfg,
                   n_f, f_type, f_cell, f_hits, gun_ok, intercom_ok, assigned, running, shots, shot_law, law_hits):
    """§3.1 step 1: targets and rolls. Returns the number of shots.

    ``keep_firing``: declare all targets, then roll (:func:`plan_attack`, :func:`roll_planned`).
    ``retarget`` (A9): shooter by shooter, a shooter skips fighters that the ordinary shots
    already rolled have destroyed, so each shot is rolled right after its choice.
    """
    if not cfg[C_RETARGET]:
        n_shots = plan_attack(shooter_start, shooter_guns, cells, counts, type_table, cfg, n_f, f_type, f_cell,
                              f_hits, gun_ok, intercom_ok, assigned, running, shots)
        roll_planned(state, dice, cells, gun_table, type_table, cfg, f_type, f_cell, n_shots, shots, shot_law,
                     law_hits)
        return n_shots
    for f in range(n_f):
        assigned[f] = 0
        running[f] = 0
    n_shots = 0
    face_offset, quality_first = cfg[C_FACE_OFFSET], cfg[C_QUALITY_FIRST]
    table = cfg[C_SAMPLING] == SAMPLING_TABLE
    for s in range(shooter_start.shape[0] - 1):
        g, f = choose_target(s, shooter_start, shooter_guns, cells, counts, type_table, cfg, n_f, f_type, f_cell,
                             f_hits, assigned, running, gun_ok, intercom_ok)
        if g < 0:
            continue
        cell = f_cell[f]
        delayed = cells[g, cell, CELL_KIND] == 2
        if table:
            h = drawn_hits(state, law_hits, shot_law[g, cell, f_type[f]])
        else:
            total = roll_under_identified(state, SHOT_DICE, D10, face_offset, dice)
            damage = shot_damage(total, dice[0], dice[1], dice[2], quality_first, cells[g, cell, CELL_MOD],
                                 gun_table[g, GUN_SKILL], gun_table[g, GUN_BONUS])
            h = fighter_hits(damage, type_table[f_type[f], TYPE_K])
        shots[n_shots, SHOT_GUN] = g
        shots[n_shots, SHOT_FIGHTER] = f
        shots[n_shots, SHOT_DELAYED] = 1 if delayed else 0
        shots[n_shots, SHOT_HITS] = h
        n_shots += 1
        assigned[f] += 1
        if not delayed:
            running[f] += h
    return n_shots


@jit
def finish_attack(gun_table, cfg, n_f, f_hits, n_shots, shots, f_final, f_class, f_delayed, kills_crew,
                  hits_crew, crew_mark):
    """§3.1 steps 2-6 after the shots are rolled.

    Fills ``f_final`` (hits after the delayed ``**`` hits) and ``f_class`` (``NOT_FIRING`` or
    the penalty class the fighter fires at) and ADDS this attack's kill shares (units of
    ``1/scale``) and hits to ``kills_crew`` / ``hits_crew``. ``f_delayed`` and ``crew_mark``
    are scratch.
    """
    tocado_at, danado_at, destroyed_at = cfg[C_TOCADO_AT], cfg[C_DANADO_AT], cfg[C_DESTROYED_AT]
    scale = cfg[C_SCALE]
    same, shooters = cfg[C_SHARE_SAME_ATTACK], cfg[C_CREDIT_SHOOTERS]
    for f in range(n_f):
        f_final[f] = f_hits[f]
        f_delayed[f] = 0
    for s in range(n_shots):
        f = shots[s, SHOT_FIGHTER]
        if shots[s, SHOT_DELAYED]:
            f_delayed[f] += shots[s, SHOT_HITS]
        else:
            f_final[f] += shots[s, SHOT_HITS]
    for f in range(n_f):
        after = f_final[f]                         # §1 step 3: ordinary hits apply
        if after >= destroyed_at:                  # §6: destroyed fighters do not attack
            f_class[f] = NOT_FIRING
        elif after >= danado_at:                   # dañado: fires at +4 (replaces +2), leaves
            f_class[f] = FIRES_DANADO
        elif after >= tocado_at:                   # tocado: +2 (A4: now, or from later attacks)
            if cfg[C_TOCADO_NOW] or f_hits[f] >= tocado_at:
                f_class[f] = FIRES_TOCADO
            else:
                f_class[f] = FIRES_INTACT
        else:
            f_class[f] = FIRES_INTACT
        final = after + f_delayed[f]               # §1 step 5: ** hits after the attack (§2.3)
        f_final[f] = final
        if final < destroyed_at:
            continue
        # §7 kill credit: who hit it in the attack that destroyed it (A3, A5)
        n_pool = 0
        for k in range(crew_mark.shape[0]):
            crew_mark[k] = 0
        for s in range(n_shots):
            shots[s, SHOT_POOL] = 0
            if shots[s, SHOT_FIGHTER] == f and _in_pool(same, shooters, destroyed_at, shots[s, SHOT_DELAYED],
                                                        shots[s, SHOT_HITS], after):
                shots[s, SHOT_POOL] = 1
                n_pool += 1
                crew_mark[gun_table[shots[s, SHOT_GUN], GUN_CREW]] = 1
        if n_pool == 0:
            continue
        if cfg[C_CREDIT_PER_GUN]:                  # each gun in the pool: 1/n_pool, to its crew
            share = scale // n_pool
            for s in range(n_shots):
                if shots[s, SHOT_POOL]:
                    kills_crew[gun_table[shots[s, SHOT_GUN], GUN_CREW]] += share
        else:                                      # each distinct crew member: 1/n_crew
            n_crew = 0
            for k in range(crew_mark.shape[0]):
                n_crew += crew_mark[k]
            share = scale // n_crew
            for k in range(crew_mark.shape[0]):
                if crew_mark[k]:
                    kills_crew[k] += share
    for s in range(n_shots):                       # §7: every hit recorded, even past 3
        hits_crew[gun_table[shots[s, SHOT_GUN], GUN_CREW]] += shots[s, SHOT_HITS]


@jit
def _in_pool(share_same_attack, credit_shooters, destroyed_at, delayed, h, after):
    """Whether a shot at a destroyed fighter shares its kill (A3 who, A5 which step)."""
    if not share_same_attack:
        if after >= destroyed_at:
            if delayed:
                return False
        elif not delayed:
            return False
    return credit_shooters != 0 or h >= 1


#: attack_wave metric order before the per-crew kills_<crew>, hits_<crew> (spec §3.2)
WAVE_METRICS = ("destroyed", "destroyed_before_firing", "damaged", "tocado", "intact",
                "fighters_firing", "firing_plus0", "firing_plus2", "firing_plus4",
                "p_any_destroyed", "guns_firing", "hits_total", "kills_total")


@jit
def wave_values(cfg, n_f, f_final, f_class, n_shots, shots, kills_crew, hits_crew, values):
    """The per-trial values of ``attack_wave`` (``WAVE_METRICS``, then kills and hits per crew)."""
    danado_at, destroyed_at, tocado_at = cfg[C_DANADO_AT], cfg[C_DESTROYED_AT], cfg[C_TOCADO_AT]
    for m in range(values.shape[0]):
        values[m] = 0
    for f in range(n_f):
        final = f_final[f]
        if final >= destroyed_at:
            values[0] += 1
        elif final >= danado_at:
            values[2] += 1
        elif final >= tocado_at:
            values[3] += 1
        else:
            values[4] += 1
        if f_class[f] == NOT_FIRING:
            values[1] += 1
        else:
            values[5] += 1
            values[6 + f_class[f]] += 1
    values[9] = 1 if values[0] > 0 else 0
    values[10] = n_shots
    total = 0
    for s in range(n_shots):
        total += shots[s, SHOT_HITS]
    values[11] = total
    values[12] = values[0]
    n_crew = kills_crew.shape[0]
    for k in range(n_crew):
        values[13 + k] = kills_crew[k]
        values[13 + n_crew + k] = hits_crew[k]


@jit
def draw_position(state, position_cell, position_cumulative):
    """A fighter position drawn with P(cell) = weight / total (positive weights only)."""
    u = uniform01(state) * position_cumulative[position_cumulative.shape[0] - 1]
    for i in range(position_cell.shape[0]):
        if u < position_cumulative[i]:
            return position_cell[i]
    return position_cell[position_cell.shape[0] - 1]
