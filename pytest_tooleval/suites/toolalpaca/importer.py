"""Reading upstream judge outputs (``evalution_outputs/*.json``, sic) and summarising them (toolalpaca-gpt4tools §3.2).

Such a file maps each API name to a list of per-instruction entries and carries upstream's own
``statistics``. A judged entry holds the judge prompt (``input``, a one-message chat), the judge's text
(``output``) and the two parsed words; an entry with an empty ``input`` is an instruction that never reached
the judge. The older 13B file has no ``id`` fields; position stands in for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...data.files import read_json
from ...errors import DataError
from ...json_value import JSONObject
from .episode import Step
from .judge import Judgement, parse_judge_output
from .scoring import Summary, summarise

__all__ = ["JudgedEntry", "JudgedFile", "load_judged", "parse_solution"]


@dataclass(frozen=True)
class JudgedEntry:
    """One instruction of an upstream judge file.

    Attributes:
        api: the API name (the file's key).
        index: the instruction index (``id``, or the position when the file has no ids).
        judgement: the stored verdict words (what upstream counted).
        reparsed: the words our parser reads from the stored judge text (None when not judged).
    """

    api: str
    index: int
    judgement: Judgement
    reparsed: tuple[str, str] | None

    @property
    def prompt(self) -> str | None:
        return self.judgement.prompt


@dataclass(frozen=True)
class JudgedFile:
    path: Path
    entries: tuple[JudgedEntry, ...]
    statistics: JSONObject | None  # the file's own block, as written

    def summary(self) -> Summary:
        return summarise(entry.judgement for entry in self.entries)


def load_judged(path: Path | str) -> JudgedFile:
    """Read an upstream judge file.

    Raises:
        DataError: the file is missing or malformed; the message names the file, the API and the entry.
    """
    path = Path(path)
    raw = read_json(path)
    if not isinstance(raw, dict):
        raise DataError(f"{path}: expected a JSON object keyed by API name")
    entries: list[JudgedEntry] = []
    for api, items in raw.items():
        if api == "statistics":
            continue
        if not isinstance(items, list):
            raise DataError(f"{path}: {api!r}: expected a list of entries")
        for position, item in enumerate(items):
            entries.append(_entry(path, api, position, item))
    statistics = raw.get("statistics")
    return JudgedFile(path, tuple(entries), statistics if isinstance(statistics, dict) else None)


def _entry(path: Path, api: str, position: int, item: object) -> JudgedEntry:
    where = f"{path}: {api!r} entry [{position}]"
    if not isinstance(item, dict):
        raise DataError(f"{where}: expected a JSON object")
    index = item.get("id", position)
    if not isinstance(index, int) or isinstance(index, bool):
        raise DataError(f"{where}: id: expected an integer")
    messages = item.get("input", "")
    if messages in ("", None, []):
        return JudgedEntry(api, index, Judgement(judged=False), None)
    if not (isinstance(messages, list) and messages and isinstance(messages[0], dict)
            and isinstance(messages[0].get("content"), str)):
        raise DataError(f"{where}: input: expected a list of chat messages with text content")
    output = item.get("output")
    if not isinstance(output, str):
        raise DataError(f"{where}: output: expected the judge's text")
    process, response = item.get("process_correctness"), item.get("final_response_correctness")
    if not isinstance(process, str) or not isinstance(response, str):
        raise DataError(f"{where}: process_correctness/final_response_correctness: expected strings")
    judgement = Judgement(True, process, response, messages[0]["content"], output)
    return JudgedEntry(api, index, judgement, parse_judge_output(output))


def parse_solution(prompt: str, template: str) -> tuple[list[Step], str]:
    """Recover the trajectory from a rendered judge prompt: its tool steps and its final response.

    Args:
        prompt: a judge prompt rendered from `template` (prompts/Evaluation.txt).
        template: the judge template, whose text around ``${solution}`` delimits the solution section.

    Observations come back as the text the judge saw (a dict shows as its repr). Logs are not in the prompt
    and come back empty.

    Raises:
        ValueError: the prompt does not have the template's solution section or the numbered step layout.
    """
    head, _, tail = template.partition("${solution}")
    opening = head.rpartition("${standard}")[2]
    if not tail or not opening or not prompt.endswith(tail):
        raise ValueError("the template has no solution section, or the prompt does not end like the template")
    start = prompt.find(opening)
    if start == -1:
        raise ValueError("the prompt has no solution section")
    solution = prompt[start + len(opening) : len(prompt) - len(tail)]
    steps: list[Step] = []
    position, number = 0, 1
    while True:
        final_head = f"{number}. Final Response: "
        if solution.startswith(final_head, position):
            return steps, solution[position + len(final_head) :]
        step_head = f"{number}. Function: "
        if not solution.startswith(step_head, position):
            raise ValueError(f"step {number}: expected {step_head!r} at offset {position}")
        parameters = solution.find("\nParameters: ", position)
        returns = solution.find("\nRetruns: ", parameters)
        if parameters == -1 or returns == -1:
            raise ValueError(f"step {number}: no Parameters/Retruns lines")
        observation_start = returns + len("\nRetruns: ")
        ends = [
            found
            for found in (
                solution.find(f"\n{number + 1}. Function: ", observation_start),
                solution.find(f"\n{number + 1}. Final Response: ", observation_start),
            )
            if found != -1
        ]
        if not ends:
            raise ValueError(f"step {number}: nothing follows it")
        end = min(ends)
        steps.append(
            Step(
                tool=solution[position + len(step_head) : parameters],
                tool_input=solution[parameters + len("\nParameters: ") : returns],
                log="",
                observation=solution[observation_start:end],
            )
        )
        position, number = end + 1, number + 1
