"""The two step decoders against bfcl-eval's own, and against hostile steps (docs/bfcl-multi-turn.md#decoding-a-step).

decode_corpus.json holds upstream's answers on harmless steps, recorded by record_decode.py in a scratch venv;
every row must agree. Our own steps are kept as text, the steps built from the data's ground truth (decode_cases.py,
shared with the recorder) as digests only: that test needs the data. Steps upstream would execute are tested here
against ours only, under an audit hook that sees every code object made or run, every import, file opened and
process started.
"""

from __future__ import annotations

import ast
import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest

from pytest_tooleval.json_value import JSONValue
from pytest_tooleval.suites.bfcl.multi_turn.decode import MAX_DEPTH, Undecodable, decode_fc, decode_prompt

from . import decode_cases

CORPUS = Path(__file__).with_name("decode_corpus.json")
DECODERS: dict[str, Callable[[JSONValue], list[str]]] = {"fc": decode_fc, "prompt": decode_prompt}


def decoded(mode: str, raw: JSONValue) -> list[str] | None:
    """Our calls for a step, or None where the step is undecodable (as the corpus records upstream)."""
    try:
        return DECODERS[mode](raw)
    except Undecodable:
        return None


def corpus() -> dict[str, Any]:
    record: dict[str, Any] = json.loads(CORPUS.read_text(encoding="utf-8"))
    return record


@pytest.mark.parametrize("mode", ["fc", "prompt"])
def test_agrees_with_upstream_on_every_recorded_step(mode: str) -> None:
    rows = [row for row in corpus()["rows"] if row["mode"] == mode]
    assert len(rows) >= {"fc": 80, "prompt": 600}[mode]  # hand-written steps (and, for text, seeded arithmetic)
    assert any(row["calls"] is None for row in rows) and any(row["calls"] == [] for row in rows)
    mismatches = [
        f"{row['raw']!r:.200}: upstream {row['calls']!r:.200}, ours {ours!r:.200}"
        for row in rows
        if (ours := decoded(mode, row["raw"])) != row["calls"]
    ]
    assert mismatches == []


def test_agrees_with_upstream_on_every_ground_truth_turn(bfcl_dir: Path) -> None:
    # built from the data here and in the recorder alike; the corpus keeps only upstream's digests
    recorded = corpus()["ground_truth"]
    assert decode_cases.total_digest(recorded["rows"]) == recorded["digest"], "decode_corpus.json is damaged"
    cases = decode_cases.ground_truth_cases(bfcl_dir)
    assert len(cases) == recorded["count"] > 1000
    assert [case.key for case in cases] == list(recorded["rows"]), (
        "the steps differ from the recorded ones: rerun record_decode.py"
    )
    ours = {case.key: decode_cases.case_digest(case.mode, case.raw, decoded(case.mode, case.raw)) for case in cases}
    mismatches = [
        f"{case.key}: ours {ours[case.key][:12]} (calls {decoded(case.mode, case.raw)!r:.200}), "
        f"upstream {recorded['rows'][case.key][:12]}; raw {case.raw!r:.300}"
        for case in cases
        if ours[case.key] != recorded["rows"][case.key]
    ]
    assert not mismatches, (
        f"{len(mismatches)} of {len(cases)} ground-truth steps differ (a changed decode_cases.py needs "
        "record_decode.py rerun):\n" + "\n".join(mismatches[:10])
    )
    assert decode_cases.total_digest(ours) == recorded["digest"]


@pytest.mark.parametrize(
    ("raw", "calls"),
    [
        ("[cd(folder='document'), mkdir(dir_name='temp')]", ["cd(folder='document')", "mkdir(dir_name='temp')"]),
        ("[sort('final_report.pdf')]", ["sort()"]),  # D1
        ("[tail(file_name='a', lines=+20)]", ["tail(file_name='a', lines=-20)"]),  # D2
        ("[f(x=not True, y=~5)]", ["f(x=-1, y=-5)"]),  # D2
        ("[f(x=2*3, y='a'+'b')]", ["f(x=6, y='ab')"]),  # D3
        ("[cd(folder=document)]", ["cd(folder='document')"]),  # D4
        ("[f(tags=('#a',))]", ["f(tags=('#a',))"]),  # D5
        ("[f(x={'a': {'b': 1}})]", ["f(x=a(b=1))"]),  # D9
        ("[f(x={1: 'x', \"it's\": 2})]", ["f(x={'1': 'x', 'it's': 2})"]),
        ("[f(x=pwd(), y=g(z=1), w=a[1, 2])]", ["f(x='pwd()', y=g(z=1), w='a[(1, 2)]')"]),
        ("[f(x=..., y=b'x', z=1j)]", ["f(x='...', y=b'x', z=1j)"]),
        ("```\n[f(x=1)]\n```", ["f(x=1)"]),
        ("", []),
    ],
)
def test_prompting_quirks(raw: str, calls: list[str]) -> None:
    assert decode_prompt(raw) == calls


@pytest.mark.parametrize(
    ("raw", "calls"),
    [
        (
            [{"cd": '{"folder": "document"}'}, {"mkdir": '{"dir_name": "temp"}'}],
            ["cd(folder='document')", "mkdir(dir_name='temp')"],
        ),
        ([{"f": '{"a": NaN, "b": Infinity, "c": 1e400}'}], ["f(a=nan,b=inf,c=inf)"]),  # D6
        ([{"tail": '{"lines": 20.0}'}], ["tail(lines=20.0)"]),  # D7
        ([{"f": '{"from": 1}'}], ["f(from=1)"]),  # D11: a SyntaxError when it runs
        ([{"f": '{"a": 1, "b": 2, "a": 3}'}], ["f(a=3,b=2)"]),
        ({"f": {"a": [1, None, True]}}, ["f(a=[1, None, True])"]),
        ([], []),
        ("", []),
    ],
)
def test_function_calling_quirks(raw: JSONValue, calls: list[str]) -> None:
    assert decode_fc(raw) == calls


@pytest.mark.parametrize(
    "raw",
    ["[f(x={})]", "[f(x={'k': {}, 'j': 1})]", "[f(x=1/0)]", "[f(x=-'a')]", "[f(x=a.b)]", "[f(1)][0]", "Sure: [f()]"],
)
def test_prompting_undecodable(raw: str) -> None:
    with pytest.raises(Undecodable):
        decode_prompt(raw)


@pytest.mark.parametrize("raw", [None, "x", [1], [{"f": "[1]"}], [{"f": "{bad"}], [{"f": "{}"}, "g"], 3])
def test_function_calling_undecodable(raw: JSONValue) -> None:
    with pytest.raises(Undecodable):
        decode_fc(raw)


# Deviation D8-decoder: upstream evaluates these (harmless here); ours refuses what is not arithmetic on literals
@pytest.mark.parametrize("raw", ["[f(x=y*1)]", "[f(x='%s' % 'b')]", "[f(x=f'a'+'b')]", "[f(x=(1 < 2)+1)]"])
def test_arithmetic_beyond_literals_is_undecodable(raw: str) -> None:
    with pytest.raises(Undecodable):
        decode_prompt(raw)


HOSTILE = [
    "[f(x=__import__('os').system('echo pwned')*1)]",
    "[f(x=[open(file='decode-probe', mode='w')] * 1)]",
    "[f(x=eval('1')+1)]",
    "[f(x=exec('import os')+1)]",
    "[f(x=compile('1', 'f', 'eval')+1)]",
    "[f(x=().__class__.__base__.__subclasses__()+[])]",
    "[f(x=__builtins__.open+1)]",
    "[f(x=globals()['os']+1)]",
    "[f(x=input()*1)]",
    "[f(x=breakpoint()+1)]",
    "[f(x=help()+1)]",
    "[f(x=license()+0)]",
    "[f(x='a'.__class__+1)]",
    "[f(x=[c for c in ().__class__.__mro__]+[1])]",
    "[f(x=1 if __import__('os') else 2)]",
    '[f(x=f\'{__import__("os").system("x")}\')]',
    "[f(x=json.loads('1')+1)]",
    "[f(x=builtins.exec+1)]",
    "[f(x=-__import__('os').getpid())]",
    "[f(x=(lambda: __import__('os').system('x'))())]",
    "[f(x=lambda: __import__('os'))]",
    "[f(x={__import__('os'): 1})]",
    "[f(x=__import__('os').system(y=1))]",
    "[__import__('os').system(command='echo pwned')]",
    "[f(x=[__import__('os')][0])]",
    "[f(x=10**10**10)]",
    "[f(x=9**9**9)]",
    "[f(x=2**10**6)]",
    "[f(x=1<<10**9)]",
    "[f(x='a'*10**9)]",
    "[f(x=10**9*'a')]",
    "[f(x=[[0]*10**6]*10**6)]",
    "[f(x=[1]*10**5*10**5)]",
    "[f(x=(10**5000)//1)]",
    "[f(x=" + "+".join(["[0]*400000"] * 10) + ")]",
    "[f(x=" + "*".join(["10**90000"] * 50) + ")]",
    "[f(x=" + "1+" * 100_000 + "1)]",
    "[f(x=" + "+".join(["1"] * (MAX_DEPTH + 50)) + ")]",
    "[f(x=" + "[" * 100_000 + "]" * 100_000 + ")]",
    "[f(x=" + "-" * 100_000 + "1)]",
    "[f(x=" + "a." * 100_000 + "b)]",
]


PARSE_CODE = ast.parse.__code__


class Audit:
    """Every audit event while armed; installed once per process (a hook cannot be removed)."""

    events: list[tuple[str, str]] | None = None
    installed = False

    @classmethod
    def hook(cls, event: str, args: tuple[object, ...]) -> None:
        events = cls.events
        if events is None:
            return
        cls.events = None  # the check below raises events of its own (sys._getframe, object.__getattr__)
        try:
            if event == "compile" and sys._getframe(1).f_code is PARSE_CODE:
                event = "compile:ast-only"  # ast.parse passes PyCF_ONLY_AST: a tree, never a code object
        finally:
            cls.events = events
        events.append((event, repr(args)[:200]))

    @classmethod
    @contextmanager
    def watch(cls) -> Iterator[list[tuple[str, str]]]:
        if not cls.installed:
            sys.addaudithook(cls.hook)
            cls.installed = True
        events: list[tuple[str, str]] = []
        cls.events = events
        try:
            yield events
        finally:
            cls.events = None


def test_the_audit_hook_sees_evaluation_and_imports() -> None:
    with Audit.watch() as events:
        eval("1 + 1")  # the test's own text: what upstream's decoder does with a model's
        with suppress(ImportError):
            __import__("pytest_tooleval_no_such_module")
    assert {"compile", "exec", "import"} <= {event for event, _ in events}


def test_hostile_steps_run_nothing_and_end_quickly() -> None:
    outcomes: dict[str, list[str] | None] = {}
    start = time.monotonic()
    with Audit.watch() as events:
        for raw in HOSTILE:
            outcomes[raw] = decoded("prompt", raw)
    elapsed = time.monotonic() - start
    assert {event for event, _ in events} == {"compile:ast-only"}, events[:5]  # parsed, and nothing more
    assert all(calls is None or all(isinstance(call, str) for call in calls) for calls in outcomes.values())
    # a call as a value is only its text, never run; everything with arithmetic on non-literals is refused
    assert outcomes["[f(x=(lambda: __import__('os').system('x'))())]"] == [
        "f(x=\"(lambda: __import__('os').system('x'))()\")"
    ]
    assert outcomes["[__import__('os').system(command='echo pwned')]"] == ["system(command='echo pwned')"]
    assert [
        raw for raw, calls in outcomes.items() if "*" in raw or "+" in raw or "<<" in raw if calls is not None
    ] == []
    assert elapsed < 60  # each refused before the work: seconds in all, where upstream would hang


def test_hostile_function_calling_steps_are_text_only() -> None:
    # the function-calling decoder pastes names and keys raw (docs/bfcl-multi-turn.md#decoding-a-step,
    # D11): text, which the executor must refuse
    steps: list[JSONValue] = [
        [{"open(file='x', mode='w').close": "{}"}],
        [{"ls": json.dumps({"a=True) if open('x') else ls(a": 1})}],
        [{"f": "[" * 100_000 + "]" * 100_000}],
        [{"f": '{"a": 1' + "0" * 100_000 + "}"}],
    ]
    with Audit.watch() as events:
        outcomes = [decoded("fc", step) for step in steps]
    assert events == []
    assert outcomes == [["open(file='x', mode='w').close()"], ["ls(a=True) if open('x') else ls(a=1)"], None, None]


def test_deep_values_end_as_undecodable_not_recursion_error() -> None:
    deep: JSONValue = []
    for _ in range(100_000):
        deep = [deep]
    assert decoded("fc", {"f": {"a": deep}}) is None
    assert decoded("prompt", "[f(x=" + "[" * 100_000 + "]" * 100_000 + ")]") is None
    assert decoded("prompt", "[f(x=" + "[" * 150 + "]" * 150 + ")]") == ["f(x=" + "[" * 150 + "]" * 150 + ")"]


def test_a_ten_megabyte_string_is_decoded() -> None:
    text = "a" * 10_000_000
    assert decode_prompt(f"[f(x='{text}')]") == [f"f(x='{text}')"]
    assert decode_fc([{"f": json.dumps({"x": text})}]) == [f"f(x='{text}')"]
