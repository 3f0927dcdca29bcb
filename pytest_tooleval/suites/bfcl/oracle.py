"""What a perfect model answers: a sample's first possible answer, written as bfcl records answers (bfcl §3).

The oracle is a self-check of the scorer. For every parameter it takes the first acceptable value, and leaves
out an optional parameter whose first acceptable value is `""` (bfcl §4.4); a required one takes its first other
value. A dict (or a list of dicts) takes the first acceptable value of each of its keys the same way. Python
answers are Python literals; Java and JavaScript answers write each value as source text of the parameter's
declared type, the form bfcl's type conversion reads back (bfcl §4.2); in function calling, as the strings that
bfcl's tools declare those parameters to be. Where bfcl's checker still rejects the
rendering (the ceiling, measured in docs/bfcl.md), the sample fails under the oracle, as it would for a model
writing the same call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection
from typing import Any

from ...json_value import JSONObject, JSONValue
from ..json_ops import as_getter, item
from .data import Sample, language_of

#: what the oracle says to a question no function fits (bfcl §5): words, which decode to no call
NO_CALL_TEXT = "None of the given functions fits this request."
_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")  # a name Java or JavaScript reads as it is


def oracle_output(sample: Sample, mode: str) -> Any:  # Any: suite.py (not reshaped yet) reads a prompt answer as str
    """The oracle's answer in `mode` ("prompt": text; "fc": `[{name: arguments JSON}]`), or None if the
    possible answers hold something it cannot write."""
    return _oracle_output(sample, mode)


def _oracle_output(sample: Sample, mode: str) -> str | list[dict[str, str]] | None:
    calls: list[tuple[str, JSONObject]] = []
    if sample.ground_truth is None:  # the relevance categories
        if "irrelevance" in sample.category:
            return NO_CALL_TEXT
        calls.append((str(item(sample.functions[0], "name")), {}))
    else:
        for call in sample.ground_truth:
            if len(call) != 1:
                return None
            ((name, parameters),) = call.items()
            if not isinstance(parameters, dict):
                return None
            calls.append((str(name), _first_values(parameters, _required(sample, str(name)))))
    language = language_of(sample.category)
    if mode == "fc":
        if language != "python":  # bfcl offers Java and JavaScript parameters as strings: their source text
            calls = [(name, _as_text(language, _properties(sample, name), arguments)) for name, arguments in calls]
        return [{name.replace(".", "_"): json.dumps(arguments, ensure_ascii=False)} for name, arguments in calls]
    written = []
    for name, arguments in calls:
        write = _writer(language, _properties(sample, name))
        written.append(f"{name}({', '.join(f'{key}={write(key, value)}' for key, value in arguments.items())})")
    return "[" + ", ".join(written) + "]"


def _function(sample: Sample, name: str) -> JSONObject:
    for function in sample.functions:
        if as_getter(function).get("name") == name:
            return as_getter(function)
    return {}


def _parameters(sample: Sample, name: str) -> JSONObject:
    parameters = _function(sample, name).get("parameters", {})
    if not isinstance(parameters, dict):  # `.get` on it fails, as it always did
        raise AttributeError(f"'{type(parameters).__name__}' object has no attribute 'get'")
    return parameters


def _properties(sample: Sample, name: str) -> JSONObject:
    properties = _parameters(sample, name).get("properties", {})
    return properties if isinstance(properties, dict) else {}


def _required(sample: Sample, name: str) -> set[JSONValue]:
    required = _parameters(sample, name).get("required", []) or []
    if isinstance(required, (int, float)):  # `set()` of a number fails, as it always did
        raise TypeError(f"'{type(required).__name__}' object is not iterable")
    chosen: set[JSONValue] = set(required)
    return chosen


def _first_values(parameters: JSONObject, required: Collection[JSONValue] = ()) -> JSONObject:
    chosen: JSONObject = {}
    for key, acceptable in parameters.items():
        options = acceptable if isinstance(acceptable, list) else [acceptable]
        if key in required:  # "" would mean "may be left out", which a required parameter may not (bfcl §4.4)
            options = [option for option in options if option != ""] or options
        if not options or options[0] == "":
            continue
        chosen[key] = _chosen(options[0])
    return chosen


def _chosen(value: JSONValue) -> JSONValue:
    """A value with the first acceptable value taken inside its dicts (their values list the acceptable ones)."""
    if isinstance(value, dict):
        return _first_values(value)
    if isinstance(value, list):
        return [_chosen(item) for item in value]
    return value


def _as_text(language: str, properties: JSONObject, arguments: JSONObject) -> JSONObject:
    """A Java or JavaScript call's arguments as the texts a function-calling model sends: a text as it is (no
    decoder takes quotes off here), any other value as its source text."""
    write = _writer(language, properties)
    return {key: value if isinstance(value, str) else write(key, value) for key, value in arguments.items()}


def _writer(language: str, properties: JSONObject) -> Callable[[str, object], str]:
    def write(key: str, value: object) -> str:
        schema = properties.get(key, {})
        if not isinstance(schema, dict):
            schema = {}
        declared = str(schema.get("type", ""))
        items = schema.get("items", {})
        item_type = str(items.get("type", "")) if isinstance(items, dict) else ""
        if language == "java":
            return _java(value, declared, item_type)
        if language == "javascript":
            return _js(value, declared, item_type)
        return repr(value)  # Python reads str, bool, int, float, None, list and dict back from their repr

    return write


def _quoted(text: str, quote: str = '"') -> str | None:
    return None if quote in text or "\\" in text or "\n" in text else f"{quote}{text}{quote}"


def _java(value: object, declared: str, item_type: str = "") -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if declared == "long" and isinstance(value, int):
        return f"{value}L"
    if declared == "float" and isinstance(value, (int, float)):
        return f"{float(value)!r}f"
    if isinstance(value, (int, float)):
        return repr(value)
    if declared == "char" and isinstance(value, str):
        return _quoted(value, "'") or value
    if isinstance(value, list):
        if declared == "Array":
            return f"new {item_type or 'Object'}[]{{{', '.join(_java_item(item, item_type, True) for item in value)}}}"
        if not value:
            return "new ArrayList<>()"
        return f"new ArrayList<>(Arrays.asList({', '.join(_java_item(item, item_type) for item in value)}))"
    if isinstance(value, dict):
        entries = " ".join(f'put("{key}", {_java_item(item, "")});' for key, item in value.items())
        return f"new HashMap<String, String>() {{{{ {entries} }}}}"
    text = str(value)
    return _quoted(text) or text  # String and any keep the text: a string literal loses its quotes in decoding


def _java_item(value: object, item_type: str, in_array: bool = False) -> str:
    if isinstance(value, str):
        if in_array and item_type == "String" and _PLAIN.match(value):
            return value  # an array element keeps its quotes in bfcl's conversion, a bare name does not
        return _quoted(value) or value
    return _java(value, item_type)


def _js(value: object, declared: str, item_type: str = "") -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if declared == "Bigint" and isinstance(value, int):
        return f"{value}n"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_js_item(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {_js_item(item)}" for key, item in value.items()) + "}"
    text = str(value)
    if declared in ("any", "") and _PLAIN.match(text):
        return text  # a name: bfcl keeps an `any` argument as its source text
    return _quoted(text) or _quoted(text, "'") or text


def _js_item(value: object) -> str:
    if isinstance(value, str):
        return _quoted(value) or _quoted(value, "'") or value
    return _js(value, "")
