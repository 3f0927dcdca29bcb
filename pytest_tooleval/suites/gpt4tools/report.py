"""GPT4Tools' summary in the reports (Figures.report_sections): upstream's means (SR_thought, SR_act,
SR_args, SR, IoU) over all items, the tool-use items and the no-tool items."""

from __future__ import annotations

from collections.abc import Mapping

from ...report.sections import (
    Cell,
    CellTable,
    Data,
    ReportSection,
    count,
    fixed,
    generic_sections,
    joined,
    mapping,
    partial_note,
)

SUBSETS = (("all", "all"), ("tool", "tool-use"), ("no_tool", "no-tool"))
METRICS = (("thought", "SR_thought"), ("action", "SR_act"), ("args", "SR_args"), ("sr", "SR"), ("iou", "IoU"))


def sections(title: str, summary: object) -> list[ReportSection]:
    if not isinstance(summary, Mapping) or not isinstance(summary.get("subsets"), Mapping):
        return generic_sections(title, summary)
    return [_subsets(title, summary)]


def _subsets(title: str, block: Mapping[str, object]) -> ReportSection:
    subsets = mapping(block["subsets"])  # a mapping: sections() checked
    keys = [(key, label) for key, label in SUBSETS if key in subsets]
    keys += [(str(key), str(key)) for key in subsets if key not in dict(SUBSETS)]
    rows: list[tuple[Cell, ...]] = []
    for key, label in keys:
        subset = mapping(subsets[key])
        # of the items that ran; a report from before it kept them: of the test set
        rows.append((Data(label), f"{count(subset.get('n'))}/{count(subset.get('ran', subset.get('total')))}",
                     count(subset.get("errors")), *(fixed(subset.get(metric)) for metric, _ in METRICS)))
    variants = block.get("variant")
    names = joined(variants if isinstance(variants, list) else [variants or "upstream"])
    setting = ("upstream-compatible",) if block.get("upstream_compatible") is True else ("variant: ", *names)
    return ReportSection((Data(title), " (", *setting, ")"), (
        *partial_note(block, "not every item was scored"),
        CellTable(("items", "scored/total", "errors", *(header for _, header in METRICS)), tuple(rows),
                  right=tuple(range(2, 8)))))
