"""Rendering a RunSummary as text (pure: no terminal, no I/O)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tabulate import tabulate

from ..json_value import JSONObject
from ..text import counted, utc_minute
from .row import entries, object_entries, object_or_empty, whole
from .summary import RunSummary

if TYPE_CHECKING:
    from .compare import Comparison


_WORD = re.compile(r"[^\w-]")  # a role name from a merged report is printed as word characters only


def render_summary(summary: RunSummary) -> str:
    blocks = []
    for suite in summary.suites.values():
        for table in suite.tables:
            body = tabulate(table.rows, headers=table.headers, tablefmt="simple", floatfmt=".3f", missingval="-")
            blocks.append(f"{table.title}\n{body}")
        counts = suite.counts
        blocks.append(
            f"{suite.suite}: {counts['scored']}/{counts['total']} scored, {counts['passed']} passed, "
            f"{counts['failed']} failed"
            + _unscored(counts)
            + f", {counted(counts['errors'], 'error')}"
            + (f" ({counts['context_overflows']} of them prompts too long for the model's context)"
               if counts.get("context_overflows") else "")
            + (" (partial run: figures renormalised over what ran)" if suite.partial else "")
        )
    return "\n\n".join(blocks)


def _unscored(counts: dict[str, int]) -> str:
    """How many of the failures no scorer scored, and why (outcome.UNSCORED)."""
    return ((f" ({counts['malformed_replies']} of them malformed replies)" if counts.get("malformed_replies") else "")
            + (f" ({counts['over_time']} of them past the scoring time limit)" if counts.get("over_time") else ""))


def render_totals(totals: JSONObject) -> str:
    """One line of run totals under the table (report.summary.run_totals)."""
    sources = answer_sources_text(totals)
    return (f"tooleval totals: {counted(whole(totals['samples']), 'sample')} ({totals['scored']} scored, "
            f"{counted(whole(totals['errors']), 'error')}{'; ' + sources if sources else ''}), "
            f"{totals['prompt_tokens']:,} prompt + {totals['completion_tokens']:,} completion tokens"
            + (f" ({totals['reasoning_tokens']:,} of them reasoning)" if totals.get("reasoning_tokens") else "")
            + (f", {cut}" if (cut := cut_answers(totals)) else "")
            + f", {totals['wall_s']:.1f} s")


CACHE_WORDS = {"resume": "resumed from the cache", "reuse": "reused from the cache"}


def answer_sources_text(totals: JSONObject) -> str | None:
    """"60 asked, 40 resumed from the cache (oldest made 2026-12-05 14:02 UTC)" from run_totals' `answers` (and
    the run's --tooleval-cache, `cache_mode`, where the controller put it); None when no model answered (the
    oracle)."""
    answers = totals.get("answers")
    if not isinstance(answers, dict):
        return None
    counts = {key: value for key in ("asked", "cache", "replay")
              if isinstance(value := answers.get(key), int) and not isinstance(value, bool)}
    if not any(counts.values()):
        return None
    parts = []
    if counts.get("asked") or counts.get("cache"):
        parts.append(f"{counts.get('asked', 0):,} asked")
    if counts.get("cache"):
        oldest = answers.get("oldest_cached")
        made = f" (oldest made {utc_minute(oldest)})" if isinstance(oldest, (int, float)) else ""
        parts.append(f"{counts['cache']:,} {CACHE_WORDS.get(str(totals.get('cache_mode')), 'from the cache')}{made}")
    if counts.get("replay"):
        parts.append(f"{counts['replay']:,} replayed")
    return ", ".join(parts)


def cut_answers(totals: JSONObject) -> str | None:
    """"3 answers cut at max_tokens (model 2, user 1)" from run_totals' `cut`; None when none was."""
    cut = {role: count for role, count in object_or_empty(totals.get("cut")).items()
           if isinstance(count, int) and count}
    if not cut:
        return None
    return (f"{counted(sum(cut.values()), 'answer')} cut at max_tokens ("
            + ", ".join(f"{_WORD.sub('?', str(role))} {count:,}" for role, count in cut.items()) + ")")


def render_no_tool_calls(totals: JSONObject) -> str | None:
    """The line for a run whose requests offered tools and got no tool call at all (the endpoint may ignore
    `tools`); None otherwise."""
    answers = object_or_empty(totals.get("tool_answers"))
    asked = answers.get("asked")
    if not isinstance(asked, int) or not asked or answers.get("called"):
        return None
    from ..models.factory import NO_TOOL_CALL_HINT

    return (f"tooleval: no tool call in {counted(asked, 'answer')} to requests that offered tools: the endpoint may "
            f"ignore them; {NO_TOOL_CALL_HINT.removesuffix(' (or skip the probe: --tooleval-no-probe)')}")


def render_cost(totals: JSONObject) -> str | None:
    """The line under the totals: requests and retries, sample latency, and the estimated cost; None when
    there is nothing to say (the oracle sends no request)."""
    parts = []
    if "requests" in totals:
        timed_out = f", {totals['timeouts']:,} timed out" if totals.get("timeouts") else ""
        parts.append(f"{counted(whole(totals['requests']), 'request')} "
                     f"({counted(whole(totals['retries']), 'retry', 'retries')}{timed_out})")
    if totals.get("latency_p50_s"):
        parts.append(f"sample latency p50 {totals['latency_p50_s']:.2f} s, p95 {totals['latency_p95_s']:.2f} s")
    if "cost_usd" in totals:
        unpriced = [str(model) for model in entries(totals.get("unpriced_models"))]
        batched = " (batch answers at half price)" if object_or_empty(totals.get("batch")).get("answered") else ""
        if totals["cost_usd"] is None:
            parts.append(f"no cost: no --tooleval-prices entry for {', '.join(unpriced) or 'a model'}")
        else:
            parts.append(f"${totals['cost_usd']:,.2f} asked, estimated at --tooleval-prices{batched}")
        if totals.get("samples_from_cache"):
            cached = totals.get("cached_cost_usd")
            worth = f", ${cached:,.2f} at those prices" if isinstance(cached, (int, float)) else ""
            parts.append(f"{counted(whole(totals['samples_from_cache']), 'sample')} answered from the cache{worth}, "
                         "not counted")
    return f"tooleval cost: {'; '.join(parts)}" if parts else None


CUTS_SHOWN = 3  # per endpoint in the terminal; the JSON report's totals.concurrency has them all


def render_concurrency(totals: JSONObject) -> list[str]:
    """A line per endpoint whose in-flight limit came down during the run (models/limits.py): where it ended,
    its ceiling, and when and why it was cut."""
    lines = []
    for moved in object_entries(totals.get("concurrency")):
        cuts = object_entries(moved.get("cuts"))
        if not cuts:
            continue
        shown = "; ".join(f"{cut['from']} to {cut['to']} at {cut['at_s']:g} s: {cut['reason']}"
                          for cut in cuts[:CUTS_SHOWN])
        more = f"; {len(cuts) - CUTS_SHOWN} more cuts" if len(cuts) > CUTS_SHOWN else ""
        lines.append(f"tooleval concurrency: {moved['endpoint']}: in-flight limit {moved['limit']} at the end "
                     f"(ceiling {moved['ceiling']}, peak {moved['peak']}); cut {shown}{more}")
    return lines


def made_differently(key: str, old: object, new: object) -> str:
    """The warning under a comparison for one fingerprint difference between the baseline and this run."""
    return f"tooleval baseline: made differently: {key} was {old!r}, is {new!r} (the difference may be the change, " \
           "not the model)"


FLIPS_SHOWN = 20  # per direction in the terminal; the JSON report lists them all


def _number(value: float | None, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def render_comparison(comparison: Comparison) -> str:
    """The comparison with the baseline: every compared figure with its paired difference, then the samples
    that flipped and those that could not be paired."""
    model = f" (model {comparison.baseline_model})" if comparison.baseline_model else ""
    body = []
    for entry in comparison.figures:
        interval = "" if entry.interval is None else f"[{entry.interval[0]:+.3f}, {entry.interval[1]:+.3f}]"
        body.append([entry.figure, _number(entry.baseline), _number(entry.current),
                     _number(entry.difference, "+.3f"), interval, _number(entry.p, ".3g"),
                     f"{entry.test}, {entry.units}", _number(entry.mde)])
    lines = [f"Compared with {comparison.baseline_path}{model}, paired by sample"]
    if comparison.baseline_rescored:  # rescored to another benchmark revision (report/rescore.py)
        from .compare import rescore_sentence

        sentence = rescore_sentence(comparison.baseline_rescored)
        lines.append(sentence[:1].upper() + sentence[1:])
    lines.append(tabulate(body, headers=["figure", "baseline", "current", "difference", "95% interval", "p",
                                         "test, units", "detectable"],
                          tablefmt="simple", disable_numparse=True))
    for direction, label in (("pass_to_fail", "pass -> fail"), ("fail_to_pass", "fail -> pass")):
        flipped = [flip for flip in comparison.flips if flip.direction == direction]
        if flipped:
            shown = ", ".join(flip.shown for flip in flipped[:FLIPS_SHOWN])  # as -k takes them
            more = f" and {len(flipped) - FLIPS_SHOWN} more" if len(flipped) > FLIPS_SHOWN else ""
            lines.append(f"flipped {label}: {len(flipped)}: {shown}{more}")
    if not comparison.flips:
        lines.append("flipped: none (every paired sample has the baseline's outcome)")
    for label, keys in (("only in this run", comparison.only_current), ("only in the baseline",
                                                                        comparison.only_baseline),
                        ("not paired (no verdict in one run)", comparison.unscored)):
        if keys:
            shown = ", ".join(keys[:FLIPS_SHOWN]) + (f" and {len(keys) - FLIPS_SHOWN} more"
                                                      if len(keys) > FLIPS_SHOWN else "")
            lines.append(f"{label}: {len(keys)}: {shown}")
    lines += [f"not compared: {suite} (it declares no units to pair)" for suite in comparison.not_compared]
    return "\n".join(lines)
