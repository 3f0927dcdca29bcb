"""The small protocol every model backend implements."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Protocol

from ..errors import InfrastructureError
from ..json_value import JSONObject

__all__ = ["REPEAT", "ChatRequest", "InfrastructureError", "ModelBackend", "Reply", "ToolCall"]

#: which ask of its sample a request belongs to (--tooleval-repeats, repeats.py); set while a sample is answered
REPEAT: ContextVar[int] = ContextVar("tooleval_repeat", default=1)


@dataclass(frozen=True)
class ChatRequest:
    """One chat-completions request, as sent (and as keyed in the cache)."""

    messages: tuple[JSONObject, ...]  # chat messages; assistant `tool_calls` and `tool` results included
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    stop: tuple[str, ...] | None = None
    extra: JSONObject = field(default_factory=dict)
    # the functions the model may call natively, as OpenAI `tools` entries (None: not sent, the text protocol)
    tools: tuple[JSONObject, ...] | None = None
    repeat: int = 1  # the sample's repeat (never sent): its own cache key from the second on


@dataclass(frozen=True)
class ToolCall:
    """One native function call in a reply: the name and the arguments as the model wrote them (JSON text,
    perhaps malformed: the suite judges it)."""

    id: str
    name: str
    arguments: str

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


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
    tool_calls: tuple[ToolCall, ...] = ()  # native calls (a request with `tools`); the text may then be empty
    # the assistant message as the server sent it, every field kept (keys and texts made storable): what a
    # conversation that echoes the message back sends (BFCL multi-turn); None where it was never seen
    message: JSONObject | None = field(default=None, compare=False, repr=False)
    # a reply the response cache served: when it was made (epoch seconds) and the tag of the run that asked it;
    # where an answer came from, not what it says: two replies that say the same are equal
    cached_at: float | None = field(default=None, compare=False)
    cached_run: str | None = field(default=None, compare=False)


class ModelBackend(Protocol):
    name: str

    async def complete(self, request: ChatRequest) -> Reply: ...
