"""Constants and helpers shared by the reliability tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmark_modules import benchmark_source
from pytest_tooleval.suites.acebench import data
from pytest_tooleval.suites.acebench.prompts import single_turn_messages
from pytest_tooleval.suites.acebench.scoring import render_ground_truth

THIN_TEST = benchmark_source("acebench")

KEY = "sk-reliability-7Hq2ZpX9vLw3Rk8TnB5yC1dF"


def read_report(path: Path) -> dict[str, Any]:
    report = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(report, dict)
    return report


def verdicts(report: dict[str, Any]) -> dict[tuple[str, str], tuple[Any, ...]]:
    """Per sample: what decides its score (outcome, both verdicts, error type)."""
    return {
        (s["language"], s["id"]): (
            s["outcome"],
            s["valid"],
            (s.get("details") or {}).get("fixed_valid"),
            s["error_type"],
        )
        for s in report["samples"]
    }


def error_section(terminal: str, sample_id: str) -> list[str]:
    """The non-blank lines pytest prints under `ERROR at setup of test_acebench[en-<sample_id>]`."""
    section = terminal.split(f"ERROR at setup of test_acebench[en-{sample_id}]", 1)[1]
    lines = section.splitlines()[1:]
    end = next(i for i, line in enumerate(lines) if line.startswith(("___", "===")))
    return [line for line in lines[:end] if line.strip()]


def prompt_key(messages: list[dict[str, Any]]) -> str:
    """What tells one single-turn request from another: its system and user texts."""
    return "\x00".join(str(message["content"]) for message in messages)


def answers_by_prompt(acebench_dir: Path, categories: tuple[str, ...]) -> dict[str, str]:
    """Answers by `prompt_key`: two samples in three get their ground truth, the third a wrong call."""
    prompts = data.load_prompts(acebench_dir)
    answers = {}
    for case in data.select(acebench_dir, ("en",), categories):
        right = render_ground_truth(case.ground_truth, case.category)
        wrong = "[get_weather(city='Paris')]"
        answers[prompt_key(single_turn_messages(case, prompts))] = right if case.index % 3 else wrong
    return answers
