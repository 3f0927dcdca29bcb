"""The BFCL suite: one case per sample (and protocol), asked as bfcl asks it, scored as bfcl-eval scores it (bfcl §1).

In the prompt protocol the answer is the reply's text; in the function-calling protocol it is the reply's
native calls as bfcl records them, `[{name: arguments JSON text}]`, or the reply's text when it made no call
(bfcl §3.4). Scoring is checker.check_answer, pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from ...models.access import ModelAccess
from ...models.meter import reply_tokens
from ...outcome import Answer, SampleError, SampleResult, Skipped
from ...verdict import Verdict
from ..base import CaseBase
from .checker import Mode
from .data import FORMAT_SENSITIVITY, RELEVANCE_CATEGORIES, WEB_SEARCH, Sample, load_samples
from .format_sensitivity.entries import Entry as FormatEntry
from .format_sensitivity.prompts import FormatPrompts
from .memory.data import CATEGORIES as MEMORY
from .memory.data import MemoryEntry
from .memory.prompts import MemoryPrompts
from .multi_turn.sample import CATEGORIES as MULTI_TURN
from .multi_turn.sample import MultiTurnSample
from .multi_turn.tables import Tables
from .oracle import oracle_output
from .prices import PriceTable
from .templates import Templates
from .web_search.api import Backend
from .web_search.data import WebSearchEntry, WebSearchFiles

PROMPT, FC = "prompt", "fc"


class _Keyed(Protocol):
    """What a case reads of its sample: a single-turn `Sample` and a `MultiTurnSample` both have these."""

    @property
    def id(self) -> str: ...

    @property
    def category(self) -> str: ...

    @property
    def index(self) -> int: ...


SampleT = TypeVar("SampleT", bound=_Keyed)


@dataclass(frozen=True)
class _Protocolled(CaseBase, Generic[SampleT]):
    """One BFCL sample in one protocol: the members single- and multi-turn cases share."""

    sample: SampleT
    variant: str = ""  # "" the prompt protocol, "fc" function calling

    suite = "bfcl"
    language = "en"

    @property
    def id(self) -> str:
        return self.sample.id

    @property
    def category(self) -> str:
        return self.sample.category

    @property
    def index(self) -> int:
        return self.sample.index

    @property
    def mode(self) -> Mode:
        return "fc" if self.variant == FC else "prompt"

    @property
    def test_id(self) -> str:
        return self.id if not self.variant else f"{self.id}-{self.variant}"


@dataclass(frozen=True)
class BfclCase(_Protocolled[Sample]):
    """One single-turn BFCL sample in one protocol (the suite protocol in pytest_tooleval/suites/base.py)."""

    @property
    def family(self) -> str:
        return self.sample.group

    @property
    def marks(self) -> tuple[str, ...]:
        return ("bfcl", self.sample.group, self.category)

    @property
    def expected_text(self) -> str:
        if self.category in RELEVANCE_CATEGORIES:
            return "no function call" if "irrelevance" in self.category else "a function call"
        return oracle_output(self.sample, PROMPT) or ""


@dataclass(frozen=True)
class BfclMultiTurnCase(_Protocolled[MultiTurnSample]):
    """One multi-turn sample in one protocol: played turn by turn, judged on state and results
    (docs/bfcl-multi-turn.md); no `expected_text`: a failure shows the failing turn's ground truth instead."""

    family = "multi_turn"

    @property
    def marks(self) -> tuple[str, ...]:
        return ("bfcl", "multi_turn", self.category)


class _Answered(_Keyed, Protocol):
    """What an agentic case reads of its entry besides its keys: the accepted answers."""

    @property
    def accepted(self) -> tuple[str, ...]: ...


AgenticT = TypeVar("AgenticT", bound=_Answered)


@dataclass(frozen=True)
class _AgenticCase(_Protocolled[AgenticT]):
    """An agentic question in one protocol, judged by the agentic checker on the model's last answer; `kind` is
    its family's marker."""

    family = "agentic"
    kind = ""

    @property
    def marks(self) -> tuple[str, ...]:
        return ("bfcl", "agentic", self.kind, self.category)

    @property
    def expected_text(self) -> str:
        return " or ".join(repr(answer) for answer in self.sample.accepted)


@dataclass(frozen=True)
class BfclMemoryCase(_AgenticCase[MemoryEntry]):
    """A memory question: asked after its scenario's prerequisite conversations (docs/bfcl.md#the-memory-run). The
    prerequisite conversations are no cases: no answer of theirs is checked."""

    kind = "memory"


@dataclass(frozen=True)
class BfclWebSearchCase(_AgenticCase[WebSearchEntry]):
    """A web search question: searched through the backend the run chose (docs/bfcl.md#the-web-search-run)."""

    kind = "web_search"


@dataclass(frozen=True)
class BfclFormatCase(_Protocolled[FormatEntry]):
    """One format-sensitivity entry: a single-turn question asked with one of bfcl's 26 system prompts, in the
    prompt protocol only, as bfcl asks it (docs/bfcl.md#format-sensitivity)."""

    family = FORMAT_SENSITIVITY

    @property
    def marks(self) -> tuple[str, ...]:
        return ("bfcl", FORMAT_SENSITIVITY)

    @property
    def expected_text(self) -> str:
        from .format_sensitivity.oracle import oracle_output

        return oracle_output(self.sample) or ""


AnyBfclCase = BfclCase | BfclMultiTurnCase | BfclMemoryCase | BfclWebSearchCase | BfclFormatCase


class BfclSuite:
    name = "bfcl"

    def __init__(self, root: Path, categories: Sequence[str] = (), *, mode: str = PROMPT,
                 sampling: dict[str, Any] | None = None, templates: Templates | None = None,
                 tables: Tables | None = None, memory_prompts: MemoryPrompts | None = None,
                 web_search_files: WebSearchFiles | None = None, search: Backend | None = None,
                 format_prompts: FormatPrompts | None = None, prices: PriceTable | str | None = None) -> None:
        """
        Args:
            root: the data folder (`bfcl/`).
            categories: the categories to collect (the 13 single-turn ones when empty; the multi-turn ones only
                when named).
            mode: "prompt", "fc" or "both" (--tooleval-mode).
            sampling: keyword arguments of every request (bfcl's own under --tooleval-sampling upstream).
            templates: bfcl's request texts, lifted from the wheel (needed only when a live model answers).
            tables: the multi-turn APIs' tables, lifted from the wheel (needed when a multi-turn category runs).
            memory_prompts: the memory category's texts, lifted from the wheel (needed when a live model answers a
                memory or web search category: its answer-format message).
            web_search_files: web search's questions and answers, from the wheel (needed when it is chosen).
            search: the backend of web search's searches and pages (needed when a live model answers it).
            format_prompts: format sensitivity's texts, lifted from the wheel (needed when a live model answers it).
            prices: bfcl's model prices, lifted from the wheel, or why they could not be read (usage.py).
        """
        from .format_sensitivity.entries import load_entries as load_format_entries
        from .memory.data import load_entries as load_memory
        from .memory.run import Prerequisites
        from .multi_turn.data import load_samples as load_multi_turn
        from .web_search.data import load_entries as load_web_search

        self.root = root
        single = [category for category in categories if category not in MULTI_TURN and category not in MEMORY
                  and category not in WEB_SEARCH and category != FORMAT_SENSITIVITY]
        self.samples = load_samples(root, single) if single or not categories else []
        self.multi_turn = [sample for category in MULTI_TURN if category in categories
                           for sample in load_multi_turn(root, category)]
        memory = [entry for category in MEMORY if category in categories for entry in load_memory(root, category)]
        self.memory = [entry for entry in memory if not entry.prerequisite]
        self.prerequisites = Prerequisites(memory)
        searched = [category for category in WEB_SEARCH if category in categories]
        if searched and web_search_files is None:
            raise SampleError("bfcl: the web search questions were not loaded")
        self.web_search = [entry for category in searched if web_search_files is not None
                           for entry in load_web_search(root, category, web_search_files)]
        self._search = search
        # bfcl asks it of prompting models only (function-calling ones skip it)
        self.format_entries = load_format_entries(root) if FORMAT_SENSITIVITY in categories else []
        self._format_prompts = format_prompts
        self.mode = mode
        self.sampling = sampling or {}
        self._templates = templates
        self._tables = tables
        self._memory_prompts = memory_prompts
        self._prices = prices

    def cases(self) -> list[AnyBfclCase]:
        variants = {"prompt": ("",), "fc": (FC,), "both": ("", FC)}[self.mode]
        cases: list[AnyBfclCase] = [BfclCase(sample, variant) for variant in variants for sample in self.samples]
        cases += [BfclMultiTurnCase(sample, variant) for variant in variants for sample in self.multi_turn]
        cases += [BfclMemoryCase(entry, variant) for variant in variants for entry in self.memory]
        cases += [BfclWebSearchCase(entry, variant) for variant in variants for entry in self.web_search]
        return cases + [BfclFormatCase(entry) for entry in self.format_entries if "" in variants]

    def tables(self) -> Tables:
        if self._tables is None:  # load() reads them whenever a multi-turn category is chosen
            raise SampleError("bfcl: the multi-turn API tables were not loaded")
        return self._tables

    def memory_prompts(self) -> MemoryPrompts:
        if self._memory_prompts is None:  # load() reads them for every live model running a memory category
            raise SampleError("bfcl: the memory texts were not loaded (the suite was loaded for scoring only)")
        return self._memory_prompts

    def format_prompts(self) -> FormatPrompts:
        if self._format_prompts is None:  # load() reads them for every live model running format sensitivity
            raise SampleError("bfcl: the format-sensitivity texts were not loaded (the suite was loaded for scoring "
                              "only)")
        return self._format_prompts

    def search(self) -> Backend:
        if self._search is None:  # load() makes it for every live model running a web search category
            raise SampleError("bfcl: no web search backend (the suite was loaded for scoring only)")
        return self._search

    def templates(self) -> Templates:
        if self._templates is None:  # load() reads them for every live model
            raise SampleError("bfcl: the request texts were not loaded (the suite was loaded for scoring only)")
        return self._templates

    async def oracle(self, case: AnyBfclCase) -> Answer:
        if isinstance(case, (BfclMemoryCase, BfclWebSearchCase)):
            from .agentic import oracle_result as agentic_oracle

            return Answer(agentic_oracle(case.sample.id, case.sample.accepted))
        if isinstance(case, BfclMultiTurnCase):
            from .multi_turn.oracle import oracle_result

            return Answer(oracle_result(case.sample, case.mode))
        if isinstance(case, BfclFormatCase):
            from .format_sensitivity.oracle import oracle_output as format_oracle

            rendered = format_oracle(case.sample)
            if rendered is None:
                raise SampleError(f"bfcl {case.id}: the oracle cannot render these possible answers "
                                  "(docs/bfcl.md, the oracle's ceiling)")
            return Answer(rendered)
        output = oracle_output(case.sample, case.mode)
        if output is None:
            raise SampleError(f"bfcl {case.id}: the oracle cannot render these possible answers "
                              "(docs/bfcl.md, the oracle's ceiling)")
        return Answer(output)

    async def replayed(self, case: AnyBfclCase, row: dict[str, Any], access: ModelAccess) -> Answer:
        if "result" not in row and "output" not in row:
            assert access.replay is not None
            raise SampleError(f"no recorded result for bfcl {case.id} in {access.replay.source}")
        from .usage import replayed_state

        return Answer(row.get("result", row.get("output")), state=replayed_state(row))

    async def answer(self, case: AnyBfclCase, access: ModelAccess) -> Answer | Skipped:
        """What the model answers, as bfcl records it (runs on the engine's loop), with each request's latency and
        token counts (usage.py)."""
        from dataclasses import replace

        from .usage import Requests

        if access.chat is None:
            return await self._answer(case, access)
        requests = Requests(access.chat)
        answer = await self._answer(case, replace(access, chat=requests))
        return answer if isinstance(answer, Skipped) else requests.measured(answer, access.model)

    async def _answer(self, case: AnyBfclCase, access: ModelAccess) -> Answer | Skipped:
        from .requests import fc_request, prompt_request

        if isinstance(case, BfclMemoryCase):
            from .memory import run as memory_run
            from .memory.backends import unavailable

            if (reason := unavailable(case.sample.backend)) is not None:
                return Skipped(f"bfcl {case.category}: {reason}")
            return await memory_run.answer(case.sample, case.mode, access, templates=self.templates(),
                                           prompts=self.memory_prompts(), prerequisites=self.prerequisites,
                                           sampling=self.sampling)
        if isinstance(case, BfclFormatCase):
            from .format_sensitivity.request import entry_request

            assert access.chat is not None
            request = entry_request(self.templates(), self.format_prompts(), case.sample)
            reply = await access.chat(request.messages, **self.sampling)
            return Answer(reply.text, reply.latency_s, reply_tokens(reply), reasoning=reply.reasoning)
        if isinstance(case, BfclWebSearchCase):
            from .web_search import run as web_search_run

            return await web_search_run.answer(case.sample, case.mode, access, templates=self.templates(),
                                               answer_format=self.memory_prompts().answer_format,
                                               backend=self.search(), scope=case.test_id, sampling=self.sampling)

        if isinstance(case, BfclMultiTurnCase):
            from .multi_turn import run

            return await run.answer(case.sample, case.mode, access, templates=self.templates(), tables=self.tables(),
                                    sampling=self.sampling)
        assert access.chat is not None
        if case.mode == FC:
            request = fc_request(self.templates(), case.category, case.sample.entry)
            reply = await access.chat(request.messages, tools=request.tools, **self.sampling)
            recorded: Any = [{call.name: call.arguments} for call in reply.tool_calls] or reply.text
            return Answer(recorded, reply.latency_s, reply_tokens(reply), reasoning=reply.reasoning)
        request = prompt_request(self.templates(), case.category, case.sample.entry)
        reply = await access.chat(request.messages, **self.sampling)
        return Answer(reply.text, reply.latency_s, reply_tokens(reply), reasoning=reply.reasoning)

    def score(self, case: AnyBfclCase, answer: Answer) -> SampleResult:
        """bfcl-eval's verdict on the answer (pure), with what bfcl's cost and latency columns count of it."""
        from .usage import with_usage

        return with_usage(self._score(case, answer), answer, self._prices)

    def _score(self, case: AnyBfclCase, answer: Answer) -> SampleResult:
        from .checker import check_answer, error_message

        if isinstance(case, BfclMemoryCase):
            from .memory import run as memory_run

            return SampleResult(memory_run.score(case.sample, case.mode, answer.output), answer.output,
                                answer.latency_s, answer.tokens)
        if isinstance(case, BfclWebSearchCase):
            from .web_search import run as web_search_run

            state = answer.state if isinstance(answer.state, dict) else {}
            label = state.get("search")
            searched = label if isinstance(label, str) else None
            verdict = web_search_run.score(case.sample, case.mode, answer.output, searched)
            return SampleResult(verdict, answer.output, answer.latency_s, answer.tokens)

        if isinstance(case, BfclMultiTurnCase):
            from .multi_turn import run

            verdict = run.score(case.sample, case.mode, answer.output, self.tables())
            return SampleResult(verdict, answer.output, answer.latency_s, answer.tokens)

        if isinstance(case, BfclFormatCase):
            from .format_sensitivity.check import check_output

            found = check_output(case.sample, answer.output)
            details = {"mode": case.mode, "config": case.sample.config.name}
        else:
            found = check_answer(case.category, case.mode, answer.output, case.sample.functions,
                                 case.sample.ground_truth)
            details = {"mode": case.mode}
        verdict = Verdict(found.valid, found.error_type, None if found.valid else error_message(found),
                          calls=found.decoded, details=details)
        return SampleResult(verdict, answer.output, answer.latency_s, answer.tokens)
