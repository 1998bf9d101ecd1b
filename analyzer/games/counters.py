"""Counter columns shared by several games' kernels (the kernel-result contract, see
:class:`analyzer.core.questions.Prepared`)."""
from __future__ import annotations

from analyzer.core.questions import Counter
from kernels.dice import EXPLOSION_DEPTH_CAP

#: Counter columns 0 and 1 of every kernel that rolls pools through
#: :func:`kernels.dice.pool_total` (its ``counters[0]`` and ``counters[1]``).
EXPLOSION_CAPS = Counter("explosion_caps", f"explosion chains cut at kernels.dice.EXPLOSION_DEPTH_CAP = "
                                           f"{EXPLOSION_DEPTH_CAP} generations (their dice are dropped, "
                                           f"biasing results low)")
DICE_ROLLED = Counter("dice_rolled")
POOL_COUNTERS = (EXPLOSION_CAPS, DICE_ROLLED)
