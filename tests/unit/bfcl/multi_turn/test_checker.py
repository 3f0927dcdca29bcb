"""The multi-turn checker (docs/bfcl-multi-turn.md#the-checker): the ground truth replayed as the model passes
all 800 samples, and hand-made traces give each error type."""

from __future__ import annotations

import decimal
import json
import math
import time
from dataclasses import replace

from pytest_tooleval.json_value import JSONValue
from pytest_tooleval.suites.bfcl.multi_turn import checker
from pytest_tooleval.suites.bfcl.multi_turn.apis.file_system import Directory, File
from pytest_tooleval.suites.bfcl.multi_turn.checker import MultiTurnVerdict, jsonable, judge
from pytest_tooleval.suites.bfcl.multi_turn.oracle import keyword_calls
from pytest_tooleval.suites.bfcl.multi_turn.sample import MultiTurnSample
from pytest_tooleval.suites.bfcl.multi_turn.tables import Tables

from .differential import TODAY


def stored_calls(raw: JSONValue) -> list[str]:
    """A decoder for test traces: a step is stored as its list of call strings (FC-like, already decoded)."""
    if raw == "undecodable" or not isinstance(raw, list):
        raise ValueError("not a list of calls")
    return [str(call) for call in raw]


def replay(sample: MultiTurnSample, tables: Tables) -> list[list[list[str]]]:
    """The ground truth as the model's answers: one step per turn, positional arguments bound by keyword,
    written as the FC decoder writes calls."""
    return [
        [
            [
                f"{name}(" + ",".join(f"{key}={value!r}" for key, value in arguments.items()) + ")"
                for name, arguments in keyword_calls(sample, turn)
            ]
        ]
        if turn
        else []
        for turn in sample.ground_truth
    ]


def check(sample: MultiTurnSample, result: object, tables: Tables, **options: float) -> MultiTurnVerdict:
    stored = json.loads(json.dumps(result))  # the result as a result file gives it back
    verdict = judge(sample, stored, stored_calls, tables, today=TODAY, **options)
    json.dumps(verdict.details, allow_nan=False)  # what a report writes must be JSON
    return verdict


def test_the_ground_truth_replayed_as_the_model_passes_every_sample(
    samples: dict[str, MultiTurnSample], tables: Tables
) -> None:
    failures = {}
    for sample in samples.values():
        verdict = check(sample, replay(sample, tables), tables)
        if not verdict.valid:
            failures[sample.id] = (verdict.error_type, verdict.message)
    assert len(samples) == 800
    assert failures == {}


def test_a_result_that_is_not_a_list_is_an_inference_error(samples: dict[str, MultiTurnSample], tables: Tables) -> None:
    verdict = check(samples["multi_turn_base_0"], "Error: the server went away", tables)
    assert (verdict.valid, verdict.error_type, verdict.turn) == (False, "multi_turn:inference_error", None)


def test_fewer_turns_is_a_forced_termination(samples: dict[str, MultiTurnSample], tables: Tables) -> None:
    sample = samples["multi_turn_base_0"]
    verdict = check(sample, replay(sample, tables)[:2], tables)
    assert verdict.error_type == "multi_turn:force_terminated"
    assert verdict.message.endswith("model result turns (2) does not match the length of the ground truth turns (4).")


def test_a_turn_without_a_decoded_step_is_an_empty_turn(samples: dict[str, MultiTurnSample], tables: Tables) -> None:
    sample = samples["multi_turn_base_0"]
    result: list[object] = list(replay(sample, tables))
    result[1] = ["undecodable", [], "plain text answer"]  # a failure, an empty step and a non-list: all dropped
    verdict = check(sample, result, tables)
    assert (verdict.error_type, verdict.turn) == ("multi_turn:empty_turn_model_response", 1)
    assert verdict.message == "Model response list is empty for turn 1"


def test_an_extra_change_is_a_state_mismatch(samples: dict[str, MultiTurnSample], tables: Tables) -> None:
    sample = samples["multi_turn_base_0"]
    result = replay(sample, tables)
    result[2] = [*result[2], ["mkdir(dir_name='extra')"]]  # a second step in turn 2
    verdict = check(sample, result, tables)
    assert (verdict.error_type, verdict.turn) == ("multi_turn:instance_state_mismatch", 2)
    assert verdict.message == (
        "Model instance for GorillaFileSystem does not match the state with ground truth instance."
    )
    details = verdict.details
    assert details["class"] == "GorillaFileSystem"
    differences = details["differences"]
    assert isinstance(differences, dict) and list(differences) == ["root"]
    root = differences["root"]
    assert isinstance(root, dict)
    assert "extra" in json.dumps(root["model"])
    assert "extra" not in json.dumps(root["ground_truth"])


def test_a_missing_read_is_a_response_mismatch(samples: dict[str, MultiTurnSample], tables: Tables) -> None:
    sample = samples["multi_turn_base_0"]
    result = replay(sample, tables)
    result[1] = [["cd(folder='temp')"]]  # grep left out: the state is the same, its result is missing
    verdict = check(sample, result, tables)
    assert (verdict.error_type, verdict.turn) == ("multi_turn:execution_response_mismatch", 1)
    missing = verdict.details["missing_items"]
    assert isinstance(missing, list) and len(missing) == 1 and "budget analysis" in str(missing[0])


def test_a_result_from_an_earlier_turn_counts_later(samples: dict[str, MultiTurnSample], tables: Tables) -> None:
    sample = samples["multi_turn_base_0"]
    result = replay(sample, tables)
    # turn 1's grep already answered in turn 0 (after a cd into temp and back): the pool spans all turns so far
    grep = "grep(file_name='final_report.pdf',pattern='budget analysis')"
    result[0] = [*result[0], ["cd(folder='temp')", grep, "cd(folder='..')"]]
    result[1] = [["cd(folder='temp')"]]
    assert check(sample, result, tables).valid


def test_calls_in_an_unchecked_turn_still_change_state(samples: dict[str, MultiTurnSample], tables: Tables) -> None:
    sample = next(
        s
        for s in samples.values()
        if s.category == "multi_turn_miss_func" and "GorillaFileSystem" in s.involved_classes
    )
    empty = next(index for index, turn in enumerate(sample.ground_truth) if not turn)
    result = replay(sample, tables)
    result[empty] = [["pwd()", "no_such_method(x=1)"]]  # reads and errors only: not checked, no state change
    assert check(sample, result, tables).valid
    result[empty] = [["mkdir(dir_name='left_behind')"]]  # a change there shows at the next checked turn
    verdict = check(sample, result, tables)
    assert (verdict.error_type, verdict.turn) == ("multi_turn:instance_state_mismatch", empty + 1)


def test_the_model_side_runs_before_the_ground_truth_and_both_start_fresh(
    samples: dict[str, MultiTurnSample], tables: Tables
) -> None:
    sample = samples["multi_turn_base_0"]
    result = replay(sample, tables)
    assert check(sample, result, tables).valid
    assert check(sample, result, tables).valid  # a second judgment sees fresh instances


def test_judging_stops_at_the_budget(samples: dict[str, MultiTurnSample], tables: Tables) -> None:
    sample = samples["multi_turn_base_0"]
    verdict = check(sample, replay(sample, tables), tables, budget=0.0)
    assert (verdict.valid, verdict.error_type, verdict.turn) == (False, "multi_turn:execution_budget_exceeded", 0)


def test_a_hostile_trace_ends_in_bounded_time(samples: dict[str, MultiTurnSample], tables: Tables) -> None:
    sample = samples["multi_turn_base_15"]  # GorillaFileSystem and MathAPI
    costly = [
        "logarithm(value=10, base=3, precision=" + str(10**9) + ")",
        "power(base=7, exponent=" + str(10**12) + ")",
        "mkdir(dir_name='d')",
        "mkdir(dir_name='.')",
        "mv(source='.', destination='d')",  # the current directory moved into its own child: a cyclic tree
    ]
    result = [[costly] for _ in sample.ground_truth]
    start = time.monotonic()
    verdict = check(sample, result, tables)
    assert time.monotonic() - start < 30  # a hang guard, not a speed target
    assert verdict.error_type == "multi_turn:instance_state_mismatch"
    assert "<cycle>" in json.dumps(verdict.details)


def test_jsonable_renders_state_values_as_json() -> None:
    root = Directory("root")
    root.contents["f"] = File("f", "text")
    child = Directory("child", root)
    child.contents["loop"] = root
    root.contents["child"] = child
    value = {
        "set": {3, 1, 2},
        "tuple": (1, "a"),
        "nan": math.nan,
        "inf": -math.inf,
        1: "int key",
        "tree": root,
        "huge": 1 << 20_000,
        "other": decimal.Decimal("1.5"),
    }
    rendered = jsonable(value)
    json.dumps(rendered, allow_nan=False)
    assert isinstance(rendered, dict)
    assert rendered["set"] == [1, 2, 3]
    assert rendered["tuple"] == [1, "a"]
    assert (rendered["nan"], rendered["inf"]) == ("nan", "-inf")
    assert rendered["1"] == "int key"
    assert rendered["huge"] == "<int of 20001 bits>"
    assert rendered["other"] == "Decimal('1.5')"
    assert rendered["tree"] == {
        "name": "root",
        "contents": {
            "f": {"name": "f", "content": "text"},
            "child": {"name": "child", "contents": {"loop": "<cycle>"}},
        },
    }


def test_jsonable_bounds_depth() -> None:
    deep: list[object] = []
    for _ in range(checker.MAX_DEPTH * 3):
        deep = [deep]
    assert "<too deep>" in json.dumps(jsonable(deep))


def test_a_class_order_decides_which_mismatch_is_reported(samples: dict[str, MultiTurnSample], tables: Tables) -> None:
    sample = samples["multi_turn_base_0"]  # TwitterAPI, GorillaFileSystem
    result = replay(sample, tables)
    result[0] = [
        *result[0],
        ["mkdir(dir_name='x')", "authenticate_twitter(username='analyst_pro', password='Kj8#mP9$vL2')"],
    ]
    assert check(sample, result, tables).details["class"] == "TwitterAPI"
    swapped = replace(sample, involved_classes=["GorillaFileSystem", "TwitterAPI"])
    assert check(swapped, result, tables).details["class"] == "GorillaFileSystem"
