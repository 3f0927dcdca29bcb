"""Errors a user can act on: each prints as one line, without a traceback."""

from __future__ import annotations

import pytest


# pytest marks UsageError @final, yet subclassing it is how a plugin gets pytest's one-line message and exit status 4.
class ToolevalUsageError(pytest.UsageError):  # type: ignore[misc]  # subclassing the @final UsageError on purpose
    """Misconfiguration or missing/broken data: pytest prints the message and exits with status 4."""


class DataError(ToolevalUsageError):  # type: ignore[misc]  # mypy carries UsageError's @final over to subclasses
    """A data file is missing, truncated or malformed; the message names the file (and line)."""
