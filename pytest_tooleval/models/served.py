"""What an endpoint says it serves under a model's name: its `/v1/models` entry, as the response cache keys it.

A team that retrains serves the new checkpoint under the same name at the same URL; the name alone cannot tell
the two apart, the listing often can: vLLM gives the weights' path (`root`) and `max_model_len`, llama.cpp the
model's size and parameter count (`meta`), Ollama the time the model was made (`created`), OpenAI the snapshot's
creation time. Whatever the entry holds is kept, less what changes from one listing to the next
(docs/models.md#the-response-cache).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import openai

from ..json_value import JSONObject, JSONValue
from ..text import counted, plain_text

if TYPE_CHECKING:
    from .openai_compat import OpenAIBackend

__all__ = ["identify_served", "served_identity", "stable_entry"]

CLOCK_SKEW_S = 600  # a `created` this close to now is the server's clock (vLLM, llama.cpp stamp each listing)
NOT_THE_MODEL = ("object", "permission")  # the entry's kind; vLLM's permission carries fresh ids and times
ENTRY_CHARS = 4_000  # a larger entry is kept as its sha256 (keys, reports and xdist's messages stay small)
ATTEMPTS = 3  # a listing that fails to connect, or with a 5xx, is asked again (a passing fault would re-ask all)


def stable_entry(entry: JSONObject, now: float) -> JSONObject:
    """The listing's entry less what changes between two listings of the same model."""
    kept = {key: value for key, value in entry.items() if key not in NOT_THE_MODEL}
    created = kept.get("created")
    if isinstance(created, (int, float)) and not isinstance(created, bool) and abs(created - now) < CLOCK_SKEW_S:
        del kept["created"]
    return kept


def served_identity(listing: JSONValue, model: str, now: float,
                    redact: Callable[[str], str] = lambda text: text) -> JSONObject:
    """What a `/v1/models` body says of `model`: {"listed": true, "entry": ...}, or {"listed": false, "why": ...};
    `redact` takes the run's secrets out of the entry (a server might echo a key)."""
    data = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(data, list):
        return {"listed": False, "why": "the endpoint's model list is not an OpenAI list"}
    entry = next((item for item in data if isinstance(item, dict) and item.get("id") == model), None)
    if entry is None:
        return {"listed": False, "why": f"not among the {counted(len(data), 'model')} the endpoint lists"}
    text = json.dumps(stable_entry(entry, now), sort_keys=True, ensure_ascii=False, default=str)
    text = redact(plain_text(text))
    if len(text) > ENTRY_CHARS:
        return {"listed": True, "entry_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}
    kept: JSONObject = json.loads(text)  # the dumps of a dict, above
    return {"listed": True, "entry": kept}


async def _listing(backend: OpenAIBackend) -> JSONValue:
    """The endpoint's `/v1/models` body, read as JSON (raises the client's errors)."""
    client: openai.AsyncOpenAI = backend.client()
    response = await asyncio.wait_for(client.models.with_raw_response.list(), backend.timeout)
    listing: JSONValue = json.loads(response.content)
    return listing


async def _identify(backend: OpenAIBackend) -> JSONObject:
    why = ""
    for attempt in range(ATTEMPTS):
        try:
            return served_identity(await _listing(backend), backend.model, time.time(), backend.redact)
        except (openai.APIConnectionError, openai.InternalServerError, asyncio.TimeoutError) as exc:
            why = "connection error" if isinstance(exc, openai.APIConnectionError) else (
                "timed out" if isinstance(exc, asyncio.TimeoutError) else f"HTTP {exc.status_code}")
            await asyncio.sleep(0.5 * (attempt + 1))
        except openai.APIStatusError as exc:  # 404: a server without the route; 401: the probe says it
            return {"listed": False, "why": f"HTTP {exc.status_code}"}
        except (openai.OpenAIError, ValueError, UnicodeDecodeError, RecursionError) as exc:  # nested too deeply
            return {"listed": False, "why": type(exc).__name__}
    return {"listed": False, "why": why}


async def identify_served(backends: Iterable[OpenAIBackend]) -> dict[str, JSONObject]:
    """Ask each distinct backend's endpoint what it serves under its model's name, and set `backend.served`;
    by label (`model 'x' at host/v1`), as a worker is told it."""
    every = list(backends)
    distinct = list({backend.label: backend for backend in every}.values())
    # at once: a run with a user model, a simulator and a judge at other endpoints waits for the slowest alone
    found = dict(zip([backend.label for backend in distinct],
                     await asyncio.gather(*(_identify(backend) for backend in distinct)), strict=True))
    for backend in every:
        backend.served = found[backend.label]
    return found
