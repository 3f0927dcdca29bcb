"""Runs of pytest that the plugin should refuse at start: the one line it says, and a hang guard around them."""

from __future__ import annotations

import re

import pytest

GUARD_S = 120.0  # a hang guard for each pytest run, never a bound a test asserts


def run_guarded(pytester: pytest.Pytester, *args: str, why: str = "") -> pytest.RunResult:
    """`pytest *args` in a subprocess, failing the test (`why` says what may have hung) past the hang guard."""
    try:
        return pytester.runpytest_subprocess(*args, timeout=GUARD_S)
    except pytester.TimeoutExpired:
        pytest.fail(f"the run did not end within the {GUARD_S:.0f} s hang guard{f' ({why})' if why else ''}")


def refused_line(result: pytest.RunResult) -> str:
    """The one error line of a run refused at start: exit status 4, no test run, no traceback."""
    output = result.stdout.str()[-3000:] + result.stderr.str()[-3000:]
    assert result.ret == pytest.ExitCode.USAGE_ERROR, output
    # before any test ran (under xdist, before any worker started: pytest prints no summary line then)
    assert not re.search(r"\d+ (passed|failed|errors?)\b", result.stdout.str()), output
    lines = [line for line in result.stderr.lines if line.strip()]
    assert len(lines) == 1, output
    assert "Traceback" not in output and "INTERNALERROR" not in output
    return lines[0]
