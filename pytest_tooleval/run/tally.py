"""What a run's HTTP clients counted and learned: requests, retries, time-outs, refused sampling parameters and the
moves of each endpoint's in-flight limit, this process's own plus what the xdist workers send at their end."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..models.openai_compat import OpenAIBackend


class RequestTally:
    """Reads the backends of this process's engine (`backends`: None while it has no engine) and adds the workers'."""

    def __init__(self, backends: Callable[[], list[OpenAIBackend] | None],
                 retired: Callable[[], list[OpenAIBackend]] = list) -> None:
        self.backends = backends
        self.retired = retired  # backends set aside (an early probe's wrong guess): their requests count, no more
        self._merged_adaptations: dict[str, dict[str, str]] = {}  # the workers' (hooks/distributed.py)
        self._merged_requests: dict[str, int] = {}  # the workers' requests and retries

    @property
    def adaptations(self) -> dict[str, dict[str, str]]:
        """Sampling parameters the run's models refused, by endpoint, merged from every process."""
        merged = dict(self._merged_adaptations)
        # what this process's backends learned (models/openai_compat.py)
        merged.update({backend.label: dict(backend.adaptations) for backend in self.backends() or []
                       if backend.adaptations})
        return merged

    @property
    def request_counts(self) -> dict[str, int]:
        """HTTP requests sent and retried by this process's backends (the probe's included), plus the workers'."""
        counts = dict(self._merged_requests)
        backends = self.backends()
        if backends is not None:
            backends = [*backends, *self.retired()]
            counts["requests"] = counts.get("requests", 0) + sum(backend.sent for backend in backends)
            counts["retries"] = counts.get("retries", 0) + sum(backend.retried for backend in backends)
            counts["timeouts"] = counts.get("timeouts", 0) + sum(backend.timed_out for backend in backends)
        return counts

    @property
    def concurrency(self) -> list[dict[str, Any]]:  # Any: hooks/progress.py indexes the moves as they are
        """How each endpoint's in-flight limit moved in this process (the one that asks: alone, or the hub)."""
        return [moved for backend in self.backends() or [] if (moved := backend.concurrency()) is not None]

    def merge_worker(self, output: dict[str, Any]) -> None:
        """A worker's counts and adaptations, as its workeroutput carries them (hooks/worker.py)."""
        for key, value in (output.get("tooleval_requests") or {}).items():
            self._merged_requests[key] = self._merged_requests.get(key, 0) + int(value)
        for where, changes in (output.get("tooleval_adaptations") or {}).items():
            self._merged_adaptations.setdefault(where, {}).update(changes)
