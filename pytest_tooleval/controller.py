"""The controller side of a run (the only process without xdist, the xdist master with it).

It gathers the per-sample payloads from test reports, builds the summary, applies the gate to the exit
status and writes the JSON report. The summary arithmetic and the rendering live in report/.
"""

from __future__ import annotations

from typing import Any, cast

import pytest

from .report.gate import GateResult, evaluate_gate
from .report.json_report import check_report_path, write_report
from .report.summary import RunSummary, summarize
from .session import ToolevalSession
from .transport import PROPERTY, error_payload


class Controller:
    def __init__(self, session: ToolevalSession) -> None:
        self.session = session
        self.samples: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.other_failures = 0
        self.summary: RunSummary | None = None
        self.gate: GateResult | None = None
        self.report_error: str | None = None
        if session.active and session.settings.report:
            check_report_path(session.settings.report)

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # pytest types user_properties as (str, object): ours are the payload dicts of transport.py
        payloads = [cast(dict[str, Any], value) for name, value in report.user_properties if name == PROPERTY]
        for payload in payloads:
            key = (payload["suite"], payload["language"], payload["id"])
            if self.samples.get(key, {}).get("outcome") in (None, "skipped") or payload["outcome"] != "skipped":
                self.samples[key] = payload
        if not payloads and report.failed:
            crashed = self._crashed_sample(report)
            if crashed is not None:  # a worker died running it: an error of the sample, never a dropped one
                self.samples[(crashed["suite"], crashed["language"], crashed["id"])] = crashed
            else:  # the user's own tests: the gate never hides their failures
                self.other_failures += 1

    def _crashed_sample(self, report: pytest.TestReport) -> dict[str, Any] | None:
        name = report.nodeid.rsplit("::", 1)[-1]
        if not self.session.active or "[" not in name or not name.endswith("]"):
            return None
        case = self.session.run.case_for_test_id(name[name.index("[") + 1:-1])
        if case is None:
            return None
        reason = str(report.longrepr).strip().splitlines()[0] if report.longrepr else "the test process died"
        size = self.session.run.category_sizes.get((case.suite, case.language, case.category), 0)
        return error_payload(case, size, reason)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        rows = [row for row in self.samples.values() if row["outcome"] != "skipped"]
        if not rows:
            return
        settings = self.session.settings
        self.summary = summarize(rows)
        if settings.fail_under:
            self.gate = evaluate_gate(self.summary, settings.fail_under, settings.max_error_rate)
            if exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
                if not self.gate.passed:
                    session.exitstatus = pytest.ExitCode.TESTS_FAILED
                elif self.other_failures == 0:
                    session.exitstatus = pytest.ExitCode.OK
        if settings.report:
            try:
                write_report(settings.report, settings, self.summary, rows, self.gate)
            except OSError as exc:  # a full disk, say: one line, and a run that does not pass
                self.report_error = f"tooleval report: could not write {settings.report}: {exc.strerror or exc}"
                if session.exitstatus == pytest.ExitCode.OK:
                    session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.summary is None:
            return
        from .report.table import render_summary

        terminalreporter.write_sep("=", "tooleval summary")
        terminalreporter.write(render_summary(self.summary) + "\n")
        if self.gate is not None:
            for line in self.gate.lines():
                terminalreporter.write_line(line, red=not self.gate.passed, green=self.gate.passed)
        if self.report_error is not None:
            terminalreporter.write_line(self.report_error, red=True)
        elif self.session.settings.report:
            terminalreporter.write_line(f"tooleval report: {self.session.settings.report}")
