"""Decoding a prompting model's answer in an entry's configuration, as bfcl's `default_decode_ast_prompting`
does with the configuration's return format and tag (docs/bfcl.md#format-sensitivity).

The answer is trimmed and bracketed as for any prompting answer (bfcl §3.1); then the text inside the first
``<TOOLCALL>`` tag is taken when the configuration asks for the tag, and the calls are read in the return format:
Python call lists from their syntax tree (decode.py), JSON with the standard library's parser, XML with
ElementTree (the text read starts at ``<functions>``, so it never has a document type that could define
entities). Nothing is executed: XML values of a list or dict type are read with `ast.literal_eval`. bfcl's regular
expressions are replaced by scans that find the same text in linear time (one of them backtracks exponentially).
"""

from __future__ import annotations

import ast
import json
import warnings
import xml.etree.ElementTree as ElementTree

from .... import python_ast
from ..decode import bracketed, decode_python_calls
from ..errors import DecodeError
from .configs import Config

TAG_OPEN, TAG_CLOSE = "<TOOLCALL>", "</TOOLCALL>"
XML_OPEN, XML_CLOSE = "<functions>", "</functions>"
_LITERAL_TYPES = ("array", "tuple", "object", "dict")


def decode_output(text: object, config: Config) -> object:
    """The calls of `text` in `config`'s format, ``[{name: {parameter: value}}]`` when it is well formed (the
    checker tests the shape, bfcl §4.8).

    Raises:
        DecodeError: bfcl's decoder raises on this answer (a decode failure in its verdict).
    """
    # bfcl brackets every answer, whatever its format: a JSON or XML one too (bfcl §3.1)
    text = bracketed(text)
    try:
        if config.tool_call_tag:
            text = _between(text, TAG_OPEN, TAG_CLOSE, whole=False).strip()
        if config.return_format == "python":
            return decode_python_calls(text)
        if config.return_format == "json":
            return _json_calls(text)
        return _xml_calls(_between(text, XML_OPEN, XML_CLOSE, whole=True), verbose=config.return_format ==
                          "verbose_xml")
    except DecodeError:
        raise
    except (RecursionError, MemoryError) as exc:
        raise DecodeError(f"the answer is too deeply nested or too large ({type(exc).__name__})") from None
    except Exception as exc:  # bfcl counts any exception of its decoder as a decode failure (bfcl §3.1)
        raise DecodeError(f"{type(exc).__name__}: {exc}") from None


def _between(text: str, opening: str, closing: str, *, whole: bool) -> str:
    """The text from the first `opening` to the first `closing` after it (with both when `whole`), as bfcl's lazy
    search finds it; a ValueError when there is none."""
    start = text.find(opening)
    end = text.find(closing, start + len(opening)) if start >= 0 else -1
    if end < 0:
        raise DecodeError(f"no {opening}...{closing} in the answer")
    return text[start:end + len(closing)] if whole else text[start + len(opening):end]


# ------------------------------------------------------------------------------------------ JSON


def _json_calls(text: str) -> list[dict[object, object]]:
    """bfcl's JSON calls: the text from the first "[" to the last "]", narrowed to its first list of objects;
    text that is not JSON decodes to no call at all (bfcl's parser returns [] then)."""
    start, end = text.find("["), text.rfind("]")
    if 0 <= start < end:
        text = text[start:end + 1]
    found = object_list(text)
    if found is not None:
        text = found
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError:
        return []
    calls: list[dict[object, object]] = []
    for call in _iterated(parsed):
        if isinstance(call, dict):
            name, arguments = call["function"], call["parameters"]
            if isinstance(name, (list, dict)):
                raise TypeError(f"unhashable type: '{type(name).__name__}'")
            calls.append({name: arguments})
    return calls


def _iterated(value: object) -> list[object]:
    """What ``for x in value`` visits for a JSON value: an object's keys, a string's characters."""
    if isinstance(value, (list, dict, str)):
        return list(value)
    raise TypeError(f"'{type(value).__name__}' object is not iterable")


def object_list(text: str) -> str | None:
    r"""The first match of bfcl's ``\[\s*{.*?}\s*(?:,\s*{.*?}\s*)*\]`` (dot matching newlines) in `text`, or None.

    The pattern backtracks through every way of splitting the text at its "}" characters; the same match is
    found here from the right: `ends[p]` tells whether a "}" at p can close an object that the rest of a list
    follows, and the first match takes, at each step, the nearest such "}" (the lazy `.*?`) and another object
    rather than the closing "]" whenever one can follow (the greedy group)."""
    size = len(text)
    skip = [size] * (size + 1)  # the first position at or after i that is no whitespace (\s is str.isspace)
    for index in range(size - 1, -1, -1):
        skip[index] = skip[index + 1] if text[index].isspace() else index
    nearest = [size] * (size + 2)  # the first p >= i whose "}" can end an object of a matching list
    for index in range(size - 1, -1, -1):
        closes = text[index] == "}" and _can_follow(text, skip, nearest, index + 1)
        nearest[index] = index if closes else nearest[index + 1]
    for start in range(size):
        if text[start] != "[":
            continue
        brace = skip[start + 1]
        if brace < size and text[brace] == "{" and nearest[brace + 1] < size:
            end = nearest[brace + 1]
            while True:
                after = _next_object(text, skip, nearest, end + 1)
                if after is None:
                    return text[start:skip[end + 1] + 1]  # the "]" (_can_follow held for this end)
                end = after
    return None


def _next_object(text: str, skip: list[int], nearest: list[int], position: int) -> int | None:
    """After a "}" ending at `position`: the end of the next object of the list (", {...}"), or None."""
    size = len(text)
    comma = skip[position]
    if comma < size and text[comma] == ",":
        brace = skip[comma + 1]
        if brace < size and text[brace] == "{" and nearest[brace + 1] < size:
            return nearest[brace + 1]
    return None


def _can_follow(text: str, skip: list[int], nearest: list[int], position: int) -> bool:
    """Whether the rest of a list (more objects, then "]") can follow a "}" ending at `position`."""
    if _next_object(text, skip, nearest, position) is not None:
        return True
    bracket = skip[position]
    return bracket < len(text) and text[bracket] == "]"


# ------------------------------------------------------------------------------------------ XML


def _xml_calls(text: str, *, verbose: bool) -> list[dict[object, object]]:
    """bfcl's XML calls: each `<function name>` child of `<functions>` with its `<param>`s; a verbose parameter
    holds its value in a `value` attribute (its `<param>`s may sit in a `<params>`), a concise one in its text
    before any child, stripped."""
    root = ElementTree.fromstring(text)  # no document type can precede <functions>: no entity is defined
    calls: list[dict[object, object]] = []
    for function in root.findall("function"):
        name = function.attrib["name"]
        arguments: dict[object, object] = {}
        if verbose:
            container = function.find("params")
            for parameter in (container if container is not None else function).findall("param"):
                arguments[parameter.attrib.get("name")] = _typed(parameter.attrib.get("value", ""),
                                                                 parameter.attrib.get("type", "string"))
        else:
            for parameter in function.findall("param"):
                arguments[parameter.attrib["name"]] = _typed((parameter.text or "").strip(),
                                                             parameter.attrib.get("type", "string"))
        calls.append({name: arguments})
    return calls


def _typed(raw: str, kind: str) -> object:
    """An XML value as bfcl converts it by its declared type; an unknown type keeps the text."""
    if kind == "integer":
        return int(raw)
    if kind == "float":
        return float(raw)
    if kind == "boolean":
        return raw.lower() == "true"
    if kind == "null":
        return None
    if kind in _LITERAL_TYPES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes in string literals only warn
            tree = python_ast.parse(raw.lstrip(" \t"), mode="eval")  # literal_eval's own trim, then its parse
        return ast.literal_eval(tree)
    return raw
