"""A run ended by a signal (issue 26, point 5): SIGTERM, which is how a CI time limit ends a job, and SIGINT (Ctrl-C)
end the run as pytest's Ctrl-C does (exit status 2), with the summary and the reports of what finished, marked
interrupted and listing the samples not run; a second signal stops the process at once.

Real pytest processes against the fake server over HTTP. Each signal is sent on an observable event (tests the
controller has received, requests the server has seen), never after a wall-clock wait; the waits below are hang
guards only.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from fake_openai import FakeOpenAI, Fault, last_user_message
from mini_acebench import RIGHT, SAMPLES, live_mini_run
from pytest_tooleval.hooks.controller import SECOND_SIGNAL_AFTER_S
from pytest_tooleval.report.merge import GateOptions, merge

HANG_GUARD_S = 60.0
BLOCKED = "what's the weather"  # the last test collected: its answer never comes before the signal
BLOCKED_TEST = "en-special_incomplete_0"

# in the pytester folder: the controller (never a worker) notes each test it has received, and where it begins to
# finish the session; HANG_AT_FINISH holds it there, as a slow report writer would
CONFTEST = """
import os
import time
from pathlib import Path


def pytest_runtest_logreport(report):
    if report.when == "teardown" and "PYTEST_XDIST_WORKER" not in os.environ:
        with open("received.log", "a") as log:
            log.write(report.nodeid + "\\n")


def pytest_sessionfinish(session):
    if "PYTEST_XDIST_WORKER" not in os.environ and os.environ.get("HANG_AT_FINISH"):
        Path("finishing").write_text("")
        time.sleep(60)
"""


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    for name in ("TOOLEVAL_DATA_DIR", "OPENAI_API_KEY", "HANG_AT_FINISH"):
        monkeypatch.delenv(name, raising=False)

    def respond(body: dict[str, Any]) -> str | Fault:
        question = last_user_message(body)
        if BLOCKED in question:
            return Fault.delay(HANG_GUARD_S)  # ended early when the fake stops
        return next((reply for needle, reply in RIGHT.items() if needle in question), "no idea")

    with FakeOpenAI(responder=respond, latency_s=0.2) as fake:
        yield fake


class Run:
    """`python -m pytest` in the pytester folder, in a session of its own (its xdist workers with it)."""

    def __init__(self, pytester: pytest.Pytester, args: list[str], env: dict[str, str] | None = None) -> None:
        pytester.makeconftest(CONFTEST)
        self.folder = pytester.path
        self.output = self.folder / "output.txt"
        # (this test may run in an xdist worker: its variables would make the run's controller look like one)
        inherited = {name: value for name, value in os.environ.items() if not name.startswith("PYTEST_XDIST_")}
        with self.output.open("wb") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "pytest", *args],
                cwd=self.folder,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env={**inherited, **(env or {})},
            )

    def received(self) -> int:
        log = self.folder / "received.log"
        return len(log.read_text().splitlines()) if log.exists() else 0

    def wait_for(self, event: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + HANG_GUARD_S
        while not event():
            assert self.process.poll() is None, f"the run ended before {what}:\n{self.text()[-3000:]}"
            assert time.monotonic() < deadline, f"no {what} within {HANG_GUARD_S:.0f} s:\n{self.text()[-3000:]}"
            time.sleep(0.02)

    def signal(self, signum: int) -> None:
        os.kill(self.process.pid, signum)  # the controller only, as a CI runner's time limit does

    def wait(self) -> int:
        try:
            return self.process.wait(HANG_GUARD_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the run did not end within {HANG_GUARD_S:.0f} s of the signal:\n{self.text()[-3000:]}")

    def text(self) -> str:
        return self.output.read_text(errors="replace")

    def close(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        else:  # workers a hard stop left behind end on their own; none may outlive the test
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)


@pytest.fixture
def runs() -> Iterator[list[Run]]:
    started: list[Run] = []
    yield started
    for run in started:
        run.close()


@pytest.mark.parametrize(
    ("workers", "signum"),
    [([], signal.SIGTERM), (["-n", "2"], signal.SIGTERM), ([], signal.SIGINT)],
    ids=["sigterm", "sigterm-xdist", "sigint"],
)
def test_a_signal_mid_run_leaves_reports_that_say_interrupted(
    pytester: pytest.Pytester, server: FakeOpenAI, runs: list[Run], workers: list[str], signum: int
) -> None:
    args = live_mini_run(pytester, server.base_url, "fake-model", "sk-interrupt-0123456789")
    run = Run(
        pytester,
        [
            *args,
            "--tooleval-concurrency=1",
            "--tooleval-markdown=summary.md",
            "--tooleval-fail-under=overall=0.0",
            *workers,
        ],
    )
    runs.append(run)
    run.wait_for(lambda: run.received() >= 2, "two tests received by the controller")
    run.signal(signum)
    assert run.wait() == pytest.ExitCode.INTERRUPTED, run.text()[-3000:]

    name = signal.Signals(signum).name
    report = json.loads((pytester.path / "report.json").read_text())
    assert report["run"]["interrupted"] is True and report["run"]["signal"] == name
    finished = {row["test_id"] for row in report["samples"]}
    not_run = set(report["run"]["not_run"])
    assert len(finished) >= 2 and BLOCKED_TEST in not_run  # what finished is in, what did not is listed
    assert not finished & not_run and len(finished | not_run) == SAMPLES == report["run"]["collected"]
    assert report["gate"]["passed"] is False and report["gate"]["incomplete"].startswith(
        f"the run was interrupted ({name}): {len(not_run)} of the {SAMPLES} samples it collected did not run"
    )
    text = run.text()
    assert f"tooleval summary (interrupted by {name})" in text
    assert (
        f"tooleval: the run was interrupted ({name}): {len(not_run)} of the {SAMPLES} samples it collected "
        "did not run; the figures are of those that finished" in text
    )
    assert "tooleval gate: FAILED" in text and "tooleval gate: INCOMPLETE: the run was interrupted" in text
    assert f"**Interrupted** ({name}): {len(not_run)} collected samples" in (pytester.path / "summary.md").read_text()
    # a merge of the report (a shard's, say) reads it as incomplete, and names why
    merged = merge([str(pytester.path / "report.json")], GateOptions({}, 0.0, {}, 0.05))
    assert merged.incomplete is not None and f"report.json was interrupted ({name})" in merged.incomplete


def test_a_signal_before_any_test_finished_still_reports(
    pytester: pytest.Pytester, server: FakeOpenAI, runs: list[Run]
) -> None:
    server.responder = lambda body: Fault.delay(HANG_GUARD_S)  # no answer comes: the first test waits
    run = Run(
        pytester,
        [
            *live_mini_run(pytester, server.base_url, "fake-model", "sk-interrupt-0123456789"),
            "--tooleval-concurrency=1",
        ],
    )
    runs.append(run)
    run.wait_for(lambda: server.stats.requests >= 1, "a sample's request")  # (the tests' runs do not probe)
    run.signal(signal.SIGTERM)
    assert run.wait() == pytest.ExitCode.INTERRUPTED, run.text()[-3000:]
    report = json.loads((pytester.path / "report.json").read_text())
    assert report["run"]["interrupted"] is True and report["samples"] == []
    assert len(report["run"]["not_run"]) == SAMPLES == report["run"]["collected"]
    assert (
        f"tooleval: the run was interrupted (SIGTERM): {SAMPLES} of the {SAMPLES} samples it collected did "
        "not run" in run.text()
    )


def test_a_second_signal_stops_at_once(pytester: pytest.Pytester, server: FakeOpenAI, runs: list[Run]) -> None:
    args = live_mini_run(pytester, server.base_url, "fake-model", "sk-interrupt-0123456789")
    run = Run(pytester, [*args, "--tooleval-concurrency=1", "-n", "2"], env={"HANG_AT_FINISH": "1"})
    runs.append(run)
    run.wait_for(lambda: run.received() >= 1, "a test received by the controller")
    run.signal(signal.SIGTERM)
    first = time.monotonic()
    run.wait_for(lambda: (pytester.path / "finishing").exists(), "the session's end (held there)")
    time.sleep(max(0.0, SECOND_SIGNAL_AFTER_S + 0.2 - (time.monotonic() - first)))  # a second one, not an echo
    run.signal(signal.SIGINT)
    assert run.wait() == 128 + signal.SIGINT  # not the minute the session's end would have taken
    assert "tooleval: SIGINT again: stopped at once, nothing more written" in run.text()


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_one_kill_sent_twice_at_once_ends_the_run_with_its_reports(
    pytester: pytest.Pytester, server: FakeOpenAI, runs: list[Run], workers: list[str]
) -> None:
    """GNU timeout, and CI runners, send their one kill to the process and to its group: it arrives twice within
    moments. That is one request to stop: exit status 2 and every report, never the second signal's hard stop."""
    args = live_mini_run(pytester, server.base_url, "fake-model", "sk-interrupt-0123456789")
    run = Run(pytester, [*args, "--tooleval-concurrency=1", "--tooleval-markdown=summary.md", *workers])
    runs.append(run)
    run.wait_for(lambda: run.received() >= 2, "two tests received by the controller")
    run.signal(signal.SIGTERM)
    time.sleep(0.1)  # apart enough for the handler to have run for the first (two at once would be merged)
    run.signal(signal.SIGTERM)
    assert run.wait() == pytest.ExitCode.INTERRUPTED, run.text()[-3000:]
    report = json.loads((pytester.path / "report.json").read_text())
    assert report["run"]["interrupted"] is True and len(report["samples"]) >= 2
    assert (pytester.path / "summary.md").exists()
    assert "stopped at once" not in run.text() and "Traceback" not in run.text()
