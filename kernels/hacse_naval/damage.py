"""Ship damage sheets under fire: rows, thresholds and their effects (source "Schaden", l.36-53).

A compiled sheet (built by ``analyzer.games.hacse_naval.data.compile_sheet``) is

- ``rows[r, col]``: the row's hex, [HP], HE value, the damage at which each trigger fires (the
  rule options are folded into these thresholds at compile time) and each trigger's effects (from
  the row-effect table ``hacse.row_effects`` of data/hacse.yaml);
- ``hex_rows[h, i]`` / ``hex_n[h]``: the rows of hex ``h``; ``hex_elig`` / ``hex_elig_n``: its rows
  a torpedo or mine may hit ("nur an Rumpf, Maschinenraum, Tank oder Magazin");
- ``info[k]``: per-ship constants (U-boat or not, maximum speed, speed effects, fire damage).

A trial keeps ``dmg[r]`` (uncapped; :func:`damage_taken` caps each row at its [HP]) and
``tally[k]`` (fires started, leaks, speed lost ...). Every effect fires once, when the row's damage
crosses its threshold, except that under rule fire_repeats = every_hit_past_threshold a hit on a
row at or past a fire threshold starts a fire again (column ``REPEAT_AT``); the effects that deal
damage (fire, magazine) push onto a small stack. Crossings are bounded by the rows' thresholds;
repeated fires are not, so the workspace holds ``MAX_FIRES`` burning fires and ``EXTRA_STACK`` more
pending hits, and ``tally[T_CUT]`` counts what did not fit (the questions report it as a counter).

Inlining (``hot_jit``, measured on ``analyzer bench hacse-depth-charge``, one thread, same
process): :func:`hit_row` and :func:`_effects` called as functions gave 5.1M depth-charge
trials/s, inlined 8.8M; a fast path for hits that cross no threshold and uniform_int draws
(instead of 16-bit lanes) brought it to 10.5M. Rare paths (a fire breaking out) stay calls.
"""
from __future__ import annotations

import numpy as np

from kernels._jit import hot_jit, jit, unmanaged_jit
from kernels.rng import uniform_int

#: effects a row can have (bit flags), compiled from the row-effect table in data/hacse.yaml
#: (``hacse.row_effects``, source l.39-49); effects with no bit (sensors failing, aircraft) are
#: recorded by the table but change nothing these questions measure
FX_LEAK, FX_SINK, FX_FIRE, FX_SPEED, FX_ENGINE, FX_EXPLOSION = 1, 2, 4, 8, 16, 32

# columns of rows[r, :]: hex, [HP], HE; when each trigger fires (half, destroyed, unstated = H11,
# sinking) and the effects each trigger has; REPEAT_AT: the damage from which every further hit starts a
# fire (rule fire_repeats = every_hit_past_threshold; NEVER otherwise or on a row that starts no fire)
HEX, HP, HE, HALF_AT, FUNC_AT, SPECIAL_AT, SINK_AT, HALF_FX, FUNC_FX, SPECIAL_FX, REPEAT_AT = range(11)
N_ROW_COLS = 11
NEVER = 1 << 40
# entries of info[:]
(IS_SUB, MAX_SPEED, SUB_LEAK_ONCE, FIRE_SPREADS, ENGINE_MODE, SPEED_LEAK, SPEED_LOSS, FIRE_IMMEDIATE,
 MAGAZINE_DICE, SUB_LEAK_DEPTH, FIRE_PER_ROUND, FIRE_REPEATS) = range(12)
N_INFO = 12
# entries of tally[:] (one trial's bookkeeping); T_CUT counts fires not tracked and follow-up hits
# dropped because the workspace was full (only reachable under fire_repeats = every_hit_past_threshold)
# T_CHAIN counts the fires one hit has set off so far (a chain of repeated fires in a hex of one
# fire row would not end: it stops at MAX_CHAIN_FIRES, the rest counted in T_CUT)
T_FIRES, T_LEAKS, T_SPEED_LOST, T_SUNK, T_DEPTH_LOSS, T_ACTIVE_FIRES, T_CUT, T_CHAIN = range(8)
N_TALLY = 8
#: fires tracked as burning at once and extra stack room: repeated fires (rule fire_repeats) have no
#: bound from the thresholds, so the workspace has these and T_CUT counts what did not fit
MAX_FIRES = 256
EXTRA_STACK = 64
MAX_CHAIN_FIRES = 256
#: damage sources: a fire's damage may be barred from starting new fires (rule fire_spreads)
FROM_WEAPON, FROM_FIRE = 0, 1


@jit
def workspace_arrays(n_rows):
    """(dmg, tally, stack, fire_rows) for one trial on a sheet of ``n_rows`` rows. The stack holds
    pending hits (row, amount, source): crossing thresholds, a row pushes at most four follow-up hits
    over a trial (an engine fire at half, a funnel fire, a Flugbenzin fire, a magazine explosion);
    repeated fires (rule fire_repeats) push at most three per hit, so the stack has EXTRA_STACK more
    and fire_rows MAX_FIRES; what does not fit is counted in tally[T_CUT]."""
    cap = 4 * n_rows + 4 + EXTRA_STACK
    return (np.zeros(n_rows, np.int64), np.zeros(N_TALLY, np.int64), np.zeros((cap, 3), np.int64),
            np.zeros(max(cap, MAX_FIRES), np.int64))


@hot_jit
def w10(state):
    """One W10 (the source's d10)."""
    return uniform_int(state, 10) + 1


@hot_jit
def random_row(state, hex_rows, hex_n, h):
    """'einer zufälligen Zeile des Hexes': uniform over the rows of hex ``h``."""
    n = hex_n[h]
    return hex_rows[h, 0] if n == 1 else hex_rows[h, uniform_int(state, n)]


@hot_jit
def _crossed(old, new, at):
    return old < at <= new


@hot_jit
def _track_fire(r, tally, fire_rows):
    """Remember a new burning fire (its first row); beyond MAX_FIRES it burns untracked (T_CUT)."""
    if tally[T_ACTIVE_FIRES] < MAX_FIRES:
        fire_rows[tally[T_ACTIVE_FIRES]] = r
        tally[T_ACTIVE_FIRES] += 1
    else:
        tally[T_CUT] += 1


@unmanaged_jit
def _outbreak(state, h, rows, hex_rows, hex_n, info, tally, stack, top, fire_rows):
    """Feuer an Bord (l.53): a fire breaks out in hex ``h``: 'SOFORT 2 Schaden an einer zufälligen
    Zeile des Hexes'. The row hit is remembered for the rule fire_row = same_row."""
    if top >= stack.shape[0] or tally[T_CHAIN] >= MAX_CHAIN_FIRES:
        tally[T_CUT] += 1
        return top
    tally[T_CHAIN] += 1
    r = random_row(state, hex_rows, hex_n, h)
    tally[T_FIRES] += 1
    _track_fire(r, tally, fire_rows)
    stack[top, 0] = r
    stack[top, 1] = info[FIRE_IMMEDIATE]
    stack[top, 2] = FROM_FIRE
    return top + 1


@unmanaged_jit
def _apply(state, fx, r, fires_ok, rows, hex_rows, hex_n, info, tally, stack, top, fire_rows):
    """One trigger's effects ``fx`` on row ``r`` (source l.39-49); returns the new stack top."""
    h = rows[r, HEX]
    if fx & FX_LEAK:                           # Rumpf: "leckt das Schiff, die Geschwindigkeit verringert sich um 1"
        tally[T_LEAKS] += 1
        if info[IS_SUB] == 1:                  # "bei U-Booten stattdessen die maximale Tauchtiefe"
            if info[SUB_LEAK_ONCE] == 0 or tally[T_DEPTH_LOSS] == 0:
                tally[T_DEPTH_LOSS] += info[SUB_LEAK_DEPTH]
        else:
            tally[T_SPEED_LOST] += info[SPEED_LEAK]
    if fx & FX_SPEED:                          # Schornstein "um 1", Tank "Geschwindigkeit -1"
        tally[T_SPEED_LOST] += info[SPEED_LOSS]
    if fx & FX_FIRE and fires_ok:              # "ein Feuer bricht aus"
        top = _outbreak(state, h, rows, hex_rows, hex_n, info, tally, stack, top, fire_rows)
    if fx & FX_EXPLOSION:                      # Magazin: "1W10 mal den HE-Wert der schwersten Waffe ... in diesem Hex"
        boom = 0
        for _ in range(info[MAGAZINE_DICE]):
            boom += w10(state)
        if top >= stack.shape[0]:
            tally[T_CUT] += 1
            return top
        stack[top, 0] = random_row(state, hex_rows, hex_n, h)
        stack[top, 1] = boom * rows[r, HE]
        stack[top, 2] = FROM_WEAPON
        top += 1
    return top


@hot_jit
def _effects(state, r, old, new, source, rows, hex_rows, hex_n, info, tally, stack, top, fire_rows):
    """The effects of row ``r`` whose damage went from ``old`` to ``new``: each trigger whose
    threshold the hit crosses (half, destroyed, unstated) fires its effects once; returns the new
    stack top (fires and magazine explosions push their hits). Under fire_repeats =
    every_hit_past_threshold a hit on a row already at or past a fire threshold starts a fire again
    ('Ein Feuer kann in der selben Zeile wiederholt ausbrechen', l.53)."""
    fires_ok = source == FROM_WEAPON or info[FIRE_SPREADS] == 1
    again = fires_ok and old >= rows[r, REPEAT_AT]
    if _crossed(old, new, rows[r, HALF_AT]) and rows[r, HALF_FX] != 0:
        top = _apply(state, rows[r, HALF_FX], r, fires_ok, rows, hex_rows, hex_n, info, tally, stack, top, fire_rows)
    elif again and rows[r, HALF_FX] & FX_FIRE and old >= rows[r, HALF_AT]:
        top = _outbreak(state, rows[r, HEX], rows, hex_rows, hex_n, info, tally, stack, top, fire_rows)
    if _crossed(old, new, rows[r, FUNC_AT]) and rows[r, FUNC_FX] & ~FX_SINK != 0:
        top = _apply(state, rows[r, FUNC_FX] & ~FX_SINK, r, fires_ok, rows, hex_rows, hex_n, info, tally, stack,
                     top, fire_rows)
    elif again and rows[r, FUNC_FX] & FX_FIRE and old >= rows[r, FUNC_AT]:
        top = _outbreak(state, rows[r, HEX], rows, hex_rows, hex_n, info, tally, stack, top, fire_rows)
    if _crossed(old, new, rows[r, SPECIAL_AT]) and rows[r, SPECIAL_FX] != 0:
        top = _apply(state, rows[r, SPECIAL_FX], r, fires_ok, rows, hex_rows, hex_n, info, tally, stack, top,
                     fire_rows)
    elif again and rows[r, SPECIAL_FX] & FX_FIRE and old >= rows[r, SPECIAL_AT]:
        top = _outbreak(state, rows[r, HEX], rows, hex_rows, hex_n, info, tally, stack, top, fire_rows)
    if rows[r, FUNC_FX] & FX_SINK and _crossed(old, new, rows[r, SINK_AT]):
        tally[T_SUNK] = 1                      # "Wird eine Rumpfzeile zerstört, sinkt das Schiff"
    return top


@hot_jit
def hit_row(state, r, amount, source, rows, hex_rows, hex_n, info, dmg, tally, stack, fire_rows):
    """Deal ``amount`` damage to row ``r`` and every effect that follows from it. Returns the
    total damage dealt (the hit and the fire / magazine damage it caused)."""
    if amount <= 0:
        return 0
    old = dmg[r]
    new = old + amount
    if not (_crossed(old, new, rows[r, HALF_AT]) or _crossed(old, new, rows[r, FUNC_AT])
            or _crossed(old, new, rows[r, SPECIAL_AT]) or _crossed(old, new, rows[r, SINK_AT])
            or old >= rows[r, REPEAT_AT]):
        dmg[r] = new               # the common case: no threshold reached, no effect
        return amount
    stack[0, 0] = r
    stack[0, 1] = amount
    stack[0, 2] = source
    top = 1
    tally[T_CHAIN] = 0
    dealt = 0
    while top > 0:
        top -= 1
        row = stack[top, 0]
        a = stack[top, 1]
        if a <= 0:
            continue
        old = dmg[row]
        dmg[row] = old + a
        dealt += a
        top = _effects(state, row, old, old + a, stack[top, 2], rows, hex_rows, hex_n, info, tally, stack, top,
                       fire_rows)
    return dealt


@unmanaged_jit
def speed_lost(rows, info, dmg, tally):
    """Speed lost to leaks, funnels, tanks and engine rows (l.39-43), at most the maximum speed.
    Engine rows: 'verringert sich die Geschwindigkeit anteilsmässig' (rule engine_speed)."""
    max_speed = info[MAX_SPEED]
    n_eng = 0
    n_dead = 0
    hp_eng = 0
    hp_lost = 0
    for r in range(rows.shape[0]):
        if rows[r, FUNC_FX] & FX_ENGINE:
            n_eng += 1
            hp_eng += rows[r, HP]
            hp_lost += min(dmg[r], rows[r, HP])
            if dmg[r] >= rows[r, FUNC_AT]:
                n_dead += 1
    engine = 0
    if n_eng > 0:
        if info[ENGINE_MODE] == 0:
            engine = max_speed - (max_speed * (n_eng - n_dead)) // n_eng
        else:
            engine = max_speed - (max_speed * (hp_eng - hp_lost)) // hp_eng
    return min(max_speed, tally[T_SPEED_LOST] + engine)


@unmanaged_jit
def damage_taken(rows, dmg):
    """The damage the rows took: each row's damage capped at its [HP] (what a repair could remove;
    damage beyond a destroyed row's [HP] changes nothing)."""
    s = 0
    for r in range(rows.shape[0]):
        s += min(dmg[r], rows[r, HP])
    return s


@unmanaged_jit
def any_row_destroyed(rows, dmg):
    """'Wenn eine Schiffszeile vollständig zerstört ist': some row has taken its [HP]."""
    for r in range(rows.shape[0]):
        if dmg[r] >= rows[r, HP]:
            return 1
    return 0


@hot_jit
def reset(dmg, tally):
    for r in range(dmg.shape[0]):
        dmg[r] = 0
    for k in range(tally.shape[0]):
        tally[k] = 0


@unmanaged_jit
def fire_outbreak(state, h, rows, hex_rows, hex_n, info, dmg, tally, stack, fire_rows):
    """A fire breaks out in hex ``h`` (the fire question's first fire); returns the damage dealt."""
    r = random_row(state, hex_rows, hex_n, h)
    _track_fire(r, tally, fire_rows)
    tally[T_FIRES] += 1
    return hit_row(state, r, info[FIRE_IMMEDIATE], FROM_FIRE, rows, hex_rows, hex_n, info, dmg, tally, stack,
                   fire_rows)
