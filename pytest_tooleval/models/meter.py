"""Counting what a sample cost: calls, latency and tokens of one model role over one sample."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from .base import Reply


def reply_tokens(reply: Reply) -> dict[str, int]:
    """The usage the endpoint reported for one reply ({"prompt": n, "completion": m}; absent counts left out)."""
    # reasoning tokens are part of the completion tokens: reported beside them, never added to them
    counts = (("prompt", reply.prompt_tokens), ("completion", reply.completion_tokens),
              ("reasoning", reply.reasoning_tokens))
    return {key: value for key, value in counts if value is not None}


class Meter:
    """A chat function that counts calls, latency and tokens, and hands on the Reply unchanged."""

    def __init__(self, chat: Callable[..., Awaitable[Reply]]) -> None:
        self.chat = chat
        self.calls = 0
        self.latency_s = 0.0
        self.tokens: dict[str, int] = {}

    async def __call__(self, messages: list[dict[str, Any]], **overrides: Any) -> Reply:
        reply = await self.chat(messages, **overrides)
        self.calls += 1
        self.latency_s += reply.latency_s
        for key, value in reply_tokens(reply).items():
            self.tokens[key] = self.tokens.get(key, 0) + value
        return reply

    async def text(self, messages: list[dict[str, str]]) -> str:
        return (await self(messages)).text


def role_tokens(meters: Mapping[str, Meter | None], main: str = "agent") -> dict[str, int]:
    """The token counts of several roles in one dict: the main role's as they are, others as `<role>_<key>`."""
    tokens: dict[str, int] = {}
    for role, meter in meters.items():
        if meter is not None:
            prefix = "" if role == main else f"{role}_"
            tokens.update({prefix + key: value for key, value in meter.tokens.items()})
    return tokens
