"""The terminal: the tooleval summary at the end of a run, and pytest's own summary kept linear in the failures.

`show_run` writes what the controller gathered (`RunShown`) after pytest's closing line, so the tail of a CI log
shows it. For each failed test, pytest's FAILURES section looks for the test's teardown report by scanning every
passed report of the run (pytest-dev/pytest#13360): with most samples failing, as with a weak model, that is
failures x tests comparisons, which cost a 973-sample run half a second on the controller after the last
answer (perf/run.py, `--replies fixed`). The lookup is answered from an index instead; what is printed
does not change.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence, Sized
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from ..json_value import JSONObject, JSONValue
from ..text import THINK_START, counted, did_you_mean
from .row import whole

if TYPE_CHECKING:
    from _pytest.terminal import TerminalReporter

    from .compare import Comparison
    from .gate import GateResult
    from .summary import RunSummary

THINK_HINT_SHARE = 0.1  # answers beginning with a think block, from which the summary names the strip option


def index_teardown_reports(reporter: object) -> bool:
    """Give pytest's own terminal reporter an indexed teardown lookup; False where it has none to replace
    (another plugin's reporter, or a pytest that no longer scans)."""
    from _pytest.terminal import TerminalReporter  # pytest.TerminalReporter only from pytest 8.4 on: the same class

    if type(reporter) is not TerminalReporter or not callable(getattr(reporter, "_get_teardown_reports", None)):
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


@dataclass(frozen=True)
class RunShown:
    """What the tooleval summary shows, as the controller has it at the end of the run."""

    hints: Sequence[str]  # what suites say about a -m that could not select some of their samples
    active: bool  # a model was given
    not_evaluated: Mapping[str, int]  # tests skipped for want of a model, by kind
    stopped: str | None  # why a dead endpoint stopped the run
    summary: RunSummary | None
    totals: JSONObject
    rows: Sequence[JSONObject]  # the rows of every figure
    interrupted: str | None  # the signal that ended the run
    quarantine: Mapping[str, str]  # --tooleval-quarantine: test id -> why
    quarantined: Sequence[Mapping[str, JSONValue]]  # the rows of quarantined samples that ran
    batch: str | None  # what --tooleval-batch did, in one line
    incomplete: Sequence[str]  # why the run is incomplete: its batch, its cost ceiling, then a signal
    comparison: Comparison | None
    storage: Sequence[str]  # what the cache and the board failed to keep
    reasoning: str  # --tooleval-reasoning
    tools_system: str  # --tooleval-tools-system
    adaptations: Mapping[str, Mapping[str, str]]  # sampling parameters the endpoints refused
    gate: GateResult | None
    report_errors: Sequence[str]
    written: Sequence[str]  # the report files written


def show_run(reporter: TerminalReporter, shown: RunShown) -> None:
    """The tooleval summary: the table, the totals, what kept the run from being whole, the comparison with a
    baseline, the deviations, the gate and the reports written."""
    stopped = shown.stopped
    for hint in shown.hints:
        reporter.write_line(f"tooleval: {hint}", yellow=True)
    if shown.summary is None:
        if not shown.active and any(shown.not_evaluated.values()):
            skipped = " and ".join(counted(count, kind) for kind, count in shown.not_evaluated.items() if count)
            reporter.write_line(f"tooleval: nothing was evaluated: no --tooleval-model "
                                f"({skipped} skipped)", yellow=True)
        if stopped is not None:
            reporter.write_line(stopped, red=True)
        return
    from .table import (
        render_concurrency,
        render_cost,
        render_no_tool_calls,
        render_summary,
        render_totals,
    )

    reporter.write_sep("=", "tooleval summary" + ("" if shown.interrupted is None else
                                                  f" (interrupted by {shown.interrupted})"))
    reporter.write(render_summary(shown.summary) + "\n")
    reporter.write_line(render_totals(shown.totals))
    if (cost := render_cost(shown.totals)) is not None:
        reporter.write_line(cost)
    for line in render_concurrency(shown.totals):
        reporter.write_line(line, yellow=True)
    if (no_calls := render_no_tool_calls(shown.totals)) is not None:
        reporter.write_line(no_calls, red=True)
    _show_quarantine(reporter, shown.quarantine, shown.quarantined, shown.rows)
    if shown.batch is not None:
        reporter.write_line(shown.batch)
    for number, line in enumerate(shown.incomplete, 1):
        by_signal = shown.interrupted is not None and number == len(shown.incomplete)  # that line says it all
        reporter.write_line(f"tooleval: {line}" + ("" if by_signal else ": the run is incomplete"), red=True)
    for name, suite in shown.summary.suites.items():
        flaky = (suite.data.get("repeats") or {}).get("flaky") or []
        if flaky:
            more = f" and {len(flaky) - 20} more" if len(flaky) > 20 else ""
            reporter.write_line(f"tooleval repeats: {counted(len(flaky), f'{name} unit')} flaky (passed some asks, "
                                f"failed others): {', '.join(flaky[:20])}{more}", yellow=True)
    if shown.comparison is not None:
        from .table import made_differently, render_comparison

        reporter.write("\n" + render_comparison(shown.comparison) + "\n")
        for key, old, new in shown.comparison.fingerprint_differences:
            reporter.write_line(made_differently(key, old, new), yellow=True)
    for line in shown.storage:
        reporter.write_line(line, yellow=True)
    if shown.reasoning == "strip":
        reporter.write_line("tooleval: --tooleval-reasoning strip: each answer's leading <think> block "
                            "was taken off before scoring (upstream scores it with the answer)",
                            yellow=True)
    if shown.tools_system == "empty":
        reporter.write_line("tooleval: --tooleval-tools-system empty: requests that offer tools without a system "
                            "message were sent with an empty one (not the benchmark's request)", yellow=True)
    thinking = sum(1 for row in shown.rows if isinstance(output := row.get("output"), str)
                   and output.lstrip().startswith(THINK_START))
    if shown.reasoning == "keep" and thinking and thinking >= THINK_HINT_SHARE * len(shown.rows):
        reporter.write_line(f"tooleval: {thinking} of {len(shown.rows)} answers begin with a <think> block, "
                            "which the scorers read as part of the answer (as upstream does): "
                            "--tooleval-reasoning strip takes it off before scoring", yellow=True)
    for where, changes in shown.adaptations.items():
        told = ", ".join(f"{name} ({'sent as ' + instead if instead != 'left out' else instead})"
                         for name, instead in changes.items())
        reporter.write_line(f"tooleval: {where} refused {told}: adapted for the whole run, a deviation "
                            "from the benchmark's sampling", yellow=True)
    if shown.gate is not None:
        for line in shown.gate.lines():
            reporter.write_line(line, red=not shown.gate.passed, green=shown.gate.passed)
    for line in shown.report_errors:
        reporter.write_line(line, red=True)
    if not shown.report_errors:
        for path in shown.written:
            reporter.write_line(f"tooleval report: {path}")
    if stopped is not None:  # the samples not asked did not run: they are in no figure
        reporter.write_line(stopped, red=True)


def _show_quarantine(reporter: TerminalReporter, quarantine: Mapping[str, str],
                     quarantined: Sequence[Mapping[str, JSONValue]], rows: Sequence[Mapping[str, JSONValue]]) -> None:
    if not quarantine:
        return
    if quarantined:
        listed = ", ".join(f"{row['test_id']} {row['outcome']}" for row in quarantined[:20])
        more = f" and {len(quarantined) - 20} more" if len(quarantined) > 20 else ""
        reporter.write_line(f"tooleval quarantine: {counted(len(quarantined), 'sample')} ran apart, in no "
                            f"figure and not gated: {listed}{more}", yellow=True)
    ran = {row["test_id"] for row in quarantined if whole(row.get("repeat", 1)) == 1}  # original ids
    unmatched = [test_id for test_id in quarantine if test_id not in ran]
    if unmatched:
        # a misspelt id: the closest test id of the run beside it
        ids = [str(row.get("test_id")) for row in rows if whole(row.get("repeat", 1)) == 1]
        listed = ", ".join(test_id + (f" ({hint})" if (hint := did_you_mean(test_id, ids)) else "")
                           for test_id in unmatched[:20])
        reporter.write_line(f"tooleval quarantine: {counted(len(unmatched), 'id')} matched no sample of this run: "
                            f"{listed}", yellow=True)


def interrupted_line(signal: str, not_run: Sized, collected: int) -> str:
    """A run a signal stopped (the report's run block's `not_run` and `collected`)."""
    return (f"the run was interrupted ({signal}): {len(not_run)} of the {collected} "
            "samples it collected did not run; the figures are of those that finished")


def _were(n: int) -> str:
    return "was" if n == 1 else "were"


def batch_line(not_run: int) -> str:
    return (f"{counted(not_run, 'sample')} {_were(not_run)} not run: their batch was still running when "
            "--tooleval-batch-wait ran out (run again to collect it)")


def cost_line(ceiling: float, spent_usd: float, not_run: int) -> str:
    return (f"the cost ceiling --tooleval-max-cost {ceiling:g} was reached (estimated "
            f"${spent_usd:.4f}): {counted(not_run, 'sample')} {_were(not_run)} not run")
