"""Replay files read by every reader (models/replay.py and each suite's `replay_rows`), on real files: an id
recorded twice with different contents is one line naming it and where each copy is (issue 40); a row repeated
exactly is read once; lines the JSON decoder cannot read are named by file and line.

(Runs through the whole plugin, with their exit status, are in tests/reliability/test_bad_input.py.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_tooleval.errors import DataError
from pytest_tooleval.models.replay import ReplayReader, ReplayStore, load_replay
from pytest_tooleval.suites.acebench.plugin_suite import SUITE as ACEBENCH
from pytest_tooleval.suites.bfcl.plugin_suite import SUITE as BFCL
from pytest_tooleval.suites.gpt4tools.plugin_suite import SUITE as GPT4TOOLS
from pytest_tooleval.suites.toolalpaca.plugin_suite import SUITE as TOOLALPACA

KEEP_ONE = "keep one row per id (a row repeated exactly is read once)"


def jsonl(path: Path, *rows: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def array(path: Path, *items: Any) -> Path:
    """A JSON array written one item a line (so an item's line is its index + 2)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[\n" + ",\n".join(json.dumps(item) for item in items) + "\n]\n", encoding="utf-8")
    return path


def refused(path: Path, readers: list[ReplayReader] | None = None) -> str:
    with pytest.raises(DataError) as caught:
        load_replay(str(path), readers or [])
    return str(caught.value)


# -- the generic rows --------------------------------------------------------------------------------------


def test_an_id_recorded_twice_differently_is_refused_naming_both_lines(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path / "out.jsonl",
        {"id": "a", "result": "[f()]"},
        {"id": "b", "result": "[g()]"},
        {"id": "a", "result": "[h()]"},
    )
    assert refused(path) == (
        f"--tooleval-model replay:{path}: id 'a' is recorded twice with different contents "
        f"({path} lines 1 and 3): {KEEP_ONE}"
    )


def test_a_row_repeated_exactly_is_read_once(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path / "out.jsonl",
        {"id": "a", "result": "[f()]"},
        {"id": "b", "result": "[g()]"},
        {"id": "a", "result": "[f()]"},
    )
    store = load_replay(str(path))
    assert store.rows == {(None, "a"): {"id": "a", "result": "[f()]"}, (None, "b"): {"id": "b", "result": "[g()]"}}


def test_the_same_id_in_two_languages_is_two_samples(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path / "out.jsonl", {"id": "a", "lang": "en", "result": "1"}, {"id": "a", "lang": "zh", "result": "2"}
    )
    assert set(load_replay(str(path)).rows) == {("en", "a"), ("zh", "a")}


def test_copies_in_two_files_of_a_folder_are_named_by_file(tmp_path: Path) -> None:
    first = jsonl(tmp_path / "runs" / "one.jsonl", {"id": "a", "result": "1"}, {"id": "b", "result": "1"})
    second = jsonl(
        tmp_path / "runs" / "two.jsonl",
        {"id": "b", "result": "2"},
        {"id": "a", "result": "2"},
        {"id": "c", "result": "2"},
    )
    assert refused(tmp_path / "runs") == (
        f"--tooleval-model replay:{tmp_path / 'runs'}: 2 ids are recorded more than once with different contents: "
        f"'a' ({first} line 1, {second} line 2), 'b' ({first} line 2, {second} line 1): {KEEP_ONE}"
    )


def test_many_conflicts_are_counted_past_the_third(tmp_path: Path) -> None:
    rows = [{"id": str(n), "result": "x"} for n in range(5)] + [{"id": str(n), "result": "y"} for n in range(5)]
    path = jsonl(tmp_path / "out.jsonl", *rows)
    line = refused(path)
    assert line.startswith(
        f"--tooleval-model replay:{path}: 5 ids are recorded more than once with different "
        f"contents: '0' ({path} lines 1 and 6), '1' ({path} lines 2 and 7), '2' ({path} lines 3 "
        "and 8), and 2 more: "
    ), line


def test_items_of_a_json_array_are_named_by_index(tmp_path: Path) -> None:
    path = array(tmp_path / "out.json", {"id": "a", "result": "1"}, {"id": "a", "result": "2"})
    assert refused(path) == (
        f"--tooleval-model replay:{path}: id 'a' is recorded twice with different contents "
        f"({path} items [0] and [1]): {KEEP_ONE}"
    )


def test_an_item_without_an_id_is_named_by_index(tmp_path: Path) -> None:
    path = array(tmp_path / "out.json", {"id": "a", "result": "1"}, ["not", "a", "row"])
    assert refused(path) == f'{path}: item [1]: expected an object with an "id"'


def test_a_suite_reader_that_gives_two_rows_for_an_id_is_refused(tmp_path: Path) -> None:
    """A reader of another package returns rows without saying where they were: they are named by position."""
    path = jsonl(tmp_path / "theirs.jsonl", {"anything": 1})

    def reader(given: Path, document: Any) -> list[dict[str, Any]]:
        return [{"id": "a", "result": "1"}, {"id": "a", "result": "2"}]

    assert refused(path, [reader]) == (
        f"--tooleval-model replay:{path}: id 'a' is recorded twice with different "
        f"contents (rows 1 and 2 of what its suite read from {path}): {KEEP_ONE}"
    )


# -- what the JSON decoder gives up on (issue 40, 5) ---------------------------------------------------------

DEEP = 100_000
LONG = 5_000  # digits: past Python's default limit of 4,300 for converting text to an integer


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("[" * DEEP + "]" * DEEP, "lists and objects nested too deeply to read"),
        ('{"a": ' * DEEP + "1" + "}" * DEEP, "lists and objects nested too deeply to read"),
        ("1" * LONG, "an integer of more than 4,300 digits, longer than Python reads"),
        ("-" + "9" * LONG, "an integer of more than 4,300 digits, longer than Python reads"),
    ],
    ids=["lists", "objects", "integer", "negative-integer"],
)
def test_a_line_the_decoder_gives_up_on_is_named(tmp_path: Path, value: str, problem: str) -> None:
    path = tmp_path / "out.jsonl"
    path.write_text('{"id": "a", "result": "1"}\n\n{"id": "b", "result": ' + value + "}\n", encoding="utf-8")
    assert refused(path) == f"{path}:3: {problem}"


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("[" * DEEP + "]" * DEEP, "lists and objects nested too deeply to read"),
        ("1" * LONG, "an integer of more than 4,300 digits, longer than Python reads"),
    ],
    ids=["lists", "integer"],
)
def test_a_json_array_the_decoder_gives_up_on_names_the_line(tmp_path: Path, value: str, problem: str) -> None:
    """Line 3 (the second item) holds it; a fraction of as many digits on line 2 and the same digits inside a
    string are read as they should be, and are not what is named."""
    path = tmp_path / "out.json"
    path.write_text(
        f'[\n{{"id": "a", "result": 0.{"1" * LONG}, "text": "{"1" * LONG}"}},\n{{"id": "b", "result": {value}}}\n]\n',
        encoding="utf-8",
    )
    assert refused(path) == f"{path}:3: {problem}"


def test_a_nesting_the_decoder_reads_is_a_row(tmp_path: Path) -> None:
    """What the decoder reads is kept as written: a deep but readable value reaches the suite, which scores it."""
    path = tmp_path / "out.jsonl"
    path.write_text('{"id": "a", "result": ' + "[" * 200 + "]" * 200 + "}\n", encoding="utf-8")
    assert load_replay(str(path)).lookup(None, "a") is not None


# -- each suite's own formats --------------------------------------------------------------------------------


def rows(store: ReplayStore) -> dict[str, Any]:
    return {sample_id: row for (_, sample_id), row in store.rows.items()}


def test_acebench_result_folders_of_two_models_are_refused_where_they_differ(tmp_path: Path) -> None:
    """result_all/ holding two models' folders: the same ids, different answers."""
    first = jsonl(
        tmp_path / "result_all" / "result_en" / "model-a" / "data_normal_atom_bool_result.json",
        {"id": "normal_atom_bool_0", "result": "[f()]"},
    )
    second = jsonl(
        tmp_path / "result_all" / "result_en" / "model-b" / "data_normal_atom_bool_result.json",
        {"id": "normal_atom_bool_0", "result": "[g()]"},
    )
    root = tmp_path / "result_all"
    assert refused(root, [ACEBENCH.upstream.replay_rows]) == (
        f"--tooleval-model replay:{root}: id 'normal_atom_bool_0' (en) is recorded twice with different contents "
        f"({first} line 1, {second} line 1): {KEEP_ONE}"
    )


def test_acebench_languages_keep_their_ids_apart(tmp_path: Path) -> None:
    for language, answer in (("en", "[f()]"), ("zh", "[g()]")):
        jsonl(
            tmp_path / "result_all" / f"result_{language}" / "model" / "data_normal_atom_bool_result.json",
            {"id": "normal_atom_bool_0", "result": answer},
        )
    store = load_replay(str(tmp_path / "result_all"), [ACEBENCH.upstream.replay_rows])
    assert (store.lookup("en", "normal_atom_bool_0") or {})["result"] == "[f()]"
    assert (store.lookup("zh", "normal_atom_bool_0") or {})["result"] == "[g()]"


def test_a_bfcl_result_file_with_an_id_twice_is_refused(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path / "model" / "non_live" / "BFCL_v4_simple_python_result.json",
        {"id": "simple_python_0", "result": "[f(a=1)]"},
        {"id": "simple_python_1", "result": "[f(a=2)]"},
        {"id": "simple_python_0", "result": "[f(a=3)]"},
    )
    folder = tmp_path / "model"
    assert refused(folder, [BFCL.upstream.replay_rows]) == (
        f"--tooleval-model replay:{folder}: id 'simple_python_0' is recorded twice with different contents "
        f"({path} lines 1 and 3): {KEEP_ONE}"
    )
    # the same rows repeated exactly: read once
    jsonl(path, {"id": "simple_python_0", "result": "[f(a=1)]"}, {"id": "simple_python_0", "result": "[f(a=1)]"})
    assert rows(load_replay(str(folder), [BFCL.upstream.replay_rows])) == {
        "simple_python_0": {"id": "simple_python_0", "result": "[f(a=1)]"}
    }


def test_a_gpt4tools_prediction_file_with_an_id_twice_is_refused(tmp_path: Path) -> None:
    """Upstream's gather keeps the last record of an id; two different outputs for one item are refused."""
    path = array(
        tmp_path / "predictions.json",
        {"id": 7, "output": "first"},
        {"id": 8, "output": "x"},
        {"id": 7, "output": "second"},
    )
    assert refused(path, [GPT4TOOLS.upstream.replay_rows]) == (
        f"--tooleval-model replay:{path}: id '7' is recorded twice with different contents ({path} items [0] and "
        f"[2]): {KEEP_ONE}"
    )


def test_gpt4tools_chunks_repeating_a_record_exactly_are_read_once(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    array(folder / "run_0.json", {"id": 1, "output": "a"}, {"id": 2, "output": "b"})
    array(folder / "run_1.json", {"id": 2, "output": "b"}, {"id": 3, "output": "c"})
    assert rows(load_replay(str(folder), [GPT4TOOLS.upstream.replay_rows])) == {
        "1": {"id": "1", "output": "a"},
        "2": {"id": "2", "output": "b"},
        "3": {"id": "3", "output": "c"},
    }


def test_gpt4tools_chunks_that_disagree_are_refused_naming_both(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    first = array(folder / "run_0.json", {"id": 1, "output": "a"}, {"id": 2, "output": "b"})
    second = array(folder / "run_1.json", {"id": 2, "output": "B"})
    assert refused(folder, [GPT4TOOLS.upstream.replay_rows]) == (
        f"--tooleval-model replay:{folder}: id '2' is recorded twice with different contents ({first} item [1], "
        f"{second} item [0]): {KEEP_ONE}"
    )


def test_a_gpt4tools_chunk_the_decoder_gives_up_on_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    array(folder / "run_0.json", {"id": 1, "output": "a"})
    (folder / "run_1.json").write_text("[" * DEEP + "]" * DEEP, encoding="utf-8")
    assert refused(folder, [GPT4TOOLS.upstream.replay_rows]) == (
        f"--tooleval-model replay:{folder}: {folder / 'run_1.json'}: lists and objects nested too deeply to read"
    )


def test_toolalpaca_generation_output_naming_an_api_twice_is_refused(tmp_path: Path) -> None:
    episode = {"input": "hi", "output": "done", "intermediate_steps": []}
    path = array(
        tmp_path / "generated.json",
        {"Name": "Weather", "Instances": [episode]},
        {"Name": "Weather", "Instances": [{**episode, "output": "other"}]},
    )
    assert refused(path, [TOOLALPACA.upstream.replay_rows]) == (
        f"--tooleval-model replay:{path}: id 'Weather/0' is recorded twice with different contents ({path} items "
        f"[0] and [1]): {KEEP_ONE}"
    )
