"""The YAML suite loaded for a run: a case per `cases:` entry of every file, how to ask it, how to score it.

A case is a conversation of one or more turns. Each turn adds its messages, asks the model once, and is
checked against its `expect`; scripted `tool_results` follow the turn's calls before the next one. In `prompt`
mode the tools are described in the system message and the model answers in the text protocol
(`[get_weather(city='Paris')]`); in `fc` mode they are sent as native `tools` and the model answers with
`tool_calls`. A case passes when every turn does. (docs/yaml-suites.md)
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import DataError
from ...json_value import JSONObject, JSONValue
from ...models.access import ModelAccess
from ...models.base import Reply
from ...models.meter import reply_tokens
from ...outcome import Answer, SampleError, SampleResult
from ...verdict import Verdict
from ..base import CaseBase, Skipped
from ..json_ops import iterate
from .scoring import Call, Problem, assess, decode_text_calls, decode_tool_calls
from .spec import CaseSpec, ExpectedCall, Matcher, SuiteFile, ToolResult, Turn

LANGUAGE = "custom"  # the suite's cases have no benchmark language; rows and keys need one
NO_RESULT = "ok"  # what a call without a scripted result is told, when the conversation goes on (fc needs one)


@dataclass(frozen=True, eq=False)
class YamlCase(CaseBase):
    """One case of one file, in one protocol (`mode`)."""

    file: SuiteFile
    spec: CaseSpec
    index: int  # its position among every file's cases (reports sort by it)
    mode: str  # "prompt" or "fc"
    # "" for the protocol the run asks the file in (its own, or the one --tooleval-mode names); under
    # --tooleval-mode both, the other protocol's name: its figures and test ids carry it
    variant: str = ""

    suite = "yaml"
    language = LANGUAGE

    @property
    def id(self) -> str:
        return f"{self.file.stem}-{self.spec.name}"

    @property
    def test_id(self) -> str:
        return self.id + (f"-{self.variant}" if self.variant else "")

    @property
    def category(self) -> str:
        return self.spec.category

    @property
    def family(self) -> str:
        return self.spec.category

    @property
    def marks(self) -> tuple[str, ...]:
        return ("yaml", *self.spec.tags)

    @property
    def cluster(self) -> str:
        return self.id  # its turns are one test already

    @property
    def expected_text(self) -> str:
        return " | ".join(_expected(turn) for turn in self.spec.turns)


def _check_unique_ids(files: Sequence[SuiteFile]) -> None:
    """A test id is `<file stem>-<case name>`: two files of one stem (`a.tooleval.yaml` beside `a.tooleval.yml`, or
    in two folders) holding a case of one name would give two tests one id, and a sample would answer for both."""
    seen: dict[str, Path] = {}
    for file in files:
        for spec in file.cases:
            test_id = f"{file.stem}-{spec.name}"
            first = seen.setdefault(test_id, file.path)
            if first != file.path:
                raise DataError(f"{file.path}: case {spec.name!r} has the test id {test_id!r} of a case in {first}: "
                                "rename one of the files or cases")


class YamlSuite:
    def __init__(self, files: Sequence[SuiteFile], modes: dict[Path, tuple[str, ...]]) -> None:
        self.files = tuple(files)
        self.modes = modes  # per file: the protocols its cases run in
        _check_unique_ids(self.files)

    def cases(self) -> list[YamlCase]:
        cases = []
        for file in self.files:
            for number, mode in enumerate(self.modes[file.path]):  # the first is the run's own (modes())
                cases += [YamlCase(file, spec, 0, mode, "" if number == 0 else mode) for spec in file.cases]
        return [YamlCase(case.file, case.spec, index, case.mode, case.variant) for index, case in enumerate(cases)]

    async def oracle(self, case: YamlCase) -> Answer:
        expected = [_oracle_turn(turn, case.mode) for turn in case.spec.turns]
        return Answer(_shown(expected), state=expected)

    async def replayed(self, case: YamlCase, row: dict[str, Any], access: ModelAccess) -> Answer:
        """A recorded answer: `turns` ([{"text", "tool_calls"}], one per turn), or for a one-turn case an `output`
        text (the generic replay rows)."""
        turns = row.get("turns")
        if not isinstance(turns, list):
            output = row.get("output", row.get("result"))
            if not isinstance(output, str):
                raise SampleError(f"the recorded answer of {case.test_id} has neither turns nor an output text")
            turns = [{"text": output, "tool_calls": row.get("tool_calls") or []}]
        return Answer(_shown(turns), state=turns)

    async def answer(self, case: YamlCase, access: ModelAccess) -> Answer | Skipped:
        assert access.chat is not None
        messages: list[JSONObject] = []
        system = _system_text(case)
        if system:
            messages.append({"role": "system", "content": system})
        tools = [tool.openai() for tool in case.file.tools] if case.mode == "fc" else None
        turns: list[JSONObject] = []
        tokens: dict[str, int] = {}
        latency = 0.0
        for number, turn in enumerate(case.spec.turns):
            messages += [dict(message) for message in turn.messages]
            reply: Reply = await (access.chat(messages, tools=tools) if tools else access.chat(messages))
            turns.append({"text": reply.text, "tool_calls": [[call.name, call.arguments] for call in reply.tool_calls]})
            for key, value in reply_tokens(reply).items():
                tokens[key] = tokens.get(key, 0) + value
            latency += reply.latency_s
            if number + 1 < len(case.spec.turns):
                messages += _continuation(reply, turn.tool_results, number, fc=tools is not None)
        return Answer(_shown(turns), latency, tokens, state=turns)

    def score(self, case: YamlCase, answer: Answer) -> SampleResult:
        turns = answer.state if isinstance(answer.state, list) else []
        tools = {tool.name: tool for tool in case.file.tools}
        problems: list[str] = []
        failed: list[str] = []  # the checks that failed, once each, in order: the reports list them by case
        decoded: list[JSONValue] = []
        for number, turn in enumerate(case.spec.turns):
            got = turns[number] if number < len(turns) and isinstance(turns[number], dict) else {}
            text = str(got.get("text") or "")
            calls, trouble = _calls_of(got, case.mode)
            decoded.append(None if calls is None else [_reportable({call.name: call.arguments}) for call in calls])
            found = [Problem(trouble, "arguments")] if trouble else assess(turn.expect, calls, text, tools)
            several = len(case.spec.turns) > 1
            problems += [(f"turn {number + 1} (line {turn.expect.line}): " if several else "") + problem.text
                         for problem in found]
            failed += [(f"turn {number + 1}: " if several else "") + problem.check for problem in found]
        valid = not problems
        details: JSONObject = {"file": str(case.file.path), "line": case.spec.line, "mode": case.mode}
        if failed:
            details["failed"] = list(dict.fromkeys(failed))
        verdict = Verdict(valid, "" if valid else _kind(problems[0]), problems or None,
                          decoded[0] if len(decoded) == 1 else decoded, details=details)
        return SampleResult(verdict, answer.output, answer.latency_s, answer.tokens)


#: Levels of a decoded value the report keeps; deeper ones are "...".
REPORTED_LEVELS = 50


def _reportable(value: object) -> JSONValue:
    """A decoded value as the report's JSON can hold it, with no recursion: bytes and complex numbers (which the
    text protocol keeps) become their repr, tuples lists, keys text as JSON writes them, and levels past
    `REPORTED_LEVELS` (native arguments may nest some 900 deep) "...". A non-finite float (the text protocol reads
    1E310 as infinity) stays one: the report writes it as null and names its place (json_report.strict_plain)."""
    root: list[JSONValue] = [None]
    # (value, what stores what it becomes in its container's slot, level)
    pending: list[tuple[object, Callable[[JSONValue], None], int]] = [(value, functools.partial(_put, root, 0), 0)]
    while pending:
        item, put, level = pending.pop()
        if isinstance(item, (dict, list, tuple)) and level >= REPORTED_LEVELS:
            put("...")
        elif isinstance(item, dict):
            mapping: JSONObject = {}
            put(mapping)
            for key, child in item.items():
                written = key is None or _plain_number(key)  # as json.dumps writes such a key
                text = key if isinstance(key, str) else json.dumps(key) if written else repr(key)
                mapping[text] = None
                pending.append((child, functools.partial(mapping.__setitem__, text), level + 1))
        elif isinstance(item, (list, tuple)):
            items: list[JSONValue] = [None] * len(item)
            put(items)
            pending.extend((child, functools.partial(_put, items, index), level + 1)
                           for index, child in enumerate(item))
        elif item is None or isinstance(item, (bool, str, float)):
            put(item)
        elif isinstance(item, int):
            # past what a report writes as digits
            put(item if _plain_number(item) else f"<a {item.bit_length()}-bit integer>")
        else:
            put(repr(item))  # bytes, complex
    return root[0]


def _put(items: list[JSONValue], index: int, value: JSONValue) -> None:
    items[index] = value


def _plain_number(value: object) -> bool:
    """A number JSON writes as it is: a finite float, an integer of fewer than 4,300 digits (Python's limit)."""
    if isinstance(value, float):
        return value - value == 0.0
    return isinstance(value, int) and (isinstance(value, bool) or value.bit_length() <= 10_000)


def _calls_of(turn: JSONObject, mode: str) -> tuple[list[Call] | None, str | None]:
    """The calls of one answered turn (None: words), or a problem when native calls are malformed."""
    native = turn.get("tool_calls") or []
    if mode == "fc" and native:
        decoded = decode_tool_calls([(str(name), str(arguments)) for name, arguments in map(_pair, iterate(native))])
        return (None, decoded) if isinstance(decoded, str) else (decoded, None)
    return decode_text_calls(str(turn.get("text") or "")), None


def _pair(item: JSONValue) -> tuple[JSONValue, JSONValue]:
    """`name, arguments = item`, failing as that unpacking does."""
    name, arguments = iterate(item)
    return name, arguments


def _kind(problem: str) -> str:
    """A short error type for the report's tables: what the first problem is about."""
    for marker, kind in (("expected an answer in words", "unexpected_call"), ("got an answer in words", "no_call"),
                         ("violate", "schema_violation"), ("not one of the tools", "unknown_tool"),
                         ("argument", "wrong_argument"), ("expected", "wrong_calls")):
        if marker in problem:
            return kind
    return "wrong_answer"


def _system_text(case: YamlCase) -> str:
    """The system message: in prompt mode the tools and the text protocol, then the file's own text."""
    parts = []
    if case.mode == "prompt":
        described = json.dumps([{"name": tool.name, "description": tool.description, "parameters": tool.parameters}
                                for tool in case.file.tools], ensure_ascii=False)
        parts.append("You can call the functions described below (JSON). To call one or more of them, reply with "
                     "nothing but a list of calls written like Python, with keyword arguments and literal values: "
                     "[function_name(argument='value', other=3), another_function(x=True)]. When no function fits "
                     "the request, or a value the call needs is missing, answer in plain words instead, without "
                     f"any call.\nFunctions: {described}")
    if case.file.system:
        parts.append(case.file.system)
    return "\n\n".join(parts)


def _continuation(reply: Reply, results: Sequence[ToolResult], number: int, *, fc: bool) -> list[JSONObject]:
    """The messages that carry the conversation on after a turn: the model's answer, then the scripted results
    of its calls (in fc mode one `tool` message per call id, as the API requires)."""
    if fc and reply.tool_calls:
        ids = [call.id or f"call_{number}_{index}" for index, call in enumerate(reply.tool_calls)]
        # "" rather than null: llama-cpp-python answers null content with a 500 (issue 26)
        messages: list[JSONObject] = [{"role": "assistant", "content": reply.text, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
            for call_id, call in zip(ids, reply.tool_calls, strict=True)]}]
        contents = [result.content for result in results]
        messages += [{"role": "tool", "tool_call_id": call_id,
                      "content": contents[index] if index < len(contents) else NO_RESULT}
                     for index, call_id in enumerate(ids)]
        return messages
    messages = [{"role": "assistant", "content": reply.text}]
    if results:
        lines = "\n".join(f"{result.name}: {result.content}" for result in results)
        messages.append({"role": "user", "content": f"Function results:\n{lines}"})
    return messages


def _shown(turns: list[JSONObject]) -> object:
    """The report's `output`: the text of a one-turn answer without native calls, else every turn."""
    if len(turns) == 1 and not turns[0].get("tool_calls"):
        return turns[0].get("text", "")
    return turns


# -- the oracle: what would pass, as far as the matchers say what that is ---------------------------------------

def _oracle_turn(turn: Turn, mode: str) -> JSONObject:
    if turn.expect.no_call:
        return {"text": " ".join(turn.expect.contains) or "I cannot do that with these functions.", "tool_calls": []}
    calls = [(call.name, _oracle_arguments(call)) for call in turn.expect.calls]
    if mode == "fc":
        return {"text": "", "tool_calls": [[name, json.dumps(arguments)] for name, arguments in calls]}
    return {"text": "[" + ", ".join(f"{name}({_keywords(arguments)})" for name, arguments in calls) + "]",
            "tool_calls": []}


def _oracle_arguments(call: ExpectedCall) -> JSONObject:
    """A value each matcher accepts (a regex has none in general: its argument is left out, and fails)."""
    arguments: JSONObject = {}
    for name, matcher in call.arguments.items():
        value = _oracle_value(matcher)
        if value:
            arguments[name] = value[0]
    return arguments


def _oracle_value(matcher: Matcher) -> tuple[JSONValue] | tuple[()]:
    """A value the matcher accepts, or () where it names none."""
    value = matcher.value
    values = list(value) if isinstance(value, tuple) else [value]  # any_of, unordered: a tuple of values
    if matcher.kind in ("exact", "tolerance", "contains"):
        return (values[0],)
    if matcher.kind == "any_of":
        return (values[0],) if values else ()
    if matcher.kind == "unordered":
        return (values,)
    return ()  # absent, regex


def _keywords(arguments: JSONObject) -> str:
    return ", ".join(f"{name}={_literal(value)}" for name, value in arguments.items())


def _literal(value: object) -> str:
    """A JSON value written as the text protocol reads it (Python literals)."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, (int, float, str)):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_literal(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_literal(str(key))}: {_literal(item)}" for key, item in value.items()) + "}"
    return repr(str(value))


def _expected(turn: Turn) -> str:
    """A turn's expectation as failure messages show it."""
    expect = turn.expect
    if expect.no_call:
        wanted = [f"contains {text!r}" for text in expect.contains] + (
            [f"matches /{expect.regex}/"] if expect.regex else [])
        return "an answer in words" + (f" ({', '.join(wanted)})" if wanted else "")
    shown = [f"{call.name}({', '.join(f'{name}={_matcher_text(matcher)}' for name, matcher in call.arguments.items())})"
             for call in expect.calls]
    return ("[" if expect.ordered else "{") + ", ".join(shown) + ("]" if expect.ordered else "} in any order")


def _matcher_text(matcher: Matcher) -> str:
    if matcher.kind == "exact":
        return _literal(matcher.value)
    if matcher.kind == "tolerance":
        return f"{matcher.value}±{matcher.tolerance}"
    if matcher.kind == "regex":
        return f"/{matcher.value}/"
    if matcher.kind == "absent":
        return "<absent>"
    if matcher.kind == "any_of":
        return "any of " + _literal(matcher.value)  # a tuple, written as a list
    if matcher.kind == "unordered":
        return _literal(matcher.value) + " in any order"
    return f"contains {_literal(matcher.value)}"
