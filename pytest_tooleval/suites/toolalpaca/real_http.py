"""Real HTTP for the real-API subset: the standard library's urllib in a worker thread (toolalpaca-gpt4tools §2.7).

Implements the `tools.Transport` interface the tool executor sends through. Upstream used `requests`; what
the model sees depends only on the status code and the decoded body, which urllib gives the same way.
"""

from __future__ import annotations

import asyncio
import http.client
import re
import urllib.error
import urllib.request
from collections.abc import Callable
from email.message import Message

from .tools import (
    REQUESTS_USER_AGENT,
    HttpRequest,
    HttpResponse,
    RequestRejected,
    TransportError,
)

__all__ = ["RealHttp"]

RECORDED_BODY_CHARS = 5000  # of each response body, in the transcript

_CHARSET = re.compile(r"charset=([\w.:-]+)", re.IGNORECASE)


class RealHttp:
    """Sends each request to the real API and records the exchange.

    Args:
        timeout: seconds one request may take (upstream set none; a hung API would stall the run).
        record: called with one JSON-safe dict per exchange, for the transcript.
        user_agent: sent as User-Agent; upstream's client sent requests' own, which some APIs expect.
    """

    def __init__(self, timeout: float, record: Callable[[dict[str, object]], None] | None = None,
                 user_agent: str = REQUESTS_USER_AGENT) -> None:
        self.timeout = timeout
        self.record = record or (lambda entry: None)
        self.user_agent = user_agent

    async def __call__(self, request: HttpRequest) -> HttpResponse:
        url = request.prepared_url()
        entry: dict[str, object] = {"kind": "http", "method": request.method, "url": url}
        if request.body is not None:
            entry["body"] = request.body
        try:
            response = await asyncio.to_thread(self._send, request, url)
        except (RequestRejected, TransportError) as exc:
            entry["error"] = str(exc)
            self.record(entry)
            raise
        entry.update(status=response.status, content_type=response.content_type,
                     response=response.text[:RECORDED_BODY_CHARS])
        self.record(entry)
        return response

    def _send(self, request: HttpRequest, url: str) -> HttpResponse:
        headers = {"User-Agent": self.user_agent, "Accept": "*/*"}
        headers.update(dict(request.headers))
        if request.cookies:
            headers["Cookie"] = "; ".join(f"{name}={value}" for name, value in request.cookies.items())
        try:
            prepared = urllib.request.Request(url, data=request.body_bytes(), headers=headers, method=request.method)
        except ValueError as exc:  # no scheme or a malformed URL: upstream's client raised a ValueError too
            raise RequestRejected(str(exc)) from None
        try:
            with urllib.request.urlopen(prepared, timeout=self.timeout) as reply:  # the spec's server
                return _response(reply.status, reply.headers, reply.read())
        except urllib.error.HTTPError as error:  # a non-2xx answer is an observation, not a failure
            with error:
                return _response(error.code, error.headers, error.read())
        except ValueError as exc:
            raise RequestRejected(str(exc)) from None
        except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise TransportError(f"{request.method} {url}: {reason}") from None


def _response(status: int, headers: Message | None, content: bytes) -> HttpResponse:
    content_type = headers.get("Content-Type", "") if headers is not None else ""
    match = _CHARSET.search(content_type)
    encoding = match.group(1) if match else "utf-8"
    try:
        text = content.decode(encoding, errors="replace")
    except LookupError:  # an unknown charset name
        text = content.decode("utf-8", errors="replace")
    return HttpResponse(status, text, content_type, content)
