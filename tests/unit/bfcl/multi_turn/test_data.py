"""The multi-turn loader against the figures of bfcl-multiturn §1.1-§1.3 (the real data: needs TOOLEVAL_DATA_DIR),
and its errors on small folders made here."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pytest_tooleval.errors import DataError
from pytest_tooleval.suites.bfcl.multi_turn.data import DOC_FILES, load_samples
from pytest_tooleval.suites.bfcl.multi_turn.sample import CATEGORIES, MultiTurnSample

# category: (samples, turns, ground-truth calls, {turns of a sample: samples}) (bfcl-multiturn §1.1)
BASE_SHAPE = {1: 3, 2: 40, 3: 50, 4: 50, 5: 43, 6: 12, 7: 2}
HELD_OUT_SHAPE = {2: 3, 3: 40, 4: 50, 5: 50, 6: 43, 7: 12, 8: 2}
COUNTS = {
    "multi_turn_base": (200, 734, 1142, BASE_SHAPE),
    "multi_turn_miss_func": (200, 934, 1140, HELD_OUT_SHAPE),
    "multi_turn_miss_param": (200, 934, 1140, HELD_OUT_SHAPE),
    "multi_turn_long_context": (200, 734, 1203, BASE_SHAPE),
}


@pytest.fixture(scope="module")
def loaded(bfcl_dir: Path) -> dict[str, list[MultiTurnSample]]:
    return {category: load_samples(bfcl_dir, category) for category in CATEGORIES}


def docs_of(bfcl_dir: Path, class_name: str) -> list[dict[str, Any]]:
    lines = (bfcl_dir / "multi_turn_func_doc" / DOC_FILES[class_name]).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def doc_names(bfcl_dir: Path, class_name: str) -> list[str]:
    return [doc["name"] for doc in docs_of(bfcl_dir, class_name)]


@pytest.mark.parametrize("category", CATEGORIES)
def test_counts(loaded: dict[str, list[MultiTurnSample]], category: str) -> None:
    samples = loaded[category]
    count, turns, calls, shape = COUNTS[category]
    assert len(samples) == count
    assert sum(len(sample.turns) for sample in samples) == turns
    assert sum(len(turn) for sample in samples for turn in sample.ground_truth) == calls
    assert dict(Counter(len(sample.turns) for sample in samples)) == shape
    assert all(len(sample.ground_truth) == len(sample.turns) for sample in samples)


@pytest.mark.parametrize("category", CATEGORIES)
def test_ids_and_order(loaded: dict[str, list[MultiTurnSample]], category: str) -> None:
    samples = loaded[category]
    assert [sample.id for sample in samples] == [f"{category}_{n}" for n in range(200)]
    assert [sample.index for sample in samples] == list(range(200))
    assert {sample.category for sample in samples} == {category}
    assert [sample.long_context for sample in samples] == [category == "multi_turn_long_context"] * 200


@pytest.mark.parametrize("category", [name for name in CATEGORIES if name != "multi_turn_miss_func"])
def test_docs_are_the_classes_docs_in_order(
    loaded: dict[str, list[MultiTurnSample]], bfcl_dir: Path, category: str
) -> None:
    for sample in loaded[category]:
        # the docs exactly as the files have them: the Python hint is the request's business
        expected = [doc for class_name in sample.involved_classes for doc in docs_of(bfcl_dir, class_name)]
        assert sample.functions == expected, sample.id
        assert sample.held_out == {}
    assert {len(sample.functions) for sample in loaded[category]} <= set(range(18, 40))


def test_held_out_docs(loaded: dict[str, list[MultiTurnSample]], bfcl_dir: Path) -> None:
    samples = loaded["multi_turn_miss_func"]
    assert all(len(sample.held_out) == 1 for sample in samples)
    assert dict(Counter(len(docs) for sample in samples for docs in sample.held_out.values())) == {1: 182, 2: 14, 3: 4}
    assert dict(Counter(turn for sample in samples for turn in sample.held_out)) == {
        1: 94,
        2: 53,
        3: 32,
        4: 16,
        5: 3,
        6: 2,
    }
    for sample in samples:
        [(turn, docs)] = sample.held_out.items()
        assert sample.turns[turn] == [], sample.id  # the turn that reveals them has no message
        assert sample.ground_truth[turn - 1] == [], sample.id
        offered = [doc["name"] for doc in sample.functions]
        every = [name for class_name in sample.involved_classes for name in doc_names(bfcl_dir, class_name)]
        for doc in docs:
            assert isinstance(doc, dict) and "parameters" in doc  # the doc itself, not its name
            every.remove(str(doc["name"]))
        assert offered == every, sample.id
    assert {len(sample.functions) for sample in samples} <= set(range(16, 39))


def test_a_scenario_of_a_class_not_involved_is_kept(loaded: dict[str, list[MultiTurnSample]]) -> None:
    for category in CATEGORIES:
        sample = loaded[category][96]
        assert sample.involved_classes == ["VehicleControlAPI"]
        assert set(sample.initial_config) == {"VehicleControlAPI", "TravelAPI"}  # ignored by the executor


def test_samples_do_not_share_docs(bfcl_dir: Path) -> None:
    first, second = load_samples(bfcl_dir, "multi_turn_base")[:2]
    first.functions[0]["name"] = "changed"
    assert second.functions[0]["name"] != "changed"


# -- errors, on small folders --------------------------------------------------------------------------------------

ENTRY: dict[str, Any] = {
    "id": "multi_turn_miss_func_0",
    "question": [[{"role": "user", "content": "a"}], [{"role": "user", "content": "b"}], []],
    "initial_config": {"MathAPI": {}},
    "involved_classes": ["MathAPI"],
    "missed_function": {"2": ["mean"]},
}
ANSWER: dict[str, Any] = {
    "id": "multi_turn_miss_func_0",
    "ground_truth": [["add(a=1, b=2)"], [], ["mean(numbers=[1])"]],
}


def make_folder(root: Path, entries: list[dict[str, Any]], answers: list[dict[str, Any]]) -> Path:
    (root / "possible_answer").mkdir(parents=True)
    (root / "multi_turn_func_doc").mkdir()
    (root / "BFCL_v4_multi_turn_miss_func.json").write_text("".join(json.dumps(e) + "\n" for e in entries))
    (root / "possible_answer" / "BFCL_v4_multi_turn_miss_func.json").write_text(
        "".join(json.dumps(a) + "\n" for a in answers)
    )
    docs: list[dict[str, Any]] = [
        {"name": name, "description": name, "parameters": {}} for name in ("add", "mean", "mean")
    ]
    (root / "multi_turn_func_doc" / "math_api.json").write_text("".join(json.dumps(d) + "\n" for d in docs))
    return root


def test_a_small_folder(tmp_path: Path) -> None:
    [sample] = load_samples(make_folder(tmp_path, [ENTRY], [ANSWER]), "multi_turn_miss_func")
    assert [doc["name"] for doc in sample.functions] == ["add", "mean"]  # the first `mean` moved, not the second
    assert sample.held_out == {2: [{"name": "mean", "description": "mean", "parameters": {}}]}
    assert sample.ground_truth == ANSWER["ground_truth"]


@pytest.mark.parametrize(
    ("entry", "answer", "message"),
    [
        (
            {**ENTRY, "id": "multi_turn_miss_func_1"},
            ANSWER,
            r"possible_answer/BFCL_v4_multi_turn_miss_func.json:1: the possible answer of 'multi_turn_miss_func_0' "
            r"where .*BFCL_v4_multi_turn_miss_func.json:1 has 'multi_turn_miss_func_1'.* keep both files in one order",
        ),
        (
            {**ENTRY, "id": "multi_turn_base_0"},
            {**ANSWER, "id": "multi_turn_base_0"},
            r"BFCL_v4_multi_turn_miss_func.json:1: id 'multi_turn_base_0' is not of multi_turn_miss_func",
        ),
        (
            {**ENTRY, "missed_function": {"2": ["median"]}},
            ANSWER,
            r"json:1: missed_function holds out 'median', which no involved class documents",
        ),
        ({**ENTRY, "missed_function": {"two": ["mean"]}}, ANSWER, r"json:1: missed_function must map a turn index"),
        ({**ENTRY, "involved_classes": ["MathsAPI"]}, ANSWER, r"json:1: involved_classes must list the API classes"),
        ({**ENTRY, "question": "a"}, ANSWER, r"json:1: question must be a list of turns"),
        (
            ENTRY,
            {**ANSWER, "ground_truth": [["add(a=1, b=2)"]]},
            r"possible_answer/BFCL_v4_multi_turn_miss_func.json:1: 1 ground-truth turns for the 3 turns",
        ),
        (ENTRY, {**ANSWER, "ground_truth": [[{"add": {}}], [], []]}, r"ground_truth must be a list of turns"),
    ],
    ids=["order", "category", "held-out", "turn-key", "class", "question", "turns", "calls"],
)
def test_malformed_data_names_the_file(
    tmp_path: Path, entry: dict[str, Any], answer: dict[str, Any], message: str
) -> None:
    with pytest.raises(DataError, match=message) as caught:
        load_samples(make_folder(tmp_path, [entry], [answer]), "multi_turn_miss_func")
    assert "\n" not in str(caught.value)


def test_missing_files(tmp_path: Path) -> None:
    folder = make_folder(tmp_path, [ENTRY], [ANSWER])
    (folder / "multi_turn_func_doc" / "math_api.json").unlink()
    with pytest.raises(DataError, match=r"multi_turn_func_doc/math_api.json: file is missing"):
        load_samples(folder, "multi_turn_miss_func")
    with pytest.raises(DataError, match=r"BFCL_v4_multi_turn_base.json: file is missing"):
        load_samples(folder, "multi_turn_base")


def test_answers_missing_or_extra(tmp_path: Path) -> None:
    with pytest.raises(
        DataError,
        match=r"0 possible answers for the 1 entries of .*: bfcl pairs them line by line, give one answer per entry",
    ):
        load_samples(make_folder(tmp_path, [ENTRY], []), "multi_turn_miss_func")


def test_unknown_category(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"'multi_turn_bas' is no BFCL multi-turn category \(did you mean"):
        load_samples(tmp_path, "multi_turn_bas")
