"""A run's summary: one SuiteSummary per suite, built by that suite's own (pure) summariser."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import ContextOverflowError


@dataclass(frozen=True)
class Table:
    title: str
    headers: list[str]
    rows: list[list[Any]]


@dataclass(frozen=True)
class SuiteSummary:
    """Figures of one suite.

    Attributes:
        suite: the suite name.
        tables: what the terminal shows (rendered with tabulate).
        figures: gateable numbers by name, fractions in [0, 1], relative to the suite (e.g. "en.overall"); the
            run names them `<suite>.<name>` (RunSummary.figures).
        partial: True when the run did not cover the whole benchmark, so the figures are renormalised.
        counts: total, scored, passed, failed, errors.
        data: the JSON form of everything above, for the report.
    """

    suite: str
    tables: list[Table]
    figures: dict[str, float]
    partial: bool
    counts: dict[str, int]
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RunSummary:
    suites: dict[str, SuiteSummary]

    @property
    def figures(self) -> dict[str, float]:
        """Every suite's figures in one namespace: `<suite>.<figure>` (acebench.en.overall, gpt4tools.sr)."""
        return {f"{name}.{figure}": value for name, suite in self.suites.items()
                for figure, value in suite.figures.items()}

    @property
    def counts(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for summary in self.suites.values():
            for key, value in summary.counts.items():
                total[key] = total.get(key, 0) + value
        return total


def summarize(rows: list[dict[str, Any]]) -> RunSummary:
    by_suite: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_suite.setdefault(row["suite"], []).append(row)
    from ..suites import plugin

    return RunSummary({suite: plugin(suite).summarize(suite_rows) for suite, suite_rows in sorted(by_suite.items())})


def outcome_counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    counts = {"total": len(rows), "scored": 0, "passed": 0, "failed": 0, "errors": 0, "context_overflows": 0}
    for row in rows:
        if row["outcome"] == "error":
            counts["errors"] += 1
            counts["context_overflows"] += row.get("error_type") == ContextOverflowError.error_type
        else:
            counts["scored"] += 1
            counts["passed" if row["outcome"] == "passed" else "failed"] += 1
    return counts


def token_totals(tokens: dict[str, Any]) -> tuple[int, int]:
    """(prompt, completion) tokens of every model role in a sample's `tokens` ("prompt", "judge_prompt", ...)."""
    prompt = sum(int(value) for key, value in tokens.items() if key.endswith("prompt"))
    completion = sum(int(value) for key, value in tokens.items() if key.endswith("completion"))
    return prompt, completion


def run_totals(rows: list[dict[str, Any]], wall_s: float) -> dict[str, Any]:
    """What a run cost: samples, scored and errored, tokens of every model role (agent, user, simulator, judge
    together; reasoning tokens are a part of the completion tokens), and wall time."""
    prompt = completion = reasoning = 0
    for row in rows:
        tokens = row.get("tokens") or {}
        row_prompt, row_completion = token_totals(tokens)
        prompt += row_prompt
        completion += row_completion
        reasoning += sum(int(value) for key, value in tokens.items() if key.endswith("reasoning"))
    errors = sum(1 for row in rows if row["outcome"] == "error")
    return {"samples": len(rows), "scored": len(rows) - errors, "errors": errors, "prompt_tokens": prompt,
            "completion_tokens": completion, "reasoning_tokens": reasoning, "wall_s": round(wall_s, 2)}
