"""The native function-calling helpers: tools from ACEBench functions, fc system prompts, history as messages.

The whole-data tests need TOOLEVAL_DATA_DIR; the prompt texts are read from the data's prompts.json.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from _data import LANGUAGES, NORMAL_CATEGORIES, SPECIAL_CATEGORIES, records

from pytest_tooleval.suites.acebench.categories import AGENT_CATEGORIES
from pytest_tooleval.suites.acebench.data import load_prompts
from pytest_tooleval.suites.acebench.decode import decode_fixed
from pytest_tooleval.suites.acebench.fc import (
    ToolSchemaError,
    ToolSet,
    fc_system_prompt,
    history_messages,
    tool_schemas,
)

VALID_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
ACEBENCH_TYPES = {"dict", "list", "tuple", "float", "bool", "any"}

# --- tool_schemas: the whole data ----------------------------------------------------------------------

# The one record whose functions cannot be sent as tools: a (distractor) function has its schema under the key
# "_arguments", a typo for "arguments" presumably; reading it so would be a guess, so it raises.
EXPECTED_FAILURES = {("zh", "normal_atom_enum_42"): "function 'Yoga_Session_Customizer': unexpected key '_arguments'"}


def _schemas(schema: Any) -> list[dict[str, Any]]:
    """`schema` and every subschema under it (properties, items, additionalProperties, patternProperties)."""
    if not isinstance(schema, dict):
        return []
    found = [schema]
    for keyword in ("properties", "patternProperties"):
        for sub in (schema.get(keyword) or {}).values():
            found += _schemas(sub)
    for keyword in ("items", "additionalProperties"):
        found += _schemas(schema.get(keyword))
    return found


def test_every_record_converts(acebench_dir: Path) -> None:
    counts: dict[str, list[int]] = {}
    failures: dict[tuple[str, str], str] = {}
    for lang in LANGUAGES:
        for category in NORMAL_CATEGORIES + SPECIAL_CATEGORIES + AGENT_CATEGORIES:
            done = counts.setdefault(f"{lang}/{category}", [0, 0])
            for case in records(acebench_dir, lang, category):
                functions = case.record["function"]
                before = json.dumps(functions, sort_keys=True)
                done[1] += 1
                try:
                    tools = tool_schemas(functions)
                except ToolSchemaError as exc:
                    failures[(lang, case.id)] = str(exc)
                    continue
                done[0] += 1
                assert json.dumps(functions, sort_keys=True) == before, case.id  # the input is untouched
                assert len(tools.tools) == len(functions) == len(tools.names)
                for tool, function in zip(tools.tools, functions, strict=True):
                    name = tool["function"]["name"]
                    assert VALID_NAME.match(name) and tools.original(name) == function["name"]
                    types = [s.get("type") for s in _schemas(tool["function"]["parameters"])]
                    assert not ACEBENCH_TYPES & {t for t in types if isinstance(t, str)}, (case.id, name)
    total = [sum(done[i] for done in counts.values()) for i in (0, 1)]
    print(f"\ntool_schemas: {total[0]} of {total[1]} records convert")
    for key, (good, seen) in counts.items():
        print(f"  {key}: {good}/{seen}")
    assert failures == EXPECTED_FAILURES


# --- tool_schemas: by hand -----------------------------------------------------------------------------


def _one(parameters: Any) -> dict[str, Any]:
    tool: dict[str, Any] = tool_schemas([{"name": "f", "description": "d", "parameters": parameters}]).tools[0]
    return tool


def test_type_names_are_translated_everywhere_and_the_rest_is_kept() -> None:
    parameters = {
        "type": "dict",
        "required": ["a"],
        "properties": {
            "a": {"type": "list", "items": {"type": "float", "minimum": 0}, "description": "x"},
            "b": {"type": "dict", "additionalProperties": {"type": "tuple"}, "default": {"type": "dict"}},
            "c": {"type": "object", "patternProperties": {"^x": {"type": "any", "enum": ["dict"]}}},
            "d": {"type": ["bool", "null"], "format": "date"},
        },
    }
    original = copy.deepcopy(parameters)
    tool = _one(parameters)
    assert parameters == original
    assert tool == {
        "type": "function",
        "function": {
            "name": "f",
            "description": "d",
            "parameters": {
                "type": "object",
                "required": ["a"],
                "properties": {
                    "a": {"type": "array", "items": {"type": "number", "minimum": 0}, "description": "x"},
                    "b": {"type": "object", "additionalProperties": {"type": "array"}, "default": {"type": "dict"}},
                    "c": {"type": "object", "patternProperties": {"^x": {"enum": ["dict"]}}},
                    "d": {"type": ["boolean", "null"], "format": "date"},
                },
            },
        },
    }
    tool["function"]["parameters"]["properties"]["b"]["default"]["type"] = "changed"
    assert parameters == original  # a copy, not shared


def test_missing_schemas_and_the_arguments_key() -> None:
    empty = {"type": "object", "properties": {}}
    assert _one(None)["function"]["parameters"] == empty
    assert tool_schemas([{"name": "f"}]).tools == [{"type": "function", "function": {"name": "f", "parameters": empty}}]
    schema = {"type": "object", "properties": {"x": {"type": "string"}}}
    tool = tool_schemas([{"name": "f", "description": "d", "arguments": schema, "results": {}, "tags": ["t"]}])
    assert tool.tools[0]["function"] == {"name": "f", "description": "d", "parameters": schema}


def test_a_pattern_with_a_dash_after_a_class_escape_is_escaped() -> None:
    email = r"^[\w-\.]+@([\w-]+\.)+[\w-]{2,4}$"
    converted = _one({"type": "dict", "properties": {"e": {"type": "string", "pattern": email}}})
    assert converted["function"]["parameters"]["properties"]["e"]["pattern"] == r"^[\w\-\.]+@([\w-]+\.)+[\w-]{2,4}$"
    assert (
        _one({"type": "dict", "properties": {"e": {"type": "string", "pattern": "^a-b$"}}})["function"]["parameters"][
            "properties"
        ]["e"]["pattern"]
        == "^a-b$"
    )


@pytest.mark.parametrize(
    ("functions", "message"),
    [
        (["f"], "function #0: expected a dict with a non-empty string 'name'"),
        ([{"description": "d"}], "function #0: expected a dict"),
        (
            [{"name": "f", "parameters": {"type": "dict", "properties": {"a": {"type": "str"}}}}],
            "function 'f': parameters/properties/a/type: unknown type name 'str'",
        ),
        (
            [{"name": "f", "parameters": {"type": "dict", "properties": {"a": {"type": "string", "required": True}}}}],
            "function 'f': parameters/properties/a/required: True is not of type 'array'",
        ),
        (
            [{"name": "f", "parameters": {"type": "dict", "properties": {"a": {"type": "list", "items": [{}]}}}}],
            "function 'f': parameters/properties/a/items: a schema must be a dict, got list",
        ),
        ([{"name": "f", "parameters": {"type": "string"}}], "function 'f': parameters: a tool's parameters must be"),
        ([{"name": "f", "parameters": None, "arguments": None}], "function 'f': both 'parameters' and 'arguments'"),
        ([{"name": "f", "_arguments": {}}], "function 'f': unexpected key '_arguments'"),
        ([{"name": "f", "description": 3}], "function 'f': description: expected a string"),
    ],
)
def test_what_cannot_be_converted_raises_in_one_line(functions: list[Any], message: str) -> None:
    with pytest.raises(ToolSchemaError) as caught:
        tool_schemas(functions)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_names_are_made_valid_and_unique() -> None:
    long = "x" * 70
    tools = tool_schemas([{"name": n} for n in ["geo.search", "geo_search", "geo.search", "情感_分析", long, long]])
    names = [tool["function"]["name"] for tool in tools.tools]
    assert names == ["geo_search_2", "geo_search", "geo_search_3", "_____", "x" * 64, "x" * 62 + "_2"]
    assert all(VALID_NAME.match(name) for name in names)
    originals = ["geo.search", "geo_search", "geo.search", "情感_分析", long, long]
    assert [tools.original(name) for name in names] == originals
    assert tools.original("unknown") == "unknown"
    assert tools.tool_name("geo.search") == "geo_search_2" and tools.tool_name("a.b") == "a_b"
    assert (
        tool_schemas([{"name": n} for n in ("geo.search", "geo_search")]).names
        == tool_schemas([{"name": n} for n in ("geo.search", "geo_search")]).names
    )  # deterministic


# --- fc_system_prompt ----------------------------------------------------------------------------------

SINGLE_TURN = [
    (f"model_inference/prompt_{lang}.py", f"SYSTEM_PROMPT_FOR_{kind}_DATA_{lang.upper()}")
    for lang in LANGUAGES
    for kind in ("NORMAL", "PREFERENCE", "SPECIAL")
]
TEMPLATES = (
    SINGLE_TURN
    + [
        (f"model_inference/prompt_{lang}.py", f"{kind}_PROMPT_{lang.upper()}")
        for lang in LANGUAGES
        for kind in ("TRAVEL", "BASE")
    ]
    + [
        (f"model_inference/{mode}/APIModel_agent.py", f"MULTI_TURN_AGENT_PROMPT_SYSTEM_{lang.upper()}")
        for mode in ("multi_step", "multi_turn")
        for lang in LANGUAGES
    ]
)
SENTINELS = ('["There is incorrect value', '["Missing necessary parameters', '["Due to the limitations')
SENTENCE_END = re.compile(r"(?:(?<=。)|(?<=\.)(?<!^\d\.)(?= )) *")
LINE_START = re.compile(r"^\s*(?:[-*]\s+|\(\d+\)\s*|\d+[.)]?\s+)?")


@pytest.mark.parametrize(("module", "name"), TEMPLATES, ids=[name for _, name in TEMPLATES])
def test_upstream_templates(acebench_dir: Path, module: str, name: str) -> None:
    template = load_prompts(acebench_dir)[module][name]
    result = fc_system_prompt(template)
    assert "ApiName(" not in result and '"["' not in result and "{function}" not in result
    if "SPECIAL" in name:
        assert all(sentinel in result for sentinel in SENTINELS)
    if (module, name) in SINGLE_TURN:
        result.format(time="", profile="")
    original, kept = template.split("\n"), result.split("\n")
    for placeholder in ("{time}", "{profile}"):
        if placeholder in original:  # still there, between the same (blank) neighbours
            i, j = original.index(placeholder), kept.index(placeholder)
            assert (kept[j - 1], kept[j + 1]) == (original[i - 1], original[i + 1])
    # Every output line is an original line, whole or some of its sentences, in order; only lines with an
    # output-format sentence, and the function list with its heading, are skipped.
    source = iter(enumerate(original))
    for line in kept:
        for i, candidate in source:
            # (a line whose first sentence went keeps its indentation and bullet or list number)
            parts = SENTENCE_END.split(LINE_START.sub("", line, count=1))
            if line == candidate or (line and all(part in candidate for part in parts)):
                break
            assert _may_go(original, i), candidate
    assert all(_may_go(original, i) for i, _ in source)
    assert result != template


def _may_go(lines: list[str], i: int) -> bool:
    """Whether original line `i` may be missing: it has a format sentence, or is the function list or its heading."""
    return any(marker in lines[i] for marker in ("ApiName", '"["')) or "{function}" in lines[i : i + 2]


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("Intro. Use [ApiName(a=1)]. Be brief.\n\nAPI:\n{function}", "Intro. Be brief.\n"),
        ('Start with "[" and end. Say [ApiName()].\nKeep.', "Keep."),
        ("1. If x, output [ApiName()]. Then stop.\n2. Other.", "1. Then stop.\n2. Other."),  # the number stays
        ("   - Use [ApiName()]. Then stop.", "   - Then stop."),  # and so does a bullet
        ("甲。输出[ApiName()]。乙。\n{time}", "甲。乙。\n{time}"),
        ('(2) Say ["Missing necessary parameters (k) for the api (ApiName)"]. Go.', None),  # a sentinel: kept
        ("a.b c. d [ApiName].  e.", "a.b c. e."),  # the separator after a kept sentence
        ("No markers here.\n\n\nAt all.", None),
        ("{function}", ""),
    ],
)
def test_the_rule(template: str, expected: str | None) -> None:
    assert fc_system_prompt(template) == (template if expected is None else expected)


# --- history_messages: the whole data ------------------------------------------------------------------

PREFIX = re.compile(r"^(user|system): ?")


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("category", NORMAL_CATEGORIES + SPECIAL_CATEGORIES)
def test_every_question_becomes_messages(acebench_dir: Path, lang: str, category: str) -> None:
    for case in records(acebench_dir, lang, category):
        question = case.record["question"]
        try:
            tools: ToolSet | None = tool_schemas(case.record["function"])
        except ToolSchemaError:
            tools = None
        messages: list[dict[str, Any]] = history_messages(question, tools)
        _check_shape(messages, case.id)
        texts = "\n".join(m["content"] for m in messages if m.get("content") is not None)
        call_messages = [m for m in messages if m.get("tool_calls")]
        # Every line of the question is in some message's text, but those of the call turns, which are tool_calls.
        call_lines = [
            PREFIX.sub("", line) for line in question.split("\n") if line.strip() and PREFIX.sub("", line) not in texts
        ]
        assert len(call_lines) == len(call_messages), case.id
        for line, message in zip(call_lines, call_messages, strict=True):
            decoded = [(name, args) for call in decode_fixed(line) for name, args in call.items()]
            sent = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in message["tool_calls"]]
            assert [(n if tools is None else tools.tool_name(n), json.loads(json.dumps(a))) for n, a in decoded] == sent
            if tools is not None:
                assert all(VALID_NAME.match(name) for name, _ in sent)


def _check_shape(messages: list[dict[str, Any]], where: str) -> None:
    assert messages and messages[0]["role"] == "user", where
    for i, message in enumerate(messages):
        assert message["role"] in ("user", "assistant", "tool"), where
        if message["role"] == "tool":
            assert messages[i - 1]["role"] in ("assistant", "tool"), where
        if message.get("tool_calls"):
            ids = [call["id"] for call in message["tool_calls"]]
            following = [m["tool_call_id"] for m in messages[i + 1 : i + 1 + len(ids)] if m["role"] == "tool"]
            assert following == ids, where
        else:
            assert isinstance(message["content"], str), where


# --- history_messages: by hand -------------------------------------------------------------------------

TRANSCRIPT = """user: I'm planning a hiking trip to the Andes.
system: Could you please tell me the duration of the trip?
user: The trip will be 10 days long, at 5500 meters, intermediate level.
system: [hiking_fitness_preparation(hiking_duration=10, hiking_altitude=5500, fitness_level="intermediate")]
system: Here is your customized hiking fitness preparation plan:
- Training Plan:
  Cardio three times a week.

user: I'm also curious about the gear.
"""


def test_the_example_transcript() -> None:
    assert history_messages(TRANSCRIPT) == [
        {"role": "user", "content": "I'm planning a hiking trip to the Andes."},
        {"role": "assistant", "content": "Could you please tell me the duration of the trip?"},
        {"role": "user", "content": "The trip will be 10 days long, at 5500 meters, intermediate level."},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_0",
                    "type": "function",
                    "function": {
                        "name": "hiking_fitness_preparation",
                        "arguments": (
                            '{"hiking_duration": 10, "hiking_altitude": 5500, "fitness_level": "intermediate"}'
                        ),
                    },
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_0",
            "content": (
                "Here is your customized hiking fitness preparation plan:\n- Training Plan:\n"
                "  Cardio three times a week."
            ),
        },
        {"role": "user", "content": "I'm also curious about the gear."},
    ]


def test_several_calls_share_one_result_and_ids_count_on() -> None:
    question = (
        "user: a\nsystem: [geo.find(city='Paris', tags=('x', 'y')), g(n=1)]\nsystem: done\n"
        "user: b\nsystem: [g(n=2)]\nsystem: 天气。\n"
    )
    tools = tool_schemas([{"name": "geo.find"}, {"name": "g"}])
    messages: list[dict[str, Any]] = history_messages(question, tools)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "user", "assistant", "tool"]
    first = messages[1]["tool_calls"]
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in first] == [
        ("call_0", "geo_find", '{"city": "Paris", "tags": ["x", "y"]}'),
        ("call_1", "g", '{"n": 1}'),
    ]
    assert [(m["tool_call_id"], m["content"]) for m in messages[2:4]] == [("call_0", "done"), ("call_1", "done")]
    assert messages[5]["tool_calls"][0]["id"] == "call_2" and messages[6]["content"] == "天气。"
    untooled: list[dict[str, Any]] = history_messages(question)
    assert untooled[1]["tool_calls"][0]["function"]["name"] == "geo.find"  # no ToolSet: as is


def test_continuation_lines_and_prefix_spacing() -> None:
    question = "user:first\nmore\n\nsystem:  indented\nuser: last\n\n\n"
    assert history_messages(question) == [
        {"role": "user", "content": "first\nmore"},
        {"role": "assistant", "content": " indented"},
        {"role": "user", "content": "last"},
    ]


@pytest.mark.parametrize(
    "turn",
    [
        "[Paris Promotional Video](https://example.com/paris)",  # not Python
        "[1, 2]",  # not calls
        "[]",  # no calls
        "[f()(x=1)]",  # no name
        "[f(**{'a': 1})]",  # a **kw argument has no JSON form
        "[f(x=b'raw')]",  # bytes
        "[f(x={1: 2})]",  # a key that is not a string
        "[f(x=1e999)]",  # infinity
    ],
)
def test_a_system_turn_that_is_not_a_call_list_stays_text(turn: str) -> None:
    messages = history_messages(f"user: q\nsystem: {turn}\nsystem: result\nuser: again")
    assert messages[1:3] == [{"role": "assistant", "content": turn}, {"role": "assistant", "content": "result"}]


def test_a_call_list_without_a_result_stays_text() -> None:
    assert history_messages("user: q\nsystem: [f(a=1)]\nuser: next")[1] == {"role": "assistant", "content": "[f(a=1)]"}
    assert history_messages("user: q\nsystem: [f(a=1)]")[1] == {"role": "assistant", "content": "[f(a=1)]"}
    back_to_back: list[dict[str, Any]] = history_messages("user: q\nsystem: [f(a=1)]\nsystem: [f(a=2)]\nsystem: r")
    assert [m["role"] for m in back_to_back] == ["user", "assistant", "assistant", "tool"]
    assert back_to_back[1]["content"] == "[f(a=1)]" and back_to_back[2]["tool_calls"][0]["id"] == "call_0"


def test_a_question_without_prefixes_is_one_user_message() -> None:
    question = "Book a flight to Rome.\nTomorrow, please.\n"
    assert history_messages(question) == [{"role": "user", "content": question}]
    assert history_messages("") == [{"role": "user", "content": ""}]


def test_a_transcript_may_end_on_a_system_turn() -> None:
    assert history_messages("user: hi\nsystem: hello") == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
    ]
