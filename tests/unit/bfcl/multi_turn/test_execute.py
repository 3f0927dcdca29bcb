"""The executor (docs/bfcl-multi-turn.md#executing-a-call): the ground truth of all 800 samples, upstream's
quirks, a differential check against bfcl-eval's own executor (digests recorded by record_execute.py), and
hostile call strings that must end as error results with nothing run."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_tooleval.suites.bfcl.multi_turn import execute
from pytest_tooleval.suites.bfcl.multi_turn.apis import api_methods
from pytest_tooleval.suites.bfcl.multi_turn.apis.file_system import Directory
from pytest_tooleval.suites.bfcl.multi_turn.apis.registry import API_CLASSES
from pytest_tooleval.suites.bfcl.multi_turn.execute import Side, denied, instance_variable, rewrite
from pytest_tooleval.suites.bfcl.multi_turn.results import ERROR_PREFIX
from pytest_tooleval.suites.bfcl.multi_turn.sample import MultiTurnSample
from pytest_tooleval.suites.bfcl.multi_turn.tables import Tables

from . import execute_corpus
from .differential import TODAY

RECORDED = Path(__file__).with_name("upstream_execute.json")


def side(samples: dict[str, MultiTurnSample], tables: Tables, sample_id: str, name: str = "") -> Side:
    return Side.create(samples[sample_id], tables, name or f"tooleval_eval_{sample_id}", today=TODAY)


def test_every_ground_truth_call_runs_without_an_error(samples: dict[str, MultiTurnSample], tables: Tables) -> None:
    assert len(samples) == 800
    failures = []
    for sample in samples.values():
        gt_side = Side.create(sample, tables, f"tooleval_ground_truth_eval_{sample.id}", today=TODAY)
        for turn in sample.ground_truth:
            for call, result in zip(turn, gt_side.execute(turn), strict=True):
                if result.startswith(ERROR_PREFIX) or '"error": ' in result[:10]:
                    failures.append((sample.id, call, result))
    assert failures == []  # bfcl-multiturn §1.4: no ground-truth call fails


def test_the_executor_matches_upstreams_on_the_harmless_corpus(
    samples: dict[str, MultiTurnSample], tables: Tables
) -> None:
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))["cases"]
    assert set(recorded) == {key for key, _, _ in execute_corpus.CASES}
    mismatches = []
    for key, sample_id, calls in execute_corpus.CASES:
        ours = side(samples, tables, sample_id)
        results = [ours.execute([call])[0] for call in calls]
        for call, result, expected in zip(calls, results, recorded[key], strict=True):
            if execute_corpus.digest(result) != expected:
                mismatches.append(f"{key}: {call} -> {result} (record_execute.py --show {key})")
    assert mismatches == []


def test_the_variable_name_replaces_upstreams_characters() -> None:
    assert instance_variable("gpt-4o.2024/x:y_eval_multi_turn_base_0", "TicketAPI") == (
        "gpt_4o_2024_x_y_eval_multi_turn_base_0_TicketAPI_instance"
    )


def test_the_rewrite_edits_string_literals_and_drops_whitespace_before_a_bracket() -> None:
    mapping = {"mkdir": "v", "ls": "v"}
    assert rewrite("mkdir(dir_name='x (y)')", mapping) == "v.mkdir(dir_name='x(y)')"
    assert rewrite("mkdir (dir_name='ls(z)')", mapping) == "v.mkdir(dir_name='v.ls(z)')"
    assert rewrite("foo  (x=1)", mapping) == "foo(x=1)"


def test_a_method_name_in_a_string_literal_gets_the_variable_name(
    samples: dict[str, MultiTurnSample], tables: Tables
) -> None:
    probe = side(samples, tables, "multi_turn_base_1", "probe_eval_multi_turn_base_1")
    assert probe.execute(["mkdir(dir_name='ls(z)')", "mkdir(dir_name='a (b)')"]) == ["None", "None"]
    root = probe.state()["GorillaFileSystem"]["root"]
    assert isinstance(root, Directory)
    assert "probe_eval_multi_turn_base_1_GorillaFileSystem_instance.ls(z)" in root.contents
    assert "a(b)" in root.contents


def test_no_two_classes_share_a_method_name(tables: Tables) -> None:
    # upstream's map gives a shared name to the later class, and so does Side.create; today no name is shared
    seen: dict[str, str] = {}
    for class_name, make in API_CLASSES.items():
        for method in api_methods(make(tables)):
            assert method not in seen, (method, seen.get(method), class_name)
            seen[method] = class_name


def test_a_class_named_twice_is_one_instance(samples: dict[str, MultiTurnSample], tables: Tables) -> None:
    # upstream's variable name is the same for both, so the second is the first; ours keeps one instance too
    sample = replace(samples["multi_turn_base_2"], involved_classes=["TicketAPI", "GorillaFileSystem", "TicketAPI"])
    twice = Side.create(sample, tables, "n")
    assert list(twice.instances) == ["TicketAPI", "GorillaFileSystem"]
    [result] = twice.execute(["ticket_get_login_status()"])
    assert not result.startswith(ERROR_PREFIX)


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("exit()", "Function call exit is not allowed."),
        ("kill(pid=1)", "Function call kill is not allowed."),
        ("x.run.y(a=1)", "Function call run is not allowed."),
        ("popen", "Function call popen is not allowed."),
    ],
)
def test_the_deny_list(samples: dict[str, MultiTurnSample], tables: Tables, call: str, expected: str) -> None:
    assert side(samples, tables, "multi_turn_base_1").execute([call]) == [ERROR_PREFIX + expected]


def test_the_deny_list_looks_at_the_segment_after_the_first_dot() -> None:
    assert denied("a.b.run(x)") is None
    assert denied("a.unlink.b(x)") == "unlink"
    assert denied("v.ls(a=1)") is None


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("cd(folder='x'", "'(' was never closed (<string>, line 1)"),
        ("cd(from='x')", "invalid syntax (<string>, line 1)"),
        ("cd(folder='a', folder='b')", "keyword argument repeated: folder (<string>, line 1)"),
        ("cd(folder='a', 'b')", "positional argument follows keyword argument (<string>, line 1)"),
        ("cd(folder=" + "[" * 250 + "]" * 250 + ")", "too many nested parentheses (<string>, line 1)"),
        ("foo(x=1)", "name 'foo' is not defined"),
        ("os.system(command='x')", "name 'os' is not defined"),
        ("cd(folder=nan)", "name 'nan' is not defined"),
        ("cd(folder=document)", "name 'document' is not defined"),
        ("cd()", "GorillaFileSystem.cd() missing 1 required positional argument: 'folder'"),
        ("cd(folder='x', extra=1)", "GorillaFileSystem.cd() got an unexpected keyword argument 'extra'"),
        ("cd('a', 'b')", "GorillaFileSystem.cd() takes 2 positional arguments but 3 were given"),
    ],
)
def test_error_texts(samples: dict[str, MultiTurnSample], tables: Tables, call: str, expected: str) -> None:
    assert side(samples, tables, "multi_turn_base_1").execute([call]) == [ERROR_PREFIX + expected]


def test_positional_arguments_bind_in_signature_order(samples: dict[str, MultiTurnSample], tables: Tables) -> None:
    by_keyword = side(samples, tables, "multi_turn_base_1")
    by_position = side(samples, tables, "multi_turn_base_1")
    assert by_keyword.execute(["cd(folder='document')", "ls(a=True)"]) == by_position.execute(
        ["cd('document')", "ls(True)"]
    )
    assert by_keyword.state() == by_position.state()


def test_nested_calls_run_first_in_order_and_pass_their_values(
    samples: dict[str, MultiTurnSample], tables: Tables
) -> None:
    both = side(samples, tables, "multi_turn_base_15")  # GorillaFileSystem and MathAPI
    assert both.execute(["add(a=mkdir(dir_name='first'), b=mkdir(dir_name='second'))"]) == [
        '{"error": "Both inputs must be numbers"}'  # mkdir returns None, which add refuses
    ]
    root = both.state()["GorillaFileSystem"]["root"]
    assert isinstance(root, Directory)
    assert list(root.contents)[-2:] == ["first", "second"]


def test_a_huge_power_gives_upstreams_text_without_computing_it(
    samples: dict[str, MultiTurnSample], tables: Tables
) -> None:
    math = side(samples, tables, "multi_turn_base_15")
    start = time.monotonic()
    [result] = math.execute(["power(base=3, exponent=10**9)".replace("10**9", str(10**9))])
    assert time.monotonic() - start < 30  # a hang guard: computing it would take minutes
    assert result == ERROR_PREFIX + (
        "Exceeds the limit (4300 digits) for integer string conversion; use sys.set_int_max_str_digits() to "
        "increase the limit"
    )


@pytest.mark.parametrize(
    "call",
    [
        "logarithm(value=10, base=3, precision=10**8)",
        "square_root(number=2, precision=10**9)",
        "logarithm(value=10, base=3, precision=1e9)",
        "round_number(number=5, decimal_places=-10**9)",
        "add(a=0x" + "f" * 20_000 + ", b=1)",
        "add(a=" + "-" * 5000 + "1, b=1)",
        "echo(content='" + "x" * (execute.MAX_CALL_CHARS + 1) + "', file_name='f')",
    ],
)
def test_costly_calls_end_fast_as_errors(samples: dict[str, MultiTurnSample], tables: Tables, call: str) -> None:
    call = call.replace("10**8", str(10**8)).replace("10**9", str(10**9))  # no arithmetic in calls
    math = side(samples, tables, "multi_turn_base_15")
    start = time.monotonic()
    [result] = math.execute([call])
    assert time.monotonic() - start < 30  # a hang guard: upstream runs for minutes
    assert result.startswith(ERROR_PREFIX)


def test_deeply_nested_arguments_are_built(samples: dict[str, MultiTurnSample], tables: Tables) -> None:
    math = side(samples, tables, "multi_turn_base_15")
    deep = "[" * 150 + "1" + "]" * 150  # as deep as the parser lets a call go
    assert math.execute([f"mean(numbers={deep})"]) == ['{"error": "All elements in the list must be numbers"}']


# --- hostile call strings: refused, and the audit hook proves nothing ran ---------------------------------------

_WATCHED = (
    "exec",
    "open",
    "import",
    "os.",
    "subprocess.",
    "socket.",
    "shutil.",
    "builtins.input",
    "breakpoint",
    "object.__getattr__",
    "object.__setattr__",
    "sys._getframe",
    "code.__new__",
    "function.__new__",
    "ctypes",
)
_events: list[str] | None = None


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _events is not None and event.startswith(_WATCHED):
        _events.append(event)


_hooked = False


@contextmanager
def audited() -> Iterator[list[str]]:
    """The watched audit events raised inside the block (the hook stays installed: audit hooks cannot be removed,
    so it records only while a block is open)."""
    global _events, _hooked
    if not _hooked:
        sys.addaudithook(_audit)
        _hooked = True
    _events = []
    try:
        yield _events
    finally:
        _events = None


HOSTILE = [
    "open(file='/tmp/tooleval-hostile', mode='w')",
    "__import__('os').system('true')",
    "exec(source='print(1)')",
    "eval(source='1')",
    "globals()",
    "locals()",
    "input()",
    "breakpoint()",
    "ls.__class__(x=1)",
    "ls(a=True).__class__",
    "ls(a=().__class__.__base__.__subclasses__())",
    "cd(folder=open(file='/tmp/tooleval-hostile', mode='w'))",
    "ls(a=True) if open(file='/tmp/tooleval-hostile') else ls(a",
    "open(file='/tmp/tooleval-hostile', mode='w').close(a=1)",
    "cd(**{'folder': 'x'})",
    "ls(a=True) if open(file='/tmp/tooleval-hostile', mode='w') else ls(a=1)",  # an FC argument key injected
    "cd(folder='x', **{'a': open('/tmp/tooleval-hostile', 'w')})",
    "getattr(tooleval_eval_multi_turn_base_1_GorillaFileSystem_instance, '_current_dir')",
    "ls(a=ls.__globals__)",
    "ls(a=[ls(a=True), __import__('os')])",
    "cd(*['x'])",
    "cd(folder=[*open('/tmp/x')])",
    "cd(folder={**globals()})",
    "cd(folder=lambda: 1)",
    "cd(folder=(x := 1))",
    "cd(folder=[x for x in open('/tmp/x')])",
    "cd(folder=f'{open(1)}')",
    "cd(folder='a'+'b')",
    "import os",
    "()",
    "1",
    "tooleval_eval_multi_turn_base_1_GorillaFileSystem_instance._load_scenario(scenario={})",
    "tooleval_eval_multi_turn_base_1_GorillaFileSystem_instance.load_scenario(scenario={})",
    "tooleval_eval_multi_turn_base_1_GorillaFileSystem_instance.__init__(tables=1)",
    "tooleval_eval_multi_turn_base_1_GorillaFileSystem_instance._current_dir",
    "method()",
    "json.dumps(obj=1)",
    "copy.deepcopy(x=1)",
    "cd(folder=tooleval_eval_multi_turn_base_1_GorillaFileSystem_instance)",
]


@pytest.mark.parametrize("call", HOSTILE)
def test_hostile_calls_end_as_errors_and_run_nothing(
    samples: dict[str, MultiTurnSample], tables: Tables, call: str
) -> None:
    probe = side(samples, tables, "multi_turn_base_1")
    before = repr(probe.state())
    with audited() as events:
        [result] = probe.execute([call])
    assert result.startswith(ERROR_PREFIX), result
    assert events == []
    assert repr(probe.state()) == before
    assert not Path("/tmp/tooleval-hostile").exists()


def test_the_audit_hook_sees_what_it_watches() -> None:
    with audited() as events, open(os.devnull, encoding="utf-8"):
        pass
    assert events == ["open"]
