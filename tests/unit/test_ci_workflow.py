"""The README's GitHub Actions workflow: it parses, its steps are complete, and every option it passes is real."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from pytest_tooleval.config import all_options

README = Path(__file__).resolve().parents[2] / "README.md"


def workflow() -> dict[str, object]:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### A worked GitHub Actions workflow"):]
    block = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert block is not None, "the workflow section has no yaml block"
    parsed: dict[str, object] = yaml.safe_load(block.group(1))
    return parsed


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
    scripts = "\n".join(step["run"] for step in workflow()["jobs"]["tooleval"]["steps"]  # type: ignore[index]
                        if "run" in step)
    used = set(re.findall(r"--tooleval-[a-z0-9-]+", scripts))
    assert used and used <= declared, sorted(used - declared)
    assert {"--tooleval-baseline", "--tooleval-max-regression", "--tooleval-markdown",
            "--tooleval-html", "--tooleval-report"} <= used
