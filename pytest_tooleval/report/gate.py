"""The CI gate: thresholds on summary figures plus a ceiling on the share of errored samples."""

from __future__ import annotations

from dataclasses import dataclass

from .summary import RunSummary


@dataclass(frozen=True)
class GateResult:
    checks: list[tuple[str, float | None, float, bool]]  # (name, actual, threshold, met)
    error_rate: float
    max_error_rate: float
    notes: tuple[str, ...] = ()  # thresholds not checked: their suite is not in the run

    @property
    def passed(self) -> bool:
        return all(met for *_, met in self.checks) and self.error_rate <= self.max_error_rate

    def lines(self) -> list[str]:
        out = [f"tooleval gate: {note}" for note in self.notes]
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


def evaluate_gate(summary: RunSummary, thresholds: dict[str, float], max_error_rate: float,
                  notes: tuple[str, ...] = ()) -> GateResult:
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
    error_rate = counts["errors"] / counts["total"] if counts["total"] else 0.0
    return GateResult(checks, error_rate, max_error_rate, notes)
