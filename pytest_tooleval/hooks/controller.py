"""The controller side of a run (the only process without xdist, the xdist master with it).

It gathers the per-sample payloads from test reports, builds the summary, applies the gate to the exit
status and writes the JSON report. The summary arithmetic and the rendering live in report/.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Generator, Mapping
from types import FrameType
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import NOT_ASKED, ToolevalUsageError
from ..json_value import JSONObject
from ..models.access import access_kind
from ..models.storage import check_cache_dir
from ..report.gate import (
    GateResult,
    evaluate_gate,
    evaluate_regressions,
    self_compared_line,
    sort_thresholds,
    unknown_name_line,
)
from ..report.json_report import check_report_path, report_document, write_report
from ..report.row import member_text, object_entries, object_or_empty
from ..report.summary import RunSummary, run_totals, summarize
from ..report.terminal import (
    RunShown,
    batch_line,
    cost_line,
    index_teardown_reports,
    interrupted_line,
    show_run,
)
from ..run.session import ToolevalSession
from ..suites import figure_names, plugin, registered, selected_by_marks, selection_hints
from ..transport import PROPERTY, error_payload, from_property, row_key, row_key_or_none
from .progress import start_progress, stop_progress

if TYPE_CHECKING:
    from ..report.compare import Comparison
    from ..report.document import ReportDocument
    from ..settings.options import Settings


class Controller:
    def __init__(self, session: ToolevalSession) -> None:
        self.session = session
        self.samples: dict[tuple[str, str, str, str, int], JSONObject] = {}
        self.other_failures = 0
        self.summary: RunSummary | None = None
        self.gate: GateResult | None = None
        self.report_errors: list[str] = []
        self.quarantined: list[JSONObject] = []  # rows of quarantined samples: in the report, in no figure
        self.rows: list[JSONObject] = []
        self.totals: JSONObject = {}  # run_totals of the rows, made once at the end
        self.not_evaluated = {"benchmark test": 0, "yaml suite case": 0}  # tests skipped for want of a model
        self.started = time.monotonic()
        self.wall_s = 0.0
        self.baseline: JSONObject | None = None  # the --tooleval-baseline report, read at the start
        self.comparison: Comparison | None = None
        self.signalled: str | None = None  # the first SIGINT/SIGTERM this process received (`_on_signal`)
        self.interrupted: str | None = None  # the signal that ended the run before it finished (`_finish`)
        self._signalled_at = 0.0  # when the first signal came (time.monotonic)
        self._finishing = False  # the run is over: a first signal lets the summary and reports finish
        self._previous_handlers: dict[int, Any] = {}
        settings = session.settings
        if settings.max_cost is not None and not settings.prices:
            raise ToolevalUsageError("--tooleval-max-cost needs prices to estimate with: pass --tooleval-prices "
                                     "MODEL=INPUT/OUTPUT (USD per million tokens)")
        if settings.batch:
            check_batch(settings)
        if settings.max_regression and not settings.baseline:
            raise ToolevalUsageError("--tooleval-max-regression needs a run to compare with: pass "
                                     "--tooleval-baseline PATH (a previous run's --tooleval-report)")
        if not session.active:
            needs_model = [flag for flag, value in (("--tooleval-fail-under", settings.fail_under),
                                                    ("--tooleval-report", settings.report),
                                                    ("--tooleval-markdown", settings.markdown),
                                                    ("--tooleval-html", settings.html),
                                                    ("--tooleval-baseline", settings.baseline)) if value]
            if needs_model:
                raise ToolevalUsageError(f"{needs_model[0]} needs a model to evaluate: pass --tooleval-model NAME "
                                         "(or 'oracle', or 'replay:PATH')")
        else:
            check_cache_dir(settings)  # what must be written there (storage.py): the rest goes on without it
            from ..answers.board import remove_stale_boards

            remove_stale_boards(settings.cache_path / "runs")  # left by runs that were killed
            if settings.report:
                check_report_path(settings.report)
            if settings.markdown:
                check_report_path(settings.markdown, "--tooleval-markdown", "summary.md")
            if settings.html:
                check_report_path(settings.html, "--tooleval-html", "report.html")
            if settings.fail_under or settings.max_regression:
                self._check_gate_names()
            if settings.baseline:
                self._read_baseline(settings.baseline)

    def _read_baseline(self, path: str) -> None:
        """The baseline report, checked now (one line and exit 4 when it cannot be one); with
        --tooleval-strict-baseline, its fingerprint held against this run's: a difference but the model stops it."""
        from ..report.compare import fingerprint_differences
        from ..report.json_report import fingerprint, read_report

        self.baseline = read_report(path)
        self._check_baseline_revisions(path)
        if not self.session.settings.strict_baseline:
            return  # the differences are named under the comparison, at the end
        before = object_or_empty(self.baseline.get("fingerprint"))
        suites = [name for name in registered() if name in before]
        current = json.loads(json.dumps(fingerprint(self.session.settings, suites), default=str))
        # what the endpoints refused is known after the probe: held against the baseline at the end
        differences = [difference for difference in fingerprint_differences(before, current)
                       if not difference[0].startswith("endpoint_")]
        if differences:
            key, old, new = differences[0]
            raise ToolevalUsageError(
                f"--tooleval-strict-baseline: {path} was made differently: {key} was {old!r}, is {new!r}"
                + (f" (and {len(differences) - 1} more differences)" if len(differences) > 1 else "")
                + "; compare runs made alike, or drop the flag")

    def _check_baseline_revisions(self, path: str) -> None:
        """A baseline scored against another revision of a benchmark this run scores is refused, naming both: its
        figures differ by the benchmark's changes, not only by the model (docs/release-gate.md#benchmark-revisions).
        A report from before revisions were named has none: it was made against the first pinned one."""
        assert self.baseline is not None
        before = self.baseline.get("fingerprint") or {}
        run = self.session.run
        for name, suite in registered().items():
            block = before.get(name) if isinstance(before, dict) else None
            # None: a suite without revisions
            old = suite.upstream.revision_of(block) if isinstance(block, dict) else None
            if old is None or run.unavailable(name) is not None or not selected_by_marks(name, run.markexpr):
                continue
            new = suite.upstream.revision_of(None, self.session.settings)
            if old != new:
                raise ToolevalUsageError(
                    f"--tooleval-baseline: {path} was scored against {suite.figures.title} {old}, this run against "
                    f"{new}: the figures would differ by the benchmark's changes too; rescore it first: python -m "
                    f"pytest_tooleval rescore {path} --{name}-revision {new} -o rescored.json, and compare with that")

    # -- signals: SIGTERM (a CI time limit) ends the run as Ctrl-C does; a second signal ends it at once ----------

    @pytest.hookimpl
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if not self.session.active or threading.current_thread() is not threading.main_thread():
            return  # (an embedding program's thread cannot take signals: pytest's own Ctrl-C handling stays)
        for signum in INTERRUPTING:
            self._previous_handlers[signum] = signal.getsignal(signum)
            signal.signal(signum, self._on_signal)

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """After everything closed: the run's board goes (the controller outlives its workers), and the handlers
        this run replaced are given back (a second signal until then stops at once)."""
        self.session.remove_board()
        for signum, previous in self._previous_handlers.items():
            signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
        self._previous_handlers.clear()

    # -- collection: a suite's data error is raised here, before anything is asked ---------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session: pytest.Session) -> None:
        """A single process: the endpoint probe leaves now and comes back while the tests are collected (xdist's
        controller sends it once it knows its workers: distributed.py)."""
        config = session.config
        alone = config.pluginmanager.get_plugin("dsession") is None
        if self.session.active and not config.option.collectonly and alone:
            from .ahead import marked_suites

            self.session.probe_early(lambda: marked_suites(session))

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self) -> None:
        """A worker's data problem is raised by its controller (distributed.py); this process's, here: one line,
        exit status 4."""
        from .collect import raise_collection_error

        raise_collection_error(self.session)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """After the answers started (plugin.py): the status line of their answering."""
        if self.session.active and not session.config.option.collectonly:
            start_progress(session.config, self.session)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        """The first signal ends the run as Ctrl-C does (pytest: exit status 2, then the session's end: the summary
        and reports of what finished); once the run is over, it lets them finish. A second one stops at once."""
        name = signal.Signals(signum).name
        if self.signalled is not None:
            # GNU timeout, and CI runners, send one kill to the process and to its group: the same signal twice
            # within moments is one request to stop, never the second that discards the reports
            if time.monotonic() - self._signalled_at < SECOND_SIGNAL_AFTER_S:
                return
            os.write(2, f"\ntooleval: {name} again: stopped at once, nothing more written\n".encode())
            os._exit(128 + signum)
        self.signalled, self._signalled_at = name, time.monotonic()
        if not self._finishing:
            raise KeyboardInterrupt(f"{name}: the run stops; its summary and reports are written from what "
                                    "finished (a second signal stops at once)")

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # pytest types user_properties as (str, object): ours are the payloads of transport.py, as JSON text
        payloads = [payload for name, value in report.user_properties
                    if name == PROPERTY and (payload := from_property(value)) is not None]
        if report.skipped and report.when == "setup" and _skipped_for_no_model(report):
            from ..suites.yamlsuite.collect import is_case_test

            self.not_evaluated["yaml suite case" if is_case_test(report.nodeid) else "benchmark test"] += 1
        for payload in payloads:
            key = row_key(payload)
            if self.samples.get(key, {}).get("outcome") in (None, "skipped") or payload["outcome"] != "skipped":
                self.samples[key] = payload
        if not payloads and report.failed:
            crashed = self._crashed_sample(report)
            if crashed is not None:  # a worker died running it: an error of the sample, never a dropped one
                self.samples[row_key(crashed)] = crashed
            else:  # the user's own tests: the gate never hides their failures
                self.other_failures += 1

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_teststatus(self, report: pytest.TestReport) -> tuple[str, str, str] | None:
        """A sample whose worker died is an error (as in the table and JUnit XML), in pytest's own counts too:
        xdist reports it as a failure of an unknown phase ("???")."""
        phase: str = report.when  # typed as setup/call/teardown; xdist's crash reports say "???"
        if report.failed and phase == "???" and self._crashed_sample(report) is not None:
            return "error", "E", "ERROR"
        return None

    def _check_gate_names(self) -> None:
        """A misspelt threshold or margin stops the run now, before anything is asked, with the closest name and
        the names it could use."""
        run, settings = self.session.run, self.session.settings
        names = figure_names(settings)
        in_run = {name: figures for name, figures in names.items()
                  if run.unavailable(name) is None and selected_by_marks(name, run.markexpr)}
        elsewhere = {name: figures for name, figures in names.items() if name not in in_run}
        valid = [f"{suite}.{figure}" for suite, figures in in_run.items() for figure in figures or []]
        for option, gated in (("--tooleval-fail-under", settings.fail_under),
                              ("--tooleval-max-regression", settings.max_regression)):
            unknown, _ = sort_thresholds(dict(gated), in_run, elsewhere)
            if unknown:
                raise ToolevalUsageError(unknown_name_line(option, unknown[0], "this run", valid))

    def _thresholds_of_suites_that_ran(self) -> tuple[dict[str, float], tuple[str, ...]]:
        """The thresholds to check, and a note for each one only a suite that did not run could meet."""
        assert self.summary is not None
        names = figure_names(self.session.settings)
        ran = {name: figures for name, figures in names.items() if name in self.summary.suites}
        others = {name: figures for name, figures in names.items() if name not in ran}
        thresholds = dict(self.session.settings.fail_under)
        _, outside = sort_thresholds(thresholds, ran, others)
        notes = tuple(f"{name}: not checked (its suite did not run)" for name in outside)
        return {name: value for name, value in thresholds.items() if name not in outside}, notes

    def _crashed_sample(self, report: pytest.TestReport) -> JSONObject | None:
        name = report.nodeid.rsplit("::", 1)[-1]
        if not self.session.active or "[" not in name or not name.endswith("]"):
            return None
        case = self.session.run.case_for_test_id(name[name.index("[") + 1:-1])
        if case is None:
            return None
        reason = str(report.longrepr).strip().splitlines()[0] if report.longrepr else "the test process died"
        size = self.session.run.category_size(case)
        return error_payload(case, size, reason)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> Generator[None, None, None]:
        """The figures, the gate and the report before pytest's own summary; the tooleval table after all of it,
        pytest's closing line included, so the tail of a CI log shows it."""
        self._finish(session, exitstatus)
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        index_teardown_reports(reporter)  # pytest's FAILURES section is quadratic without it (report/terminal.py)
        try:
            yield
        finally:
            if reporter is not None:
                show_run(reporter, self._shown())

    def _finish(self, session: pytest.Session, exitstatus: int) -> None:
        self._finishing, self.interrupted = True, self.signalled
        if self.interrupted is not None:
            if self.interrupted == "SIGTERM":
                _stop_workers(session.config)  # they end while the reports are written
            if exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):  # a signal some code swallowed
                exitstatus = session.exitstatus = pytest.ExitCode.INTERRUPTED
        stop_progress(session.config)  # the status row is given back before pytest's own summary
        self.session.flush_storage()  # what the cache failed to keep belongs in the summary and the report
        self.wall_s = time.monotonic() - self.started
        everything = [row for row in self.samples.values() if row["outcome"] != "skipped"]
        self.quarantined = [row for row in everything if row.get("quarantined")]
        rows = [row for row in everything if not row.get("quarantined")]  # the rows every figure is made of
        self.rows = rows
        if not rows and not (self.session.budget.not_run or self.session.batch.not_run or self.interrupted
                             or self.session.stopped_because):
            # nothing was asked; a run that left every sample for its batch, or was stopped (under xdist a dead
            # endpoint can stop it before any test ran), still reports
            return
        settings = self.session.settings
        batched = self.session.batch.prefixes()
        for row in everything:  # answered through the Batch API: priced at its share (report/summary.py)
            if isinstance(test_id := row.get("test_id"), str) and test_id in batched:
                row["batched"] = batched[test_id]
        self.summary = summarize(rows, plugin)
        _figures_as_junit_properties(session.config, self.summary.figures)
        self.totals = self._totals()
        if self.baseline is not None:
            self.comparison = self._compare(rows)
        own = 0 if self.comparison is None else self.comparison.own_answers
        if settings.fail_under or settings.max_regression or own:
            thresholds, notes = self._thresholds_of_suites_that_ran() if settings.fail_under else ({}, ())
            regressions = () if self.comparison is None else tuple(
                evaluate_regressions(self.comparison, settings.max_regression, settings.alpha))
            self.gate = evaluate_gate(self.summary, thresholds, settings.max_error_rate, notes, regressions,
                                      rows=rows)
            incomplete = self._incomplete()  # a run a signal, its budget or a running batch cut short passes no gate
            if incomplete:
                self.gate = dataclasses.replace(self.gate, incomplete=incomplete[-1])
            if own:  # a comparison of the baseline with its own answers passes nothing
                self.gate = dataclasses.replace(self.gate, self_compared=self_compared_line(own, len(rows)))
            if exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
                if not self.gate.passed:
                    session.exitstatus = pytest.ExitCode.TESTS_FAILED
                elif self.other_failures == 0:
                    session.exitstatus = pytest.ExitCode.OK
        if self._answered_everything(session, exitstatus):
            self.session.end_cache_run()  # a later run does not resume it (models/cache.py)
        step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if settings.report or settings.markdown or settings.html or step_summary:
            document = report_document(settings, self.summary, everything, self.gate, self.totals,
                                       self.session.storage.as_dicts(), self.session.tally.adaptations,
                                       self.session.endpoint_profile,
                                       None if self.comparison is None else self.comparison.as_dict(),
                                       self._run_block())
            self._write_reports(session, document, step_summary)

    def _write_reports(self, session: pytest.Session, document: ReportDocument, step_summary: str | None) -> None:
        """The JSON report, the Markdown summary (and GitHub's step summary); a file that cannot be written is
        one line, and a run that does not pass."""
        from ..report.html import write_html
        from ..report.markdown import write_markdown

        settings = self.session.settings
        writers: list[tuple[str, Callable[[], object]]] = []
        if (report := settings.report):
            writers.append((report, lambda: write_report(report, document)))
        if settings.markdown or step_summary:
            where = settings.markdown or "$GITHUB_STEP_SUMMARY"
            writers.append((where, lambda: write_markdown(document, settings.markdown,
                                                          {"GITHUB_STEP_SUMMARY": step_summary or ""})))
        if (html := settings.html):
            writers.append((html, lambda: write_html(document, html)))
        for where, write in writers:
            try:
                write()
            except OSError as exc:  # a full disk, say: one line, and a run that does not pass
                self.report_errors.append(f"tooleval report: could not write {where}: {exc.strerror or exc}")
                if session.exitstatus == pytest.ExitCode.OK:
                    session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _totals(self) -> JSONObject:
        settings = self.session.settings
        live = access_kind(settings) != "oracle"
        totals = run_totals(self.rows, self.wall_s, requests=self.session.tally.request_counts if live else None,
                            role_models=self.session.run.role_models(), prices=settings.prices or None)
        if live and (moved := self.session.tally.concurrency):
            totals["concurrency"] = [*moved]  # how each endpoint's in-flight limit moved, and why (models/limits.py)
        if settings.max_cost is not None:
            totals["cost_ceiling"] = {"usd": settings.max_cost, "not_run": self.session.budget.not_run}
        if self.session.batch.summary is not None:
            totals["batch"] = {**self.session.batch.summary.as_dict(), "not_run": self.session.batch.not_run}
        if self.session.cache_run is not None:  # which cached answers the run used (models/cache.py)
            totals["cache_mode"] = self.session.cache_run.mode
        return totals

    def _answered_everything(self, session: pytest.Session, exitstatus: int) -> bool:
        """Whether the run asked every sample it collected: nothing stopped, interrupted or left it short."""
        return (exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) and not session.shouldstop
                and not session.shouldfail and self.interrupted is None and not self.session.stopped_because
                and not self._incomplete() and not self._run_counts()[0])

    def _run_block(self) -> dict[str, object]:
        """The report's `run`: the share of the benchmark (shard, subsample), the samples collected but never
        run (a run stopped early), and the prices its costs were estimated at."""
        settings = self.session.settings
        not_run, collected_n, skipped = self._run_counts()
        return {"shard": settings.shard, "sample": settings.sample,
                "seed": settings.seed if settings.sample is not None else None,
                "collected": collected_n, "not_run": not_run, "skipped": skipped,
                # a signal stopped it (SIGINT, SIGTERM): its figures are of what finished, its not_run what did not
                "interrupted": self.interrupted is not None, "signal": self.interrupted,
                "role_models": self.session.run.role_models(), "prices": settings.prices or None,
                # the response cache's side: this run's tag, which answers it used, what each endpoint serves
                **({"cache": {**run.as_dict(), "served": self.session.served}}
                   if (run := self.session.cache_run) is not None else {})}

    def _run_counts(self) -> tuple[list[str], int, int]:
        """The run block's samples not run, samples collected, and samples skipped."""
        from .collect import is_placeholder

        answered = {row.get("test_id") for row in self.samples.values()}
        collected = set(self.session.collected_test_ids or ())
        not_run = sorted(test_id for test_id in collected - answered
                         if not is_placeholder(test_id) and self.session.run.case_for_test_id(test_id) is not None)
        # skipped rows are not written: counted, so that a merge can tell them from rows a shard lost; those a
        # stopping run never asked are samples not run, which make a merge of the shard incomplete
        skips = [row for row in self.samples.values()
                 if row["outcome"] == "skipped" and row.get("test_id") in collected]
        stopped = [member_text(row, "test_id") for row in skips
                   if str(row.get("error") or "").startswith(NOT_ASKED)]
        skipped = len(skips) - len(stopped)
        collected_n = len(collected & answered) + len(not_run)
        return sorted(not_run + stopped), collected_n, skipped

    def _compare(self, rows: list[JSONObject]) -> Comparison:
        from ..report.compare import compare, suite_members
        from ..report.json_report import fingerprint

        path = self.session.settings.baseline  # what self.baseline was read from
        assert self.baseline is not None and self.summary is not None and path is not None
        members = {name: suite_members(plugin(name)) for name in self.summary.suites}
        current = json.loads(json.dumps({**fingerprint(self.session.settings, list(self.summary.suites)),
                                         "endpoint_adaptations": self.session.tally.adaptations}, default=str))
        # a sample quarantined now is out of the baseline's figures too, so the pairs compare like with like
        # (every repeat of it: a comparison's unit is a sample, its repeats counted within it)
        left_out = {row_key(row)[:4] for row in self.quarantined}
        baseline: JSONObject = {**self.baseline, "samples": [
            row for row in object_entries(self.baseline.get("samples"))
            if (key := row_key_or_none(row)) is not None and key[:4] not in left_out]}
        return compare(rows, baseline, path, current, members)

    def _shown(self) -> RunShown:
        """What the tooleval summary on the terminal shows (report/terminal.py)."""
        session, settings = self.session, self.session.settings
        return RunShown(
            hints=selection_hints(settings, session.run.markexpr) if session.active else [],
            active=session.active, not_evaluated=self.not_evaluated,
            stopped=session.stopped_because, summary=self.summary, totals=self.totals, rows=self.rows,
            interrupted=self.interrupted, quarantine=session.run.quarantine, quarantined=self.quarantined,
            batch=None if session.batch.summary is None else session.batch.summary.line(),
            incomplete=self._incomplete(),
            comparison=self.comparison, storage=session.storage.lines(), reasoning=settings.reasoning,
            tools_system=settings.tools_system,
            adaptations=session.tally.adaptations, gate=self.gate, report_errors=self.report_errors,
            written=[path for path in (settings.report, settings.markdown, settings.html) if path])

    def _incomplete(self) -> list[str]:
        """Why the run is incomplete, as the terminal lists it: a batch still running, the cost ceiling, a signal
        (the gate names the last: the signal outranks the ceiling, which outranks the batch)."""
        budget, batch = self.session.budget, self.session.batch
        return [line for line in (batch_line(batch.not_run) if batch.not_run else None,
                                  cost_line(budget.ceiling, budget.spent_usd, budget.not_run)
                                  if budget.not_run and budget.ceiling is not None else None,
                                  None if self.interrupted is None else interrupted_line(self.interrupted,
                                                                                         *self._run_counts()[:2]))
                if line is not None]


INTERRUPTING = (signal.SIGINT, signal.SIGTERM)  # what a user's Ctrl-C and a CI time limit send
SECOND_SIGNAL_AFTER_S = 1.0  # a second signal stops at once only this long after the first


def check_batch(settings: Settings) -> None:
    """--tooleval-batch with what it cannot work with: one line, before anything is asked."""
    if access_kind(settings) != "chat":
        raise ToolevalUsageError("--tooleval-batch sends a live model's requests through its Batch API: it has no "
                                 f"use with --tooleval-model {settings.model}")
    if settings.cache_mode == "off":
        raise ToolevalUsageError("--tooleval-batch keeps the batch's answers in the response cache: drop "
                                 + ("--tooleval-no-cache" if settings.no_cache else "--tooleval-cache off"))
    if settings.max_cost is not None:
        raise ToolevalUsageError("--tooleval-max-cost cannot stop a batch once it is submitted: use one or the "
                                 "other")


def _stop_workers(config: pytest.Config) -> None:
    """xdist's workers never saw a SIGTERM sent to this process: a SIGINT ends each one's session now (xdist
    would otherwise wait for their running tests, then kill them after its timeout). A Ctrl-C at a terminal
    reached them already."""
    dsession = config.pluginmanager.get_plugin("dsession")
    group = getattr(getattr(dsession, "nodemanager", None), "group", None)
    for gateway in list(group or ()):
        popen = getattr(getattr(gateway, "_io", None), "popen", None)  # execnet's popen gateways only
        if popen is not None and popen.poll() is None:
            with contextlib.suppress(OSError):
                os.kill(popen.pid, signal.SIGINT)


def _skipped_for_no_model(report: pytest.TestReport) -> bool:
    from .collect import NO_DATA, NO_MODEL, skip_reason

    reason = skip_reason(report)
    return NO_MODEL in reason or NO_DATA in reason


def _figures_as_junit_properties(config: pytest.Config, figures: Mapping[str, float]) -> None:
    """--junitxml: every figure of the run as a property of the test suite, `tooleval.figure.<suite>.<figure>`,
    beside each sample's own properties (a CI dashboard reads the figures from the XML alone)."""
    try:
        from _pytest.junitxml import xml_key  # pytest's own JUnit writer: it writes these when the session ends
    except ImportError:  # a private name that may move: then the samples' own properties are all there is
        return
    xml = config.stash.get(xml_key, None)
    if xml is None:
        return
    for name, value in sorted(figures.items()):
        xml.add_global_property(f"tooleval.figure.{name}", f"{value:.6f}")
