"""One sample's scoring is bounded (--tooleval-score-timeout, run/deadline.py): a scorer that never ends, even
one that swallows every Exception, or a pattern that backtracks for ever, ends as a failing verdict naming the
limit; the run goes on, in one process and under xdist, and an outer SIGALRM deadline is kept."""

from __future__ import annotations

import json
import os
import re
import signal
import threading
import time

import pytest

from pytest_tooleval.run import deadline
from toy_suite.install import install_toy_suite

SLOW_TEST = """
import pytest


@pytest.mark.tooleval("slowscore")
def test_slowscore(tooleval_case):
    tooleval_case.check()
"""
LIMIT_LINE = "scoring stopped at the 1 s limit (--tooleval-score-timeout): counted as wrong"


@pytest.fixture
def slow(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    site = install_toy_suite(pytester.path / "site", "slowscore")
    pytester.syspathinsert(site)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, (str(site), os.environ.get("PYTHONPATH")))))
    pytester.makepyfile(test_slow=SLOW_TEST)
    return [
        f"--tooleval-cache-dir={pytester.path / 'cache'}",
        "-p",
        "no:cacheprovider",
        "--tooleval-model=oracle",
        "--tooleval-score-timeout=1",
        "--tooleval-report=report.json",
    ]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_scoring_that_never_ends_is_a_verdict_naming_the_limit(
    pytester: pytest.Pytester, slow: list[str], workers: list[str]
) -> None:
    started = time.monotonic()
    result = pytester.runpytest_subprocess(*slow, *workers, timeout=120)
    result.assert_outcomes(passed=1, failed=2)
    for kind in ("spin", "backtrack"):
        result.stdout.fnmatch_lines(
            [f"slowscore slow_{kind}: scoring_time_limit (scorer: official)", f"  error:    {LIMIT_LINE}"],
            consecutive=True,
        )
    result.stdout.fnmatch_lines(
        ["slowscore: 3/3 scored, 1 passed, 2 failed (2 of them past the scoring time limit), 0 errors"]
    )
    rows = {row["id"]: row for row in json.loads((pytester.path / "report.json").read_text())["samples"]}
    assert {key: (row["outcome"], row.get("error_type")) for key, row in rows.items()} == {
        "slow_quick": ("passed", ""),
        "slow_spin": ("failed", "scoring_time_limit"),
        "slow_backtrack": ("failed", "scoring_time_limit"),
    }
    assert time.monotonic() - started < 100  # the two slow samples took about a second each, not for ever


def test_no_limit_is_the_option_at_0(pytester: pytest.Pytester, slow: list[str]) -> None:
    result = pytester.runpytest_subprocess(*slow, "--tooleval-score-timeout=0", "-k", "quick", timeout=60)
    result.assert_outcomes(passed=1, deselected=2)
    assert re.search(r"score-timeout=0\.0 \(cli\)", result.stdout.str())


def test_the_deadline_puts_back_an_outer_alarm_and_its_handler() -> None:
    fired: list[int] = []

    def outer(signum: int, frame: object) -> None:
        fired.append(signum)

    previous = signal.signal(signal.SIGALRM, outer)
    try:
        signal.setitimer(signal.ITIMER_REAL, 5.0)
        assert deadline.within(2.0, lambda: 41 + 1) == 42
        assert signal.getsignal(signal.SIGALRM) is outer
        remaining, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 4.0 < remaining <= 5.0  # still the outer deadline, less what scoring took
        with pytest.raises(deadline.ScoringTimeLimit, match=r"longer than 0\.2 s"):
            deadline.within(0.2, lambda: time.sleep(30))
        assert signal.getsignal(signal.SIGALRM) is outer
        assert 3.0 < signal.getitimer(signal.ITIMER_REAL)[0] <= 5.0
        signal.setitimer(signal.ITIMER_REAL, 0.1)  # an outer deadline due first is left to fire
        deadline.within(2.0, lambda: time.sleep(0.5))
        assert fired == [signal.SIGALRM]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, previous)


def test_outside_the_main_thread_scoring_runs_unbounded() -> None:
    outcome: list[object] = []

    def slow() -> str:
        time.sleep(0.2)
        return "done"

    def work() -> None:
        assert not deadline.bounded()
        outcome.append(deadline.within(0.05, slow))

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(30)
    assert outcome == ["done"]
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
