"""What a suite's summary looks like in a report, in values no renderer owns: the suite contract's
`report_sections` and `figure_blocks` (suites/base.py) give them, the Markdown (markdown.py) and the HTML page
(html.py) render them. No suite is named here: a suite that says nothing of its own, or a report of a suite not
installed here (a merge of another package's shards), gets the generic views below.

- `ReportSection`: a heading and its body, paragraphs and tables of cells; the Markdown summary renders these.
- `FigureBlock`: figures (categories, groups, OVERALL) with their intervals, for a chart; the HTML page draws
  these, and shows the suite's other summary members as JSON.

Text in them is either our own words (a `str`, shown as it is: it may hold formatted numbers and markup-free
punctuation) or `Data` from the report (escaped by each renderer, and cut in the Markdown). The number helpers
format figures as every report shows them ("-" where there is no number).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

__all__ = ["TEXT_LIMIT", "Cell", "CellTable", "Data", "FigureBlock", "FigureRow", "Inline", "Marks", "Paragraph",
           "ReportSection", "Run", "Strong", "count", "figure_row", "fixed", "generic_figure_blocks",
           "generic_sections", "interval", "items", "joined", "mapping", "number", "pair", "partial_note", "percent"]

TEXT_LIMIT = 200  # characters of one data text (an id, an error) the Markdown shows; longer ones end with "..."
GENERIC_ROWS = 200  # figures of a block shown in the generic view


@dataclass(frozen=True)
class Data:
    """Text taken from the report (an id, a category, a reason): each renderer escapes it; the Markdown shows
    at most `limit` characters of it."""

    value: object
    limit: int = TEXT_LIMIT


@dataclass(frozen=True)
class Strong:
    """Text shown strong (OVERALL)."""

    text: Inline


#: a run of text: our own words, data from the report, or strong text
Run: TypeAlias = "str | Data | Strong"
#: runs of text, shown one after the other
Inline: TypeAlias = "tuple[Run, ...]"
#: a table cell: a run, runs, or None where there is nothing to show (each renderer's own mark)
Cell: TypeAlias = "Run | Inline | None"


@dataclass(frozen=True)
class Marks:
    """How a renderer shows text: our own words, data from the report, strong text, and a cell with nothing."""

    ours: Callable[[str], str]
    data: Callable[[Data], str]
    strong: Callable[[str], str]
    nothing: str

    def show(self, cell: Cell) -> str:
        """A cell, or a title's or a paragraph's runs, as the renderer's text."""
        if cell is None:
            return self.nothing
        runs = cell if isinstance(cell, tuple) else (cell,)
        return "".join(self.data(run) if isinstance(run, Data) else self.strong(self.show(run.text))
                       if isinstance(run, Strong) else self.ours(run) for run in runs)


@dataclass(frozen=True)
class Paragraph:
    text: Inline
    emphasis: bool = False  # a note on the figures (a partial run, a setup's caveat)


@dataclass(frozen=True)
class CellTable:
    """A table of cells; `right` the columns of numbers, aligned right; `empty` what is said instead of a table
    without rows ("" leaves the table, headers alone)."""

    headers: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    right: tuple[int, ...] = ()
    caption: str = ""
    empty: str = ""


@dataclass(frozen=True)
class ReportSection:
    """One heading of a suite's summary, and what stands under it, in order."""

    title: Inline
    body: tuple[Paragraph | CellTable, ...]


@dataclass(frozen=True)
class FigureRow:
    """One figure of a block: a category, a group or OVERALL.

    `figure` is its name relative to the suite (`en.normal_atom_bool`), as the comparison and the gate name it
    after the suite's; the rest is shown beside its bar.
    """

    figure: str
    label: str
    kind: str  # "category", "group" or "overall"
    current: float | None
    interval: tuple[float, float] | None = None
    scored: str = ""  # "scored/total", as text
    errors: int | None = None
    process: float | None = None  # a process accuracy beside the accuracy, where the suite has one
    detectable: float | None = None  # the smallest difference the block's size can detect


@dataclass(frozen=True)
class FigureBlock:
    """A chart of figures: one summary block of a suite (a language, a protocol).

    Attributes:
        name: the block's name within the suite; the page's anchor is made of it.
        title: its heading.
        rows: its figures, categories first, then groups, then OVERALL.
        partial: the sentence said when the run did not cover the block (None: it did).
        members: the suite's summary members the block draws; the page shows the others as JSON.
        language, variant: the sample rows its figures are made of (a flipped unit's samples are found by them).
        listing: a table under the figures (your failed cases), or None.
    """

    name: str
    title: str
    rows: tuple[FigureRow, ...]
    partial: str | None
    members: tuple[str, ...]
    language: str
    variant: str = ""
    listing: CellTable | None = None


# --- numbers --------------------------------------------------------------------------------------------------


def number(value: object) -> float | None:
    """A finite number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def fixed(value: object, spec: str = ".3f") -> str:
    """A figure as the reports show it ("-" where there is none)."""
    found = number(value)
    return "-" if found is None else format(found, spec)


def count(value: object) -> str:
    """A count with thousands separators (a fraction with three places; "-" where there is none)."""
    found = number(value)
    if found is None:
        return "-"
    return f"{int(found):,}" if found == int(found) else f"{found:,.3f}"


def percent(value: object) -> str:
    """A percentage with one decimal, as upstream prints its own ("-" where there is none)."""
    found = number(value)
    return "-" if found is None else f"{found:.1f}%"


def pair(value: object) -> tuple[float, float] | None:
    """A two-number list as (low, high), else None."""
    if isinstance(value, (list, tuple)) and len(value) == 2:
        low, high = number(value[0]), number(value[1])
        if low is not None and high is not None:
            return low, high
    return None


def interval(value: object, spec: str = ".3f") -> str | None:
    """`[low, high]` from a two-number list, else None."""
    bounds = pair(value)
    return None if bounds is None else f"[{bounds[0]:{spec}}, {bounds[1]:{spec}}]"


def mapping(value: object) -> Mapping[str, Any]:
    """A summary member read as an object (another shape reads as an empty one)."""
    return value if isinstance(value, Mapping) else {}


def items(value: object) -> list[Any]:
    """A summary member read as a list (another shape reads as an empty one)."""
    return list(value) if isinstance(value, (list, tuple)) else []


def joined(values: Iterable[object], separator: str = "; ") -> Inline:
    """Data texts one after the other, with our separator between them."""
    runs: list[Run] = []
    for value in values:
        runs += [separator, Data(value)] if runs else [Data(value)]
    return tuple(runs)


def partial_note(block: Mapping[str, Any], what: str) -> tuple[Paragraph, ...]:
    """The note under a block the run did not cover (`partial: true`, with its `partial_reasons`), or nothing."""
    if block.get("partial") is not True:
        return ()
    reasons = joined(items(block.get("partial_reasons")))
    because: Inline = (" (", *reasons, ")") if reasons else ()
    return (Paragraph(("partial run", *because, f": {what}"), emphasis=True),)


# --- the generic views ----------------------------------------------------------------------------------------


def generic_sections(title: str, block: object) -> list[ReportSection]:
    """A block of any shape as its numeric figures by dotted name (`en.categories.x.accuracy`)."""
    figures = list(_numeric(block))
    rows = tuple((Data(key), count(value) if isinstance(value, int) else fixed(value))
                 for key, value in figures[:GENERIC_ROWS])
    body: tuple[Paragraph | CellTable, ...] = (
        CellTable(("figure", "value"), rows, right=(1,), empty="no numeric figures"),)
    if len(figures) > GENERIC_ROWS:
        body += (Paragraph((f"and {len(figures) - GENERIC_ROWS} more (see the JSON report)",)),)
    return [ReportSection((Data(title),), body)]


def _numeric(value: object, prefix: str = "", depth: int = 0) -> Iterable[tuple[str, int | float]]:
    if isinstance(value, Mapping) and depth < 8:
        for key, item in value.items():
            yield from _numeric(item, f"{prefix}{key}.", depth + 1)
    elif prefix and (found := number(value)) is not None:
        yield prefix[:-1], value if isinstance(value, int) else found


def generic_figure_blocks(title: str, block: object) -> list[FigureBlock]:
    """Every member of a suite's summary shaped as a figure block: `categories` (each with its `accuracy`), and
    maybe `groups` (each with its `value`) and `overall`, named `<language>[.<variant>]`; a variant named `fc`
    is function calling."""
    found = []
    for name, member in mapping(block).items():
        if isinstance(member, Mapping) and isinstance(member.get("categories"), Mapping):
            found.append(_figure_block(title, str(name), member))
    return found


def _figure_block(title: str, name: str, data: Mapping[str, Any]) -> FigureBlock:
    rows = [figure_row(f"{name}.{key}", str(key), "category", mapping(entry), mapping(entry).get("accuracy"))
            for key, entry in mapping(data.get("categories")).items()]
    rows += [figure_row(f"{name}.{str(key).lower()}", str(key), "group", mapping(entry), mapping(entry).get("value"))
             for key, entry in mapping(data.get("groups")).items()]
    if data.get("overall") is not None:
        overall = {"interval": data.get("overall_interval"), "detectable": data.get("overall_detectable")}
        rows.append(figure_row(f"{name}.overall", "OVERALL", "overall", overall, data.get("overall")))
    partial = None
    if data.get("partial") is True:
        reasons = "; ".join(str(reason) for reason in items(data.get("partial_reasons"))) or "not the whole benchmark"
        partial = f"Partial run: groups and OVERALL renormalised over what ran ({reasons})."
    protocol = ", function calling" if name.endswith(".fc") else ""
    language, _, variant = name.partition(".")
    return FigureBlock(name, f"{title} {name}{protocol}", tuple(rows), partial, (name,), language, variant)


def figure_row(figure: str, label: str, kind: str, entry: Mapping[str, Any], current: object) -> FigureRow:
    """A figure of a block from its summary entry: `interval`, `scored`/`n` (and `correct_steps`/`steps`),
    `errors`, `process_acc`, `detectable`."""
    scored, n, steps = entry.get("scored"), entry.get("n"), entry.get("steps")
    text = f"{scored}/{n}" if scored is not None and n is not None else ""
    if steps is not None:
        text += f" ({entry.get('correct_steps')}/{steps} steps)"
    errors = entry.get("errors")
    return FigureRow(figure, label, kind, number(current), pair(entry.get("interval")), text,
                     errors if isinstance(errors, int) and not isinstance(errors, bool) else None,
                     number(entry.get("process_acc")), number(entry.get("detectable")))
