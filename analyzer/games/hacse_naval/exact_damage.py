"""Exact damage distributions on a compiled sheet: the oracle of :mod:`kernels.hacse_naval.damage`.

A state is ``(row damages, tally, damage dealt)`` with the kernel's tally entries and each row's
damage capped at its [HP] (every threshold is at most HP, so beyond it nothing changes); :meth:`SheetExact.hit` gives
the exact distribution of states after one hit and everything it sets off (fires' immediate
damage, magazine explosions), by enumerating every random row and every W10. Distributions are
dicts ``state -> probability``; their size is capped (``MAX_STATES``) so an exact request that
would not finish is refused with a message, never left running.
"""
from __future__ import annotations

from functools import lru_cache

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
        drawn from ``rows`` ([(row, p)]); a sunk ship takes no further hit when ``skip_if_sunk``."""
        out = {}
        for st, p in dist.items():
            if skip_if_sunk and st[1][kd.T_SUNK]:
                out[st] = out.get(st, 0.0) + p
                continue
            for a, pa in amounts.items():
                if a <= 0:
                    out[st] = out.get(st, 0.0) + p * pa
                    continue
                for r, pr in rows:
                    for st2, q in self.hit(st, r, a, source):
                        out[st2] = out.get(st2, 0.0) + p * pa * pr * q
        if len(out) > MAX_STATES:
            raise TooLarge(f"exact mode would enumerate more than {MAX_STATES:,} damage states; run Monte Carlo")
        return out


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
