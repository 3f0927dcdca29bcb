"""The format-sensitivity figures as bfcl computes and prints them (docs/bfcl.md#format-sensitivity): the accuracy
of each configuration, and across those accuracies the largest difference and the spread.

bfcl's spread is the sample standard deviation (and variance) of the per-configuration accuracies, in percent,
rounded to two decimals; with fewer than two configurations scored all three figures are 0. Its leaderboard file
prints the two figures as Python's `str()` of those rounded numbers and each configuration's accuracy as a
percentage with two decimals.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from .configs import CONFIGS

#: the leaderboard file's first columns; one "Config <name>" column per configuration follows
HEADER_PREFIX = ("Rank", "Model", "Format Sensitivity Max Delta", "Format Sensitivity Standard Deviation")
MISSING = "N/A"


@dataclass(frozen=True)
class ConfigScore:
    """How many of a configuration's entries were correct."""

    correct: int
    total: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.total


@dataclass(frozen=True)
class Sensitivity:
    """bfcl's figures of one model's format-sensitivity run.

    Attributes:
        correct / total: over every entry scored.
        configs: configuration name -> its score, in the order the configurations first appear among the results.
        max_delta: the largest accuracy minus the smallest, in percent, rounded to two decimals.
        variance: the sample variance of the accuracies, in percent squared, rounded to two decimals.
        std: their sample standard deviation, in percent, rounded to two decimals.
    """

    correct: int
    total: int
    configs: Mapping[str, ConfigScore]
    max_delta: float
    variance: float
    std: float

    @property
    def accuracy(self) -> float:
        return self.correct / self.total


def config_scores(results: Iterable[tuple[str, bool]]) -> dict[str, ConfigScore]:
    """(configuration name, correct) per entry -> each configuration's score, in order of first appearance."""
    counts: dict[str, list[int]] = {}
    for name, valid in results:
        count = counts.setdefault(name, [0, 0])
        count[0] += bool(valid)
        count[1] += 1
    return {name: ConfigScore(correct, total) for name, (correct, total) in counts.items()}


def spread(accuracies: Sequence[float]) -> tuple[float, float, float]:
    """(max delta, variance, standard deviation) of per-configuration accuracies (fractions), as bfcl rounds them."""
    if len(accuracies) < 2:
        return 0.0, 0.0, 0.0
    return (round((max(accuracies) - min(accuracies)) * 100, 2), round(statistics.variance(accuracies) * 100**2, 2),
            round(statistics.stdev(accuracies) * 100, 2))


def sensitivity(results: Iterable[tuple[str, bool]]) -> Sensitivity:
    """The figures of a run from its (configuration name, correct) per entry; a ValueError for no entry."""
    scores = config_scores(results)
    total = sum(score.total for score in scores.values())
    if not total:
        raise ValueError("no format-sensitivity entry was scored")
    max_delta, variance, std = spread([score.accuracy for score in scores.values()])
    return Sensitivity(sum(score.correct for score in scores.values()), total, MappingProxyType(scores), max_delta,
                       variance, std)


def leaderboard_rows(models: Sequence[tuple[str, Sensitivity | None]]) -> list[list[str]]:
    """bfcl's data_format_sensitivity.csv as rows: the header, then one row per (display name, figures or None
    when the model has no run), largest max delta first (ties keep their order, models without a run last)."""
    header = [*HEADER_PREFIX, *(f"Config {config.name}" for config in CONFIGS)]
    ordered = sorted(models, key=lambda model: model[1].max_delta if model[1] is not None else -1, reverse=True)
    rows = [header]
    for rank, (name, figures) in enumerate(ordered, start=1):
        if figures is None:
            rows.append([str(rank), name, MISSING, MISSING, *(MISSING for _ in CONFIGS)])
            continue
        cells = [_percent(figures.configs[config.name].accuracy) if config.name in figures.configs else MISSING
                 for config in CONFIGS]
        rows.append([str(rank), name, str(figures.max_delta), str(figures.std), *cells])
    return rows


def csv_text(rows: Sequence[Sequence[str]]) -> str:
    """Rows as bfcl writes its score files: cells joined by commas, no quoting, no newline after the last row."""
    return "\n".join(",".join(row) for row in rows)


def _percent(fraction: float) -> str:
    return f"{fraction * 100:.2f}%"
