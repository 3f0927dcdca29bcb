"""Counting what a sample cost: calls, latency and tokens of one model role over one sample."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field

from .base import Reply


def reply_tokens(reply: Reply) -> dict[str, int]:
    """The usage the endpoint reported for one reply ({"prompt": n, "completion": m}; absent counts left out)."""
    # reasoning tokens are part of the completion tokens: reported beside them, never added to them
    counts = (("prompt", reply.prompt_tokens), ("completion", reply.completion_tokens),
              ("reasoning", reply.reasoning_tokens))
    return {key: value for key, value in counts if value is not None}


# The tokens of the replies the response cache served while one sample was answered (session.py sets a fresh
# dict per sample; the tasks a suite starts share it): those were paid for by an earlier run, not this one.
SERVED_FROM_CACHE: ContextVar[dict[str, int] | None] = ContextVar("served_from_cache", default=None)


def token_prefix(role: str) -> str:
    """The prefix of a role's keys in a sample's tokens ("" for the model under test, "judge_" for the judge)."""
    return "" if role == "model" else f"{role}_"


def note_served_from_cache(role: str, reply: Reply) -> None:
    """Count a cached reply's tokens for the sample being answered, if one is."""
    served = SERVED_FROM_CACHE.get()
    if served is not None and reply.cached:
        for key, value in reply_tokens(reply).items():
            served[token_prefix(role) + key] = served.get(token_prefix(role) + key, 0) + value


@dataclass
class SampleReplies:
    """How the replies of one sample ended, every role's: session.py sets a fresh one per sample (the tasks a
    suite starts share it) and puts what it learnt on the sample's Answer."""

    finish_reasons: dict[str, list[str | None]] = field(default_factory=dict)  # role -> each reply's, in order
    with_tools: int = 0  # replies to requests that offered `tools`
    tool_called: int = 0  # of those, the replies with a tool call
    # every role's tokens (keys as a sample's: `token_prefix`) and latency: what a sample whose suite never
    # returned an answer (a malformed reply, errors.MalformedReply) still cost
    tokens: dict[str, int] = field(default_factory=dict)
    latency_s: float = 0.0
    asked: int = 0  # replies the endpoint gave in this run
    cached: int = 0  # replies the response cache served
    oldest_cached: float | None = None  # when the oldest of those was made
    cached_runs: set[str] = field(default_factory=set)  # the tags of the runs that asked them (models/cache.py)

    def count(self, role: str, tokens: Mapping[str, int], latency_s: float) -> None:
        """Add one reply's tokens and latency."""
        for key, value in tokens.items():
            self.tokens[token_prefix(role) + key] = self.tokens.get(token_prefix(role) + key, 0) + value
        self.latency_s += latency_s

    def source(self) -> str | None:
        """Where the sample's answer came from: "asked" when any reply was asked in this run, "cache" when the
        response cache served every one; None when no model was asked (a suite's own refusal, say)."""
        if self.asked:
            return "asked"
        return "cache" if self.cached else None

    def finish_reason(self) -> str | None:
        """The model under test's finish reason, when it was asked once."""
        reasons = self.finish_reasons.get("model") or []
        return reasons[0] if len(reasons) == 1 else None

    def cut(self) -> dict[str, int]:
        """Per role, the replies that stopped at max_tokens (finish_reason "length"); roles with none left out."""
        return {role: count for role, reasons in self.finish_reasons.items() if (count := reasons.count("length"))}

    def tool_answers(self) -> dict[str, int]:
        """{"asked": requests with tools, "called": replies with a tool call}, or {} when no request had tools."""
        return {"asked": self.with_tools, "called": self.tool_called} if self.with_tools else {}


SAMPLE_REPLIES: ContextVar[SampleReplies | None] = ContextVar("sample_replies", default=None)


def note_reply(role: str, reply: Reply, *, offered_tools: bool) -> None:
    """Count how one reply ended for the sample being answered, if one is."""
    replies = SAMPLE_REPLIES.get()
    if replies is None:
        return
    replies.finish_reasons.setdefault(role, []).append(reply.finish_reason)
    if reply.cached:
        replies.cached += 1
        if reply.cached_at is not None:
            replies.oldest_cached = min(reply.cached_at, replies.oldest_cached or reply.cached_at)
        if reply.cached_run is not None:
            replies.cached_runs.add(reply.cached_run)
    else:
        replies.asked += 1
    replies.count(role, reply_tokens(reply), reply.latency_s)
    if offered_tools:
        replies.with_tools += 1
        replies.tool_called += bool(reply.tool_calls)


def asked_tokens(tokens: Mapping[str, int], cached: Mapping[str, int], batched: str | None = None) -> dict[str, int]:
    """A sample's tokens less those the response cache served. The batched role's (`batched`, its prefix) stay:
    this run's batch put them in the cache, and they were paid at the batch price."""
    return {key: value if role_prefix(key) == batched else max(0, value - int(cached.get(key, 0)))
            for key, value in tokens.items()}


def role_prefix(key: str) -> str:
    """The role prefix of a token key: "judge_" of "judge_prompt", "" of "completion"."""
    for suffix in ("prompt", "completion", "reasoning"):
        if key.endswith(suffix):
            return key[: -len(suffix)]
    return key


class Meter:
    """A chat function that counts calls, latency and tokens, and hands on the Reply unchanged."""

    def __init__(self, chat: Callable[..., Awaitable[Reply]]) -> None:
        self.chat = chat
        self.calls = 0
        self.latency_s = 0.0
        self.tokens: dict[str, int] = {}

    async def __call__(self, messages: Sequence[Mapping[str, object]], **overrides: object) -> Reply:
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


Prices = dict[str, tuple[float, float]]  # model -> (input, output) price per million tokens
BATCH_PRICE_SHARE = 0.5  # a request answered through the Batch API costs half (OpenAI's batch price)


def row_cost(tokens: Mapping[str, float], role_models: dict[str, str | None], prices: Prices,
             batched: str | None = None) -> float | None:
    """The estimated price of one sample's tokens: each role's prompt and completion tokens at its model's price
    (`role_models`: token-key prefix -> model, "" for the model under test); None when a model has no price.
    `batched`: the token-key prefix of the role whose request the Batch API answered (--tooleval-batch), at
    BATCH_PRICE_SHARE of the price."""
    cost = 0.0
    for key, value in tokens.items():
        for suffix, side in (("prompt", 0), ("completion", 1)):
            if key.endswith(suffix):
                prefix = key[: -len(suffix)]
                model = role_models.get(prefix)
                if model is None or model not in prices:
                    return None
                share = BATCH_PRICE_SHARE if batched is not None and prefix == batched else 1.0
                cost += int(value) * prices[model][side] * share / 1e6
    return cost
