"""Agent samples end to end: live rollouts against the fake server, the turn limit, no user model, replay, oracle."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from benchmark_modules import benchmark_source
from fake_openai import FakeOpenAI, Fault
from upstream_data import recorded

THIN_TEST = benchmark_source("acebench")


@pytest.fixture
def gold(acebench_56dd66c_dir: Path) -> dict[str, Any]:
    """The gold sequences of the default revision, which the runs below read (the data root's acebench-56dd66c/)."""
    sequences = json.loads(recorded(acebench_56dd66c_dir, "agent_gold_sequences.json").read_text(encoding="utf-8"))
    assert isinstance(sequences, dict)
    return sequences


@pytest.fixture
def base_args(pytester: pytest.Pytester, data_root: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    pytester.makepyfile(test_acebench=THIN_TEST)
    return [
        f"--tooleval-data-dir={data_root}",
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
        "-p",
        "no:cacheprovider",
        "--tooleval-report",
        "report.json",
    ]


def live_args(server: FakeOpenAI, *extra: str) -> list[str]:
    return ["--tooleval-model", "agent-m", "--tooleval-base-url", server.base_url, "--tooleval-api-key", "sk-x", *extra]


def scripted_by_model(agent_replies: list[str], user_replies: list[str]) -> Any:
    """A responder: the agent model gets agent_replies in order, the user model user_replies; then 'finish'."""
    served: dict[str, int] = defaultdict(int)

    def respond(body: dict[str, Any]) -> str:
        replies = agent_replies if body["model"] == "agent-m" else user_replies
        index = served[body["model"]]
        served[body["model"]] += 1
        return replies[index] if index < len(replies) else "finish conversation"

    return respond


def report_sample(pytester: pytest.Pytester) -> dict[str, Any]:
    samples: list[dict[str, Any]] = json.loads((pytester.path / "report.json").read_text())["samples"]
    assert len(samples) == 1
    return samples[0]


def test_scripted_agent_and_user_complete_multi_turn(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, base_args: list[str], gold: dict[str, Any]
) -> None:
    calls = gold["en"]["agent_multi_turn_0"]["calls"]
    fake_openai.responder = scripted_by_model(calls, ["Please message Frank for me."])
    result = pytester.runpytest(
        *base_args, *live_args(fake_openai, "--tooleval-user-model", "user-m"), "-k", "en-agent_multi_turn_0"
    )
    result.assert_outcomes(passed=1)
    sample = report_sample(pytester)
    assert sample["process"] == 1.0
    senders = [entry["sender"] for entry in sample["transcript"]]
    assert senders[0] == "user" and "execution" in senders
    assert sample["transcript"][0]["message"] == "Please message Frank for me."
    models = [body["model"] for body in fake_openai.stats.json_bodies]
    assert models.count("agent-m") == len(calls) + 1 and "user-m" in models
    user_system = next(body for body in fake_openai.stats.json_bodies if body["model"] == "user-m")["messages"][0]
    assert user_system["role"] == "system" and "Grace" in user_system["content"]  # the instruction is filled in


def test_rerun_of_a_rollout_is_answered_from_the_cache(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, base_args: list[str], gold: dict[str, Any]
) -> None:
    fake_openai.responder = scripted_by_model(gold["en"]["agent_multi_turn_0"]["calls"], ["Hello."])
    args = [*base_args, *live_args(fake_openai, "--tooleval-user-model", "user-m"), "-k", "en-agent_multi_turn_0"]
    pytester.runpytest(*args).assert_outcomes(passed=1)
    asked = fake_openai.stats.requests
    pytester.runpytest(*args, "--tooleval-cache=reuse").assert_outcomes(passed=1)  # a finished run: reused on request
    assert fake_openai.stats.requests == asked


def test_multi_turn_without_a_user_model_is_an_error(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, base_args: list[str]
) -> None:
    result = pytester.runpytest(*base_args, *live_args(fake_openai), "-k", "en-agent_multi_turn_0")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*agent_multi_turn needs a model to play the user: pass --tooleval-user-model*"])
    assert fake_openai.stats.requests == 0
    assert report_sample(pytester)["outcome"] == "error"


def test_turn_limit_ends_the_rollout_cleanly(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, base_args: list[str]
) -> None:
    fake_openai.default = "[turn_on_wifi()]"  # a valid call, forever
    result = pytester.runpytest(
        *base_args, *live_args(fake_openai, "--tooleval-max-dialog-turns", "6"), "-k", "en-agent_multi_step_6"
    )
    result.assert_outcomes(failed=1)
    sample = report_sample(pytester)
    assert sample["details"]["hit_turn_limit"] is True
    assert sample["details"]["turns"] == 6
    assert fake_openai.stats.requests == 3  # the turns alternate: agent, execution, agent, ...


def test_agent_that_never_calls_an_api_fails(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, base_args: list[str]
) -> None:
    fake_openai.default = "I would love to help, but first tell me more."
    result = pytester.runpytest(
        *base_args, *live_args(fake_openai, "--tooleval-max-dialog-turns", "4"), "-k", "en-agent_multi_step_6"
    )
    result.assert_outcomes(failed=1)
    sample = report_sample(pytester)
    assert sample["error_type"] == "wrong number of class"
    assert sample["process"] == 0.0
    result.stdout.fnmatch_lines(["*acebench en/agent_multi_step_6: wrong number of class*"])


def test_a_malformed_reply_mid_rollout_fails_the_sample_and_a_users_errors_it(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, base_args: list[str], gold: dict[str, Any]
) -> None:
    """The agent's second reply is malformed every time it is asked: that is its answer, and the sample fails
    (the rollout never ended: process 0). The user model's malformed reply is no answer of the model under
    test: the sample errors."""
    first_call = gold["en"]["agent_multi_turn_0"]["calls"][0]
    args = [
        *base_args,
        *live_args(fake_openai, "--tooleval-user-model", "user-m", "--tooleval-max-retries", "1"),
        "--tooleval-no-cache",
        "-k",
        "en-agent_multi_turn_0",
        "-rE",
    ]
    served: dict[str, int] = defaultdict(int)

    def agent_breaks(body: dict[str, Any]) -> Any:
        served[body["model"]] += 1
        if body["model"] == "user-m":
            return "Please message Frank for me."
        return Fault.content_not_text() if served["agent-m"] > 1 else first_call

    fake_openai.responder = agent_breaks
    result = pytester.runpytest(*args)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*acebench en/agent_multi_turn_0: malformed_reply (scorer: official)",
            "*  error:    malformed reply: the message content is a list, not text",
        ]
    )
    failed = report_sample(pytester)
    assert (failed["outcome"], failed["error_type"], failed["process"]) == ("failed", "malformed_reply", None)
    assert failed["tokens"]["prompt"] > 0 and failed["tokens"]["user_prompt"] > 0  # the rollout's replies so far
    assert served["agent-m"] == 3  # the first call, then the malformed reply and its retry
    category = json.loads((pytester.path / "report.json").read_text())["summary"]["acebench"]["en"]["categories"][
        "agent_multi_turn"
    ]
    assert (category["scored"], category["errors"], category["accuracy"], category["process_acc"]) == (1, 0, 0.0, 0.0)

    fake_openai.responder = lambda body: Fault.nameless_call() if body["model"] == "user-m" else first_call
    result = pytester.runpytest(*args)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*InfrastructureError: model 'user-m' at *: malformed reply: tool_calls[[]0] has no "
            "function name (asked 2 times); the user model's reply, so the sample cannot be "
            "scored*"
        ]
    )
    assert (report_sample(pytester)["outcome"], report_sample(pytester)["valid"]) == ("error", None)


def test_replayed_trajectory_is_graded(pytester: pytest.Pytester, base_args: list[str], gold: dict[str, Any]) -> None:
    rows = [
        {"lang": "en", "id": "agent_multi_step_6", "messages": gold["en"]["agent_multi_step_6"]["calls"]},
        {"lang": "en", "id": "agent_multi_step_7", "messages": ["[turn_on_wifi()]"]},
    ]
    replay = pytester.path / "trajectories.jsonl"
    replay.write_text("\n".join(json.dumps(row) for row in rows))
    result = pytester.runpytest(
        *base_args, "--tooleval-model", f"replay:{replay}", "-k", "en-agent_multi_step_6 or en-agent_multi_step_7"
    )
    result.assert_outcomes(passed=1, failed=1)


@pytest.mark.usefixtures("gold")  # the oracle plays the gold sequences the run reads from the data folder
def test_oracle_passes_every_agent_sample(pytester: pytest.Pytester, base_args: list[str]) -> None:
    result = pytester.runpytest_subprocess(
        *base_args, "--tooleval-model", "oracle", "--tooleval-language", "all", "-m", "agent", "-n", "2"
    )
    result.assert_outcomes(passed=100)
    summary = json.loads((pytester.path / "report.json").read_text())["summary"]["acebench"]
    for language in ("en", "zh"):
        assert summary[language]["groups"]["AGENT"]["value"] == 1.0
        assert summary[language]["partial"] is True  # only the agent family ran
    result.stdout.fnmatch_lines(["*AGENT (partial)*1.000*", "*OVERALL (partial)*1.000*"])


def test_an_o1_agent_is_asked_as_upstream_asks_it(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, base_args: list[str], gold: dict[str, Any]
) -> None:
    """acebench-agent §5.4: one user message, system and user prompt joined, no sampling."""
    calls = gold["en"]["agent_multi_turn_0"]["calls"]
    served: dict[str, int] = defaultdict(int)

    def respond(body: dict[str, Any]) -> str:
        replies = calls if body["model"] == "o1-mini" else ["Please message Frank for me."]
        index = served[body["model"]]
        served[body["model"]] += 1
        return replies[index] if index < len(replies) else "finish conversation"

    fake_openai.responder = respond
    args = [
        "--tooleval-model",
        "o1-mini",
        "--tooleval-base-url",
        fake_openai.base_url,
        "--tooleval-api-key",
        "sk-x",
        "--tooleval-user-model",
        "user-m",
    ]
    pytester.runpytest(*base_args, *args, "-k", "en-agent_multi_turn_0").assert_outcomes(passed=1)
    agent = [body for body in fake_openai.stats.bodies if body and body["model"] == "o1-mini"]
    user = [body for body in fake_openai.stats.bodies if body and body["model"] == "user-m"]
    assert agent and user
    for body in agent:
        [message] = body["messages"]
        assert message["role"] == "user" and "\n\n" in message["content"]
        assert not {"temperature", "top_p", "max_tokens"} & set(body)
    assert all(body["messages"][0]["role"] == "system" and "temperature" in body for body in user)  # unchanged


def test_the_upstream_sampling_preset_gives_the_agent_classes_own(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, base_args: list[str], gold: dict[str, Any]
) -> None:
    """acebench-agent §5.2: the agent classes sample at temperature 0.001, top_p 1, 1000 tokens."""
    calls = gold["en"]["agent_multi_step_0"]["calls"]
    fake_openai.responder = scripted_by_model(calls, [])
    result = pytester.runpytest(
        *base_args, *live_args(fake_openai, "--tooleval-sampling=upstream"), "-k", "en-agent_multi_step_0"
    )
    result.assert_outcomes(passed=1)
    agent = [body for body in fake_openai.stats.bodies if body and body["model"] == "agent-m"]
    assert agent and all(
        (body["temperature"], body["top_p"], body["max_tokens"]) == (0.001, 1.0, 1000) for body in agent
    )


def test_a_helper_role_takes_its_own_reasoning_effort(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, base_args: list[str], gold: dict[str, Any]
) -> None:
    calls = gold["en"]["agent_multi_turn_0"]["calls"]
    fake_openai.responder = scripted_by_model(calls, ["Please message Frank for me."])
    result = pytester.runpytest(
        *base_args,
        *live_args(fake_openai, "--tooleval-user-model", "user-m", "--tooleval-user-reasoning-effort", "high"),
        "-k",
        "en-agent_multi_turn_0",
    )
    result.assert_outcomes(passed=1)
    bodies = [body for body in fake_openai.stats.bodies if body]
    assert {body.get("reasoning_effort") for body in bodies if body["model"] == "user-m"} == {"high"}
    assert all("reasoning_effort" not in body for body in bodies if body["model"] == "agent-m")
