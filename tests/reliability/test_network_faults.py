"""Network faults through the whole plugin: retried faults end scored, permanent ones end as errors naming
the cause, and neither is ever counted as a model answer (infra tests cover the backend's classify table). A
reply whose JSON is whole but no completion, every time, is the model's answer: test_malformed_replies.py."""

from __future__ import annotations

import fnmatch

import pytest
from _reliability import error_section, read_report

from fake_openai import FakeOpenAI, Fault
from mini_acebench import SAMPLES as MINI_SAMPLES

# Faults a retry cures. Each hits the first two requests of the run (two different samples, both asked at once
# by the work-ahead pool); their retries are answered normally.
TRANSIENT = {
    "429": Fault.rate_limit(),
    "429-retry-after": Fault.rate_limit(retry_after=0.2),
    "500": Fault.http(500),
    "502": Fault.http(502),
    "503": Fault.http(503),
    "reset": Fault.reset(),
    "timeout": Fault.delay(2),
    "trickling-body": Fault.trickle(0.2),  # every read within the timeout, the whole body a minute
    "malformed-json": Fault.malformed_json(),
    "empty-choices": Fault.empty_choices(),
    "invalid-utf8": Fault.invalid_utf8(),
    "nameless-call": Fault.nameless_call(),
    "content-not-text": Fault.content_not_text(),
    "tool-calls-an-object": Fault.tool_calls_object(),
    "error-in-a-200-body": Fault.error_in_body(),
}

NOT_RETRIED = "(not retried: only 408, 409, 429, 5xx, timeouts, connection errors and malformed responses are)"
GAVE_UP = "gave up after 2 attempts; last error: "

# Faults that hit every request of one sample (normal_single_turn_single_function_0), with the end of its error line
# (an fnmatch pattern) and how many requests that sample may cost at --tooleval-max-retries=1.
PERMANENT = {
    "400": (Fault.http(400), f"HTTP 400: Simulated HTTP 400 {NOT_RETRIED}", 1),
    "401-echoing-the-key": (
        Fault.echo_auth(),
        "HTTP 401: Incorrect API key provided: Bearer [*][*][*]. You can find "
        f"your API key in your account settings. {NOT_RETRIED}",
        1,
    ),  # *** is the masked key
    "403": (Fault.http(403), f"HTTP 403: Simulated HTTP 403 {NOT_RETRIED}", 1),
    "404": (Fault.http(404), f"HTTP 404: Simulated HTTP 404 {NOT_RETRIED}", 1),
    "422": (Fault.http(422), f"HTTP 422: Simulated HTTP 422 {NOT_RETRIED}", 1),
    "503-forever": (Fault.http(503), f"{GAVE_UP}HTTP 503: Simulated HTTP 503", 2),
    "429-forever": (
        Fault.rate_limit(retry_after=0),
        "gave up after 5 attempts; last error: HTTP 429: Rate limit reached for requests",
        5,
    ),  # a rate limit gets four times the retries
    "reset-forever": (Fault.reset(), f"{GAVE_UP}connection error (*)", 2),
    "timeout-forever": (Fault.delay(2), f"{GAVE_UP}the request timed out (timeout 0.5 s per attempt)", 2),
    "trickling-body-forever": (Fault.trickle(0.2), f"{GAVE_UP}the request timed out (timeout 0.5 s per attempt)", 2),
    # a body cut off, or not UTF-8, never arrived whole: the transport's fault, not an answer
    "malformed-forever": (Fault.malformed_json(), f"{GAVE_UP}malformed response body (JSONDecodeError: *", 2),
    "invalid-utf8-forever": (Fault.invalid_utf8(), f"{GAVE_UP}malformed response body (UnicodeDecodeError: *", 2),
    # an error sent with a 200 (OpenRouter's way with a provider's failure) is the server's, not an answer
    "error-in-a-200-body-forever": (
        Fault.error_in_body("Provider returned error", 502),
        f"{GAVE_UP}HTTP 200 with an error instead of an answer: Provider returned error (code 502)",
        2,
    ),
    # issue 40: JSON the decoder gives up on never arrived readable: the transport's fault, as a body cut off
    "nested-too-deeply-forever": (
        Fault.raw(b'{"choices": [{"message": {"content": "x"}}], "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"),
        f"{GAVE_UP}malformed response body (the body holds lists and objects nested too deeply to read)",
        2,
    ),
    "integer-too-long-forever": (
        Fault.raw(b'{"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": ' + b"1" * 5_000 + b"}}"),
        f"{GAVE_UP}malformed response body (the body holds an integer of more than 4,300 "
        "digits, longer than Python reads)",
        2,
    ),
}
FAULTED_PROMPT = "weather in Oslo"
FAULTED_ID = "normal_single_turn_single_function_0"


@pytest.mark.parametrize("fault", TRANSIENT.values(), ids=TRANSIENT.keys())
def test_a_transient_fault_is_retried_and_the_sample_scored(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str], fault: Fault
) -> None:
    fake_openai.fail_first(2, fault)
    result = pytester.runpytest(*live, "--tooleval-timeout=0.5", "--tooleval-report=report.json")
    result.assert_outcomes(passed=MINI_SAMPLES)  # every answer is right: a fault scored as one would fail
    samples = read_report(pytester.path / "report.json")["samples"]
    assert [s["outcome"] for s in samples] == ["passed"] * MINI_SAMPLES
    assert fake_openai.stats.requests == MINI_SAMPLES + 2
    assert sorted(fake_openai.stats.by_prompt.values()) == [1] * (MINI_SAMPLES - 2) + [2, 2]


@pytest.mark.parametrize(("fault", "cause", "asked"), PERMANENT.values(), ids=PERMANENT.keys())
def test_a_permanent_fault_errors_its_test_naming_the_cause(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str], fault: Fault, cause: str, asked: int
) -> None:
    fake_openai.replies[FAULTED_PROMPT] = fault  # type: ignore[assignment]
    result = pytester.runpytest(
        *live, "--tooleval-timeout=0.5", "--tooleval-max-retries=1", "--tooleval-report=report.json", "-rE"
    )
    result.assert_outcomes(passed=MINI_SAMPLES - 1, errors=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            f"*acebench: {MINI_SAMPLES - 1}/{MINI_SAMPLES} scored, {MINI_SAMPLES - 1} passed, 0 failed, 1 error*",
        ]
    )
    [line] = error_section(result.stdout.str(), FAULTED_ID)  # one line, no traceback, no exception chain
    where = f"model 'fake-model' at 127.0.0.1:{fake_openai.port}/v1"
    assert fnmatch.fnmatchcase(line, f"InfrastructureError: {where}: {cause}")
    report = read_report(pytester.path / "report.json")
    errored = [s for s in report["samples"] if s["outcome"] != "passed"]
    assert [(s["id"], s["outcome"], s["valid"], s.get("fixed_valid")) for s in errored] == [
        (FAULTED_ID, "error", None, None)
    ]
    assert fnmatch.fnmatchcase(errored[0]["error"], f"InfrastructureError: model 'fake-model' at *: {cause}")
    category = report["summary"]["acebench"]["en"]["categories"]["normal_single_turn_single_function"]
    assert (category["scored"], category["errors"], category["accuracy"]) == (0, 1, None)
    assert fake_openai.stats.by_prompt[f"History:\nuser: {FAULTED_PROMPT}?"] == asked


def test_without_work_ahead_faults_end_the_same_way(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str]
) -> None:
    """--tooleval-concurrency=0 asks inside each test instead of ahead of it: same retries, same errors."""
    fake_openai.fail_first(1, Fault.reset())
    fake_openai.replies[FAULTED_PROMPT] = Fault.http(404)  # type: ignore[assignment]
    result = pytester.runpytest(*live, "--tooleval-concurrency=0")
    result.assert_outcomes(passed=MINI_SAMPLES - 1, errors=1)
    [line] = error_section(result.stdout.str(), FAULTED_ID)
    assert fnmatch.fnmatchcase(line, f"InfrastructureError: model 'fake-model' at *: {PERMANENT['404'][1]}")
    assert fake_openai.stats.requests == MINI_SAMPLES + 1  # the reset was retried, the 404 was not


def test_null_content_is_the_model_answering_nothing(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str]
) -> None:
    """`content: null` (a refusal, or a reasoning model that spent its tokens) is well-formed: it is scored,
    as upstream's runner scores the None it records, and asking again at temperature 0 would not change it."""
    fake_openai.replies[FAULTED_PROMPT] = Fault.null_content()  # type: ignore[assignment]
    result = pytester.runpytest(*live, "--tooleval-report=report.json")
    result.assert_outcomes(passed=MINI_SAMPLES - 1, failed=1)
    result.stdout.fnmatch_lines([f"*{FAULTED_ID}: wrong_output_format (scorer: official)", "*output:   "])
    [sample] = [s for s in read_report(pytester.path / "report.json")["samples"] if s["outcome"] != "passed"]
    assert (sample["outcome"], sample["valid"], sample["output"]) == ("failed", False, "")
    assert fake_openai.stats.requests == MINI_SAMPLES


TOKEN_CEILING = 2**53  # a count at or past it is no count (past it, a JSON number loses digits)


@pytest.mark.parametrize(
    ("usage", "kept"),
    [
        (
            {
                "prompt_tokens": -5,
                "completion_tokens": int("9" * 4_000),  # 4,000 digits: under Python's reading limit
                "completion_tokens_details": {"reasoning_tokens": -1},
            },
            {},
        ),
        (
            {
                "prompt_tokens": TOKEN_CEILING - 1,
                "completion_tokens": TOKEN_CEILING,
                "completion_tokens_details": {"reasoning_tokens": True},
            },
            {"prompt": TOKEN_CEILING - 1},
        ),
    ],
    ids=["negative-and-4000-digits", "at-the-ceiling"],
)
def test_token_counts_that_are_no_counts_are_left_out(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str], usage: dict[str, object], kept: dict[str, int]
) -> None:
    """Issue 40: a usage whose counts are negative, or past 2**53, is read as saying nothing of them (as a usage
    without them): the answers are scored, and no report or total shows or adds those counts."""
    fake_openai.usage = usage
    result = pytester.runpytest(*live, "--tooleval-report=report.json")
    result.assert_outcomes(passed=MINI_SAMPLES)
    samples = read_report(pytester.path / "report.json")["samples"]
    assert [sample["tokens"] for sample in samples] == [kept] * MINI_SAMPLES
    prompt = kept.get("prompt", 0) * MINI_SAMPLES
    result.stdout.fnmatch_lines([f"tooleval totals: * {prompt:,} prompt + 0 completion tokens*"])


# Why the answer (hex digits, no bracket) cannot be decoded: e6db74b's official decoder reads it whole, and stops at
# the length bound before parsing; 56dd66c's looks for its first outermost [...] first, and finds none
UNDECODABLE = {"56dd66c": "*no [[]...[]] in the answer*", "e6db74b": "*output longer than 100000 characters*"}


@pytest.mark.parametrize("revision", UNDECODABLE)
def test_a_one_megabyte_answer_is_scored_and_kept_short_in_reports(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str], revision: str
) -> None:
    fake_openai.replies[FAULTED_PROMPT] = Fault.huge(1_000_000)  # type: ignore[assignment]
    result = pytester.runpytest(
        *live, f"--tooleval-acebench-revision={revision}", "--tooleval-report=report.json", "--junitxml=junit.xml"
    )
    result.assert_outcomes(passed=MINI_SAMPLES - 1, failed=1)
    result.stdout.fnmatch_lines([UNDECODABLE[revision], "*... [[]998000 more characters[]]"])
    [sample] = [s for s in read_report(pytester.path / "report.json")["samples"] if s["outcome"] != "passed"]
    assert sample["error_type"] == "wrong_output_format"
    assert sample["output"] == Fault.huge_text(20_000) + "... [980000 more characters]"
    assert len(result.stdout.str()) < 100_000
    assert (pytester.path / "junit.xml").stat().st_size < 100_000


def test_mixed_faults_under_xdist_end_with_every_sample_scored(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str]
) -> None:
    faults = [*TRANSIENT.values()]
    fake_openai.enqueue(*faults[:MINI_SAMPLES])  # the first seven requests each get a different fault
    result = pytester.runpytest_subprocess(*live, "-n", "2", "--tooleval-timeout=0.5", "--tooleval-report=report.json")
    result.assert_outcomes(passed=MINI_SAMPLES)
    report = read_report(pytester.path / "report.json")
    assert len(report["samples"]) == MINI_SAMPLES
    assert report["summary"]["acebench"]["en"]["categories"]["normal_atom_bool"]["errors"] == 0
    assert fake_openai.stats.requests >= 2 * MINI_SAMPLES


@pytest.mark.parametrize(
    ("max_error_rate", "exit_status", "verdict"),
    [("0.2", pytest.ExitCode.OK, "ok"), ("0.1", pytest.ExitCode.TESTS_FAILED, "MISSED")],
)
def test_max_error_rate_decides_a_gated_run_with_errors(
    pytester: pytest.Pytester,
    fake_openai: FakeOpenAI,
    live: list[str],
    max_error_rate: str,
    exit_status: pytest.ExitCode,
    verdict: str,
) -> None:
    fake_openai.replies[FAULTED_PROMPT] = Fault.http(400)  # type: ignore[assignment]
    result = pytester.runpytest(
        *live,
        "--tooleval-fail-under=overall=0.5",
        f"--tooleval-max-error-rate={max_error_rate}",
        "--tooleval-report=report.json",
    )
    result.assert_outcomes(passed=MINI_SAMPLES - 1, errors=1)
    assert result.ret == exit_status
    line = (
        f"tooleval gate: error rate 0.143 <= {float(max_error_rate):.3f} ok"
        if verdict == "ok"
        else f"tooleval gate: error rate MISSED: 0.143 > {float(max_error_rate):.3f} (1 "
        "normal_single_turn_single_function: InfrastructureError: * HTTP 400*)"
    )
    result.stdout.fnmatch_lines([line])
    gate = read_report(pytester.path / "report.json")["gate"]
    assert (gate["error_rate"], gate["max_error_rate"]) == (pytest.approx(1 / 7), float(max_error_rate))
    assert gate["passed"] is (exit_status == pytest.ExitCode.OK)
