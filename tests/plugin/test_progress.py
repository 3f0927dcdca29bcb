"""The live status line: plain periodic lines in a log, redrawn in place on a terminal (a real pty made by
`script`, from util-linux), silent on request; the controller shows it for the whole run under xdist."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

import pytest

from benchmark_modules import benchmark_source
from fake_openai import FakeOpenAI
from mini_acebench import CATEGORIES, RIGHT, UNVERIFIED, write_mini_acebench
from pytest_tooleval.answers.progress import Progress, render
from pytest_tooleval.hooks.progress import ProgressLine


def test_the_line_says_how_far_the_run_is() -> None:
    line = render(
        Progress(
            total=973,
            answered=412,
            in_flight=64,
            resting=3,
            errors=2,
            tokens=123456,
            elapsed_s=12.4,
            live=412,
            live_s=12.4,
        )
    )
    assert line == ("tooleval: 412/973 answered, 64 in flight, 3 retrying, 2 errors, 123,456 tokens, 12 s, ETA 17 s")
    assert render(Progress(7, 0, 7, 0, 0, 0, 0.2)).endswith(", 0 s")  # no ETA before anything is answered


def test_the_line_counts_requests_on_the_wire_timeouts_and_the_limit() -> None:
    """Samples in progress may each wait for a request slot: the line counts what is at the server."""
    line = render(
        Progress(
            total=38,
            answered=14,
            in_flight=12,
            resting=1,
            errors=0,
            tokens=900,
            elapsed_s=500,
            requests=3,
            timeouts=2,
            limit=3,
            limit_reason="requests timed out",
        )
    )
    assert line.startswith(
        "tooleval: 14/38 answered, 3 requests in flight (limit 3: requests timed out), "
        "1 retrying, 2 timed out, 0 errors, "
    )
    calm = render(Progress(4, 1, 4, 0, 0, 10, 1.0, requests=1, limit=8))
    assert "1 request in flight (limit 8), 0 retrying, 0 errors" in calm  # no timeouts: not mentioned


def test_the_eta_is_paced_by_answers_the_endpoint_gave_not_by_cached_ones() -> None:
    """50 answers came from the cache at once, 10 from the endpoint in 20 s: 40 left take 80 s, not 13 s."""
    progress = Progress(
        total=100, answered=60, in_flight=8, resting=0, errors=0, tokens=0, elapsed_s=20.0, live=10, live_s=20.0
    )
    assert progress.eta_s == pytest.approx(80.0)
    assert Progress(100, 60, 8, 0, 0, 0, 1.0, live=0).eta_s is None  # only cached answers yet: no pace to go by


def test_on_a_terminal_the_bottom_row_is_kept_and_given_back() -> None:
    written: list[str] = []
    states = iter([Progress(4, 4, 0, 0, 0, 40, 0.2)])
    line = ProgressLine(lambda: next(states), written.append, tty=True)
    line.start()
    line._thread.join(timeout=60)  # a hang guard: it ends after its first redraw, half a second in
    assert not line._thread.is_alive()
    rows = len(written) and int(written[0].split(";")[1].split("r")[0]) + 1
    assert written[0].endswith(f"\x1b7\x1b[1;{rows - 1}r\x1b8")  # scrolling region above the status row
    assert written[1].startswith(f"\x1b7\x1b[{rows};1H\x1b[2Ktooleval: 4/4 answered, ")
    assert written[-1] == f"\x1b7\x1b[r\x1b[{rows};1H\x1b[2K\x1b8"  # the region reset, the row cleared


@pytest.mark.parametrize("rows", ["1", "2"])
def test_a_terminal_of_fewer_than_three_rows_gets_no_status_line(monkeypatch: pytest.MonkeyPatch, rows: str) -> None:
    """LINES=1 made the scrolling region ESC[1;0r, which terminals read as the whole screen or reject."""
    monkeypatch.setenv("LINES", rows)
    written: list[str] = []
    states = iter([Progress(4, 4, 0, 0, 0, 40, 0.2)])
    line = ProgressLine(lambda: next(states), written.append, tty=True)
    line.start()
    line._thread.join(timeout=60)  # a hang guard
    assert not line._thread.is_alive()
    line.stop()
    assert written == []


def test_in_a_log_it_is_plain_lines_until_everything_is_answered() -> None:
    written: list[str] = []
    states = iter([Progress(4, 1, 2, 0, 0, 10, 0.1, live=1, live_s=0.1), Progress(4, 4, 0, 0, 1, 40, 0.2)])
    line = ProgressLine(lambda: next(states), written.append, tty=False, interval_s=0.01)
    line.start()
    line._thread.join(timeout=60)  # a hang guard: it ends once everything is answered, two lines in
    assert not line._thread.is_alive()
    assert written == [
        "tooleval: 1/4 answered, 2 in flight, 0 retrying, 0 errors, 10 tokens, 0 s, ETA 0 s\n",
        "tooleval: 4/4 answered, 0 in flight, 0 retrying, 1 error, 40 tokens, 0 s\n",
    ]


def test_in_a_log_a_line_due_inside_a_row_of_dots_waits_for_the_row_to_end() -> None:
    written: list[str] = []
    row = {"state": "open"}
    states = iter(
        [Progress(4, 1, 2, 0, 0, 10, 0.1), Progress(4, 2, 2, 0, 0, 20, 0.2), Progress(4, 4, 0, 0, 0, 40, 0.3)]
    )
    line = ProgressLine(
        lambda: next(states), written.append, tty=False, interval_s=0.01, row_state=lambda finished: row["state"]
    )
    line.start()
    line._thread.join(timeout=30)  # a hang guard: the three lines take three 10 ms waits
    assert written == []  # every line fell due inside the row: none was written into it
    line.row_ended()
    assert written == []  # a test finished, the row goes on
    row["state"] = "empty"  # the row ended with its "[ 42%]" and a newline
    line.row_ended()
    assert written == ["tooleval: 4/4 answered, 0 in flight, 0 retrying, 0 errors, 40 tokens, 0 s\n"]  # the newest
    row["state"] = "complete"  # a -v line ends, its newline not written yet: the status line goes under it
    line._show("tooleval: again")
    assert written[-1] == "\ntooleval: again"  # pytest's own pending newline ends it: no blank line after it


@pytest.fixture
def live(pytester: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    for name in ("TOOLEVAL_DATA_DIR", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    data = write_mini_acebench(pytester.path / "data")
    pytester.makepyfile(test_acebench=benchmark_source("acebench"))
    fake_openai.replies.update(RIGHT)
    fake_openai.latency_s = 0.3
    return [
        "--tooleval-model=m",
        f"--tooleval-base-url={fake_openai.base_url}",
        "--tooleval-api-key=sk-progress-1",
        f"--tooleval-data-dir={data}",
        UNVERIFIED,
        f"--tooleval-categories={CATEGORIES}",
        "--tooleval-concurrency=1",
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
        "-p",
        "no:cacheprovider",
    ]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_a_log_gets_periodic_lines(pytester: pytest.Pytester, live: list[str], workers: list[str]) -> None:
    # -v: a line per test, so lines fall due between rows (seven dots are one row, which gets the newest line)
    result = pytester.runpytest_subprocess(*live, *workers, "-v", "--tooleval-progress-interval=0.2")
    result.assert_outcomes(passed=7)
    lines = [line for line in result.stdout.lines if line.startswith("tooleval: ") and " answered, " in line]
    assert len(lines) >= 2, result.stdout.str()
    assert all("/7 answered, " in line for line in lines)
    assert "\x1b[" not in result.stdout.str()  # no terminal, no escape sequences


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
@pytest.mark.parametrize("verbosity", [[], ["-v"]], ids=["dots", "verbose"])
def test_in_a_log_the_line_never_splits_pytests_rows(
    pytester: pytest.Pytester, live: list[str], workers: list[str], verbosity: list[str]
) -> None:
    """The seven samples take two seconds at one at a time: lines fall due every 0.2 s, inside the row of dots."""
    result = pytester.runpytest_subprocess(*live, *workers, *verbosity, "--tooleval-progress-interval=0.2")
    result.assert_outcomes(passed=7)
    lines = result.stdout.lines[
        : result.stdout.lines.index(next(line for line in result.stdout.lines if "tooleval summary" in line))
    ]
    status = [index for index, line in enumerate(lines) if " answered, " in line]
    assert status, result.stdout.str()
    for index in status:
        assert lines[index].startswith("tooleval: "), lines[index]  # a line of its own, not the end of a row
        # and no blank line after it, but the one pytest writes itself before its closing "=== 7 passed ==="
        after = lines[index + 1 : index + 3]
        assert after[0].strip() or after[1].startswith("="), result.stdout.str()
    if not verbosity:
        # the row of seven results is whole: its file name (without xdist), seven dots, its end
        rows = [line for line in lines if re.fullmatch(r"(test_acebench\.py )?\.+ *\[100%\]", line)]
        assert len(rows) == 1 and rows[0].count(".") - (".py" in rows[0]) == 7, result.stdout.str()
    else:
        passed = [line for line in lines if "PASSED" in line]
        assert len(passed) == 7 and all(" answered, " not in line for line in passed)


@pytest.mark.parametrize("silence", [["-q", "-q"], ["--tooleval-no-progress"]])
def test_it_can_be_silenced(pytester: pytest.Pytester, live: list[str], silence: list[str]) -> None:
    result = pytester.runpytest_subprocess(*live, *silence, "--tooleval-progress-interval=0.2")
    assert result.ret == pytest.ExitCode.OK
    assert " answered, " not in result.stdout.str()


def test_on_a_terminal_it_is_redrawn_in_place_on_the_bottom_row(pytester: pytest.Pytester, live: list[str]) -> None:
    command = shlex.join([sys.executable, "-m", "pytest", *live])
    env = {**os.environ, "COLUMNS": "120", "LINES": "30", "TERM": "xterm"}
    # script gets a session of its own and no stdin: it would read its stdin and take its session's terminal,
    # and an xdist worker's stdin is its channel to the controller
    done = subprocess.run(
        ["script", "-qec", command, "/dev/null"],
        cwd=pytester.path,
        env=env,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        text=True,
        timeout=120,
    )
    output = done.stdout
    assert done.returncode == 0, output[-2000:]
    assert "\x1b[1;29r" in output  # the bottom row is kept out of the scrolling region ...
    assert "\x1b[30;1H\x1b[2Ktooleval: " in output and "/7 answered, " in output  # ... and redrawn there
    assert output.index("\x1b[r") < output.index("tooleval summary")  # given back before the summary
