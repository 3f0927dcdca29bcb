"""Rendering a RunSummary as text (pure: no terminal, no I/O)."""

from __future__ import annotations

from typing import Any

from tabulate import tabulate

from .summary import RunSummary


def render_summary(summary: RunSummary) -> str:
    blocks = []
    for suite in summary.suites.values():
        for table in suite.tables:
            body = tabulate(table.rows, headers=table.headers, tablefmt="simple", floatfmt=".3f", missingval="-")
            blocks.append(f"{table.title}\n{body}")
        counts = suite.counts
        blocks.append(
            f"{suite.suite}: {counts['scored']}/{counts['total']} scored, {counts['passed']} passed, "
            f"{counts['failed']} failed, {counts['errors']} errors"
            + (f" ({counts['context_overflows']} of them prompts too long for the model's context)"
               if counts.get("context_overflows") else "")
            + (" (partial run: figures renormalised over what ran)" if suite.partial else "")
        )
    return "\n\n".join(blocks)


def render_totals(totals: dict[str, Any]) -> str:
    """One line of run totals under the table (report.summary.run_totals)."""
    return (f"tooleval totals: {totals['samples']} samples ({totals['scored']} scored, {totals['errors']} errors), "
            f"{totals['prompt_tokens']:,} prompt + {totals['completion_tokens']:,} completion tokens"
            + (f" ({totals['reasoning_tokens']:,} of them reasoning)" if totals.get("reasoning_tokens") else "")
            + f", {totals['wall_s']:.1f} s")
