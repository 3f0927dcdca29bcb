"""Hostile model output: nothing it writes is executed, and it gets the observation an unknown call gets."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_tooleval.suites.acebench.agent import (
    build_environment,
    execute_step,
    execute_turn,
)
from pytest_tooleval.suites.acebench.agent.decode import AgentDecodeError
from pytest_tooleval.suites.acebench.agent.envs.message import MessageApi

PHONE = ["BaseApi", "MessageApi", "ReminderApi", "FoodPlatform"]
CONFIG = {"BaseApi": {"wifi": False, "logged_in": True}}

UNBOUND = [
    "Error during execution: cannot access local variable 'func_call_result' where it is not associated with a value"
]
TURN_ERROR = list("Error during execution: {str(e)}")

# Calls whose method name is not an allow-listed API method: upstream finds no instance method for them.
UNKNOWN_NAMES = [
    "[__import__('os').system('touch PWNED')]",
    "[__import__(name='os').system(command='touch PWNED')]",
    "[os.system(command='touch PWNED')]",
    "[eval(source=\"__import__('os').system('touch PWNED')\")]",
    "[exec(source=\"open('PWNED', 'w').close()\")]",
    "[open(file='PWNED', mode='w')]",
    "[__class__()]",
    "[__init__()]",
    "[_load_scenario(config='wifi')]",
    "[_extreme_id(key='latest', later=True)]",
    "[inbox()]",
    "[wifi()]",
    "[turn_on_wifi.__globals__()]",
    "[turn_on_wifi.__func__.__globals__.get(k='os')]",
    "[getattr(o='x', name='__class__')]",
    "[print(value='x')]",
    "[format_disk(drive='C')]",
]

# Hostile values inside an allow-listed call: evaluated as literals or refused, never run.
HOSTILE_ARGUMENTS = [
    "[send_message(sender_name='Eve', receiver_name='Frank', message=__import__('os').system('touch PWNED'))]",
    "[send_message(sender_name='Eve', receiver_name='Frank', message={'open': {'file': 'PWNED', 'mode': 'w'}})]",
    "[turn_on_wifi(x={'__import__': {'name': 'os'}})]",
    "[send_message(sender_name='Eve', receiver_name='Frank', message=open('PWNED', 'w').write('x'))]",
    "[send_message(sender_name='Eve', receiver_name='Frank', message='a' * 10**9)]",
    "[send_message(sender_name='Eve', receiver_name='Frank', message=[['a'] * 100000] * 100000)]",
    "[delete_message(message_id=9**9**9)]",
    "[delete_message(message_id=(lambda: __import__('os').system('touch PWNED'))())]",
    "[add_reminder(title=[x for x in ().__class__.__base__.__subclasses__()], description='d', time='t')]",
    "[__acebench_instance__.turn_on_wifi()]",
]


@pytest.fixture()
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _state(env: Any) -> Any:
    return env.snapshot()


@pytest.mark.parametrize("message", UNKNOWN_NAMES)
def test_unknown_or_private_names_behave_like_an_unknown_function(sandbox: Path, message: str) -> None:
    step_env = build_environment("en", CONFIG, PHONE)
    before = _state(step_env)
    step = execute_step(step_env, message)
    turn_env = build_environment("en", CONFIG, PHONE)
    turn = execute_turn(turn_env, message)
    assert step.message == UNBOUND and step.registered  # what "[format_disk(drive='C')]" gets
    assert turn.message == TURN_ERROR and not turn.registered
    assert _state(step_env) == before == _state(turn_env)
    assert list(sandbox.iterdir()) == []


@pytest.mark.parametrize("message", HOSTILE_ARGUMENTS)
def test_hostile_arguments_do_nothing(sandbox: Path, message: str) -> None:
    env = build_environment("en", CONFIG, PHONE)
    before = _state(env)
    outcome = execute_step(env, message)
    assert isinstance(outcome.message, (list, str)) and outcome.message  # an observation, not a crash
    if isinstance(outcome.message, list):
        assert all(isinstance(o, (str, dict)) for o in outcome.message)
    with contextlib.suppress(AgentDecodeError):  # undecodable: a live rollout would route it to the user
        execute_turn(build_environment("en", CONFIG, PHONE), message)
    assert list(sandbox.iterdir()) == []
    # Wi-Fi is off, so even a message that survived as text could not be sent.
    assert _state(env)[1:] == before[1:]
    assert not os.path.exists(sandbox / "PWNED")


def test_nested_call_source_is_kept_as_text_not_run(sandbox: Path) -> None:
    env = build_environment("en", {"BaseApi": {"wifi": True, "logged_in": True}}, PHONE)
    execute_step(env, "[delete_message(message_id=1)]")
    outcome = execute_step(
        env, "[send_message(sender_name='Eve', receiver_name='Frank', message=__import__('os').system('touch PWNED'))]"
    )
    assert outcome.message == [{"status": True, "message": "Message successfully sent to Frank."}]
    messages = env.instances["MessageApi"]
    assert isinstance(messages, MessageApi)
    assert messages.inbox[7]["message"] == "__import__('os').system('touch PWNED')"
    assert list(sandbox.iterdir()) == []


def test_a_nested_call_with_keywords_is_an_undefined_name() -> None:
    env = build_environment("en", CONFIG, PHONE)
    outcome = execute_step(env, "[turn_on_wifi(x={'__import__': {'name': 'os'}})]")
    assert outcome.message == ["Error during execution: name '__import__' is not defined"]


def test_oversized_arithmetic_is_refused_as_undecodable() -> None:
    env = build_environment("en", CONFIG, PHONE)
    assert execute_step(env, "[delete_message(message_id=9**9**9)]").message == (
        "Please do not ask me any questions, use the known conditions to solve the problem"
    )


def test_en_reminders_have_no_search_reminders_but_zh_do() -> None:
    en = build_environment("en", CONFIG, PHONE)
    zh = build_environment("zh", CONFIG, PHONE)
    assert execute_step(en, "[search_reminders(keyword='xyz')]").message == UNBOUND
    assert execute_step(zh, "[search_reminders(keyword='xyz')]").message == [
        {"status": False, "message": "没有找到包含该关键词的提醒"}
    ]


def test_methods_of_uninvolved_classes_are_unknown() -> None:
    env = build_environment("en", {}, ["Travel"])
    assert execute_step(env, "[turn_on_wifi()]").message == UNBOUND
    assert execute_step(env, "[send_message(sender_name='Eve', receiver_name='Frank', message='m')]").message == UNBOUND
