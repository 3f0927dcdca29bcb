"""Native function calls through the backend and the cache: the real openai client against tests/fake_openai.py."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from fake_openai import TOOLS_REFUSED, FakeOpenAI, ToolCalls
from pytest_tooleval.json_value import JSONObject
from pytest_tooleval.models.base import ChatRequest, InfrastructureError, Reply, ToolCall
from pytest_tooleval.models.cache import KEY_VERSION, CachedBackend, ResponseCache, cache_key
from pytest_tooleval.models.openai_compat import OpenAIBackend

KEY = "sk-test-tools-0123456789SECRET"
TOOL: JSONObject = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
ASK = ChatRequest(({"role": "user", "content": "Weather in Paris?"},), tools=(TOOL,))


def backend(server: FakeOpenAI) -> OpenAIBackend:
    # the timeout is a hang guard: the fake answers in milliseconds
    return OpenAIBackend("fake-model", base_url=server.base_url, api_key=KEY, max_retries=0, timeout=30.0)


async def ask(server: FakeOpenAI, request: ChatRequest = ASK) -> Reply:
    async with backend(server) as model:
        return await model.complete(request)


@pytest.mark.asyncio
async def test_tools_are_sent_and_one_call_comes_back(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue(ToolCalls.of(("get_weather", {"city": "Paris"})))
    reply = await ask(fake_openai)
    assert reply.text == ""  # content: null
    assert reply.tool_calls == (ToolCall("call_fake_0", "get_weather", '{"city": "Paris"}'),)
    assert reply.finish_reason == "tool_calls"
    body = fake_openai.stats.bodies[-1]
    assert body is not None and body["tools"] == [TOOL]


@pytest.mark.asyncio
async def test_parallel_calls_keep_their_order_and_the_text_beside_them(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue(
        ToolCalls.of(("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"}), content="Checking both.")
    )
    reply = await ask(fake_openai)
    assert [json.loads(call.arguments)["city"] for call in reply.tool_calls] == ["Paris", "Oslo"]
    assert reply.text == "Checking both."


@pytest.mark.asyncio
async def test_malformed_arguments_arrive_as_written(fake_openai: FakeOpenAI) -> None:
    # the model's fault, not the server's: the suite scores it (a format error), so it is not retried away
    fake_openai.enqueue(ToolCalls.of(("get_weather", '{"city": "Par')))
    reply = await ask(fake_openai)
    assert reply.tool_calls[0].arguments == '{"city": "Par'
    assert fake_openai.stats.requests == 1


@pytest.mark.asyncio
async def test_arguments_sent_as_an_object_are_read_as_json_text(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue(ToolCalls((("get_weather", {"city": "Zürich"}),), arguments_as_object=True))
    reply = await ask(fake_openai)
    assert json.loads(reply.tool_calls[0].arguments) == {"city": "Zürich"}


@pytest.mark.asyncio
async def test_a_request_without_tools_sends_no_tools_field(fake_openai: FakeOpenAI) -> None:
    fake_openai.default = "[get_weather(city='Paris')]"
    reply = await ask(fake_openai, ChatRequest(({"role": "user", "content": "Weather?"},)))
    assert reply.tool_calls == ()
    body = fake_openai.stats.bodies[-1]
    assert body is not None and "tools" not in body


@pytest.mark.asyncio
async def test_a_server_without_a_tool_parser_is_a_permanent_error_naming_it(fake_openai: FakeOpenAI) -> None:
    fake_openai.tools_supported = False
    with pytest.raises(InfrastructureError, match="tool-call-parser") as raised:
        await ask(fake_openai)
    assert TOOLS_REFUSED in str(raised.value) and "not retried" in str(raised.value)
    assert fake_openai.stats.requests == 1


def test_tools_change_the_cache_key_and_text_requests_keep_theirs() -> None:
    identity = {"backend": "openai", "model": "m", "endpoint": "e"}
    text_only = ChatRequest(ASK.messages)
    assert cache_key(identity, ASK) != cache_key(identity, text_only)
    # the key of a request without tools has no `tools` entry at all
    legacy = {
        "v": KEY_VERSION,
        "backend": identity,
        "messages": [dict(m) for m in text_only.messages],
        "temperature": None,
        "top_p": None,
        "max_tokens": None,
        "stop": None,
        "extra": {},
    }
    canonical = json.dumps(legacy, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    assert cache_key(identity, text_only) == hashlib.sha256(canonical.encode("ascii")).hexdigest()


@pytest.mark.asyncio
async def test_tool_calls_are_cached_and_read_back(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.enqueue(ToolCalls.of(("get_weather", {"city": "Paris"})))
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        async with backend(fake_openai) as model:
            cached = CachedBackend(model, cache)
            first = await cached.complete(ASK)
            cache.flush()
            second = await cached.complete(ASK)
    assert fake_openai.stats.requests == 1
    assert second.cached and second.tool_calls == first.tool_calls


def test_a_stored_tool_calls_column_that_does_not_read_back_is_a_miss(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    reply = Reply("", tool_calls=(ToolCall("c0", "get_weather", "{}"),))
    with ResponseCache(path) as cache:
        cache.put("k", reply)
        assert cache.get("k") == Reply("", cached=True, tool_calls=reply.tool_calls)
        cache._conn.execute("UPDATE replies_v1 SET tool_calls = '[{\"id\": 1}' WHERE key = 'k'")
        assert cache.get("k") is None


def test_the_tools_offered_count_in_the_prompt_size_estimate() -> None:
    from pytest_tooleval.models.limits import estimate_tokens

    plain = estimate_tokens(ASK.messages)
    assert plain == estimate_tokens(ASK.messages, None)  # text-protocol estimates are what they were
    question = ASK.messages[0]["content"]
    assert isinstance(question, str)
    assert estimate_tokens(ASK.messages, ASK.tools) == (len(question) + len(str(TOOL))) // 4


@pytest.mark.asyncio
async def test_the_message_is_kept_as_the_server_sent_it_through_the_cache(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    # a conversation that echoes the assistant message back (BFCL multi-turn) needs every field, null content too
    fake_openai.reasoning_content = f"thinking with {KEY}"
    fake_openai.enqueue(ToolCalls.of(("get_weather", {"city": "Paris"})))
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        async with backend(fake_openai) as model:
            cached = CachedBackend(model, cache)
            first = await cached.complete(ASK)
            cache.flush()
            second = await cached.complete(ASK)
    expected_call = {
        "id": "call_fake_0",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
    }
    assert first.message == {
        "role": "assistant",
        "content": None,
        "tool_calls": [expected_call],
        "reasoning_content": "thinking with ***",  # the key never reaches the cache or a later request
    }
    assert second.cached and second.message == first.message
    assert KEY not in (tmp_path / "cache.sqlite").read_bytes().decode("utf-8", "replace")


def test_an_entry_written_before_messages_were_kept_reads_back_without_one(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        cache.put("k", Reply("hi", message={"role": "assistant", "content": "hi"}))
        assert cache.get("k") == Reply("hi", cached=True)
        cache._conn.execute("UPDATE replies_v1 SET message = NULL WHERE key = 'k'")
        old = cache.get("k")
        assert old is not None and old.text == "hi" and old.message is None
        cache._conn.execute("UPDATE replies_v1 SET message = '[1, 2' WHERE key = 'k'")
        unreadable = cache.get("k")
        assert unreadable is not None and unreadable.message is None
