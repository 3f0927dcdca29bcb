"""The Markdown run summary (report/markdown.py): rendered from real report documents, escaped, written.

The fixtures under markdown_expected/ are reports the plugin wrote (their `samples` trimmed to the errored
ones, a few flipped ones and a few others):

- comparison_gate: ACEBench en (3 categories, a multi-turn one), replayed outputs with 6 broken and 2 missing,
  against a replayed baseline with 2 others broken; --tooleval-max-regression overall=0.01
  --tooleval-fail-under overall=0.5 (gate passed; flips both ways, units not paired, 95% intervals).
- regression_failed: 14 outputs broken, 1 missing, --tooleval-scorer fixed against an oracle baseline made
  before the summary had intervals; a regression, a missed threshold, the error rate missed, a threshold
  outside the run and a margin naming no figure (gate failed; a fingerprint difference).
- oracle_no_baseline: the oracle, no baseline, no gate, no intervals (an older summary).
- fc_both: the oracle with --tooleval-mode both (blocks "en" and "en.fc").
- three_suites: ACEBench, GPT4Tools and ToolAlpaca in one run (the tests' mini data sets, replayed; a scripted
  judge), with an errored sample in two of them.
- yaml_cases, yaml_both: your own cases (the example file against the fake server), two failed and one errored,
  and both protocols; html_fixtures/make_yaml_reports.py writes them.

Each renders exactly as its .md beside it. After a deliberate change of the rendering, rewrite them with
TOOLEVAL_WRITE_EXPECTED=1 and review the diff.
"""

from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from json_narrow import as_object
from pytest_tooleval.report.html import render_html
from pytest_tooleval.report.json_report import assemble
from pytest_tooleval.report.markdown import escape, render_markdown, write_markdown
from pytest_tooleval.report.summary import RunSummary
from pytest_tooleval.report.table import render_summary
from pytest_tooleval.suites.acebench.plugin_suite import SUITE as ACEBENCH

EXPECTED = Path(__file__).parent / "markdown_expected"
FIXTURES = [
    "comparison_gate",
    "regression_failed",
    "oracle_no_baseline",
    "fc_both",
    "three_suites",
    "yaml_cases",
    "yaml_both",
]


def load(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((EXPECTED / f"{name}.json").read_text(encoding="utf-8"))
    return document


def cells(line: str) -> list[str]:
    """The cells of a pipe-table row, split at the pipes that are not backslash-escaped."""
    assert line.startswith("| ") and line.endswith(" |"), line
    return re.split(r"(?<!\\)((?:\\\\)*)\|", line[1:-1])[::2]


def tables(markdown: str) -> list[list[str]]:
    """Each table of the text, as its lines."""
    found: list[list[str]] = []
    previous = ""
    for line in markdown.splitlines():
        if line.startswith("|"):
            if not previous.startswith("|"):
                found.append([])
            found[-1].append(line)
        previous = line
    return found


def assert_tables_intact(markdown: str) -> None:
    for table in tables(markdown):
        width = len(cells(table[0]))
        assert all(len(cells(line)) == width for line in table), "\n".join(table)
        assert set(cells(table[1])) <= {" --- ", " ---: "}


@pytest.mark.parametrize("name", FIXTURES)
def test_a_real_report_renders_as_its_expectation(name: str) -> None:
    markdown = render_markdown(load(name))
    expected = EXPECTED / f"{name}.md"
    if os.environ.get("TOOLEVAL_WRITE_EXPECTED") == "1":
        expected.write_text(markdown, encoding="utf-8")
    assert markdown == expected.read_text(encoding="utf-8")
    assert_tables_intact(markdown)
    assert markdown.count("<details>") == markdown.count("</details>")


@pytest.mark.parametrize("name", FIXTURES)
def test_no_model_output_is_shown(name: str) -> None:
    document = load(name)
    markdown = render_markdown(document)
    outputs = [str(row.get("output")) for row in document["samples"] if len(str(row.get("output") or "")) > 12]
    assert outputs
    assert not [output for output in outputs if output in markdown or escape(output) in markdown]


def test_the_comparison_lists_every_flip_and_unpaired_unit() -> None:
    document = load("regression_failed")
    markdown = render_markdown(document)
    flips = document["comparison"]["flips"]
    assert len(flips["pass_to_fail"]) == 14 and len(flips["fail_to_pass"]) == 12
    assert "<details><summary>26 flipped samples</summary>" in markdown
    for flip in flips["pass_to_fail"] + flips["fail_to_pass"]:
        assert f"- acebench:{flip['unit']}" in markdown
    assert "- acebench:en.special_irrelevant/special_irrelevant_2" in markdown
    assert '- scorer: "official" -> "fixed"' in markdown


def test_a_flip_with_its_test_ids_is_listed_by_them() -> None:
    """A report that keeps each flip's test ids lists them, as -k selects them (issue 41); older reports, their
    units' keys (above)."""
    document = copy.deepcopy(load("comparison_gate"))
    for flips in document["comparison"]["flips"].values():
        for flip in flips:
            flip["test_ids"] = [f"en-{sample}" for sample in flip["samples"]]
    markdown = render_markdown(document)
    assert "- acebench: en-normal_atom_bool_3 (en.normal_atom_bool/normal_atom_bool_3)" in markdown
    assert (
        "- acebench: en-normal_multi_turn_user_adjust_5_0, en-normal_multi_turn_user_adjust_5_1 "
        "(en.normal_multi_turn_user_adjust/5)"
    ) in markdown


def test_intervals_are_optional_column_by_column() -> None:
    with_intervals = render_markdown(load("comparison_gate"))
    assert "| category | scored/total | errors | accuracy | 95% interval | process acc |" in with_intervals
    assert "| **OVERALL (partial)** |  |  | **0.876** | [0.821, 0.924] | - |" in with_intervals
    without = render_markdown(load("oracle_no_baseline"))
    assert "| category | scored/total | errors | accuracy | process acc |" in without
    assert "interval" not in without
    document = load("comparison_gate")
    block = document["summary"]["acebench"]["en"]
    del block["overall_interval"]
    for entry in (*block["categories"].values(), *block["groups"].values()):
        entry.pop("interval")
    del block["categories"]["normal_atom_bool"]["scored"]  # and a count missing: "-"
    markdown = render_markdown(document)
    assert "| category | scored/total | errors | accuracy | process acc |" in markdown
    assert "| normal_atom_bool | -/50 | 1 | 0.898 | - |" in markdown


def test_an_interval_reads_in_the_reports_as_in_the_terminal() -> None:
    # 37 of 50: Wilson's interval is [0.60447, 0.84128]; rounded to 4 places in the report, it would print as
    # [0.605, 0.841] there, against the terminal's [0.604, 0.841]
    rows = [
        {
            "suite": "acebench",
            "id": f"normal_atom_bool_{index}",
            "category": "normal_atom_bool",
            "language": "en",
            "index": index,
            "category_size": 50,
            "outcome": "passed" if index < 37 else "failed",
            "process": None,
        }
        for index in range(50)
    ]
    summary = RunSummary({"acebench": ACEBENCH.figures.summarize(rows)})
    document = assemble({"model": "m"}, summary, rows, None, {})
    terminal = render_summary(summary)
    assert re.search(r"normal_atom_bool +50/50 +0 +0\.740 +\[0\.604, 0\.841\]", terminal), terminal
    assert "| normal_atom_bool | 50/50 | 0 | 0.740 | [0.604, 0.841] |" in render_markdown(document)
    assert "<td>0.740</td><td>[0.604, 0.841]</td>" in render_html(document)
    assert as_object(document)["summary"]["acebench"]["en"]["categories"]["normal_atom_bool"]["interval"][
        0
    ] == pytest.approx(0.6044684, abs=1e-7)


# --- escaping ---------------------------------------------------------------------------------------------------

HOSTILE = "x | y `z` </details> <script>alert(1)</script> \\| [a](b) *b* ~c~ &amp;\n# heading"


def test_data_text_cannot_break_a_table_or_a_block() -> None:
    document = load("comparison_gate")
    errored = [row for row in document["samples"] if row["outcome"] == "error"]
    errored[0]["id"] = "id|with`backticks`|and|pipes"
    errored[0]["error"] = HOSTILE
    errored[1]["error_type"] = "| |"
    document["comparison"]["flips"]["pass_to_fail"][0]["unit"] = "en.cat/" + HOSTILE
    document["comparison"]["unscored"][0] = HOSTILE
    document["comparison"]["figures"][0]["figure"] = "acebench.en.a|b`c`"
    document["summary"]["acebench"]["en"]["categories"]["normal_atom_bool"]["category"] = "cat|egory`"
    document["summary"]["acebench"]["en"]["partial_reasons"].append(HOSTILE)
    document["gate"]["checks"][0]["figure"] = "# | `x`"
    markdown = render_markdown(document)

    assert_tables_intact(markdown)
    assert markdown.count("<details>") == markdown.count("</details>") == 3
    assert "<script>" not in markdown and "</details> " not in markdown
    assert not re.search(r"(?<!\\)`", markdown)  # every backtick is escaped
    assert "| id\\|with\\`backticks\\`\\|and\\|pipes |" in markdown
    assert "| acebench.en.a\\|b\\`c\\` |" in markdown
    assert "- \\# \\| \\`x\\` = 0.876 >= 0.500 ok" in markdown
    assert not [line for line in markdown.splitlines() if line.startswith("#") and not line.startswith(("## ", "### "))]


def test_escape() -> None:
    assert escape("normal_atom_bool_3") == "normal_atom_bool_3"  # underscores inside words stay as they are
    assert escape("a|b`c`\\") == "a\\|b\\`c\\`\\\\"
    assert escape("<b>&") == "&lt;b>&amp;"
    assert escape("line\nbreak\r\n  spaces") == "line break spaces"
    assert escape("# title") == "\\# title" and escape("- item") == "\\- item" and escape("1. item") == "1\\. item"
    assert escape("-0.5 and 0.1.0") == "-0.5 and 0.1.0"
    assert escape("x" * 300) == "x" * 200 + "..."


# --- robustness -------------------------------------------------------------------------------------------------


def test_a_report_without_the_optional_blocks_renders() -> None:
    document = load("comparison_gate")
    for key in ("gate", "comparison", "totals", "storage_faults"):
        del document[key]
    markdown = render_markdown(document)
    assert markdown.startswith("## pytest-tooleval: replay:cur.jsonl\n")
    assert "Gate" not in markdown and "Baseline" not in markdown and "Totals" not in markdown
    assert "### ACEBench en" in markdown
    assert render_markdown({}) == "## pytest-tooleval: unknown model\n"


def test_odd_shapes_render_without_a_crash() -> None:
    document = load("three_suites")
    document["summary"]["newsuite"] = {"score": 0.5, "nested": {"n": 3, "flag": True, "text": "x", "list": [1]}}
    document["summary"]["gpt4tools"]["subsets"]["all"] = None
    document["summary"]["toolalpaca"]["subsets"]["simulated"]["procedure"] = "n/a"
    document["summary"]["acebench"]["en"]["groups"] = []
    document["summary"]["acebench"]["zh"] = 7
    document["gate"] = {
        "checks": [None, {"figure": "x", "actual": None, "threshold": None}],
        "regressions": [{}],
        "error_rate": float("nan"),
    }
    document["comparison"] = {
        "figures": [{"figure": "f", "p": "low"}],
        "flips": {"pass_to_fail": [{}]},
        "fingerprint_differences": [{"key": "k", "baseline": {"a": [1, 2]}, "current": None}],
    }
    document["totals"] = {"samples": "many"}
    document["storage_faults"] = [{"store": "CACHE", "folder": "/c", "error": "disk full", "lost": 3}]
    document["samples"].append("not a row")
    markdown = render_markdown(document)
    assert "| score | 0.500 |" in markdown and "| nested.n | 3 |" in markdown and "flag" not in markdown
    assert "### ACEBench zh\n\nno numeric figures" in markdown
    assert "| simulated | 3/3 | 1 | 1 | 0 | - | 0.0% | 0.0% |" in markdown
    assert "**Gate: FAILED**" in markdown and "- x **MISSED**: no such figure in this run (threshold -)" in markdown
    assert "- -: no paired samples to compare with the baseline: **REGRESSION**" in markdown
    assert '- k: {"a": \\[1, 2\\]} -> null' in markdown
    assert "- CACHE in /c: disk full; 3 lost, 0 writes skipped (locked)" in markdown
    assert_tables_intact(markdown)


def test_many_errors_are_cut_and_counted() -> None:
    document = load("oracle_no_baseline")
    row = {**document["samples"][0], "outcome": "error", "error": "boom"}
    document["samples"] = [{**row, "id": f"s{index}"} for index in range(250)]
    markdown = render_markdown(document)
    assert "<details><summary>250 errored samples</summary>" in markdown
    assert "| s199 |" in markdown and "| s200 |" not in markdown
    assert "and 50 more (the JSON report lists them all)" in markdown


# --- writing ----------------------------------------------------------------------------------------------------


def test_write_markdown_writes_the_path_and_appends_to_the_step_summary(tmp_path: Path) -> None:
    document = load("comparison_gate")
    summary = tmp_path / "step_summary.md"
    summary.write_text("## an earlier step\n", encoding="utf-8")
    target = tmp_path / "out" / "deeper" / "summary.md"
    written = write_markdown(document, str(target), {"GITHUB_STEP_SUMMARY": str(summary)})
    assert written == [str(target), str(summary)]
    markdown = render_markdown(document)
    assert target.read_text(encoding="utf-8") == markdown
    assert summary.read_text(encoding="utf-8") == "## an earlier step\n\n" + markdown
    assert sorted(path.name for path in target.parent.iterdir()) == ["summary.md"]  # no temporary left

    assert write_markdown(document, None, {"GITHUB_STEP_SUMMARY": str(summary)}) == [str(summary)]
    assert summary.read_text(encoding="utf-8").count("## pytest-tooleval:") == 2
    target.write_text("old", encoding="utf-8")
    assert write_markdown(document, str(target), {}) == [str(target)]
    assert target.read_text(encoding="utf-8") == markdown  # replaced, not appended


def test_write_markdown_with_neither_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "from_the_process_environment.md"))
    assert write_markdown(load("oracle_no_baseline"), None, {}) == []
    assert write_markdown(load("oracle_no_baseline"), "", {"GITHUB_STEP_SUMMARY": ""}) == []
    assert list(tmp_path.iterdir()) == []


def test_write_markdown_lets_an_os_error_through(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    with pytest.raises(OSError):
        write_markdown(load("oracle_no_baseline"), str(blocker / "summary.md"), {})
    with pytest.raises(OSError):
        write_markdown(load("oracle_no_baseline"), None, {"GITHUB_STEP_SUMMARY": str(tmp_path / "missing" / "s.md")})


def test_a_document_copy_is_not_changed_by_rendering() -> None:
    document = load("regression_failed")
    before = copy.deepcopy(document)
    render_markdown(document)
    assert document == before
