"""The fake server itself: routing, scripting, faults, stats, capacity, and the standalone command."""

from __future__ import annotations

import asyncio
import http.client
import json
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai
import pytest
from openai.types.chat import ChatCompletionMessage, ChatCompletionMessageParam, ChatCompletionToolParam

from fake_openai import NULL_CONTENT_REFUSED, FakeOpenAI, Fault, ToolCalls
from pytest_tooleval.models.base import ChatRequest, InfrastructureError
from pytest_tooleval.models.openai_compat import OpenAIBackend

FAKE_OPENAI = Path(__file__).parents[2] / "fake_openai.py"


def call(url: str, body: Any = None, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """One raw HTTP request (POST when there is a body), without any client-side retry."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # a hang guard: answers come in ms
            return response.status, dict(response.headers.items()), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers.items()), error.read()


def chat(server: FakeOpenAI, *messages: str, **params: Any) -> dict[str, Any]:
    body = {"model": "m", "messages": [{"role": "user", "content": m} for m in messages], **params}
    status, _, data = call(server.base_url + "/chat/completions", body)
    assert status == 200, data
    completion = json.loads(data)
    assert isinstance(completion, dict)
    return completion


def text_of(completion: dict[str, Any]) -> str | None:
    content = completion["choices"][0]["message"]["content"]
    assert content is None or isinstance(content, str)
    return content


def until(condition: Callable[[], bool], seconds: float = 30.0) -> bool:
    """Whether `condition` came true within `seconds` (a hang guard: what it waits for takes milliseconds)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_replies_match_the_last_user_message_first_then_any_message(fake_openai: FakeOpenAI) -> None:
    fake_openai.replies = {"weather": "W", "stock": "S"}
    fake_openai.default = "D"
    assert text_of(chat(fake_openai, "the weather?")) == "W"
    assert text_of(chat(fake_openai, "the weather?", "and the stock?")) == "S"  # the last one wins
    assert text_of(chat(fake_openai, "the weather?", "thanks")) == "W"  # found in an earlier message
    assert text_of(chat(fake_openai, "nothing known")) == "D"


def test_the_queue_comes_first_then_the_responder(fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = lambda body: f"echo {body['messages'][-1]['content']}"
    fake_openai.enqueue("one", "two")
    assert [text_of(chat(fake_openai, "x")) for _ in range(3)] == ["one", "two", "echo x"]


@pytest.mark.asyncio
async def test_responder_calls_never_overlap(fake_openai: FakeOpenAI) -> None:
    inside, overlaps = 0, 0

    def respond(body: dict[str, Any]) -> str:
        nonlocal inside, overlaps
        inside += 1
        overlaps += inside > 1
        # the first call holds on until another request has arrived to wait for its turn (30 s at most): there is
        # always a request that could overlap, however slowly the client sends them
        until(lambda: fake_openai.stats.peak_in_flight > 1)
        time.sleep(0.01)
        inside -= 1
        return "ok"

    fake_openai.responder = respond
    async with OpenAIBackend("m", base_url=fake_openai.base_url, api_key="k") as backend:
        requests = [ChatRequest(messages=({"role": "user", "content": f"q{i}"},)) for i in range(8)]
        await asyncio.gather(*(backend.complete(r) for r in requests))
    assert fake_openai.stats.peak_in_flight > 1 and overlaps == 0


def test_a_raising_responder_is_reported(fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = lambda body: body["no such key"]
    status, _, data = call(fake_openai.base_url + "/chat/completions", {"messages": []})
    assert status == 500 and "responder raised KeyError" in data.decode()
    assert fake_openai.stats.errors == ["KeyError: 'no such key'"]


def test_fail_first_faults_then_answers(fake_openai: FakeOpenAI) -> None:
    fake_openai.default = "ok"
    fake_openai.fail_first(2, Fault.rate_limit(retry_after=3))
    url = fake_openai.base_url + "/chat/completions"
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    first, second, third = (call(url, body) for _ in range(3))
    assert (first[0], first[1]["Retry-After"]) == (429, "3")
    assert json.loads(first[2])["error"]["type"] == "rate_limit_exceeded"
    assert second[0] == 429
    assert (third[0], text_of(json.loads(third[2]))) == (200, "ok")


def test_random_faults_follow_the_seed(fake_openai: FakeOpenAI) -> None:
    url = fake_openai.base_url + "/chat/completions"
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}

    def pattern(seed: int) -> list[int]:
        with FakeOpenAI(fault_rate=0.3, fault=Fault.http(503), seed=seed) as server:
            return [call(server.base_url + "/chat/completions", body)[0] for _ in range(40)]

    first = pattern(1)
    assert pattern(1) == first
    assert pattern(2) != first
    assert 4 <= first.count(503) <= 20
    assert call(url, body)[0] == 200  # the fixture's server has no fault rate


def test_random_faults_on_arrival_skip_the_latency() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    with FakeOpenAI(
        latency_s=0.3,
        fault_rate=0.5,
        fault=Fault.rate_limit(retry_after=1),
        fault_on_arrival=True,
        seed=3,
        default="ok",
    ) as server:
        timed = []
        for _ in range(12):
            started = time.monotonic()
            status = call(server.base_url + "/chat/completions", body)[0]
            timed.append((status, time.monotonic() - started))
        statuses = [status for status, _ in timed]
        assert server.stats.faults_on_arrival == statuses.count(429)
        assert server.stats.latency_waits == statuses.count(200)  # no 429 waited the latency
    assert set(statuses) == {200, 429}
    assert all(seconds >= 0.3 for status, seconds in timed if status == 200)  # a sleep is never shorter


def test_usage_and_stop(fake_openai: FakeOpenAI) -> None:
    fake_openai.default = "alpha beta STOP gamma"
    completion = chat(fake_openai, "one two three", stop=["STOP"])
    assert text_of(completion) == "alpha beta "
    assert completion["usage"] == {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    assert completion["choices"][0]["finish_reason"] == "stop"
    assert text_of(chat(fake_openai, "x", stop="gamma")) == "alpha beta STOP "


def test_routes(fake_openai: FakeOpenAI) -> None:
    fake_openai.model = "my-model"
    status, _, data = call(fake_openai.base_url + "/models")
    assert (status, [m["id"] for m in json.loads(data)["data"]]) == (200, ["my-model"])
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    assert call(fake_openai.url + "/chat/completions", body)[0] == 200  # base_url without /v1 works too
    assert call(fake_openai.url + "/v2/chat/completions", body)[0] == 404
    status, _, data = call(fake_openai.base_url + "/chat/completions", "not an object")
    assert status == 400 and fake_openai.stats.bodies[-1] is None


def test_stats_record_bodies_headers_and_prompts(fake_openai: FakeOpenAI) -> None:
    chat(fake_openai, "a")
    chat(fake_openai, "a")
    chat(fake_openai, "b")
    stats = fake_openai.stats
    assert stats.requests == 3
    assert stats.by_prompt == {"a": 2, "b": 1}
    assert [b["messages"][0]["content"] for b in stats.bodies if b] == ["a", "a", "b"]
    assert stats.headers[0]["content-type"] == "application/json"
    fake_openai.reset_stats()
    assert (fake_openai.stats.requests, fake_openai.stats.received) == (0, [])


def test_required_key(fake_openai: FakeOpenAI) -> None:
    fake_openai.require_api_key = "sk-right"
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    url = fake_openai.base_url + "/chat/completions"
    assert call(url, body, {"Authorization": "Bearer sk-wrong"})[0] == 401
    assert call(url, body, {"Authorization": "Bearer sk-right"})[0] == 200


def test_echo_auth_repeats_the_authorization_header(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue(Fault.echo_auth())
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    status, _, data = call(fake_openai.base_url + "/chat/completions", body, {"Authorization": "Bearer sk-leak"})
    assert status == 401 and "Bearer sk-leak" in json.loads(data)["error"]["message"]


def _fault_body(server: FakeOpenAI, fault: Fault) -> bytes:
    server.enqueue(fault)
    status, _, data = call(server.base_url + "/chat/completions", {"messages": []})
    assert status == 200
    return data


def test_200_faults_send_what_they_promise(fake_openai: FakeOpenAI) -> None:
    with pytest.raises(json.JSONDecodeError):
        json.loads(_fault_body(fake_openai, Fault.malformed_json()))
    with pytest.raises(UnicodeDecodeError):
        _fault_body(fake_openai, Fault.invalid_utf8()).decode("utf-8")
    assert json.loads(_fault_body(fake_openai, Fault.empty_choices()))["choices"] == []
    assert text_of(json.loads(_fault_body(fake_openai, Fault.null_content()))) is None
    assert text_of(json.loads(_fault_body(fake_openai, Fault.huge(2_000)))) == Fault.huge_text(2_000)


def test_reset_cuts_the_body(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue(Fault.reset())
    with pytest.raises((ConnectionError, urllib.error.URLError, OSError)):
        call(fake_openai.base_url + "/chat/completions", {"messages": []})


def test_delay_is_cut_short_by_stop() -> None:
    server = FakeOpenAI(fault_rate=1.0, fault=Fault.delay(600)).start()
    url = server.base_url + "/chat/completions"

    async def ask() -> None:
        await asyncio.to_thread(call, url, {"messages": []})

    async def main() -> None:
        task = asyncio.create_task(ask())
        assert await asyncio.to_thread(until, lambda: server.stats.in_flight == 1)  # the request is in its delay
        server.stop()
        with pytest.raises((ConnectionError, http.client.HTTPException, urllib.error.URLError)):
            await task

    asyncio.run(main())
    # its handler woke from the 600 s delay and ended without an answer: nothing is in flight any more
    assert until(lambda: server.stats.in_flight == 0), "the delay outlived stop()"


@pytest.mark.asyncio
async def test_serves_80_requests_at_once(fake_openai: FakeOpenAI) -> None:
    fake_openai.latency_s = 1.0  # long enough for the client to put all 80 on the wire on a busy CI machine
    async with OpenAIBackend(
        "m", base_url=fake_openai.base_url, api_key="k", max_concurrency=80, slow_start=False
    ) as backend:
        requests = [ChatRequest(messages=({"role": "user", "content": f"q{i}"},)) for i in range(80)]
        await asyncio.gather(*(backend.complete(r) for r in requests))
    assert fake_openai.stats.peak_in_flight == 80  # in parallel: all eighty waited their latency at once
    assert fake_openai.stats.requests == 80


@pytest.mark.asyncio
async def test_capacity_queues_requests() -> None:
    with FakeOpenAI(latency_s=0.1, max_concurrency=2) as server:
        async with OpenAIBackend("m", base_url=server.base_url, api_key="k") as backend:
            started = time.monotonic()
            requests = [ChatRequest(messages=({"role": "user", "content": f"q{i}"},)) for i in range(6)]
            await asyncio.gather(*(backend.complete(r) for r in requests))
            assert time.monotonic() - started >= 0.3  # three rounds of two


@pytest.mark.asyncio
async def test_capacity_can_reject_with_429() -> None:
    with FakeOpenAI(latency_s=0.3, max_concurrency=1, reject_over_capacity=True) as server:
        async with OpenAIBackend("m", base_url=server.base_url, api_key="k", max_retries=0) as backend:
            requests = [ChatRequest(messages=({"role": "user", "content": f"q{i}"},)) for i in range(2)]
            results = await asyncio.gather(*(backend.complete(r) for r in requests), return_exceptions=True)
    errors = [r for r in results if isinstance(r, InfrastructureError)]
    assert len(errors) == 1 and "HTTP 429: Server at capacity" in str(errors[0])


def test_standalone_command(tmp_path: Path) -> None:
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps({"weather": "[get_weather()]"}))
    process = subprocess.Popen(
        [
            sys.executable,
            str(FAKE_OPENAI),
            "--port",
            "0",
            "--reply",
            "[f()]",
            "--replies",
            str(replies),
            "--fail-first",
            "1",
            "--fault",
            "503",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        body: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "the weather?"}]}
        assert call(base_url + "/chat/completions", body)[0] == 503
        assert text_of(json.loads(call(base_url + "/chat/completions", body)[2])) == "[get_weather()]"
        body["messages"][0]["content"] = "hi"
        assert text_of(json.loads(call(base_url + "/chat/completions", body)[2])) == "[f()]"
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)  # a hang guard: it ends at once on SIGTERM
    assert process.returncode == 0
    assert json.loads(stderr.strip().splitlines()[-1]) == {"requests": 3, "peak_in_flight": 1}


# -- dialects of real servers (issue 26), through the real openai client ---------------------------------------

ECHO_TOOL: ChatCompletionToolParam = {
    "type": "function",
    "function": {"name": "echo", "parameters": {"type": "object", "properties": {}}},
}


def openai_client(server: FakeOpenAI) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="sk-dialects", max_retries=0, timeout=30)


def called_names(message: ChatCompletionMessage) -> list[str]:
    """The names of the functions the message calls; each of its tool calls must be a function call."""
    names = []
    for call in message.tool_calls or []:
        assert call.type == "function"
        names.append(call.function.name)
    return names


def test_tools_need_choice_answers_without_a_call_unless_tool_choice_is_sent(fake_openai: FakeOpenAI) -> None:
    """llama-cpp-python leaves `tools` out of the prompt without `tool_choice`: the model answers in words."""
    seen: list[bool] = []

    def answer(body: dict[str, Any]) -> Any:
        seen.append("tools" in body)  # what the model was shown
        return ToolCalls.of(("echo", {}), content="calling echo")

    fake_openai.responder = answer
    fake_openai.tools_need_choice = True
    client = openai_client(fake_openai)
    messages: Any = [{"role": "user", "content": "echo"}]
    ignored = client.chat.completions.create(model="m", messages=messages, tools=[ECHO_TOOL])
    assert ignored.choices[0].message.tool_calls is None and ignored.choices[0].message.content == "calling echo"
    called = client.chat.completions.create(model="m", messages=messages, tools=[ECHO_TOOL], tool_choice="auto")
    assert called_names(called.choices[0].message) == ["echo"]
    assert seen == [False, True]
    fake_openai.tools_need_choice = False
    plain = client.chat.completions.create(model="m", messages=messages, tools=[ECHO_TOOL])
    assert plain.choices[0].message.tool_calls is not None  # off: OpenAI's dialect, "auto" by default


def test_tools_count_into_the_prompt_tokens_unless_they_need_a_system_message(fake_openai: FakeOpenAI) -> None:
    """Tools that reach the model cost prompt tokens; under tools_need_system (llama-cpp-python's
    chatml-function-calling) they reach it only beside a system message, and the model calls them anyway."""
    fake_openai.responder = lambda body: ToolCalls.of(("echo", {})) if "tools" in body else "words"
    client = openai_client(fake_openai)
    bare: list[ChatCompletionMessageParam] = [{"role": "user", "content": "call echo"}]
    framed: list[ChatCompletionMessageParam] = [{"role": "system", "content": "be brief"}, *bare]

    def prompt_tokens(
        messages: list[ChatCompletionMessageParam], tools: list[ChatCompletionToolParam] | None = None
    ) -> int:
        if tools:
            completion = client.chat.completions.create(model="m", messages=messages, tools=tools, tool_choice="auto")
        else:
            completion = client.chat.completions.create(model="m", messages=messages)
        assert completion.usage is not None
        return completion.usage.prompt_tokens

    tool_words = len(json.dumps([ECHO_TOOL]).split())
    assert prompt_tokens(bare, [ECHO_TOOL]) == prompt_tokens(bare) + tool_words
    fake_openai.tools_need_system = True
    called = client.chat.completions.create(model="m", messages=bare, tools=[ECHO_TOOL], tool_choice="auto")
    assert called_names(called.choices[0].message) == ["echo"]
    assert called.usage is not None and called.usage.prompt_tokens == prompt_tokens(bare) + 1  # `functions.echo:`
    assert prompt_tokens(framed, [ECHO_TOOL]) == prompt_tokens(framed) + tool_words


def test_refuse_null_content_gives_500_for_an_assistant_message_with_null_content(fake_openai: FakeOpenAI) -> None:
    fake_openai.refuse_null_content = True
    fake_openai.default = "done"
    client = openai_client(fake_openai)
    call_message = {
        "role": "assistant",
        "tool_calls": [{"id": "c0", "type": "function", "function": {"name": "echo", "arguments": "{}"}}],
    }
    turns: list[Any] = [
        {"role": "user", "content": "echo"},
        {**call_message, "content": None},
        {"role": "tool", "tool_call_id": "c0", "content": "ok"},
    ]
    with pytest.raises(openai.InternalServerError) as refused:
        client.chat.completions.create(model="m", messages=turns, tools=[ECHO_TOOL])
    assert refused.value.status_code == 500 and NULL_CONTENT_REFUSED in str(refused.value)
    turns[1] = {**call_message, "content": ""}
    answered = client.chat.completions.create(model="m", messages=turns, tools=[ECHO_TOOL])
    assert answered.choices[0].message.content == "done"
    assert fake_openai.stats.requests == 2


def test_max_answer_tokens_cuts_long_answers_with_finish_reason_length(fake_openai: FakeOpenAI) -> None:
    fake_openai.max_answer_tokens = 3
    fake_openai.replies = {"long": "one two three four five", "short": "one two"}
    client = openai_client(fake_openai)
    cut = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "long"}])
    assert (cut.choices[0].message.content, cut.choices[0].finish_reason) == ("one two three", "length")
    assert cut.usage is not None and cut.usage.completion_tokens == 3
    whole = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "short"}])
    assert (whole.choices[0].message.content, whole.choices[0].finish_reason) == ("one two", "stop")
