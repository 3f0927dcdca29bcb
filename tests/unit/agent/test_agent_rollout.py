"""The rollout loops with scripted agents and users (acebench-agent §5, §6)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from _agent_data import prompts as load_prompts
from _agent_data import samples

from json_narrow import as_object
from pytest_tooleval.suites.acebench.agent import (
    NUDGE,
    RolloutResult,
    grade,
    replay,
    run_rollout,
    score_rollout,
    scripted,
)

STEP_FILE = "model_inference/multi_step/APIModel_agent.py"
TURN_FILE = "model_inference/multi_turn/APIModel_agent.py"
USER_FILE = "model_inference/multi_turn/APIModel_user.py"

# Stand-in templates with the upstream placeholders, so these tests need no data.
PROMPTS = {
    STEP_FILE: {
        "MULTI_TURN_AGENT_PROMPT_SYSTEM_EN": "step-system-en",
        "MULTI_TURN_AGENT_PROMPT_USER_EN": "F={functions}|H={history}",
        "MULTI_TURN_AGENT_PROMPT_SYSTEM_ZH": "step-system-zh",
        "MULTI_TURN_AGENT_PROMPT_USER_ZH": "zh F={functions}|H={history}",
    },
    TURN_FILE: {
        "MULTI_TURN_AGENT_PROMPT_SYSTEM_EN": "turn-system-en;",
        "MULTI_TURN_AGENT_PROMPT_USER_EN": "F={functions}|H={history}",
    },
    USER_FILE: {
        "SYSTEM_PROMPT_BASE_EN": "base-user:{instruction}",
        "SYSTEM_PROMPT_TRAVEL_EN": "travel-user:{instruction}",
    },
    "model_inference/prompt_en.py": {"TRAVEL_PROMPT_EN": "travel-policy;", "BASE_PROMPT_EN": "base-policy;"},
}

FUNCTIONS = [{"name": "turn_on_wifi", "description": "Turn on WiFi connection."}]
STEP_RECORD = {
    "id": "agent_multi_step_99",
    "question": "Turn on the Wi-Fi, then text Frank.",
    "initial_config": {"BaseApi": {"wifi": False, "logged_in": True}},
    "involved_classes": ["BaseApi", "MessageApi"],
    "function": FUNCTIONS,
}
TURN_RECORD = {**STEP_RECORD, "id": "agent_multi_turn_99", "question": "You are Eve."}
TRAVEL_RECORD = {**TURN_RECORD, "initial_config": {}, "involved_classes": ["Travel"]}
WIFI_ON = "[{'status': True, 'message': 'Wi-Fi has been turned on'}]"


class Recorder:
    """A scripted callable that also keeps every request it was sent."""

    def __init__(self, replies: list[str], then: str = "finish conversation") -> None:
        self.requests: list[list[dict[str, str]]] = []
        self._reply = scripted(replies, then)

    async def __call__(self, messages: list[dict[str, str]]) -> str:
        self.requests.append(messages)
        return await self._reply(messages)


def run(record: dict[str, Any], agent: Any, user: Any = None, **kwargs: Any) -> RolloutResult:
    return asyncio.run(run_rollout(record, "en", kwargs.pop("prompts", PROMPTS), agent, user, **kwargs))


# -- multi_step ------------------------------------------------------------------------------------------------


def test_multi_step_transcript_hides_the_agents_own_messages() -> None:
    agent = Recorder(["[turn_on_wifi()]", "[login_device()]"])
    result = run(STEP_RECORD, agent)
    assert [r[0] for r in agent.requests] == [{"role": "system", "content": "step-system-en"}] * 3
    history = agent.requests[2][1]["content"].split("|H=")[1]
    assert history == (
        "user:Turn on the Wi-Fi, then text Frank.\n"
        f"execution result:{WIFI_ON}\n"
        "execution result:[{'status': True, 'message': 'Device has been logged in'}]\n"
    )
    assert agent.requests[0][1]["content"].startswith(f"F={FUNCTIONS}|H=")  # Python repr of the list
    assert result.process == ["[turn_on_wifi()]", "[login_device()]"]
    assert result.finished and not result.hit_turn_limit and result.turns == 5
    assert result.end_state[0] == {"BaseApi": {"wifi": True, "logged_in": True}}


def test_multi_step_turn_limit_ends_cleanly_with_the_reached_state() -> None:
    agent = Recorder([], then="[turn_on_wifi()]")
    result = run(STEP_RECORD, agent, max_turns=7)
    assert result.turns == 7 and result.hit_turn_limit and not result.finished
    assert len(agent.requests) == 4 and len(result.process) == 3
    assert result.state_recorded and as_object(result.end_state[0]["BaseApi"])["wifi"] is True


def test_multi_step_default_limit_is_twenty_agent_messages() -> None:
    agent = Recorder([], then="[turn_on_wifi()]")
    result = run(STEP_RECORD, agent)
    assert (result.turns, len(agent.requests), len(result.process)) == (40, 20, 20)


def test_multi_step_agent_that_never_calls_gets_the_nudge_and_no_state() -> None:
    result = run(STEP_RECORD, Recorder([], then="Which user should I text?"), max_turns=6)
    assert result.observations == [NUDGE] * 3
    assert result.process == ["Which user should I text?"] * 3  # undecodable messages still count
    assert result.end_state == [] and not result.state_recorded
    verdict = grade(
        {"ground_truth": [{"BaseApi": {}}, {"MessageApi": {}}], "mile_stone": ["[x()]"]},
        result.end_state,
        result.process,
    )
    assert verdict.error_type == "wrong number of class"


def test_multi_step_finish_in_the_first_message_does_not_count() -> None:
    result = run(STEP_RECORD, Recorder(["finish conversation"]))
    assert result.process == ["finish conversation"] and result.observations == [NUDGE]
    assert result.finished and result.turns == 3


def test_multi_step_finish_anywhere_in_a_later_message_ends_without_executing() -> None:
    result = run(STEP_RECORD, Recorder(["[login_device()]", "[turn_on_wifi()] finish conversation"]))
    assert result.process == ["[login_device()]"]
    assert result.end_state[0] == {"BaseApi": {"wifi": False, "logged_in": True}}


def test_multi_step_prompt_language_can_follow_the_official_api_path() -> None:
    agent = Recorder([])
    run(STEP_RECORD, agent, step_prompt_language="zh")
    assert agent.requests[0][0]["content"] == "step-system-zh"
    assert agent.requests[0][1]["content"].startswith("zh F=")


def test_callable_errors_propagate() -> None:
    async def broken(_messages: list[dict[str, str]]) -> str:
        raise ConnectionError("endpoint down")

    with pytest.raises(ConnectionError):
        run(STEP_RECORD, broken)


# -- multi_turn ------------------------------------------------------------------------------------------------


def test_multi_turn_routes_between_user_agent_and_executor() -> None:
    agent = Recorder(["Sure, which one?", "[turn_on_wifi()]", "agent:Done, anything else?"])
    user = Recorder(["Turn on my wifi.", "The first one.", "finish conversation"])
    result = run(TURN_RECORD, agent, user)
    assert [(m["sender"], m["recipient"]) for m in result.transcript] == [
        ("user", "agent"),
        ("agent", "user"),
        ("user", "agent"),
        ("agent", "execution"),
        ("execution", "agent"),
        ("agent", "user"),
        ("user", "agent"),
    ]
    assert result.finished and result.process == ["[turn_on_wifi()]"]
    # The simulator: its prompt, the opening line, its replies stored as "system", agent text as "user".
    assert user.requests[-1] == [
        {"role": "system", "content": "base-user:You are Eve."},
        {"role": "user", "content": "Is there anything you need help with today?"},
        {"role": "system", "content": "Turn on my wifi."},
        {"role": "user", "content": "Sure, which one?"},
        {"role": "system", "content": "The first one."},
        {"role": "user", "content": "Done, anything else?"},  # the "agent:" prefix is dropped
    ]
    # The agent sees every message, its own included.
    assert agent.requests[2][1]["content"].split("|H=")[1] == (
        "user:Turn on my wifi.\nagent:Sure, which one?\nuser:The first one.\nagent:[turn_on_wifi()]\n"
        f"execution:{WIFI_ON}\n"
    )
    assert agent.requests[0][0]["content"] == "turn-system-en;base-policy;"


def test_multi_turn_travel_uses_the_travel_templates() -> None:
    agent, user = Recorder([]), Recorder(["Book me a flight."])
    run(TRAVEL_RECORD, agent, user)
    assert agent.requests[0][0]["content"] == "turn-system-en;travel-policy;"
    assert user.requests[0][0]["content"] == "travel-user:You are Eve."


def test_multi_turn_turn_limit() -> None:
    result = run(TURN_RECORD, Recorder([], then="What next?"), Recorder([], then="Keep going."), max_turns=5)
    assert result.turns == 5 and result.hit_turn_limit and result.process == [] and result.end_state == []


def test_multi_turn_without_user_model_uses_the_silent_user() -> None:
    result = run(TURN_RECORD, Recorder(["[turn_on_wifi()]", "All done?"]))
    assert result.transcript[0]["message"] == "You are Eve."  # the silent user opens with the instruction
    assert result.transcript[-1] == {"sender": "user", "recipient": "agent", "message": "finish conversation"}
    assert as_object(result.end_state[0]["BaseApi"])["wifi"] is True


def test_do_nothing_agent_fails_multi_turn_7_officially(acebench_dir: Path) -> None:
    """Upstream records no state without a successful execution; EvalScope would pass this sample."""
    record, answer = samples(str(acebench_dir), "en", "agent_multi_turn")["agent_multi_turn_7"]
    prompts = load_prompts(str(acebench_dir))
    idle = asyncio.run(replay(record, "en", ["Hello!"], ["Hi"], prompts=prompts))
    assert score_rollout(answer, idle).error_type == "wrong number of class"
    looked = asyncio.run(replay(record, "en", ["[view_all_reminders()]"], ["Hi"], prompts=prompts))
    assert score_rollout(answer, looked).valid  # the typo'd Reminder class is never checked


def test_real_prompts_render(acebench_dir: Path) -> None:
    record, _ = samples(str(acebench_dir), "zh", "agent_multi_turn")["agent_multi_turn_0"]
    prompts = load_prompts(str(acebench_dir))
    agent, user = Recorder([]), Recorder(["帮我发短信"])
    asyncio.run(run_rollout(record, "zh", prompts, agent, user))
    system = agent.requests[0][0]["content"]
    assert system.startswith(prompts[TURN_FILE]["MULTI_TURN_AGENT_PROMPT_SYSTEM_ZH"])
    assert system.endswith(prompts["model_inference/prompt_zh.py"]["BASE_PROMPT_ZH"])
    assert user.requests[0][1] == {"role": "user", "content": "今天有什么需要帮助的吗？"}
    assert record["question"] in user.requests[0][0]["content"]
    assert "user:帮我发短信\n" in agent.requests[0][1]["content"]
