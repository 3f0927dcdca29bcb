"""A deadline on one sample's scoring: scoring is pure Python in the test's own thread, and an answer made to be
slow (megabytes of nesting, a pattern's worst case) must end as a verdict, never as a run that hangs
(docs/reliability.md, "One odd answer is one verdict").

The deadline is a one-shot SIGALRM timer, so it needs the main thread of a POSIX process, where pytest and its
xdist workers run tests; anywhere else scoring runs unbounded (`bounded` says whether a deadline can hold). The
timer raises `ScoringTimeLimit` at most once per scoring, between two bytecodes or inside the `re` engine (which
checks for signals); it is a BaseException, so a scorer's `except Exception` does not turn it into some other
verdict. An outer SIGALRM timer (pytest-timeout's signal method) that is due first is left alone; a later one is
set again, less the time scoring took.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import TypeVar

__all__ = ["ScoringTimeLimit", "bounded", "within"]

_T = TypeVar("_T")


class ScoringTimeLimit(BaseException):
    """Scoring took longer than its deadline (raised into the scoring code by the timer)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"scoring took longer than {seconds:g} s")
        self.seconds = seconds


def bounded() -> bool:
    """Whether a deadline can hold here: a POSIX timer, in the main thread."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


class _Alarm:
    """One deadline's timer: `start` arms it, `stop` (idempotent) puts back whatever SIGALRM did before."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.pending = False  # the timer may still raise; cleared before anything is put back
        self.started = 0.0
        self.previous_handler: Callable[[int, FrameType | None], object] | int | signal.Handlers | None = None
        self.previous_timer = (0.0, 0.0)
        self.armed = False

    def start(self) -> None:
        self.previous_timer = signal.getitimer(signal.ITIMER_REAL)
        if 0.0 < self.previous_timer[0] <= self.seconds:  # an outer deadline comes first: it stands alone
            return
        self.previous_handler = signal.getsignal(signal.SIGALRM)
        self.started = time.monotonic()
        self.pending = self.armed = True
        signal.signal(signal.SIGALRM, self._expire)
        signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def _expire(self, signum: int, frame: FrameType | None) -> None:
        if self.pending:
            self.pending = False  # once: whatever the raise lands in, it never comes again
            raise ScoringTimeLimit(self.seconds)

    def stop(self) -> None:
        self.pending = False
        if not self.armed:
            return
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, self.previous_handler)
        delay, interval = self.previous_timer
        if delay > 0.0:  # the outer timer, less the time taken here (never 0: that would cancel it)
            signal.setitimer(signal.ITIMER_REAL, max(delay - (time.monotonic() - self.started), 1e-3), interval)
        self.armed = False  # last: a stop cut short is done whole again


def within(seconds: float, work: Callable[[], _T]) -> _T:
    """`work()`, stopped by `ScoringTimeLimit` once it has taken `seconds` (0: no limit; unbounded where
    `bounded()` is false)."""
    if seconds <= 0.0 or not bounded():
        return work()
    alarm = _Alarm(seconds)
    try:
        try:
            alarm.start()
            return work()
        finally:
            alarm.stop()
    except ScoringTimeLimit:
        alarm.stop()  # the limit may have landed inside the first stop, before it had put anything back
        raise
