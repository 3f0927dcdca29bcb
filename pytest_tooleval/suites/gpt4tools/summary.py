"""Report rows of a GPT4Tools run -> upstream's table over all items, tool-use items and no-tool items."""

from __future__ import annotations

import math
from typing import Any

from ...json_value import JSONObject
from ...outcome import UNSCORED
from ...report.summary import SuiteSummary, Table, outcome_counts
from .metrics import ItemMetrics, MetricMeans, aggregate

METRICS = ("thought", "action", "args", "sr", "iou")
HEADERS = ["items", "scored/total", "errors", "SR_thought", "SR_act", "SR_args", "SR", "IoU"]
SUBSETS = (("all", "all", None), ("tool", "tool-use", "tool"), ("no_tool", "no-tool", "no_tool"))
VARIANT_TITLES = {
    "upstream": "upstream-compatible",
    "stop-at-observation": "variant: stop at 'Observation:', not upstream-compatible",
}


def summarize_gpt4tools(rows: list[dict[str, Any]]) -> SuiteSummary:
    """Plain means of the per-item metrics the tests computed, as upstream's EvalTools reports them.

    N is the number of scored items (upstream: the predictions matched to test items); an errored item has
    no metrics and is left out of N, and the table shows it under errors. An item whose reply was malformed
    has no metrics either, yet is in N, with every metric 0: what upstream gives an empty prediction. Means
    run in test-set order.
    """
    ordered = sorted(rows, key=lambda row: row["index"])
    scored = [row for row in ordered
              if row["outcome"] in ("passed", "failed") and (_has_metrics(row) or _malformed(row))]
    summary = aggregate(_item(row) for row in scored)
    means = dict(zip(("all", "tool", "no_tool"), (summary.overall, summary.tool, summary.no_tool), strict=True))
    sizes = {row["category"]: row["category_size"] for row in rows}
    errors = {key: sum(1 for row in rows if row["outcome"] == "error" and category in (None, row["category"]))
              for key, _, category in SUBSETS}
    totals = {key: sizes.get(category) if category else sum(sizes.values()) for key, _, category in SUBSETS}
    # the items that ran (-k, -m, --tooleval-sample choose them): the table's scored/total, as every suite's
    ran = {key: sum(1 for row in rows if category in (None, row["category"])) for key, _, category in SUBSETS}
    partial = any(means[key].n < (totals[key] or 0) for key in means)
    variants = sorted({(row.get("details") or {}).get("variant", "upstream") for row in scored
                       if not _malformed(row)})

    body = [[label, f"{means[key].n}/{ran[key]}", errors[key],
             *(_finite(getattr(means[key], metric)) for metric in METRICS)]
            for key, label, _ in SUBSETS]
    title = "GPT4Tools (" + "; ".join(VARIANT_TITLES.get(v, v) for v in variants or ["upstream"]) + ")"
    if partial:
        title += ": partial run (not every item was scored)"
    figures = {
        f"{'' if key == 'all' else key + '.'}{metric}": value
        for key, group in means.items()
        for metric in METRICS
        if (value := _finite(getattr(group, metric))) is not None
    }
    data = {
        "variant": variants[0] if len(variants) == 1 else variants,
        "upstream_compatible": variants in ([], ["upstream"]),
        "partial": partial,
        "subsets": {key: _json(means[key], totals[key], errors[key], ran[key]) for key in means},
    }
    return SuiteSummary("gpt4tools", [Table(title, HEADERS, body)], figures, partial, outcome_counts(rows), data)


def _has_metrics(row: dict[str, Any]) -> bool:
    details = row.get("details") or {}
    return all(key in details for key in (*METRICS, "uses_tool"))


def _malformed(row: dict[str, Any]) -> bool:
    """A failure no scorer scored (a malformed reply, scoring past its time limit)."""
    return row.get("error_type") in UNSCORED and not _has_metrics(row)


def _item(row: dict[str, Any]) -> ItemMetrics:
    if _malformed(row):  # nothing came back to score: an empty prediction's metrics, all 0
        return ItemMetrics(0.0, 0.0, 0.0, 0.0, 0.0, uses_tool=row["category"] == "tool")
    details = row["details"]

    def metric(name: str) -> float:
        return math.nan if details[name] is None else float(details[name])

    return ItemMetrics(metric("thought"), metric("action"), metric("args"), metric("sr"), metric("iou"),
                       uses_tool=bool(details["uses_tool"]))


def _finite(value: float) -> float | None:
    # A mean over no items (or upstream's NaN for an item without steps) shows as "-" and is no gate figure.
    return None if math.isnan(value) else value


def _json(means: MetricMeans, total: int | None, errors: int, ran: int) -> JSONObject:
    return {"n": means.n, "total": total, "ran": ran, "errors": errors,
            **{metric: _finite(getattr(means, metric)) for metric in METRICS}}
