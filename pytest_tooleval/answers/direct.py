"""Answers asked for when the test runs, one at a time: the oracle and replay (instant), and live models with
`--tooleval-concurrency 0`."""

from __future__ import annotations

from ..models.engine import Engine
from ..outcome import Answer, Skipped
from ..suites.base import Case
from .pool import Compute


class DirectSource:
    def __init__(self, compute: Compute, engine: Engine) -> None:
        self.compute = compute
        self.engine = engine

    def get(self, case: Case) -> Answer | Skipped:
        return self.engine.run(self.compute(case))

    def close(self, drain: bool) -> None:
        pass
