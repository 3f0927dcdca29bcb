"""The run board: an xdist run's shared claims and answers, one sqlite file opened by every process of the run.

A sample is claimed atomically before it is computed. A claim is a lease, renewed while its owner lives, so a
killed worker's samples are taken over; its answer (or infrastructure error) is stored on the board, where
the other processes read it. Only the xdist hub and its workers use it (answers/hub.py, answers/hub_client.py).

The board failing (a full disk, say) never costs a sample (storage.py): a claim that cannot be written is
taken as this process's own, a result that cannot be read is not there, and a result that cannot be stored
stays with the process that computed it. That process then stops renewing its claims, so a process waiting
for one of them sees the lease go stale and asks for the sample itself (HubClient.wait).

The board lives in `<cache>/runs`, or, when the cache folder cannot be written (a read-only mount or HOME, a
full disk), in a private folder of the system's temporary folder, for the run only (`run_folder`).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import stat
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, TypeVar

from ..models.storage import BOARD, StorageLog, unwritable
from ..text import plain_data

if TYPE_CHECKING:
    from .codec import Encoded

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: dead runs' boards go by age only
    fcntl = None  # type: ignore[assignment]  # None stands for "no fcntl module here" (checked before each use)

T = TypeVar("T")

LEASE_S = 30.0  # a claim's life without renewal: how long a killed worker's samples stay blocked
STALE_BOARD_S = 24 * 3600
# a claim not renewed for this long (renewals come every pool.RENEW_S) has a holder that stopped: a dead
# process, or one whose board writes fail; the sample is answered by whoever needs it
STALE_CLAIM_S = 12.0
BUSY_S = 5.0  # the board's writes are short: a longer wait means something is wrong with the file


class RunBoard:
    """The run's shared claims and answers: one sqlite file, opened by every process of the run."""

    def __init__(self, path: Path, owner: str | None = None, *, lease_s: float = LEASE_S,
                 log: StorageLog | None = None) -> None:
        self.path = path
        self.owner = owner or f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.lease_s = lease_s
        self.log = log if log is not None else StorageLog()
        self.broken = False  # a result could not be stored: claims are no longer renewed
        self.failing = False  # some call on the file failed: the board cannot be relied on for this run
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._alive = _hold_alive(path)  # before the file exists: a board nobody holds is a dead run's
        self._conn = sqlite3.connect(path, timeout=BUSY_S, isolation_level=None, check_same_thread=False)
        self._conn.execute(f"PRAGMA busy_timeout = {int(BUSY_S * 1000)}")
        for attempt in range(100):
            try:
                self._set_up()
                break
            except sqlite3.OperationalError as exc:
                # processes opening a new board at once: the switch to WAL is refused, not waited for
                if "locked" not in str(exc) or attempt == 99:
                    raise
                time.sleep(0.05)

    def _set_up(self) -> None:
        self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute("PRAGMA synchronous = OFF")  # the board lives for one run; a crash voids it anyway
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS claims (key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires REAL NOT NULL, "
            "done INTEGER NOT NULL DEFAULT 0, result TEXT)"
        )
        # xdist: samples a worker's test waits for (the hub answers them first), and whether the hub runs
        self._conn.execute("CREATE TABLE IF NOT EXISTS wanted (key TEXT PRIMARY KEY, at REAL NOT NULL)")
        self._conn.execute("CREATE TABLE IF NOT EXISTS state (name TEXT PRIMARY KEY, value TEXT NOT NULL)")

    def _do(self, action: Callable[[sqlite3.Connection], T], instead: T) -> T:
        """`action` on the connection; `instead` when the file fails (logged, never raised). Whatever the store
        raises is a storage fault (an odd value sqlite refuses, a full disk): a raise here would keep a result
        from the processes waiting for it, and the run would hang."""
        try:
            with self._lock:
                return action(self._conn)
        except Exception as exc:  # every failure of the store, not only sqlite's own
            self.failing = True
            self.log.failed(BOARD, self.path.parent, exc)
            return instead

    def try_claim(self, key: str) -> bool:
        """Atomically take `key` if nobody holds it, or if its holder's lease ran out (a board that cannot be
        written: yes, this process answers it)."""
        now = time.time()

        def claim(conn: sqlite3.Connection) -> bool:
            taken = conn.execute("INSERT OR IGNORE INTO claims (key, owner, expires) VALUES (?, ?, ?)",
                                 (key, self.owner, now + self.lease_s)).rowcount
            if taken:
                return True
            return bool(conn.execute(
                "UPDATE claims SET owner = ?, expires = ? WHERE key = ? AND done = 0 AND expires < ?",
                (self.owner, now + self.lease_s, key, now),
            ).rowcount)

        return self._do(claim, True)

    def take_over_if_dead(self, key: str) -> bool:
        """Take `key` when its holder is a process of this machine that no longer exists (a killed worker), one
        that stopped renewing its claims (STALE_CLAIM_S), or when a process said it cannot store results."""
        row = self._do(lambda conn: conn.execute("SELECT owner, expires FROM claims WHERE key = ? AND done = 0",
                                                 (key,)).fetchone(), None)
        if row is None or row[0] == self.owner:
            return False
        if (_alive(row[0]) and row[1] - self.lease_s > time.time() - STALE_CLAIM_S
                and not self.others_broken()):
            return False
        return self._do(lambda conn: bool(conn.execute(
            "UPDATE claims SET owner = ?, expires = ? WHERE key = ? AND done = 0 AND owner = ?",
            (self.owner, time.time() + self.lease_s, key, row[0]),
        ).rowcount), True)  # the holder stopped: if the take-over cannot be written, answer it here all the same

    def result(self, key: str) -> Encoded | None:
        row = self._do(lambda conn: conn.execute("SELECT result FROM claims WHERE key = ? AND done = 1",
                                                 (key,)).fetchone(), None)
        if row is None:
            return None
        stored: Encoded = json.loads(row[0])  # `store` writes nothing but an Encoded, as a JSON object
        return stored

    def store(self, key: str, result: Encoded) -> None:
        safe = plain_data(result)
        try:
            if not isinstance(safe, dict):
                raise ValueError("the result is nested too deeply to store")
            text: str | None = json.dumps(safe, ensure_ascii=False, default=str)
        except (RecursionError, ValueError, TypeError) as exc:  # cannot be written as JSON: a storage fault
            self.failing = True
            self.log.failed(BOARD, self.path.parent, exc)
            text = None
        stored = text is not None and self._do(lambda conn: conn.execute(
            "UPDATE claims SET done = 1, result = ? WHERE key = ?", (text, key)) is not None, False)
        if not stored:  # the others will not see it: let this process's claims go stale, so they stop waiting
            if not self.broken:
                self.broken = True
                # and say so at once where a full disk still has room: an empty file needs no data block
                with contextlib.suppress(OSError):
                    self._broken_marker.touch()
            self.log.lost(BOARD, self.path.parent, "a result could not be stored")

    @property
    def _broken_marker(self) -> Path:
        return self.path.with_name(self.path.name + ".broken")

    def others_broken(self) -> bool:
        """Whether a process of the run said it cannot store results on this board (its marker file)."""
        return self._broken_marker.exists()

    def renew(self) -> None:
        if self.broken:
            return
        self._do(lambda conn: conn.execute("UPDATE claims SET expires = ? WHERE owner = ? AND done = 0",
                                           (time.time() + self.lease_s, self.owner)), None)

    def release(self) -> None:
        """Give back unfinished claims (a clean shutdown), so nobody waits for their leases to run out."""
        self._do(lambda conn: conn.execute("DELETE FROM claims WHERE owner = ? AND done = 0", (self.owner,)), None)

    def holder_renewed_within(self, key: str, seconds: float) -> bool | None:
        """Whether `key`'s claim was taken or renewed in the last `seconds`; None if nobody claimed it."""
        row = self._do(lambda conn: conn.execute("SELECT expires FROM claims WHERE key = ?", (key,)).fetchone(),
                       None)
        if row is None:
            return None
        return bool(row[0] - self.lease_s > time.time() - seconds)

    def want(self, key: str) -> None:
        self._do(lambda conn: conn.execute("INSERT OR IGNORE INTO wanted (key, at) VALUES (?, ?)",
                                           (key, time.time())), None)

    def next_wanted(self) -> str | None:
        """The longest-waiting wanted sample nobody has claimed yet."""
        row = self._do(lambda conn: conn.execute(
            "SELECT key FROM wanted w WHERE NOT EXISTS (SELECT 1 FROM claims c WHERE c.key = w.key) "
            "ORDER BY at LIMIT 1").fetchone(), None)
        return None if row is None else str(row[0])

    def unwant(self, key: str) -> None:
        self._do(lambda conn: conn.execute("DELETE FROM wanted WHERE key = ?", (key,)), None)

    def set_state(self, name: str, value: str) -> None:
        self._do(lambda conn: conn.execute("INSERT OR REPLACE INTO state (name, value) VALUES (?, ?)",
                                           (name, value)), None)

    def state(self, name: str) -> str | None:
        row = self._do(lambda conn: conn.execute("SELECT value FROM state WHERE name = ?", (name,)).fetchone(),
                       None)
        return None if row is None else str(row[0])

    def close(self) -> None:
        self._do(lambda conn: conn.close(), None)
        if self._alive is not None:
            with contextlib.suppress(OSError):
                self._alive.close()  # and with it the lock


def _alive(owner: str) -> bool:
    """Owners are "<pid>-<random>"; all processes of a run share this machine (xdist's local workers)."""
    try:
        pid = int(owner.split("-", 1)[0])
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (ValueError, PermissionError, OSError):
        return True  # not ours to judge: wait for the lease to run out
    try:  # a killed worker stays a zombie until xdist reaps it: dead all the same
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return True


def _alive_marker(board: Path) -> Path:
    return board.with_name(board.name + ".alive")


def _hold_alive(board: Path) -> IO[bytes] | None:
    """A shared lock on the board's `.alive` file, held by every process of the run while it has the board
    open; the system lets go of it when the process ends, however it ends."""
    if fcntl is None:  # pragma: no cover
        return None
    try:
        handle = open(_alive_marker(board), "a+b")  # noqa: SIM115 - held open for the run, closed in close()
        fcntl.flock(handle.fileno(), fcntl.LOCK_SH)
    except OSError:
        return None
    return handle


def _nobody_holds(marker: Path) -> bool:
    if fcntl is None:  # pragma: no cover
        return False
    try:
        with open(marker, "a+b") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
    except OSError:
        return False


def remove_stale_boards(folder: Path) -> None:
    """The files of runs that ended without cleaning up (killed, say): a board whose `.alive` lock no process
    holds goes at once; one without that file goes after STALE_BOARD_S."""
    if not folder.is_dir():
        return
    for marker in folder.glob("*.sqlite.alive"):
        run = marker.name[: -len(".sqlite.alive")]
        if _nobody_holds(marker):
            for path in folder.glob(f"{run}.*"):
                with contextlib.suppress(OSError):
                    path.unlink()
    cutoff = time.time() - STALE_BOARD_S
    for path in folder.glob("*.sqlite*"):
        try:
            if (path.stat().st_mtime < cutoff and not path.name.endswith(".alive")
                    and not _alive_marker(path).exists()):
                path.unlink()
        except OSError:
            pass


def run_folder(cache_dir: Path, run_id: str) -> Path:
    """The folder of run `run_id`'s board and rpm/tpm limits file: `<cache>/runs`, or `spare_folder()` when that
    cannot be written. Every process of a run finds the same one: the controller makes the board before any
    worker starts, and a worker takes the folder that holds it."""
    primary, spare = cache_dir / "runs", spare_folder()
    for folder in (primary, spare):
        if (folder / f"{run_id}.sqlite").exists():
            return folder
    if unwritable(primary) is None:
        return primary
    if _private(spare) and unwritable(spare) is None:
        remove_stale_boards(spare)  # left there by runs that were killed
        return spare
    return primary  # the board cannot be made anywhere: it says so where it is made


def spare_folder() -> Path:
    """The runs folder of this user in the system's temporary folder (TMPDIR), for cache folders that cannot
    be written."""
    user = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    return Path(tempfile.gettempdir()) / f"pytest-tooleval-runs-{user}"


def _private(folder: Path) -> bool:
    """Whether `folder` is (or could be made) a folder of this user that no other user can write or read: the
    temporary folder is shared, and another user's folder of that name is not ours to use."""
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        info = folder.lstat()
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode):
        return False
    if not hasattr(os, "getuid"):  # pragma: no cover - Windows: a user's temporary folder is their own
        return True
    return info.st_uid == os.getuid() and not info.st_mode & 0o077
