"""The run summary as GitHub-flavoured Markdown (a CI page, `$GITHUB_STEP_SUMMARY`), from the JSON report alone.

`render_markdown` is pure: the report document (json_report.py) in, Markdown out. Every text that comes from
the document is escaped (`escape`), so a sample id or an error cannot add table columns, close a `<details>`
block or start a heading; model outputs are never shown, only ids. A block of a shape it does not know is
rendered as its numeric figures, never a crash. `write_markdown` writes it to a file and appends it to the
step summary.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

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
)
from .safe_text import safe_text

__all__ = ["escape", "render_markdown", "write_markdown"]

TEXT_LIMIT = 200  # characters of one data text (an id, an error) shown; longer ones end with "..."
ERRORS_SHOWN = 200  # errored samples listed (the JSON report lists them all); flips are listed in full
GENERIC_ROWS = 200  # figures of an unknown suite's block shown
FAILED_SHOWN = 200  # failed cases of your own *.tooleval.yaml files listed (the JSON report lists them all)
SUITE_TITLES = {"acebench": "ACEBench", "toolalpaca": "ToolAlpaca", "gpt4tools": "GPT4Tools",
                "yaml": "Your cases (*.tooleval.yaml)"}
FC_NOTE = "function calling: not the leaderboard protocol"
GPT4TOOLS_SUBSETS = (("all", "all"), ("tool", "tool-use"), ("no_tool", "no-tool"))
GPT4TOOLS_METRICS = (("thought", "SR_thought"), ("action", "SR_act"), ("args", "SR_args"), ("sr", "SR"),
                     ("iou", "IoU"))

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


def _number(value: object) -> float | None:
    """A finite number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _fmt(value: object, spec: str = ".3f") -> str:
    number = _number(value)
    return "-" if number is None else format(number, spec)


def _count(value: object) -> str:
    number = _number(value)
    if number is None:
        return "-"
    return f"{int(number):,}" if number == int(number) else f"{number:,.3f}"


def _interval(value: object, spec: str = ".3f") -> str | None:
    """`[low, high]` from a two-number list, else None."""
    if isinstance(value, (list, tuple)) and len(value) == 2:
        low, high = (_number(bound) for bound in value)
        if low is not None and high is not None:
            return f"[{low:{spec}}, {high:{spec}}]"
    return None


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _items(value: object) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else []


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], right: Sequence[int] = ()) -> list[str]:
    """A GitHub pipe table of cells already escaped (headers are ours); columns in `right` right-aligned."""
    rule = ["---:" if index in right else "---" for index in range(len(headers))]
    return ["| " + " | ".join(row) + " |" for row in (headers, rule, *rows)]


def _details(summary: str, body: list[str]) -> list[str]:
    """A collapsed block; `summary` is our own text (no data)."""
    return [f"<details><summary>{summary}</summary>", "", *body, "", "</details>"]


# --- the document -----------------------------------------------------------------------------------------------


def render_markdown(report: ReportDocument) -> str:
    """The report document as Markdown: title and context, the gate, each suite's tables, the comparison with
    the baseline, the totals and errored samples."""
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


def _revisions(blocks: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """`ACEBench 56dd66c` for each suite block naming the benchmark revision it scored against, and whether its
    data was checked against that revision's pin."""
    named = []
    for name, block in blocks.items():
        if block.get("revision") is None:
            continue
        title = SUITE_TITLES.get(name, name)
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


def _suite(suite: str, blocks: object) -> list[list[str]]:
    """One section per summary block of the suite; a shape we do not know as its numeric figures."""
    title = SUITE_TITLES.get(suite, suite)
    if suite == "acebench" and isinstance(blocks, Mapping) and blocks:
        sections = []
        for name, block in blocks.items():
            if _is_acebench(block):
                revision = f" ({escape(block['revision'])})" if _mapping(block).get("revision") else ""
                sections.append(_acebench(f"{title} {name}{revision}", str(name), block))
            else:
                sections.append(_generic(f"{title} {name}", block))
        return sections
    if suite == "toolalpaca" and isinstance(blocks, Mapping) and isinstance(blocks.get("subsets"), Mapping):
        return [_toolalpaca(title, blocks)]
    if suite == "gpt4tools" and isinstance(blocks, Mapping) and isinstance(blocks.get("subsets"), Mapping):
        return [_gpt4tools(title, blocks)]
    if suite == "yaml" and isinstance(blocks, Mapping) and isinstance(blocks.get("blocks"), list):
        sections = [_yaml(title, _mapping(block)) for block in blocks["blocks"]]
        if isinstance(blocks.get("repeats"), Mapping):  # --tooleval-repeats: report/repeated.py's figures
            sections.append(_generic(f"{title}: repeats", blocks["repeats"]))
        return sections
    return [_generic(title, blocks)]


def _is_acebench(block: object) -> bool:
    return isinstance(block, Mapping) and isinstance(block.get("categories"), Mapping)


def _partial(block: Mapping[str, Any], what: str) -> list[str]:
    """The partial-run line of a block (with its reasons), or nothing."""
    if block.get("partial") is not True:
        return []
    reasons = [escape(reason) for reason in _items(block.get("partial_reasons"))]
    because = f" ({'; '.join(reasons)})" if reasons else ""
    return ["", f"*partial run{because}: {what}*"]


def _acebench(title: str, name: str, block: Mapping[str, Any]) -> list[str]:
    """Categories, then the groups and OVERALL; the interval column only when the block has intervals."""
    categories = [_mapping(entry) for entry in block["categories"].values()]
    groups = [(str(key), _mapping(group)) for key, group in _mapping(block.get("groups")).items()]
    overall: object = block.get("overall")
    overall_interval: object = block.get("overall_interval")
    if isinstance(overall, Mapping):  # {"value", "interval"}, should the figure become an object
        overall_interval = overall.get("interval")
        overall = overall.get("value")
    with_interval = any(_interval(entry.get("interval")) for entry in categories + [group for _, group in groups])
    with_interval = with_interval or _interval(overall_interval) is not None
    suffix = " (partial)" if block.get("partial") is True else ""

    rows = []
    for entry in categories:
        scored = f"{_count(entry.get('scored'))}/{_count(entry.get('n'))}"
        if entry.get("steps") is not None:
            scored += f" ({_count(entry.get('correct_steps'))}/{_count(entry.get('steps'))} steps)"
        rows.append([escape(entry.get("category", "-")), scored, _count(entry.get("errors")),
                     _fmt(entry.get("accuracy")), _interval(entry.get("interval")) or "-",
                     _fmt(entry.get("process_acc"))])
    for key, group in groups:
        rows.append([escape(group.get("name", key)) + suffix, "", "", _fmt(group.get("value")),
                     _interval(group.get("interval")) or "-", "-"])
    if _number(overall) is not None:
        rows.append([f"**OVERALL{suffix}**", "", "", f"**{_fmt(overall)}**", _interval(overall_interval) or "-", "-"])
    headers = ["category", "scored/total", "errors", "accuracy", "95% interval", "process acc"]
    if not with_interval:
        headers = headers[:4] + headers[5:]
        rows = [row[:4] + row[5:] for row in rows]
    heading = f"### {escape(title)}" + (f" ({FC_NOTE})" if name.endswith(".fc") else "")
    return [heading, *_partial(block, "groups and OVERALL renormalised over the categories that ran"), "",
            *_table(headers, rows, right=(2, 3, len(headers) - 1))]


def _yaml(title: str, block: Mapping[str, Any]) -> list[str]:
    """Your own cases (suites/yamlsuite/summary.py): each category's cases, accuracy, interval and detectable
    difference, OVERALL (the mean of the categories), then each failed case with the checks that failed."""
    variant = block.get("variant")
    heading = f"### {escape(title)}" + (f", {escape(variant)} protocol" if variant else "")
    rows = []
    for entry in (_mapping(entry) for entry in _mapping(block.get("categories")).values()):
        rows.append([escape(entry.get("category", "-")), f"{_count(entry.get('scored'))}/{_count(entry.get('n'))}",
                     _count(entry.get("errors")), _fmt(entry.get("accuracy")), _interval(entry.get("interval")) or "-",
                     _fmt(entry.get("detectable"))])
    if _number(block.get("overall")) is not None:
        rows.append(["**OVERALL** (mean of categories)", "", "", f"**{_fmt(block.get('overall'))}**",
                     _interval(block.get("overall_interval")) or "-", _fmt(block.get("overall_detectable"))])
    lines = [heading, *_partial(block, "not every case was scored"), "",
             *_table(["category", "scored/total", "errors", "accuracy", "95% interval", "detectable"], rows,
                     right=(2, 3, 5))]
    failed = [_mapping(entry) for entry in _items(block.get("failed"))]
    if not failed:
        return [*lines, "", "No case failed."]
    listed = [[escape(entry.get("case", "-")), escape(entry.get("category", "-")),
               ", ".join(escape(check) for check in _items(entry.get("checks"))) or "-"]
              for entry in failed[:FAILED_SHOWN]]
    lines += ["", f"Failed cases: {len(failed)}", "", *_table(["case", "category", "what failed"], listed)]
    if len(failed) > FAILED_SHOWN:
        lines += ["", f"and {len(failed) - FAILED_SHOWN} more (the JSON report lists them all)"]
    return lines


def _percent(value: object) -> str:
    number = _number(value)
    return "-" if number is None else f"{number:.1f}%"


def _toolalpaca(title: str, block: Mapping[str, Any]) -> list[str]:
    """Upstream's percentages per subset (one decimal, as upstream prints them)."""
    rows = []
    for label, subset in block["subsets"].items():
        subset = _mapping(subset)
        infra, unjudged = _number(subset.get("infra_errors")), _number(subset.get("error_num"))
        unparsed = max(_number(_mapping(subset.get(key)).get("unparsed")) or 0 for key in ("process", "response"))
        rows.append([escape(label), f"{_count(subset.get('num'))}/{_count(subset.get('total'))}", _count(infra),
                     "-" if unjudged is None else _count(unjudged - (infra or 0)), _count(unparsed),
                     _percent(subset.get("procedure")), _percent(subset.get("response_rate")),
                     _percent(subset.get("overall"))])
    deviations = [escape(item) for item in _items(block.get("deviations"))]
    if block.get("upstream_compatible") is True:
        setting = "upstream-compatible setup"
    elif deviations:
        setting = "not upstream-compatible: " + "; ".join(deviations)
    else:
        setting = "setup unknown"
    lines = [f"### {escape(title)} ({setting})"]
    lines += _partial(block, "not every instruction of a subset ran")
    if block.get("setup"):
        setups = block["setup"] if isinstance(block["setup"], list) else [block["setup"]]
        lines += ["", "setup: " + "; ".join(escape(setup) for setup in setups)]
    lines += ["", *_table(["subset", "run/total", "errors", "unjudged", "unparsed", "Procedure", "Response",
                           "Overall"], rows, right=range(2, 8))]
    if block.get("note"):
        lines += ["", f"*{escape(block['note'], limit=400)}*"]
    return lines


def _gpt4tools(title: str, block: Mapping[str, Any]) -> list[str]:
    """Upstream's means over all items, tool-use items and no-tool items."""
    subsets = block["subsets"]
    keys = [(key, label) for key, label in GPT4TOOLS_SUBSETS if key in subsets]
    keys += [(str(key), str(key)) for key in subsets if key not in dict(GPT4TOOLS_SUBSETS)]
    rows = []
    for key, label in keys:
        subset = _mapping(subsets[key])
        rows.append([escape(label), f"{_count(subset.get('n'))}/{_count(subset.get('total'))}",
                     _count(subset.get("errors")), *(_fmt(subset.get(metric)) for metric, _ in GPT4TOOLS_METRICS)])
    variants = block.get("variant")
    names = [escape(variant) for variant in (variants if isinstance(variants, list) else [variants or "upstream"])]
    setting = "upstream-compatible" if block.get("upstream_compatible") is True else "variant: " + "; ".join(names)
    return [f"### {escape(title)} ({setting})", *_partial(block, "not every item was scored"), "",
            *_table(["items", "scored/total", "errors", *(header for _, header in GPT4TOOLS_METRICS)], rows,
                    right=range(2, 8))]


def _generic(title: str, block: object) -> list[str]:
    """Any other block: its numeric figures by dotted key."""
    figures = list(_numeric(block))
    lines = [f"### {escape(title)}", ""]
    if not figures:
        return [*lines, "no numeric figures"]
    rows = [[escape(key), _count(value) if isinstance(value, int) else _fmt(value)]
            for key, value in figures[:GENERIC_ROWS]]
    lines += _table(["figure", "value"], rows, right=(1,))
    if len(figures) > GENERIC_ROWS:
        lines += ["", f"and {len(figures) - GENERIC_ROWS} more (see the JSON report)"]
    return lines


def _numeric(value: object, prefix: str = "", depth: int = 0) -> Iterable[tuple[str, int | float]]:
    if isinstance(value, Mapping) and depth < 8:
        for key, item in value.items():
            yield from _numeric(item, f"{prefix}{key}.", depth + 1)
    elif prefix and (number := _number(value)) is not None:
        yield prefix[:-1], value if isinstance(value, int) else number


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
        lines += ["", *_details(f"{count} unit{'s' if count != 1 else ''} not paired", named)]
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
            samples = [str(sample) for sample in flip.samples]
            named = samples and samples != [unit.rpartition("/")[2]]  # a dialogue: its steps' sample ids
            steps = f" ({', '.join(escape(sample) for sample in samples)})" if named else ""
            body.append(f"- {escape(_given(flip.suite))}:{escape(unit)}{steps}")
    summary = f"{total} flipped sample{'s' if total != 1 else ''}"
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
        parts.append(f"{_count(totals.requests)} request{'' if totals.requests == 1 else 's'} "
                     f"({_count(retries)} {'retry' if retries == 1 else 'retries'})")
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
        parts.append(f"{total:,} answer{'' if total == 1 else 's'} cut at max_tokens ("
                     + ", ".join(f"{escape(role)} {count:,}" for role, count in cut.items()) + ")")
    from_cache = totals.samples_from_cache
    if isinstance(from_cache, int) and from_cache:
        cached = _number(totals.cached_cost_usd)
        parts.append(f"{from_cache:,} sample{'' if from_cache == 1 else 's'} answered from the cache"
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
                     f"{escape(_given(fault.error))}; {_count(lost)} lost, {_count(locked)} writes skipped "
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
    return _details(f"{len(errored)} errored sample{'s' if len(errored) != 1 else ''}", body)


# --- writing ----------------------------------------------------------------------------------------------------


def write_markdown(report: ReportDocument, path: str | None, environ: Mapping[str, str]) -> list[str]:
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
