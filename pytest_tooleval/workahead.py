"""Work ahead: keep the endpoint busy while pytest runs one test at a time per process.

pytest runs tests one by one, so a process that only asked the model inside its current test would never
have more than one request open. Instead a pool of asyncio workers answers the run's samples ahead of the
tests: in the pytest process, or, with xdist, in the controller for all workers (the hub; the workers then
read answers through a HubClient). Processes share a sqlite board: a sample is claimed atomically before it
is computed (a claim is a lease, renewed while its owner lives, so a killed process's samples are taken
over), and its answer (or its infrastructure error) is stored on the board. A test then reads its sample's
answer, waits for the process that holds the claim, or claims and computes it at once (with the hub: marks
it wanted, and the hub takes it next). No sample is computed twice in a run.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import threading
import time
import uuid
from dataclasses import asdict
from pathlib import Path
from typing import Any, Awaitable, Callable

from .models.base import InfrastructureError
from .models.limits import URGENT
from .outcome import Answer, SampleError
from .suites.base import Skipped

LEASE_S = 30.0  # a claim's life without renewal: how long a killed worker's samples stay blocked
RENEW_S = 5.0
POLL_S = (0.005, 0.1)  # first and largest wait between looks at a sample another process is computing
SPARE_POLL_S = 0.05  # how soon a spare worker notices a request that began waiting out a retry delay
DRAIN_S = 30.0  # how long a finished process keeps answering samples it started, for the tests of others
STALE_BOARD_S = 24 * 3600
HUB_START_S = 10.0  # how long a worker waits for the hub to say it runs before answering samples itself
HUB_UNCLAIMED_S = 60.0  # a wanted sample the hub has not taken by then is answered by the worker itself


def sample_key(case: Any) -> str:
    return f"{case.suite}/{case.language}/{case.id}"


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


def encode_answer(answer: Answer | Skipped) -> dict[str, Any]:
    if isinstance(answer, Skipped):  # a suite decided while answering that the sample is not evaluated
        return {"skip": answer.reason}
    return {"answer": asdict(answer)}


def encode_error(exc: BaseException) -> dict[str, Any]:
    kind = type(exc).__name__ if isinstance(exc, (InfrastructureError, SampleError)) else "InternalError"
    return {"error": {"type": kind, "message": str(exc) if kind != "InternalError" else f"{type(exc).__name__}: {exc}"}}


def decode(result: dict[str, Any]) -> Answer | Skipped:
    if "skip" in result:
        return Skipped(result["skip"])
    if "error" in result:
        error = result["error"]
        if error["type"] == "SampleError":
            raise SampleError(error["message"])
        raise InfrastructureError(error["message"])
    return Answer(**result["answer"])


class WorkAhead:
    """Answers the run's samples ahead of the tests: `concurrency` at a time in this process, plus one for each
    request waiting out a retry delay (it holds no request slot, so another sample may use it meanwhile).

    Claiming no more than can start keeps the processes' shares even at the end of a run: a process holding
    claims it cannot start yet would finish a round after the others.
    """

    SPARE = 2  # at most this many times `concurrency` samples in progress, however many requests rest

    def __init__(self, board: RunBoard, cases: list[Any], compute: Callable[[Any], Awaitable[Answer | Skipped]],
                 concurrency: int, resting: Callable[[], int] = lambda: 0,
                 lookup: Callable[[str], Any] | None = None) -> None:
        self.board = board
        self.cases = cases
        self.compute = compute
        self.concurrency = max(1, concurrency)
        self.resting = resting
        self.lookup = lookup  # sample key -> case: serve the samples tests wait for first (the xdist hub)
        self.in_progress = 0
        self._next = 0
        self._stopping = False
        self._local: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._heartbeat_task: asyncio.Task[None] | None = None
        # answers finished in this process, readable from the test's thread without a round trip to the loop
        # (a dict assignment is atomic, and each key is written once)
        self.finished: dict[str, dict[str, Any]] = {}

    def ready(self, case: Any) -> Answer | Skipped | None:
        """The answer if this process already computed it; call from any thread."""
        result = self.finished.get(sample_key(case))
        return None if result is None else decode(result)

    def start(self) -> None:
        """Call on the engine's loop."""
        self._tasks = [asyncio.ensure_future(self._worker(first=index == 0)) for index in range(self.concurrency)]
        self._tasks.append(asyncio.ensure_future(self._spares()))
        self._heartbeat_task = asyncio.ensure_future(self._heartbeat())

    async def stop(self, drain: bool = False) -> None:
        """Start nothing new; with `drain`, first finish the samples in progress (up to DRAIN_S).

        An xdist worker ends when it has no tests left, while others still run theirs: the samples it is
        answering are theirs, and their requests are already sent (and paid for). Dropping them would make
        another process ask again, a whole latency later. An interrupted run drains nothing."""
        self._stopping = True
        if drain and self._tasks:
            await asyncio.wait(self._tasks, timeout=DRAIN_S)
        tasks = self._tasks + ([self._heartbeat_task] if self._heartbeat_task else [])
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.board.release()

    async def obtain(self, case: Any) -> Answer | Skipped:
        """The answer for `case`: stored, being computed here, computed elsewhere, or computed now."""
        key = sample_key(case)
        wait = POLL_S[0]
        while True:
            local = self._local.get(key)
            if local is not None:
                return decode(await asyncio.shield(local))
            stored = self.board.result(key)
            if stored is not None:
                return decode(stored)
            if self.board.try_claim(key) or self.board.take_over_if_dead(key):
                # the test waits for this one: it counts against the process's share and goes first
                self.in_progress += 1
                urgent = URGENT.set(True)
                try:
                    return decode(await self._run(key, case))
                finally:
                    URGENT.reset(urgent)
                    self.in_progress -= 1
            await asyncio.sleep(wait)  # another process holds the claim: its answer will land on the board
            wait = min(wait * 2, POLL_S[1])

    async def _worker(self, first: bool = False) -> None:
        """One sample at a time, for as long as there are samples to claim."""
        while not self._stopping:
            if self._next >= len(self.cases):
                if not (first and self.lookup):
                    return
                # the hub's list is done; one worker stays for samples tests want that were not on it
                if self.board.next_wanted() is None:
                    await asyncio.sleep(POLL_S[1])
                    continue
            claimed = self._claim_next()
            if claimed is not None:
                await self._counted(*claimed)

    async def _spares(self) -> None:
        """Extra samples while requests wait out a retry delay (they hold no request slot meanwhile)."""
        spares: list[asyncio.Task[None]] = []
        while not self._stopping and self._next < len(self.cases):
            await asyncio.sleep(SPARE_POLL_S)
            spares = [task for task in spares if not task.done()]
            while (len(spares) < self.concurrency * (self.SPARE - 1) and self._next < len(self.cases)
                   and self.in_progress < self.concurrency + self.resting()):
                claimed = self._claim_next()
                if claimed is None:
                    continue
                spare = asyncio.ensure_future(self._counted(*claimed))
                spares.append(spare)
                self._tasks.append(spare)

    def _claim_next(self) -> tuple[str, Any] | None:
        """The next sample to answer here, claimed: one a test waits for, else the next on the list."""
        wanted = self._wanted()
        if wanted is not None:
            key, case = wanted
        elif self._next < len(self.cases):
            case = self.cases[self._next]
            self._next += 1
            key = sample_key(case)
        else:
            return None
        if key in self._local or self.board.result(key) is not None or not self.board.try_claim(key):
            return None
        self.in_progress += 1  # counted from the claim on, so the spares see it at once
        return key, case

    async def _counted(self, key: str, case: Any) -> None:
        """Answer a sample `_claim_next` claimed (and counted)."""
        try:
            await self._run(key, case)
        finally:
            self.in_progress -= 1

    def _wanted(self) -> tuple[str, Any] | None:
        if self.lookup is None:
            return None
        key = self.board.next_wanted()
        case = None if key is None else self.lookup(key)
        if key is not None:
            self.board.unwant(key)
        return None if case is None else (key, case)

    async def _run(self, key: str, case: Any) -> dict[str, Any]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._local[key] = future
        try:
            result = encode_answer(await self.compute(case))
        except asyncio.CancelledError:
            del self._local[key]
            future.cancel()
            raise
        except BaseException as exc:  # noqa: BLE001 - stored as the sample's outcome; nobody asks again
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            result = encode_error(exc)
        self.board.store(key, result)
        self.finished[key] = result
        future.set_result(result)
        return result

    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(RENEW_S)
            self.board.renew()


class HubClient:
    """An xdist worker's side of the hub: the controller answers every sample (see ToolevalSession.start_hub),
    so a worker, which then needs no model client at all, reads answers from the board. A sample its test
    reaches before the hub did is marked wanted, and the hub takes it next. Without a hub (it said "off", or
    never said anything within HUB_START_S, or left a wanted sample unclaimed for HUB_UNCLAIMED_S), `wait`
    returns None and the worker answers the sample itself."""

    def __init__(self, board: RunBoard) -> None:
        self.board = board
        self._started = time.monotonic()

    def wait(self, case: Any) -> Answer | Skipped | None:
        key = sample_key(case)
        pause, unclaimed_since = POLL_S[0], None
        while True:
            result = self.board.result(key)
            if result is not None:
                return decode(result)
            hub = self.board.state("hub")
            now = time.monotonic()
            if hub == "off" or (hub is None and now - self._started > HUB_START_S):
                return None
            if self.board.claimed(key):
                unclaimed_since = None
            elif unclaimed_since is None:
                unclaimed_since = now
                self.board.want(key)
            elif now - unclaimed_since > HUB_UNCLAIMED_S:
                return None
            time.sleep(pause)
            pause = min(pause * 2, POLL_S[1])
