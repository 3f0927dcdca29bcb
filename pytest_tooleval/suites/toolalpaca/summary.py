"""Report rows of a ToolAlpaca run -> Procedure / Response / Overall per subset (toolalpaca-gpt4tools §4.5).

The same table renders an imported upstream judge file (`render_judged`), so a published run and ours sit
side by side.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...report.summary import SuiteSummary, Table, outcome_counts
from ...text import counted
from .data import SUBSETS, UNDOCUMENTED_GOLD, make_test_id
from .importer import load_judged
from .judge import Judgement
from .scoring import DOCUMENTED_SUFFIX, Summary, summarise

__all__ = ["HEADERS", "render_judged", "summarize_toolalpaca", "summary_row"]

HEADERS = ["subset", "run/total", "errors", "unjudged", "unparsed", "Procedure", "Response", "Overall"]
_UNDOCUMENTED_IDS = frozenset(make_test_id(*key) for key in UNDOCUMENTED_GOLD)


def _percent(value: float | None) -> str | None:
    return None if value is None else f"{value:.1f}"


def _cell(value: float | None) -> str | None:
    return None if value is None else f"{value:.1f}%"  # a string, so tables keep upstream's one decimal


def summary_row(label: str, summary: Summary, total: int | None, errors: int = 0) -> list[object]:
    """One table row. `errors` (infrastructure) are inside `summary` as unjudged instructions; the unjudged
    column shows upstream's own error_num (crashed episodes and answers without a tool call)."""
    return [label, f"{summary.num}/{total if total is not None else '?'}", errors, summary.error_num - errors,
            summary.unparsed, _cell(summary.procedure_rate), _cell(summary.response_rate),
            _cell(summary.overall_rate)]


def _judgement(row: dict[str, Any]) -> Judgement:
    """What the judge decided for a report row; an errored test was never judged, and counts as a failure,
    as upstream counts every instruction it could not complete (§4.5)."""
    details = row.get("details") or {}
    if row["outcome"] == "error" or not details.get("judged"):
        return Judgement(judged=False)
    return Judgement(True, details.get("process_correctness", ""), details.get("final_response_correctness", ""))


def summarize_toolalpaca(rows: list[dict[str, Any]]) -> SuiteSummary:
    """Upstream's three percentages per subset over every instruction that ran, errors included.

    Also ``<subset>-documented``, without the instructions whose gold calls undocumented functions (§6.3).
    The run is partial when a subset did not run in full (-k, -m, skipped real APIs).
    """
    known = [subset for subset in SUBSETS if any(row["category"] == subset for row in rows)]
    body, figures, subsets_data = [], {}, {}
    partial = False
    for subset in known:
        mine = [row for row in rows if row["category"] == subset]
        total = max(row["category_size"] for row in mine)
        partial = partial or len(mine) < total
        views = [(subset, mine, total)]
        flagged = [row for row in mine if row["id"] in _UNDOCUMENTED_IDS]
        if flagged:
            views.append((subset + DOCUMENTED_SUFFIX, [row for row in mine if row["id"] not in _UNDOCUMENTED_IDS],
                          total - sum(1 for key in UNDOCUMENTED_GOLD if key[0] == subset)))
        for label, view, view_total in views:
            summary = summarise(_judgement(row) for row in view)
            errors = sum(1 for row in view if row["outcome"] == "error")
            body.append(summary_row(label, summary, view_total, errors))
            for name, rate in (("procedure", summary.procedure_rate), ("response", summary.response_rate),
                               ("overall", summary.overall_rate)):
                if rate is not None:
                    figures[f"{label}.{name}"] = rate / 100
            subsets_data[label] = {**summary.to_dict(), "total": view_total, "infra_errors": errors}
    setups = sorted({(row.get("details") or {}).get("setup", "") for row in rows} - {""})
    deviations = sorted({item for row in rows for item in (row.get("details") or {}).get("deviations", [])})
    if not setups:
        title = "ToolAlpaca (no instruction was scored: setup unknown)"
    elif deviations:
        title = "ToolAlpaca (not upstream-compatible: " + "; ".join(deviations) + ")"
    else:
        title = "ToolAlpaca (upstream-compatible setup)"
    if partial:
        title += ": partial run (not every instruction of a subset ran)"
    data = {
        "setup": setups[0] if len(setups) == 1 else setups,
        "upstream_compatible": bool(setups) and not deviations,
        "deviations": deviations,
        "partial": partial,
        "subsets": subsets_data,
        "note": "percentages over every instruction that ran; errors and unjudged episodes count as failures; "
                "each sample's transcript holds its episode record and the judge's prompt and answer",
    }
    return SuiteSummary("toolalpaca", [Table(title, HEADERS, body)], figures, partial, outcome_counts(rows), data)


def render_judged(path: Path | str) -> str:
    """An upstream judge file (``evalution_outputs/*.json``) as our summary table, plus a one-line check of its
    own ``statistics`` block."""
    from tabulate import tabulate

    judged = load_judged(path)
    summary = judged.summary()
    name = Path(path).name
    rows = [summary_row(Path(path).stem, summary, summary.num)]
    table = tabulate(rows, headers=HEADERS, tablefmt="simple", missingval="-", disable_numparse=True)
    if judged.statistics is None:
        check = "the file has no statistics block"
    elif judged.statistics == summary.statistics():
        check = "its statistics block agrees"
    else:
        check = f"its statistics block differs: {judged.statistics}"
    disagree = sum(1 for entry in judged.entries if entry.reparsed not in (None, (entry.judgement.process,
                                                                               entry.judgement.response)))
    line = (f"{name}: Procedure {_percent(summary.procedure_rate)}, Response {_percent(summary.response_rate)}, "
            f"Overall {_percent(summary.overall_rate)} ({counted(summary.num, 'instruction')}, "
            f"{summary.error_num} unjudged; "
            f"{check}; our parser re-reads {counted(disagree, 'stored verdict')} differently)")
    return f"ToolAlpaca judge file {name} (upstream format)\n{table}\n\n{line}"
