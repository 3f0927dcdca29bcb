"""Report rows of the YAML suite -> a table per protocol, and the figures `<category>.accuracy` and `overall`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...json_value import JSONObject
from ...report.compare import Spread
from ...report.summary import SuiteSummary, Table, outcome_counts
from ..base import Unit

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
    """A table per protocol (the run's own, then under --tooleval-mode both the other); `data` holds the same as
    `blocks`, one per table: each category's counts, accuracy, Wilson interval and detectable difference, OVERALL
    with its bootstrap interval, and the cases that failed with the checks that failed (report/markdown.py and
    report/html.py render them). Values are kept at full precision: the reports round them as the table does."""
    from ...report.compare import run_spreads

    spreads = run_spreads(units(rows), combine)
    tables, figures, blocks = [], {}, []
    for variant in sorted({row.get("variant", "") for row in rows}):  # "" (the run's own protocol) first
        mine = [row for row in rows if row.get("variant", "") == variant]
        body = []
        categories: JSONObject = {}
        partial = False
        for category in sorted({row["category"] for row in mine}):
            members = [row for row in mine if row["category"] == category]
            scored = [row for row in members if row["outcome"] != "error"]
            passed = sum(row["outcome"] == "passed" for row in scored)
            total = max(int(row.get("category_size") or 0) for row in members) or len(members)
            partial = partial or len(scored) < total
            name = f"{prefix(variant)}{category_key(category)}.accuracy"
            spread = spreads.get(name)
            accuracy = passed / len(scored) if scored else None
            if accuracy is not None:
                figures[name] = accuracy
            # scored/total of the cases that ran, as every suite's table (-k may run part of a category)
            body.append([category, f"{len(scored)}/{len(members)}", len(members) - len(scored), _number(accuracy),
                         _interval(spread), _number(spread.detectable if spread else None)])
            categories[category] = {"category": category, "figure": name, "n": len(members), "benchmark_total": total,
                                    "scored": len(scored),
                                    "passed": passed, "errors": len(members) - len(scored), "accuracy": accuracy,
                                    **_spread_fields(spread)}
        overall_name = f"{prefix(variant)}overall"
        overall = combine({key: value for key, value in figures.items()
                           if key.endswith(".accuracy") and variant_of(key) == variant}).get(overall_name)
        spread = spreads.get(overall_name)
        if overall is not None:
            figures[overall_name] = overall
            body.append(["OVERALL (mean of categories)", "", "", _number(overall), _interval(spread),
                         _number(spread.detectable if spread else None)])
        title = "your cases (*.tooleval.yaml)" + (f", {variant} protocol" if variant else "")
        tables.append(Table(title, HEADERS, body))
        failed = [{"case": row.get("test_id") or row["id"], "category": row["category"],
                   "checks": list((row.get("details") or {}).get("failed") or []), "error_type": row.get("error_type")}
                  for row in sorted(mine, key=lambda row: (row["category"], row["index"]))
                  if row["outcome"] == "failed"]
        blocks.append({"variant": variant, "title": title, "categories": categories, "overall_figure": overall_name,
                       "overall": overall, **{f"overall_{key}": value for key, value in _spread_fields(spread).items()},
                       "failed": failed, "partial": partial})
    partial = any(block["partial"] for block in blocks)
    # the gateable figures first: a report renderer that does not know this suite lists its numbers in order
    return SuiteSummary("yaml", tables, figures, partial, outcome_counts(rows),
                        {"figures": dict(figures), "partial": partial, "blocks": blocks})


def _spread_fields(spread: Spread | None) -> JSONObject:
    """A figure's 95% interval and the smallest difference it could detect, unrounded; nothing without them."""
    return {} if spread is None else {"interval": list(spread.interval), "detectable": spread.detectable}


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _interval(spread: Spread | None) -> str:
    return "-" if spread is None else f"[{spread.interval[0]:.3f}, {spread.interval[1]:.3f}]"
