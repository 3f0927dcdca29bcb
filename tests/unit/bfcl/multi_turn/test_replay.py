"""Reading bfcl's multi-turn result files (bfcl-multiturn §1.5), on files made here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_tooleval.errors import DataError
from pytest_tooleval.suites.bfcl.multi_turn.replay import read_results, result_file

CATEGORY = "multi_turn_base"
FC_STEP = [{"cd": '{"folder": "document"}'}]


def write(folder: Path, rows: list[Any], category: str = CATEGORY) -> Path:
    path = result_file(folder, category)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows))
    return path


def row(number: int, result: Any = None) -> dict[str, Any]:
    return {
        "id": f"{CATEGORY}_{number}",
        "result": [[FC_STEP]] if result is None else result,
        "input_token_count": [[1]],
        "latency": [[0.5]],
    }


def test_the_layout() -> None:
    assert result_file(Path("m"), CATEGORY) == Path("m/multi_turn/BFCL_v4_multi_turn_base_result.json")


def test_results_by_id_in_bfcl_order(tmp_path: Path) -> None:
    write(tmp_path, [row(10), row(2, "Error during inference: boom"), row(1, [[], ["text", None]])])
    results = read_results(tmp_path, CATEGORY)
    assert list(results) == [f"{CATEGORY}_1", f"{CATEGORY}_2", f"{CATEGORY}_10"]  # by number, not by text
    assert results == {
        f"{CATEGORY}_1": [[], ["text", None]],
        f"{CATEGORY}_2": "Error during inference: boom",  # the checker's inference_error
        f"{CATEGORY}_10": [[FC_STEP]],
    }


def test_a_partial_folder(tmp_path: Path) -> None:
    """As for single-turn: the ids present are read, the others have no recorded output (their tests error)."""
    write(tmp_path, [row(3)])
    assert list(read_results(tmp_path, CATEGORY)) == [f"{CATEGORY}_3"]
    assert read_results(tmp_path, "multi_turn_miss_func") == {}  # no file: no rows


def test_a_row_repeated_exactly_is_read_once(tmp_path: Path) -> None:
    write(tmp_path, [row(0), row(1), row(0)])
    assert list(read_results(tmp_path, CATEGORY)) == [f"{CATEGORY}_0", f"{CATEGORY}_1"]


def test_two_results_for_one_id_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path, [row(0), row(1), row(0, [[]])])
    with pytest.raises(DataError, match=rf"id '{CATEGORY}_0' is recorded twice with different contents") as caught:
        read_results(tmp_path, CATEGORY)
    assert f"{path} lines 1 and 3" in str(caught.value)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "multi_turn_base_1", "result": [', r":2:\d+: malformed JSON"),
        ('["multi_turn_base_1"]', r":2: a row without an id"),
        (
            '{"id": "multi_turn_miss_func_1", "result": []}',
            r":2: id 'multi_turn_miss_func_1' is not of multi_turn_base",
        ),
        ('{"id": "multi_turn_base_x", "result": []}', r":2: id 'multi_turn_base_x' is not of multi_turn_base"),
        ('{"id": 1, "result": []}', r":2: id 1 is not of multi_turn_base"),
        ('{"id": "multi_turn_base_1"}', r":2: multi_turn_base_1 has no \"result\""),
    ],
    ids=["json", "object", "category", "number", "type", "result"],
)
def test_a_malformed_line_names_the_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = write(tmp_path, [row(0), line])
    with pytest.raises(DataError, match=message) as caught:
        read_results(tmp_path, CATEGORY)
    assert str(caught.value).startswith(f"{path}:2")
