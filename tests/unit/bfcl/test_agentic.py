"""The agentic checker (web search, memory) against bfcl-eval's own verdicts on 1,500 synthetic results
(docs/bfcl.md#the-agentic-checker; agentic_cases.py builds them, record_agentic.py recorded upstream)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pytest_tooleval.suites.bfcl.agentic import (
    ANSWER_NOT_FOUND,
    NO_LAST_MESSAGE,
    check_agentic,
    standardized,
)
from pytest_tooleval.suites.bfcl.multi_turn.decode import decode_fc, decode_prompt

from . import agentic_cases
from .record_agentic import case_digest

RECORDED = json.loads(Path(__file__).with_name("agentic_verdicts.json").read_text(encoding="utf-8"))["verdicts"]
DECODERS = {"prompt": decode_prompt, "fc": decode_fc}


@pytest.fixture(scope="module")
def cases(bfcl_dir: Path) -> list[tuple[str, str, Any, list[str]]]:
    return agentic_cases.cases(bfcl_dir)


def test_every_verdict_is_upstreams(cases: list[tuple[str, str, Any, list[str]]]) -> None:
    assert [key for key, *_ in cases] == list(RECORDED), "agentic_cases.py changed: record again (record_agentic.py)"
    wrong = []
    seen: Counter[str] = Counter()
    for key, mode, result, accepted in cases:
        recorded = RECORDED[key]
        assert recorded["digest"] == case_digest(mode, result, accepted), key
        verdict = check_agentic(result, accepted, DECODERS[mode])
        # where upstream's evaluation stops (a turn it cannot iterate: A2), ours gives a verdict
        crashed = "crash" in recorded
        expected = (False, NO_LAST_MESSAGE) if crashed else (recorded["valid"], recorded["error_type"])
        seen[expected[1] or "valid"] += 1
        if (verdict.valid, verdict.error_type) != expected:
            wrong.append((key, mode, result, accepted, expected, verdict))
    assert not wrong, f"{len(wrong)} of {len(cases)} differ, first: {wrong[:3]}"
    # every outcome is exercised, on both sides of the answer search
    assert min(seen.values()) >= 100 and len(seen) == 4, seen


def test_standardisation_keeps_whitespace_and_makes_quotes_double() -> None:
    assert standardized("April 1, 2024 (U.S.)") == "april 1 2024 us"
    assert standardized("O'Brien_x*y^z/a-b") == 'o"brienxyzab'


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        ([["It is Paris."]], (True, "")),
        ([["Parisian."]], (False, ANSWER_NOT_FOUND)),  # a word of its own
        ([["Paris", "[f(x=1)]"]], (True, "")),  # the last message that is no call, not the last step
        ([["Paris", ""]], (False, NO_LAST_MESSAGE)),  # A3: the last message is "", and a falsy one counts as none
    ],
)
def test_the_last_message_that_is_no_call(result: Any, expected: tuple[bool, str]) -> None:
    verdict = check_agentic(result, ["Paris"], decode_prompt)
    assert (verdict.valid, verdict.error_type) == expected
