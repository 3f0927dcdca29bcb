"""The CI gate: thresholds on summary figures plus a ceiling on the share of errored samples."""

from __future__ import annotations

from dataclasses import dataclass

from .summary import RunSummary


@dataclass(frozen=True)
class GateResult:
    checks: list[tuple[str, float | None, float, bool]]  # (name, actual, threshold, met)
    error_rate: float
    max_error_rate: float

    @property
    def passed(self) -> bool:
        return all(met for *_, met in self.checks) and self.error_rate <= self.max_error_rate

    def lines(self) -> list[str]:
        out = []
        for name, actual, threshold, met in self.checks:
            if actual is None:
                out.append(f"tooleval gate: {name} MISSED: no such figure in this run (threshold {threshold:.3f})")
            elif met:
                out.append(f"tooleval gate: {name} = {actual:.3f} >= {threshold:.3f} ok")
            else:
                short = threshold - actual
                out.append(f"tooleval gate: {name} MISSED: {actual:.3f} < {threshold:.3f} (short by {short:.3f})")
        verdict = "ok" if self.error_rate <= self.max_error_rate else "MISSED"
        out.append(f"tooleval gate: error rate {self.error_rate:.3f} <= {self.max_error_rate:.3f} {verdict}")
        out.append("tooleval gate: " + ("PASSED" if self.passed else "FAILED"))
        return out


def evaluate_gate(summary: RunSummary, thresholds: dict[str, float], max_error_rate: float) -> GateResult:
    """A threshold applies to every figure whose full name (`<suite>.<figure>`, e.g. acebench.en.overall) is
    the threshold's name or ends with `.<name>`: `overall` gates every suite's and language's overall, `en.overall`
    only ACEBench en's, `gpt4tools.sr` one figure."""
    figures = summary.figures
    checks: list[tuple[str, float | None, float, bool]] = []
    for name, threshold in thresholds.items():
        matching = {key: value for key, value in figures.items() if key == name or key.endswith("." + name)}
        if not matching:
            checks.append((name, None, threshold, False))
        for key, value in sorted(matching.items()):
            checks.append((key, value, threshold, value >= threshold))
    counts = summary.counts
    error_rate = counts["errors"] / counts["total"] if counts["total"] else 0.0
    return GateResult(checks, error_rate, max_error_rate)
