"""Your own cases: the example *.tooleval.yaml file against the fake server, in both protocols, with xdist, a
baseline and the gate, and its reports; a broken file stops collection with one line; the examples ride along
with no bare pytest of the clone."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fake_openai import FakeOpenAI, ToolCalls

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "assistant.tooleval.yaml"
KEY = "sk-yaml-suite-3Jq8TnB5yC1dF7Hq2ZpX"

# the right answer to each request, by a phrase of its last message: the text protocol, then native calls
RIGHT_TEXT = {
    "weather like in Paris": "[get_weather(city='Paris')]",
    # the other order: an unordered expectation takes either
    "Rome and in Oslo": "[get_weather(city='Oslo', date='2026-12-02', unit='celsius'), "
    "get_weather(city='Rome', date='2026-12-02', unit='celsius')]",
    "meeting with Dana": "Sure. What time should the meeting with Dana start?",
    "flight to Lisbon": "I cannot book a flight: I can only check the weather and manage your calendar.",
    "rain in Berlin": "[get_weather(city='Berlin', date='2026-12-05')]",
    "Function results": "[add_event(title='Picnic in the park', date='2026-12-05', start='12:00')]",
}
WRONG_TEXT = {
    "weather like in Paris": "[get_weather(city='paris', unit='kelvin')]",
    "Rome and in Oslo": "[get_weather(city='Rome', date='2026-12-02', unit='celsius')]",
    "meeting with Dana": "[add_event(title='Meeting with Dana', date='2026-12-04', start='09:00')]",
    "flight to Lisbon": "Sure, done!",
    "rain in Berlin": "[get_weather(city='Berlin', date='2026-12-05')]",
    "Function results": "[add_event(title='Lunch', date='2026-12-05', start='12:00')]",
}
RIGHT_CALLS: dict[str, ToolCalls | str] = {
    "weather like in Paris": ToolCalls.of(("get_weather", {"city": "Paris", "date": "2026-12-01"})),
    "Rome and in Oslo": ToolCalls.of(
        ("get_weather", {"city": "Oslo", "date": "2026-12-02", "unit": "celsius"}),
        ("get_weather", {"city": "Rome", "date": "2026-12-02", "unit": "celsius"}),
    ),
    "meeting with Dana": "What time should it start?",
    "flight to Lisbon": "No tool of mine books a flight.",
    "rain in Berlin": ToolCalls.of(("get_weather", {"city": "Berlin", "date": "2026-12-05"})),
    "sunny": ToolCalls.of(("add_event", {"title": "Picnic", "date": "2026-12-05", "start": "12:00"})),
}


def responder(answers: dict[str, Any]) -> Any:
    def answer(body: dict[str, Any]) -> Any:
        last = body["messages"][-1]
        text = last.get("content") or ""
        return next((reply for phrase, reply in answers.items() if phrase in text), "I do not know.")

    return answer


def right_in_either_protocol(body: dict[str, Any]) -> Any:
    """The right answer in the protocol the request is asked in: native calls when it offers tools."""
    return responder(RIGHT_CALLS if body.get("tools") else RIGHT_TEXT)(body)


TEXT_PROTOCOL = "To call one or more of them, reply with nothing but a list of calls"  # the prompt mode's system


def asked(fake_openai: FakeOpenAI) -> list[dict[str, Any]]:
    """The requests of the run's cases (each has a system message: the file's `system`)."""
    return [body for body in fake_openai.stats.bodies if body and body["messages"][0]["role"] == "system"]


@pytest.fixture
def cases(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, fake_openai: FakeOpenAI) -> list[str]:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "TOOLEVAL_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)
    shutil.copy(EXAMPLE, pytester.path / EXAMPLE.name)
    return [
        "--tooleval-model=fake-model",
        f"--tooleval-base-url={fake_openai.base_url}",
        f"--tooleval-api-key={KEY}",
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
        "-p",
        "no:cacheprovider",
    ]


def outcomes(report: dict[str, Any]) -> dict[str, str]:
    return {row["test_id"]: row["outcome"] for row in report["samples"]}


def read(pytester: pytest.Pytester, name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((pytester.path / name).read_text(encoding="utf-8"))
    return document


# one process under -m slow: the xdist run passes through the same path, and more of it (docs/development.md)
@pytest.mark.parametrize(
    "workers", [pytest.param([], marks=pytest.mark.slow), ["-n", "2"]], ids=["one-process", "xdist"]
)
def test_right_answers_pass_in_both_protocols(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, cases: list[str], workers: list[str]
) -> None:
    fake_openai.responder = responder(RIGHT_TEXT)
    result = pytester.runpytest_subprocess(*cases, "--tooleval-mode=prompt", "--tooleval-report=prompt.json", *workers)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    assert set(outcomes(read(pytester, "prompt.json")).values()) == {"passed"}
    assert len(outcomes(read(pytester, "prompt.json"))) == 5
    result.stdout.fnmatch_lines(
        [
            "your cases (*.tooleval.yaml)",
            "calendar * 3/3 * 0 * 1.000 *",
            "weather * 2/2 * 0 * 1.000 *",
            "OVERALL (mean of categories) * 1.000 *",
        ]
    )
    # the two-turn case sent the scripted tool result back before its second request
    second = [body for body in fake_openai.stats.json_bodies if "Function results" in body["messages"][-1]["content"]]
    assert len(second) == 1 and '"rain_mm":0' in second[0]["messages"][-1]["content"]
    assert second[0]["messages"][-2] == {
        "role": "assistant",
        "content": "[get_weather(city='Berlin', date='2026-12-05')]",
    }
    fake_openai.reset_stats()
    fake_openai.responder = responder(RIGHT_CALLS)
    result = pytester.runpytest_subprocess(*cases, "--tooleval-mode=fc", "--tooleval-report=fc.json", *workers)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    assert set(outcomes(read(pytester, "fc.json")).values()) == {"passed"}
    bodies = fake_openai.stats.json_bodies
    assert bodies and all(
        [tool["function"]["name"] for tool in body["tools"]] == ["get_weather", "add_event"] for body in bodies
    )
    tool_messages = [message for body in bodies for message in body["messages"] if message["role"] == "tool"]
    assert len(tool_messages) == 1 and json.loads(tool_messages[0]["content"])["sky"] == "sunny"


def test_wrong_answers_fail_saying_what_was_expected_and_what_failed(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, cases: list[str]
) -> None:
    fake_openai.responder = responder(WRONG_TEXT)
    result = pytester.runpytest_subprocess(*cases, "--tooleval-mode=prompt", "--tooleval-report=report.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert outcomes(read(pytester, "report.json")) == {
        "assistant-weather_today": "failed",
        "assistant-two_cities_at_once": "failed",
        "assistant-meeting_needs_a_time": "failed",
        "assistant-book_a_flight_is_out_of_scope": "failed",
        "assistant-weather_then_event": "failed",
    }
    result.stdout.fnmatch_lines(
        [
            "yaml assistant-weather_today: wrong_argument (scorer: official)",
            "  error:    [\"call 1 (get_weather): argument 'city': expected 'Paris' (exact), got 'paris'\", "
            "\"call 1 (get_weather): argument 'unit': expected to be absent (absent), got 'kelvin'\", "
            "\"call 1 (get_weather): its arguments violate the tool's schema: 'unit': 'kelvin' is not one of *",
            "  expected: ?get_weather(city='Paris', date=any of ?'2026-12-01', None?, unit=<absent>)?",
            '  decoded:  ?{"get_weather": {"city": "paris", "unit": "kelvin"}}?',
            "  file: *assistant.tooleval.yaml",
            "  line: 30",
            "  mode: prompt",
            '  failed: ["city: exact", "unit: absent", "schema"]',
        ]
    )
    result.stdout.fnmatch_lines(["*expected 2 calls (get_weather, get_weather), got 1 call: get_weather(city='Rome'*"])
    result.stdout.fnmatch_lines(["*expected an answer in words, got 1 call: add_event(title='Meeting with Dana'*"])
    result.stdout.fnmatch_lines(["*the answer does not contain 'flight'*"])
    result.stdout.fnmatch_lines(
        [
            "*turn 2 (line *): call 1 (add_event): argument 'title': expected to match "
            "/(?i)picnic/ (regex), got 'Lunch'*",
            "  file: *",
            "  line: 66",
            "  mode: prompt",
            '  failed: ["turn 2: title: regex"]',
        ]
    )


def test_the_examples_gate_against_a_baseline(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, cases: list[str]
) -> None:
    fake_openai.responder = responder(RIGHT_TEXT)
    cases = [*cases, "--tooleval-mode=prompt"]
    first = pytester.runpytest_subprocess(*cases, "--tooleval-report=baseline.json", "-n", "2")
    assert first.ret == pytest.ExitCode.OK
    asked = fake_openai.stats.requests
    assert asked == 6  # five cases, one of two turns
    again = pytester.runpytest_subprocess(*cases, "--tooleval-report=again.json", "--tooleval-cache=reuse")
    assert again.ret == pytest.ExitCode.OK and fake_openai.stats.requests == asked  # every answer from the cache
    fake_openai.responder = responder(
        {
            **RIGHT_TEXT,
            "flight to Lisbon": WRONG_TEXT["flight to Lisbon"],
            "meeting with Dana": WRONG_TEXT["meeting with Dana"],
        }
    )
    gated = pytester.runpytest_subprocess(
        *cases,
        "--tooleval-no-cache",
        "--tooleval-baseline=baseline.json",
        "--tooleval-fail-under=yaml.weather.accuracy=1,yaml.calendar.accuracy=0.5",
        "--tooleval-report=gated.json",
        "-n",
        "2",
    )
    assert gated.ret == pytest.ExitCode.TESTS_FAILED
    gated.stdout.fnmatch_lines(
        [
            "tooleval gate: yaml.weather.accuracy = 1.000 >= 1.000 ok",
            "tooleval gate: yaml.calendar.accuracy MISSED: 0.333 < 0.500 (short by 0.167)",
            "tooleval gate: error rate 0.000 <= 0.020 ok",
            "tooleval gate: FAILED",
        ]
    )
    comparison = read(pytester, "gated.json")["comparison"]
    calendar = next(entry for entry in comparison["figures"] if entry["figure"] == "yaml.calendar.accuracy")
    assert (calendar["baseline"], round(calendar["current"], 3), calendar["pass_to_fail"]) == (1.0, 0.333, 2)
    flipped = sorted(sample for flip in comparison["flips"]["pass_to_fail"] for sample in flip["samples"])
    assert comparison["flips"]["fail_to_pass"] == []
    assert flipped == ["assistant-book_a_flight_is_out_of_scope", "assistant-meeting_needs_a_time"]


def test_a_file_that_breaks_the_schema_stops_collection_with_one_line(
    pytester: pytest.Pytester, cases: list[str]
) -> None:
    text = EXAMPLE.read_text(encoding="utf-8").replace("date: {any_of:", "date: {any_off:")
    (pytester.path / EXAMPLE.name).write_text(text, encoding="utf-8")
    line = next(number for number, content in enumerate(text.splitlines(), 1) if "any_off" in content)
    for workers in ([], ["-n", "2"]):
        result = pytester.runpytest_subprocess(*cases, *workers)
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        errors = [text for text in result.stderr.lines if text.strip()]
        assert len(errors) == 1, errors
        assert errors[0].startswith(
            f"ERROR: {pytester.path / EXAMPLE.name}:{line}: "
            "cases[0].expect.calls[0].arguments.date: unknown matcher 'any_off'"
        )


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_a_file_spelt_tooleval_yml_is_a_suite_file_too(
    pytester: pytest.Pytester, cases: list[str], workers: list[str]
) -> None:
    """YAML's other spelling: `assistant.tooleval.yml` runs as `assistant.tooleval.yaml` does, with the same ids."""
    (pytester.path / EXAMPLE.name).rename(pytester.path / "assistant.tooleval.yml")
    offline = [option for option in cases if not option.startswith(("--tooleval-model", "--tooleval-base-url"))]
    result = pytester.runpytest_subprocess(
        *offline,
        "--tooleval-model=oracle",
        "--tooleval-report=oracle.json",
        "--tooleval-fail-under=yaml.overall=0.5",
        *workers,
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    assert set(outcomes(read(pytester, "oracle.json"))) == {
        "assistant-weather_today",
        "assistant-two_cities_at_once",
        "assistant-meeting_needs_a_time",
        "assistant-book_a_flight_is_out_of_scope",
        "assistant-weather_then_event",
    }
    result.stdout.fnmatch_lines(
        ["your cases (*.tooleval.yaml)", "calendar * 3/3 *", "weather * 2/2 *", "tooleval gate: PASSED"]
    )


def test_two_files_of_one_stem_with_a_case_of_one_name_are_refused(pytester: pytest.Pytester, cases: list[str]) -> None:
    """`assistant.tooleval.yaml` beside `assistant.tooleval.yml`: both would give `assistant-weather_today`."""
    shutil.copy(EXAMPLE, pytester.path / "assistant.tooleval.yml")
    result = pytester.runpytest_subprocess(*cases)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [text for text in result.stderr.lines if text.strip()]
    assert errors == [
        f"ERROR: {pytester.path / 'assistant.tooleval.yml'}: case 'weather_today' has the test id "
        f"'assistant-weather_today' of a case in {pytester.path / EXAMPLE.name}: rename one of the "
        "files or cases"
    ]


def test_replayed_answers_and_repeats_score_as_live_ones(pytester: pytest.Pytester, cases: list[str]) -> None:
    rows = [
        {"id": "assistant-weather_today", "output": RIGHT_TEXT["weather like in Paris"]},
        {"id": "assistant-two_cities_at_once", "output": WRONG_TEXT["Rome and in Oslo"]},
        {"id": "assistant-meeting_needs_a_time", "output": RIGHT_TEXT["meeting with Dana"]},
        {"id": "assistant-book_a_flight_is_out_of_scope", "output": RIGHT_TEXT["flight to Lisbon"]},
        {
            "id": "assistant-weather_then_event",
            "turns": [{"text": RIGHT_TEXT["rain in Berlin"]}, {"text": RIGHT_TEXT["Function results"]}],
        },
    ]
    (pytester.path / "recorded.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    offline = [option for option in cases if not option.startswith(("--tooleval-model", "--tooleval-base-url"))]
    result = pytester.runpytest_subprocess(
        *offline,
        "--tooleval-model=replay:recorded.jsonl",
        "--tooleval-repeats=2",
        "--tooleval-report=replay.json",
        "-n",
        "2",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert outcomes(read(pytester, "replay.json")) == {
        "assistant-weather_today": "passed",
        "assistant-two_cities_at_once": "failed",
        "assistant-meeting_needs_a_time": "passed",
        "assistant-book_a_flight_is_out_of_scope": "passed",
        "assistant-weather_then_event": "passed",
        "assistant-weather_today-r2": "passed",
        "assistant-two_cities_at_once-r2": "failed",
        "assistant-meeting_needs_a_time-r2": "passed",
        "assistant-book_a_flight_is_out_of_scope-r2": "passed",
        "assistant-weather_then_event-r2": "passed",
    }
    result.stdout.fnmatch_lines(["calendar.accuracy * 3 * 1.000 *", "weather.accuracy * 2 * 0.500 *"])


def test_without_the_plugin_the_files_are_not_tests(pytester: pytest.Pytester, cases: list[str]) -> None:
    result = pytester.runpytest_subprocess("-p", "no:tooleval", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    assert "Error" not in result.stdout.str() + result.stderr.str()


# -- protocols ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_fc_cases_pass_against_a_server_that_needs_tool_choice(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, cases: list[str], workers: list[str]
) -> None:
    """llama-cpp-python leaves `tools` out of the prompt unless `tool_choice` is sent, and then answers without
    a call (issue 26): every request with tools says tool_choice "auto", OpenAI's default."""
    fake_openai.responder = responder(RIGHT_CALLS)
    fake_openai.tools_need_choice = True
    result = pytester.runpytest_subprocess(*cases, "--tooleval-mode=fc", "--tooleval-report=fc.json", *workers)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    assert outcomes(read(pytester, "fc.json")) == dict.fromkeys(CASE_IDS, "passed")
    bodies = asked(fake_openai)
    assert len(bodies) == 6 and all(body["tools"] and body["tool_choice"] == "auto" for body in bodies)
    assert read(pytester, "fc.json")["totals"]["tool_answers"] == {"asked": 6, "called": 4}
    assert "no tool call" not in result.stdout.str()


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_a_two_turn_fc_case_passes_where_null_content_is_refused(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, cases: list[str], workers: list[str]
) -> None:
    """The model's calls go back as an assistant message with `content: ""`, never null, which llama-cpp-python
    answers with a 500 (issue 26)."""
    fake_openai.responder = responder(RIGHT_CALLS)  # tool calls with content null, as OpenAI gives them
    fake_openai.refuse_null_content = True
    result = pytester.runpytest_subprocess(
        *cases, "--tooleval-mode=fc", "--tooleval-report=fc.json", "-k", "weather_then_event", *workers
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    assert outcomes(read(pytester, "fc.json")) == {"assistant-weather_then_event": "passed"}
    [second] = [body for body in asked(fake_openai) if body["messages"][-1]["role"] == "tool"]
    call = second["messages"][-2]
    assert (
        call["role"] == "assistant"
        and call["content"] == ""
        and call["tool_calls"][0]["function"]["name"] == "get_weather"
    )


def test_a_file_is_asked_with_native_tools_unless_it_says_prompt(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, cases: list[str]
) -> None:
    fake_openai.responder = responder(RIGHT_CALLS)  # native tool calls only
    result = pytester.runpytest_subprocess(*cases, "--tooleval-report=default.json")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    assert set(outcomes(read(pytester, "default.json")).values()) == {"passed"}
    bodies = asked(fake_openai)
    assert len(bodies) == 6 and all(
        [tool["function"]["name"] for tool in body["tools"]] == ["get_weather", "add_event"] for body in bodies
    )
    assert not any(TEXT_PROTOCOL in body["messages"][0]["content"] for body in bodies)

    (pytester.path / EXAMPLE.name).write_text("mode: prompt\n" + EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    fake_openai.reset_stats()
    fake_openai.responder = responder(RIGHT_TEXT)
    result = pytester.runpytest_subprocess(*cases, "--tooleval-report=prompt.json")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    bodies = asked(fake_openai)
    assert len(bodies) == 6 and not any("tools" in body for body in bodies)
    assert all(TEXT_PROTOCOL in body["messages"][0]["content"] for body in bodies)
    assert {row["details"]["mode"] for row in read(pytester, "prompt.json")["samples"]} == {"prompt"}


CASE_IDS = {
    "assistant-weather_today",
    "assistant-two_cities_at_once",
    "assistant-meeting_needs_a_time",
    "assistant-book_a_flight_is_out_of_scope",
    "assistant-weather_then_event",
}


@pytest.mark.parametrize("mode", ["prompt", "fc"])
def test_the_figures_have_one_name_whichever_protocol_is_asked(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, cases: list[str], mode: str
) -> None:
    fake_openai.responder = right_in_either_protocol
    result = pytester.runpytest_subprocess(
        *cases,
        f"--tooleval-mode={mode}",
        "--tooleval-report=report.json",
        "--tooleval-fail-under=yaml.overall=0.9,yaml.calendar.accuracy=1",
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:] + result.stderr.str()
    result.stdout.fnmatch_lines(
        ["tooleval gate: yaml.overall = 1.000 >= 0.900 ok", "tooleval gate: yaml.calendar.accuracy = 1.000 >= 1.000 ok"]
    )
    report = read(pytester, "report.json")
    assert set(report["summary"]["yaml"]["figures"]) == {"calendar.accuracy", "weather.accuracy", "overall"}
    assert set(outcomes(report)) == CASE_IDS
    assert {row["details"]["mode"] for row in report["samples"]} == {mode}
    assert all(bool(body.get("tools")) == (mode == "fc") for body in asked(fake_openai))


def test_both_protocols_add_the_other_protocols_figures(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, cases: list[str]
) -> None:
    fake_openai.responder = right_in_either_protocol
    result = pytester.runpytest_subprocess(
        *cases,
        "--tooleval-mode=both",
        "--tooleval-report=both.json",
        "--tooleval-fail-under=yaml.overall=1,yaml.prompt.overall=1",
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:] + result.stderr.str()
    report = read(pytester, "both.json")
    # the file's own protocol (function calling: it says no mode) under the plain names, the other prefixed
    assert set(report["summary"]["yaml"]["figures"]) == {
        "calendar.accuracy",
        "weather.accuracy",
        "overall",
        "prompt.calendar.accuracy",
        "prompt.weather.accuracy",
        "prompt.overall",
    }
    assert set(outcomes(report)) == CASE_IDS | {f"{case}-prompt" for case in CASE_IDS}
    modes = {row["test_id"]: row["details"]["mode"] for row in report["samples"]}
    assert {modes[case] for case in CASE_IDS} == {"fc"} and {modes[f"{case}-prompt"] for case in CASE_IDS} == {"prompt"}
    result.stdout.fnmatch_lines(
        ["your cases (*.tooleval.yaml)", "*", "*", "calendar * 3/3 *", "your cases (*.tooleval.yaml), prompt protocol"]
    )


# -- what the reports say ----------------------------------------------------------------------------------


def test_the_reports_give_each_category_and_every_failed_case(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, cases: list[str]
) -> None:
    fake_openai.responder = responder(
        {
            **RIGHT_CALLS,
            "weather like in Paris": WRONG_TEXT["weather like in Paris"],
            "flight to Lisbon": WRONG_TEXT["flight to Lisbon"],
        }
    )
    result = pytester.runpytest_subprocess(
        *cases, "--tooleval-report=report.json", "--tooleval-markdown=report.md", "--tooleval-html=report.html"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    markdown = (pytester.path / "report.md").read_text(encoding="utf-8")
    assert "figures." not in markdown  # the suite's own table, not its data as dotted keys
    for line in (
        "| calendar | 3/3 | 0 | 0.667 | [0.208, 0.939] | 1.000 |",
        "| weather | 2/2 | 0 | 0.500 | [0.095, 0.905] | 1.000 |",
        "Failed cases: 2",
        "| assistant-book_a_flight_is_out_of_scope | calendar | answer: contains |",
        "| assistant-weather_today | weather | city: exact, unit: absent, schema |",
    ):
        assert line in markdown
    block = read(pytester, "report.json")["summary"]["yaml"]["blocks"][0]
    low, high = block["overall_interval"]  # a bootstrap's: read off the run
    assert (
        f"| **OVERALL** (mean of categories) |  |  | **0.583** | [{low:.3f}, {high:.3f}] | "
        f"{block['overall_detectable']:.3f} |"
    ) in markdown
    page = (pytester.path / "report.html").read_text(encoding="utf-8")
    assert "No OVERALL figure" not in page and "<pre>" not in page.split('id="fingerprint"')[0]  # no JSON
    assert re.search(
        r'<div class="card"[^>]* data-figure="yaml.overall"><div class="card-title">your cases '
        r'\(\*\.tooleval\.yaml\)</div><div class="big">0\.583</div>',
        page,
    )
    assert "<td>assistant-weather_today</td><td>weather</td><td>city: exact, unit: absent, schema</td>" in page


def test_an_interval_reads_the_same_in_the_terminal_and_the_reports(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, cases: list[str]
) -> None:
    # 37 of 50 right: Wilson's interval is [0.60447, 0.84128], which a report rounded to 4 places would print as
    # [0.605, 0.841] after the terminal's [0.604, 0.841]
    lines = [
        "category: sums",
        "tools:",
        "  - name: add",
        "    parameters:",
        "      type: object",
        "      properties: {a: {type: integer}, b: {type: integer}}",
        "cases:",
    ]
    for number in range(50):
        lines += [
            f"  - name: sum_{number}",
            f"    user: Add {number} and 1.",
            f"    expect: {{calls: [{{name: add, arguments: {{a: {number}, b: 1}}}}]}}",
        ]
    (pytester.path / EXAMPLE.name).unlink()
    (pytester.path / "sums.tooleval.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")

    def add(body: dict[str, Any]) -> Any:
        number = int(re.findall(r"Add (\d+) and 1", body["messages"][-1]["content"])[0])
        return ToolCalls.of(("add", {"a": number, "b": 1 if number < 37 else 2}))

    fake_openai.responder = add
    result = pytester.runpytest_subprocess(
        *cases,
        "--tooleval-report=report.json",
        "--tooleval-markdown=report.md",
        "--tooleval-html=report.html",
        "-n",
        "2",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["sums * 50/50 * 0 * 0.740 * [[]0.604, 0.841[]] *"])
    category = read(pytester, "report.json")["summary"]["yaml"]["blocks"][0]["categories"]["sums"]
    assert category["interval"][0] == pytest.approx(0.6044684, abs=1e-7)  # kept whole: rounded once, when shown
    assert "| sums | 50/50 | 0 | 0.740 | [0.604, 0.841] |" in (pytester.path / "report.md").read_text(encoding="utf-8")
    assert "<td>[0.604, 0.841]</td>" in (pytester.path / "report.html").read_text(encoding="utf-8")


# -- what rides along ---------------------------------------------------------------------------------------


def test_without_a_model_the_cases_are_named_as_cases_not_benchmark_tests(
    pytester: pytest.Pytester, cases: list[str]
) -> None:
    offline = [option for option in cases if not option.startswith("--tooleval-model")]
    result = pytester.runpytest_subprocess(*offline)
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(skipped=5)
    result.stdout.fnmatch_lines(["tooleval: nothing was evaluated: no --tooleval-model (5 yaml suite cases skipped)"])
    assert "benchmark test" not in result.stdout.str()


def _collect_in_the_clone(*args: str) -> str:
    """`pytest --collect-only` in the repository's clone itself, with its own configuration."""
    environment = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("OPENAI_", "TOOLEVAL_", "PYTEST_")) or name == "TOOLEVAL_DATA_DIR"
    }
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def test_a_bare_pytest_of_the_clone_leaves_the_examples_out_unless_they_are_named() -> None:
    bare = _collect_in_the_clone()
    assert "pytest_tooleval/benchmarks/test_acebench.py::" in bare  # the benchmarks, from testpaths
    assert "tooleval.yaml" not in bare
    named = _collect_in_the_clone("examples")
    assert {f"examples/assistant.tooleval.yaml::test_case[{case}]" for case in CASE_IDS} <= set(named.splitlines())
