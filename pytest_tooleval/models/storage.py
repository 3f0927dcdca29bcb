"""What this process's own storage (the response cache, the run board) failed to keep.

The rule: our storage failing (a full disk, a read-only or locked file, damage) never fails, hangs or drops a
sample. The answer is delivered from memory, the store that failed is given up for the rest of the run, and
the run's summary says what failed, where, and how much was not kept. Each process keeps its own log; xdist
workers send theirs to the controller with their results (distributed.py).

A cache folder that cannot be written at all (a read-only mount, a HOME where ~/.cache cannot be made, a full
disk) is the same rule at the start of the run: the response cache is left off (one line in the summary), the
run board and the rpm/tpm limits file go to a private temporary folder (answers/board.py, `run_folder`), and
the run goes on. Only what a run was asked to write and cannot stops it, with one line and exit status 4: data
to download into the folder (download.py), the --tooleval-batch ledger (`check_cache_dir`), a report.
"""

from __future__ import annotations

import sqlite3
import tempfile
import threading
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from ..json_value import JSONObject
from ..text import counted

if TYPE_CHECKING:
    from ..settings.options import Settings

STORAGE_ERRORS = (OSError, sqlite3.Error)

CACHE = "response cache"
BOARD = "run board"
PROBE_BYTES = 256 * 1024  # room for the board and a first batch of answers


@dataclass
class StorageFault:
    store: str  # CACHE or BOARD
    folder: str
    error: str  # the first failure
    lost: int = 0  # answers not cached / results not shared
    skipped_locked: int = 0  # cache writes skipped because another process held the write lock
    off: bool = False  # the store could not be written from the start: the run went on without it


class _FaultKeys(TypedDict):
    store: str
    folder: str
    error: str


class FaultRecord(_FaultKeys, total=False):
    """A StorageFault as `as_dicts` writes it (another process's, for `merge`)."""

    lost: int
    skipped_locked: int
    off: bool


class StorageLog:
    """The faults of one process (thread-safe), one per store: the first error, and counts."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: dict[str, StorageFault] = {}

    def failed(self, store: str, folder: object, exc: BaseException | str, *, off: bool = False) -> None:
        with self._lock:
            if store not in self._faults:
                self._faults[store] = StorageFault(store, str(folder), describe(exc), off=off)

    def lost(self, store: str, folder: object, exc: BaseException | str, count: int = 1, *,
             locked: bool = False) -> None:
        with self._lock:
            fault = self._faults.setdefault(store, StorageFault(store, str(folder), describe(exc)))
            if locked:
                fault.skipped_locked += count
            else:
                fault.lost += count

    def as_dicts(self) -> list[JSONObject]:
        return [asdict(fault) for fault in self._snapshot()]

    def _snapshot(self) -> list[StorageFault]:
        with self._lock:
            return [replace(fault) for fault in self._faults.values()]

    def merge(self, faults: list[FaultRecord]) -> None:
        """Add another process's faults (its `as_dicts`)."""
        with self._lock:
            for fault in faults:
                mine = self._faults.setdefault(fault["store"], StorageFault(fault["store"], fault["folder"],
                                                                            fault["error"]))
                mine.lost += int(fault.get("lost", 0))
                mine.skipped_locked += int(fault.get("skipped_locked", 0))
                mine.off = mine.off or bool(fault.get("off"))

    def lines(self) -> list[str]:
        """One summary line per store that failed."""
        lines = []
        for fault in self._snapshot():
            if fault.store == CACHE and fault.off:
                lines.append(f"tooleval: response cache in {fault.folder}: {fault.error}; this run's answers "
                             "were not cached (each was asked and scored): point --tooleval-cache-dir (or "
                             "TOOLEVAL_CACHE_DIR) at a writable folder to keep them")
            elif fault.store == CACHE:
                kept = (f"{counted(fault.lost, 'answer')} {'was' if fault.lost == 1 else 'were'} not cached "
                        "(writing it was turned off for the rest of the run)" if fault.lost else "nothing was lost")
                if fault.skipped_locked:
                    kept += (f"; {counted(fault.skipped_locked, 'write')} "
                             f"{'was' if fault.skipped_locked == 1 else 'were'} skipped while another process held "
                             "its write lock")
                lines.append(f"tooleval: response cache in {fault.folder}: {fault.error}; {kept}; every "
                             "answer was scored, and a rerun asks again for what is missing")
            else:
                lines.append(f"tooleval: run board in {fault.folder}: {fault.error}; "
                             f"{counted(fault.lost, 'result')} "
                             "could not be shared between processes (the processes that needed them asked "
                             "again); every answer was scored")
        return lines


def describe(exc: BaseException | str) -> str:
    if isinstance(exc, str):
        return exc
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return f"{exc}" or type(exc).__name__


def unwritable(folder: Path, room: int = PROBE_BYTES) -> str | None:
    """Why `folder` cannot be made or written (None when it can): checked by writing `room` bytes to a file
    that is then removed, as a full disk still gives out an empty file (and root passes permission bits)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".tooleval-probe-") as probe:
            probe.write(b"\0" * room)
            probe.flush()
    except OSError as exc:
        return describe(exc)
    return None


def check_cache_dir(settings: Settings) -> None:
    """What a run must write to its cache folder, checked before anything is asked: one line and exit status 4
    when it cannot. Only --tooleval-batch must: its ledger of submitted batches (so a killed run resumes them
    instead of paying twice) and its answers, which the run reads back from the response cache. Everything
    else goes on without the folder (see the module's docstring)."""
    if not settings.batch:
        return
    folder = settings.cache_path
    reason = unwritable(folder)
    if reason is not None:
        from ..errors import ToolevalUsageError

        raise ToolevalUsageError(f"--tooleval-batch keeps its ledger and its answers in the cache folder {folder}, "
                                 f"which cannot be written ({reason}): point --tooleval-cache-dir (or "
                                 "TOOLEVAL_CACHE_DIR) at a writable folder")
