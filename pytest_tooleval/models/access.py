"""How a suite reaches the model under test: a chat function, recorded outputs, or the oracle."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, cast

from .base import Reply
from .replay import ReplayStore

if TYPE_CHECKING:
    from ..settings.options import Settings
    from .batch import BatchLane

_T = TypeVar("_T")

# messages -> Reply; sampling parameters are bound when the function is built. A live chat function also
# takes keyword overrides for one call: max_tokens (instead of the run's), stop (a tuple of strings), and
# sampling=False (send no temperature, top_p or max_tokens at all, as upstream does for some models).
ChatFn = Callable[..., Awaitable[Reply]]



@dataclass(frozen=True)
class Role:
    """A helper model a suite asks besides the model under test (a simulated user, a tool simulator, a judge).

    Attributes:
        name: the key of its chat function in `ModelAccess.roles`.
        option: the option prefix: `--tooleval-<option>-model` names the model; `-base-url`, `-api-key`,
            `-temperature` and `-max-tokens` are used where the suite declares them.
        sends: request parameters the role always sends: `top_p` replaces the run's, anything else goes into
            the request body as is.
    """

    name: str
    option: str
    # request parameters the role always sends, as its upstream did (e.g. {"top_p": 1, "n": 1}); the rest are
    # the run's or the role's own options
    sends: Mapping[str, Any] = field(default_factory=dict)

    @property
    def model_key(self) -> str:
        return self.option.replace("-", "_") + "_model"

    def setting(self, settings: Settings, field: str) -> object:
        # named at run time, so no type checker can follow it: the caller narrows it (models/access.py role_option)
        return settings.get(f"{self.option.replace('-', '_')}_{field}")

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
    batch: dict[str, BatchLane] | None = None

    @property
    def user_chat(self) -> ChatFn | None:
        return self.roles.get("user")


def access_kind(settings: Settings) -> str:
    """The ModelAccess.kind a run's settings give, without building it (no client is imported)."""
    model = settings.model or ""
    return "oracle" if model == "oracle" else "replay" if model.startswith("replay:") else "chat"


def role_option(role: Role, settings: Settings, field: str, kind: type[_T]) -> _T | None:
    """`--tooleval-<role>-<field>` (`field` "model", "base_url", ...) as a `kind`, or None: unset, or not an option
    the role's suite declares. A role's options are named at run time (`Role.setting`), so mypy cannot check
    them: this checks the value instead."""
    value = role.setting(settings, field)
    if value is None or isinstance(value, kind):
        return value
    if kind is float and isinstance(value, int) and not isinstance(value, bool):  # a default written as 0
        return cast("_T", value)
    raise TypeError(f"--tooleval-{role.option}-{field.replace('_', '-')}: {value!r} is not a {kind.__name__}: "
                    "the suite declares the option with another parser")
