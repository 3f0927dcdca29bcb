"""The agent rollouts in function-calling mode (--tooleval-mode fc; docs/function-calling.md, "Agent rollouts").

The same environments, executors, termination rule and grading as the text-protocol loops of rollout.py, with
the conversation carried as chat messages: the agent's calls arrive as `tool_calls`, each call's observation
goes back as a `tool` message with its id, and user turns are user messages. A turn's calls are written in the
text protocol's form (tool_calls.render_calls) before they reach the executor, so execution, the process list
and process accuracy see what a text-protocol agent making the same calls would have written.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from ..fc import ToolSet, fc_system_prompt
from ..plain import iterate
from ..tool_calls import written_calls
from . import prompts as prompt_text
from .decode import routes_to_execution
from .dispatch import execute_step, execute_turn
from .envs import build_environment
from .rollout import (
    FINISH,
    STEP,
    AskFn,
    Entry,
    RolloutResult,
    _close,
    _execution,
    _finishes,
    category_of,
    class_names,
    said,
    silent_user,
)


@dataclass(frozen=True)
class AgentTurn:
    """What the agent said in one turn: its text, and its native calls (`{"id", "name", "arguments"}` each)."""

    content: str
    calls: tuple[dict[str, str], ...] = ()


class _AgentEntry(Entry, total=False):
    """An agent message with native calls: the calls, and the text sent beside them."""

    tool_calls: list[dict[str, str]]
    content: str


FcAskFn = Callable[[list[dict[str, object]]], Awaitable[AgentTurn]]


def scripted_turns(turns: Sequence[AgentTurn], then: str = FINISH) -> FcAskFn:
    """An agent that gives `turns` one per call, then says `then` forever (the oracle, replays)."""
    queue = list(turns)

    async def ask(_messages: list[dict[str, object]]) -> AgentTurn:
        return queue.pop(0) if queue else AgentTurn(then)

    return ask


async def run_fc_rollout(
    record: Mapping[str, object],
    language: str,
    prompts: Mapping[str, Mapping[str, str]],
    tools: ToolSet,
    ask_agent: FcAskFn,
    ask_user: AskFn | None = None,
    max_turns: int = 40,
    step_prompt_language: str | None = None,
) -> RolloutResult:
    """One agent sample to its end, in function-calling mode (arguments as in rollout.run_rollout)."""
    if category_of(str(record["id"])) == STEP:
        return await _multi_step(record, language, prompts, tools, ask_agent, max_turns,
                                 step_prompt_language or language)
    return await _multi_turn(record, language, prompts, tools, ask_agent, ask_user or silent_user(record), max_turns)


def _read(turn: AgentTurn, tools: ToolSet) -> tuple[str, bool]:
    """The turn as the executor reads it, and whether it is calls: rendered calls, or the text. A turn whose
    calls are not all JSON objects is text: their raw form, as a text-protocol agent's unreadable list is."""
    if not turn.calls:
        return turn.content, False
    return written_calls(turn.calls, tools.names)


def _assistant(turn: AgentTurn, message: str, is_calls: bool) -> dict[str, object]:
    if not is_calls:  # unread calls are carried as the text they are, so no call id waits for a result
        return {"role": "assistant", "content": message}
    calls = [{"id": call["id"], "type": "function", "function": {"name": call["name"], "arguments": call["arguments"]}}
             for call in turn.calls]
    # "" rather than null: llama-cpp-python answers null content with a 500 (issue 26)
    return {"role": "assistant", "content": turn.content, "tool_calls": calls}


def _results(turn: AgentTurn | None, observation: object) -> list[dict[str, object]]:
    """The execution's observation as messages: one tool message per call id, each with its own observation
    when there is one per call; otherwise (the nudge, an error, text that ran as calls) the whole of it."""
    whole = observation if isinstance(observation, str) else json.dumps(observation, ensure_ascii=False, default=str)
    if turn is None or not turn.calls:
        return [{"role": "user", "content": whole}]
    if isinstance(observation, list) and len(observation) == len(turn.calls):  # paired
        return [{"role": "tool", "tool_call_id": call["id"], "content": _observation_text(observation[index])}
                for index, call in enumerate(turn.calls)]
    return [{"role": "tool", "tool_call_id": call["id"], "content": whole} for call in turn.calls]


def _observation_text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _agent_entry(turn: AgentTurn, message: str, recipient: str) -> _AgentEntry:
    entry: _AgentEntry = {"sender": "agent", "recipient": recipient, "message": message}
    if turn.calls:
        entry["tool_calls"] = [dict(call) for call in turn.calls]
        if turn.content:
            entry["content"] = turn.content
    return entry


async def _multi_step(record: Mapping[str, object], language: str, prompts: Mapping[str, Mapping[str, str]],
                      tools: ToolSet, ask_agent: FcAskFn, max_turns: int, prompt_language: str) -> RolloutResult:
    result = RolloutResult(str(record["id"]), STEP, language)
    env = build_environment(language, record["initial_config"], iterate(record["involved_classes"]))
    system = prompt_text.step_agent_messages(prompts, prompt_language, iterate(record["function"]), "")[0]["content"]
    messages: list[dict[str, object]] = [{"role": "system", "content": fc_system_prompt(system)},
                                      {"role": "user", "content": str(record["question"])}]
    history: list[Entry] = [{"sender": "user", "recipient": "agent", "message": record["question"]}]
    pending: AgentTurn | None = None
    for index in range(max_turns):
        result.turns = index + 1
        last = history[-1]
        if index == 0 or last["sender"] == "execution":
            turn = await ask_agent(list(messages))
            message, is_calls = _read(turn, tools)
            messages.append(_assistant(turn, message, is_calls))
            pending = turn if is_calls else None
            # as in the text protocol, every agent message goes to the executor (text gets the nudge)
            current: Entry = _agent_entry(turn, message, "execution" if is_calls else "user")
        else:
            current = _execution(result, env, said(last), execute_step)
            messages.extend(_results(pending, current["message"]))
        history.append(current)
        if _finishes(result, index, current):
            break
    return _close(result, history, env)


async def _multi_turn(record: Mapping[str, object], language: str, prompts: Mapping[str, Mapping[str, str]],
                      tools: ToolSet, ask_agent: FcAskFn, ask_user: AskFn, max_turns: int) -> RolloutResult:
    result = RolloutResult(str(record["id"]), "agent_multi_turn", language)
    env = build_environment(language, record["initial_config"], iterate(record["involved_classes"]))
    classes = class_names(record)
    system = prompt_text.turn_agent_messages(prompts, language, iterate(record["function"]), classes, "")[0]["content"]
    simulator = prompt_text.user_simulator_start(prompts, language, classes, record["question"])
    opening = await ask_user(list(simulator))
    simulator.append({"role": "system", "content": opening})  # the simulator's own layout (acebench-agent §5.2)
    messages: list[dict[str, object]] = [{"role": "system", "content": fc_system_prompt(system)},
                                      {"role": "user", "content": opening}]
    history: list[Entry] = [{"sender": "user", "recipient": "agent", "message": opening}]
    pending: AgentTurn | None = None
    for index in range(max_turns):
        result.turns = index + 1
        last = history[-1]
        if last["recipient"] == "user":
            simulator.append({"role": "user", "content": prompt_text.strip_speaker(said(last))})
            reply = await ask_user(list(simulator))
            simulator.append({"role": "system", "content": reply})
            messages.append({"role": "user", "content": reply})
            current: Entry = {"sender": "user", "recipient": "agent", "message": reply}
        elif last["recipient"] == "agent":
            turn = await ask_agent(list(messages))
            message, is_calls = _read(turn, tools)
            # routed as the text protocol routes the same text: calls written as text run too, and calls the
            # executor could not read (values past its limits) go to the user, as unreadable text does
            recipient = "execution" if routes_to_execution(message) else "user"
            is_calls = is_calls and recipient == "execution"
            messages.append(_assistant(turn, message, is_calls))
            pending = turn if is_calls else None
            current = _agent_entry(turn, message, recipient)
        else:
            current = _execution(result, env, said(last), execute_turn)
            messages.extend(_results(pending, current["message"]))
        history.append(current)
        if _finishes(result, index, current):
            break
    return _close(result, history, env)
