"""What one agent episode produced, in the shape upstream's generation step writes it (toolalpaca-gpt4tools §2.10)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias, TypedDict

from ...json_value import JSONObject

__all__ = ["ITERATION_LIMIT_ERROR", "Episode", "Observation", "Step", "TraceEntry"]

# The retrieval tool returns a dict; everything else returns text. Upstream stringifies with str(), so a dict
# shows as its Python repr wherever it is rendered (§2.8).
Observation: TypeAlias = "str | JSONObject"


class _TraceKind(TypedDict):
    kind: str  # "agent", "simulator", "user" or "retrieval"


class TraceEntry(_TraceKind, total=False):
    """One model exchange of an episode: the messages sent (not for the agent, whose prompt the steps rebuild),
    the reply, and for the agent the number of the step it answered."""

    messages: list[dict[str, str]]
    reply: str
    step: int

# ToolAlpaca quirk: at the step cap langchain 0.0.147's forced stop returns only "output", while upstream's
# agent declares "output" and "Final Thought", so langchain's output-key check raises and generation.py records
# the episode as this error: never judged, an error instance (toolalpaca-gpt4tools §2.9). The sets are listed
# sorted here; upstream's order follows the process's string hashing.
ITERATION_LIMIT_ERROR = ("Did not get output keys that were expected. Got: {'intermediate_steps', 'output'}. "
                         "Expected: {'Final Thought', 'intermediate_steps', 'output'}.")


@dataclass(frozen=True)
class Step:
    """One tool step: what the model asked for and what it was told.

    Attributes:
        tool: the action name as parsed (stripped), valid or not.
        tool_input: the action input as parsed (spaces, then double quotes, stripped from both ends).
        log: the model's raw text for this step; the next prompt's scratchpad repeats it.
        observation: what the tool returned.
    """

    tool: str
    tool_input: str
    log: str
    observation: Observation


@dataclass(frozen=True)
class Episode:
    """The outcome of one instruction.

    Attributes:
        input: the agent's input (the instruction, plus the authentication line in real mode).
        output: the final response; None on error (the step cap included).
        final_thought: the text before the last response marker; None on error.
        steps: the tool steps taken, in order.
        error: why the episode crashed (upstream records only ``{"error": ...}`` then), else None.
        trace: every model exchange of the episode (agent, simulator, user, retrieval) for logs and replay.
    """

    input: str
    output: str | None = None
    final_thought: str | None = None
    steps: tuple[Step, ...] = ()
    error: str | None = None
    trace: tuple[TraceEntry, ...] = field(default=(), repr=False, compare=False)

    @property
    def stopped(self) -> bool:
        """True when the step cap ended the episode (recorded as upstream's error, its steps kept here)."""
        return self.error == ITERATION_LIMIT_ERROR

    @property
    def judgeable(self) -> bool:
        """Whether upstream sends this episode to the judge: no crash and at least one tool step (§4.1)."""
        return self.error is None and len(self.steps) > 0

    def to_record(self) -> JSONObject:
        """The upstream instance record: ``{"error": ...}``, or input/output/Final Thought/intermediate_steps."""
        if self.error is not None:
            return {"error": self.error}
        record: JSONObject = {"input": self.input, "output": self.output}
        if self.final_thought is not None:
            record["Final Thought"] = self.final_thought
        record["intermediate_steps"] = [
            [[step.tool, step.tool_input, step.log], step.observation] for step in self.steps
        ]
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Episode:
        """Read an upstream instance record (as written by generation.py) back into an Episode.

        Any: its values go into the Episode as the file has them, as upstream's judge reads them."""
        if "error" in record and "intermediate_steps" not in record:
            return cls(input=str(record.get("input", "")), error=str(record["error"]))
        steps = tuple(
            Step(tool=str(action[0]), tool_input=str(action[1]), log=str(action[2]) if len(action) > 2 else "",
                 observation=observation)
            for action, observation in record.get("intermediate_steps", [])
        )
        return cls(
            input=str(record.get("input", "")),
            output=None if record.get("output") is None else str(record["output"]),
            final_thought=record.get("Final Thought"),
            steps=steps,
        )
