"""Loading the GPT4Tools test set and upstream prediction files; errors name the file and the item."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_tooleval.suites.gpt4tools.data import (
    DataFileError,
    load_dataset,
    load_prediction_chunks,
    load_predictions,
)

TOOL_OUTPUT = (
    "Thought: Do I need to use a tool? Yes\nAction: Segment the Image\nAction Input: image/a.png\nObservation:\n"
)
ANSWER_OUTPUT = "Thought: Do I need to use a tool? No\nAI: Hello.\n"


def item(item_id: Any, output: Any = ANSWER_OUTPUT, **extra: Any) -> dict[str, Any]:
    return {"instruction": f"prompt {item_id}\n", "input": "", "output": output, "id": item_id, **extra}


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_load_dataset_keeps_file_order_and_counts_items(tmp_path: Path) -> None:
    path = write(tmp_path / "test.json", [item(3, TOOL_OUTPUT), item("b"), item(1, TOOL_OUTPUT, source="x")])
    dataset = load_dataset(path)
    assert [case.id for case in dataset] == [3, "b", 1]
    assert len(dataset) == 3
    assert [case.uses_tool for case in dataset] == [True, False, True]
    assert dataset.cases[1].output == ANSWER_OUTPUT


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ('[{"id": 1,', "not valid JSON: Expecting property name enclosed in double quotes at line 1, column 11"),
        ('{"id": 1}', "expected a JSON list of test-set records, found a JSON object"),
        (json.dumps([item(1), ["not", "a", "record"]]), "item [1]: expected a JSON object, found list"),
        (json.dumps([item(1), {"id": 2, "instruction": "p", "input": ""}]), "item [1] (id 2): output: missing"),
        (json.dumps([item(1.5)]), "item [0] (id 1.5): id: expected an integer or a string, found number"),
        (json.dumps([item(True)]), "item [0] (id True): id: expected an integer or a string, found boolean"),
        (json.dumps([item(1, 7)]), "item [0] (id 1): output: expected a string, found integer"),
        (json.dumps([item(1), item(2), item(1)]), "item [2] (id 1): duplicate id (first used by item [0])"),
    ],
)
def test_bad_test_set_files_are_reported_with_file_and_position(tmp_path: Path, content: str, problem: str) -> None:
    path = tmp_path / "test.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataFileError) as caught:
        load_dataset(path)
    assert str(caught.value) == f"{path}: {problem}"


def test_a_missing_test_set_file_is_reported(tmp_path: Path) -> None:
    with pytest.raises(DataFileError, match=r"absent\.json: cannot read the test-set file"):
        load_dataset(tmp_path / "absent.json")


def test_a_list_output_is_scored_by_its_first_element(tmp_path: Path) -> None:
    (prediction,) = load_predictions(write(tmp_path / "p.json", [{"id": 1, "output": ["first", "second"]}]))
    assert prediction.text == "first"


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        ({"id": 1, "output": []}, "output: expected a string or a non-empty list of strings, found list"),
        ({"id": 1, "output": None}, "output: expected a string or a non-empty list of strings, found null"),
        ({"output": "x"}, "id: missing"),
    ],
)
def test_bad_prediction_records_are_reported(tmp_path: Path, record: dict[str, Any], problem: str) -> None:
    path = write(tmp_path / "p.json", [{"id": 0, "output": "ok"}, record])
    with pytest.raises(DataFileError) as caught:
        load_predictions(path)
    assert str(caught.value).startswith(f"{path}: item [1]")
    assert str(caught.value).endswith(problem)


def test_duplicate_prediction_ids_keep_the_first_position_and_the_last_record(tmp_path: Path) -> None:
    records = [{"id": 1, "output": "old"}, {"id": 2, "output": "b"}, {"id": 1, "output": "new"}]
    path = write(tmp_path / "p.json", records)
    assert [(p.id, p.text) for p in load_predictions(path)] == [(1, "new"), (2, "b")]


def test_all_chunks_are_gathered_in_numeric_order(tmp_path: Path) -> None:
    # Upstream's glob would read only chunks 0 and 1 of these twelve; every chunk counts here.
    for k in range(12):
        write(tmp_path / f"run_{k}.json", [{"id": k, "output": f"chunk {k}"}, {"id": 100, "output": f"chunk {k}"}])
    write(tmp_path / "run.json", [{"id": 999, "output": "gathered file, not a chunk"}])
    write(tmp_path / "other_0.json", [{"id": 998, "output": "another run"}])

    discovered = load_prediction_chunks(tmp_path, "run")
    assert [p.id for p in discovered] == [0, 100, *range(1, 12)]
    assert {p.id: p.text for p in discovered}[100] == "chunk 11"
    assert load_prediction_chunks(tmp_path, "run", num_chunks=12) == discovered
    assert [p.id for p in load_prediction_chunks(tmp_path, "run", num_chunks=2)] == [0, 100, 1]


def test_missing_chunks_are_reported(tmp_path: Path) -> None:
    write(tmp_path / "run_0.json", [])
    write(tmp_path / "run_2.json", [])
    with pytest.raises(DataFileError, match=r": missing prediction chunks: run_1\.json, run_3\.json$"):
        load_prediction_chunks(tmp_path, "run", num_chunks=4)
    with pytest.raises(DataFileError, match=r": no prediction chunks named absent_<k>\.json$"):
        load_prediction_chunks(tmp_path, "absent")


def test_a_bad_chunk_is_named(tmp_path: Path) -> None:
    write(tmp_path / "run_0.json", [{"id": 1, "output": "ok"}])
    bad = write(tmp_path / "run_1.json", [{"id": 2}])
    with pytest.raises(DataFileError) as caught:
        load_prediction_chunks(tmp_path, "run")
    assert str(caught.value) == f"{bad}: item [0] (id 2): output: missing"
