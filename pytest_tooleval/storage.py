"""What this process's own storage (the response cache, the run board) failed to keep.

The rule: our storage failing (a full disk, a read-only or locked file, damage) never fails, hangs or drops a
sample. The answer is delivered from memory, the store that failed is given up for the rest of the run, and
the run's summary says what failed, where, and how much was not kept. Each process keeps its own log; xdist
workers send theirs to the controller with their results (distributed.py).
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import asdict, dataclass
from typing import Any

STORAGE_ERRORS = (OSError, sqlite3.Error)

CACHE = "response cache"
BOARD = "run board"


@dataclass
class StorageFault:
    store: str  # CACHE or BOARD
    folder: str
    error: str  # the first failure
    lost: int = 0  # answers not cached / results not shared
    skipped_locked: int = 0  # cache writes skipped because another process held the write lock


class StorageLog:
    """The faults of one process (thread-safe), one per store: the first error, and counts."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: dict[str, StorageFault] = {}

    def failed(self, store: str, folder: object, exc: BaseException | str) -> None:
        with self._lock:
            if store not in self._faults:
                self._faults[store] = StorageFault(store, str(folder), describe(exc))

    def lost(self, store: str, folder: object, exc: BaseException | str, count: int = 1, *,
             locked: bool = False) -> None:
        with self._lock:
            fault = self._faults.setdefault(store, StorageFault(store, str(folder), describe(exc)))
            if locked:
                fault.skipped_locked += count
            else:
                fault.lost += count

    def as_dicts(self) -> list[dict[str, Any]]:
        with self._lock:
            return [asdict(fault) for fault in self._faults.values()]

    def merge(self, faults: list[dict[str, Any]]) -> None:
        """Add another process's faults (its `as_dicts`)."""
        with self._lock:
            for fault in faults:
                mine = self._faults.setdefault(fault["store"], StorageFault(fault["store"], fault["folder"],
                                                                            fault["error"]))
                mine.lost += int(fault.get("lost", 0))
                mine.skipped_locked += int(fault.get("skipped_locked", 0))

    def lines(self) -> list[str]:
        """One summary line per store that failed."""
        lines = []
        for fault in self.as_dicts():
            if fault["store"] == CACHE:
                kept = (f"{fault['lost']} answers were not cached (writing it was turned off for the rest of the "
                        "run)" if fault["lost"] else "nothing was lost")
                if fault["skipped_locked"]:
                    kept += (f"; {fault['skipped_locked']} writes were skipped while another process held its "
                             "write lock")
                lines.append(f"tooleval: response cache in {fault['folder']}: {fault['error']}; {kept}; every "
                             "answer was scored, and a rerun asks again for what is missing")
            else:
                lines.append(f"tooleval: run board in {fault['folder']}: {fault['error']}; {fault['lost']} results "
                             "could not be shared between processes (the processes that needed them asked "
                             "again); every answer was scored")
        return lines


def describe(exc: BaseException | str) -> str:
    if isinstance(exc, str):
        return exc
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return f"{exc}" or type(exc).__name__
