"""tool_calls -> the checkers' call list, and back to the text protocol's form (function-calling mode)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from pytest_tooleval.suites.acebench.decode import decode_fixed
from pytest_tooleval.suites.acebench.scoring import GroundTruth, score_normal, score_normal_tool_calls
from pytest_tooleval.suites.acebench.tool_calls import (
    ToolCallFormatError,
    decoded_calls,
    render_calls,
    written_calls,
)

FUNCTIONS = [
    {
        "name": "geo.find_city",
        "description": "Find a city.",
        "parameters": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "tags": {"type": "array"}},
            "required": ["name"],
        },
    }
]
NAMES = {"geo_find_city": "geo.find_city"}


def test_names_are_mapped_back_and_arguments_parsed() -> None:
    calls = decoded_calls([{"name": "geo_find_city", "arguments": '{"name": "New York", "tags": ["a b"]}'}], NAMES)
    assert calls == [{"geo.find_city": {"name": "New York", "tags": ["a b"]}}]


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ('{"name": "Par', "the arguments are not JSON (JSONDecodeError)"),
        ('["Paris"]', "the arguments are a JSON list, not an object"),
        ("[" * 100_000 + "]" * 100_000, "the arguments are not JSON (RecursionError)"),  # hostile nesting
        ('{"n": ' + "9" * 5000 + "}", "the arguments are not JSON (ValueError)"),  # past Python's digit limit
    ],
)
def test_arguments_that_are_not_an_object_are_a_format_error(arguments: str, problem: str) -> None:
    with pytest.raises(ToolCallFormatError, match=re.escape(f"tool call 1 (geo.find_city): {problem}")):
        decoded_calls([{"name": "geo_find_city", "arguments": arguments}], NAMES)


def test_rendered_calls_decode_back_to_the_same_calls() -> None:
    calls: list[dict[str, dict[str, Any]]] = [
        {"f": {"s": "it's", "n": -1.5, "b": True, "z": None, "o": {"k": ["x y"]}}},
        {"g": {}},
    ]
    text = render_calls(calls)
    assert text == """[f(s="it's", n=-1.5, b=True, z=None, o={'k': ['x y']}), g()]"""
    assert decode_fixed(text) == calls


def test_unreadable_calls_are_written_raw() -> None:
    assert written_calls([{"name": "geo_find_city", "arguments": '{"name": "Par'}], NAMES) == (
        '[geo.find_city({"name": "Par)]',
        False,
    )
    assert written_calls([{"name": "geo_find_city", "arguments": '{"name": "Paris"}'}], NAMES) == (
        "[geo.find_city(name='Paris')]",
        True,
    )


def test_tool_calls_meet_no_whitespace_quirk_where_the_text_protocol_does() -> None:
    # acebench-scoring §4.5: a list inside an object with a space in a string can never match as text
    functions = [
        {
            "name": "f",
            "description": "",
            "parameters": {
                "type": "object",
                "required": ["o"],
                "properties": {"o": {"type": "object", "required": ["k"], "properties": {"k": {"type": "array"}}}},
            },
        }
    ]
    truth: GroundTruth = {"f": {"o": {"k": ["New York"]}}}
    assert not score_normal(functions, truth, "[f(o={'k': ['New York']})]").valid
    verdict = score_normal_tool_calls(functions, truth, [{"name": "f", "arguments": '{"o": {"k": ["New York"]}}'}])
    assert verdict.valid and verdict.fixed


def test_a_malformed_call_fails_both_scorers_as_a_format_error() -> None:
    verdict = score_normal_tool_calls(
        FUNCTIONS, {"geo.find_city": {"name": "Paris"}}, [{"name": "geo_find_city", "arguments": "{"}], NAMES
    )
    assert (verdict.valid, verdict.fixed, verdict.error_type) == (False, False, "wrong_output_format")
    assert verdict.calls is None
