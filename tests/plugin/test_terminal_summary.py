"""pytest's FAILURES section with the plugin's indexed teardown lookup (report/terminal.py): the same text as
pytest's own scan, each test's teardown output under its own failure."""

from __future__ import annotations

import io

import pytest
from _pytest.terminal import TerminalReporter  # pytest.TerminalReporter only from pytest 8.4 on

from pytest_tooleval.report.terminal import index_teardown_reports

TESTS = """
import pytest

@pytest.fixture
def noisy(request):
    yield
    print(f"teardown of {request.node.name}")

@pytest.mark.parametrize("n", range(4))
def test_fails(noisy, n):
    assert n < 0

@pytest.mark.parametrize("n", range(3))
def test_passes(noisy, n):
    pass
"""


def failures_section(pytester: pytest.Pytester, *args: str) -> list[str]:
    pytester.makepyfile(test_noisy=TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)
    result.assert_outcomes(failed=4, passed=3)
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if "FAILURES" in line)
    end = next(i for i, line in enumerate(lines) if "short test summary info" in line)
    return [line for line in lines[start:end] if not line.startswith("[gw")]


def test_each_failure_keeps_its_own_teardown_output(pytester: pytest.Pytester) -> None:
    section = failures_section(pytester)
    headers = [i for i, line in enumerate(section) if line.startswith("_") and "test_fails[" in line]
    assert len(headers) == 4
    for number, start in enumerate(headers):
        end = headers[number + 1] if number + 1 < len(headers) else len(section)
        block = section[start:end]
        name = block[0].strip("_ ")
        assert sum("Captured stdout teardown" in line for line in block) == 1, block
        assert [line for line in block if line.startswith("teardown of ")] == [f"teardown of {name}"]
    assert not any("test_passes" in line for line in section)  # passed tests' teardown output is not shown


def test_the_section_reads_as_without_the_plugin(pytester: pytest.Pytester) -> None:
    with_index = failures_section(pytester)
    without = failures_section(pytester, "-p", "no:tooleval")
    assert with_index == without


def test_it_reads_the_same_under_xdist(pytester: pytest.Pytester) -> None:
    section = failures_section(pytester, "-n", "2")
    assert sum(line.startswith("teardown of test_fails[") for line in section) == 4


def test_pytests_own_reporter_gets_the_index(pytestconfig: pytest.Config) -> None:
    # fails the day pytest renames what it scans: then report/terminal.py needs a look
    assert index_teardown_reports(TerminalReporter(pytestconfig, io.StringIO())) is True
    assert index_teardown_reports(object()) is False
