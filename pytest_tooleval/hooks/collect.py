"""Cases -> parametrized test items, and an answered case -> pass / fail / error plus its report payload."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from types import TracebackType

import pytest

from ..errors import ContextOverflowError, ToolevalUsageError
from ..json_value import JSONObject
from ..models.base import InfrastructureError
from ..outcome import InternalError, SampleError, SampleResult, Skipped
from ..report.row import tally
from ..report.summary import token_totals
from ..run.plan import DATA_ERROR, PLACEHOLDERS
from ..run.session import ToolevalSession
from ..suites import plugin, selected_by_marks
from ..suites.base import Case
from ..text import clip, counted
from ..transport import PROPERTY, as_property, error_payload, result_payload
from ..verdict import FIXED_VALID, QUIET_DETAIL, Verdict

NO_MODEL = "no model to evaluate: pass --tooleval-model NAME (or 'oracle', or 'replay:PATH')"
NO_DATA = "no model and no local data: pass --tooleval-model NAME (data is downloaded on first use)"
FAILURE_TEXT_LIMIT = 2000
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # C0 and C1 controls, newline and tab kept


def parametrize_cases(metafunc: pytest.Metafunc, session: ToolevalSession, marker: pytest.Mark) -> None:
    """One test per case of the marked suite. Only this suite's data is read, and only when `-m` can select
    some of its cases; a data problem is kept for `raise_collection_error` (one line, exit status 4)."""
    if not marker.args:
        raise ToolevalUsageError("@pytest.mark.tooleval needs the suite name, e.g. @pytest.mark.tooleval('acebench')")
    suite_name = marker.args[0]
    plugin(suite_name)  # an unknown name stops the run, with the known ones
    if reason := session.run.unavailable(suite_name):
        _placeholder(metafunc, suite_name, "not-run", reason)
        return
    if not selected_by_marks(suite_name, session.run.markexpr):
        reason = f"-m {session.run.markexpr!r} selects no {suite_name} sample"
        _placeholder(metafunc, suite_name, "not-selected", reason)
        return
    try:
        cases = session.run.collected_cases(suite_name)
    except ToolevalUsageError as exc:
        if not session.active:  # installed but unused: a skipped placeholder instead of failing or downloading
            # a folder that was given and refused (another revision, say) is named; else there is simply none
            reason = f"no model to evaluate, and {exc}" if session.settings.data_dir else NO_DATA
            _placeholder(metafunc, suite_name, "no-model", reason)
            return
        if session.run.collection_error is None:
            session.run.collection_error = exc
        _placeholder(metafunc, suite_name, DATA_ERROR, str(exc))
        return
    marks: dict[str, pytest.MarkDecorator] = {}  # pytest.mark.<name> checks the registered markers on every use
    params = [
        pytest.param(
            case,
            id=case.test_id,
            marks=[marks.get(mark) or marks.setdefault(mark, getattr(pytest.mark, mark)) for mark in case.marks]
            # known to be broken: run, but neither its failure nor its figures count (quarantine.py)
            + ([pytest.mark.xfail(reason=f"quarantined: {reason}", strict=False)]
               if (reason := session.run.quarantined(case)) is not None else []),
        )
        for case in session.run.schedule(cases)
        if session.run.in_shard(case)  # --tooleval-shard: this runner's share (shards.py)
    ]
    metafunc.parametrize("tooleval_case", params, indirect=True)


def _placeholder(metafunc: pytest.Metafunc, suite_name: str, what: str, reason: str) -> None:
    """One skipped test standing for a suite that is not run; it carries the suite's mark, so -m sees it."""
    param = pytest.param(None, id=f"{suite_name}-{what}",
                         marks=[pytest.mark.skip(reason=reason), getattr(pytest.mark, suite_name)])
    metafunc.parametrize("tooleval_case", [param], indirect=True)


def is_placeholder(test_id: str) -> bool:
    """Whether a parametrize id is a suite's placeholder (see `_placeholder`), not a sample's."""
    from ..suites import registered

    return any(test_id.endswith(f"-{what}") and test_id.removesuffix(f"-{what}") in registered()
               for what in PLACEHOLDERS)


def collected_cases(items: list[pytest.Item]) -> list[Case]:
    """The cases of the collected sample tests, in collection order (not the suites' placeholders)."""
    params = [item.callspec.params["tooleval_case"] for item in items  # type: ignore[attr-defined]  # a parametrized Function
              if "tooleval_case" in getattr(getattr(item, "callspec", None), "params", {})]
    return [case for case in params if case is not None]


def raise_collection_error(session: ToolevalSession) -> None:
    """After collection: a suite whose data could not be loaded stops the run before anything is asked."""
    if session.run.collection_error is not None:
        raise session.run.collection_error


def suite_with_data_error(test_ids: list[str]) -> str | None:
    """The suite of a data-error placeholder among an xdist worker's collected ids (see parametrize_cases)."""
    suffix = f"-{DATA_ERROR}"
    return next((test_id.removesuffix(suffix) for test_id in test_ids if test_id.endswith(suffix)), None)


@dataclass(frozen=True)
class CaseHandle:
    """What the test function receives: the case and its scored result."""

    case: Case
    result: SampleResult
    scorer: str

    @property
    def verdict(self) -> Verdict:
        return self.result.verdict

    @property
    def passed(self) -> bool:
        return self.result.verdict.passed(self.scorer)

    def check(self) -> None:
        """Fail the test, with a readable message, when the sample's verdict is negative."""
        __tracebackhide__ = True
        if not self.passed:
            pytest.fail(_printable(describe_failure(self.case, self.result, self.scorer)), pytrace=False)


def trim_failure(item: pytest.Item, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
    """A sample's failure (`pytest.fail(..., pytrace=False)`) is shown as its message alone; pytest still filters
    its whole traceback first, from its own runner's frames down, which cost about half a millisecond a failure
    (most of a failing test's reporting). Starting the traceback at the test function's frame leaves pytest's
    filter the same last entry, so the same text, at a fraction of the cost. --full-trace keeps every frame."""
    value = excinfo.value
    if not isinstance(value, pytest.fail.Exception) or value.pytrace or item.config.getoption("fulltrace", False):
        return
    code = getattr(getattr(item, "obj", None), "__code__", None)
    tb: TracebackType | None = excinfo.tb
    while tb is not None and tb.tb_frame.f_code is not code:
        tb = tb.tb_next
    if tb is not None and tb is not excinfo.tb:
        from _pytest._code.code import Traceback

        excinfo.traceback = Traceback(tb)


def answer_case(session: ToolevalSession, case: Case) -> CaseHandle:
    """Ask and score; an infrastructure failure errors the test with one readable line (no traceback)."""
    if not session.active:
        pytest.skip(NO_MODEL)
    try:
        result = session.evaluate(case)
    except (InfrastructureError, SampleError, InternalError) as exc:
        reason = _printable(f"{type(exc).__name__}: {exc}")
    else:
        if isinstance(result, Skipped):
            pytest.skip(result.reason)  # the one place a suite's decision becomes a pytest skip
        return CaseHandle(case, result.plain(), session.settings.scorer)
    # outside the except block: pytest would print the caught exception too, as "During handling of ..."
    pytest.fail(reason, pytrace=False)


def attach_payload(session: ToolevalSession, item: pytest.Item, call: pytest.CallInfo[None],
                   report: pytest.TestReport, handle: CaseHandle | None) -> None:
    case = item.callspec.params["tooleval_case"]  # type: ignore[attr-defined]  # only parametrized items get here
    if case is None:
        return
    if report.when == "teardown":  # what --junitxml writes for a test: its teardown report's properties
        payload = item.stash.get(PAYLOAD_KEY, None)
        if payload is not None:
            report.user_properties.extend(junit_properties(payload, session.settings.scorer))
        return
    size = session.run.category_size(case)
    if report.when == "setup" and report.failed:
        reason = call.excinfo.exconly().removeprefix("Failed: ") if call.excinfo else "setup failed"
        payload = error_payload(case, size, _trim(reason, 500))
        if reason.startswith(f"{ContextOverflowError.__name__}:"):  # counted apart (report/summary.py)
            payload["error_type"] = ContextOverflowError.error_type
    elif report.when == "setup" and report.skipped:
        payload = error_payload(case, size, skip_reason(report), outcome="skipped")
    elif report.when == "call" and handle is not None:
        payload = result_payload(case, size, handle.result, handle.scorer)
        if report.failed and not call.excinfo.errisinstance(pytest.fail.Exception):  # type: ignore[union-attr]  # failed: excinfo is set
            payload["outcome"] = "error"  # the test body itself broke: not a verdict
    else:
        return
    if (why := session.run.quarantined(case)) is not None:
        payload["quarantined"] = why
    report.user_properties.append((PROPERTY, as_property(payload)))
    item.stash[PAYLOAD_KEY] = payload


PAYLOAD_KEY = pytest.StashKey[JSONObject]()


def junit_properties(payload: JSONObject, scorer: str) -> list[tuple[str, object]]:
    """The sample's JUnit XML properties: flat, short values (the full payload is in the JSON report)."""
    prompt, completion = token_totals(tally(payload.get("tokens")))
    properties: list[tuple[str, object]] = [
        ("tooleval.suite", payload["suite"]), ("tooleval.category", payload["category"]),
        ("tooleval.language", payload["language"]), ("tooleval.outcome", payload["outcome"]),
        ("tooleval.error_type", payload.get("error_type") or ""), ("tooleval.scorer", scorer),
        ("tooleval.latency_s", payload.get("latency_s", 0.0)),
        ("tooleval.prompt_tokens", prompt), ("tooleval.completion_tokens", completion),
    ]
    if payload.get("revision"):  # the benchmark revision the sample was scored against
        properties.insert(1, ("tooleval.revision", payload["revision"]))
    # as text, which JUnit writes anyway: xdist's pipe refuses some numbers an endpoint may report (below -2**31)
    return [(name, str(value)) for name, value in properties]


def skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def _printable(text: str) -> str:
    """Control characters other than newline and tab as escapes: model output must not drive the terminal."""
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", text)


def _trim(text: str, limit: int = FAILURE_TEXT_LIMIT) -> str:
    return clip(text, limit)


def describe_failure(case: Case, result: SampleResult, scorer: str) -> str:
    verdict = result.verdict
    where = f"{case.language}/{case.id}" if case.language in case.marks else case.id  # a suite of one language
    lines = [f"{case.suite} {where}: {verdict.error_type or 'invalid'} (scorer: {scorer})"]
    if verdict.error not in (None, "", []):
        lines.append(f"  error:    {_trim(_show(verdict.error))}")
    if case.expected_text:
        lines.append(f"  expected: {_trim(case.expected_text)}")
    if verdict.calls is not None:
        lines.append(f"  decoded:  {_trim(_show(verdict.calls))}")
    for key, value in verdict.details.items():
        if key == FIXED_VALID or key.startswith(QUIET_DETAIL):  # said in the note below; the report's alone
            continue
        lines.append(f"  {key}: {_trim(_show(value))}")
    lines.append(f"  output:   {_trim(_show(result.output))}")
    asked, called = result.tool_answers.get("asked", 0), result.tool_answers.get("called", 0)
    if asked and not called:  # fc mode: the words were decoded as a text call list, which reads oddly unexplained
        lines.append(f"  tool calls: none in {counted(asked, 'answer')} to requests that offered "
                     "the functions as tools: the words were scored as the text protocol scores an answer")
    if result.finish_reason == "length":  # a wrong answer may only be an unfinished one
        lines.append("  finish_reason: length (the answer stopped at max_tokens; scored as it is, as upstream does)")
    elif result.cut:
        counts = ", ".join(f"{role} {count}" for role, count in result.cut.items())
        lines.append(f"  finish_reason: length in {counted(sum(result.cut.values()), 'answer')} ({counts}): they "
                     "stopped at max_tokens; scored as they are, as upstream does")
    other = verdict.valid if scorer == "fixed" else verdict.fixed
    if other is not None and other != (verdict.fixed if scorer == "fixed" else verdict.valid):
        other_name = "official" if scorer == "fixed" else "fixed"
        lines.append(f"  note: the {other_name} scorer says {'valid' if other else 'invalid'}")
    return "\n".join(lines)


def _show(value: object) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)
