"""What an endpoint says it serves (models/served.py): the parts of a `/v1/models` entry that name the model, and
the lookup over HTTP against the fake server."""

from __future__ import annotations

import asyncio
import time

import pytest

from fake_openai import FakeOpenAI
from pytest_tooleval.json_value import JSONObject
from pytest_tooleval.models.openai_compat import OpenAIBackend
from pytest_tooleval.models.served import ENTRY_CHARS, identify_served, served_identity, stable_entry

NOW = 1_800_000_000.0


def test_what_changes_between_two_listings_is_left_out() -> None:
    vllm: JSONObject = {
        "id": "m",
        "object": "model",
        "created": int(NOW) - 3,
        "owned_by": "vllm",
        "root": "/ckpt/7",
        "parent": None,
        "max_model_len": 32768,
        "permission": [{"id": "modelperm-1f3a", "created": int(NOW), "allow_sampling": True}],
    }
    assert stable_entry(vllm, NOW) == {
        "id": "m",
        "owned_by": "vllm",
        "root": "/ckpt/7",
        "parent": None,
        "max_model_len": 32768,
    }
    ollama: JSONObject = {"id": "qwen2.5:7b", "object": "model", "created": 1_700_000_000, "owned_by": "library"}
    assert stable_entry(ollama, NOW)["created"] == 1_700_000_000  # when the model was made: it names the model


def test_a_model_is_found_by_its_id_or_said_missing() -> None:
    listing: JSONObject = {
        "object": "list",
        "data": [{"id": "other"}, {"id": "m", "meta": {"n_params": 7_000_000_000}}],
    }
    assert served_identity(listing, "m", NOW) == {
        "listed": True,
        "entry": {"id": "m", "meta": {"n_params": 7_000_000_000}},
    }
    assert served_identity(listing, "absent", NOW) == {
        "listed": False,
        "why": "not among the 2 models the endpoint lists",
    }
    assert served_identity(["not", "a", "list"], "m", NOW)["listed"] is False


def test_a_huge_or_odd_entry_stays_small_and_plain_text() -> None:
    huge: JSONObject = {"object": "list", "data": [{"id": "m", "blob": "x" * (ENTRY_CHARS * 2)}]}
    identity = served_identity(huge, "m", NOW)
    assert set(identity) == {"listed", "entry_sha256"}
    sha256 = identity["entry_sha256"]
    assert isinstance(sha256, str) and len(sha256) == 64
    odd: JSONObject = {
        "object": "list",
        "data": [{"id": "m", "note": "\ud83d alone", "key": "sk-secret-0123456789abc"}],
    }
    identity = served_identity(odd, "m", NOW, redact=lambda text: text.replace("sk-secret-0123456789abc", "***"))
    assert identity["entry"] == {"id": "m", "note": "\ufffd alone", "key": "***"}


def test_the_lookup_asks_the_endpoint_once_per_model_and_sets_each_backend() -> None:
    with FakeOpenAI(model="my-model") as server:
        server.model_entry = {"root": "/ckpt/1", "created": int(time.time())}
        first = OpenAIBackend("my-model", base_url=server.base_url, api_key="sk-x")
        second = OpenAIBackend("my-model", base_url=server.base_url, api_key="sk-x")  # another role's
        missing = OpenAIBackend("nobody", base_url=server.base_url, api_key="sk-x")

        async def look() -> dict[str, JSONObject]:
            try:
                return await identify_served([first, second, missing])
            finally:
                for backend in (first, second, missing):
                    await backend.aclose()

        found = asyncio.run(look())
        assert server.stats.model_listings == 2 and server.stats.requests == 0
    expected = {"listed": True, "entry": {"id": "my-model", "owned_by": "fake", "root": "/ckpt/1"}}
    assert first.served == second.served == expected == found[first.label]
    assert missing.served is not None and missing.served["listed"] is False
    assert first.cache_identity()["served"] == expected


def test_an_endpoint_without_the_route_or_gone_is_said_unlisted() -> None:
    backend = OpenAIBackend("m", base_url="http://127.0.0.1:9/v1", api_key="sk-x", timeout=2)

    async def look() -> None:
        try:
            await identify_served([backend])
        finally:
            await backend.aclose()

    asyncio.run(look())
    assert backend.served == {"listed": False, "why": "connection error"}


@pytest.mark.parametrize(
    "body",
    [
        b'{"object": "list", "data": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        b'{"object": "list", "data": [{"id": "m", "n": ' + b"7" * 5_000 + b"}]}",
        b"\xff\xfe not JSON",
    ],
    ids=["nested-too-deeply", "integer-too-long", "not-utf8"],
)
def test_a_listing_python_cannot_read_is_said_unlisted(body: bytes) -> None:
    with FakeOpenAI(model="m") as server:
        server.models_body = body
        backend = OpenAIBackend("m", base_url=server.base_url, api_key="sk-x", timeout=5)

        async def look() -> None:
            try:
                await identify_served([backend])
            finally:
                await backend.aclose()

        asyncio.run(look())
    assert backend.served is not None and backend.served["listed"] is False
    assert backend.served["why"] in ("RecursionError", "ValueError", "UnicodeDecodeError")
