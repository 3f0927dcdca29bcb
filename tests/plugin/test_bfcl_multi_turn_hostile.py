"""Hostile multi-turn answers through a whole run (docs/bfcl-multi-turn.md#hostile-answers-in-a-run): a local model
answers with builtins, dunders, injected names and keys, huge and deep arguments, in both protocols; the run, under
xdist and without, ends every sample as a verdict, and an audit hook in each of its processes sees nothing run.

The hook lives in a conftest.py written into the pytester folder, so that the controller (which, with xdist, plays
the samples through the hub), the workers (which score them) and a single process all install it before any sample
is asked. It logs every process started (but an xdist worker), and every file opened and code object compiled or
run whose text holds the marker each hostile answer carries; `ast.parse`, which only builds a tree, is the one
compile let through. The control is in the same run: the conftest itself evaluates, opens and starts a process
with a second marker in every process, and the hook must have logged those.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import pytest

from fake_openai import FakeOpenAI, ToolCalls

KEY = "sk-test-0123456789abcdef"
# in every hostile answer (a name where a string cannot go), and in the sentinel's name
MARKER = "tooleval_hostile_9f27c1"
CONTROL = "tooleval_audit_control_5b80e4"  # in what the run's conftest does itself, to show the hook sees it
SAMPLES = ["multi_turn_base_0", "multi_turn_miss_func_0", "multi_turn_miss_param_0", "multi_turn_long_context_1"]
STEPS_PER_TURN = 8  # then the model ends the turn, so that every hostile step is asked within a sample's turns
HUGE = 10**6
# the hang guard of each inner run: pytester kills it past this and the test fails (a thread-based guard, as
# tests/hang_guard.py's, could not stop the child process); a run takes 10 to 50 s on two loaded cores
RUN_TIMEOUT_S = 120
# bfcl's own error types of a model's wrong answer (not inference_error, nor our execution budget's)
BFCL_ERROR_TYPES = {
    "multi_turn:force_terminated",
    "multi_turn:empty_turn_model_response",
    "multi_turn:instance_state_mismatch",
    "multi_turn:execution_response_mismatch",
}

AUDIT_CONFTEST = '''
"""The audit hook of the hostile-answer run (written by tests/plugin/test_bfcl_multi_turn_hostile.py)."""
import ast
import os
import subprocess
import sys

MARKER, CONTROL = {marker!r}, {control!r}
_LOGS = {{MARKER: open({log!r}, "a", encoding="utf-8"),  # opened before the hook: writing raises no event
         CONTROL: open({control_log!r}, "a", encoding="utf-8")}}
_PARSE = ast.parse.__code__
_UNAME = ("uname", ["uname", "-p"], None, None)  # platform.processor(), which the openai client's headers ask
_STARTS = ("os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "pty.spawn",
           "ctypes.", "subprocess.Popen")
_WATCHED = ("compile", "exec", "open", "os.listdir", "os.scandir", "os.chdir", "shutil.copyfile",
            "pickle.find_class", "builtins.input", "import")


def _marked(value, marker, depth=0):
    if isinstance(value, bytes):
        return marker.encode() in value
    if isinstance(value, str):
        return marker in value
    if isinstance(value, os.PathLike):
        return marker in os.fspath(value)
    if isinstance(value, ast.AST):
        return marker in ast.dump(value)
    if hasattr(value, "co_consts") and depth < 20:  # a code object: its names and constants, nested code too
        return marker in " ".join(value.co_names) or any(_marked(item, marker, depth + 1)
                                                         for item in value.co_consts)
    if isinstance(value, (tuple, list, frozenset)):
        return any(_marked(item, marker, depth + 1) for item in value)
    return False


def _xdist_worker_start(event, args):
    # the one process a run starts: an xdist worker, by execnet's popen gateway and its bootstrap line
    argv = args[1] if len(args) > 1 else None
    return (event == "subprocess.Popen" and isinstance(argv, (list, tuple))
            and list(argv[-2:]) == ["-c", "import sys;exec(eval(sys.stdin.readline()))"])


def _hook(event, args):
    if event == "compile" and sys._getframe(1).f_code is _PARSE:
        return  # ast.parse: a tree, never a code object (the decoders and the executor parse model text)
    if event.startswith(_STARTS):
        if args != _UNAME and not _xdist_worker_start(event, args):  # any other start is logged
            _record(CONTROL if _marked(args, CONTROL) else MARKER, event, args)
    elif event in _WATCHED:
        for marker in (MARKER, CONTROL):
            if _marked(args, marker):
                _record(marker, event, args)


def _record(marker, event, args):
    _LOGS[marker].write(f"{{os.getpid()}} {{event}} {{repr(args)[:300]!r}}\\n")
    _LOGS[marker].flush()


sys.addaudithook(_hook)
# the control: what the hook must see, done by this file (never by a model) in every process of the run
eval(CONTROL + " if False else 0", {{CONTROL: 0}})
open(os.path.join({folder!r}, CONTROL), "w").close()
subprocess.run([sys.executable, "-c", "# " + CONTROL], check=True)
'''


def fc_steps(sentinel: str) -> list[ToolCalls | str]:
    """Function-calling answers: builtins and dunders as names, code in names and keys, huge and deep values."""
    touch = f"__import__('os').system('touch {sentinel}')"
    deep = "[" * 10**4 + "]" * 10**4
    return [
        ToolCalls.of(("__import__", {"name": "os", "m": MARKER})),
        ToolCalls.of(("eval", {"source": f"open('{sentinel}', 'w')"})),
        ToolCalls.of(("exec", {"source": touch})),
        ToolCalls.of(("open", {"file": Path(sentinel).name, "mode": "w"})),  # relative: the run's folder
        ToolCalls.of(("getattr", {"o": "__builtins__", "name": "open", "m": MARKER})),
        ToolCalls.of(("globals", {"m": MARKER}), ("locals", {"m": MARKER})),
        ToolCalls.of(("__class__", {"m": MARKER}), (f"ls.__class__.__base__.{MARKER}", {})),
        ToolCalls.of((f"cd(folder='x'); {touch}; ls", {"a": True})),
        ToolCalls.of((f"ls\n{touch}", {})),
        ToolCalls.of((f"cd(folder='\")'{MARKER}", {"folder": "'\"\\"})),
        ToolCalls.of(("cd", {"a=1, b": MARKER}), ("cd", {"**kw": MARKER})),
        ToolCalls.of(("ls", {f"a=True) if open('{sentinel}', 'w') else ls(a": 1})),
        ToolCalls.of(("cd", {f"folder='x', **{{'a': open('{sentinel}', 'w')}}, b": 1})),
        ToolCalls.of(("cd", {"folder": "10**10**10", "m": MARKER})),
        ToolCalls.of(("cd", f'{{"folder": 10**10**10, "m": "{MARKER}"}}')),  # not JSON
        ToolCalls.of(("cd", f'{{"folder": {deep}, "m": "{MARKER}"}}')),  # JSON past the parser's depth
        ToolCalls.of(("cd", f'{{"folder": 1{"0" * 10**5}, "m": "{MARKER}"}}')),  # past the int-to-text limit
        ToolCalls.of(*[("pwd", {"m": MARKER})] * 500),
        ToolCalls.of(("cd", {"folder": "a" * HUGE, "m": MARKER})),
        ToolCalls.of((MARKER + "x" * HUGE, {"folder": "b" * HUGE})),
    ]


def prompt_steps(sentinel: str) -> list[ToolCalls | str]:
    """Prompt-mode answers: the same, as Python text, with the expressions bfcl's decoder would `eval`."""
    touch = f"__import__('os').system('touch {sentinel}')"
    return [
        f"[{touch}]",
        f"[cd(folder=open('{sentinel}', 'w'))]",
        f"[cd(folder=().__class__.__base__.__subclasses__(), m='{MARKER}')]",
        f"[f(x=().__class__.__base__, m='{MARKER}')]",
        f"[cd(folder='a'*10**9, m='{MARKER}')]",
        f"[cd(folder=10**10**10, m='{MARKER}')]",
        f"[cd(folder=(lambda: {touch})())]",
        f"[cd(folder=lambda: {touch})]",
        f"[cd(folder=[open('{sentinel}', 'w') for _ in 'x'])]",
        f"[cd(folder=(x := open('{sentinel}', 'w')))]",
        f'[cd(folder=f\'{{open("{sentinel}", "w")}}\')]',
        f"[eval(source=\"open('{sentinel}', 'w')\")]",
        f'[exec(source="{touch}")]',
        f"[getattr(o=__builtins__, name='open')(file='{sentinel}', mode='w')]",
        f"[globals()['__builtins__'].open('{sentinel}', 'w')]",
        f"[cd(folder='x'); {touch}]",
        f"[cd(folder='x')]\n{touch}",
        f"[cd(folder='x', **{{'a': open('{sentinel}', 'w')}})]",
        f"[cd(folder={'[' * 10**4}{']' * 10**4}, m='{MARKER}')]",
        "[" + ", ".join([f"pwd(m='{MARKER}')"] * 500) + "]",
        f"[cd(folder='{'a' * HUGE}', m='{MARKER}')]",
        f"[{MARKER}{'x' * HUGE}(folder=1)]",
    ]


class HostileModel:
    """The fake model: each step of a conversation is the next hostile answer of its protocol not yet given (the
    conversations share one list per protocol, so that every answer is asked once whatever the order of the
    samples), a turn ended after STEPS_PER_TURN steps (an empty answer), and only empty answers once the lists
    are spent. The fake server calls it under a lock."""

    def __init__(self, sentinel: str) -> None:
        self.steps = {"fc": fc_steps(sentinel), "prompt": prompt_steps(sentinel)}
        self.given = {"fc": 0, "prompt": 0}

    def __call__(self, body: dict[str, Any]) -> ToolCalls | str:
        protocol = "fc" if body.get("tools") else "prompt"
        in_turn = 0
        for message in reversed(body["messages"]):
            if message["role"] == "user" and not str(message.get("content")).startswith("[{'role': 'tool'"):
                break
            in_turn += message["role"] == "assistant"
        script, given = self.steps[protocol], self.given[protocol]
        if in_turn >= STEPS_PER_TURN or given >= len(script):
            return ""
        self.given[protocol] += 1
        return script[given]

    def spent(self) -> bool:
        return all(self.given[protocol] == len(steps) for protocol, steps in self.steps.items())


@pytest.fixture
def hostile_dir(pytester: pytest.Pytester, bfcl_args: list[str]) -> tuple[pytest.Pytester, list[str]]:
    pytester.makeconftest(
        AUDIT_CONFTEST.format(
            marker=MARKER,
            control=CONTROL,
            log=str(pytester.path / "audit.log"),
            control_log=str(pytester.path / "control.log"),
            folder=str(pytester.path),
        )
    )
    return pytester, bfcl_args


def audit_log(pytester: pytest.Pytester, name: str = "audit.log") -> list[str]:
    log = pytester.path / name
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


@pytest.mark.parametrize("workers", ["2", "0"])
def test_hostile_answers_end_as_verdicts_with_nothing_run(
    hostile_dir: tuple[pytest.Pytester, list[str]], fake_openai: FakeOpenAI, workers: str
) -> None:
    pytester, args = hostile_dir
    sentinel = pytester.path / f"{MARKER}-sentinel"
    model = HostileModel(str(sentinel))
    fake_openai.responder = model
    ids = [f"test_bfcl.py::test_bfcl[{sample}{variant}]" for sample in SAMPLES for variant in ("", "-fc")]
    result = pytester.runpytest_subprocess(
        *ids,
        "--tooleval-bfcl-categories",
        ",".join(sample.rsplit("_", 1)[0] for sample in SAMPLES),
        "--tooleval-mode",
        "both",
        "--tooleval-model",
        "fake-model",
        "--tooleval-base-url",
        fake_openai.base_url,
        "--tooleval-api-key",
        KEY,
        "--tooleval-report",
        "report.json",
        "--junitxml",
        "junit.xml",
        "-n",
        workers,
        "-q",
        *args,
        timeout=RUN_TIMEOUT_S,
    )
    # the control: the hook ran in every process of the run (the controller and two workers, or the one) and
    # logged what the conftest itself evaluated, opened and started; then nothing a model wrote did any of that
    control = [line.split(" ", 2)[:2] for line in audit_log(pytester, "control.log")]
    assert len({pid for pid, _ in control}) == (3 if workers == "2" else 1), control
    for pid in {pid for pid, _ in control}:
        assert {event for logged, event in control if logged == pid} >= {"compile", "exec", "open", "subprocess.Popen"}
    assert audit_log(pytester) == []
    assert not sentinel.exists()
    assert result.ret == 1, result.stdout.str()[-3000:]
    result.assert_outcomes(failed=len(ids))
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert fake_openai.stats.errors == []
    assert model.spent()  # every hostile answer was asked

    report = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
    rows = report["samples"]
    assert sorted(row["test_id"] for row in rows) == sorted(test_id.split("[")[1][:-1] for test_id in ids)
    assert {row["outcome"] for row in rows} == {"failed"}
    assert {row["error_type"] for row in rows} <= BFCL_ERROR_TYPES
    assert longest_text(report) < HUGE // 10
    junit = ElementTree.parse(pytester.path / "junit.xml").getroot()
    assert len(junit.findall(".//testcase/failure")) == len(ids)
    shown = {prop.get("value") for prop in junit.iter("property") if prop.get("name") == "tooleval.error_type"}
    assert shown == {row["error_type"] for row in rows}
    texts = [text for element in junit.iter() for text in [element.text or "", *element.attrib.values()]]
    assert max(len(text) for text in texts) < HUGE // 10


def longest_text(value: Any) -> int:
    """The longest string anywhere in a parsed JSON value, keys included."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return max([0, *(max(len(key), longest_text(item)) for key, item in value.items())])
    if isinstance(value, list):
        return max([0, *(longest_text(item) for item in value)])
    return 0
