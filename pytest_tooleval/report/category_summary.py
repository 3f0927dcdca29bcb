"""The default summary of a suite (`CategoryFigures`, suites/base.py): per language (and variant), each category's
accuracy with its 95% Wilson interval, and `overall`, the mean of the categories' with a bootstrap interval.

Figures are named `<block>.<category>` and `<block>.overall`, a block being `<language>[.<variant>]`, and the
summary's `data` holds one member per block shaped as report/sections.py draws it (`categories`, `overall`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..json_value import JSONObject, JSONValue
from .row import whole
from .suite_summary import SuiteSummary, Table, Unit, outcome_counts

HEADERS = ["category", "scored/total", "errors", "accuracy", "95% interval"]


def block_of(row: Mapping[str, JSONValue]) -> str:
    """A row's block: its language, then its variant ("" for the benchmark's own protocol)."""
    variant = row.get("variant") or ""
    return f"{row['language']}.{variant}" if variant else str(row["language"])


def figure_of(row: Mapping[str, JSONValue]) -> str:
    return f"{block_of(row)}.{str(row['category']).replace('.', '_')}"  # a dot would read as a figure's parts


def category_units(rows: list[JSONObject]) -> list[Unit]:
    """A sample is a unit of its category's accuracy."""
    return [Unit(figure_of(row), f"{figure_of(row)}/{row['id']}",
                 None if row["outcome"] == "error" else row["outcome"] == "passed", (str(row["id"]),))
            for row in rows]


def combine_categories(proportions: Mapping[str, float]) -> dict[str, float]:
    """Each block's `overall`: the mean of its categories' accuracies, each category counting once."""
    by_block: dict[str, list[float]] = {}
    for name, value in proportions.items():
        by_block.setdefault(name.rsplit(".", 1)[0], []).append(value)
    return {f"{block}.overall": sum(values) / len(values) for block, values in by_block.items()}


def summarize_categories(suite: str, title: str, rows: list[JSONObject]) -> SuiteSummary:
    """One table per block; the figures and the JSON block at full precision (the reports round them)."""
    from .compare import run_spreads

    spreads = run_spreads(category_units(rows), combine_categories)
    tables, figures, data = [], {}, {}
    partial = False
    for block in sorted({block_of(row) for row in rows}):
        mine = [row for row in rows if block_of(row) == block]
        body: list[list[Any]] = []
        categories: JSONObject = {}
        first: dict[str, int] = {}  # categories in the benchmark's order
        for row in sorted(mine, key=lambda row: whole(row.get("index") or 0)):
            first.setdefault(str(row["category"]), len(first))
        for category in first:
            members = [row for row in mine if str(row["category"]) == category]
            scored = [row for row in members if row["outcome"] != "error"]
            passed = sum(row["outcome"] == "passed" for row in scored)
            total = max(whole(row.get("category_size") or 0) for row in members) or len(members)
            partial = partial or len(scored) < total
            name = figure_of(members[0])
            spread = spreads.get(name)
            accuracy = passed / len(scored) if scored else None
            if accuracy is not None:
                figures[name] = accuracy
            body.append([category, f"{len(scored)}/{len(members)}", len(members) - len(scored), accuracy,
                         _interval(spread.interval if spread else None)])
            categories[category] = {"n": len(members), "scored": len(scored), "passed": passed,
                                    "errors": len(members) - len(scored), "accuracy": accuracy,
                                    "interval": list(spread.interval) if spread else None}
        overall = spreads.get(f"{block}.overall")
        if overall is not None:
            figures[f"{block}.overall"] = overall.value
            body.append(["OVERALL (mean of categories)", "", "", overall.value, _interval(overall.interval)])
        tables.append(Table(f"{title} {block}", HEADERS, body))
        data[block] = {"categories": categories, "overall": overall.value if overall else None,
                       "overall_interval": list(overall.interval) if overall else None}
    return SuiteSummary(suite, tables, figures, partial, outcome_counts(rows),
                        {"figures": dict(figures), "partial": partial, **data})


def _interval(interval: tuple[float, float] | None) -> str:
    return "-" if interval is None else f"[{interval[0]:.3f}, {interval[1]:.3f}]"
