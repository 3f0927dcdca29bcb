"""The one shape every model the suite talks to has: an async function from chat messages to text.

The agent, the API simulator, the getDetails user, the retrieval helper and the judge are all injected as
such functions, so episodes run the same against a live endpoint, a replay, or a scripted test double. A
function may return a plain string or a `Reply` (whose token counts the simulator's cache rule uses).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ...models.base import Reply

__all__ = ["Answer", "ModelFn", "ask"]

Messages = list[dict[str, str]]
ModelFn = Callable[[Messages], Awaitable[str | Reply]]


@dataclass(frozen=True)
class Answer:
    text: str
    total_tokens: int | None  # prompt + completion, when the backend reported both


async def ask(model: ModelFn, messages: Messages) -> Answer:
    result = await model([dict(message) for message in messages])  # a copy: callers keep their own history
    if isinstance(result, str):
        return Answer(result, None)
    total = None
    if result.prompt_tokens is not None and result.completion_tokens is not None:
        total = result.prompt_tokens + result.completion_tokens
    return Answer(result.text, total)
