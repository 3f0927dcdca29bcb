"""One odd answer never stops a run (issue 40, points 1-3 and 9): text that is no Unicode (a lone surrogate half)
in a decoded call, a tool call's name or a finish reason; a usage count past sqlite's 64-bit integers; a key the
endpoint echoes in a tool call's name or id. Each run ends, every sample with its verdict, and nothing is lost
from the response cache or the report.

Real runs (pytester) against the fake server over HTTP, or of a replay file, with xdist where the fault was
xdist's: the pipe between processes and the run board refuse a lone surrogate.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest
from _reliability import KEY, read_report

from fake_openai import FakeOpenAI, ToolCalls
from mini_acebench import RIGHT
from mini_acebench import SAMPLES as MINI_SAMPLES

HANG_GUARD_S = 120  # a run that hangs is ended here, and fails the test


def cached_rows(pytester: pytest.Pytester) -> list[tuple[Any, ...]]:
    with sqlite3.connect(pytester.path / "cache" / "responses.sqlite") as conn:
        return conn.execute("SELECT text, prompt_tokens, finish_reason, tool_calls FROM replies_v1").fetchall()


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_surrogate_a_replayed_call_decodes_to_is_scored_under_xdist(
    pytester: pytest.Pytester, mini: list[str], workers: str
) -> None:
    # the model wrote the escapes: ACEBench's decoder turns them into the text they spell, halves and all
    rows = [
        {"id": "normal_atom_bool_0", "result": "[get_weather(city='\\ud83d\\ude00')]"},
        {"id": "normal_atom_bool_1", "result": "[get_weather(city='Rome\\ud83d', days=3)]"},
    ]
    (pytester.path / "outputs.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = pytester.runpytest_subprocess(
        *mini,
        "--tooleval-model=replay:outputs.jsonl",
        "-k",
        "normal_atom_bool",
        "--tooleval-report=report.json",
        "-n",
        workers,
        timeout=HANG_GUARD_S,
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.assert_outcomes(failed=1, passed=1)  # ACEBench compares strings without their punctuation
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    samples = {row["id"]: row for row in read_report(pytester.path / "report.json")["samples"]}
    # a pair is its character again; a lone half is U+FFFD wherever the call is shown
    assert samples["normal_atom_bool_0"]["calls"] == [{"get_weather": {"city": "\U0001f600"}}]
    assert samples["normal_atom_bool_1"]["calls"] == [{"get_weather": {"city": "Rome\ufffd", "days": 3}}]
    result.stdout.fnmatch_lines(["acebench: 2/2 scored, 1 passed, 1 failed, 0 errors*"])


@pytest.mark.parametrize("workers", ["0", "2"])
def test_surrogates_in_a_function_call_reply_end_as_verdicts_and_are_cached(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, mini: list[str], workers: str
) -> None:
    def answer(body: dict[str, Any]) -> ToolCalls | str:
        question = body["messages"][-1]["content"]
        if "weather in Paris" in question:  # FC arguments whose JSON spells a lone half
            return ToolCalls.of(("get_weather", '{"city": "Par\\ud83dis"}'))
        if "Rome for 3 days" in question:  # a name that is no Unicode
            return ToolCalls.of(("get_weather\ud83d", {"city": "Rome", "days": 3}))
        return next((reply for needle, reply in RIGHT.items() if needle in question), "[]")

    fake_openai.responder = answer
    fake_openai.edit_completion = lambda body: body["choices"][0].update(finish_reason="stop\udc00")
    result = pytester.runpytest_subprocess(
        *mini,
        "--tooleval-model=fake-model",
        f"--tooleval-base-url={fake_openai.base_url}",
        f"--tooleval-api-key={KEY}",
        "--tooleval-mode=fc",
        "--tooleval-report=report.json",
        "-n",
        workers,
        timeout=HANG_GUARD_S,
    )
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    outcomes = result.parseoutcomes()
    assert outcomes.get("errors", 0) == 0 and outcomes.get("failed", 0) >= 2
    report = read_report(pytester.path / "report.json")
    assert len(report["samples"]) == MINI_SAMPLES and report["storage_faults"] == []
    assert {row["finish_reason"] for row in report["samples"] if "finish_reason" in row} <= {"stop\ufffd"}
    rows = cached_rows(pytester)
    assert len(rows) == MINI_SAMPLES  # every answer cached, none refused by the file
    assert all(finish == "stop\ufffd" for *_, finish, _ in rows)
    names = {call["name"] for *_, calls in rows if calls for call in json.loads(calls)}
    assert "get_weather\ufffd" in names


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_usage_count_past_64_bits_is_stored_as_unknown_and_caching_goes_on(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str], workers: str
) -> None:
    fake_openai.edit_completion = lambda body: body["usage"].update(prompt_tokens=2**64 - 1)
    result = pytester.runpytest_subprocess(*live, "--tooleval-report=report.json", "-n", workers, timeout=HANG_GUARD_S)
    result.assert_outcomes(passed=MINI_SAMPLES)
    report = read_report(pytester.path / "report.json")
    assert report["storage_faults"] == []
    rows = cached_rows(pytester)
    assert len(rows) == MINI_SAMPLES and {prompt for _, prompt, *_ in rows} == {None}


def test_a_key_echoed_in_a_tool_calls_name_and_id_is_masked_everywhere(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, mini: list[str]
) -> None:
    def answer(body: dict[str, Any]) -> ToolCalls:
        return ToolCalls.of((f"leak_{KEY}", {"city": "Paris"}))

    fake_openai.responder = answer

    def echo(body: dict[str, Any]) -> None:
        for call in body["choices"][0]["message"].get("tool_calls") or []:
            call["id"] = f"id-{KEY}"
        body["choices"][0]["finish_reason"] = f"stop {KEY}"

    fake_openai.edit_completion = echo
    result = pytester.runpytest_subprocess(
        *mini,
        "--tooleval-model=fake-model",
        f"--tooleval-base-url={fake_openai.base_url}",
        f"--tooleval-api-key={KEY}",
        "--tooleval-mode=fc",
        "-k",
        "normal_atom_bool_0",
        "--tooleval-report=report.json",
        "--junitxml=junit.xml",
        timeout=HANG_GUARD_S,
    )
    result.assert_outcomes(failed=1)
    written = [
        result.stdout.str(),
        result.stderr.str(),
        (pytester.path / "report.json").read_text(),
        (pytester.path / "junit.xml").read_text(),
    ]
    with sqlite3.connect(pytester.path / "cache" / "responses.sqlite") as conn:
        written += [repr(row) for row in conn.execute("SELECT * FROM replies_v1")]
    assert not [text for text in written if KEY in text]
    assert any("leak_***" in text for text in written)
