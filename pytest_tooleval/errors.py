"""The plugin's errors, one hierarchy: each prints as one line, without a traceback.

A usage error stops the run (exit status 4); a malformed reply is the model's answer, a failure of its test; the
others end one sample as an error of its test, never as a score.
"""

from __future__ import annotations

import pytest


class ToolevalError(Exception):
    """Every error the plugin raises on purpose."""


class InfrastructureError(ToolevalError):
    """The model could not be asked (retries exhausted, timeout, bad key, ...): the test errors, never scored."""


class NotAsked(InfrastructureError):
    """The request was never sent: the run is stopping (a dead endpoint, models/breaker.py). The sample is not
    run, and so in no figure, rather than an error of its own."""


NOT_ASKED = "not run, the run stopped before its request was sent: "  # the skip reason of such a sample


class SampleError(ToolevalError):
    """The sample could not be scored (no recorded output, no helper model, ...): the test errors."""


class ContextOverflowError(SampleError):
    """The sample's prompt does not fit the model's context window: the endpoint refused it (never retried,
    counted apart from other errors, by this error_type in the report)."""

    error_type = "context_overflow"


class MalformedReply(ToolevalError):
    """The model under test answered 200 with JSON that is no usable chat completion (no choices, a tool call
    without a name, content that is not text, ...), on every attempt: that is what came back, and upstream's
    evaluators score what came back. Not an `InfrastructureError`: the sample fails (run/session.py), and stays
    in its figures' denominators. A suite's `answer` lets it pass through untouched.

    Attributes:
        problem: what was wrong with the reply, as a failure message shows it after "malformed reply: ".
        latency_s: the last attempt's wall time; tokens: the usage the reply reported, if it could be read.
    """

    error_type = "malformed_reply"  # the failing verdict's, in the report

    def __init__(self, where: str, problem: str, attempts: int, *, latency_s: float = 0.0,
                 tokens: dict[str, int] | None = None) -> None:
        times = "once" if attempts == 1 else f"{attempts} times"
        super().__init__(f"{where}: malformed reply: {problem} (asked {times})")
        self.problem = problem
        self.latency_s = latency_s
        self.tokens = dict(tokens or {})


class InternalError(ToolevalError):
    """A suite's own code broke while answering a sample ahead of its test (a bug, not the endpoint's fault):
    the test errors with the original exception's type and message."""


# pytest marks UsageError @final, yet subclassing it is how a plugin gets pytest's one-line message and exit status 4.
class ToolevalUsageError(ToolevalError, pytest.UsageError):  # type: ignore[misc]  # subclassing the @final UsageError on purpose
    """Misconfiguration or missing/broken data: pytest prints the message and exits with status 4."""


class DataError(ToolevalUsageError):  # type: ignore[misc]  # mypy carries UsageError's @final over to subclasses
    """A data file is missing, truncated or malformed; the message names the file (and line)."""
