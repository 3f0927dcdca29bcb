"""What running one sample produced, before pytest turns it into passed / failed / error."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import InternalError, MalformedReply, SampleError
from .text import plain_data, plain_text
from .verdict import Verdict

__all__ = ["SCORING_TIME_LIMIT", "UNSCORED", "Answer", "InternalError", "SampleError", "SampleResult",
           "malformed_result", "over_time_result"]

# the error_type of a sample whose scoring passed --tooleval-score-timeout (run/deadline.py)
SCORING_TIME_LIMIT = "scoring_time_limit"
# failures no suite scored (a malformed reply, scoring over its time): a suite's own metrics are absent
UNSCORED = frozenset({MalformedReply.error_type, SCORING_TIME_LIMIT})


@dataclass(frozen=True)
class Answer:
    """What the model side produced for one sample, before scoring."""

    output: Any  # the raw output text, or the agent's messages
    latency_s: float = 0.0
    tokens: dict[str, int] = field(default_factory=dict)
    transcript: Sequence[Mapping[str, object]] | None = None
    state: Any = None  # what scoring needs besides the output (an agent rollout's end state, an episode record)
    reasoning: str | None = None  # the model's reasoning beside its answer: reported, never scored
    # the part of `tokens` the response cache served (an earlier run paid for it); set by the session, not suites
    cached_tokens: dict[str, int] = field(default_factory=dict)
    # how the replies ended (models/meter.py SampleReplies), set by the session too: the model's finish_reason
    # when it was asked once, the replies cut at max_tokens per role, {"asked", "called"} of requests with tools
    finish_reason: str | None = None
    cut: dict[str, int] = field(default_factory=dict)
    tool_answers: dict[str, int] = field(default_factory=dict)
    # where the answer came from (set by the session): "asked", "cache" (every reply the response cache's) or
    # "replay"; for cached replies, when the oldest was made and the runs that asked them (models/cache.py)
    source: str | None = None
    cached_at: float | None = None
    cached_runs: tuple[str, ...] = ()
    # set by the session, never by a suite: what was wrong with the model's reply, malformed every time it was
    # asked (errors.MalformedReply); the sample then fails without being scored (`malformed_result`)
    malformed: str | None = None


@dataclass(frozen=True)
class SampleResult:
    verdict: Verdict
    output: Any = None  # the raw model output (text), or the agent's messages
    latency_s: float = 0.0
    tokens: dict[str, int] = field(default_factory=dict)
    transcript: Sequence[Mapping[str, object]] | None = None
    reasoning: str | None = None  # as Answer.reasoning
    cached_tokens: dict[str, int] = field(default_factory=dict)  # as Answer.cached_tokens
    finish_reason: str | None = None  # as Answer.finish_reason
    cut: dict[str, int] = field(default_factory=dict)  # as Answer.cut
    tool_answers: dict[str, int] = field(default_factory=dict)  # as Answer.tool_answers
    source: str | None = None  # as Answer.source
    cached_at: float | None = None  # as Answer.cached_at
    cached_runs: tuple[str, ...] = ()  # as Answer.cached_runs

    def plain(self) -> SampleResult:
        """This result with every text of it `plain_text`: what a scorer decoded from the model's words (a call
        whose string argument spelled a lone surrogate half) must reach the failure message, xdist's pipe and
        the report whole (docs/reliability.md)."""
        verdict = self.verdict
        return dataclasses.replace(
            self, output=plain_data(self.output), transcript=plain_data(self.transcript),
            reasoning=None if self.reasoning is None else plain_text(self.reasoning),
            finish_reason=None if self.finish_reason is None else plain_text(self.finish_reason),
            verdict=dataclasses.replace(verdict, error_type=plain_text(verdict.error_type),
                                        error=plain_data(verdict.error), calls=plain_data(verdict.calls),
                                        details=plain_data(verdict.details)))


def malformed_result(answer: Answer) -> SampleResult:
    """The failing result of an answer whose reply was malformed (`Answer.malformed`): the same in every suite,
    which never scores it; the sample's tokens, latency and what the session learnt of its replies are kept."""
    verdict = Verdict(False, MalformedReply.error_type, f"malformed reply: {answer.malformed}")
    return SampleResult(verdict, answer.output, answer.latency_s, answer.tokens, answer.transcript, answer.reasoning,
                        answer.cached_tokens, answer.finish_reason, answer.cut, answer.tool_answers,
                        source=answer.source, cached_at=answer.cached_at, cached_runs=tuple(answer.cached_runs))


def over_time_result(answer: Answer, seconds: float) -> SampleResult:
    """The failing result of an answer whose scoring took longer than `seconds`: the same in every suite, and
    in the denominator as any wrong answer; what the session learnt of its replies is kept."""
    verdict = Verdict(False, SCORING_TIME_LIMIT,
                      f"scoring stopped at the {seconds:g} s limit (--tooleval-score-timeout): counted as wrong")
    return SampleResult(verdict, answer.output, answer.latency_s, answer.tokens, answer.transcript, answer.reasoning,
                        answer.cached_tokens, answer.finish_reason, answer.cut, answer.tool_answers,
                        source=answer.source, cached_at=answer.cached_at, cached_runs=tuple(answer.cached_runs))


@dataclass(frozen=True)
class Skipped:
    """A sample that is not evaluated in this run, and why (its test skips with the reason). A value, not an
    exception: it may come from `answer` (decided while answering) or `score`, and travels between processes."""

    reason: str
