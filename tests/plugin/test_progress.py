"""The live status line: plain periodic lines in a log, redrawn in place on a terminal (a real pty made by
`script`, from util-linux), silent on request; the controller shows it for the whole run under xdist."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

import pytest

from benchmark_modules import benchmark_source
from fake_openai import FakeOpenAI
from mini_acebench import CATEGORIES, RIGHT, write_mini_acebench
from pytest_tooleval.progress import Progress, ProgressLine, render


def test_the_line_says_how_far_the_run_is() -> None:
    line = render(Progress(total=973, answered=412, in_flight=64, resting=3, errors=2, tokens=123456, elapsed_s=12.4))
    assert line == ("tooleval: 412/973 answered, 64 in flight, 3 retrying, 2 errors, 123,456 tokens, 12 s, "
                    "ETA 17 s")
    assert render(Progress(7, 0, 7, 0, 0, 0, 0.2)).endswith(", 0 s")  # no ETA before anything is answered


def test_on_a_terminal_the_bottom_row_is_kept_and_given_back() -> None:
    written: list[str] = []
    states = iter([Progress(4, 4, 0, 0, 0, 40, 0.2)])
    line = ProgressLine(lambda: next(states), written.append, tty=True)
    line.start()
    line._thread.join(timeout=5)
    rows = len(written) and int(written[0].split(";")[1].split("r")[0]) + 1
    assert written[0].endswith(f"\x1b7\x1b[1;{rows - 1}r\x1b8")  # scrolling region above the status row
    assert written[1].startswith(f"\x1b7\x1b[{rows};1H\x1b[2Ktooleval: 4/4 answered, ")
    assert written[-1] == f"\x1b7\x1b[r\x1b[{rows};1H\x1b[2K\x1b8"  # the region reset, the row cleared


def test_in_a_log_it_is_plain_lines_until_everything_is_answered() -> None:
    written: list[str] = []
    states = iter([Progress(4, 1, 2, 0, 0, 10, 0.1), Progress(4, 4, 0, 0, 1, 40, 0.2)])
    line = ProgressLine(lambda: next(states), written.append, tty=False, interval_s=0.01)
    line.start()
    line._thread.join(timeout=5)
    assert written == ["\ntooleval: 1/4 answered, 2 in flight, 0 retrying, 0 errors, 10 tokens, 0 s, ETA 0 s\n",
                       "\ntooleval: 4/4 answered, 0 in flight, 0 retrying, 1 errors, 40 tokens, 0 s\n"]


@pytest.fixture
def live(pytester: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    for name in ("TOOLEVAL_DATA_DIR", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    data = write_mini_acebench(pytester.path / "data")
    pytester.makepyfile(test_acebench=benchmark_source("acebench"))
    fake_openai.replies.update(RIGHT)
    fake_openai.latency_s = 0.3
    return ["--tooleval-model=m", f"--tooleval-base-url={fake_openai.base_url}", "--tooleval-api-key=sk-progress-1",
            f"--tooleval-data-dir={data}", f"--tooleval-categories={CATEGORIES}", "--tooleval-concurrency=1",
            f"--tooleval-cache-dir={pytester.path / 'cache'}", "-p", "no:cacheprovider"]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_a_log_gets_periodic_lines(pytester: pytest.Pytester, live: list[str], workers: list[str]) -> None:
    result = pytester.runpytest_subprocess(*live, *workers, "--tooleval-progress-interval=0.2")
    result.assert_outcomes(passed=7)
    lines = [line for line in result.stdout.lines if line.startswith("tooleval: ") and " answered, " in line]
    assert len(lines) >= 2, result.stdout.str()
    assert all("/7 answered, " in line for line in lines)
    assert "\x1b[" not in result.stdout.str()  # no terminal, no escape sequences


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
    done = subprocess.run(["script", "-qec", command, "/dev/null"], cwd=pytester.path, env=env, capture_output=True,
                          stdin=subprocess.DEVNULL, start_new_session=True, text=True, timeout=120)
    output = done.stdout
    assert done.returncode == 0, output[-2000:]
    assert "\x1b[1;29r" in output  # the bottom row is kept out of the scrolling region ...
    assert "\x1b[30;1H\x1b[2Ktooleval: " in output and "/7 answered, " in output  # ... and redrawn there
    assert output.index("\x1b[r") < output.index("tooleval summary")  # given back before the summary
