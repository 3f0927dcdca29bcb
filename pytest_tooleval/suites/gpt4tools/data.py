"""Loading the GPT4Tools test set and upstream prediction files (toolalpaca-gpt4tools §5.2, §5.3).

The test set is a JSON list of ``{"instruction", "input", "output", "id"}`` records. Upstream inference writes
JSON lists of ``{"id", "output"}`` records, split into chunk files ``<name>_<k>.json`` that its evaluator
gathers and de-duplicates by id before scoring.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from ...data.files import FileRefused, read_bytes, unreadable_json
from .metrics import uses_tool

__all__ = [
    "Case",
    "DataFileError",
    "Dataset",
    "Prediction",
    "chunk_records",
    "load_dataset",
    "load_prediction_chunks",
    "load_predictions",
    "prediction_records",
]

ItemId = StrictInt | StrictStr

_Record = TypeVar("_Record", bound=BaseModel)

# What each field must hold, for error messages that name it plainly (pydantic's union errors do not).
_EXPECTED = {
    "id": "an integer or a string",
    "instruction": "a string",
    "input": "a string",
    "output": "a string",
}
_EXPECTED_PREDICTION_OUTPUT = "a string or a non-empty list of strings"


class DataFileError(ValueError):
    """A GPT4Tools data or prediction file that cannot be used. The message names the file and the item."""

    def __init__(self, path: Path | str, problem: str, *, index: int | None = None, item_id: object = None) -> None:
        self.path = Path(path)
        self.index = index
        self.problem = problem
        where = str(self.path)
        if index is not None:
            where += f": item [{index}]"
            if item_id is not None:
                where += f" (id {item_id!r})"
        super().__init__(f"{where}: {problem}")


class Case(BaseModel):
    """One test-set item. ``output`` is the single gold assistant turn; ``input`` is unused upstream."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: ItemId
    instruction: StrictStr
    input: StrictStr
    output: StrictStr

    @property
    def uses_tool(self) -> bool:
        """Whether upstream scores this item as a tool step (else as a no-tool step)."""
        return uses_tool(self.output)


class Prediction(BaseModel):
    """One upstream prediction record. A list ``output`` is allowed; upstream scores its first element."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: ItemId
    output: StrictStr | Annotated[tuple[StrictStr, ...], Field(min_length=1)]

    @property
    def text(self) -> str:
        return self.output if isinstance(self.output, str) else self.output[0]


@dataclass(frozen=True)
class Dataset:
    """The test set, in file order."""

    cases: tuple[Case, ...]
    path: Path | None = None

    @classmethod
    def from_cases(cls, cases: Iterable[Case], path: Path | str | None = None) -> Dataset:
        """Build a dataset; ids must be unique (upstream would silently keep the last of duplicates)."""
        ordered = tuple(cases)
        index_of: dict[int | str, int] = {}
        for index, case in enumerate(ordered):
            if case.id in index_of:
                raise DataFileError(
                    path or "<cases>",
                    f"duplicate id (first used by item [{index_of[case.id]}])",
                    index=index,
                    item_id=case.id,
                )
            index_of[case.id] = index
        return cls(ordered, Path(path) if path is not None else None)

    def __len__(self) -> int:
        return len(self.cases)

    def __iter__(self) -> Iterator[Case]:
        return iter(self.cases)


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    return {dict: "object", list: "list", str: "string", bool: "boolean", int: "integer", float: "number"}.get(
        type(value), type(value).__name__
    )


def _describe_errors(exc: ValidationError, raw: object, expected: Mapping[str, str]) -> str:
    problems: dict[str, str] = {}
    for error in exc.errors():
        loc = error["loc"]
        if not loc:
            problems.setdefault("", f"expected a JSON object, found {_type_name(raw)}")
            continue
        field = str(loc[0])
        if error["type"] == "missing":
            problems.setdefault(field, f"{field}: missing")
        elif field in expected:
            found = raw.get(field) if isinstance(raw, dict) else None  # a field error comes from an object
            problems.setdefault(field, f"{field}: expected {expected[field]}, found {_type_name(found)}")
        else:
            problems.setdefault(field, f"{field}: {error['msg']}")
    return "; ".join(problems.values())


def _read_json_list(path: Path, what: str) -> list[object]:
    try:
        text = read_bytes(path).decode("utf-8")
    except FileRefused as exc:
        raise DataFileError(path, str(exc)) from None
    except OSError as exc:
        raise DataFileError(path, f"cannot read the {what} file ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise DataFileError(path, f"not UTF-8 text (byte {exc.start})") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataFileError(path, f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from exc
    except (RecursionError, ValueError) as exc:  # nested too deeply, an integer too long
        raise DataFileError(path, unreadable_json(exc)) from None
    if not isinstance(data, list):
        raise DataFileError(path, f"expected a JSON list of {what} records, found a JSON {_type_name(data)}")
    return data


def _validate_all(
    path: Path, raw_items: Sequence[object], model: type[_Record], expected: Mapping[str, str]
) -> list[_Record]:
    records: list[_Record] = []
    for index, raw in enumerate(raw_items):
        try:
            records.append(model.model_validate(raw))
        except ValidationError as exc:
            item_id = raw.get("id") if isinstance(raw, dict) else None
            raise DataFileError(path, _describe_errors(exc, raw, expected), index=index, item_id=item_id) from None
    return records


def load_dataset(path: Path | str) -> Dataset:
    """Load and validate a GPT4Tools test-set file (a JSON list of test items).

    Raises:
        DataFileError: unreadable file, invalid JSON, a bad item (named by position and id) or a repeated id.
    """
    path = Path(path)
    raw_items = _read_json_list(path, "test-set")
    return Dataset.from_cases(_validate_all(path, raw_items, Case, _EXPECTED), path)


def _dedupe(predictions: Iterable[Prediction]) -> tuple[Prediction, ...]:
    # As upstream's gather step: one record per id, at the id's first position, holding its last record.
    by_id: dict[int | str, Prediction] = {}
    for prediction in predictions:
        by_id[prediction.id] = prediction
    return tuple(by_id.values())


def _load_prediction_records(path: Path) -> list[Prediction]:
    raw_items = _read_json_list(path, "prediction")
    return _validate_all(path, raw_items, Prediction, {"id": _EXPECTED["id"], "output": _EXPECTED_PREDICTION_OUTPUT})


def load_predictions(path: Path | str) -> tuple[Prediction, ...]:
    """Load one upstream prediction file (a JSON list of ``{"id", "output"}``), de-duplicated by id."""
    return _dedupe(_load_prediction_records(Path(path)))


def prediction_records(path: Path, items: Sequence[object]) -> list[Prediction]:
    """The records of a prediction file already parsed (the replay reader's), validated, in file order (the
    replay reader refuses an id recorded twice with different outputs, where upstream keeps the last)."""
    expected = {"id": _EXPECTED["id"], "output": _EXPECTED_PREDICTION_OUTPUT}
    return _validate_all(path, items, Prediction, expected)


def load_prediction_chunks(folder: Path | str, name: str, num_chunks: int | None = None) -> tuple[Prediction, ...]:
    """Gather the chunk files upstream inference writes, ``<folder>/<name>_<k>.json``, in order of k.

    Args:
        folder: the folder holding the chunks (upstream's ``<save_path>/<name>``).
        name: upstream's save name.
        num_chunks: how many chunks to expect (k = 0 .. num_chunks-1, all required); None takes every
            ``<name>_<k>.json`` present.

    Records are de-duplicated by id as upstream's gather step does: the last record of an id wins.
    """
    return _dedupe([record for _, records in chunk_records(folder, name, num_chunks) for record in records])


def chunk_records(folder: Path | str, name: str, num_chunks: int | None = None) -> list[tuple[Path, list[Prediction]]]:
    """Each chunk file of `load_prediction_chunks` with its validated records, in order of k, none dropped."""
    folder = Path(folder)
    # GPT4Tools bug not reproduced: upstream's glob `_[0-(K-1)].json` misses chunks 10 and up
    # (toolalpaca-gpt4tools §5.3, §6.2); every chunk is read here.
    if num_chunks is None:
        pattern = re.compile(re.escape(name) + r"_(\d+)\.json")
        found = sorted(
            (int(match.group(1)), entry)
            for entry in (folder.iterdir() if folder.is_dir() else ())
            if (match := pattern.fullmatch(entry.name))
        )
        if not found:
            raise DataFileError(folder, f"no prediction chunks named {name}_<k>.json")
        paths = [entry for _, entry in found]
    else:
        if num_chunks < 1:
            raise ValueError(f"num_chunks must be at least 1, got {num_chunks}")
        paths = [folder / f"{name}_{k}.json" for k in range(num_chunks)]
        missing = [p.name for p in paths if not p.is_file()]
        if missing:
            raise DataFileError(folder, f"missing prediction chunks: {', '.join(missing)}")
    return [(path, _load_prediction_records(path)) for path in paths]
