"""BFCL's summary in the reports: per protocol the categories, then the leaderboard's combined figures (bfcl §6),
as tables (Markdown) and as charts of figures (HTML), each figure under its gate name."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...report.sections import (
    Cell,
    CellTable,
    Data,
    FigureBlock,
    ReportSection,
    count,
    figure_row,
    fixed,
    generic_figure_blocks,
    generic_sections,
    interval,
    mapping,
    partial_note,
)
from .summary import COMBINED

HEADERS = ("figure", "scored/total", "errors", "accuracy", "95% interval")


def _blocks(summary: object) -> list[tuple[str, Mapping[str, Any]]]:
    """The protocol blocks (`prompt`, `function_calling`) of a summary shaped as summary.py writes it."""
    if not isinstance(summary, Mapping):
        return []
    return [(str(name), block) for name, block in summary.items()
            if isinstance(block, Mapping) and isinstance(block.get("categories"), Mapping)
            and isinstance(block.get("groups"), Mapping)]


def _prefix(block: Mapping[str, Any]) -> str:
    protocol = str(block.get("protocol") or "prompt")
    return "" if protocol == "prompt" else f"{protocol}."


def sections(title: str, summary: object) -> list[ReportSection]:
    blocks = _blocks(summary)
    if not blocks:
        return generic_sections(title, summary)
    found = []
    for name, block in blocks:
        rows: list[tuple[Cell, ...]] = []
        for category, raw in mapping(block["categories"]).items():
            entry = mapping(raw)
            rows.append((Data(str(category)), f"{count(entry.get('scored'))}/{count(entry.get('n'))}",
                         count(entry.get("errors")), fixed(entry.get("accuracy")),
                         interval(entry.get("interval")) or ""))
        groups = mapping(block["groups"])
        for key, label in COMBINED.items():
            if key in groups:
                entry = mapping(groups[key])
                rows.append((Data(label), "", "", fixed(entry.get("value")), interval(entry.get("interval")) or ""))
        found.append(ReportSection((Data(f"{title}, {name.replace('_', ' ')}"),), (
            *partial_note(block, "figures renormalised over what ran"),
            CellTable(HEADERS, tuple(rows), right=(1, 2, 3)))))
    return found


def figure_blocks(title: str, summary: object) -> list[FigureBlock]:
    blocks = _blocks(summary)
    if not blocks:
        return generic_figure_blocks(title, summary)
    found = []
    for name, block in blocks:
        prefix = _prefix(block)
        rows = [figure_row(f"{prefix}{category}.accuracy", str(category), "category", mapping(entry),
                           mapping(entry).get("accuracy"))
                for category, entry in mapping(block["categories"]).items()]
        groups = mapping(block["groups"])
        rows += [figure_row(f"{prefix}{key}", label, "overall" if key == "overall.single_turn" else "group",
                            mapping(groups[key]), mapping(groups[key]).get("value"))
                 for key, label in COMBINED.items() if key in groups]
        partial = None
        if block.get("partial") is True:
            reasons = "; ".join(str(reason) for reason in block.get("partial_reasons") or []) or "not every sample"
            partial = f"Partial run: combined figures renormalised over what ran ({reasons})."
        found.append(FigureBlock(name, f"{title}, {name.replace('_', ' ')}", tuple(rows), partial, (name,), "en",
                                 prefix.rstrip(".")))
    return found
