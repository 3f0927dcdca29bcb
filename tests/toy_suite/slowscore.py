"""slowscore: a suite whose scorer is slow on two of its three samples, as a third-party suite's may be.

`quick` scores at once; `spin` loops without end and swallows every `Exception` on the way (the deadline must
still end it); `backtrack` runs a pattern whose backtracking takes far longer than any deadline of a test.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar

from pytest_tooleval.suite import (
    Answer,
    CaseBase,
    ModelAccess,
    SampleResult,
    Settings,
    Skipped,
    SuitePlugin,
    SuiteSettings,
    Verdict,
)

KINDS = ("quick", "spin", "backtrack")


@dataclass(frozen=True)
class SlowCase(CaseBase):
    kind: str
    index: int

    suite = "slowscore"
    category = "all"
    language = "en"

    @property
    def id(self) -> str:
        return f"slow_{self.kind}"

    @property
    def test_id(self) -> str:
        return f"slowscore-{self.kind}"

    @property
    def family(self) -> str:
        return "all"

    @property
    def marks(self) -> tuple[str, ...]:
        return ("slowscore",)

    @property
    def expected_text(self) -> str:
        return self.kind


class SlowSuite:
    def cases(self) -> list[SlowCase]:
        return [SlowCase(kind, index) for index, kind in enumerate(KINDS)]

    async def oracle(self, case: SlowCase) -> Answer:
        return Answer(case.kind)

    async def replayed(self, case: SlowCase, row: dict[str, Any], access: ModelAccess) -> Answer:
        return Answer(case.kind)

    async def answer(self, case: SlowCase, access: ModelAccess) -> Answer | Skipped:
        return Answer(case.kind)

    def score(self, case: SlowCase, answer: Answer) -> SampleResult:
        if case.kind == "spin":
            while True:
                try:
                    raise ValueError("swallowed")
                except Exception:
                    pass
        if case.kind == "backtrack":
            re.match(r"(a+)+$", "a" * 64 + "b")
        return SampleResult(Verdict(True), answer.output)


class SlowPlugin(SuitePlugin[SlowCase]):
    name = "slowscore"
    markers: ClassVar[dict[str, str]] = {"slowscore": "a slowscore sample"}
    options_model = SuiteSettings
    roles = ()
    mark_profiles = (frozenset({"slowscore"}),)
    id_prefixes = ("slowscore-",)

    def load(self, settings: Settings) -> SlowSuite:
        return SlowSuite()

    def fingerprint(self, settings: Settings) -> dict[str, Any]:
        return {}


SUITE = SlowPlugin()
