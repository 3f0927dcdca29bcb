"""The suite contract's report members (suites/base.py `Figures.report_sections`, `figure_blocks`): the built-in suites
give their own sections through them, a suite that says nothing gets the generic views, and a report of a suite
not installed here is rendered with those generic views too (report/sections.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_tooleval.report.document import read_document
from pytest_tooleval.report.html import render_html
from pytest_tooleval.report.markdown import render_markdown
from pytest_tooleval.report.sections import Data, generic_figure_blocks, generic_sections
from pytest_tooleval.suites import figure_blocks_of, registered, sections_of, title_of
from toy_suite.toyecho import SUITE as TOY

EXPECTED = Path(__file__).parent / "markdown_expected"


def load(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((EXPECTED / f"{name}.json").read_text(encoding="utf-8"))
    return document


def test_a_suite_that_says_nothing_gets_the_generic_views() -> None:
    block = {"en": {"categories": {"short": {"accuracy": 0.5, "scored": 2, "n": 2}}, "overall": 0.5}}
    assert TOY.figures.report_sections(block) == generic_sections("toyecho", block)
    assert TOY.figures.figure_blocks(block) == generic_figure_blocks("toyecho", block)
    [drawn] = TOY.figures.figure_blocks(block)
    assert (drawn.title, drawn.language, [row.figure for row in drawn.rows]) == (
        "toyecho en",
        "en",
        ["en.short", "en.overall"],
    )


def test_the_built_in_suites_say_their_own() -> None:
    summary = load("three_suites")["summary"]
    for name in ("acebench", "toolalpaca", "gpt4tools"):
        sections = registered()[name].figures.report_sections(summary[name])
        assert sections != generic_sections(title_of(name), summary[name])
        assert isinstance(sections[0].title[0], Data) and str(sections[0].title[0].value).startswith(title_of(name))
    assert [title_of(name) for name in ("acebench", "toolalpaca", "gpt4tools")] == [
        "ACEBench",
        "ToolAlpaca",
        "GPT4Tools",
    ]


def test_a_report_of_a_suite_not_installed_here_is_shown_generically() -> None:
    document = load("comparison_gate")
    block = document["summary"].pop("acebench")
    document["summary"]["elsewhere"] = block
    assert sections_of("elsewhere", block) == generic_sections("elsewhere", block)
    assert figure_blocks_of("elsewhere", block) == generic_figure_blocks("elsewhere", block)
    typed = read_document(document)
    markdown = render_markdown(typed)
    assert "### elsewhere\n\n| figure | value |" in markdown and "95% interval" not in markdown.split("### Baseline")[0]
    page = render_html(typed)
    assert 'id="block-elsewhere-en"' in page and "<h3>elsewhere en</h3>" in page
