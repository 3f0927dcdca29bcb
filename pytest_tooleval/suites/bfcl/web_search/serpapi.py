"""The live backend, bfcl's own: searches through SerpAPI's DuckDuckGo engine, pages fetched from the web
(docs/bfcl.md#web-search).

It asks what bfcl's `WebSearchAPI` asks and makes of the answers what it makes, through the same libraries
(requests, html2text, BeautifulSoup: the `web-search` extra), so that for the same responses the results are
bfcl's to the character. Where it differs, on purpose: the API key never shows in a result or an error (bfcl's
error text of a failed search request holds the request URL, key included), and a search that is still rate
limited after `max_retries` waits is an infrastructure error (bfcl waits forever).
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, quote_plus

from ....errors import InfrastructureError, ToolevalUsageError
from .api import FETCH, SEARCH, Call

ENDPOINT = "https://serpapi.com/search"
KEY_ENV = "SERPAPI_API_KEY"
LABEL = "serpapi"
#: the request headers bfcl sends with every page fetch (a browser's, so that fewer sites refuse it)
PAGE_HEADERS = {
    "User-Agent": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
                  "Chrome/112.0.0.0 Safari/537.36",
    "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,"
              "application/signed-exchange;v=b3;q=0.7",
    "Accept-Language": "en-US,en;q=0.9",
    "Accept-Encoding": "gzip, deflate, br",
    "Connection": "keep-alive",
    "Upgrade-Insecure-Requests": "1",
    "Referer": "https://www.google.com/",
    "Sec-Fetch-Site": "same-origin",
    "Sec-Fetch-Mode": "navigate",
    "Sec-Fetch-User": "?1",
    "Sec-Fetch-Dest": "document",
}
PAGE_TIMEOUT = 20  # bfcl's, in seconds (an int: a timeout's error text prints it)
NO_RESULTS = "Failed to retrieve the search results from server. Please try again later."
REDACTED = "<redacted>"


class SearchUnavailable(InfrastructureError):
    """The search service kept refusing with 429 (rate limit, or no searches left on the account)."""


class SerpApi:
    """Live searches and page fetches, answered as bfcl's `WebSearchAPI` answers them.

    Args:
        key: the SerpAPI key (None: SERPAPI_API_KEY). It is sent with each search and shown nowhere.
        endpoint: the search URL (SerpAPI's; tests point it at a local server).
        search_timeout: seconds a search request may take (bfcl's client allows 60,000).
        page_timeout: seconds a page fetch may take (bfcl's 20).
        max_retries: waits after a 429 before the search is given up as an infrastructure error.
        sleep: how to wait (time.sleep; tests pass one that does not).
        jitter: where the waits' random part comes from.
    """

    def __init__(self, key: str | None = None, *, endpoint: str = ENDPOINT, search_timeout: float = 120,
                 page_timeout: float = PAGE_TIMEOUT, max_retries: int = 10,
                 sleep: Callable[[float], None] = time.sleep, jitter: random.Random | None = None) -> None:
        found = key if key is not None else os.environ.get(KEY_ENV, "")
        if not found:
            raise ToolevalUsageError(f"the serpapi web search backend needs a SerpAPI key: set {KEY_ENV}, or replay "
                                     "a recorded run with a cassette")
        self._key = _Secret(found)
        self._endpoint = endpoint
        self._search_timeout = search_timeout
        self._page_timeout = page_timeout
        self._max_retries = max_retries
        self._sleep = sleep
        self._jitter = jitter or random.Random()
        self._requests, self._html2text, self._soup = _libraries()
        self.rate_limited = 0  # the 429s waited out, for the run's record

    @property
    def label(self) -> str:
        return LABEL

    def __repr__(self) -> str:
        return f"SerpApi(endpoint={self._endpoint!r})"  # never the key

    def answer(self, call: Call) -> object:
        if call.method == SEARCH:
            arguments = call.arguments
            return self.search(arguments["keywords"], arguments["max_results"], arguments["region"],
                               call.settings["show_snippet"])
        if call.method == FETCH:
            return self.fetch(call.arguments["url"], call.arguments["mode"])
        raise ValueError(f"no method {call.method!r}")

    def search(self, keywords: object, max_results: object, region: object, show_snippet: object) -> object:
        """bfcl's `search_engine_query`: a list of results, or {"error": ...}; a malformed result raises."""
        # the parameters and their order are those bfcl's client sends (its name as `source` included): the same
        # request URL, and so the same error text when it fails
        params: dict[str, Any] = {"engine": "duckduckgo", "q": keywords, "kl": region, "api_key": self._key.value,
                                  "output": "json", "source": "python"}
        backoff = 2.0
        waits = 0
        while True:
            try:
                response = self._requests.get(self._endpoint, params, timeout=self._search_timeout)
                # what the client bfcl uses does with any response, whatever its status: dict() of its JSON
                results = dict(json.loads(response.text))
            except Exception as exc:  # bfcl's net: anything but a 429 is the result
                if "429" not in str(exc):
                    return {"error": self._redacted(str(exc))}
                results = None
            if results is not None and not ("error" in results and "429" in str(results["error"])):
                break
            if waits >= self._max_retries:
                raise SearchUnavailable(f"SerpAPI still answered 429 (rate limit, or no searches left on the "
                                        f"account) after {waits} retries")
            self._sleep(backoff + self._jitter.uniform(0, backoff))
            backoff = min(backoff * 2, 120.0)
            waits += 1
            self.rate_limited += 1
        if "organic_results" not in results:
            return {"error": NO_RESULTS}
        out = []
        for result in results["organic_results"][:max_results]:  # a bad max_results raises here, as bfcl's
            # the fields in bfcl's order, so a result that lacks two of them raises for the same one
            if show_snippet:
                out.append({"title": result["title"], "href": result["link"], "body": result["snippet"]})
            else:
                out.append({"title": result["title"], "href": result["link"]})
        return out

    def fetch(self, url: object, mode: object) -> dict[str, str]:
        """bfcl's `fetch_url_content` after its URL check: {"content": ...} or {"error": ...}."""
        try:
            response = self._requests.get(url, headers=PAGE_HEADERS, timeout=self._page_timeout,
                                          allow_redirects=True)
            response.raise_for_status()
            text: str = response.text
            if mode == "raw":
                return {"content": text}
            if mode == "markdown":
                return {"content": self._html2text.HTML2Text().handle(text)}
            if mode == "truncate":
                soup = self._soup(text, "html.parser")
                for element in soup(["script", "style"]):
                    element.extract()
                return {"content": soup.get_text(separator="\n", strip=True)}
            raise ValueError(f"Unsupported mode: {mode}")  # after the request, as bfcl's: its failure comes first
        except Exception as exc:
            return {"error": f"An error occurred while fetching {url}: {exc}"}

    def _redacted(self, text: str) -> str:
        """`text` without the key, also as a URL carries it (percent-encoded)."""
        key = self._key.value
        for form in {key, quote(key, safe=""), quote_plus(key)}:
            text = text.replace(form, REDACTED)
        return text


class _Secret:
    """The key, kept where no repr of the backend (a traceback's locals, a debugger) prints it."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return REDACTED


def _libraries() -> tuple[Any, Any, Any]:
    """requests, html2text and BeautifulSoup, imported when a live backend is made (the `web-search` extra)."""
    try:
        import html2text
        import requests
        from bs4 import BeautifulSoup
    except ImportError as exc:
        raise ToolevalUsageError(f"the serpapi web search backend needs requests, html2text and beautifulsoup4 "
                                 f"({exc.name} is missing): pip install 'pytest-tooleval[web-search]'") from None
    return requests, html2text, BeautifulSoup
