"""The tool executor: parameter checks and messages, re-sends, the cap, helpers (toolalpaca-gpt4tools §2.5, §2.8)."""

from __future__ import annotations

import asyncio
from functools import partial
from typing import Any

import pytest
from _toolalpaca import Script, toy_api

from json_narrow import as_object
from pytest_tooleval.json_value import JSONObject
from pytest_tooleval.suites.toolalpaca.tools import (
    ERROR_ADVICE,
    INVALID_JSON_MESSAGE,
    LIST_INPUT_MESSAGE,
    EpisodeFiles,
    GetDetails,
    HttpRequest,
    HttpResponse,
    RequestRejected,
    Retrieval,
    ToolCrash,
    TransportError,
    build_request,
    call_function,
    extract_json,
    invalid_action_message,
)

API = toy_api()
FORECAST = as_object(API.spec["paths"])["/forecast/{city}"]["get"]
ALERTS = as_object(API.spec["paths"])["/alerts"]["post"]
BASE = "http://127.0.0.1:5678/Toy Weather"


def forecast(params: dict[str, Any]) -> HttpRequest:
    return build_request(FORECAST, params, route="/forecast/{city}", method="get", base_url=BASE + "/")


def alert(params: dict[str, Any]) -> HttpRequest:
    return build_request(ALERTS, params, route="/alerts", method="post", base_url=BASE)


class Transport:
    """Answers with scripted responses and records what was sent."""

    def __init__(self, *responses: HttpResponse | Exception) -> None:
        self.responses = list(responses)
        self.sent: list[HttpRequest] = []

    async def __call__(self, request: HttpRequest) -> HttpResponse:
        self.sent.append(request)
        reply = self.responses.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply


def run(
    tool_input: str,
    transport: Transport,
    *,
    retrieval: bool = False,
    files: EpisodeFiles | None = None,
    route: str = "/forecast/{city}",
) -> str:
    operation = as_object(API.spec["paths"])[route]["get"]
    return asyncio.run(
        call_function(
            tool_input,
            operation=operation,
            route=route,
            method="get",
            base_url=BASE,
            transport=transport,
            files=files or EpisodeFiles(clock=lambda: 1_700_000_000.0),
            retrieval_available=retrieval,
        )
    )


def test_json_is_taken_from_the_first_to_the_last_bracket() -> None:
    assert extract_json('Sure: {"city": "Oslo"} thanks') == {"city": "Oslo"}
    assert extract_json('[{"a": 1}, {"b": 2}]') == [{"a": 1}, {"b": 2}]
    for text in ("no json", "{'single': 'quotes'}", "} backwards {"):
        with pytest.raises(ValueError):
            extract_json(text)


def test_parameters_go_where_the_spec_puts_them() -> None:
    request = forecast({"city": "São Paulo", "days": 3, "units": "metric", "unknown": "dropped"})
    assert (request.method, request.url) == ("GET", "http://127.0.0.1:5678/Toy Weather/forecast/São Paulo")
    assert request.query == {"days": 3, "units": "metric"}
    assert request.body is None and request.headers == (("Content-Type", "application/json"),)
    body = alert({"region": "north", "email": "a@b.c", "level": 2, "other": 1})
    assert (body.query, body.body) == ({"region": "north"}, {"email": "a@b.c", "level": 2})  # $ref resolved


def test_type_and_enum_errors_use_upstreams_lines() -> None:
    with pytest.raises(RequestRejected) as caught:
        forecast({"city": 7, "days": "three", "units": "kelvin", "detailed": None})
    assert str(caught.value) == "\n".join(
        [
            'Parameter type error: "city", expected string, but got integer. '
            "You need to change the input and try again.",
            'Parameter type error: "days", expected integer, but got string. '
            "You need to change the input and try again.",
            "Parameter type error: \"units\", expected one of ['metric', 'imperial'], but got \"kelvin\". "
            "You need to change the input and try again.",
            'Parameter type error: "detailed", expected boolean, but got None. '
            "You need to change the input and try again.",
        ]
    )


def test_coercion_quirks() -> None:
    params: dict[str, Any] = {"city": "Oslo", "days": "3", "detailed": "no", "units": ""}
    request = forecast(params)
    # the value is placed before it is coerced: the request carries the string, the input dict the int
    assert request.query == {"days": "3", "detailed": "no", "units": ""}
    assert params["days"] == 3 and params["detailed"] is True  # any non-empty string is True; "" skips the enum
    flags = forecast({"city": "Oslo", "days": True})
    assert flags.query == {"days": True}  # a bool passes as an integer


def test_body_values_are_not_type_checked() -> None:
    # as in the released outputs: only parameters are checked, against their schema (see tools._declared)
    body = alert({"region": "n", "email": 5, "level": "high", "threshold": "x"})
    assert body.body == {"email": 5, "level": "high", "threshold": "x"}


def test_missing_required_parameters_are_listed_after_type_errors() -> None:
    with pytest.raises(RequestRejected) as caught:
        alert({"threshold": 1})
    assert str(caught.value) == (
        'Missing required parameters: "region", "email", "level". You need to change the input and try again.'
    )
    with pytest.raises(RequestRejected, match=r'^Parameter type error: "region", expected string, but got integer'):
        alert({"region": 3})


def test_uncaught_upstream_failures_crash_the_episode() -> None:
    route = "/forecast/{city}/{day}"
    with pytest.raises(ToolCrash, match=r"^'day'$"):
        build_request(FORECAST, {"city": "Oslo"}, route=route, method="get", base_url=BASE)
    with pytest.raises(ToolCrash):
        run('{"city": "Oslo"}', Transport(TransportError("connection refused")))


def test_relative_route_is_joined_as_upstream_does_unless_fixed() -> None:
    operation: JSONObject = {
        "parameters": [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}]
    }
    build = partial(build_request, route="api/fruit/{name}", method="get", base_url="https://www.fruityvice.com")
    assert build(operation, {"name": "kiwi"}).url == "https://www.fruityvice.comapi/fruit/kiwi"
    fixed = build(operation, {"name": "kiwi"}, fix_relative_path=True)
    assert fixed.url == "https://www.fruityvice.com/api/fruit/kiwi"


def test_observation_for_success_and_for_errors() -> None:
    ok = Transport(HttpResponse(200, '{"days":[1]}'))
    assert run('{"city": "Oslo"}', ok) == 'Status Code: 200. Response: {"days":[1]}'
    not_found = Transport(HttpResponse(404, '{"error":"no city"}'))
    assert run('{"city": "Atlantis"}', not_found) == 'Status Code: 404. Response: {"error":"no city"}' + ERROR_ADVICE
    assert ERROR_ADVICE.startswith(". You should choose one of: (1) change the input and retry;")


def test_server_errors_are_resent_up_to_three_times() -> None:
    flaky = Transport(HttpResponse(503, "busy"), HttpResponse(200, "{}"))
    assert run('{"city": "Oslo"}', flaky) == "Status Code: 200. Response: {}"
    assert len(flaky.sent) == 2
    down = Transport(HttpResponse(500, "a"), HttpResponse(502, "b"), HttpResponse(500, "c"), HttpResponse(200, "x"))
    assert run('{"city": "Oslo"}', down) == "Status Code: 500. Response: c" + ERROR_ADVICE
    assert len(down.sent) == 3


def test_bad_input_never_reaches_the_transport() -> None:
    idle = Transport()
    assert run("city is Oslo", idle) == INVALID_JSON_MESSAGE
    assert run('[{"city": "Oslo"}]', idle) == LIST_INPUT_MESSAGE
    assert run('{"days": 2}', idle).startswith('Missing required parameters: "city".')
    assert idle.sent == []
    refusing = Transport(RequestRejected("Invalid URL 'x': No scheme supplied."))
    assert run('{"city": "Oslo"}', refusing) == "Invalid URL 'x': No scheme supplied."


def test_long_output_is_cut_at_3000_characters() -> None:
    long = Transport(HttpResponse(200, "x" * 5000))
    observation = run('{"city": "Oslo"}', long)
    assert observation == ("Status Code: 200. Response: " + "x" * 5000)[:3000]
    exact = Transport(HttpResponse(200, "y" * (3000 - len("Status Code: 200. Response: "))))
    assert len(run('{"city": "Oslo"}', exact)) == 3000


def test_long_output_is_offloaded_when_retrieval_is_available() -> None:
    files = EpisodeFiles(clock=lambda: 1_700_000_000.9)
    observation = run('{"city": "Oslo"}', Transport(HttpResponse(200, "z" * 4000)), retrieval=True, files=files)
    assert observation == (
        "The output is too long. You need to use the 'retrievalDataFromFile' function to retrieve the output from "
        "the file: ./tmp/retrieval_1700000000.txt"
    )
    assert files.read("./tmp/retrieval_1700000000.txt") == "Status Code: 200. Response: " + "z" * 4000
    helper = Script("Highs of 20.", name="retrieval")
    retrieval = Retrieval(helper, "${output}\nQ: ${query}", files)
    answer = asyncio.run(retrieval('{"file_path": "./tmp/retrieval_1700000000.txt", "query": "highs"}'))
    assert answer == {"retrieved_info": "Highs of 20."}
    assert helper.last_prompt.endswith("\nQ: highs")
    assert asyncio.run(retrieval('{"file_path": "/etc/passwd", "query": "x"}')) == "File does not exist."
    assert asyncio.run(retrieval('{"query": "x"}')) == INVALID_JSON_MESSAGE


def test_images_are_kept_and_announced_with_upstreams_typo() -> None:
    files = EpisodeFiles(clock=lambda: 0.0)
    image = Transport(HttpResponse(200, "\ufffd\ufffd", "image/jpeg", b"\xff\xd8"))
    observation = run('{"city": "Oslo"}', image, files=files)
    ((path, content),) = files.images.items()
    assert content == b"\xff\xd8" and path.startswith("./images/") and path.endswith(".jpeg")
    assert observation == f"Status Code: 200. Response: Recieved an image, saved in '{path}'."


def test_invalid_action_names_every_tool() -> None:
    assert invalid_action_message("getWeather", ["getDetails", "getForecast"]) == (
        "`getWeather` is not a valid action. The action must be one of ['getDetails', 'getForecast']."
    )


def test_request_is_prepared_like_requests_does() -> None:
    request = forecast({"city": "São Paulo", "days": 3, "units": "metric"})
    assert request.prepared_url() == (
        "http://127.0.0.1:5678/Toy%20Weather/forecast/S%C3%A3o%20Paulo?days=3&units=metric"
    )
    listed = HttpRequest("GET", "http://h/p", query={"tag": ["a b", None, "c"], "skip": None, "on": True})
    assert listed.prepared_url() == "http://h/p?tag=a+b&tag=c&on=True"
    posted = alert({"region": "n", "email": "é", "level": 1})
    assert posted.body_bytes() == b'{"email": "\\u00e9", "level": 1}'
    assert posted.wire_headers() == [
        ("host", "127.0.0.1:5678"),
        ("user-agent", "python-requests/2.28.2"),
        ("accept-encoding", "gzip, deflate"),
        ("accept", "*/*"),
        ("connection", "keep-alive"),
        ("content-type", "application/json"),
        ("content-length", "31"),
    ]
    assert HttpRequest("DELETE", "http://h/x").wire_headers()[-1] == ("content-length", "0")
    assert HttpRequest("GET", "http://h/x").wire_headers()[-1] == ("content-type", "application/json")


def test_get_details_asks_the_user_and_keeps_the_chat() -> None:
    user = Script("[User]: My email is a@b.c [AI]: thanks", "It is level 2.", name="user")
    tool = GetDetails(user, "Answer as the user.\n")
    assert asyncio.run(tool('{"Question": "Which email?"}', "Alert me.")) == "My email is a@b.c"
    assert asyncio.run(tool('{"Question": "Level?"}', "Alert me.")) == "It is level 2."
    assert user.last_prompt == (
        "Answer as the user.\n\n[User]: Alert me.\n[AI]: {'Question': 'Which email?'}\n[User]: My email is a@b.c\n"
        "[AI]: {'Question': 'Level?'}"
    )
    assert asyncio.run(tool('{"question": "lower case"}', "Alert me.")) == (
        'For `getDetails`, the "Action Input" must be like {Question": "The question to prompt user to provide '
        'sufficient information."}.'
    )
    assert asyncio.run(tool("please tell me", "Alert me.")) == INVALID_JSON_MESSAGE
    assert len(user.requests) == 2


def test_get_details_history_restarts_when_the_input_has_surrounding_spaces() -> None:
    user = Script("a@b.c", "2", name="user")
    tool = GetDetails(user, "Answer.")
    asyncio.run(tool('{"Question": "Email?"}', " Alert me. "))
    asyncio.run(tool('{"Question": "Level?"}', " Alert me. "))
    assert user.last_prompt == "Answer.\n[User]: Alert me.\n[AI]: {'Question': 'Level?'}"
