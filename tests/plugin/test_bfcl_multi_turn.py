"""BFCL v4 multi-turn end to end (docs/bfcl-multi-turn.md): the oracle's ceiling, and a live model played turn by
turn through the real openai client against the local fake, with bfcl's step limit."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from fake_openai import FakeOpenAI, ToolCalls

KEY = "sk-test-0123456789abcdef"


def live_args(fake: FakeOpenAI) -> list[str]:
    """A live run of multi_turn_base against the local fake."""
    return [
        "--tooleval-bfcl-categories",
        "multi_turn_base",
        "--tooleval-model",
        "fake-model",
        "--tooleval-base-url",
        fake.base_url,
        "--tooleval-api-key",
        KEY,
        "-q",
    ]


def test_the_oracle_passes_a_multi_turn_category_in_both_protocols(
    pytester: pytest.Pytester, bfcl_args: list[str]
) -> None:
    result = pytester.runpytest(
        "--tooleval-model",
        "oracle",
        "--tooleval-bfcl-categories",
        "multi_turn_long_context",
        "--tooleval-mode",
        "both",
        "-n",
        "2",
        "-q",
        *bfcl_args,
    )
    result.assert_outcomes(passed=400)
    result.stdout.fnmatch_lines(["*multi_turn_long_context*200/200*1.000*", "*Multi-turn overall*1.000*"])


def test_a_model_that_always_calls_stops_at_21_queries_and_is_force_terminated(
    pytester: pytest.Pytester, bfcl_args: list[str], fake_openai: FakeOpenAI
) -> None:
    """Every answer is a call that executes: the first turn holds 21 queries, then the sample is force-quit, its
    remaining turns never asked, and bfcl's checker calls it force-terminated."""
    fake_openai.responder = lambda body: ToolCalls.of(("pwd", {}))
    result = pytester.runpytest(
        "test_bfcl.py::test_bfcl[multi_turn_base_0-fc]", "--tooleval-mode", "fc", *live_args(fake_openai), *bfcl_args
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*multi_turn:force_terminated*"])
    bodies: list[dict[str, Any]] = [body for body in fake_openai.stats.bodies if body is not None]
    assert len(bodies) == 21
    first, last = bodies[0], bodies[-1]
    assert [message["role"] for message in first["messages"]] == ["user"]  # FC: no system message
    assert {tool["function"]["name"] for tool in first["tools"]} >= {"pwd", "cd", "post_tweet"}
    # each executed step goes back as the assistant message as sent and one tool message with its call's id
    assert [message["role"] for message in last["messages"]] == ["user"] + ["assistant", "tool"] * 20
    assert last["messages"][1]["content"] is None and last["messages"][2]["tool_call_id"] == "call_fake_0"
    assert json.loads(last["messages"][2]["content"]) == {"current_working_directory": "/workspace"}


def test_a_model_that_answers_in_words_asks_once_per_turn(
    pytester: pytest.Pytester, bfcl_args: list[str], fake_openai: FakeOpenAI
) -> None:
    """A text answer ends each turn at once (prompt protocol): one query per turn, and the sample fails on its
    first turn with ground truth, as bfcl judges an empty turn."""
    fake_openai.default = "I would rather not."
    result = pytester.runpytest(
        "test_bfcl.py::test_bfcl[multi_turn_base_0]", "--tooleval-mode", "prompt", *live_args(fake_openai), *bfcl_args
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*multi_turn:empty_turn_model_response*"])
    bodies = [body for body in fake_openai.stats.bodies if body is not None]
    turns = len(
        json.loads(
            (Path(os.environ["TOOLEVAL_DATA_DIR"]) / "bfcl" / "BFCL_v4_multi_turn_base.json")
            .read_text(encoding="utf-8")
            .splitlines()[0]
        )["question"]
    )
    assert len(bodies) == turns
    assert bodies[0]["messages"][0]["role"] == "system" and "tools" not in bodies[0]
    assert [message["role"] for message in bodies[-1]["messages"]] == ["system"] + ["user", "assistant"] * (
        turns - 1
    ) + ["user"]


def test_bfcls_group_names_choose_the_multi_turn_and_all_categories(
    pytester: pytest.Pytester, bfcl_args: list[str]
) -> None:
    def collected(categories: str) -> list[str]:
        result = pytester.runpytest(
            "--collect-only", "-q", "--tooleval-model", "oracle", "--tooleval-bfcl-categories", categories, *bfcl_args
        )
        return [line for line in result.outlines if line.startswith("test_bfcl.py::")]

    multi_turn = collected("multi_turn")
    assert len(multi_turn) == 800 and "test_bfcl.py::test_bfcl[multi_turn_long_context_199]" in multi_turn
    # and the three memory categories, web search and format sensitivity
    assert len(collected("all")) == 3641 + 800 + 3 * 155 + 2 * 100 + 5200
    refused = pytester.runpytest("--tooleval-model", "oracle", "--tooleval-bfcl-categories", "multiturn", *bfcl_args)
    refused.stderr.fnmatch_lines(["*unknown multiturn (did you mean 'multi_turn'?)*"])
