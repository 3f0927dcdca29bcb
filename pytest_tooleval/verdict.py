"""The value every scorer returns: what the reference evaluator decided about one sample."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Verdict:
    """Outcome of scoring one sample.

    Attributes:
        valid: the verdict of the official (upstream-faithful) scorer.
        error_type: upstream's error_type string ("" when valid).
        error: upstream-style error details, JSON-safe (list, str or None).
        calls: the decoded calls (JSON-safe), or None when decoding failed.
        process: process accuracy where the category defines one (agent samples), else None.
        fixed_valid: the verdict of the bug-fixed scorer, None where it was not computed.
        details: anything else a report should keep (end-state diffs, per-step flags, ...).
    """

    valid: bool
    error_type: str = ""
    error: Any = None
    calls: Any = None
    process: float | None = None
    fixed_valid: bool | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def passed(self, scorer: str) -> bool:
        """Whether the sample passes under `scorer` ("official" or "fixed"): the one place that decides it. The
        fixed scorer falls back to the official verdict where it computed none."""
        if scorer == "fixed" and self.fixed_valid is not None:
            return self.fixed_valid
        return self.valid
