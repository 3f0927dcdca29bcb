"""The simulated API: curl rendering, reply parsing, re-sampling, the per-episode cache (toolalpaca-gpt4tools §2.6)."""

from __future__ import annotations

import asyncio
import json

import pytest
from _toolalpaca import TOY_SPEC, Script, simulated, toy_api, toy_prompts

from json_narrow import as_object
from pytest_tooleval.json_value import JSONObject
from pytest_tooleval.models.base import Reply
from pytest_tooleval.suites.toolalpaca.simulator import (
    Simulator,
    SimulatorReplyError,
    parse_simulator_reply,
    render_curl,
)
from pytest_tooleval.suites.toolalpaca.tools import (
    HttpRequest,
    HttpResponse,
    TransportError,
    build_request,
)

API = toy_api()
PREFIX = "http://127.0.0.1:5678/Toy Weather"
DEFAULT_HEADERS = (
    '-H "host: 127.0.0.1:5678" -H "user-agent: python-requests/2.28.2" -H "accept-encoding: gzip, deflate" '
    '-H "accept: */*" -H "connection: keep-alive" -H "content-type: application/json"'
)


def get_forecast(city: str = "São Paulo") -> HttpRequest:
    operation = as_object(API.spec["paths"])["/forecast/{city}"]["get"]
    return build_request(operation, {"city": city, "days": 3}, route="/forecast/{city}", method="get", base_url=PREFIX)


def post_alert() -> HttpRequest:
    operation = as_object(API.spec["paths"])["/alerts"]["post"]
    params: JSONObject = {"region": "north", "email": "a@b.c", "level": 2}
    return build_request(operation, params, route="/alerts", method="post", base_url=PREFIX)


def test_curl_line_shows_the_real_url_and_every_header() -> None:
    line = render_curl(get_forecast(), local_prefix=PREFIX, real_base_url="https://weather.example.org/v2/")
    # the path as the server decoded it, the query as sent; no body leaves two spaces before the URL
    assert line == f"curl -X GET {DEFAULT_HEADERS}  https://weather.example.org/v2/forecast/São Paulo?days=3"
    posted = render_curl(post_alert(), local_prefix=PREFIX, real_base_url="https://weather.example.org/v2")
    assert posted == (
        f'curl -X POST {DEFAULT_HEADERS} -H "content-length: 30" -d \'{{"email": "a@b.c", "level": 2}}\' '
        "https://weather.example.org/v2/alerts?region=north"
    )


def test_reply_parsing() -> None:
    assert parse_simulator_reply(simulated(200, {"days": [1, 2]})) == (200, {"days": [1, 2]})
    assert parse_simulator_reply("Status Code: 404\nResponse: City not found.\nExplanation: none") == (
        404,
        {"response": "City not found."},
    )
    assert parse_simulator_reply('Status Code: 201 \nResponse: ```json\n{"id": 7}\n```') == (201, {"id": 7})
    for broken in ("Response: {}", "Status Code: OK\nResponse: {}", "Status Code: 200"):
        with pytest.raises(SimulatorReplyError):
            parse_simulator_reply(broken)


def simulator(*replies: str | Reply, use_cache: bool = True) -> tuple[Simulator, Script]:
    model = Script(*replies, name="simulator")
    return Simulator(API, toy_prompts().simulator, model, use_cache=use_cache), model


def send(sim: Simulator, request: HttpRequest | None = None) -> HttpResponse:
    return asyncio.run(sim(request or get_forecast()))


def test_first_prompt_and_response_rendering() -> None:
    sim, model = simulator(simulated(200, {"city": "São Paulo", "high": 31.5}))
    assert send(sim) == HttpResponse(200, '{"city":"São Paulo","high":31.5}', "application/json")
    prompt = model.last_prompt
    assert prompt.startswith("Play the API.\nName: Toy Weather\nSpec: ")
    assert f"Spec: {json.dumps(TOY_SPEC)}\n" in prompt  # unresolved $refs, default separators
    assert prompt.endswith(
        "\nRequest:\n"
        + render_curl(get_forecast(), local_prefix=PREFIX, real_base_url="https://weather.example.org/v2/")
    )


def test_failures_become_a_server_error() -> None:
    sim, _ = simulator("I cannot do that.")
    assert send(sim) == HttpResponse(500, "Internal Server Error", "text/plain; charset=utf-8")
    nan, _ = simulator('Status Code: 200\nResponse: {"x": NaN}')
    assert send(nan).status == 500
    odd, _ = simulator(simulated(1000, {}), simulated(1000, {}))  # a repeated status is accepted
    with pytest.raises(TransportError):
        send(odd)  # no client reads a status line of four digits


@pytest.mark.parametrize("status", [100, 204, 304])
def test_a_status_that_carries_no_body_reaches_the_client_empty(status: int) -> None:
    """Upstream's client is Python's http.client, which reads no body for 1xx, 204 and 304 (§2.6)."""
    sim, _ = simulator(simulated(status, {"ignored": True}), simulated(status, {"ignored": True}))
    assert send(sim) == HttpResponse(status, "", "application/json")


def test_non_2xx_is_resampled_until_success_or_a_repeated_status() -> None:
    sim, model = simulator(simulated(404, {"e": 1}), simulated(200, {"ok": True}))
    assert send(sim).status == 200 and len(model.requests) == 2
    sim, model = simulator(simulated(404, {"e": 1}), simulated(400, {"e": 2}), "garbage", simulated(400, {"e": 3}))
    assert send(sim) == HttpResponse(400, '{"e":3}')  # 400 was seen before; the garbage reply is skipped
    replies = [simulated(status, {"s": status}) for status in (404, 400, 401, 402, 403, 405)]
    sim, model = simulator(*replies)
    assert send(sim) == HttpResponse(404, '{"s":404}')  # nothing accepted in 5 re-samples: the first reply
    assert len(model.requests) == 6
    assert all(request == model.requests[0] for request in model.requests)  # re-samples re-send the same chat


def test_the_conversation_is_kept_within_the_episode() -> None:
    first, second = simulated(200, {"n": 1}), simulated(200, {"n": 2})
    sim, model = simulator(first, second)
    send(sim)
    send(sim, get_forecast("Oslo"))
    assert [message["role"] for message in model.requests[1]] == ["user", "assistant", "user"]
    assert model.requests[1][1]["content"] == first
    assert model.requests[1][2]["content"].startswith("curl -X GET ")
    assert model.requests[1][2]["content"].endswith("/forecast/Oslo?days=3")
    fresh, model = simulator(first, second, use_cache=False)
    send(fresh)
    send(fresh)
    assert [len(request) for request in model.requests] == [1, 1]


def test_long_exchanges_are_not_kept_but_a_cached_chat_keeps_the_request() -> None:
    short = Reply(simulated(200, {}), prompt_tokens=100, completion_tokens=20)
    long = Reply(simulated(200, {}), prompt_tokens=2900, completion_tokens=100)  # 3000 tokens: not kept
    sim, model = simulator(long, short)
    send(sim)
    send(sim)
    assert [len(request) for request in model.requests] == [1, 1]
    sim, model = simulator(short, long, short)
    send(sim)
    send(sim)
    send(sim)
    # the second request was appended to the cached chat in place and stays there without its reply
    assert [message["role"] for message in model.requests[2]] == ["user", "assistant", "user", "user"]
