"""The small protocol every model backend implements."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import InfrastructureError

__all__ = ["ChatRequest", "InfrastructureError", "ModelBackend", "Reply"]


@dataclass(frozen=True)
class ChatRequest:
    """One chat-completions request, as sent (and as keyed in the cache)."""

    messages: tuple[dict[str, str], ...]
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    stop: tuple[str, ...] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Reply:
    """A model's answer to one request."""

    text: str
    latency_s: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None  # as the endpoint reported it: "stop", "length", ...; None if absent
    cached: bool = False
    # reasoning the endpoint returned beside the answer (`reasoning_content`, `reasoning`), or a think block
    # taken off the answer (--tooleval-reasoning strip): kept in the report, never scored
    reasoning: str | None = None
    reasoning_tokens: int | None = None  # of the completion tokens, those spent reasoning
    # what the server says answered: its model id and `system_fingerprint` (the endpoint probe records them)
    served_by: str | None = None
    system_fingerprint: str | None = None


class ModelBackend(Protocol):
    name: str

    async def complete(self, request: ChatRequest) -> Reply: ...
