"""The ACEBench suite: list cases, answer one case, score it, summarise a run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...models.access import ModelAccess
from ...models.meter import reply_tokens
from ...outcome import Answer, SampleError, SampleResult
from ...text import THINK_END
from . import data
from .prompts import check_prompts, single_turn_messages
from .scoring import render_ground_truth, score_normal, score_special


class AceBenchSuite:
    name = "acebench"

    def __init__(self, root: Path, languages: tuple[str, ...] = ("en",), categories: tuple[str, ...] = (), *,
                 max_dialog_turns: int = 40, step_prompts: str = "upstream",
                 sampling: dict[str, dict[str, Any]] | None = None) -> None:
        self.root = root
        self.languages = languages
        self.categories = categories
        self.prompts = data.load_prompts(root)
        check_prompts(self.prompts, languages, root / "prompts.json")  # a missing template: one line, now
        self.max_dialog_turns = max_dialog_turns
        # ACEBench quirk: its API-model runner builds the multi_step agent without a language, so it gets
        # the zh prompts on en data too (acebench-agent §6); "data" uses the sample's language instead.
        self.step_prompt_language = "zh" if step_prompts == "upstream" else None
        self.sampling = sampling or {}  # --tooleval-sampling upstream: {"single": {...}, "agent": {...}}

    def cases(self) -> list[data.AceCase]:
        return data.select(self.root, self.languages, self.categories)

    async def answer(self, case: data.AceCase, access: ModelAccess) -> Answer:
        """Everything that talks to a model (runs on the engine's loop)."""
        if case.family == "agent":
            from .agent_runner import (
                run_agent_case,  # rollouts pull in the environments: load them lazily
            )

            return await run_agent_case(case, access, self.prompts, self.root, self.max_dialog_turns,
                                        self.step_prompt_language, self.sampling.get("agent", {}))
        output, latency, tokens, reasoning = await self._single_answer(case, access)
        return Answer(output, latency, tokens, reasoning=reasoning)

    def score(self, case: data.AceCase, answer: Answer) -> SampleResult:
        """Pure scoring (runs in the test's own thread)."""
        if case.family == "agent":
            from .agent_runner import grade_agent_case

            verdict = grade_agent_case(case, answer)
        elif case.family == "special":
            verdict = score_special(case.category, case.ground_truth, answer.output)
        else:
            verdict = score_normal(case.record["function"], case.ground_truth, answer.output)
        return SampleResult(verdict, answer.output, answer.latency_s, answer.tokens, answer.transcript)

    async def _single_answer(self, case: data.AceCase,
                             access: ModelAccess) -> tuple[str, float, dict[str, int], str | None]:
        if access.kind == "oracle":
            return render_ground_truth(case.ground_truth, case.category), 0.0, {}, None
        if access.kind == "replay":
            assert access.replay is not None
            row = access.replay.lookup(case.language, case.id)
            if row is None or "result" not in row:
                raise SampleError(f"no recorded output for {case.language}/{case.id} in {access.replay.source}")
            result = row["result"]
            return (result if isinstance(result, str) else str(result)), 0.0, {}, None
        assert access.chat is not None
        reply = await access.chat(single_turn_messages(case, self.prompts), **self.sampling.get("single", {}))
        text = reply.text
        if "deepseek-r1" in access.model:  # upstream's API runner, by name (acebench-scoring §2.3)
            text = after_think(text, reasoning_apart=reply.reasoning is not None)
        return text, reply.latency_s, reply_tokens(reply), reply.reasoning




def after_think(text: str, *, reasoning_apart: bool = False) -> str:
    """What follows the first `</think>`, stripped: what upstream keeps of a deepseek-r1 answer. Upstream's
    runner fails on an answer with no `</think>` (its retries give up and raise): an error of the sample,
    unless the reasoning came apart from the answer (an endpoint's `reasoning_content`, or
    --tooleval-reasoning strip), when the answer already is what the cut would leave."""
    end = text.find(THINK_END)
    if end < 0 and reasoning_apart:
        return text.strip()
    if end < 0:
        raise SampleError(f"a deepseek-r1 answer without {THINK_END}: ACEBench's runner cannot use it (it asks "
                          "again, then stops)")
    return text[end + len(THINK_END):].strip()
