"""How far the answering is: the snapshot the answering pool produces and the one line the status line shows."""

from __future__ import annotations

from dataclasses import dataclass

from ..text import counted


@dataclass(frozen=True)
class Progress:
    total: int
    answered: int
    in_flight: int  # samples being answered (each may wait for a request slot)
    resting: int  # requests waiting out a retry delay
    errors: int
    tokens: int
    elapsed_s: float
    live: int = 0  # answered samples that asked the endpoint (the rest came whole from the response cache)
    live_s: float = 0.0  # seconds from the first such answer's start to the latest
    requests: int | None = None  # HTTP requests on the wire now
    timeouts: int = 0  # attempts that timed out so far
    limit: int | None = None  # the model's in-flight limit now (models/limits.py)
    limit_reason: str | None = None  # why it last came down

    @property
    def eta_s(self) -> float | None:
        """Over the answers the endpoint gave: cached ones come at once and say nothing of the rest."""
        if not self.live or self.answered >= self.total:
            return None
        return max(self.live_s, 1e-9) / self.live * (self.total - self.answered)


def render(progress: Progress) -> str:
    """One line (pure)."""
    eta = progress.eta_s
    parts = [f"tooleval: {progress.answered}/{progress.total} answered"]
    if progress.requests is None:
        parts.append(f"{progress.in_flight} in flight")
    else:
        limit = "" if progress.limit is None else (
            f" (limit {progress.limit}" + ("" if progress.limit_reason is None else f": {progress.limit_reason}") + ")")
        parts.append(f"{counted(progress.requests, 'request')} in flight{limit}")
    parts.append(f"{progress.resting} retrying")
    if progress.timeouts:
        parts.append(f"{progress.timeouts} timed out")
    parts += [counted(progress.errors, "error"), f"{progress.tokens:,} tokens", f"{progress.elapsed_s:.0f} s"]
    return ", ".join(parts) + ("" if eta is None else f", ETA {eta:.0f} s")
