"""ACEBench's summary in the reports (Figures.report_sections): per language (and protocol) its categories,
then the groups and OVERALL, as summary.py writes them; a member of another shape as its numeric figures."""

from __future__ import annotations

from collections.abc import Mapping

from ...report.sections import (
    Cell,
    CellTable,
    Data,
    Inline,
    ReportSection,
    Strong,
    count,
    fixed,
    generic_sections,
    interval,
    mapping,
    number,
    partial_note,
)

FC_NOTE = "function calling: not the leaderboard protocol"
HEADERS = ("category", "scored/total", "errors", "accuracy", "95% interval", "process acc")


def sections(title: str, summary: object) -> list[ReportSection]:
    """A section per language block (`en`, `en.fc`), titled with the revision it was scored against."""
    if not isinstance(summary, Mapping) or not summary:
        return generic_sections(title, summary)
    found = []
    for name, block in summary.items():
        if isinstance(block, Mapping) and isinstance(block.get("categories"), Mapping):
            revision = f" ({block['revision']})" if block.get("revision") else ""
            found.append(_language(f"{title} {name}{revision}", str(name), block))
        else:
            found += generic_sections(f"{title} {name}", block)
    return found


def _language(title: str, name: str, block: Mapping[str, object]) -> ReportSection:
    """Categories, then the groups and OVERALL; the interval column only when the block has intervals."""
    categories = [mapping(entry) for entry in mapping(block["categories"]).values()]  # a Mapping: sections checked
    groups = [(str(key), mapping(group)) for key, group in mapping(block.get("groups")).items()]
    overall: object = block.get("overall")
    overall_interval: object = block.get("overall_interval")
    if isinstance(overall, Mapping):  # {"value", "interval"}, should the figure become an object
        overall_interval = overall.get("interval")
        overall = overall.get("value")
    with_interval = any(interval(entry.get("interval")) for entry in categories + [group for _, group in groups])
    with_interval = with_interval or interval(overall_interval) is not None
    suffix = " (partial)" if block.get("partial") is True else ""

    rows: list[tuple[Cell, ...]] = []
    for entry in categories:
        scored = f"{count(entry.get('scored'))}/{count(entry.get('n'))}"
        if entry.get("steps") is not None:
            scored += f" ({count(entry.get('correct_steps'))}/{count(entry.get('steps'))} steps)"
        rows.append((Data(entry.get("category", "-")), scored, count(entry.get("errors")),
                     fixed(entry.get("accuracy")), interval(entry.get("interval")), fixed(entry.get("process_acc"))))
    for key, group in groups:
        rows.append(((Data(group.get("name", key)), suffix), "", "", fixed(group.get("value")),
                     interval(group.get("interval")), None))
    if number(overall) is not None:
        rows.append((Strong((f"OVERALL{suffix}",)), "", "", Strong((fixed(overall),)), interval(overall_interval),
                     None))
    headers: tuple[str, ...] = HEADERS
    if not with_interval:
        headers = headers[:4] + headers[5:]
        rows = [row[:4] + row[5:] for row in rows]
    heading: Inline = (Data(title), *([f" ({FC_NOTE})"] if name.endswith(".fc") else []))
    return ReportSection(heading, (*partial_note(block, "groups and OVERALL renormalised over the categories that ran"),
                                   CellTable(headers, tuple(rows), right=(2, 3, len(headers) - 1))))
