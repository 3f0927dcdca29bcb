"""Report rows of a BFCL run -> the leaderboard's single-turn figures, computed as bfcl-eval computes them (bfcl §6).

Figures, relative to the suite, with `fc.` before each in the function-calling protocol:
- `<category>.accuracy`: the share of the category's samples that passed;
- `non_live.simple`: the unweighted mean of simple_python, simple_java and simple_javascript;
- `non_live.ast`: the unweighted mean of that, multiple, parallel and parallel_multiple (bfcl's "Non-Live AST
  summary", which is also its "Non-Live Overall Acc");
- `live.ast`: live_simple, live_multiple, live_parallel and live_parallel_multiple weighted by their sizes
  (bfcl's "Live AST summary" and "Live Overall Acc");
- `hallucination.irrelevance`: the unweighted mean of irrelevance and live_irrelevance; `hallucination.relevance`:
  live_relevance;
- `overall.single_turn`: the single-turn part of bfcl's Overall Acc, 10% of each of non_live.ast, live.ast and
  hallucination.irrelevance: multi-turn (30%) and agentic (40%) count 0, as bfcl counts a category that was not
  run; so it is at most 0.30;
- `multi_turn.overall`: the unweighted mean of the multi-turn categories that ran (bfcl's "Multi Turn Overall
  Acc" over all four);
- `memory.overall`, `web_search.overall`: the unweighted mean of the memory (web search) categories that ran;
- `agentic.overall`: bfcl's "Agentic Overall Acc", the mean of its web-search summary and its memory summary, each
  the mean of all its categories with those not run counting 0, as bfcl counts them; given when an agentic
  category ran;
- `overall`: bfcl's Overall Acc with multi-turn (30%) and agentic (40%) in it, the agentic part as above, or 0 when
  no agentic category ran; given only when the three single-turn parts and multi-turn ran;
- `format_sensitivity.accuracy` as any category's; its max delta (the largest difference between two
  configurations' accuracies) and sample standard deviation, in percent rounded to two places as bfcl reports them
  (not in Overall Acc), are in the report's data (`format_sensitivity`, with each configuration's accuracy) and
  its own table, not among the figures a gate reads: they are percentages, and smaller is better;
- bfcl's cost and latency columns (Total Cost ($), Latency Mean, Standard Deviation and 95th Percentile (s)) from
  the latency and token counts the rows carry (usage.py: a replayed result row's, or each request's as a live run
  measured them), in the report's data (`cost_latency`) and their own table, not among the gate's figures:
  dollars and seconds, not proportions (docs/bfcl.md#cost-and-latency).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...report.compare import Spread
from ...report.suite_summary import SuiteSummary, Table, Unit, outcome_counts
from .data import CATEGORIES, FORMAT_SENSITIVITY, MEMORY, WEB_SEARCH
from .data import SIZES as SINGLE_TURN_SIZES
from .multi_turn.sample import CATEGORIES as MULTI_TURN

if TYPE_CHECKING:
    from .cost import Figures

SIZES = {**SINGLE_TURN_SIZES, **dict.fromkeys(MULTI_TURN, 200), **dict.fromkeys(MEMORY, 155),
         **dict.fromkeys(WEB_SEARCH, 100), FORMAT_SENSITIVITY: 5_200}

SIMPLE = ("simple_python", "simple_java", "simple_javascript")
NON_LIVE_AST = ("multiple", "parallel", "parallel_multiple")  # beside the simple mean
LIVE_AST = ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple")
IRRELEVANCE = ("irrelevance", "live_irrelevance")
#: bfcl's two agentic summaries, each over all of its categories, run here or not
WEB_SEARCH_SUMMARY = ("web_search_base", "web_search_no_snippet")
MEMORY_SUMMARY = ("memory_kv", "memory_vector", "memory_rec_sum")
#: bfcl's Overall Acc weights (non-live, live, irrelevance, multi-turn, agentic), normalised over their sum
OVERALL_WEIGHTS = {"non_live.ast": 10, "live.ast": 10, "hallucination.irrelevance": 10, "multi_turn": 30,
                   "agentic": 40}
#: the combined figures, in the order the table shows them, with their labels
COMBINED = {
    "non_live.simple": "Non-Live simple (mean of python, java, javascript)",
    "non_live.ast": "Non-Live AST summary (= Non-Live Overall Acc)",
    "live.ast": "Live AST summary, weighted by size (= Live Overall Acc)",
    "hallucination.irrelevance": "Irrelevance detection (mean of irrelevance, live_irrelevance)",
    "hallucination.relevance": "Relevance detection (live_relevance)",
    "overall.single_turn": "Overall Acc, single-turn part only (multi-turn 30% and agentic 40% count 0 in it)",
    "multi_turn.overall": "Multi-turn overall (mean of the multi-turn categories)",
    "memory.overall": "Memory (mean of the memory categories that ran)",
    "web_search.overall": "Web search (mean of the web search categories that ran)",
    "agentic.overall": "Agentic Overall Acc (bfcl's: web search and memory categories not run count 0)",
    "overall": "Overall Acc (bfcl's weights; the parts not run count 0: see the note)",
}
PROTOCOLS = {"": "prompt", "fc": "function calling"}
#: the first part of the names of the combined single-turn figures
SINGLE_TURN_GROUPS = frozenset({"non_live", "live", "hallucination", "overall"})


def figure_names(categories: Sequence[str], prefix: str = "") -> list[str]:
    """The figures a run of `categories` can give, each after `prefix` ("" or "fc.")."""
    names = [f"{prefix}{category}.accuracy" for category in categories]
    names += [f"{prefix}{name}" for name in combine({f"{category}.accuracy": 0.0 for category in categories})]
    return names


def units(rows: list[dict[str, Any]]) -> list[Unit]:
    """One unit per sample: its category's accuracy counts it (bfcl scores every sample on its own)."""
    found = []
    for row in rows:
        figure = f"{_prefix(row)}{row['category']}.accuracy"
        passed = {"passed": True, "failed": False}.get(row["outcome"])
        found.append(Unit(figure, f"{figure}/{row['id']}", passed, (str(row["id"]),)))
    return found


def combine(proportions: Mapping[str, float]) -> dict[str, float]:
    """The leaderboard's combined figures from category accuracies (unrounded), per protocol (bfcl §6): its
    formulas over the categories that ran (a partial run renormalises over those; the summary says so)."""
    by_prefix: dict[str, dict[str, float]] = {}
    for name, value in proportions.items():
        body = name.removesuffix(".accuracy")
        prefix = "fc." if body.startswith("fc.") else ""
        by_prefix.setdefault(prefix, {})[body.removeprefix(prefix)] = value
    figures: dict[str, float] = {}
    for prefix, accuracy in by_prefix.items():
        found: dict[str, float] = {}
        if simple := [accuracy[name] for name in SIMPLE if name in accuracy]:
            found["non_live.simple"] = sum(simple) / len(simple)  # unweighted (bfcl §6.1)
        ast = ([found["non_live.simple"]] if "non_live.simple" in found else []) + [
            accuracy[name] for name in NON_LIVE_AST if name in accuracy]
        if ast:
            found["non_live.ast"] = sum(ast) / len(ast)
        live = [(SIZES[name], accuracy[name]) for name in LIVE_AST if name in accuracy]
        if live:  # weighted by the number of samples (bfcl §6.2)
            found["live.ast"] = sum(size * value for size, value in live) / sum(size for size, _ in live)
        if irrelevance := [accuracy[name] for name in IRRELEVANCE if name in accuracy]:
            found["hallucination.irrelevance"] = sum(irrelevance) / len(irrelevance)
        if "live_relevance" in accuracy:
            found["hallucination.relevance"] = accuracy["live_relevance"]
        parts = ("non_live.ast", "live.ast", "hallucination.irrelevance")
        if multi_turn := [accuracy[name] for name in MULTI_TURN if name in accuracy]:
            found["multi_turn.overall"] = sum(multi_turn) / len(multi_turn)  # unweighted (bfcl-multiturn §5.6)
        if memory := [accuracy[name] for name in MEMORY if name in accuracy]:
            found["memory.overall"] = sum(memory) / len(memory)
        if web_search := [accuracy[name] for name in WEB_SEARCH if name in accuracy]:
            found["web_search.overall"] = sum(web_search) / len(web_search)
        if memory or web_search:
            # bfcl's summaries count a category not run as 0 (docs/bfcl.md#the-figures-and-the-leaderboard)
            summaries = [sum(accuracy.get(name, 0.0) for name in group) / len(group)
                         for group in (WEB_SEARCH_SUMMARY, MEMORY_SUMMARY)]
            found["agentic.overall"] = sum(summaries) / len(summaries)
        total = sum(OVERALL_WEIGHTS.values())
        if all(part in found for part in parts):  # bfcl §6.3: the missing groups weigh in as 0
            found["overall.single_turn"] = sum(OVERALL_WEIGHTS[part] * found[part] for part in parts) / total
            if "multi_turn.overall" in found:
                found["overall"] = (found["overall.single_turn"]
                                    + OVERALL_WEIGHTS["multi_turn"] * found["multi_turn.overall"] / total
                                    + OVERALL_WEIGHTS["agentic"] * found.get("agentic.overall", 0.0) / total)
        figures.update({f"{prefix}{name}": value for name, value in found.items()})
    return figures


def summarize_bfcl(rows: list[dict[str, Any]]) -> SuiteSummary:
    """The leaderboard's single-turn table per protocol, with 95% intervals, from the tests' outcomes. An
    errored sample has no verdict: it is left out of its category, which is then partial, rather than scored
    as wrong."""
    from ...report.compare import run_spreads

    spreads = run_spreads(units(rows), combine)
    tables, figures, data = [], {}, {}
    partial = False
    for variant in sorted({str(row.get("variant") or "") for row in rows}):
        mine = [row for row in rows if str(row.get("variant") or "") == variant]
        prefix = f"{variant}." if variant else ""
        block = _block(mine, prefix, spreads)
        partial = partial or block["partial"]
        figures.update({f"{prefix}{category}.accuracy": entry["accuracy"]
                        for category, entry in block["categories"].items() if entry["accuracy"] is not None})
        figures.update({f"{prefix}{name}": entry["value"] for name, entry in block["groups"].items()})
        tables.append(_table(block, PROTOCOLS.get(variant, variant)))
        if sensitivity := block.get("format_sensitivity"):  # percentages, not proportions: in the data, not figures
            tables.append(_sensitivity_table(sensitivity, PROTOCOLS.get(variant, variant)))
        if usage := block.get("cost_latency"):  # dollars and seconds: in the data, not figures
            tables.append(_cost_table(usage, PROTOCOLS.get(variant, variant)))
        data[PROTOCOLS.get(variant, variant).replace(" ", "_")] = block
    if delta := _protocol_table(figures):
        tables.append(delta)
    return SuiteSummary("bfcl", tables, figures, partial, outcome_counts(rows), data)


def _protocol_table(figures: Mapping[str, float]) -> Table | None:
    """--tooleval-mode both: every figure in both protocols, and function calling's difference (bfcl lists a
    model's prompt and FC entries apart)."""
    body = [[name, figures[name], figures[f"fc.{name}"], figures[f"fc.{name}"] - figures[name]]
            for name in figures if not name.startswith("fc.") and f"fc.{name}" in figures]
    if not body:
        return None
    heads = {name.removeprefix("fc.").split(".")[0] for name in figures}
    single = all(head in CATEGORIES or head in SINGLE_TURN_GROUPS for head in heads)
    part = " single-turn" if single else ""
    return Table(f"BFCL v4{part}: prompt vs function calling", ["figure", "prompt", "fc", "fc - prompt"], body)


def _prefix(row: Mapping[str, Any]) -> str:
    variant = str(row.get("variant") or "")
    return f"{variant}." if variant else ""


def _block(rows: list[dict[str, Any]], prefix: str, spreads: Mapping[str, Spread]) -> dict[str, Any]:
    categories: dict[str, dict[str, Any]] = {}
    for category in (*CATEGORIES, *MULTI_TURN, *MEMORY, *WEB_SEARCH, FORMAT_SENSITIVITY):
        mine = [row for row in rows if row["category"] == category]
        if not mine:
            continue
        scored = [row for row in mine if row["outcome"] in ("passed", "failed")]
        passed = sum(1 for row in scored if row["outcome"] == "passed")
        spread = spreads.get(f"{prefix}{category}.accuracy")
        categories[category] = {
            "accuracy": passed / len(scored) if scored else None, "passed": passed, "scored": len(scored),
            # as every suite's scored/total: of the samples that ran (-k, -m, --tooleval-sample choose them);
            # the category's size in the benchmark beside it
            "n": len(mine), "benchmark_total": int(mine[0].get("category_size") or len(mine)),
            "errors": len(mine) - len(scored),
            "interval": None if spread is None else list(spread.interval),
            "detectable": None if spread is None else spread.detectable,
        }
    accuracies = {f"{category}.accuracy": entry["accuracy"] for category, entry in categories.items()
                  if entry["accuracy"] is not None}
    groups = {}
    for name, value in combine(accuracies).items():
        spread = spreads.get(f"{prefix}{name}")
        groups[name] = {"value": value, "interval": None if spread is None else list(spread.interval),
                        "detectable": None if spread is None else spread.detectable}
    # single-turn and multi-turn are two parts: a part not run at all is said by the labels, not as partial;
    # a part that ran is partial when one of its categories is missing or not whole
    ran = [part for part in (CATEGORIES, MULTI_TURN, MEMORY, WEB_SEARCH, (FORMAT_SENSITIVITY,))
           if any(category in categories for category in part)]
    full = all(category in categories and categories[category]["scored"] == SIZES[category]
               for part in ran for category in part)
    reasons = []
    if missing := [category for part in ran for category in part if category not in categories]:
        reasons.append(f"not run: {', '.join(missing)}")
    if part := [category for category, entry in categories.items() if entry["n"] < SIZES[category]]:
        reasons.append(f"ran only part of: {', '.join(part)}")
    if unscored := [category for category, entry in categories.items() if entry["scored"] < entry["n"]]:
        reasons.append(f"not every sample scored: {', '.join(unscored)}")
    # which backend answered web search's searches: a figure says where it is from (None: oracle, replayed results)
    labels = {(row.get("details") or {}).get("search") for row in rows if row["category"] in WEB_SEARCH}
    searched = sorted(str(label) for label in labels if label)
    block = {"protocol": prefix.rstrip(".") or "prompt", "categories": categories, "groups": groups,
             "partial": not full, "partial_reasons": reasons,
             "overall_note": _overall_note(categories), "search": searched}
    if sensitivity := _sensitivity(rows):
        block[FORMAT_SENSITIVITY] = sensitivity
    if usage := cost_latency(rows):
        block["cost_latency"] = usage
    return block


def _sensitivity(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Format sensitivity's figures as bfcl computes them from its scored entries (format_sensitivity/figures.py):
    each configuration's accuracy, max delta and standard deviation; None when no entry was scored."""
    from .format_sensitivity.figures import sensitivity

    scored = [(str((row.get("details") or {}).get("config")), row["outcome"] == "passed") for row in rows
              if row["category"] == FORMAT_SENSITIVITY and row["outcome"] in ("passed", "failed")]
    if not scored:
        return None
    found = sensitivity(scored)
    return {"accuracy": found.accuracy, "max_delta": found.max_delta, "std": found.std, "variance": found.variance,
            "configs": {name: {"correct": score.correct, "total": score.total, "accuracy": score.accuracy}
                        for name, score in found.configs.items()}}


def cost_latency(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """bfcl's four cost and latency columns over the rows that carry a `usage` detail (usage.py), as its
    leaderboard computes them (cost.py), in the rows' order; None when no row carries one (the oracle's, a replay of
    results bfcl did not generate). Why a column is N/A is in `note`."""
    from .cost import COLUMNS, KEYS, Figures, counted, figures
    from .prices import Pricing
    from .usage import DETAIL

    usages = [(row, usage) for row in rows if isinstance(usage := (row.get("details") or {}).get(DETAIL), dict)]
    if not usages:
        return None
    # each value again as bfcl counts it: a merged shard's rows are read back from JSON
    values = {key: [value for _, usage in usages for value in counted([usage.get(key)])] for key in KEYS}
    models = {usage.get("model") if isinstance(usage.get("model"), str) else None for _, usage in usages}
    bases = {str(usage.get("basis")) for _, usage in usages}
    pricings = {json.dumps(usage.get("pricing"), sort_keys=True) for _, usage in usages}
    unpriced = sorted({str(usage["unpriced"]) for _, usage in usages if usage.get("unpriced")})
    pricing = Pricing.from_content(usages[0][1].get("pricing"))
    found, note = Figures(), None
    if len(models) > 1 or len(bases) > 1 or len(pricings) > 1:
        named = ", ".join(sorted(str(model) for model in models))
        note = (f"the rows were counted under different models or sources ({named}; {', '.join(sorted(bases))}), "
                "and bfcl counts one model at a time")
    elif unpriced or pricing is None:
        note = unpriced[0] if unpriced else "the rows carry no prices that can be read"
    else:
        found = figures(pricing, values["input_token_count"], values["output_token_count"], values["latency"])
        note = found.reason or _empty_note(found)
    if note and found.values() == (None,) * len(COLUMNS) and not note.startswith("every column"):
        note = f"every column is N/A: {note}"
    cost, mean, std, p95 = found.values()
    return {"basis": next(iter(bases)) if len(bases) == 1 else None,
            "model": next(iter(models)) if len(models) == 1 else None,
            "pricing": None if pricing is None else pricing.content(), "rows": len(usages),
            "cached_rows": sum(1 for row, _ in usages if row.get("source") == "cache"),
            "counted": {key: len(found_values) for key, found_values in values.items()},
            "cost": cost, "latency_mean": mean, "latency_std": std, "latency_p95": p95,
            "cells": dict(zip(COLUMNS, found.cells(), strict=True)), "note": note}


def _empty_note(result: Figures) -> str | None:
    """Why a column bfcl computes is N/A: nothing of it was counted."""
    if result.cost is None and result.mean is None:
        return "every column is N/A: no row carries a latency or token count other than 0"
    if result.cost is None:
        return "the cost is N/A: no row carries both an input and an output token count other than 0"
    if result.mean is None:
        return "the latency columns are N/A: no row carries a latency other than 0"
    return None


def _cost_table(usage: Mapping[str, Any], protocol: str) -> Table:
    """bfcl's four columns as its CSV prints them, with their units (which also keep the terminal's table from
    reprinting them with three places), what each was computed from, and why any is N/A."""
    basis = {"replay": "from the replayed result rows",
             "measured": "measured by this run (each request's latency and tokens, as our client saw them)"}
    title = f"BFCL v4 cost and latency ({protocol}), {basis.get(str(usage.get('basis')), 'from the rows')}"
    if usage.get("model"):
        title += f", model {usage['model']}"
    if usage.get("cached_rows"):
        title += f"; {usage['cached_rows']} samples from the response cache keep the latency measured when asked"
    if usage.get("note"):
        title += f": {usage['note']}"
    counted, pricing = usage.get("counted") or {}, usage.get("pricing") or {}
    latencies = f"{counted.get('latency', 0)} latencies"
    if pricing.get("input_price") is not None and pricing.get("output_price") is not None:
        cost = (f"{counted.get('input_token_count', 0)} input and {counted.get('output_token_count', 0)} output "
                f"token counts at ${pricing['input_price']} and ${pricing['output_price']} per million")
    elif pricing:
        cost = (f"{latencies} at ${pricing.get('gpu_price_per_hour')} per GPU hour shared by "
                f"{pricing.get('concurrent_requests')} requests (a model bfcl hosts)")
    else:
        cost = ""
    body: list[list[Any]] = []
    for number, (column, cell) in enumerate(usage["cells"].items()):
        shown = cell if cell == "N/A" else f"${cell}" if number == 0 else f"{cell} s"
        body.append([column, shown, cost if number == 0 else latencies])
    return Table(title, ["column", "value", "counted"], body)


def _overall_note(categories: Mapping[str, object]) -> str:
    not_run = [category for category in (*WEB_SEARCH_SUMMARY, *MEMORY_SUMMARY) if category not in categories]
    if not all(category in categories for category in MULTI_TURN):
        return "the single-turn part of bfcl's Overall Acc: multi-turn and agentic are not run"
    if len(not_run) == len(WEB_SEARCH_SUMMARY) + len(MEMORY_SUMMARY):
        return "bfcl's Overall Acc without its agentic part (40%), which is not run: counts 0"
    if not not_run:
        return "bfcl's Overall Acc: every part of it ran"
    verb = "is not run: it counts" if len(not_run) == 1 else "are not run: each counts"
    return f"bfcl's Overall Acc; of its agentic part (40%), {', '.join(not_run)} {verb} 0"


def _table(block: Mapping[str, Any], protocol: str) -> Table:
    headers = ["figure", "scored/total", "errors", "accuracy", "95% interval", "detectable"]
    body: list[list[Any]] = []
    groups = block["groups"]
    for category, entry in block["categories"].items():
        body.append([category, f"{entry['scored']}/{entry['n']}", entry["errors"], entry["accuracy"],
                     _bar(entry["interval"]), entry["detectable"]])
    for name, label in COMBINED.items():
        if name in groups:
            entry = groups[name]
            body.append([label, "", "", entry["value"], _bar(entry["interval"]), entry["detectable"]])
    parts = [name for name, part in (("single-turn", CATEGORIES), ("multi-turn", MULTI_TURN), ("memory", MEMORY),
                                     ("web search", WEB_SEARCH), ("format sensitivity", (FORMAT_SENSITIVITY,)))
             if any(category in part for category in block["categories"])]
    named = " and ".join([", ".join(parts[:-1]), parts[-1]] if len(parts) > 1 else parts) or "single-turn"
    title = f"BFCL v4 {named} ({protocol})"
    if block.get("search"):
        title += f" [web search: {', '.join(block['search'])}]"
    if block["partial"]:
        title += ": partial run (" + "; ".join(block["partial_reasons"]) + ")"
    return Table(title, headers, body)


def _sensitivity_table(sensitivity: Mapping[str, Any], protocol: str) -> Table:
    """Each configuration's accuracy, then bfcl's two figures of their spread (in percent, as bfcl prints them)."""
    body: list[list[Any]] = [[name, f"{entry['correct']}/{entry['total']}", entry["accuracy"]]
                             for name, entry in sensitivity["configs"].items()]
    body += [["Max delta (percentage points)", "", sensitivity["max_delta"]],
             ["Standard deviation (percentage points, sample)", "", sensitivity["std"]]]
    return Table(f"BFCL v4 format sensitivity ({protocol}): not in Overall Acc", ["configuration", "correct",
                                                                                  "accuracy"], body)


def _bar(interval: Sequence[float] | None) -> str | None:
    return None if interval is None else f"[{interval[0]:.3f}, {interval[1]:.3f}]"
