"""The endpoint probe: one small request per model role before any sample. A wrong model name stops the run at
once with one line; what the probe learns (a reasoning model's refused parameters) holds for the whole run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from benchmark_modules import benchmark_source
from fake_openai import FakeOpenAI, Fault
from mini_acebench import CATEGORIES, RIGHT, SAMPLES, UNVERIFIED, write_mini_acebench


@pytest.fixture
def probed(pytester: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    for name in ("TOOLEVAL_DATA_DIR", "OPENAI_API_KEY", "TOOLEVAL_NO_PROBE"):
        monkeypatch.delenv(name, raising=False)
    fake_openai.replies.update(RIGHT)
    fake_openai.default = "ok"
    data = write_mini_acebench(pytester.path / "data")
    pytester.makepyfile(test_acebench=benchmark_source("acebench"))
    return ["--tooleval-model=gpt-x", f"--tooleval-base-url={fake_openai.base_url}",
            "--tooleval-api-key=sk-probe-12345678", f"--tooleval-data-dir={data}", UNVERIFIED,
            f"--tooleval-categories={CATEGORIES}", f"--tooleval-cache-dir={pytester.path / 'cache'}", "-p",
            "no:cacheprovider", "--tooleval-report=report.json"]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_a_wrong_model_name_stops_the_run_with_one_line(pytester: pytest.Pytester, fake_openai: FakeOpenAI,
                                                         probed: list[str], workers: list[str]) -> None:
    fake_openai.replies.clear()
    fake_openai.default = Fault.http(404, message="The model `gpt-x` does not exist or you do not have access to "
                                                  "it.")  # type: ignore[assignment]
    result = pytester.runpytest_subprocess(*probed, *workers)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    # stopped before any test ran (under xdist, before any worker started: pytest prints no summary line then)
    assert not re.search(r"\d+ (passed|failed|errors?)\b", result.stdout.str()), result.stdout.str()
    errors = [line for line in result.stderr.lines if line.strip()]
    assert len(errors) == 1, result.stderr.str()
    assert errors[0].startswith("ERROR: tooleval: the endpoint probe failed for the model role: model 'gpt-x' at "
                                "127.0.0.1:")
    assert "HTTP 404: The model `gpt-x` does not exist" in errors[0]
    assert errors[0].endswith("Check --tooleval-model, its base URL and API key (or skip the probe: "
                              "--tooleval-no-probe)")
    assert fake_openai.stats.requests == 1  # the probe only: no sample was asked


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_the_probe_learns_what_a_reasoning_model_refuses_before_any_sample(
        pytester: pytest.Pytester, fake_openai: FakeOpenAI, probed: list[str], workers: list[str]) -> None:
    fake_openai.reasoning_model = True
    result = pytester.runpytest_subprocess(*probed, *workers, "--tooleval-concurrency=4")
    result.assert_outcomes(passed=SAMPLES)
    probes = [body for body in fake_openai.stats.bodies if body and "single word: ok" in str(body["messages"])]
    assert len(probes) == 3  # refused for max_tokens, refused for temperature, answered
    assert fake_openai.stats.requests == SAMPLES + 3  # whatever the concurrency: no sample met a refusal
    fingerprint = json.loads((pytester.path / "report.json").read_text())["fingerprint"]
    profile = fingerprint["endpoint_profile"]["model"]
    assert profile["model"] == "gpt-x" and profile["adapted"] == {"max_tokens": "max_completion_tokens",
                                                                  "temperature": "left out"}
    assert (profile["served_by"], profile["system_fingerprint"]) == ("gpt-x", "fp_fake_0001")  # as the server said


def test_no_probe_skips_it(pytester: pytest.Pytester, fake_openai: FakeOpenAI, probed: list[str]) -> None:
    pytester.runpytest_subprocess(*probed, "--tooleval-no-probe").assert_outcomes(passed=SAMPLES)
    assert fake_openai.stats.requests == SAMPLES
    assert json.loads((pytester.path / "report.json").read_text())["fingerprint"]["endpoint_profile"] is None


def test_under_xdist_every_role_of_the_collected_suites_is_probed(pytester: pytest.Pytester, fake_openai: FakeOpenAI,
                                                                   data_root: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The hub probes after it loaded the suites of the collected tests: the user model of agent_multi_turn is
    in the access (probing first once left it out, and every multi_turn sample errored for want of a user)."""
    monkeypatch.delenv("TOOLEVAL_NO_PROBE", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    fake_openai.default = "finish conversation"
    pytester.makepyfile(test_acebench=benchmark_source("acebench"))
    result = pytester.runpytest_subprocess(
        f"--tooleval-data-dir={data_root}", f"--tooleval-cache-dir={pytester.path / 'cache'}", "-p",
        "no:cacheprovider", "--tooleval-model=agent-m", "--tooleval-user-model=user-m",
        f"--tooleval-base-url={fake_openai.base_url}", "--tooleval-api-key=sk-probe-12345678", "-n", "2",
        "-k", "en-agent_multi_turn_0", "--tooleval-report=report.json")
    result.assert_outcomes(failed=1)  # scored (the scripted agent does nothing), not an error
    profile = json.loads((pytester.path / "report.json").read_text())["fingerprint"]["endpoint_profile"]
    assert {role: entry["model"] for role, entry in profile.items()} == {"model": "agent-m", "user": "user-m"}


def test_a_probe_answered_with_no_usable_completion_stops_the_run_naming_it(
        pytester: pytest.Pytester, fake_openai: FakeOpenAI, probed: list[str]) -> None:
    """A server whose every reply is malformed (whole JSON, no completion): the probe says so, and points at what
    serves the model rather than at the key."""
    fake_openai.replies.clear()
    fake_openai.default = Fault.empty_choices()  # type: ignore[assignment]
    result = pytester.runpytest_subprocess(*probed, "--tooleval-max-retries=1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.strip()]
    assert errors == [f"ERROR: tooleval: the endpoint probe failed for the model role: model 'gpt-x' at "
                      f"127.0.0.1:{fake_openai.port}/v1: malformed reply: the response has no choices (asked 2 "
                      "times): check what serves the model (its chat template, its tool-call parser), or skip the "
                      "probe (--tooleval-no-probe)"], result.stderr.str()
    assert fake_openai.stats.requests == 2  # the probe and its retry: no sample was asked
