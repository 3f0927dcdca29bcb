"""The GitHub Actions workflows of docs/ci.md: it parses, its steps are complete, and every option it passes is real."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import yaml

from pytest_tooleval.suites import all_options

README = Path(__file__).resolve().parents[2] / "docs" / "ci.md"


def yaml_block(heading: str) -> dict[str, object]:
    """The first yaml block of the section `heading` of docs/ci.md, parsed."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index(heading) :]
    block = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert block is not None, f"the section {heading!r} has no yaml block"
    parsed: dict[str, object] = yaml.safe_load(block.group(1))
    return parsed


def workflow() -> dict[str, object]:
    return yaml_block("### A worked GitHub Actions workflow")


def test_the_workflow_parses_and_keeps_its_reports() -> None:
    parsed = workflow()
    steps = parsed["jobs"]["tooleval"]["steps"]  # type: ignore[index]
    uses = [step.get("uses", "") for step in steps]
    assert any(use.startswith("actions/cache@") for use in uses)
    upload = next(step for step in steps if step.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["if"] == "always()"  # the reports are kept when the gate fails, which is when they matter
    assert {"report.json", "summary.md", "report.html"} <= set(upload["with"]["path"].split())


def test_every_option_in_the_workflow_is_a_real_one() -> None:
    declared = {f"--tooleval-{option.name}" for option in all_options()}
    scripts = "\n".join(
        step["run"]
        for step in workflow()["jobs"]["tooleval"]["steps"]  # type: ignore[index]
        if "run" in step
    )
    used = set(re.findall(r"--tooleval-[a-z0-9-]+", scripts))
    assert used and used <= declared, sorted(used - declared)
    assert {
        "--tooleval-baseline",
        "--tooleval-max-regression",
        "--tooleval-markdown",
        "--tooleval-html",
        "--tooleval-report",
    } <= used


def matrix_workflow() -> dict[str, object]:
    return yaml_block("### Across runners: a CI matrix of shards and one merge")


def test_the_matrix_workflow_runs_every_shard_then_merges_and_gates() -> None:
    from pytest_tooleval.__main__ import build_parser

    jobs = matrix_workflow()["jobs"]
    shard, gate = jobs["shard"], jobs["gate"]  # type: ignore[index]
    shards = shard["strategy"]["matrix"]["shard"]
    assert shard["strategy"]["fail-fast"] is False
    evaluate = "\n".join(step["run"] for step in shard["steps"] if "run" in step)
    assert f"--tooleval-shard=${{{{ matrix.shard }}}}/{len(shards)}" in evaluate and shards == list(
        range(1, len(shards) + 1)
    )
    assert "--tooleval-report=shard-${{ matrix.shard }}.json" in evaluate
    declared = {f"--tooleval-{option.name}" for option in all_options()}
    assert set(re.findall(r"--tooleval-[a-z0-9-]+", evaluate)) <= declared
    caches = [step for step in shard["steps"] if step.get("uses", "").startswith("actions/cache@")]
    assert caches and "matrix.shard" in caches[0]["with"]["key"]  # a response cache per shard
    kept = next(step for step in shard["steps"] if step.get("uses", "").startswith("actions/upload-artifact@"))
    assert kept["if"] == "always()"
    assert gate["needs"] == "shard" and gate["if"] == "always()"
    merging = next(step["run"] for step in gate["steps"] if "pytest_tooleval merge" in step.get("run", ""))
    command = merging[merging.index("python -m pytest_tooleval merge") :]
    parser = build_parser()
    subcommands = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    merge_parser = subcommands.choices["merge"]
    flags = {flag for action in merge_parser._actions for flag in action.option_strings}
    used = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+|-o)(?=[ =])", merging))  # the baseline's array's too
    assert {"--baseline", "--max-regression", "--fail-under", "-o", "--markdown", "--html"} <= used <= flags, used
    assert "-o" in command and "--fail-under" in command
