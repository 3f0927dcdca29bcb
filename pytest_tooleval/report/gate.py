"""The CI gate: thresholds on summary figures plus a ceiling on the share of errored samples."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..json_value import JSONObject, JSONValue
from ..text import counted, did_you_mean
from . import stats
from .row import whole
from .summary import RunSummary

if TYPE_CHECKING:
    from .compare import Comparison, FigureComparison


@dataclass(frozen=True)
class RegressionCheck:
    """One figure under --tooleval-max-regression: a regression is a drop beyond the margin that is also
    significant (its p-value, Holm-corrected across the figures gated, below alpha)."""

    figure: str
    margin: float
    baseline: float | None
    current: float | None
    difference: float | None
    interval: tuple[float, float] | None
    p: float | None
    p_holm: float | None
    alpha: float

    @property
    def regressed(self) -> bool:
        if self.difference is None or self.p_holm is None:
            return True  # a gated figure with nothing to compare is not evidence of no regression
        return -self.difference > self.margin and self.p_holm < self.alpha

    def line(self) -> str:
        if self.difference is None or self.interval is None or self.p is None:
            return f"tooleval gate: {self.figure}: no paired samples to compare with the baseline: REGRESSION"
        low, high = self.interval
        evidence = (f"{self.figure}: {self.baseline:.3f} -> {self.current:.3f}, {self.difference:+.3f} "
                    f"[{low:+.3f}, {high:+.3f}], p={self.p:.3g} (Holm {self.p_holm:.3g})")
        if self.regressed:
            return f"tooleval gate: {evidence}: drop > margin {self.margin:.3f}, significant: REGRESSION"
        if -self.difference <= self.margin:
            return f"tooleval gate: {evidence}: within margin {self.margin:.3f} ok"
        return f"tooleval gate: {evidence}: drop > margin {self.margin:.3f}, not significant at {self.alpha:g} ok"

    def as_dict(self) -> JSONObject:
        return {"figure": self.figure, "margin": self.margin, "baseline": self.baseline, "current": self.current,
                "difference": self.difference, "interval": None if self.interval is None else list(self.interval),
                "p": self.p, "p_holm": self.p_holm, "alpha": self.alpha, "regression": self.regressed}


REASON_SHOWN = 120  # characters of an error's message the gate line shows


@dataclass(frozen=True)
class ErrorCause:
    """The largest group of errored samples, by category and reason (`error_causes`), and what the rest hold."""

    category: str
    reason: str  # one sample's message, its first line: the group's example
    count: int
    other_causes: int = 0
    other_errors: int = 0

    def text(self) -> str:
        more = (f"; and {counted(self.other_errors, 'error')} of {counted(self.other_causes, 'other cause')}"
                if self.other_causes else "")
        return f"{self.count} {self.category}: {self.reason}{more}"

    def as_dict(self) -> JSONObject:
        return {"category": self.category, "reason": self.reason, "count": self.count,
                "other_causes": self.other_causes, "other_errors": self.other_errors, "text": self.text()}

    @classmethod
    def from_dict(cls, value: object) -> ErrorCause | None:
        """The cause a report's gate holds (`as_dict`), or None when it holds none or another shape."""
        if not isinstance(value, Mapping):
            return None
        category, reason = value.get("category"), value.get("reason")
        counts = [value.get(key, 0) for key in ("count", "other_causes", "other_errors")]
        if not (isinstance(category, str) and isinstance(reason, str)
                and all(isinstance(number, int) for number in counts)):
            return None
        return cls(category, reason, *counts)


def error_causes(rows: Sequence[Mapping[str, JSONValue]]) -> list[tuple[str, str, int]]:
    """The errored samples (first asks, as the error rate counts them) grouped by category and by their one-line
    reason, largest group first: (category, an example message, count). Messages group once what only names
    one sample is taken out (quoted text, numbers, ids), so "HTTP 500 for request 7f3a" and "... 91c2" are one."""
    groups: dict[tuple[str, str], list[str]] = {}
    for row in sorted(rows, key=lambda row: str(row.get("test_id", ""))):
        if row.get("outcome") != "error" or whole(row.get("repeat", 1)) != 1:
            continue
        line = next((part.strip() for part in str(row.get("error") or "").splitlines() if part.strip()),
                    "no message")
        groups.setdefault((str(row.get("category", "")), _reason_key(line)), []).append(line)
    causes = [(category, lines[0], len(lines)) for (category, _), lines in groups.items()]
    return sorted(causes, key=lambda cause: -cause[2])  # stable: equal groups in the order of their first sample


def largest_cause(rows: Sequence[Mapping[str, JSONValue]]) -> ErrorCause | None:
    causes = error_causes(rows)
    if not causes:
        return None
    category, reason, count = causes[0]
    shown = reason if len(reason) <= REASON_SHOWN else reason[:REASON_SHOWN - 3] + "..."
    return ErrorCause(category, shown, count, len(causes) - 1, sum(number for *_, number in causes[1:]))


_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_NAMING = re.compile(r"[0-9a-fA-F]*\d[0-9a-fA-F]*")  # numbers, and hex ids with a digit in them


def _reason_key(line: str) -> str:
    return " ".join(_NAMING.sub("#", _QUOTED.sub("'…'", line)).split())


def partial_run(summary: RunSummary) -> str | None:
    """What the summary says this run left out of the benchmark (-k, -m, --tooleval-sample,
    --tooleval-categories, errored samples), by suite; None for a run of everything."""
    parts = []
    for name, suite in summary.suites.items():
        if not suite.partial:
            continue
        reasons: list[str] = []
        for block in suite.data.values():  # a suite's per-language blocks say why
            if isinstance(block, Mapping):
                reasons += [str(reason) for reason in block.get("partial_reasons") or [] if str(reason) not in reasons]
        parts.append(f"{name}: {', '.join(reasons) or 'not every sample was scored'}")
    return "; ".join(parts) or None


def self_compared_line(own: int, samples: int) -> str:
    """The gate's reason when the response cache answered `own` of the run's `samples` from the baseline run."""
    return (f"{own:,} of {samples:,} samples were answered from the baseline run's own cached answers, so they "
            "compare it with itself: ask them again with --tooleval-cache fresh")


@dataclass(frozen=True)
class GateResult:
    checks: list[tuple[str, float | None, float, bool]]  # (name, actual, threshold, met)
    error_rate: float
    max_error_rate: float
    notes: tuple[str, ...] = ()  # thresholds not checked: their suite is not in the run
    regressions: tuple[RegressionCheck, ...] = field(default=())
    incomplete: str | None = None  # why the run did not ask every sample it collected (the cost ceiling)
    largest_cause: ErrorCause | None = None  # of the errors, which the error-rate line names when it misses
    partial: str | None = None  # what the run left out of the benchmark (`partial_run`): the verdict says so
    self_compared: str | None = None  # why the comparison with the baseline compares it with itself

    @property
    def passed(self) -> bool:
        return (all(met for *_, met in self.checks) and self.error_rate <= self.max_error_rate
                and not any(check.regressed for check in self.regressions) and self.incomplete is None
                and self.self_compared is None)

    def lines(self) -> list[str]:
        out = [f"tooleval gate: {note}" for note in self.notes]
        if self.self_compared is not None:
            out.append(f"tooleval gate: NOT A COMPARISON: {self.self_compared}")
        if self.incomplete is not None:
            out.append(f"tooleval gate: INCOMPLETE: {self.incomplete}")
        out += [check.line() for check in self.regressions]
        for name, actual, threshold, met in self.checks:
            if actual is None:
                out.append(f"tooleval gate: {name} MISSED: no such figure in this run (threshold {threshold:.3f})")
            elif met:
                out.append(f"tooleval gate: {name} = {actual:.3f} >= {threshold:.3f} ok")
            else:
                short = threshold - actual
                out.append(f"tooleval gate: {name} MISSED: {actual:.3f} < {threshold:.3f} (short by {short:.3f})")
        if self.error_rate <= self.max_error_rate:
            out.append(f"tooleval gate: error rate {self.error_rate:.3f} <= {self.max_error_rate:.3f} ok")
        else:
            why = "" if self.largest_cause is None else f" ({self.largest_cause.text()})"
            out.append(f"tooleval gate: error rate MISSED: {self.error_rate:.3f} > {self.max_error_rate:.3f}{why}")
        # a pass over part of the benchmark is not a pass of the benchmark: the last line says which
        scope = "" if self.partial is None else f" (partial run: {self.partial})"
        out.append("tooleval gate: " + ("PASSED" if self.passed else "FAILED") + scope)
        return out


def matches(threshold: str, figure: str) -> bool:
    """Whether a threshold name applies to a figure's full name (`<suite>.<figure>`)."""
    return figure == threshold or figure.endswith("." + threshold)


def figure_hint(name: str, figures: Sequence[str]) -> str:
    """" (did you mean 'en.overall'?)" for a gate name that matches no figure, from every name a threshold may
    use for `figures` (full names, `<suite>.<figure>`): each with its leading parts left out too; "" when none
    is close."""
    names = [".".join(parts[start:]) for figure in figures if (parts := figure.split("."))
             for start in range(len(parts))]
    hint = did_you_mean(name, names)
    return f" ({hint})" if hint else ""


def unknown_name_line(option: str, name: str, where: str, figures: Sequence[str]) -> str:
    """The one line of a gate name no suite can give: the name, the closest figure, the run's figures."""
    return (f"{option}: no figure {name!r} in {where}{figure_hint(name, figures)}; its figures are "
            f"{', '.join(figures) or 'none'} (a name may leave out its prefix: overall, en.overall)")


def sort_thresholds(thresholds: dict[str, float], in_run: dict[str, list[str] | None],
                    elsewhere: dict[str, list[str] | None]) -> tuple[list[str], list[str]]:
    """Before any request: (names no suite can give, names only suites outside this run give).

    Args:
        thresholds: the gate's names and fractions.
        in_run: the figure names (relative) of each suite this run can collect; None when a suite does not
            declare them (then any name might be its, and none is called unknown).
        elsewhere: the same for the registered suites this run does not collect.
    """
    def given_by(suites: dict[str, list[str] | None], name: str) -> bool:
        return any(names is None or any(matches(name, f"{suite}.{figure}") for figure in names)
                   for suite, names in suites.items())

    unknown = [name for name in thresholds if not given_by(in_run, name) and not given_by(elsewhere, name)]
    outside = [name for name in thresholds if not given_by(in_run, name) and given_by(elsewhere, name)]
    return unknown, outside


def evaluate_regressions(comparison: Comparison, margins: Mapping[str, float], alpha: float) -> list[RegressionCheck]:
    """The --tooleval-max-regression checks: every compared figure a margin's name matches (as thresholds
    match), Holm-corrected together; a name that matches none is a check that fails."""
    gated: list[tuple[str, float, FigureComparison | None]] = []
    for name, margin in margins.items():
        found = [entry for entry in comparison.figures if matches(name, entry.figure)]
        gated += [(entry.figure, margin, entry) for entry in found] or [(name, margin, None)]
    adjusted = iter(stats.holm([entry.p for _, _, entry in gated if entry is not None and entry.p is not None]))
    checks = []
    for figure, margin, entry in gated:
        if entry is None or entry.p is None:
            checks.append(RegressionCheck(figure, margin, None, None, None, None, None, None, alpha))
            continue
        checks.append(RegressionCheck(figure, margin, entry.baseline, entry.current, entry.difference, entry.interval,
                                      entry.p, next(adjusted), alpha))
    return checks


def evaluate_gate(summary: RunSummary, thresholds: dict[str, float], max_error_rate: float,
                  notes: tuple[str, ...] = (), regressions: tuple[RegressionCheck, ...] = (),
                  rows: Sequence[Mapping[str, JSONValue]] = ()) -> GateResult:
    """A threshold applies to every figure whose full name (`<suite>.<figure>`, e.g. `<suite>.en.overall`) is
    the threshold's name or ends with `.<name>`: `overall` gates every suite's and language's overall, `en.overall`
    only the en ones, `<suite>.<figure>` one figure. `rows` (the summary's) name the largest cause of errors."""
    figures = summary.figures
    checks: list[tuple[str, float | None, float, bool]] = []
    for name, threshold in thresholds.items():
        matching = {key: value for key, value in figures.items() if matches(name, key)}
        if not matching:
            checks.append((name, None, threshold, False))
        for key, value in sorted(matching.items()):
            checks.append((key, value, threshold, value >= threshold))
    counts = summary.counts
    error_rate = counts["errors"] / counts["total"] if counts.get("total") else 0.0  # no suite scored: no rate
    return GateResult(checks, error_rate, max_error_rate, notes, regressions, largest_cause=largest_cause(rows),
                      partial=partial_run(summary))
