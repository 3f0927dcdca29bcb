"""Build the ModelAccess a run uses from its settings: `oracle`, `replay:PATH` or a live model."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InfrastructureError, MalformedReply
from ..json_value import JSONObject
from ..settings.options import Settings
from ..text import split_think_block
from .access import ChatFn, ModelAccess, Role, access_kind, role_option
from .base import REPEAT, ChatRequest, ModelBackend, Reply
from .breaker import STOPPED
from .engine import Engine, Probe
from .meter import note_reply, note_served_from_cache
from .replay import ReplayReader, load_replay

if TYPE_CHECKING:
    from .batch import BatchLane
    from .cache import CacheRun, ResponseCache
    from .limits import SharedRateLimiter


def build_access(settings: Settings, cache_dir: Path, engine: Engine, board_path: Callable[[], Path],
                 roles: Sequence[Role] = (), replay_readers: Sequence[ReplayReader] = (), *,
                 probe_tools: bool = False, probe_system: bool = False, say: Callable[[str], None] = print,
                 cache_only: bool = False, cache_run: CacheRun | None = None,
                 served: Mapping[str, JSONObject] | None = None) -> ModelAccess:
    """The run's model access; `board_path` gives the run board's file (asked only for the rpm/tpm limits file
    beside it); `roles` are the helper models of the suites in the run, `replay_readers` their recorded-output
    formats (suites/base.py); `probe_tools`: a suite offers the model `tools`, so its probe offers one too;
    `probe_system`: every request with tools has a system message, so the probe's has one too;
    `say` writes the batch lane's lines (--tooleval-batch); `cache_only`: live models answer from the response
    cache alone, a request it does not hold is an error and never sent (`python -m pytest_tooleval rescore`);
    `cache_run`: which cached answers the run may use (models/cache.py); `served`: what each endpoint serves, by
    backend label, when another process asked it (models/served.py: an xdist worker is told the controller's)."""
    model = settings.model or ""  # as access_kind reads it (a run without a model builds no access)
    kind = access_kind(settings)
    if kind == "oracle":
        return ModelAccess("oracle")
    # the response cache is opened for live models only: a replay's helper roles (a judge) may be live
    asks = kind == "chat" or any(role_option(role, settings, "model", str) for role in roles)
    live = _Live(settings, engine, _response_cache(settings, cache_dir, engine, cache_run) if asks else None,
                 cache_only, dict(served or {}))
    if kind == "replay":
        # helper roles stay live: a replayed ToolAlpaca episode is judged again by the judge model
        replay = load_replay(model[len("replay:"):], replay_readers)
        access = ModelAccess("replay", replay=replay, roles=live.roles(roles, None))
        live.close_cache_last()
        return access
    limiter: SharedRateLimiter | None = None
    if settings.rpm or settings.tpm:
        from .limits import SharedRateLimiter

        limiter = SharedRateLimiter(board_path().with_suffix(".limits.sqlite"), settings.rpm, settings.tpm)
        engine.on_close(_closing(limiter.close))
    reasoning: JSONObject = {"reasoning_effort": settings.reasoning_effort} if settings.reasoning_effort else {}
    # --tooleval-batch: every role's batch lane, appended as its chat function is built (models/batch.py)
    lanes: list[BatchLane] | None = [] if settings.batch else None
    chat = live.chat(model, settings.base_url, settings.api_key, settings.temperature, settings.max_tokens, limiter,
                     extra=reasoning, probe_tools=probe_tools, probe_system=probe_system, lanes=lanes, say=say)
    if settings.reasoning == "strip":
        chat = _without_think_blocks(chat)
    helpers = live.roles(roles, limiter, lanes, say)
    access = ModelAccess("chat", chat=chat, roles=helpers, model=model,
                         batch={lane.role: lane for lane in lanes} if lanes else None)
    live.close_cache_last()
    return access


PROBE_PROMPT = "Reply with the single word: ok"
PROBE_MAX_TOKENS = 16
# offered by the probe of a model that will be asked with `tools`: an endpoint without tool calling refuses it,
# and one that drops the tools (llama-cpp-python without tool_choice) answers without calling it
PROBE_TOOL: JSONObject = {"type": "function", "function": {
    "name": "echo", "description": "Repeat a word.",
    "parameters": {"type": "object", "properties": {"word": {"type": "string"}}}}}
PROBE_TOOL_PROMPT = "Call the echo function with the word: ok"
PROBE_TOOL_MAX_TOKENS = 64  # a call's JSON takes more tokens than a word
# the probe's system message, when every request with tools has one (ACEBench's, YAML files with `system:`)
PROBE_SYSTEM = "You are a helpful assistant."
# --tooleval-tools-system empty: put before the messages of a request that offers tools and has no system message
EMPTY_SYSTEM: JSONObject = {"role": "system", "content": ""}
# Tools that reach the prompt add their names, descriptions and schemas: the echo tool is some 40 tokens as JSON,
# and every chat template adds words around it. Fewer than this many added tokens means they were left out: a
# server may still count what it appends after the prompt (llama-cpp-python's `functions.echo:` before the
# arguments it generates, or `message:`), a few tokens.
TOOLS_SEEN_MIN_TOKENS = 10
NO_TOOL_CALL_HINT = ("serve the model with tool calling (vLLM: --enable-auto-tool-choice --tool-call-parser NAME; "
                     "llama.cpp: --jinja; llama-cpp-python: a chat format with function calling), or use "
                     "--tooleval-mode prompt (or skip the probe: --tooleval-no-probe)")


async def probe_endpoints(probes: Sequence[Probe]) -> dict[str, JSONObject]:
    """Ask each distinct (model, endpoint, parameters) once, all at once (a run's roles wait one round trip, not
    one per role); the endpoint profile of each role. Raises the failure of the first role, in the order given,
    as a usage error naming the role, the endpoint, the cause and the fix."""
    distinct: dict[tuple[str, str, str], Probe] = {}
    for probe in probes:
        distinct.setdefault(_probe_key(probe), probe)
    outcomes = await asyncio.gather(*(_probe_one(probe) for probe in distinct.values()), return_exceptions=True)
    seen: dict[tuple[str, str, str], JSONObject] = {}
    for key, outcome in zip(distinct, outcomes, strict=True):
        if isinstance(outcome, BaseException):  # the first failing role, in the order given
            raise outcome
        seen[key] = outcome
    profile: dict[str, JSONObject] = {}
    for probe in probes:
        found = seen[_probe_key(probe)]
        # a cached answer made under another fingerprint is asked again (it is reply.system_fingerprint: str or None)
        fingerprint = found["system_fingerprint"]
        probe.backend.fingerprint = fingerprint if isinstance(fingerprint, str) else None
        profile.setdefault(probe.role, found)
    return profile


def _probe_key(probe: Probe) -> tuple[str, str, str]:
    return (probe.backend.model, probe.backend.endpoint, repr(probe.request))


async def _probe_one(probe: Probe) -> JSONObject:
    """One probe's round trip and checks: what the endpoint profile says of it, or a usage error."""
    from ..errors import ToolevalError, ToolevalUsageError

    backend = probe.backend
    try:
        reply = await backend.complete(probe.request)
    except ToolevalError as exc:
        stopped = str(exc).removeprefix(STOPPED)
        if stopped != str(exc):  # the breaker's line: what failed and what to check, said already
            raise ToolevalUsageError(f"tooleval: the endpoint probe failed for the {probe.role} role: "
                                     f"{stopped}") from None
        if isinstance(exc, MalformedReply):  # it answers, but with no chat completion
            raise ToolevalUsageError(
                f"tooleval: the endpoint probe failed for the {probe.role} role: {exc}: check what serves "
                "the model (its chat template, its tool-call parser), or skip the probe "
                "(--tooleval-no-probe)") from None
        option = "--tooleval-model" if probe.role == "model" else f"--tooleval-{probe.role}-model"
        tools = ("; it offered a tool, as --tooleval-mode fc asks: serve the model with tool calling "
                 "(vLLM: --enable-auto-tool-choice --tool-call-parser NAME) or use --tooleval-mode prompt"
                 if probe.request.tools else "")
        raise ToolevalUsageError(
            f"tooleval: the endpoint probe failed for the {probe.role} role: {exc}. Check {option}, its "
            f"base URL and API key (or skip the probe: --tooleval-no-probe){tools}") from None
    if probe.request.tools and reply.prompt_tokens is not None:
        await _check_tools_seen(probe, reply.prompt_tokens)
    # the tools were ignored: fc answers would have no call. (An answer cut at the probe's few tokens, a
    # reasoning model's, proves nothing.)
    if probe.request.tools and not reply.tool_calls and reply.finish_reason != "length":
        said = " ".join(reply.text.split())
        said = f"{said[:60]}..." if len(said) > 60 else said
        raise ToolevalUsageError(
            f"tooleval: the endpoint probe got no tool call from model {backend.model!r} at "
            f"{backend.endpoint}: asked to call the one function offered, it answered {said!r}; "
            "--tooleval-mode fc needs tool calls: "
            f"{NO_TOOL_CALL_HINT}")
    return {"model": backend.model, "endpoint": backend.endpoint, "served_by": reply.served_by,
            "system_fingerprint": reply.system_fingerprint, "latency_s": round(reply.latency_s, 3),
            "adapted": dict(backend.adaptations)}


async def _check_tools_seen(probe: Probe, with_tools: int) -> None:
    """Whether the probe's tool reached the model's prompt: the same request without it is asked too (one token),
    after it, so a server's prompt cache can only make the tool look bigger. When the tool adds (almost) no prompt
    tokens, the model would be scored without the functions it is offered: stop the run with one line. A twin
    that fails, or reports no usage, proves nothing."""
    from ..errors import ToolevalError, ToolevalUsageError

    backend = probe.backend
    try:
        twin = await backend.complete(dataclasses.replace(probe.request, tools=None, max_tokens=1))
    except ToolevalError:
        return
    if twin.prompt_tokens is None or not 0 <= with_tools - twin.prompt_tokens < TOOLS_SEEN_MIN_TOKENS:
        return
    system = next((message for message in probe.request.messages if message.get("role") == "system"), None)
    if system is None:
        shape = "without a system message, as BFCL's questions and YAML files without `system:` ask"
        fixes = ("give such requests an empty system message (--tooleval-tools-system empty, a deviation recorded "
                 "in the report: llama-cpp-python's chatml-function-calling renders tools only into one), serve the "
                 "model with a chat template that renders tools without one (another --chat_format, llama.cpp's "
                 "llama-server --jinja), run only samples with one (ACEBench; a YAML file's `system:`)")
    else:
        shape = ("with an empty system message (--tooleval-tools-system empty)" if system == EMPTY_SYSTEM else
                 "with a system message, as every request with tools here has")
        fixes = "serve the model with a chat template that renders tools"
    raise ToolevalUsageError(
        f"tooleval: the endpoint probe found that the tools never reach model {backend.model!r} at "
        f"{backend.endpoint}: a request offering one tool ({shape}) used {with_tools} prompt tokens, the same "
        f"request without it {twin.prompt_tokens}, so every sample would be scored without its functions; "
        f"{fixes}, or use --tooleval-mode prompt (or skip the probe: --tooleval-no-probe)")


def _without_think_blocks(chat: ChatFn) -> ChatFn:
    """--tooleval-reasoning strip: the model under test's answers without their leading think block."""

    async def ask(messages: list[JSONObject], **overrides: object) -> Reply:
        reply: Reply = await chat(messages, **overrides)
        thought, answer = split_think_block(reply.text)
        if thought is None:
            return reply
        reasoning = thought if reply.reasoning is None else f"{reply.reasoning}\n\n{thought}"
        return dataclasses.replace(reply, text=answer, reasoning=reasoning)

    return ask


def cache_scope(settings: Settings) -> str:
    """What a run resumes by (models/cache.py `begin_run`): the model under test at its endpoint."""
    from .openai_compat import DEFAULT_BASE_URL, endpoint_label

    base_url = settings.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
    text = json.dumps([settings.model or "", endpoint_label(base_url)], ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _response_cache(settings: Settings, cache_dir: Path, engine: Engine,
                    cache_run: CacheRun | None) -> ResponseCache | None:
    """One connection to the cache file for every model of the process (opened, and checked, once); none,
    with a line in the summary, when the file cannot be opened (a folder that cannot be written: a read-only
    mount or HOME, a full disk): the run goes on uncached."""
    if settings.cache_mode == "off":
        return None
    from .cache import ResponseCache
    from .storage import CACHE, STORAGE_ERRORS, unwritable

    try:
        cache = ResponseCache(cache_dir / "responses.sqlite", log=engine.storage, run=cache_run)
    except STORAGE_ERRORS as exc:
        reason = unwritable(cache_dir)
        if reason is not None:
            engine.storage.failed(CACHE, cache_dir, f"cannot be written ({reason})", off=True)
        else:
            engine.storage.failed(CACHE, cache_dir, f"cannot be opened ({exc}); the run went on without it")
        return None
    engine.on_flush(cache.flush)
    return cache


@dataclass(frozen=True)
class _Live:
    """What every live chat function of a run shares: the settings, the engine and the response cache."""

    settings: Settings
    engine: Engine
    cache: ResponseCache | None
    cache_only: bool = False  # answers from the cache alone: a miss is an error, never a request
    served: dict[str, JSONObject] = dataclasses.field(default_factory=dict)  # by backend label, when told

    def close_cache_last(self) -> None:
        """Close the cache after the clients (closers run in order); the last connection to close folds the
        WAL into the file."""
        if self.cache is not None:
            self.engine.on_close(_closing(self.cache.close))

    def roles(self, roles: Sequence[Role], limiter: SharedRateLimiter | None, lanes: list[BatchLane] | None = None,
              say: Callable[[str], None] = print) -> dict[str, ChatFn]:
        """One chat function per helper role whose model is set (`--tooleval-<role>-model`), with the role's
        own endpoint, key, temperature and max_tokens where it declares them (otherwise the agent's)."""
        settings = self.settings
        functions = {}
        for role in roles:
            model = role_option(role, settings, "model", str)
            if not model:
                continue
            base_url = role_option(role, settings, "base_url", str)
            sends = dict(role.sends)
            effort = role_option(role, settings, "reasoning_effort", str)  # --tooleval-<role>-reasoning-effort
            if effort:
                sends["reasoning_effort"] = effort
            functions[role.name] = self.chat(
                model,
                base_url or settings.base_url,
                role_option(role, settings, "api_key", str) or settings.api_key,
                role_option(role, settings, "temperature", float),
                role_option(role, settings, "max_tokens", int),
                limiter if not base_url else None,  # the limits are the agent endpoint's
                top_p=sends.pop("top_p", settings.top_p),
                extra=sends,
                role=role.name,
                lanes=lanes,
                say=say,
            )
        return functions

    def chat(self, model: str, base_url: str | None, api_key: str | None, temperature: float | None,
             max_tokens: int | None, limiter: SharedRateLimiter | None = None, *, top_p: float | None = None,
             extra: JSONObject | None = None, role: str = "model", probe_tools: bool = False,
             probe_system: bool = False, lanes: list[BatchLane] | None = None,
             say: Callable[[str], None] = print) -> ChatFn:
        return _chat_function(self.settings, self.engine, model, base_url, api_key, temperature, max_tokens,
                              limiter, self.cache, top_p=self.settings.top_p if top_p is None else top_p,
                              extra=extra or {}, role=role, probe_tools=probe_tools, probe_system=probe_system,
                              lanes=lanes, say=say,
                              cache_only=self.cache_only, served=self.served)


def _chat_function(settings: Settings, engine: Engine, model: str, base_url: str | None,
                   api_key: str | None, temperature: float | None, max_tokens: int | None,
                   limiter: SharedRateLimiter | None = None, cache: ResponseCache | None = None, *,
                   top_p: float | None = None, extra: JSONObject | None = None, role: str = "model",
                   probe_tools: bool = False, probe_system: bool = False, lanes: list[BatchLane] | None = None,
                   say: Callable[[str], None] = print, cache_only: bool = False,
                   served: Mapping[str, JSONObject] | None = None) -> ChatFn:
    from .cache import CachedBackend
    from .limits import starts_slow
    from .openai_compat import OpenAIBackend

    asked = OpenAIBackend(
        model=model,
        base_url=base_url,
        api_key=api_key,
        timeout=settings.timeout,
        max_retries=settings.max_retries,
        max_concurrency=max(1, settings.concurrency),
        slow_start=starts_slow(settings.slow_start, base_url),
        rate_limiter=limiter,
        resting=engine.resting,
        breaker=engine.breaker,
    )
    engine.on_close(asked.aclose)
    if served and asked.label in served:  # what the controller learnt the endpoint serves (xdist)
        asked.served = served[asked.label]
    backend: ModelBackend = asked
    # the endpoint probe asks the backend itself (never the cache) once, with this role's parameters
    # with tools (--tooleval-mode fc) it asks for a call of the one it offers, shaped as the samples ask: with a
    # system message only when every request with tools has one (a server may render tools only into one)
    prompt, limit = (PROBE_TOOL_PROMPT, PROBE_TOOL_MAX_TOKENS) if probe_tools else (PROBE_PROMPT, PROBE_MAX_TOKENS)
    system: tuple[JSONObject, ...] = ()
    if probe_tools and probe_system:
        system = ({"role": "system", "content": PROBE_SYSTEM},)
    elif probe_tools and role == "model" and settings.tools_system == "empty":
        system = (EMPTY_SYSTEM,)  # as the samples without one will be sent
    engine.probes.append(Probe(role, asked, ChatRequest(
        (*system, {"role": "user", "content": prompt}), temperature=temperature, top_p=top_p,
        max_tokens=None if max_tokens is None else min(max_tokens, limit), extra=dict(extra or {}),
        tools=(PROBE_TOOL,) if probe_tools else None)))
    if lanes is not None:  # --tooleval-batch: between the cache and the endpoint (models/batch.py)
        from .batch import BatchLane

        lane = BatchLane(asked, cache, settings.cache_path, poll_s=settings.batch_poll,
                         fallback=settings.batch_fallback, say=say, role=role, wait_s=settings.batch_wait)
        lanes.append(lane)
        backend = lane
    if cache_only:
        backend = _CacheOnly(backend)
    if cache is not None:
        backend = CachedBackend(backend, cache, fingerprint=lambda: asked.fingerprint)

    run_max_tokens, run_temperature, run_top_p = max_tokens, temperature, top_p
    empty_system = role == "model" and settings.tools_system == "empty"

    async def chat(messages: list[JSONObject], *, max_tokens: int | None = None,
                   stop: tuple[str, ...] | None = None, sampling: bool = True, temperature: float | None = None,
                   top_p: float | None = None, tools: Sequence[JSONObject] | None = None) -> Reply:
        # a suite may override the run's sampling (its upstream's: --tooleval-sampling upstream) and
        # max_tokens, add stop strings for its own protocol (GPT4Tools: 512 tokens), and offer `tools`
        # (ACEBench's function-calling mode)
        sent_tools = None if tools is None else tuple(tools)
        if sent_tools and empty_system and not any(message.get("role") == "system" for message in messages):
            messages = [EMPTY_SYSTEM, *messages]  # --tooleval-tools-system empty (docs/models.md#local-models)
        repeat = REPEAT.get()  # --tooleval-repeats: each repeat of a sample is asked, and cached, apart
        if not sampling:
            request = ChatRequest(tuple(messages), stop=stop, extra=dict(extra or {}), tools=sent_tools,
                                  repeat=repeat)
        else:
            request = ChatRequest(tuple(messages), temperature=run_temperature if temperature is None else temperature,
                                  top_p=run_top_p if top_p is None else top_p,
                                  max_tokens=run_max_tokens if max_tokens is None else max_tokens, stop=stop,
                                  extra=dict(extra or {}), tools=sent_tools, repeat=repeat)
        try:
            reply: Reply = await backend.complete(request)
        except MalformedReply as exc:
            if role == "model":
                raise  # the answer under test: its sample fails (run/session.py)
            # a helper's (the user's, the simulator's, the judge's) is no answer of the model under test
            raise InfrastructureError(f"{exc}; the {role} model's reply, so the sample cannot be scored") from None
        note_served_from_cache(role, reply)  # the cost ceiling and the cost line count only what was asked
        note_reply(role, reply, offered_tools=sent_tools is not None)  # cut answers, tool calls (the report)
        return reply

    return chat


class NotCached(InfrastructureError):
    """A cache-only model (`build_access(cache_only=True)`) was asked what its response cache does not hold."""


class _CacheOnly:
    """Where a live backend would be asked: a miss of the cache in front is an error, and nothing is sent. The
    wrapped backend still names the requests' cache keys (its endpoint and model)."""

    def __init__(self, backend: Any) -> None:  # an OpenAIBackend, or its BatchLane; read as it always was
        self.backend = backend
        self.name = backend.name

    def cache_identity(self) -> JSONObject:
        identity: JSONObject = self.backend.cache_identity()
        return identity

    async def complete(self, request: ChatRequest) -> Reply:
        raise NotCached(f"{self.backend.label}: not in the response cache")

    async def aclose(self) -> None:
        await self.backend.aclose()


def _closing(close: Callable[[], object]) -> Callable[[], Awaitable[None]]:
    """An engine closer (a coroutine function) for a plain close()."""

    async def closer() -> None:
        close()

    return closer
