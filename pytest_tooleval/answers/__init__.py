"""Where a sample's answer comes from: one protocol, one module per source.

- `direct.DirectSource`: asked when the test runs (oracle, replay, `--tooleval-concurrency 0`);
- `pool.Pool`: one process answering ahead of its tests, in memory;
- `hub.Hub` (the xdist controller answers every sample with all workers' request slots) and
  `hub_client.HubClient` (a worker reads the hub's answers); the run's sqlite board (`board.RunBoard`) is
  used by these two only.

docs/architecture.md follows one sample through each of them.
"""

from __future__ import annotations

from typing import Protocol

from ..outcome import Answer, Skipped
from ..suites.base import Case


class AnswerSource(Protocol):
    def get(self, case: Case) -> Answer | Skipped:
        """The answer to `case`, from the test's thread (blocks until there is one). An infrastructure problem
        raises InfrastructureError, an unscoreable sample SampleError."""
        ...

    def close(self, drain: bool) -> None:
        """Stop answering; with `drain`, first finish the samples already started (their requests are sent)."""
        ...
