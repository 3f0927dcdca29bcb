"""A per-process asyncio loop in a background thread: tests hand it coroutines and wait for the result.

One long-lived loop (rather than one loop per test) lets the HTTP client keep its connections and the
concurrency limits hold across tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from .base import ChatRequest
from .breaker import Breaker
from .limits import Resting
from .storage import StorageLog

if TYPE_CHECKING:
    from .openai_compat import OpenAIBackend

T = TypeVar("T")


@dataclass(frozen=True)
class Probe:
    """One small request that checks a model role's endpoint, key, model name and parameters before a run
    (models/factory.py `probe_endpoints`)."""

    role: str  # "model" for the model under test, else the helper role's name
    backend: OpenAIBackend  # the role's: what it learns (refused parameters) holds for the run
    request: ChatRequest


class Engine:
    def __init__(self, storage: StorageLog | None = None) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="tooleval-engine", daemon=True)
        self._thread.start()
        self._closers: list[Callable[[], Awaitable[object]]] = []
        self._flushers: list[Callable[[], None]] = []
        self.resting = Resting()  # shared by the process's model backends
        self.breaker = Breaker()  # likewise: a dead endpoint stops the run (models/breaker.py)
        # what the process's cache and board failed to keep (storage.py)
        self.storage = storage if storage is not None else StorageLog()
        # one per live chat function: each holds the process's backend for its role
        self.probes: list[Probe] = []

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        return self._loop

    def submit(self, coroutine: Awaitable[T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop)  # type: ignore[arg-type]  # any awaitable runs

    def run(self, coroutine: Awaitable[T]) -> T:
        return self.submit(coroutine).result()

    def on_close(self, closer: Callable[[], Awaitable[object]]) -> None:
        self._closers.append(closer)

    def on_flush(self, flusher: Callable[[], None]) -> None:
        self._flushers.append(flusher)

    def flush(self) -> None:
        """Finish queued writes (the response cache's), so that what they failed to keep can be reported."""
        for flusher in self._flushers:
            flusher()

    def close(self) -> None:
        for closer in self._closers:
            with contextlib.suppress(Exception):  # closing is best effort: the process is ending
                self.run(closer())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._loop.close()
