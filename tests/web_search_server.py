"""A fake search service and web site on 127.0.0.1, for the web search tests (docs/bfcl.md#web-search).

Standard library only: record_web_search.py imports it in a scratch venv too, where upstream's own
`WebSearchAPI` is pointed at it.

`/search` answers as SerpAPI's DuckDuckGo engine does (JSON with `organic_results`), its results made from the
query (`q`) and region (`kl`) it was sent, so that how a client encodes them shows in its results. A query may
start with a directive that picks a failure: `!429x<n>` (the first n answers are 200 with a 429 error in the
payload, then results), `!h429x<n>` (the same with HTTP status 429), `!status<code>` (that status, a JSON error),
`!html` (a page, not JSON), `!list` (a JSON array), `!pairs` (an array of key-value pairs), `!noorganic`,
`!notlist` (organic_results an object), `!strings` (results that are strings), `!lacks<field>` (results without
that field), `!close` (the connection closed with no answer), `!empty` (no results). A request without
engine=duckduckgo, output=json and the key it was made with is a 401, as SerpAPI's.

Any other path is a page of `pages` ({path: Page}), or: `/redirect/<n>/<rest>` (n redirects, then /<rest>),
`/loop` (redirects forever), `/close` (no answer), `/short` (a body cut short of its Content-Length); else 404.
"""

from __future__ import annotations

import gzip
import hashlib
import http.server
import json
import threading
import urllib.parse
from collections import Counter
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Page:
    """What a page path answers: its status, headers (in order) and body."""

    body: bytes
    status: int = 200
    headers: tuple[tuple[str, str], ...] = (("Content-Type", "text/html; charset=utf-8"),)
    gzipped: bool = False


@dataclass
class SearchServer:
    """Serve until `close` (or the end of a `with`); `url(path)` is a path's address on it."""

    key: str
    pages: dict[str, Page] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.requests: list[str] = []  # the paths asked, in order
        self._asked: Counter[str] = Counter()  # per query with a directive: how often it was asked
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                outer.requests.append(self.path)
                outer._answer(self)

            def log_message(self, *args: object) -> None:
                pass  # keep the test output clean

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> SearchServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- answers ------------------------------------------------------------------------------------------------

    def _answer(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        parsed = urllib.parse.urlsplit(handler.path)
        path = parsed.path
        if path == "/search":
            self._search(handler, urllib.parse.parse_qs(parsed.query, keep_blank_values=True))
        elif path in ("/close",):
            handler.close_connection = True
        elif path == "/short":
            _send(handler, 200, (("Content-Type", "text/html"), ("Content-Length", "4000")), b"<p>cut sh", whole=False)
        elif path == "/loop":
            _send(handler, 302, (("Location", "/loop"),), b"")
        elif path.startswith("/redirect/"):
            _, _, count, rest = path.split("/", 3)
            target = f"/redirect/{int(count) - 1}/{rest}" if int(count) > 1 else f"/{rest}"
            _send(handler, 301 if int(count) % 2 else 302, (("Location", target),), b"")
        elif handler.path in self.pages or path in self.pages:
            page = self.pages.get(handler.path) or self.pages[path]
            body = gzip.compress(page.body, mtime=0) if page.gzipped else page.body
            headers = page.headers + ((("Content-Encoding", "gzip"),) if page.gzipped else ())
            _send(handler, page.status, headers, body)
        else:
            _send(handler, 404, (("Content-Type", "text/html"),), b"<h1>Not Found</h1>")

    def _search(self, handler: http.server.BaseHTTPRequestHandler, query: dict[str, list[str]]) -> None:
        if (
            query.get("engine") != ["duckduckgo"]
            or query.get("output") != ["json"]
            or query.get("api_key") != [self.key]
        ):
            _json(
                handler,
                401,
                {"error": "Invalid API key. Your API key should be here: https://serpapi.com/manage-api-key"},
            )
            return
        words = query.get("q", [])
        region = query.get("kl", [])
        text = " ".join(words)
        directive = text.split(" ", 1)[0] if text.startswith("!") else ""
        asked = self._asked[text]
        self._asked[text] += 1
        if directive.startswith(("!429x", "!h429x")) and asked < int(directive.split("x")[1]):
            status = 429 if directive.startswith("!h") else 200
            _json(handler, status, {"error": "Your account has run out of searches (429)."})
            return
        if directive.startswith("!status"):
            _json(handler, int(directive[len("!status") :]), {"error": f"Internal error for {text}"})
        elif directive == "!html":
            _send(handler, 502, (("Content-Type", "text/html"),), b"<html><body>Bad gateway</body></html>")
        elif directive == "!list":
            _json(handler, 200, [1, 2, 3])
        elif directive == "!pairs":
            _json(handler, 200, [["organic_results", _results(words, region, 2)], ["search_metadata", {}]])
        elif directive == "!noorganic":
            _json(handler, 200, {"search_metadata": {"status": "Success"}, "search_parameters": {"q": text}})
        elif directive == "!notlist":
            _json(handler, 200, {"organic_results": {"title": "t", "link": "l", "snippet": "s"}})
        elif directive == "!strings":
            _json(handler, 200, {"organic_results": ["a", "b"]})
        elif directive.startswith("!lacks"):
            results = _results(words, region, 4)
            for result in results[1:]:
                del result[directive[len("!lacks") :]]
            _json(handler, 200, {"organic_results": results})
        elif directive == "!close":
            handler.close_connection = True
        elif directive == "!empty":
            _json(handler, 200, {"organic_results": []})
        else:
            digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
            _json(
                handler,
                200,
                {"search_metadata": {"status": "Success"}, "organic_results": _results(words, region, digest[0] % 16)},
            )


def _results(words: list[str], region: list[str], count: int) -> list[dict[str, object]]:
    """SerpAPI-shaped results that echo what was asked, with quotes, non-ASCII text and odd values among them."""
    asked = f"q={words!r} kl={region!r}"
    extras: list[object] = ["", 'l\'été "cité" \\ 中文 😀', None, 3.5, "tab\tnew\nline", "\u00a0nbsp"]
    out: list[dict[str, object]] = []
    for n in range(count):
        out.append(
            {
                "position": n + 1,
                "title": f"Result {n} for {asked}",
                "link": f"https://example.org/{n}?{urllib.parse.urlencode({'q': ' '.join(words)})}",
                "snippet": extras[n % len(extras)] if n % 3 == 2 else f"Snippet {n}: {asked}",
                "favicon": "https://example.org/favicon.ico",
            }
        )
    return out


def _json(handler: http.server.BaseHTTPRequestHandler, status: int, value: object) -> None:
    body = json.dumps(value).encode("utf-8")
    _send(handler, status, (("Content-Type", "application/json; charset=utf-8"),), body)


def _send(
    handler: http.server.BaseHTTPRequestHandler,
    status: int,
    headers: tuple[tuple[str, str], ...],
    body: bytes,
    *,
    whole: bool = True,
) -> None:
    handler.send_response(status)
    for name, value in headers:
        handler.send_header(name, value)
    if whole:
        handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)
    if not whole:
        handler.close_connection = True
