"""What running one sample produced, before pytest turns it into passed / failed / error."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .verdict import Verdict


class SampleError(Exception):
    """The sample could not be scored (no recorded output, model unreachable, ...): the test errors."""


class InternalError(Exception):
    """A suite's own code broke while answering a sample ahead of its test (a bug, not the endpoint's fault):
    the test errors with the original exception's type and message."""


@dataclass(frozen=True)
class Answer:
    """What the model side produced for one sample, before scoring."""

    output: Any  # the raw output text, or the agent's messages
    latency_s: float = 0.0
    tokens: dict[str, int] = field(default_factory=dict)
    transcript: list[dict[str, Any]] | None = None
    state: Any = None  # the agent environment's end state, where there is one
    process: list[str] | None = None  # agent messages routed to the executor


@dataclass(frozen=True)
class SampleResult:
    verdict: Verdict
    output: Any = None  # the raw model output (text), or the agent's messages
    latency_s: float = 0.0
    tokens: dict[str, int] = field(default_factory=dict)
    transcript: list[dict[str, Any]] | None = None
