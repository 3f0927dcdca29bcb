"""Reports are strict JSON (issue 31): a non-finite number is written as null, and the report names where."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

Report = dict[str, Any]


def _environ() -> dict[str, str]:
    return {name: value for name, value in os.environ.items()
            if name not in ("TOOLEVAL_DATA_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "GITHUB_STEP_SUMMARY")}


YAML_CASES = """\
category: levels
tools:
  - name: set_level
    description: Set a level.
    parameters: {type: object, properties: {level: {type: number}}, required: [level]}
cases:
  - name: huge
    user: Set the level to ten.
    expect: {calls: [{name: set_level, arguments: {level: 10}}]}
"""


def strict(path: Path) -> Report:
    def refuse(constant: str) -> None:
        raise AssertionError(f"{path.name} holds {constant}: not strict JSON")

    document: Report = json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)
    return document


def test_a_yaml_case_answered_1e999999_gets_a_strict_json_report(tmp_path: Path) -> None:
    """Before: the run's report wrote the argument as Infinity (not JSON)."""
    (tmp_path / "levels.tooleval.yaml").write_text(YAML_CASES, encoding="utf-8")
    (tmp_path / "answers.jsonl").write_text(json.dumps({"id": "levels-huge", "output": "[set_level(level=1e999999)]"})
                                            + "\n", encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tooleval-mode=prompt",
                          "--tooleval-model=replay:answers.jsonl", f"--tooleval-cache-dir={tmp_path / 'cache'}",
                          "--tooleval-report=run.json"], cwd=tmp_path, env=_environ(), capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 1, run.stdout[-2000:]  # the case failed: 10 was expected
    report = strict(tmp_path / "run.json")
    [row] = report["samples"]
    assert row["calls"] == [{"set_level": {"level": None}}]
    assert report["non_finite"] == ["samples[0].calls[0].set_level.level"]
