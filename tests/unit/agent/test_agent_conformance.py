"""Agreement with the official executors and evaluator on recorded data (DATA.md, acebench-agent §9), at each pinned
ACEBench revision: e6db74b (the data root's acebench/) and 56dd66c (acebench-56dd66c/, whose agent_multi_step_14-17
answers end in a full stop; acebench-revisions §3). Each revision's files were recorded with its own official code.

- agent_gold_sequences.json: every one of the 100 agent samples, its repaired gold call sequence, the
  observation of each step and the end state the official code reached.
- conformance/official_agent_traces.jsonl: 400 perturbed message sequences replayed through the official
  executors, with observations, end state, verdict and process accuracy.

Each test covers one (revision, language, category) group and reports every mismatch in it at once.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from _agent_data import GROUPS, gold, observation_text, prompts, samples, traces

from pytest_tooleval.suites.acebench.agent import (
    execute_messages,
    grade,
    replay,
    routes_to_execution,
    run_oracle,
    score_rollout,
)
from pytest_tooleval.suites.acebench.revisions import REVISIONS
from upstream_data import recorded

pytestmark = pytest.mark.needs_data

#: The session fixture (tests/conftest.py) that finds each revision's folder.
DATA_FIXTURES = {"e6db74b": "acebench_dir", "56dd66c": "acebench_56dd66c_dir"}


@pytest.fixture(params=[known.name for known in REVISIONS])
def root(request: pytest.FixtureRequest) -> str:
    """The data folder of one revision, checked to be that revision's by its manifest."""
    known = next(known for known in REVISIONS if known.name == request.param)
    folder: Path = request.getfixturevalue(DATA_FIXTURES[known.name])
    for name in ("agent_gold_sequences.json", "conformance/official_agent_traces.jsonl"):  # what the tests read
        recorded(folder, name)
    assert json.loads((folder / "MANIFEST.json").read_text(encoding="utf-8"))["commit"] == known.commit
    return str(folder)


def _compare(label: str, result: Any, expected: dict[str, Any]) -> list[str]:
    problems = []
    observations = [observation_text(o) for o in result.observations]
    if observations != expected["observations"]:
        for step, (ours, theirs) in enumerate(zip(observations, expected["observations"], strict=False)):
            if ours != theirs:
                problems.append(f"{label} step {step}: observation\n    ours:     {ours}\n    official: {theirs}")
        if len(observations) != len(expected["observations"]):
            problems.append(f"{label}: {len(observations)} observations, official {len(expected['observations'])}")
    if result.end_state != expected["end_state"]:
        problems.append(f"{label}: end state differs")
    return problems


def _report(group: tuple[str, str], checked: int, problems: list[str]) -> str:
    return f"{group[0]}/{group[1]}: {len(problems)} mismatches over {checked} rows\n" + "\n".join(problems)


@pytest.mark.parametrize("group", GROUPS, ids=["/".join(g) for g in GROUPS])
def test_gold_sequences_reach_the_recorded_state_and_pass(root: str, group: tuple[str, str]) -> None:
    lang, category = group
    problems: list[str] = []
    group_samples = samples(root, lang, category)
    for sample_id, (record, answer) in group_samples.items():
        entry = gold(root)[lang][sample_id]
        result = execute_messages(record, lang, entry["calls"])
        problems += _compare(f"{sample_id} (direct)", result, entry)
        verdict = grade(answer, result.end_state, result.process)
        if not verdict.valid or verdict.process != 1.0:
            problems.append(f"{sample_id} (direct): graded {verdict.valid}, process {verdict.process}")
        # The oracle drives the real rollout loop (silent user in multi_turn) to the same state.
        rollout = asyncio.run(run_oracle(record, lang, gold(root), prompts(root)))
        problems += _compare(f"{sample_id} (oracle rollout)", rollout, entry)
        verdict = score_rollout(answer, rollout)
        if not (verdict.valid and rollout.finished and rollout.process == entry["calls"]):
            problems.append(f"{sample_id} (oracle rollout): valid={verdict.valid} finished={rollout.finished}")
    assert len(group_samples) == (20 if category == "agent_multi_step" else 30)
    assert not problems, _report(group, len(group_samples), problems)


def _rows(root: str, group: tuple[str, str]) -> list[dict[str, Any]]:
    return [row for row in traces(root) if (row["lang"], row["category"]) == group]


def test_trace_file_has_400_rows(root: str) -> None:
    sizes = {group: len(_rows(root, group)) for group in GROUPS}
    assert sizes == {
        ("en", "agent_multi_step"): 80,
        ("en", "agent_multi_turn"): 120,
        ("zh", "agent_multi_step"): 80,
        ("zh", "agent_multi_turn"): 120,
    }


@pytest.mark.parametrize("group", GROUPS, ids=["/".join(g) for g in GROUPS])
def test_official_traces_replay_identically(root: str, group: tuple[str, str]) -> None:
    """Each message goes straight to the executor, as the traces were recorded (multi_turn rows include
    messages a live rollout would route to the user; upstream's executor raises on them)."""
    lang, category = group
    rows = _rows(root, group)
    problems: list[str] = []
    for row in rows:
        record, answer = samples(root, lang, category)[row["id"]]
        label = f"{row['id']} v{row['variant']} ({row['kind']})"
        result = execute_messages(record, lang, row["messages"])
        problems += _compare(label, result, row)
        verdict = grade(answer, result.end_state, result.process)
        if verdict.valid != row["valid"]:
            problems.append(f"{label}: verdict {verdict.valid}, official {row['valid']}")
        assert verdict.process is not None, f"{label}: no process accuracy"
        if round(verdict.process, 3) != row["process_accuracy"]:
            problems.append(f"{label}: process {round(verdict.process, 3)}, official {row['process_accuracy']}")
    assert not problems, _report(group, len(rows), problems)


@pytest.mark.parametrize("group", GROUPS, ids=["/".join(g) for g in GROUPS])
def test_rollout_replay_matches_direct_execution(root: str, group: tuple[str, str]) -> None:
    """Feeding the same messages through the real rollout loop gives what the executor alone gives for the
    messages that reach it: all of them in multi_step, the ones routing sends to execution in multi_turn."""
    lang, category = group
    rows = _rows(root, group)
    problems: list[str] = []
    for row in rows:
        record, answer = samples(root, lang, category)[row["id"]]
        label = f"{row['id']} v{row['variant']} ({row['kind']})"
        # A patient user: it answers every message routed to it, so only the agent's finish ends the dialogue.
        user_turns = [record["question"]] + ["Please go on."] * len(row["messages"])
        rollout = asyncio.run(replay(record, lang, row["messages"], user_turns, prompts=prompts(root)))
        if category == "agent_multi_step":
            reaching = list(row["messages"])
        else:
            reaching = [m for m in row["messages"] if routes_to_execution(m)]
        direct = execute_messages(record, lang, reaching)
        if rollout.process != reaching:
            problems.append(f"{label}: process {rollout.process!r}, expected {reaching!r}")
        expected = {"observations": [observation_text(o) for o in direct.observations], "end_state": direct.end_state}
        problems += _compare(label, rollout, expected)
        if not rollout.finished:
            problems.append(f"{label}: the scripted finish did not end the rollout")
        if category == "agent_multi_step" or reaching == row["messages"]:
            verdict = score_rollout(answer, rollout)
            assert verdict.process is not None, f"{label}: no process accuracy"
            if verdict.valid != row["valid"] or round(verdict.process, 3) != row["process_accuracy"]:
                problems.append(
                    f"{label}: rollout verdict {verdict.valid}/{verdict.process}, official "
                    f"{row['valid']}/{row['process_accuracy']}"
                )
    assert not problems, _report(group, len(rows), problems)


def test_the_revisions_differ_in_four_answers(acebench_dir: Path, acebench_56dd66c_dir: Path) -> None:
    """56dd66c's en agent_multi_step_14-17 answers want the message ending in a full stop (acebench-revisions §3):
    each revision's gold passes its own answers only, and every other gold sequence is the same in both."""
    for folder in (acebench_dir, acebench_56dd66c_dir):
        recorded(folder, "agent_gold_sequences.json")
    old, new = str(acebench_dir), str(acebench_56dd66c_dir)
    changed = sorted(
        (lang, sample_id)
        for lang in gold(old)
        for sample_id in gold(old)[lang]
        if gold(old)[lang][sample_id] != gold(new)[lang][sample_id]
    )
    assert changed == [("en", f"agent_multi_step_{n}") for n in (14, 15, 16, 17)]
    verdicts = {}
    for _, sample_id in changed:
        for calls_from in (old, new):
            for answers_from in (old, new):
                record, answer = samples(answers_from, "en", "agent_multi_step")[sample_id]
                result = execute_messages(record, "en", gold(calls_from)["en"][sample_id]["calls"])
                verdicts[(sample_id, calls_from, answers_from)] = grade(answer, result.end_state, result.process).valid
    assert verdicts == {
        (sample_id, calls_from, answers_from): calls_from == answers_from
        for sample_id, calls_from, answers_from in verdicts
    }
