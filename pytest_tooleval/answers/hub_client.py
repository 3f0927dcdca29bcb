"""An xdist worker's side of the hub (answers/hub.py): it reads the answers the controller computes."""

from __future__ import annotations

import time
from collections.abc import Callable

from ..outcome import Answer, Skipped
from ..suites.base import Case
from .board import STALE_CLAIM_S, RunBoard
from .codec import decode, sample_key
from .pool import POLL_S, PoolSource

HUB_START_S = 10.0  # how long a worker waits for the hub to say it runs before answering samples itself
HUB_UNCLAIMED_S = 60.0  # a wanted sample the hub has not taken by then is answered by the worker itself


class HubClient:
    """An xdist worker's side of the hub: the controller answers every sample (answers/hub.py),
    so a worker, which then needs no model client at all, reads answers from the board. A sample its test
    reaches before the hub did is marked wanted, and the hub takes it next. Without a hub (it said "off", or
    never said anything within HUB_START_S, left a wanted sample unclaimed for HUB_UNCLAIMED_S, stopped
    renewing its claim for STALE_CLAIM_S, or cannot store results; or the board fails here), `wait` returns
    None and the worker answers the sample itself: every wait here has a bound."""

    def __init__(self, board: RunBoard) -> None:
        self.board = board
        self._started = time.monotonic()

    def wait(self, case: Case) -> Answer | Skipped | None:
        key = sample_key(case)
        pause, unclaimed_since = POLL_S[0], None
        while True:
            result = self.board.result(key)
            if result is not None:
                return decode(result)
            if self.board.failing or self.board.others_broken():  # waiting on this board could last for ever
                return None
            hub = self.board.state("hub")
            now = time.monotonic()
            if hub == "off" or (hub is None and now - self._started > HUB_START_S):
                return None
            fresh = self.board.holder_renewed_within(key, STALE_CLAIM_S)
            if fresh is False:
                return None
            if fresh:
                unclaimed_since = None
            elif unclaimed_since is None:
                unclaimed_since = now
                self.board.want(key)
            elif now - unclaimed_since > HUB_UNCLAIMED_S:
                return None
            time.sleep(pause)
            pause = min(pause * 2, POLL_S[1])


class HubClientSource:
    """A worker's answer source: the hub's answers; a sample the hub does not answer, this worker answers
    itself, claiming it on the board so that no other process asks for it too."""

    def __init__(self, board: RunBoard, own_pool: Callable[[], PoolSource]) -> None:
        self.client = HubClient(board)
        self._own_pool = own_pool
        self._fallback: PoolSource | None = None

    def get(self, case: Case) -> Answer | Skipped:
        answer = self.client.wait(case)
        if answer is not None:
            return answer
        if self._fallback is None:  # no hub after all: answer here, one sample at a time
            self._fallback = self._own_pool()
        return self._fallback.get(case)

    def close(self, drain: bool) -> None:
        if self._fallback is not None:
            self._fallback.close(drain)


