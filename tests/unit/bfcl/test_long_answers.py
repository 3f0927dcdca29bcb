"""Long Java and JavaScript answers that never close a comment, a string or a template, scored end to end (bfcl §3.2,
§3.3; needs TOOLEVAL_DATA_DIR).

Each answer is 192 KB or 1,000,000 characters (the longest decoded) and is scored by `check_answer`, as the
conformance test scores, against a real simple_java and simple_javascript sample. tree-sitter finds no token in an
unclosed comment, string or template, so bfcl's verdict is a decode failure. Our tokenizer once tried the comment
again at each ``/*`` and scanned to the end every time: a 192 KB answer of openers took minutes. The bound below
only guards against a hang; it is no timing test.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hang_guard import within_30_seconds
from pytest_tooleval.json_value import JSONValue
from pytest_tooleval.suites.bfcl.checker import check_answer
from pytest_tooleval.suites.bfcl.decode import MAX_ANSWER_CHARS

SIZES = {"192KB": 192 * 1024, "1MB": MAX_ANSWER_CHARS}
FAILED = "ast_decoder:decoder_failed"

#: The sample each language's answers are scored against, and a correct answer to it.
SAMPLES = {
    "simple_java": (
        "simple_java_0",
        "GeometryPresentation.createPresentation(controller=mapController, parent=mapArea)",
    ),
    "simple_javascript": ("simple_javascript_0", "validateUserInput(inputField='userInputField', isComplete=true)"),
}


def filled(head: str, unit: str, tail: str, size: int) -> str:
    """`head`, then `unit` repeated, then `tail`: `size` characters in all (or up to len(unit) - 1 fewer)."""
    return head + unit * ((size - len(head) - len(tail)) // len(unit)) + tail


def opening_argument(call: str, opener: str) -> str:
    """`call` cut after its first ``=``, where `opener` starts a value that the rest of the answer never closes."""
    return call[: call.index("=") + 1] + opener


#: name -> (languages, answer of a given size from the sample's correct call, bfcl's error type)
SHAPES: dict[str, tuple[tuple[str, ...], Callable[[str, int], str], str]] = {
    "one unclosed comment": (
        ("simple_java", "simple_javascript"),
        lambda call, n: filled(call + "; /* ", "lorem ipsum ", "", n),
        FAILED,
    ),
    "comment openers only": (("simple_java", "simple_javascript"), lambda call, n: filled("", "/* ", "", n), FAILED),
    "comment openers after the call": (
        ("simple_java", "simple_javascript"),
        lambda call, n: filled(call + "; ", "/*x", "", n),
        FAILED,
    ),
    "comment openers on lines": (
        ("simple_java", "simple_javascript"),
        lambda call, n: filled(call + ";\n", "/*\n", "", n),
        FAILED,
    ),
    "comment openers and slashes": (
        ("simple_java", "simple_javascript"),
        lambda call, n: filled(call + "; ", "/*/ ", "/*", n),
        FAILED,
    ),
    "unclosed double-quoted string": (
        ("simple_java", "simple_javascript"),
        lambda call, n: filled(opening_argument(call, '"'), "x", "", n),
        FAILED,
    ),
    "unclosed single quote": (
        ("simple_java", "simple_javascript"),
        lambda call, n: filled(opening_argument(call, "'"), "x", "", n),
        FAILED,
    ),
    "unclosed template": (
        ("simple_javascript",),
        lambda call, n: filled(opening_argument(call, "`"), "x\n", "", n),
        FAILED,
    ),
    "many closed comments": (
        ("simple_java", "simple_javascript"),
        lambda call, n: filled(call + "; ", "/* c */ ", "", n),
        "",
    ),
}

CASES = [
    pytest.param(category, shape, size, id=f"{category}-{shape.replace(' ', '-')}-{label}")
    for shape, (categories, _, _) in SHAPES.items()
    for category in categories
    for label, size in SIZES.items()
]


def read_sample(folder: Path, category: str, sample_id: str) -> tuple[list[JSONValue], list[dict[str, Any]]]:
    """(functions, ground truth) of one sample."""
    question = _entry(folder / f"BFCL_v4_{category}.json", sample_id)
    answer = _entry(folder / "possible_answer" / f"BFCL_v4_{category}.json", sample_id)
    return question["function"], answer["ground_truth"]


def _entry(path: Path, sample_id: str) -> dict[str, Any]:
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            entry: dict[str, Any] = json.loads(line)
            if entry["id"] == sample_id:
                return entry
    raise LookupError(f"{sample_id} is not in {path}")


@pytest.mark.parametrize("category", SAMPLES)
def test_the_call_alone_is_correct(bfcl_dir: Path, category: str) -> None:
    sample_id, call = SAMPLES[category]
    functions, ground_truth = read_sample(bfcl_dir, category, sample_id)
    verdict = check_answer(category, "prompt", call + ";", functions, ground_truth)
    assert (verdict.valid, verdict.error_type) == (True, "")


@pytest.mark.parametrize(("category", "shape", "size"), CASES)
def test_a_long_unclosed_answer_is_scored_at_once(bfcl_dir: Path, category: str, shape: str, size: int) -> None:
    sample_id, call = SAMPLES[category]
    functions, ground_truth = read_sample(bfcl_dir, category, sample_id)
    _, build, error_type = SHAPES[shape]
    answer = build(call, size)
    assert size - 16 < len(answer) <= size
    verdict = within_30_seconds(lambda: check_answer(category, "prompt", answer, functions, ground_truth))
    assert (verdict.valid, verdict.error_type) == (error_type == "", error_type), verdict.errors
