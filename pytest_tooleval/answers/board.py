"""The run board: an xdist run's shared claims and answers, one sqlite file opened by every process of the run.

A sample is claimed atomically before it is computed. A claim is a lease, renewed while its owner lives, so a
killed worker's samples are taken over; its answer (or infrastructure error) is stored on the board, where
the other processes read it. Only the xdist hub and its workers use it (answers/hub.py, answers/hub_client.py).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
import uuid
from pathlib import Path
from typing import Any

LEASE_S = 30.0  # a claim's life without renewal: how long a killed worker's samples stay blocked
STALE_BOARD_S = 24 * 3600


class RunBoard:
    """The run's shared claims and answers: one sqlite file, opened by every process of the run."""

    def __init__(self, path: Path, owner: str | None = None, *, lease_s: float = LEASE_S) -> None:
        self.path = path
        self.owner = owner or f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.lease_s = lease_s
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
        self._conn.execute("PRAGMA busy_timeout = 60000")
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

    def try_claim(self, key: str) -> bool:
        """Atomically take `key` if nobody holds it, or if its holder's lease ran out."""
        now = time.time()
        with self._lock:
            taken = self._conn.execute(
                "INSERT OR IGNORE INTO claims (key, owner, expires) VALUES (?, ?, ?)",
                (key, self.owner, now + self.lease_s),
            ).rowcount
            if taken:
                return True
            return bool(self._conn.execute(
                "UPDATE claims SET owner = ?, expires = ? WHERE key = ? AND done = 0 AND expires < ?",
                (self.owner, now + self.lease_s, key, now),
            ).rowcount)

    def take_over_if_dead(self, key: str) -> bool:
        """Take `key` when its holder is a process of this machine that no longer exists (a killed worker)."""
        with self._lock:
            row = self._conn.execute("SELECT owner FROM claims WHERE key = ? AND done = 0", (key,)).fetchone()
        if row is None or row[0] == self.owner or _alive(row[0]):
            return False
        with self._lock:
            return bool(self._conn.execute(
                "UPDATE claims SET owner = ?, expires = ? WHERE key = ? AND done = 0 AND owner = ?",
                (self.owner, time.time() + self.lease_s, key, row[0]),
            ).rowcount)

    def result(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._conn.execute("SELECT result FROM claims WHERE key = ? AND done = 1", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def store(self, key: str, result: dict[str, Any]) -> None:
        text = json.dumps(result, ensure_ascii=False, default=str)
        with self._lock:
            self._conn.execute("UPDATE claims SET done = 1, result = ? WHERE key = ?", (text, key))

    def renew(self) -> None:
        with self._lock:
            self._conn.execute("UPDATE claims SET expires = ? WHERE owner = ? AND done = 0",
                               (time.time() + self.lease_s, self.owner))

    def release(self) -> None:
        """Give back unfinished claims (a clean shutdown), so nobody waits for their leases to run out."""
        with self._lock:
            self._conn.execute("DELETE FROM claims WHERE owner = ? AND done = 0", (self.owner,))

    def claimed(self, key: str) -> bool:
        with self._lock:
            return self._conn.execute("SELECT 1 FROM claims WHERE key = ?", (key,)).fetchone() is not None

    def want(self, key: str) -> None:
        with self._lock:
            self._conn.execute("INSERT OR IGNORE INTO wanted (key, at) VALUES (?, ?)", (key, time.time()))

    def next_wanted(self) -> str | None:
        """The longest-waiting wanted sample nobody has claimed yet."""
        with self._lock:
            row = self._conn.execute(
                "SELECT key FROM wanted w WHERE NOT EXISTS (SELECT 1 FROM claims c WHERE c.key = w.key) "
                "ORDER BY at LIMIT 1").fetchone()
        return None if row is None else row[0]

    def unwant(self, key: str) -> None:
        with self._lock:
            self._conn.execute("DELETE FROM wanted WHERE key = ?", (key,))

    def set_state(self, name: str, value: str) -> None:
        with self._lock:
            self._conn.execute("INSERT OR REPLACE INTO state (name, value) VALUES (?, ?)", (name, value))

    def state(self, name: str) -> str | None:
        with self._lock:
            row = self._conn.execute("SELECT value FROM state WHERE name = ?", (name,)).fetchone()
        return None if row is None else row[0]

    def close(self) -> None:
        with self._lock:
            self._conn.close()


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


def remove_stale_boards(folder: Path) -> None:
    """Boards of runs that were killed before they could clean up."""
    if not folder.is_dir():
        return
    cutoff = time.time() - STALE_BOARD_S
    for path in folder.glob("*.sqlite*"):
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
        except OSError:
            pass
