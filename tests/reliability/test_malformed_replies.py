"""A reply whose JSON is whole but no usable completion, every time it is asked, is the model's answer: its
sample fails with what was wrong, and stays in the figures' denominators (docs/running.md, outcomes). One that
heals on a retry is scored as usual; a body cut off or not UTF-8 stays an error (test_network_faults.py)."""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any

import pytest
from _reliability import read_report

from fake_openai import FakeOpenAI, Fault, last_user_message
from mini_acebench import RIGHT
from mini_acebench import SAMPLES as MINI_SAMPLES

FAULTED_PROMPT = "weather in Paris"  # normal_atom_bool_0, one of the category's two samples
FAULTED_ID = "normal_atom_bool_0"
HEALED_PROMPT = "weather in Oslo"  # normal_single_turn_single_function_0

# each shape a server may send, served for every attempt of one sample, and what the failure says was wrong
SHAPES = {
    "empty-choices": (Fault.empty_choices(), "the response has no choices"),
    "nameless-call": (Fault.nameless_call(), "tool_calls[0] has no function name"),
    "content-a-list": (Fault.content_not_text(), "the message content is a list, not text"),
    "content-a-number": (Fault.content_not_text("42"), "the message content is a int, not text"),
    "tool-calls-an-object": (Fault.tool_calls_object(), "tool_calls is a dict, not a list"),
}


def check_failed_as_malformed(result: pytest.RunResult, report: dict[str, Any], problem: str) -> None:
    """The sample failed (never errored) saying what was wrong, and its category kept it in its denominator."""
    result.assert_outcomes(passed=MINI_SAMPLES - 1, failed=1)
    result.stdout.fnmatch_lines(
        [
            f"*acebench en/{FAULTED_ID}: malformed_reply (scorer: official)",
            f"*  error:    malformed reply: {problem.replace('[', '[[]')}",  # fnmatch's [
            f"*acebench: {MINI_SAMPLES}/{MINI_SAMPLES} scored, {MINI_SAMPLES - 1} passed, 1 "
            "failed (1 of them malformed replies), 0 errors*",
        ]
    )
    [row] = [row for row in report["samples"] if row["outcome"] != "passed"]
    assert (row["id"], row["outcome"], row["valid"], row["error_type"], row["error"]) == (
        FAULTED_ID,
        "failed",
        False,
        "malformed_reply",
        f"malformed reply: {problem}",
    )
    assert row["output"] is None and row["tokens"]["prompt"] > 0  # the usage the malformed reply reported
    category = report["summary"]["acebench"]["en"]["categories"]["normal_atom_bool"]
    assert (category["n"], category["scored"], category["errors"], category["accuracy"]) == (2, 2, 0, 0.5)
    assert report["totals"]["scored"] == MINI_SAMPLES and report["totals"]["errors"] == 0


@pytest.mark.parametrize(("fault", "problem"), SHAPES.values(), ids=SHAPES.keys())
def test_a_reply_malformed_every_time_fails_its_sample(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str], fault: Fault, problem: str
) -> None:
    fake_openai.replies[FAULTED_PROMPT] = fault  # type: ignore[assignment]
    result = pytester.runpytest(*live, "--tooleval-max-retries=1", "--tooleval-report=report.json")
    check_failed_as_malformed(result, read_report(pytester.path / "report.json"), problem)
    assert fake_openai.stats.by_prompt[f"History:\nuser: {FAULTED_PROMPT}?"] == 2  # retried once, as a glitch
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_under_xdist_the_malformed_reply_fails_and_every_report_takes_the_row(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str]
) -> None:
    """The hub answers, the answer crosses the run board to a worker: the same failure, the same row, and the
    JSON, Markdown and HTML reports and a merge of the report (its shard check) take it."""
    fault, problem = SHAPES["nameless-call"]
    fake_openai.replies[FAULTED_PROMPT] = fault  # type: ignore[assignment]
    result = pytester.runpytest_subprocess(
        *live,
        "-n",
        "2",
        "--tooleval-max-retries=1",
        "--tooleval-report=report.json",
        "--tooleval-markdown=report.md",
        "--tooleval-html=report.html",
    )
    check_failed_as_malformed(result, read_report(pytester.path / "report.json"), problem)
    assert "| normal_atom_bool | 2/2 | 0 | 0.500 |" in (pytester.path / "report.md").read_text(encoding="utf-8")
    assert 'data-figure="acebench.en.normal_atom_bool" data-series="current" data-current="0.500"' in (
        pytester.path / "report.html"
    ).read_text(encoding="utf-8")
    merged = pytester.run(sys.executable, "-m", "pytest_tooleval", "merge", "report.json", "-o", "merged.json")
    assert merged.ret in (0, 1), merged.stderr.str()  # 1: a test failed; never 4, a refused report
    joined = read_report(pytester.path / "merged.json")
    assert joined["summary"] == read_report(pytester.path / "report.json")["summary"]


def test_a_malformed_reply_that_heals_is_scored_and_one_that_stays_fails(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str]
) -> None:
    """One sample's first reply is malformed and its retry the right answer: it passes. The faulted sample gets
    a malformed reply every time: it fails."""
    asked: Counter[str] = Counter()

    def respond(body: dict[str, Any]) -> Any:
        question = last_user_message(body)
        asked[question] += 1
        if HEALED_PROMPT in question and asked[question] == 1:
            return Fault.content_not_text()
        if FAULTED_PROMPT in question:
            return Fault.nameless_call()
        return next(answer for key, answer in RIGHT.items() if key in question)

    fake_openai.responder = respond
    result = pytester.runpytest(*live, "--tooleval-max-retries=1", "--tooleval-report=report.json")
    check_failed_as_malformed(result, read_report(pytester.path / "report.json"), SHAPES["nameless-call"][1])
    assert fake_openai.stats.requests == MINI_SAMPLES + 2  # the healed one asked twice, the faulted one twice
    assert [asked[question] for question in asked if HEALED_PROMPT in question] == [2]
