"""toyecho: a sample asks the model to repeat a word, and passes when it does; the summary is the default one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest_tooleval.suite as tooleval

MARKERS = {"toyecho": "a toyecho sample", "toyecho_short": "a short word", "toyecho_long": "a long word"}
WORDS = [("cat", "short"), ("dog", "short"), ("elephant", "long"), ("kangaroo", "long"), ("hippopotamus", "long")]


@dataclass(frozen=True)
class EchoCase(tooleval.CaseBase):  # the members of a Case (suites/base.py), here all fields
    word: str
    category: str
    index: int
    id: str
    test_id: str
    marks: tuple[str, ...]
    suite: str = "toyecho"
    language: str = "en"
    family: str = "echo"


class EchoSettings(tooleval.SuiteSettings):
    toyecho_shout: bool = tooleval.option_field("toyecho: expect the word in capitals", False)


@dataclass
class EchoSuite:
    shout: bool

    def cases(self) -> list[EchoCase]:
        marks = {category: ("toyecho", f"toyecho_{category}") for _, category in WORDS}
        return [EchoCase(w, c, i, f"echo_{w}", f"toyecho-{w}", marks[c]) for i, (w, c) in enumerate(WORDS)]

    async def oracle(self, case: EchoCase) -> tooleval.Answer:  # --tooleval-model oracle
        return tooleval.Answer(case.word.upper() if self.shout else case.word)

    async def replayed(self, case: EchoCase, row: dict[str, Any], access: tooleval.ModelAccess) -> tooleval.Answer:
        return tooleval.Answer(str(row["result"]))  # --tooleval-model replay:FILE, the row of the case's id

    async def answer(self, case: EchoCase, access: tooleval.ModelAccess) -> tooleval.Answer:  # a live model
        assert access.chat is not None
        reply = await access.chat([{"role": "user", "content": f"Repeat the word {case.word}."}])
        return tooleval.Answer(reply.text, reply.latency_s, {"completion": reply.completion_tokens or 0})

    def score(self, case: EchoCase, answer: tooleval.Answer) -> tooleval.SampleResult:
        valid = str(answer.output).strip() == (case.word.upper() if self.shout else case.word)
        return tooleval.SampleResult(tooleval.Verdict(valid, "" if valid else "wrong_word"), answer.output)


class EchoPlugin(tooleval.SuitePlugin[EchoCase]):
    name = "toyecho"
    markers = MARKERS
    options_model = EchoSettings  # --tooleval-toyecho-shout
    roles = ()
    mark_profiles = (frozenset({"toyecho", "toyecho_short"}), frozenset({"toyecho", "toyecho_long"}))
    id_prefixes = ("toyecho-",)

    def load(self, settings: tooleval.Settings) -> EchoSuite:
        return EchoSuite(EchoSettings.of(settings).toyecho_shout)

    def fingerprint(self, settings: tooleval.Settings) -> dict[str, Any]:  # what changes scores besides the model
        return {"words": WORDS, "shout": EchoSettings.of(settings).toyecho_shout}


SUITE = EchoPlugin()
