"""pytest's terminal summary, linear in the number of failures.

For each failed test, pytest's FAILURES section looks for the test's teardown report by scanning every
passed report of the run (pytest-dev/pytest#13360): with most samples failing, as with a weak model, that is
failures x tests comparisons, which cost a 973-sample run half a second on the controller after the last
answer (benchmarks/perf, `--replies fixed`). The lookup is answered from an index instead; what is printed
does not change.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest


def index_teardown_reports(reporter: Any) -> bool:
    """Give pytest's own terminal reporter an indexed teardown lookup; False where it has none to replace
    (another plugin's reporter, or a pytest that no longer scans)."""
    if type(reporter) is not pytest.TerminalReporter or not callable(getattr(reporter, "_get_teardown_reports", None)):
        return False
    # pytest 9 matches reports by `id`, earlier ones by `nodeid`: the key of whichever this pytest passes
    key = "id" if isinstance(getattr(pytest.TestReport, "id", None), property) else "nodeid"
    index: dict[str, list[Any]] = {}
    indexed = -1  # how many passed reports the index holds: rebuilt if any came since

    def teardown_reports(node_id: str) -> list[Any]:
        nonlocal index, indexed
        count = len(reporter.stats.get("", ()))  # not getreports(""): that copies the list, once per failure
        if count != indexed:
            grouped: defaultdict[str, list[Any]] = defaultdict(list)
            for report in reporter.getreports(""):
                if report.when == "teardown":
                    grouped[getattr(report, key)].append(report)
            index, indexed = dict(grouped), count
        return list(index.get(node_id, ()))

    vars(reporter)["_get_teardown_reports"] = teardown_reports  # this reporter only: it shadows the method
    return True
