"""An ACEBench report's answers scored under another revision (`python -m pytest_tooleval rescore`, report/rescore.py).

Each row's answer is scored by the suite itself (`AceBenchSuite.score`) against the cases of both revisions' verified
data: under the report's revision (the "before", as this plugin scores it) and under the target one. Where the answer
comes from:

- a text answer of a normal or special sample: the row's `output`, unless the report cut it (transport.OUTPUT_LIMIT);
- a function-calling answer of a normal sample is scored from its tool calls, which the row does not keep, and a cut
  output: from the model's source (the oracle, the replay file) or the response cache, never asked again;
- an agent rollout: its transcript played again through the environments (agent_runner.replay_transcript), which
  must give the same transcript; the end state is then the run's, graded against the new ground truth.

A sample whose prompt changed between the revisions (the messages the suite sends, or an agent sample's record) is
scored on its answer to the old prompt and marked so (`rescore.answered` in its row), or, with `ask`, asked again.
A row that cannot be rescored faithfully keeps its verdict and says why.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...errors import MalformedReply, ToolevalError, ToolevalUsageError
from ...models.base import REPEAT
from ...models.factory import NotCached
from ...outcome import UNSCORED, Answer, SampleResult, malformed_result, over_time_result
from ...report.rescoring import RescoreContext, RowRescore, SuiteRescore
from ...run import deadline
from ...text import clip
from ...transport import OUTPUT_LIMIT, error_payload, result_payload
from ...verdict import Verdict
from . import data
from .categories import ALL_CATEGORIES
from .revisions import REVISIONS, Revision, revision
from .suite import AceBenchSuite

#: the row fields a verdict sets (transport.result_payload); the rest of a rescored row is the run's
VERDICT_FIELDS = ("outcome", "valid", "error_type", "error", "calls", "process", "details")
_CLIPPED = re.compile(r"\.\.\. \[\d+ more characters\]")


class _Carried(Exception):
    """The row cannot be rescored faithfully; the message says why."""


@dataclass
class _Side:
    """One revision: its verified data, the suite scoring against it, its cases by (language, category, id)."""

    revision: Revision
    root: Path
    suite: AceBenchSuite
    cases: dict[tuple[str, str], dict[str, data.AceCase]] = field(default_factory=dict)

    def case(self, row: dict[str, object]) -> data.AceCase | None:
        language, category = str(row["language"]), str(row["category"])
        if category not in ALL_CATEGORIES:
            return None
        if (language, category) not in self.cases:
            self.cases[language, category] = {case.id: case for case in data.load_category(self.root, language,
                                                                                           category)}
        case = self.cases[language, category].get(str(row["id"]))
        if case is None:
            return None
        return replace(case, mode="fc" if row.get("variant") == "fc" else "prompt", revision=self.revision.name)


def rescore_rows(rows: list[dict[str, Any]], block: dict[str, Any], target: str,
                 context: RescoreContext) -> SuiteRescore:
    """The ACEBench rows of a report (fingerprint block `block`) rescored to revision `target`."""
    languages = tuple(sorted({str(row["language"]) for row in rows}))
    sides: dict[str, _Side] = {}

    def side(name: str) -> _Side:
        if name not in sides:
            try:
                folder = data.locate(context.data_dir, context.cache_dir, context.offline, name)
            except ToolevalUsageError as exc:  # DataError too: one line, with this command's options
                both = " and ".join(f"{known.folder}/ ({known.name})" for known in REVISIONS)
                raise ToolevalUsageError(f"rescore: ACEBench {name}'s data: {_said_here(str(exc))} (a rescore reads "
                                         f"both revisions': a --data-dir holding {both} has them)") from None
            sides[name] = _Side(folder.revision, folder.root, AceBenchSuite(
                folder.root, languages, max_dialog_turns=int(block.get("max_dialog_turns") or 40),
                step_prompts=str(block.get("agent_step_prompts") or "upstream"),
                sampling=block.get("model_sampling") or {}, mode=str(block.get("mode") or "prompt"),
                revision=folder.revision))
        return sides[name]

    source = revision(str(block.get("revision") or REVISIONS[0].name)).name
    old, new = side(source), side(target)
    work = _Rescorer(old, new, side, context)
    results = context.engine.run(work.all(rows))
    from ...data.download import manifest_sha256

    fingerprint = {**block, "revision": new.revision.name, "data_verified": True,
                   "data_manifest_sha256": manifest_sha256(new.root)}
    notes = [] if block.get("data_verified") is not False else [
        f"the report's run read ACEBench data that matched no pinned revision (--tooleval-data-unverified): its "
        f"answers were scored here as answers to {source}'s prompts, which its data may not have held"]
    return SuiteRescore(old.revision.name, new.revision.name, results, fingerprint, notes)


@dataclass
class _Rescorer:
    old: _Side
    new: _Side
    side: Callable[[str], _Side]  # revision name -> _Side
    context: RescoreContext
    slots: asyncio.Semaphore | None = None

    @property
    def _run_revision(self) -> str:
        """The revision the report's run answered under (a rescore's answers are still that run's)."""
        return self.context.answered.get("acebench") or self.old.revision.name

    async def all(self, rows: list[dict[str, object]]) -> list[RowRescore]:
        self.slots = asyncio.Semaphore(max(1, self.context.concurrency))
        plans = [self._plan(row) for row in rows]
        if self.context.ask and any(plan[3] for plan in plans):
            self.context.access(True)  # a model that cannot be asked: one line, before anything is
        return list(await asyncio.gather(*(self._row(row, *plan) for row, plan in zip(rows, plans, strict=True))))

    def _plan(self, row: dict[str, object]) -> tuple[data.AceCase | None, data.AceCase | None,
                                                     data.AceCase | None, bool]:
        """The row's case under the report's revision, under the target, and under the revision whose prompt its
        answer answers (the report's, or an earlier rescore's); whether the target asks it differently."""
        answered = _answered(row) or self._run_revision
        old_case, new_case = self.old.case(row), self.new.case(row)
        if answered not in (known.name for known in REVISIONS):
            return old_case, new_case, None, False
        prompt_side = self.side(answered)
        prompt_case = prompt_side.case(row)
        changed = (prompt_case is not None and new_case is not None
                   and _prompt(prompt_case, prompt_side) != _prompt(new_case, self.new))
        return old_case, new_case, prompt_case, changed

    async def _row(self, row: dict[str, object], old_case: data.AceCase | None, new_case: data.AceCase | None,
                   prompt_case: data.AceCase | None, changed: bool) -> RowRescore:
        if new_case is None or old_case is None or prompt_case is None:
            missing = self.new.revision.name if new_case is None else self.old.revision.name
            return _carry(row, f"no such sample in ACEBench {missing}'s data", changed)
        if changed and self.context.ask:
            return await self._asked(row, new_case)
        # an error has no answer to score: it stays one; nor has a malformed reply, which stays a failure, as does
        # an answer whose scoring passed its time limit
        if row.get("outcome") not in ("passed", "failed") or row.get("error_type") in UNSCORED:
            kept = {**row, "revision": new_case.revision}
            kept.pop("data_unverified", None)
            return RowRescore(row, _marked(kept, changed, prompt_case.revision, self._run_revision),
                              prompt_changed=changed, answered=prompt_case.revision)
        try:
            answer = await self._old_answer(row, prompt_case)
            before, after = self._score(self.old, old_case, answer), self._score(self.new, new_case, answer)
        except _Carried as exc:
            return _carry(row, str(exc), changed)
        scorer = self.context.scorer
        reasons: list[str] = []
        if before.passed(scorer) != after.passed(scorer):
            # which change alone flips it: the target's data under the old evaluator, the old data under the new
            data_flips = self._score(self.old, new_case, answer).passed(scorer) != before.passed(scorer)
            decoder_flips = self._score(self.new, old_case, answer).passed(scorer) != before.passed(scorer)
            reasons = ["prompt changed"] if changed else []  # a new function list is part of the prompt
            if data_flips and old_case.answer != new_case.answer:
                reasons.append("new ground truth")
            if decoder_flips:
                reasons.append("new decoder")
            if not data_flips and not decoder_flips:
                reasons.append("new ground truth and decoder together")
        after_row = _marked(_scored(row, new_case, after, scorer), changed, prompt_case.revision, self._run_revision)
        return RowRescore(_scored(row, old_case, before, scorer), after_row, tuple(reasons), prompt_changed=changed,
                          answered=prompt_case.revision)

    def _score(self, side: _Side, case: data.AceCase, answer: Answer) -> Verdict:
        limit = self.context.score_timeout
        try:
            result = deadline.within(limit, lambda: side.suite.score(case, answer))
        except (ToolevalError, KeyError, TypeError, ValueError) as exc:
            raise _Carried(f"its answer cannot be scored again ({type(exc).__name__}: {exc})") from None
        except deadline.ScoringTimeLimit:
            raise _Carried(f"its scoring again passed the {limit:g} s limit (--tooleval-score-timeout)") from None
        assert isinstance(result, SampleResult)
        return result.verdict

    async def _old_answer(self, row: dict[str, object], case: data.AceCase) -> Answer:
        """The answer the run scored, from the row where it keeps it whole, else from the model's source."""
        side = self.side(case.revision)
        if case.family == "agent":
            return await self._rollout(row, case, side)
        output = row.get("output")
        cut = isinstance(output, str) and _cut(output)
        if isinstance(output, str) and not cut and (case.mode != "fc" or case.family == "special"):
            return Answer(output)  # a special answer is text in both protocols
        why = ("its output was cut at 20,000 characters in the report" if cut else
               "the report keeps no output for it" if not isinstance(output, str) else
               "a function-calling answer is scored from its tool calls, which the report does not keep")
        answer = await self._from_source(row, case, side, why)
        if clip(str(answer.output), OUTPUT_LIMIT) != output:
            raise _Carried(f"{why}, and the answer its source gives now differs from the report's output")
        return answer

    async def _rollout(self, row: dict[str, object], case: data.AceCase, side: _Side) -> Answer:
        from .agent_runner import replay_transcript

        transcript = row.get("transcript")
        why = "the report keeps no transcript of its rollout"
        if isinstance(transcript, list) and transcript:
            try:
                answer = await replay_transcript(case, transcript, side.suite.prompts, side.suite.max_dialog_turns,
                                                 side.suite.step_prompt_language)
            except (ToolevalError, KeyError, TypeError, ValueError) as exc:
                why = f"its transcript cannot be played again ({type(exc).__name__}: {exc})"
            else:
                if _plain(answer.transcript) == _plain(transcript):
                    return answer
                why = "its transcript, played again through the environments, does not come out the same"
        answer = await self._from_source(row, case, side, why)
        if isinstance(transcript, list) and transcript and _plain(answer.transcript) != _plain(transcript):
            raise _Carried(f"{why}, and the rollout its source gives now differs from the report's")
        return answer

    async def _from_source(self, row: dict[str, object], case: data.AceCase, side: _Side, why: str) -> Answer:
        """The answer again from where the run had it (the oracle, the replay file, the response cache), never
        asked: `_Carried` with `why` and what failed."""
        try:
            access = self.context.access(False)
        except ToolevalUsageError as exc:
            raise _Carried(f"{why}, and the model's answers cannot be looked up: {exc}") from None
        assert self.slots is not None
        async with self.slots:
            token = REPEAT.set(_int(row.get("repeat", 1)))
            try:
                return await side.suite.answer(case, access)
            except NotCached:
                raise _Carried(f"{why}, and the response cache does not hold it") from None
            except ToolevalError as exc:
                raise _Carried(f"{why}, and its source cannot give it again: {exc}") from None
            finally:
                REPEAT.reset(token)

    async def _asked(self, row: dict[str, object], case: data.AceCase) -> RowRescore:
        """A sample whose prompt changed, asked again under the target revision (the cache in front: an answer
        to the new prompt already there is not asked for twice)."""
        access = self.context.access(True)
        assert self.slots is not None
        size = _int(row["category_size"])
        after: dict[str, object]  # the verdict's fields, then the row's own the verdict does not set
        async with self.slots:
            token = REPEAT.set(_int(row.get("repeat", 1)))
            try:
                answer = await self.new.suite.answer(case, access)
                try:
                    result = deadline.within(self.context.score_timeout, lambda: self.new.suite.score(case, answer))
                except deadline.ScoringTimeLimit:
                    result = over_time_result(answer, self.context.score_timeout)
                assert isinstance(result, SampleResult)
                if answer.reasoning is not None and result.reasoning is None:
                    result = replace(result, reasoning=answer.reasoning)
                after = {**result_payload(case, size, result, self.context.scorer)}
            except MalformedReply as exc:  # what came back is the model's answer: a failure, as in a run
                failed = malformed_result(Answer(None, exc.latency_s, exc.tokens, malformed=exc.problem))
                after = {**result_payload(case, size, failed, self.context.scorer)}
            except ToolevalError as exc:
                after = {**error_payload(case, size, f"{type(exc).__name__}: {exc}")}
            finally:
                REPEAT.reset(token)
        for key in ("repeat", "quarantined"):
            if key in row:
                after[key] = row[key]
        mark = {"prompt_changed": True, "asked": True, "answered": case.revision}
        return RowRescore(row, {**after, "rescore": mark}, ("prompt changed",), prompt_changed=True, asked=True,
                          answered=case.revision)


def _scored(row: dict[str, object], case: data.AceCase, verdict: Verdict, scorer: str) -> dict[str, object]:
    """`row` with the verdict's fields, scored against `case`'s revision."""
    fields = result_payload(case, _int(row["category_size"]), SampleResult(verdict, row.get("output")), scorer)
    scored = {**row, **{key: fields.get(key) for key in VERDICT_FIELDS}, "revision": case.revision}
    scored.pop("data_unverified", None)
    scored.pop("rescore", None)
    scored.pop("fixed_valid", None)  # an older report's, at the top of the row: the verdict's details hold it now
    return scored


def _marked(row: dict[str, object], changed: bool, answered: str, run_revision: str) -> dict[str, object]:
    """A row whose answer is to another revision's prompt says so and which, as does a row answered under another
    revision than the run's (asked again by an earlier rescore): a later rescore reads it."""
    marked = {key: value for key, value in row.items() if key != "rescore"}
    if changed:
        marked["rescore"] = {"prompt_changed": True, "asked": False, "answered": answered}
    elif answered != run_revision:
        marked["rescore"] = {"answered": answered}
    return marked


def _answered(row: dict[str, object]) -> str | None:
    mark = row.get("rescore")
    answered = mark.get("answered") if isinstance(mark, dict) else None
    return answered if isinstance(answered, str) else None


def _carry(row: dict[str, object], reason: str, changed: bool) -> RowRescore:
    """A row not rescored: its verdict is the report's, and it says so (its `revision` stays the one it was
    scored against, so the summary names both)."""
    rescore = row.get("rescore")
    mark: dict[str, object] = rescore if isinstance(rescore, dict) else {}
    return RowRescore(row, {**row, "rescore": {**mark, "not_rescored": reason}}, carried=reason,
                      prompt_changed=changed)


def _prompt(case: data.AceCase, side: _Side) -> object:
    """What the model is shown for `case` under `side`'s revision: the messages (and tools) of a normal or
    special sample, an agent sample's whole record (its rollout starts from it)."""
    from .agent_runner import agent_tools
    from .prompts import fc_single_turn_messages, single_turn_messages

    if case.family == "agent":
        return case.record
    try:
        if case.mode == "fc":
            tools = agent_tools(case.record["function"])
            return [fc_single_turn_messages(case, side.suite.prompts, tools), list(tools.tools)]
        return single_turn_messages(case, side.suite.prompts)
    except (ToolevalError, KeyError, TypeError, ValueError):
        return case.record


def _said_here(message: str) -> str:
    """A data error's fix in this command's options (the plugin's messages name its own)."""
    message = re.sub(r"pass --tooleval-acebench-revision \S+ to score against it, or ", "", message)
    message = message.replace(" (the default)", "")
    return message.replace("--tooleval-data-dir", "--data-dir").replace("--tooleval-offline", "--offline") \
        .replace("--tooleval-data-unverified", "--tooleval-data-unverified (not for a rescore)")


def _int(value: object) -> int:
    """A count the report's schema checked: an integer, or a float without a fraction, which it lets through."""
    if isinstance(value, (int, float)):
        return int(value)
    raise TypeError(f"int() argument must be a string, a bytes-like object or a real number, not "
                    f"'{type(value).__name__}'")


def _cut(output: str) -> bool:
    return len(output) > OUTPUT_LIMIT and _CLIPPED.fullmatch(output[OUTPUT_LIMIT:]) is not None


def _plain(value: object) -> object:
    """As the report holds it: JSON values, a non-finite number as null (json_report.strict_plain)."""
    text = json.dumps(value, default=str, allow_nan=True)
    return json.loads(text, parse_constant=lambda _constant: None)
