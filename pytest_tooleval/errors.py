"""Errors a user can act on: each prints as one line, without a traceback."""

from __future__ import annotations

import pytest


class ToolevalUsageError(pytest.UsageError):
    """Misconfiguration or missing/broken data: pytest prints the message and exits with status 4."""


class DataError(ToolevalUsageError):
    """A data file is missing, truncated or malformed; the message names the file (and line)."""
