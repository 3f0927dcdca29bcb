"""The normal checker and the per-sample driver (acebench-scoring §4), on synthetic records."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_tooleval.suites.acebench.checker import (
    UPSTREAM_CRASH,
    CheckResult,
    normal_checker,
    standardize_string,
)
from pytest_tooleval.suites.acebench.scoring import GroundTruth, score_normal


def _function(name: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties, "required": required}
    return {"name": name, "description": "", "parameters": parameters}


# The §4.6 schema: b boolean (required), i integer, n number, x float, s string, e enum string,
# l array of strings, o object.
F = _function(
    "f",
    {
        "b": {"type": "boolean"},
        "i": {"type": "integer"},
        "n": {"type": "number"},
        "x": {"type": "float"},
        "s": {"type": "string"},
        "e": {"type": "string", "enum": ["A", "B"]},
        "l": {"type": "array", "items": {"type": "string"}},
        "o": {"type": "object", "properties": {"k": {"type": "string"}}},
    },
    ["b"],
)

# (output, ground-truth args of f, official verdict, official error_type, fixed verdict)
WORKED_EXAMPLES = [
    ("[f(b=False)]", {"b": True}, True, "", False),  # top-level booleans are not compared
    ("[f(b='true')]", {"b": True}, True, "", True),
    ("[f(b=True, i=99)]", {"b": True, "i": 3}, True, "", False),  # nor are top-level numbers
    ("[f(b=True, i=3.0)]", {"b": True, "i": 3}, True, "", True),
    ("[f(b=True, i=4.0)]", {"b": True, "i": 3}, False, "type_error", False),
    ("[f(b=True, i='3')]", {"b": True, "i": 3}, False, "type_error", False),
    ("[f(b=True, n=1)]", {"b": True, "n": 37.98}, True, "", False),
    ("[f(b=True, x=2)]", {"b": True, "x": 2.0}, True, "", True),  # an int is accepted for float
    ("[f(b=True, s='New York City')]", {"b": True, "s": "new-york"}, True, "", True),
    ("[f(b=True, e='B')]", {"b": True, "e": "A"}, False, "value_error:string", False),
    ("[f(b=True, e='BA')]", {"b": True, "e": "A"}, True, "", True),  # enums compare by substring too
    ("[f(b=True, l=['c','a'])]", {"b": True, "l": ["a", "c"]}, False, "value_error:list/tuple", False),
    ("[f(b=True, l=['A-B','c'])]", {"b": True, "l": ["a b", "c"]}, True, "", True),
    ("[f(b=True, o={'k':'Hello World!'})]", {"b": True, "o": {"k": "hello world"}}, True, "", True),
    # whitespace deletion meets str() comparison of nested lists (§4.5): only the fixed decoder keeps the space
    ("[f(b=True, o={'k':['New York']})]", {"b": True, "o": {"k": ["New York"]}}, False, "value_error", True),
    ("[f(b=True, o={'k':12345})]", {"b": True, "o": {"k": 123}}, True, "", True),  # nested numbers as text
    ("[f(b=True, o={'k':1})]", {"b": True, "o": {"k": 1.0}}, False, "value_error", False),
    ("[f(b=True, o={'k':'x','j':'y'})]", {"b": True, "o": {"k": "x"}}, False, "value_error", False),
    ("[f(b=True)]", {"b": True, "s": "x"}, True, "", True),  # a GT parameter the schema does not require
    ("[f(b=True, s='abc')]", {"b": True, "s": ""}, True, "", True),
    ("[f(b=True, s=NewYork)]", {"b": True, "s": "New York"}, True, "", True),  # unquoted: a name
    ("[f(b=True, s='true')]", {"b": True, "s": "true"}, False, "type_error", False),  # "true" is a bool here
    ("[f(b=True, z=1)]", {"b": True}, False, "addition_args", False),
    ("[f(b=True, s='x')]", {"b": True}, False, "addition_args", False),
    ("[f(b=True, **{'s': 'x'})]", {"b": True, "s": "x"}, False, "addition_args", False),
    ("[f(i=1)]", {"b": True, "i": 1}, False, "lack_args", False),
    ("[f(True)]", {"b": True}, False, "wrong_param", False),  # positional dropped -> no arguments
    ("[g(b=True)]", {"b": True}, False, "function_mismatch", False),
    ("[f(b=True), f(b=False)]", {"b": True}, False, "wrong functions number", False),
    ("[]", {"b": True}, False, "wrong functions number", False),
    ("[f(b=True, +1)]", {"b": True}, False, "wrong_output_format", False),
    ("Sure! [f(b=True)]", {"b": True}, False, "wrong_output_format", False),
    ("[f(b=True, i=+3)]", {"b": True, "i": 3}, True, "", True),  # +3 decodes as -3, never compared
    ("[f(b=True, l=[])]", {"b": True, "l": []}, False, "type_error", False),  # an empty GT container
    ("[f(b=True, o={})]", {"b": True, "o": {}}, False, "type_error", False),
]


@pytest.mark.parametrize(("output", "gt_args", "valid", "error_type", "fixed_valid"), WORKED_EXAMPLES)
def test_worked_examples(output: str, gt_args: dict[str, Any], valid: bool, error_type: str, fixed_valid: bool) -> None:
    verdict = score_normal([F], {"f": gt_args}, output)
    assert (verdict.valid, verdict.error_type, verdict.fixed) == (valid, error_type, fixed_valid)


def test_two_calls_without_brackets_form_a_tuple() -> None:
    verdict = score_normal([F], {"f": {"b": True}, "f_1": {"b": True}}, "f(b=True), f(b=True)")
    assert verdict.valid


S = _function("f", {"s": {"type": "string"}}, ["s"])
G = _function("g", {"t": {"type": "string"}}, ["t"])


@pytest.mark.parametrize(
    ("output", "gt", "valid", "error_type", "fixed_valid"),
    [
        # calls are never consumed: one call satisfies two entries (§4.2); the fixed scorer wants two
        ("[f(s='ab'), f(s='zzz')]", {"f": {"s": "a"}, "f_1": {"s": "ab"}}, True, "", False),
        ("[f(s='zzz'), f(s='ab')]", {"f_1": {"s": "a"}, "f_2": {"s": "ab"}}, True, "", False),
        ("[f(s='a'), f(s='ab')]", {"f_1": {"s": "ab"}, "f_2": {"s": "a"}}, True, "", True),
        # the last call examined decides the error: another name masks a value error (§4.2)
        (
            "[f(s='wrong'), g(t='y')]",
            {"f": {"s": "x"}, "g": {"t": "y"}},
            False,
            "simple_function_checker:unclear",
            False,
        ),
        ("[g(t='y'), f(s='wrong')]", {"f": {"s": "x"}, "g": {"t": "y"}}, False, "value_error:string", False),
        ("[g(t='y'), f(s='x')]", {"f": {"s": "x"}, "g": {"t": "y"}}, True, "", True),  # order-insensitive
        ("[f(s='x'), f(s='x')]", {"f": {"s": "x"}, "g": {"t": "y"}}, False, "function_mismatch", False),
    ],
)
def test_parallel_calls(output: str, gt: dict[str, Any], valid: bool, error_type: str, fixed_valid: bool) -> None:
    verdict = score_normal([S, G], gt, output)
    assert (verdict.valid, verdict.error_type, verdict.fixed) == (valid, error_type, fixed_valid)


def test_alternatives_any_may_match_and_the_first_failure_is_reported() -> None:
    alternatives: GroundTruth = [{"f": {"s": "first"}}, {"f": {"s": "second"}}]
    assert score_normal([S], alternatives, "[f(s='second')]").valid
    failed = score_normal([S], alternatives, "[f(s='third')]")
    assert (failed.valid, failed.error_type) == (False, "value_error:string")
    assert "first" in str(failed.error)


def test_description_is_found_by_substring_of_the_suffixed_key() -> None:
    # "ab" is a substring of "ab_c_1": its (wrong) description is picked first, as upstream does (§4.2).
    ab = _function("ab", {"p": {"type": "string"}}, ["p"])
    ab_c = _function("ab_c", {"s": {"type": "string"}}, ["s"])
    verdict = score_normal([ab, ab_c], {"ab_c_1": {"s": "x"}}, "[ab_c(s='x')]")
    assert (verdict.valid, verdict.error_type) == (False, "wrong_function_name")


def test_real_names_ending_in_digits_are_unpassable() -> None:
    # zh normal_similar_api_2 shape (§4.9): the key is the real name, and its suffix is stripped.
    function = _function("personalized_learning_2", {"s": {"type": "string"}}, ["s"])
    gt: GroundTruth = {"personalized_learning_2": {"s": "x"}}
    assert score_normal([function], gt, "[personalized_learning_2(s='x')]").error_type == "function_mismatch"
    assert score_normal([function], gt, "[personalized_learning(s='x')]").error_type == "wrong_function_name"


STRINGS = {"a": {"type": "array", "items": {"type": "string"}}}


@pytest.mark.parametrize(
    ("properties", "output", "gt_args", "valid", "error_type"),
    [
        # a zero-argument call is wrong whenever the schema has parameters (§4.3)
        ({}, "[f()]", {}, False, "wrong_param"),
        # an array without items is an array of dicts: strings fail the list-of-dict check (§4.4)
        ({"a": {"type": "array"}}, "[f(a=['x'])]", {"a": ["x"]}, False, "value_error"),
        ({"a": {"type": "array"}}, "[f(a=[{'k': 'v w'}])]", {"a": [{"k": "vw"}]}, True, ""),
        (
            {"a": {"type": "array"}},
            "[f(a=[{'k': 'v'}])]",
            {"a": [{"k": "v"}, {"k": "w"}]},
            False,
            "value_error:list_dict_count",
        ),
        # an array whose GT is a dict passes with any non-empty list: "variable", not compared (§4.4)
        (STRINGS, "[f(a=['anything'])]", {"a": {"k": 1}}, True, ""),
        # a string parameter with GT null accepts any string
        ({"a": {"type": "string"}}, "[f(a='anything')]", {"a": None}, True, ""),
        # "enum" maps to enumerate: only the fallback of the type check can pass (§4.4)
        ({"a": {"type": "enum"}}, "[f(a='x')]", {"a": "y"}, True, ""),
        ({"a": {"type": "enum"}}, "[f(a=1)]", {"a": "y"}, False, "type_error"),
        # a tuple value is a list for a declared tuple, not for an array
        ({"a": {"type": "tuple", "items": {"type": "integer"}}}, "[f(a=(1, 2))]", {"a": [1, 2]}, True, ""),
        ({"a": {"type": "array", "items": {"type": "integer"}}}, "[f(a=(1, 2))]", {"a": [1, 2]}, False, "type_error"),
        # nested element types are checked only against list elements of the GT (then the values are compared)
        (STRINGS, "[f(a=[['x'], 1])]", {"a": [["x"], ["y"]]}, False, "type_error"),
        (STRINGS, "[f(a=['x', 'y'])]", {"a": [["x"], ["y"]]}, False, "value_error:list/tuple"),
        (STRINGS, "[f(a=[['x'], ['y']])]", {"a": [["x"], ["y"]]}, True, ""),
        # nested booleans are compared through str(), with "true"/"false" read as booleans first
        ({"a": {"type": "object"}}, "[f(a={'k': 'true'})]", {"a": {"k": True}}, True, ""),
        ({"a": {"type": "object"}}, "[f(a={'k': False})]", {"a": {"k": True}}, False, "value_error"),
        ({"a": {"type": "object"}}, "[f(a={'k': {'j': 'NY'}})]", {"a": {"k": {"j": "ny"}}}, True, ""),
        ({"a": {"type": "object"}}, "[f(a={'k': ['NY', 'LA']})]", {"a": {"k": ["NY"]}}, False, "value_error"),
        # GT that equals the schema's properties is a (degenerate) pass
        ({"a": {"type": "string"}}, "[f(a='zzz')]", {"a": {"type": "string"}}, True, ""),
    ],
)
def test_type_and_value_rules(
    properties: dict[str, Any], output: str, gt_args: dict[str, Any], valid: bool, error_type: str
) -> None:
    function = _function("f", properties, [])
    if not properties:
        function["parameters"] = {"type": "object", "properties": {}, "required": []}
    verdict = score_normal([function], {"f": gt_args}, output)
    assert (verdict.valid, verdict.error_type) == (valid, error_type)


@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ("New York, NY", "newyorkny"),
        ("2023-08-01 10:00", "2023080110:00"),
        ("It's a_b*c^d/e.f", 'it"sabcdef'),
        ("a\tb", "a\tb"),  # tabs, newlines and colons stay
    ],
)
def test_standardize_string(text: str, normalised: str) -> None:
    assert standardize_string(text) == normalised


def test_a_schema_upstream_crashes_on_gives_an_invalid_result() -> None:
    broken = {"name": "f", "parameters": {"type": "object", "properties": {"s": {"type": "string"}}}}  # no required
    result = normal_checker([broken], [{"f": {"s": "x"}}], {"f": {"s": "x"}})
    assert result == CheckResult(False, UPSTREAM_CRASH, result.error)
    unknown = _function("f", {"s": {"type": "str"}}, [])
    assert normal_checker([unknown], [{"f": {"s": "x"}}], {"f": {"s": "x"}}).error_type == UPSTREAM_CRASH
    assert normal_checker([], [{"f": {"s": "x"}}], {"f": {"s": "x"}}).error_type == UPSTREAM_CRASH


def test_no_parameters_at_all() -> None:
    function = {"name": "f", "description": "", "parameters": {}}
    assert score_normal([function], {"f": {}}, "[f()]").valid
    assert score_normal([function], {"f": {}}, "[f(a=1)]").error_type == "wrong_param"


def test_verdict_calls_are_json_safe() -> None:
    verdict = score_normal([F], {"f": {"b": True}}, "[f(b=True, **{'s': (1, 2)})]")
    assert verdict.calls == [{"f": {"b": True, "null": {"s": [1, 2]}}}]
    assert score_normal([F], {"f": {"b": True}}, "nope").calls is None
