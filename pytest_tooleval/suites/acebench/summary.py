"""Report rows of an ACEBench run -> the per-language summary tables and gateable figures."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from ...report.compare import Spread
from ...report.summary import SuiteSummary, Table, outcome_counts
from ..base import Unit
from .aggregate import WEIGHTS, SampleScore, Summary, dialogue_key, summarize
from .categories import (  # upstream's order: tables list categories as upstream's leaderboard does
    ALL_CATEGORIES,
    GROUPS,
)

_VALID_BY_OUTCOME = {"passed": True, "failed": False, "error": None}


def summarize_acebench(rows: list[dict[str, Any]]) -> SuiteSummary:
    """Aggregate each language on its own, as upstream's leaderboard does, from the tests' outcomes.

    The outcome already reflects the chosen scorer (official or fixed); an errored sample has no verdict,
    so its category (and the run) is reported as partial rather than scored as wrong.
    """
    from ...report.compare import run_spreads

    languages = sorted({row["language"] for row in rows})
    variants = sorted({row.get("variant", "") for row in rows})  # "" (the text protocol) first, then "fc"
    tables, figures, data = [], {}, {}
    spreads = run_spreads(units(rows), combine)  # 95% intervals and detectable differences
    partial = False
    for variant in variants:
        for language in languages:
            mine = [row for row in rows if row["language"] == language and row.get("variant", "") == variant]
            if not mine:
                continue
            scores = [
                SampleScore(row["category"], row["id"], _VALID_BY_OUTCOME[row["outcome"]], row.get("process"))
                for row in mine
            ]
            expected = {row["category"]: row["category_size"] for row in mine}
            summary = summarize(scores, expected=expected)
            partial = partial or summary.partial
            name = language if not variant else f"{language}.{variant}"  # figures: en.overall, en.fc.overall
            revisions = _revisions(mine)
            tables.append(_table(_titled(language, mine, revisions), summary, mine, variant,
                                 _prefixed(spreads, name)))
            figures.update(_figures(name, summary))
            data[name] = _json(summary, mine, _prefixed(spreads, name))
            if revisions:  # the ACEBench revision its samples were scored against (revisions.py)
                data[name]["revision"] = ", ".join(revisions)
    for language in languages:
        delta = _delta_table(language, figures)  # a run in both protocols only
        if delta is not None:
            tables.append(delta)
    return SuiteSummary("acebench", tables, figures, partial, outcome_counts(rows), data)


def units(rows: list[dict[str, Any]]) -> list[Unit]:
    """The units of the category figures, for comparing runs (report/compare.py): a sample, or a dialogue of
    a normal multi-turn category (it counts as passed when every step passed, as its accuracy does)."""
    steps: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        variant = row.get("variant", "")
        figure = f"{row['language']}.{variant + '.' if variant else ''}{row['category']}"
        unit = dialogue_key(row["id"]) if "normal_multi_turn" in row["category"] else row["id"]
        steps.setdefault((figure, unit), []).append(row)
    found = []
    for (figure, unit), members in steps.items():
        outcomes = [row["outcome"] for row in members]
        passed = None if "error" in outcomes else all(outcome == "passed" for outcome in outcomes)
        found.append(Unit(figure, f"{figure}/{unit}", passed, tuple(sorted(row["id"] for row in members))))
    return found


def combine(proportions: Mapping[str, float]) -> dict[str, float]:
    """The groups and OVERALL from category accuracies (unrounded), per language and protocol: upstream's
    formula when every category is there, the renormalised one otherwise (aggregate.py)."""
    by_prefix: dict[str, dict[str, float]] = {}
    for name, value in proportions.items():
        prefix, _, category = name.rpartition(".")
        by_prefix.setdefault(prefix, {})[category] = value
    figures: dict[str, float] = {}
    for prefix, accuracies in by_prefix.items():
        full = all(category in accuracies for category in ALL_CATEGORIES)
        groups = {group: sum(accuracies[m] for m in members if m in accuracies)
                  / len([m for m in members if m in accuracies])
                  for group, members in GROUPS.items() if any(m in accuracies for m in members)}
        figures.update({f"{prefix}.{group.lower()}": value for group, value in groups.items()})
        weighted = [(weight, groups[group]) for group, weight in WEIGHTS.items() if group in groups]
        if weighted:
            total = sum(weight * value for weight, value in weighted)
            figures[f"{prefix}.overall"] = total if full else total / sum(weight for weight, _ in weighted)
    return figures


def _revisions(rows: list[dict[str, Any]]) -> list[str]:
    """The ACEBench revisions the rows were scored against (one, unless a rescore carried some rows unrescored)."""
    return sorted({str(row["revision"]) for row in rows if row.get("revision")})


def _titled(language: str, rows: list[dict[str, Any]], revisions: list[str]) -> str:
    """A table's language with the revision its samples were scored against: `en (56dd66c)`."""
    named = [*revisions, *(["data unverified"] if any(row.get("data_unverified") for row in rows) else [])]
    return f"{language} ({', '.join(named)})" if named else language


# how a function-calling table is titled: the protocol differs from the one the leaderboard's figures use
FC_TITLE = "function calling (--tooleval-mode fc: not the leaderboard protocol)"


def _delta_table(language: str, figures: dict[str, float]) -> Table | None:
    """--tooleval-mode both: each category's accuracy in both protocols, and function calling's difference."""
    prefix, fc_prefix = f"{language}.", f"{language}.fc."
    names = [key[len(fc_prefix):] for key in figures if key.startswith(fc_prefix)]
    body = [[name, figures[prefix + name], figures[fc_prefix + name],
             figures[fc_prefix + name] - figures[prefix + name]] for name in names if prefix + name in figures]
    if not body:
        return None
    return Table(f"ACEBench {language}: text protocol vs function calling", ["category", "prompt", "fc", "fc - prompt"],
                 body)


def _prefixed(spreads: dict[str, Spread], name: str) -> dict[str, Spread]:
    """The spreads of one block (a language and protocol), by category or lower-case group name."""
    return {key[len(name) + 1:]: spread for key, spread in spreads.items()
            if key.startswith(name + ".") and "." not in key[len(name) + 1:]}


def _bar(spread: Spread | None) -> str | None:
    return None if spread is None else f"[{spread.interval[0]:.3f}, {spread.interval[1]:.3f}]"


def _table(language: str, summary: Summary, rows: list[dict[str, Any]], variant: str = "",
           spreads: dict[str, Spread] | None = None) -> Table:
    spreads = spreads or {}
    errors: dict[str, int] = {}
    for row in rows:
        if row["outcome"] == "error":
            errors[row["category"]] = errors.get(row["category"], 0) + 1
    body: list[list[object]] = []
    for name in ALL_CATEGORIES:
        score = summary.categories.get(name)
        if score is None:
            continue
        scored = f"{score.scored}/{score.n}"
        if score.steps is not None:
            scored += f" ({score.correct_steps}/{score.steps} steps)"
        accuracy = score.accuracy if score.scored else None  # nothing scored: no figure, not a zero
        spread = spreads.get(name)
        body.append([name, scored, errors.get(name, 0), accuracy, _bar(spread),
                     None if spread is None else spread.detectable, score.process_acc if score.scored else None])
    note = " (partial)" if summary.partial else ""
    for name, group in summary.groups.items():
        spread = spreads.get(name.lower())
        body.append([f"{name}{note}", "", "", group.value, _bar(spread), None if spread is None else spread.detectable,
                     None])
    if summary.overall is not None:
        spread = spreads.get("overall")
        body.append([f"OVERALL{note}", "", "", summary.overall, _bar(spread),
                     None if spread is None else spread.detectable, None])
    title = f"ACEBench {language}" + (f", {FC_TITLE}" if variant == "fc" else "")
    title += f": partial run ({'; '.join(summary.reasons)})" if summary.partial else ""
    return Table(title, ["category", "scored/total", "errors", "accuracy", "95% interval", "detectable",
                         "process_acc"], body)


def _figures(language: str, summary: Summary) -> dict[str, float]:
    figures = {f"{language}.{name}": score.accuracy for name, score in summary.categories.items() if score.scored}
    figures.update({f"{language}.{name.lower()}": group.value for name, group in summary.groups.items()})
    if summary.overall is not None:
        figures[f"{language}.overall"] = summary.overall
    return figures


def _json(summary: Summary, rows: list[dict[str, Any]],
          spreads: dict[str, Spread] | None = None) -> dict[str, object]:
    spreads = spreads or {}
    sizes = {row["category"]: row["category_size"] for row in rows}
    categories = {}
    for name, score in summary.categories.items():
        entry = asdict(score)
        if not score.scored:  # nothing scored: no figure, not a zero (as in the table)
            entry["accuracy"] = entry["process_acc"] = None
        entry["benchmark_total"] = sizes.get(name)
        entry.update(_spread_fields(spreads.get(name)))
        entry["errors"] = sum(1 for row in rows if row["category"] == name and row["outcome"] == "error")
        categories[name] = entry
    return {
        "categories": categories,
        "groups": {name: {**asdict(group), **_spread_fields(spreads.get(name.lower()))}
                   for name, group in summary.groups.items()},
        "overall": summary.overall,
        **{f"overall_{key}": value for key, value in _spread_fields(spreads.get("overall")).items()},
        "partial": summary.partial,
        "partial_reasons": list(summary.reasons),
    }


def _spread_fields(spread: Spread | None) -> dict[str, object]:
    """A figure's 95% interval (Wilson for a category, a bootstrap over units for a group or OVERALL) and the
    smallest difference its units could detect (docs/release-gate.md); nothing when it has none. Unrounded: the
    reports round them once, as the terminal's table does (a report rounded to 4 places, then printed to 3, would
    read 0.605 where the table reads 0.604)."""
    if spread is None:
        return {}
    return {"interval": list(spread.interval), "detectable": spread.detectable}
