"""Scoring one turn of a YAML case: what the model answered against what the case expects.

`assess` is pure: the expectation, the model's calls (None for an answer in words), its text and the file's tools
in; the problems out (none: the turn passed), each one readable line and the name of the check that failed
(`city: exact`, `schema`, `answer: contains`), which the reports list by case; `check` gives the lines alone.
`decode_text_calls` (the text protocol) and `decode_tool_calls` (native tool calls) turn the two forms of an
answer into `Call`s first.

The model's output is hostile input, so every path ends in a verdict: values in messages are clipped and written
on one line with control characters escaped, the file's patterns (matchers and the tools' schemas alike) run in
linear time (patterns.py: RE2; without it, Python's re under a deadline whose excess is a problem), a native call's
arguments are read up to the text protocol's own length limit, and deep nesting or non-JSON values become problems,
not exceptions.

Values are compared as JSON values: 3 equals 3.0, true is not 1, a string is never a number, and a tuple of the
text protocol is an array. A null argument and a missing one are the same ("not given"), in both directions:
OpenAI's strict mode makes a model send null for every optional parameter it does not use, and a case should not
fail for that (so a missing argument passes `exact: null`, an `any_of` holding null and `absent`; an unlisted
argument sent as null is not a problem even without `partial`).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn, Protocol, TypeGuard

from pytest_tooleval.suites.acebench.decode import MAX_SOURCE_CHARS, DecodeError, decode_fixed

from ...text import counted
from . import patterns

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator
    from referencing.jsonschema import Schema

    from ...json_value import JSONValue
    from .spec import Expectation, ExpectedCall, Matcher, ToolSpec

__all__ = ["Call", "Problem", "assess", "check", "decode_text_calls", "decode_tool_calls"]

#: Characters of one value (an argument, the answer's text) a message shows.
SHOWN_CHARS = 200
#: Characters of the text a matcher's pattern searches (the answer in words, a string argument).
SEARCHED_CHARS = 100_000
#: Most calls whose every one-to-one assignment is tried (8! = 40,320 sums of a table computed once); greedy above.
MAX_PERMUTED_CALLS = 8

_CALLS_SHOWN = 300  # characters of a list of calls in a message
_NAME_SHOWN = 100  # characters of a tool or argument name
_NAMES_LISTED = 10  # tool names listed when a call names none of them
_LEVELS_SHOWN = 10  # levels of a nested value shown; deeper ones are "..."
_VALIDATORS_KEPT = 256  # tools whose compiled schema is kept (a run has a few files of a few tools each)


@dataclass(frozen=True)
class Call:
    """One call the model made: the tool's name and its arguments, as JSON-like values."""

    name: str
    arguments: dict[str, object]


class Problem(NamedTuple):
    """One thing wrong with an answer: the line a failure shows, and the check that failed, named as the file
    names it: `<argument>: <matcher>` (`city: exact`, a literal being `exact`), `<argument>: unlisted`,
    `name` (another tool called), `calls` (another number of calls, or words instead), `no_call`,
    `answer: contains`, `answer: regex`, `schema`, `unknown tool`, `arguments` (native arguments not JSON)."""

    text: str
    check: str


# -- the two forms of an answer ------------------------------------------------------------------------------


def decode_text_calls(text: str) -> list[Call] | None:
    """The calls of a text-protocol answer (ACEBench's ``[ApiName(key='value'), ...]``), or None when the text is
    not that format (an answer in words). Nothing is executed: values are read off the syntax tree."""
    try:
        decoded = decode_fixed(text)
    except (DecodeError, RecursionError):
        return None
    calls = []
    for call in decoded:
        for name, arguments in call.items():
            if None in arguments:
                return None  # `**kw` names no argument, so there is nothing to score the call by
            calls.append(Call(name, {key: _as_json(value) for key, value in arguments.items() if key is not None}))
    return calls


def decode_tool_calls(calls: Sequence[tuple[str, str]]) -> list[Call] | str:
    """Native tool calls, each (name, the arguments' JSON text): the calls, or the problem of the first call
    whose arguments are not a JSON object. An empty text is no arguments (some servers send "" for ``{}``)."""
    decoded = []
    for number, (name, text) in enumerate(calls, 1):
        where = f"call {number} ({_name(name)})"
        if len(text) > MAX_SOURCE_CHARS:
            # the text protocol's own limit: past it, validating and pattern-matching the values costs too much
            return _one_line(f"{where}: its arguments are too long "
                             f"({len(text)} characters, at most {MAX_SOURCE_CHARS})")
        arguments = _json_object(text)
        if arguments is None:
            return _one_line(f"{where}: its arguments are not a JSON object: {_show(text)}")
        decoded.append(Call(name, arguments))
    return decoded


def _as_json(value: object) -> object:
    """A decoded Python value as JSON carries it: a tuple is an array (the decoder bounds the depth)."""
    if isinstance(value, (list, tuple)):
        return [_as_json(item) for item in value]
    if isinstance(value, dict):
        return {key: _as_json(item) for key, item in value.items()}
    return value


def _json_object(text: str) -> dict[str, object] | None:
    if not text.strip():
        return {}
    try:
        value = json.loads(text, parse_constant=_not_json)
    except (ValueError, RecursionError):  # ValueError also covers integers past Python's digit limit
        return None
    return value if isinstance(value, dict) else None


def _not_json(constant: str) -> NoReturn:
    raise ValueError(f"{constant} is not JSON")  # Python's json reads NaN and Infinity; JSON has neither


# -- the verdict -------------------------------------------------------------------------------------------


def check(expect: Expectation, calls: list[Call] | None, text: str, tools: Mapping[str, ToolSpec]) -> list[str]:
    """The problem lines of one turn's answer (empty: it passed); see `assess`."""
    return [problem.text for problem in assess(expect, calls, text, tools)]


def assess(expect: Expectation, calls: list[Call] | None, text: str, tools: Mapping[str, ToolSpec]) -> list[Problem]:
    """The problems of one turn's answer (empty: it passed). `calls` is None when the answer is words only.

    Every call the model made, matched or not, is also checked against its tool's parameter schema.
    """
    if expect.no_call:
        problems = [Problem(f"expected an answer in words, got {_calls_shown(calls)}", "no_call")] if calls else []
        problems += _text_problems(expect, text)
    else:
        problems = _call_problems(expect, calls, text)
    problems += _schema_problems(calls or [], tools)
    return [Problem(_one_line(problem.text), _one_line(problem.check)) for problem in problems]


def _text_problems(expect: Expectation, text: str) -> list[Problem]:
    problems = []
    if expect.contains:
        folded = text.casefold()
        problems += [Problem(f"the answer does not contain {_show(needle)}", "answer: contains")
                     for needle in expect.contains if needle.casefold() not in folded]
    if expect.regex is not None:
        found = _search(expect.regex, text[:SEARCHED_CHARS])
        if isinstance(found, str):
            problems.append(Problem(f"the answer: {found}" if found == patterns.TIMED_OUT else found, "answer: regex"))
        elif not found:
            problem = f"the answer does not match /{_pattern_shown(expect.regex)}/"
            if len(text) > SEARCHED_CHARS:
                problem += f" (searched its first {SEARCHED_CHARS} of {len(text)} characters)"
            problems.append(Problem(problem, "answer: regex"))
    return problems


def _call_problems(expect: Expectation, calls: list[Call] | None, text: str) -> list[Problem]:
    expected = expect.calls
    wanted = counted(len(expected), "call") + (f" ({_names(call.name for call in expected)})" if expected else "")
    if calls is None:
        return [Problem(f"expected {wanted}, got an answer in words: {_show(text)}", "calls")] if expected else []
    if len(calls) != len(expected):
        return [Problem(f"expected {wanted}, got {_calls_shown(calls)}", "calls")]
    if expect.ordered:
        return [problem for number, (want, call) in enumerate(zip(expected, calls, strict=True), 1)
                for problem in _pair_problems(number, want, call)]
    return _best_assignment(expected, calls)


def _best_assignment(expected: Sequence[ExpectedCall], calls: list[Call]) -> list[Problem]:
    """The problems of the best one-to-one assignment of the model's calls to the expected ones (parallel calls).

    Best: the fewest pairs of different names, then the fewest problems, so a call is compared with the
    expected call of its own name rather than reported as "expected A, got B" twice. Every assignment is tried
    up to `MAX_PERMUTED_CALLS` calls; above, each expected call in turn takes the free call that fits it best,
    which can miss an assignment that passes. Ties go to the first assignment in order, so the verdict is
    deterministic. Problems are listed in the model's call order.
    """
    table = [[_pair_problems(number, want, call) for number, call in enumerate(calls, 1)] for want in expected]
    # a name mismatch outweighs any count of argument problems
    weight = 1 + sum(len(problems) for row in table for problems in row)
    costs = [[weight * (call.name != want.name) + len(problems)
              for call, problems in zip(calls, row, strict=True)]
             for want, row in zip(expected, table, strict=True)]
    if len(calls) <= MAX_PERMUTED_CALLS:
        best: tuple[int, ...] = ()
        best_cost = -1
        for order in itertools.permutations(range(len(calls))):
            cost = sum(row[index] for row, index in zip(costs, order, strict=True))
            if best_cost < 0 or cost < best_cost:
                best, best_cost = order, cost
                if cost == 0:
                    break
    else:
        free = list(range(len(calls)))
        chosen = []
        for row in costs:
            index = min(free, key=row.__getitem__)  # min keeps the first of equals
            free.remove(index)
            chosen.append(index)
        best = tuple(chosen)
    return [problem for index, want in sorted((index, want) for want, index in enumerate(best))
            for problem in table[want][index]]


def _pair_problems(number: int, want: ExpectedCall, call: Call) -> list[Problem]:
    """What is wrong with model call `number` taken as the expected call `want`."""
    if call.name != want.name:
        return [Problem(f"call {number}: expected {_name(want.name)}, got {_name(call.name)}", "name")]
    where = f"call {number} ({_name(call.name)}): argument "
    problems = []
    for key, matcher in want.arguments.items():
        if key in call.arguments:
            problem = _mismatch(matcher, call.arguments[key])
        else:  # a missing argument reads as null: see the module's docstring
            problem = None if _mismatch(matcher, None) is None else f"missing (expected {_expected(matcher)})"
        if problem:
            problems.append(Problem(f"{where}{_show(key, _NAME_SHOWN)}: {problem}", f"{_name(key)}: {matcher.kind}"))
    if not want.partial:
        problems += [Problem(f"{where}{_show(key, _NAME_SHOWN)} was not expected (partial: true allows it)",
                             f"{_name(key)}: unlisted")
                     for key, value in call.arguments.items() if key not in want.arguments and value is not None]
    return problems


# -- matchers ----------------------------------------------------------------------------------------------


def _mismatch(matcher: Matcher, got: object) -> str | None:
    """Why `got` fails `matcher`, or None when it passes."""
    kind = matcher.kind
    if kind == "exact":
        passed = _same(matcher.value, got)
    elif kind == "any_of":
        passed = any(_same(value, got) for value in _values(matcher.value))
    elif kind == "regex":
        found = _search(str(matcher.value), got[:SEARCHED_CHARS]) if isinstance(got, str) else False
        if isinstance(found, str):
            return found
        passed = found
    elif kind == "tolerance":
        passed = _within(got, matcher.value, matcher.tolerance or 0.0)
    elif kind == "unordered":
        passed = _same_items(_values(matcher.value), got)
    elif kind == "contains":
        passed = _contains(got, matcher.value)
    elif kind == "absent":
        passed = got is None
    else:
        return f"cannot be checked: unknown matcher {_show(kind)}"
    if passed:
        return None
    # "any of [...]" says its kind already
    return f"expected {_expected(matcher)}{'' if kind == 'any_of' else f' ({kind})'}, got {_show(got)}"


def _expected(matcher: Matcher) -> str:
    """What `matcher` accepts, as the messages say it after "expected"."""
    kind, value = matcher.kind, matcher.value
    if kind == "any_of":
        return f"any of {_show(_values(value))}"
    if kind == "regex":
        return f"to match /{_pattern_shown(str(value))}/"
    if kind == "tolerance":
        return f"{_show(value)} ± {_show(matcher.tolerance or 0)}"
    if kind == "unordered":
        return f"{_show(_values(value))} in any order"
    if kind == "contains":
        return f"to contain {_show(value)}"
    if kind == "absent":
        return "to be absent"
    return _show(value)


def _values(value: object) -> list[object]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _same(expected: object, got: object) -> bool:
    """JSON equality: numbers by value (3 == 3.0), booleans only with booleans, arrays item by item, objects
    key by key. Iterative, and it stops at the first difference, so a hostile value costs at most the size of
    the expected one."""
    pending: list[tuple[object, object]] = [(expected, got)]
    while pending:
        left, right = pending.pop()
        if isinstance(left, bool) or isinstance(right, bool):
            if not (isinstance(left, bool) and isinstance(right, bool) and left == right):
                return False
        elif _is_number(left) or _is_number(right):
            if not (_is_number(left) and _is_number(right) and left == right):
                return False
        elif isinstance(left, (list, tuple)):
            if not isinstance(right, (list, tuple)) or len(left) != len(right):
                return False
            pending.extend(zip(left, right, strict=True))
        elif isinstance(left, Mapping):
            if not isinstance(right, Mapping) or len(left) != len(right) or any(key not in right for key in left):
                return False
            pending.extend((left[key], right[key]) for key in left)
        elif type(left) is not type(right) or left != right:  # strings, null, and the text protocol's bytes
            return False
    return True


def _same_items(expected: list[object], got: object) -> bool:
    """`got` is an array of the expected values in some order, each used once (equality is transitive, so
    taking the first equal item never blocks a later match)."""
    if not isinstance(got, (list, tuple)) or len(got) != len(expected):
        return False
    unused = list(got)
    for value in expected:
        index = next((index for index, item in enumerate(unused) if _same(value, item)), None)
        if index is None:
            return False
        del unused[index]
    return True


def _within(got: object, expected: object, tolerance: float) -> bool:
    if not (_is_number(got) and _is_number(expected)):
        return False
    try:
        return abs(got - expected) <= tolerance  # NaN compares false: it fails
    except OverflowError:  # an integer too large for a float is far out of any tolerance
        return False


def _contains(got: object, needle: object) -> bool:
    """A substring of a string (case-sensitive, as exact is: a regex says (?i) when case does not matter), or
    an element of an array."""
    if isinstance(got, str):
        return isinstance(needle, str) and needle in got
    if isinstance(got, (list, tuple)):
        return any(_same(needle, item) for item in got)
    return False


def _search(source: str, text: str) -> bool | str:
    """Whether the pattern `source` is found in `text` (`re.search`'s answer, in linear time), or the problem: a
    pattern that cannot be run (the loader checks them; this keeps a bad one a verdict), or the fallback's deadline
    passed (`regex matcher timed out after 2000 ms`)."""
    try:
        return patterns.search(source, text)
    except patterns.PatternProblem as exc:
        return f"the pattern /{_pattern_shown(source)}/ is not a valid regular expression: {exc}"
    except patterns.MatchTimeout as exc:
        return str(exc)


def _pattern_shown(source: str) -> str:
    return source if len(source) <= SHOWN_CHARS else source[:SHOWN_CHARS] + "..."


# -- the tools' schemas ------------------------------------------------------------------------------------


def _schema_problems(calls: list[Call], tools: Mapping[str, ToolSpec]) -> list[Problem]:
    problems = []
    for number, call in enumerate(calls, 1):
        tool = tools.get(call.name)
        if tool is None:
            listed = _names(tools) if tools else "the file has none"
            problems.append(Problem(f"call {number}: {_name(call.name)} is not one of the tools ({listed})",
                                    "unknown tool"))
            continue
        problem = _schema_problem(tool, call.arguments)
        if problem:
            problems.append(Problem(f"call {number} ({_name(call.name)}): {problem}", "schema"))
    return problems


def _schema_problem(tool: ToolSpec, arguments: dict[str, Any]) -> str | None:
    # Any: jsonschema's stubs type an instance as JSON, and the text protocol's values may be bytes or have int keys
    """The most relevant violation of the tool's parameter schema (its place, then jsonschema's message)."""
    from jsonschema.exceptions import best_match

    try:
        error = best_match(_validator(tool).iter_errors(arguments))
        if error is None:
            return None
        return f"its arguments violate the tool's schema: {_place(error.absolute_path)}{_violation(error)}"
    except Exception as exc:  # the user's schema run on the model's values: whatever that raises is a verdict
        return f"its arguments could not be checked against the tool's schema: {type(exc).__name__}: {_clip(str(exc))}"


def _violation(error: ValidationError) -> str:
    """jsonschema's message, its leading copy of the value (``<repr> is not of type ...``) clipped so that what
    is wrong still shows."""
    message = error.message
    if len(message) > SHOWN_CHARS:
        written = repr(error.instance)
        if message.startswith(written):
            message = _show(error.instance, SHOWN_CHARS // 2) + message[len(written):]
    return _clip(message)


def _place(path: Sequence[str | int]) -> str:
    """``'stops'[1]['city']: `` for a nested value; nothing for the arguments as a whole."""
    if not path:
        return ""
    head, *rest = path
    return _show(head, _NAME_SHOWN) + "".join(f"[{_show(part, _NAME_SHOWN)}]" for part in rest) + ": "


_validators: dict[int, tuple[ToolSpec, Validator]] = {}


def _validator(tool: ToolSpec) -> Validator:
    """The tool's compiled schema. Kept by the tool's identity (its dict of parameters makes it unhashable); the
    tool is kept with it, so its id cannot be reused by another while cached."""
    cached = _validators.get(id(tool))
    if cached is not None:
        return cached[1]
    if len(_validators) >= _VALIDATORS_KEPT:
        _validators.clear()
    from referencing import Registry

    # references resolve within the schema (and jsonschema's meta-schemas), never by fetching: the loader has
    # refused any other (toolschema.py), and an empty registry keeps it so should one get through
    validator = _validator_class()(tool.parameters, registry=Registry())
    _validators[id(tool)] = (tool, validator)
    return validator


@cache
def _validator_class() -> type[Validator]:
    """Draft 2020-12 with a linear uniqueItems (jsonschema's compares unsortable items, objects or mixed types,
    pairwise: a hostile array of a few thousand objects would take minutes), and the keywords that run the file's
    patterns (pattern, patternProperties, additionalProperties beside them) on the linear-time matcher."""
    from jsonschema import Draft202012Validator, validators

    return validators.create(meta_schema=Draft202012Validator.META_SCHEMA,
                             validators={**Draft202012Validator.VALIDATORS, "uniqueItems": _unique_items,
                                         "pattern": _pattern_keyword, "patternProperties": _pattern_properties,
                                         "additionalProperties": _additional_properties})


class _Descending(Protocol):
    """The validator jsonschema hands a keyword function (its protocol lacks `descend`)."""

    def is_type(self, instance: JSONValue, type: str) -> bool: ...

    def descend(self, instance: object, schema: JSONValue, path: str | int | None = None,
                schema_path: str | int | None = None) -> Iterator[ValidationError]: ...


# Keyword functions: jsonschema calls them with a keyword's value from a schema the meta-schema checked (spec.py)
def _pattern_keyword(validator: Validator, pattern: str, instance: object, schema: Schema
                     ) -> Iterator[ValidationError]:
    from jsonschema.exceptions import ValidationError

    if not isinstance(instance, str) or not validator.is_type(instance, "string"):  # the same test
        return
    found = _search(pattern, instance)
    if isinstance(found, str):
        yield ValidationError(found)
    elif not found:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: _Descending, pattern_properties: Mapping[str, JSONValue], instance: object,
                        schema: Schema) -> Iterator[ValidationError]:
    from jsonschema.exceptions import ValidationError

    if not isinstance(instance, dict) or not validator.is_type(instance, "object"):  # the same test
        return
    for pattern, subschema in pattern_properties.items():
        for key, value in instance.items():
            found = _search(pattern, key) if isinstance(key, str) else False  # the text protocol's {1: 'a'}
            if isinstance(found, str):
                yield ValidationError(f"{_show(key, _NAME_SHOWN)}: {found}")
            elif found:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: _Descending, additional: JSONValue, instance: object,
                           schema: Mapping[str, JSONValue]) -> Iterator[ValidationError]:
    """The properties neither `properties` nor a `patternProperties` pattern covers, checked against
    `additional` (false: not allowed)."""
    from jsonschema.exceptions import ValidationError

    if not isinstance(instance, dict) or not validator.is_type(instance, "object"):  # the same test
        return
    # both objects, by the meta-schema
    named = schema.get("properties", {})
    named_patterns = schema.get("patternProperties", {})
    extras = []
    for key in instance:
        if isinstance(named, dict) and key in named:
            continue
        for pattern in named_patterns if isinstance(named_patterns, dict) else {}:
            found = _search(pattern, key) if isinstance(key, str) else False
            if isinstance(found, str):
                yield ValidationError(f"{_show(key, _NAME_SHOWN)}: {found}")
            if found:
                break
        else:
            extras.append(key)
    if validator.is_type(additional, "object"):
        for key in extras:
            yield from validator.descend(instance[key], additional, path=key)
    elif additional is False and extras:
        listed = ", ".join(_show(key, _NAME_SHOWN) for key in extras[:_NAMES_LISTED])
        more = f" and {len(extras) - _NAMES_LISTED} more" if len(extras) > _NAMES_LISTED else ""
        yield ValidationError(f"Additional properties are not allowed ({listed}{more} "
                              f"{'was' if len(extras) == 1 else 'were'} unexpected)")


def _unique_items(validator: Validator, unique: bool, instance: object, schema: Schema) -> Iterator[ValidationError]:
    from jsonschema.exceptions import ValidationError

    if not unique or not isinstance(instance, list) or not validator.is_type(instance, "array"):  # the same test
        return
    seen: set[Hashable] = set()
    for item in instance:
        key = _canonical(item)
        if key in seen:
            yield ValidationError(f"{_show(instance)} has non-unique elements")
            return
        seen.add(key)


def _canonical(value: object) -> Hashable:
    """A hashable form of a JSON value, equal for equal values (1 and 1.0 hash alike; true stays apart from 1).
    Deep nesting raises RecursionError, reported by the caller."""
    if isinstance(value, bool):
        return ("boolean", value)
    if _is_number(value):
        return ("number", value)
    if isinstance(value, (list, tuple)):
        return ("array", tuple(_canonical(item) for item in value))
    if isinstance(value, Mapping):
        return ("object", frozenset((key, _canonical(item)) for key, item in value.items()))
    return (type(value).__name__, value)


# -- showing values ----------------------------------------------------------------------------------------


def _show(value: object, limit: int = SHOWN_CHARS) -> str:
    """`value` as a message shows it: Python's literal form (strings quoted, newlines escaped), clipped."""
    if isinstance(value, str) and len(value) > limit:
        return repr(value[:limit])[:limit] + f"... [{len(value)} characters]"
    shown = _literal(value, limit, 0)
    return shown if len(shown) <= limit else shown[:limit] + "..."


def _literal(value: object, budget: int, level: int) -> str:
    """`value` written out up to about `budget` characters, so a huge or deep value costs no more than that."""
    if isinstance(value, str):
        return repr(value[:budget + 1])
    if isinstance(value, int) and value.bit_length() > 1_000:
        return f"<a {value.bit_length()}-bit integer>"  # repr() of one past 4,300 digits raises
    if value is None or isinstance(value, (int, float, complex)):
        return repr(value)
    if isinstance(value, (bytes, bytearray)):
        return repr(bytes(value[:budget + 1]))
    if isinstance(value, (list, tuple, Mapping)):
        opening, closing = ("{", "}") if isinstance(value, Mapping) else ("[", "]")
        if level >= _LEVELS_SHOWN:
            return f"{opening}...{closing}"
        parts: list[str] = []
        used = 2
        for item in value.items() if isinstance(value, Mapping) else value:
            if used > budget:
                parts.append("...")
                break
            if isinstance(value, Mapping):
                key, item_value = item
                part = f"{_literal(key, budget - used, level + 1)}: {_literal(item_value, budget - used, level + 1)}"
            else:
                part = _literal(item, budget - used, level + 1)
            parts.append(part)
            used += len(part) + 2
        return opening + ", ".join(parts) + closing
    return f"<{type(value).__name__}>"


def _clip(text: str) -> str:
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "..."


def _name(name: str) -> str:
    """A tool name as written when it is plain, else quoted (empty, spaced or with unprintable characters)."""
    if name and name.isprintable() and " " not in name:
        return name if len(name) <= _NAME_SHOWN else name[:_NAME_SHOWN] + "..."
    return _show(name, _NAME_SHOWN)


def _names(names: Iterator[str] | Mapping[str, object]) -> str:
    """Up to `_NAMES_LISTED` names, then how many there are in all."""
    listed = [_name(name) for name in itertools.islice(names, _NAMES_LISTED + 1)]
    if len(listed) <= _NAMES_LISTED:
        return ", ".join(listed)
    total = f" ({len(names)} in all)" if isinstance(names, Mapping) else ""
    return ", ".join(listed[:_NAMES_LISTED]) + f", ...{total}"


def _calls_shown(calls: list[Call] | None) -> str:
    """"2 calls: a(x=1), b()", as many calls as fit in `_CALLS_SHOWN` characters."""
    calls = calls or []
    shown: list[str] = []
    used = 0
    for call in calls:
        if used > _CALLS_SHOWN:
            shown.append(f"... and {len(calls) - len(shown)} more")
            break
        shown.append(_call_shown(call))
        used += len(shown[-1]) + 2
    return counted(len(calls), "call") + (": " + ", ".join(shown) if shown else "")


def _call_shown(call: Call) -> str:
    parts: list[str] = []
    used = 0
    for key, value in call.arguments.items():
        if used > SHOWN_CHARS:
            parts.append("...")
            break
        shown_key = key if isinstance(key, str) and key.isidentifier() else _show(key, _NAME_SHOWN)
        parts.append(f"{shown_key}={_show(value, SHOWN_CHARS // 2)}")
        used += len(parts[-1]) + 2
    return f"{_name(call.name)}({', '.join(parts)})"


_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _one_line(text: str) -> str:
    """`text` with every unprintable character (newlines, terminal escapes, bidi controls) escaped as repr does."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else _ESCAPES.get(char) or _escape(char) for char in text)


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
