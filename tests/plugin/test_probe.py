"""The endpoint probe: one small request per model role before any sample. A wrong model name stops the run at
once with one line; what the probe learns (a reasoning model's refused parameters) holds for the whole run."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from benchmark_modules import benchmark_source
from fake_openai import FakeOpenAI, Fault, ToolCalls
from mini_acebench import CATEGORIES, RIGHT, SAMPLES, UNVERIFIED, write_mini_acebench
from refused_runs import refused_line
from yaml_cases import TOOL_FILE


@pytest.fixture
def probed(pytester: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    for name in ("TOOLEVAL_DATA_DIR", "OPENAI_API_KEY", "TOOLEVAL_NO_PROBE"):
        monkeypatch.delenv(name, raising=False)
    fake_openai.replies.update(RIGHT)
    fake_openai.default = "ok"
    data = write_mini_acebench(pytester.path / "data")
    pytester.makepyfile(test_acebench=benchmark_source("acebench"))
    return [
        "--tooleval-model=gpt-x",
        f"--tooleval-base-url={fake_openai.base_url}",
        "--tooleval-api-key=sk-probe-12345678",
        f"--tooleval-data-dir={data}",
        UNVERIFIED,
        f"--tooleval-categories={CATEGORIES}",
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
        "-p",
        "no:cacheprovider",
        "--tooleval-report=report.json",
    ]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_a_wrong_model_name_stops_the_run_with_one_line(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, probed: list[str], workers: list[str]
) -> None:
    fake_openai.replies.clear()
    fake_openai.default = Fault.http(404, message="The model `gpt-x` does not exist or you do not have access to it.")  # type: ignore[assignment]
    line = refused_line(pytester.runpytest_subprocess(*probed, *workers))
    assert line.startswith("ERROR: tooleval: the endpoint probe failed for the model role: model 'gpt-x' at 127.0.0.1:")
    assert "HTTP 404: The model `gpt-x` does not exist" in line
    assert line.endswith("Check --tooleval-model, its base URL and API key (or skip the probe: --tooleval-no-probe)")
    assert fake_openai.stats.requests == 1  # the probe only: no sample was asked


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_the_probe_learns_what_a_reasoning_model_refuses_before_any_sample(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, probed: list[str], workers: list[str]
) -> None:
    fake_openai.reasoning_model = True
    result = pytester.runpytest_subprocess(*probed, *workers, "--tooleval-concurrency=4")
    result.assert_outcomes(passed=SAMPLES)
    probes = [body for body in fake_openai.stats.bodies if body and "single word: ok" in str(body["messages"])]
    assert len(probes) == 3  # refused for max_tokens, refused for temperature, answered
    assert fake_openai.stats.requests == SAMPLES + 3  # whatever the concurrency: no sample met a refusal
    fingerprint = json.loads((pytester.path / "report.json").read_text())["fingerprint"]
    profile = fingerprint["endpoint_profile"]["model"]
    assert profile["model"] == "gpt-x" and profile["adapted"] == {
        "max_tokens": "max_completion_tokens",
        "temperature": "left out",
    }
    assert (profile["served_by"], profile["system_fingerprint"]) == ("gpt-x", "fp_fake_0001")  # as the server said


def test_no_probe_skips_it(pytester: pytest.Pytester, fake_openai: FakeOpenAI, probed: list[str]) -> None:
    pytester.runpytest_subprocess(*probed, "--tooleval-no-probe").assert_outcomes(passed=SAMPLES)
    assert fake_openai.stats.requests == SAMPLES
    assert json.loads((pytester.path / "report.json").read_text())["fingerprint"]["endpoint_profile"] is None


def _two_roles(pytester: pytest.Pytester, fake_openai: FakeOpenAI, data_root: Path) -> list[str]:
    """A live run of one agent_multi_turn sample with the model and the user as two roles."""
    pytester.makepyfile(test_acebench=benchmark_source("acebench"))
    return [
        f"--tooleval-data-dir={data_root}",
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
        "-p",
        "no:cacheprovider",
        "--tooleval-model=agent-m",
        "--tooleval-user-model=user-m",
        f"--tooleval-base-url={fake_openai.base_url}",
        "--tooleval-api-key=sk-probe-12345678",
        "-k",
        "en-agent_multi_turn_0",
        "--tooleval-report=report.json",
    ]


def test_under_xdist_every_role_of_the_collected_suites_is_probed(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, data_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hub probes after it loaded the suites of the collected tests: the user model of agent_multi_turn is
    in the access (probing first once left it out, and every multi_turn sample errored for want of a user)."""
    monkeypatch.delenv("TOOLEVAL_NO_PROBE", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    fake_openai.default = "finish conversation"
    result = pytester.runpytest_subprocess(*_two_roles(pytester, fake_openai, data_root), "-n", "2")
    result.assert_outcomes(failed=1)  # scored (the scripted agent does nothing), not an error
    profile = json.loads((pytester.path / "report.json").read_text())["fingerprint"]["endpoint_profile"]
    assert {role: entry["model"] for role, entry in profile.items()} == {"model": "agent-m", "user": "user-m"}


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_the_roles_probes_go_out_at_once(
    pytester: pytest.Pytester,
    fake_openai: FakeOpenAI,
    data_root: Path,
    monkeypatch: pytest.MonkeyPatch,
    workers: list[str],
) -> None:
    """Two roles wait one probe round trip, not two: both probes are in flight at once."""
    monkeypatch.delenv("TOOLEVAL_NO_PROBE", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    fake_openai.default = "finish conversation"
    fake_openai.latency_s = 1.0
    result = pytester.runpytest_subprocess(*_two_roles(pytester, fake_openai, data_root), *workers)
    result.assert_outcomes(failed=1)
    probes = [r for r in fake_openai.stats.received if "Reply with the single word: ok" in json.dumps(r.body)]
    assert sorted(str((r.body or {}).get("model")) for r in probes) == ["agent-m", "user-m"]
    # the one sample's dialogue asks one request at a time: only probes sent together are ever in flight at once
    assert fake_openai.stats.peak_in_flight == 2


def test_when_every_role_fails_the_model_roles_failure_is_named(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, data_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOOLEVAL_NO_PROBE", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    fake_openai.default = Fault.http(404, message="No such model.")  # type: ignore[assignment]
    line = refused_line(pytester.runpytest_subprocess(*_two_roles(pytester, fake_openai, data_root)))
    assert line.startswith("ERROR: tooleval: the endpoint probe failed for the model role: model 'agent-m' at ")
    assert fake_openai.stats.requests == 2  # the two probes, no sample


def test_a_probe_answered_with_no_usable_completion_stops_the_run_naming_it(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, probed: list[str]
) -> None:
    """A server whose every reply is malformed (whole JSON, no completion): the probe says so, and points at what
    serves the model rather than at the key."""
    fake_openai.replies.clear()
    fake_openai.default = Fault.empty_choices()  # type: ignore[assignment]
    result = pytester.runpytest_subprocess(*probed, "--tooleval-max-retries=1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.strip()]
    assert errors == [
        f"ERROR: tooleval: the endpoint probe failed for the model role: model 'gpt-x' at "
        f"127.0.0.1:{fake_openai.port}/v1: malformed reply: the response has no choices (asked 2 "
        "times): check what serves the model (its chat template, its tool-call parser), or skip the "
        "probe (--tooleval-no-probe)"
    ], result.stderr.str()
    assert fake_openai.stats.requests == 2  # the probe and its retry: no sample was asked


# -- tools that never reach the model (issue 41) -------------------------------------------------------------


def a_call_or_words(body: dict[str, Any]) -> str | ToolCalls:
    """What a tool-calling model answers: a call of the function offered, or words where none fits."""
    text = json.dumps(body["messages"])
    if "tools" in body and "echo function" in text:
        return ToolCalls.of(("echo", {"word": "ok"}))
    if "tools" in body and "weather in Paris" in text:
        return ToolCalls.of(("get_weather", {"city": "Paris"}))
    return "You are welcome." if "Thank you" in text else "ok"


@pytest.fixture
def desk(pytester: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A YAML file of two cases without `system:` (as BFCL's questions have none), against a server that renders
    tools only into a system message, as llama-cpp-python's chatml-function-calling does."""
    for name in ("TOOLEVAL_DATA_DIR", "OPENAI_API_KEY", "TOOLEVAL_NO_PROBE"):
        monkeypatch.delenv(name, raising=False)
    fake_openai.responder = a_call_or_words
    fake_openai.tools_need_system = True
    pytester.path.joinpath("desk.tooleval.yaml").write_text(TOOL_FILE.format(system=""), encoding="utf-8")
    return [
        "--tooleval-model=local",
        f"--tooleval-base-url={fake_openai.base_url}",
        "--tooleval-api-key=sk-probe-12345678",
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
        "-p",
        "no:cacheprovider",
        "--tooleval-report=report.json",
    ]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_tools_that_never_reach_the_prompt_stop_an_fc_run_with_one_line(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, desk: list[str], workers: list[str]
) -> None:
    """The model calls the probe's function all the same (that server's grammar lets it name one it never saw):
    only the prompt tokens show the tool was not there."""
    line = refused_line(pytester.runpytest_subprocess(*desk, "--tooleval-mode=fc", *workers))
    assert line.startswith(
        "ERROR: tooleval: the endpoint probe found that the tools never reach model "
        f"'local' at 127.0.0.1:{fake_openai.port}/v1: a request offering one tool (without a "
        "system message, as BFCL's questions and YAML files without `system:` ask) used 9 "
        "prompt tokens, the same request without it 8, so every sample would be scored "
        "without its functions; "
    ), line
    for fix in (
        "--tooleval-tools-system empty",
        "another --chat_format",
        "llama-server --jinja",
        "a YAML file's `system:`",
        "or use --tooleval-mode prompt (or skip the probe: --tooleval-no-probe)",
    ):
        assert fix in line
    probe, twin = [body for body in fake_openai.stats.bodies if body]  # the probe and its twin: no sample asked
    assert [message["role"] for message in probe["messages"]] == ["user"] and probe["tools"]
    assert twin["messages"] == probe["messages"] and "tools" not in twin and twin["max_tokens"] == 1


def test_the_text_protocol_is_not_held_up_by_a_server_that_drops_tools(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, desk: list[str]
) -> None:
    result = pytester.runpytest_subprocess(*desk, "--tooleval-mode=prompt")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # words where calls were asked for: scored, not stopped
    result.assert_outcomes(passed=1, failed=1)
    probe = fake_openai.stats.bodies[0]
    assert probe is not None and "tools" not in probe
    assert fake_openai.stats.requests == 1 + 2  # the probe offers no tool, so it has no twin


def test_a_system_message_brings_the_tools_to_the_prompt_and_the_run_goes_on(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, desk: list[str]
) -> None:
    """Every request with tools has a system message (the file's `system:`, as ACEBench's prompts): the probe
    asks with one too, and there the tools reach the prompt."""
    pytester.path.joinpath("desk.tooleval.yaml").write_text(
        TOOL_FILE.format(system="system: You help with the weather.\n"), encoding="utf-8"
    )
    result = pytester.runpytest_subprocess(*desk, "--tooleval-mode=fc")
    result.assert_outcomes(passed=2)
    probe, twin = fake_openai.stats.bodies[:2]
    assert probe is not None and [message["role"] for message in probe["messages"]] == ["system", "user"]
    assert twin is not None and "tools" not in twin
    assert fake_openai.stats.requests == 2 + 2


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_an_empty_system_message_on_request_brings_the_tools_and_is_recorded(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, desk: list[str], workers: list[str]
) -> None:
    """--tooleval-tools-system empty: the probe and every request that offers tools without a system message
    get an empty one first; nothing else changes, and every output says the requests were not the benchmark's."""
    result = pytester.runpytest_subprocess(
        *desk,
        "--tooleval-mode=both",
        "--tooleval-tools-system=empty",
        "--tooleval-markdown=report.md",
        "--tooleval-html=report.html",
        *workers,
    )
    result.assert_outcomes(passed=3, failed=1)  # fc: both pass; prompt: words where a call was asked for
    bodies = [body for body in fake_openai.stats.bodies if body]
    assert len(bodies) == 2 + 4  # the probe, its twin and the four samples
    probe, twin = bodies[:2]
    assert probe["messages"][0] == {"role": "system", "content": ""} and probe["tools"]
    assert twin["messages"] == probe["messages"] and "tools" not in twin
    empty = {"role": "system", "content": ""}
    offered = [body for body in bodies[2:] if "tools" in body]
    assert len(offered) == 2, bodies
    for body in offered:
        assert body["messages"][0] == empty and [message["role"] for message in body["messages"]] == ["system", "user"]
    # only requests that offer tools get it: the prompt protocol's (functions in a system message of their own)
    # are sent as the file makes them
    assert all(empty not in body["messages"] for body in bodies[2:] if "tools" not in body)
    result.stdout.fnmatch_lines(
        [
            "*tooleval: --tooleval-tools-system empty: requests that offer tools without a "
            "system message were sent with an empty one (not the benchmark's request)*"
        ]
    )
    fingerprint = json.loads((pytester.path / "report.json").read_text())["fingerprint"]
    assert fingerprint["tools_system"] == "empty"
    assert "tools system message empty" in (pytester.path / "report.md").read_text()
    assert "tools system message" in (pytester.path / "report.html").read_text()


def test_the_default_sends_no_system_message_and_records_none(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, desk: list[str]
) -> None:
    fake_openai.tools_need_system = False
    result = pytester.runpytest_subprocess(*desk, "--tooleval-mode=fc")
    result.assert_outcomes(passed=2)
    assert all(message["role"] != "system" for body in fake_openai.stats.bodies if body for message in body["messages"])
    assert "tools_system" not in json.loads((pytester.path / "report.json").read_text())["fingerprint"]
    assert "--tooleval-tools-system" not in result.stdout.str()


def test_a_server_that_renders_tools_passes_the_probe(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, desk: list[str]
) -> None:
    fake_openai.tools_need_system = False
    result = pytester.runpytest_subprocess(*desk, "--tooleval-mode=fc")
    result.assert_outcomes(passed=2)
    assert fake_openai.stats.requests == 2 + 2  # the probe, its twin and the two cases
    assert json.loads((pytester.path / "report.json").read_text())["fingerprint"]["endpoint_profile"]["model"]


def test_without_usage_the_check_is_not_made(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, desk: list[str]
) -> None:
    """A server that reports no prompt tokens: nothing to compare, nothing said, no twin asked."""
    fake_openai.usage = {}
    result = pytester.runpytest_subprocess(*desk, "--tooleval-mode=fc")
    result.assert_outcomes(passed=2)  # the calls the model names without seeing the tools pass all the same
    assert fake_openai.stats.requests == 1 + 2


def test_bfcl_in_fc_mode_is_probed_without_a_system_message(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, desk: list[str], bfcl_dir: Path
) -> None:
    """BFCL's questions have no system message, and upstream sends none: the probe asks the same way and stops
    the run, rather than adding one to the samples."""
    wheel = os.environ.get("TOOLEVAL_BFCL_WHEEL")
    if not wheel:
        pytest.skip(
            "needs the upstream bfcl-eval 2026.3.23 wheel for its request texts: set TOOLEVAL_BFCL_WHEEL "
            "(pip download --no-deps bfcl-eval==2026.3.23)"
        )
    pytester.path.joinpath("desk.tooleval.yaml").unlink()
    pytester.makepyfile(test_bfcl=benchmark_source("bfcl"))
    result = pytester.runpytest_subprocess(
        *desk,
        f"--tooleval-data-dir={bfcl_dir}",
        f"--tooleval-bfcl-wheel={wheel}",
        "--tooleval-offline",
        "--tooleval-mode=fc",
        "-k",
        "simple_python_0",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    [line] = [line for line in result.stderr.lines if line.strip()]
    assert "the tools never reach model 'local'" in line and "--tooleval-mode prompt" in line
    assert fake_openai.stats.requests == 2
