"""bfcl's multi-turn driving loop (`OpenAICompletionsHandler`, bfcl-multiturn §3, "spec" below), as a pure async
function of a sample and of a callable that asks the model (docs/bfcl-multi-turn.md#the-driving-loop).

Per turn the model is asked again and again; each answer is recorded raw, decoded, and, when it decodes to calls,
executed on the sample's generation-side instances, the results going back into the conversation. The requests
are the ones bfcl sends, byte for byte once serialised, less the model name and the sampling keys, which the
caller adds (as for single-turn, requests.py).
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Literal

from ....json_value import JSONObject, JSONValue
from ..requests import fc_tool, hinted_functions, system_prompt
from ..templates import Templates, fill
from .decode import Undecodable, decode_fc, decode_prompt
from .execute import Side
from .sample import MultiTurnSample
from .tables import Tables

#: one request body (messages, and tools in FC mode) -> the assistant message the server answered, every field kept
Ask = Callable[[JSONObject], Awaitable[JSONObject]]
ProtocolName = Literal["fc", "prompt"]

# bfcl's MAXIMUM_STEP_LIMIT (default_prompts.py:1): a turn is cut after one step more than this (spec §3.5)
STEP_LIMIT = 20


@dataclass(frozen=True)
class LoopRecord:
    """What driving one sample leaves.

    Attributes:
        id: the sample's id.
        result: per turn played, the raw output of each query, as bfcl's result file stores it (spec §1.5): FC, a
            list of one-key `{name: arguments}` dicts when the message had tool calls, else its `content`; prompt
            mode, the `content`. Fewer turns than the sample has when it was force-quit before its last turn.
        queries: how many requests were sent.
        force_quit: whether a turn hit the step limit (the turns after it were not played).
        requests: the request bodies in order, when asked for (else empty).
    """

    id: str
    result: list[list[JSONValue]]
    queries: int
    force_quit: bool
    requests: list[JSONObject] = field(default_factory=list, repr=False)

    def entry(self) -> JSONObject:
        """The result-file entry's `id` and `result` (bfcl adds token counts, latency and its log)."""
        return {"id": self.id, "result": [list(steps) for steps in self.result]}


def generation_name(model: str, sample_id: str) -> str:
    """The instance-name prefix of bfcl's generation side: the model name with `/`, `-` and `.` made `_` (spec
    §2.1), then the sample id."""
    return re.sub(r"[/.-]", "_", model) + "_" + sample_id


async def drive(sample: MultiTurnSample, ask: Ask, *, protocol: ProtocolName, templates: Templates, tables: Tables,
                model: str, today: date | None = None, keep_requests: bool = False) -> LoopRecord:
    """Play one sample with the model behind `ask`, executing its calls on fresh generation-side instances.

    Args:
        sample: the sample.
        ask: sends one request body (no model, no sampling keys) and returns the assistant message.
        protocol: "fc" (tools, tool calls and tool messages) or "prompt" (the docs in a system prompt, calls as
            Python text, results fed back as a user message), spec §3.1.
        templates: the pinned wheel's texts (templates.py).
        tables: the API classes' tables.
        model: the model name as sent to the server; it names the instances (spec §2.1), which shows only where
            bfcl's rewrite of call text makes it show.
        today: TravelAPI's today (None: the real one).
        keep_requests: keep every request body in the record.
    """
    side = Side.create(sample, tables, generation_name(model, sample.id), today=today)
    return await run_turns(sample, ask, protocol=protocol, templates=templates, execute=side.execute,
                           keep_requests=keep_requests)


async def run_turns(sample: MultiTurnSample, ask: Ask, *, protocol: ProtocolName, templates: Templates,
                    execute: Callable[[Sequence[str]], list[str]], keep_requests: bool = False,
                    blocking: bool = False) -> LoopRecord:
    """`drive` with the execution given: `execute(calls)` runs decoded call strings and returns their results;
    `blocking`: it waits on the network (web search), so it runs in a thread and the loop goes on meanwhile."""
    fc = protocol == "fc"
    decode = decode_fc if fc else decode_prompt
    functions = hinted_functions(templates, sample.category, list[JSONValue](sample.functions))
    tools = [fc_tool(templates, function) for function in functions] if fc else []
    system = None if fc else system_prompt(templates, functions)  # built once: a held-out turn leaves it be
    messages: list[JSONValue] = []
    result: list[list[JSONValue]] = []
    requests: list[JSONObject] = []
    queries = 0
    force_quit = False
    for index, turn in enumerate(sample.turns):
        user: list[JSONValue] = copy.deepcopy(list[JSONValue](turn))
        held_out = sample.held_out.get(index)
        if held_out is not None:  # the turn's own messages are none (spec §1.2): a fixed one says what is new
            if fc:  # appended after the others, without the Python hint (spec §1.3, §3.2)
                tools += [fc_tool(templates, doc) for doc in held_out]
                user = [{"role": "user", "content": templates.held_out_fc}]
            else:
                user = [{"role": "user", "content": fill(templates.held_out_prompting, str(held_out))}]
        if system is not None and index == 0:
            user = _with_system(user, system)
        messages += user
        steps: list[JSONValue] = []
        count = 0
        while True:
            body: JSONObject = {"messages": copy.deepcopy(messages)}
            if tools:  # bfcl sends no `tools` key for an empty list (openai_completion.py:79-94)
                body["tools"] = copy.deepcopy(list[JSONValue](tools))
            if keep_requests:
                requests.append(copy.deepcopy(body))
            message = await ask(body)
            queries += 1
            raw, ids = _fc_output(message) if fc else (message.get("content"), [])
            steps.append(copy.deepcopy(raw))
            messages.append(copy.deepcopy(message))  # echoed as received, every field (spec §3.3 step 2)
            try:
                calls = decode(raw)
            except Undecodable:  # a tool-call message stays in the history unanswered (spec §3.3, dangling)
                break
            if not calls:
                break
            results = await asyncio.to_thread(execute, calls) if blocking else execute(calls)
            if fc:
                messages += [{"role": "tool", "content": text, "tool_call_id": call_id}
                             for text, call_id in zip(results, ids, strict=False)]
            else:  # one user message: the Python repr of the results, named by the decoded call (spec §3.4)
                feedback = [{"role": "tool", "name": call, "content": text}
                            for call, text in zip(calls, results, strict=False)]
                messages.append({"role": "user", "content": repr(feedback)})
            count += 1
            if count > STEP_LIMIT:
                force_quit = True
                break
        result.append(steps)
        if force_quit:  # the remaining turns are skipped (spec §3.5)
            break
    return LoopRecord(sample.id, result, queries, force_quit, requests)


def _with_system(messages: list[JSONValue], system: str) -> list[JSONValue]:
    """The first turn's messages with the system prompt put first, or before an existing system message's text
    (spec §3.4; bfcl §2.1.3)."""
    first = messages[0] if messages else None
    if isinstance(first, dict) and first.get("role") == "system":
        first["content"] = system + "\n\n" + str(first.get("content"))
        return messages
    return [{"role": "system", "content": system}, *messages]


def _fc_output(message: JSONObject) -> tuple[JSONValue, list[JSONValue]]:
    """A message's raw FC output and its tool-call ids (spec §3.3 step 1): `[{name: arguments}, ...]` when it has
    a list of tool calls, else its `content` (no ids).

    As the SDK reads a message (measured, openai 3.63.0): a missing `id`, `name` or `arguments` is None; a tool
    call that is no object, or whose `function` is none, or a name that cannot be a dict key, makes bfcl fall
    back to the content. A name that is not a string is keyed as the result file's JSON keys it."""
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return message.get("content"), []
    outputs: list[JSONValue] = []
    ids: list[JSONValue] = []
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(call, dict) or not isinstance(function, dict):
            return message.get("content"), []
        name = function.get("name")
        if isinstance(name, (list, dict)):  # unhashable
            return message.get("content"), []
        outputs.append({name if isinstance(name, str) else json.dumps(name): function.get("arguments")})
        ids.append(call.get("id"))
    return outputs, ids
