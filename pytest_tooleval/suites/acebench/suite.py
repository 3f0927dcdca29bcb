"""The ACEBench suite: list cases, answer one case, score it, summarise a run."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from ...models.access import ModelAccess
from ...models.meter import reply_tokens
from ...outcome import Answer, SampleError, SampleResult
from ...text import THINK_END
from . import data
from .fc import ToolSet
from .prompts import check_prompts, single_turn_messages
from .revisions import DEFAULT, Revision
from .revisions import revision as pinned_revision
from .scoring import ground_truth_calls, render_ground_truth, score_normal, score_normal_tool_calls, score_special
from .tool_calls import written_calls


class AceBenchSuite:
    name = "acebench"

    def __init__(self, root: Path, languages: tuple[str, ...] = ("en",), categories: tuple[str, ...] = (), *,
                 max_dialog_turns: int = 40, step_prompts: str = "upstream",
                 sampling: dict[str, dict[str, object]] | None = None, mode: str = "prompt",
                 revision: Revision | None = None, data_verified: bool = True) -> None:
        self.root = root
        self.revision = revision or pinned_revision(DEFAULT)  # the evaluator behaviour scoring reproduces
        self.data_verified = data_verified  # False: --tooleval-data-unverified (rows and titles say so)
        self.languages = languages
        self.categories = categories
        self.prompts = data.load_prompts(root)
        check_prompts(self.prompts, languages, root / "prompts.json")  # a missing template: one line, now
        self.max_dialog_turns = max_dialog_turns
        # ACEBench quirk: its API-model runner builds the multi_step agent without a language, so it gets
        # the zh prompts on en data too (acebench-agent §6); "data" uses the sample's language instead.
        self.step_prompt_language = "zh" if step_prompts == "upstream" else None
        self.sampling = sampling or {}  # --tooleval-sampling upstream: {"single": {...}, "agent": {...}}
        self.mode = mode  # --tooleval-mode: prompt, fc or both

    def cases(self) -> list[data.AceCase]:
        return data.select(self.root, self.languages, self.categories, self.mode, self.revision.name,
                           unverified=not self.data_verified)

    async def oracle(self, case: data.AceCase) -> Answer:
        """The ground truth as a perfect model answers it; an agent sample plays its gold calls through its
        environment (agent_runner.py, with an oracle access)."""
        if case.family == "agent":
            return await self._agent_answer(case, ModelAccess("oracle"))
        if case.mode == "fc":
            from .agent_runner import agent_tools

            tools = agent_tools(case.record["function"])
            return _fc_answer(*_oracle_fc_answer(case, tools), tools)
        return Answer(render_ground_truth(case.ground_truth, case.category))

    async def replayed(self, case: data.AceCase, row: Mapping[str, object], access: ModelAccess) -> Answer:
        """A recorded output (`result`; under fc `tool_calls` and `content`); an agent sample's recorded messages
        are played through its environment again."""
        if case.family == "agent":
            return await self._agent_answer(case, access)
        assert access.replay is not None
        if case.mode == "fc":
            from .agent_runner import agent_tools, recorded_tool_calls

            if "tool_calls" not in row and "result" not in row:
                raise SampleError(f"no recorded tool_calls or output for {case.language}/{case.id} in "
                                  f"{access.replay.source}")
            calls = recorded_tool_calls(row.get("tool_calls"), f"{access.replay.source}: {case.language}/{case.id}")
            result = row.get("content", row.get("result", ""))
            return _fc_answer(result if isinstance(result, str) else str(result), calls,
                              agent_tools(case.record["function"]))
        if "result" not in row:
            raise SampleError(f"no recorded output for {case.language}/{case.id} in {access.replay.source}")
        result = row["result"]
        return Answer(result if isinstance(result, str) else str(result))

    async def answer(self, case: data.AceCase, access: ModelAccess) -> Answer:
        """Everything that talks to a live model (runs on the engine's loop)."""
        if case.family == "agent":
            return await self._agent_answer(case, access)
        if case.mode == "fc":
            return await self._fc_single_answer(case, access)
        output, latency, tokens, reasoning = await self._single_answer(case, access)
        return Answer(output, latency, tokens, reasoning=reasoning)

    async def _agent_answer(self, case: data.AceCase, access: ModelAccess) -> Answer:
        # rollouts pull in the environments: load them lazily
        from .agent_runner import run_agent_case, run_fc_agent_case

        run = run_fc_agent_case if case.mode == "fc" else run_agent_case
        return await run(case, access, self.prompts, self.root, self.max_dialog_turns, self.step_prompt_language,
                         self.sampling.get("agent", {}))

    def score(self, case: data.AceCase, answer: Answer) -> SampleResult:
        """Pure scoring (runs in the test's own thread)."""
        if case.family == "agent":
            from .agent_runner import grade_agent_case

            verdict = grade_agent_case(case, answer)
        elif case.family == "special":
            verdict = score_special(case.category, case.ground_truth, answer.output)
        elif case.mode == "fc" and answer.state["tool_calls"]:
            verdict = score_normal_tool_calls(case.record["function"], case.ground_truth, answer.state["tool_calls"],
                                              answer.state["names"])
        elif case.mode == "fc":  # a text answer: scored as in the text protocol
            verdict = score_normal(case.record["function"], case.ground_truth, answer.state["content"],
                                   self.revision.decoding(case.category))
        else:
            verdict = score_normal(case.record["function"], case.ground_truth, answer.output,
                                   self.revision.decoding(case.category))
        return SampleResult(verdict, answer.output, answer.latency_s, answer.tokens, answer.transcript)

    async def _single_answer(self, case: data.AceCase,
                             access: ModelAccess) -> tuple[str, float, dict[str, int], str | None]:
        assert access.chat is not None
        reply = await access.chat(single_turn_messages(case, self.prompts), **self.sampling.get("single", {}))
        text = reply.text
        if "deepseek-r1" in access.model:  # upstream's API runner, by name (acebench-scoring §2.3)
            text = after_think(text, reasoning_apart=reply.reasoning is not None)
        return text, reply.latency_s, reply_tokens(reply), reply.reasoning

    async def _fc_single_answer(self, case: data.AceCase, access: ModelAccess) -> Answer:
        """A normal or special sample in function-calling mode: the functions as `tools`, the conversation as
        messages; the answer keeps the tool calls as sent (scored from them) and the text beside them."""
        from .agent_runner import agent_tools
        from .prompts import fc_single_turn_messages

        tools = agent_tools(case.record["function"])
        assert access.chat is not None
        reply = await access.chat(fc_single_turn_messages(case, self.prompts, tools), tools=tools.tools,
                                  **self.sampling.get("single", {}))
        return _fc_answer(reply.text, tuple(call.to_json() for call in reply.tool_calls), tools, reply.latency_s,
                          reply_tokens(reply), reply.reasoning)


def _fc_answer(content: str, calls: Sequence[Mapping[str, str]], tools: ToolSet, latency: float = 0.0,
               tokens: dict[str, int] | None = None, reasoning: str | None = None) -> Answer:
    """A function-calling answer: scored from its calls as sent and the text beside them."""
    state = {"tool_calls": [dict(call) for call in calls], "content": content, "names": dict(tools.names)}
    return Answer(shown_answer(content, calls, tools), latency, tokens or {}, state=state, reasoning=reasoning)


def _oracle_fc_answer(case: data.AceCase, tools: ToolSet) -> tuple[str, tuple[dict[str, str], ...]]:
    """What a perfect function-calling model answers: the first ground-truth alternative as tool_calls, and the
    special categories' sentence as text (they answer in words in both protocols)."""
    if case.family == "special":
        return render_ground_truth(case.ground_truth, case.category), ()
    truth = case.ground_truth
    alternative = truth[0] if isinstance(truth, list) else truth
    calls = tuple({"id": f"call_{n}", "name": tools.tool_name(name), "arguments": json.dumps(arguments,
                                                                                              ensure_ascii=False)}
                  for n, call in enumerate(ground_truth_calls(alternative)) for name, arguments in call.items())
    return "", calls


def shown_answer(content: str, calls: Sequence[Mapping[str, str]], tools: ToolSet) -> str:
    """A function-calling answer as one text: the text, then the calls in the text protocol's form (their raw
    arguments when they do not parse). The special categories score this text; reports show it."""
    if not calls:
        return content
    written, _ = written_calls(calls, tools.names)
    return f"{content}\n{written}" if content else written


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
