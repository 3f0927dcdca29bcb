"""ToolAlpaca's summary in the reports (Figures.report_sections): upstream's Procedure / Response / Overall
percentages per subset, one decimal as upstream prints them, with the setup they were judged under."""

from __future__ import annotations

from collections.abc import Mapping

from ...report.sections import (
    Cell,
    CellTable,
    Data,
    Inline,
    Paragraph,
    ReportSection,
    count,
    generic_sections,
    items,
    joined,
    mapping,
    number,
    partial_note,
    percent,
)

HEADERS = ("subset", "run/total", "errors", "unjudged", "unparsed", "Procedure", "Response", "Overall")


def sections(title: str, summary: object) -> list[ReportSection]:
    if not isinstance(summary, Mapping) or not isinstance(summary.get("subsets"), Mapping):
        return generic_sections(title, summary)
    return [_subsets(title, summary)]


def _subsets(title: str, block: Mapping[str, object]) -> ReportSection:
    rows: list[tuple[Cell, ...]] = []
    for label, entry in mapping(block["subsets"]).items():  # a mapping: sections() checked
        subset = mapping(entry)
        infra, unjudged = number(subset.get("infra_errors")), number(subset.get("error_num"))
        unparsed = max(number(mapping(subset.get(key)).get("unparsed")) or 0 for key in ("process", "response"))
        rows.append((Data(label), f"{count(subset.get('num'))}/{count(subset.get('total'))}", count(infra),
                     None if unjudged is None else count(unjudged - (infra or 0)), count(unparsed),
                     percent(subset.get("procedure")), percent(subset.get("response_rate")),
                     percent(subset.get("overall"))))
    deviations = joined(items(block.get("deviations")))
    if block.get("upstream_compatible") is True:
        setting: Inline = ("upstream-compatible setup",)
    elif deviations:
        setting = ("not upstream-compatible: ", *deviations)
    else:
        setting = ("setup unknown",)
    body: list[Paragraph | CellTable] = [*partial_note(block, "not every instruction of a subset ran")]
    if block.get("setup"):
        setups = block["setup"] if isinstance(block["setup"], list) else [block["setup"]]
        body.append(Paragraph(("setup: ", *joined(setups))))
    body.append(CellTable(HEADERS, tuple(rows), right=tuple(range(2, 8))))
    if block.get("note"):
        body.append(Paragraph((Data(block["note"], limit=400),), emphasis=True))
    return ReportSection((Data(title), " (", *setting, ")"), tuple(body))
