"""A guard against a hang (not a timing test): the work runs in a thread and fails the test after 30 s."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

_T = TypeVar("_T")


def within_30_seconds(work: Callable[[], _T]) -> _T:
    """`work()`, or a failure once it has run 30 s (the thread is left to finish on its own: a daemon)."""
    results: list[_T] = []
    thread = threading.Thread(target=lambda: results.append(work()), daemon=True)
    thread.start()
    thread.join(30)
    assert not thread.is_alive(), "did not finish in 30 s"
    assert results, "the work raised (see the thread's exception above)"
    return results[0]
