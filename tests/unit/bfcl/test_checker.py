"""Each rule of bfcl's decoding and checking on small cases, and hostile answers that must end as verdicts (bfcl §3-§5).

No data is needed: the function docs and possible answers are written here, in bfcl's shapes.
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import pytest

from hang_guard import within_30_seconds
from json_narrow import as_list, as_object
from pytest_tooleval.suites.bfcl.ast_rules import UNSUPPORTED, normalize_string
from pytest_tooleval.suites.bfcl.checker import BfclVerdict, check_answer, error_message, language_of
from pytest_tooleval.suites.bfcl.decode import DecodeError, decode_function_calls, decode_prompting
from pytest_tooleval.suites.bfcl.java_js_types import java_value, js_value


def function(name: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    parameters = {"type": "dict", "properties": properties, "required": required}
    return {"name": name, "description": "", "parameters": parameters}


AREA = function(
    "geometry.area",
    {
        "base": {"type": "integer"},
        "height": {"type": "float"},
        "unit": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "options": {"type": "dict"},
        "flag": {"type": "boolean"},
    },
    ["base", "height"],
)
AREA_ANSWER: list[dict[str, Any]] = [
    {
        "geometry.area": {
            "base": [10],
            "height": [5.0],
            "unit": ["square meters", ""],
            "tags": [["a", "b"], ""],
            "options": [{"mode": ["fast"], "level": [1, ""]}, ""],
            "flag": [True, ""],
        }
    }
]


def simple(output: object, mode: str = "prompt") -> BfclVerdict:
    return check_answer("simple_python", mode, output, [AREA], AREA_ANSWER)  # type: ignore[arg-type]


def assert_verdict(verdict: BfclVerdict, error_type: str) -> None:
    assert (verdict.valid, verdict.error_type) == (error_type == "", error_type), verdict
    json.dumps(verdict.decoded, allow_nan=False)  # always JSON-plain


# --- §3.1 the prompting decoder -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "[geometry.area(base=10, height=5.0)]",
        "geometry.area(base=10, height=5.0)",  # brackets are added
        "```\n[geometry.area(base=10, height=5.0)]\n```",  # backticks and newlines are trimmed
        " geometry.area(base=10, height=5)\n",  # an int for a float
        "[geometry.area(base=10, height=5.0, unit='Square-Meters')]",  # case and punctuation ignored
        "[geometry.area(7, base=10, height=5.0)]",  # positional arguments are dropped
    ],
)
def test_accepted_renderings(text: str) -> None:
    assert_verdict(simple(text), "")


@pytest.mark.parametrize(
    "text",
    [
        "```python\n[geometry.area(base=10, height=5.0)]\n```",  # the language tag stays: not Python any more
        "\t[geometry.area(base=10, height=5.0)]",  # a tab is not trimmed
        "Sure: [geometry.area(base=10, height=5.0)]",
        "[geometry.area(base=10, height=5.0), 3]",  # every element must be a call
        "[geometry.area(base=10, height=5.0) for x in y]",
    ],
)
def test_decode_failures(text: str) -> None:
    assert_verdict(simple(text), "ast_decoder:decoder_failed")


def test_values_are_read_from_the_tree() -> None:
    calls = decode_prompting(
        "[m.f(a=+5, b=not True, c=1+2*3, d='x'*3, e=x, g=h(1), i=j(k=2), l=(1, 2), m=x[0], n=..., **rest)]", "python"
    )
    assert calls == [
        {"m.f": {"a": -5, "b": -1, "c": 7, "d": "xxx", "e": "x", "g": "h(1)", "i": {"j": {"k": 2}}, "l": (1, 2),
                 "m": "x[0]", "n": "...", None: "rest"}}
    ]  # fmt: skip


@pytest.mark.parametrize(
    "value",
    [
        "lambda: 0",  # bfcl reads lambda bodies wrongly: always a failure
        "f'{x}'",
        "a.b",  # an attribute value
        "{1, 2}",
        "1 < 2",
        "-x",  # the unary quirk needs a constant operand
        "-'text'",
        "{**d}",
        "{[1]: 2}",  # an unhashable key
        "x + 1",  # a name inside arithmetic is undefined
        "1 / 0",
        "2 ** 10 ** 10",  # far too large to compute: refused, not computed
        "'x' * 10 ** 10",
    ],
)
def test_values_that_fail_decoding(value: str) -> None:
    with pytest.raises(DecodeError):
        decode_prompting(f"[f(a={value})]", "python")


# --- hostile answers end as verdicts ------------------------------------------------------------------------------


HOSTILE = [
    "[" * 5000 + "]" * 5000,
    "[geometry.area(base=" + "[" * 300 + "]" * 300 + ")]",
    "[geometry.area(base=" + "-" * 100_000 + "1)]",
    "[geometry.area(base=1e999999, height=-1e999999)]",
    "[geometry.area(base=10, height=5.0, unit=__import__('os').system('echo hi'))]",
    "[__import__('os').system(command='echo hi')]",
    "[geometry.area(base=(lambda: __import__('os'))(), height=5.0)]",
    "[geometry.area(base=10, height=5.0, unit=f'{__import__(\"os\")}')]",
    "[geometry.area(base=10, height=5.0, unit=a.b.c.d.e)]",
    "[geometry.area(10, 5.0)]",
    "[geometry.area(base=10, height=5.0, unit=b'bytes')]",
    "[geometry.area(base=10, height=5.0, unit=1j)]",
    "[geometry.area(base=0x" + "f" * 5000 + ", height=5.0)]",
    "[geometry.area(base=1" + "0" * 5000 + ")]",
    "[geometry.area(base=9**9**9)]",
    "[geometry.area(base=10, height=5.0, tags=['a'] * 10**12)]",
    "[geometry.area(base=10, height=5.0)]\x00",
    "x" * 2_000_000,
    "[f()()(a=1)]",
    "[geometry.area(base=True, height=5.0)]",
]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_prompt_answers_end_as_verdicts(text: str) -> None:
    for category, answer in (("simple_python", AREA_ANSWER), ("irrelevance", None), ("parallel", AREA_ANSWER)):
        verdict = within_30_seconds(partial(check_answer, category, "prompt", text, [AREA], answer))
        assert isinstance(verdict, BfclVerdict)
        json.dumps(verdict.decoded, allow_nan=False)


def test_a_huge_hex_integer_is_a_verdict_with_plain_decoded_data() -> None:
    verdict = simple("[geometry.area(base=0x" + "f" * 5000 + ", height=5.0)]")
    assert_verdict(verdict, "value_error:others")
    assert as_object(as_list(verdict.decoded)[0])["geometry.area"]["base"].startswith("0xfff")


def test_infinite_values_are_plain_strings_in_decoded() -> None:
    verdict = simple("[geometry.area(base=10, height=1e999999)]")
    assert_verdict(verdict, "value_error:others")
    assert verdict.decoded == [{"geometry.area": {"base": 10, "height": "inf"}}]


@pytest.mark.parametrize(
    ("output", "error_type"),
    [
        ("not a list", "ast_decoder:decoder_failed"),
        (None, "ast_decoder:decoder_failed"),
        ([["geometry_area"]], "ast_decoder:decoder_failed"),
        ([{}], "ast_decoder:decoder_failed"),
        ([{"geometry_area": {"base": 10}}], "ast_decoder:decoder_failed"),  # arguments must be JSON text
        ([{"geometry_area": "{not json"}], "ast_decoder:decoder_failed"),
        ([{"geometry_area": "[" * 100_000 + "]" * 100_000}], "ast_decoder:decoder_failed"),
        ([{"geometry_area": "[10, 5.0]"}], "ast_decoder:decoder_wrong_output_format"),
        ([{"geometry_area": '{"base": 10, "height": NaN}'}], "value_error:others"),
        ([], "simple_function_checker:wrong_count"),
        ("", "simple_function_checker:wrong_count"),  # an empty text iterates to no call at all
        ([{"geometry_area": '{"base": 10, "height": 5}'}], ""),
        ([{"geometry.area": '{"base": 10, "height": 5}'}], "simple_function_checker:wrong_func_name"),
    ],
)
def test_function_calling_answers(output: object, error_type: str) -> None:
    # (bfcl §3.4, §4.1) function-calling names carry "_" for "."
    assert_verdict(simple(output, "fc"), error_type)


def test_a_prompt_answer_that_is_not_text_fails_decoding() -> None:
    assert_verdict(simple(["geometry.area(base=10)"]), "ast_decoder:decoder_failed")
    with pytest.raises(DecodeError):
        decode_function_calls(42)


# --- §4 the checker ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "error_type"),
    [
        ("[area(base=10, height=5.0)]", "simple_function_checker:wrong_func_name"),
        ("[geometry.area(height=5.0)]", "simple_function_checker:missing_required"),
        ("[geometry.area(base=10, height=5.0, color='red')]", "simple_function_checker:unexpected_param"),
        ("[geometry.area(base=10.0, height=5.0)]", "type_error:simple"),  # no float for an int
        ("[geometry.area(base=True, height=5.0)]", "type_error:simple"),  # a bool is not an int
        ("[geometry.area(base=11, height=5.0)]", "value_error:others"),
        ("[geometry.area(base=10, height=5.0, unit='square feet')]", "value_error:string"),
        ("[geometry.area(base=10, height=5.0, tags=['B', 'A'])]", "value_error:list/tuple"),
        ("[geometry.area(base=10, height=5.0, tags=['A', 'B'])]", ""),  # items are normalised too
        ("[geometry.area(base=10, height=5.0, tags=[])]", ""),  # bfcl quirk: [] matches the optional ""
        # bfcl quirk: the optional "" passes the item check, so the wrong item is found by the value check
        ("[geometry.area(base=10, height=5.0, tags=['a', 2])]", "value_error:list/tuple"),
        ("[geometry.area(base=10, height=5.0, tags=('a', 'b'))]", "type_error:simple"),  # a tuple for an array
        ("[geometry.area(base=10, height=5.0, options={'mode': 'FAST'})]", ""),
        ("[geometry.area(base=10, height=5.0, options={'mode': 'slow'})]", "value_error:dict_value"),
        ("[geometry.area(base=10, height=5.0, options={'speed': 1})]", "value_error:dict_key"),
        ("[geometry.area(base=10, height=5.0, options={'level': 1})]", "value_error:dict_key"),  # mode missing
        ("[geometry.area(base=10, height=5.0, options={'level': 2})]", "value_error:dict_key"),  # quirk: key wins
        ("[geometry.area(base=10, height=5.0), geometry.area(base=10, height=5.0)]",
         "simple_function_checker:wrong_count"),
    ],
)  # fmt: skip
def test_simple_rules(text: str, error_type: str) -> None:
    assert_verdict(simple(text), error_type)


def test_a_missing_optional_parameter_needs_an_empty_string_among_the_answers() -> None:
    answer: list[dict[str, Any]] = [{"geometry.area": {**AREA_ANSWER[0]["geometry.area"], "unit": ["meters"]}}]
    verdict = check_answer("simple_python", "prompt", "[geometry.area(base=10, height=5.0)]", [AREA], answer)
    assert_verdict(verdict, "simple_function_checker:missing_optional")


def test_a_value_of_the_possible_answers_type_is_a_variable() -> None:
    # (bfcl §4.2) an int parameter whose possible answer is text takes the text as written
    answer: list[dict[str, Any]] = [{"geometry.area": {**AREA_ANSWER[0]["geometry.area"], "base": ["side_length"]}}]

    def check(text: str) -> BfclVerdict:
        return check_answer("simple_python", "prompt", text, [AREA], answer)

    assert_verdict(check("[geometry.area(base='side_length', height=5.0)]"), "")
    assert_verdict(check("[geometry.area(base='Side Length', height=5.0)]"), "value_error:others")  # no normalising


def test_a_tuple_parameter_takes_a_tuple_or_a_list() -> None:
    doc = function("move", {"to": {"type": "tuple", "items": {"type": "float"}}}, ["to"])
    answer: list[dict[str, Any]] = [{"move": {"to": [[1.0, 2.0]]}}]
    for text in ("[move(to=(1.0, 2.0))]", "[move(to=[1.0, 2.0])]"):
        assert_verdict(check_answer("simple_python", "prompt", text, [doc], answer), "")
    # an item of the wrong type fails the item check: "nested", as the value has the possible answers' type
    assert_verdict(check_answer("simple_python", "prompt", "[move(to=('a', 2.0))]", [doc], answer), "type_error:nested")


def test_a_list_of_dicts_is_checked_dict_by_dict() -> None:
    doc = function("order", {"items": {"type": "array", "items": {"type": "dict"}}}, ["items"])
    answer: list[dict[str, Any]] = [{"order": {"items": [[{"name": ["tea"], "n": [1, ""]}, {"name": ["cake"]}]]}}]

    def check(text: str) -> BfclVerdict:
        return check_answer("simple_python", "prompt", text, [doc], answer)

    assert_verdict(check("[order(items=[{'name': 'Tea'}, {'name': 'cake', }])]"), "")
    assert_verdict(check("[order(items=[{'name': 'tea'}])]"), "value_error:list_dict_count")
    assert_verdict(check("[order(items=[{'name': 'cake'}, {'name': 'tea'}])]"), "value_error:dict_value")


SUM = function("math.sum", {"a": {"type": "integer"}, "b": {"type": "integer"}}, ["a", "b"])
PRODUCT = function("math.product", {"a": {"type": "integer"}, "b": {"type": "integer"}}, ["a", "b"])


@pytest.mark.parametrize(
    ("text", "error_type"),
    [
        ("[math.product(a=3, b=4), math.sum(a=1, b=2)]", ""),  # any order
        ("[math.sum(a=1, b=2), math.product(a=3, b=5)]", "parallel_function_checker_no_order:cannot_find_match"),
        ("[math.sum(a=1, b=2)]", "parallel_function_checker_no_order:wrong_count"),
    ],
)
def test_parallel_matching_is_order_free(text: str, error_type: str) -> None:
    answer: list[dict[str, Any]] = [{"math.sum": {"a": [1], "b": [2]}}, {"math.product": {"a": [3], "b": [4]}}]
    assert_verdict(check_answer("parallel_multiple", "prompt", text, [SUM, PRODUCT], answer), error_type)


def test_multiple_picks_the_expected_function() -> None:
    answer: list[dict[str, Any]] = [{"math.product": {"a": [3], "b": [4]}}]

    def check(text: str) -> BfclVerdict:
        return check_answer("multiple", "prompt", text, [SUM, PRODUCT], answer)

    assert_verdict(check("[math.product(a=3, b=4)]"), "")
    assert_verdict(check("[math.sum(a=3, b=4)]"), "simple_function_checker:wrong_func_name")
    assert_verdict(check("[]"), "multiple_function_checker:wrong_count")


def test_a_ground_truth_naming_no_known_function_is_our_own_error_type() -> None:
    answer: list[dict[str, Any]] = [{"math.power": {"a": [3]}}]
    assert_verdict(check_answer("multiple", "prompt", "[math.power(a=3)]", [SUM], answer), UNSUPPORTED)


def test_string_normalisation() -> None:
    assert normalize_string("New York, NY") == normalize_string("new-york ny") == "newyorkny"
    assert normalize_string("It's") == 'it"s'


# --- §3.2, §3.3, §4.2 Java and JavaScript -------------------------------------------------------------------------

JAVA_DOC = function(
    "Cache.put",
    {
        "key": {"type": "String"},
        "size": {"type": "long"},
        "ratio": {"type": "float"},
        "on": {"type": "boolean"},
        "names": {"type": "ArrayList", "items": {"type": "String"}},
        "ids": {"type": "Array", "items": {"type": "integer"}},
        "meta": {"type": "HashMap"},
    },
    ["key"],
)
JAVA_ANSWER: list[dict[str, Any]] = [
    {"Cache.put": {"key": ["k1"], "size": [5, ""], "ratio": [1.5, ""], "on": [True, ""], "names": [["a", "b"], ""],
                   "ids": [[1, 2], ""], "meta": [{"x": ["1"]}, ""]}}
]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "error_type"),
    [
        ('[Cache.put(key="k1", size=5L, ratio=1.5f, on=true)]', ""),
        ("[Cache.put(key='k1')]", ""),  # a multi-letter character literal is read as text
        ("[Cache.put(key='k1', on=True)]", "type_error:simple"),  # Python's True is a name in Java
        ("[Cache.put(key='k1', size=5)]", "type_error:simple"),  # a long needs its L
        ('[Cache.put(key="k1", names=new ArrayList<>(Arrays.asList("a", "b")))]', ""),
        ('[Cache.put(key="k1", ids=new int[]{1, 2})]', ""),
        ('[Cache.put(key="k1", meta=new HashMap<String, String>() {{ put("x", "1"); }})]', "value_error:dict_key"),
        ("[Cache.put(key='k1', ids=[1, 2])]", "ast_decoder:decoder_failed"),  # Python lists are not Java
        ("[]", "ast_decoder:decoder_wrong_output_format"),  # no call decodes to {}
        ("[Cache.put(key='k1'), Cache.put(key='k2')]", "ast_decoder:decoder_failed"),
        ("[Cache.put(key='k1'); Cache.put(key='k2');]", ""),  # only the first call is read
    ],
)
def test_java_answers(text: str, error_type: str) -> None:
    assert_verdict(check_answer("simple_java", "prompt", text, [JAVA_DOC], JAVA_ANSWER), error_type)


def test_java_short_statement_rule() -> None:
    # (bfcl §3.2) tree-sitter turns a statement of at most 10 characters without ";" into an error
    doc = function("ab", {"x": {"type": "integer"}}, ["x"])
    answer: list[dict[str, Any]] = [{"ab": {"x": [1]}}]
    assert_verdict(check_answer("simple_java", "prompt", "[ab(x=1)]", [doc], answer), "ast_decoder:decoder_failed")
    assert_verdict(check_answer("simple_java", "prompt", "[ab(x=1);]", [doc], answer), "")
    assert_verdict(check_answer("simple_java", "prompt", "[ab(x=00001)]", [doc], answer), "")  # 11 characters


JS_DOC = function(
    "fetchData",
    {
        "url": {"type": "String"},
        "retries": {"type": "integer"},
        "big": {"type": "Bigint"},
        "ok": {"type": "Boolean"},
        "tags": {"type": "array", "items": {"type": "String"}},
        "opts": {"type": "dict"},
    },
    ["url"],
)
JS_ANSWER: list[dict[str, Any]] = [
    {"fetchData": {"url": ["a.com"], "retries": [3, ""], "big": [7, ""], "ok": [True, ""], "tags": [["x", "y"], ""],
                   "opts": [{"method": ["GET"]}, ""]}}
]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "error_type"),
    [
        ("[fetchData(url='a.com', retries=3, big=7n, ok=true)]", ""),
        ("[fetchData(url='a.com', ok=True)]", "type_error:simple"),
        ("[fetchData(url='a.com', tags=['x', \"y\"])]", ""),
        ("[fetchData(url='a.com', opts={method: 'get'})]", ""),
        ("[fetchData(url='a.com', opts={'method': 'POST'})]", "value_error:dict_value"),
        ("[]", "ast_decoder:decoder_wrong_output_format"),  # no call decodes to None
        ("[fetchData(url='a.com'), other(x=1)]", "ast_decoder:decoder_wrong_output_format"),  # a sequence
        ("[fetchData(url='a.com')\nother(x=1)]", ""),
        ("[fetchData(url='a.com' retries=3)]", "ast_decoder:decoder_failed"),
        ("[fetchData(url='a.com', true, x)]", "ast_decoder:decoder_failed"),  # two positional values
    ],
)
def test_javascript_answers(text: str, error_type: str) -> None:
    assert_verdict(check_answer("simple_javascript", "prompt", text, [JS_DOC], JS_ANSWER), error_type)


def test_type_conversions() -> None:
    assert java_value("12", "integer") == 12
    assert java_value("12\n", "integer") == 12  # $ matches before a final newline
    assert java_value("1.5", "float") == "1.5"  # a Java float needs its f
    assert java_value("2e3", "double") == 2000.0
    assert java_value("'c'", "char") == "'c'"  # bfcl's char pattern never matches
    assert java_value('new ArrayList<>() {{ add("a"); add("b"); }}', "ArrayList", "String") == ["a", "b"]
    assert java_value('new String[]{"a"}', "Array", "String") == ['"a"']  # quotes stay in Array items
    assert java_value("new HashMap<>()", "HashMap") == {}
    assert js_value("'x'", "String") == "x"
    assert js_value("[[1, 2], [3]]", "array", "array") == [[1, 2], [3]]
    assert js_value("new Array(1, 2)", "array", "integer") == [1, 2]
    # bfcl quirk: an object ends at its first "}", so a nested object is cut short and stays text
    assert js_value("{a: [1, 'b'], c: {d: 2}}", "dict") == {"a": [1, "b"], "c": "{d: 2"}
    assert js_value("12.5", "integer") == "12.5"


# --- §5 relevance ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("category", "output", "mode", "error_type"),
    [
        ("irrelevance", "I cannot help with that.", "prompt", ""),
        ("irrelevance", "[]", "prompt", ""),
        ("irrelevance", "[geometry.area(base=1)]", "prompt", "irrelevance_error:decoder_success"),
        ("live_irrelevance", "[f()]", "prompt", "irrelevance_error:decoder_success"),  # any call, even unknown
        ("live_irrelevance", [], "fc", ""),
        ("live_irrelevance", [{"f": "[1]"}], "fc", ""),  # not in call format: no call
        ("live_relevance", "[f()]", "prompt", ""),
        ("live_relevance", "[]", "prompt", "relevance_error:decoder_failed"),
        ("live_relevance", "no call here", "prompt", "relevance_error:decoder_failed"),
        ("live_relevance", [{"f": "{}"}], "fc", ""),
    ],
)
def test_relevance_rules(category: str, output: object, mode: str, error_type: str) -> None:
    assert_verdict(check_answer(category, mode, output, [AREA], None), error_type)  # type: ignore[arg-type]


def test_language_and_message() -> None:
    assert [language_of(c) for c in ("simple_java", "simple_javascript", "live_multiple")] == [
        "java", "javascript", "python"
    ]  # fmt: skip
    verdict = simple("[geometry.area(base=11, height=5.0)]")
    message = error_message(verdict)
    assert message.startswith("value_error:others") and "11" in message and "[10]" in message
    assert error_message(simple("[geometry.area(base=10, height=5.0)]")) == ""
    with pytest.raises(ValueError, match="category"):
        check_answer("multi_turn_base", "prompt", "[]", [], [])


JAVA_JS_HOSTILE = [
    "[Cache.put(key=" + "(" * 5000 + "1" + ")" * 5000 + ")]",
    "[Cache.put(key=" + "1+" * 50_000 + "1)]",
    "[Cache.put(key=" + "-" * 50_000 + "1)]",
    "[Cache.put(key=a" + ".b" * 50_000 + ")]",
    "[Cache.put(key='unterminated)]",
    '[Cache.put(key="\\u0000", size=99999999999999999999999999L)]',
    "[" + "f(" * 3000 + ")" * 3000 + "]",
    "[fetchData(url=" + "[" * 5000 + "]" * 5000 + ")]",
    "[fetchData(url=x => x => x => x, ok=`a${b}`)]",
    "[fetchData(url={" * 3000 + "}" * 3000 + ")]",
]


@pytest.mark.parametrize("text", JAVA_JS_HOSTILE, ids=range(len(JAVA_JS_HOSTILE)))
def test_hostile_java_and_javascript_answers_end_as_verdicts(text: str) -> None:
    for category, doc, answer in (("simple_java", JAVA_DOC, JAVA_ANSWER), ("simple_javascript", JS_DOC, JS_ANSWER)):
        verdict = within_30_seconds(partial(check_answer, category, "prompt", text, [doc], answer))
        assert isinstance(verdict, BfclVerdict)
        json.dumps(verdict.decoded, allow_nan=False)
