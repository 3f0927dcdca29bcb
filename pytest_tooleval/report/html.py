"""The HTML report: one self-contained static page of a run, rendered from its JSON report document.

`render_html` is pure: the document (json_report.py) in, the page out. The page holds no script and names
nothing outside itself (inline CSS, inline SVG, a Content-Security-Policy that forbids the rest). Every text
taken from the document is escaped, with the characters HTML forbids shown as escapes, and model output is
clipped: the page stays valid whatever an id, an error or an output holds.
"""

from __future__ import annotations

import html
import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..suites import figure_blocks_of, title_of
from .document import (
    ComparedFigure,
    Difference,
    Fingerprint,
    Flip,
    Gate,
    Regression,
    ReportDocument,
    SampleRow,
    StorageFault,
    Totals,
    as_document,
)
from .gate import ErrorCause, GateResult, RegressionCheck
from .safe_text import safe_text
from .sections import CellTable, FigureBlock, FigureRow, Marks
from .sections import number as _num
from .sections import pair as _pair

__all__ = ["ERROR_LIMIT", "OUTPUT_LIMIT", "render_html", "write_html"]

#: characters of a sample's output, and of its error, shown in the flip listing
OUTPUT_LIMIT, ERROR_LIMIT = 2000, 600

# what HTML forbids in text (controls, noncharacters) and what UTF-8 cannot hold (lone surrogates)
_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufdd0-\ufdef\ufffe\uffff"
                        + "".join(chr(plane << 16 | low) for plane in range(1, 17) for low in (0xFFFE, 0xFFFF))
                        + "]")

# chart geometry (px)
LABEL_X, ACC_X, ACC_W, VALUE_X, DIFF_X, DIFF_W = 292, 300, 420, 730, 800, 200
TOP, ROW_H, GAP, BOTTOM = 44, 24, 10, 10


# --- text --------------------------------------------------------------------------------------------------


def _clean(text: str) -> str:
    """`text` with each character HTML forbids written as its escape (\\x00, \\ud800)."""
    def shown(match: re.Match[str]) -> str:
        code = ord(match.group())
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"

    return _FORBIDDEN.sub(shown, text)


def esc(value: object) -> str:
    """Any value as HTML text (or a quoted attribute value): cleaned, then escaped."""
    return html.escape(_clean(safe_text(value)), quote=True)  # safe_text: bidi controls too, as their escapes


def _json_text(value: object, indent: int | None = 2) -> str:
    return json.dumps(value, ensure_ascii=False, indent=indent, default=str)


def _clip(text: str, limit: int = OUTPUT_LIMIT) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n… clipped: {len(text)} characters in all"


def _shown(value: object, lines: bool = False) -> str:
    """A sample's output or error as text: a string as it is, anything else as JSON (or, with `lines`, a list
    of strings one a line)."""
    if value is None:
        return ""
    if lines and isinstance(value, list) and all(isinstance(item, str) for item in value):
        return "\n".join(value)
    return value if isinstance(value, str) else _json_text(value, 1)


def _attrs(**values: object) -> str:
    """` name="value"` pairs (underscores become hyphens); None values are left out."""
    return "".join(f' {name.replace("_", "-")}="{esc(value)}"' for name, value in values.items() if value is not None)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "-", text)


def _given(value: object) -> object:
    """A value the report may not hold: "—" where it holds none."""
    return "—" if value is None else value


# --- reading the document ----------------------------------------------------------------------------------


def _map(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, (list, tuple)) else []


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _signed(value: float | None) -> str:
    return "—" if value is None else f"{value:+.3f}"


def _span(interval: tuple[float, float] | None, signed: bool = False) -> str:
    if interval is None:
        return "—"
    show = _signed if signed else _fmt
    return f"[{show(interval[0])}, {show(interval[1])}]"


def _p(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}"


@dataclass(frozen=True)
class Row:
    """One figure of a summary block (a category, a group or OVERALL), with what the comparison and the gate
    say of it."""

    figure: str  # full name: <suite>.<the figure's own name>
    label: str
    kind: str  # "category", "group" or "overall"
    current: float | None
    interval: tuple[float, float] | None = None
    scored: str = ""
    errors: int | None = None
    process: float | None = None
    detectable: float | None = None
    compared: ComparedFigure | None = None  # its comparison.figures entry
    margin: float | None = None  # its --tooleval-max-regression margin
    regressed: bool = False

    @property
    def baseline(self) -> float | None:
        return None if self.compared is None else _num(self.compared.baseline)

    @property
    def difference(self) -> float | None:
        return None if self.compared is None else _num(self.compared.difference)

    @property
    def difference_interval(self) -> tuple[float, float] | None:
        return None if self.compared is None else _pair(self.compared.interval)


@dataclass(frozen=True)
class Block:
    """A summary block of a suite (a language, a protocol), as the suite draws it (`Figures.figure_blocks`)."""

    suite: str
    drawn: FigureBlock
    rows: list[Row]

    @property
    def title(self) -> str:
        return self.drawn.title

    @property
    def partial(self) -> bool:
        return self.drawn.partial is not None

    @property
    def anchor(self) -> str:
        return _slug(f"block-{self.suite}-{self.drawn.name}")

    @property
    def overall(self) -> Row | None:
        return next((row for row in self.rows if row.kind == "overall"), None)


def _compared(report: ReportDocument) -> dict[str, ComparedFigure]:
    figures = [] if report.comparison is None else report.comparison.figures
    return {str(entry.figure): entry for entry in figures if entry is not None and "figure" in entry}


def _gated(report: ReportDocument) -> dict[str, Regression]:
    checks = [] if report.gate is None else report.gate.regressions
    return {str(check.figure): check for check in checks if check is not None and "figure" in check}


def _row(suite: str, drawn: FigureRow, compared: Mapping[str, ComparedFigure],
         gated: Mapping[str, Regression]) -> Row:
    figure = f"{suite}.{drawn.figure}"
    check = gated.get(figure)
    return Row(figure, drawn.label, drawn.kind, drawn.current, drawn.interval, drawn.scored, drawn.errors,
               drawn.process, drawn.detectable, compared.get(figure), None if check is None else _num(check.margin),
               check is not None and check.regression is True)


def blocks(report: ReportDocument) -> list[Block]:
    """Every summary block of the report, as each suite draws its own (`Figures.figure_blocks`; a suite
    not installed here: its members shaped as categories, groups and OVERALL)."""
    compared, gated = _compared(report), _gated(report)
    return [Block(str(suite), drawn, [_row(str(suite), row, compared, gated) for row in drawn.rows])
            for suite, data in report.summary.items() for drawn in figure_blocks_of(str(suite), data)]


# --- the header and the gate -------------------------------------------------------------------------------


def _regression(item: Regression) -> RegressionCheck:
    """A gate regression entry as the check that wrote it (so its line is worded as the terminal's)."""
    values = [_num(item.baseline), _num(item.current), _num(item.difference)]
    interval, p, p_holm = _pair(item.interval), _num(item.p), _num(item.p_holm)
    if any(value is None for value in (*values, interval, p, p_holm)):
        values, interval, p, p_holm = [None, None, None], None, None, None
    return RegressionCheck(str(item.figure), _num(item.margin) or 0.0, values[0], values[1], values[2],
                           interval, p, p_holm, _num(item.alpha) or 0.05)


def gate_lines(gate: Gate | Mapping[str, object]) -> list[tuple[str, str]]:
    """(line, status) for each line the terminal prints for this gate (GateResult.lines), the verdict excepted;
    status is "note", "ok" or "fail". `gate`: the document's, or a report's JSON value of it."""
    gate = gate if isinstance(gate, Gate) else Gate.model_validate(dict(gate))
    notes = tuple(str(note) for note in gate.notes)
    regressions = tuple(_regression(item) for item in gate.regressions if item is not None)
    checks = [(str(check.figure), _num(check.actual), _num(check.threshold) or 0.0, check.met is True)
              for check in gate.checks if check is not None]
    error_rate, ceiling = _num(gate.error_rate) or 0.0, _num(gate.max_error_rate) or 0.0
    incomplete = gate.incomplete
    lines = GateResult(checks, error_rate, ceiling, notes, regressions, incomplete,
                       ErrorCause.from_dict(gate.largest_cause)).lines()[:-1]
    statuses = (["note"] * len(notes) + (["fail"] if incomplete else [])
                + ["fail" if check.regressed else "ok" for check in regressions]
                + ["ok" if met else "fail" for *_, met in checks] + ["ok" if error_rate <= ceiling else "fail"])
    return list(zip(lines, statuses, strict=True))


def _modes(fingerprint: Fingerprint) -> str:
    modes = [f"{key}: {value['mode']}" for key, value in fingerprint.objects() if isinstance(value.get("mode"), str)]
    return ", ".join(modes) or "—"


def _meta(report: ReportDocument) -> str:
    fingerprint = report.fingerprint
    items: list[tuple[str, object]] = [
        ("model", fingerprint.model), ("scorer", fingerprint.scorer), ("plugin version", fingerprint.plugin_version),
        ("mode", _modes(fingerprint)), ("sampling", fingerprint.sampling), ("reasoning", fingerprint.reasoning)]
    if fingerprint.tools_system is not None:  # a deviation from the benchmarks' requests
        items.append(("tools system message", fingerprint.tools_system))
    for name, block in fingerprint.objects():  # the benchmark revision a suite scored against
        if block.get("revision") is not None:
            unchecked = " (data unverified)" if block.get("data_verified") is False else ""
            items.append((f"{title_of(name)} revision", f"{block['revision']}{unchecked}"))
    baseline = None if report.comparison is None else report.comparison.baseline
    if baseline is not None and baseline.plain_keys():
        items.append(("baseline", f"{baseline.model} ({baseline.path})"))
    body = "".join(f"<div><dt>{esc(name)}</dt><dd>{esc('—' if value is None else value)}</dd></div>"
                   for name, value in items)
    return f'<dl class="meta">{body}</dl>'


def _verdict(gate: Gate | None) -> tuple[str, str]:
    if gate is None:
        return "NOT GATED", "none"
    return ("PASSED", "passed") if gate.passed is True else ("FAILED", "failed")


def _gate(report: ReportDocument) -> str:
    gate = report.gate
    word, status = _verdict(gate)
    lines = gate_lines(gate) if gate is not None else []
    items = "".join(f'<li class="{status_}">{esc(line)}</li>' for line, status_ in lines)
    listing = f'<ul class="gate-lines">{items}</ul>' if items else '<p>This run had no gate.</p>'
    return (f'<section id="gate" class="gate {status}" aria-label="gate verdict">'
            f'<p class="verdict">tooleval gate: <strong>{word}</strong></p>{listing}</section>')


def _header(report: ReportDocument) -> str:
    model = report.fingerprint.model
    run = report.run
    interrupted = ""
    if run is not None and run.interrupted is True:  # a signal stopped it: the figures are of what finished
        not_run = len(run.not_run)
        signal = esc(run.signal or "a signal")
        interrupted = (f'<p class="interrupted"><strong>Interrupted</strong> ({signal}): {not_run:,} collected '
                       "samples were not run; the figures are of the samples that finished.</p>")
    return (f'<header><h1>tooleval report: <span class="model">{esc(model or "unknown model")}</span></h1>'
            f"{_meta(report)}{interrupted}{_gate(report)}</header>")


def _compares(report: ReportDocument) -> bool:
    """Whether the report holds a comparison with a baseline (a block of something)."""
    return report.comparison is not None and bool(report.comparison.plain_keys())


def _nav(found: Sequence[Block], report: ReportDocument) -> str:
    links = [("overall", "OVERALL")] + [(block.anchor, block.title) for block in found]
    if _compares(report):
        links += [("flips", "flipped samples"), ("comparison", "comparison")]
    links += [("totals", "totals"), ("fingerprint", "fingerprint")]
    items = "".join(f'<li><a href="#{esc(anchor)}">{esc(text)}</a></li>' for anchor, text in links)
    return f'<nav aria-label="contents"><ul>{items}</ul></nav>'


# --- OVERALL -----------------------------------------------------------------------------------------------


def _versus(row: Row) -> str:
    if row.compared is None:
        return ""
    return (f'<div class="sub">baseline {_fmt(row.baseline)} · {_signed(row.difference)} '
            f"{_span(row.difference_interval, True)} · p={_p(_num(row.compared.p))}</div>")


def _card(block: Block, row: Row) -> str:
    partial = '<div class="badge">partial: renormalised over what ran</div>' if block.partial else ""
    interval = f'<div class="sub">95% interval {_span(row.interval)}</div>' if row.interval else ""
    return (f'<div class="card{" regressed" if row.regressed else ""}"{_attrs(data_figure=row.figure)}>'
            f'<div class="card-title">{esc(block.title)}</div><div class="big">{_fmt(row.current)}</div>'
            f"{interval}{_versus(row)}{partial}</div>")


def _overall(found: Sequence[Block]) -> str:
    cards = "".join(_card(block, row) for block in found if (row := block.overall) is not None)
    return (f'<section id="overall"><h2>OVERALL</h2><div class="cards">'
            f'{cards or "<p>No OVERALL figure in this report.</p>"}</div></section>')


# --- the chart ---------------------------------------------------------------------------------------------


def _positions(rows: Sequence[Row]) -> list[float]:
    """The top of each row: a gap before the groups and before OVERALL."""
    out, y, previous = [], float(TOP), None
    for row in rows:
        if previous is not None and row.kind != previous:
            y += GAP
        out.append(y)
        y += ROW_H
        previous = row.kind
    return out


def _x(value: float) -> float:
    return ACC_X + min(1.0, max(0.0, value)) * ACC_W


def _spread(rows: Sequence[Row]) -> float:
    """Half the width of the difference axis: the widest interval or margin, up to the next 0.05."""
    widest = 0.05
    for row in rows:
        for value in (*(row.difference_interval or ()), row.difference, row.margin):
            if value is not None:
                widest = max(widest, abs(value))
    return min(1.0, math.ceil(widest / 0.05 - 1e-9) * 0.05)


def _dx(value: float, spread: float) -> float:
    return DIFF_X + DIFF_W / 2 + min(1.0, max(-1.0, value / spread)) * DIFF_W / 2


def _whisker(x1: float, x2: float, y: float, css: str) -> str:
    return (f'<path class="{css}" d="M{x1:.1f} {y - 4:.1f}v8M{x1:.1f} {y:.1f}H{x2:.1f}M{x2:.1f} {y - 4:.1f}v8"/>')


def _hover(row: Row) -> str:
    text = f"{row.figure}: current {_fmt(row.current)}"
    if row.interval is not None:
        text += f" {_span(row.interval)}"
    if row.compared is not None:
        text += (f"; baseline {_fmt(row.baseline)}; difference {_signed(row.difference)} "
                 f"{_span(row.difference_interval, True)}, p={_p(_num(row.compared.p))}, "
                 f"{row.compared.units} paired units")
    return text


def _bar(row: Row, series: str, value: float, y: float, height: float) -> str:
    attributes = _attrs(data_figure=row.figure, data_series=series,
                        data_current=None if row.current is None else _fmt(row.current),
                        data_baseline=None if row.baseline is None else _fmt(row.baseline),
                        data_interval=None if row.interval is None else f"{row.interval[0]:.3f} {row.interval[1]:.3f}")
    width = _x(value) - ACC_X
    return (f'<rect class="bar {series}" x="{ACC_X}" y="{y:.1f}" width="{width:.1f}" height="{height}"'
            f"{attributes}><title>{esc(_hover(row))}</title></rect>")


def _bars(row: Row, y: float, compared: bool) -> str:
    height = 10 if compared else 14
    parts = []
    if row.current is not None:
        # the bar's whole extent, 0 to 1, drawn empty first: a figure of 0 is an empty bar, not a bar that is gone
        parts.append(f'<rect class="track" x="{ACC_X}" y="{y + 4:.1f}" width="{ACC_W}" height="{height}"/>')
        parts.append(_bar(row, "current", row.current, y + 4, height))
        if row.interval is not None:
            parts.append(_whisker(_x(row.interval[0]), _x(row.interval[1]), y + 4 + height / 2, "whisker"))
    if row.baseline is not None:
        parts.append(_bar(row, "baseline", row.baseline, y + 16, 5))
    return "".join(parts)


def _trend(row: Row) -> str:
    interval = row.difference_interval
    if row.regressed:
        return "regression"
    if interval is not None and interval[1] < 0:
        return "drop"
    if interval is not None and interval[0] > 0:
        return "gain"
    return "flat"


def _difference(row: Row, y: float, spread: float) -> str:
    if row.difference is None:
        return ""
    middle = y + ROW_H / 2
    parts = []
    if row.margin is not None:
        x = _dx(-row.margin, spread)
        parts.append(f'<line class="margin" x1="{x:.1f}" x2="{x:.1f}" y1="{y + 2:.1f}" y2="{y + ROW_H - 2:.1f}">'
                     f"<title>{esc(f'{row.figure}: gate margin {row.margin:.3f}')}</title></line>")
    interval = row.difference_interval
    if interval is not None:
        parts.append(_whisker(_dx(interval[0], spread), _dx(interval[1], spread), middle, f"diff {_trend(row)}"))
    attributes = _attrs(data_figure=row.figure, data_difference=f"{row.difference:.3f}",
                        data_interval=None if interval is None else f"{interval[0]:.3f} {interval[1]:.3f}")
    parts.append(f'<circle class="diff {_trend(row)}" cx="{_dx(row.difference, spread):.1f}" cy="{middle:.1f}" r="4"'
                 f"{attributes}><title>{esc(_hover(row))}</title></circle>")
    return "".join(parts)


def _chart_row(row: Row, y: float, compared: bool, spread: float) -> str:
    middle = y + ROW_H / 2 + 4
    return (f'<g class="row {row.kind}"{_attrs(data_figure=row.figure)}>'
            f'<text class="label" x="{LABEL_X}" y="{middle:.1f}" text-anchor="end">{esc(row.label)}</text>'
            f"{_bars(row, y, compared)}"
            f'<text class="value" x="{VALUE_X}" y="{middle:.1f}">{_fmt(row.current)}</text>'
            f"{_difference(row, y, spread) if compared else ''}</g>")


def _axes(bottom: float, compared: bool, spread: float) -> str:
    parts = [f'<text class="axis-title" x="{ACC_X}" y="14">accuracy (whisker: 95% interval)</text>']
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        x = _x(tick)
        parts.append(f'<line class="grid" x1="{x:.1f}" x2="{x:.1f}" y1="{TOP - 6}" y2="{bottom:.1f}"/>'
                     f'<text class="tick" x="{x:.1f}" y="{TOP - 10}" text-anchor="middle">{tick:g}</text>')
    if compared:
        parts.append(f'<text class="axis-title" x="{DIFF_X}" y="14">difference vs baseline (95% interval)</text>')
        for tick in (-spread, 0.0, spread):
            x = _dx(tick, spread)
            css = "zero" if tick == 0 else "grid"
            parts.append(f'<line class="{css}" x1="{x:.1f}" x2="{x:.1f}" y1="{TOP - 6}" y2="{bottom:.1f}"/>'
                         f'<text class="tick" x="{x:.1f}" y="{TOP - 10}" text-anchor="middle">{tick:+.2f}</text>')
    return "".join(parts)


def chart(block: Block) -> str:
    """The block's figures as an inline SVG bar chart (and, with a comparison, a difference panel)."""
    compared = any(row.compared is not None for row in block.rows)
    spread = _spread(block.rows)
    positions = _positions(block.rows)
    height = (positions[-1] + ROW_H if positions else TOP) + BOTTOM
    width = DIFF_X + DIFF_W + 10 if compared else VALUE_X + 50
    body = "".join(_chart_row(row, y, compared, spread) for row, y in zip(block.rows, positions, strict=True))
    label = f"{block.title}: accuracy by category" + (" against the baseline" if compared else "")
    return (f'<svg class="chart" role="img" viewBox="0 0 {width} {height:.0f}" width="{width}" '
            f'height="{height:.0f}" aria-label="{esc(label)}"><title>{esc(label)}</title>'
            f"{_axes(height - BOTTOM, compared, spread)}{body}</svg>")


def _legend(compared: bool) -> str:
    items = ['<span class="key current"></span>current run', '<span class="key whisker"></span>95% interval']
    if compared:
        items += ['<span class="key baseline"></span>baseline (paired units)',
                  '<span class="key regression"></span>gated regression',
                  '<span class="key drop"></span>drop (interval below 0)',
                  '<span class="key gain"></span>gain (interval above 0)',
                  '<span class="key margin"></span>gate margin']
    return f'<p class="legend">{" ".join(f"<span>{item}</span>" for item in items)}</p>'


# --- the table ---------------------------------------------------------------------------------------------


def _columns(compared: bool, detectable: bool, process: bool) -> list[str]:
    out = ["figure", "scored", "errors", "accuracy", "95% interval", *(["process"] if process else [])]
    out += ["detectable"] if detectable else []
    if compared:
        out += ["baseline", "difference", "difference: 95% interval", "p", "paired units", "pass → fail",
                "fail → pass"]
    return out


def _cells(row: Row, compared: bool, detectable: bool, process: bool) -> list[str]:
    cells = [row.scored, "" if row.errors is None else str(row.errors), _fmt(row.current), _span(row.interval),
             *(["" if row.process is None else _fmt(row.process)] if process else [])]
    cells += [_fmt(row.detectable)] if detectable else []
    if compared:
        entry = row.compared or ComparedFigure()
        proportion = entry.kind == "proportion"
        cells += [_fmt(row.baseline), _signed(row.difference), _span(row.difference_interval, True),
                  _p(_num(entry.p)), str(entry.units) if "units" in entry else "—",
                  str(entry.pass_to_fail) if proportion and "pass_to_fail" in entry else "",
                  str(entry.fail_to_pass) if proportion and "fail_to_pass" in entry else ""]
    return cells


def table(block: Block) -> str:
    """The block's numbers as a table (what the chart shows, in text)."""
    compared = any(row.compared is not None for row in block.rows)
    detectable = any(row.detectable is not None for row in block.rows)
    process = any(row.process is not None for row in block.rows)  # a process accuracy, where a suite has one
    head = "".join(f'<th scope="col">{esc(name)}</th>' for name in _columns(compared, detectable, process))
    body = "".join(
        f'<tr class="{row.kind}{" regressed" if row.regressed else ""}"{_attrs(data_figure=row.figure)}>'
        f'<th scope="row">{esc(row.label)}</th>'
        + "".join(f"<td>{esc(cell)}</td>" for cell in _cells(row, compared, detectable, process)) + "</tr>"
        for row in block.rows)
    return (f'<div class="scroll"><table class="numbers"><caption>{esc(block.title)}: the figures</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>")


#: every text escaped (data is not cut), strong text in <strong>
MARKS = Marks(esc, lambda run: esc(run.value), lambda text: f"<strong>{text}</strong>", "—")


def _listing(table: CellTable | None) -> str:
    """The table a block lists under its figures (your failed cases, with the checks that failed), if any."""
    if table is None:
        return ""
    if not table.rows:
        return f"<p>{esc(table.empty)}</p>"
    head = "".join(f'<th scope="col">{esc(name)}</th>' for name in table.headers)
    body = "".join(f"<tr>{''.join(f'<td>{MARKS.show(cell)}</td>' for cell in row)}</tr>" for row in table.rows)
    return (f'<div class="scroll"><table class="failed"><caption>{esc(table.caption)}</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>")


def _block_section(block: Block) -> str:
    compared = any(row.compared is not None for row in block.rows)
    note = "" if block.drawn.partial is None else f'<p class="partial">{esc(block.drawn.partial)}</p>'
    return (f'<section class="block" id="{esc(block.anchor)}"><h3>{esc(block.title)}</h3>{note}'
            f"{chart(block)}{_legend(compared)}{table(block)}{_listing(block.drawn.listing)}</section>")


def _other_summary(report: ReportDocument, found: Sequence[Block]) -> str:
    """The summary members no block draws (a suite's own shape): shown as JSON."""
    drawn = {(block.suite, member) for block in found for member in block.drawn.members}
    rest = {str(suite): {str(key): value for key, value in _map(data).items() if (str(suite), str(key)) not in drawn}
            for suite, data in report.summary.items()}
    rest = {suite: members for suite, members in rest.items() if members}
    return "".join(f'<section class="suite-json"><h3>{esc(title_of(suite))}: summary</h3>'
                   f"<pre>{esc(_json_text(members))}</pre></section>" for suite, members in rest.items())


COMPARED_NOTE = ("<p>Bars: this run's figures (the summary's, as the gate reads them) and the baseline's. The "
                 "difference and its 95% interval are over the units paired with the baseline: McNemar's test and "
                 "Newcombe's interval for a category, a paired bootstrap for a group or OVERALL.</p>")


def _summaries(report: ReportDocument, found: Sequence[Block]) -> str:
    sections = "".join(_block_section(block) for block in found) + _other_summary(report, found)
    note = COMPARED_NOTE if _compares(report) else ""
    return f'<section id="summary"><h2>Figures</h2>{note}{sections or "<p>No summary in this report.</p>"}</section>'


# --- flipped samples ---------------------------------------------------------------------------------------


SampleIndex = Mapping[tuple[str, str, str, str], SampleRow]


def _sample_index(report: ReportDocument) -> dict[tuple[str, str, str, str], SampleRow]:
    """The report's samples by (suite, language, variant, id)."""
    return {(str(row.suite), str(row.language), str(row.variant or ""), str(row.id)): row for row in report.rows()}


#: (suite, figure) -> the language and protocol variant of the samples the figure is made of (its block's)
BlockOf = Mapping[tuple[str, str], tuple[str, str]]


def _block_of(found: Sequence[Block]) -> dict[tuple[str, str], tuple[str, str]]:
    return {(block.suite, row.figure.removeprefix(f"{block.suite}.")): (block.drawn.language, block.drawn.variant)
            for block in found for row in block.rows}


def _flip_block(flip: Flip, block_of: BlockOf) -> tuple[str, str]:
    """The language and protocol variant of a flipped unit's samples: those of the block its figure is in, or
    read off the figure's name, `<language>[.<variant>].<category>`."""
    figure = str(flip.figure) if "figure" in flip else ""
    if (found := block_of.get((str(flip.suite), figure))) is not None:
        return found
    language, _, variant = figure.rpartition(".")[0].partition(".")
    return language, variant


def _flip_rows(flip: Flip, index: SampleIndex, block_of: BlockOf) -> str:
    language, variant = _flip_block(flip, block_of)
    samples = [str(sample) for sample in flip.samples] or [""]
    out = []
    for number, sample in enumerate(samples):
        row = index.get((str(flip.suite), language, variant, sample))
        unit = (f'<th scope="rowgroup" rowspan="{len(samples)}">{esc(flip.suite)}: {esc(flip.unit)}'
                "</th>") if number == 0 else ""
        if row is None:
            cells = '<td class="missing" colspan="3">not among this report\'s samples</td>'
        else:
            cells = (f"<td>{esc(row.outcome)}</td><td><pre>{esc(_clip(_shown(row.output)))}</pre></td>"
                     f"<td><pre>{esc(_clip(_shown(row.error, lines=True), ERROR_LIMIT))}</pre></td>")
        shown = row.test_id if row is not None and row.test_id else sample  # the test id: what -k selects
        out.append(f"<tr>{unit}<td>{esc(shown)}</td>{cells}</tr>")
    return f'<tbody class="flip">{"".join(out)}</tbody>'


FLIP_COLUMNS = (("unit", "unit"), ("sample", "sample"), ("outcome", "outcome now"), ("output", "output now"),
                ("error", "error"))


def _flip_table(direction: str, title: str, flips: Sequence[Flip | None], index: SampleIndex,
                block_of: BlockOf) -> str:
    units = [flip for flip in flips if flip is not None]
    if not units:
        return f'<section id="{direction}"><h3>{title}: none</h3></section>'
    head = "".join(f'<th scope="col" class="{css}">{name}</th>' for css, name in FLIP_COLUMNS)
    body = "".join(_flip_rows(flip, index, block_of) for flip in units)
    return (f'<section id="{direction}"><h3>{title}: {len(units)}</h3><div class="scroll"><table class="flips">'
            f"<thead><tr>{head}</tr></thead>{body}</table></div></section>")


def _flips(report: ReportDocument, found: Sequence[Block]) -> str:
    if report.comparison is None or not _compares(report):
        return ""
    flips, index, block_of = report.comparison.flips, _sample_index(report), _block_of(found)
    return (f'<section id="flips"><h2>Flipped samples</h2><p>Units whose verdict changed from the baseline to this '
            f"run, with this run's output (clipped to {OUTPUT_LIMIT:,} characters).</p>"
            f"{_flip_table('pass_to_fail', 'pass → fail', flips.pass_to_fail, index, block_of)}"
            f"{_flip_table('fail_to_pass', 'fail → pass', flips.fail_to_pass, index, block_of)}</section>")


def _quarantine(report: ReportDocument) -> str:
    """The samples that ran quarantined (--tooleval-quarantine): in the report, in no figure."""
    rows = [row for row in report.rows() if row.quarantined]
    if not rows:
        return ""
    head = "".join(f'<th scope="col">{name}</th>' for name in ("sample", "outcome", "reason"))
    body = "".join(f"<tr><td>{esc(row.test_id or row.id)}</td><td>{esc(row.outcome)}</td>"
                   f"<td>{esc(row.quarantined)}</td></tr>" for row in rows)
    return _section("quarantine", f"Quarantined samples: {len(rows)} (in no figure)",
                    f'<div class="scroll"><table class="quarantine"><thead><tr>{head}</tr></thead>'
                    f"<tbody>{body}</tbody></table></div>")


# --- comparison details, totals, fingerprint ---------------------------------------------------------------


def _named_list(title: str, items: Sequence[object]) -> str:
    if not items:
        return f"<p>{esc(title)}: none</p>"
    listing = "".join(f"<li>{esc(item)}</li>" for item in items)
    return f"<details><summary>{esc(title)}: {len(items)}</summary><ul>{listing}</ul></details>"


def _differences(items: Sequence[Difference | None]) -> str:
    rows = [item for item in items if item is not None]
    if not rows:
        return "<p>The fingerprints differ in nothing but the model.</p>"
    body = "".join(f"<tr><th scope=\"row\">{esc(row.key)}</th><td><pre>{esc(_json_text(row.baseline))}"
                   f"</pre></td><td><pre>{esc(_json_text(row.current))}</pre></td></tr>" for row in rows)
    return ('<table class="numbers"><caption>fingerprint differences</caption><thead><tr><th scope="col">key</th>'
            f'<th scope="col">baseline</th><th scope="col">this run</th></tr></thead><tbody>{body}</tbody></table>')


def _comparison(report: ReportDocument) -> str:
    comparison = report.comparison
    if comparison is None or not _compares(report):
        return ""
    baseline, bootstrap = comparison.baseline, comparison.bootstrap
    lists = "".join(_named_list(title, items) for items, title in (
        (comparison.only_current, "units in this run only"), (comparison.only_baseline, "units in the baseline only"),
        (comparison.unscored, "units without a verdict in one run (not paired)"),
        (comparison.not_compared, "suites not compared (no units)")))
    rescored = ""
    if isinstance(baseline.rescored, Mapping):  # a baseline rescored to another benchmark revision
        from .compare import rescore_sentence

        rescored = f'<p class="note">Note: {esc(rescore_sentence(baseline.rescored))}.</p>'
    return (f'<section id="comparison"><h2>Comparison</h2><p>Baseline: {esc(baseline.model)} '
            f'(<code>{esc(baseline.path)}</code>); combined figures by a paired bootstrap '
            f'(seed {esc(bootstrap.get("seed"))}, {esc(bootstrap.get("replicates"))} replicates).</p>{rescored}'
            f"{_differences(comparison.fingerprint_differences)}{lists}</section>")


def _value(value: object) -> str:
    text = _json_text(value)
    return f"<pre>{esc(text)}</pre>" if "\n" in text else f"<code>{esc(text)}</code>"


def definitions(values: Mapping[str, object], css: str) -> str:
    """A mapping as a definition list: each value as pretty-printed JSON, escaped."""
    body = "".join(f"<div><dt>{esc(key)}</dt><dd>{_value(value)}</dd></div>" for key, value in values.items())
    return f'<dl class="{css}">{body}</dl>'


def _count(value: object) -> str:
    number = _num(value)
    if number is None:
        return "—" if value is None else esc(value)
    return f"{int(number):,}" if number == int(number) else f"{number:,.3f}"


def _seconds(value: object) -> str:
    number = _num(value)
    return "—" if number is None else f"{number:.2f} s"


def _dollars(value: object, places: int = 2) -> str:
    number = _num(value)
    return "—" if number is None else f"${number:,.{places}f}"


def _numbers_table(caption: str, headers: Sequence[str], rows: Iterable[Sequence[str]], css: str = "numbers") -> str:
    """A table of cells already escaped; the first column the rows' headers."""
    head = "".join(f'<th scope="col">{esc(name)}</th>' for name in headers)
    body = "".join(f'<tr><th scope="row">{row[0]}</th>{"".join(f"<td>{cell}</td>" for cell in row[1:])}</tr>'
                   for row in rows)
    return (f'<div class="scroll"><table class="{css}"><caption>{esc(caption)}</caption><thead><tr>{head}</tr>'
            f"</thead><tbody>{body}</tbody></table></div>")


# what run_totals (report/summary.py) holds, as the totals table shows it; any other member is listed after
TOTAL_COLUMNS = (("samples", "samples", _count), ("scored", "scored", _count), ("errors", "errors", _count),
                 ("prompt_tokens", "prompt tokens", _count), ("completion_tokens", "completion tokens", _count),
                 ("reasoning_tokens", "reasoning tokens", _count), ("requests", "requests", _count),
                 ("retries", "retries", _count), ("timeouts", "timed out", _count),
                 ("latency_p50_s", "sample latency p50", _seconds),
                 ("latency_p95_s", "sample latency p95", _seconds), ("wall_s", "wall time", _seconds),
                 ("cost_usd", "estimated cost", _dollars))
CATEGORY_COLUMNS = (("samples", "samples", _count), ("prompt_tokens", "prompt tokens", _count),
                    ("completion_tokens", "completion tokens", _count),
                    ("reasoning_tokens", "reasoning tokens", _count), ("latency_p50_s", "latency p50", _seconds),
                    ("latency_p95_s", "p95", _seconds), ("cost_usd", "cost", lambda value: _dollars(value, 4)))


def _totals(totals: Totals | None) -> str:
    """The run's totals as a table (a member it does not know as its text), and by category as another,
    collapsed: a run of every benchmark has a hundred categories."""
    if totals is None or not totals.plain_keys():
        return "<p>No totals in this report.</p>"
    known = {key for key, _, _ in TOTAL_COLUMNS} | {"categories", "unpriced_models", "cut", "concurrency"}
    rows = [[esc(name), show(getattr(totals, key))] for key, name, show in TOTAL_COLUMNS if key in totals]
    cut = {str(role): count for role, count in totals.cut.items() if _num(count)}
    if cut:  # answers that stopped at max_tokens, scored as they are
        rows.append([esc("answers cut at max_tokens"), esc(", ".join(f"{role} {_count(count)}"
                                                                     for role, count in cut.items()))])
    for entry in totals.concurrency:
        moved = _map(entry)
        cuts = [_map(cut) for cut in _list(moved.get("cuts"))]
        if cuts:  # the in-flight limit came down (docs/concurrency.md)
            said = "; ".join(f"{cut.get('from')} to {cut.get('to')} at {cut.get('at_s')} s: {cut.get('reason')}"
                             for cut in cuts)
            rows.append([esc(f"in-flight limit, {moved.get('endpoint')}"),
                         esc(f"{moved.get('limit')} at the end (ceiling {moved.get('ceiling')}); cut {said}")])
    rows += [[esc(key), _count(value) if _num(value) is not None or isinstance(value, str) else
              esc(_json_text(value, None))] for key, value in totals.plain().items() if key not in known]  # new
    parts = [_numbers_table("the run", ["", "total"], rows, "numbers totals")]
    if totals.unpriced_models:
        models = ", ".join(str(model) for model in totals.unpriced_models)
        parts.append(f"<p>No cost estimate: no --tooleval-prices entry for {esc(models)}.</p>")
    categories = [entry for entry in totals.categories if entry is not None]
    if categories:
        shown = [(key, name, show) for key, name, show in CATEGORY_COLUMNS if any(key in entry for entry in categories)]
        rows = [[esc(f"{_given(entry.suite)} {_given(entry.language)}"
                     + (f".{entry.variant}" if entry.variant else "") + f": {_given(entry.category)}"),
                 *(show(getattr(entry, key)) for key, _, show in shown)] for entry in categories]
        parts.append(f"<details><summary>by category: {len(categories)}</summary>"
                     f'{_numbers_table("by category", ["category", *(name for _, name, _ in shown)], rows)}'
                     "</details>")
    return "".join(parts)


def _section(anchor: str, title: str, content: str) -> str:
    return f'<section id="{anchor}"><h2>{esc(title)}</h2>{content}</section>'


def _faults(report: ReportDocument) -> str:
    faults: list[StorageFault | None] = report.storage_faults
    if not faults:
        return ""
    items = "".join(f"<li><pre>{esc(_json_text(None if fault is None else fault.plain()))}</pre></li>"
                    for fault in faults)
    return _section("storage-faults", "Storage faults", f"<ul>{items}</ul>")


# --- the page ----------------------------------------------------------------------------------------------

STYLE = """
:root{--current:#2563eb;--baseline:#9ca3af;--ink:#111827;--muted:#4b5563;--line:#e5e7eb;--bad:#dc2626;
--good:#16a34a;--warn:#d97706;--track:#f3f4f6}
*{box-sizing:border-box}
body{margin:0;padding:24px 32px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",
"Liberation Sans",Arial,sans-serif;color:var(--ink);background:#fff}
h1{font-size:22px;margin:0 0 12px}h2{font-size:18px;margin:28px 0 10px;border-bottom:1px solid var(--line)}
h3{font-size:15px;margin:20px 0 8px}
pre,code{font:12px/1.4 ui-monospace,"DejaVu Sans Mono","Liberation Mono",Menlo,monospace}
pre{margin:0;white-space:pre-wrap;overflow-wrap:anywhere;max-width:60em}
dl.meta{display:flex;flex-wrap:wrap;gap:4px 24px;margin:0 0 12px}dl.meta dt{color:var(--muted);font-size:12px}
dl.meta dd{margin:0;font-weight:600;overflow-wrap:anywhere}
.gate{border:2px solid var(--muted);border-radius:6px;padding:10px 14px;margin:8px 0}
.gate.passed{border-color:var(--good);background:#f0fdf4}.gate.failed{border-color:var(--bad);background:#fef2f2}
.verdict{margin:0 0 6px;font-size:18px}.verdict strong{font-size:28px;letter-spacing:.04em}
.passed .verdict strong{color:var(--good)}.failed .verdict strong{color:var(--bad)}
.gate-lines{margin:0;padding-left:18px;font:12px/1.5 ui-monospace,"DejaVu Sans Mono",monospace}
.gate-lines li.fail{color:var(--bad);font-weight:700}.gate-lines li.note{color:var(--warn)}
nav ul{display:flex;flex-wrap:wrap;gap:4px 16px;padding:0;margin:12px 0;list-style:none}
.cards{display:flex;flex-wrap:wrap;gap:12px}
.card{border:1px solid var(--line);border-radius:6px;padding:10px 16px;min-width:220px}
.card.regressed{border-color:var(--bad)}.card-title{color:var(--muted);font-weight:600}
.big{font-size:40px;font-weight:700;line-height:1.1}.sub{color:var(--muted);font-size:12px}
.badge{display:inline-block;margin-top:4px;padding:0 6px;border-radius:4px;background:#fef3c7;font-size:12px}
.partial{color:var(--warn)}
svg.chart{display:block;max-width:100%;height:auto}
svg text{font:12px system-ui,"Liberation Sans",Arial,sans-serif;fill:var(--ink)}
svg .tick,svg .axis-title{fill:var(--muted);font-size:11px}
svg .group .label,svg .overall .label,svg .overall .value{font-weight:700}
svg .grid{stroke:var(--line)}svg .zero{stroke:var(--muted)}
svg .track{fill:var(--track);stroke:var(--line);stroke-width:.5}
svg .bar.current{fill:var(--current)}svg .bar.baseline{fill:var(--baseline)}
svg .overall .bar.current{fill:#1e3a8a}
svg .whisker{stroke:var(--ink);stroke-width:1.5;fill:none}
svg .diff{stroke:var(--muted);stroke-width:1.5;fill:none}svg circle.diff{fill:var(--muted)}
svg .diff.drop{stroke:var(--warn)}svg circle.diff.drop{fill:var(--warn)}
svg .diff.regression{stroke:var(--bad);stroke-width:2.5}svg circle.diff.regression{fill:var(--bad)}
svg .diff.gain{stroke:var(--good)}svg circle.diff.gain{fill:var(--good)}
svg .margin{stroke:var(--bad);stroke-dasharray:3 2}
.legend{font-size:12px;color:var(--muted);display:flex;flex-wrap:wrap;gap:4px 14px}
.key{display:inline-block;width:14px;height:10px;margin-right:4px;vertical-align:middle}
.key.current{background:var(--current)}.key.baseline{background:var(--baseline);height:5px}
.key.whisker{border-top:2px solid var(--ink);height:0}
.key.regression{background:var(--bad);border-radius:50%;width:10px}
.key.drop{background:var(--warn);border-radius:50%;width:10px}.key.gain{background:var(--good);border-radius:50%;width:10px}
.key.margin{border-left:2px dashed var(--bad);width:0}
.scroll{overflow-x:auto}
table{border-collapse:collapse;margin:8px 0;font-size:12px}caption{text-align:left;color:var(--muted);padding:4px 0}
th,td{border-bottom:1px solid var(--line);padding:3px 8px;text-align:right;vertical-align:top;white-space:nowrap}
th[scope=col]{white-space:normal;vertical-align:bottom}
table.flips{table-layout:fixed;width:100%}table.flips th,table.flips td{white-space:normal;overflow-wrap:anywhere}
table.flips thead th{overflow-wrap:normal}
th[scope=row],th[scope=rowgroup],table.flips th,table.flips td,table.quarantine td,table.failed td,
table.failed th{text-align:left}
tr.group th,tr.overall th,tr.overall td{font-weight:700}tr.regressed td,tr.regressed th{color:var(--bad)}
tbody.flip{border-top:2px solid var(--line)}
.flips .unit{width:16%}.flips .sample{width:15%}.flips .outcome{width:6em}.flips .output{width:30%}
.flips .error{width:24%}td.missing{color:var(--muted)}
dl.definitions{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px}
dl.definitions div{display:contents}dl.definitions dt{font-weight:600}dl.definitions dd{margin:0}
footer{margin-top:32px;color:var(--muted);font-size:12px}
"""

# nothing but the page itself: no script, no request, no frame, no form
POLICY = "default-src 'none'; style-src 'unsafe-inline'; form-action 'none'; base-uri 'none'"


def _page(title: str, parts: Iterable[str]) -> str:
    return ("<!DOCTYPE html>\n"
            f'<html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" '
            f'content="{esc(POLICY)}"><meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<meta name="color-scheme" content="light"><title>{esc(title)}</title><style>{STYLE}</style></head>'
            f'<body>{"".join(parts)}</body></html>\n')


def render_html(report: ReportDocument | Mapping[str, object]) -> str:
    """The report document (as `--tooleval-report` writes it) as one self-contained HTML page."""
    report = as_document(report)
    found = blocks(report)
    word, _ = _verdict(report.gate)
    model = report.fingerprint.model or "unknown model"
    return _page(f"tooleval report: {model}: {word}", [
        _header(report), _nav(found, report), "<main>", _overall(found), _summaries(report, found),
        _flips(report, found), _quarantine(report), _comparison(report),
        _section("totals", "Totals", _totals(report.totals)),
        _section("fingerprint", "Fingerprint", definitions(report.fingerprint.plain(), "definitions")),
        _faults(report), "</main>",
        f"<footer>Rendered from the JSON report (schema {esc(report.schema_)}): static, no script.</footer>"])


def write_html(report: ReportDocument | Mapping[str, object], path: str | os.PathLike[str]) -> Path:
    """Write the page to `path` atomically (a temporary file beside it, then a rename), creating its folders."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(render_html(report), encoding="utf-8")
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return target
