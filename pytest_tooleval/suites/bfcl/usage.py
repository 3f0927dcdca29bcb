"""What bfcl's cost and latency columns count of one sample (docs/bfcl.md#cost-and-latency), carried from its answer
to its report row (the verdict's `usage` detail) for the summary.

A replayed sample carries what its bfcl result row holds (`latency`, `input_token_count`, `output_token_count`,
counted as bfcl counts them), under the model whose folder holds the row. A live sample carries each request's
latency and token counts as this run measured them, under the model `--tooleval-model` names: bfcl records one
value per request too (per turn and step in a multi-turn row, which it flattens), so the figures are its arithmetic
on our measurements. A memory question's prerequisite conversations are left out, as bfcl keeps them in result files
its leaderboard does not read. Each row also carries the model's prices from the pinned wheel (prices.py), or why
there are none, so the summary needs nothing but the rows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from ...json_value import JSONObject
from ...models.access import ChatFn
from ...models.base import Reply
from ...outcome import Answer, SampleResult
from ...verdict import QUIET_DETAIL
from .cost import KEYS, counted
from .prices import PriceTable

STATE = "bfcl_usage"  # its key in an Answer's state
DETAIL = f"{QUIET_DETAIL}usage"  # its key in a verdict's details: in the report, not in a failure's text
#: the key under which the replay reader puts the model whose folder holds a result row
MODEL = "bfcl_model"
REPLAY, MEASURED = "replay", "measured"


class Requests:
    """A chat function that keeps each reply's latency and token counts, in the order the replies came."""

    def __init__(self, chat: ChatFn) -> None:
        self.chat = chat
        self.replies: list[tuple[float, int | None, int | None]] = []

    async def __call__(self, messages: Sequence[Mapping[str, object]], **overrides: object) -> Reply:
        reply = await self.chat(messages, **overrides)
        self.replies.append((reply.latency_s, reply.prompt_tokens, reply.completion_tokens))
        return reply

    def measured(self, answer: Answer, model: str) -> Answer:
        """The answer with its requests' counts in its state, those of prerequisite conversations it played first
        left out (memory/run.py says how many, and plays them before the question)."""
        state = answer.state if isinstance(answer.state, dict) else {}
        skipped = state.get("prerequisite_queries")
        kept = self.replies[skipped if isinstance(skipped, int) and skipped > 0 else 0:]
        columns = list(zip(*kept, strict=True)) if kept else [(), (), ()]
        usage = {"basis": MEASURED, "model": model,
                 **{key: counted([list(values)]) for key, values in zip(KEYS, columns, strict=True)}}
        return dataclasses.replace(answer, state={**state, STATE: usage})


def replayed_state(row: Mapping[str, Any]) -> dict[str, Any] | None:
    """The state of a replayed answer: what bfcl counts of its result row, or None when the row carries none of the
    three keys (a folder bfcl did not generate, or an inference error's row)."""
    if not any(key in row for key in KEYS):
        return None
    model = row.get(MODEL)
    return {STATE: {"basis": REPLAY, "model": model if isinstance(model, str) else None,
                    **{key: counted(row.get(key)) for key in KEYS}}}


def with_usage(result: SampleResult, answer: Answer, prices: PriceTable | str | None) -> SampleResult:
    """The result with its answer's counts in the verdict's details, priced (`prices`: the pinned wheel's table,
    or why it could not be read); unchanged when the answer carries none (the oracle's, an older replay's)."""
    usage = answer.state.get(STATE) if isinstance(answer.state, dict) else None
    if not isinstance(usage, dict):
        return result
    detail = {**usage, **priced(usage.get("model"), prices)}
    verdict = dataclasses.replace(result.verdict, details={**result.verdict.details, DETAIL: detail})
    return dataclasses.replace(result, verdict=verdict)


def priced(model: object, prices: PriceTable | str | None) -> JSONObject:
    """{"pricing": the model's} or {"unpriced": why there is none}."""
    if not isinstance(model, str):
        return {"unpriced": "the replayed rows lie in no model folder of bfcl's result layout (result/<model>/...), "
                            "so bfcl would not know whose prices to take"}
    if not isinstance(prices, PriceTable):
        return {"unpriced": prices or "bfcl's price table was not read"}
    pricing = prices.pricing(model)
    if pricing is None:
        from .upstream import load_pin

        return {"unpriced": f"bfcl-eval {load_pin().version} does not know the model {model!r} (its leaderboard "
                            "stops with KeyError there)"}
    return {"pricing": pricing.content()}
