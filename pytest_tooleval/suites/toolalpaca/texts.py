"""The prompt texts a ToolAlpaca run reads from the data folder: values that data.py builds (load_prompts) and
prompts.py renders, in a leaf module so that neither of the two imports the other for them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Prompts:
    """Every prompt text evaluation uses, as read from the data folder.

    Attributes:
        evaluation: prompts/Evaluation.txt (the judge template, ``$``-placeholders).
        simulator: prompts/Simulator.txt.
        get_details: prompts/get_details.txt (the user simulator's instructions).
        retrieval: prompts/retrieval.txt.
        agent: the test_v1 agent prompt constants.
        helper_descriptions: tool name -> upstream's raw description (format-escaped, doubled braces) for
            getDetails and retrievalDataFromFile; empty when the data folder does not provide them.
    """

    evaluation: str
    simulator: str
    get_details: str
    retrieval: str
    agent: AgentPromptParts
    helper_descriptions: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class AgentPromptParts:
    """The three test_v1 constants: prefix, format instructions (with ``{tool_names}``), suffix."""

    prefix: str
    format_instructions: str
    suffix: str
