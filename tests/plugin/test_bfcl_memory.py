"""BFCL's memory categories through the plugin (docs/bfcl.md#the-memory-run): a live run sends the requests bfcl's
own handler sends, prerequisite conversations first and their memory carried into the questions (the scripted
model of tests/scripted_memory.py against the digests record_memory_requests.py took of bfcl-eval's
`OpenAICompletionsHandler`); the oracle passes every question; a prerequisite conversation that cannot be played
errors its scenario's questions, and only those."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from fake_openai import FakeOpenAI, Fault
from pytest_tooleval.suites.bfcl.memory.backends import unavailable
from scripted_memory import MODEL, Model, entries, scripts
from scripted_multi_turn import differing_requests, result_entries, transport_added

RECORDED = json.loads(
    (Path(__file__).parents[1] / "unit" / "bfcl" / "memory_request_digests.json").read_text(encoding="utf-8")
)["entries"]


def live_args(fake: FakeOpenAI) -> list[str]:
    return [
        "--tooleval-model",
        MODEL,
        "--tooleval-base-url",
        fake.base_url,
        "--tooleval-api-key",
        "sk-test-0123456789abcdef",
        "--tooleval-sampling",
        "upstream",
        "--tooleval-max-tokens",
        "none",
        "--tooleval-report",
        "report.json",
    ]


def test_a_live_memory_run_sends_bfcls_requests_and_carries_memory(
    pytester: pytest.Pytester, bfcl_args: list[str], fake_openai: FakeOpenAI, bfcl_dir: Path
) -> None:
    played = scripts(bfcl_dir)
    assert {s.key: s.digest() for s in played} == {key: row["script"] for key, row in RECORDED.items()}, (
        "the scripts changed since they were recorded: run record_memory_requests.py"
    )
    model = Model(played, bfcl_dir)
    fake_openai.responder = model
    fake_openai.usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}  # one per request
    questions = [entry.entry_id for entry in entries(bfcl_dir) if not entry.prerequisite]
    # a process of its own: memory_vector's torch and numpy load once per process, and an in-process run's
    # module snapshot would drop them for the tests after it
    result = pytester.runpytest_subprocess(
        *[f"test_bfcl.py::test_bfcl[{entry_id}{suffix}]" for entry_id in questions for suffix in ("", "-fc")],
        "--tooleval-bfcl-categories",
        "memory",
        "--tooleval-mode",
        "both",
        *live_args(fake_openai),
        *bfcl_args,
        "-n",
        "2",
        "-q",
        "-rs",
    )
    sent: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for body in fake_openai.stats.json_bodies:
        script = model.script_of(body)
        assert script is not None, "a request of no scripted entry"
        sent[script.key].append(body)  # an entry's requests are sequential
    # memory_vector runs where its model is installed (.ci/run installs it), else its questions skip in one line
    vector = unavailable("vector") is None
    expected = {key: row for key, row in RECORDED.items() if vector or not key.startswith("memory_vector")}
    differ = differing_requests(sent, expected)
    assert not differ, f"{differ} (record_memory_requests.py --dump DIR writes bfcl's bodies to compare)"
    for key, added in transport_added(sent).items():
        assert added == {(MODEL, 0.001, False, False, "auto" if key.endswith("/fc") else None)}, key

    rows = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))["samples"]
    got = result_entries(rows)
    assert {key: entry for key, entry in got.items() if key in expected} == {
        key: (row["entry"], row["valid"], row["error_type"]) for key, row in expected.items() if "prereq" not in key
    }
    if vector:
        result.assert_outcomes(passed=12, failed=12)
    else:
        result.assert_outcomes(passed=8, failed=8, skipped=8)
        result.stdout.fnmatch_lines(["*memory_vector: the vector memory needs*pytest-tooleval[[]vector[]]*"])
    # the question that started its scenario's conversations carries their cost: every request counted once
    assert sum(row["tokens"]["prompt"] for row in rows) == sum(len(bodies) for bodies in sent.values())


def test_the_oracle_passes_every_memory_question(pytester: pytest.Pytester, bfcl_args: list[str]) -> None:
    result = pytester.runpytest(
        "--tooleval-model",
        "oracle",
        "--tooleval-bfcl-categories",
        "memory",
        "--tooleval-mode",
        "both",
        *bfcl_args,
        "-q",
    )
    result.assert_outcomes(passed=3 * 2 * 155)
    result.stdout.fnmatch_lines(["*BFCL v4 memory (prompt)*", "*memory_kv*155/155*1.000*"])


def test_a_prerequisite_that_cannot_be_played_errors_its_scenarios_questions_only(
    pytester: pytest.Pytester, bfcl_args: list[str], fake_openai: FakeOpenAI, bfcl_dir: Path
) -> None:
    played = scripts(bfcl_dir)
    model = Model(played, bfcl_dir)

    def responder(body: dict[str, Any]) -> Any:
        script = model.script_of(body)
        if script is not None and script.entry_id == "memory_kv_prereq_12-healthcare-2":
            return Fault.http(400, message="This request is refused.")
        return model(body)

    fake_openai.responder = responder
    other = "memory_kv_0-customer-0"  # another scenario: its conversations are not scripted, and play out
    result = pytester.runpytest(
        "test_bfcl.py::test_bfcl[memory_kv_30-healthcare-0]",
        "test_bfcl.py::test_bfcl[memory_kv_31-healthcare-1]",
        f"test_bfcl.py::test_bfcl[{other}]",
        "--tooleval-bfcl-categories",
        "memory_kv",
        *live_args(fake_openai),
        *bfcl_args,
        "-q",
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("error", 0) + outcomes.get("errors", 0) == 2 and outcomes.get("failed") == 1, outcomes
    result.stdout.fnmatch_lines(
        ["*memory_kv_prereq_12-healthcare-2 could not be played*questions of healthcare in memory_kv are not asked*"]
    )
