"""The plugin's errors, one hierarchy: each prints as one line, without a traceback.

A usage error stops the run (exit status 4); the others end one sample as an error of its test, never as a
score.
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


class InternalError(ToolevalError):
    """A suite's own code broke while answering a sample ahead of its test (a bug, not the endpoint's fault):
    the test errors with the original exception's type and message."""


# pytest marks UsageError @final, yet subclassing it is how a plugin gets pytest's one-line message and exit status 4.
class ToolevalUsageError(ToolevalError, pytest.UsageError):  # type: ignore[misc]  # subclassing the @final UsageError on purpose
    """Misconfiguration or missing/broken data: pytest prints the message and exits with status 4."""


class DataError(ToolevalUsageError):  # type: ignore[misc]  # mypy carries UsageError's @final over to subclasses
    """A data file is missing, truncated or malformed; the message names the file (and line)."""
