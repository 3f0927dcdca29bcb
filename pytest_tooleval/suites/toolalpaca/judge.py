"""The GPT-4 judge: which episodes it sees, its prompt, and how its verdict is read (toolalpaca-gpt4tools §4)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .data import ToolAlpacaCase
from .episode import Episode
from .modelfn import ModelFn, ask
from .prompts import Prompts, render_judge_prompt

__all__ = [
    "JUDGE_MODEL",
    "JUDGE_TEMPERATURE",
    "VERDICT_WORDS",
    "Judgement",
    "judge_episode",
    "judge_messages",
    "parse_judge_output",
]

JUDGE_MODEL = "gpt-4-0613"
JUDGE_TEMPERATURE = 0.2
VERDICT_WORDS = ("Yes", "No", "Uncertain")

_PROCESS = re.compile(r"Process Correctness: (\w+)")
_RESPONSE = re.compile(r"Final Response Correctness: (\w+)")


@dataclass(frozen=True)
class Judgement:
    """The judge's decision on one instruction.

    Attributes:
        judged: False when the episode never reached the judge (a crash, or no tool step): upstream's error.
        process: the word after "Process Correctness: " ("" when absent); "" when not judged.
        response: the word after "Final Response Correctness: "; "" when not judged.
        prompt: the judge prompt sent, when judged.
        output: the judge's raw text, when judged.
    """

    judged: bool
    process: str = ""
    response: str = ""
    prompt: str | None = None
    output: str | None = None

    @property
    def unparsed(self) -> bool:
        """A judged episode whose verdict words are not Yes/No/Uncertain (upstream crashed on these, §6.2)."""
        return self.judged and (self.process not in VERDICT_WORDS or self.response not in VERDICT_WORDS)

    @property
    def correct(self) -> bool:
        """Both verdicts are Yes: the only outcome counted correct; Uncertain and unparsed are not."""
        return self.judged and self.process == "Yes" and self.response == "Yes"


def parse_judge_output(text: str) -> tuple[str, str]:
    """(process word, final-response word) from the judge's text, each "" when absent.

    Only the text after the first "## Results" heading is read (all of it when there is none).
    """
    results = text.split("## Results", 1)[-1]
    process = _PROCESS.search(results)
    response = _RESPONSE.search(results)
    return (process.group(1) if process else "", response.group(1) if response else "")


def judge_messages(case: ToolAlpacaCase, episode: Episode, prompts: Prompts) -> list[dict[str, str]]:
    """The judge request for a judgeable episode: one user message (§4.2, §4.3)."""
    if not episode.judgeable:
        raise ValueError("episodes that crashed or called no tool are not judged")
    prompt = render_judge_prompt(
        prompts.evaluation,
        documentation=case.api.record.NLDocumentation,
        instruction=case.instruction,  # without the authentication line
        gold=case.gold,
        steps=episode.steps,
        final_output=episode.output or "",
    )
    return [{"role": "user", "content": prompt}]


async def judge_episode(case: ToolAlpacaCase, episode: Episode, judge: ModelFn, prompts: Prompts) -> Judgement:
    """Judge one episode as upstream's evaluation.py does; episodes it would skip are not sent.

    Args:
        judge: the judge chat function (upstream: gpt-4-0613 at temperature 0.2).
    """
    if not episode.judgeable:
        # ToolAlpaca quirk: crashed episodes and answers without any tool call are errors, never judged, and
        # still count in the denominator (toolalpaca-gpt4tools §4.1)
        return Judgement(judged=False)
    messages = judge_messages(case, episode, prompts)
    answer = await ask(judge, messages)
    process, response = parse_judge_output(answer.text)
    return Judgement(True, process, response, messages[0]["content"], answer.text)
