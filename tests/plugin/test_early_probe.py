"""The endpoint probe leaves before the tests are collected, for the suites marked on the test modules, and comes
back while they are (run/session.py `probe_early`, docs/concurrency.md#the-probe-during-collection): no sample is
asked before its outcome, a wrong guess is probed again after collection, and what the guess met stops nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fake_openai import FakeOpenAI, last_user_message
from mini_acebench import RIGHT, SAMPLES, answer_in_calls, live_mini_run
from pytest_tooleval.models.factory import PROBE_PROMPT, PROBE_TOOL_PROMPT
from yaml_cases import TOOL_FILE

# the asking process's collection (alone, or the xdist controller's own) waits, at most a minute, until the probe
# has reached the endpoint, and writes down whether it had: a probe sent after collection never has
WAIT_FOR_THE_PROBE = """
import os, time
from pathlib import Path

def pytest_generate_tests(metafunc):
    if hasattr(metafunc.config, "workerinput") or "tooleval_case" not in metafunc.fixturenames:
        return
    probed = Path(os.environ["PROBED_MARKER"])
    deadline = time.monotonic() + 60
    while not probed.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    Path("probed-during-collection").write_text(str(probed.exists()).lower())
"""

# a file of your own cases that pytest is told to leave out (--ignore), found from its arguments all the same: the
# guess has the YAML suite in the run, whose requests with tools have no system message; the collection has ACEBench
# alone, whose requests have one
IGNORED_CASES = TOOL_FILE.format(system="")


def is_probe(body: dict[str, Any]) -> bool:
    return last_user_message(body) in (PROBE_PROMPT, PROBE_TOOL_PROMPT)


def answer_in_words(body: dict[str, Any]) -> str:
    last = last_user_message(body)
    if is_probe(body):
        return "ok"
    return next((answer for needle, answer in RIGHT.items() if needle in last), "no idea")


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_the_probe_is_answered_while_the_tests_are_collected(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: list[str]
) -> None:
    marker = pytester.path / "probed"

    def respond(body: dict[str, Any]) -> str:
        if is_probe(body):
            marker.touch()
        return answer_in_words(body)

    for name in ("TOOLEVAL_DATA_DIR", "OPENAI_API_KEY", "TOOLEVAL_NO_PROBE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PROBED_MARKER", str(marker))
    pytester.makeconftest(WAIT_FOR_THE_PROBE)
    with FakeOpenAI(responder=respond) as server:
        args = live_mini_run(pytester, server.base_url, "fake-model", "sk-early-0123456789")
        result = pytester.runpytest_subprocess(*args, *workers, timeout=300)
    result.assert_outcomes(passed=SAMPLES)
    assert (pytester.path / "probed-during-collection").read_text() == "true"
    bodies = [body for body in server.stats.bodies if body]
    assert is_probe(bodies[0]) and not any(is_probe(body) for body in bodies[1:])  # first, and once
    assert server.stats.requests == SAMPLES + 1


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_a_wrong_guess_is_probed_again_after_collection_and_what_it_met_stops_nothing(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: list[str]
) -> None:
    """fc mode against a server that renders tools only into a system message: the guess's probe (the YAML file's
    shape, no system message) finds the tools never reach the model, which would stop the run; the collection has
    ACEBench alone, whose requests have one, so the probe is asked again in that shape, passes, and the run goes
    on."""
    marker = pytester.path / "probed"

    def respond(body: dict[str, Any]) -> Any:
        if is_probe(body) and "tools" not in body and body["messages"][0]["role"] == "user":
            marker.touch()  # the guess's twin: the guess's probe has been answered
        return answer_in_calls(body)

    for name in ("TOOLEVAL_DATA_DIR", "OPENAI_API_KEY", "TOOLEVAL_NO_PROBE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PROBED_MARKER", str(marker))
    pytester.makeconftest(WAIT_FOR_THE_PROBE)  # (else the guess's requests may be cancelled before they leave)
    (pytester.path / "ignored").mkdir()
    (pytester.path / "ignored" / "desk.tooleval.yaml").write_text(IGNORED_CASES, encoding="utf-8")
    with FakeOpenAI(responder=respond, tools_need_system=True) as server:
        args = live_mini_run(pytester, server.base_url, "fake-model", "sk-early-0123456789")
        result = pytester.runpytest_subprocess(*args, *workers, "--tooleval-mode=fc", "--ignore=ignored", timeout=300)
    result.assert_outcomes(passed=SAMPLES)
    assert (pytester.path / "probed-during-collection").read_text() == "true"
    assert "the endpoint probe" not in result.stdout.str() and "stopped the run" not in result.stdout.str()
    bodies = [body for body in server.stats.bodies if body]
    guessed, guessed_twin, probe, twin = bodies[:4]
    assert guessed["tools"] and [message["role"] for message in guessed["messages"]] == ["user"]
    assert "tools" not in guessed_twin and guessed_twin["messages"] == guessed["messages"]
    assert probe["tools"] and [message["role"] for message in probe["messages"]] == ["system", "user"]
    assert "tools" not in twin and twin["messages"] == probe["messages"]
    assert not any(is_probe(body) for body in bodies[4:])
    assert server.stats.requests == SAMPLES + 4
    # the guess's requests are the run's too
    report: dict[str, Any] = json.loads(Path(pytester.path / "report.json").read_text())
    assert report["totals"]["requests"] == SAMPLES + 4
