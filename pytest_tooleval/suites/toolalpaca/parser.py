"""The test_v1 agent output format: role-tagged markers, parsed as upstream's second custom parser does.

toolalpaca-gpt4tools §2.2 (markers, stop strings, scratchpad) and §2.4 (parsing).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "LLM_PREFIX",
    "OBSERVATION_PREFIX",
    "RESPONSE_MARKER",
    "STOP_SEQUENCES",
    "AgentAction",
    "AgentFinish",
    "OutputParseError",
    "apply_stop",
    "parse_output",
]

RESPONSE_MARKER = "ASSISTANT Response:"
OBSERVATION_PREFIX = "ASSISTANT Observation: "
LLM_PREFIX = "ASSISTANT Thought:"
# langchain stops at the observation prefix without its trailing space, after a newline or a newline and tab.
STOP_SEQUENCES = ("\n" + OBSERVATION_PREFIX.rstrip(), "\n\t" + OBSERVATION_PREFIX.rstrip())

# "ASSISTANT Action <n>:" up to the end of its line, then the next line "ASSISTANT Action <n> Input <n>:" and
# everything after it. Whitespace between the words is optional and may include newlines, as upstream's
# pattern allows.
# The test_v1 action form is "ASSISTANT Action <n>: <tool>" followed, on a later line, by "ASSISTANT Action <n>
# Input <n>: <input>". Matching it as one lazy pattern backtracks quadratically on a long reply of repeated
# headers, so the two headers are found one after the other: the first action header, then the first input
# header after it, which is exactly what the single pattern would pick (an input header never matches the
# action header: it has "Input" before its colon).
_ACTION_HEADER = re.compile(r"ASSISTANT\s*Action\s*\d*\s*:")
_INPUT_HEADER = re.compile(r"\nASSISTANT\s*Action\s*\d*\s*Input\s*\d*\s*:\s*")


@dataclass(frozen=True)
class AgentAction:
    tool: str
    tool_input: str
    log: str


@dataclass(frozen=True)
class AgentFinish:
    output: str
    final_thought: str
    log: str


class OutputParseError(ValueError):
    """The model's text is neither a response nor an action: upstream ends the episode with this message."""


def apply_stop(text: str, stops: tuple[str, ...] = STOP_SEQUENCES) -> str:
    """The text before the first stop string, as langchain cuts a local model's generation (§2.3).

    Harmless when the endpoint already stopped there.
    """
    cut = len(text)
    for stop in stops:
        position = text.find(stop)
        if position != -1:
            cut = min(cut, position)
    return text[:cut]


def parse_output(text: str) -> AgentAction | AgentFinish:
    """One model turn as an action or a final response.

    Raises:
        OutputParseError: neither marker form is present; its message is upstream's.
    """
    # ToolAlpaca quirk: a response marker anywhere wins over an action in the same text (toolalpaca-gpt4tools §2.4)
    if RESPONSE_MARKER in text:
        before, _, after = text.rpartition(RESPONSE_MARKER)
        return AgentFinish(output=after.strip(), final_thought=before.strip(), log=text)
    action = _ACTION_HEADER.search(text)
    given = _INPUT_HEADER.search(text, action.end()) if action is not None else None
    if action is None or given is None:
        raise OutputParseError(f"Could not parse LLM output: `{text}`")
    # ToolAlpaca quirk: only spaces, then double quotes, are stripped from the input; newlines stay
    # (toolalpaca-gpt4tools §2.4)
    tool_input = text[given.end():].strip(" ").strip('"')
    return AgentAction(tool=text[action.end():given.start()].strip(), tool_input=tool_input, log=text)
