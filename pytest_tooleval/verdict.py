"""The value every scorer returns: what the reference evaluator decided about one sample."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

#: the details key of a bug-fixed scorer's verdict (--tooleval-scorer fixed); reports before it kept it at the top
FIXED_VALID = "fixed_valid"
# a detail whose key starts with this is kept for the report and its summary, never shown in a failure's text
# (a suite's bookkeeping of a sample, such as BFCL's cost and latency counts)
QUIET_DETAIL = "_"


@dataclass(frozen=True)
class Verdict:
    """Outcome of scoring one sample.

    Attributes:
        valid: the verdict of the official (upstream-faithful) scorer.
        error_type: upstream's error_type string ("" when valid).
        error: upstream-style error details, JSON-safe (list, str or None).
        calls: the decoded calls (JSON-safe), or None when decoding failed.
        process: process accuracy where the category defines one (agent samples), else None.
        details: anything else a report should keep (end-state diffs, per-step flags, ...); a suite with a
            bug-fixed scorer keeps that scorer's verdict under `FIXED_VALID` (ACEBench).
    """

    valid: bool
    error_type: str = ""
    error: object = None
    calls: object = None
    process: float | None = None
    details: Mapping[str, object] = field(default_factory=dict)

    @property
    def fixed(self) -> bool | None:
        """The bug-fixed scorer's verdict (`details[FIXED_VALID]`), or None where the suite computed none."""
        found = self.details.get(FIXED_VALID)
        return found if isinstance(found, bool) else None

    def passed(self, scorer: str) -> bool:
        """Whether the sample passes under `scorer` ("official" or "fixed"): the one place that decides it. The
        fixed scorer falls back to the official verdict where it computed none."""
        if scorer == "fixed" and self.fixed is not None:
            return self.fixed
        return self.valid
