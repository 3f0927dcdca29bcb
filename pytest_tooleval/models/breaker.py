"""Fail fast: a run whose first requests to an endpoint all fail the same dead way stops, with one line.

Connection refused, a DNS failure, 401, 403 and 404 do not heal by asking again, and a run of a thousand
samples would otherwise spend minutes erroring them one by one. Transient faults (429, 5xx, timeouts) never
count. An endpoint that has answered is given longer: the run stops only after `LOST_AFTER` connection
failures with no answer between them that also span a request's whole retry budget (`patience_s`: the backoff
the request that fails last would still wait through), so a server that comes back within that budget loses
nothing (a half-second blip failed ten requests in 82 ms, and stopped a 500-sample run); a local server that
died mid-run stops the run once no request could still be answered. An account out of quota stops the run at
its first such refusal, answered before or not: quota runs out mid-run, and no retry brings it back.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable

from ..text import counted

TRIP_AFTER = 5  # attempts failing the same dead way, with nothing answered, before the run stops
LOST_AFTER = 10  # connection failures in a row, after the endpoint had answered, before the run stops
STOPPED = "tooleval stopped the run: "  # how every trip message begins (the probe's error leaves it out)

NO_QUOTA = "no quota"  # classify's reason for an account out of quota or credits (openai_compat.no_quota)

# the decision reasons (openai_compat.classify) that mean the endpoint cannot answer, and what to do about them
DEAD = {
    "connection error": "is the server running? check --tooleval-base-url (or OPENAI_BASE_URL)",
    "HTTP 401": "check --tooleval-api-key (or OPENAI_API_KEY)",
    "HTTP 403": "check --tooleval-api-key (or OPENAI_API_KEY) and what the key may use",
    "HTTP 404": "check --tooleval-model (the endpoint knows no such model) and --tooleval-base-url",
    NO_QUOTA: ("the account has no quota left: check the plan and billing of the key's account, or use a key "
               "that has quota (--tooleval-api-key or OPENAI_API_KEY)"),
}
AT_ONCE = frozenset({NO_QUOTA})  # dead at the first such refusal, even from an endpoint that had answered


class Breaker:
    """Per endpoint (a model at a URL): counts dead failures until something is answered."""

    def __init__(self, trip_after: int = TRIP_AFTER, lost_after: int = LOST_AFTER) -> None:
        self.trip_after = trip_after
        self.lost_after = lost_after
        self._answered: set[str] = set()
        self._streak: dict[str, int] = {}  # an endpoint that answered: connection failures since its last answer
        self._since: dict[str, float] = {}  # ... and when the first of them came (time.monotonic)
        self._failures: dict[str, Counter[str]] = {}
        self._tripped: dict[str, str] = {}
        self._lock = threading.Lock()
        self.on_trip: Callable[[str], None] | None = None  # told once, with the message (stops the pytest run)

    def tripped(self, endpoint: str) -> str | None:
        return self._tripped.get(endpoint)

    @property
    def message(self) -> str | None:
        """The first trip's message, if any endpoint tripped."""
        return next(iter(self._tripped.values()), None)

    def answered(self, endpoint: str) -> None:
        with self._lock:
            self._answered.add(endpoint)
            self._streak[endpoint] = 0
            self._since.pop(endpoint, None)

    def failed(self, endpoint: str, reason: str, detail: str, patience_s: float = 0.0) -> str | None:
        """Count one failed attempt; the trip message when this one trips the breaker (else None). `patience_s`:
        how long the failing requests' retries could still bring an answer (their retry budget)."""
        if reason not in DEAD:
            return None
        with self._lock:
            if endpoint in self._tripped:
                return None
            if reason in AT_ONCE:
                message = f"{STOPPED}{endpoint} refused a request ({detail}): {DEAD[reason]}"
            elif endpoint in self._answered:
                if reason != "connection error":  # a key or model that worked before: not a dead server
                    return None
                streak = self._streak[endpoint] = self._streak.get(endpoint, 0) + 1
                since = self._since.setdefault(endpoint, time.monotonic())
                lasted = time.monotonic() - since
                if streak < self.lost_after or lasted < patience_s:
                    return None
                message = (f"{STOPPED}{endpoint} stopped answering: {counted(streak, 'request')} failed over "
                           f"{lasted:.0f} s "
                           f"({detail}) after it had answered: is the server still running? (answers so far are "
                           "in the response cache: a rerun asks only for the rest)")
            else:
                counts = self._failures.setdefault(endpoint, Counter())
                counts[reason] += 1
                if counts[reason] < self.trip_after:
                    return None
                message = (f"{STOPPED}{counted(counts[reason], 'request')} to {endpoint} failed ({detail}) and "
                           f"none was answered: {DEAD[reason]}")
            self._tripped[endpoint] = message
            notify = self.on_trip
        if notify is not None:
            notify(message)
        return message
