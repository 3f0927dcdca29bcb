"""A real HTTP server speaking the OpenAI chat-completions API, scripted, with injectable faults.

The plugin's tests point the real `openai` client at it, so every byte crosses a socket: retries, timeouts,
broken bodies and secret echoes are exercised the way a production endpoint would exercise them.

    with FakeOpenAI(replies={"weather": "[get_weather(city='Paris')]"}, default="[]") as server:
        backend = OpenAIBackend(model="fake", base_url=server.base_url, api_key="sk-test")
        ...
        assert server.stats.requests == 1

How an answer is chosen, first match wins:
  1. the FIFO queue (`enqueue`, `fail_first`): one item per request, a reply text or a `Fault`;
  2. the random fault rate (`fault_rate`, `fault`, `seed`);
  3. the `responder(request_json) -> str | Fault` callable;
  4. `replies`: the first key found in the last user message, then in any message;
  5. `default`.

The Batch API is there too, for /v1/chat/completions batches: POST /files (multipart), GET /files/{id},
GET /files/{id}/content, DELETE /files/{id}, POST /batches, GET /batches, GET /batches/{id} (a poll: each moves
the batch on, see `batch_polls_to_complete`), POST /batches/{id}/cancel. A batch's lines are answered by the same
rules as requests when it leaves in_progress, into an output file (status 200) and an error file (the others, and
lines expired or cancelled), both in reversed order; they are counted apart from interactive requests.
A provider that misbehaves is scripted too: `duplicate_entries`, `plant_entries`, a line's `Fault.invalid_utf8()`
(a 200 entry whose bytes are not UTF-8) or `Fault.echo_auth()` (a 401 entry quoting the batch's Authorization),
`answer_batch_api` (any 200 body for a route), `forget_batches` (404 for a known id), `hold_creates`.

    with FakeOpenAI(default="[]") as server:
        ...  # client.files.create(...), client.batches.create(...), client.batches.retrieve(...) until completed
        assert server.stats.batch_entries_answered == 3 and server.stats.requests == 0

Standalone, for benchmark scripts and pytester subprocesses (prints the base URL on its first line):

    python tests/fake_openai.py --port 0 --latency 1.0 --reply "[f()]"
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import email.message
import email.parser
import email.policy
import json
import random
import select
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

__all__ = ["BatchStatus", "FakeOpenAI", "Fault", "FaultKind", "ReceivedRequest", "ServerStats", "ToolCalls"]

FaultKind = Literal[
    "status",  # an HTTP error status with an OpenAI-style error body (429, 500, 401, ...)
    "reset",  # headers and half the body, then a TCP reset
    "delay",  # a valid answer, but only after `delay_s` (beyond the client's timeout)
    "malformed_json",  # 200, application/json, a body cut off mid-object
    "empty_choices",  # 200, valid JSON, "choices": []
    "nameless_call",  # 200, valid JSON, a tool call whose function name is ""
    "content_not_text",  # 200, valid JSON, "content" not a string (`value`, JSON: a list of parts, a number)
    "tool_calls_object",  # 200, valid JSON, "tool_calls" an object, not a list
    "error_in_body",  # 200, valid JSON, an OpenAI-style error object and no choices (OpenRouter's way)
    "null_content",  # 200, valid JSON, "message": {"content": null}
    "huge",  # 200, a valid answer whose text is `size` characters long
    "invalid_utf8",  # 200, application/json, bytes in the content that are not UTF-8
    "echo_auth",  # 401 whose error message repeats the Authorization header verbatim
    "trickle",  # 200 and headers at once, then the body one byte every `delay_s` (each read is quick)
    "raw",  # 200, application/json, exactly the bytes `body`
]


@dataclass(frozen=True)
class Fault:
    """One scripted misbehaviour. Build it with the class methods, e.g. `Fault.rate_limit(retry_after=2)`."""

    kind: FaultKind
    status: int = 200
    retry_after: str | None = None
    delay_s: float = 0.0
    size: int = 0
    message: str = ""
    code: str | int | None = None  # the error body's `code` (OpenRouter sends the status as a number)
    error_type: str | None = None  # the error body's `type`; None: the usual one for the status
    value: str = ""  # JSON text: what `content_not_text` sends as the content
    body: bytes = b""  # what `raw` sends as the whole body

    @classmethod
    def http(
        cls,
        status: int,
        *,
        retry_after: float | str | None = None,
        message: str = "",
        code: str | int | None = None,
        error_type: str | None = None,
    ) -> Fault:
        return cls(
            "status",
            status=status,
            retry_after=_header_value(retry_after),
            message=message,
            code=code,
            error_type=error_type,
        )

    @classmethod
    def insufficient_quota(cls) -> Fault:
        """OpenAI's 429 for an account out of quota, with its code and type (not a rate limit: no retry heals it)."""
        return cls.http(
            429,
            code="insufficient_quota",
            error_type="insufficient_quota",
            message=(
                "You exceeded your current quota, please check your plan and billing details. For more information on "
                "this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors."
            ),
        )

    @classmethod
    def no_credits(cls) -> Fault:
        """OpenRouter's 402 for an account out of credits (its code is the status, as a number)."""
        return cls.http(402, code=402, message="Insufficient credits. Add more using https://openrouter.ai/credits")

    @classmethod
    def context_overflow(cls, dialect: str = "openai") -> Fault:
        """A prompt longer than the model's context, as OpenAI (with its error code) or vLLM (wording only) say."""
        if dialect == "openai":
            return cls.http(
                400,
                code="context_length_exceeded",
                message=(
                    "This model's maximum context length is 8192 tokens. However, your messages resulted in 9120 "
                    "tokens. Please reduce the length of the messages."
                ),
            )
        return cls.http(
            400,
            message=(
                "This model's maximum context length is 4096 tokens. However, you requested "
                "5210 tokens (4010 in the messages, 1200 in the completion). Please reduce "
                "the length of the messages or completion."
            ),
        )

    @classmethod
    def rate_limit(cls, retry_after: float | str | None = None) -> Fault:
        return cls.http(429, retry_after=retry_after, message="Rate limit reached for requests")

    @classmethod
    def reset(cls) -> Fault:
        return cls("reset")

    @classmethod
    def delay(cls, seconds: float) -> Fault:
        return cls("delay", delay_s=seconds)

    @classmethod
    def malformed_json(cls) -> Fault:
        return cls("malformed_json")

    @classmethod
    def empty_choices(cls) -> Fault:
        return cls("empty_choices")

    @classmethod
    def nameless_call(cls) -> Fault:
        return cls("nameless_call")

    @classmethod
    def content_not_text(cls, value: str = '[{"type": "text", "text": "[f()]"}]') -> Fault:
        return cls("content_not_text", value=value)

    @classmethod
    def tool_calls_object(cls) -> Fault:
        return cls("tool_calls_object")

    @classmethod
    def error_in_body(cls, message: str = "Provider returned error", code: int = 502) -> Fault:
        return cls("error_in_body", message=message, code=code)

    @classmethod
    def trickle(cls, seconds_per_byte: float) -> Fault:
        return cls("trickle", delay_s=seconds_per_byte)

    @classmethod
    def null_content(cls) -> Fault:
        return cls("null_content")

    @classmethod
    def huge(cls, size: int = 1_000_000) -> Fault:
        return cls("huge", size=size)

    @classmethod
    def invalid_utf8(cls) -> Fault:
        return cls("invalid_utf8")

    @classmethod
    def echo_auth(cls) -> Fault:
        return cls("echo_auth", status=401)

    @classmethod
    def raw(cls, body: bytes) -> Fault:
        """A 200 whose body is exactly `body` (JSON the client's decoder cannot read, say)."""
        return cls("raw", body=body)

    @staticmethod
    def huge_text(size: int) -> str:
        """The exact text a `huge(size)` fault answers with, for comparisons."""
        return ("0123456789abcdef" * (size // 16 + 1))[:size]


def _header_value(value: float | str | None) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return str(int(value)) if float(value).is_integer() else str(value)


@dataclass(frozen=True)
class ToolCalls:
    """An answer in native function calls, as OpenAI's tools API (and vLLM's tool parsers) give it.

    `calls` are (name, arguments): a dict is sent as its JSON text, a str as it is (so malformed JSON can be
    scripted); `content` is the text beside them (None is sent as `content: null`, the usual case).
    `arguments_as_object` sends a dict's arguments as a JSON object rather than text, as Ollama does.
    """

    calls: tuple[tuple[str, dict[str, Any] | str], ...]
    content: str | None = None
    arguments_as_object: bool = False

    @classmethod
    def of(cls, *calls: tuple[str, dict[str, Any] | str], content: str | None = None) -> ToolCalls:
        return cls(tuple(calls), content)

    def message(self) -> dict[str, Any]:
        tool_calls = []
        for index, (name, arguments) in enumerate(self.calls):
            sent: Any = arguments
            if isinstance(arguments, dict) and not self.arguments_as_object:
                sent = json.dumps(arguments, ensure_ascii=False)
            tool_calls.append(
                {"id": f"call_fake_{index}", "type": "function", "function": {"name": name, "arguments": sent}}
            )
        return {"role": "assistant", "content": self.content, "tool_calls": tool_calls}


Answer = str | Fault | ToolCalls
Responder = Callable[[dict[str, Any]], Answer]


@dataclass(frozen=True)
class ReceivedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names lowercased
    body: dict[str, Any] | None  # None when the body was not a JSON object
    at: float  # time.monotonic() on arrival, to measure the client's waits between attempts


@dataclass
class ServerStats:
    requests: int = 0  # chat-completions requests received (faulted ones included)
    model_listings: int = 0  # GET /v1/models
    by_prompt: collections.Counter[str] = field(default_factory=collections.Counter)  # last user message → count
    in_flight: int = 0  # received and not yet answered, including those waiting for a capacity slot
    peak_in_flight: int = 0
    faults_on_arrival: int = 0  # random faults answered at once (`fault_on_arrival`), without the latency
    latency_waits: int = 0  # requests that waited `latency_s` before their answer was chosen (counted as it begins)
    # answers generated for a client that had gone (it timed out or was cancelled): a real server spends its
    # slot on them all the same
    abandoned: int = 0
    received: list[ReceivedRequest] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # responder exceptions (each answered with a 500)
    # The Batch API, counted apart: a batch's lines are never chat-completions `requests` nor in `by_prompt`.
    files_uploaded: int = 0  # POST /v1/files (a batch's output and error files are not counted)
    files_deleted: int = 0
    batches_created: int = 0
    batch_ids: list[str] = field(default_factory=list)  # in creation order
    batch_polls: int = 0  # GET /v1/batches/{id} of a known batch
    batch_entries_answered: int = 0  # lines run through the answering rules (not the expired or cancelled ones)
    batch_by_prompt: collections.Counter[str] = field(default_factory=collections.Counter)  # as `by_prompt`
    # every call of the files and batches endpoints by route: upload, file, content, delete, create, list, poll, cancel
    batch_api_calls: collections.Counter[str] = field(default_factory=collections.Counter)
    creates_held: int = 0  # POST /v1/batches whose batch exists and whose answer `hold_creates` is holding now

    @property
    def bodies(self) -> list[dict[str, Any] | None]:
        return [r.body for r in self.received]

    @property
    def json_bodies(self) -> list[dict[str, Any]]:
        """`bodies` where every request sent a JSON object: an AssertionError where one did not."""
        bodies = self.bodies
        assert all(body is not None for body in bodies), "a request body was not a JSON object"
        return [body for body in bodies if body is not None]

    @property
    def headers(self) -> list[dict[str, str]]:
        return [r.headers for r in self.received]


BatchStatus = Literal[
    "validating", "failed", "in_progress", "finalizing", "completed", "expired", "cancelling", "cancelled"
]
_ACTIVE: tuple[BatchStatus, ...] = ("validating", "in_progress", "finalizing", "cancelling")
_FILE_PURPOSES = ("assistants", "batch", "fine-tune", "vision", "user_data")
BATCH_ENDPOINT = "/v1/chat/completions"  # the only one faked
EXPIRED = "This request could not be executed before the completion window expired."
CANCELLED = "This request could not be executed before the batch was cancelled."
NOT_UTF8 = b"caf\xe9 \xff\xfe"  # what `Fault.invalid_utf8()` puts in an answer's text, on the wire and in a file
_NOT_UTF8_MARKER = "@@NOT-UTF8@@"
BatchRoute = Literal["upload", "file", "content", "delete", "create", "list", "poll", "cancel"]


class _ApiError(Exception):
    """An OpenAI-style error answer from the files and batches endpoints."""

    def __init__(self, status: int, message: str, *, code: str | None = None, param: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.code, self.param = status, message, code, param


@dataclass
class _StoredFile:
    id: str
    filename: str
    purpose: str
    data: bytes
    created_at: int

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.data),
            "created_at": self.created_at,
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
            "expires_at": None,
            "status_details": None,
        }


@dataclass(frozen=True)
class _Entry:
    custom_id: str
    body: dict[str, Any]


@dataclass
class _StoredBatch:
    id: str
    input_file_id: str
    endpoint: str
    completion_window: str
    metadata: dict[str, Any] | None
    created_at: int
    entries: list[_Entry]
    invalid: list[dict[str, Any]]  # validation errors, shown when the first poll fails the batch
    model: str | None
    authorization: str = ""  # the header its create request came with (what `Fault.echo_auth()` lines quote)
    status: BatchStatus = "validating"
    advances: int = 0  # polls that moved it on (a held batch's polls do not)
    answered: bool = False
    errors: list[dict[str, Any]] = field(default_factory=list)
    at: dict[str, int] = field(default_factory=dict)  # status → when it was reached
    outputs: list[dict[str, Any]] = field(default_factory=list)  # lines of the output file, in answering order
    failures: list[dict[str, Any]] = field(default_factory=list)  # lines of the error file
    output_file_id: str | None = None
    error_file_id: str | None = None

    def as_json(self) -> dict[str, Any]:
        usage = [line["response"]["body"].get("usage") or {} for line in self.outputs]
        input_tokens = sum(u.get("prompt_tokens", 0) for u in usage)
        output_tokens = sum(u.get("completion_tokens", 0) for u in usage)
        reasoning = sum((u.get("completion_tokens_details") or {}).get("reasoning_tokens", 0) for u in usage)
        started = self.status != "validating" and not self.invalid
        stamps = ("in_progress", "finalizing", "completed", "failed", "expired", "cancelling", "cancelled")
        return {
            "id": self.id,
            "object": "batch",
            "endpoint": self.endpoint,
            "model": self.model,
            "errors": {"object": "list", "data": self.errors} if self.errors else None,
            "input_file_id": self.input_file_id,
            "completion_window": self.completion_window,
            "status": self.status,
            "output_file_id": self.output_file_id,
            "error_file_id": self.error_file_id,
            "created_at": self.created_at,
            "expires_at": self.created_at + 24 * 3600,
            **{f"{name}_at": self.at.get(name) for name in stamps},
            # OpenAI counts nothing while validating
            "request_counts": {
                "total": len(self.entries) if started else 0,
                "completed": len(self.outputs),
                "failed": len(self.failures),
            },
            "usage": {
                "input_tokens": input_tokens,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": output_tokens,
                "output_tokens_details": {"reasoning_tokens": reasoning},
                "total_tokens": input_tokens + output_tokens,
            },
            "metadata": self.metadata,
        }


def last_user_message(body: Mapping[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            return _text(message.get("content"))
    return ""


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def _count_tokens(text: str) -> int:
    # Whitespace words: deterministic and good enough for usage bookkeeping tests.
    return len(text.split())


class FakeOpenAI:
    """The server. Every attribute below may be changed while it runs; the next request sees the change.

    Args:
        replies: substring → reply text; matched against the last user message first, then any message.
        default: the reply when nothing else matches.
        responder: `(request_json) -> str | Fault`, consulted before `replies`; calls are serialized, so it
            need not be thread-safe (a raise is answered with a 500 and kept in `stats.errors`).
        latency_s: a fixed wait before every answer (faults included).
        max_concurrency: at most this many requests are answered at once; the rest wait for a slot,
            or get a 429 when `reject_over_capacity` is set. Fixed at construction.
        fault_rate, fault, seed: each request gets `fault` with probability `fault_rate` (seeded RNG).
        fault_on_arrival: the random `fault` is answered at once instead of after `latency_s`, as by a
            rate limiter in front of the model.
        require_api_key: when set, a request without `Authorization: Bearer <key>` gets a plain 401.
        reasoning_model: answer as OpenAI's reasoning models do: a 400 (with their error bodies) for
            `max_tokens` (they take `max_completion_tokens`) and for a temperature or top_p other than 1.
        reasoning_content: sent beside every answer as `message.reasoning_content` (DeepSeek, vLLM's
            reasoning parsers), with its token count in `usage.completion_tokens_details.reasoning_tokens`.
        usage: sent as every answer's `usage` instead of the counted one (counts no server should send).
        tools_supported: False answers a request carrying `tools` with the 400 vLLM gives when started without
            a tool-call parser.
        tools_need_choice: llama-cpp-python's dialect: `tools` sent without `tool_choice` never reach the model,
            so the answering rules see the body without them and a `ToolCalls` answer goes out as its text only
            (`content`, or "" when it has none): no tool call.
        tools_need_system: llama-cpp-python's chatml-function-calling: `tools` reach the prompt only when the
            request has a system message. Without one they add nothing to `usage.prompt_tokens` (but one token
            per call answered, as that server counts the `functions.<name>:` it puts before a call's arguments),
            and the answering rules still see them (its grammar lets the model name a function it never saw).
            Elsewhere, tools that reach the model count into the prompt tokens as their JSON's words.
        refuse_null_content: llama-cpp-python's dialect: a request with an assistant message whose `content` is
            null gets HTTP 500 (`NULL_CONTENT_REFUSED`), as its chat templates fail on it.
        max_answer_tokens: an answer text longer than this many tokens (whitespace words) is cut there and ends
            with `finish_reason: "length"`, as a server that stops at `max_tokens` (or shortens it to fit its
            context) does. None: never cut.
        model: the model id reported by GET /v1/models and echoed in answers.
        batch_polls_to_complete: the poll (GET /v1/batches/{id}) that shows a batch finished: with n, polls
            1 .. n-1 show in_progress (the last of them finalizing when n >= 3), poll n completed. Its lines
            are answered when it leaves in_progress. A failed validation shows at the first poll. See also
            `hold_batches`, `expire_batches`, `fail_batches`.
        host, port: where to listen; port 0 picks a free one (see `base_url` after `start()`).
    """

    def __init__(
        self,
        *,
        replies: Mapping[str, str] | None = None,
        default: str = "",
        responder: Responder | None = None,
        latency_s: float = 0.0,
        max_concurrency: int | None = None,
        reject_over_capacity: bool = False,
        fault_rate: float = 0.0,
        fault: Fault | None = None,
        fault_on_arrival: bool = False,
        seed: int = 0,
        require_api_key: str | None = None,
        reasoning_model: bool = False,
        tools_supported: bool = True,
        tools_need_choice: bool = False,
        tools_need_system: bool = False,
        refuse_null_content: bool = False,
        max_answer_tokens: int | None = None,
        model: str = "fake-model",
        batch_polls_to_complete: int = 2,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.replies: dict[str, str] = dict(replies or {})
        self.default = default
        self.responder = responder
        self.latency_s = latency_s
        self.fault_rate = fault_rate
        self.fault = fault or Fault.http(500)
        self.fault_on_arrival = fault_on_arrival
        self.require_api_key = require_api_key
        self.reasoning_model = reasoning_model
        self.reasoning_content: str | None = None
        self.usage: dict[str, Any] | None = None
        self.tools_supported = tools_supported
        self.tools_need_choice = tools_need_choice
        self.tools_need_system = tools_need_system
        self.refuse_null_content = refuse_null_content
        self.max_answer_tokens = max_answer_tokens
        self.model = model
        # more of the model's GET /v1/models entry, as real servers list it (vLLM's `root`, llama.cpp's `meta`)
        self.model_entry: dict[str, Any] = {}
        self.models_body: bytes | None = None  # sent whole as GET /v1/models's body instead of the list
        self.system_fingerprint: str | None = "fp_fake_0001"  # in every answer; None leaves it out
        # changes an answer's body before it is sent (an odd finish_reason, usage past 64 bits, ...)
        self.edit_completion: Callable[[dict[str, Any]], None] | None = None
        self.reject_over_capacity = reject_over_capacity
        self.batch_polls_to_complete = batch_polls_to_complete
        self.batches_held = False
        self.batch_api = True  # False: the files and batches endpoints are 404s, as on vLLM and Ollama
        self.stats = ServerStats()
        self._host, self._port = host, port
        self._queue: collections.deque[Answer] = collections.deque()
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._responder_lock = threading.Lock()
        # Files and batches. Lock order: _batch_lock, then _lock (completing a batch calls `choose`).
        self._batch_lock = threading.Lock()
        self._files: dict[str, _StoredFile] = {}
        self._batches: dict[str, _StoredBatch] = {}
        self._batch_failures: collections.deque[tuple[str, str, bool]] = collections.deque()
        self._batch_expiries: collections.deque[tuple[int, bool]] = collections.deque()
        self._duplicate_with: Answer | None = None
        self._planted: dict[str, Answer] = {}
        self._batch_api_answers: dict[str, collections.deque[tuple[int, bytes]]] = collections.defaultdict(
            collections.deque
        )
        self._creates_go = threading.Event()
        self._creates_go.set()
        self._ids: collections.Counter[str] = collections.Counter()  # prefix → last number: file-1, batch_1
        self._slots = threading.BoundedSemaphore(max_concurrency) if max_concurrency else None
        self._stopping = threading.Event()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------------------

    def start(self) -> FakeOpenAI:
        if self._httpd is not None:
            raise RuntimeError("FakeOpenAI is already running")
        self._stopping.clear()
        self._httpd = _Server((self._host, self._port), _Handler, self)
        # A short poll interval: shutdown() waits up to one interval, and tests stop a server each.
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._stopping.set()  # wakes handlers sleeping in latency/delay so they end promptly
        self._httpd.shutdown()
        self._httpd.close_all_connections()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = self._thread = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("FakeOpenAI is not running; call start() first")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The server root, e.g. http://127.0.0.1:PORT (chat completions also answer at /chat/completions)."""
        return f"http://{self._host}:{self.port}"

    @property
    def base_url(self) -> str:
        """What an OpenAI client takes as `base_url`: http://127.0.0.1:PORT/v1."""
        return f"{self.url}/v1"

    # -- scripting ---------------------------------------------------------------------------------------

    def enqueue(self, *answers: Answer) -> None:
        """Answer the next requests, one each, in order; then fall back to the other rules."""
        with self._lock:
            self._queue.extend(answers)

    def fail_first(self, n: int, fault: Fault) -> None:
        """The next `n` requests get `fault`; later ones are answered normally."""
        self.enqueue(*([fault] * n))

    def hold_batches(self) -> None:
        """Keep every batch in_progress (or finalizing), however often it is polled, until `release_batches()`.

        Validation and cancelling still happen; only completion waits. A test kills its client meanwhile.
        """
        with self._batch_lock:
            self.batches_held = True

    def release_batches(self) -> None:
        """Let held batches go on: each needs its remaining polls."""
        with self._batch_lock:
            self.batches_held = False

    def expire_batches(self, after: int = 0, *, times: int = 1, echo_auth: bool = False) -> None:
        """The next `times` batches to leave in_progress end "expired": their first `after` lines (in input order)
        are answered, the others are in the error file as `batch_expired` (`echo_auth`: their message quotes the
        Authorization header the batch was created with)."""
        with self._batch_lock:
            self._batch_expiries.extend([(after, echo_auth)] * times)

    def fail_batches(
        self,
        code: str = "batch_failed",
        message: str = "The batch could not be processed.",
        *,
        times: int = 1,
        echo_auth: bool = False,
    ) -> None:
        """The next `times` batches to leave in_progress end "failed" with this error (e.g. OpenAI's
        "token_limit_exceeded"), no line answered. Checked before `expire_batches`. `echo_auth`: the message
        (`errors.data[0].message`) quotes the Authorization header the batch was created with."""
        with self._batch_lock:
            self._batch_failures.extend([(code, message, echo_auth)] * times)

    def duplicate_entries(self, answer: Answer | None) -> None:
        """Every line of the batches answered from now on comes twice in the output file: first a copy answered
        with `answer` (by the rules of an answer: a text, ToolCalls or a Fault), then the line's own answer.
        None stops it."""
        with self._batch_lock:
            self._duplicate_with = answer

    def plant_entries(self, entries: Mapping[str, Answer]) -> None:
        """Lines for custom_ids nobody asked: each batch answered from now on that does not hold one of these
        custom_ids gets an output line for it, answered with its value (as a provider that mixes up batches)."""
        with self._batch_lock:
            self._planted = dict(entries)

    def answer_batch_api(self, route: BatchRoute, body: bytes | Any, *, status: int = 200, times: int = 1) -> None:
        """The next `times` calls of `route` get this answer instead of their own (nothing is done: no file
        stored, no batch moved on): `body` as bytes (sent as they are, as application/json) or as JSON."""
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        with self._batch_lock:
            self._batch_api_answers[route].extend([(status, data)] * times)

    def forget_batches(self) -> None:
        """Forget every batch (a 404 for their ids, none listed), as an endpoint that pruned them or that a key
        of another project asks. Files are kept."""
        with self._batch_lock:
            self._batches.clear()

    def hold_creates(self) -> None:
        """POST /v1/batches creates its batch, then holds its answer until `release_creates()`: a client killed
        meanwhile never learns the batch's id (`stats.creates_held` counts the answers held)."""
        self._creates_go.clear()

    def release_creates(self) -> None:
        self._creates_go.set()

    def batch(self, batch_id: str) -> dict[str, Any]:
        """The Batch object as GET /v1/batches/{id} would give it, without counting a poll or moving it on."""
        with self._batch_lock:
            return self._batches[batch_id].as_json()

    def file_content(self, file_id: str) -> bytes:
        """The bytes of an uploaded file or of a batch's output or error file (KeyError when unknown)."""
        with self._batch_lock:
            return self._files[file_id].data

    def reset_stats(self) -> None:
        with self._lock:
            in_flight = self.stats.in_flight
            self.stats = ServerStats(in_flight=in_flight, peak_in_flight=in_flight)

    def choose(self, body: dict[str, Any]) -> Answer:
        """The answer for one request body, by the rules in the module docstring."""
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if not self.fault_on_arrival and self._random_fault():
            return self.fault
        if self.responder is not None:
            with self._responder_lock:  # handlers run in threads; scripted responders keep plain counters
                return self.responder(body)
        last = last_user_message(body)
        for needle, reply in self.replies.items():
            if needle in last:
                return reply
        everything = "\n".join(_text(m.get("content")) for m in body.get("messages") or [] if isinstance(m, dict))
        for needle, reply in self.replies.items():
            if needle in everything:
                return reply
        return self.default

    def _random_fault(self) -> bool:
        with self._lock:
            return bool(self.fault_rate) and self._rng.random() < self.fault_rate

    def _fault_on_arrival(self) -> bool:
        if not (self.fault_on_arrival and self._random_fault()):
            return False
        with self._lock:
            self.stats.faults_on_arrival += 1
        return True

    # -- bookkeeping used by the handler -----------------------------------------------------------------

    def _record(self, request: ReceivedRequest) -> None:
        with self._lock:
            self.stats.requests += 1
            self.stats.by_prompt[last_user_message(request.body or {})] += 1
            self.stats.received.append(request)

    def _record_error(self, error: str) -> None:
        with self._lock:
            self.stats.errors.append(error)

    def _count_latency_wait(self) -> None:
        with self._lock:
            self.stats.latency_waits += 1

    def _enter(self) -> None:
        with self._lock:
            self.stats.in_flight += 1
            self.stats.peak_in_flight = max(self.stats.peak_in_flight, self.stats.in_flight)

    def _leave(self) -> None:
        with self._lock:
            self.stats.in_flight -= 1

    def _sleep(self, seconds: float) -> bool:
        """Wait, unless the server is stopping; False means stop answering."""
        return not (seconds > 0 and self._stopping.wait(seconds))

    def _refusal(self, body: Mapping[str, Any]) -> dict[str, Any] | None:
        """The 400 error object a reasoning model or a server without tool calling gives this body, if any."""
        refused = _refused_by_a_reasoning_model(body) if self.reasoning_model else None
        if refused is None and not self.tools_supported and body.get("tools"):
            refused = {"message": TOOLS_REFUSED, "type": "BadRequestError", "param": None, "code": 400}
        return refused

    # -- files and batches, used by the handler ----------------------------------------------------------
    # Batch state is under _batch_lock; stats under _lock, as for chat completions.

    def _next_id(self, prefix: str) -> str:
        self._ids[prefix] += 1  # under _batch_lock
        return f"{prefix}{self._ids[prefix]}"

    def _store_file(self, filename: str, purpose: str, data: bytes) -> _StoredFile:
        stored = _StoredFile(self._next_id("file-"), filename, purpose, data, int(time.time()))
        self._files[stored.id] = stored
        return stored

    def _stored_file(self, file_id: str) -> _StoredFile:
        stored = self._files.get(file_id)
        if stored is None:
            raise _ApiError(404, f"No such File object: {file_id}", param="id")
        return stored

    def _stored_batch(self, batch_id: str) -> _StoredBatch:
        stored = self._batches.get(batch_id)
        if stored is None:
            raise _ApiError(404, f"No batch found with id '{batch_id}'.", param="id")
        return stored

    def _upload(self, content_type: str, raw: bytes) -> dict[str, Any]:
        fields = _multipart(content_type, raw)
        purpose = fields.get("purpose", (None, b""))[1].decode("utf-8", "replace")
        if "file" not in fields:
            raise _ApiError(400, "Missing required parameter: 'file'.", code="missing_required_parameter", param="file")
        if purpose not in _FILE_PURPOSES:
            raise _ApiError(400, f"'{purpose}' is not one of {list(_FILE_PURPOSES)} - 'purpose'", param="purpose")
        filename, data = fields["file"]
        with self._batch_lock:
            stored = self._store_file(filename or "upload", purpose, data)
        with self._lock:
            self.stats.files_uploaded += 1
        return stored.as_json()

    def _file_json(self, file_id: str) -> dict[str, Any]:
        with self._batch_lock:
            return self._stored_file(file_id).as_json()

    def _file_bytes(self, file_id: str) -> bytes:
        with self._batch_lock:
            return self._stored_file(file_id).data

    def _delete_file(self, file_id: str) -> dict[str, Any]:
        with self._batch_lock:
            del self._files[self._stored_file(file_id).id]
        with self._lock:
            self.stats.files_deleted += 1
        return {"id": file_id, "object": "file", "deleted": True}

    def _create_batch(self, body: dict[str, Any], authorization: str = "") -> dict[str, Any]:
        for name in ("input_file_id", "endpoint", "completion_window"):
            if not isinstance(body.get(name), str):
                raise _ApiError(
                    400, f"Missing required parameter: '{name}'.", code="missing_required_parameter", param=name
                )
        if body["endpoint"] != BATCH_ENDPOINT:
            raise _ApiError(
                400,
                f"fake_openai batches only {BATCH_ENDPOINT}, not {body['endpoint']!r}.",
                code="invalid_value",
                param="endpoint",
            )
        if body["completion_window"] != "24h":
            raise _ApiError(
                400,
                f"Invalid value for 'completion_window': {body['completion_window']!r}. Supported values are: '24h'.",
                code="invalid_value",
                param="completion_window",
            )
        metadata = body.get("metadata")
        with self._batch_lock:
            source = self._stored_file(body["input_file_id"])
            if source.purpose != "batch":
                raise _ApiError(
                    400, f"The input file {source.id} must have the purpose 'batch'.", param="input_file_id"
                )
            entries, invalid, model = _parse_batch_input(source.data, body["endpoint"])
            batch = _StoredBatch(
                self._next_id("batch_"),
                source.id,
                body["endpoint"],
                body["completion_window"],
                metadata if isinstance(metadata, dict) else None,
                int(time.time()),
                entries,
                invalid,
                model,
                authorization,
            )
            self._batches[batch.id] = batch
            created = batch.as_json()
        with self._lock:
            self.stats.batches_created += 1
            self.stats.batch_ids.append(batch.id)
        return created

    def _scripted_batch_api_answer(self, route: str) -> tuple[int, bytes] | None:
        with self._batch_lock:
            queued = self._batch_api_answers.get(route)
            return queued.popleft() if queued else None

    def _wait_for_creates(self) -> bool:
        """Hold a created batch's answer while `hold_creates` says so; False when the server stops meanwhile."""
        if self._creates_go.is_set():
            return True
        with self._lock:
            self.stats.creates_held += 1
        try:
            while not self._creates_go.wait(0.05):
                if self._stopping.is_set():
                    return False
            return True
        finally:
            with self._lock:
                self.stats.creates_held -= 1

    def _list_batches(self) -> dict[str, Any]:
        with self._batch_lock:
            # newest first, as OpenAI; one page of all of them (`limit` and `after` are not looked at)
            data = [batch.as_json() for batch in reversed(self._batches.values())]
        return {
            "object": "list",
            "data": data,
            "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None,
            "has_more": False,
        }

    def _poll_batch(self, batch_id: str) -> dict[str, Any]:
        with self._batch_lock:
            batch = self._stored_batch(batch_id)
            with self._lock:
                self.stats.batch_polls += 1
            self._advance(batch)
            return batch.as_json()

    def _cancel_batch(self, batch_id: str) -> dict[str, Any]:
        with self._batch_lock:
            batch = self._stored_batch(batch_id)
            if batch.status not in _ACTIVE:
                raise _ApiError(400, f"Cannot cancel a batch with status '{batch.status}'.")
            if batch.status != "cancelling":
                self._reach(batch, "cancelling")
            return batch.as_json()

    # -- a batch's life, under _batch_lock ---------------------------------------------------------------

    def _advance(self, batch: _StoredBatch) -> None:
        """One poll's worth of progress (see `batch_polls_to_complete`)."""
        if batch.status == "cancelling":
            self._finish(batch, "cancelled")
            return
        if batch.status not in _ACTIVE:
            return
        if batch.status == "validating" and batch.invalid:
            batch.errors = batch.invalid
            self._reach(batch, "failed")
            return
        polls = max(1, self.batch_polls_to_complete)
        step = batch.advances + 1
        target: BatchStatus = "in_progress"
        if step >= polls:
            target = "completed"
        elif polls >= 3 and step == polls - 1:
            target = "finalizing"
        if batch.status == "validating":
            self._reach(batch, "in_progress")
        if target == "in_progress":
            batch.advances = step
            return
        if self.batches_held:
            return  # its remaining polls come after `release_batches()`
        batch.advances = step
        if not batch.answered:
            if self._batch_failures:
                code, message, echo = self._batch_failures.popleft()
                if echo:
                    message = f"{message} (Authorization: {batch.authorization})"
                batch.errors = [{"code": code, "message": message, "param": None, "line": None}]
                self._reach(batch, "failed")
                return
            after, echo = self._batch_expiries.popleft() if self._batch_expiries else (None, False)
            self._answer_all(batch, batch.entries if after is None else batch.entries[:after])
            if after is not None:
                self._finish(batch, "expired", echo_auth=echo)
                return
        if target == "finalizing":
            self._reach(batch, "finalizing")
        else:
            self._finish(batch, "completed")

    def _reach(self, batch: _StoredBatch, status: BatchStatus) -> None:
        batch.status = status
        batch.at[status] = int(time.time())

    def _answer_all(self, batch: _StoredBatch, entries: list[_Entry]) -> None:
        batch.answered = True
        for entry in entries:
            own = self._line(batch, entry.custom_id, *self._batch_response(batch, entry.body))
            (batch.outputs if own["response"]["status_code"] == 200 else batch.failures).append(own)
            if self._duplicate_with is not None:  # after it here, before it in the file (written reversed)
                copy = self._answer_as(batch, entry.body, self._duplicate_with)
                batch.outputs.append(self._line(batch, entry.custom_id, *copy))
            with self._lock:
                self.stats.batch_entries_answered += 1
                self.stats.batch_by_prompt[last_user_message(entry.body)] += 1
        asked = {entry.custom_id for entry in batch.entries}
        for custom_id, answer in self._planted.items():
            if custom_id not in asked:
                status, body = self._answer_as(batch, {"model": batch.model or self.model, "messages": []}, answer)
                batch.outputs.append(self._line(batch, custom_id, status, body))

    def _line(self, batch: _StoredBatch, custom_id: str, status: int, body: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": self._next_id("batch_req_"),
            "custom_id": custom_id,
            "response": {"status_code": status, "request_id": self._next_id("req_fake_"), "body": body},
            "error": None,
        }

    def _batch_response(self, batch: _StoredBatch, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """One line's status and body, by the rules an interactive request follows (latency and capacity aside)."""
        refused = self._refusal(body)
        if refused is not None:
            return 400, {"error": refused}
        try:
            # a fault "on arrival" has no arrival to come at here: it is just the random fault
            answer = self.fault if self.fault_on_arrival and self._random_fault() else self.choose(body)
        except Exception as exc:  # a broken responder is the test's bug, as for chat completions
            self._record_error(f"{type(exc).__name__}: {exc}")
            return 500, _error_body(f"fake_openai responder raised {type(exc).__name__}: {exc}", "server_error")
        return self._answer_as(batch, body, answer)

    def _answer_as(self, batch: _StoredBatch, body: dict[str, Any], answer: Answer) -> tuple[int, dict[str, Any]]:
        if isinstance(answer, Fault):
            return _batch_fault(self, batch, body, answer)
        return 200, _completion(self.model, body, answer, reasoning=self.reasoning_content)

    def _finish(self, batch: _StoredBatch, status: BatchStatus, *, echo_auth: bool = False) -> None:
        """Write the output and error files and end the batch in `status`."""
        answered = {line["custom_id"] for line in batch.outputs + batch.failures}
        code, message = ("batch_expired", EXPIRED) if status == "expired" else ("batch_cancelled", CANCELLED)
        if echo_auth:
            message = f"{message} (Authorization: {batch.authorization})"
        for entry in batch.entries:
            if entry.custom_id not in answered:
                batch.failures.append(
                    {
                        "id": self._next_id("batch_req_"),
                        "custom_id": entry.custom_id,
                        "response": None,
                        "error": {"code": code, "message": message},
                    }
                )
        # Reversed: the output files do not keep the input's order, and clients must not rely on it.
        if batch.outputs:
            batch.output_file_id = self._store_file(
                f"{batch.id}_output.jsonl", "batch_output", _jsonl(reversed(batch.outputs))
            ).id
        if batch.failures:
            batch.error_file_id = self._store_file(
                f"{batch.id}_error.jsonl", "batch_output", _jsonl(reversed(batch.failures))
            ).id
        self._reach(batch, status)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # the default backlog of 5 drops SYNs when a client opens 64+ connections at once

    def __init__(self, address: tuple[str, int], handler: type[_Handler], fake: FakeOpenAI) -> None:
        self.fake = fake
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def close_all_connections(self) -> None:
        # Keep-alive connections would otherwise hold handler threads (and the client's pool) past stop().
        with self._connections_lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (timeout, reset) is part of the tests, not a server error worth a traceback.
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError, OSError)):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real endpoints do
    _in_flight = False
    # Headers and body go out in two writes; with Nagle on, the second waits for the client's delayed ACK
    # (40 ms on Linux), which would cap a keep-alive connection at ~25 requests per second.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    # -- routing -----------------------------------------------------------------------------------------

    def do_GET(self) -> None:
        route = self._files_or_batches()
        if route is not None:
            self._serve_files_and_batches("GET", route, b"")
        elif self.path.rstrip("/") in ("/v1/models", "/models"):
            model = {
                "id": self.server.fake.model,
                "object": "model",
                "owned_by": "fake",
                **self.server.fake.model_entry,
            }
            self.server.fake.stats.model_listings += 1
            if self.server.fake.models_body is not None:
                self._send_bytes(200, self.server.fake.models_body)
            else:
                self._send_json(200, {"object": "list", "data": [model]})
        else:
            self._send_error(404, f"Unknown path {self.path}", "invalid_request_error")

    def do_DELETE(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        route = self._files_or_batches()
        if route is not None:
            self._serve_files_and_batches("DELETE", route, raw)
        else:
            self._send_error(404, f"Unknown path {self.path}", "invalid_request_error")

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        route = self._files_or_batches()
        if route is not None:
            self._serve_files_and_batches("POST", route, raw)
            return
        if self.path.split("?")[0].rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._send_error(404, f"Unknown path {self.path}", "invalid_request_error")
            return
        fake = self.server.fake
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
        body = parsed if isinstance(parsed, dict) else None
        headers = {name.lower(): value for name, value in self.headers.items()}
        fake._record(ReceivedRequest("POST", self.path, headers, body, time.monotonic()))
        fake._enter()
        self._in_flight = True
        try:
            self._answer(fake, body)
        finally:
            self._leave()

    def _files_or_batches(self) -> tuple[str, ...] | None:
        """("files", id, "content"), ("batches", id), ... for the files and batches endpoints, with or without /v1."""
        path = self.path.split("?")[0].rstrip("/")
        parts = tuple((path[3:] if path.startswith("/v1/") else path).strip("/").split("/"))
        return parts if parts[0] in ("files", "batches") else None

    def _serve_files_and_batches(self, method: str, route: tuple[str, ...], raw: bytes) -> None:
        # Not counted in `requests` nor `in_flight`, and free of latency, capacity and faults: those are for
        # the model's answers, which a batch gets when it completes.
        fake = self.server.fake
        if not fake.batch_api:
            self._send_error(404, f"Unknown path {self.path}", "invalid_request_error")
            return
        if fake.require_api_key and self.headers.get("Authorization") != f"Bearer {fake.require_api_key}":
            self._send_error(401, "Incorrect API key provided.", "invalid_request_error", code="invalid_api_key")
            return
        name = _route_name(method, route)
        if name is not None:
            with fake._lock:
                fake.stats.batch_api_calls[name] += 1
            scripted = fake._scripted_batch_api_answer(name)
            if scripted is not None:
                self._send_bytes(*scripted)
                return
        try:
            match (method, *route):
                case ("POST", "files"):
                    payload = fake._upload(self.headers.get("Content-Type", ""), raw)
                case ("GET", "files", file_id):
                    payload = fake._file_json(file_id)
                case ("GET", "files", file_id, "content"):
                    self._send_bytes(200, fake._file_bytes(file_id), content_type="application/octet-stream")
                    return
                case ("DELETE", "files", file_id):
                    payload = fake._delete_file(file_id)
                case ("POST", "batches"):
                    payload = fake._create_batch(_json_object(raw), self.headers.get("Authorization", ""))
                    if not fake._wait_for_creates():
                        return  # the server is stopping: the client never hears of its batch
                case ("GET", "batches"):
                    payload = fake._list_batches()
                case ("GET", "batches", batch_id):
                    payload = fake._poll_batch(batch_id)
                case ("POST", "batches", batch_id, "cancel"):
                    payload = fake._cancel_batch(batch_id)
                case _:
                    raise _ApiError(404, f"Unknown path {self.path}")
        except _ApiError as error:
            self._send_error(error.status, error.message, _error_type(error.status), code=error.code, param=error.param)
            return
        self._send_json(200, payload)

    def _leave(self) -> None:
        # Called just before the last bytes go out: a client that answers the response with its next request
        # must not find this one still counted (a sequential client would show a peak of 2).
        if self._in_flight:
            self._in_flight = False
            self.server.fake._leave()

    def _answer(self, fake: FakeOpenAI, body: dict[str, Any] | None) -> None:
        if body is None:
            self._send_error(400, "We could not parse the JSON body of your request.", "invalid_request_error")
            return
        if fake.require_api_key and self.headers.get("Authorization") != f"Bearer {fake.require_api_key}":
            self._send_error(401, "Incorrect API key provided.", "invalid_request_error", code="invalid_api_key")
            return
        refused = fake._refusal(body)
        if refused is not None:
            self._send_json(400, {"error": refused})
            return
        if fake.refuse_null_content and _has_null_content(body):
            self._send_error(500, NULL_CONTENT_REFUSED, "server_error")
            return
        tools_dropped = fake.tools_need_choice and bool(body.get("tools")) and "tool_choice" not in body
        if tools_dropped:  # the model never sees them: neither do the answering rules
            body = {key: value for key, value in body.items() if key != "tools"}
        slots = fake._slots
        if slots is not None and not slots.acquire(blocking=not fake.reject_over_capacity):
            self._send_error(429, "Server at capacity", "rate_limit_exceeded", headers={"Retry-After": "1"})
            return
        try:
            if fake._fault_on_arrival():
                self._send_fault(fake, body, fake.fault)
                return
            if fake.latency_s > 0:
                fake._count_latency_wait()
            if not fake._sleep(fake.latency_s):
                return
            try:
                answer = fake.choose(body)
            except Exception as exc:  # a broken responder is the test's bug: say so loudly, in the answer too
                fake._record_error(f"{type(exc).__name__}: {exc}")
                self._send_error(500, f"fake_openai responder raised {type(exc).__name__}: {exc}", "server_error")
                return
            if isinstance(answer, ToolCalls) and tools_dropped:
                answer = answer.content or ""  # no function was offered to the model: no call
            if isinstance(answer, Fault):
                self._send_fault(fake, body, answer)
            else:
                if self._client_gone():
                    with fake._lock:
                        fake.stats.abandoned += 1
                unseen = fake.tools_need_system and not any(
                    isinstance(message, dict) and message.get("role") == "system"
                    for message in body.get("messages") or []
                )
                completion = _completion(
                    fake.model,
                    body,
                    answer,
                    reasoning=fake.reasoning_content,
                    fingerprint=fake.system_fingerprint,
                    max_tokens=fake.max_answer_tokens,
                    tools_seen=not unseen,
                )
                if fake.usage is not None:
                    completion["usage"] = fake.usage
                if fake.edit_completion is not None:
                    fake.edit_completion(completion)
                self._send_json(200, completion)
        finally:
            if slots is not None:
                slots.release()

    def _client_gone(self) -> bool:
        """Whether the client closed the connection while its answer was being made (it reads nothing more:
        the request has been sent whole, so a readable socket with no data is the client's end of stream)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    # -- faults ------------------------------------------------------------------------------------------

    def _send_fault(self, fake: FakeOpenAI, body: dict[str, Any], fault: Fault) -> None:
        kind = fault.kind
        if kind == "status":
            headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
            message = fault.message or f"Simulated HTTP {fault.status}"
            self._send_error(
                fault.status, message, fault.error_type or _error_type(fault.status), headers=headers, code=fault.code
            )
        elif kind in _MALFORMED_REPLIES:
            self._send_json(200, _malformed_reply(fake.model, body, fault))
        elif kind == "reset":
            self._send_reset(json.dumps(_completion(fake.model, body, "this answer never arrives")).encode())
        elif kind == "delay":
            if fake._sleep(fault.delay_s):
                self._send_json(200, _completion(fake.model, body, "late answer"))
        elif kind == "malformed_json":
            self._send_bytes(200, b'{"id": "chatcmpl-broken", "object": "chat.completion", "choices": [{"mess')
        elif kind == "empty_choices":
            payload = _completion(fake.model, body, "")
            payload["choices"] = []
            self._send_json(200, payload)
        elif kind == "null_content":
            payload = _completion(fake.model, body, "")
            payload["choices"][0]["message"]["content"] = None
            self._send_json(200, payload)
        elif kind == "huge":
            self._send_json(200, _completion(fake.model, body, Fault.huge_text(fault.size)))
        elif kind == "invalid_utf8":
            encoded = json.dumps(_completion(fake.model, body, _NOT_UTF8_MARKER)).encode()
            self._send_bytes(200, encoded.replace(_NOT_UTF8_MARKER.encode(), NOT_UTF8))
        elif kind == "trickle":
            data = json.dumps(_completion(fake.model, body, "a slow answer")).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self._leave()
            for index in range(len(data)):
                if not fake._sleep(fault.delay_s):
                    return
                try:
                    self.wfile.write(data[index : index + 1])
                    self.wfile.flush()
                except OSError:  # the client gave up
                    return
        elif kind == "raw":
            self._send_bytes(200, fault.body)
        elif kind == "echo_auth":
            echoed = self.headers.get("Authorization", "")
            message = f"Incorrect API key provided: {echoed}. You can find your API key in your account settings."
            self._send_error(401, message, "invalid_request_error", code="invalid_api_key")
        else:  # pragma: no cover - FaultKind is closed
            raise ValueError(f"unknown fault kind {kind!r}")

    def _send_reset(self, payload: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self._leave()
        self.wfile.write(payload[: len(payload) // 2])
        self.wfile.flush()
        # SO_LINGER with a zero timeout turns close() into a RST instead of an orderly FIN.
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True

    # -- writing -----------------------------------------------------------------------------------------

    def _send_error(
        self,
        status: int,
        message: str,
        error_type: str,
        *,
        code: str | int | None = None,
        param: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self._send_json(status, _error_body(message, error_type, code=code, param=param), headers)

    def _send_json(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        self._send_bytes(status, json.dumps(payload).encode(), headers)

    def _send_bytes(
        self,
        status: int,
        data: bytes,
        headers: Mapping[str, str] | None = None,
        *,
        content_type: str = "application/json",
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self._leave()
        self.wfile.write(data)


def _route_name(method: str, route: tuple[str, ...]) -> str | None:
    """The name `answer_batch_api` and `stats.batch_api_calls` give a files or batches call."""
    names = {
        ("POST", 1, "files"): "upload",
        ("GET", 2, "files"): "file",
        ("GET", 3, "files"): "content",
        ("DELETE", 2, "files"): "delete",
        ("POST", 1, "batches"): "create",
        ("GET", 1, "batches"): "list",
        ("GET", 2, "batches"): "poll",
        ("POST", 3, "batches"): "cancel",
    }
    return names.get((method, len(route), route[0]))


def _json_object(raw: bytes) -> dict[str, Any]:
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        raise _ApiError(400, "We could not parse the JSON body of your request.")
    return parsed


def _error_body(
    message: str, error_type: str, *, code: str | int | None = None, param: str | None = None
) -> dict[str, Any]:
    return {"error": {"message": message, "type": error_type, "param": param, "code": code}}


def _jsonl(lines: Iterable[Any]) -> bytes:
    """JSON Lines; an answer's `Fault.invalid_utf8()` marker becomes bytes that are not UTF-8 (NOT_UTF8)."""
    return "".join(json.dumps(line) + "\n" for line in lines).encode().replace(_NOT_UTF8_MARKER.encode(), NOT_UTF8)


def _multipart(content_type: str, raw: bytes) -> dict[str, tuple[str | None, bytes]]:
    """The fields of a multipart/form-data body: name → (filename, bytes), the bytes exactly as sent."""
    header = email.message.Message()
    header["Content-Type"] = content_type
    boundary = header.get_param("boundary")
    if header.get_content_type() != "multipart/form-data" or not isinstance(boundary, str):
        raise _ApiError(400, "The request must be multipart/form-data with a boundary.")
    fields: dict[str, tuple[str | None, bytes]] = {}
    # Each part follows CRLF--boundary; the last delimiter is --boundary-- (RFC 7578, 2046)
    for part in (b"\r\n" + raw).split(b"\r\n--" + boundary.encode())[1:]:
        if part.startswith(b"--"):
            break
        head, _, data = part.partition(b"\r\n\r\n")
        headers = email.parser.BytesHeaderParser(policy=email.policy.HTTP).parsebytes(head.lstrip(b"\r\n"))
        disposition = email.message.Message()
        disposition["Content-Disposition"] = str(headers.get("Content-Disposition", ""))
        name = disposition.get_param("name", header="content-disposition")
        if isinstance(name, str):
            filename = disposition.get_param("filename", header="content-disposition")
            fields[name] = (filename if isinstance(filename, str) else None, data)
    return fields


def _parse_batch_input(data: bytes, endpoint: str) -> tuple[list[_Entry], list[dict[str, Any]], str | None]:
    """A batch input file's requests, the errors that fail the batch (each with its line), and its model."""
    entries: list[_Entry] = []
    errors: list[dict[str, Any]] = []
    seen: set[str] = set()
    model: str | None = None

    def error(line: int, code: str, message: str, param: str | None = None) -> None:  # lines count from 1
        errors.append({"code": code, "message": message, "param": param, "line": line})

    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            request = json.loads(raw)
        except ValueError:  # UnicodeDecodeError included
            request = None
        if not isinstance(request, dict):
            error(number, "invalid_json_line", "This line is not parseable as valid JSON.")
            continue
        custom_id, body = request.get("custom_id"), request.get("body")
        if not isinstance(custom_id, str) or not custom_id:
            error(number, "missing_required_parameter", "Missing required parameter: 'custom_id'.", "custom_id")
        elif custom_id in seen:
            error(
                number,
                "duplicate_custom_id",
                f"The custom_id '{custom_id}' is not unique: custom_id values must be unique within a batch.",
                "custom_id",
            )
        elif request.get("method") != "POST":
            error(number, "invalid_method", "The method of every request in a batch must be 'POST'.", "method")
        elif request.get("url") != endpoint:
            error(
                number,
                "invalid_url",
                f"The url {request.get('url')!r} does not match the batch's endpoint '{endpoint}'.",
                "url",
            )
        elif not isinstance(body, dict) or not isinstance(body.get("model"), str):
            error(number, "missing_required_parameter", "Missing required parameter: 'body.model'.", "body.model")
        elif model is not None and body["model"] != model:
            error(
                number,
                "mismatched_model",
                f"The model '{body['model']}' differs from '{model}' of the lines before: a batch takes one model.",
                "body.model",
            )
        else:
            model = body["model"]
            entries.append(_Entry(custom_id, body))
        if isinstance(custom_id, str):
            seen.add(custom_id)
    if not entries and not errors:
        errors.append({"code": "empty_file", "message": "The batch input file is empty.", "param": None, "line": None})
    return entries, errors, model


def _batch_fault(
    fake: FakeOpenAI, batch: _StoredBatch, body: dict[str, Any], fault: Fault
) -> tuple[int, dict[str, Any]]:
    """What a fault makes of one batch line: its HTTP error, or the same odd 200 body a request would get (an
    answer whose bytes are not UTF-8, a 401 quoting the Authorization header the batch was created with)."""
    if fault.kind == "status":
        message = fault.message or f"Simulated HTTP {fault.status}"
        return fault.status, _error_body(message, fault.error_type or _error_type(fault.status), code=fault.code)
    if fault.kind in _MALFORMED_REPLIES:
        return 200, _malformed_reply(fake.model, body, fault)
    if fault.kind == "invalid_utf8":
        return 200, _completion(fake.model, body, _NOT_UTF8_MARKER)
    if fault.kind == "echo_auth":
        message = (
            f"Incorrect API key provided: {batch.authorization}. You can find your API key in your account settings."
        )
        return 401, _error_body(message, "invalid_request_error", code="invalid_api_key")
    if fault.kind in ("empty_choices", "null_content", "huge", "delay"):
        text = Fault.huge_text(fault.size) if fault.kind == "huge" else "late answer" if fault.kind == "delay" else ""
        payload = _completion(fake.model, body, text)
        if fault.kind == "empty_choices":
            payload["choices"] = []
        elif fault.kind == "null_content":
            payload["choices"][0]["message"]["content"] = None
        return 200, payload
    # a transport fault (reset, broken or slow bytes, echoed credentials) has no form in a file
    return 500, _error_body(f"Simulated {fault.kind} fault in a batch", "server_error")


_MALFORMED_REPLIES = ("nameless_call", "content_not_text", "tool_calls_object", "error_in_body")


def _malformed_reply(model: str, body: Mapping[str, Any], fault: Fault) -> dict[str, Any]:
    """The 200 body of a fault whose JSON is whole but no usable completion."""
    if fault.kind == "error_in_body":
        return {"error": {"message": fault.message, "code": fault.code}}
    if fault.kind == "content_not_text":
        payload = _completion(model, body, "")
        payload["choices"][0]["message"]["content"] = json.loads(fault.value)
        return payload
    payload = _completion(model, body, ToolCalls.of(("get_weather", {"city": "Paris"})))
    message = payload["choices"][0]["message"]
    if fault.kind == "nameless_call":
        message["tool_calls"][0]["function"]["name"] = ""
    else:  # tool_calls_object: the one call, not in a list
        message["tool_calls"] = message["tool_calls"][0]
    return payload


def _refused_by_a_reasoning_model(body: Mapping[str, Any]) -> dict[str, Any] | None:
    """The error OpenAI's reasoning models give for the first sampling parameter they do not take."""
    if "max_tokens" in body:
        return {
            "message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
            "'max_completion_tokens' instead.",
            "type": "invalid_request_error",
            "param": "max_tokens",
            "code": "unsupported_parameter",
        }
    for name in ("temperature", "top_p"):
        if name in body and body[name] != 1:
            return {
                "message": f"Unsupported value: '{name}' does not support {body[name]} with this model. Only "
                "the default (1) value is supported.",
                "type": "invalid_request_error",
                "param": name,
                "code": "unsupported_value",
            }
    return None


def _error_type(status: int) -> str:
    if status == 429:
        return "rate_limit_exceeded"
    if status >= 500:
        return "server_error"
    return "invalid_request_error"


# vLLM's 400 for `tools` when the server was started without a tool-call parser
TOOLS_REFUSED = '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'


def _has_null_content(body: Mapping[str, Any]) -> bool:
    """Whether an assistant message of the request has `content: null` (llama-cpp-python refuses it)."""
    return any(
        isinstance(message, dict)
        and message.get("role") == "assistant"
        and "content" in message
        and message["content"] is None
        for message in body.get("messages") or []
    )


# llama-cpp-python 0.3's 500 for an assistant message with `content: null` (its chat template adds strings)
NULL_CONTENT_REFUSED = 'can only concatenate str (not "NoneType") to str'


def _completion(
    model: str,
    body: Mapping[str, Any],
    answer: str | ToolCalls,
    *,
    reasoning: str | None = None,
    max_tokens: int | None = None,
    fingerprint: str | None = "fp_fake_0001",
    tools_seen: bool = True,
) -> dict[str, Any]:
    if isinstance(answer, ToolCalls):
        completion = _completion(
            model, body, answer.content or "", reasoning=reasoning, fingerprint=fingerprint, tools_seen=tools_seen
        )
        completion["choices"][0]["message"] = {**completion["choices"][0]["message"], **answer.message()}
        completion["choices"][0]["finish_reason"] = "tool_calls"
        if not tools_seen:  # llama-cpp-python counts each call's `functions.<name>:` into the prompt
            counts = completion["usage"]
            counts["prompt_tokens"] += len(answer.calls)
            counts["total_tokens"] += len(answer.calls)
        return completion
    text = answer
    finish_reason = "stop"
    stop = body.get("stop")
    stops = [stop] if isinstance(stop, str) else [s for s in stop or [] if isinstance(s, str) and s]
    cut = min((i for i in (text.find(s) for s in stops) if i >= 0), default=-1)
    if cut >= 0:
        text = text[:cut]  # as the API does, the stop sequence itself is not returned
    if max_tokens is not None and _count_tokens(text) > max_tokens:
        text = " ".join(text.split()[:max_tokens])
        finish_reason = "length"
    prompt = "\n".join(_text(m.get("content")) for m in body.get("messages") or [] if isinstance(m, dict))
    if tools_seen and body.get("tools"):  # rendered into the prompt, as chat templates do
        prompt += "\n" + json.dumps(body["tools"])
    prompt_tokens, completion_tokens = _count_tokens(prompt), _count_tokens(text)
    reasoning_tokens = _count_tokens(reasoning) if reasoning else 0
    message: dict[str, Any] = {"role": "assistant", "content": text}
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens + reasoning_tokens,
        "total_tokens": prompt_tokens + completion_tokens + reasoning_tokens,
    }
    if reasoning:
        message["reasoning_content"] = reasoning
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
    return {
        "id": f"chatcmpl-fake-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model") or model,
        **({"system_fingerprint": fingerprint} if fingerprint else {}),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish_reason,
                "logprobs": None,
            }
        ],
        "usage": usage,
    }


# -- standalone ----------------------------------------------------------------------------------------

_CLI_FAULTS: dict[str, Callable[[], Fault]] = {
    "429": Fault.rate_limit,
    "500": lambda: Fault.http(500),
    "502": lambda: Fault.http(502),
    "503": lambda: Fault.http(503),
    "reset": Fault.reset,
    "malformed_json": Fault.malformed_json,
    "empty_choices": Fault.empty_choices,
    "null_content": Fault.null_content,
    "invalid_utf8": Fault.invalid_utf8,
    "nameless_call": Fault.nameless_call,
    "insufficient_quota": Fault.insufficient_quota,
    "402": Fault.no_credits,
}


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="A fake OpenAI chat-completions server for tests and benchmarks.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (printed on the first line)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before every answer. Default: 0")
    parser.add_argument("--reply", default="", help="the default reply text")
    parser.add_argument("--replies", metavar="FILE", help='JSON object {"substring of the prompt": "reply"}')
    parser.add_argument("--max-concurrency", type=int, default=None, help="answer at most N requests at once")
    parser.add_argument("--reject-over-capacity", action="store_true", help="429 instead of queueing past the cap")
    parser.add_argument("--fault", choices=sorted(_CLI_FAULTS), default="500", help="the fault injected. Default: 500")
    parser.add_argument("--fault-rate", type=float, default=0.0, help="probability of --fault per request")
    parser.add_argument("--fail-first", type=int, default=0, metavar="N", help="the first N requests get --fault")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--api-key", default=None, help="require this bearer key (401 otherwise)")
    parser.add_argument("--model", default="fake-model")
    parser.add_argument(
        "--batch-polls", type=int, default=2, metavar="N", help="a batch shows completed at its N-th poll. Default: 2"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = _parse_args(argv)
    replies: dict[str, str] = {}
    if args.replies:
        with open(args.replies, encoding="utf-8") as f:
            replies = json.load(f)
    fault = _CLI_FAULTS[args.fault]()
    server = FakeOpenAI(
        replies=replies,
        default=args.reply,
        latency_s=args.latency,
        max_concurrency=args.max_concurrency,
        reject_over_capacity=args.reject_over_capacity,
        fault_rate=args.fault_rate,
        fault=fault,
        seed=args.seed,
        require_api_key=args.api_key,
        model=args.model,
        batch_polls_to_complete=args.batch_polls,
        host=args.host,
        port=args.port,
    )
    server.fail_first(args.fail_first, fault)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    with server:
        print(server.base_url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            done.wait()
        print(
            json.dumps({"requests": server.stats.requests, "peak_in_flight": server.stats.peak_in_flight}),
            file=sys.stderr,
            flush=True,
        )


if __name__ == "__main__":
    main()
