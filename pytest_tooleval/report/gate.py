"""The CI gate: thresholds on summary figures plus a ceiling on the share of errored samples."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import stats
from .summary import RunSummary

if TYPE_CHECKING:
    from .compare import Comparison


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

    def as_dict(self) -> dict[str, Any]:
        return {"figure": self.figure, "margin": self.margin, "baseline": self.baseline, "current": self.current,
                "difference": self.difference, "interval": None if self.interval is None else list(self.interval),
                "p": self.p, "p_holm": self.p_holm, "alpha": self.alpha, "regression": self.regressed}


@dataclass(frozen=True)
class GateResult:
    checks: list[tuple[str, float | None, float, bool]]  # (name, actual, threshold, met)
    error_rate: float
    max_error_rate: float
    notes: tuple[str, ...] = ()  # thresholds not checked: their suite is not in the run
    regressions: tuple[RegressionCheck, ...] = field(default=())
    incomplete: str | None = None  # why the run did not ask every sample it collected (the cost ceiling)

    @property
    def passed(self) -> bool:
        return (all(met for *_, met in self.checks) and self.error_rate <= self.max_error_rate
                and not any(check.regressed for check in self.regressions) and self.incomplete is None)

    def lines(self) -> list[str]:
        out = [f"tooleval gate: {note}" for note in self.notes]
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
            out.append(f"tooleval gate: error rate MISSED: {self.error_rate:.3f} > {self.max_error_rate:.3f}")
        out.append("tooleval gate: " + ("PASSED" if self.passed else "FAILED"))
        return out


def matches(threshold: str, figure: str) -> bool:
    """Whether a threshold name applies to a figure's full name (`<suite>.<figure>`)."""
    return figure == threshold or figure.endswith("." + threshold)


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
    gated: list[tuple[str, float, Any]] = []
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
                  notes: tuple[str, ...] = (), regressions: tuple[RegressionCheck, ...] = ()) -> GateResult:
    """A threshold applies to every figure whose full name (`<suite>.<figure>`, e.g. acebench.en.overall) is
    the threshold's name or ends with `.<name>`: `overall` gates every suite's and language's overall, `en.overall`
    only ACEBench en's, `gpt4tools.sr` one figure."""
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
    return GateResult(checks, error_rate, max_error_rate, notes, regressions)
