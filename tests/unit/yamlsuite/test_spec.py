"""The YAML suite's file format: schema.json, and `load_file` building the typed values or one error line naming
the file, the line and the key path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from json_narrow import as_object
from pytest_tooleval.errors import DataError
from pytest_tooleval.suites.yamlsuite.spec import (
    SCHEMA_PATH,
    CaseSpec,
    Expectation,
    ExpectedCall,
    Matcher,
    SuiteFile,
    ToolResult,
    ToolSpec,
    Turn,
    file_stem,
    load_file,
)

FULL = """\
tags: [smoke, weather]
system: "You are a helpful assistant."
tools:
  - name: get_weather
    description: Current weather for a city.
    parameters:
      type: object
      properties:
        city: {type: string}
        unit: {type: string, enum: [celsius, fahrenheit]}
        days: {type: integer}
      required: [city]
  - type: function
    function:
      name: add_event
      description: Add an event to the calendar.
      parameters:
        type: object
        properties:
          title: {type: string}
          when: {type: string}
          people: {type: array, items: {type: string}}
          details: {type: object}
  - name: now
cases:
  - name: single_call
    user: "What's the weather in Paris?"
    tags: [core, smoke]
    expect:
      calls:
        - name: get_weather
          arguments:
            city: Paris
            unit: {any_of: [celsius, null]}
            days: {value: 3, tolerance: 1}
          partial: true
  - name: ask_for_missing
    category: clarify
    messages:
      - {role: system, content: Be brief.}
      - {role: user, content: Book a table}
    expect:
      no_call: true
      contains: [which, restaurant]
      regex: "(?i)which|what"
  - name: two_turns
    turns:
      - user: Weather in Rome tomorrow, and book lunch with Ann and Bo at 10:30
        expect:
          ordered: false
          calls:
            - name: get_weather
              arguments: {city: {regex: "^Rom"}, unit: {absent: true}}
            - name: add_event
              arguments:
                title: {contains: lunch}
                when: 10:30
                people: {unordered: [Ann, Bo]}
                details: {exact: {room: 2}}
        tool_results:
          - name: get_weather
            content: {temp: 21, sky: sunny}
          - name: add_event
            content: booked
      - expect: {no_call: true, contains: "21"}
      - user: And in Oslo?
        expect: {calls: [{name: get_weather, arguments: {city: Oslo}}]}
      - messages: [{role: user, content: 'What time is it?'}]
        expect: {calls: [{name: now}]}
"""


def _write(tmp_path: Path, text: str, name: str = "weather.tooleval.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_full_file_builds_the_typed_values(tmp_path: Path) -> None:
    path = _write(tmp_path, FULL)
    weather = ToolSpec(
        "get_weather",
        "Current weather for a city.",
        {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer"},
            },
            "required": ["city"],
        },
    )
    add_event = ToolSpec(
        "add_event",
        "Add an event to the calendar.",
        {
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "when": {"type": "string"},
                "people": {"type": "array", "items": {"type": "string"}},
                "details": {"type": "object"},
            },
        },
    )
    now = ToolSpec("now", "", {"type": "object", "properties": {}})  # description and parameters by default
    single = CaseSpec(
        "single_call",
        "weather",
        ("smoke", "weather", "core"),
        (
            Turn(
                ({"role": "user", "content": "What's the weather in Paris?"},),
                Expectation(
                    calls=(
                        ExpectedCall(
                            "get_weather",
                            {
                                "city": Matcher("exact", "Paris"),
                                "unit": Matcher("any_of", ("celsius", None)),
                                "days": Matcher("tolerance", 3, 1.0),
                            },
                            partial=True,
                        ),
                    ),
                    line=29,
                ),
            ),
        ),
        line=26,
    )
    ask = CaseSpec(
        "ask_for_missing",
        "clarify",
        ("smoke", "weather"),
        (
            Turn(
                ({"role": "system", "content": "Be brief."}, {"role": "user", "content": "Book a table"}),
                Expectation(no_call=True, contains=("which", "restaurant"), regex="(?i)which|what", line=42),
            ),
        ),
        line=37,
    )
    conversation = CaseSpec(
        "two_turns",
        "weather",
        ("smoke", "weather"),
        (
            Turn(
                ({"role": "user", "content": "Weather in Rome tomorrow, and book lunch with Ann and Bo at 10:30"},),
                Expectation(
                    calls=(
                        ExpectedCall("get_weather", {"city": Matcher("regex", "^Rom"), "unit": Matcher("absent")}),
                        ExpectedCall(
                            "add_event",
                            {
                                "title": Matcher("contains", "lunch"),
                                "when": Matcher("exact", "10:30"),  # text, not YAML 1.1's 630
                                "people": Matcher("unordered", ("Ann", "Bo")),
                                "details": Matcher("exact", {"room": 2}),
                            },
                        ),
                    ),
                    ordered=False,
                    line=49,
                ),
                (ToolResult("get_weather", '{"temp":21,"sky":"sunny"}'), ToolResult("add_event", "booked")),
            ),
            Turn((), Expectation(no_call=True, contains=("21",), line=65)),
            Turn(
                ({"role": "user", "content": "And in Oslo?"},),
                Expectation(calls=(ExpectedCall("get_weather", {"city": Matcher("exact", "Oslo")}),), line=67),
            ),
            Turn(
                ({"role": "user", "content": "What time is it?"},),
                Expectation(calls=(ExpectedCall("now", {}),), line=69),
            ),
        ),
        line=46,
    )
    # no mode: its tools (flat, wrapped or bare, all OpenAI function definitions) are offered natively
    assert load_file(path) == SuiteFile(
        path=path,
        stem="weather",
        category="weather",
        tags=("smoke", "weather"),
        mode="fc",
        system="You are a helpful assistant.",
        tools=(weather, add_event, now),
        cases=(single, ask, conversation),
    )


def test_the_built_values_are_plain_and_tools_convert_to_openai(tmp_path: Path) -> None:
    suite = load_file(_write(tmp_path, FULL))
    tool = suite.tool("add_event")
    assert type(tool.parameters) is dict and type(tool.parameters["properties"]) is dict
    details = suite.cases[2].turns[0].expect.calls[1].arguments["details"].value
    assert type(details) is dict  # not the loader's line-carrying mapping
    sent = tool.openai()
    assert sent == {
        "type": "function",
        "function": {
            "name": "add_event",
            "description": "Add an event to the calendar.",
            "parameters": tool.parameters,
        },
    }
    as_object(sent["function"])["parameters"]["properties"].clear()
    assert "title" in tool.parameters["properties"]  # the request cannot change the file's tool
    with pytest.raises(KeyError):
        suite.tool("get_wether")


def test_file_settings_override_the_defaults(tmp_path: Path) -> None:
    text = FULL.replace("tags: [smoke, weather]", "category: forecasts\nmode: prompt")
    suite = load_file(_write(tmp_path, text))
    assert (suite.category, suite.mode, suite.tags) == ("forecasts", "prompt", ())
    assert [case.category for case in suite.cases] == ["forecasts", "clarify", "forecasts"]
    assert suite.cases[0].tags == ("core", "smoke")


@pytest.mark.parametrize(
    ("name", "stem"),
    [("weather.tooleval.yaml", "weather"), ("my.cases.tooleval.yaml", "my.cases"), ("other.yaml", "other")],
)
def test_file_stem(name: str, stem: str) -> None:
    assert file_stem(Path("suites") / name) == stem


# -- errors: one line, `<file>:<line>: <key path>: <message>` ---------------------------------------------------

TOOLS = """\
tools:
  - name: get_weather
    parameters:
      type: object
      properties:
        city: {type: string}
        unit: {type: string}
"""  # 7 lines: what a test appends starts on line 8
ONE_CASE = "cases:\n  - name: a\n    user: hi\n    expect: {no_call: true}\n"  # valid: the error is elsewhere


def _problem(tmp_path: Path, text: str) -> str:
    """The error loading `text` gives, its path shown as suite.tooleval.yaml."""
    path = _write(tmp_path, text, "suite.tooleval.yaml")
    with pytest.raises(DataError) as caught:
        load_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:") and "\n" not in message
    return "suite.tooleval.yaml" + message[len(str(path)) :]


def _case(body: str) -> str:
    """TOOLS and one case (`- name: a` on line 9, then `body`, from line 10)."""
    return TOOLS + "cases:\n  - name: a\n" + body


def test_a_misspelt_top_level_key(tmp_path: Path) -> None:
    assert _problem(tmp_path, TOOLS + "catgory: x\n" + ONE_CASE) == (
        "suite.tooleval.yaml:8: unknown key 'catgory' (known: $schema, category, tags, mode, system, tools, "
        "cases); did you mean 'category'?"
    )


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "    user: hi\n    expcet: {no_call: true}\n",
            "11: cases[0]: unknown key 'expcet' (known: name, category, tags, user, messages, expect, turns); "
            "did you mean 'expect'?",
        ),
        (
            "    user: hi\n    expect:\n      no_call: true\n      contain: x\n",
            "13: cases[0].expect: unknown key 'contain' (known: calls, ordered, no_call, contains, regex); "
            "did you mean 'contains'?",
        ),
        (
            "    user: hi\n    expect:\n      calls:\n        - name: get_weather\n          args: {}\n",
            "14: cases[0].expect.calls[0]: unknown key 'args' (known: name, arguments, partial); "
            "did you mean 'arguments'?",
        ),
        (
            "    turns:\n      - user: hi\n        expect: {no_call: true}\n        tool_result: []\n",
            "13: cases[0].turns[0]: unknown key 'tool_result' (known: user, messages, expect, tool_results); "
            "did you mean 'tool_results'?",
        ),
    ],
)
def test_a_misspelt_key_names_its_place(tmp_path: Path, body: str, expected: str) -> None:
    assert _problem(tmp_path, _case(body)) == f"suite.tooleval.yaml:{expected}"


def test_a_misspelt_tool_key(tmp_path: Path) -> None:
    text = "tools:\n  - name: t\n    descripton: x\n" + ONE_CASE
    assert _problem(tmp_path, text) == (
        "suite.tooleval.yaml:3: tools[0]: unknown key 'descripton' (known: name, description, parameters); "
        "did you mean 'description'?"
    )


CALL = "    user: hi\n    expect:\n      calls:\n        - name: get_weather\n          arguments:\n"  # to line 14


def test_a_misspelt_matcher(tmp_path: Path) -> None:
    text = _case(CALL + "            city: Paris\n            unit: {any_off: [celsius, null]}\n")
    assert _problem(tmp_path, text) == (
        "suite.tooleval.yaml:16: cases[0].expect.calls[0].arguments.unit: unknown matcher 'any_off' (known: "
        "exact, any_of, regex, value/tolerance, unordered, contains, absent); did you mean 'any_of'?"
    )


def test_a_literal_mapping_needs_exact(tmp_path: Path) -> None:
    assert _problem(tmp_path, _case(CALL + "            city:\n              name: Paris\n")) == (
        "suite.tooleval.yaml:16: cases[0].expect.calls[0].arguments.city: unknown matcher 'name' (known: exact, "
        "any_of, regex, value/tolerance, unordered, contains, absent); a literal mapping is written {exact: {...}}"
    )


@pytest.mark.parametrize(
    ("matcher", "expected"),
    [
        ("{regex: a, any_of: [b]}", "city: a matcher has one key (value and tolerance go together), got regex, any_of"),
        ("{value: 1}", "city: value and tolerance go together ({value: N, tolerance: T})"),
        ("{value: 1, tolerance: -0.5}", "city.tolerance: must be at least 0, got -0.5"),
        ("{value: '1', tolerance: 0}", "city.value: expected a number, got '1'"),
        ("{absent: false}", "city.absent: must be true, got false"),
        ("{any_of: celsius}", "city.any_of: expected a list, got 'celsius'"),
        ("{}", "city: an empty mapping is not a matcher (an empty literal mapping is written {exact: {}})"),
    ],
)
def test_a_malformed_matcher(tmp_path: Path, matcher: str, expected: str) -> None:
    assert _problem(tmp_path, _case(CALL + f"            city: {matcher}\n")) == (
        f"suite.tooleval.yaml:15: cases[0].expect.calls[0].arguments.{expected}"
    )


def test_a_bad_regex_names_the_key(tmp_path: Path) -> None:
    assert _problem(tmp_path, _case(CALL + "            city:\n              regex: '(Par'\n")) == (
        "suite.tooleval.yaml:16: cases[0].expect.calls[0].arguments.city.regex: '(Par' is not a valid regular "
        "expression (missing ), unterminated subpattern at position 0)"
    )
    assert _problem(tmp_path, _case("    user: hi\n    expect: {no_call: true, regex: '[a'}\n")) == (
        "suite.tooleval.yaml:11: cases[0].expect.regex: '[a' is not a valid regular expression (unterminated "
        "character set at position 0)"
    )


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        (
            r"(\w)\1",
            "RE2 cannot run it: invalid escape sequence: \\1; patterns run in linear time, without "
            "backreferences, lookarounds, atomic groups or possessive repeats",
        ),
        (
            "^(?!Paris)",
            "RE2 cannot run it: invalid perl operator: (?!; patterns run in linear time, without "
            "backreferences, lookarounds, atomic groups or possessive repeats",
        ),
        (r"\p{Lu}", "bad escape \\p at position 0"),  # Python's syntax, which RE2 would read otherwise
    ],
)
def test_a_pattern_that_cannot_run_in_linear_time_is_refused_with_its_line(
    tmp_path: Path, pattern: str, reason: str
) -> None:
    quoted = pattern.replace("'", "''")
    assert _problem(tmp_path, _case(CALL + f"            city:\n              regex: '{quoted}'\n")) == (
        f"suite.tooleval.yaml:16: cases[0].expect.calls[0].arguments.city.regex: {pattern!r} is not a valid regular "
        f"expression ({reason})"
    )
    assert _problem(tmp_path, _case(f"    user: hi\n    expect: {{no_call: true, regex: '{quoted}'}}\n")) == (
        f"suite.tooleval.yaml:11: cases[0].expect.regex: {pattern!r} is not a valid regular expression ({reason})"
    )
    if not reason.startswith("RE2"):
        return  # a tool's schema is checked against the meta-schema first, whose format check is Python's
    schema = TOOLS.replace("city: {type: string}", f"city: {{type: string, pattern: '{quoted}'}}")
    assert _problem(tmp_path, schema + ONE_CASE) == (
        f"suite.tooleval.yaml:6: tools[0].parameters.properties.city.pattern: not a valid regular expression ({reason})"
    )


def test_patterns_python_reads_and_re2_runs_load(tmp_path: Path) -> None:
    text = _case(
        CALL + '            city: {regex: "(?x) ^ \\\\w+  # a word\\n  $"}\n'
        "            unit: {regex: '[[:alpha:]]{,3}'}\n"
    )
    arguments = load_file(_write(tmp_path, text)).cases[0].turns[0].expect.calls[0].arguments
    assert arguments["city"] == Matcher("regex", "(?x) ^ \\w+  # a word\n  $")


REF_FAULTS = [
    (
        "      properties:\n        city: {$ref: '#/$defs/a'}\n      $defs:\n        a: {$ref: '#/$defs/b'}\n"
        "        b: {$ref: '#/$defs/a'}\n",
        "8: tools[0].parameters['$defs'].a['$ref']: the references loop (#/$defs/a -> #/$defs/b) "
        "without going into the arguments: validating a call would never end",
    ),
    (
        "      properties:\n        city: {$ref: 'https://example.com/city.json'}\n",
        "6: tools[0].parameters.properties.city['$ref']: $ref 'https://example.com/city.json' is not in the tool's "
        "schema: references are resolved within the file and never fetched (copy the schema under $defs and refer to "
        "it as #/$defs/NAME)",
    ),
    (
        "      properties:\n        city: {$ref: '#/$defs/town'}\n",
        "6: tools[0].parameters.properties.city['$ref']: $ref '#/$defs/town' points to nothing in the tool's schema",
    ),
]


@pytest.mark.parametrize(("properties", "expected"), REF_FAULTS)
def test_a_tool_schema_that_loops_or_reaches_out_is_refused_with_its_line(
    tmp_path: Path, properties: str, expected: str
) -> None:
    text = "tools:\n  - name: get_weather\n    parameters:\n      type: object\n" + properties + ONE_CASE
    assert _problem(tmp_path, text) == f"suite.tooleval.yaml:{expected}"


def test_an_unknown_tool_in_a_call(tmp_path: Path) -> None:
    text = _case("    user: hi\n    expect:\n      calls:\n        - name: get_weather\n        - name: get_wether\n")
    assert _problem(tmp_path, text) == (
        "suite.tooleval.yaml:14: cases[0].expect.calls[1].name: unknown tool 'get_wether' (the file's tools: "
        "get_weather)"
    )


def test_an_unknown_tool_in_a_tool_result(tmp_path: Path) -> None:
    text = _case(
        "    turns:\n      - user: hi\n        expect: {calls: [{name: get_weather}]}\n"
        "        tool_results:\n          - {name: weather, content: sunny}\n"
        "      - expect: {no_call: true}\n"
    )
    assert _problem(tmp_path, text) == (
        "suite.tooleval.yaml:14: cases[0].turns[0].tool_results[0].name: unknown tool 'weather' (the file's tools: "
        "get_weather)"
    )


def test_an_unknown_argument(tmp_path: Path) -> None:
    assert _problem(tmp_path, _case(CALL + "            city: Paris\n            citi: Paris\n")) == (
        "suite.tooleval.yaml:16: cases[0].expect.calls[0].arguments: 'citi' is not a parameter of get_weather "
        "(its parameters: city, unit)"
    )


def test_any_argument_is_allowed_where_the_tool_says_so(tmp_path: Path) -> None:
    text = _case(CALL + "            citi: Paris\n").replace(
        "        unit: {type: string}\n", "        unit: {type: string}\n      additionalProperties: {type: string}\n"
    )
    assert load_file(_write(tmp_path, text)).cases[0].turns[0].expect.calls[0].arguments == {
        "citi": Matcher("exact", "Paris")
    }


def test_a_case_with_both_user_and_turns(tmp_path: Path) -> None:
    text = _case("    user: hi\n    turns:\n      - user: hi\n        expect: {no_call: true}\n")
    assert _problem(tmp_path, text) == (
        "suite.tooleval.yaml:11: cases[0]: a case has one of user, messages or turns, not user and turns"
    )


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("    category: x\n", "9: cases[0]: a case needs one of user, messages or turns"),
        ("    user: hi\n", "9: cases[0]: missing required key 'expect' (what the model must answer to user)"),
        (
            "    turns:\n      - user: hi\n        expect: {no_call: true}\n    expect: {no_call: true}\n",
            "13: cases[0]: a case with turns has expect in each turn, not beside turns",
        ),
        (
            "    turns:\n      - expect: {no_call: true}\n",
            "11: cases[0].turns[0]: the first turn needs user or messages (the model has been told nothing yet)",
        ),
        ("    turns:\n      - user: hi\n", "11: cases[0].turns[0]: missing required key 'expect'"),
        (
            "    turns:\n      - user: hi\n        messages: [{role: user, content: hi}]\n"
            "        expect: {no_call: true}\n",
            "12: cases[0].turns[0]: a turn has user or messages, not both",
        ),
        (
            "    user: hi\n    expect: {ordered: false}\n",
            "11: cases[0].expect: expect needs calls (the calls the model must make) or no_call: true (it must answer "
            "in words)",
        ),
        (
            "    user: hi\n    expect:\n      calls: [{name: get_weather}]\n      no_call: true\n",
            "13: cases[0].expect: expect has calls or no_call: true, not both",
        ),
    ],
)
def test_the_shape_of_a_case(tmp_path: Path, body: str, expected: str) -> None:
    assert _problem(tmp_path, _case(body)) == f"suite.tooleval.yaml:{expected}"


def test_contains_without_no_call(tmp_path: Path) -> None:
    text = _case("    user: hi\n    expect:\n      calls: [{name: get_weather}]\n      contains: sunny\n")
    assert _problem(tmp_path, text) == (
        "suite.tooleval.yaml:13: cases[0].expect: contains checks an answer in words: it needs no_call: true, not calls"
    )


def test_a_duplicate_case_name(tmp_path: Path) -> None:
    text = _case(
        "    user: hi\n    expect: {no_call: true}\n"
        "  - name: b\n    user: hi\n    expect: {no_call: true}\n"
        "  - name: a\n    user: hi again\n    expect: {no_call: true}\n"
    )
    assert _problem(tmp_path, text) == (
        "suite.tooleval.yaml:15: cases[2].name: case name 'a' is used twice (first on line 9)"
    )


def test_a_duplicate_tool_name(tmp_path: Path) -> None:
    text = TOOLS + "  - type: function\n    function: {name: get_weather}\n" + ONE_CASE
    assert _problem(tmp_path, text) == (
        "suite.tooleval.yaml:9: tools[1].function.name: tool 'get_weather' is defined twice (first on line 2)"
    )


def test_a_duplicate_mapping_key(tmp_path: Path) -> None:
    text = _case("    user: hi\n    expect:\n      calls: [{name: get_weather}]\n      calls: [{name: get_weather}]\n")
    assert _problem(tmp_path, text) == (
        "suite.tooleval.yaml:13: cases[0].expect: key 'calls' is given twice (first on line 12)"
    )


def test_a_merge_may_override_keys(tmp_path: Path) -> None:
    text = (
        "tools:\n  - &base {name: get_weather, description: Weather.}\n  - <<: *base\n    name: get_forecast\n"
        "cases:\n  - name: a\n    user: hi\n    expect: {calls: [{name: get_forecast}]}\n"
    )
    tools = load_file(_write(tmp_path, text)).tools
    assert [(tool.name, tool.description) for tool in tools] == [
        ("get_weather", "Weather."),
        ("get_forecast", "Weather."),
    ]


def test_an_invalid_tool_parameters_schema(tmp_path: Path) -> None:
    text = TOOLS.replace("city: {type: string}", "city: {type: strin}") + ONE_CASE
    assert _problem(tmp_path, text) == (
        "suite.tooleval.yaml:6: tools[0].parameters.properties.city.type: not a valid JSON Schema: unknown type "
        "'strin' (JSON Schema's types: array, boolean, integer, null, number, object, string)"
    )
    text = TOOLS.replace("city: {type: string}", "city: {type: string, minLength: -1}") + ONE_CASE
    assert _problem(tmp_path, text) == (
        "suite.tooleval.yaml:6: tools[0].parameters.properties.city.minLength: not a valid JSON Schema: -1 is less "
        "than the minimum of 0"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            TOOLS + "cases:\n  - name: a\n    user: hi\n   expect: {no_call: true}\n",
            "11: malformed YAML (expected <block end>, but found '<block mapping start>')",
        ),
        (TOOLS + 'cases:\n  - name: a\n    user: "hi\n', "11: malformed YAML (found unexpected end of stream)"),
        (TOOLS + "cases:\n\t- name: a\n", "9: malformed YAML (found character '\\t' that cannot start any token)"),
        (
            TOOLS + "---\n" + ONE_CASE,
            "8: malformed YAML (expected a single document in the stream, but found another document)",
        ),
        (
            TOOLS + "cases:\n  - name: a\x07\n",
            "9: malformed YAML (character #x0007: special characters are not allowed)",
        ),
    ],
)
def test_a_yaml_syntax_error(tmp_path: Path, text: str, expected: str) -> None:
    assert _problem(tmp_path, text) == f"suite.tooleval.yaml:{expected}"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "!!python/object/apply:os.system [echo hi]\n",
            "1: malformed YAML (could not determine a constructor for the tag 'tag:yaml.org,2002:python/object/apply:"
            "os.system')",
        ),
        (TOOLS + "cases: !!set {a, b}\n", "8: malformed YAML (!!set values have no JSON form)"),
        (_case(CALL + "            city: .nan\n"), "15: malformed YAML (.nan is not a JSON number)"),
        (
            _case(CALL + "            on: 1\n"),
            "15: cases[0].expect.calls[0].arguments: the key on is read as true, not as text: quote it ('on')",
        ),
        # an alias's line is its anchor's
        (TOOLS + "cases: &loop\n  - *loop\n", "8: cases[0]: this value contains itself (a recursive alias)"),
    ],
)
def test_only_json_values_are_built(tmp_path: Path, text: str, expected: str) -> None:
    assert _problem(tmp_path, text) == f"suite.tooleval.yaml:{expected}"


def _nested(levels: int) -> str:
    return _case(CALL + f"            city: {{exact: {'[' * levels}{']' * levels}}}\n")


def test_nesting_is_bounded_before_anything_is_built(tmp_path: Path) -> None:
    # the city's {exact: ...} is the 8th level (the file, cases, the case, expect, calls, the call, arguments): 92
    # lists in it make 100
    load_file(_write(tmp_path, _nested(92)))
    assert _problem(tmp_path, _nested(93)) == (
        "suite.tooleval.yaml:15: lists and mappings are nested more than 100 levels deep"
    )
    assert _problem(tmp_path, _nested(100_000)) == (
        "suite.tooleval.yaml:15: lists and mappings are nested more than 100 levels deep"
    )


def _aliased(copies: int) -> str:
    """An anchor of 1,000 values (a list of 999 items), then `copies` aliases of it."""
    values, aliases = ", ".join(["x"] * 999), ", ".join(["*many"] * copies)
    return _case(CALL + f"            city: {{exact: [&many [{values}], {aliases}]}}\n")


def test_aliases_are_bounded_by_the_values_they_bring_in(tmp_path: Path) -> None:
    load_file(_write(tmp_path, _aliased(100)))  # 100,000 values brought in: the most there may be
    assert _problem(tmp_path, _aliased(101)) == (
        "suite.tooleval.yaml:15: its aliases bring in more than 100,000 values (an alias bomb?): write the values "
        "out, or use fewer aliases"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "1: the file is empty (a suite file has tools and cases)"),
        ("- a\n", "1: expected a mapping, got a list"),
        (TOOLS, "1: missing required key 'cases'"),
        (TOOLS + "mode: promt\n" + ONE_CASE, "8: mode: must be one of 'prompt', 'fc', got 'promt'"),
        (TOOLS + "cases: []\n", "8: cases: must not be empty"),
        (
            TOOLS + "tags: [smoke test]\n" + ONE_CASE,
            "8: tags[0]: 'smoke test' is not a marker name (letters, digits and _, not starting with a digit)",
        ),
        (
            "tools:\n  - name: get weather\n" + ONE_CASE,
            "2: tools[0].name: 'get weather' is not a tool name (1 to 64 letters, digits, _ or -, OpenAI's rule)",
        ),
        (
            "tools:\n  - type: func\n    function: {name: t}\n" + ONE_CASE,
            "2: tools[0].type: must be 'function', got 'func'",
        ),
        (
            "tools:\n  - name: t\n    parameters: {properties: {}}\n" + ONE_CASE,
            "3: tools[0].parameters: missing required key 'type'",
        ),
        (_case("    user: 3\n    expect: {no_call: true}\n"), "10: cases[0].user: expected a string, got 3"),
    ],
)
def test_other_schema_errors(tmp_path: Path, text: str, expected: str) -> None:
    assert _problem(tmp_path, text) == f"suite.tooleval.yaml:{expected}"


def test_yaml_dates_and_times_stay_text(tmp_path: Path) -> None:
    text = _case("    user: 2024-05-01\n    expect: {calls: [{name: get_weather, arguments: {city: 12:30}}]}\n")
    turn = load_file(_write(tmp_path, text)).cases[0].turns[0]
    assert turn.messages == ({"role": "user", "content": "2024-05-01"},)
    assert turn.expect.calls[0].arguments == {"city": Matcher("exact", "12:30")}


# -- the schema itself ------------------------------------------------------------------------------------------


def _schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return schema


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    schema = _schema()
    Draft202012Validator.check_schema(schema)
    assert (schema["$schema"], schema["$id"]) == (
        "https://json-schema.org/draft/2020-12/schema",
        "https://pytest-tooleval.dev/schema/tooleval-suite-1.json",
    )
    assert schema["title"]


def _properties(schema: Any, where: str) -> list[tuple[str, Any]]:
    """Every (place, subschema) of a property in `schema`, through all nesting."""
    found = []
    if isinstance(schema, dict):
        for name, subschema in schema.get("properties", {}).items():
            found.append((f"{where}.{name}", subschema))
        for key, value in schema.items():
            found += _properties(value, f"{where}.{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            found += _properties(value, f"{where}[{index}]")
    return found


def test_every_property_of_the_schema_is_described() -> None:
    properties = _properties(_schema(), "")
    assert len(properties) > 40
    assert [place for place, subschema in properties if not subschema.get("description")] == []


def test_the_full_example_passes_the_published_schema_alone() -> None:
    import yaml

    validator = Draft202012Validator(_schema(), format_checker=Draft202012Validator.FORMAT_CHECKER)
    assert list(validator.iter_errors(yaml.safe_load(FULL))) == []
