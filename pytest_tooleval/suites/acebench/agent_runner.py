"""Agent samples in the plugin: pick the driver (live model, replayed messages or the gold oracle), roll out, grade."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from ...models.access import ModelAccess
from ...models.meter import Meter, role_tokens
from ...outcome import Answer, SampleError
from ...verdict import Verdict
from .agent import AskFn, RolloutResult, replay, run_oracle, run_rollout, score_rollout
from .data import AceCase

GOLD_FILE = "agent_gold_sequences.json"
NO_USER_MODEL = (
    "agent_multi_turn needs a model to play the user: pass --tooleval-user-model NAME "
    "(ACEBench uses gpt-4o); the sample is not scored without one"
)


@cache
def _gold(root: Path) -> dict[str, Any]:
    path = root / GOLD_FILE
    if not path.exists():
        raise SampleError(
            f"the oracle needs verified gold call sequences for agent samples ({GOLD_FILE} in the data folder "
            f"{root}); the upstream milestones cannot serve as gold (acebench-agent §8)"
        )
    gold: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return gold


async def run_agent_case(case: AceCase, access: ModelAccess, prompts: dict[str, Any], root: Path,
                         max_turns: int, step_prompt_language: str | None,
                         sampling: dict[str, Any] | None = None) -> Answer:
    record = case.record
    if access.kind == "oracle":
        result = await run_oracle(record, case.language, _gold(root), prompts)
        return _answer(result)
    if access.kind == "replay":
        assert access.replay is not None
        row = access.replay.lookup(case.language, case.id)
        if row is None or not isinstance(row.get("messages"), list):
            raise SampleError(f"no recorded agent messages for {case.language}/{case.id} in {access.replay.source}")
        result = await replay(record, case.language, [str(m) for m in row["messages"]], row.get("user_turns"),
                              prompts, max_turns)
        return _answer(result)
    assert access.chat is not None
    ask_user: AskFn | None = None
    user_meter = None
    if case.category == "agent_multi_turn":
        if access.user_chat is None:
            raise SampleError(NO_USER_MODEL)
        user_meter = Meter(access.user_chat)
        ask_user = user_meter.text
    agent_meter = Meter(access.chat)
    ask_agent: AskFn = agent_meter.text
    if sampling:  # --tooleval-sampling upstream: the agent classes' own sampling
        ask_agent = _with_sampling(agent_meter, sampling)
    if "o1" in access.model:  # upstream's agent classes, by name (acebench-agent §5.4)
        ask_agent = _as_one_user_message(agent_meter)
    result = await run_rollout(record, case.language, prompts, ask_agent, ask_user, max_turns,
                               step_prompt_language)
    return _answer(result, agent_meter.latency_s, role_tokens({"agent": agent_meter, "user": user_meter}))


def _with_sampling(meter: Meter, sampling: dict[str, Any]) -> AskFn:
    async def ask(messages: list[dict[str, str]]) -> str:
        return (await meter(messages, **sampling)).text

    return ask


def _as_one_user_message(meter: Meter) -> AskFn:
    """Ask as upstream asks an o1 model: system and user prompts in one user message, no sampling parameters."""

    async def ask(messages: list[dict[str, str]]) -> str:
        if [message["role"] for message in messages] == ["system", "user"]:
            messages = [{"role": "user", "content": messages[0]["content"] + "\n\n" + messages[1]["content"]}]
        return (await meter(messages, sampling=False)).text

    return ask


def _answer(result: RolloutResult, latency_s: float = 0.0, tokens: dict[str, int] | None = None) -> Answer:
    agent_messages = [entry["message"] for entry in result.transcript if entry.get("sender") == "agent"]
    transcript = [{key: _plain(value) for key, value in entry.items()} for entry in result.transcript]
    state = json.loads(json.dumps(result.to_payload(), default=str))  # answers travel between processes as JSON
    return Answer(agent_messages, latency_s, tokens or {}, transcript, state=state)


def _plain(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool, type(None))):
        return value
    return json.loads(json.dumps(value, default=str))


def grade_agent_case(case: AceCase, answer: Answer) -> Verdict:
    return score_rollout(case.answer, RolloutResult(**answer.state))
