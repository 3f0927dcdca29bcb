"""The xdist hub: the controller answers every sample of the run, with the request slots of all its workers
(workers x --tooleval-concurrency); the workers only read answers from the run board and score them
(answers/hub_client.py). The hub starts before any worker does, on the controller's own collection (ahead.py),
and the workers never import the model client: on a small machine their start-up, not the endpoint, set the pace
of a run."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable

from ..models.engine import Engine
from ..suites.base import Case
from .board import RunBoard
from .codec import sample_key
from .pool import Compute, Pool

FIRST_ROUND_S = 2.0  # the longest the workers' start waits for the hub's first requests


class Hub:
    def __init__(self, board: RunBoard, slots: int) -> None:
        self.board = board
        self.slots = slots
        self._pool: Pool | None = None
        self.started = threading.Event()  # the hub asks (or said "off"): set by `start`'s thread
        # the client's import is most of its set-up: done while the workers start (the model access itself
        # waits for the collected suites, whose helper roles it builds)
        self._warm = threading.Thread(target=_import_client, name="tooleval-hub-setup", daemon=True)
        self._warm.start()

    def start(self, cases: list[Case], known: list[Case], compute: Compute, engine: Engine,
              prepare: Callable[[], object]) -> None:
        """Answer `cases` (the run's collected samples, in schedule order), and any of `known` a
        worker's test asks for; `prepare` builds the model access. Later calls (one per worker) change nothing."""
        board = self.board
        if self._pool is not None or board.state("hub") == "off":
            return
        if not cases:
            board.set_state("hub", "off")  # nothing it knows: each worker answers its own samples
            self.started.set()
            return
        by_key = {sample_key(case): case for case in known}
        pool = self._pool = Pool(board, cases, compute, self.slots, resting=lambda: engine.resting.count,
                                 lookup=by_key.get)

        def start() -> None:  # off the main thread: the client may still be importing
            try:
                self._warm.join()
                prepare()
            except Exception:  # the workers answer their own samples; their errors say why
                board.set_state("hub", "off")
                self.started.set()
                return
            board.set_state("hub", "on")
            engine.loop.call_soon_threadsafe(pool.start)
            self.started.set()

        threading.Thread(target=start, name="tooleval-hub-start", daemon=True).start()

    @property
    def pool(self) -> Pool | None:
        return self._pool

    def wait_until_asking(self, in_flight: Callable[[], int], bound_s: float = FIRST_ROUND_S) -> None:
        """Return once the first round of samples is on the wire (`in_flight`: the requests there now) or answered,
        at most `bound_s`, so that it goes out before the workers start, which on a small machine take every core
        for seconds."""
        deadline = time.monotonic() + bound_s
        if not self.started.wait(bound_s) or self._pool is None:
            return
        pool = self._pool
        first_round = min(self.slots, len(pool.cases))
        while time.monotonic() < deadline:
            if len(pool.finished) + in_flight() >= first_round:
                return
            time.sleep(0.005)

    @property
    def backlog(self) -> int:
        """The samples beyond the first round (0 when the hub does not ask)."""
        return 0 if self._pool is None else max(0, len(self._pool.cases) - self.slots)

    def restrict(self, keys: set[str], engine: Engine) -> int:
        """Ask for no sample outside `keys` from now on; returns how many outside it were already started."""
        if self._pool is None:
            return 0
        return engine.run(self._pool.restrict(keys))

    def close(self, engine: Engine) -> None:
        if self._pool is not None:
            engine.run(self._pool.stop())


def _import_client() -> None:
    with contextlib.suppress(Exception):  # Hub.start's prepare tries again, and reports
        from ..models import openai_compat  # noqa: F401
