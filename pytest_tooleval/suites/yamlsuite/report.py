"""Your cases in the reports: a block per protocol (summary.py), each category's cases, accuracy, interval and
detectable difference, OVERALL (the mean of the categories), and the failed cases with the checks that failed;
as headed tables (Figures.report_sections) and as charts of figures (Figures.figure_blocks)."""

from __future__ import annotations

from collections.abc import Mapping

from ...report.sections import (
    Cell,
    CellTable,
    Data,
    FigureBlock,
    Paragraph,
    ReportSection,
    Strong,
    count,
    figure_row,
    fixed,
    generic_figure_blocks,
    generic_sections,
    interval,
    items,
    joined,
    mapping,
    number,
    partial_note,
)

TITLE = "Your cases (*.tooleval.yaml)"
PAGE_TITLE = "your cases (*.tooleval.yaml)"  # the HTML page's heading of a block
FAILED_SHOWN = 200  # failed cases listed in the Markdown (the JSON report lists them all)
LANGUAGE = "custom"  # the language of your cases' rows (suite.py)
#: the summary members the blocks draw: the page shows no other member of a summary that has blocks
DRAWN = ("blocks", "figures", "partial")


def _blocks(summary: object) -> list[Mapping[str, object]] | None:
    """The summary's blocks, or None for a summary of another shape."""
    if not isinstance(summary, Mapping) or not isinstance(summary.get("blocks"), list):
        return None
    return [mapping(block) for block in summary["blocks"]]


def sections(summary: object) -> list[ReportSection]:
    blocks = _blocks(summary)
    if blocks is None:
        return generic_sections(TITLE, summary)
    found = [_section(block) for block in blocks]
    repeats = mapping(summary).get("repeats")
    if isinstance(repeats, Mapping):  # --tooleval-repeats: report/repeated.py's figures
        found += generic_sections(f"{TITLE}: repeats", repeats)
    return found


def _section(block: Mapping[str, object]) -> ReportSection:
    variant = block.get("variant")
    rows: list[tuple[Cell, ...]] = []
    for entry in (mapping(entry) for entry in mapping(block.get("categories")).values()):
        rows.append((Data(entry.get("category", "-")), f"{count(entry.get('scored'))}/{count(entry.get('n'))}",
                     count(entry.get("errors")), fixed(entry.get("accuracy")), interval(entry.get("interval")),
                     fixed(entry.get("detectable"))))
    if number(block.get("overall")) is not None:
        rows.append(((Strong(("OVERALL",)), " (mean of categories)"), "", "", Strong((fixed(block.get("overall")),)),
                     interval(block.get("overall_interval")), fixed(block.get("overall_detectable"))))
    body: list[Paragraph | CellTable] = [
        *partial_note(block, "not every case was scored"),
        CellTable(("category", "scored/total", "errors", "accuracy", "95% interval", "detectable"), tuple(rows),
                  right=(2, 3, 5))]
    failed = [mapping(entry) for entry in items(block.get("failed"))]
    if not failed:
        body.append(Paragraph(("No case failed.",)))
    else:
        listed = tuple((Data(entry.get("case", "-")), Data(entry.get("category", "-")),
                        joined(items(entry.get("checks")), ", ") or None) for entry in failed[:FAILED_SHOWN])
        body += [Paragraph((f"Failed cases: {len(failed)}",)), CellTable(("case", "category", "what failed"), listed)]
        if len(failed) > FAILED_SHOWN:
            body.append(Paragraph((f"and {len(failed) - FAILED_SHOWN} more (the JSON report lists them all)",)))
    protocol = (", ", Data(variant), " protocol") if variant else ()
    return ReportSection((Data(TITLE), *protocol), tuple(body))


def figure_blocks(title: str, summary: object) -> list[FigureBlock]:
    """A chart per protocol, each category's figure named in its entry; the failed cases listed under it."""
    blocks = _blocks(summary)
    if blocks is None:
        return generic_figure_blocks(title, summary)
    return [_figure_block(block) for block in blocks]


def _figure_block(block: Mapping[str, object]) -> FigureBlock:
    variant = str(block.get("variant") or "")
    rows = [figure_row(str(entry.get("figure")), str(key), "category", entry, entry.get("accuracy"))
            for key, entry in ((key, mapping(entry)) for key, entry in mapping(block.get("categories")).items())]
    if block.get("overall") is not None:
        overall = {"interval": block.get("overall_interval"), "detectable": block.get("overall_detectable")}
        rows.append(figure_row(str(block.get("overall_figure") or "overall"), "OVERALL", "overall", overall,
                               block.get("overall")))
    failed = [mapping(entry) for entry in items(block.get("failed"))]
    listing = CellTable(("case", "category", "what failed"),
                        tuple((Data(entry.get("case")), Data(entry.get("category")),
                               joined(items(entry.get("checks")), ", ") or None) for entry in failed),
                        caption=f"failed cases: {len(failed)}", empty="No case failed.")
    partial = ("Partial run: not every case was scored; OVERALL is the mean of the categories that were."
               if block.get("partial") is True else None)
    title = PAGE_TITLE + (f", {variant} protocol" if variant else "")
    return FigureBlock(variant or "cases", title, tuple(rows), partial, DRAWN, LANGUAGE, variant, listing)
