"""How a suite reaches the model under test: a chat function, recorded outputs, or the oracle."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from .base import Reply
from .replay import ReplayStore

# messages -> Reply; sampling parameters are bound when the function is built. A live chat function also
# takes keyword overrides for one call: max_tokens (instead of the run's), stop (a tuple of strings), and
# sampling=False (send no temperature, top_p or max_tokens at all, as upstream does for some models).
ChatFn = Callable[..., Awaitable[Reply]]


@dataclass(frozen=True)
class ModelAccess:
    """What a suite may use to answer one sample.

    Attributes:
        kind: "chat" (a live endpoint, cached), "replay" (recorded outputs) or "oracle" (ground truth).
        chat: the agent/model chat function (kind "chat").
        replay: the recorded outputs (kind "replay").
        roles: chat functions of the helper models a suite uses (the user simulator, a tool simulator, a
            judge), by role name, for the roles the run configured (`--tooleval-<role>-model`).
        model: the model name under test (kind "chat"), for upstream rules that go by name.
        batch: under --tooleval-batch, each role's batch lane ("model" for the model under test), by role
            (models/batch.py): the run's, not the suites'.
    """

    kind: str
    chat: ChatFn | None = None
    replay: ReplayStore | None = None
    roles: dict[str, ChatFn] = field(default_factory=dict)
    model: str = ""
    batch: dict[str, Any] | None = None

    @property
    def user_chat(self) -> ChatFn | None:
        return self.roles.get("user")


def access_kind(settings: Any) -> str:
    """The ModelAccess.kind a run's settings give, without building it (no client is imported)."""
    model = settings.model or ""
    return "oracle" if model == "oracle" else "replay" if model.startswith("replay:") else "chat"
