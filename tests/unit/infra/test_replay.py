"""Replay files read by every reader (models/replay.py and each suite's `replay_rows`), on real files: lines the
JSON decoder cannot read are named by file and line (issue 40).

(Runs through the whole plugin, with their exit status, are in tests/reliability/test_bad_input.py.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_tooleval.errors import DataError
from pytest_tooleval.models.replay import ReplayReader, load_replay
from pytest_tooleval.suites.gpt4tools.plugin_suite import SUITE as GPT4TOOLS


def array(path: Path, *items: Any) -> Path:
    """A JSON array written one item a line (so an item's line is its index + 2)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[\n" + ",\n".join(json.dumps(item) for item in items) + "\n]\n", encoding="utf-8")
    return path


def refused(path: Path, readers: list[ReplayReader] | None = None) -> str:
    with pytest.raises(DataError) as caught:
        load_replay(str(path), readers or [])
    return str(caught.value)


# -- what the JSON decoder gives up on (issue 40, 5) ---------------------------------------------------------

DEEP = 100_000
LONG = 5_000  # digits: past Python's default limit of 4,300 for converting text to an integer


@pytest.mark.parametrize(("value", "problem"), [
    ("[" * DEEP + "]" * DEEP, "lists and objects nested too deeply to read"),
    ('{"a": ' * DEEP + "1" + "}" * DEEP, "lists and objects nested too deeply to read"),
    ("1" * LONG, "an integer of more than 4,300 digits, longer than Python reads"),
    ("-" + "9" * LONG, "an integer of more than 4,300 digits, longer than Python reads"),
], ids=["lists", "objects", "integer", "negative-integer"])
def test_a_line_the_decoder_gives_up_on_is_named(tmp_path: Path, value: str, problem: str) -> None:
    path = tmp_path / "out.jsonl"
    path.write_text('{"id": "a", "result": "1"}\n\n{"id": "b", "result": ' + value + "}\n", encoding="utf-8")
    assert refused(path) == f"{path}:3: {problem}"


@pytest.mark.parametrize(("value", "problem"), [
    ("[" * DEEP + "]" * DEEP, "lists and objects nested too deeply to read"),
    ("1" * LONG, "an integer of more than 4,300 digits, longer than Python reads"),
], ids=["lists", "integer"])
def test_a_json_array_the_decoder_gives_up_on_names_the_line(tmp_path: Path, value: str, problem: str) -> None:
    """Line 3 (the second item) holds it; a fraction of as many digits on line 2 and the same digits inside a
    string are read as they should be, and are not what is named."""
    path = tmp_path / "out.json"
    path.write_text(f'[\n{{"id": "a", "result": 0.{"1" * LONG}, "text": "{"1" * LONG}"}},\n'
                    f'{{"id": "b", "result": {value}}}\n]\n', encoding="utf-8")
    assert refused(path) == f"{path}:3: {problem}"


def test_a_nesting_the_decoder_reads_is_a_row(tmp_path: Path) -> None:
    """What the decoder reads is kept as written: a deep but readable value reaches the suite, which scores it."""
    path = tmp_path / "out.jsonl"
    path.write_text('{"id": "a", "result": ' + "[" * 200 + "]" * 200 + "}\n", encoding="utf-8")
    assert load_replay(str(path)).lookup(None, "a") is not None


def test_a_gpt4tools_chunk_the_decoder_gives_up_on_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    array(folder / "run_0.json", {"id": 1, "output": "a"})
    (folder / "run_1.json").write_text("[" * DEEP + "]" * DEEP, encoding="utf-8")
    assert refused(folder, [GPT4TOOLS.replay_rows]) == (
        f"--tooleval-model replay:{folder}: {folder / 'run_1.json'}: lists and objects nested too deeply to read")
