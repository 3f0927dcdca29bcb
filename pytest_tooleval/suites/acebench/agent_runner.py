"""Agent samples in the plugin: pick the driver (live model, replayed messages or the gold oracle), roll out, grade."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from ...models.access import ModelAccess
from ...models.meter import Meter, role_tokens
from ...outcome import Answer, SampleError
from ...verdict import Verdict
from .agent import AskFn, RolloutResult, oracle_messages, replay, run_oracle, run_rollout, score_rollout, scripted
from .agent.fc_rollout import AgentTurn, run_fc_rollout, scripted_turns
from .data import AceCase
from .decode import decode_fixed
from .fc import ToolSchemaError, ToolSet, tool_schemas

GOLD_FILE = "agent_gold_sequences.json"
NO_USER_MODEL = (
    "agent_multi_turn needs a model to play the user: pass --tooleval-user-model NAME "
    "(ACEBench uses gpt-4o); the sample is not scored without one"
)


@cache
def _gold(root: Path) -> dict[str, object]:
    path = root / GOLD_FILE
    if not path.exists():
        raise SampleError(
            f"the oracle needs verified gold call sequences for agent samples ({GOLD_FILE} in the data folder "
            f"{root}); the upstream milestones cannot serve as gold (acebench-agent §8)"
        )
    gold: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return gold


async def run_agent_case(case: AceCase, access: ModelAccess, prompts: Mapping[str, Mapping[str, str]], root: Path,
                         max_turns: int, step_prompt_language: str | None,
                         sampling: dict[str, object] | None = None) -> Answer:
    record = case.record
    if access.kind == "oracle":
        result = await run_oracle(record, case.language, _gold(root), prompts)
        return _answer(result)
    if access.kind == "replay":
        row = _recorded_row(case, access)
        result = await replay(record, case.language, [str(m) for m in row["messages"]], row.get("user_turns"),
                              prompts, max_turns)
        return _answer(result)
    assert access.chat is not None
    user_meter = _user_meter(case, access)
    ask_user: AskFn | None = None if user_meter is None else user_meter.text
    agent_meter = Meter(access.chat)
    ask_agent: AskFn = agent_meter.text
    if sampling:  # --tooleval-sampling upstream: the agent classes' own sampling
        ask_agent = _with_sampling(agent_meter, sampling)
    if "o1" in access.model:  # upstream's agent classes, by name (acebench-agent §5.4)
        ask_agent = _as_one_user_message(agent_meter)
    result = await run_rollout(record, case.language, prompts, ask_agent, ask_user, max_turns,
                               step_prompt_language)
    return _answer(result, agent_meter.latency_s, role_tokens({"agent": agent_meter, "user": user_meter}))


def _recorded_row(case: AceCase, access: ModelAccess) -> dict[str, Any]:  # a replay file's row: only messages checked
    assert access.replay is not None
    row = access.replay.lookup(case.language, case.id)
    if row is None or not isinstance(row.get("messages"), list):
        raise SampleError(f"no recorded agent messages for {case.language}/{case.id} in {access.replay.source}")
    return row


def _user_meter(case: AceCase, access: ModelAccess) -> Meter | None:
    if case.category != "agent_multi_turn":
        return None
    if access.user_chat is None:
        raise SampleError(NO_USER_MODEL)
    return Meter(access.user_chat)


async def run_fc_agent_case(case: AceCase, access: ModelAccess, prompts: Mapping[str, Mapping[str, str]], root: Path,
                            max_turns: int, step_prompt_language: str | None,
                            sampling: dict[str, object] | None = None) -> Answer:
    """An agent sample in function-calling mode: the functions go as `tools`, calls come back as tool_calls."""
    record = case.record
    tools = agent_tools(record["function"])
    if access.kind == "oracle":
        gold = oracle_messages(_gold(root), case.language, case.id)
        result = await run_fc_rollout(record, case.language, prompts, tools,
                                      scripted_turns([_gold_turn(message, tools, n) for n, message in enumerate(gold)]))
        return _answer(result)
    if access.kind == "replay":
        row = _recorded_row(case, access)
        turns = [_recorded_turn(message, n) for n, message in enumerate(row["messages"])]
        user_turns = row.get("user_turns")
        result = await run_fc_rollout(record, case.language, prompts, tools, scripted_turns(turns),
                                      scripted(user_turns) if user_turns is not None else None, max_turns)
        return _answer(result)
    assert access.chat is not None
    user_meter = _user_meter(case, access)
    agent_meter = Meter(access.chat)
    extra = dict(sampling or {})

    async def ask_agent(messages: list[dict[str, object]]) -> AgentTurn:
        reply = await agent_meter(messages, tools=tools.tools, **extra)
        return AgentTurn(reply.text, tuple(call.to_json() for call in reply.tool_calls))

    result = await run_fc_rollout(record, case.language, prompts, tools, ask_agent,
                                  None if user_meter is None else user_meter.text, max_turns, step_prompt_language)
    return _answer(result, agent_meter.latency_s, role_tokens({"agent": agent_meter, "user": user_meter}))


async def replay_transcript(case: AceCase, transcript: list[object], prompts: Mapping[str, Mapping[str, str]],
                            max_turns: int, step_prompt_language: str | None) -> Answer:
    """A finished rollout played again from its report transcript: the agent's messages (their tool calls in
    function-calling mode) and the user's turns go back through the environments, so the end state is the one the
    run reached, to grade against another revision's ground truth (`python -m pytest_tooleval rescore`). The caller
    checks that the transcript comes out the same."""
    entries = [entry for entry in transcript if isinstance(entry, dict)]
    if len(entries) != len(transcript):
        raise SampleError("the transcript holds an entry that is not an object")
    user_turns = ([str(entry.get("message")) for entry in entries if entry.get("sender") == "user"]
                  if case.category == "agent_multi_turn" else None)
    agent = [entry for entry in entries if entry.get("sender") == "agent"]
    if case.mode != "fc":
        result = await replay(case.record, case.language, [str(entry.get("message")) for entry in agent], user_turns,
                              prompts, max_turns)
        return _answer(result)
    turns = [AgentTurn(str(entry.get("content") or ""), recorded_tool_calls(entry["tool_calls"], f"agent turn {n + 1}"))
             if entry.get("tool_calls") else AgentTurn(str(entry.get("message")))
             for n, entry in enumerate(agent)]
    result = await run_fc_rollout(case.record, case.language, prompts, agent_tools(case.record["function"]),
                                  scripted_turns(turns), scripted(user_turns) if user_turns is not None else None,
                                  max_turns, step_prompt_language)
    return _answer(result)


def agent_tools(functions: object) -> ToolSet:
    try:
        return tool_schemas(functions if isinstance(functions, list) else [functions])
    except ToolSchemaError as exc:
        raise SampleError(f"function calling: a function cannot be sent as a tool: {exc}") from None


def _gold_turn(message: str, tools: ToolSet, turn: int) -> AgentTurn:
    """A gold call message as the tool_calls a perfect function-calling agent sends."""
    calls = tuple({"id": f"call_{turn}_{n}", "name": tools.tool_name(name),
                   "arguments": json.dumps(arguments, ensure_ascii=False)}
                  for n, call in enumerate(decode_fixed(message)) for name, arguments in call.items())
    return AgentTurn("", calls)


def _recorded_turn(message: object, turn: int) -> AgentTurn:
    """A recorded agent message: text, or {"content", "tool_calls"} with calls as {"name", "arguments"} or in
    the chat-completions shape ({"id", "function": {"name", "arguments"}})."""
    if isinstance(message, str):
        return AgentTurn(message)
    if not isinstance(message, dict):
        raise SampleError(f"recorded agent message {turn + 1} is a {type(message).__name__}, not text or an object")
    calls = recorded_tool_calls(message.get("tool_calls"), f"recorded agent message {turn + 1}")
    return AgentTurn(str(message.get("content") or ""), calls)


def recorded_tool_calls(value: object, where: str) -> tuple[dict[str, str], ...]:
    """Recorded tool calls in either shape, as {"id", "name", "arguments"} (arguments as JSON text)."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise SampleError(f"{where}: tool_calls is a {type(value).__name__}, not a list")
    calls = []
    for n, item in enumerate(value):
        inner = item.get("function", item) if isinstance(item, dict) else None
        if not isinstance(inner, dict) or not isinstance(inner.get("name"), str):
            raise SampleError(f"{where}: tool call {n + 1} has no name")
        arguments = inner.get("arguments", "{}")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        calls.append({"id": str(item.get("id") or f"call_{n}"), "name": inner["name"], "arguments": arguments})
    return tuple(calls)


def _with_sampling(meter: Meter, sampling: dict[str, object]) -> AskFn:
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


def _plain(value: object) -> object:
    if isinstance(value, (str, int, float, bool, type(None))):
        return value
    return json.loads(json.dumps(value, default=str))


def grade_agent_case(case: AceCase, answer: Answer) -> Verdict:
    return score_rollout(case.answer, RolloutResult(**answer.state))
