"""What bfcl sends a chat model for one single-turn question, in its prompting and FC modes (bfcl §2).

Pure functions of (templates, category, question entry): the entry is never changed (bfcl edits its copy in
place; we work on a deep copy). The texts come from the pinned wheel (templates.py); the rules that arrange
them are bfcl's, each pointing at the section that describes it.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass

from ...json_value import JSONObject, JSONValue
from ..json_ops import as_getter, as_object, concat, item
from .data import language_of
from .templates import Templates, fill

# bfcl's generation defaults for an OpenAI-compatible chat model (bfcl §2.3): its CLI's temperature, and the
# request never asks the provider to keep the conversation. No max_tokens, no tool_choice.
UPSTREAM_TEMPERATURE = 0.001
UPSTREAM_SAMPLING: dict[str, object] = {"temperature": UPSTREAM_TEMPERATURE, "store": False}


def upstream_sampling() -> dict[str, object]:
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

    messages: JSONValue
    tools: list[JSONObject] | None


def prompt_request(templates: Templates, category: str, entry: JSONObject) -> BfclRequest:
    """The messages of bfcl's default prompting format: the system prompt with the function docs as JSON, put
    before the question's own system text when it has one (bfcl §2.1)."""
    system = system_prompt(templates, hinted_functions(templates, category, entry["function"]))
    messages = _first_turn(entry)
    if messages and as_getter(_first(messages)).get("role") == "system":  # (bfcl §2.1.3)
        first = as_object(_first(messages))
        first["content"] = system + "\n\n" + str(first.get("content"))
    else:
        if not isinstance(messages, list):  # bfcl calls `insert` on it
            raise AttributeError(f"'{type(messages).__name__}' object has no attribute 'insert'")
        messages.insert(0, {"role": "system", "content": system})
    return BfclRequest(messages, None)


def system_prompt(templates: Templates, functions: list[JSONObject]) -> str:
    """bfcl's default system prompt around the (hinted) function docs (bfcl §2.1; multi-turn:
    bfcl-multiturn §3.4)."""
    # bfcl's docs: indented by 4, ASCII-escaped, the standard separators (bfcl §2.1.1)
    return templates.system_before + json.dumps(functions, indent=4) + templates.system_after


def fc_request(templates: Templates, category: str, entry: JSONObject) -> BfclRequest:
    """The messages (the question as it is) and the tools of bfcl's OpenAI FC handler (bfcl §2.2)."""
    tools = [fc_tool(templates, function) for function in hinted_functions(templates, category, entry["function"])]
    return BfclRequest(_first_turn(entry), tools or None)


def _first_turn(entry: JSONObject) -> JSONValue:
    """A deep copy of ``entry["question"][0]``, the messages of the question's first turn."""
    return copy.deepcopy(_first(entry["question"]))


def _first(value: JSONValue) -> JSONValue:
    """``value[0]``: an IndexError for an empty list or string, a KeyError for an object, a TypeError for a
    scalar."""
    if isinstance(value, (list, str)):
        return value[0]
    if isinstance(value, dict):
        raise KeyError(0)
    raise TypeError(f"'{type(value).__name__}' object is not subscriptable")


def fc_name(name: str) -> str:
    """A function's name as FC mode sends it: OpenAI's names allow no dot (bfcl §2.2.1)."""
    return name.replace(".", "_")


def fc_name_map(entry: JSONObject) -> dict[str, str]:
    """{name as sent in FC mode: the function's own name}; the first function wins if two names fold together."""
    names: dict[str, str] = {}
    functions = entry["function"]
    if not isinstance(functions, (list, dict, str)):
        raise TypeError(f"'{type(functions).__name__}' object is not iterable")
    for function in functions:
        names.setdefault(fc_name(str(item(function, "name"))), str(item(function, "name")))
    return names


# ------------------------------------------------------------------------------------------ language hints


def hinted_functions(templates: Templates, category: str, functions: JSONValue) -> list[JSONObject]:
    """A deep copy of the function docs as bfcl loads them: each description ends with its language's hint,
    and a Java or JavaScript parameter becomes a string whose description says what it stands for (bfcl §2.1.2).
    Both modes send these docs."""
    language = language_of(category)
    if not isinstance(functions, (list, dict, str)):
        raise TypeError(f"'{type(functions).__name__}' object is not iterable")
    hinted: list[JSONObject] = []
    for value in copy.deepcopy(functions):
        function = as_object(value)  # bfcl assigns to each function doc: anything but an object fails there
        hinted.append(function)
        function["description"] = concat(function["description"], templates.language_hints[language])
        if language == "python":
            continue
        notes = templates.java_notes if language == "java" else templates.javascript_notes
        listed = ("ArrayList", "Array") if language == "java" else ("array",)
        for value in as_getter(item(item(function, "parameters"), "properties")).values():
            parameter = as_object(value)
            kind = parameter["type"]
            note = fill(notes["any"]) if kind == "any" else fill(notes["typed"], str(kind))
            if kind in listed:
                note += fill(notes["items"], str(item(parameter["items"], "type")))
                del parameter["items"]
            if language == "javascript" and kind == "dict" and "properties" in parameter:
                note += fill(notes["schema"], json.dumps(parameter["properties"]))
                del parameter["properties"]
            parameter["description"] = concat(parameter["description"], note)
            parameter["type"] = "string"
    return hinted


# ------------------------------------------------------------------------------------------ FC tools


def fc_tool(templates: Templates, function: JSONObject) -> JSONObject:
    """One hinted function doc as an OpenAI chat-completions tool (bfcl §2.2)."""
    tool = copy.deepcopy(function)
    tool["name"] = fc_name(str(tool["name"]))
    parameters = as_object(tool["parameters"])
    parameters["type"] = "object"
    parameters["properties"] = _openapi_properties(templates, parameters["properties"])
    return {"type": "function", "function": tool}


def _openapi_properties(templates: Templates, properties: JSONValue) -> JSONObject:
    """bfcl's type names turned into JSON Schema's, in place, as deep as bfcl goes (bfcl §2.2.2): nested objects'
    properties, an array's item type, an array of arrays' inner item type, an array of objects' properties."""
    types = templates.openapi_types
    properties = as_getter(properties)  # bfcl calls `.values()` on it
    for value in properties.values():
        kind = as_getter(value).get("type")
        parameter = as_object(value)
        if kind == "float":  # a float keeps a trace of itself: a format and a sentence (bfcl §2.2.2)
            parameter["format"] = "float"
            parameter["description"] = concat(parameter["description"], templates.float_note)
        parameter["type"] = types.get(kind, "string") if isinstance(kind, str) else "string"
        if parameter["type"] not in ("array", "object"):
            continue
        if "properties" in parameter:
            parameter["properties"] = _openapi_properties(templates, parameter["properties"])
        elif "items" in parameter:
            items = as_object(parameter["items"])
            items["type"] = types[_key(items["type"])]
            if items["type"] == "array" and "items" in items:
                inner = as_object(items["items"])
                inner["type"] = types[_key(inner["type"])]
            elif items["type"] == "object" and "properties" in items:
                items["properties"] = _openapi_properties(templates, items["properties"])
    return properties


def _key(value: JSONValue) -> str:
    """`value` as a key of a dict of strings: a KeyError if it is no string (an unhashable one: a TypeError)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, dict)):
        raise TypeError(f"unhashable type: '{type(value).__name__}'")
    raise KeyError(value)
