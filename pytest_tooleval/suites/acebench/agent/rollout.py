"""The agent_multi_step and agent_multi_turn rollout loops (acebench-agent §5).

Pure async loops: the agent and the user simulator are injected callables that take chat messages and return
the reply text, so a model backend, a scripted test agent, a replay or the oracle all drive the same code.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from types import MappingProxyType
from typing import TypedDict

from ..plain import contains, iterate
from . import prompts as prompt_text
from .decode import AgentDecodeError, routes_to_execution
from .dispatch import Execution, execute_step, execute_turn
from .envs import Environment, build_environment

AskFn = Callable[[list[dict[str, str]]], Awaitable[str]]


class Entry(TypedDict):
    """One dialogue message as upstream's history holds it."""

    sender: str
    recipient: str
    # The record's question as the data file gives it, a reply, or an execution's observation list (or the
    # nudge); upstream uses it by its sender's role, unchecked (`in`, str(), the executor): `said` reads an
    # agent's.
    message: object

FINISH = "finish conversation"
STEP = "agent_multi_step"
TURN = "agent_multi_turn"
DEFAULT_MAX_TURNS = 40

#: Sampling upstream's API agent classes and user simulator use, whatever the CLI says (acebench-agent §5.2).
AGENT_SAMPLING: Mapping[str, float] = MappingProxyType({"temperature": 0.001, "top_p": 1, "max_tokens": 1000})
USER_SAMPLING: Mapping[str, float] = MappingProxyType({"temperature": 0.001, "top_p": 1, "max_tokens": 1000})
#: Upstream's default user-simulator model.
DEFAULT_USER_MODEL = "gpt-4o"


@dataclass
class RolloutResult:
    """Everything one rollout produced.

    Attributes:
        sample_id: the record id.
        category: ``agent_multi_step`` or ``agent_multi_turn``.
        language: "en" or "zh".
        transcript: every dialogue message in order, as upstream's history holds them:
            ``{"sender", "recipient", "message"}``; an execution message is the observation list (or the
            multi_step nudge string).
        process: the agent messages that reached the executor, raw, as upstream records them for milestones.
        observations: the execution messages, in order.
        end_state: the graded attributes after the JSON round trip; ``[]`` when upstream would have recorded
            no state (no execution ever registered the instances).
        state_recorded: whether an end state was recorded.
        turns: loop iterations run (each produces one message).
        hit_turn_limit: the loop ran out of iterations without a ``finish conversation``.
        finished: the rollout ended on ``finish conversation``.
    """

    sample_id: str
    category: str
    language: str
    transcript: list[Entry] = field(default_factory=list)
    process: list[str] = field(default_factory=list)
    observations: list[list[object] | str] = field(default_factory=list)
    end_state: list[dict[str, object]] = field(default_factory=list)
    state_recorded: bool = False
    turns: int = 0
    hit_turn_limit: bool = False
    finished: bool = False

    def to_payload(self) -> dict[str, object]:
        return asdict(self)


def category_of(sample_id: str) -> str:
    """``agent_multi_step`` or ``agent_multi_turn`` from a sample id such as ``agent_multi_turn_12``."""
    category = sample_id.rsplit("_", 1)[0]
    if category not in (STEP, TURN):
        raise ValueError(f"{sample_id!r} is not an ACEBench agent sample id")
    return category


def _ends(message: object) -> bool:
    # ACEBench quirk: substring test on text, list membership on an observation list (acebench-agent §5.1).
    return contains(message, FINISH)


def _line(entry: Entry, execution_label: str) -> str:
    sender, message = entry["sender"], entry["message"]
    if sender == "user":
        return f"user:{message}\n"
    if sender == "agent":
        return f"agent:{message}\n"
    return f"{execution_label}{message}\n"  # str() of the observation list: Python repr


async def run_rollout(
    record: Mapping[str, object],
    language: str,
    prompts: Mapping[str, Mapping[str, str]] | None,
    ask_agent: AskFn,
    ask_user: AskFn | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    step_prompt_language: str | None = None,
) -> RolloutResult:
    """Run one agent sample to its end.

    Args:
        record: the sample (``id``, ``question``, ``initial_config``, ``involved_classes``, ``function``). No
            loader checks those agent fields: the loops below use them as upstream does, whatever they hold.
        language: "en" or "zh" (picks the environment texts and prompts).
        prompts: the ``prompts.json`` mapping; None sends the bare transcript, for scripted agents only.
        ask_agent: the agent model: chat messages in, reply text out.
        ask_user: the user simulator (multi_turn only). None uses a silent user: it opens with the
            sample's instruction and answers every question with ``finish conversation``.
        max_turns: loop iterations (upstream ``max_dialog_turns``, 40).
        step_prompt_language: multi_step prompt language if not ``language``. Upstream's API-model path
            always uses "zh" here (a bug, acebench-agent §6); its local-model path uses the dataset language.
    """
    category = category_of(str(record["id"]))
    if category == STEP:
        return await _multi_step(record, language, prompts, ask_agent, max_turns, step_prompt_language or language)
    return await _multi_turn(record, language, prompts, ask_agent, ask_user or silent_user(record), max_turns)


async def _multi_step(
    record: Mapping[str, object],
    language: str,
    prompts: Mapping[str, Mapping[str, str]] | None,
    ask_agent: AskFn,
    max_turns: int,
    prompt_language: str,
) -> RolloutResult:
    result = RolloutResult(str(record["id"]), STEP, language)
    env = build_environment(language, record["initial_config"], iterate(record["involved_classes"]))
    history: list[Entry] = [{"sender": "user", "recipient": "agent", "message": record["question"]}]
    transcript = ""
    for index in range(max_turns):
        result.turns = index + 1
        last = history[-1]
        if index == 0 or last["sender"] == "execution":
            # ACEBench quirk: only the question and the execution results enter the transcript; the agent
            # never sees its own earlier messages (acebench-agent §5.1).
            transcript += _line(last, "execution result:")
            if prompts is None:
                request = [{"role": "user", "content": transcript}]
            else:
                request = prompt_text.step_agent_messages(prompts, prompt_language, iterate(record["function"]),
                                                          transcript)
            reply = _text(await ask_agent(request))
            # Upstream labels the recipient with re.match on "[...]"; the loop ignores it.
            recipient = "execution" if re.match(r"\[.*?\]", reply) else "user"
            current: Entry = {"sender": "agent", "recipient": recipient, "message": reply}
        else:
            current = _execution(result, env, said(last), execute_step)
        history.append(current)
        if _finishes(result, index, current):
            break
    return _close(result, history, env)


async def _multi_turn(
    record: Mapping[str, object],
    language: str,
    prompts: Mapping[str, Mapping[str, str]] | None,
    ask_agent: AskFn,
    ask_user: AskFn,
    max_turns: int,
) -> RolloutResult:
    result = RolloutResult(str(record["id"]), TURN, language)
    env = build_environment(language, record["initial_config"], iterate(record["involved_classes"]))
    classes = class_names(record)
    if prompts is None:
        simulator: list[dict[str, str]] = [{"role": "user", "content": prompt_text.USER_OPENING[language]}]
    else:
        simulator = prompt_text.user_simulator_start(prompts, language, classes, record["question"])
    opening = _text(await ask_user(list(simulator)))
    # ACEBench quirk: the simulator's own replies are stored with role "system" (acebench-agent §5.2).
    simulator.append({"role": "system", "content": opening})
    history: list[Entry] = [{"sender": "user", "recipient": "agent", "message": opening}]
    transcript = ""
    for index in range(max_turns):
        result.turns = index + 1
        last = history[-1]
        transcript += _line(last, "execution:")  # every message enters the multi_turn transcript
        if last["recipient"] == "user":
            simulator.append({"role": "user", "content": prompt_text.strip_speaker(said(last))})
            reply = _text(await ask_user(list(simulator)))
            simulator.append({"role": "system", "content": reply})
            current: Entry = {"sender": "user", "recipient": "agent", "message": reply}
        elif last["recipient"] == "agent":
            if prompts is None:
                request = [{"role": "user", "content": transcript}]
            else:
                request = prompt_text.turn_agent_messages(prompts, language, iterate(record["function"]), classes,
                                                          transcript)
            reply = _text(await ask_agent(request))
            recipient = "execution" if routes_to_execution(reply) else "user"
            current = {"sender": "agent", "recipient": recipient, "message": reply}
        else:
            # Routing only lets decodable messages through, so the executor cannot fail to decode here.
            current = _execution(result, env, said(last), execute_turn)
        history.append(current)
        if _finishes(result, index, current):
            break
    return _close(result, history, env)


def said(entry: Entry) -> str:
    """An agent's message in the history: the reply text `_text` checked (only those go to the executor or the
    user)."""
    message = entry["message"]
    if not isinstance(message, str):
        raise TypeError(f"an agent message must be str, got {type(message).__name__}")
    return message


def class_names(record: Mapping[str, object]) -> list[str]:
    """The record's ``involved_classes``, once `build_environment` has accepted each of them as a class name."""
    return [name for name in iterate(record["involved_classes"]) if isinstance(name, str)]


def _text(reply: object) -> str:
    if not isinstance(reply, str):
        raise TypeError(f"the agent and user callables must return str, got {type(reply).__name__}")
    return reply


def _execution(result: RolloutResult, env: Environment, message: str,
               execute: Callable[[Environment, str], Execution]) -> Entry:
    """Run the agent's call message on the environment; the execution's message for the history."""
    result.process.append(message)
    outcome = execute(env, message)
    _record(result, outcome)
    return {"sender": "execution", "recipient": "agent", "message": outcome.message}


def _finishes(result: RolloutResult, index: int, current: Entry) -> bool:
    # A finish in the very first agent message does not count: the check starts at index 2.
    result.finished = index > 1 and _ends(current["message"])
    return result.finished


def _record(result: RolloutResult, outcome: Execution) -> None:
    result.observations.append(outcome.message)
    result.state_recorded = result.state_recorded or outcome.registered


def _close(result: RolloutResult, history: list[Entry], env: Environment) -> RolloutResult:
    result.transcript = history
    result.hit_turn_limit = not result.finished
    result.end_state = env.snapshot() if result.state_recorded else []
    return result


# -- scripted callables, replay and the direct executor replay ------------------------------------------------


def scripted(replies: Iterable[str], then: str = FINISH) -> AskFn:
    """An async callable that returns ``replies`` one per call, then ``then`` forever."""
    queue = list(replies)

    async def ask(_messages: list[dict[str, str]]) -> str:
        return queue.pop(0) if queue else then

    return ask


def silent_user(record: Mapping[str, object]) -> AskFn:
    """The user when there is no simulator (the oracle): opens with the sample's instruction, then only
    ever says ``finish conversation``."""
    return scripted([str(record["question"])])


async def replay(
    record: Mapping[str, object],
    language: str,
    agent_messages: Sequence[str],
    user_turns: Sequence[str] | None = None,
    prompts: Mapping[str, Mapping[str, str]] | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
) -> RolloutResult:
    """Run the real rollout loop feeding recorded agent messages, one per agent turn, then
    ``finish conversation``.

    Args:
        user_turns: multi_turn only: the simulator's replies in order, the first being its opening; after
            them the user says ``finish conversation``. None uses :func:`silent_user`.
    """
    ask_user = scripted(user_turns) if user_turns is not None else None
    return await run_rollout(record, language, prompts, scripted(agent_messages), ask_user, max_turns)


RAISED = "RAISED "


def execute_messages(record: Mapping[str, object], language: str, messages: Sequence[str]) -> RolloutResult:
    """Send each message straight to the category's executor, with no agent loop and no routing.

    This is how ``conformance/official_agent_traces.jsonl`` and the gold sequences were recorded. Every
    message counts in ``process``. A message the multi_turn executor cannot decode (a live rollout routes
    it to the user instead) makes upstream's executor raise; its observation is then the string
    ``"RAISED <ExceptionType>: <message>"``.
    """
    category = category_of(str(record["id"]))
    result = RolloutResult(str(record["id"]), category, language)
    env = build_environment(language, record["initial_config"], iterate(record["involved_classes"]))
    history: list[Entry] = []
    for message in messages:
        result.process.append(message)
        history.append({"sender": "agent", "recipient": "execution", "message": message})
        if category == STEP:
            outcome = execute_step(env, message)
        else:
            try:
                outcome = execute_turn(env, message)
            except AgentDecodeError as exc:
                result.observations.append(RAISED + exc.label)
                history.append({"sender": "execution", "recipient": "agent", "message": RAISED + exc.label})
                continue
        _record(result, outcome)
        history.append({"sender": "execution", "recipient": "agent", "message": outcome.message})
    result.turns = len(messages)
    result.transcript = history
    result.end_state = env.snapshot() if result.state_recorded else []
    return result
