"""The YAML suite's file format: a `*.tooleval.yaml` file read, checked and built into frozen values.

A file is checked in two steps: against schema.json (published to users, so editors flag the same mistakes),
then against the rules a schema cannot state (a call names a tool of the file, an argument a parameter of that
tool, names are unique, ...). Every problem is one DataError line, `<file>:<line>: <key path>: <message>`: the
key path is where the problem is (`cases[1].expect.calls[0].arguments`), the line that of the offending key or
item, from the YAML parser's marks.
"""

from __future__ import annotations

import copy
import difflib
import functools
import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NoReturn, TypedDict, cast, final

import yaml

from ...data.files import YAML_FILE_LIMIT, read_text, yaml_bounds_problem
from ...errors import DataError
from ...json_value import JSONObject, JSONValue
from . import patterns, toolschema
from .discovery import SUFFIXES

if TYPE_CHECKING:
    from jsonschema import FormatChecker
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

SCHEMA_PATH = Path(__file__).with_name("schema.json")
# Every tool the format takes is an OpenAI function definition (flat, or wrapped in {type: function}), so the
# file's tools can always be offered natively: a file is asked in function calling unless it says `mode: prompt`.
DEFAULT_MODE: Literal["prompt", "fc"] = "fc"

MatcherKind = Literal["exact", "any_of", "regex", "tolerance", "unordered", "contains", "absent"]


# -- a file as schema.json admits it (read only after check_schema) ----------------------------------------------


class _Named(TypedDict):
    name: str


@final
class _Function(_Named, total=False):
    description: str
    parameters: JSONObject


@final
class _WrappedTool(TypedDict):
    type: Literal["function"]
    function: _Function


class _Message(TypedDict):
    role: str
    content: str


class _ToolResult(TypedDict):
    name: str
    content: JSONValue


class _ExpectedCall(_Named, total=False):
    arguments: JSONObject
    partial: bool


class _Expect(TypedDict, total=False):
    calls: list[_ExpectedCall]
    ordered: bool
    no_call: bool
    contains: str | list[str]
    regex: str


class _TurnExpect(TypedDict):
    expect: _Expect


class _Turn(_TurnExpect, total=False):
    user: str
    messages: list[_Message]
    tool_results: list[_ToolResult]


class _Case(_Named, total=False):
    category: str
    tags: list[str]
    user: str
    messages: list[_Message]
    expect: _Expect
    turns: list[_Turn]


class _SuiteParts(TypedDict):
    tools: list[_Function | _WrappedTool]
    cases: list[_Case]


class _SuiteDocument(_SuiteParts, total=False):
    category: str
    tags: list[str]
    mode: Literal["prompt", "fc"]
    system: str


@dataclass(frozen=True)
class ToolSpec:
    """A tool the model is offered; `parameters` is a JSON Schema object schema."""

    name: str
    description: str
    parameters: JSONObject

    def openai(self) -> JSONObject:
        """The tool as OpenAI's `tools` list takes it (a copy: the request may not change the file's tool)."""
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": copy.deepcopy(self.parameters)}}


@dataclass(frozen=True)
class Matcher:
    """What one argument must be.

    `value` by kind: exact: the value; any_of, unordered: a tuple of values; regex: the pattern; tolerance: the
    number (within `tolerance` of it); contains: the needle; absent: None.
    """

    kind: MatcherKind
    value: JSONValue | tuple[JSONValue, ...] = None  # the tuple: any_of, unordered
    tolerance: float | None = None


@dataclass(frozen=True)
class ExpectedCall:
    name: str
    arguments: Mapping[str, Matcher]
    partial: bool = False  # arguments not listed may be given too


@dataclass(frozen=True)
class Expectation:
    """What the model must answer in one turn: these calls, or (no_call) words without a call."""

    calls: tuple[ExpectedCall, ...] = ()  # empty when no_call
    ordered: bool = True  # False: the calls as a set (parallel calls)
    no_call: bool = False
    contains: tuple[str, ...] = ()  # texts the words must contain, case-insensitively
    regex: str | None = None  # a pattern the words must match
    line: int = 0  # where `expect` is written (failure messages cite it)


@dataclass(frozen=True)
class ToolResult:
    name: str
    content: str  # a non-string value as compact JSON


@dataclass(frozen=True)
class Turn:
    """One step of a case: the messages it adds, what the model must answer, the results fed back after."""

    messages: tuple[dict[str, str], ...]  # {"role", "content"}; empty when the model continues after tool results
    expect: Expectation
    tool_results: tuple[ToolResult, ...] = ()


@dataclass(frozen=True)
class CaseSpec:
    name: str
    category: str
    tags: tuple[str, ...]  # the file's, then the case's own
    turns: tuple[Turn, ...]  # one for a single exchange (user or messages)
    line: int  # where the case starts


@dataclass(frozen=True)
class SuiteFile:
    path: Path
    stem: str
    category: str
    tags: tuple[str, ...]
    mode: Literal["prompt", "fc"]
    system: str | None
    tools: tuple[ToolSpec, ...]
    cases: tuple[CaseSpec, ...]

    def tool(self, name: str) -> ToolSpec:
        for tool in self.tools:
            if tool.name == name:
                return tool
        raise KeyError(name)


def file_stem(path: Path) -> str:
    """The file's name without `.tooleval.yaml` or `.tooleval.yml` ("weather" for weather.tooleval.yaml); any other
    name loses its last suffix only."""
    name = path.name
    suffix = next((suffix for suffix in SUFFIXES if name.endswith(suffix) and name != suffix), None)
    return name[: -len(suffix)] if suffix else path.stem


def load_file(path: Path) -> SuiteFile:
    """The suite file at `path`, read and checked; a DataError (one line) on the first problem found."""
    source = _Source(path, _parse(read_text(path, YAML_FILE_LIMIT), path))
    source.check_keys()
    source.check_schema()
    return _suite_file(source)


# -- reading YAML with lines ------------------------------------------------------------------------------------

_MERGE_TAG = "tag:yaml.org,2002:merge"


class _Mapping(dict[object, object]):
    """A YAML mapping that knows the line (1-based) of itself and of each key, and which keys it had to refuse."""

    def __init__(self, line: int = 0) -> None:
        super().__init__()
        self.line = line
        self.lines: dict[object, int] = {}
        self.problems: list[tuple[int, str]] = []  # (line, message): repeated keys, keys that are not text


class _Sequence(list[object]):
    """A YAML sequence that knows the line of itself and of each item."""

    def __init__(self, line: int = 0) -> None:
        super().__init__()
        self.line = line
        self.lines: list[int] = []


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


class _LineLoader(yaml.SafeLoader):
    """SafeLoader whose mappings and sequences record where each key and item is written, and whose values are
    all JSON values: dates and times such as 10:30 stay text (as in YAML 1.2, instead of a date and 630), and
    sets, binary and NaN, which JSON cannot hold, are refused."""

    def construct_located_mapping(self, node: yaml.MappingNode) -> Iterator[_Mapping]:
        mapping = _Mapping(_line(node))
        yield mapping  # before its items, as pyyaml does, so an alias inside the mapping can refer to it
        # Repeats are looked for among the keys as written: keys a merge (<<) brings in may be overridden.
        first_lines: dict[str, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG or not isinstance(key_node, yaml.ScalarNode):
                continue  # a list or mapping as a key is refused by construct_mapping, with its line
            key = self.construct_object(key_node)
            if not isinstance(key, str):
                mapping.problems.append((_line(key_node), f"the key {key_node.value} is read as {_shown(key)}, "
                                                          f"not as text: quote it ('{key_node.value}')"))
            elif key in first_lines:
                mapping.problems.append((_line(key_node), f"key {key!r} is given twice "
                                                          f"(first on line {first_lines[key]})"))
            else:
                first_lines[key] = _line(key_node)
        mapping.update(self.construct_mapping(node))
        # after construct_mapping node.value holds the merged pairs first, so a key's own line wins
        mapping.lines = {self.construct_object(key_node): _line(key_node) for key_node, _ in node.value}

    def construct_located_sequence(self, node: yaml.SequenceNode) -> Iterator[_Sequence]:
        sequence = _Sequence(_line(node))
        yield sequence
        sequence.extend(self.construct_sequence(node))
        sequence.lines = [_line(item) for item in node.value]

    def construct_text(self, node: yaml.ScalarNode) -> str:
        return self.construct_scalar(node)

    def construct_int_or_text(self, node: yaml.ScalarNode) -> int | str:
        return self.construct_scalar(node) if ":" in node.value else self.construct_yaml_int(node)

    def construct_finite_float(self, node: yaml.ScalarNode) -> float | str:
        if ":" in node.value:
            return self.construct_scalar(node)
        number = self.construct_yaml_float(node)
        if not math.isfinite(number):
            raise yaml.constructor.ConstructorError(None, None, f"{node.value} is not a JSON number", node.start_mark)
        return number

    def refuse(self, node: yaml.Node) -> NoReturn:
        tag = node.tag.rsplit(":", 1)[-1]
        raise yaml.constructor.ConstructorError(None, None, f"!!{tag} values have no JSON form", node.start_mark)


_LineLoader.add_constructor("tag:yaml.org,2002:map", _LineLoader.construct_located_mapping)
_LineLoader.add_constructor("tag:yaml.org,2002:seq", _LineLoader.construct_located_sequence)
_LineLoader.add_constructor("tag:yaml.org,2002:timestamp", _LineLoader.construct_text)
_LineLoader.add_constructor("tag:yaml.org,2002:int", _LineLoader.construct_int_or_text)
_LineLoader.add_constructor("tag:yaml.org,2002:float", _LineLoader.construct_finite_float)
for _tag in ("binary", "set", "omap", "pairs"):
    _LineLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _LineLoader.refuse)


def _parse(text: str, path: Path) -> object:
    try:
        # nesting and aliases bounded before anything is built; a recursive alias is refused by check_keys, which
        # names its key
        bounds = yaml_bounds_problem(text, recursive_aliases=True)
        if bounds is not None:
            raise DataError(f"{path}:{bounds[0]}: {bounds[1]}")
        loader = _LineLoader(text)  # reads the whole text, and refuses control characters, at once
        try:
            return loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        problem = exc.problem or exc.context
        if exc.context and problem and problem.startswith("but "):  # "expected a single document ..., but found"
            problem = f"{exc.context}, {problem}"
        raise DataError(f"{path}:{line}: malformed YAML ({problem})") from None
    except yaml.reader.ReaderError as exc:  # its position counts characters
        line = text.count("\n", 0, exc.position) + 1
        raise DataError(f"{path}:{line}: malformed YAML (character #x{exc.character:04x}: {exc.reason})") from None


def _plain(value: JSONValue) -> JSONValue:
    """`value` in plain dicts and lists, as the built values hold it."""
    if isinstance(value, dict):
        return _plain_object(value)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _plain_object(value: JSONObject) -> JSONObject:
    return {key: _plain(item) for key, item in value.items()}


# -- problems, as one line --------------------------------------------------------------------------------------

Keys = tuple[str | int, ...]  # a key path: mapping keys and sequence indices from the top of the file

_NAME_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _key_path(keys: Keys) -> str:
    text = ""
    for key in keys:
        if isinstance(key, int):
            text += f"[{key}]"
        elif _NAME_KEY.fullmatch(key):
            text += f".{key}" if text else key
        else:
            text += f"[{key!r}]"
    return text


def _shown(value: object) -> str:
    """A value as a message quotes it: scalars as written (strings cut short), containers by their kind."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return repr(value if len(value) <= 60 else value[:57] + "...")
    return json.dumps(value)  # true, false, null and numbers as YAML and JSON write them


class _Source:
    """A parsed file: its path, its value, and the line of every place in it."""

    def __init__(self, path: Path, document: object) -> None:
        self.path = path
        self.document = document

    def line(self, keys: Keys) -> int:
        """The line of the deepest place on `keys` that the file has."""
        value = self.document
        line: int = getattr(value, "line", 1)
        for key in keys:
            if isinstance(value, _Mapping):
                if key not in value:
                    break
                line, value = value.lines[key], value[key]
            elif isinstance(value, _Sequence) and isinstance(key, int) and 0 <= key < len(value):
                line, value = value.lines[key], value[key]
            else:
                break
        return line

    def error(self, keys: Keys, message: str, line_of: str | int | None = None) -> DataError:
        """The problem at `keys`, cited at the line of its key `line_of` when given (e.g. the unknown key)."""
        return self.error_at(self.line(keys if line_of is None else (*keys, line_of)), keys, message)

    def error_at(self, line: int, keys: Keys, message: str) -> DataError:
        where = _key_path(keys)
        return DataError(f"{self.path}:{line}: {where}: {message}" if where else f"{self.path}:{line}: {message}")

    def check_keys(self) -> None:
        """Keys the loader refused (repeated, or not text) and values holding themselves, the first in the file;
        before the schema, which cannot say where a repeated key is and would recurse without end on a loop."""
        problems = list(_key_problems(self.document, (), self.line(()), set(), set()))
        if problems:
            raise self.error_at(*min(problems, key=lambda problem: problem[0]))

    def check_schema(self) -> None:
        from jsonschema.exceptions import best_match

        if self.document is None:
            raise DataError(f"{self.path}:1: the file is empty (a suite file has tools and cases)")
        # check_keys found every key text, and the loader builds JSON values only (it refuses sets, binary, NaN)
        error = best_match(_suite_validator().iter_errors(cast("JSONValue", self.document)))
        if error is not None:
            raise self.error(*_schema_problem(error))


def _key_problems(value: object, keys: Keys, line: int, active: set[int], done: set[int]
                  ) -> Iterator[tuple[int, Keys, str]]:
    if not isinstance(value, (_Mapping, _Sequence)):
        return
    if id(value) in active:
        yield line, keys, "this value contains itself (a recursive alias)"
        return
    if id(value) in done:  # an alias of a value already looked at
        return
    active.add(id(value))
    if isinstance(value, _Mapping):
        yield from ((problem_line, keys, message) for problem_line, message in value.problems)
        for key, item in value.items():
            # a key that is not text has its own problem, on its line, before any inside it: its path is never shown
            path_key = key if isinstance(key, (str, int)) else repr(key)
            yield from _key_problems(item, (*keys, path_key), value.lines[key], active, done)
    else:
        for index, item in enumerate(value):
            yield from _key_problems(item, (*keys, index), value.lines[index], active, done)
    active.discard(id(value))
    done.add(id(value))


@functools.cache
def _suite_validator() -> Validator:
    from jsonschema import Draft202012Validator

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return Draft202012Validator(schema, format_checker=_format_checker())


def _format_checker() -> FormatChecker:
    """jsonschema's format checks, with `regex` as the matchers run them (patterns.py: RE2's limits too)."""
    from jsonschema import Draft202012Validator, FormatChecker

    checker = FormatChecker(())
    checker.checkers = {**Draft202012Validator.FORMAT_CHECKER.checkers,
                        "regex": (lambda instance: not isinstance(instance, str) or patterns.problem(instance) is None,
                                  ())}
    return checker


_TYPE_NAMES = {"object": "a mapping", "array": "a list", "string": "a string", "number": "a number",
               "integer": "an integer", "boolean": "true or false", "null": "null"}
_MATCHERS = ("exact", "any_of", "regex", "value/tolerance", "unordered", "contains", "absent")
_MATCHER_KEYS = ("exact", "any_of", "regex", "value", "tolerance", "unordered", "contains", "absent")
# the schema's patterns, in words
_PATTERN_MEANINGS = {
    "^[A-Za-z_][A-Za-z0-9_]*$": "a marker name (letters, digits and _, not starting with a digit)",
    "^[A-Za-z0-9_-]{1,64}$": "a tool name (1 to 64 letters, digits, _ or -, OpenAI's rule)",
    "^[A-Za-z0-9_.-]+$": "a case name (letters, digits, _, . and -)",
}


def _unknown(noun: str, key: str, known: Sequence[str], close_to: Sequence[str], otherwise: str = "") -> str:
    close = difflib.get_close_matches(key, close_to, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else otherwise
    return f"unknown {noun} {key!r} (known: {', '.join(known)}){hint}"


def _schema_problem(error: ValidationError) -> tuple[Keys, str, str | None]:
    """The key path, message and offending key (or None) of the schema's error, in the file's words."""
    keys = tuple(error.absolute_path)
    schema: Mapping[str, Any] = error.schema if isinstance(error.schema, Mapping) else {}
    is_matcher = keys[-2:-1] == ("arguments",)  # at an argument's value: about its matcher
    instance: Any = error.instance
    expected: Any = error.validator_value
    if error.validator == "additionalProperties":
        allowed = list(schema.get("properties", {}))
        key = next(key for key in instance if key not in allowed)
        if is_matcher:
            return keys, _unknown("matcher", key, _MATCHERS, _MATCHER_KEYS,
                                  "; a literal mapping is written {exact: {...}}"), key
        return keys, _unknown("key", key, allowed, allowed), key
    if error.validator == "required":
        missing = [repr(name) for name in expected if name not in instance]
        noun = "key" if len(missing) == 1 else "keys"
        return keys, f"missing required {noun} {' and '.join(missing)}", None
    if error.validator == "type":
        names = [expected] if isinstance(expected, str) else expected
        return keys, f"expected {' or '.join(_TYPE_NAMES[name] for name in names)}, got {_shown(instance)}", None
    if error.validator == "const":
        return keys, f"must be {_shown(expected)}, got {_shown(instance)}", None
    if error.validator == "enum":
        return keys, f"must be one of {', '.join(_shown(value) for value in expected)}, got {_shown(instance)}", None
    if error.validator == "pattern":
        meaning = _PATTERN_MEANINGS.get(expected)
        return keys, f"{_shown(instance)} is not {meaning}" if meaning else f"{_shown(instance)} does not match " + \
            expected, None
    if error.validator == "format" and expected == "regex":
        return keys, f"{_shown(instance)} is not a valid regular expression ({_regex_problem(instance)})", None
    if error.validator in ("minItems", "minLength") and expected == 1:
        return keys, "must not be empty", None
    if error.validator == "minimum":
        return keys, f"must be at least {expected}, got {_shown(instance)}", None
    if is_matcher and error.validator == "minProperties":
        return keys, "an empty mapping is not a matcher (an empty literal mapping is written {exact: {}})", None
    if is_matcher and error.validator == "maxProperties":
        return keys, f"a matcher has one key (value and tolerance go together), got {', '.join(instance)}", None
    if is_matcher and error.validator == "dependentRequired":
        return keys, "value and tolerance go together ({value: N, tolerance: T})", None
    return keys, error.message, None


def _regex_problem(pattern: str) -> str:
    return patterns.problem(pattern) or "not a regular expression"  # the format check said so: should not happen


# -- the rules beyond the schema, and the built values ----------------------------------------------------------

_NO_PARAMETERS: JSONObject = {"type": "object", "properties": {}}
_JSON_TYPES = "array, boolean, integer, null, number, object, string"


def _suite_file(source: _Source) -> SuiteFile:
    # check_keys refused keys that are not text, check_schema checked the rest against schema.json
    document = cast("_SuiteDocument", source.document)
    stem = file_stem(source.path)
    category = document.get("category", stem)
    tags = tuple(document.get("tags", ()))
    tools = _tools(source, document["tools"])
    cases: list[CaseSpec] = []
    case_lines: dict[str, int] = {}  # name -> the line of its first use
    for index, raw in enumerate(document["cases"]):
        where: Keys = ("cases", index)
        name = raw["name"]
        if name in case_lines:
            raise source.error((*where, "name"), f"case name {name!r} is used twice (first on line {case_lines[name]})")
        case_lines[name] = source.line((*where, "name"))
        cases.append(CaseSpec(name=name, category=raw.get("category", category),
                              tags=tuple(dict.fromkeys((*tags, *raw.get("tags", ())))),
                              turns=_turns(source, raw, where, tools), line=source.line(where)))
    return SuiteFile(path=source.path, stem=stem, category=category, tags=tags, mode=document.get("mode", DEFAULT_MODE),
                     system=document.get("system"), tools=tuple(tools.values()), cases=tuple(cases))


def _tools(source: _Source, raws: list[_Function | _WrappedTool]) -> dict[str, ToolSpec]:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    tools: dict[str, ToolSpec] = {}
    name_lines: dict[str, int] = {}
    for index, raw in enumerate(raws):
        where: Keys = ("tools", index, "function") if "function" in raw else ("tools", index)
        function = _unwrapped(raw)
        name = function["name"]
        if name in tools:
            raise source.error((*where, "name"), f"tool {name!r} is defined twice (first on line {name_lines[name]})")
        parameters = _plain_object(function.get("parameters", _NO_PARAMETERS))
        try:
            Draft202012Validator.check_schema(parameters)
        except SchemaError as exc:
            place = tuple(exc.absolute_path)
            if exc.validator == "anyOf" and place and place[-1] == "type":  # the meta-schema's words say little
                problem = f"unknown type {_shown(exc.instance)} (JSON Schema's types: {_JSON_TYPES})"
            else:
                problem = exc.message
            raise source.error((*where, "parameters", *place), f"not a valid JSON Schema: {problem}") from None
        fault = toolschema.problem(parameters)  # references, loops and patterns
        if fault is not None:
            raise source.error((*where, "parameters", *fault[0]), fault[1])
        tools[name] = ToolSpec(name=name, description=function.get("description", ""), parameters=parameters)
        name_lines[name] = source.line((*where, "name"))
    return tools


def _unwrapped(tool: _Function | _WrappedTool) -> _Function:
    """The function definition of a tool, wrapped in OpenAI's {type: function, function: ...} or not."""
    if "function" in tool:
        return tool["function"]
    return tool


def _turns(source: _Source, raw: _Case, where: Keys, tools: Mapping[str, ToolSpec]) -> tuple[Turn, ...]:
    forms = [key for key in ("user", "messages", "turns") if key in raw]
    if len(forms) != 1:
        message = "a case needs one of user, messages or turns" if not forms else \
            f"a case has one of user, messages or turns, not {' and '.join(forms)}"
        raise source.error(where, message, _last_key(source, where, forms))
    if forms != ["turns"]:
        if "expect" not in raw:
            raise source.error(where, f"missing required key 'expect' (what the model must answer to {forms[0]})")
        return (Turn(_messages(raw), _expectation(source, raw["expect"], (*where, "expect"), tools)),)
    if "expect" in raw:
        raise source.error(where, "a case with turns has expect in each turn, not beside turns", "expect")
    turns = []
    for number, turn in enumerate(raw["turns"]):
        at: Keys = (*where, "turns", number)
        if "user" in turn and "messages" in turn:
            raise source.error(at, "a turn has user or messages, not both", _last_key(source, at, ["user", "messages"]))
        if number == 0 and "user" not in turn and "messages" not in turn:
            raise source.error(at, "the first turn needs user or messages (the model has been told nothing yet)")
        results = []
        for index, result in enumerate(turn.get("tool_results", ())):
            _check_tool(source, result["name"], (*at, "tool_results", index, "name"), tools)
            content = result["content"]
            if not isinstance(content, str):
                content = json.dumps(_plain(content), ensure_ascii=False, separators=(",", ":"))
            results.append(ToolResult(result["name"], content))
        turns.append(Turn(_messages(turn), _expectation(source, turn["expect"], (*at, "expect"), tools),
                          tuple(results)))
    return tuple(turns)


def _last_key(source: _Source, where: Keys, keys: Sequence[str]) -> str | None:
    """Of `keys` (given at `where`), the one written last: where a conflict shows."""
    return max(keys, key=lambda key: source.line((*where, key))) if keys else None


def _messages(raw: _Case | _Turn) -> tuple[dict[str, str], ...]:
    if "user" in raw:
        return ({"role": "user", "content": raw["user"]},)
    return tuple({"role": message["role"], "content": message["content"]} for message in raw.get("messages", ()))


def _expectation(source: _Source, raw: _Expect, where: Keys, tools: Mapping[str, ToolSpec]) -> Expectation:
    no_call = raw.get("no_call", False)
    if "calls" in raw and no_call:
        raise source.error(where, "expect has calls or no_call: true, not both",
                           _last_key(source, where, ["calls", "no_call"]))
    if "calls" not in raw and not no_call:
        raise source.error(where, "expect needs calls (the calls the model must make) or no_call: true "
                                  "(it must answer in words)")
    for key in ("contains", "regex"):
        if key in raw and not no_call:
            raise source.error(where, f"{key} checks an answer in words: it needs no_call: true, not calls", key)
    calls = tuple(_expected_call(source, call, (*where, "calls", index), tools)
                  for index, call in enumerate(raw.get("calls", ())))
    contains = raw.get("contains", ())
    return Expectation(calls=calls, ordered=raw.get("ordered", True), no_call=no_call,
                       contains=(contains,) if isinstance(contains, str) else tuple(contains),
                       regex=raw.get("regex"), line=source.line(where))


def _check_tool(source: _Source, name: str, where: Keys, tools: Mapping[str, ToolSpec]) -> ToolSpec:
    if name not in tools:
        raise source.error(where, f"unknown tool {name!r} (the file's tools: {', '.join(tools)})")
    return tools[name]


def _expected_call(source: _Source, raw: _ExpectedCall, where: Keys, tools: Mapping[str, ToolSpec]
                   ) -> ExpectedCall:
    tool = _check_tool(source, raw["name"], (*where, "name"), tools)
    arguments = raw.get("arguments", {})
    for argument in arguments:
        if not _is_parameter(tool.parameters, argument):
            properties = tool.parameters.get("properties", {})  # an object, by the meta-schema
            known = ", ".join(properties if isinstance(properties, dict) else {}) or "none"
            raise source.error((*where, "arguments"), f"{argument!r} is not a parameter of {tool.name} "
                                                      f"(its parameters: {known})", argument)
    return ExpectedCall(name=tool.name, arguments={name: _matcher(value) for name, value in arguments.items()},
                        partial=raw.get("partial", False))


def _is_parameter(parameters: JSONObject, name: str) -> bool:
    # properties and patternProperties are objects, by the meta-schema
    properties = parameters.get("properties", {})
    if isinstance(properties, dict) and name in properties:
        return True
    named_patterns = parameters.get("patternProperties", {})
    if any(_found(pattern, name) for pattern in (named_patterns if isinstance(named_patterns, dict) else {})):
        return True
    # Only an explicit additionalProperties opens the schema: JSON Schema's default (open) would let every
    # misspelt argument through, and tools rarely say it.
    return parameters.get("additionalProperties", False) is not False


def _found(pattern: str, name: str) -> bool:
    try:
        return patterns.search(pattern, name)
    except (patterns.PatternProblem, patterns.MatchTimeout):  # checked before; a name it cannot match is not one
        return False


def _matcher(raw: JSONValue) -> Matcher:
    """The matcher of one argument: a mapping is one (the schema checked its keys), anything else a literal."""
    if not isinstance(raw, dict):
        return Matcher("exact", _plain(raw))
    if "value" in raw:
        tolerance = raw["tolerance"]
        assert isinstance(tolerance, (int, float))  # a number, by schema.json
        return Matcher("tolerance", raw["value"], float(tolerance))
    ((key, value),) = raw.items()
    kind = _MATCHER_KINDS[key]  # one of them, by schema.json
    if kind in ("any_of", "unordered"):
        assert isinstance(value, list)  # an array, by schema.json
        return Matcher(kind, tuple(_plain(item) for item in value))
    if kind == "absent":
        return Matcher("absent")
    return Matcher(kind, _plain(value))


_MATCHER_KINDS: dict[str, MatcherKind] = {kind: kind for kind in ("exact", "any_of", "regex", "unordered", "contains",
                                                                   "absent")}
