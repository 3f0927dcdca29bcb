"""Per-instruction verdicts and the Procedure / Response / Overall table (toolalpaca-gpt4tools §4.4, §4.5)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ...verdict import Verdict
from .episode import Episode
from .judge import VERDICT_WORDS, Judgement

__all__ = ["DOCUMENTED_SUFFIX", "UNPARSED", "Summary", "summarise", "verdict"]

UNPARSED = "unparsed"  # the count of judge words outside Yes/No/Uncertain
DOCUMENTED_SUFFIX = "-documented"  # the view of a subset without instructions whose gold is undocumented


def verdict(judgement: Judgement, episode: Episode | None = None) -> Verdict:
    """The Verdict of one instruction: valid iff the judge said Yes to both the process and the response.

    ``error_type`` is "" when valid, else the first reason: ``episode_error`` (crash), ``no_tool_call``,
    ``judge_unparsed``, ``process_<word>``, ``response_<word>``. ``details`` carries the two words and the
    episode's shape; ``process`` is 1.0/0.0 for the process verdict (None when not judged).
    """
    details: dict[str, object] = {
        "judged": judgement.judged,
        "process_correctness": judgement.process,
        "final_response_correctness": judgement.response,
    }
    calls = None
    error = None
    if episode is not None:
        details.update(steps=len(episode.steps), stopped=episode.stopped)
        calls = [{"tool": step.tool, "input": step.tool_input} for step in episode.steps]
        error = episode.error
    if not judgement.judged:
        kind = "episode_error" if episode is not None and episode.error is not None else "no_tool_call"
        return Verdict(False, kind, error, calls, None, details=details)
    if judgement.correct:
        return Verdict(True, "", None, calls, 1.0, details=details)
    if judgement.unparsed:
        kind = "judge_unparsed"
    elif judgement.process != "Yes":
        kind = f"process_{judgement.process.lower()}"
    else:
        kind = f"response_{judgement.response.lower()}"
    return Verdict(False, kind, judgement.output, calls, 1.0 if judgement.process == "Yes" else 0.0, details=details)


def _percent(count: int, total: int) -> float | None:
    return 100.0 * count / total if total else None


@dataclass(frozen=True)
class Summary:
    """Upstream's statistics for one set of instructions, and its three percentages.

    Attributes:
        num: instructions counted (the denominator: errors included).
        error_num: instructions never judged (crash or no tool step).
        process: judged count per process word: Yes, No, Uncertain, and ``unparsed``.
        response: the same for the final response.
        both: instructions with Yes for both.
    """

    num: int
    error_num: int
    process: dict[str, int] = field(default_factory=dict)
    response: dict[str, int] = field(default_factory=dict)
    both: int = 0

    @property
    def procedure_rate(self) -> float | None:
        """Procedure: process Yes over all instructions, in percent (None for an empty set)."""
        return _percent(self.process.get("Yes", 0), self.num)

    @property
    def response_rate(self) -> float | None:
        return _percent(self.response.get("Yes", 0), self.num)

    @property
    def overall_rate(self) -> float | None:
        return _percent(self.both, self.num)

    @property
    def unparsed(self) -> int:
        return max(self.process.get(UNPARSED, 0), self.response.get(UNPARSED, 0))

    def statistics(self) -> dict[str, int | dict[str, int]]:
        """Upstream's ``statistics`` block (plus ``unparsed`` counts only when there are any)."""
        def counts(table: dict[str, int]) -> dict[str, int]:
            shown = {word: table.get(word, 0) for word in VERDICT_WORDS}
            if table.get(UNPARSED):
                shown[UNPARSED] = table[UNPARSED]
            return shown

        return {
            "num": self.num,
            "error_num": self.error_num,
            "process": counts(self.process),
            "response": counts(self.response),
            "both": self.both,
        }

    def to_dict(self) -> dict[str, int | float | dict[str, int] | None]:
        return {
            **self.statistics(),
            "procedure": self.procedure_rate,
            "response_rate": self.response_rate,
            "overall": self.overall_rate,
        }


def summarise(judgements: Iterable[Judgement]) -> Summary:
    """Count judgements as evaluation.py does, with unexpected words counted as unparsed instead of crashing.

    The denominator is every instruction given, judged or not (maintainer, issue #13; §4.5).
    """
    num = error_num = both = 0
    process = {word: 0 for word in VERDICT_WORDS}
    response = {word: 0 for word in VERDICT_WORDS}
    for judgement in judgements:
        num += 1
        if not judgement.judged:
            error_num += 1
            continue
        process_key = judgement.process if judgement.process in VERDICT_WORDS else UNPARSED
        response_key = judgement.response if judgement.response in VERDICT_WORDS else UNPARSED
        process[process_key] = process.get(process_key, 0) + 1
        response[response_key] = response.get(response_key, 0) + 1
        both += judgement.correct
    return Summary(num, error_num, process, response, both)
