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

Standalone, for benchmark scripts and pytester subprocesses (prints the base URL on its first line):

    python tests/fake_openai.py --port 0 --latency 1.0 --reply "[f()]"
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

__all__ = ["FakeOpenAI", "Fault", "FaultKind", "ReceivedRequest", "ServerStats", "ToolCalls"]

FaultKind = Literal[
    "status",  # an HTTP error status with an OpenAI-style error body (429, 500, 401, ...)
    "reset",  # headers and half the body, then a TCP reset
    "delay",  # a valid answer, but only after `delay_s` (beyond the client's timeout)
    "malformed_json",  # 200, application/json, a body cut off mid-object
    "empty_choices",  # 200, valid JSON, "choices": []
    "null_content",  # 200, valid JSON, "message": {"content": null}
    "huge",  # 200, a valid answer whose text is `size` characters long
    "invalid_utf8",  # 200, application/json, bytes in the content that are not UTF-8
    "echo_auth",  # 401 whose error message repeats the Authorization header verbatim
    "trickle",  # 200 and headers at once, then the body one byte every `delay_s` (each read is quick)
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
    code: str | None = None

    @classmethod
    def http(cls, status: int, *, retry_after: float | str | None = None, message: str = "",
             code: str | None = None) -> Fault:
        return cls("status", status=status, retry_after=_header_value(retry_after), message=message, code=code)

    @classmethod
    def context_overflow(cls, dialect: str = "openai") -> Fault:
        """A prompt longer than the model's context, as OpenAI (with its error code) or vLLM (wording only) say."""
        if dialect == "openai":
            return cls.http(400, code="context_length_exceeded", message=(
                "This model's maximum context length is 8192 tokens. However, your messages resulted in 9120 "
                "tokens. Please reduce the length of the messages."))
        return cls.http(400, message=("This model's maximum context length is 4096 tokens. However, you requested "
                                      "5210 tokens (4010 in the messages, 1200 in the completion). Please reduce "
                                      "the length of the messages or completion."))

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
            tool_calls.append({"id": f"call_fake_{index}", "type": "function",
                               "function": {"name": name, "arguments": sent}})
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
    by_prompt: collections.Counter[str] = field(default_factory=collections.Counter)  # last user message → count
    in_flight: int = 0  # received and not yet answered, including those waiting for a capacity slot
    peak_in_flight: int = 0
    faults_on_arrival: int = 0  # random faults answered at once (`fault_on_arrival`), without the latency
    received: list[ReceivedRequest] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # responder exceptions (each answered with a 500)

    @property
    def bodies(self) -> list[dict[str, Any] | None]:
        return [r.body for r in self.received]

    @property
    def headers(self) -> list[dict[str, str]]:
        return [r.headers for r in self.received]


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
        tools_supported: False answers a request carrying `tools` with the 400 vLLM gives when started without
            a tool-call parser.
        model: the model id reported by GET /v1/models and echoed in answers.
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
        model: str = "fake-model",
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
        self.tools_supported = tools_supported
        self.model = model
        self.reject_over_capacity = reject_over_capacity
        self.stats = ServerStats()
        self._host, self._port = host, port
        self._queue: collections.deque[Answer] = collections.deque()
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._responder_lock = threading.Lock()
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
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="fake-openai", daemon=True
        )
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
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

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

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    # -- routing -----------------------------------------------------------------------------------------

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            model = {"id": self.server.fake.model, "object": "model", "owned_by": "fake"}
            self._send_json(200, {"object": "list", "data": [model]})
        else:
            self._send_error(404, f"Unknown path {self.path}", "invalid_request_error")

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
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
        refused = _refused_by_a_reasoning_model(body) if fake.reasoning_model else None
        if refused is None and not fake.tools_supported and body.get("tools"):
            refused = {"message": TOOLS_REFUSED, "type": "BadRequestError", "param": None, "code": 400}
        if refused is not None:
            self._send_json(400, {"error": refused})
            return
        slots = fake._slots
        if slots is not None and not slots.acquire(blocking=not fake.reject_over_capacity):
            self._send_error(429, "Server at capacity", "rate_limit_exceeded", headers={"Retry-After": "1"})
            return
        try:
            if fake._fault_on_arrival():
                self._send_fault(fake, body, fake.fault)
                return
            if not fake._sleep(fake.latency_s):
                return
            try:
                answer = fake.choose(body)
            except Exception as exc:  # a broken responder is the test's bug: say so loudly, in the answer too
                fake._record_error(f"{type(exc).__name__}: {exc}")
                self._send_error(500, f"fake_openai responder raised {type(exc).__name__}: {exc}", "server_error")
                return
            if isinstance(answer, Fault):
                self._send_fault(fake, body, answer)
            else:
                self._send_json(200, _completion(fake.model, body, answer, reasoning=fake.reasoning_content))
        finally:
            if slots is not None:
                slots.release()

    # -- faults ------------------------------------------------------------------------------------------

    def _send_fault(self, fake: FakeOpenAI, body: dict[str, Any], fault: Fault) -> None:
        kind = fault.kind
        if kind == "status":
            headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
            message = fault.message or f"Simulated HTTP {fault.status}"
            self._send_error(fault.status, message, _error_type(fault.status), headers=headers, code=fault.code)
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
            marker = "@@NOT-UTF8@@"
            encoded = json.dumps(_completion(fake.model, body, marker)).encode()
            self._send_bytes(200, encoded.replace(marker.encode(), b"caf\xe9 \xff\xfe"))
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
                    self.wfile.write(data[index:index + 1])
                    self.wfile.flush()
                except OSError:  # the client gave up
                    return
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
        code: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        error = {"error": {"message": message, "type": error_type, "param": None, "code": code}}
        self._send_json(status, error, headers)

    def _send_json(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        self._send_bytes(status, json.dumps(payload).encode(), headers)

    def _send_bytes(self, status: int, data: bytes, headers: Mapping[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self._leave()
        self.wfile.write(data)


def _refused_by_a_reasoning_model(body: Mapping[str, Any]) -> dict[str, Any] | None:
    """The error OpenAI's reasoning models give for the first sampling parameter they do not take."""
    if "max_tokens" in body:
        return {"message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                           "'max_completion_tokens' instead.", "type": "invalid_request_error",
                "param": "max_tokens", "code": "unsupported_parameter"}
    for name in ("temperature", "top_p"):
        if name in body and body[name] != 1:
            return {"message": f"Unsupported value: '{name}' does not support {body[name]} with this model. Only "
                               "the default (1) value is supported.", "type": "invalid_request_error",
                    "param": name, "code": "unsupported_value"}
    return None


def _error_type(status: int) -> str:
    if status == 429:
        return "rate_limit_exceeded"
    if status >= 500:
        return "server_error"
    return "invalid_request_error"


# vLLM's 400 for `tools` when the server was started without a tool-call parser
TOOLS_REFUSED = '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'


def _completion(model: str, body: Mapping[str, Any], answer: str | ToolCalls, *,
                reasoning: str | None = None) -> dict[str, Any]:
    if isinstance(answer, ToolCalls):
        completion = _completion(model, body, answer.content or "", reasoning=reasoning)
        completion["choices"][0]["message"] = {**completion["choices"][0]["message"], **answer.message()}
        completion["choices"][0]["finish_reason"] = "tool_calls"
        return completion
    text = answer
    finish_reason = "stop"
    stop = body.get("stop")
    stops = [stop] if isinstance(stop, str) else [s for s in stop or [] if isinstance(s, str) and s]
    cut = min((i for i in (text.find(s) for s in stops) if i >= 0), default=-1)
    if cut >= 0:
        text = text[:cut]  # as the API does, the stop sequence itself is not returned
    prompt = "\n".join(_text(m.get("content")) for m in body.get("messages") or [] if isinstance(m, dict))
    prompt_tokens, completion_tokens = _count_tokens(prompt), _count_tokens(text)
    reasoning_tokens = _count_tokens(reasoning) if reasoning else 0
    message: dict[str, Any] = {"role": "assistant", "content": text}
    usage: dict[str, Any] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens + reasoning_tokens,
                             "total_tokens": prompt_tokens + completion_tokens + reasoning_tokens}
    if reasoning:
        message["reasoning_content"] = reasoning
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
    return {
        "id": f"chatcmpl-fake-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model") or model,
        "system_fingerprint": "fp_fake_0001",
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
        host=args.host,
        port=args.port,
    )
    server.fail_first(args.fail_first, fault)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    with server:
        print(server.base_url, flush=True)
        try:
            done.wait()
        except KeyboardInterrupt:
            pass
        print(
            json.dumps({"requests": server.stats.requests, "peak_in_flight": server.stats.peak_in_flight}),
            file=sys.stderr,
            flush=True,
        )


if __name__ == "__main__":
    main()
