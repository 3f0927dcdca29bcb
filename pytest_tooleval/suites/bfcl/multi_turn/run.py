"""A multi-turn sample in a run: asked through the run's model access, judged by the checker
(docs/bfcl-multi-turn.md#in-a-run).

The loop (loop.py) asks one request per step; each goes through the run's chat function, so the shared pool,
the response cache, retries, adaptive concurrency and the progress line see every query. The answer kept is the
result entry bfcl's result file would hold: per turn, the raw output of each query.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date

from ....json_value import JSONObject, JSONValue
from ....models.access import ModelAccess
from ....models.base import Reply
from ....models.meter import Meter
from ....outcome import Answer
from ....verdict import Verdict
from ..templates import Templates
from .checker import judge
from .decode import decode_fc, decode_prompt
from .failure import failure_view
from .loop import Ask, ProtocolName, drive
from .sample import MultiTurnSample
from .tables import Tables


def assistant_message(reply: Reply) -> JSONObject:
    """The assistant message to send back: as the server sent it, or, for a reply cached before messages were
    kept, rebuilt from what the reply holds (text, native calls, reasoning)."""
    if reply.message is not None:
        return reply.message
    message: JSONObject = {"role": "assistant", "content": reply.text if reply.text or not reply.tool_calls else None}
    if reply.tool_calls:
        message["tool_calls"] = [{"id": call.id, "type": "function",
                                  "function": {"name": call.name, "arguments": call.arguments}}
                                 for call in reply.tool_calls]
    if reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    return message


def metered_ask(meter: Meter, sampling: Mapping[str, object], reasoning: list[str]) -> Ask:
    """The loop's `ask` over a metered chat function: each request body sent with the run's sampling keys, the
    reply's reasoning kept in `reasoning`."""

    async def ask(body: JSONObject) -> JSONObject:
        sent = body.get("messages")
        messages = [message for message in sent if isinstance(message, dict)] if isinstance(sent, list) else []
        tools = body.get("tools")
        reply = await meter(messages, **({"tools": tools} if isinstance(tools, list) else {}), **sampling)
        if reply.reasoning:
            reasoning.append(reply.reasoning)
        return assistant_message(reply)

    return ask


async def answer(sample: MultiTurnSample, protocol: ProtocolName, access: ModelAccess, *, templates: Templates,
                 tables: Tables, sampling: Mapping[str, object], today: date | None = None) -> Answer:
    """Play the sample with the model under test; the answer's output is the result entry's `result`."""
    assert access.chat is not None
    meter = Meter(access.chat)
    reasoning: list[str] = []
    record = await drive(sample, metered_ask(meter, sampling, reasoning), protocol=protocol, templates=templates,
                         tables=tables, model=access.model, today=today)
    output: list[JSONValue] = [list(steps) for steps in record.result]
    return Answer(output, meter.latency_s, dict(meter.tokens), reasoning="\n\n".join(reasoning) or None,
                  state={"queries": record.queries, "force_quit": record.force_quit})


def score(sample: MultiTurnSample, protocol: ProtocolName, output: JSONValue, tables: Tables) -> Verdict:
    """bfcl-eval's verdict on a stored result (pure but for the checker's time bound); a failure as the failure
    view shows it (failure.py)."""
    found = judge(sample, output, decode_fc if protocol == "fc" else decode_prompt, tables)
    if found.valid:
        return Verdict(True, details={"mode": protocol})
    view = failure_view(sample, protocol, output, found)
    return Verdict(False, found.error_type or "", view.error, calls=view.calls, details=view.details)
