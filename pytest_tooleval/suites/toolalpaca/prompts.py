"""Prompt rendering for the agent (test_v1), the judge, the user simulator, the retrieval helper and the API simulator.

The prompt texts themselves come from the data folder at run time (see data.load_prompts); this module only
assembles them the way upstream does (toolalpaca-gpt4tools §2.2, §2.6, §2.8, §4.2).
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .episode import Step
from .parser import LLM_PREFIX, OBSERVATION_PREFIX
from .texts import AgentPromptParts, Prompts

if TYPE_CHECKING:
    from .data import Api, GoldStep

__all__ = [
    "GET_DETAILS",
    "RETRIEVAL",
    "AgentPromptParts",
    "MissingPromptError",
    "Prompts",
    "ToolSpec",
    "agent_messages",
    "agent_tools",
    "render_agent_prompt",
    "render_judge_prompt",
    "render_retrieval_prompt",
    "render_scratchpad",
    "render_simulator_prompt",
    "render_user_prompt",
]

GET_DETAILS = "getDetails"
RETRIEVAL = "retrievalDataFromFile"
# external_tools entry -> tool name (upstream's tool projection; only "retrieval" occurs in the eval data)
EXTERNAL_TOOLS = {"retrieval": RETRIEVAL}

RETRIEVAL_INPUT_CHARS = 40_000  # the retrieval prompt sees at most this much of the offloaded file (§2.8)


class MissingPromptError(LookupError):
    """A prompt text the run needs is not in the data folder."""


@dataclass(frozen=True)
class ToolSpec:
    """One tool line of the agent prompt, as the prompt template holds it (braces doubled, §2.2)."""

    name: str
    template_description: str


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def agent_tools(api: Api, prompts: Prompts, *, with_get_details: bool = True) -> list[ToolSpec]:
    """The agent's tools in prompt order: getDetails, the external tools, then the API's functions (§2.2).

    Raises:
        MissingPromptError: a helper tool's description is not available from the data folder.
    """
    tools: list[ToolSpec] = []
    helpers = ([GET_DETAILS] if with_get_details else []) + [
        EXTERNAL_TOOLS[name] for name in api.record.external_tools if name in EXTERNAL_TOOLS
    ]
    for name in helpers:
        description = prompts.helper_descriptions.get(name)
        if description is None:
            raise MissingPromptError(
                f"the description of the {name} tool is not in the data folder: it lives in upstream "
                "agent/tools.py, which needs to be lifted into prompts.json (key 'agent/tools.py') or "
                "placed in the folder"
            )
        tools.append(ToolSpec(name, description))  # upstream writes these already escaped
    descriptions = api.record.Function_Description
    names = list(api.record.Function_Projection)
    for position, name in enumerate(names):
        description = _escape(descriptions[name])
        if position == len(names) - 1:
            # ToolAlpaca quirk: the shared-schema block is glued to the last function with no separator
            # (toolalpaca-gpt4tools §2.2)
            description += _escape(descriptions["components"])
        tools.append(ToolSpec(name, description))
    return tools


def _fill(template: str, values: Mapping[str, str]) -> str:
    """str.format for named fields only: doubled braces collapse, nothing in `values` is re-read.

    Raises:
        ValueError: the template names a field not in `values`, or uses a conversion or format spec.
    """
    out: list[str] = []
    for literal, name, spec, conversion in string.Formatter().parse(template):
        out.append(literal)
        if name is None:
            continue
        if name not in values or spec or conversion:
            raise ValueError(f"unexpected placeholder {{{name}}} in a prompt template")
        out.append(values[name])
    return "".join(out)


def render_agent_prompt(parts: AgentPromptParts, tools: Sequence[ToolSpec], user_input: str, scratchpad: str) -> str:
    """The full agent prompt, assembled as langchain's zero-shot agent does (§2.2).

    The four blocks are joined by blank lines into one template; the tool names are filled into the format
    instructions first, then the input and scratchpad into the whole, which is when doubled braces collapse.
    """
    tool_block = "\n".join(f"{tool.name}: {tool.template_description}" for tool in tools)
    format_instructions = _fill(parts.format_instructions, {"tool_names": ", ".join(tool.name for tool in tools)})
    template = "\n\n".join([parts.prefix, tool_block, format_instructions, parts.suffix])
    return _fill(template, {"input": user_input, "agent_scratchpad": scratchpad})


def render_scratchpad(steps: Sequence[Step]) -> str:
    """Each step's raw text, then its observation, then the thought prefix the model continues from (§2.2)."""
    return "".join(f"{step.log}\n{OBSERVATION_PREFIX}{step.observation}\n{LLM_PREFIX}" for step in steps)


def agent_messages(prompt: str) -> list[dict[str, str]]:
    """The agent prompt as chat messages: one user message, as langchain sends a plain prompt to a chat model."""
    return [{"role": "user", "content": prompt}]


def render_judge_prompt(
    template: str,
    *,
    documentation: str,
    instruction: str,
    gold: Sequence[GoldStep],
    steps: Sequence[Step],
    final_output: str,
) -> str:
    """The judge prompt for one judged episode (§4.2).

    Args:
        template: prompts/Evaluation.txt.
        documentation: the API's NLDocumentation.
        instruction: the raw instruction, without the authentication line.
        gold: the gold steps; their inputs pass through as written, placeholders included.
        steps: the episode's tool steps (at least one: episodes without steps are never judged).
        final_output: the episode's output (the iteration-limit string when the cap was hit).
    """
    standard = "".join(
        f"{number}. Function: {step.Action}\nParameters: {step.Action_Input}\n" for number, step in enumerate(gold, 1)
    )
    # ToolAlpaca quirk: the judge reads each observation under "Retruns:", misspelt (toolalpaca-gpt4tools §4.2)
    solution = "".join(
        f"{number}. Function: {step.tool}\nParameters: {step.tool_input}\nRetruns: {step.observation}\n"
        for number, step in enumerate(steps, 1)
    )
    solution += f"{len(steps) + 1}. Final Response: {final_output}"
    return string.Template(template).substitute(
        documentation=documentation, instruction=instruction, standard=standard, solution=solution
    )


def render_user_prompt(instructions: str, history: Sequence[tuple[str, object]]) -> str:
    """The getDetails user-simulator prompt: its instructions, then the chat as ``[User]: ...``/``[AI]: ...`` (§2.8).

    An AI turn holds the parsed question object, which shows as its Python repr, as upstream renders it.
    """
    return instructions + "\n" + "\n".join(f"[{role}]: {content}" for role, content in history)


def render_retrieval_prompt(template: str, file_content: str, query: object) -> str:
    return string.Template(template).substitute(output=file_content[:RETRIEVAL_INPUT_CHARS], query=query)


def render_simulator_prompt(template: str, *, name: str, documentation: str, request: str) -> str:
    # safe_substitute: a stray "$" in the template stays as it is, as upstream's simulator does (§2.6)
    return string.Template(template).safe_substitute(Name=name, Documentation=documentation, Request=request)
