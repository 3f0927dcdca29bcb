"""A run's summary: one SuiteSummary per suite, built by that suite's own (pure) summariser."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..json_value import JSONObject, JSONValue
from ..models.meter import Prices, asked_tokens, row_cost
from .row import member_text, tally, whole
from .suite_summary import SuiteSummary as SuiteSummary  # re-exported: what a suite's summariser returns
from .suite_summary import Table as Table
from .suite_summary import outcome_counts as outcome_counts

if TYPE_CHECKING:
    from ..suites.base import SuitePlugin


@dataclass(frozen=True)
class RunSummary:
    suites: dict[str, SuiteSummary]

    @property
    def figures(self) -> dict[str, float]:
        """Every suite's figures in one namespace: `<suite>.<figure>` (`<suite>.en.overall`)."""
        return {f"{name}.{figure}": value for name, suite in self.suites.items()
                for figure, value in suite.figures.items()}

    @property
    def counts(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for summary in self.suites.values():
            for key, value in summary.counts.items():
                total[key] = total.get(key, 0) + value
        return total


def summarize(rows: list[JSONObject], plugin: Callable[[str], SuitePlugin[Any]]) -> RunSummary:
    """Each suite's summary of the first ask of every sample; with --tooleval-repeats, its repeats too.

    Args:
        plugin: the registered suite of a name (suites.plugin: an unknown name is a usage error).
    """
    by_suite: dict[str, list[JSONObject]] = {}
    for row in rows:
        by_suite.setdefault(member_text(row, "suite"), []).append(row)
    summaries = {}
    for suite, suite_rows in sorted(by_suite.items()):
        first = [row for row in suite_rows if whole(row.get("repeat", 1)) == 1]
        summary = plugin(suite).figures.summarize(first)
        if len(first) < len(suite_rows):
            summary = _with_repeats(summary, plugin(suite), suite_rows)
        summaries[suite] = summary
    return RunSummary(summaries)


def _with_repeats(summary: SuiteSummary, suite: SuitePlugin[Any], rows: list[JSONObject]) -> SuiteSummary:
    """The suite's summary and its repeats (report/repeats.py); unchanged for a suite that declares no units."""
    from .compare import suite_members
    from .repeated import repeat_figures

    members = suite_members(suite)
    if members is None:
        return summary
    table, figures, data = repeat_figures(rows, *members)
    return SuiteSummary(summary.suite, [*summary.tables, table], {**summary.figures, **figures}, summary.partial,
                        summary.counts, {**summary.data, "repeats": data})


def token_totals(tokens: Mapping[str, int]) -> tuple[int, int]:
    """(prompt, completion) tokens of every model role in a sample's `tokens` ("prompt", "judge_prompt", ...)."""
    prompt = sum(int(value) for key, value in tokens.items() if key.endswith("prompt"))
    completion = sum(int(value) for key, value in tokens.items() if key.endswith("completion"))
    return prompt, completion


def _percentile(values: list[float], share: float) -> float | None:
    """The nearest-rank percentile (p50, p95 of latencies)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]


def category_totals(rows: list[JSONObject], role_models: dict[str, str | None] | None = None,
                    prices: Prices | None = None) -> list[JSONObject]:
    """Per suite, language, protocol and category: samples, tokens, latency p50/p95 and, with prices, cost."""
    groups: dict[tuple[str, str, str, str], list[JSONObject]] = {}
    for row in rows:
        key = (member_text(row, "suite"), member_text(row, "language"), member_text(row, "variant", ""),
               member_text(row, "category"))
        groups.setdefault(key, []).append(row)
    out = []
    for (suite, language, variant, category), members in sorted(groups.items()):
        entry: JSONObject = {"suite": suite, "language": language, "variant": variant, "category": category,
                 **_sums(members, role_models or {}, prices)}
        out.append(entry)
    return out


def _sums(rows: list[JSONObject], role_models: dict[str, str | None], prices: Prices | None) -> JSONObject:
    prompt = completion = reasoning = 0
    costs: list[float | None] = []
    cached_costs: list[float | None] = []
    from_cache = 0
    latencies = []
    for row in rows:
        tokens = tally(row.get("tokens"))
        row_prompt, row_completion = token_totals(tokens)
        prompt += row_prompt
        completion += row_completion
        reasoning += sum(int(value) for key, value in tokens.items() if key.endswith("reasoning"))
        # what the response cache served was paid for by an earlier run: priced apart, not in the run's cost
        batched = row.get("batched")
        asked = asked_tokens(tokens, tally(row.get("cached_tokens")), batched if isinstance(batched, str) else None)
        served = {key: value - asked[key] for key, value in tokens.items() if value - asked[key]}
        from_cache += bool(served)
        # an answer the cache served whole took its time in an earlier run: this run's latency figures leave it out
        latency = row.get("latency_s")
        if isinstance(latency, (int, float)) and not (served and not any(asked.values())):
            latencies.append(float(latency))
        if prices is not None:
            costs.append(row_cost(asked, role_models, prices, batched if isinstance(batched, str) else None))
            cached_costs.append(row_cost(served, role_models, prices))
    sums: JSONObject = {"samples": len(rows), "prompt_tokens": prompt, "completion_tokens": completion,
                            "reasoning_tokens": reasoning, "latency_p50_s": _percentile(latencies, 0.5),
                            "latency_p95_s": _percentile(latencies, 0.95)}
    sums["samples_from_cache"] = from_cache
    if prices is not None:
        sums["cost_usd"] = _total(costs)
        sums["cached_cost_usd"] = _total(cached_costs)
    return sums


def _counts(entries: Iterable[JSONValue]) -> dict[str, int]:
    """The sum of several {name: count} mappings (a row's `cut`, its `tool_answers`); malformed ones skipped."""
    total: dict[str, int] = {}
    for entry in entries:
        if isinstance(entry, dict):
            for key, value in entry.items():
                if isinstance(value, int) and not isinstance(value, bool):
                    total[str(key)] = total.get(str(key), 0) + value
    return dict(sorted(total.items(), key=lambda item: (item[0] != "model", item[0])))  # the model under test first


def _total(costs: list[float | None]) -> float | None:
    return None if any(cost is None for cost in costs) else sum(cost or 0.0 for cost in costs)


def answer_sources(rows: list[JSONObject]) -> JSONObject:
    """Where the run's answers came from (a row's `source`): asked in this run, served whole by the response cache
    (with when the oldest cached reply was made), replayed from recorded outputs."""
    counts = {"asked": 0, "cache": 0, "replay": 0}
    oldest: float | None = None
    for row in rows:
        source = row.get("source")
        if source in counts:
            counts[source] += 1
        made = row.get("cached_at")
        if isinstance(made, (int, float)) and not isinstance(made, bool):
            oldest = float(made) if oldest is None else min(oldest, float(made))
    return {**counts, "oldest_cached": oldest}


def run_totals(rows: list[JSONObject], wall_s: float, *, requests: dict[str, int] | None = None,
               role_models: dict[str, str | None] | None = None, prices: Prices | None = None) -> JSONObject:
    """What a run cost: samples, scored and errored, tokens of every model role (agent, user, simulator, judge
    together; reasoning tokens are a part of the completion tokens), latency p50/p95 of the samples, the HTTP
    requests and retries sent, the wall time, and with prices (--tooleval-prices) the estimated cost, in all and
    per category."""
    errors = sum(1 for row in rows if row["outcome"] == "error")
    sums = _sums(rows, role_models or {}, prices)
    totals: JSONObject = {"samples": len(rows), "scored": len(rows) - errors, "errors": errors,
                              "prompt_tokens": sums["prompt_tokens"], "completion_tokens": sums["completion_tokens"],
                              "reasoning_tokens": sums["reasoning_tokens"], "wall_s": round(wall_s, 2),
                              "latency_p50_s": sums["latency_p50_s"], "latency_p95_s": sums["latency_p95_s"]}
    if requests is not None:
        totals.update(requests=requests.get("requests", 0), retries=requests.get("retries", 0),
                      timeouts=requests.get("timeouts", 0))
    totals["samples_from_cache"] = sums["samples_from_cache"]
    totals["answers"] = answer_sources(rows)
    # answers that stopped at max_tokens, per role: scored as they are (upstream scores the text it got)
    totals["cut"] = dict(_counts(row.get("cut") for row in rows))
    tool_answers = _counts(row.get("tool_answers") for row in rows)
    if tool_answers:  # requests that offered tools, and the answers with a tool call
        totals["tool_answers"] = {"asked": tool_answers.get("asked", 0), "called": tool_answers.get("called", 0)}
    if prices is not None:
        totals["cost_usd"] = sums["cost_usd"]
        totals["cached_cost_usd"] = sums["cached_cost_usd"]
        totals["unpriced_models"] = [*sorted({model for model in (role_models or {}).values()
                                              if model is not None and model not in prices})]
    totals["categories"] = [*category_totals(rows, role_models, prices)]
    return totals
