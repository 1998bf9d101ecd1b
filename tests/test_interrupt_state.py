"""A stop request belongs to the :func:`analyzer.core.interrupt.handling` block it arrived in: once
the block is left, a later run in the same process (an API call, the next test in a worker) is
not stopped by it. It was: a search interrupted in one test left the flag set, and a sensitivity
run in the next test of that worker stopped at once with "interrupted by SIGINT"."""
import os
import signal

import pytest

from analyzer.core import interrupt


def test_a_signal_inside_the_block_stops_it_and_is_forgotten_after_it():
    with interrupt.handling():
        os.kill(os.getpid(), signal.SIGINT)        # the handler only records it
        with pytest.raises(interrupt.RunInterrupted) as stop:
            interrupt.check()
        assert stop.value.exit_code == 130
    interrupt.check()                              # outside the block: nothing pending
    with interrupt.handling():
        interrupt.check()                          # a new block starts clean
