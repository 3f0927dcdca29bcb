"""Request limits: an adaptive in-flight limit per process, and rate limits shared by every process of a run.

- `AdaptiveLimit`: at most `limit` requests in flight, `--tooleval-concurrency` being the ceiling. The limit
  finds what the endpoint sustains (docs/concurrency.md):
  - it starts at two and grows by three per answer while latency stays flat (a slow start, as TCP's),
    counting only answers sent with at least half the limit in flight: a one-slot server sent the ceiling
    at once answers them one after another, and the last ones time out in its queue;
  - latency that grows with the number in flight is queueing at the server: the shortest latency of the
    latest answers against the shortest seen with at most two in flight (the shortest, not the median: a
    queue delays every answer, while answers of different lengths vary by themselves), as the Vegas and
    gradient limiters compare round trips. Above three times, the limit shrinks by that ratio (at most
    halved); above twice, it holds; below, it grows by 1/limit per answer once the slow start is over;
  - a timeout halves it, as a 429 storm does; a request that timed out is re-sent only when fewer requests
    are in flight than the endpoint has shown it answers without queueing (a server goes on generating for
    an abandoned request: sending it again into the same queue only doubles the wait);
  - one signal counts once: a cut judges only attempts started after the previous one;
  - every cut is kept (`changes`) with its reason, for the progress line and the summary.
- 429s: when nearly all recent attempts are rate-limited (at least 9 in 10 of the last 16 to 32 started: the
  endpoint is overloaded by us), a 429 halves the limit. Scattered 429s (an endpoint rejecting a share of
  requests whatever the load) are only retried: halving on them would cut throughput without easing
  anything. (With 3 in 4 of as few as 8 attempts, an endpoint rejecting half of all requests at random set
  off a cut in about one process in two per run.) Attempts are judged in the order they started, an
  unanswered one counting as not rate-limited: a rate limiter answers its 429s at once and the successes a
  latency later, so in the order of answers the first 16 of a run are all 429s even when only half of the
  requests are rejected.
- `SharedRateLimiter`: `--tooleval-rpm` / `--tooleval-tpm` as token buckets in the run's sqlite board, so
  the limits hold for the run as a whole, not per xdist worker. A caller reserves its share (the bucket may
  go negative) and sleeps until the reservation is covered: waiting callers queue in order, no herd.
"""

from __future__ import annotations

import asyncio
import contextvars
import ipaddress
import os
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

# set while computing a sample a test is blocked on: its requests take the next free slot, before queued work
URGENT: contextvars.ContextVar[bool] = contextvars.ContextVar("tooleval_urgent", default=False)

WINDOW = 32  # recent attempts remembered per process
MIN_JUDGED = 16  # attempts seen before the share means anything
OVERLOAD_SHARE = 0.9  # the share of rate-limited attempts in the window that means "we are too many"

SLOW_START_FROM = 2  # the limit a backend starts at (below its ceiling)
SLOW_START_STEP = 3.0  # added per flat answer in the slow start (with the rule below, about x2.5 per round trip)
LOW_LOAD = SLOW_START_FROM  # answers sent with at most this many in flight give the unloaded latency
MIN_UNLOADED = 2  # unloaded answers seen before anything is judged
UNLOADED_KEPT = 15  # unloaded latencies remembered (the reference is their shortest)
LATEST = 5  # the latest answers (started since the last cut) whose shortest latency is judged
JUDGED_ANSWERS = 3  # of them, answers needed before the latency is judged at all
SLOW_START_EXIT = 1.5  # latest / unloaded above this ends the slow start (one more per answer)
FLAT = 2.0  # at or below this latency counts as flat: one more per round of answers; above it, hold
QUEUEING = 3.0  # above this requests queue at the server: shrink
LATENCY_FLOOR_S = 0.1  # the unloaded latency is at least this (a local fake answers in a millisecond or two)


def starts_slow(setting: str, base_url: str | None) -> bool:
    """Whether an endpoint's limit starts low (`--tooleval-slow-start`). `auto`: yes for a server the user may
    run (plain http, or a host on this machine or a private network: llama.cpp, Ollama, vLLM), which may answer
    one request at a time; no for a hosted API (https to a public host name, as api.openai.com, the default),
    which serves many at once and says 429 when it cannot (docs/concurrency.md, "Where it starts")."""
    if setting != "auto":
        return setting == "on"
    parsed = urlsplit(base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1")
    host = (parsed.hostname or "").lower()
    if parsed.scheme != "https" or not host or "." not in host or host == "localhost":
        return True
    if host.endswith(PRIVATE_SUFFIXES):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False  # a public host name
    return not address.is_global


PRIVATE_SUFFIXES = (".localhost", ".local", ".lan", ".internal", ".home.arpa", ".test")


@dataclass(frozen=True)
class LimitChange:
    """The limit moved down: when (seconds since the limiter began), from what, to what, and why."""

    at_s: float
    before: int
    after: int
    reason: str


class Attempt:
    """One request that got a slot; `rate_limited` stays None until it is answered."""

    __slots__ = ("epoch", "in_flight", "rate_limited")

    def __init__(self, in_flight: int = 0, epoch: int = 0) -> None:
        self.rate_limited: bool | None = None
        self.in_flight = in_flight  # requests in flight when it started, itself included
        self.epoch = epoch  # cuts made before it started


class AdaptiveLimit:
    """Slots are handed out first come, first served: a released slot goes to the longest waiter, never to a
    caller that arrives just then (otherwise the tasks that just finished a request take the slot again and
    the samples claimed earliest starve until the end of the run). Only an URGENT request goes first.

    Args:
        maximum: the ceiling (`--tooleval-concurrency`, the hub's: all its workers').
        minimum: the floor.
        start: the limit to begin at; None: the ceiling (no slow start).
    """

    def __init__(self, maximum: int, minimum: int = 1, start: int | None = None) -> None:
        self.maximum = max(1, maximum)
        self.minimum = max(1, min(minimum, self.maximum))
        self.limit = float(self.maximum if start is None else max(self.minimum, min(start, self.maximum)))
        self.in_use = 0
        self.peak = int(self.limit)
        self.timeouts = 0
        self.changes: list[LimitChange] = []
        self.shown = 0  # the most requests in flight at which an answer came back without queueing
        self._began = time.monotonic()
        self._slow_start = start is not None
        self._epoch = 0
        self._last_rate_cut = float("-inf")
        self._recent: deque[Attempt] = deque(maxlen=WINDOW)  # in the order they started
        self._unloaded: deque[float] = deque(maxlen=UNLOADED_KEPT)
        self._latest: deque[float] = deque(maxlen=LATEST)  # latencies of attempts started since the last cut
        self._waiters: deque[tuple[asyncio.Future[None], int]] = deque()  # each with the in-flight it needs below

    async def __aenter__(self) -> Attempt:
        return await self.acquire()

    async def acquire(self, after_timeout: bool = False) -> Attempt:
        """A slot; `after_timeout`: only once fewer are in flight than the endpoint has shown it serves."""
        cap = self._cap(after_timeout)
        if not self._waiters and self.in_use < cap:
            self.in_use += 1
            return self.begin()
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (granted, 0 if after_timeout else -1)
        if URGENT.get():
            self._waiters.appendleft(entry)
        else:
            self._waiters.append(entry)
        try:
            await granted  # the releaser counted us in before waking us
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled():
                self.release()  # cancelled just after a slot was handed to us: pass it on
            elif entry in self._waiters:  # a release may already have dropped it as cancelled
                self._waiters.remove(entry)
            raise
        return self.begin()

    def _cap(self, after_timeout: bool) -> int:
        if not after_timeout:
            return int(self.limit)
        return min(int(self.limit), max(1, self.shown))

    def begin(self) -> Attempt:
        """Record an attempt that starts now (`acquire` does this when it grants the slot)."""
        attempt = Attempt(self.in_use, self._epoch)
        self._recent.append(attempt)
        return attempt

    async def __aexit__(self, *exc_info: object) -> None:
        self.release()

    def release(self) -> None:
        self.in_use -= 1
        self._hand_out()

    def _hand_out(self) -> None:
        # strictly in order: a re-sent timeout at the head holds back those behind it until the queue drains
        while self._waiters:
            granted, needs = self._waiters[0]
            if granted.done():
                self._waiters.popleft()
                continue
            if self.in_use >= self._cap(needs == 0):
                return
            self._waiters.popleft()
            self.in_use += 1
            granted.set_result(None)

    # -- what the answers say --------------------------------------------------------------------------------

    def on_success(self, attempt: Attempt, latency_s: float | None = None) -> None:
        attempt.rate_limited = False
        if latency_s is None:  # nothing to judge the latency by
            self._grow(1.0 if self._slow_start else 1.0 / self.limit)
            return
        if attempt.in_flight <= LOW_LOAD:
            self._unloaded.append(latency_s)
        if attempt.epoch != self._epoch:  # started before the last cut: it says nothing about the new limit
            return
        if attempt.in_flight * 2 >= self.limit:  # an answer sent with far fewer in flight says little of this limit
            self._latest.append(latency_s)
        if len(self._unloaded) < MIN_UNLOADED:
            if not self._slow_start:  # no reference to judge by (a limit that began at its ceiling): AIMD
                self._grow(1.0 / self.limit)
            return  # a slow start holds until the reference is known
        # milliseconds of difference are this process's own work, not a queue at the server
        unloaded = max(min(self._unloaded), LATENCY_FLOOR_S)
        if latency_s <= QUEUEING * unloaded:
            self.shown = max(self.shown, attempt.in_flight)
        if len(self._latest) < JUDGED_ANSWERS:
            self._slow_grow(attempt, latency_s, unloaded)
            return
        ratio = min(self._latest) / unloaded
        if ratio > QUEUEING:
            self._cut(max(0.5, QUEUEING / ratio) * self.limit,
                      f"the endpoint queues: latency {ratio:.1f}x the unloaded with {attempt.in_flight} in flight")
        elif self._slow_start and ratio <= SLOW_START_EXIT:
            self._slow_grow(attempt, latency_s, unloaded)
        elif ratio > FLAT:  # some queueing: hold
            self._slow_start = False
        else:  # after the slow start, one more per round of answers (TCP's congestion avoidance)
            self._slow_start = False
            self._grow(1.0 / self.limit)

    def _slow_grow(self, attempt: Attempt, latency_s: float, unloaded: float) -> None:
        """Grow fast, but only on an answer that was flat with at least half the current limit in flight: the
        answers of requests sent at a lower level say nothing of this one (without this, a one-slot server's first,
        fast answers made the limit overshoot before the slow ones came back)."""
        if self._slow_start and latency_s <= SLOW_START_EXIT * unloaded and attempt.in_flight * 2 >= self.limit:
            self._grow(SLOW_START_STEP)

    def on_timeout(self, attempt: Attempt) -> None:
        """An attempt timed out: treated as queueing that went too far, once per cut."""
        attempt.rate_limited = False
        self.timeouts += 1
        if attempt.epoch == self._epoch:
            # halved, and no more than the endpoint has shown it serves without a queue
            self._cut(min(self.limit / 2.0, float(max(self.shown, 1))), "requests timed out")

    def on_rate_limited(self, attempt: Attempt) -> None:
        attempt.rate_limited = True
        limited = sum(1 for recent in self._recent if recent.rate_limited)
        if len(self._recent) < MIN_JUDGED or limited < OVERLOAD_SHARE * len(self._recent):
            return
        now = time.monotonic()
        if now - self._last_rate_cut >= 1.0:  # one burst counts once
            self._last_rate_cut = now
            self._cut(self.limit / 2.0, "nearly every request was rate-limited (429)")

    def _grow(self, step: float) -> None:
        self.limit = min(float(self.maximum), self.limit + step)
        self.peak = max(self.peak, int(self.limit))
        self._hand_out()  # a limit that grew past a whole slot lets the next waiter in

    def _cut(self, to: float, reason: str) -> None:
        before = int(self.limit)
        self.limit = max(float(self.minimum), min(self.limit, to))
        self._slow_start = False
        self._epoch += 1
        self._latest.clear()
        if int(self.limit) != before:
            self.changes.append(LimitChange(round(time.monotonic() - self._began, 1), before, int(self.limit),
                                            reason))


class Resting:
    """How many of a process's requests are waiting out a retry delay. They hold no request slot, so the
    process may start that many more samples meanwhile (see answers/pool.py)."""

    def __init__(self) -> None:
        self.count = 0


class SharedRateLimiter:
    """Requests per minute and tokens per minute for the whole run (all processes), in one sqlite file."""

    def __init__(self, path: Path, rpm: int | None, tpm: int | None) -> None:
        self.rates = {name: per_minute / 60.0 for name, per_minute in (("requests", rpm), ("tokens", tpm))
                      if per_minute}
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
        self._conn.execute("PRAGMA busy_timeout = 60000")
        self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute("CREATE TABLE IF NOT EXISTS buckets (name TEXT PRIMARY KEY, level REAL, updated REAL)")

    def reserve(self, name: str, amount: float) -> float:
        """Take `amount` from bucket `name`; return how long to wait before the reservation is covered."""
        rate = self.rates.get(name)
        if not rate or amount <= 0:
            return 0.0
        capacity = max(1.0, rate)  # a burst of one second's worth
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                now = time.time()
                row = self._conn.execute("SELECT level, updated FROM buckets WHERE name = ?", (name,)).fetchone()
                level = capacity if row is None else min(capacity, row[0] + (now - row[1]) * rate)
                level -= amount
                self._conn.execute("INSERT OR REPLACE INTO buckets (name, level, updated) VALUES (?, ?, ?)",
                                   (name, level, now))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
        return 0.0 if level >= 0 else -level / rate

    async def acquire(self, estimated_tokens: int) -> None:
        wait = max(self.reserve("requests", 1), self.reserve("tokens", estimated_tokens))
        if wait > 0:
            await asyncio.sleep(wait)

    def settle(self, estimated_tokens: int, actual_tokens: int | None) -> None:
        """Charge (or give back) the difference between a request's estimate and what it really used."""
        if actual_tokens is None or "tokens" not in self.rates:
            return
        difference = actual_tokens - estimated_tokens
        if difference > 0:
            self.reserve("tokens", difference)
        elif difference < 0:
            self._refund("tokens", -difference)

    def _refund(self, name: str, amount: float) -> None:
        if name not in self.rates:
            return
        with self._lock:
            self._conn.execute("UPDATE buckets SET level = level + ? WHERE name = ?", (amount, name))

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def estimate_tokens(messages: Sequence[Mapping[str, object]],
                    tools: Sequence[Mapping[str, object]] | None = None) -> int:
    """A rough prompt size before the endpoint tells us the real one: about four characters a token (the
    tools offered count too: the model reads their schemas)."""
    characters = sum(len(str(message.get("content", ""))) for message in messages)
    characters += sum(len(str(message["tool_calls"])) for message in messages if message.get("tool_calls"))
    characters += sum(len(str(tool)) for tool in tools or ())
    return max(1, characters // 4)
