"""Benchmark suites. Each is one folder whose `plugin_suite` module provides:

- `create(session) -> suite`: the suite, with `cases() -> list[case]`, `async answer(case, access) -> Answer`
  (everything that talks to a model) and `score(case, answer) -> SampleResult` (pure);
- `summarize(rows) -> SuiteSummary`: the suite's own figures from the report rows of a run;
- optionally `unavailable(settings) -> str | None`: why the suite cannot run as configured (its tests then
  skip with that reason, and its data is not even looked for), `MARK_PROFILES` (the mark sets its cases
  carry, so `-m` can rule the suite out before any data is loaded) and `fingerprint(settings)`.

A case has `suite`, `id`, `test_id`, `category`, `language`, `family`, `index`, `marks` and `expected_text`.
Adding a benchmark means adding a folder here, a line to SUITES, its marker names to MARKERS (kept here so
that registering markers imports no suite), plus a thin test module.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

SUITES: dict[str, str] = {
    "acebench": "pytest_tooleval.suites.acebench.plugin_suite",
    "toolalpaca": "pytest_tooleval.suites.toolalpaca.plugin_suite",
    "gpt4tools": "pytest_tooleval.suites.gpt4tools.plugin_suite",
}


def suite_module(name: str) -> ModuleType:
    return importlib.import_module(SUITES[name])


def unavailable(name: str, settings: Any) -> str | None:
    check = getattr(suite_module(name), "unavailable", None)
    return check(settings) if check is not None else None


def selected_by_marks(name: str, markexpr: str) -> bool:
    """Could `-m markexpr` select any case of the suite? (True when unsure.)"""
    profiles = getattr(suite_module(name), "MARK_PROFILES", None)
    if not markexpr or not profiles:
        return True
    try:
        from _pytest.mark.expression import Expression  # pytest's own parser of -m expressions

        expression = Expression.compile(markexpr)
        return any(expression.evaluate(lambda mark, /, **_: mark in profile) for profile in profiles)
    except Exception:  # a private API that may change: then load the suite rather than guess
        return True


def suite_markers() -> dict[str, str]:
    """Every suite's marker names (read without importing the suites: kept here so the plugin stays cheap)."""
    return dict(MARKERS)


MARKERS: dict[str, str] = {
    "acebench": "an ACEBench sample",
    "normal": "an ACEBench normal-family sample",
    "special": "an ACEBench special-family sample",
    "agent": "an ACEBench agent-family sample",
    "en": "an English sample",
    "zh": "a Chinese sample",
    "toolalpaca": "a ToolAlpaca instruction (an agent episode judged by a model)",
    "simulated": "a ToolAlpaca instruction on a simulated API",
    "real": "a ToolAlpaca instruction on a real API (needs --tooleval-toolalpaca-real)",
    "gpt4tools": "a GPT4Tools test-set item",
    "gpt4tools_tool": "a GPT4Tools item whose gold answer uses a tool",
    "gpt4tools_no_tool": "a GPT4Tools item whose gold answer uses no tool",
}
