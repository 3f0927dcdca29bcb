"""bfcl reads a JavaScript two-dimensional array and an object's entries with two backtracking patterns; our
one-pass readers (suites/bfcl/java_js_types.py) must find exactly what Python's `re` finds with those patterns,
on every text, and in time linear in it (docs/bfcl.md, "Scoring time").

The patterns below are written here only as the reference the readers are held to."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hang_guard import within_30_seconds
from pytest_tooleval.suites.bfcl.java_js_types import _js_2d_array_end, _js_object_entries, js_value

TWO_D = r"\[\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\)"
ENTRIES = r"([^:]+):\s*(.*?)(?:,\s*(?=[^,]+:)|$)"

# what the patterns care about, whitespace of several kinds (U+3000 and U+001C are \s too) and filler
ARRAY_PIECES = ["[", "]", ",", " ", "\n", "\t", "\u3000", "\x1c", "a", "1", "'x'", "new", "new Array(", ")", "[["]
OBJECT_PIECES = [":", ",", " ", "\t", "\u00a0", "a", "b", "'k'", "[1, 2]", "{", "x:", ", "]


def reference_2d_end(code: str) -> int | None:
    import re

    match = re.match(TWO_D, code)
    return None if match is None else match.end()


def reference_entries(body: str) -> list[tuple[str, str]]:
    import re

    return re.findall(ENTRIES, body)


def texts(pieces: list[str]) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(pieces), max_size=24).map("".join)


@settings(max_examples=3000, deadline=None)
@given(texts(ARRAY_PIECES))
def test_the_2d_array_reader_ends_where_the_pattern_does(code: str) -> None:
    assert _js_2d_array_end(code) == reference_2d_end(code)


@settings(max_examples=3000, deadline=None)
@given(texts(OBJECT_PIECES))
def test_the_entry_reader_finds_what_the_pattern_finds(body: str) -> None:
    assert _js_object_entries(body) == reference_entries(body)


def test_both_readers_agree_on_many_random_texts() -> None:
    chooser = random.Random(20261206)
    for _ in range(20_000):
        code = "".join(chooser.choice(ARRAY_PIECES) for _ in range(chooser.randrange(1, 40)))
        assert _js_2d_array_end(code) == reference_2d_end(code), code
        body = "".join(chooser.choice(OBJECT_PIECES) for _ in range(chooser.randrange(1, 40)))
        assert _js_object_entries(body) == reference_entries(body), body


def test_whitespace_is_what_the_pattern_calls_whitespace() -> None:
    import re

    spaces = [chr(code) for code in range(0x110000) if re.fullmatch(r"\s", chr(code))]
    assert spaces == [chr(code) for code in range(0x110000) if chr(code).isspace()]


@pytest.mark.parametrize(
    ("text", "type_name", "value"),
    [
        # the 2D pattern takes about four times as long for every two more rows of an array that never closes (22
        # rows: 3 s): 60 rows would take longer than anyone waits. No 2D match: the flat pattern reads "[[a]"
        ("[[a]" + ",[a]" * 60 + "x", "array", ["[a"]),
        ("[[a]" + ",[a]" * 100_000 + "x", "array", ["[a"]),
        # quadratic: every position of a long body without a colon is tried as a key's start (8,000: 0.6 s)
        ("{" + "a" * 1_000_000 + "}", "dict", {}),
    ],
    ids=["array-60-rows-unclosed", "array-100000-rows-unclosed", "object-1MB-no-colon"],
)
def test_answers_made_to_backtrack_are_read_at_once(text: str, type_name: str, value: Any) -> None:
    assert within_30_seconds(lambda: js_value(text, type_name)) == value
