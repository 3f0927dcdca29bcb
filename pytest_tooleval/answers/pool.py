"""Work ahead: keep the endpoint busy while pytest runs one test at a time per process.

pytest runs tests one by one, so a process that only asked the model inside its current test would never have
more than one request open. A pool of asyncio workers answers the run's samples ahead of the tests instead.
What the pool has claimed and answered is kept in a `Ledger`: in memory when one process runs (`MemoryLedger`),
on the run board when xdist's processes share the samples (answers/board.py). A test then reads its sample's
answer, waits for the process that holds the claim, or claims and computes it at once; no sample is computed
twice in a run.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from ..models.engine import Engine
from ..models.limits import URGENT
from ..models.meter import asked_tokens
from ..outcome import Answer, Skipped
from ..suites.base import Case
from .codec import Encoded, decode, encode_answer, encode_error, sample_key
from .progress import Progress

POLL_S = (0.005, 0.1)  # first and largest wait between looks at a sample another process is computing
SPARE_POLL_S = 0.05  # how soon a spare worker notices a request that began waiting out a retry delay
DRAIN_S = 30.0  # how long a finished process keeps answering samples it started, for the tests of others
RENEW_S = 5.0


class Ledger(Protocol):
    """Claims and stored answers, by sample key: what the pool needs to answer each sample once."""

    def try_claim(self, key: str) -> bool: ...
    def take_over_if_dead(self, key: str) -> bool: ...
    def result(self, key: str) -> Encoded | None: ...
    def store(self, key: str, result: Encoded) -> None: ...
    def renew(self) -> None: ...
    def release(self) -> None: ...
    def next_wanted(self) -> str | None: ...
    def unwant(self, key: str) -> None: ...


class MemoryLedger:
    """The ledger of a run in one process: a claim is only ever this process's own, so it cannot die."""

    def __init__(self) -> None:
        self._claimed: set[str] = set()
        self._results: dict[str, Encoded] = {}

    def try_claim(self, key: str) -> bool:
        if key in self._claimed:
            return False
        self._claimed.add(key)
        return True

    def take_over_if_dead(self, key: str) -> bool:
        return False

    def result(self, key: str) -> Encoded | None:
        return self._results.get(key)

    def store(self, key: str, result: Encoded) -> None:
        self._results[key] = result

    def renew(self) -> None:
        pass

    def release(self) -> None:
        self._claimed.intersection_update(self._results)  # a stopped pool's unfinished claims: free again

    def next_wanted(self) -> str | None:
        return None  # tests in this process ask the pool directly (Pool.obtain)

    def unwant(self, key: str) -> None:
        pass


Compute = Callable[[Case], Awaitable[Answer | Skipped]]


class Pool:
    """Answers the run's samples ahead of the tests: `concurrency` at a time in this process, plus one for each
    request waiting out a retry delay (it holds no request slot, so another sample may use it meanwhile).

    Claiming no more than can start keeps the processes' shares even at the end of a run: a process holding
    claims it cannot start yet would finish a round after the others.
    """

    SPARE = 2  # at most this many times `concurrency` samples in progress, however many requests rest

    def __init__(self, ledger: Ledger, cases: list[Case], compute: Compute,
                 concurrency: int, resting: Callable[[], int] = lambda: 0,
                 lookup: Callable[[str], Case | None] | None = None) -> None:
        self.ledger = ledger
        self.cases = cases
        self.compute = compute
        self.concurrency = max(1, concurrency)
        self.resting = resting
        self.lookup = lookup  # sample key -> case: serve the samples tests wait for first (the xdist hub)
        self.in_progress = 0
        self._next = 0
        self._stopping = False
        self._local: dict[str, asyncio.Future[Encoded]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._heartbeat_task: asyncio.Task[None] | None = None
        # answers finished in this process, readable from the test's thread without a round trip to the loop
        # (a dict assignment is atomic, and each key is written once)
        self.finished: dict[str, Encoded] = {}
        # answers that asked the endpoint, and when the latest came (seconds from the start): the ETA's pace
        self._started = time.monotonic()
        self._live = 0
        self._live_s = 0.0

    def progress(self, elapsed_s: float) -> Progress:
        """How far the pool is (read from another thread: finished only grows)."""
        finished = list(self.finished.values())
        tokens = sum(int(value) for result in finished
                     for value in ((result.get("answer") or {}).get("tokens") or {}).values())
        return Progress(total=max(len(self.cases), len(finished)), answered=len(finished),
                        in_flight=self.in_progress, resting=self.resting(),
                        errors=sum(1 for result in finished if "error" in result), tokens=tokens, elapsed_s=elapsed_s,
                        live=self._live, live_s=self._live_s)

    def ready(self, case: Case) -> Answer | Skipped | None:
        """The answer if this process already computed it; call from any thread."""
        result = self.finished.get(sample_key(case))
        return None if result is None else decode(result)

    def start(self) -> None:
        """Call on the engine's loop."""
        self._started = time.monotonic()
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
        self.ledger.release()

    async def restrict(self, keys: set[str]) -> int:
        """Start no sample outside `keys` (on the engine's loop, as everything that reads the list); returns how
        many outside it were started."""
        started = sum(1 for case in self.cases[:self._next] if sample_key(case) not in keys)
        self.cases = self.cases[:self._next] + [case for case in self.cases[self._next:] if sample_key(case) in keys]
        return started

    async def obtain(self, case: Case) -> Answer | Skipped:
        """The answer for `case`: stored, being computed here, computed elsewhere, or computed now."""
        key = sample_key(case)
        wait = POLL_S[0]
        while True:
            local = self._local.get(key)
            if local is not None:
                return decode(await asyncio.shield(local))
            stored = self.ledger.result(key)
            if stored is not None:
                return decode(stored)
            if self.ledger.try_claim(key) or self.ledger.take_over_if_dead(key):
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
                if self.ledger.next_wanted() is None:
                    await asyncio.sleep(POLL_S[1])
                    continue
            claimed = self._claim_next()
            if claimed is not None:
                await self._counted(*claimed)
            else:  # nothing startable (a wanted sample already in hand, say): never spin the loop
                await asyncio.sleep(POLL_S[0])

    async def _spares(self) -> None:
        """Extra samples while requests wait out a retry delay (they hold no request slot meanwhile)."""
        spares: list[asyncio.Task[None]] = []
        while not self._stopping and self._next < len(self.cases):
            await asyncio.sleep(SPARE_POLL_S)
            spares = [task for task in spares if not task.done()]
            # `_stopping` again: a stop may have come during the sleep, and a stopped pool starts nothing
            while (not self._stopping and len(spares) < self.concurrency * (self.SPARE - 1)
                   and self._next < len(self.cases) and self.in_progress < self.concurrency + self.resting()):
                claimed = self._claim_next()
                if claimed is None:
                    continue
                spare = asyncio.ensure_future(self._counted(*claimed))
                spares.append(spare)
                self._tasks.append(spare)

    def _claim_next(self) -> tuple[str, Case] | None:
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
        if key in self._local or self.ledger.result(key) is not None or not self.ledger.try_claim(key):
            return None
        self.in_progress += 1  # counted from the claim on, so the spares see it at once
        return key, case

    async def _counted(self, key: str, case: Case) -> None:
        """Answer a sample `_claim_next` claimed (and counted)."""
        try:
            await self._run(key, case)
        finally:
            self.in_progress -= 1

    def _wanted(self) -> tuple[str, Case] | None:
        if self.lookup is None:
            return None
        key = self.ledger.next_wanted()
        if key is None:
            return None
        self.ledger.unwant(key)
        case = self.lookup(key)
        return None if case is None else (key, case)

    async def _run(self, key: str, case: Case) -> Encoded:
        future: asyncio.Future[Encoded] = asyncio.get_running_loop().create_future()
        self._local[key] = future
        try:
            result = encode_answer(await self.compute(case))
        except asyncio.CancelledError:
            del self._local[key]
            future.cancel()
            raise
        except BaseException as exc:  # stored as the sample's outcome; nobody asks again
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            result = encode_error(exc)
        try:
            self.ledger.store(key, result)  # a board that fails logs it and goes on (answers/board.py)
        finally:  # whatever the ledger does, the answer reaches this process's tests
            if _asked(result):
                self._live += 1
                self._live_s = time.monotonic() - self._started
            self.finished[key] = result
            future.set_result(result)
        return result

    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(RENEW_S)
            self.ledger.renew()




def _asked(result: Encoded) -> bool:
    """Whether the endpoint was asked for this result (an error was; an answer the cache served whole was not)."""
    if "error" in result:
        return True
    answer = result.get("answer") or {}
    return any(asked_tokens(answer.get("tokens") or {}, answer.get("cached_tokens") or {}).values())


class PoolSource:
    """The answer source of a process that answers its own samples ahead of its tests."""

    def __init__(self, pool: Pool, engine: Engine) -> None:
        self.pool = pool
        self.engine = engine

    def start(self) -> None:
        self.engine.loop.call_soon_threadsafe(self.pool.start)

    def get(self, case: Case) -> Answer | Skipped:
        return self.pool.ready(case) or self.engine.run(self.pool.obtain(case))

    def close(self, drain: bool) -> None:
        self.engine.run(self.pool.stop(drain=drain))
