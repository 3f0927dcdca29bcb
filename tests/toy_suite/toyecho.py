"""toyecho: each sample asks the model to repeat a word; the answer passes when it is that word.

Everything the plugin needs is declared here: name, markers, an option of its own, mark profiles, id prefixes,
loading, answering (live, replay, oracle), pure scoring, the summary with its figures, and the fingerprint.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, ClassVar

from pytest_tooleval.suite import (
    Answer,
    CaseBase,
    ModelAccess,
    SampleError,
    SampleResult,
    Settings,
    Skipped,
    SuitePlugin,
    SuiteSettings,
    SuiteSummary,
    Table,
    Verdict,
    option_field,
    outcome_counts,
)

WORDS = {"short": ("cat", "dog"), "long": ("elephant", "kangaroo", "hippopotamus")}


@dataclass(frozen=True)
class EchoCase(CaseBase):
    word: str
    category: str
    index: int

    suite = "toyecho"
    language = "en"

    @property
    def id(self) -> str:
        return f"echo_{self.word}"

    @property
    def test_id(self) -> str:
        return f"toyecho-{self.word}"

    @property
    def family(self) -> str:
        return self.category

    @property
    def marks(self) -> tuple[str, ...]:
        return ("toyecho", f"toyecho_{self.category}")

    @property
    def expected_text(self) -> str:
        return self.word


class EchoSuite:
    def __init__(self, shout: bool) -> None:
        self.shout = shout

    def cases(self) -> list[EchoCase]:
        words = [(word, category) for category, group in WORDS.items() for word in group]
        return [EchoCase(word, category, index) for index, (word, category) in enumerate(words)]

    def expected(self, case: EchoCase) -> str:
        return case.word.upper() if self.shout else case.word

    async def answer(self, case: EchoCase, access: ModelAccess) -> Answer | Skipped:
        if access.kind == "oracle":
            return Answer(self.expected(case))
        if access.kind == "replay":
            assert access.replay is not None
            row = access.replay.lookup(case.language, case.id)
            if row is None:
                raise SampleError(f"no recorded answer for {case.id}")
            return Answer(str(row["result"]))
        assert access.chat is not None
        reply = await access.chat([{"role": "user", "content": f"Repeat the word {case.word}."}])
        return Answer(reply.text, reply.latency_s, {"completion": reply.completion_tokens or 0})

    def score(self, case: EchoCase, answer: Answer) -> SampleResult:
        valid = str(answer.output).strip() == self.expected(case)
        verdict = Verdict(valid, "" if valid else "wrong_word")
        return SampleResult(verdict, answer.output, answer.latency_s, answer.tokens)


class EchoSettings(SuiteSettings):
    """The suite's options, one typed field each: --tooleval-toyecho-shout is a switch, as a bool field is."""

    toyecho_shout: bool = option_field("toyecho: expect the word in capitals", False)


class EchoPlugin(SuitePlugin[EchoCase]):
    name = "toyecho"
    markers: ClassVar[dict[str, str]] = {
        "toyecho": "a toyecho sample",
        "toyecho_short": "a short word",
        "toyecho_long": "a long word",
    }
    options_model = EchoSettings
    roles = ()
    mark_profiles = (frozenset({"toyecho", "toyecho_short"}), frozenset({"toyecho", "toyecho_long"}))
    id_prefixes = ("toyecho-",)

    def unavailable(self, settings: Settings) -> str | None:
        return None

    def load(self, settings: Settings) -> EchoSuite:
        return EchoSuite(EchoSettings.of(settings).toyecho_shout)

    def summarize(self, rows: list[dict[str, Any]]) -> SuiteSummary:
        figures: dict[str, float] = {}
        body = []
        for category in WORDS:
            mine = [row for row in rows if row["category"] == category and row["outcome"] != "error"]
            if mine:
                figures[f"{category}.accuracy"] = sum(row["outcome"] == "passed" for row in mine) / len(mine)
                body.append([category, len(mine), figures[f"{category}.accuracy"]])
        scored = [row for row in rows if row["outcome"] != "error"]
        if scored:
            figures["accuracy"] = sum(row["outcome"] == "passed" for row in scored) / len(scored)
        partial = len(rows) < sum(len(group) for group in WORDS.values())
        return SuiteSummary(
            "toyecho",
            [Table("toyecho words", ["category", "scored", "accuracy"], body)],
            figures,
            partial,
            outcome_counts(rows),
            {"figures": figures},
        )

    def fingerprint(self, settings: Settings) -> dict[str, Any]:
        words = ",".join(word for group in WORDS.values() for word in group)
        shout = EchoSettings.of(settings).toyecho_shout
        return {"words_sha256": hashlib.sha256(words.encode()).hexdigest(), "shout": shout}

    def priority(self, case: EchoCase) -> int:
        return 1


SUITE = EchoPlugin()
