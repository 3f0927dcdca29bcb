"""ACEBench's normal checker: do the decoded calls match one ground-truth answer?

A faithful re-implementation of upstream ``normal_checker`` and its helpers (acebench-scoring §4.2–4.5),
quirks included, each marked where it is reproduced. ``fixed=True`` switches on the two fixes of the
``fixed`` scorer (top-level numbers and booleans are compared; parallel calls are matched one to one)
and changes nothing else.

Upstream raises (and so aborts the whole evaluation) on a few inputs: a schema without ``required``, an
unknown declared type, a ground truth that is not iterable where a container is declared, and so on.
Those give ``CheckResult(valid=False, error_type=UPSTREAM_CRASH)`` here.
"""

from __future__ import annotations

import operator
import re
from collections import Counter
from collections.abc import Container, Iterable, Iterator, Sequence
from dataclasses import dataclass

from pytest_tooleval.json_value import JSONObject, JSONValue
from pytest_tooleval.suites.acebench.decode import DecodedCall

__all__ = ["UPSTREAM_CRASH", "CheckResult", "find_description", "normal_checker", "standardize_string"]

#: error_type for inputs on which the official evaluator raises instead of giving a verdict.
UPSTREAM_CRASH = "upstream_crash"


@dataclass(frozen=True)
class CheckResult:
    """One checker verdict: ``error_type`` and ``error`` carry upstream's strings and shapes."""

    valid: bool
    error_type: str = ""
    error: object = None


_VALID = CheckResult(True)


class _Crash(Exception):
    """Upstream would raise here (see the module docstring)."""


# Declared type -> Python type. ACEBench quirk: "number" means int and "enum" means enumerate (§4.4)
_TYPE_MAP: dict[str, type] = {
    "string": str,
    "any": str,
    "integer": int,
    "int": int,
    "number": int,
    "float": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "list": list,
    "list(string)": list,
    "list(enum)": list,
    "objectArray": list,
    "object": dict,
    "dict": dict,
    "enum": enumerate,
}
# Declared types whose elements get an inner type check (§4.4).
_NESTED_TYPES = {"array", "tuple", "list(string)", "list(enum)", "object", "objectArray"}

_SUFFIX = re.compile(r"_\d+$")
_STANDARDIZE = re.compile(r"[ ,./\-_*^]")


def standardize_string(text: str) -> str:
    """Upstream's string normalisation: drop `` ,./-_*^``, lowercase, ``'`` -> ``"`` (§4.5)."""
    return _STANDARDIZE.sub("", text).lower().replace("'", '"')


def find_description(functions: object, gt_key: str) -> object:
    """The first function whose name is a *substring* of the ground-truth key (§4.2 step 4)."""
    if not isinstance(functions, list):
        return functions
    for function in functions:
        if operator.contains(gt_key, _get(function, "name")):  # `name in gt_key`: a non-string name raises
            return function
    return None


def _get(mapping: object, key: object) -> object:
    """``mapping[key]``, where upstream would raise on a missing key or a non-dict."""
    # Only a dict holding the key answers a string (or None) subscript; every other value raises.
    if isinstance(mapping, dict) and key in mapping:
        return mapping[key]
    raise _Crash(f"missing {key!r} in {type(mapping).__name__}")


def _contains(container: object, item: object) -> bool:
    """``item in container``; a JSON scalar is no container and raises Python's TypeError."""
    if isinstance(container, Container):
        return item in container
    raise TypeError(f"argument of type '{type(container).__name__}' is not iterable")


def _iter(value: object) -> Iterator[object]:
    """``iter(value)``; a JSON scalar raises Python's TypeError."""
    if isinstance(value, Iterable):
        return iter(value)
    raise TypeError(f"'{type(value).__name__}' object is not iterable")


def _to_bool(value: object) -> object:
    # ACEBench quirk: the strings "true"/"false" count as booleans in type and dict checks (§4.4, §4.5)
    if isinstance(value, str):
        if value == "true":
            return True
        if value == "false":
            return False
    return value


# --- the driver -------------------------------------------------------------------------------------


def normal_checker(
    functions: object, calls: Sequence[DecodedCall], gt: dict[str, JSONObject], *, fixed: bool = False
) -> CheckResult:
    """Check decoded `calls` against one ground-truth alternative `gt`.

    Args:
        functions: the record's ``function`` list (API descriptions).
        calls: decoded calls, ``[{name: {keyword: value}}, ...]``.
        gt: one alternative, ``{api_name[_<digits>]: {param: value}}`` (the shape data.py's loader checks).
        fixed: apply the fixed scorer's two fixes (see the module docstring).
    """
    try:
        return _normal_checker(functions, calls, gt, fixed)
    except _Crash as exc:
        return CheckResult(False, UPSTREAM_CRASH, [f"the official evaluator raises here: {exc}"])
    except (AttributeError, KeyError, TypeError, IndexError) as exc:
        # Malformed data (an answer or schema of an unexpected shape): upstream raises on it too.
        message = f"the official evaluator raises here: {type(exc).__name__}: {exc}"
        return CheckResult(False, UPSTREAM_CRASH, [message])


def _normal_checker(
    functions: object, calls: Sequence[DecodedCall], gt: dict[str, JSONObject], fixed: bool
) -> CheckResult:
    if len(calls) != len(gt):
        return CheckResult(False, "wrong functions number", ["The number of calls differs from the answer."])

    # Repeated calls are stored as f_1, f_2, ...: the suffix is stripped to get the API name (§4.2).
    entries = [(key, _SUFFIX.sub("", key), args) for key, args in gt.items()]
    predicted = Counter(_name(call) for call in calls)
    expected = Counter(base for _, base, _ in entries)
    for name in predicted:
        if name not in expected:
            return CheckResult(False, "function_mismatch", [f"extra call: {name} is not in the answer"])
    for name in expected:
        if name not in predicted:
            return CheckResult(False, "function_mismatch", [f"missing call: {name} is in the answer"])
    for name, count in predicted.items():
        if count != expected[name]:
            return CheckResult(
                False, "function_mismatch", [f"wrong count for {name}: expected {expected[name]}, got {count}"]
            )

    if fixed:
        return _match_one_to_one(functions, calls, entries)

    result = _VALID
    for key, base, args in entries:
        # ACEBench quirk: the description is looked up by substring of the suffixed key (§4.2)
        description = find_description(functions, key)
        for call in calls:
            if _name(call) == base:
                result = _simple_function_checker(description, call, args, fixed=False)
                if result.valid:
                    break
            else:
                # ACEBench quirk: a differently named call overwrites the running error (§4.2)
                result = CheckResult(False, "simple_function_checker:unclear", ["wrong_function"])
        if not result.valid:
            return result
    # ACEBench quirk: calls are never consumed, so one call may satisfy several entries (§4.2)
    return result


def _name(call: DecodedCall) -> str:
    return next(iter(call))


def _match_one_to_one(
    functions: object, calls: Sequence[DecodedCall], entries: list[tuple[str, str, JSONObject]]
) -> CheckResult:
    """Fixed scorer: every answer entry needs its own call (a perfect bipartite matching)."""
    candidates: list[list[int]] = []
    for key, base, args in entries:
        description = find_description(functions, key)
        passing: list[int] = []
        first_error: CheckResult | None = None
        for index, call in enumerate(calls):
            if _name(call) != base:
                continue
            result = _simple_function_checker(description, call, args, fixed=True)
            if result.valid:
                passing.append(index)
            elif first_error is None:
                first_error = result
        if not passing:
            return first_error or CheckResult(False, "simple_function_checker:unclear", ["wrong_function"])
        candidates.append(passing)

    owner: dict[int, int] = {}  # call index -> entry index

    def assign(entry: int, seen: set[int]) -> bool:
        for call in candidates[entry]:
            if call in seen:
                continue
            seen.add(call)
            if call not in owner or assign(owner[call], seen):
                owner[call] = entry
                return True
        return False

    for entry in range(len(entries)):
        if not assign(entry, set()):
            return CheckResult(
                False, "no_one_to_one_match", [f"no distinct call left for answer entry {entries[entry][0]}"]
            )
    return _VALID


# --- one call ---------------------------------------------------------------------------------------


def _simple_function_checker(
    description: object, call: DecodedCall, gt_args: JSONObject, *, fixed: bool
) -> CheckResult:
    call_args = next(iter(call.values()))
    parameters = _get(description, "parameters")
    # ACEBench quirk: a call without arguments is right only if the schema has no parameters at all (§4.3)
    if call_args == {} and parameters == {}:
        return _VALID
    if call_args == {} or parameters == {}:
        return CheckResult(False, "wrong_param", [])
    properties = _get(parameters, "properties")
    if gt_args == properties:  # upstream's degenerate shortcut (§4.3 step 2)
        return _VALID
    if gt_args == {}:
        return CheckResult(False, "wrong_param", [])

    func_name = _get(description, "name")
    if func_name not in call:
        # Reachable when the real name ends in _<digits> or the substring lookup picked another function (§4.9).
        return CheckResult(
            False, "wrong_function_name", [{"wrong_function": {"expected": func_name, "real": _name(call)}}]
        )
    model_params = call[func_name]

    for param in _iter(_get(parameters, "required")):
        if param not in model_params:
            return CheckResult(False, "lack_args", f"lack required_params: {param}")

    for param, value in model_params.items():
        # ACEBench quirk: an optional parameter the answer leaves out may not be supplied (§4.3)
        if not _contains(properties, param) or param not in gt_args:
            return CheckResult(False, "addition_args", f"addition params: {param}")
        result = _check_param(func_name, param, value, _get(properties, param), gt_args[param], fixed)
        if not result.valid:
            return result
    return _VALID


def _check_param(
    func_name: str, param: str, value: object, details: object, expected: JSONValue, fixed: bool
) -> CheckResult:
    declared, python_type = _declared_type(_get(details, "type"))
    inner_type = _inner_type(declared, details) if declared in _NESTED_TYPES else None
    if declared == "tuple" and type(value) is tuple:
        value = list(value)
    if declared == "float" and type(value) is int:
        value = float(value)

    typed = _type_check(func_name, param, value, expected, declared, python_type, inner_type)
    if not typed.valid:
        return typed.result
    if fixed:
        scalar = _fixed_scalar_check(func_name, param, value, expected, python_type)
        if not scalar.valid:
            return scalar
    if typed.variable:
        # ACEBench quirk: a value whose answer has another type than declared is not compared (§4.4)
        return _VALID

    # The type check matched type(value) exactly, and the answer's type too or the answer is "" (the
    # isinstance tests below restate that for the type checker; they are always true where they are reached).
    if python_type is dict:
        return _dict_checker(func_name, param, value, expected)
    if python_type is list and inner_type is dict and isinstance(value, list) and isinstance(expected, (list, str)):
        if declared == "objectArray":
            if len(value) != len(expected):
                return CheckResult(False, "value_error:dict_items", ["Wrong number of items for the object array."])
            if value:
                # Upstream calls its dict checker with a missing argument here and raises (§4.5).
                raise _Crash("objectArray value check")
        return _list_dict_checker(func_name, param, value, expected)
    if python_type is str and isinstance(value, str) and isinstance(expected, str):
        return _string_checker(func_name, param, value, expected)
    if python_type is list and isinstance(value, list) and isinstance(expected, (list, str)):
        return _list_checker(func_name, param, value, expected)
    # ACEBench quirk: top-level numbers and booleans are never value-checked (§4.5)
    return _VALID


def _declared_type(declared: object) -> tuple[str, type]:
    """The declared type's name and Python type; upstream's table lookup raises on any other value."""
    if isinstance(declared, str) and declared in _TYPE_MAP:
        return declared, _TYPE_MAP[declared]
    raise _Crash(f"unknown declared type {declared!r}")


def _inner_type(declared: str, details: object) -> type:
    items = details.get("items") if isinstance(details, dict) else None
    if isinstance(items, dict) and "type" in items:
        return _declared_type(items["type"])[1]
    # ACEBench quirk: with no `items`, anything that is not "string"/"enum" is taken as a list of dicts (§4.4)
    if "string" in declared:
        return str
    if "enum" in declared:
        return enumerate
    return dict


# --- type check -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Typed:
    valid: bool
    variable: bool = False
    result: CheckResult = _VALID


def _answer_type(expected: JSONValue) -> type | None:
    return None if expected == "" else type(expected)  # "" marks an optional parameter


def _type_check(
    func_name: str,
    param: str,
    value: object,
    expected: JSONValue,
    declared: str,
    python_type: type,
    inner_type: type | None,
) -> _Typed:
    """Upstream ``type_checker`` (§4.4): validity plus the "variable" flag that skips the value check."""
    answer_type = _answer_type(expected)
    variable = answer_type is not None and answer_type is not python_type
    value = _to_bool(value)
    nested_error: CheckResult | None = None

    if type(value) is python_type:  # exact type: a bool is not an int here
        if inner_type is None:
            return _Typed(True, variable)
        # ACEBench quirk: only list elements of the answer trigger an element check; the first non-list
        # element passes at once, and an empty answer fails (§4.4)
        for answer_item in _iterate(expected):
            if type(answer_item) is list and not all(
                _type_check(func_name, param, item, answer_item, str(inner_type), inner_type, None).valid
                for item in _iterate(value)  # a list or dict here: the nested declared types map to those
            ):
                continue
            return _Typed(True, variable)
        nested_error = CheckResult(
            False,
            "type_error",
            [f"Nested type check failed for parameter {param!r}: expected {declared} of {inner_type.__name__}, "
             f"got {_brief(value)}."],
        )

    if answer_type is not None and (type(value) is answer_type or expected == value):
        # The fallback passes as "variable"; after a failed nested check it still reports that failure.
        if nested_error is not None:
            return _Typed(False, True, nested_error)
        return _Typed(True, True)
    # Upstream replaces any nested-check message with this one.
    return _Typed(
        False,
        result=CheckResult(
            False,
            "type_error",
            [f"wrong type for parameter ({param}) of api ({func_name}): "
             f"expected {python_type.__name__}, got {type(value).__name__}"],
        ),
    )


def _iterate(expected: object) -> Iterator[object]:
    if isinstance(expected, Iterable):
        return iter(expected)  # a dict answer iterates over its keys, a string over its characters
    raise _Crash(f"cannot iterate over answer value {expected!r}")


def _fixed_scalar_check(
    func_name: str, param: str, value: object, expected: JSONValue, python_type: type
) -> CheckResult:
    """Fixed scorer: top-level numbers and booleans must equal the answer."""
    if python_type not in (int, float, bool) or expected == "" or expected is None:
        return _VALID
    value = _to_bool(value)
    if isinstance(expected, bool):
        if type(value) is bool and value == expected:
            return _VALID
        return _wrong_value("value_error:bool", func_name, param, expected, value)
    if isinstance(expected, (int, float)):
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value == expected:
            return _VALID
        return _wrong_value("value_error:number", func_name, param, expected, value)
    return _VALID


# --- value checks -----------------------------------------------------------------------------------


def _brief(value: object, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _wrong_value(error_type: str, func_name: str, param: str, expected: object, value: object) -> CheckResult:
    message = f"wrong value for parameter ({param}) of api ({func_name}): "
    return CheckResult(False, error_type, [message + f"expected {_brief(expected)}, got {_brief(value)}"])


def _string_checker(func_name: str, param: str, value: str, expected: str) -> CheckResult:
    # ACEBench quirk: the normalised answer need only be a substring of the normalised value (§4.5)
    if standardize_string(expected) not in standardize_string(value):
        return _wrong_value("value_error:string", func_name, param, expected, value)
    return _VALID


def _list_checker(func_name: str, param: str, value: list[object], expected: list[JSONValue] | str) -> CheckResult:
    # Order, length and element types count; string elements are normalised first (§4.5).
    ours = [standardize_string(item) if type(item) is str else item for item in value]
    theirs = [standardize_string(item) if type(item) is str else item for item in expected]
    if ours != theirs:
        return _wrong_value("value_error:list/tuple", func_name, param, expected, value)
    return _VALID


def _dict_checker(func_name: str, param: str, value: object, expected: object) -> CheckResult:
    error = _wrong_value("value_error", func_name, param, expected, value)
    if not isinstance(value, dict):
        return error
    if not isinstance(expected, dict):
        raise _Crash(f"answer {expected!r} is not a dict")
    # Nested key sets must be equal: optional nested keys can be neither omitted nor added (§4.5).
    if len(value) != len(expected):
        return error
    result = CheckResult(True, "dict_checker:unclear")
    for key, item in value.items():
        item = _to_bool(item)
        if key not in expected:
            return error
        answer = expected[key]
        if isinstance(answer, dict):
            result = _dict_checker(func_name, param, item, answer)
            if not result.valid:
                return result
            continue
        ours = standardize_string(item) if type(item) is str else item
        theirs = standardize_string(answer) if type(answer) is str else answer
        # ACEBench quirk: nested values compare as str() substrings, lists by their raw repr (§4.5)
        if str(theirs) not in str(ours):
            return error
    return result


def _list_dict_checker(
    func_name: str, param: str, value: list[object], expected: list[JSONValue] | str
) -> CheckResult:
    if len(value) != len(expected):
        return _wrong_value("value_error:list_dict_count", func_name, param, expected, value)
    result = CheckResult(True, "list_dict_checker:unclear")
    for item, answer in zip(value, expected, strict=True):  # lengths checked above
        result = _dict_checker(func_name, param, item, answer)
        if not result.valid:
            return result
    return result
