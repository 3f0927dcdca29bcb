"""--tooleval-repeats k: every sample asked k times, each repeat a test of its own (`<test id>-r2`, ...).

A repeat is the case itself but for its test id and its number: the suites only ever see the case (the
session unwraps it), and the number reaches the request through `REPEAT`, so each repeat has its own cache
key (`ChatRequest.repeat`) and is a real sample, not a cached copy of the first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..models.base import REPEAT

if TYPE_CHECKING:
    from ..suites.base import Case

__all__ = ["REPEAT", "Repeated", "original", "repeat_of", "repeated"]


class Repeated:
    """The r-th ask (r >= 2) of a case: its test id ends in -r<r>; every other member is the case's (a Case)."""

    def __init__(self, case: Case, repeat: int) -> None:
        self.case = case
        self.repeat = repeat

    @property
    def test_id(self) -> str:
        return f"{self.case.test_id}-r{self.repeat}"

    def __getattr__(self, name: str) -> Any:
        return getattr(self.case, name)

    def __repr__(self) -> str:
        return f"Repeated({self.case!r}, {self.repeat})"


def repeated(cases: Sequence[Case], times: int) -> list[Case]:
    """The cases, then each again for repeats 2..times."""
    return [*cases, *(Repeated(case, repeat) for repeat in range(2, times + 1) for case in cases)]


def repeat_of(case: Case) -> int:
    return case.repeat


def original(case: Case) -> Case:
    return case.case if isinstance(case, Repeated) else case
