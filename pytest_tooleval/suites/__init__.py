"""Benchmark suites. Each is one folder whose `plugin_suite` module provides:

- `create(session) -> suite`: the suite, with `cases() -> list[case]`, `async answer(case, access) -> Answer`
  (everything that talks to a model) and `score(case, answer) -> SampleResult` (pure);
- `summarize(rows) -> SuiteSummary`: the suite's own figures from the report rows of a run.

A case has `suite`, `id`, `test_id`, `category`, `language`, `family`, `index`, `marks` and `expected_text`.
Adding a benchmark means adding a folder here, a line to SUITES, its marker names to MARKERS (kept here so
that registering markers imports no suite), plus a thin test module.
"""

from __future__ import annotations

import importlib
from types import ModuleType

SUITES: dict[str, str] = {
    "acebench": "pytest_tooleval.suites.acebench.plugin_suite",
    "toolalpaca": "pytest_tooleval.suites.toolalpaca.plugin_suite",
    "gpt4tools": "pytest_tooleval.suites.gpt4tools.plugin_suite",
}


def suite_module(name: str) -> ModuleType:
    return importlib.import_module(SUITES[name])


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
