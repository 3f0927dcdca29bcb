"""`WebSearchAPI`: bfcl's web search environment, its two methods answered by the backend the user chooses
(docs/bfcl.md#web-search).

The class keeps upstream's name, method names, parameters and defaults (multi_turn/apis/__init__.py), and does
itself only what needs no network: the URL check that raises before any request, and the bookkeeping a replay
needs. Everything else (the search, the page and what is made of it) is the backend's: `serpapi.SerpApi` asks the
live services as bfcl does, `cassette.Cassette` answers from a recorded run.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from ....json_value import JSONValue

CLASS_NAME = "WebSearchAPI"
SEARCH = "search_engine_query"
FETCH = "fetch_url_content"
METHODS = (SEARCH, FETCH)


@dataclass(frozen=True)
class Call:
    """One call of a model-callable method, as a backend is asked it.

    Attributes:
        scope: what the call belongs to (the sample's id), so a replay tells the same call in two samples apart.
        method: SEARCH or FETCH.
        arguments: every parameter by name, in signature order, defaults filled in: the call however it was
            written (positional, keyword or left to its default).
        settings: the instance's settings that change the result (a search's `show_snippet`; none for a fetch).
        occurrence: how many calls of the same key came before this one in its scope (0: the first).
    """

    scope: str
    method: str
    arguments: dict[str, object]
    settings: dict[str, object] = field(default_factory=dict)
    occurrence: int = 0

    @property
    def key(self) -> str:
        """The call without its scope and occurrence, as one canonical JSON text."""
        return call_key(self.method, canonical(self.arguments), canonical(self.settings))

    def describe(self) -> str:
        """The call as Python would write it, for messages."""
        return f"{self.method}({', '.join(f'{name}={value!r}' for name, value in self.arguments.items())})"


class Backend(Protocol):
    """What answers the two methods: a live service, or a recording of one."""

    @property
    def label(self) -> str:
        """Which backend made a figure: `serpapi`, or `cassette:<sha256 of the file>`."""

    def answer(self, call: Call) -> object:
        """The method's return value for `call`, or the exception the method raises, raised."""


class WebSearchAPI:
    """The environment of one sample. Every public method is one the model may call (the executor offers them
    all); the public attribute is upstream's one setting. The class has upstream's name: a call that does not
    bind names it in its error text."""

    def __init__(self, backend: Backend, scope: str = "") -> None:
        self.show_snippet: object = True
        self._backend = backend
        self._scope = scope
        self._seen: Counter[str] = Counter()

    def load_scenario(self, scenario: Mapping[str, JSONValue], long_context: bool = False) -> None:
        """The category's setting (`initial_config`); a scenario without it is a KeyError, as upstream's."""
        self.show_snippet = scenario["show_snippet"]

    def search_engine_query(self, keywords: str, max_results: int | None = 10, region: str | None = "wt-wt") -> object:
        return self._ask(SEARCH, {"keywords": keywords, "max_results": max_results, "region": region},
                         {"show_snippet": self.show_snippet})

    def fetch_url_content(self, url: str, mode: str = "raw") -> object:
        # upstream checks the scheme before its try, so the ValueError reaches the executor (and any value
        # without `startswith` its AttributeError); a cassette need not hold these
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"Invalid URL: {url}")
        return self._ask(FETCH, {"url": url, "mode": mode}, {})

    def _ask(self, method: str, arguments: dict[str, object], settings: dict[str, object]) -> object:
        call = Call(self._scope, method, arguments, settings)
        occurrence = self._seen[call.key]
        self._seen[call.key] += 1
        return self._backend.answer(Call(self._scope, method, arguments, settings, occurrence))


def call_key(method: str, arguments: JSONValue, settings: JSONValue) -> str:
    """A call's key from its canonical arguments and settings (what a cassette line holds)."""
    return json.dumps([method, arguments, settings], sort_keys=True)


def canonical(value: object) -> JSONValue:
    """`value` as JSON that tells apart what Python tells apart: a tuple from a list, a set (in a fixed order),
    a dict with keys that are not text, bytes; JSON's own types stay as they are."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [canonical(item) for item in value]
    if isinstance(value, tuple):
        return {"tuple": [canonical(item) for item in value]}
    if isinstance(value, (set, frozenset)):
        return {"set": sorted((canonical(item) for item in value), key=lambda item: json.dumps(item, sort_keys=True))}
    if isinstance(value, dict):
        return {"dict": [[canonical(key), canonical(item)] for key, item in value.items()]}
    return {type(value).__name__: repr(value)}
