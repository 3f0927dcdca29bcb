"""Report rows of the YAML suite -> a table per protocol, and the figures `<category>.accuracy` and `overall`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...report.compare import Spread, Unit
from ...report.summary import SuiteSummary, Table, outcome_counts

HEADERS = ["category", "scored/total", "errors", "accuracy", "95% interval", "detectable"]


def prefix(variant: str) -> str:
    return f"{variant}." if variant else ""


def variant_of(figure: str) -> str:
    """The protocol a figure's name is of: "" for the files' own, else its prefix (`fc.`, `prompt.`)."""
    head = figure.split(".", 1)[0]
    return head if head in ("fc", "prompt") and "." in figure else ""


def category_key(category: str) -> str:
    """A category as a figure names it: dots would read as a figure's parts."""
    return category.replace(".", "_")


def units(rows: list[dict[str, Any]]) -> list[Unit]:
    """A case is a unit of its category's accuracy (its turns passed together)."""
    out = []
    for row in rows:
        passed = None if row["outcome"] == "error" else row["outcome"] == "passed"
        figure = f"{prefix(row.get('variant', ''))}{category_key(row['category'])}.accuracy"
        out.append(Unit(figure, f"{figure}/{row['id']}", passed, (row["id"],)))
    return out


def combine(proportions: Mapping[str, float]) -> dict[str, float]:
    """`overall` (and `<variant>.overall`): the mean of the categories' accuracies, each category counting once,
    as a benchmark's groups do; a category of two cases weighs as much as one of fifty."""
    by_variant: dict[str, list[float]] = {}
    for name, value in proportions.items():
        by_variant.setdefault(variant_of(name), []).append(value)
    return {f"{prefix(variant)}overall": sum(values) / len(values) for variant, values in by_variant.items() if values}


def summarize_yaml(rows: list[dict[str, Any]]) -> SuiteSummary:
    from ...report.compare import run_spreads

    spreads = run_spreads(units(rows), combine)
    tables, figures = [], {}
    partial = False
    data: dict[str, Any] = {}
    for variant in sorted({row.get("variant", "") for row in rows}):
        mine = [row for row in rows if row.get("variant", "") == variant]
        body = []
        categories: dict[str, Any] = {}
        for category in sorted({row["category"] for row in mine}):
            members = [row for row in mine if row["category"] == category]
            scored = [row for row in members if row["outcome"] != "error"]
            total = max(int(row.get("category_size") or 0) for row in members) or len(members)
            partial = partial or len(scored) < total
            name = f"{prefix(variant)}{category_key(category)}.accuracy"
            spread = spreads.get(name)
            accuracy = sum(row["outcome"] == "passed" for row in scored) / len(scored) if scored else None
            if accuracy is not None:
                figures[name] = accuracy
            body.append([category, f"{len(scored)}/{total}", len(members) - len(scored), _number(accuracy),
                         _interval(spread), _number(spread.detectable if spread else None)])
            categories[category] = {"n": total, "scored": len(scored), "passed": sum(row["outcome"] == "passed"
                                                                                     for row in scored),
                                    "accuracy": accuracy, "interval": list(spread.interval) if spread else None}
        overall_name = f"{prefix(variant)}overall"
        overall = combine({key: value for key, value in figures.items()
                           if key.endswith(".accuracy") and variant_of(key) == variant}).get(overall_name)
        if overall is not None:
            figures[overall_name] = overall
            body.append(["OVERALL (mean of categories)", "", "", _number(overall), _interval(spreads.get(overall_name)),
                         _number(spreads[overall_name].detectable if overall_name in spreads else None)])
        title = "your cases (*.tooleval.yaml)" + (f", {variant} protocol" if variant else "")
        tables.append(Table(title, HEADERS, body))
        block = {"categories": categories, "overall": overall}
        if variant:
            data[variant] = block  # the other protocol's figures, apart
        else:
            data.update(block)
    data["partial"] = partial
    # the gateable figures first: reports without a renderer of this suite's own list its numbers in order
    return SuiteSummary("yaml", tables, figures, partial, outcome_counts(rows), {"figures": dict(figures), **data})


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _interval(spread: Spread | None) -> str:
    return "-" if spread is None else f"[{spread.interval[0]:.3f}, {spread.interval[1]:.3f}]"
