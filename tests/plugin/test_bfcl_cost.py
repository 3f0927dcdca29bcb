"""bfcl's cost and latency columns of a live run (docs/bfcl.md#cost-and-latency): each request this run made of the
model under test counted once, as bfcl's generation records one value per request, the prerequisite conversations
of a memory question left out as bfcl's leaderboard leaves them out, priced as bfcl prices the model
`--tooleval-model` names, or N/A in one line when bfcl does not know it. A replayed folder's columns are
test_bfcl_multi_turn_leaderboard.py's."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from fake_openai import FakeOpenAI
from pytest_tooleval.suites.bfcl.cost import COLUMNS
from scripted_memory import MODEL as SCRIPTED_MODEL
from scripted_memory import Model, entries, scripts

KNOWN = "gpt-4o-2024-11-20"  # $2.5 and $10 per million input and output tokens in bfcl's table


def live_args(fake: FakeOpenAI, model: str) -> list[str]:
    return [
        "--tooleval-model",
        model,
        "--tooleval-base-url",
        fake.base_url,
        "--tooleval-api-key",
        "sk-test-0123456789abcdef",
        "--tooleval-report",
        "report.json",
        "--tooleval-mode",
        "prompt",
        "-q",
    ]


def report(pytester: pytest.Pytester) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
    return found


def test_a_live_run_counts_every_request_at_bfcls_prices(
    pytester: pytest.Pytester, bfcl_args: list[str], fake_openai: FakeOpenAI
) -> None:
    """Two single-turn samples (one request each) and a multi-turn one (a request per turn: the model makes no
    call), every request 100,000 input and 10,000 output tokens: bfcl's cost of n requests is n x $0.35."""
    fake_openai.responder = lambda body: "Nothing to call."
    fake_openai.usage = {"prompt_tokens": 100_000, "completion_tokens": 10_000, "total_tokens": 110_000}
    result = pytester.runpytest(
        "test_bfcl.py::test_bfcl[simple_python_0]",
        "test_bfcl.py::test_bfcl[simple_python_1]",
        "test_bfcl.py::test_bfcl[multi_turn_base_0]",
        "--tooleval-bfcl-categories",
        "simple_python,multi_turn_base",
        *live_args(fake_openai, KNOWN),
        *bfcl_args,
        "-n",
        "2",  # answered ahead by the hub, the counts travel with the answers to the workers
    )
    result.assert_outcomes(failed=3)
    # the counts are the report's: a failure's text says what the model answered, not what it cost
    result.stdout.fnmatch_lines(["*bfcl simple_python_0: *"])
    assert not any(line.lstrip().startswith(("usage:", "_usage:")) for line in result.stdout.lines)
    requests = len(fake_openai.stats.json_bodies)
    samples = report(pytester)["samples"]
    per_sample = {row["id"]: row["details"]["_usage"] for row in samples}
    assert {name: len(usage["latency"]) for name, usage in per_sample.items()} == {
        "simple_python_0": 1,
        "simple_python_1": 1,
        "multi_turn_base_0": requests - 2,
    }
    assert requests > 3 and all(
        usage["input_token_count"] == [100_000] * len(usage["latency"]) for usage in per_sample.values()
    )
    usage = report(pytester)["summary"]["bfcl"]["prompt"]["cost_latency"]
    assert (usage["basis"], usage["model"], usage["rows"], usage["note"]) == ("measured", KNOWN, 3, None)
    assert usage["counted"] == {"latency": requests, "input_token_count": requests, "output_token_count": requests}
    assert usage["cost"] == round(requests * 100_000 * 2.5 / 1_000_000 + requests * 10_000 * 10 / 1_000_000, 2)
    latencies = [value for found in per_sample.values() for value in found["latency"]]
    assert all(value > 0 for value in latencies) and usage["latency_mean"] == round(statistics.mean(latencies), 2)
    result.stdout.fnmatch_lines(
        [
            f"*BFCL v4 cost and latency (prompt), measured by this run*model {KNOWN}*",
            f"*Total Cost ($)*${usage['cells']['Total Cost ($)']} *{requests} input and {requests} output token*",
        ]
    )


def test_a_model_bfcl_does_not_know_leaves_the_columns_na_in_one_line(
    pytester: pytest.Pytester, bfcl_args: list[str], fake_openai: FakeOpenAI
) -> None:
    fake_openai.responder = lambda body: "Nothing to call."
    result = pytester.runpytest(
        "test_bfcl.py::test_bfcl[simple_python_0]",
        "test_bfcl.py::test_bfcl[simple_python_1]",
        *live_args(fake_openai, "fake-model"),
        *bfcl_args,
    )
    result.assert_outcomes(failed=2)
    usage = report(pytester)["summary"]["bfcl"]["prompt"]["cost_latency"]
    assert usage["cells"] == dict.fromkeys(COLUMNS, "N/A") and usage["counted"]["latency"] == 2
    assert usage["note"] == (
        "every column is N/A: bfcl-eval 2026.3.23 does not know the model 'fake-model' (its leaderboard stops with "
        "KeyError there)"
    )
    result.stdout.fnmatch_lines(["*BFCL v4 cost and latency (prompt)*: every column is N/A: bfcl-eval*'fake-model'*"])


def test_a_memory_question_counts_its_own_requests_not_its_prerequisites(
    pytester: pytest.Pytester, bfcl_args: list[str], fake_openai: FakeOpenAI, bfcl_dir: Path
) -> None:
    """Two questions of one scenario, one after the other: the first plays the scenario's prerequisite
    conversations (their tokens are in its row's tokens, as the run's cost), but bfcl's columns count only each
    question's own requests."""
    model = Model(scripts(bfcl_dir), bfcl_dir)
    fake_openai.responder = model
    fake_openai.usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    questions = [entry.entry_id for entry in entries(bfcl_dir) if not entry.prerequisite and entry.backend == "kv"][:2]
    result = pytester.runpytest_subprocess(
        *[f"test_bfcl.py::test_bfcl[{question}]" for question in questions],
        "--tooleval-bfcl-categories",
        "memory_kv",
        *live_args(fake_openai, SCRIPTED_MODEL),
        *bfcl_args,
    )
    assert result.ret in (0, 1), result.stdout.str()
    sent: dict[str, int] = defaultdict(int)
    for body in fake_openai.stats.json_bodies:
        script = model.script_of(body)
        assert script is not None
        sent[script.entry_id] += 1
    prerequisites = sum(count for entry_id, count in sent.items() if "prereq" in entry_id)
    rows = {row["id"]: row for row in report(pytester)["samples"]}
    assert set(rows) == set(questions) and prerequisites > 0
    assert {question: len(rows[question]["details"]["_usage"]["latency"]) for question in questions} == {
        question: sent[question] for question in questions
    }
    # the run's own tokens of the questions hold every request, the prerequisites' included
    assert sum(row["tokens"]["prompt"] for row in rows.values()) == sum(sent.values())
    usage = report(pytester)["summary"]["bfcl"]["prompt"]["cost_latency"]
    assert usage["counted"]["input_token_count"] == sum(sent.values()) - prerequisites
