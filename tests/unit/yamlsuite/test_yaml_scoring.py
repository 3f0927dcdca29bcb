"""The YAML suite's scorer: matchers, call matching (ordered and as a set), the tools' schemas, answers in
words, the two answer decoders, and hostile answers, each with the exact problem line it gives."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from pytest_tooleval.suites.yamlsuite.scoring import (
    MAX_PERMUTED_CALLS,
    SEARCHED_CHARS,
    Call,
    assess,
    check,
    decode_text_calls,
    decode_tool_calls,
)
from pytest_tooleval.suites.yamlsuite.spec import Expectation, ExpectedCall, Matcher, ToolSpec

WEATHER = ToolSpec(
    "get_weather",
    "The weather of a city.",
    {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "unit": {"type": ["string", "null"]}},
        "required": ["city"],
    },
)
EVENT = ToolSpec(
    "add_event",
    "Add a calendar event.",
    {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "guests": {"type": "array", "uniqueItems": True},
        },
    },
)
# one parameter `x` of any kind, for the matcher tests
ANY = ToolSpec("f", "Anything.", {"type": "object", "properties": {"x": {}}})
TOOLS = {tool.name: tool for tool in (WEATHER, EVENT, ANY)}


def expect_calls(*calls: ExpectedCall, ordered: bool = True) -> Expectation:
    return Expectation(calls=calls, ordered=ordered)


def weather(city: str = "Paris", **matchers: Matcher) -> ExpectedCall:
    return ExpectedCall("get_weather", {"city": Matcher("exact", city), **matchers})


def event(title: str) -> ExpectedCall:
    return ExpectedCall("add_event", {"title": Matcher("exact", title)})


WORDS = Expectation(no_call=True, contains=("which restaurant", "Paris"), regex=r"\bbook(ed|ing)?\b")


# -- matchers ------------------------------------------------------------------------------------------------

NOT_GIVEN = object()  # the model left the argument out

MATCHER_CASES: list[tuple[Matcher, Any, str | None]] = [
    (Matcher("exact", "Paris"), "Paris", None),
    (Matcher("exact", "Paris"), "paris", "expected 'Paris' (exact), got 'paris'"),
    (Matcher("exact", 3), 3.0, None),
    (Matcher("exact", 1), True, "expected 1 (exact), got True"),
    (Matcher("exact", True), 1, "expected True (exact), got 1"),
    (Matcher("exact", 3), "3", "expected 3 (exact), got '3'"),
    (Matcher("exact", [1, 2]), [1, 2], None),
    (Matcher("exact", [1, 2]), [2, 1], "expected [1, 2] (exact), got [2, 1]"),
    (Matcher("exact", {"a": 1, "b": [True]}), {"b": [True], "a": 1.0}, None),
    (Matcher("exact", {"a": 1}), {"a": 1, "b": 2}, "expected {'a': 1} (exact), got {'a': 1, 'b': 2}"),
    (Matcher("exact", None), None, None),
    (Matcher("exact", None), NOT_GIVEN, None),  # null and not given are the same
    (Matcher("any_of", ("celsius", None)), "celsius", None),
    (Matcher("any_of", ("celsius", None)), NOT_GIVEN, None),
    (Matcher("any_of", ("celsius", None)), "kelvin", "expected any of ['celsius', None], got 'kelvin'"),
    (Matcher("regex", "^2026-"), "2026-01-01", None),
    (Matcher("regex", "^2026-"), "2025-01-01", "expected to match /^2026-/ (regex), got '2025-01-01'"),
    (Matcher("regex", "^2026"), 2026, "expected to match /^2026/ (regex), got 2026"),
    (Matcher("tolerance", 3, 0.5), 3.4, None),
    (Matcher("tolerance", 3, 0.5), 2.5, None),
    (Matcher("tolerance", 3, 0.5), 4, "expected 3 ± 0.5 (tolerance), got 4"),
    (Matcher("tolerance", 3, 0.5), True, "expected 3 ± 0.5 (tolerance), got True"),
    (Matcher("tolerance", 3, 0.5), "3", "expected 3 ± 0.5 (tolerance), got '3'"),
    (Matcher("tolerance", 3.0, 0.5), math.nan, "expected 3.0 ± 0.5 (tolerance), got nan"),
    (Matcher("unordered", ("a", "b")), ["b", "a"], None),
    (Matcher("unordered", ("a", "b")), ["a"], "expected ['a', 'b'] in any order (unordered), got ['a']"),
    (Matcher("unordered", ("a", "b")), ["a", "a"], "expected ['a', 'b'] in any order (unordered), got ['a', 'a']"),
    (Matcher("unordered", ("a", "b")), "ab", "expected ['a', 'b'] in any order (unordered), got 'ab'"),
    (Matcher("contains", "rain"), "light rain", None),
    (Matcher("contains", "rain"), "Rain", "expected to contain 'rain' (contains), got 'Rain'"),
    (Matcher("contains", "rain"), ["sun", "rain"], None),
    (Matcher("contains", 2), [1, 2.0], None),
    (Matcher("contains", "rain"), ["sun", "rainy"], "expected to contain 'rain' (contains), got ['sun', 'rainy']"),
    (Matcher("absent"), NOT_GIVEN, None),
    (Matcher("absent"), None, None),
    (Matcher("absent"), 1, "expected to be absent (absent), got 1"),
]


@pytest.mark.parametrize(("matcher", "got", "problem"), MATCHER_CASES)
def test_a_matcher_passes_or_says_what_it_expected(matcher: Matcher, got: Any, problem: str | None) -> None:
    arguments = {} if got is NOT_GIVEN else {"x": got}
    problems = check(expect_calls(ExpectedCall("f", {"x": matcher})), [Call("f", arguments)], "", TOOLS)
    assert problems == ([] if problem is None else [f"call 1 (f): argument 'x': {problem}"])


def test_a_number_too_large_for_a_float_is_out_of_tolerance_not_an_error() -> None:
    problems = check(
        expect_calls(ExpectedCall("f", {"x": Matcher("tolerance", 3.0, 0.5)})), [Call("f", {"x": 10**400})], "", TOOLS
    )
    assert problems == ["call 1 (f): argument 'x': expected 3.0 ± 0.5 (tolerance), got <a 1329-bit integer>"]


def test_an_invalid_pattern_is_a_problem_not_an_exception() -> None:
    problems = check(expect_calls(ExpectedCall("f", {"x": Matcher("regex", "(")})), [Call("f", {"x": "a"})], "", TOOLS)
    assert problems == [
        "call 1 (f): argument 'x': the pattern /(/ is not a valid regular expression: "
        "missing ), unterminated subpattern at position 0"
    ]


# -- arguments missing or not expected -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("matcher", "shown"),
    [
        (Matcher("exact", "Paris"), "'Paris'"),
        (Matcher("any_of", ("Paris", "Rome")), "any of ['Paris', 'Rome']"),
        (Matcher("regex", "^P"), "to match /^P/"),
        (Matcher("tolerance", 3, 0.5), "3 ± 0.5"),
        (Matcher("unordered", ("a",)), "['a'] in any order"),
        (Matcher("contains", "P"), "to contain 'P'"),
    ],
)
def test_a_missing_argument_says_what_was_expected(matcher: Matcher, shown: str) -> None:
    problems = check(expect_calls(ExpectedCall("f", {"x": matcher})), [Call("f", {})], "", TOOLS)
    assert problems == [f"call 1 (f): argument 'x': missing (expected {shown})"]


def test_an_argument_not_listed_is_a_problem_unless_partial() -> None:
    calls = [Call("get_weather", {"city": "Paris", "days": 3})]
    assert check(expect_calls(weather()), calls, "", TOOLS) == [
        "call 1 (get_weather): argument 'days' was not expected (partial: true allows it)"
    ]
    partial = ExpectedCall("get_weather", {"city": Matcher("exact", "Paris")}, partial=True)
    assert check(expect_calls(partial), calls, "", TOOLS) == []


def test_an_argument_not_listed_but_null_is_not_given() -> None:
    # OpenAI's strict mode sends null for each optional parameter left unused
    assert check(expect_calls(weather()), [Call("get_weather", {"city": "Paris", "unit": None})], "", TOOLS) == []


# -- the calls: names, count, order --------------------------------------------------------------------------


def test_a_wrong_name_is_one_problem_and_an_unknown_tool_another() -> None:
    problems = check(expect_calls(weather()), [Call("get_forecast", {"city": "Paris"})], "", TOOLS)
    assert problems == [
        "call 1: expected get_weather, got get_forecast",
        "call 1: get_forecast is not one of the tools (get_weather, add_event, f)",
    ]


def test_a_call_of_a_file_without_tools() -> None:
    problems = check(expect_calls(weather()), [Call("get_weather", {"city": "Paris"})], "", {})
    assert problems == ["call 1: get_weather is not one of the tools (the file has none)"]


def test_a_different_number_of_calls_names_both() -> None:
    expectation = expect_calls(weather(), event("Dinner"))
    assert check(expectation, [Call("get_weather", {"city": "Paris"})], "", TOOLS) == [
        "expected 2 calls (get_weather, add_event), got 1 call: get_weather(city='Paris')"
    ]
    assert check(expect_calls(weather()), decode_text_calls("[]"), "[]", TOOLS) == [
        "expected 1 call (get_weather), got 0 calls"
    ]


def test_an_answer_in_words_when_a_call_was_expected() -> None:
    text = "Which city do you mean?\nParis, France or Paris, Texas?"
    assert check(expect_calls(weather()), decode_text_calls(text), text, TOOLS) == [
        "expected 1 call (get_weather), got an answer in words: "
        "'Which city do you mean?\\nParis, France or Paris, Texas?'"
    ]


SWAPPED = [Call("add_event", {"title": "Dinner"}), Call("get_weather", {"city": "Paris"})]


def test_a_permutation_passes_as_a_set_of_calls() -> None:
    assert check(expect_calls(weather(), event("Dinner"), ordered=False), SWAPPED, "", TOOLS) == []


def test_a_permutation_fails_in_order() -> None:
    assert check(expect_calls(weather(), event("Dinner")), SWAPPED, "", TOOLS) == [
        "call 1: expected get_weather, got add_event",
        "call 2: expected add_event, got get_weather",
    ]


def test_a_set_of_calls_reports_the_best_assignment() -> None:
    # each call is compared with the expected call of its own name, not reported as two wrong names
    calls = [Call("add_event", {"title": "Lunch", "tags": ["x"]}), Call("get_weather", {"city": "Rome", "days": 2})]
    assert check(expect_calls(weather(), event("Dinner"), ordered=False), calls, "", TOOLS) == [
        "call 1 (add_event): argument 'title': expected 'Dinner' (exact), got 'Lunch'",
        "call 1 (add_event): argument 'tags' was not expected (partial: true allows it)",
        "call 2 (get_weather): argument 'city': expected 'Paris' (exact), got 'Rome'",
        "call 2 (get_weather): argument 'days' was not expected (partial: true allows it)",
    ]


def test_a_set_of_calls_of_one_tool_pairs_them_by_their_arguments() -> None:
    expectation = expect_calls(weather("Paris"), weather("Rome"), ordered=False)
    assert (
        check(expectation, [Call("get_weather", {"city": "Rome"}), Call("get_weather", {"city": "Paris"})], "", TOOLS)
        == []
    )
    assert check(
        expectation, [Call("get_weather", {"city": "Rome"}), Call("get_weather", {"city": "Berlin"})], "", TOOLS
    ) == ["call 2 (get_weather): argument 'city': expected 'Paris' (exact), got 'Berlin'"]


@pytest.mark.parametrize("count", [MAX_PERMUTED_CALLS, MAX_PERMUTED_CALLS + 1])
def test_many_parallel_calls_in_reverse_order_pass(count: int) -> None:
    cities = [f"city{number}" for number in range(count)]
    expectation = expect_calls(*(weather(city) for city in cities), ordered=False)
    calls = [Call("get_weather", {"city": city}) for city in reversed(cities)]
    assert check(expectation, calls, "", TOOLS) == []
    # the longest search: no assignment passes, so all 8! are tried
    wrong = [Call("get_weather", {"city": "nowhere"}) for _ in cities]
    assert len(check(expectation, wrong, "", TOOLS)) == count


# -- the tools' schemas --------------------------------------------------------------------------------------


def test_every_call_is_checked_against_its_tool_schema() -> None:
    expectation = expect_calls(ExpectedCall("get_weather", {"city": Matcher("exact", "Paris")}, partial=True))
    assert check(expectation, [Call("get_weather", {"city": "Paris", "days": "three"})], "", TOOLS) == [
        "call 1 (get_weather): its arguments violate the tool's schema: 'days': 'three' is not of type 'integer'"
    ]
    # a call that fails its matchers is checked too; a nested value's place is its path
    calls = [Call("add_event", {"title": "Lunch", "tags": ["a", 1]})]
    assert check(expect_calls(event("Dinner")), calls, "", TOOLS)[-1] == (
        "call 1 (add_event): its arguments violate the tool's schema: 'tags'[1]: 1 is not of type 'string'"
    )


def test_a_violation_of_the_arguments_as_a_whole_has_no_place() -> None:
    problems = check(expect_calls(ExpectedCall("get_weather", {}, partial=True)), [Call("get_weather", {})], "", TOOLS)
    assert problems == ["call 1 (get_weather): its arguments violate the tool's schema: 'city' is a required property"]


def test_unique_items_is_checked_without_comparing_every_pair() -> None:
    class Id(int):
        """An int that counts how often it is compared for equality."""

        compared = 0

        def __eq__(self, other: object) -> bool:
            Id.compared += 1
            return int.__eq__(self, other)

        __hash__ = int.__hash__

    guests = [{"id": Id(number)} for number in range(5_000)]  # objects: jsonschema's own check is quadratic on them
    expectation = expect_calls(ExpectedCall("add_event", {}, partial=True))
    assert check(expectation, [Call("add_event", {"guests": guests})], "", TOOLS) == []
    # every pair would be 12,497,500 comparisons; sorting them would be some 60,000
    assert Id.compared < 20 * len(guests), Id.compared
    problems = check(expectation, [Call("add_event", {"guests": [1, True, 1.0]})], "", TOOLS)
    assert problems == [
        "call 1 (add_event): its arguments violate the tool's schema: 'guests': [1, True, 1.0] has non-unique elements"
    ]
    assert check(expectation, [Call("add_event", {"guests": [1, True, {"a": [1]}, {"a": [2]}]})], "", TOOLS) == []


# -- answers in words ----------------------------------------------------------------------------------------


def test_words_that_contain_and_match_what_is_expected_pass() -> None:
    text = "Which RESTAURANT in paris? I can book a table once I know."
    assert check(WORDS, decode_text_calls(text), text, TOOLS) == []


def test_words_missing_a_text_or_the_pattern() -> None:
    text = "Sure, done."
    assert check(WORDS, None, text, TOOLS) == [
        "the answer does not contain 'which restaurant'",
        "the answer does not contain 'Paris'",
        "the answer does not match /\\bbook(ed|ing)?\\b/",
    ]


def test_a_call_when_words_were_expected() -> None:
    text = "[get_weather(city='Paris'), get_time()]"
    assert check(Expectation(no_call=True), decode_text_calls(text), text, TOOLS) == [
        "expected an answer in words, got 2 calls: get_weather(city='Paris'), get_time()",
        "call 2: get_time is not one of the tools (get_weather, add_event, f)",
    ]


def test_an_invalid_pattern_for_words_is_a_problem() -> None:
    assert check(Expectation(no_call=True, regex="[a-"), None, "abc", TOOLS) == [
        "the pattern /[a-/ is not a valid regular expression: unterminated character set at position 0"
    ]


# -- decoding ------------------------------------------------------------------------------------------------


def test_the_text_protocol_decodes_to_calls() -> None:
    calls = decode_text_calls("[get_weather(city='Paris', days=3), add_event(title=\"Dinner\", tags=('a', 'b'))]")
    assert calls == [
        Call("get_weather", {"city": "Paris", "days": 3}),
        Call("add_event", {"title": "Dinner", "tags": ["a", "b"]}),
    ]  # a tuple is an array


@pytest.mark.parametrize(
    "text",
    [
        "The weather in Paris is sunny.",
        "[1, 2]",
        "get_weather(city='Paris')",
        "[f(**x)]",
        "[f(a=1, **x)]",
        "[f(x=lambda: 1)]",
        "",
    ],
)
def test_what_is_not_a_list_of_calls_is_words(text: str) -> None:
    assert decode_text_calls(text) is None


def test_the_text_protocol_is_read_never_run() -> None:
    # ACEBench's contract: the call's name is read off the syntax, positional arguments are dropped
    assert decode_text_calls("[__import__('os').system('exit 1')]") == [Call("system", {})]


def test_native_tool_calls_decode_to_calls() -> None:
    assert decode_tool_calls([("get_weather", '{"city": "Paris", "days": 3}'), ("get_time", "")]) == [
        Call("get_weather", {"city": "Paris", "days": 3}),
        Call("get_time", {}),
    ]  # "" is no arguments


@pytest.mark.parametrize(
    ("arguments", "shown"),
    [
        ('{"city": "Par', '\'{"city": "Par\''),
        ('["Paris"]', "'[\"Paris\"]'"),
        ('{"days": NaN}', "'{\"days\": NaN}'"),
        ('{"n": ' + "9" * 5000 + "}", '\'{"n": ' + "9" * 193 + "... [5007 characters]"),
    ],
)
def test_native_arguments_that_are_not_a_json_object(arguments: str, shown: str) -> None:
    assert decode_tool_calls([("get_weather", "{}"), ("get_weather", arguments)]) == (
        f"call 2 (get_weather): its arguments are not a JSON object: {shown}"
    )


# -- hostile answers -----------------------------------------------------------------------------------------


def test_a_long_answer_is_clipped_and_searched_only_so_far() -> None:
    text = "x" * (SEARCHED_CHARS + 50_000) + " booked"
    (words,) = check(expect_calls(weather()), None, text, TOOLS)
    assert words.startswith("expected 1 call (get_weather), got an answer in words: 'xxx")
    assert words.endswith(f"... [{len(text)} characters]") and len(words) < 400
    assert check(Expectation(no_call=True, regex="booked"), None, text, TOOLS) == [
        f"the answer does not match /booked/ (searched its first {SEARCHED_CHARS} of {len(text)} characters)"
    ]


def test_control_characters_of_the_model_are_escaped() -> None:
    name = "get\x1b[2Jtime\u202e"
    text = "\x1b]0;pwned\x07 done\r\n"
    problems = check(Expectation(no_call=True, contains=("ok",)), [Call(name, {"k\n": "\x1b[31m"})], text, TOOLS)
    assert problems == [
        "expected an answer in words, got 1 call: 'get\\x1b[2Jtime\\u202e'('k\\n'='\\x1b[31m')",
        "the answer does not contain 'ok'",
        "call 1: 'get\\x1b[2Jtime\\u202e' is not one of the tools (get_weather, add_event, f)",
    ]
    assert all(line.isprintable() for line in problems)
    assert decode_tool_calls([(name, "\x1b")]) == (
        "call 1 ('get\\x1b[2Jtime\\u202e'): its arguments are not a JSON object: '\\x1b'"
    )


def test_a_huge_tool_name_is_clipped() -> None:
    (wrong, unknown) = check(expect_calls(weather()), [Call("g" * 1_000_000, {})], "", TOOLS)
    assert wrong == "call 1: expected get_weather, got " + "g" * 100 + "..."
    assert len(unknown) < 300


def deep_list(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


def test_deep_nesting_ends_in_a_verdict() -> None:
    assert decode_text_calls("[f(x=" + "[" * 1000 + "]" * 1000 + ")]") is None  # past the decoder's depth limit
    problem = decode_tool_calls([("f", '{"x": ' + "[" * 1000 + "]" * 1000 + "}")])
    assert isinstance(problem, str) and problem.startswith("call 1 (f): its arguments are not a JSON object: ")
    # values built by a caller: comparing, showing and validating never recurse into them unbounded
    recursive = ToolSpec(
        "f",
        "",
        {
            "type": "object",
            "properties": {"x": {"$ref": "#/$defs/list"}},
            "$defs": {"list": {"type": "array", "items": {"$ref": "#/$defs/list"}}},
        },
    )
    assert (
        check(
            expect_calls(ExpectedCall("f", {"x": Matcher("exact", deep_list(5000))})),
            [Call("f", {"x": deep_list(5000)})],
            "",
            {"f": ANY},
        )
        == []
    )
    problems = check(
        expect_calls(ExpectedCall("f", {"x": Matcher("exact", [])})),
        [Call("f", {"x": deep_list(5000)})],
        "",
        {"f": recursive},
    )
    assert problems[0] == "call 1 (f): argument 'x': expected [] (exact), got [[[[[[[[[[[...]]]]]]]]]]]"
    assert problems[1].startswith(
        "call 1 (f): its arguments could not be checked against the tool's schema: "
        "RecursionError: maximum recursion depth exceeded"
    )
    assert len(problems) == 2


def test_values_that_are_not_json_end_in_a_verdict() -> None:
    calls = decode_text_calls("[f(x=b'\\x00ab', y=1j, z={1: 'a'})]")
    assert calls == [Call("f", {"x": b"\x00ab", "y": 1j, "z": {1: "a"}})]
    strict = ToolSpec("f", "", {"type": "object", "properties": {"x": {"type": "string"}}})
    problems = check(
        expect_calls(ExpectedCall("f", {"x": Matcher("exact", "ab")}, partial=True)), calls, "", {"f": strict}
    )
    assert problems == [
        "call 1 (f): argument 'x': expected 'ab' (exact), got b'\\x00ab'",
        "call 1 (f): its arguments violate the tool's schema: 'x': b'\\x00ab' is not of type 'string'",
    ]
    # a non-string key where the schema matches keys against a pattern: no pattern matches it
    keyed = ToolSpec(
        "f",
        "",
        {"type": "object", "properties": {"z": {"patternProperties": {"^a": {}}, "additionalProperties": False}}},
    )
    assert check(expect_calls(ExpectedCall("f", {}, partial=True)), calls, "", {"f": keyed}) == [
        "call 1 (f): its arguments violate the tool's schema: 'z': Additional properties are not allowed (1 was "
        "unexpected)"
    ]


def test_a_huge_argument_text_is_refused_before_it_is_read() -> None:
    arguments = json.dumps({"city": "x" * 200_000})
    assert decode_tool_calls([("get_weather", arguments)]) == (
        f"call 1 (get_weather): its arguments are too long ({len(arguments)} characters, at most 100000)"
    )


def test_a_pattern_written_over_lines_is_shown_on_one() -> None:
    assert check(Expectation(no_call=True, regex="(?x) Sorry\n I  can't"), None, "No.", TOOLS) == [
        "the answer does not match /(?x) Sorry\\n I  can't/"
    ]


# -- what failed, as the reports name it -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expectation", "calls", "text", "failed"),
    [
        (
            expect_calls(weather(unit=Matcher("absent"), days=Matcher("tolerance", 3, 1))),
            [Call("get_weather", {"city": "paris", "unit": "kelvin", "days": 9})],
            "",
            ["city: exact", "unit: absent", "days: tolerance"],
        ),
        (
            expect_calls(weather(unit=Matcher("any_of", ("celsius",)))),
            [Call("get_weather", {})],
            "",
            ["city: exact", "unit: any_of", "schema"],
        ),  # missing: its matcher failed, and the schema requires city
        (expect_calls(weather()), [Call("get_weather", {"city": "Paris", "days": 2})], "", ["days: unlisted"]),
        (expect_calls(weather()), [Call("add_event", {})], "", ["name"]),
        (expect_calls(weather()), [Call("book", {})], "", ["name", "unknown tool"]),
        (expect_calls(weather(), event("x")), [Call("get_weather", {"city": "Paris"})], "", ["calls"]),
        (expect_calls(weather()), None, "Which city?", ["calls"]),
        (Expectation(no_call=True), [Call("get_weather", {"city": "Paris"})], "", ["no_call"]),
        (WORDS, None, "Sure.", ["answer: contains", "answer: contains", "answer: regex"]),
        (expect_calls(weather()), [Call("get_weather", {"city": "Paris"})], "", []),
    ],
)
def test_each_problem_names_the_check_that_failed(
    expectation: Expectation, calls: list[Call] | None, text: str, failed: list[str]
) -> None:
    problems = assess(expectation, calls, text, TOOLS)
    assert [problem.check for problem in problems] == failed
    assert [problem.text for problem in problems] == check(expectation, calls, text, TOOLS)


def test_a_tool_schema_is_compiled_once() -> None:
    from pytest_tooleval.suites.yamlsuite import scoring

    assert scoring._validator(WEATHER) is scoring._validator(WEATHER)
    assert scoring._validator(EVENT) is not scoring._validator(WEATHER)
