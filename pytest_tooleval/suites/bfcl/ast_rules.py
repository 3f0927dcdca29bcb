"""bfcl's AST checker: decoded calls against the possible answers of a sample (bfcl §4).

The rules, in the order bfcl applies them, are those of §4.1-§4.8: which checker a category uses, the function
name, required parameters, unexpected parameters, the declared type of each value (with Java and JavaScript
texts converted first), the value against the possible answers (strings normalised, dicts key by key, lists as a
whole), and optional parameters left out. The first failure decides the error type. Where bfcl's own checker
would raise on an answer (a crash of its whole evaluation run), we return the invalid verdict
``ast_checker:unsupported_value`` instead (§4.8).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TypeAlias

from ...json_value import JSONObject, JSONValue
from ...text import counted
from ..json_ops import as_getter, as_object, contains, item, iterate, length, subscript
from . import java_js_types

__all__ = ["UNSUPPORTED", "Call", "CheckOutcome", "check_calls", "normalize_string", "safe_repr"]

#: Our error type where bfcl's checker itself would raise (§4.8).
UNSUPPORTED = "ast_checker:unsupported_value"

#: bfcl's Python type names -> the Python type a value must have (§4.2).
PYTHON_TYPES: dict[str, type] = {
    "string": str, "integer": int, "float": float, "boolean": bool, "array": list, "tuple": list, "dict": dict,
    "any": str,
}  # fmt: skip
#: Types whose items are type-checked too, one level deep (§4.2).
PYTHON_ITEM_CHECKED = ("array", "tuple")
#: Java and JavaScript types whose text is converted with the item type (§4.2).
ITEM_CONVERTED = ("Array", "ArrayList", "array")

#: A decoded call in bfcl's call format, ``{function name: {parameter: value}}`` (what is_call_format checks).
Call: TypeAlias = "dict[object, dict[object, object]]"


@dataclass(frozen=True)
class CheckOutcome:
    """The checker's result: valid, or the first failure's error type and messages."""

    valid: bool
    error_type: str = ""
    errors: tuple[str, ...] = ()


_VALID = CheckOutcome(True)


class _Unsupported(Exception):
    """bfcl's checker would raise here."""


def _fail(error_type: str, *errors: str) -> CheckOutcome:
    return CheckOutcome(False, error_type, errors)


def safe_repr(value: object, limit: int = 500) -> str:
    """``repr(value)``, shortened to about `limit` characters, never raising (huge ints, deep nesting)."""
    try:
        text = repr(value)
    except (ValueError, RecursionError):
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit] + "..."


def check_calls(
    category: str,
    mode: str,
    language: str,
    functions: list[JSONValue],
    calls: list[Call],
    possible_answers: list[JSONObject],
) -> CheckOutcome:
    """Check decoded `calls` (already in call format) against a sample's possible answers (§4.1, §4.7)."""
    checker = _Checker(language, dots_to_underscores=mode == "fc")
    try:
        # (bfcl §4.1) the checker is chosen by the category's name: "parallel" first, then "multiple"
        if "parallel" in category:
            return checker.parallel(functions, calls, possible_answers)
        if "multiple" in category:
            return checker.multiple(functions, calls, possible_answers)
        if len(calls) != 1:
            return _fail("simple_function_checker:wrong_count", f"expected one call, got {len(calls)}")
        return checker.function(functions[0], calls[0], possible_answers[0])
    except (_Unsupported, java_js_types.UnsupportedConversion) as exc:
        return _fail(UNSUPPORTED, f"bfcl's checker cannot handle this answer: {exc}")
    except (TypeError, ValueError, AttributeError, KeyError, IndexError, RecursionError, OverflowError) as exc:
        return _fail(UNSUPPORTED, f"bfcl's checker cannot handle this answer: {type(exc).__name__}: {exc}")


def normalize_string(text: str) -> str:
    """(bfcl §4.3) drop spaces and ``,./-_*^``, lower-case, and turn single quotes into double quotes."""
    return re.sub(r"[ ,./\-_*^]", "", text).lower().replace("'", '"')


def _normalized(value: object) -> object:
    return normalize_string(value) if type(value) is str else value


def _first_typed(possible: JSONValue) -> type | None:
    """The type of the first possible answer that is not ``""`` (the mark of an optional parameter, §4.4)."""
    for answer in iterate(possible):
        if answer != "":
            return type(answer)
    return None


def _find_function(functions: list[JSONValue], name: str) -> JSONValue:
    for function in functions:
        if item(function, "name") == name:
            return function
    raise _Unsupported(f"no function named {name!r} among the functions of the sample")


class _Checker:
    def __init__(self, language: str, *, dots_to_underscores: bool) -> None:
        self.language = language
        self.dots_to_underscores = dots_to_underscores

    # --- call counts and matching (§4.1, §4.7) ---

    def multiple(self, functions: list[JSONValue], calls: list[Call], possible: list[JSONObject]) -> CheckOutcome:
        if len(calls) != len(possible):
            return _fail("multiple_function_checker:wrong_count",
                         f"expected {counted(len(possible), 'call')}, got {len(calls)}")
        expected_name = next(iter(possible[0]))
        return self.function(_find_function(functions, expected_name), calls[0], possible[0])

    def parallel(self, functions: list[JSONValue], calls: list[Call], possible: list[JSONObject]) -> CheckOutcome:
        if len(calls) != len(possible):
            return _fail(
                "parallel_function_checker_no_order:wrong_count",
                f"expected {counted(len(possible), 'call')}, got {len(calls)}"
            )
        # (bfcl §4.7) each expected call, in order, takes the first unmatched call that passes
        matched: set[int] = set()
        for expected_index, expected in enumerate(possible):
            function = _find_function(functions, next(iter(expected)))
            failures = []
            found = False
            for index, call in enumerate(calls):
                if index in matched:
                    continue
                outcome = self.function(function, call, expected)
                if outcome.valid:
                    matched.add(index)
                    found = True
                    break
                failures.append(f"call {index}: {outcome.error_type}: {'; '.join(outcome.errors)}")
            if not found:
                unmatched = [index for index in range(len(calls)) if index not in matched]
                return _fail(
                    "parallel_function_checker_no_order:cannot_find_match",
                    f"no call among {unmatched} matches expected call {expected_index} ({next(iter(expected))})",
                    *failures,
                )
        return _VALID

    # --- one call (§4.1-§4.6) ---

    def function(self, function: JSONValue, call: Call, expected: JSONObject) -> CheckOutcome:
        possible = next(iter(expected.values()))
        name = item(function, "name")
        properties = item(item(function, "parameters"), "properties")
        required = item(item(function, "parameters"), "required")
        if self.dots_to_underscores:
            # (bfcl §4.1) function-calling models cannot use "." in names: the expected name carries "_"
            if not isinstance(name, str):
                raise AttributeError(f"'{type(name).__name__}' object has no attribute 'replace'")
            name = name.replace(".", "_")
        if name not in call:
            return _fail(
                "simple_function_checker:wrong_func_name",
                f"expected a call of {name!r}, got {safe_repr(next(iter(call)), 100)}",
            )
        arguments = call[name]
        for needed in iterate(required):
            if needed not in arguments:
                return _fail("simple_function_checker:missing_required", f"missing required parameter {needed!r}")
        for parameter, value in arguments.items():
            if not contains(properties, parameter) or not contains(possible, parameter):
                return _fail("simple_function_checker:unexpected_param", f"unexpected parameter {safe_repr(parameter)}")
            outcome = self.parameter(parameter, value, subscript(properties, parameter), subscript(possible, parameter))
            if not outcome.valid:
                return outcome
        for parameter, answers in as_getter(possible).items():
            if parameter not in arguments and not contains(answers, ""):
                return _fail(
                    "simple_function_checker:missing_optional",
                    f"parameter {parameter!r} is left out, but no possible answer leaves it out",
                )
        return _VALID

    def parameter(self, name: object, value: object, schema_value: JSONValue, answers: JSONValue) -> CheckOutcome:
        schema = as_object(schema_value)  # indexed by "type" first: a TypeError for anything but an object
        declared = schema["type"]
        item_type: type | None = None
        if self.language in ("java", "javascript"):
            # (bfcl §4.2) the argument is text; it is converted by the declared type before any check
            table = java_js_types.JAVA_TYPES if self.language == "java" else java_js_types.JS_TYPES
            if declared not in table:
                raise _Unsupported(f"bfcl has no conversion for the type {declared!r}")
            assert isinstance(declared, str)  # a key of the table
            expected_type = table[declared]
            if type(value) is not str:
                error_type = "type_error:java" if self.language == "java" else "type_error:js"
                return _fail(error_type, f"parameter {name!r}: expected the text of a value, got {safe_repr(value)}")
            convert = java_js_types.java_value if self.language == "java" else java_js_types.js_value
            if declared in ITEM_CONVERTED:
                declared_item = item(schema["items"], "type")
                if declared_item not in table:
                    raise _Unsupported(f"bfcl has no conversion for the item type {declared_item!r}")
                assert isinstance(declared_item, str)  # a key of the table
                item_type = table[declared_item]
                value = convert(value, declared, declared_item)
            else:
                value = convert(value, declared)
        else:
            if declared not in PYTHON_TYPES:
                raise _Unsupported(f"bfcl has no Python type for {declared!r}")
            assert isinstance(declared, str)  # a key of the table
            expected_type = PYTHON_TYPES[declared]
            if declared in PYTHON_ITEM_CHECKED:
                declared_item = item(schema["items"], "type")
                if declared_item not in PYTHON_TYPES:
                    raise _Unsupported(f"bfcl has no Python type for the item type {declared_item!r}")
                assert isinstance(declared_item, str)  # a key of the table
                item_type = PYTHON_TYPES[declared_item]
        if declared == "tuple" and type(value) is tuple:
            value = list(value)  # possible answers come from JSON, where tuples are lists (§4.6)
        if self.language == "python" and declared == "float" and type(value) is int:
            value = float(value)  # (bfcl §4.2) an int is accepted for a float

        typed = _type_check(name, value, answers, declared, expected_type, item_type)
        if not typed.valid:
            return typed.outcome
        if not typed.is_variable:
            # a valid type that is no variable's is the declared one: `type(value) is expected_type`
            if expected_type is dict and type(value) is dict:
                return _dict_check(name, value, answers)
            if expected_type is list and item_type is dict and type(value) is list:
                return _list_of_dicts_check(name, value, answers)
            if expected_type is str and type(value) is str:
                return _string_check(name, value, answers)
            if expected_type is list and type(value) is list:
                return _list_check(name, value, answers)
        if not contains(answers, value):
            return _fail(
                "value_error:others",
                f"parameter {name!r}: got {safe_repr(value)}, expected one of {safe_repr(answers)}",
            )
        return _VALID


# --- types (§4.2) -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Typed:
    valid: bool
    is_variable: bool = False
    outcome: CheckOutcome = _VALID


def _type_check(
    name: object, value: object, answers: JSONValue, declared: str, expected_type: type, item_type: type | None
) -> _Typed:
    """bfcl's type check: the declared type, or the possible answers' type (a "variable", §4.2)."""
    answer_type = _first_typed(answers)
    # possible answers of another type than the declared one mark the value as a variable name
    is_variable = answer_type is not None and answer_type is not expected_type
    errors: list[str] = []
    error_type = "type_error:simple"
    if type(value) is expected_type:
        if item_type is None:
            return _Typed(True, is_variable)
        assert isinstance(value, list)  # only the list types check items (PYTHON_ITEM_CHECKED, ITEM_CONVERTED)
        for answer in iterate(answers):
            items_pass = True
            if type(answer) is list:
                for element in value:
                    if not _type_check(name, element, answer, str(item_type), item_type, None).valid:
                        items_pass = False
                        break
            if items_pass:
                return _Typed(True, is_variable)
        errors.append(
            f"parameter {name!r}: items of {declared} should be {item_type.__name__}, got {safe_repr(value)}"
        )
        error_type = "type_error:nested"
    if answer_type is not None and type(value) is answer_type:
        # bfcl quirk: a failed item check still ends here, and the error type stays "nested" (§4.2)
        if errors:
            return _Typed(False, True, _fail(error_type, *errors))
        return _Typed(True, True)
    errors.append(f"parameter {name!r}: expected type {declared}, got {type(value).__name__} {safe_repr(value)}")
    return _Typed(False, is_variable, _fail("type_error:simple", *errors))


# --- values (§4.3-§4.6) -----------------------------------------------------------------------------------------


def _string_check(name: object, value: str, answers: JSONValue) -> CheckOutcome:
    normalized = [normalize_string(answer) for answer in iterate(answers) if type(answer) is str]
    if normalize_string(value) not in normalized:
        return _fail(
            "value_error:string",
            f"parameter {name!r}: got {safe_repr(value)}, expected one of {safe_repr(answers)} (case and "
            "punctuation ignored)",
        )
    return _VALID


def _list_check(name: object, value: list[object], answers: JSONValue) -> CheckOutcome:
    normalized_value = [_normalized(element) for element in value]
    normalized_answers = [[_normalized(element) for element in iterate(answer)] for answer in iterate(answers)]
    if normalized_value not in normalized_answers:
        return _fail(
            "value_error:list/tuple",
            f"parameter {name!r}: got {safe_repr(value)}, expected one of {safe_repr(answers)}",
        )
    return _VALID


def _dict_check(name: object, value: dict[object, object], answers: JSONValue) -> CheckOutcome:
    """(bfcl §4.5) the dict must fit one possible answer key by key; the last one tried gives the error."""
    outcome = _fail("dict_checker:unclear", f"parameter {name!r}: no possible answer to compare with")
    for answer in iterate(answers):
        if answer == "":
            continue
        errors: list[str] = []
        error_type = "dict_checker:unclear"
        for key, element in value.items():
            if not contains(answer, key):
                errors.append(f"parameter {name!r}: unexpected key {safe_repr(key)}")
                error_type = "value_error:dict_key"
                break
            accepted = [_normalized(choice) for choice in iterate(subscript(answer, key))]
            if _normalized(element) not in accepted:
                errors.append(
                    f"parameter {name!r}: key {safe_repr(key)} is {safe_repr(element)}, "
                    f"expected one of {safe_repr(accepted)}"
                )
                error_type = "value_error:dict_value"
                break
        # bfcl quirk: missing keys are looked for even after a failure, and then decide the error type (§4.5)
        for key, choices in as_getter(answer).items():
            if key not in value and not contains(choices, ""):
                errors.append(f"parameter {name!r}: missing key {key!r}")
                error_type = "value_error:dict_key"
                break
        if not errors:
            return _VALID
        outcome = _fail(error_type, *errors)
    return outcome


def _list_of_dicts_check(name: object, value: list[object], answers: JSONValue) -> CheckOutcome:
    """(bfcl §4.5) a list of dicts must fit one possible answer dict by dict, in order."""
    outcome = _fail("list_dict_checker:unclear", f"parameter {name!r}: no possible answer to compare with")
    for answer in iterate(answers):
        if len(value) != length(answer):
            outcome = _fail(
                "value_error:list_dict_count",
                f"parameter {name!r}: {counted(len(value), 'dict')}, expected {length(answer)}",
            )
            continue
        all_fit = True
        for position, element in enumerate(value):
            if type(element) is not dict:
                raise _Unsupported(f"item {position} of {name!r} is a {type(element).__name__}, not a dict")
            outcome = _dict_check(name, element, [subscript(answer, position)])
            if not outcome.valid:
                all_fit = False
                break
        if all_fit:
            return _VALID
    return outcome
