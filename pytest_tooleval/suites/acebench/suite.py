"""The ACEBench suite: list cases, answer one case, score it, summarise a run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...models.access import ModelAccess
from ...outcome import SampleError, SampleResult
from . import data
from .prompts import single_turn_messages
from .scoring import render_ground_truth, score_normal, score_special


class AceBenchSuite:
    name = "acebench"

    def __init__(self, root: Path) -> None:
        self.root = root
        self.prompts = data.load_prompts(root)

    def cases(self, languages: tuple[str, ...], categories: tuple[str, ...]) -> list[data.AceCase]:
        return data.select(self.root, languages, categories)

    async def run(self, case: data.AceCase, access: ModelAccess) -> SampleResult:
        if case.family == "agent":
            from .agent_runner import run_agent_case  # rollouts pull in the environments: load them lazily

            return await run_agent_case(case, access, self.prompts)
        output, latency, tokens = await self._single_answer(case, access)
        return SampleResult(score(case, output), output, latency, tokens)

    async def _single_answer(self, case: data.AceCase, access: ModelAccess) -> tuple[str, float, dict[str, int]]:
        if access.kind == "oracle":
            return render_ground_truth(case.ground_truth, case.category), 0.0, {}
        if access.kind == "replay":
            assert access.replay is not None
            row = access.replay.lookup(case.language, case.id)
            if row is None or "result" not in row:
                raise SampleError(f"no recorded output for {case.language}/{case.id} in {access.replay.source}")
            result = row["result"]
            return (result if isinstance(result, str) else str(result)), 0.0, {}
        assert access.chat is not None
        reply = await access.chat(single_turn_messages(case, self.prompts))
        tokens = {
            key: value
            for key, value in (("prompt", reply.prompt_tokens), ("completion", reply.completion_tokens))
            if value is not None
        }
        return reply.text, reply.latency_s, tokens


def score(case: data.AceCase, output: str) -> Any:
    """The official verdict (with the fixed-mode verdict alongside) for one normal or special output."""
    if case.family == "special":
        return score_special(case.category, case.ground_truth, output)
    return score_normal(case.record["function"], case.ground_truth, output)
