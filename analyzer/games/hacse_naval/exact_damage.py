"""Exact damage distributions on a compiled sheet: the oracle of :mod:`kernels.hacse_naval.damage`.

A state is ``(row damages, tally, damage dealt)`` with the kernel's tally entries and each row's
damage capped at its [HP] (every threshold is at most HP, so beyond it nothing changes); :meth:`SheetExact.hit` gives
the exact distribution of states after one hit and everything it sets off (fires' immediate
damage, magazine explosions), by enumerating every random row and every W10. Distributions are
dicts ``state -> probability``; their size is capped (``MAX_STATES``) so an exact request that
would not finish is refused with a message, never left running.

:func:`fold_hits` (the torpedo and mine exact modes) folds :meth:`SheetExact.hit` over a sequence
of hit chances with the damage dealt carried as a vector per state, equal states merged after
every hit, branches of probability 0 never enumerated and the point refused before enumerating
when :func:`frontier_bound` (from the sheet) or the states' growth says it is too large
(docs/models/hacse_naval.md §3). A rule change belongs in :meth:`SheetExact.hit`; the fold only
assumes that a hit's follow-ups stay in its hex (checked as it goes).
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from kernels._jit import jit
from kernels.hacse_naval import damage as kd

#: an exact mode refuses to enumerate more distinct states than this (use Monte Carlo instead)
MAX_STATES = 300_000


class TooLarge(ValueError):
    pass


class SheetExact:
    """Exact hits on one compiled sheet (``analyzer.games.hacse_naval.data.Sheet``)."""

    def __init__(self, sheet):
        self.rows = sheet.rows.tolist()
        self.info = sheet.info.tolist()
        self.hex_rows = [list(sheet.hex_rows[h, : sheet.hex_n[h]]) for h in range(sheet.hex_n.shape[0])]
        self.n_rows = len(self.rows)
        self.hit = lru_cache(maxsize=None)(self._hit)
        self._kinds: dict = {}              # (amounts, rows, source, skip_if_sunk) -> kind id
        self._kind_of: list = []
        self._trans: dict = {}              # (state, kind id) -> ((state after, p), ...)
        self.n_transitions = 0              # states whose outcomes were enumerated (a work counter)
        self.memo: dict = {}                # callers' per-state results (depth_charge.overrun_exact)
        self._sid: dict = {}                # state -> small integer id (state_id)
        self._states: list = []             # id -> state
        self._trans_arr: dict = {}          # (state, kind id) -> (state ids, p) arrays (transition_arrays)

    def initial(self):
        return (tuple([0] * self.n_rows), tuple([0] * kd.N_TALLY), 0)

    # -- one crossing's deterministic changes and its random follow-ups (same order as the kernel)
    def _effects(self, r, old, new, source, tally):
        """A crossing's deterministic changes (to ``tally``) and its random follow-ups, trigger by
        trigger as the kernel applies them."""
        row = self.rows[r]
        fires_ok = source == kd.FROM_WEAPON or self.info[kd.FIRE_SPREADS] == 1
        follow = []   # ("fire", hex) | ("magazine", hex, he)
        for at, fx in ((kd.HALF_AT, row[kd.HALF_FX]), (kd.FUNC_AT, row[kd.FUNC_FX] & ~kd.FX_SINK),
                       (kd.SPECIAL_AT, row[kd.SPECIAL_FX])):
            if fx and old < row[at] <= new:
                self._apply(fx, row, fires_ok, tally, follow)
        if row[kd.FUNC_FX] & kd.FX_SINK and old < row[kd.SINK_AT] <= new:
            tally[kd.T_SUNK] = 1
        return follow

    def _apply(self, fx, row, fires_ok, tally, follow):
        info = self.info
        if fx & kd.FX_LEAK:
            tally[kd.T_LEAKS] += 1
            if info[kd.IS_SUB]:
                if info[kd.SUB_LEAK_ONCE] == 0 or tally[kd.T_DEPTH_LOSS] == 0:
                    tally[kd.T_DEPTH_LOSS] += info[kd.SUB_LEAK_DEPTH]
            else:
                tally[kd.T_SPEED_LOST] += info[kd.SPEED_LEAK]
        if fx & kd.FX_SPEED:
            tally[kd.T_SPEED_LOST] += info[kd.SPEED_LOSS]
        if fx & kd.FX_FIRE and fires_ok:
            follow.append(("fire", row[kd.HEX]))
        if fx & kd.FX_EXPLOSION:
            follow.append(("magazine", row[kd.HEX], row[kd.HE]))

    def _follow_dist(self, item):
        """[(probability, row, amount, source, is_fire)] of one follow-up."""
        rows = self.hex_rows[item[1]]
        if item[0] == "fire":
            return [(1.0 / len(rows), r, self.info[kd.FIRE_IMMEDIATE], kd.FROM_FIRE, True) for r in rows]
        boom = {0: 1.0}
        for _ in range(self.info[kd.MAGAZINE_DICE]):
            nxt = {}
            for s, p in boom.items():
                for face in range(1, 11):
                    nxt[s + face] = nxt.get(s + face, 0.0) + p / 10
            boom = nxt
        return [(pb / len(rows), r, s * item[2], kd.FROM_WEAPON, False) for s, pb in boom.items() for r in rows]

    def _hit(self, state, r, amount, source):
        """Exact distribution of states after ``amount`` damage to row ``r``: a tuple of
        (state, probability) pairs."""
        if amount <= 0:
            return ((state, 1.0),)
        dmg, tally = list(state[0]), list(state[1])
        old = dmg[r]
        dmg[r] = min(old + amount, self.rows[r][kd.HP])
        follow = self._effects(r, old, old + amount, source, tally)
        out = {}
        self._chain((tuple(dmg), tuple(tally), state[2] + amount), follow, 1.0, out)
        return tuple(out.items())

    def _chain(self, state, follow, p, out):
        if not follow:
            out[state] = out.get(state, 0.0) + p
            return
        item, rest = follow[0], follow[1:]
        for q, r, a, source, is_fire in self._follow_dist(item):
            st = state
            if is_fire:
                tally = list(st[1])
                tally[kd.T_FIRES] += 1
                tally[kd.T_ACTIVE_FIRES] += 1
                st = (st[0], tuple(tally), st[2])
            for st2, q2 in self.hit(st, r, a, source):
                self._chain(st2, rest, p * q * q2, out)

    def hit_dist(self, dist, amounts, rows, source=kd.FROM_WEAPON, skip_if_sunk=True):
        """``dist`` after one hit whose amount has distribution ``amounts`` ({amount: p}) on a row
        drawn from ``rows`` ([(row, p)]); a sunk ship takes no further hit when ``skip_if_sunk``.

        Each state's outcomes over every amount and row are summed once (:meth:`transitions`) and
        reused by every distribution holding that state (patterns, prior entries, the depth damage);
        the outcomes of all the states are merged in one pass over arrays (:meth:`mix`)."""
        kind = self.kind(amounts, rows, source, skip_if_sunk)
        return self.mix(dist, [self.transition_arrays(st, kind) for st in dist])

    def mix(self, dist, outcomes):
        """``sum over states st of dist[st] x outcomes(st)`` as a distribution: ``outcomes`` holds, in
        the order of ``dist``, each state's (state ids, probabilities) arrays (:meth:`transition_arrays`);
        one ``bincount`` over the concatenated arrays sums equal states (the same order every time:
        deterministic). Refuses more than ``MAX_STATES`` states."""
        if not outcomes:
            return {}
        ids = np.concatenate([o[0] for o in outcomes])
        lengths = np.fromiter((len(o[0]) for o in outcomes), np.int64, len(outcomes))
        weights = np.concatenate([o[1] for o in outcomes]) * np.repeat(
            np.fromiter(dist.values(), np.float64, len(dist)), lengths)
        uniq, where = np.unique(ids, return_inverse=True)
        if len(uniq) > MAX_STATES:
            raise TooLarge(f"exact mode would enumerate more than {MAX_STATES:,} damage states; run Monte Carlo")
        sums = np.bincount(where, weights=weights, minlength=len(uniq))
        states = self._states
        return {states[i]: w for i, w in zip(uniq.tolist(), sums.tolist())}

    def state_id(self, st) -> int:
        """A small integer naming the state ``st`` (one per distinct state, in order of first sight)."""
        i = self._sid.get(st)
        if i is None:
            i = self._sid[st] = len(self._states)
            self._states.append(st)
        return i

    def transition_arrays(self, st, kind: int):
        """:meth:`transitions` of ``st`` as (state ids, probabilities) arrays, cached per (state, kind)."""
        key = (st, kind)
        t = self._trans_arr.get(key)
        if t is None:
            pairs = self.transitions(st, kind)
            t = self._trans_arr[key] = (np.array([self.state_id(s2) for s2, _ in pairs], np.int64),
                                        np.array([w for _, w in pairs], np.float64))
        return t

    def kind(self, amounts, rows, source=kd.FROM_WEAPON, skip_if_sunk=True) -> int:
        """A small id of one kind of hit (its amounts, rows, source and whether a sunk ship is skipped)."""
        key = (tuple(amounts.items()), tuple((int(r), pr) for r, pr in rows), source, skip_if_sunk)
        i = self._kinds.get(key)
        if i is None:
            i = self._kinds[key] = len(self._kinds)
            self._kind_of.append(key)
        return i

    def transitions(self, st, kind: int):
        """((state after, p), ...) of one hit of ``kind`` on state ``st``: every amount of every row
        and what each sets off (:meth:`hit`), equal outcomes summed; cached per (state, kind)."""
        key = (st, kind)
        t = self._trans.get(key)
        if t is None:
            amounts, rows, source, skip_if_sunk = self._kind_of[kind]
            if skip_if_sunk and st[1][kd.T_SUNK]:
                t = ((st, 1.0),)
            else:
                acc: dict = {}
                for a, pa in amounts:
                    if a <= 0:
                        acc[st] = acc.get(st, 0.0) + pa
                        continue
                    for r, pr in rows:
                        for st2, q in self.hit(st, r, a, source):
                            acc[st2] = acc.get(st2, 0.0) + pa * pr * q
                t = tuple((s2, w) for s2, w in acc.items() if w > 0)
            self._trans[key] = t
            self.n_transitions += 1
        return t


def w10_minus(steps_damage: int) -> dict[int, float]:
    """{max(0, W10 - steps_damage): p}."""
    out: dict[int, float] = {}
    for face in range(1, 11):
        a = max(0, face - steps_damage)
        out[a] = out.get(a, 0.0) + 0.1
    return out


def nw10(n: int, times: int = 1) -> dict[int, float]:
    """{times x (sum of n W10): p}."""
    dist = {0: 1.0}
    for _ in range(n):
        nxt: dict[int, float] = {}
        for s, p in dist.items():
            for face in range(1, 11):
                nxt[s + face] = nxt.get(s + face, 0.0) + p / 10
        dist = nxt
    return {s * times: p for s, p in dist.items()}


# --------------------------------------------------------------------------- folding hits (torpedoes, mines)
#: the fold refuses a point whose bound on the damage states kept between hits (:func:`frontier_bound`)
#: is above this, before enumerating anything; the states it really keeps are checked against MAX_STATES
MAX_STATE_BOUND = 50_000_000


class Folded:
    """Exact marginals of a hit sequence (:func:`fold_hits`): ``p_sunk`` and ``{value: p}`` dicts
    ``damage`` (rows' damage capped at [HP]), ``speed_lost``, ``fires``, ``damage_dealt`` (not
    capped); ``n_states``: the damage states enumerated (distinct after each hit, summed over the
    hits); ``hit_branches``: the (hex damages, row, amount) cases asked of the per-hit rules."""

    def __init__(self, p_sunk, damage, speed_lost, fires, damage_dealt, n_states, hit_branches):
        self.p_sunk, self.damage, self.speed_lost, self.fires = p_sunk, damage, speed_lost, fires
        self.damage_dealt, self.n_states, self.hit_branches = damage_dealt, n_states, hit_branches


def frontier_bound(sheet, n_events: int, amounts: dict[int, float], rows, stop_when_sunk: bool = True) -> int:
    """An upper bound, from the sheet alone, on the damage states :func:`fold_hits` keeps between
    hits (after ``n_events - 1`` of them; the last hit's states are summed as they are made).

    Follow-up hits (fires, magazine explosions) stay in the hex of the row that set them off, so a
    state is a tuple of per-hex states: at most ``sum over ways to share k hits among the hexes of
    prod over hexes min(P_h, B_h ** k_h)`` with ``P_h``, ``B_h`` from :func:`hex_bounds`."""
    k = max(0, n_events - 1)
    if k == 0 or not amounts or not rows:
        return 1
    p_h, b_h = hex_bounds(sheet, amounts, rows, stop_when_sunk)
    # ways[j] = sum over shares of j hits among the hexes seen so far of the product of their bounds
    ways = [1] + [0] * k
    for h in range(len(p_h)):
        reach = [min(p_h[h], b_h[h] ** j) if b_h[h] > 1 or j == 0 else 1 for j in range(k + 1)]
        ways = [sum(ways[i] * reach[j - i] for i in range(j + 1)) for j in range(k + 1)]
    return min(sum(ways), math.prod(p_h))


def hex_bounds(sheet, amounts: dict[int, float], rows, stop_when_sunk: bool = True) -> tuple[list[int], list[int]]:
    """Per hex ``(P_h, B_h)``: ``P_h`` the product over the hex's rows of the damage values a row can
    hold (below its sinking threshold while the ship floats) times the fires the hex can start + 1,
    ``B_h`` the outcomes of one hit on the hex (damage values of the struck row x the follow-ups'
    rows and dice)."""
    rows_arr = sheet.rows
    n_hex = int(sheet.hex_n.shape[0])
    struck = {int(r) for r, p in rows if p > 0}
    faces = 10 * int(sheet.info[kd.MAGAZINE_DICE])
    p_h, b_h = [], []
    for h in range(n_hex):
        in_hex = [int(r) for r in sheet.hex_rows[h, : sheet.hex_n[h]]]
        prod, fires, follow, hit_values = 1, 0, 1, 0
        follow_amounts = set()                         # what fires and explosions in this hex deal
        for r in in_hex:
            row = rows_arr[r]
            for fx in (row[kd.HALF_FX], row[kd.FUNC_FX], row[kd.SPECIAL_FX]):
                if fx & kd.FX_FIRE:
                    fires += 1
                    follow *= len(in_hex) + 1
                    follow_amounts.add(int(sheet.info[kd.FIRE_IMMEDIATE]))
                if fx & kd.FX_EXPLOSION:
                    follow *= len(in_hex) * faces + 1
                    follow_amounts.update(int(row[kd.HE]) * s for s in range(1, faces + 1))
            if r in struck:
                hit_values += min(int(row[kd.HP]) + 1, len(amounts) + 1)
        for r in in_hex:
            row = rows_arr[r]
            top = int(row[kd.SINK_AT]) - 1 if stop_when_sunk and row[kd.FUNC_FX] & kd.FX_SINK else int(row[kd.HP])
            prod *= top + 1 if r in struck else len(_sums_capped(follow_amounts, min(top, int(row[kd.HP]))))
        p_h.append(prod * (fires + 1))
        b_h.append(max(1, hit_values * follow))
    return p_h, b_h


def _sums_capped(steps, cap: int) -> set[int]:
    """The values 0..cap a row can hold when only ``steps`` amounts reach it (capped at ``cap``)."""
    seen, todo = {0}, [0]
    while todo:
        v = todo.pop()
        for a in steps:
            w = min(v + a, cap)
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return seen


def fold_hits(sheet, n_events: int, p_event: float, amounts: dict[int, float], rows, stop_when_sunk: bool = True,
              max_states: int = MAX_STATES, ex: SheetExact | None = None) -> Folded:
    """Exact marginals after ``n_events`` chances (each with probability ``p_event``) of a hit of
    ``amounts`` ({damage: p}) on a row drawn from ``rows`` ([(row, p)]); a sunk ship takes no further
    hit when ``stop_when_sunk``.

    The states ``(row damages capped at [HP], tally)`` are folded one hit at a time into a dict, so
    equal states merge at once; each carries the distribution of the damage dealt so far (a vector:
    the damage dealt does not change what later hits do). Branches of probability 0 are never
    enumerated (P(hit) = 0: no hit branch at all). Amounts that take the struck row to its [HP] or
    beyond lead to the same state (every threshold is at most [HP]), so they are enumerated once and
    their damage dealt convolved in. Sunk states (``stop_when_sunk``) and the states after the last
    hit go straight into the marginals. The rules live in :meth:`SheetExact.hit` (one hit and what it
    sets off); this function only folds it. Raises :class:`TooLarge` before enumerating when
    :func:`frontier_bound` is above MAX_STATE_BOUND, or when the states kept exceed ``max_states``."""
    amounts = {a: q for a, q in amounts.items() if q > 0 and a > 0}
    rows = [(int(r), pr) for r, pr in rows if pr > 0]
    hit_p = p_event if amounts and rows else 0.0
    if hit_p > 0:
        bound = frontier_bound(sheet, n_events, amounts, rows, stop_when_sunk)
        if bound > MAX_STATE_BOUND:
            raise TooLarge(f"exact mode would keep up to {bound:,} damage states between hits (bound from the sheet: "
                           f"{sheet.n_rows} rows, {n_events} hits; limit {MAX_STATE_BOUND:,}); run Monte Carlo")
    ex = ex or SheetExact(sheet)
    try:
        return _Fold(ex, sheet, amounts, rows, hit_p, stop_when_sunk, local=True).run(n_events, max_states)
    except _NotLocal:                                   # a rule reached another hex: fold whole states
        return _Fold(ex, sheet, amounts, rows, hit_p, stop_when_sunk, local=False).run(n_events, max_states)


class _NotLocal(Exception):
    pass


class _Fold:
    """One fold of :func:`fold_hits`.

    A hit and what it sets off stay in the struck row's hex (spec §3: a fire or magazine explosion
    strikes a row of its hex), so a state is kept as ids of its parts (each hex's row damages, the
    tally) and :meth:`SheetExact.hit` is asked once per (hex damages, tally, row, amount) with the
    other hexes zeroed; its outcomes (the hex's new damages, the tally's increments, sinking set)
    apply at once to every kept state sharing those parts. Should a rule reach outside the hex,
    :class:`_NotLocal` is raised and the fold is redone with the whole sheet as one part."""

    def __init__(self, ex, sheet, amounts, rows, hit_p, stop_when_sunk, local):
        self.ex, self.sheet, self.hit_p, self.stop = ex, sheet, hit_p, stop_when_sunk
        self.amounts = sorted(amounts.items())
        hp = sheet.rows[:, kd.HP]
        thresholds = sheet.rows[:, [kd.HALF_AT, kd.FUNC_AT, kd.SPECIAL_AT, kd.SINK_AT]]
        # amounts taking the struck row to [HP] or beyond give the same states when no threshold is above [HP]
        self.merge_over_hp = bool((thresholds <= hp[:, None]).all())
        self.hp = [int(v) for v in hp]
        n = sheet.n_rows
        spans = []                          # rows lo:hi of each part (a sheet lists its rows hex by hex)
        for h in range(sheet.hex_n.shape[0]) if local else ():
            in_hex = [int(j) for j in sheet.hex_rows[h, : sheet.hex_n[h]]]
            if in_hex != list(range(in_hex[0], in_hex[0] + len(in_hex))):
                raise _NotLocal
            spans.append((in_hex[0], in_hex[0] + len(in_hex)))
        self.spans = sorted(spans) or [(0, n)]
        self.part_of = {r: c for c, (lo, hi) in enumerate(self.spans) for r in range(lo, hi)}
        self.rows_by_part = {}
        for r, pr in rows:
            self.rows_by_part.setdefault(self.part_of[r], []).append((r, pr))
        self.zero = (0,) * n
        self.tally_part = len(self.spans)
        # a U-boat losing depth once (sub_leak_depth = once) reads the tally; other rules only add to it
        self.tally_read = bool(sheet.info[kd.IS_SUB]) and bool(sheet.info[kd.SUB_LEAK_ONCE])
        self.parts = [{} for _ in range(self.tally_part + 1)]      # part -> {value tuple: id}
        self.values = [[] for _ in range(self.tally_part + 1)]     # part -> [value tuple]
        self.cache: dict = {}
        self.marg: dict = {}                # (sunk, damage, speed lost, fires) -> p
        self.dealt = np.zeros(1)
        self.hit_branches = 0
        self.n_terminal = 0                 # distinct states summed into the marginals, over the steps
        self.tail_mass = {}
        self.radix = [1 << 20] * (self.tally_part + 1)    # part ids per code digit (checked in pid)
        if len(self.radix) * 20 > 62:
            raise _NotLocal                                 # too many hexes for one code: one part

    def pid(self, c, value):
        ids = self.parts[c]
        i = ids.get(value)
        if i is None:
            i = ids[value] = len(self.values[c])
            if i >= 1 << 20:
                raise TooLarge(f"exact mode would enumerate more than {1 << 20:,} damage states of one hex; run "
                               f"Monte Carlo")
            self.values[c].append(value)
        return i

    def run(self, n_events, max_states):
        ids = np.asarray([[self.pid(c, self.zero[lo:hi]) for c, (lo, hi) in enumerate(self.spans)]
                          + [self.pid(self.tally_part, (0,) * kd.N_TALLY)]], np.int64)
        vecs = np.ones((1, 1))
        n_states = 1
        sizes = [1]
        for step in range(n_events):
            ids, vecs = self.step(ids, vecs, last=step == n_events - 1)
            n_states += len(ids)
            sizes.append(len(ids))
            if not len(ids):
                break
            # the states kept grow by about the same factor a hit: refuse before the next hit exceeds the limit
            guess = len(ids) * max(1.0, len(ids) / max(1, sizes[-2])) if step < n_events - 2 else len(ids)
            if guess > max_states:
                raise TooLarge(f"exact mode would keep about {int(guess):,} damage states after {step + 2} of "
                               f"{n_events} hits (states kept so far: {', '.join(f'{n:,}' for n in sizes[1:])}; "
                               f"limit {max_states:,}); run Monte Carlo")
        if len(ids):                        # still afloat after the last event (or kept when sunk)
            self._add_terminal(ids, vecs.sum(axis=1))
            self._add_dealt(vecs.sum(axis=0))
        return self.result(n_states + self.n_terminal)

    def outcomes(self, c, sub, tally, r, a):
        """[(new hex damages, new tally, damage dealt, p)] of ``a`` damage to row ``r`` of part ``c``."""
        lo, hi = self.spans[c]
        t0 = tally if self.tally_read else (0,) * kd.N_TALLY
        ck = (r, a, sub, t0)
        outs = self.cache.get(ck)
        if outs is None:
            self.hit_branches += 1
            base = self.zero[:lo] + sub + self.zero[hi:]
            outs = []
            for (d2, t2, dealt), q in self.ex.hit((base, t0, 0), r, a, kd.FROM_WEAPON):
                if any(d2[:lo]) or any(d2[hi:]):
                    raise _NotLocal
                outs.append((d2[lo:hi], tuple(x - y for x, y in zip(t2, t0)), dealt, q))
            self.cache[ck] = outs
        res = []
        for sub2, dt, dealt, q in outs:
            t2 = [x + y for x, y in zip(tally, dt)]
            t2[kd.T_SUNK] = min(1, t2[kd.T_SUNK])
            res.append((sub2, tuple(t2), dealt, q))
        return res

    def step(self, ids, vecs, last):
        """Every kept state missed or hit: the states kept for the next event and their vectors of damage dealt."""
        tp = self.tally_part
        blocks = []                         # (member states, part, new part id, new tally id, shift, weight, a0)
        miss = 1.0 - self.hit_p
        everyone = np.arange(len(ids))
        if miss > 0:
            blocks.append((everyone, -1, 0, -1, 0, miss, 0))
        for c, struck in self.rows_by_part.items() if self.hit_p > 0 else ():
            groups, inverse = np.unique(ids[:, c] * self.radix[c] + ids[:, tp], return_inverse=True)
            order = np.argsort(inverse.ravel(), kind="stable")
            bounds = np.searchsorted(inverse.ravel()[order], np.arange(len(groups) + 1))
            lo = self.spans[c][0]
            for g, code in enumerate(groups.tolist()):
                sub_id, tally_id = divmod(code, self.radix[c])
                members = order[bounds[g]: bounds[g + 1]]
                sub, tally = self.values[c][sub_id], self.values[tp][tally_id]
                for r, pr in struck:
                    room = self.hp[r] - sub[r - lo] if self.merge_over_hp else None
                    for a, pa in self.amounts:
                        if room is not None and a >= room:
                            break
                        for sub2, t2, dealt, q in self.outcomes(c, sub, tally, r, a):
                            blocks.append((members, c, self.pid(c, sub2), self.pid(tp, t2), dealt,
                                           self.hit_p * pr * pa * q, 0))
                    if room is not None and self.amounts[-1][0] >= room:
                        a0 = max(room, 1)
                        for sub2, t2, dealt, q in self.outcomes(c, sub, tally, r, a0):
                            blocks.append((members, c, self.pid(c, sub2), self.pid(tp, t2), dealt - a0,
                                           self.hit_p * pr * q, a0))
        return self._apply(ids, vecs, blocks, last)

    def _apply(self, ids, vecs, blocks, last):
        """The blocks' entries summed into the new states (kept) and the marginals (terminal)."""
        tp = self.tally_part
        sizes = np.asarray([len(b[0]) for b in blocks], np.int64)
        src = np.concatenate([b[0] for b in blocks])
        new = ids[src]
        rep = np.repeat(np.arange(len(blocks)), sizes)
        part = np.asarray([b[1] for b in blocks], np.int64)[rep]
        for c in range(tp):
            sel = part == c
            new[sel, c] = np.asarray([b[2] for b in blocks], np.int64)[rep[sel]]
        hit = part >= 0
        new[hit, tp] = np.asarray([b[3] for b in blocks], np.int64)[rep[hit]]
        shift = np.asarray([b[4] for b in blocks], np.int64)[rep]
        weight = np.asarray([b[5] for b in blocks], float)[rep]
        a0 = np.asarray([b[6] for b in blocks], np.int64)[rep]
        sunk = np.asarray([t[kd.T_SUNK] for t in self.values[tp]], bool)[new[:, tp]]
        terminal = np.ones(len(new), bool) if last else (sunk if self.stop else np.zeros(len(new), bool))
        # the states: terminal ones first summed by state for the marginals
        mass = vecs.sum(axis=1)[src] * weight * np.asarray([self._tail_mass(x) for x in range(self.amounts[-1][0] + 1)]
                                                              )[a0]
        top = self.amounts[-1][0] + 1
        if terminal.any():
            t_codes, t_inv = np.unique(self._codes(new[terminal]), return_inverse=True)
            self.n_terminal += len(t_codes)
            self._add_terminal(self._decode(t_codes), np.bincount(t_inv.ravel(), weights=mass[terminal],
                                                                   minlength=len(t_codes)))
            # their damage dealt: each source's entries as a kernel k[source, offset] (its shifts, each
            # convolved with the amounts >= a0), then sum over offsets of (k[:, offset] @ vecs) shifted
            t_src, t_shift, t_w, t_a0 = src[terminal], shift[terminal], weight[terminal], a0[terminal]
            k = np.zeros((len(vecs), int(shift.max()) + top))
            plain = t_a0 == 0
            np.add.at(k, (t_src[plain], t_shift[plain]), t_w[plain])
            for a, pa in self.amounts:
                sel = ~plain & (t_a0 <= a)
                np.add.at(k, (t_src[sel], t_shift[sel] + a), t_w[sel] * pa)
            used = np.nonzero(k.any(axis=0))[0]
            dealt = np.zeros(vecs.shape[1] + k.shape[1])
            for o, v in zip(used.tolist(), (k[:, used].T @ vecs)):
                dealt[o: o + len(v)] += v
            self._add_dealt(dealt)
        keep = ~terminal
        src, shift, weight, a0 = src[keep], shift[keep], weight[keep], a0[keep]
        if not len(src):
            return np.zeros((0, tp + 1), np.int64), np.zeros((0, 1))
        k_codes, k_inv = np.unique(self._codes(new[keep]), return_inverse=True)
        kept = self._decode(k_codes)
        dst = k_inv.ravel()
        # (destination, a0) pairs: entries summed with their shift, then convolved with the amounts >= a0
        pairs, pair = np.unique(dst * top + a0, return_inverse=True)
        pair = pair.ravel()
        width = vecs.shape[1] + int(shift.max())
        z = np.zeros((len(pairs), width))
        order = np.lexsort((pair, shift))
        cuts = np.r_[0, np.nonzero(np.diff(shift[order]))[0] + 1, len(order)]
        for lo, hi in zip(cuts[:-1], cuts[1:]):
            sel = order[lo:hi]
            sh = int(shift[sel[0]])
            d = pair[sel]
            starts = np.r_[0, np.nonzero(np.diff(d))[0] + 1]
            z[d[starts], sh: sh + vecs.shape[1]] += np.add.reduceat(vecs[src[sel]] * weight[sel, None], starts, axis=0)
        pair_dst, pair_a0 = pairs // top, pairs % top
        out = np.zeros((len(kept), width + top))
        plain = pair_a0 == 0
        out[pair_dst[plain], :width] += z[plain]           # one plain pair per destination
        for x in np.unique(pair_a0[~plain]).tolist():
            sel = np.nonzero(pair_a0 == x)[0]
            tail = np.zeros((len(sel), out.shape[1]))      # z convolved with the amounts >= x
            for a, pa in self.amounts:
                if a >= x:
                    tail[:, a: a + width] += pa * z[sel]
            out[pair_dst[sel]] += tail                      # one pair per (dst, a0)
        used = np.nonzero(out.any(axis=0))[0]
        return kept, out[:, : used[-1] + 1] if used.size else out[:, :1]

    def _codes(self, states):
        """One integer per state (rows of part ids)."""
        code = np.zeros(len(states), np.int64)
        for c in range(states.shape[1] - 1, -1, -1):
            code = code * self.radix[c] + states[:, c]
        return code

    def _decode(self, codes):
        out = np.zeros((len(codes), len(self.radix)), np.int64)
        for c, n in enumerate(self.radix):
            codes, out[:, c] = np.divmod(codes, n)
        return out

    def _tail_mass(self, a0):
        if a0 not in self.tail_mass:
            self.tail_mass[a0] = 1.0 if a0 == 0 else sum(pa for a, pa in self.amounts if a >= a0)
        return self.tail_mass[a0]

    def _add_dealt(self, vec):
        if vec.shape[0] > self.dealt.shape[0]:
            self.dealt = np.pad(self.dealt, (0, vec.shape[0] - self.dealt.shape[0]))
        self.dealt[: vec.shape[0]] += vec

    def _add_terminal(self, states, probs):
        """States (rows of part ids) with their probabilities into the (sunk, damage, speed lost, fires) marginals."""
        tp = self.tally_part
        dmgs = np.asarray([sum((self.values[c][i] for c, i in enumerate(st[:tp])), ()) for st in states.tolist()],
                          np.int64).reshape(len(states), -1)
        tallies = np.asarray([self.values[tp][i] for i in states[:, tp].tolist()], np.int64).reshape(len(states), -1)
        speeds = _speeds(self.sheet.rows, self.sheet.info, dmgs, tallies)
        sig = np.stack([tallies[:, kd.T_SUNK], dmgs.sum(axis=1), speeds, tallies[:, kd.T_FIRES]], axis=1)
        uniq, inv = np.unique(sig, axis=0, return_inverse=True)
        tot = np.bincount(inv.ravel(), weights=probs, minlength=len(uniq))
        for s, p in zip(map(tuple, uniq.tolist()), tot.tolist()):
            self.marg[s] = self.marg.get(s, 0.0) + p

    def result(self, n_states) -> Folded:
        sunk, damage, speed, fires = 0.0, {}, {}, {}
        for (s, dmg, sp, f), p in self.marg.items():
            sunk += p * s
            damage[dmg] = damage.get(dmg, 0.0) + p
            speed[sp] = speed.get(sp, 0.0) + p
            fires[f] = fires.get(f, 0.0) + p
        dealt = {v: float(p) for v, p in enumerate(self.dealt) if p > 0}
        return Folded(sunk, damage, speed, fires, dealt, n_states, self.hit_branches)


@jit
def _speeds(rows, info, dmgs, tallies):
    """kd.speed_lost of every state (one row of ``dmgs`` / ``tallies`` each)."""
    out = np.zeros(dmgs.shape[0], np.int64)
    for i in range(dmgs.shape[0]):
        out[i] = kd.speed_lost(rows, info, dmgs[i], tallies[i])
    return out
