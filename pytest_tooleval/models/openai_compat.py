"""Any OpenAI-compatible chat-completions endpoint, asked through the official async client.

We own the retries (the client gets `max_retries=0`): one `classify(exc)` table decides whether a failure is
transient, a rate limit, or permanent, and `OpenAIBackend.complete` backs off with full jitter, honouring
`Retry-After`. Whatever cannot be answered ends as `InfrastructureError`, whose message never carries the API key;
a reply that came back, every time, as JSON that is no usable completion ends as `MalformedReply`: the model's
answer, which its sample fails.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
import os
import random
import re
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

import openai

from ..data.files import unreadable_json
from ..errors import ContextOverflowError, MalformedReply, NotAsked
from ..json_value import JSONObject, JSONValue
from ..settings.credentials import MASK, MIN_SECRET_CHARS, redact, redact_all, url_credentials
from ..text import counted, plain_text
from .base import ChatRequest, InfrastructureError, Reply, ToolCall
from .breaker import DEAD, NO_QUOTA, Breaker
from .limits import SLOW_START_FROM, AdaptiveLimit, Resting, SharedRateLimiter, estimate_tokens

__all__ = [
    "DEFAULT_BASE_URL",
    "MalformedResponse",
    "OpenAIBackend",
    "RetryDecision",
    "classify",
    "endpoint_label",
    "no_quota",
    "parse_retry_after",
    "redact",
]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Sent when no key is configured: local servers (vLLM, llama.cpp, ...) accept anything, and a real endpoint
# answers 401, which we report with a hint rather than failing before the first request.
_NO_KEY = "EMPTY"
RATE_LIMIT_RETRY_FACTOR = 4  # 429s may be retried this many times --tooleval-max-retries
_DETAIL_CHARS = 300  # server error bodies can be megabytes; the message keeps their start


@dataclass(frozen=True)
class RetryDecision:
    """What to do about one failed attempt (after inspect_ai's three-way RetryDecision)."""

    kind: Literal["transient", "rate_limit", "permanent"]
    reason: str
    retry_after: float | None = None  # seconds the server asked us to wait, if it said

    @classmethod
    def transient(cls, reason: str, retry_after: float | None = None) -> RetryDecision:
        return cls("transient", reason, retry_after)

    @classmethod
    def rate_limit(cls, reason: str, retry_after: float | None = None) -> RetryDecision:
        return cls("rate_limit", reason, retry_after)

    @classmethod
    def permanent(cls, reason: str) -> RetryDecision:
        return cls("permanent", reason)

    @property
    def retryable(self) -> bool:
        return self.kind != "permanent"


class MalformedResponse(Exception):
    """The endpoint answered 2xx with JSON that is not a usable chat completion (no choices, bad shape): retried,
    and, when it stays so, the model's answer (`MalformedReply`)."""


class UnreadableBody(Exception):
    """The body is JSON Python's decoder will not read (nested too deeply, an integer too long): like a body cut
    off, the transport's fault, retried and then an error, never an answer."""


class ErrorInBody(Exception):
    """The endpoint answered 200 with an `error` object and no choices: a server's failure sent with the wrong
    status (OpenRouter sends a provider's failure so, once it has sent its 200), not an answer."""


def classify(exc: BaseException, *, now: Callable[[], float] = time.time) -> RetryDecision:
    """The one retry table: 408, 409, 429, 5xx, timeouts, connection errors and garbage bodies are retried.

    Any other 4xx is permanent: asking again with the same key and body cannot change the answer. So is an
    account out of quota (`no_quota`), whatever its status, 429 included: its reason stops the run
    (models/breaker.py).
    """
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        if no_quota(exc):
            return RetryDecision.permanent(NO_QUOTA)
        retry_after = parse_retry_after(exc.response.headers, now=now)
        if status == 429:
            return RetryDecision.rate_limit(f"HTTP {status}", retry_after)
        if status in (408, 409) or status >= 500:
            return RetryDecision.transient(f"HTTP {status}", retry_after)
        return RetryDecision.permanent(f"HTTP {status}")
    if isinstance(exc, openai.APITimeoutError):  # before its base class, APIConnectionError
        return RetryDecision.transient("timed out")
    if isinstance(exc, openai.APIConnectionError):
        return RetryDecision.transient("connection error")
    # A 200 whose JSON is no completion is retried (a passing glitch heals); `complete` makes one that stays so
    # the model's answer. A body cut off or not UTF-8 never arrived whole: the transport's fault, as is an error
    # sent with a 200; retried, then an error, never an answer.
    if isinstance(exc, (MalformedResponse, openai.APIResponseValidationError)):
        return RetryDecision.transient("malformed response")
    if isinstance(exc, (json.JSONDecodeError, UnicodeDecodeError, UnreadableBody)):
        return RetryDecision.transient("malformed response body")
    if isinstance(exc, ErrorInBody):
        return RetryDecision.transient("error in a 200 body")
    return RetryDecision.permanent(type(exc).__name__)


# error codes (or types) that say the key's account has run out: OpenAI's 429s insufficient_quota and
# billing_not_active, and the like of other providers
_QUOTA_CODES = frozenset({"insufficient_quota", "billing_not_active", "billing_hard_limit_reached",
                          "insufficient_credits", "insufficient_balance", "insufficient_funds"})
# what a 403 says of an account without quota, credits or billing
_QUOTA_WORDS = re.compile(r"insufficient[ _]?(?:quota|credits?|balance|funds)|exceeded your current quota|"
                          r"credit balance is too low|out of credits|billing", re.IGNORECASE)
# what a 400 says of it (Anthropic's): only these words, as a 400 may quote the request, whose tools or
# messages can speak of balances and billing
_CREDIT_TOO_LOW = re.compile(r"credit balance is too low", re.IGNORECASE)


def no_quota(exc: BaseException) -> bool:
    """Whether an error status says the key's account has no quota, credits or billing left: any 402 (Payment
    Required: OpenRouter's "Insufficient credits", DeepSeek's "Insufficient Balance"), a 4xx whose error code or
    type says so (OpenAI's 429 insufficient_quota), a 403 whose message does, or a 400 saying the credit balance
    is too low (Anthropic's). A 429's words alone are not enough: Gemini's per-minute limits also say "You
    exceeded your current quota", and pass."""
    if not isinstance(exc, openai.APIStatusError) or not 400 <= exc.status_code < 500:
        return False
    if exc.status_code == 402:
        return True
    said = {str(value).lower() for value in (exc.code, getattr(exc, "type", None)) if value}
    if said & _QUOTA_CODES:
        return True
    words = {403: _QUOTA_WORDS, 400: _CREDIT_TOO_LOW}.get(exc.status_code)
    return words is not None and bool(words.search(_error_message(exc)))


def parse_retry_after(headers: Mapping[str, str], *, now: Callable[[], float] = time.time) -> float | None:
    """Seconds to wait from `retry-after-ms`, or `Retry-After` as seconds or an HTTP date; None if absent/invalid."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            continue
        return max(seconds, 0.0) if math.isfinite(seconds) else None
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(when.timestamp() - now(), 0.0)


def endpoint_label(base_url: str) -> str:
    """host[:port]/path of an endpoint: what messages and cache keys name (never userinfo, query or key)."""
    parts = urlsplit(base_url)
    host = (parts.hostname or "").lower()
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return host + parts.path.rstrip("/")


@dataclass(frozen=True)
class _Answer:
    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    finish_reason: str | None
    reasoning: str | None = None
    reasoning_tokens: int | None = None
    served_by: str | None = None
    system_fingerprint: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    message: JSONObject | None = None


@dataclass(frozen=True)
class _Failure:
    # Only strings: the exception itself (whose text may echo the key) must not outlive the except block.
    decision: RetryDecision
    detail: str
    unsupported: str | None = None  # a sampling parameter the model refused (a 400 naming it)
    overflow: bool = False  # the prompt does not fit the model's context
    malformed: str | None = None  # what was wrong with a 200 whose JSON is no usable completion
    tokens: dict[str, int] | None = None  # the usage such a reply reported, if it could be read


@dataclass
class _LoopState:
    client: openai.AsyncOpenAI
    slots: AdaptiveLimit


Sleep = Callable[[float], Awaitable[None]]


class OpenAIBackend:
    """A `ModelBackend` for any OpenAI-compatible chat-completions endpoint.

    The client and the concurrency limit are created lazily, one per event loop, so the backend may be used
    from several loops in turn (pytest-asyncio's loop per test, an engine thread's loop). Call `aclose()` in
    each loop you used it from, or use it as `async with`. `Reply.latency_s` is the wall time of the attempt
    that answered, excluding waits for a concurrency slot and backoff.

    Args:
        model: the model id sent with every request.
        base_url: the endpoint, e.g. http://localhost:8000/v1; default $OPENAI_BASE_URL, then api.openai.com.
        api_key: default $OPENAI_API_KEY; without one, a placeholder is sent (local servers ignore it).
        timeout: seconds for one attempt, from sending the request to the last byte of the answer.
        max_retries: retries after the first attempt, so 6 allows seven attempts in all.
        max_concurrency: the most requests in flight at once from this backend instance in one event loop; a
            request holds its slot only while on the wire, not while backing off. Below it the limit adapts to
            the endpoint (models/limits.py).
        slow_start: begin at two requests in flight and grow while latency stays flat (the default); False
            begins at max_concurrency (an endpoint known to take it).
        backoff_base_s, backoff_cap_s: the n-th retry waits uniform(0, min(cap, base * 2**n)) ("full jitter").
        max_retry_after_s: a server's `Retry-After` is honoured up to this many seconds.
        sleep: awaited for every backoff; tests pass a recorder.
        rng: the jitter's random source (seed it for reproducible waits).
        name: the label reports use; default the model id.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 6,
        max_concurrency: int = 16,
        backoff_base_s: float = 0.5,
        backoff_cap_s: float = 60.0,
        max_retry_after_s: float = 60.0,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
        name: str | None = None,
        rate_limiter: SharedRateLimiter | None = None,
        resting: Resting | None = None,
        breaker: Breaker | None = None,
        slow_start: bool = True,
    ) -> None:
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
        self.model = model
        self.name = name or model
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        self.endpoint = endpoint_label(self.base_url)
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_concurrency = max_concurrency
        self.slow_start = slow_start
        self.backoff_base_s = backoff_base_s
        self.backoff_cap_s = backoff_cap_s
        self.max_retry_after_s = max_retry_after_s
        self._key_given = bool(api_key or os.environ.get("OPENAI_API_KEY"))
        self._api_key = api_key or os.environ.get("OPENAI_API_KEY") or _NO_KEY
        # what must never be written: the key, and the user:password of the URL (sent as Basic auth)
        self._secrets = [self._api_key, *url_credentials(self.base_url)]
        self._sleep = sleep
        self._rng = rng or random.Random()
        self.rate_limiter = rate_limiter
        self.resting = resting or Resting()
        self.breaker = breaker  # the process's: stops the run when this endpoint is dead from the start
        self.label = f"model {model!r} at {self.endpoint}"  # how messages, the breaker and reports name it
        # what this model refused, learned from its 400s once for the run: parameter -> what is sent instead
        self.adaptations: dict[str, str] = {}
        # what the endpoint says it serves under this model's name (models/served.py), once asked: part of the
        # cache keys; and the system_fingerprint its probe answer carried, which a cached answer must share
        self.served: JSONObject | None = None
        self.fingerprint: str | None = None
        self.sent = 0  # HTTP attempts, retries included (the run's totals)
        self.retried = 0
        self.timed_out = 0  # attempts that hit --tooleval-timeout
        self._states: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState] = weakref.WeakKeyDictionary()
        self._states_lock = threading.Lock()  # loops in different threads may each create their state

    def __repr__(self) -> str:  # no key: reprs end up in tracebacks and `pytest -l` locals
        return f"OpenAIBackend(model={self.model!r}, endpoint={self.endpoint!r})"

    def cache_identity(self) -> JSONObject:
        """What distinguishes this backend's answers in a response cache: never the key."""
        identity: JSONObject = {"backend": "openai", "model": self.model, "endpoint": self.endpoint}
        if self.served is not None:
            identity["served"] = self.served
        return identity

    # -- asking ------------------------------------------------------------------------------------------

    async def complete(self, request: ChatRequest) -> Reply:
        state = self._state()
        params = self._adapted(self._params(request))
        failure: _Failure | None = None
        retries = {"transient": 0, "rate_limit": 0}
        attempts = 0
        latency_s = 0.0
        while True:
            if self.breaker is not None and (stopped := self.breaker.tripped(self.label)):
                # the run is stopping: no more requests to a dead endpoint; one never sent is not an error
                raise (InfrastructureError if attempts else NotAsked)(stopped)
            if failure is not None:
                kind = failure.decision.kind
                # a rate limit is the endpoint pacing us, not failing: it gets a larger budget of retries
                budget = self.max_retries * (RATE_LIMIT_RETRY_FACTOR if kind == "rate_limit" else 1)
                if retries[kind] >= budget:
                    break
                self.resting.count += 1
                try:
                    await self._sleep(self.retry_delay(retries[kind], failure.decision))
                finally:
                    self.resting.count -= 1
                retries[kind] += 1
                self.retried += 1
            estimate = estimate_tokens(request.messages, request.tools) if self.rate_limiter else 0
            if self.rate_limiter is not None:
                await self.rate_limiter.acquire(estimate)
            timed_out = failure is not None and failure.decision.reason == "timed out"
            slot = await state.slots.acquire(after_timeout=timed_out)
            try:
                if self.breaker is not None and (stopped := self.breaker.tripped(self.label)):
                    raise (InfrastructureError if attempts else NotAsked)(stopped)  # it tripped while this waited
                started = time.perf_counter()
                outcome = await self._attempt(state.client, params)
                latency_s = time.perf_counter() - started
            finally:
                state.slots.release()
            attempts += 1
            self.sent += 1
            if isinstance(outcome, _Answer):
                if self.breaker is not None:
                    self.breaker.answered(self.label)
                state.slots.on_success(slot, latency_s)
                if self.rate_limiter is not None:
                    used = (outcome.prompt_tokens or 0) + (outcome.completion_tokens or 0)
                    self.rate_limiter.settle(estimate, used or None)
                return self._reply(outcome, latency_s)
            failure = outcome
            if failure.unsupported is not None:
                self._learn(failure.unsupported)  # perhaps learned already, by a request sent at the same time
                adapted = self._adapted(params)
                if adapted != params:
                    params, failure = adapted, None  # the same request again, as the model takes it: not a retry
                    continue
            if self.breaker is not None and self.breaker.failed(self.label, failure.decision.reason,
                                                                failure.detail[:160], self.retry_budget_s):
                continue  # tripped: the check at the top of the loop ends this request too
            if failure.decision.kind == "rate_limit":
                state.slots.on_rate_limited(slot)  # fewer requests in flight from this process for a while
            elif failure.decision.reason == "timed out":
                self.timed_out += 1
                state.slots.on_timeout(slot)  # queued at the server too long: fewer in flight
            if not failure.decision.retryable:
                break
        assert failure is not None
        # Raised outside any except block: no __context__ chain can carry the client's exception text.
        if failure.malformed is not None:  # the last attempt too came back so: that is the model's answer
            raise MalformedReply(self.label, failure.malformed, attempts, latency_s=latency_s,
                                 tokens=failure.tokens)
        if failure.overflow:
            size = estimate_tokens(request.messages, request.tools)
            raise ContextOverflowError(
                f"model {self.model!r} at {self.endpoint}: the prompt (about {size:,} "
                f"tokens) does not fit the model's context: {failure.detail}")
        raise InfrastructureError(self._message(failure, attempts))

    def in_flight(self) -> int:
        """Requests on the wire now, from every loop (read from another thread: a snapshot, not a lock)."""
        return sum(state.slots.in_use for state in list(self._states.values()))

    def concurrency(self) -> JSONObject | None:
        """How the in-flight limit moved (models/limits.py): ceiling, now, peak and every cut with its reason,
        for the busiest loop (the engine's; a pytest-asyncio loop per test sees a request or two); None before
        any request."""
        states = list(self._states.values())
        if not states:
            return None
        slots = max((state.slots for state in states), key=lambda limit: (len(limit.changes), limit.peak))
        return {"endpoint": self.label, "ceiling": slots.maximum, "limit": int(slots.limit), "peak": slots.peak,
                "timeouts": slots.timeouts,
                "cuts": [{"at_s": change.at_s, "from": change.before, "to": change.after, "reason": change.reason}
                         for change in slots.changes]}

    # -- the Batch API (models/batch.py) --------------------------------------------------------------------

    def request_body(self, request: ChatRequest) -> JSONObject:
        """The JSON body `complete` would send for `request` (what a batch line carries)."""
        params = self._adapted(self._params(request))
        extra: JSONObject = params.pop("extra_body", None) or {}  # _params puts a dict there, if anything
        return {**params, **extra}

    def reply_from_completion(self, completion: JSONValue) -> Reply:
        """A chat completion as a batch's output file holds it, read as `complete` reads an answer;
        MalformedResponse when it is not one."""
        return self._reply(_extract(completion), 0.0)

    def client(self) -> openai.AsyncOpenAI:
        """The running loop's client (the files and batches endpoints are asked through it)."""
        return self._state().client

    async def warm(self) -> None:
        """Make the running loop's client, and load the chat and model-list resources it loads on first use, so
        that a first request sent next leaves at once (the probe, while the main thread collects)."""
        client = self.client()
        _ = client.chat.completions, client.models

    def redact(self, text: str) -> str:
        """`text` without the key or the URL's credentials (an error message of the files endpoints, say)."""
        return redact_all(text, self._secrets)

    @property
    def retry_budget_s(self) -> float:
        """The longest a transient failure's retries may wait in all: the backoff ceilings of max_retries retries."""
        return sum(min(self.backoff_cap_s, self.backoff_base_s * 2.0 ** retry) for retry in range(self.max_retries))

    def retry_delay(self, retry: int, decision: RetryDecision) -> float:
        """Seconds before retry number `retry` (0-based): the server's Retry-After (capped), else full jitter."""
        if decision.retry_after is not None:
            return min(decision.retry_after, self.max_retry_after_s)
        ceiling = min(self.backoff_cap_s, self.backoff_base_s * 2.0 ** min(retry, 64))
        return self._rng.uniform(0.0, ceiling)

    async def _attempt(self, client: openai.AsyncOpenAI, params: dict[str, Any]) -> _Answer | _Failure:
        body: JSONValue = None
        try:
            # the raw body, read as JSON: building the SDK's typed objects cost a fifth of each request's CPU.
            # The client's timeout bounds each read; this deadline bounds the whole request, so that a body
            # trickling in a byte at a time is a timeout too.
            response = await asyncio.wait_for(client.chat.completions.with_raw_response.create(**params),
                                              self.timeout)
            try:
                body = json.loads(response.content)
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise
            except (RecursionError, ValueError) as exc:  # nested too deeply, an integer too long: garbage too
                raise UnreadableBody(f"the body holds {unreadable_json(exc)}") from None
            return _extract(body)
        except asyncio.TimeoutError:
            return _Failure(RetryDecision.transient("timed out"), "the request timed out")
        except MalformedResponse as exc:  # whole JSON, yet no answer: retried, then the model's answer
            problem = str(exc)  # our own words, naming types and positions: nothing of the reply's text
            usage = body.get("usage") if isinstance(body, dict) else None
            return _Failure(classify(exc), f"malformed response: {problem}", malformed=problem,
                            tokens=_usage_tokens(usage))
        except (openai.OpenAIError, ErrorInBody, UnreadableBody, json.JSONDecodeError, UnicodeDecodeError) as exc:
            detail = " ".join(describe(exc).split())  # HTML error pages from proxies arrive multi-line
            return _Failure(classify(exc), redact_all(detail, self._secrets)[:_DETAIL_CHARS],
                            unsupported_parameter(exc), context_overflow(exc))

    def _learn(self, parameter: str) -> None:
        """The model refuses `parameter`: send what it takes instead for the rest of the run."""
        self.adaptations.setdefault(parameter, ADAPTATIONS.get(parameter, "left out"))

    def _adapted(self, params: dict[str, Any]) -> dict[str, Any]:
        """`params` as this model takes them (reasoning models: max_completion_tokens, default sampling)."""
        if not self.adaptations:
            return params
        adapted = dict(params)
        for parameter, instead in self.adaptations.items():
            if parameter in adapted:
                value = adapted.pop(parameter)
                if instead == "max_completion_tokens":
                    adapted["max_completion_tokens"] = value
        return adapted

    def _reply(self, outcome: _Answer, latency_s: float) -> Reply:
        """An answer as the plugin keeps it: every text of it, down to a tool call's name and id and the finish
        reason, through `_reply_text` (the edge where the endpoint's words enter the run)."""
        return Reply(
            text=self._reply_text(outcome.text),
            latency_s=latency_s,
            prompt_tokens=outcome.prompt_tokens,
            completion_tokens=outcome.completion_tokens,
            finish_reason=self._optional_text(outcome.finish_reason),
            reasoning=self._optional_text(outcome.reasoning),
            reasoning_tokens=outcome.reasoning_tokens,
            served_by=self._optional_text(outcome.served_by),
            system_fingerprint=self._optional_text(outcome.system_fingerprint),
            tool_calls=tuple(ToolCall(self._reply_text(call.id), self._reply_text(call.name),
                                      self._reply_text(call.arguments)) for call in outcome.tool_calls),
            message=None if outcome.message is None else self._reply_json(outcome.message),
        )

    def _reply_json(self, message: JSONObject) -> JSONObject | None:
        """The message with every text, keys too, through `_reply_text`; None when it is nested too deeply to
        walk (it could not be stored or sent back either)."""
        def clean(value: JSONValue) -> JSONValue:
            if isinstance(value, str):
                return self._reply_text(value)
            if isinstance(value, dict):
                return {self._reply_text(key): clean(item) for key, item in value.items()}
            if isinstance(value, list):
                return [clean(item) for item in value]
            return value

        try:
            cleaned = clean(message)
        except RecursionError:
            return None
        return cleaned if isinstance(cleaned, dict) else None

    def _optional_text(self, text: str | None) -> str | None:
        return None if text is None else self._reply_text(text)

    def _reply_text(self, text: str) -> str:
        """The answer as data every later step can keep: what JSON may carry but Unicode may not (a lone
        surrogate, which sqlite and UTF-8 files refuse) becomes U+FFFD, and the configured key, should the
        endpoint echo it as the answer, becomes ***. A short key is a placeholder (EMPTY, none), not a secret,
        and may well be a word of a real answer: it is left alone."""
        text = plain_text(text)
        for secret in self._secrets if self._key_given else self._secrets[1:]:
            if len(secret) >= MIN_SECRET_CHARS:
                text = text.replace(secret, MASK)
        return text

    def _params(self, request: ChatRequest) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.model, "messages": [dict(m) for m in request.messages]}
        for name in ("temperature", "top_p", "max_tokens"):
            value = getattr(request, name)
            if value is not None:
                params[name] = value
        if request.stop:
            params["stop"] = list(request.stop)
        if request.tools is not None:
            params["tools"] = list(request.tools)
            # OpenAI's default when tools are sent, spelled out: llama-cpp-python leaves the tools out of the
            # prompt without it (issue 26). Not in the cache key: every request with tools carries it.
            params["tool_choice"] = "auto"
        if request.extra:
            # extra_body is merged into the JSON body as is: provider-specific knobs (seed, top_k, ...) pass
            # through without the client validating their names.
            params["extra_body"] = dict(request.extra)
        return params

    def _message(self, failure: _Failure, attempts: int) -> str:
        where = f"model {self.model!r} at {self.endpoint}"
        decision = failure.decision
        if decision.retryable:
            text = f"{where}: gave up after {counted(attempts, 'attempt')}; last error: {failure.detail}"
        elif decision.reason == NO_QUOTA:
            text = f"{where}: {failure.detail} (not retried: {DEAD[NO_QUOTA]})"
        else:
            text = (
                f"{where}: {failure.detail} (not retried: only 408, 409, 429, 5xx, timeouts, "
                "connection errors and malformed responses are)"
            )
        if decision.reason == "timed out":
            text += f" (timeout {self.timeout:g} s per attempt)"
        if decision.reason == "HTTP 401" and not self._key_given:
            text += "; no API key was configured (set OPENAI_API_KEY or pass one)"
        return redact_all(text, self._secrets)

    # -- per-loop client ---------------------------------------------------------------------------------

    def _state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        with self._states_lock:
            state = self._states.get(loop)
            if state is None:
                for old in [old for old in self._states if old.is_closed()]:
                    del self._states[old]  # a closed loop cannot run the client's close; let it go
                client = openai.AsyncOpenAI(
                    api_key=self._api_key, base_url=self.base_url, timeout=self.timeout, max_retries=0
                )
                slots = AdaptiveLimit(self.max_concurrency, start=SLOW_START_FROM if self.slow_start else None)
                state = self._states[loop] = _LoopState(client, slots)
        return state

    async def aclose(self) -> None:
        """Close the client of the running loop; a later call creates a fresh one."""
        with self._states_lock:
            state = self._states.pop(asyncio.get_running_loop(), None)
        if state is not None:
            await state.client.close()

    async def __aenter__(self) -> OpenAIBackend:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _extract(completion: JSONValue) -> _Answer:
    # Compatible servers omit or mistype fields, so any shape can arrive: check what we use.
    if not isinstance(completion, dict):
        raise MalformedResponse(f"the response is a JSON {type(completion).__name__}, not an object")
    choices = completion.get("choices")
    if not isinstance(choices, list) or not choices:
        error = completion.get("error")
        if isinstance(error, dict):
            message = error.get("message")
            said = message if isinstance(message, str) and message else json.dumps(error)[:_DETAIL_CHARS]
            code = error.get("code")
            raise ErrorInBody(f"{said} (code {code})" if isinstance(code, (str, int)) and code != "" else said)
        raise MalformedResponse("the response has no choices")
    first: JSONObject = choices[0] if isinstance(choices[0], dict) else {}  # then it has no message
    message = first.get("message")
    if not isinstance(message, dict):
        raise MalformedResponse("the first choice has no message")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise MalformedResponse(f"the message content is a {type(content).__name__}, not text")
    usage = completion.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    finish_reason = first.get("finish_reason")
    # DeepSeek and vLLM's reasoning parsers return `reasoning_content`, some servers `reasoning`
    reasoning = next((value for key in ("reasoning_content", "reasoning")
                      if isinstance(value := message.get(key), str) and value), None)
    details = usage.get("completion_tokens_details")
    return _Answer(
        tool_calls=_tool_calls(message.get("tool_calls")),
        # `content: null` is a well-formed answer of nothing (e.g. tool_calls only, or a refusal): the model
        # said no text, which the scorer judges; it is not a server fault.
        text=content or "",
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
        finish_reason=finish_reason if isinstance(finish_reason, str) else None,
        reasoning=reasoning,
        reasoning_tokens=_count(details.get("reasoning_tokens")) if isinstance(details, dict) else None,
        served_by=_text_or_none(completion.get("model")),
        system_fingerprint=_text_or_none(completion.get("system_fingerprint")),
        message=message,
    )


def _tool_calls(value: object) -> tuple[ToolCall, ...]:
    """`message.tool_calls` as sent. A call without a function name is a malformed response; arguments that
    are not valid JSON are the model's answer (the suite scores them as a format error); servers that send
    them as an object (Ollama) get them written as JSON."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise MalformedResponse(f"tool_calls is a {type(value).__name__}, not a list")
    calls = []
    for index, item in enumerate(value):
        function = item.get("function") if isinstance(item, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str) or not name:
            raise MalformedResponse(f"tool_calls[{index}] has no function name")
        arguments = function.get("arguments") if isinstance(function, dict) else None
        if arguments is None:
            arguments = "{}"
        elif not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        call_id = item.get("id") if isinstance(item, dict) else None
        calls.append(ToolCall(call_id if isinstance(call_id, str) and call_id else f"call_{index}", name, arguments))
    return tuple(calls)


def _usage_tokens(usage: object) -> dict[str, int] | None:
    """A malformed reply's `usage`, as a sample's tokens ({"prompt": n, "completion": m}); None if unreadable."""
    if not isinstance(usage, dict):
        return None
    counts = {key: _count(usage.get(f"{key}_tokens")) for key in ("prompt", "completion")}
    return {key: value for key, value in counts.items() if value is not None} or None


def _text_or_none(value: object) -> str | None:
    return value[:200] if isinstance(value, str) and value else None


# a token count at or past this (or below 0) is no count: the usage says nothing (JSON numbers above it lose digits)
_MOST_TOKENS = 2**53


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < _MOST_TOKENS else None


# sampling parameters a model may refuse, and what is sent instead (OpenAI's reasoning models take
# max_completion_tokens for max_tokens, and only their default temperature and top_p)
ADAPTATIONS = {"max_tokens": "max_completion_tokens", "temperature": "left out", "top_p": "left out"}
_UNSUPPORTED = re.compile(r"(?:Unsupported (?:parameter|value)|not supported)\W+'?(max_tokens|temperature|top_p)'?",
                          re.IGNORECASE)


_OVERFLOW = re.compile(r"maximum context length|context[_ ]length[_ ]exceeded|context window|too many tokens",
                       re.IGNORECASE)


def _error_message(exc: openai.APIStatusError) -> str:
    """The server's own error message: the body's `message`, else what the client made of the response."""
    body = exc.body
    message = body.get("message") if isinstance(body, dict) else None
    return message if isinstance(message, str) else str(exc.message)


def context_overflow(exc: BaseException) -> bool:
    """Whether a 400 says the prompt is longer than the model's context (OpenAI's code, vLLM's wording)."""
    if not isinstance(exc, openai.BadRequestError):
        return False
    if str(getattr(exc, "code", "") or "") == "context_length_exceeded":
        return True
    return bool(_OVERFLOW.search(_error_message(exc)))


def unsupported_parameter(exc: BaseException) -> str | None:
    """The sampling parameter a 400 says the model does not take (by its `param`, else by its message)."""
    if not isinstance(exc, openai.BadRequestError):
        return None
    param = getattr(exc, "param", None)
    code = str(getattr(exc, "code", "") or "")
    if param in ADAPTATIONS and code.startswith("unsupported"):
        return str(param)
    match = _UNSUPPORTED.search(_error_message(exc))
    return match.group(1).lower() if match else None


def describe(exc: BaseException) -> str:
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}: {_error_message(exc)}"
    if isinstance(exc, openai.APITimeoutError):
        return "the request timed out"
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__
        return f"connection error ({type(cause).__name__})" if cause is not None else "connection error"
    if isinstance(exc, MalformedResponse):
        return f"malformed response: {exc}"
    if isinstance(exc, ErrorInBody):
        return f"HTTP 200 with an error instead of an answer: {exc}"
    if isinstance(exc, UnreadableBody):
        return f"malformed response body ({exc})"
    if isinstance(exc, (json.JSONDecodeError, UnicodeDecodeError)):
        return f"malformed response body ({type(exc).__name__}: {exc})"
    return f"{type(exc).__name__}: {exc}"
