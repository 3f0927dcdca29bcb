"""The API simulator for the simulated subset: an LLM plays the API (toolalpaca-gpt4tools §2.6).

Upstream runs it as a local HTTP server that renders each incoming request as a curl line and asks a chat
model for a status code and a JSON body. Here it is a `Transport`: the same rendering, prompt, parsing,
re-sampling and per-episode conversation cache, without the server. The upstream server's crash on request
bodies is not reproduced; bodies are decoded first, as the released outputs show succeeding POSTs (§6.2).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from .modelfn import ModelFn, ask
from .prompts import render_simulator_prompt
from .tools import (
    REQUESTS_USER_AGENT,
    HttpRequest,
    HttpResponse,
    TransportError,
    extract_json,
)

if TYPE_CHECKING:
    from ...json_value import JSONValue
    from .data import Api
    from .episode import TraceEntry

__all__ = [
    "CACHE_TOKEN_LIMIT",
    "DEFAULT_SERVER_URL",
    "MAX_RESAMPLES",
    "SIMULATOR_MODEL",
    "SIMULATOR_TEMPERATURE",
    "Simulator",
    "SimulatorReplyError",
    "estimate_tokens",
    "parse_simulator_reply",
    "render_curl",
]

DEFAULT_SERVER_URL = "http://127.0.0.1:5678"  # upstream's default --server_url; it shows in the curl host header
SIMULATOR_MODEL = "gpt-3.5-turbo"
SIMULATOR_TEMPERATURE = 0.5
MAX_RESAMPLES = 5
CACHE_TOKEN_LIMIT = 3000
SERVER_ERROR_TEXT = "Internal Server Error"  # what the upstream server answers when its handler raises


class SimulatorReplyError(ValueError):
    """The simulator model's reply has no parsable status code."""


def render_curl(
    request: HttpRequest, *, local_prefix: str, real_base_url: str, user_agent: str = REQUESTS_USER_AGENT
) -> str:
    """The request as the simulator prompt shows it: a curl line with the real API URL (§2.6).

    Args:
        request: the request the tool built, addressed to the simulator (``<server>/<API name>/<path>``).
        local_prefix: ``<server>/<API name>``, which is replaced by the API's real base URL.
        real_base_url: the spec's ``servers[0].url``.
        user_agent: the client's user agent, part of the headers the server saw.
    """
    scheme, netloc, path, query, _ = urlsplit(request.prepared_url())
    # the server sees the path percent-decoded and the query string as sent
    seen = f"{scheme}://{netloc}{unquote(path)}" + (f"?{query}" if query else "")
    real = real_base_url[:-1] if real_base_url.endswith("/") else real_base_url
    function_url = seen.replace(local_prefix, real)
    headers = " ".join(f'-H "{name}: {value}"' for name, value in request.wire_headers(user_agent))
    body = request.body_bytes()
    data = f"-d '{json.dumps(json.loads(body))}'" if body else ""
    # ToolAlpaca quirk: without a body the line keeps both separating spaces (toolalpaca-gpt4tools §2.6)
    return f"curl -X {request.method} {headers} {data} {function_url}"


def parse_simulator_reply(text: str) -> tuple[int, JSONValue]:
    """(status, body) from a simulator reply: the integer after "Status Code:", the JSON after "Response:".

    A response that is not JSON is wrapped as ``{"response": text}``.

    Raises:
        SimulatorReplyError: no status code marker, or no integer there, or no "Response:" marker.
    """
    try:
        status = int(text.split("Status Code:")[1].split("Response:")[0].strip())
        response_text = text.split("Response:")[1].split("Explanation:")[0].strip()
    except (IndexError, ValueError) as exc:
        raise SimulatorReplyError(f"unusable simulator reply ({exc})") from None
    body: JSONValue
    try:
        body = extract_json(response_text)
    except (ValueError, RecursionError):
        body = {"response": response_text}
    return status, body


def estimate_tokens(messages: list[dict[str, str]], reply: str) -> int:
    """A stand-in for the endpoint's token count (about four characters a token) when it reports none."""
    return (sum(len(message["content"]) for message in messages) + len(reply)) // 4


class Simulator:
    """One episode's simulated API: call it with a request, get the simulated response.

    Args:
        api: the API being simulated.
        template: prompts/Simulator.txt.
        model: the simulator chat model (upstream: gpt-3.5-turbo at temperature 0.5).
        server_url: the simulator's address as upstream's client used it.
        use_cache: keep the conversation across the episode's calls (upstream ``--use_cache``, cleared after
            every instruction), so fake data stays consistent.
        count_tokens: used when the model reports no token counts.
        trace: a list to append every exchange to.
    """

    def __init__(
        self,
        api: Api,
        template: str,
        model: ModelFn,
        *,
        server_url: str = DEFAULT_SERVER_URL,
        use_cache: bool = True,
        count_tokens: Callable[[list[dict[str, str]], str], int] = estimate_tokens,
        trace: list[TraceEntry] | None = None,
    ) -> None:
        self.api = api
        self._template = template
        self._model = model
        self.server_url = server_url
        self.use_cache = use_cache
        self._count_tokens = count_tokens
        self.trace = trace if trace is not None else []
        self.cache: list[dict[str, str]] | None = None

    @property
    def base_url(self) -> str:
        """Where the tools send this API's requests."""
        return f"{self.server_url}/{self.api.name}"

    async def __call__(self, request: HttpRequest) -> HttpResponse:
        curl = render_curl(request, local_prefix=self.base_url, real_base_url=self.api.server_url)
        if self.use_cache and self.cache:
            # ToolAlpaca quirk: the request joins the cached chat in place, so it stays there even when the
            # reply is too long to keep (toolalpaca-gpt4tools §2.6)
            prompt = self.cache
            prompt.append({"role": "user", "content": curl})
        else:
            content = render_simulator_prompt(
                self._template, name=self.api.name, documentation=self.api.documentation_for_simulator, request=curl
            )
            prompt = [{"role": "user", "content": content}]
        try:
            status, body, output, tokens = await self._sample(prompt)
        except SimulatorReplyError:
            return HttpResponse(500, SERVER_ERROR_TEXT, "text/plain; charset=utf-8")
        if not 200 <= status < 300:
            seen = {status}
            for _ in range(MAX_RESAMPLES):
                try:
                    again_status, again_body, again_output, again_tokens = await self._sample(prompt)
                except SimulatorReplyError:
                    continue
                # ToolAlpaca quirk: a re-sample is taken when it succeeds or repeats an earlier status; if none
                # is, the first reply stands (toolalpaca-gpt4tools §2.6)
                if again_status in seen or 200 <= again_status < 300:
                    self._remember(prompt, again_output, again_tokens)
                    return self._respond(again_status, again_body)
                seen.add(again_status)
        self._remember(prompt, output, tokens)
        return self._respond(status, body)

    async def _sample(self, prompt: list[dict[str, str]]) -> tuple[int, JSONValue, str, int]:
        answer = await ask(self._model, prompt)
        sent = [dict(message) for message in prompt]
        self.trace.append({"kind": "simulator", "messages": sent, "reply": answer.text})
        tokens = answer.total_tokens if answer.total_tokens is not None else self._count_tokens(prompt, answer.text)
        status, body = parse_simulator_reply(answer.text)
        return status, body, answer.text, tokens

    def _remember(self, prompt: list[dict[str, str]], output: str, tokens: int) -> None:
        if self.use_cache and tokens < CACHE_TOKEN_LIMIT:
            self.cache = prompt
            prompt.append({"role": "assistant", "content": output})

    @staticmethod
    def _respond(status: int, body: JSONValue) -> HttpResponse:
        if not 100 <= status <= 999:
            # out-of-range codes never reach the client as a response: its status line read fails
            raise TransportError(f"the simulator answered with HTTP status {status}")
        if status < 200 or status in (204, 304):
            # ToolAlpaca quirk: by HTTP's rules these carry no body, and Python's http.client reads none, so the
            # observation is "Status Code: 204. Response: " (toolalpaca-gpt4tools §2.6)
            return HttpResponse(status, "", "application/json")
        try:
            # the server's JSON rendering: compact, non-ASCII kept, NaN refused
            text = json.dumps(body, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        except ValueError:
            return HttpResponse(500, SERVER_ERROR_TEXT, "text/plain; charset=utf-8")
        return HttpResponse(status, text, "application/json")
