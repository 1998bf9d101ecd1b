"""The jit variant of the battle helpers: the project policy (kernels/_jit.py) without NRT.

Exception to the policy, measured: with NRT on, every call of a compiled function
increments and decrements the reference count of each array it receives (an atomic
operation, ~6 ns each here). The engagement helpers pass 9-16 small arrays and run tens of
times per round, so reference counting took most of the time (a call with 14 arrays cost
~180 ns against ~6 ns without NRT; the engagement kernel ran at ~16 us per trial). None of
these helpers allocates (all scratch arrays come from :func:`kernels.uboat_leader.engagement.scratch`
in the chunk loop, which keeps NRT), so they are compiled with ``_nrt=False``: same
``cache``, ``error_model``, ``nogil`` and ``fastmath`` as every other kernel.
"""
from __future__ import annotations

from kernels._jit import jit


def battle_jit(fn=None, **overrides):
    """:func:`kernels._jit.jit` with ``_nrt=False`` for helpers that never allocate."""
    return jit(fn, _nrt=False, **overrides)
