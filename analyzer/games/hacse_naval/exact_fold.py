"""Torpedo and mine hits folded hex by hex: the exact mode of ``torpedo_salvo`` and ``mine_field``.

A hit and what it sets off stay in the struck row's hex (spec §3), and while the ship floats no
rule of :meth:`SheetExact.hit` reads another hex's rows or the tally (except a U-boat's one-time
depth loss, which falls back to :func:`exact_damage.fold_hits`). So, given how many hits each hex
takes, the hexes' damage states are independent: each hex is folded on its own (its states after
j hits to it, afloat, and the states in which its j-th hit sank the ship), and the hexes are
combined by the chance of each share of the events (multinomial) with the crossing stopped at the
hit that sinks the ship. What the metrics read is additive over hexes (damage capped at [HP],
damage dealt, fires) or is the tally's speed lost and the engine rows' damage
(:func:`kernels.hacse_naval.damage.speed_lost`), so each hex keeps only those marginals and the
combination convolves them. The rules stay in :meth:`SheetExact.hit`; docs/models/hacse_naval.md §3.
"""
from __future__ import annotations

import math

import numpy as np

from analyzer.games.hacse_naval import exact_damage as ed
from analyzer.games.hacse_naval.exact_damage import MAX_STATES, Folded, SheetExact, TooLarge, _Fold, fold_hits, hex_bounds
from kernels.hacse_naval import damage as kd


def fold_by_hex(sheet, n_events: int, p_event: float, amounts: dict[int, float], rows, stop_when_sunk: bool = True,
                max_states: int = MAX_STATES, ex: SheetExact | None = None) -> Folded:
    """Exact marginals after ``n_events`` chances (each with probability ``p_event``) of a hit of
    ``amounts`` ({damage: p}) on a row drawn from ``rows`` ([(row, p)]), the ship taking no hit
    once sunk: the same answer as :func:`exact_damage.fold_hits`, hex by hex.

    Raises :class:`TooLarge` before enumerating when a hex's bound on its states (from the sheet)
    is above MAX_STATE_BOUND, or when a hex keeps more than ``max_states`` states. Sheets or rules
    the hex split does not cover (ships carried on after sinking, a rule reading the tally, a
    follow-up reaching another hex) are folded by :func:`exact_damage.fold_hits`."""
    amounts = {a: q for a, q in amounts.items() if q > 0 and a > 0}
    rows = [(int(r), pr) for r, pr in rows if pr > 0]
    ex = ex or SheetExact(sheet)
    whole = bool(sheet.info[kd.IS_SUB]) and bool(sheet.info[kd.SUB_LEAK_ONCE])    # depth loss reads the tally
    if not stop_when_sunk or whole:
        return fold_hits(sheet, n_events, p_event, amounts, rows, stop_when_sunk, max_states, ex)
    hit_p = p_event if amounts and rows else 0.0
    by_hex = _rows_by_hex(sheet, rows) if hit_p > 0 else {}
    if by_hex:
        p_h, b_h = hex_bounds(sheet, amounts, rows, True)
        for h in by_hex:
            bound = _hex_state_bound(p_h[h], b_h[h], n_events)
            if bound > ed.MAX_STATE_BOUND:
                raise TooLarge(f"exact mode would keep up to {bound:,} damage states of hex {h} (bound from the "
                               f"sheet: {sheet.n_rows} rows, {n_events} hits; limit {ed.MAX_STATE_BOUND:,}); run "
                               f"Monte Carlo")
    try:
        chains = {h: hex_chain(ex, sheet, h, struck, amounts, n_events, max_states) for h, struck in by_hex.items()}
    except _LeavesHex:
        return fold_hits(sheet, n_events, p_event, amounts, rows, stop_when_sunk, max_states, ex)
    share = {h: hit_p * sum(pr for _, pr in struck) for h, struck in by_hex.items()}
    total, p_sunk = _combine([(chains[h], share[h]) for h in by_hex], 1.0 - hit_p, n_events, _engine_rows(sheet))
    n_states = 1 + sum(sum(c.states[1: n_events + 1]) for c in chains.values())
    hit_branches = sum(sum(c.branches[: n_events + 1]) for c in chains.values())
    return total.folded(sheet, p_sunk, n_states, hit_branches)


def _rows_by_hex(sheet, rows) -> dict[int, list]:
    out: dict[int, list] = {}
    for r, pr in rows:
        out.setdefault(int(sheet.rows[r, kd.HEX]), []).append((r, pr))
    return out


def _hex_state_bound(p_h: int, b_h: int, n_events: int) -> int:
    """Most states one hex keeps after any number of its hits: its sheet bound, or the outcomes of the hits."""
    reach = 1
    for _ in range(n_events):
        reach *= b_h
        if reach >= p_h:
            return p_h
    return reach


def _engine_rows(sheet) -> list[int]:
    """The rows whose damage :func:`kd.speed_lost` reads (engine rows)."""
    return [r for r in range(sheet.n_rows) if sheet.rows[r, kd.FUNC_FX] & kd.FX_ENGINE]


class _LeavesHex(Exception):
    pass


class _Marginals:
    """A sub-distribution's marginals: its mass, probability vectors indexed by value of the damage
    (capped at [HP]), the damage dealt and the fires started, and ``speed`` {(tally speed lost, engine
    rows' damage): p} (what :func:`kd.speed_lost` reads)."""

    def __init__(self, mass, damage, dealt, fires, speed):
        self.mass, self.damage, self.dealt, self.fires, self.speed = mass, damage, dealt, fires, speed

    @classmethod
    def undamaged(cls, n_engine: int):
        one = np.ones(1)
        return cls(1.0, one, one, one, {(0, (0,) * n_engine): 1.0})

    def times(self, other: _Marginals, c: float) -> _Marginals:
        """c x (self and other independent)."""
        speed: dict = {}
        for (s1, e1), p1 in self.speed.items():
            for (s2, e2), p2 in other.speed.items():
                k = (s1 + s2, tuple(x + y for x, y in zip(e1, e2)))
                speed[k] = speed.get(k, 0.0) + c * p1 * p2
        return _Marginals(c * self.mass * other.mass, c * np.convolve(self.damage, other.damage),
                          c * np.convolve(self.dealt, other.dealt), c * np.convolve(self.fires, other.fires), speed)

    def add(self, other: _Marginals, c: float = 1.0) -> None:
        self.mass += c * other.mass
        self.damage = _plus(self.damage, c * other.damage)
        self.dealt = _plus(self.dealt, c * other.dealt)
        self.fires = _plus(self.fires, c * other.fires)
        for k, p in other.speed.items():
            self.speed[k] = self.speed.get(k, 0.0) + c * p

    def folded(self, sheet, p_sunk: float, n_states: int, hit_branches: int) -> Folded:
        """These marginals (of every outcome) as exact_damage.Folded, the speed lost from kd.speed_lost."""
        engine = _engine_rows(sheet)
        speed: dict[int, float] = {}
        dmg = np.zeros(sheet.n_rows, np.int64)
        tally = np.zeros(kd.N_TALLY, np.int64)
        for (s, e), p in self.speed.items():
            dmg[engine] = e
            tally[kd.T_SPEED_LOST] = s
            v = int(kd.speed_lost(sheet.rows, sheet.info, dmg, tally))
            speed[v] = speed.get(v, 0.0) + p
        return Folded(p_sunk, _as_dict(self.damage), {v: p for v, p in speed.items() if p > 0},
                      _as_dict(self.fires), _as_dict(self.dealt), n_states, hit_branches)


def _plus(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if len(a) < len(b):
        a, b = b, a
    out = a.copy()
    out[: len(b)] += b
    return out


def _as_dict(vec: np.ndarray) -> dict[int, float]:
    return {v: float(p) for v, p in enumerate(vec) if p > 0}


class _Chain:
    """One hex's hits, one after another (:class:`_HexFold`): ``afloat[j]`` the marginals of its
    states after j hits to it with the ship afloat, ``sinking[j]`` those of the states in which its
    j-th hit sank the ship (None: none); ``states[j]`` / ``branches[j]``: the damage states made and
    the hit cases asked of :meth:`SheetExact.hit` by its j-th hit."""

    def __init__(self, n_events, afloat, sinking, states, branches):
        self.n_events, self.afloat, self.sinking, self.states, self.branches = (n_events, afloat, sinking, states,
                                                                                branches)


#: chains already folded, by (sheet, hex, rows struck, amounts, limit): a sweep over the hit chance or the
#: mine density folds each hex once (a chain of n hits holds every shorter one)
_CHAINS: dict = {}
_KEEP = 16


def hex_chain(ex, sheet, h, struck, amounts, n_events, max_states) -> _Chain:
    """The chain of hex ``h`` (:class:`_Chain`) for at least ``n_events`` hits, folded or from the cache."""
    key = (sheet.rows.tobytes(), sheet.rows.shape, sheet.info.tobytes(), sheet.hex_rows.tobytes(),
           sheet.hex_n.tobytes(), h, tuple(struck), tuple(sorted(amounts.items())), max_states)
    chain = _CHAINS.get(key)
    if chain is None or chain.n_events < n_events:
        chain = _HexFold(ex, sheet, h, struck, amounts).chain(n_events, max_states)
        _CHAINS.pop(key, None)
        while len(_CHAINS) >= _KEEP:
            _CHAINS.pop(next(iter(_CHAINS)))
        _CHAINS[key] = chain
    return chain


class _HexFold(_Fold):
    """The fold of one hex's chain: :class:`exact_damage._Fold` (whole-sheet states, of which only
    this hex's rows and the tally move) with every event a hit on this hex, its sunk states kept per
    hit instead of summed."""

    def __init__(self, ex, sheet, h, struck, amounts):
        share = sum(pr for _, pr in struck)
        super().__init__(ex, sheet, amounts, [(r, pr / share) for r, pr in struck], 1.0, True, local=False)
        self.h = h
        self.others = [r for r in range(sheet.n_rows) if int(sheet.rows[r, kd.HEX]) != h]
        self.engine = _engine_rows(sheet)
        self.checked = 0                    # damage states checked to stay in the hex

    def chain(self, n_events, max_states) -> _Chain:
        ids = np.asarray([[self.pid(0, self.zero), self.pid(1, (0,) * kd.N_TALLY)]], np.int64)
        vecs = np.ones((1, 1))
        out = _Chain(n_events, [_Marginals.undamaged(len(self.engine))], [None], [1], [0])
        for _ in range(n_events):
            self.sunk_states, self.sunk_dealt = [], np.zeros(1)
            made, branches = self.n_terminal, self.hit_branches
            ids, vecs = self.step(ids, vecs, last=False)
            self._stays_in_hex()
            out.sinking.append(self._marginals(self.sunk_states, self.sunk_dealt))
            out.afloat.append(self._marginals([(ids, vecs.sum(axis=1))], vecs.sum(axis=0)))
            out.states.append(len(ids) + self.n_terminal - made)
            out.branches.append(self.hit_branches - branches)
            if len(ids) > max_states:
                raise TooLarge(f"exact mode would keep more than {max_states:,} damage states of hex {self.h}; "
                               f"run Monte Carlo")
            if not len(ids):
                break
        return out

    def _stays_in_hex(self):
        values = self.values[0]
        for v in values[self.checked:]:
            if any(v[r] for r in self.others):
                raise _LeavesHex
        self.checked = len(values)

    # the fold's terminal (sunk) states are kept for this step instead of summed into one set of marginals
    def _add_terminal(self, states, probs):
        self.sunk_states.append((states, probs))

    def _add_dealt(self, vec):
        self.sunk_dealt = _plus(self.sunk_dealt, vec)

    def _marginals(self, parts, dealt) -> _Marginals | None:
        """The marginals of states (rows of part ids) with their probabilities."""
        parts = [(s, p) for s, p in parts if len(s)]
        if not parts:
            return None
        states = np.concatenate([s for s, _ in parts])
        probs = np.concatenate([p for _, p in parts])
        dmgs = np.asarray([self.values[0][i] for i in states[:, 0].tolist()], np.int64).reshape(len(states), -1)
        tallies = np.asarray([self.values[1][i] for i in states[:, 1].tolist()], np.int64).reshape(len(states), -1)
        sig = np.concatenate([tallies[:, [kd.T_SPEED_LOST]], dmgs[:, self.engine]], axis=1)
        uniq, inv = np.unique(sig, axis=0, return_inverse=True)
        tot = np.bincount(inv.ravel(), weights=probs, minlength=len(uniq))
        speed = {(k[0], tuple(k[1:])): p for k, p in zip(uniq.tolist(), tot.tolist())}
        return _Marginals(float(probs.sum()), np.bincount(dmgs.sum(axis=1), weights=probs), dealt,
                          np.bincount(tallies[:, kd.T_FIRES], weights=probs), speed)


def _combine(chains, miss: float, n: int, engine: list[int]) -> tuple[_Marginals, float]:
    """The hexes' chains combined over every share of the ``n`` events: (chain, P(an event hits its
    hex)) pairs and P(an event misses). The ship afloat after all n events with j_h hits to hex h:
    n! / (miss count! prod j_h!) miss^(n - J) prod q_h^j_h; sunk by hex h's k-th hit at event m: the
    first m - 1 events share J - 1 hits and m - J misses, then event m hits h. Returns the marginals
    of every outcome and P(sunk)."""
    # table[(hits so far, sunk)]: sum over the shares of those hits among the hexes folded so far of
    # prod q_h^j_h / j_h! (for the sinking hex: / (k - 1)!) times the product of their marginals
    table = {(0, False): _Marginals.undamaged(len(engine))}
    for chain, q in chains:
        nxt: dict = {}
        for (hits, sunk), m in table.items():
            for j in range(0, n - hits + 1):
                w = q ** j / math.factorial(j)
                a = chain.afloat[j] if j < len(chain.afloat) else None
                if a is not None and a.mass > 0 and w > 0:
                    _accumulate(nxt, (hits + j, sunk), m.times(a, w))
                s = chain.sinking[j] if 0 < j < len(chain.sinking) else None
                if not sunk and s is not None and s.mass > 0 and w > 0:
                    _accumulate(nxt, (hits + j, True), m.times(s, w * j))
        table = nxt
    total = _Marginals(0.0, np.zeros(1), np.zeros(1), np.zeros(1), {})
    p_sunk = 0.0
    for (hits, sunk), m in table.items():
        if sunk:                                    # sum over the misses before the sinking event
            c = sum(math.factorial(hits - 1 + x) / math.factorial(x) * miss ** x for x in range(n - hits + 1))
            p_sunk += c * m.mass
        else:
            c = math.factorial(n) / math.factorial(n - hits) * miss ** (n - hits)
        total.add(m, c)
    return total, p_sunk


def _accumulate(table: dict, key, m: _Marginals) -> None:
    if key in table:
        table[key].add(m)
    else:
        table[key] = m
