"""The run board's store never raises (issue 40, point 2): a result it cannot keep is a storage fault, counted,
and the process goes on (answers/board.py). A raise there kept a result from the workers waiting for it, and
the run hung."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_tooleval.answers.board import RunBoard
from pytest_tooleval.models.storage import StorageLog


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


def test_a_result_that_cannot_be_written_is_a_storage_fault_not_a_raise(tmp_path: Path) -> None:
    log = StorageLog()
    board = RunBoard(tmp_path / "board.sqlite", log=log)
    try:
        assert board.try_claim("deep")
        board.store("deep", {"answer": {"output": nested(100_000)}})  # past the JSON encoder's depth
        assert board.result("deep") is None and board.broken
        [fault] = log.as_dicts()
        assert fault["store"] == "run board"
        assert board.try_claim("odd")
        board.store("odd", {"answer": {"output": "half \ud83d", "calls": {"k\udc00": ["\ud83d\ude00"]}}})
        assert board.result("odd") == {"answer": {"output": "half \ufffd", "calls": {"k\ufffd": ["\U0001f600"]}}}
    finally:
        board.close()
