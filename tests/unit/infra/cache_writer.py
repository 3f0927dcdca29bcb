"""A writer process for the concurrency test: its own module, so `spawn` children import only the cache."""

from __future__ import annotations

from typing import Any

from pytest_tooleval.models.base import Reply
from pytest_tooleval.models.cache import CacheRun, ResponseCache

RUN = CacheRun("writers")  # the processes of one run: each reads what the others wrote

ROWS = 60


def write(path: str, worker: int, start: Any) -> None:
    start.wait()  # all processes write at the same moment, to make them contend
    with ResponseCache(path, run=RUN) as cache:
        for i in range(ROWS):
            cache.put(f"shared-{i}", Reply(text=f"shared {i} from {worker}"))  # every worker writes these
            cache.put(f"own-{worker}-{i}", Reply(text=f"own {worker} {i}", prompt_tokens=i, latency_s=worker))
