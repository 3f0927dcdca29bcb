"""Markdown tables from the JSON reports of real_server/run.sh.

    python real_server/table.py prompt=OUT/prompt.json fc=OUT/fc.json

Each argument is LABEL=PATH, a report written by --tooleval-report. Everything shown is read from the report
(`samples`, `totals`, `run`), except two columns run.sh adds from a file beside the report, PATH with
`.meta.json` in place of `.json`: the pytest exit status and the seconds the whole pytest process took.
A report that is missing (the run stopped before writing it) is a row that says so.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

MISSING = "-"


def _load(path: Path) -> dict[str, Any] | None:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return document if isinstance(document, dict) else None


def _meta(path: Path) -> dict[str, Any]:
    return _load(path.with_name(path.name.removesuffix(".json") + ".meta.json")) or {}


def _counts(mapping: Any) -> str:
    """A {name: count} mapping as 'name n, name n' (nothing: 0)."""
    if not isinstance(mapping, dict) or not mapping:
        return "0"
    return ", ".join(f"{name} {count}" for name, count in mapping.items())


def _timeouts(samples: list[dict[str, Any]]) -> int:
    """Errored samples whose error text says a request timed out (the plugin's own wording)."""
    return sum(1 for row in samples if row.get("outcome") == "error" and "timed out" in json.dumps(row.get("error")))


def _latency(totals: dict[str, Any]) -> str:
    p50, p95 = totals.get("latency_p50_s"), totals.get("latency_p95_s")
    if not isinstance(p50, (int, float)) or not isinstance(p95, (int, float)):
        return MISSING
    return f"{p50:.1f} / {p95:.1f}"


def summary_row(label: str, path: Path) -> list[str]:
    meta = _meta(path)
    exit_status = str(meta.get("exit", MISSING))
    elapsed = f"{meta['elapsed_s']:.0f}" if isinstance(meta.get("elapsed_s"), (int, float)) else MISSING
    report = _load(path)
    if report is None:
        return [label, "no report", *[MISSING] * (len(SUMMARY_HEADER) - 4), elapsed, exit_status]
    samples = [row for row in report.get("samples", []) if isinstance(row, dict)]
    totals = report.get("totals") or {}
    run = report.get("run") or {}
    outcomes = Counter(row.get("outcome") for row in samples)
    finish = Counter(str(row["finish_reason"]) for row in samples if row.get("finish_reason") is not None)
    tools = totals.get("tool_answers")
    tool_text = f"{tools.get('called', 0)} of {tools.get('asked', 0)}" if isinstance(tools, dict) else MISSING
    not_run = len(run.get("not_run") or [])
    interrupted = f" ({run.get('signal') or 'interrupted'})" if run.get("interrupted") else ""
    return [
        label,
        str(len(samples)),
        str(outcomes.get("passed", 0)),
        str(outcomes.get("failed", 0)),
        str(outcomes.get("error", 0)),
        str(_timeouts(samples)),
        f"{not_run}{interrupted}",
        _counts(totals.get("cut")),
        tool_text,
        _counts(dict(finish.most_common())) if finish else MISSING,
        str(totals.get("requests", MISSING)),
        str(totals.get("retries", MISSING)),
        _latency(totals),
        f"{totals['wall_s']:.0f}" if isinstance(totals.get("wall_s"), (int, float)) else MISSING,
        elapsed,
        exit_status,
    ]


SUMMARY_HEADER = [
    "mode",
    "samples",
    "passed",
    "failed",
    "errors",
    "errors: timed out",
    "not run",
    "cut at max_tokens",
    "tool calls / asked with tools",
    "finish_reason",
    "requests",
    "retries",
    "sample latency p50 / p95 s",
    "wall s (report)",
    "wall s (pytest process)",
    "exit",
]


def suite_rows(label: str, path: Path) -> list[list[str]]:
    report = _load(path)
    if report is None:
        return []
    by_suite: dict[str, Counter[str]] = {}
    for row in report.get("samples", []):
        if isinstance(row, dict):
            by_suite.setdefault(str(row.get("suite")), Counter())[str(row.get("outcome"))] += 1
    return [
        [label, suite, str(sum(counts.values())), str(counts["passed"]), str(counts["failed"]), str(counts["error"])]
        for suite, counts in sorted(by_suite.items())
    ]


def error_lines(label: str, path: Path, width: int = 200) -> list[str]:
    report = _load(path)
    if report is None:
        return []
    lines = []
    for row in report.get("samples", []):
        if isinstance(row, dict) and row.get("outcome") == "error":
            error = row.get("error")
            text = " ".join(str(part) for part in error) if isinstance(error, list) else str(error)
            text = " ".join(text.split())
            lines.append(f"- {label} `{row.get('test_id')}`: {text[:width]}{'...' if len(text) > width else ''}")
    return lines


def markdown(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    runs = []
    for argument in argv:
        label, separator, path = argument.partition("=")
        if not separator or not label or not path:
            print(f"usage: table.py LABEL=REPORT.json ... (got {argument!r})", file=sys.stderr)
            return 2
        runs.append((label, Path(path)))
    if not runs:
        print("usage: table.py LABEL=REPORT.json ...", file=sys.stderr)
        return 2
    print(markdown(SUMMARY_HEADER, [summary_row(label, path) for label, path in runs]))
    print()
    print(
        markdown(
            ["mode", "suite", "samples", "passed", "failed", "errors"],
            [row for label, path in runs for row in suite_rows(label, path)],
        )
    )
    errors = [line for label, path in runs for line in error_lines(label, path)]
    if errors:
        print()
        print("Errors:")
        print("\n".join(errors))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
