"""ACEBench data: find the upstream tree, read both JSON Lines files of a category, pair them by line.

Layout (acebench-scoring §1.1): data_all/data_<lang>/data_<category>.json (prompt side) and
.../possible_answer/data_<category>.json (answer side), aligned by line index.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ...datafiles import read_json, read_jsonl
from ...download import Pin, locate_data
from ...errors import DataError, ToolevalUsageError
from .categories import COLLECTION_ORDER

LANGUAGES = ("en", "zh")

PIN_FILE = Path(__file__).with_name("pin.json")


def family_of(category: str) -> str:
    return category.split("_", 1)[0]


class PromptRecord(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    question: Any
    function: Any


class AnswerRecord(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    ground_truth: Any


@dataclass(frozen=True, eq=False)
class AceCase:
    """One ACEBench sample: the prompt record and its answer record, as upstream pairs them."""

    language: str
    category: str
    index: int  # line index in the category file; upstream pairs and orders by it
    record: dict[str, Any] = field(repr=False)
    answer: dict[str, Any] = field(repr=False)
    mode: str = "prompt"  # "prompt": the text protocol; "fc": native function calling (--tooleval-mode)

    suite = "acebench"

    @property
    def id(self) -> str:
        sample_id: str = self.record["id"]  # a string: PromptRecord validated it
        return sample_id

    @property
    def family(self) -> str:
        return family_of(self.category)

    @property
    def marks(self) -> tuple[str, ...]:
        return (self.suite, self.family, self.language)

    @property
    def cluster(self) -> str:
        """What must stay together when samples are split across shards: a multi-turn step's dialogue."""
        if "normal_multi_turn" in self.category:
            return self.id.rsplit("_", 1)[0]  # normal_multi_turn_user_adjust_3_1 -> ..._3
        return self.id

    @property
    def variant(self) -> str:
        """"fc" for a function-calling case; "" for the benchmark's own text protocol (report rows say so)."""
        return "" if self.mode == "prompt" else self.mode

    @property
    def test_id(self) -> str:
        suffix = "" if self.mode == "prompt" else f"-{self.mode}"
        return f"{self.language}-{self.id}{suffix}"

    @property
    def ground_truth(self) -> Any:
        return self.answer["ground_truth"]

    @property
    def expected_text(self) -> str:
        """The ground truth in the official output format, for failure messages."""
        if self.family == "agent":
            return ""
        from .scoring import render_ground_truth

        return render_ground_truth(self.ground_truth, self.category)


def locate(data_dir: str | None, cache_dir: Path, offline: bool) -> Path:
    """The ACEBench root: the given folder (the root holding acebench/, or acebench/ itself), else the cache."""
    return locate_data(data_dir, cache_dir, offline, folder="acebench", marker="data_all",
                       expected="data_all/data_en/...", label="ACEBench", pin=load_pin)


def load_pin() -> Pin:
    pinned = json.loads(PIN_FILE.read_text(encoding="utf-8"))
    url = os.environ.get("TOOLEVAL_ACEBENCH_URL", pinned["url"])
    return Pin("acebench", url, pinned["files"], pinned["prompt_constants"], pinned["prompts_sha256"])


@cache
def load_category(root: Path, language: str, category: str) -> tuple[AceCase, ...]:
    """Both files of one category, validated and paired by line (parsed once per process)."""
    folder = root / "data_all" / f"data_{language}"
    prompt_path = folder / f"data_{category}.json"
    answer_path = folder / "possible_answer" / f"data_{category}.json"
    prompts, answers = read_jsonl(prompt_path), read_jsonl(answer_path)
    if not prompts:  # every upstream category has samples: an empty file is a broken copy, not an empty category
        raise DataError(f"{prompt_path}: no records")
    if len(prompts) != len(answers):
        raise DataError(f"{answer_path}: {len(answers)} records, but {prompt_path} has {len(prompts)}")
    cases = []
    for index, (prompt, answer) in enumerate(zip(prompts, answers, strict=True)):  # lengths checked above
        _validate(PromptRecord, prompt, prompt_path, index)
        _validate(AnswerRecord, answer, answer_path, index)
        if prompt["id"] != answer["id"]:
            raise DataError(f"{answer_path}:{index + 1}: id {answer['id']!r} does not match {prompt['id']!r}")
        problem = _ground_truth_problem(category, answer["ground_truth"])
        if problem:
            raise DataError(f"{answer_path}:{index + 1}: ground_truth: {problem}")
        cases.append(AceCase(language, category, index, prompt, answer))
    return tuple(cases)


def _ground_truth_problem(category: str, truth: Any) -> str | None:
    """What is wrong with a ground truth the scorers cannot read (the shapes upstream's files hold), or None."""
    if category == "special_irrelevant":
        expected, valid = "a sentence", isinstance(truth, str)
    elif category in ("special_incomplete", "special_error_param"):
        expected = "{api or parameter: [names or values]}"
        valid = isinstance(truth, dict) and all(isinstance(v, list) for v in truth.values())
    elif family_of(category) == "normal":
        expected = "{api: {parameter: value}} (or a list of them)"
        alternatives = truth if isinstance(truth, list) else [truth]
        valid = bool(alternatives) and all(
            isinstance(calls, dict) and all(isinstance(args, dict) for args in calls.values()) for calls in alternatives
        )
    else:
        return None  # agent milestones and end states are checked where they are graded
    if valid:
        return None
    got = "an empty list" if truth == [] else type(truth).__name__
    return f"expected {expected}, got {got}"


def _validate(model: type[BaseModel], row: dict[str, Any], path: Path, index: int) -> None:
    try:
        model.model_validate(row)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "record"
        raise DataError(f"{path}:{index + 1}: {where}: {first['msg']}") from None


@cache
def load_prompts(root: Path) -> dict[str, dict[str, str]]:
    prompts: dict[str, dict[str, str]] = read_json(root / "prompts.json")
    return prompts


MODES = {"prompt": ("prompt",), "fc": ("fc",), "both": ("prompt", "fc")}


def select(root: Path, languages: tuple[str, ...], categories: tuple[str, ...], mode: str = "prompt") -> list[AceCase]:
    unknown = [name for name in categories if name not in COLLECTION_ORDER]
    if unknown:
        raise ToolevalUsageError(
            f"--tooleval-categories: unknown category {unknown[0]!r}; known: {', '.join(COLLECTION_ORDER)}"
        )
    # Collection order (categories.py), not upstream's: the order test ids have always had.
    chosen = categories or COLLECTION_ORDER
    cases = [case for language in languages for category in chosen for case in load_category(root, language, category)]
    # --tooleval-mode both: every sample twice, the function-calling copy after the text-protocol ones
    return [case if variant == "prompt" else replace(case, mode=variant) for variant in MODES[mode] for case in cases]
