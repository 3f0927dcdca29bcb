"""The GPT4Tools suite as the plugin runs it: one case per test-set item, asked and scored as upstream.

Inference follows GPT4Tools' eval/inference.py (toolalpaca-gpt4tools §5.3): the raw instruction is the whole
prompt (one user message), greedy, at most 512 new tokens, no stop strings. Scoring is `scoring.score_item`;
an item passes iff its SR is 1.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ...errors import DataError
from ...models.access import ModelAccess
from ...models.meter import reply_tokens
from ...models.replay import Recorded, unique_rows
from ...outcome import Answer, SampleError, SampleResult
from ..base import CaseBase
from .constants import MAX_NEW_TOKENS, STOP
from .data import (
    Case,
    DataFileError,
    Dataset,
    chunk_records,
    load_dataset,
    prediction_records,
)
from .metrics import GroundTruthError
from .scoring import prediction_text, score_item

UPSTREAM, STOP_VARIANT = "upstream", "stop-at-observation"

_CHUNK = re.compile(r"(.+)_(\d+)\.json")


@dataclass(frozen=True)
class GPT4ToolsCase(CaseBase):
    """One test-set item (the suite protocol in pytest_tooleval/suites/__init__.py)."""

    item: Case
    index: int  # position in the test-set file

    suite = "gpt4tools"
    language = "en"
    skip_reason = None

    @property
    def id(self) -> str:
        return str(self.item.id)

    @property
    def category(self) -> str:
        return "tool" if self.item.uses_tool else "no_tool"

    @property
    def family(self) -> str:
        return self.category

    @property
    def test_id(self) -> str:
        return f"gpt4tools-{self.id}"

    @property
    def marks(self) -> tuple[str, ...]:
        return (self.suite, f"gpt4tools_{self.category}", self.language)

    @property
    def expected_text(self) -> str:
        return self.item.output


class GPT4ToolsSuite:
    name = "gpt4tools"

    def __init__(self, dataset: Dataset, *, max_tokens: int | None = MAX_NEW_TOKENS, stop: bool = False,
                 prompt_in_output: str = "auto") -> None:
        """
        Args:
            dataset: the test set.
            max_tokens: max_tokens of each request (upstream: 512 new tokens).
            stop: send STOP with each request (a labelled variant; upstream sends none).
            prompt_in_output: "yes", "no" or "auto": whether replayed outputs start with the prompt.
        """
        self.dataset = dataset
        self.max_tokens = max_tokens
        self.stop = stop
        self.prompt_in_output = prompt_in_output

    def cases(self) -> list[GPT4ToolsCase]:
        return [GPT4ToolsCase(item, index) for index, item in enumerate(self.dataset)]

    async def oracle(self, case: GPT4ToolsCase) -> Answer:
        return Answer(case.item.output)

    async def replayed(self, case: GPT4ToolsCase, row: dict[str, Any], access: ModelAccess) -> Answer:
        """A recorded continuation, the prompt cut as --tooleval-gpt4tools-prompt-in-output says."""
        assert access.replay is not None
        output = row.get("output", row.get("result"))  # upstream's prediction files, or generic result rows
        if output is None or (isinstance(output, (list, tuple)) and not output):
            raise SampleError(f"no recorded output for gpt4tools item {case.id} in {access.replay.source} "
                              "(upstream leaves unpredicted items out of N)")
        first = str(output if isinstance(output, str) else output[0])
        strip = {"yes": True, "no": False}.get(self.prompt_in_output, first.startswith(case.item.instruction))
        return Answer(prediction_text(first, case.item.instruction, strip_prompt=strip))

    async def answer(self, case: GPT4ToolsCase, access: ModelAccess) -> Answer:
        """The continuation after the prompt (runs on the engine's loop)."""
        assert access.chat is not None
        reply = await access.chat([{"role": "user", "content": case.item.instruction}],
                                  max_tokens=self.max_tokens, stop=STOP if self.stop else None)
        return Answer(reply.text, reply.latency_s, reply_tokens(reply))

    def score(self, case: GPT4ToolsCase, answer: Answer) -> SampleResult:
        """Upstream's five numbers for one item; valid iff SR == 1 (pure)."""
        try:
            verdict = score_item(case.item, answer.output or "")
        except GroundTruthError as exc:  # upstream's assert stops its whole run; here only this item errors
            raise SampleError(f"gpt4tools item {case.id}: {exc}") from None
        # upstream's NaN (a mean over no steps) travels as null, so reports stay strict JSON; summary.py maps it back
        details = {key: None if isinstance(value, float) and math.isnan(value) else value
                   for key, value in verdict.details.items()}
        details["variant"] = STOP_VARIANT if self.stop else UPSTREAM
        verdict = replace(verdict, details=details)
        return SampleResult(verdict, answer.output, answer.latency_s, answer.tokens)


def load_test_set(path_text: str) -> Dataset:
    """The test set at `path_text`; a bad file is a usage error naming the file and the item."""
    try:
        dataset = load_dataset(Path(path_text).expanduser())
    except DataFileError as exc:
        raise DataError(f"--tooleval-gpt4tools-path: {exc}") from None
    seen: dict[str, int] = {}
    for index, item in enumerate(dataset):  # test ids and report keys are strings: 7 and "7" would collide
        if str(item.id) in seen:
            raise DataError(f"--tooleval-gpt4tools-path: {dataset.path}: item [{index}] (id {item.id!r}) "
                                     f"has the same id text as item [{seen[str(item.id)]}]")
        seen[str(item.id)] = index
    return dataset


def recorded_rows(path: Path, document: object) -> list[dict[str, Any]] | None:
    """Upstream prediction records as replay rows ({"id", "output"}): from a prediction file (a JSON list of
    {"id", "output"}, already parsed as `document`) or a folder of the chunk files upstream inference writes
    (<name>_<k>.json, gathered in the order of k); None when `path` is neither."""
    try:
        if path.is_dir():
            names = sorted({match.group(1) for entry in path.iterdir() if (match := _CHUNK.fullmatch(entry.name))})
            if not names:
                return None
            if path.name not in names and len(names) > 1:
                raise DataError(f"--tooleval-model replay:{path}: several prediction sets in one "
                                         f"folder ({', '.join(names)}); give the folder of one")
            files = chunk_records(path, path.name if path.name in names else names[0])
        elif isinstance(document, list) and not any(isinstance(item, dict) and "Instances" in item
                                                    for item in document):
            files = [(path, prediction_records(path, document))]
        else:
            return None
    except DataFileError as exc:
        raise DataError(f"--tooleval-model replay:{path}: {exc}") from None
    # upstream's gather keeps the last record of an id; two different outputs for one item are refused here
    recorded = [Recorded({"id": str(prediction.id), "output": prediction.output}, file, "item", index)
                for file, predictions in files for index, prediction in enumerate(predictions)]
    return unique_rows(recorded, f"--tooleval-model replay:{path}")
