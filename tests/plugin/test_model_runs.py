"""End-to-end runs against the fake OpenAI server: outcomes, summary, cache, retries, xdist, the gate."""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmark_modules import benchmark_source
from fake_openai import FakeOpenAI, Fault
from mini_acebench import CATEGORIES, RIGHT, UNVERIFIED, write_mini_acebench

THIN_TEST = benchmark_source("acebench")

KEY = "sk-test-0123456789abcdef"


@pytest.fixture
def run_args(pytester: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.delenv("TOOLEVAL_DATA_DIR", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    data = write_mini_acebench(pytester.path / "data")
    pytester.makepyfile(test_acebench=THIN_TEST)
    return [
        "--tooleval-model",
        "fake-model",
        "--tooleval-base-url",
        fake_openai.base_url,
        "--tooleval-api-key",
        KEY,
        f"--tooleval-data-dir={data}",
        UNVERIFIED,
        "--tooleval-categories",
        CATEGORIES,
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
        "-p",
        "no:cacheprovider",
    ]


def read_report(pytester: pytest.Pytester, name: str = "report.json") -> dict[str, Any]:
    report = json.loads((pytester.path / name).read_text())
    assert isinstance(report, dict)
    return report


def test_right_answers_pass_and_summary_is_printed(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, run_args: list[str]
) -> None:
    fake_openai.replies.update(RIGHT)
    result = pytester.runpytest(*run_args, "--tooleval-report", "report.json")
    result.assert_outcomes(passed=7)
    result.stdout.fnmatch_lines(["*tooleval summary*", "*normal_atom_bool*", "*partial*"])
    report = read_report(pytester)
    assert report["fingerprint"]["model"] == "fake-model"
    assert report["fingerprint"]["endpoint_host"] == "127.0.0.1"
    assert {sample["outcome"] for sample in report["samples"]} == {"passed"}
    assert len(report["samples"]) == 7
    assert fake_openai.stats.requests == 7
    system = fake_openai.stats.json_bodies[0]["messages"][0]
    assert system["role"] == "system" and "'name': 'get_weather'" in system["content"]  # Python repr, as upstream


def test_wrong_answer_fails_with_a_readable_message(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, run_args: list[str]
) -> None:
    fake_openai.replies.update(RIGHT)
    fake_openai.replies["weather in Oslo"] = "[get_weather(city='Bergen')]"
    result = pytester.runpytest(*run_args, "-k", "normal_atom_bool_0 or single_function")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*acebench en/normal_single_turn_single_function_0: value_error:string (scorer: official)",
            "*expected: [[]get_weather(city='Oslo')[]]",
            "*output:   [[]get_weather(city='Bergen')[]]",
        ]
    )


def test_retries_exhausted_is_an_error_not_a_failure(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, run_args: list[str]
) -> None:
    fake_openai.fault_rate, fake_openai.fault = 1.0, Fault.http(503)
    result = pytester.runpytest(
        *run_args,
        "-k",
        "normal_atom_bool_0 or irrelevant",
        "--tooleval-max-retries",
        "1",
        "--tooleval-report",
        "report.json",
    )
    result.assert_outcomes(errors=2)
    assert KEY not in result.stdout.str()
    report = read_report(pytester)
    assert [sample["outcome"] for sample in report["samples"]] == ["error", "error"]
    assert KEY not in json.dumps(report)


def test_429_then_success_is_scored(pytester: pytest.Pytester, fake_openai: FakeOpenAI, run_args: list[str]) -> None:
    fake_openai.replies.update(RIGHT)
    fake_openai.fail_first(2, Fault.rate_limit(retry_after=0))
    result = pytester.runpytest(*run_args, "-k", "special_irrelevant")
    result.assert_outcomes(passed=1)
    assert fake_openai.stats.requests == 3


def test_a_rerun_is_answered_from_the_cache(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, run_args: list[str]
) -> None:
    fake_openai.replies.update(RIGHT)
    pytester.runpytest(*run_args).assert_outcomes(passed=7)
    assert fake_openai.stats.requests == 7
    pytester.runpytest(*run_args, "--tooleval-cache=reuse").assert_outcomes(passed=7)
    assert fake_openai.stats.requests == 7
    pytester.runpytest(*run_args, "--tooleval-no-cache").assert_outcomes(passed=7)
    assert fake_openai.stats.requests == 14


def test_a_finished_runs_answers_are_reused_only_on_request(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, run_args: list[str]
) -> None:
    fake_openai.replies.update(RIGHT)
    pytester.runpytest(*run_args, "-k", "normal_atom_bool").assert_outcomes(passed=2)
    pytester.runpytest(*run_args, "--tooleval-cache=reuse").assert_outcomes(passed=7)
    assert fake_openai.stats.requests == 7  # the two of the first run were reused
    pytester.runpytest(*run_args).assert_outcomes(passed=7)
    assert fake_openai.stats.requests == 14  # by default a finished run's answers are not: each is asked again


def test_xdist_run_aggregates_on_the_controller(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, run_args: list[str]
) -> None:
    fake_openai.replies.update(RIGHT)
    fake_openai.replies["weather in Oslo"] = "[get_weather(city='Bergen')]"
    result = pytester.runpytest_subprocess(*run_args, "-n", "2", "--tooleval-report", "report.json")
    result.assert_outcomes(passed=6, failed=1)
    report = read_report(pytester)
    assert len(report["samples"]) == 7
    categories = report["summary"]["acebench"]["en"]["categories"]
    assert categories["normal_single_turn_single_function"]["accuracy"] == 0.0
    assert categories["normal_atom_bool"]["accuracy"] == 1.0
    result.stdout.fnmatch_lines(["*tooleval summary*"])


@pytest.mark.parametrize(("threshold", "expected_exit"), [("0.5", 0), ("0.9", 1)])
def test_gate_decides_the_exit_status(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, run_args: list[str], threshold: str, expected_exit: int
) -> None:
    fake_openai.replies.update(RIGHT)
    fake_openai.replies["weather in Oslo"] = "[get_weather(city='Bergen')]"
    result = pytester.runpytest(*run_args, "--tooleval-fail-under", f"normal_atom_bool=1.0,normal={threshold}")
    result.assert_outcomes(passed=6, failed=1)
    assert result.ret == expected_exit
    if expected_exit:
        result.stdout.fnmatch_lines(
            ["*tooleval gate: acebench.en.normal MISSED: 0.667 < 0.900 (short by 0.233)*", "*tooleval gate: FAILED*"]
        )
    else:
        result.stdout.fnmatch_lines(["*tooleval gate: PASSED*"])


def test_gate_fails_on_too_many_errors(pytester: pytest.Pytester, fake_openai: FakeOpenAI, run_args: list[str]) -> None:
    fake_openai.replies.update(RIGHT)
    fake_openai.replies["weather in Oslo"] = Fault.http(400)  # type: ignore[assignment]
    result = pytester.runpytest(*run_args, "--tooleval-fail-under", "special=0.5")
    result.assert_outcomes(passed=6, errors=1)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*tooleval gate: error rate MISSED: 0.143 > 0.020*"])


DEEPSEEK_CASES = {
    # acebench-scoring §2.3: what follows the first </think>, stripped
    "think-then-answer": ("<think>maybe [get_weather(city='Rome')]</think>\n [get_weather(city='Paris')] \n", "passed"),
    "no-think-end": ("[get_weather(city='Paris')]", "error"),
}


@pytest.mark.parametrize(("reply", "outcome"), DEEPSEEK_CASES.values(), ids=DEEPSEEK_CASES.keys())
def test_a_deepseek_r1_answer_is_cut_after_its_think_block(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, run_args: list[str], reply: str, outcome: str
) -> None:
    fake_openai.replies["weather in Paris"] = reply
    pytester.runpytest(
        *run_args, "--tooleval-model=deepseek-r1-distill-qwen", "-k", "bool_0", "--tooleval-report=report.json"
    )
    [sample] = read_report(pytester)["samples"]
    assert sample["outcome"] == outcome
    if outcome == "error":
        assert "a deepseek-r1 answer without </think>" in sample["error"]
    pytester.runpytest(*run_args, "--tooleval-model=plain-model", "-k", "bool_0", "--tooleval-report=plain.json")
    [plain] = read_report(pytester, "plain.json")["samples"]
    assert plain["outcome"] == ("failed" if outcome == "passed" else "passed")  # no other model is cut


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ([], {"temperature": 0.0, "max_tokens": 1200}),  # the plugin's: greedy, no top_p
        (["--tooleval-sampling=upstream"], {"temperature": 0.7, "top_p": 1.0, "max_tokens": 1200}),  # generate.py's
        (
            ["--tooleval-sampling=upstream", "--tooleval-temperature=0.2"],
            {"temperature": 0.2, "top_p": 1.0, "max_tokens": 1200},
        ),  # explicit wins
    ],
    ids=["plugin", "upstream", "upstream-with-explicit-temperature"],
)
def test_the_sampling_preset_sends_acebenchs_own(
    pytester: pytest.Pytester,
    fake_openai: FakeOpenAI,
    run_args: list[str],
    extra: list[str],
    expected: dict[str, float],
) -> None:
    fake_openai.replies.update(RIGHT)
    pytester.runpytest(*run_args, *extra, "-k", "atom_bool", "--tooleval-report=report.json").assert_outcomes(passed=2)
    sent = [
        {key: body[key] for key in ("temperature", "top_p", "max_tokens") if key in body}
        for body in fake_openai.stats.json_bodies
    ]
    assert sent == [expected, expected]
    fingerprint = read_report(pytester)["fingerprint"]
    assert fingerprint["sampling"] == ("upstream" if extra else "plugin")
    assert bool(fingerprint["acebench"]["model_sampling"]) == bool(extra)
