"""The driving loop against bfcl-eval's own (docs/bfcl-multi-turn.md#the-driving-loop): the same scripted
assistant messages must give the same request bodies and the same result entry (digests recorded by
record_loop.py), and a model that never stops calling is cut off as bfcl cuts it."""

from __future__ import annotations

import asyncio
import copy
import functools
import json
from pathlib import Path

import pytest

from pytest_tooleval.json_value import JSONObject
from pytest_tooleval.suites.bfcl.multi_turn.data import load_samples
from pytest_tooleval.suites.bfcl.multi_turn.loop import STEP_LIMIT, LoopRecord, drive, generation_name
from pytest_tooleval.suites.bfcl.multi_turn.sample import MultiTurnSample
from pytest_tooleval.suites.bfcl.multi_turn.tables import Tables
from pytest_tooleval.suites.bfcl.templates import Templates
from pytest_tooleval.suites.bfcl.upstream import load_templates

from . import loop_scripts
from .differential import TODAY

DIGESTS = json.loads(Path(__file__).with_name("loop_digests.json").read_text(encoding="utf-8"))
RECORDED = DIGESTS["scripts"]


@pytest.fixture(scope="module")
def templates(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Templates:
    return load_templates(tmp_path_factory.mktemp("cache"), True, wheel=wheel)


@functools.cache
def scripts(root: Path) -> dict[str, loop_scripts.Script]:
    return {script.key: script for script in loop_scripts.scripts(root)}


@functools.cache
def sample(root: Path, sample_id: str) -> MultiTurnSample:
    category = sample_id.rsplit("_", 1)[0]
    return next(sample for sample in load_samples(root, category) if sample.id == sample_id)


def play(
    sample: MultiTurnSample, replies: list[JSONObject], protocol: str, templates: Templates, tables: Tables
) -> LoopRecord:
    """Drive the sample with the replies in order; every reply must be asked for."""
    left = copy.deepcopy(replies)

    async def ask(body: JSONObject) -> JSONObject:
        assert left, "the loop asked once more than the script answers"
        return left.pop(0)

    assert protocol in ("fc", "prompt")
    record = asyncio.run(
        drive(
            sample,
            ask,
            protocol="fc" if protocol == "fc" else "prompt",
            templates=templates,
            tables=tables,
            model=loop_scripts.MODEL,
            today=TODAY,
            keep_requests=True,
        )
    )
    assert left == [], f"{len(left)} replies were not asked for"
    return record


@pytest.mark.parametrize("key", sorted(RECORDED))
def test_requests_and_result_entry_are_bfcls(key: str, bfcl_dir: Path, templates: Templates, tables: Tables) -> None:
    script = scripts(bfcl_dir)[key]
    recorded = RECORDED[key]
    assert script.digest() == recorded["script"], "the script changed since it was recorded: run record_loop.py"
    record = play(sample(bfcl_dir, script.sample_id), script.replies, script.protocol, templates, tables)
    requests = [loop_scripts.sha256(body) for body in record.requests]
    first = next(
        (n for n, pair in enumerate(zip(requests, recorded["requests"], strict=False)) if pair[0] != pair[1]), None
    )
    assert (len(requests), first) == (len(recorded["requests"]), None), "request bodies differ from bfcl's"
    assert loop_scripts.sha256(record.entry()) == recorded["entry"]
    assert record.queries == len(script.replies)


def test_every_script_is_recorded(bfcl_dir: Path) -> None:
    assert sorted(scripts(bfcl_dir)) == sorted(RECORDED)


CALL: dict[str, JSONObject] = {
    "fc": {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "pwd", "arguments": "{}"}}],
    },
    "prompt": {"role": "assistant", "content": "[pwd()]"},
}


@pytest.mark.parametrize("protocol", ["fc", "prompt"])
def test_a_model_that_always_calls_is_cut_off_and_the_rest_skipped(
    protocol: str, bfcl_dir: Path, templates: Templates, tables: Tables
) -> None:
    played = sample(bfcl_dir, "multi_turn_base_1")
    assert len(played.turns) > 1
    record = play(played, [CALL[protocol]] * (STEP_LIMIT + 1), protocol, templates, tables)
    assert (record.queries, record.force_quit) == (21, True)
    assert [len(steps) for steps in record.result] == [21]
    assert len(record.requests) == 21
    # each step's call was executed and fed back: the history grows by the call and its result(s) each time
    first = 2 if protocol == "prompt" else 1  # the system prompt, then the user's message
    sizes = [len(body["messages"]) if isinstance(body["messages"], list) else None for body in record.requests]
    assert sizes == [first + 2 * step for step in range(21)]


@pytest.mark.parametrize("protocol", ["fc", "prompt"])
def test_a_turn_ends_at_the_first_answer_without_calls(
    protocol: str, bfcl_dir: Path, templates: Templates, tables: Tables
) -> None:
    played = sample(bfcl_dir, "multi_turn_base_1")
    text: JSONObject = {"role": "assistant", "content": "Nothing to do."}
    replies = [CALL[protocol], CALL[protocol], text] + [text] * (len(played.turns) - 1)
    record = play(played, replies, protocol, templates, tables)
    assert [len(steps) for steps in record.result] == [3] + [1] * (len(played.turns) - 1)
    assert (record.queries, record.force_quit) == (len(replies), False)
    assert record.result[0][2] == "Nothing to do."
    assert record.entry() == {"id": "multi_turn_base_1", "result": record.result}


def test_requests_are_kept_only_when_asked_for(bfcl_dir: Path, templates: Templates, tables: Tables) -> None:
    played = sample(bfcl_dir, "multi_turn_base_1")

    async def ask(body: JSONObject) -> JSONObject:
        assert "model" not in body and "temperature" not in body  # the transport adds those
        return {"role": "assistant", "content": "No."}

    record = asyncio.run(drive(played, ask, protocol="fc", templates=templates, tables=tables, model="m"))
    assert record.requests == []
    assert record.result == [["No."]] * len(played.turns)


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("gpt-4o-2024-11-20", "gpt_4o_2024_11_20_multi_turn_base_0"),
        ("org/model.v1", "org_model_v1_multi_turn_base_0"),
    ],
)
def test_the_generation_side_is_named_as_bfcl_names_it(model: str, expected: str) -> None:
    assert generation_name(model, "multi_turn_base_0") == expected
