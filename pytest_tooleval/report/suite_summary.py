"""What a suite's summariser returns (`Figures.summarize`, suites/base.py): its tables and figures, and the
outcome counts every summary carries. A leaf module, so that the suite contract can name these without importing
the run's summary (report/summary.py, which re-exports them)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ContextOverflowError, MalformedReply
from ..json_value import JSONObject
from ..outcome import SCORING_TIME_LIMIT


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


def outcome_counts(rows: list[JSONObject]) -> dict[str, int]:
    counts = {"total": len(rows), "scored": 0, "passed": 0, "failed": 0, "errors": 0, "context_overflows": 0,
              "malformed_replies": 0, "over_time": 0}
    for row in rows:
        if row["outcome"] == "error":
            counts["errors"] += 1
            counts["context_overflows"] += row.get("error_type") == ContextOverflowError.error_type
        else:
            counts["scored"] += 1
            counts["passed" if row["outcome"] == "passed" else "failed"] += 1
            counts["malformed_replies"] += row.get("error_type") == MalformedReply.error_type
            counts["over_time"] += row.get("error_type") == SCORING_TIME_LIMIT
    return counts


@dataclass(frozen=True)
class Unit:
    """One unit of a proportion figure (`Figures.units`): a sample, or a dialogue (its outcome: every step
    passed).

    Attributes:
        figure: the proportion it counts in, relative to its suite (e.g. "en.normal_atom_bool").
        key: the same unit's key in any run of the suite (e.g. "en/normal_atom_bool_3").
        passed: its outcome; None when it has no verdict (an error), and it is then not paired.
        samples: the sample ids it consists of (flip listings name them).
    """

    figure: str
    key: str
    passed: bool | None
    samples: tuple[str, ...] = ()


UnitsFn = Callable[[list[JSONObject]], list[Unit]]
CombineFn = Callable[[Mapping[str, float]], dict[str, float]]
