"""Hostile model output: every scorer, decoder and environment returns a verdict for any text, quickly, without
running any of it; and through the plugin such an answer is a scored sample, never an error or a broken report.
"""

from __future__ import annotations

import faulthandler
import json
import subprocess
import sys
import tempfile
import threading
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from _reliability import read_report
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fake_openai import FakeOpenAI, ToolCalls
from mini_acebench import SAMPLES as MINI_SAMPLES
from pytest_tooleval.outcome import Answer, SampleResult
from pytest_tooleval.report.json_report import strict_plain
from pytest_tooleval.suites.acebench.agent import (
    AgentDecodeError,
    DecodeMode,
    build_environment,
    decode_message,
    execute_messages,
    score_rollout,
)
from pytest_tooleval.suites.acebench.scoring import GroundTruth, score_normal, score_special
from pytest_tooleval.suites.base import CaseBase
from pytest_tooleval.suites.gpt4tools.scoring import score_item
from pytest_tooleval.suites.toolalpaca.judge import Judgement, parse_judge_output
from pytest_tooleval.suites.toolalpaca.parser import (
    AgentAction,
    AgentFinish,
    OutputParseError,
    parse_output,
)
from pytest_tooleval.suites.toolalpaca.scoring import verdict as toolalpaca_verdict
from pytest_tooleval.suites.yamlsuite.spec import load_file
from pytest_tooleval.suites.yamlsuite.suite import YamlSuite
from pytest_tooleval.transport import result_payload
from pytest_tooleval.verdict import Verdict

# A call that never ends (a huge power computed, a pattern backtracking without end) is a hang: past the watchdog
# the process ends with a traceback. No wall-clock bound on a single call: on a busy machine it would fail calls
# that return; the verdict (or decoded value) each returns is what the tests assert.
WATCHDOG_S = 30.0
PROPERTY = settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)

# -- what a hostile model writes ---------------------------------------------------------------------------

MARKER = "PWNED_BY_MODEL_OUTPUT"  # a payload that ran would leave a file of this name in the working folder
PAYLOADS = [
    f"__import__('os').system('touch {MARKER}')",
    f"__import__('subprocess').run(['touch', '{MARKER}'])",
    f"open('{MARKER}', 'w').write('x')",
    f"eval(\"open('{MARKER}', 'w')\")",
    f"exec(\"import os; os.system('touch {MARKER}')\")",
    f"(lambda: __import__('os').system('touch {MARKER}'))()",
    "().__class__.__base__.__subclasses__()",
    "[c for c in ().__class__.__mro__[1].__subclasses__() if c.__name__ == 'Popen'][0](['id'])",
    "getattr(__builtins__, '__import__')('os').getcwd()",
    "turn_on_wifi.__func__.__globals__['os'].system('id')",
    "__acebench_instance__.turn_on_wifi.__self__.__dict__",
    "breakpoint()",
    "globals()",
    "9**9**9**9",
    "'x' * 10**10",
    "10**10**10",
    "2 << 10**9",
    "(1,) * 10**9",
    "'%*d' % (10**9, 1)",
    "1e999 - 1e999",
    "f'{MARKER!r:>{10**9}}'",
]
CALL_NAMES = [
    "get_weather",
    "turn_on_wifi",
    "send_message",
    "login_food_platform",
    "os.system",
    "__import__",
    "__class__",
    "eval",
    "exec",
    "open",
    "getattr",
    "_load_scenario",
    "a.b.c.d",
    "",
]
KEYS = ["city", "days", "message", "__class__", "__globals__", "x", "sender_name", "receiver_name"]
SMALL_VALUES = [
    "'Paris'",
    "3",
    "-4",
    "+2",
    "True",
    "None",
    "[1, [2, [3]]]",
    "{'a': {'b': 1}}",
    "(1, 2)",
    "Paris",
    "x[0]",
    "1 + 2",
    "'a' * 3",
    "~5",
    "not 0",
    "...",
    "b'\\x00'",
    "1j",
    "{1, 2}",
    "*args",
    "**kw",
]


ANY_CHARACTER = st.characters(codec=None)  # every code point; no codec table to build (a second per process)


def _nested(opening: str, closing: str) -> st.SearchStrategy[str]:
    return st.integers(1, 20_000).map(lambda n: opening * n + closing * n)


def _call(name: str, pairs: list[tuple[str, str]]) -> str:
    return f"{name}({', '.join(f'{key}={value}' for key, value in pairs)})"


calls = st.builds(
    _call,
    st.sampled_from(CALL_NAMES),
    st.lists(st.tuples(st.sampled_from(KEYS), st.sampled_from(SMALL_VALUES + PAYLOADS)), max_size=4),
)
call_lists = st.lists(calls, min_size=1, max_size=5).map(lambda items: "[" + ", ".join(items) + "]")

hostile_text = st.one_of(
    st.text(alphabet=ANY_CHARACTER, max_size=400),  # any unicode, controls included
    st.text(alphabet=st.characters(categories=["Cs", "Cc", "Zs", "Zl", "Mn", "Lo", "So"]), max_size=200),
    call_lists,
    st.sampled_from(PAYLOADS).map(lambda payload: f"[get_weather(city={payload})]"),
    st.sampled_from(PAYLOADS).map(lambda payload: f"[{payload}]"),
    _nested("[", "]"),
    _nested("(", ")").map(lambda nest: f"[get_weather(city={nest[: len(nest) // 2]}1{nest[len(nest) // 2 :]})]"),
    _nested("{'a':", "}").map(lambda nest: f"[get_weather(city={nest})]"),
    st.integers(1, 200_000).map(lambda n: f"[get_weather(city={'9' * n})]"),
    st.integers(1, 150_000).map(lambda n: f"[get_weather(city='{'a' * n}')]"),
    st.integers(1, 1_500).map(lambda n: "[" + "turn_on_wifi(), " * n + "]"),
    st.tuples(st.text(ANY_CHARACTER, max_size=50), call_lists, st.text(ANY_CHARACTER, max_size=50)).map("".join),
    st.sampled_from(["", " ", "[", "]", "[]", "[[]]", "'", "[f(", "\x00", "\ud800", "None", "[None]", "[1]"]),
)

# -- running a target: bounded time, nothing executed ------------------------------------------------------

_RISKY_EVENTS = (
    "exec",
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "subprocess.Popen",
    "open",
    "os.remove",
    "os.rename",
    "shutil",
    "socket.",
    "ctypes",
    "pty.spawn",
    "breakpoint",
    "builtins.input",
    "webbrowser",
)
_watching = threading.local()


def _audit(event: str, args: tuple[Any, ...]) -> None:
    record = getattr(_watching, "events", None)
    if record is not None and event.startswith(_RISKY_EVENTS):
        record.append((event, repr(args)[:120]))


sys.addaudithook(_audit)  # for the life of this process; it records only inside `contained` below


@contextmanager
def contained() -> Iterator[list[tuple[str, str]]]:
    """Record every risky runtime event (code execution, process, file, socket) in this thread meanwhile."""
    events: list[tuple[str, str]] = []
    _watching.events = events
    try:
        yield events
    finally:
        _watching.events = None


def run_contained(target: Callable[[str], Any], text: str) -> Any:
    # a call stuck in one C operation (a huge power, say) cannot be interrupted: past the watchdog the process
    # ends with a traceback, so a hang fails the test instead of stalling the run
    faulthandler.dump_traceback_later(WATCHDOG_S, exit=True)
    try:
        with contained() as events:
            result = target(text)
    finally:
        faulthandler.cancel_dump_traceback_later()
    assert events == [], f"{target.__name__} ran something for {text[:200]!r}: {events}"
    return result


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    assert not (tmp_path / MARKER).exists()
    # nothing at all was written (but Hypothesis's own cache, should this test be the first here to draw text)
    assert [path.name for path in tmp_path.iterdir() if path.name != ".hypothesis"] == []


def assert_verdict(verdict: Any) -> Verdict:
    assert isinstance(verdict, Verdict)
    assert isinstance(verdict.valid, bool)
    assert verdict.fixed is None or isinstance(verdict.fixed, bool)
    return verdict


class _Case(CaseBase):  # what result_payload reads off a case
    suite, id, category, language, index = "acebench", "hostile_0", "normal_atom_bool", "en", 0
    test_id, family, marks = "en-hostile_0", "normal", ()


def assert_reportable(verdict: Verdict, output: str) -> dict[str, Any]:
    """The payload the verdict travels in is JSON, and strict JSON as the report writes it (a non-finite number, a
    model's 1E310, as null with its place named: json_report.strict_plain); that form is returned."""
    payload = result_payload(_Case(), 1, SampleResult(verdict, output), "official")
    written = strict_plain(payload)
    json.dumps(written, allow_nan=False)
    return written


# -- ACEBench normal and special ---------------------------------------------------------------------------

FUNCTIONS = [
    {
        "name": "get_weather",
        "description": "Weather for a city.",
        "parameters": {
            "type": "dict",
            "required": ["city"],
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "filters": {"type": "dict", "properties": {"a": {"type": "number"}}},
            },
        },
    }
]
NORMAL_TRUTHS: list[GroundTruth] = [
    {"get_weather": {"city": "Paris"}},
    [{"get_weather": {"city": "Paris", "days": 3}}, {"get_weather": {"city": "Rome"}}],
    {"get_weather": {"city": "Paris", "tags": ["a", "b"], "filters": {"a": 1.5}}},
]
SPECIAL_TRUTHS = {
    "special_incomplete": {"get_weather": ["city"]},
    "special_error_param": {"city": ["Pariss"]},
    "special_irrelevant": "Due to the limitations of the function, I cannot solve this problem.",
}


@PROPERTY
@given(text=hostile_text, truth=st.sampled_from(NORMAL_TRUTHS))
def test_the_normal_scorer_gives_a_verdict_for_any_text(sandbox: Path, text: str, truth: Any) -> None:
    verdict = assert_verdict(run_contained(lambda output: score_normal(FUNCTIONS, truth, output), text))
    assert_reportable(verdict, text)


@PROPERTY
@given(text=hostile_text, category=st.sampled_from(sorted(SPECIAL_TRUTHS)))
def test_the_special_scorer_gives_a_verdict_for_any_text(sandbox: Path, text: str, category: str) -> None:
    verdict = assert_verdict(
        run_contained(lambda output: score_special(category, SPECIAL_TRUTHS[category], output), text)
    )
    assert_reportable(verdict, text)


# -- ACEBench agent: decoding, the executors on live environments, grading ---------------------------------

PHONE = ["BaseApi", "MessageApi", "ReminderApi", "FoodPlatform"]
CONFIG = {"BaseApi": {"wifi": False, "logged_in": True}}
RECORDS = {
    category: {"id": f"{category}_0", "initial_config": CONFIG, "involved_classes": PHONE}
    for category in ("agent_multi_step", "agent_multi_turn")
}
POSSIBLE_ANSWER = {
    "ground_truth": build_environment("en", CONFIG, PHONE).snapshot(),
    "mile_stone": ["[turn_on_wifi()]", "[send_message(sender_name='Eve', receiver_name='Frank', message='hi')]"],
}


@PROPERTY
@given(text=hostile_text, mode=st.sampled_from(list(DecodeMode)))
def test_agent_decoding_returns_call_strings_or_its_own_error(sandbox: Path, text: str, mode: DecodeMode) -> None:
    def decode(message: str) -> Any:
        try:
            return decode_message(message, mode)
        except AgentDecodeError as exc:
            return exc

    decoded = run_contained(decode, text)
    assert isinstance(decoded, AgentDecodeError) or all(isinstance(call, str) for call in decoded)


@settings(PROPERTY, max_examples=40)
@given(
    messages=st.lists(hostile_text, min_size=1, max_size=2),
    category=st.sampled_from(sorted(RECORDS)),
    language=st.sampled_from(["en", "zh"]),
)
def test_the_agent_executors_and_grading_give_a_verdict_for_any_messages(
    sandbox: Path, messages: list[str], category: str, language: str
) -> None:
    def rollout_and_grade(_: str) -> Verdict:
        result = execute_messages(RECORDS[category], language, messages)
        json.loads(json.dumps(result.to_payload(), default=str))  # answers travel between processes as JSON
        return score_rollout(POSSIBLE_ANSWER, result)

    assert_verdict(run_contained(rollout_and_grade, "\n".join(messages)))


# -- GPT4Tools and ToolAlpaca -------------------------------------------------------------------------------

GPT4TOOLS_ITEMS = [
    {
        "id": 0,
        "instruction": "i",
        "input": "",
        "output": "Thought: Do I need to use a tool? Yes\nAction: Edge "
        "Detection On Image\nAction Input: image/abc.png\nObservation:",
    },
    {"id": 1, "instruction": "i", "input": "", "output": "Thought: Do I need to use a tool? No\nAI: a cat"},
]
GPT4TOOLS_TEXT = st.one_of(
    hostile_text,
    st.lists(
        st.sampled_from(
            [
                "Thought: Do I need to use a tool? Yes",
                "Thought: Do I need to use a tool? No",
                "Action: Edge Detection On Image",
                "Action Input: image/abc.png, x",
                "AI: ",
                "Observation:",
                "\x00",
                ",,,,",
                "image.png" * 50,
            ]
        ),
        max_size=2_000,
    ).map("\n".join),
)


@PROPERTY
@given(text=GPT4TOOLS_TEXT, item=st.sampled_from(GPT4TOOLS_ITEMS))
def test_gpt4tools_scoring_gives_a_verdict_for_any_text(sandbox: Path, text: str, item: dict[str, Any]) -> None:
    verdict = assert_verdict(run_contained(lambda output: score_item(item, output), text))
    assert_reportable(verdict, text)


TOOLALPACA_TEXT = st.one_of(
    hostile_text.filter(lambda text: len(text) <= 20_000),  # longer inputs: see the bounded-parser test below
    st.lists(
        st.sampled_from(
            [
                "ASSISTANT Thought: ",
                "ASSISTANT Action: getWeather",
                "ASSISTANT Action 1:",
                'ASSISTANT Action Input: {"city": "Paris"}',
                "ASSISTANT Response: done",
                "ASSISTANT Observation: ",
                "Process Correctness: Yes",
                "Final Response Correctness: Uncertain",
                "## Results",
                "\t",
                "\n",
            ]
        ),
        max_size=300,
    ).map("".join),
)


@PROPERTY
@given(text=TOOLALPACA_TEXT)
def test_the_toolalpaca_parser_and_judge_reader_give_an_outcome_for_any_text(sandbox: Path, text: str) -> None:
    def parse(output: str) -> Any:
        try:
            return parse_output(output)
        except OutputParseError as exc:  # upstream ends the episode with this message: an outcome, not a crash
            return exc

    parsed = run_contained(parse, text)
    assert isinstance(parsed, (AgentAction, AgentFinish, OutputParseError))
    process, response = run_contained(parse_judge_output, text)
    verdict = assert_verdict(toolalpaca_verdict(Judgement(True, process, response, prompt="p", output=text)))
    assert_reportable(verdict, text)


# -- your own cases (*.tooleval.yaml) ---------------------------------------------------------------------------

EXAMPLE = load_file(Path(__file__).resolve().parents[2] / "examples" / "assistant.tooleval.yaml")
YAML_CASES = {mode: YamlSuite([EXAMPLE], {EXAMPLE.path: (mode,)}).cases() for mode in ("prompt", "fc")}


def score_yaml(case: Any, text: str) -> Verdict:
    """Every turn of the case answered with `text`: as the text protocol, or as a native call's arguments."""
    turn: dict[str, Any] = (
        {"text": text, "tool_calls": []}
        if case.mode == "prompt"
        else {"text": text[:100], "tool_calls": [["get_weather", text], ["add_event", text[::-1]]]}
    )
    result = YamlSuite([EXAMPLE], {EXAMPLE.path: (case.mode,)}).score(
        case, Answer(text, state=[turn] * len(case.spec.turns))
    )
    assert isinstance(result, SampleResult)
    return result.verdict


# jsonschema builds its validator class (attrs generates its methods with exec) on first use: done here, before
# the audit hook watches, so what it records is only what the model's text could cause
score_yaml(YAML_CASES["prompt"][0], "[get_weather(city='Paris')]")
score_yaml(YAML_CASES["fc"][0], '{"city": "Paris"}')


@PROPERTY
@given(text=hostile_text, case=st.sampled_from([*YAML_CASES["prompt"], *YAML_CASES["fc"]]))
def test_the_yaml_suite_gives_a_verdict_for_any_text(sandbox: Path, text: str, case: Any) -> None:
    verdict = assert_verdict(run_contained(lambda output: score_yaml(case, output), text))
    assert_reportable(verdict, text)


@pytest.mark.parametrize(
    ("text", "shown"),
    [("[get_weather(city=1E310)]", None), ("[0(A=-1e999)]", None), ("[get_weather(city=1E310j)]", "infj")],
)
def test_a_number_past_what_json_holds_still_reaches_the_report(sandbox: Path, text: str, shown: str | None) -> None:
    """The text protocol reads 1E310 as infinity, which the report writes as null and names; a complex number is
    shown by its repr."""
    for case in YAML_CASES["prompt"]:

        def score(output: str, case: Any = case) -> Verdict:
            return score_yaml(case, output)

        verdict = assert_verdict(run_contained(score, text))
        written = assert_reportable(verdict, text)
        assert not verdict.valid
        first = written["calls"][0]  # a list of calls per turn, for a conversation
        [value] = next(iter((first[0] if isinstance(first, list) else first).values())).values()
        assert value == shown
        assert (written.get("non_finite") is not None) == (shown is None)


# -- your own cases' patterns: whatever the model writes, a verdict in linear time --------------------------------

# Patterns that backtrack without end in Python's re on the right text (`^(a+)+$` over forty a's and a b: 2**40
# steps); RE2 answers each at once. Each is used as every kind of pattern a file has: a regex matcher, no_call's
# regex, a tool's `pattern` and `patternProperties` (matched against the model's argument names).
CATASTROPHIC = ["^(a+)+$", "(a|aa)+$", "^(a|a?)+$", "(x+x+)+y", "^(\\w+\\s?)*$", "(.*a){20}$"]


def _backtracking_file(pattern: str) -> str:
    quoted = json.dumps(pattern)  # a JSON string is a YAML double-quoted one
    return f"""\
tools:
  - name: note
    parameters:
      type: object
      properties:
        text: {{type: string}}
        code: {{type: string, pattern: {quoted}}}
        tree: {{$ref: "#/$defs/tree"}}
      patternProperties:
        {quoted}: {{}}
      additionalProperties: false
      $defs:
        tree: {{type: array, items: {{$ref: "#/$defs/tree"}}}}
cases:
  - name: argument
    user: Note it.
    expect: {{calls: [{{name: note, arguments: {{text: {{regex: {quoted}}}}}, partial: true}}]}}
  - name: words
    user: Say it.
    expect: {{no_call: true, regex: {quoted}}}
"""


def _load_backtracking() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        files = {}
        for number, pattern in enumerate(CATASTROPHIC):
            path = Path(folder) / f"backtracking{number}.tooleval.yaml"
            path.write_text(_backtracking_file(pattern), encoding="utf-8")
            files[pattern] = load_file(path)
    return files


BACKTRACKING = _load_backtracking()


def score_backtracking(pattern: str, mode: str, text: str, arguments: str | None = None) -> list[Verdict]:
    """Both cases of the pattern's file answered with `text`: in prompt mode as words and as the arguments of a
    text-protocol call; in fc mode as native arguments (`arguments`, else the text as every argument and as an
    argument's name)."""
    file = BACKTRACKING[pattern]
    suite = YamlSuite([file], {file.path: (mode,)})
    turns: list[dict[str, Any]]
    if mode == "prompt":
        turns = [{"text": f"[note(text={text!r}, code={text!r})]", "tool_calls": []}, {"text": text, "tool_calls": []}]
    else:
        native = arguments if arguments is not None else json.dumps({"text": text, "code": text, text[:2_000]: 1})
        turns = [{"text": "", "tool_calls": [["note", native]]}, {"text": text, "tool_calls": []}]
    verdicts = []
    for case, turn in zip(suite.cases(), turns, strict=True):
        result = suite.score(case, Answer(turn["text"], state=[turn]))
        assert isinstance(result, SampleResult)
        verdicts.append(result.verdict)
    return verdicts


for _pattern in CATASTROPHIC:  # the first use of RE2, jsonschema, referencing and the UTF-16 codec (a lone
    score_backtracking(_pattern, "prompt", "a")  # surrogate is read through it): before the audit hook watches
    score_backtracking(_pattern, "fc", "a\ud800")

# at most 45,000 characters: an answer holds two arguments of it, and the text protocol and native arguments are read
# up to 100,000 characters (longer ones fail before any pattern sees them)
BAIT = {
    "a-then-b": "a" * 40 + " b",
    "a-then-bang": "a" * 5_000 + "!",
    "x-without-y": "x" * 5_000,
    "words": "word " * 8_000 + "!",
    "long": "a" * 44_000 + "!",
}
# the only (pattern, bait) pairs that match (worked out by hand: Python's re would take for ever on the others)
MATCHING = {("^(\\w+\\s?)*$", "a-then-b"), ("^(\\w+\\s?)*$", "x-without-y")}


@pytest.mark.parametrize("mode", ["prompt", "fc"])
@pytest.mark.parametrize("bait", BAIT)
@pytest.mark.parametrize("pattern", CATASTROPHIC)
def test_a_backtracking_pattern_gets_a_verdict_on_any_text(sandbox: Path, pattern: str, bait: str, mode: str) -> None:
    text = BAIT[bait]
    argument, words = run_contained(lambda output: score_backtracking(pattern, mode, output), text)
    for verdict in (argument, words):
        assert_reportable(assert_verdict(verdict), text)
    matches = (pattern, bait) in MATCHING
    assert (argument.valid, words.valid) == (matches, matches)  # text, code and the argument's name all match
    if not matches:  # failed by the patterns themselves: the matcher and the tool's schema
        assert (argument.details["failed"], words.details["failed"]) == (["text: regex", "schema"], ["answer: regex"])


BACKTRACKING_TEXT = st.builds(
    lambda char, count, tail: char * count + tail,
    st.sampled_from("axw"),
    st.integers(1, 50_000),
    st.sampled_from(["", "!", " b", "y", "\n", "\ud800"]),
)


@PROPERTY
@given(
    text=st.one_of(hostile_text, BACKTRACKING_TEXT),
    pattern=st.sampled_from(CATASTROPHIC),
    mode=st.sampled_from(["prompt", "fc"]),
)
def test_the_yaml_patterns_give_a_verdict_for_any_text(sandbox: Path, text: str, pattern: str, mode: str) -> None:
    for verdict in run_contained(lambda output: score_backtracking(pattern, mode, output), text):
        assert_reportable(assert_verdict(verdict), text)


NESTED = {
    "deep-list": "[" * 40_000 + "]" * 40_000,
    "deep-objects": '{"a":' * 40_000 + "1" + "}" * 40_000,
    "nested-tree": "[" * 900 + "]" * 900,
    "huge-string": json.dumps("a" * 99_000),
}


@pytest.mark.parametrize("value", NESTED.values(), ids=NESTED.keys())
def test_deep_and_huge_native_arguments_get_a_verdict(sandbox: Path, value: str) -> None:
    for pattern in CATASTROPHIC:
        arguments = f'{{"tree": {value}, "code": {value}, "text": {value}}}'

        def score(output: str, pattern: str = pattern) -> list[Verdict]:
            return score_backtracking(pattern, "fc", "", output)

        argument, words = run_contained(score, arguments)
        for verdict in (argument, words):
            assert_reportable(assert_verdict(verdict), arguments)
        assert not argument.valid  # too deep, too long, or not what its schema and matcher want


TARGETS: dict[str, Callable[[str], Any]] = {
    "normal": lambda text: score_normal(FUNCTIONS, NORMAL_TRUTHS[2], text),
    "special": lambda text: score_special("special_error_param", SPECIAL_TRUTHS["special_error_param"], text),
    "agent-step": lambda text: score_rollout(
        POSSIBLE_ANSWER, execute_messages(RECORDS["agent_multi_step"], "en", [text])
    ),
    "agent-turn": lambda text: score_rollout(
        POSSIBLE_ANSWER, execute_messages(RECORDS["agent_multi_turn"], "zh", [text])
    ),
    "gpt4tools": lambda text: score_item(GPT4TOOLS_ITEMS[0], text),
    "yaml": lambda text: score_yaml(YAML_CASES["prompt"][0], text),
    "yaml-fc": lambda text: score_yaml(YAML_CASES["fc"][1], text),
}


@pytest.mark.parametrize("target", TARGETS.values(), ids=TARGETS.keys())
@pytest.mark.parametrize(
    "shape",
    ["[get_weather(city={})]", "[send_message(sender_name='Eve', receiver_name='Frank', message={})]", "[{}]", "{}"],
    ids=["arg", "api", "call", "bare"],
)
def test_every_known_trick_gets_a_verdict_and_runs_nothing(
    sandbox: Path, target: Callable[[str], Any], shape: str
) -> None:
    """The tricks hypothesis may or may not draw, each through each target, every time."""
    for payload in PAYLOADS:
        assert_verdict(run_contained(target, shape.format(payload)))


def test_the_toolalpaca_parser_is_bounded_on_a_long_reply() -> None:
    """A 1,200,000-character reply of repeated action headers parses at once (under a second). The parser was
    once quadratic on it, about 15 s for a tenth of it: the whole would take some 25 minutes, far past the guard."""
    code = (
        "from pytest_tooleval.suites.toolalpaca.parser import parse_output\n"
        "try:\n    parse_output('ASSISTANT Action: x\\n' * 60_000)\nexcept ValueError:\n    pass\n"
    )
    try:
        subprocess.run([sys.executable, "-c", code], timeout=WATCHDOG_S, check=True)
    except subprocess.TimeoutExpired:
        pytest.fail(f"parse_output did not return within {WATCHDOG_S:.0f} s")


def test_the_audit_hook_does_see_execution() -> None:
    """The containment check is live: running code and opening a file are recorded."""
    with contained() as events:
        exec("1 + 1")  # the point of the test
        open(__file__).close()
    assert [event for event, _ in events] == ["exec", "open"]


# -- through the plugin --------------------------------------------------------------------------------------

HOSTILE_ANSWERS = {
    "weather in Paris": "[get_weather(city='Par\ud800is')]",  # a lone surrogate: valid JSON, invalid Unicode
    "Rome for 3 days": "\x1b[2J\x1b]0;owned\x07\x1b[31m[get_weather(city='Rome', days=3)]\r",  # terminal control
    "weather in Oslo": f"[get_weather(city=__import__('os').system('touch {MARKER}'))]",
    "and Quito": "[" * 100_000 + "]" * 100_000,
    "weather in Lima": "[get_weather(city='Li\x00ma')]",
    "book me a flight": "[get_weather(city='x' * 10**10)]",
    "what's the weather": "[get_weather(city=" + "9" * 5_000 + ")]",
}


def test_hostile_answers_are_scored_samples_and_leave_every_artefact_whole(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, live: list[str]
) -> None:
    fake_openai.replies.update(HOSTILE_ANSWERS)
    result = pytester.runpytest(*live, "--tooleval-report=report.json", "--junitxml=junit.xml")
    result.assert_outcomes(failed=MINI_SAMPLES)  # each one a verdict: none errored, none passed
    assert not (pytester.path / MARKER).exists()
    terminal = result.stdout.str()
    assert "\x1b" not in terminal and "\x07" not in terminal and "\r" not in terminal
    assert "output:   \\x1b[2J\\x1b]0;owned\\x07\\x1b[31m[get_weather(city='Rome', days=3)]\\x0d" in terminal
    report = read_report(pytester.path / "report.json")  # strict UTF-8 JSON
    outputs = {s["id"]: s["output"] for s in report["samples"]}
    assert outputs["normal_atom_bool_0"] == "[get_weather(city='Par\ufffdis')]"
    assert outputs["normal_atom_bool_1"] == HOSTILE_ANSWERS["Rome for 3 days"]  # the report keeps it raw
    assert {s["outcome"] for s in report["samples"]} == {"failed"}
    ElementTree.parse(pytester.path / "junit.xml")  # well-formed XML
    rerun = pytester.runpytest(*live, "--tooleval-cache=reuse")  # every answer came back from the cache, none refused
    rerun.assert_outcomes(failed=MINI_SAMPLES)
    assert fake_openai.stats.requests == MINI_SAMPLES


def test_a_replayed_answer_that_is_not_unicode_still_gets_its_report(
    pytester: pytest.Pytester, mini: list[str]
) -> None:
    """Recorded outputs are read as they are: a lone surrogate reaches the report, which must stay writable."""
    answer = "[get_weather(city='Par\ud800is')]"
    (pytester.path / "outputs.jsonl").write_text(json.dumps({"id": "normal_atom_bool_0", "result": answer}) + "\n")
    result = pytester.runpytest(
        *mini,
        "--tooleval-model=replay:outputs.jsonl",
        "-k",
        "normal_atom_bool_0",
        "--tooleval-report=report.json",
        "--junitxml=junit.xml",
    )
    result.assert_outcomes(failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    [sample] = read_report(pytester.path / "report.json")["samples"]
    # scored as it came; kept with the half as U+FFFD, as every text that is stored or sent between processes
    assert (sample["output"], sample["error_type"]) == (answer.replace("\ud800", "\ufffd"), "wrong_output_format")
    ElementTree.parse(pytester.path / "junit.xml")


# -- your own cases' patterns, through the plugin: the case of issue 30 fails with its reason, and the run ends ------

NOTES = """\
tools:
  - name: note
    parameters:
      type: object
      properties:
        text: {type: string}
        tree: {type: array, items: {$ref: "#/properties/tree"}}
  - name: stamp
    parameters:
      type: object
      properties:
        code: {type: string, pattern: "^(a+)+$"}
cases:
  - name: argument
    user: Note the a's.
    expect: {calls: [{name: note, arguments: {text: {regex: "^(a+)+$"}}}]}
  - name: words
    user: Say the a's.
    expect: {no_call: true, regex: "^(a+)+$"}
  - name: schema
    user: Stamp the a's.
    expect: {calls: [{name: stamp, arguments: {code: {contains: "a"}}}]}
  - name: long
    user: Note many a's.
    expect: {calls: [{name: note, arguments: {text: {regex: "^(a+)+$"}}}]}
  - name: deep
    user: Note a deep tree.
    expect: {calls: [{name: note, arguments: {tree: []}}]}
"""
BACKTRACKS = "a" * 40 + " b"  # issue 30: 2**40 steps for Python's re
DEEP_TREE = "[" * 40_000 + "]" * 40_000


def answer_the_notes(body: dict[str, Any]) -> Any:
    """Each case's hostile answer, in the protocol it is asked in (native calls when the request has tools)."""
    asked = body["messages"][-1]["content"]
    native = bool(body.get("tools"))
    calls = {
        "Note the a's.": ("note", {"text": BACKTRACKS}),
        "Stamp the a's.": ("stamp", {"code": BACKTRACKS}),
        "Note many a's.": ("note", {"text": "a" * 90_000 + "!"}),
    }
    if asked in calls:
        name, arguments = calls[asked]
        if native:
            return ToolCalls.of((name, arguments))
        return f"[{name}({', '.join(f'{key}={value!r}' for key, value in arguments.items())})]"
    if asked == "Note a deep tree.":
        return ToolCalls.of(("note", f'{{"tree": {DEEP_TREE}}}')) if native else f"[note(tree={DEEP_TREE})]"
    return BACKTRACKS  # words


RUN_GUARD_S = 120.0  # a hang guard for each run (the fallback spends 2 s on each of four searches), not a bound
NO_RE2 = "import sys\n\nsys.modules['re2'] = None  # as where google-re2 cannot be installed: the fallback runs\n"
SHOWN = repr(BACKTRACKS)
FAILURES = {  # the failure line of the argument, words and schema cases
    "re2": [
        f"*call 1 (note): argument 'text': expected to match /^(a+)+$/ (regex), got {SHOWN}*",
        "*the answer does not match /^(a+)+$/*",
        f"*call 1 (stamp): its arguments violate the tool's schema: 'code': {SHOWN} does not match '^(a+)+$'*",
    ],
    "fallback": [
        "*call 1 (note): argument 'text': regex matcher timed out after 2000 ms*",
        "*the answer: regex matcher timed out after 2000 ms*",
        "*call 1 (stamp): its arguments violate the tool's schema: 'code': regex matcher timed out after 2000 ms*",
    ],
}


# one process under -m slow: the xdist run passes through the same path, and more of it (docs/development.md)
@pytest.mark.parametrize(
    "workers", [pytest.param([], marks=pytest.mark.slow), ["-n", "2"]], ids=["one-process", "xdist"]
)
@pytest.mark.parametrize("mode", ["prompt", "fc"])
@pytest.mark.parametrize("engine", ["re2", "fallback"])
def test_a_backtracking_case_fails_with_its_reason_and_the_run_ends(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    fake_openai: FakeOpenAI,
    engine: str,
    mode: str,
    workers: list[str],
) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "TOOLEVAL_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)
    (pytester.path / "notes.tooleval.yaml").write_text(NOTES, encoding="utf-8")
    if engine == "fallback":
        pytester.makeconftest(NO_RE2)
    fake_openai.responder = answer_the_notes
    try:
        result = pytester.runpytest_subprocess(
            "--tooleval-model=fake-model",
            f"--tooleval-base-url={fake_openai.base_url}",
            "--tooleval-api-key=sk-x",
            f"--tooleval-cache-dir={pytester.path / 'cache'}",
            "-p",
            "no:cacheprovider",
            f"--tooleval-mode={mode}",
            "--tooleval-report=report.json",
            *workers,
            timeout=RUN_GUARD_S,
        )
    except pytester.TimeoutExpired:
        pytest.fail(f"the run did not end within the {RUN_GUARD_S:.0f} s hang guard")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()[-3000:] + result.stderr.str()[-2000:]
    result.assert_outcomes(failed=5)  # a verdict each: none errored, none passed
    result.stdout.fnmatch_lines(FAILURES[engine][:1])
    for line in FAILURES[engine][1:]:
        result.stdout.fnmatch_lines([line])
    samples = {row["test_id"]: row for row in read_report(pytester.path / "report.json")["samples"]}
    assert {test_id: row["outcome"] for test_id, row in samples.items()} == {
        f"notes-{name}": "failed" for name in ("argument", "words", "schema", "long", "deep")
    }
    assert samples["notes-argument"]["details"]["failed"] == ["text: regex"]
    assert samples["notes-words"]["details"]["failed"] == ["answer: regex"]
    assert samples["notes-schema"]["details"]["failed"] == ["schema"]
    assert samples["notes-long"]["details"]["failed"] == ["text: regex"]
