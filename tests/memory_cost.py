"""What a block of a test built, measured as memory rather than time: no load on the machine changes it."""

from __future__ import annotations

import faulthandler
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager

HANG_S = 60.0  # a refusal takes milliseconds; a value computed instead can take hours, in one C call


@contextmanager
def cost() -> Iterator[list[int]]:
    """The most memory the block held at once, in bytes (tracemalloc), appended on exit: a count of what it
    built, which no load on the machine changes. A block still running after HANG_S ends the process with a
    traceback (the hang guard: nothing else stops a huge power mid-computation)."""
    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    faulthandler.dump_traceback_later(HANG_S, exit=True)
    peak: list[int] = []
    try:
        yield peak
    finally:
        faulthandler.cancel_dump_traceback_later()
        peak.append(tracemalloc.get_traced_memory()[1] - before)
        if not tracing:
            tracemalloc.stop()
