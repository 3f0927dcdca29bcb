"""The README's exit-status table, held to real runs (issue 41: it said a dead endpoint ends a run with 2, but the
endpoint probe, on by default, ends it with 4). The table is read from README.md; every row must have a run
below, and every run of a row must end with the row's status: a row added, changed or left wrong fails here.

Real pytest processes over the tests' mini ACEBench tree, against the fake server over HTTP. A signal is sent on
an observable event (a request the server has seen), never after a wall-clock wait; the waits are hang guards.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fake_openai import FakeOpenAI, Fault, last_user_message
from mini_acebench import RIGHT, live_mini_run

README = Path(__file__).resolve().parents[2] / "README.md"
HEADER = "| exit status | when |"
HANG_GUARD_S = 60.0
BLOCKED = "what's the weather"  # the mini tree's last sample: its answer never comes before the signal


def documented() -> list[tuple[int, str]]:
    """(status, when) of each row of the README's exit-status table."""
    lines = [line.strip() for line in README.read_text(encoding="utf-8").splitlines()]
    start = lines.index(HEADER)
    rows = []
    for line in lines[start + 2 :]:  # after the header and its |---| line
        if not line.startswith("|"):
            break
        status, when = (cell.strip() for cell in line.strip("|").split("|", 1))
        rows.append((int(status), when))
    return rows


ROWS = documented()


def closed_port() -> int:
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def answers_then(fault: Fault, answered: int) -> Callable[[dict[str, Any]], Any]:
    """A responder: the right answers to the first `answered` requests, then `fault` for every one."""
    lock, count = threading.Lock(), [0]

    def respond(body: dict[str, Any]) -> Any:
        with lock:
            count[0] += 1
            if count[0] > answered:
                return fault
        question = last_user_message(body)
        return next((reply for needle, reply in RIGHT.items() if needle in question), "no idea")

    return respond


class Runs:
    """What a row's runs need: the pytester folder with the mini tree, and a fake server per run."""

    def __init__(self, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
        self.pytester, self.monkeypatch = pytester, monkeypatch
        self.servers: list[FakeOpenAI] = []
        self.processes: list[subprocess.Popen[bytes]] = []
        self._args = live_mini_run(pytester, "BASE_URL", "fake-model", "sk-exit-status-0123456789")

    def server(self, **options: Any) -> FakeOpenAI:
        server = FakeOpenAI(**options).start()
        self.servers.append(server)
        return server

    def args(self, base_url: str) -> list[str]:
        return [arg.replace("BASE_URL", base_url) for arg in self._args]

    def run(self, base_url: str, *args: str, probe: bool = False, saying: str = "") -> int:
        """One run to its end, `python -m pytest` in a process of its own; its exit status. `saying`: what its
        output must hold, so that the run ended for the row's reason."""
        if probe:  # the tests' runs do not probe (tests/conftest.py); the default does
            self.monkeypatch.delenv("TOOLEVAL_NO_PROBE", raising=False)
        else:
            self.monkeypatch.setenv("TOOLEVAL_NO_PROBE", "1")
        result = self.pytester.runpytest_subprocess(*self.args(base_url), *args, timeout=HANG_GUARD_S * 2)
        assert saying in result.stdout.str() + result.stderr.str(), (saying, result.stdout.str()[-2000:])
        return int(result.ret)

    def close(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        for server in self.servers:
            server.stop()


@pytest.fixture
def runs(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Iterator[Runs]:
    for name in ("TOOLEVAL_DATA_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    made = Runs(pytester, monkeypatch)
    yield made
    made.close()


# --- one function per row: the exit statuses of the runs that show it ------------------------------------------


def every_test_passed(runs: Runs) -> list[int]:
    return [runs.run(runs.server(replies=RIGHT).base_url)]


def one_answer_wrong(runs: Runs) -> str:
    replies = dict(RIGHT)
    replies.pop("weather in Paris")  # normal_atom_bool_0 answered "" : a wrong answer
    return runs.server(replies=replies).base_url


def a_gate_met_despite_failures(runs: Runs) -> list[int]:
    return [runs.run(one_answer_wrong(runs), "--tooleval-fail-under=overall=0.5")]


def a_test_failed(runs: Runs) -> list[int]:
    return [runs.run(one_answer_wrong(runs))]


def a_threshold_missed(runs: Runs) -> list[int]:
    return [runs.run(one_answer_wrong(runs), "--tooleval-fail-under=overall=0.99")]


def right_but_blocked(body: dict[str, Any]) -> Any:
    """The right answers, but for the last sample's: it never comes before the signal (the fake ends it)."""
    question = last_user_message(body)
    if BLOCKED in question:
        return Fault.delay(HANG_GUARD_S)
    return next((reply for needle, reply in RIGHT.items() if needle in question), "no idea")


def a_signal(runs: Runs) -> list[int]:
    """SIGTERM, then SIGINT (Ctrl-C), each once a request is on the wire; the report of what finished is written."""
    codes = []
    for signum in (signal.SIGTERM, signal.SIGINT):
        server = runs.server(responder=right_but_blocked)
        report = runs.pytester.path / f"report-{signum.name}.json"
        output = runs.pytester.path / f"output-{signum.name}.txt"
        env = {name: value for name, value in os.environ.items() if not name.startswith("PYTEST_XDIST_")}
        with output.open("wb") as sink:
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "pytest",
                    *runs.args(server.base_url),
                    "--tooleval-concurrency=1",
                    f"--tooleval-report={report}",
                ],
                cwd=runs.pytester.path,
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env={**env, "TOOLEVAL_NO_PROBE": "1"},
            )
        runs.processes.append(process)
        deadline = time.monotonic() + HANG_GUARD_S
        while server.stats.requests < 2 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert process.poll() is None, "the run ended before its requests were sent"
        os.kill(process.pid, signum)
        codes.append(process.wait(HANG_GUARD_S))
        assert json.loads(report.read_text())["run"]["interrupted"] is True
        # a run that ended otherwise than the row says shows why (a traceback, pytest's last lines)
        assert codes[-1] == 2, (signum.name, codes[-1], output.read_text(errors="replace")[-3000:])
    return codes


def quota_ran_out(runs: Runs) -> list[int]:
    server = runs.server(responder=answers_then(Fault.insufficient_quota(), 2))
    return [runs.run(server.base_url, "--tooleval-concurrency=1", saying="refused a request (HTTP 429")]


def stopped_answering(runs: Runs) -> list[int]:
    """Two answers, then every connection reset: more failures in a row than the breaker allows an endpoint that
    had answered (the mini tree's 7 samples, each tried 3 times)."""
    server = runs.server(responder=answers_then(Fault.reset(), 2))
    return [
        runs.run(server.base_url, "--tooleval-concurrency=1", "--tooleval-max-retries=2", saying="stopped answering")
    ]


def dead_without_the_probe(runs: Runs) -> list[int]:
    return [runs.run(f"http://127.0.0.1:{closed_port()}/v1", "--tooleval-no-probe", saying="none was answered")]


def the_probe_failed(runs: Runs) -> list[int]:
    wrong_model = runs.server(default=Fault.http(404, message="The model `fake-model` does not exist."))
    no_quota = runs.server(default=Fault.insufficient_quota())
    failed = "ERROR: tooleval: the endpoint probe failed for the model role"
    return [
        runs.run(f"http://127.0.0.1:{closed_port()}/v1", probe=True, saying=failed),
        runs.run(wrong_model.base_url, probe=True, saying=failed),
        runs.run(no_quota.base_url, probe=True, saying=failed),
    ]


def bad_input(runs: Runs) -> list[int]:
    server = runs.server(replies=RIGHT)
    codes = [
        runs.run(server.base_url, "--tooleval-scorer=lenient", saying="ERROR: --tooleval-scorer"),
        runs.run(server.base_url, "--tooleval-fail-under=acebench.overal=0.5", saying="ERROR: --tooleval-fail-under"),
        runs.run(
            server.base_url, f"--tooleval-data-dir={runs.pytester.path / 'nowhere'}", saying="no ACEBench data there"
        ),
        runs.run(server.base_url, "-k", "normal and", saying="Wrong expression passed to '-k'"),
    ]
    # a broken case file beside the benchmark: its samples were asked all the same before (pytest calls
    # pytest_collection_finish, where answers start, after a usage error in the collection too)
    (runs.pytester.path / "mine.tooleval.yaml").write_text("cases: [{name: a, user: hi, expect: {colls: []}}]\n")
    codes.append(runs.run(server.base_url, saying="mine.tooleval.yaml:1: "))
    assert server.stats.requests == 0  # nothing was asked
    return codes


SCENARIOS: dict[str, Callable[[Runs], list[int]]] = {
    "every test passed": every_test_passed,
    "a gate's thresholds were all met, even though samples failed": a_gate_met_despite_failures,
    "a test failed: a wrong answer fails its test": a_test_failed,
    "a gate's threshold was missed": a_threshold_missed,
    "Ctrl-C or SIGTERM stopped the run (the reports of what finished are written)": a_signal,
    "an account ran out of quota mid-run": quota_ran_out,
    "an endpoint that had answered stopped answering": stopped_answering,
    "an endpoint dead from the start, under `--tooleval-no-probe`": dead_without_the_probe,
    (
        "the endpoint probe failed: an endpoint dead from the start, a wrong model name or key, no quota (one line)"
    ): the_probe_failed,
    "a bad option value, data file or case file, or a gate figure no suite of the run has (one line)": bad_input,
}


def test_every_row_of_the_table_has_its_runs() -> None:
    assert ROWS, f"no exit-status table ({HEADER}) in {README}"
    assert [when for _, when in ROWS] == list(SCENARIOS)
    assert {status for status, _ in ROWS} == {0, 1, 2, 4}


@pytest.mark.parametrize(("status", "when"), ROWS, ids=[f"{status}-{when[:40]}" for status, when in ROWS])
def test_each_row_is_what_a_real_run_ends_with(runs: Runs, status: int, when: str) -> None:
    scenario = SCENARIOS.get(when)
    assert scenario is not None, f"no run for the README's row {status} | {when}"
    codes = scenario(runs)
    assert codes and codes == [status] * len(codes), (when, codes)
