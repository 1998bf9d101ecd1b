"""``unmanaged_jit``: the project's :func:`kernels._jit.jit` with NRT reference counting off.

Exception to the jit policy (STYLE.md practice 4), measured with ``perf``: in the duel,
every call of a jitted helper increfs and decrefs each array argument with a locked
instruction, and those atomics were 70% of the kernel's time (the atomics are skipped for
arrays with no NRT owner, and a function compiled without NRT emits none). Functions
compiled this way must not allocate (no ``np.zeros``, ``.copy()``); their callers pass
every array in, allocated by an NRT-managed (parallel) driver that outlives the call.
"""
from __future__ import annotations

from kernels._jit import jit


def unmanaged_jit(fn):
    """Compile ``fn`` like :func:`kernels._jit.jit`, without NRT reference counting."""
    return jit(fn, _nrt=False)
