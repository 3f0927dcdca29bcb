"""Native function calling ("fc" mode) for ACEBench: the functions go as OpenAI ``tools``, the history as messages.

`tool_schemas` translates a record's functions into tools, `fc_system_prompt` takes the text output-format
instructions out of an upstream system prompt, `history_messages` splits a transcript into chat messages.
All of it is pure and deterministic.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_tooleval.suites.acebench.decode import DecodeError, decode_fixed

__all__ = ["ToolSchemaError", "ToolSet", "fc_system_prompt", "history_messages", "tool_schemas"]

# --- tools --------------------------------------------------------------------------------------------

_VALID_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_INVALID_CHAR = re.compile(r"[^a-zA-Z0-9_-]")
# ACEBench's type names -> JSON Schema's (the data has dict, list, float, bool); None ("any") drops the keyword.
_TYPE_NAMES: dict[str, str | None] = {"dict": "object", "list": "array", "tuple": "array", "float": "number",
                                      "bool": "boolean", "any": None}
_KNOWN_TYPES = {"string", "number", "integer", "boolean", "object", "array", "null", *_TYPE_NAMES}
# Keywords holding a subschema, a list of them, or a name -> subschema map. Nothing else is a schema: an
# `enum`, `default` or `example` value that holds "type": "dict" is data and stays as it is.
_SUBSCHEMA = ("items", "additionalProperties", "not", "contains", "if", "then", "else", "propertyNames")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_KNOWN_KEYS = frozenset({"name", "description", "parameters", "arguments", "results", "tags"})
# `[\w-\.]`: in ECMA-262 (Annex B) a "-" next to a class escape is a literal "-"; Python's re, which checks
# the "regex" format, rejects the range. Escaping that "-" says the same thing in every dialect.
_CLASS_ESCAPE_DASH = re.compile(r"(?<!\\)(\\[dswDSW])-(?!\])")


class ToolSchemaError(ValueError):
    """A function cannot be sent as a tool; the message names the function and the place in its schema."""


@dataclass(frozen=True)
class ToolSet:
    """One sample's functions as OpenAI tools, and the tool name -> original ACEBench name map."""

    tools: list[dict[str, Any]]  # the tests index into it as theirs (tests/unit/acebench/test_acebench_fc.py)
    names: dict[str, str]

    def original(self, tool_name: str) -> str:
        """The ACEBench name behind `tool_name`, or `tool_name` itself when it is not one of these tools."""
        return self.names.get(tool_name, tool_name)

    def tool_name(self, original: str) -> str:
        """The tool name of the (first) function named `original`; for an unknown name, `original` made valid."""
        return next((tool for tool, name in self.names.items() if name == original), _valid_name(original))


def tool_schemas(functions: Sequence[object]) -> ToolSet:
    """A record's ``function`` list as chat-completions tools; the input is not changed.

    In every subschema the type names ``dict``, ``list``/``tuple``, ``float``, ``bool`` become ``object``,
    ``array``, ``number``, ``boolean`` and ``any`` drops ``type``; all other keywords stay. Two translations
    that keep the meaning: the atom categories' ``arguments`` (next to ``results``) is read as the parameters,
    and a ``pattern`` Python cannot compile for a ``-`` right after a class escape (``[\\w-\\.]``) gets it
    escaped. ``results`` (the return schema) and ``tags`` have no place in a tool and are left out; no schema
    at all (or None) is an object without properties. Names: each character outside ``[a-zA-Z0-9_-]``
    becomes ``_``, cut to 64; a taken name gets ``_2``, ``_3``, ...; already valid names are served first.

    Raises:
        ToolSchemaError: a function that is not a dict, has no name or an unexpected key, uses an unknown
            type name, or has a schema JSON Schema (draft 7) rejects.
    """
    converted: list[tuple[str, dict[str, object]]] = []
    for index, function in enumerate(functions):
        if not isinstance(function, dict) or not isinstance(function.get("name"), str) or not function["name"]:
            raise ToolSchemaError(f"function #{index}: expected a dict with a non-empty string 'name'")
        where, description = f"function {function['name']!r}", function.get("description")
        unexpected = sorted(set(function) - _KNOWN_KEYS)
        if unexpected or {"parameters", "arguments"} <= set(function):
            raise ToolSchemaError(f"{where}: unexpected key {unexpected[0]!r}" if unexpected
                                  else f"{where}: both 'parameters' and 'arguments'")
        if description is not None and not isinstance(description, str):
            raise ToolSchemaError(f"{where}: description: expected a string, got {type(description).__name__}")
        key = "arguments" if "arguments" in function else "parameters"
        raw = copy.deepcopy(function.get(key))
        parameters = {"type": "object", "properties": {}} if raw is None else _convert(raw, f"{where}: {key}")
        if not isinstance(parameters, dict) or parameters.get("type") != "object":
            raise ToolSchemaError(f"{where}: {key}: a tool's parameters must be an object schema")
        problem = _schema_problem(json.dumps(parameters, sort_keys=True, ensure_ascii=False, default=repr))
        if problem is not None:
            raise ToolSchemaError(f"{where}: {key}{problem}")
        described = {} if description is None else {"description": description}
        converted.append((function["name"], {**described, "parameters": parameters}))
    names = _unique_names([original for original, _ in converted])
    pairs = list(zip(names, converted, strict=True))
    return ToolSet(tools=[{"type": "function", "function": {"name": tool, **spec}} for tool, (_, spec) in pairs],
                   names={tool: original for tool, (original, _) in pairs})


@functools.lru_cache(maxsize=8192)
def _schema_problem(canonical: str) -> str | None:
    """What JSON Schema's meta-schema finds wrong with a converted schema (its place, then the problem), or None.

    Draft 7: as much as tools need, and a quarter of the 2020-12 meta-schema's cost (about 0.3 ms a function
    against 1.3 ms), which the process answering every sample pays; the same schema is checked once.
    """
    from jsonschema import Draft7Validator, SchemaError  # needed by this mode only

    try:
        Draft7Validator.check_schema(json.loads(canonical))
    except SchemaError as exc:
        return "".join(f"/{part}" for part in exc.absolute_path) + f": {exc.message}"
    return None


def _convert(schema: object, path: str) -> object:
    """`schema` (a private copy, changed in place) in JSON Schema's type names, through every subschema."""
    if isinstance(schema, bool):
        return schema
    if not isinstance(schema, dict):
        raise ToolSchemaError(f"{path}: a schema must be a dict, got {type(schema).__name__}")
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        unknown = [name for name in names if not isinstance(name, str) or name not in _KNOWN_TYPES]
        if unknown:
            raise ToolSchemaError(f"{path}/type: unknown type name {unknown[0]!r}")
        translated = [_TYPE_NAMES.get(name, name) for name in names]
        if None in translated:
            del schema["type"]
        else:
            schema["type"] = translated if isinstance(schema["type"], list) else translated[0]
    for keyword, value in schema.items():  # values are replaced, keys stay: safe while iterating
        if keyword == "pattern" and isinstance(value, str):
            schema[keyword] = _pattern(value)
        elif keyword in _SUBSCHEMA:
            schema[keyword] = _convert(value, f"{path}/{keyword}")
        elif keyword in _SUBSCHEMA_LISTS and isinstance(value, list):
            schema[keyword] = [_convert(item, f"{path}/{keyword}/{i}") for i, item in enumerate(value)]
        elif keyword in _SUBSCHEMA_MAPS and isinstance(value, dict):
            schema[keyword] = {key: _convert(item, f"{path}/{keyword}/{key}") for key, item in value.items()}
    return schema  # a keyword holding the wrong kind of value is left for check_schema to name


def _pattern(pattern: str) -> str:
    for candidate in (pattern, _CLASS_ESCAPE_DASH.sub(r"\1\\-", pattern)):
        try:
            re.compile(candidate)
            return candidate
        except re.error:
            pass
    return pattern  # another problem: check_schema names it


def _valid_name(name: str) -> str:
    return _INVALID_CHAR.sub("_", name)[:64] or "_"


def _unique_names(originals: list[str]) -> list[str]:
    # Valid names claim themselves first (a stable sort), so a renamed "a.b" never takes a real "a_b"'s name.
    chosen: dict[int, str] = {}
    for i in sorted(range(len(originals)), key=lambda i: not _VALID_NAME.fullmatch(originals[i])):
        name, suffix = _valid_name(originals[i]), 1
        while name in chosen.values():
            suffix += 1
            name = f"{_valid_name(originals[i])[: 63 - len(str(suffix))]}_{suffix}"
        chosen[i] = name
    return [chosen[i] for i in range(len(originals))]


# --- system prompt ------------------------------------------------------------------------------------

# A sentence ends after "。", or after a "." followed by a space; a line's list number ("1. If ...") is no sentence.
_SENTENCE_END = re.compile(r"(?:(?<=。)|(?<=\.)(?= ))( *)")
_LIST_NUMBER = re.compile(r"\s*\d+\.")
# what a line starts with before its first sentence: indentation, and a bullet or list number
_LINE_START = re.compile(r"\s*(?:[-*]\s+|\(\d+\)\s*|\d+[.)]?\s+)?")
_FORMAT_MARKERS = ("ApiName", '"["')
# The special categories still answer in words: the sentences stating those answers stay.
_SENTINELS = ('["There is incorrect value', '["Missing necessary parameters', '["Due to the limitations')


def fc_system_prompt(template: str) -> str:
    """`template` (an upstream system prompt before ``.format``) without its text output-format instructions.

    The rule, line by line: a line is split into sentences after a ``.`` followed by a space (a list number
    at the start of the line, as in ``1. If ...``, belongs to the sentence after it) and directly after a
    ``。``. A sentence containing ``ApiName`` or
    ``"["`` is an output-format instruction and is dropped, unless it holds one of the special categories'
    answer sentinels (``["There is incorrect value``, ``["Missing necessary parameters``, ``["Due to the
    limitations``). The kept sentences of a line are rejoined with the separators that followed them, after
    the line's indentation and bullet or list number when its first sentence was dropped; a line whose
    sentences were all dropped disappears with its newline; lines that were empty stay. The line that is
    exactly ``{function}`` and the heading line right before it go too: the functions travel as tools. The
    ``{time}`` and ``{profile}`` placeholders stay where they were.
    """
    lines = template.split("\n")
    for i in [i for i, line in enumerate(lines) if line == "{function}"][::-1]:
        del lines[i - 1 if i > 0 and lines[i - 1].strip() else i : i + 1]
    return "\n".join(line for line in map(_without_format, lines) if line is not None)


def _without_format(line: str) -> str | None:
    """`line` without its format sentences; None when nothing but format sentences (and blanks) was there."""
    pieces = _SENTENCE_END.split(line)
    sentences, separators = pieces[0::2], pieces[1::2]
    if len(sentences) > 1 and _LIST_NUMBER.fullmatch(sentences[0]):  # "1." + " If ...": one sentence
        sentences[:2] = [sentences[0] + separators[0] + sentences[1]]
        del separators[0]
    dropped = [any(m in s for m in _FORMAT_MARKERS) and not any(m in s for m in _SENTINELS) for s in sentences]
    if not any(dropped):
        return line
    kept = [i for i, sentence in enumerate(sentences) if not dropped[i] and sentence.strip()]
    if not kept:
        return None
    start = _LINE_START.match(sentences[0])
    lead = start.group(0) if dropped[0] and start else ""
    return lead + "".join(sentences[i] + (separators[i] if i != kept[-1] else "") for i in kept)


# --- history ------------------------------------------------------------------------------------------

_TURN = re.compile(r"(user|system):")
_TRAILING_BLANK_LINES = re.compile(r"\n\s*\Z")


def history_messages(question: str, tools: ToolSet | None = None) -> list[dict[str, object]]:
    """The ``user:``/``system:`` transcript of a normal or special question as chat messages.

    A line starting with ``user:`` or ``system:`` opens a turn (without the one space after the colon); other
    lines continue the turn before (lines before the first prefix make a user turn); a turn's trailing blank
    lines are dropped. A ``system`` turn starting with ``[`` that `decode_fixed` reads as named calls with JSON
    arguments, followed by a ``system`` turn that is not such a call list, is an assistant ``tool_calls``
    message (ids ``call_0``, ``call_1``, ... in order; names through `ToolSet.tool_name` when `tools` is given)
    and that next turn is one tool message per id, all with its text: OpenAI wants a result for every id, and
    the transcript gives one for all. Every other ``system`` turn, a call list without a result included, is an
    assistant text message. No prefix at all: one user message. The last turn may be a system turn.
    """
    lines = question.split("\n")
    if not any(_TURN.match(line) for line in lines):
        return [{"role": "user", "content": question}]
    turns: list[tuple[str, list[str]]] = []
    for line in lines:
        match = _TURN.match(line)
        if match:
            rest = line[match.end() :]
            turns.append((match.group(1), [rest[1:] if rest.startswith(" ") else rest]))
        elif turns:
            turns[-1][1].append(line)
        else:
            turns.append(("user", [line]))
    texts = [(role, _TRAILING_BLANK_LINES.sub("", "\n".join(body))) for role, body in turns]
    calls = [_calls(text) if role == "system" else None for role, text in texts]
    messages: list[dict[str, object]] = []
    index = 0
    while index < len(texts):
        (role, text), found = texts[index], calls[index]
        if found and index + 1 < len(texts) and texts[index + 1][0] == "system" and calls[index + 1] is None:
            first = sum(message["role"] == "tool" for message in messages)  # one tool message per id so far
            ids = [f"call_{first + n}" for n in range(len(found))]
            # "" rather than null: llama-cpp-python answers null content with a 500 (issue 26)
            messages.append({"role": "assistant", "content": "", "tool_calls": [
                {"id": call_id, "type": "function",
                 "function": {"name": name if tools is None else tools.tool_name(name), "arguments": arguments}}
                for call_id, (name, arguments) in zip(ids, found, strict=True)
            ]})
            messages += [{"role": "tool", "tool_call_id": call_id, "content": texts[index + 1][1]} for call_id in ids]
            index += 2  # the result turn is taken
        else:
            messages.append({"role": "user" if role == "user" else "assistant", "content": text})
            index += 1
    return messages


def _calls(text: str) -> list[tuple[str, str]] | None:
    """(name, JSON arguments) for each call of a call-list turn; None for a turn that is text."""
    if not text.lstrip().startswith("["):
        return None
    try:
        decoded = decode_fixed(text)
        found = [(name, json.dumps(_json(arguments), ensure_ascii=False, allow_nan=False))
                 for call in decoded for name, arguments in call.items()]
    except (DecodeError, TypeError, ValueError):
        return None
    return found if found and all(name for name, _ in found) else None  # "[]", "[f()(x=1)]" are no call lists


def _json(value: object) -> object:
    """`value` with tuples as lists; TypeError for anything JSON has no faithful form of (a ``**kw`` key, bytes)."""
    if value is None or isinstance(value, (bool, int, str)) or (isinstance(value, float) and math.isfinite(value)):
        return value
    if isinstance(value, (list, tuple)):
        return [_json(item) for item in value]
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return {key: _json(item) for key, item in value.items()}
    raise TypeError(f"not JSON: {type(value).__name__}")
