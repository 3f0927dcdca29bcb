"""What bfcl sends a chat model for one single-turn question, in its prompting and FC modes (bfcl §2).

Pure functions of (templates, category, question entry): the entry is never changed (bfcl edits its copy in
place; we work on a deep copy). The texts come from the pinned wheel (templates.py); the rules that arrange
them are bfcl's, each pointing at the section that describes it.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from .data import language_of
from .templates import Templates, fill

# bfcl's generation defaults for an OpenAI-compatible chat model (bfcl §2.3): its CLI's temperature, and the
# request never asks the provider to keep the conversation. No max_tokens, no tool_choice.
UPSTREAM_TEMPERATURE = 0.001
UPSTREAM_SAMPLING: dict[str, Any] = {"temperature": UPSTREAM_TEMPERATURE, "store": False}


def upstream_sampling() -> dict[str, Any]:
    """The sampling keys bfcl adds to every request (a fresh dict, safe to update)."""
    return dict(UPSTREAM_SAMPLING)


@dataclass(frozen=True)
class BfclRequest:
    """The body bfcl sends, less the model name and the sampling keys.

    Attributes:
        messages: the chat messages.
        tools: FC mode's tool list; None in prompt mode, and in FC mode when the question has no function (bfcl
            then sends no `tools` key at all, bfcl §2.2).
    """

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None


def prompt_request(templates: Templates, category: str, entry: dict[str, Any]) -> BfclRequest:
    """The messages of bfcl's default prompting format: the system prompt with the function docs as JSON, put
    before the question's own system text when it has one (bfcl §2.1)."""
    functions = hinted_functions(templates, category, entry["function"])
    # bfcl's docs: indented by 4, ASCII-escaped, the standard separators (bfcl §2.1.1)
    system = templates.system_before + json.dumps(functions, indent=4) + templates.system_after
    messages: list[dict[str, Any]] = copy.deepcopy(entry["question"][0])
    if messages and messages[0].get("role") == "system":  # (bfcl §2.1.3)
        messages[0]["content"] = system + "\n\n" + str(messages[0].get("content"))
    else:
        messages.insert(0, {"role": "system", "content": system})
    return BfclRequest(messages, None)


def fc_request(templates: Templates, category: str, entry: dict[str, Any]) -> BfclRequest:
    """The messages (the question as it is) and the tools of bfcl's OpenAI FC handler (bfcl §2.2)."""
    tools = [fc_tool(templates, function) for function in hinted_functions(templates, category, entry["function"])]
    messages: list[dict[str, Any]] = copy.deepcopy(entry["question"][0])
    return BfclRequest(messages, tools or None)


def fc_name(name: str) -> str:
    """A function's name as FC mode sends it: OpenAI's names allow no dot (bfcl §2.2.1)."""
    return name.replace(".", "_")


def fc_name_map(entry: dict[str, Any]) -> dict[str, str]:
    """{name as sent in FC mode: the function's own name}; the first function wins if two names fold together."""
    names: dict[str, str] = {}
    for function in entry["function"]:
        names.setdefault(fc_name(str(function["name"])), str(function["name"]))
    return names


# ------------------------------------------------------------------------------------------ language hints


def hinted_functions(templates: Templates, category: str, functions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A deep copy of the function docs as bfcl loads them: each description ends with its language's hint,
    and a Java or JavaScript parameter becomes a string whose description says what it stands for (bfcl §2.1.2).
    Both modes send these docs."""
    language = language_of(category)
    hinted: list[dict[str, Any]] = copy.deepcopy(functions)
    for function in hinted:
        function["description"] = function["description"] + templates.language_hints[language]
        if language == "python":
            continue
        notes = templates.java_notes if language == "java" else templates.javascript_notes
        listed = ("ArrayList", "Array") if language == "java" else ("array",)
        for parameter in function["parameters"]["properties"].values():
            kind = parameter["type"]
            note = fill(notes["any"]) if kind == "any" else fill(notes["typed"], str(kind))
            if kind in listed:
                note += fill(notes["items"], str(parameter["items"]["type"]))
                del parameter["items"]
            if language == "javascript" and kind == "dict" and "properties" in parameter:
                note += fill(notes["schema"], json.dumps(parameter["properties"]))
                del parameter["properties"]
            parameter["description"] = parameter["description"] + note
            parameter["type"] = "string"
    return hinted


# ------------------------------------------------------------------------------------------ FC tools


def fc_tool(templates: Templates, function: dict[str, Any]) -> dict[str, Any]:
    """One hinted function doc as an OpenAI chat-completions tool (bfcl §2.2)."""
    tool = copy.deepcopy(function)
    tool["name"] = fc_name(str(tool["name"]))
    tool["parameters"]["type"] = "object"
    tool["parameters"]["properties"] = _openapi_properties(templates, tool["parameters"]["properties"])
    return {"type": "function", "function": tool}


def _openapi_properties(templates: Templates, properties: dict[str, Any]) -> dict[str, Any]:
    """bfcl's type names turned into JSON Schema's, in place, as deep as bfcl goes (bfcl §2.2.2): nested objects'
    properties, an array's item type, an array of arrays' inner item type, an array of objects' properties."""
    types = templates.openapi_types
    for parameter in properties.values():
        kind = parameter.get("type")
        if kind == "float":  # a float keeps a trace of itself: a format and a sentence (bfcl §2.2.2)
            parameter["format"] = "float"
            parameter["description"] = parameter["description"] + templates.float_note
        parameter["type"] = types.get(kind, "string") if isinstance(kind, str) else "string"
        if parameter["type"] not in ("array", "object"):
            continue
        if "properties" in parameter:
            parameter["properties"] = _openapi_properties(templates, parameter["properties"])
        elif "items" in parameter:
            items = parameter["items"]
            items["type"] = types[items["type"]]
            if items["type"] == "array" and "items" in items:
                items["items"]["type"] = types[items["items"]["type"]]
            elif items["type"] == "object" and "properties" in items:
                items["properties"] = _openapi_properties(templates, items["properties"])
    return properties
