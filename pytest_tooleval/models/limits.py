"""Request limits: an adaptive in-flight limit per process, and rate limits shared by every process of a run.

- `AdaptiveLimit`: at most `limit` requests in flight. When nearly all recent attempts are rate-limited (at
  least 9 in 10 of the last 16 to 32 started: the endpoint is overloaded by us), a 429 halves the limit, at
  most once a second so one burst counts once; each success adds 1/limit (additive increase, multiplicative
  decrease). Scattered 429s (an endpoint rejecting a share of requests whatever the load) are only retried:
  halving on them would cut throughput without easing anything. (With 3 in 4 of as few as 8 attempts, an
  endpoint rejecting half of all requests at random set off a cut in about one process in two per run.)
  Attempts are judged in the order they started, an unanswered one counting as not rate-limited: a rate
  limiter answers its 429s at once and the successes a latency later, so in the order of answers the first
  16 of a run are all 429s even when only half of the requests are rejected.
- `SharedRateLimiter`: `--tooleval-rpm` / `--tooleval-tpm` as token buckets in the run's sqlite board, so
  the limits hold for the run as a whole, not per xdist worker. A caller reserves its share (the bucket may
  go negative) and sleeps until the reservation is covered: waiting callers queue in order, no herd.
"""

from __future__ import annotations

import asyncio
import contextvars
import sqlite3
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

# set while computing a sample a test is blocked on: its requests take the next free slot, before queued work
URGENT: contextvars.ContextVar[bool] = contextvars.ContextVar("tooleval_urgent", default=False)

CUT_INTERVAL_S = 1.0
WINDOW = 32  # recent attempts remembered per process
MIN_JUDGED = 16  # attempts seen before the share means anything
OVERLOAD_SHARE = 0.9  # the share of rate-limited attempts in the window that means "we are too many"


class Attempt:
    """One request that got a slot; `rate_limited` stays None until it is answered."""

    __slots__ = ("rate_limited",)

    def __init__(self) -> None:
        self.rate_limited: bool | None = None


class AdaptiveLimit:
    """Slots are handed out first come, first served: a released slot goes to the longest waiter, never to a
    caller that arrives just then (otherwise the tasks that just finished a request take the slot again and
    the samples claimed earliest starve until the end of the run). Only an URGENT request goes first."""

    def __init__(self, maximum: int, minimum: int = 1) -> None:
        self.maximum = max(1, maximum)
        self.minimum = max(1, min(minimum, self.maximum))
        self.limit = float(self.maximum)
        self.in_use = 0
        self._last_cut = float("-inf")
        self._recent: deque[Attempt] = deque(maxlen=WINDOW)  # in the order they started
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def __aenter__(self) -> Attempt:
        if not self._waiters and self.in_use < int(self.limit):
            self.in_use += 1
            return self.begin()
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if URGENT.get():
            self._waiters.appendleft(granted)
        else:
            self._waiters.append(granted)
        try:
            await granted  # the releaser counted us in before waking us
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled():
                self._release()  # cancelled just after a slot was handed to us: pass it on
            elif granted in self._waiters:  # a release may already have dropped it as cancelled
                self._waiters.remove(granted)
            raise
        return self.begin()

    def begin(self) -> Attempt:
        """Record an attempt that starts now (`async with` does this when it grants the slot)."""
        attempt = Attempt()
        self._recent.append(attempt)
        return attempt

    async def __aexit__(self, *exc_info: object) -> None:
        self._release()

    def _release(self) -> None:
        self.in_use -= 1
        self._hand_out()

    def _hand_out(self) -> None:
        while self._waiters and self.in_use < int(self.limit):
            granted = self._waiters.popleft()
            if not granted.done():
                self.in_use += 1
                granted.set_result(None)

    def on_success(self, attempt: Attempt) -> None:
        attempt.rate_limited = False
        self.limit = min(float(self.maximum), self.limit + 1.0 / self.limit)
        self._hand_out()  # a limit that grew past a whole slot lets the next waiter in

    def on_rate_limited(self, attempt: Attempt) -> None:
        attempt.rate_limited = True
        limited = sum(1 for recent in self._recent if recent.rate_limited)
        if len(self._recent) < MIN_JUDGED or limited < OVERLOAD_SHARE * len(self._recent):
            return
        now = time.monotonic()
        if now - self._last_cut >= CUT_INTERVAL_S:
            self.limit = max(float(self.minimum), self.limit / 2.0)
            self._last_cut = now


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


def estimate_tokens(messages: tuple[dict[str, Any], ...] | list[dict[str, Any]],
                    tools: tuple[dict[str, Any], ...] | None = None) -> int:
    """A rough prompt size before the endpoint tells us the real one: about four characters a token (the
    tools offered count too: the model reads their schemas)."""
    characters = sum(len(str(message.get("content", ""))) for message in messages)
    characters += sum(len(str(message["tool_calls"])) for message in messages if message.get("tool_calls"))
    characters += sum(len(str(tool)) for tool in tools or ())
    return max(1, characters // 4)
