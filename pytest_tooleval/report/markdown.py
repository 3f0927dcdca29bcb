"""The run summary as GitHub-flavoured Markdown (a CI page, `$GITHUB_STEP_SUMMARY`), from the JSON report alone.

`render_markdown` is pure: the report document (json_report.py) in, Markdown out. Every text that comes from
the document is escaped (`escape`), so a sample id or an error cannot add table columns, close a `<details>`
block or start a heading; model outputs are never shown, only ids. A block of a shape it does not know is
rendered as its numeric figures, never a crash. `write_markdown` writes it to a file and appends it to the
step summary.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ..json_value import JSONValue
from ..suites import sections_of, title_of
from ..text import counted
from .document import (
    ComparedFigure,
    Comparison,
    Difference,
    Fingerprint,
    Flip,
    Flips,
    Gate,
    GateCheck,
    Regression,
    ReportDocument,
    SampleRow,
    StorageFault,
    Totals,
    as_document,
)
from .safe_text import safe_text
from .sections import TEXT_LIMIT, CellTable, Marks, Paragraph, ReportSection
from .sections import count as _count
from .sections import fixed as _fmt
from .sections import interval as _interval
from .sections import mapping as _mapping
from .sections import number as _number

__all__ = ["escape", "render_markdown", "write_markdown"]

ERRORS_SHOWN = 200  # errored samples listed (the JSON report lists them all); flips are listed in full

_SPECIAL = re.compile(r"[\\`|*~\[\]<&]")
_ENTITIES = {"<": "&lt;", "&": "&amp;"}
# what opens a block at the start of a line (or of a list item): a heading, a quote, a list item, a rule
_BLOCK_START = re.compile(r"^([#>]|[-+=](?=[\s+=-]|$)|\d+[.)](?=\s|$))")


# --- text and numbers -------------------------------------------------------------------------------------------


def escape(value: object, limit: int = TEXT_LIMIT) -> str:
    """`value` as one line of Markdown text that renders as itself, inside a table cell too.

    Line breaks become spaces, text past `limit` characters is cut ("..."); backslashes, backticks, pipes,
    asterisks, tildes and brackets are backslash-escaped, `<` and `&` become entities (no HTML tag gets
    through), and what would open a block at the start of a line (`#`, `>`, a list marker, a rule) is escaped.
    Underscores stay: GitHub never reads them as emphasis inside a word, as in sample ids.
    """
    text = safe_text(" ".join(str(value).split()))  # a control, bidi control or lone surrogate as its escape
    if len(text) > limit:
        text = text[:limit].rstrip() + "..."
    text = _SPECIAL.sub(lambda match: _ENTITIES.get(match.group(), "\\" + match.group()), text)
    # a backslash escapes punctuation only: 1\. item, not \1. item
    return _BLOCK_START.sub(lambda match: match.group()[:-1] + "\\" + match.group()[-1], text, count=1)


def _text(value: object) -> str:
    """`escape(value)`, or "-" for None and the empty text."""
    return "-" if value is None or value == "" else escape(value)


def _given(value: object) -> object:
    """A value the report may not hold: "-" where it holds none."""
    return "-" if value is None else value


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], right: Sequence[int] = ()) -> list[str]:
    """A GitHub pipe table of cells already escaped (headers are ours); columns in `right` right-aligned."""
    rule = ["---:" if index in right else "---" for index in range(len(headers))]
    return ["| " + " | ".join(row) + " |" for row in (headers, rule, *rows)]


def _details(summary: str, body: list[str]) -> list[str]:
    """A collapsed block; `summary` is our own text (no data)."""
    return [f"<details><summary>{summary}</summary>", "", *body, "", "</details>"]


# --- the document -----------------------------------------------------------------------------------------------


def render_markdown(report: ReportDocument | Mapping[str, object]) -> str:
    """The report document (or a report's JSON value) as Markdown: title and context, the gate, each suite's
    tables, the comparison with the baseline, the totals and errored samples."""
    report = as_document(report)
    sections = [_header(report.fingerprint)]
    run = report.run
    if run is not None and run.interrupted is True:  # a signal stopped it: the figures are of what finished
        sections.append([f"**Interrupted** ({escape(run.signal or 'a signal')}): {len(run.not_run)} collected "
                         "samples were not run; the figures are of the samples that finished."])
    if report.gate is not None:
        sections.append(_gate(report.gate))
    for suite, blocks in report.summary.items():
        sections += _suite(str(suite), blocks)
    if report.comparison is not None:
        sections.append(_comparison(report.comparison))
    if report.totals is not None and report.totals.plain_keys():
        sections.append(_totals(report.totals))
    sections += [block for block in (_storage(report.storage_faults), _errored(report.samples)) if block]
    return "\n\n".join("\n".join(section) for section in sections) + "\n"


def _header(fingerprint: Fingerprint) -> list[str]:
    model = fingerprint.model
    context = []
    if fingerprint.scorer is not None:
        context.append(f"scorer {escape(fingerprint.scorer)}")
    blocks = dict(fingerprint.objects())
    modes = list(dict.fromkeys(str(block["mode"]) for block in blocks.values() if block.get("mode") is not None))
    if modes:
        context.append("mode " + escape(", ".join(modes)))
    if fingerprint.tools_system is not None:  # a deviation from the benchmarks' requests
        context.append(f"tools system message {escape(fingerprint.tools_system)}")
    if fingerprint.plugin_version is not None:
        context.append(f"pytest-tooleval {escape(fingerprint.plugin_version)}")
    context += _revisions(blocks)
    hashes = {name: str(block["data_manifest_sha256"])[:12] for name, block in blocks.items()
              if block.get("data_manifest_sha256")}
    if len(set(hashes.values())) == 1:
        context.append(f"data manifest {escape(next(iter(hashes.values())))}")
    elif hashes:
        context.append("data manifest " + ", ".join(f"{escape(name)} {escape(digest)}"
                                                    for name, digest in hashes.items()))
    title = f"## pytest-tooleval: {escape(model) if model is not None else 'unknown model'}"
    return [title, "", ", ".join(context)] if context else [title]


def _revisions(blocks: Mapping[str, Mapping[str, JSONValue]]) -> list[str]:
    """`<title> <revision>` for each suite block naming the benchmark revision it scored against, and whether its
    data was checked against that revision's pin."""
    named = []
    for name, block in blocks.items():
        if block.get("revision") is None:
            continue
        title = title_of(name)
        unchecked = " (data unverified)" if block.get("data_verified") is False else ""
        named.append(f"{escape(title)} {escape(block['revision'])}{unchecked}")
    return named


# --- the gate ---------------------------------------------------------------------------------------------------


def _gate(gate: Gate) -> list[str]:
    """The verdict, then a bullet per check, in GateResult.lines()' words."""
    scope = f" (partial run: {escape(gate.partial)})" if gate.partial else ""
    lines = [("**Gate: PASSED**" if gate.passed is True else "**Gate: FAILED**") + scope, ""]
    lines += [f"- {escape(note)}" for note in gate.notes]
    if gate.incomplete:  # the cost ceiling cut the run short: no figure can pass it
        lines.append(f"- **INCOMPLETE**: {escape(gate.incomplete)}")
    for given in gate.checks:
        check = given or GateCheck()  # an entry that is not an object: a check of nothing
        name, actual, threshold = escape(check.figure), _number(check.actual), check.threshold
        if actual is None:
            lines.append(f"- {name} **MISSED**: no such figure in this run (threshold {_fmt(threshold)})")
        elif check.met is True:
            lines.append(f"- {name} = {actual:.3f} >= {_fmt(threshold)} ok")
        else:
            short = _number(threshold)
            gap = f" (short by {short - actual:.3f})" if short is not None else ""
            lines.append(f"- {name} **MISSED**: {actual:.3f} < {_fmt(threshold)}{gap}")
    rate, ceiling = _number(gate.error_rate), _number(gate.max_error_rate)
    if rate is not None:
        if ceiling is not None and rate <= ceiling:
            lines.append(f"- error rate {rate:.3f} <= {ceiling:.3f} ok")
        else:
            cause = _mapping(gate.largest_cause).get("text")  # GateResult.lines()' words for it
            why = f" ({escape(cause)})" if cause else ""
            lines.append(f"- error rate **MISSED**: {rate:.3f} > {_fmt(ceiling)}{why}")
    lines += [_regression(check or Regression()) for check in gate.regressions]
    return lines


def _regression(check: Regression) -> str:
    """RegressionCheck.line() as a bullet."""
    figure = _text(check.figure)
    difference, p, p_holm = _number(check.difference), _number(check.p), _number(check.p_holm)
    margin, alpha = _number(check.margin), _number(check.alpha)
    interval = _interval(check.interval, "+.3f")
    if difference is None or interval is None or p is None:
        return f"- {figure}: no paired samples to compare with the baseline: **REGRESSION**"
    evidence = (f"{figure}: {_fmt(check.baseline)} -> {_fmt(check.current)}, {difference:+.3f} "
                f"{interval}, p={p:.3g} (Holm {_fmt(p_holm, '.3g')})")
    regressed = check.regression
    if not isinstance(regressed, bool):  # as RegressionCheck.regressed
        regressed = p_holm is None or (margin is not None and alpha is not None and -difference > margin
                                       and p_holm < alpha)
    if regressed:
        return f"- {evidence}: drop > margin {_fmt(margin)}, significant: **REGRESSION**"
    if margin is not None and -difference <= margin:
        return f"- {evidence}: within margin {margin:.3f} ok"
    return f"- {evidence}: drop > margin {_fmt(margin)}, not significant at {_fmt(alpha, 'g')} ok"


# --- the suites -------------------------------------------------------------------------------------------------


def _suite(suite: str, block: object) -> list[list[str]]:
    """The suite's sections: its own (`Figures.report_sections`), or its numeric figures."""
    return [_section(section) for section in sections_of(suite, block)]


#: our own words as they are, data escaped, strong text between asterisks
MARKS = Marks(str, lambda run: escape(run.value, run.limit), lambda text: f"**{text}**", "-")


def _section(section: ReportSection) -> list[str]:
    lines = [f"### {MARKS.show(section.title)}"]
    for part in section.body:
        lines += ["", *(_cell_table(part) if isinstance(part, CellTable) else [_paragraph(part)])]
    return lines


def _paragraph(paragraph: Paragraph) -> str:
    text = MARKS.show(paragraph.text)
    return f"*{text}*" if paragraph.emphasis else text


def _cell_table(table: CellTable) -> list[str]:
    if not table.rows and table.empty:
        return [table.empty]
    return _table(table.headers, [[MARKS.show(cell) for cell in row] for row in table.rows], right=table.right)


# --- the comparison ---------------------------------------------------------------------------------------------


def _comparison(comparison: Comparison) -> list[str]:
    baseline = comparison.baseline
    model = f" (model {escape(baseline.model)})" if baseline.model else ""
    bootstrap = comparison.bootstrap
    resampled = (f"; bootstrap {_count(bootstrap.get('replicates'))} replicates, seed {escape(bootstrap.get('seed'))}"
                 if bootstrap else "")
    path = baseline.path if "path" in baseline else "-"
    lines = ["### Baseline comparison", "", f"Compared with {escape(path)}{model}, paired by sample{resampled}", ""]
    if isinstance(baseline.rescored, Mapping):  # a baseline rescored to another benchmark revision
        from .compare import rescore_sentence

        lines += [f"**Note:** {escape(rescore_sentence(baseline.rescored))}.", ""]
    rows = []
    for given in comparison.figures:
        entry = given or ComparedFigure()
        kind = entry.kind
        test = escape(entry.test) if isinstance(entry.test, str) else (  # reports before it was kept
            {"proportion": "McNemar", "combined": "bootstrap"}.get(str(kind), escape(kind)))
        rows.append([escape(entry.figure), _fmt(entry.baseline), _fmt(entry.current),
                     _fmt(entry.difference, "+.3f"), _interval(entry.interval, "+.3f") or "-",
                     _fmt(entry.p, ".3g"), f"{test}, {_count(entry.units)}", _fmt(entry.mde)])
    if rows:
        lines += _table(["figure", "baseline", "current", "difference", "95% interval", "p", "test, units",
                         "detectable"], rows, right=(1, 2, 3, 5, 7))
    else:
        lines.append("no figure was compared")
    differences = [item or Difference() for item in comparison.fingerprint_differences]
    if differences:
        lines += ["", "**Warning: the baseline was made differently** (its figures may not be comparable):", ""]
        lines += [f"- {escape(item.key)}: {_value(item.baseline)} -> {_value(item.current)}" for item in differences]
    lines += ["", *_flips(comparison.flips)]
    unpaired = [(label, [str(key) for key in keys]) for keys, label in (
        (comparison.only_current, "only in this run"), (comparison.only_baseline, "only in the baseline"),
        (comparison.unscored, "not paired (no verdict in one run)"))]
    lines += ["", "Units " + ", ".join(f"{label}: {len(keys)}" for label, keys in unpaired)]
    named: list[str] = []
    for label, keys in unpaired:
        if keys:
            named += [*([""] if named else []), f"**{label}** ({len(keys)})", "", *(f"- {escape(key)}" for key in keys)]
    if named:
        count = sum(len(keys) for _, keys in unpaired)
        lines += ["", *_details(f"{counted(count, 'unit')} not paired", named)]
    not_compared = [escape(suite) for suite in comparison.not_compared]
    if not_compared:
        lines += ["", f"Not compared (no units to pair): {', '.join(not_compared)}"]
    return lines


def _value(value: object) -> str:
    """A fingerprint value, as JSON, cut to one short line."""
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        text = str(value)
    return escape(text, limit=120)


def _flips(flips: Flips) -> list[str]:
    """Every flipped unit, collapsed: pass -> fail, then fail -> pass."""
    groups = [(label, [flip or Flip() for flip in entries])
              for entries, label in ((flips.pass_to_fail, "pass -> fail"), (flips.fail_to_pass, "fail -> pass"))]
    total = sum(len(items) for _, items in groups)
    if not total:
        return ["No flips: every paired unit has the baseline's outcome."]
    body: list[str] = []
    for label, items in groups:
        if not items:
            continue
        body += [*([""] if body else []), f"**{label}** ({len(items)})", ""]
        for flip in items:
            unit = str(_given(flip.unit))
            if flip.test_ids:  # as -k selects them; a report from before they were kept has its units' keys only
                body.append(f"- {escape(_given(flip.suite))}: {', '.join(escape(test_id) for test_id in flip.test_ids)}"
                            f" ({escape(unit)})")
                continue
            samples = [str(sample) for sample in flip.samples]
            named = samples and samples != [unit.rpartition("/")[2]]  # a dialogue: its steps' sample ids
            steps = f" ({', '.join(escape(sample) for sample in samples)})" if named else ""
            body.append(f"- {escape(_given(flip.suite))}:{escape(unit)}{steps}")
    summary = counted(total, "flipped sample")
    counts = ", ".join(f"{len(items)} {label}" for label, items in groups if items)
    return [f"Flipped: {counts}", "", *_details(summary, body)]


# --- totals -----------------------------------------------------------------------------------------------------


def _totals(totals: Totals) -> list[str]:
    wall = _number(totals.wall_s)
    row = [_count(value) for value in (totals.samples, totals.scored, totals.errors, totals.prompt_tokens,
                                       totals.completion_tokens, totals.reasoning_tokens)]
    lines = ["### Totals", "", *_table(["samples", "scored", "errors", "prompt tokens", "completion tokens",
                                        "reasoning tokens", "wall time"],
                                       [[*row, "-" if wall is None else f"{wall:.1f} s"]], right=range(7))]
    return lines + _costs(totals)


def _costs(totals: Totals) -> list[str]:
    """Requests, latency and the estimated cost (run_totals), and the cost by category, when the run has them."""
    parts = []
    if isinstance(totals.requests, int):
        retries = totals.retries
        parts.append(f"{counted(totals.requests, 'request')} "
                     f"({counted(retries, 'retry', 'retries') if isinstance(retries, int) else '- retries'})")
    p50, p95 = _number(totals.latency_p50_s), _number(totals.latency_p95_s)
    if p50 and p95 is not None:
        parts.append(f"sample latency p50 {p50:.2f} s, p95 {p95:.2f} s")
    if "cost_usd" in totals:
        cost = _number(totals.cost_usd)
        parts.append(f"estimated cost ${cost:,.2f} of what was asked" if cost is not None
                     else "no cost estimate (a model has no price)")
    cut = {role: count for role, count in totals.cut.items() if isinstance(count, int) and count > 0}
    if cut:  # answers that stopped at max_tokens, per role
        total = sum(cut.values())
        parts.append(f"{counted(total, 'answer')} cut at max_tokens ("
                     + ", ".join(f"{escape(role)} {count:,}" for role, count in cut.items()) + ")")
    from_cache = totals.samples_from_cache
    if isinstance(from_cache, int) and from_cache:
        cached = _number(totals.cached_cost_usd)
        parts.append(f"{counted(from_cache, 'sample')} answered from the cache"
                     + (f" (${cached:,.2f} at those prices)" if cached is not None else "") + ", not counted")
    lines = ["", "; ".join(parts)] if parts else []
    categories = [entry for entry in totals.categories if entry is not None]
    if categories and "cost_usd" in totals:
        rows = [[escape(f"{_given(entry.suite)} {_given(entry.language)}"
                        f"{'.' + str(entry.variant) if entry.variant else ''}"),
                 escape(_given(entry.category)), _count(entry.samples), _count(entry.prompt_tokens),
                 _count(entry.completion_tokens),
                 "-" if (cost := _number(entry.cost_usd)) is None else f"${cost:,.4f}"]
                for entry in categories]
        lines += ["", "<details><summary>cost by category</summary>", "",
                  *_table(["block", "category", "samples", "prompt tokens", "completion tokens", "cost"], rows,
                          right=range(2, 6)), "", "</details>"]
    return lines


def _storage(faults: list[StorageFault | None]) -> list[str]:
    """What the response cache and the run board failed to keep (every answer was scored all the same)."""
    lines = []
    for given in faults:
        fault = given or StorageFault()
        lost, locked = _number(fault.lost) or 0, _number(fault.skipped_locked) or 0
        lines.append(f"- {escape(_given(fault.store))} in {escape(_given(fault.folder))}: "
                     f"{escape(_given(fault.error))}; {_count(lost)} lost, {counted(int(locked), 'write')} skipped "
                     "(locked)")
    return ["**Storage faults** (every answer was scored):", "", *lines] if lines else []


def _errored(samples: list[SampleRow | None]) -> list[str]:
    """The samples without a verdict: suite, language, id and error (never the output)."""
    errored = [row for row in samples if row is not None and row.outcome == "error"]
    if not errored:
        return []
    rows = [[escape(_given(row.suite)), escape(_given(row.language)), escape(_given(row.id)),
             _text(row.error_type), _text(row.error)] for row in errored[:ERRORS_SHOWN]]
    body = _table(["suite", "language", "sample", "error type", "error"], rows)
    if len(errored) > ERRORS_SHOWN:
        body += ["", f"and {len(errored) - ERRORS_SHOWN} more (the JSON report lists them all)"]
    return _details(counted(len(errored), "errored sample"), body)


# --- writing ----------------------------------------------------------------------------------------------------


def write_markdown(report: ReportDocument | Mapping[str, object], path: str | None, environ: Mapping[str, str]
                   ) -> list[str]:
    """Write the Markdown to `path` (folders created, atomically) and append it to the file named by
    `$GITHUB_STEP_SUMMARY` when set; the paths written. An OSError propagates."""
    text = render_markdown(report)
    written = []
    if path:
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            temporary.write_text(text, encoding="utf-8")
            os.replace(temporary, target)
        finally:
            temporary.unlink(missing_ok=True)
        written.append(str(target))
    summary = environ.get("GITHUB_STEP_SUMMARY", "")
    if summary:
        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(text if handle.tell() == 0 else "\n" + text)
        written.append(summary)
    return written
