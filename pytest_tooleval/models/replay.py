"""Recorded outputs, scored without asking any model (`--tooleval-model replay:PATH`).

The generic formats: a JSON Lines file of rows, a JSON array of rows, or a folder of such files; a row is an
object with an "id" (and "lang"/"language" when ids repeat across languages; otherwise it serves every
language). What else a row holds is the suite's business ({"result"} for single answers, {"messages"} for
agent trajectories, {"episode"} for ToolAlpaca). A suite may read its own upstream formats first
(`Upstream.replay_rows`: ACEBench's result folders, ToolAlpaca's generation output, GPT4Tools' prediction
files and chunk folders); the file is parsed once either way.

One sample, one recorded answer: an id (in one language) recorded twice with different contents is refused,
naming the id and where each copy is, since either answer could be scored (`unique_rows`). Copies that are the
same row are read once: a result file written again over a resumed run repeats its rows exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..data.files import json_lines, parse_json, read_text
from ..errors import DataError, ToolevalUsageError
from ..json_value import JSONValue
from ..text import counted

# (path, parsed JSON document or None) -> rows in the suite's own format, or None when it is not one
ReplayReader = Callable[[Path, JSONValue], "list[Row] | None"]
Key = tuple[str | None, str]
#: a recorded row: JSON as read, or what a suite's reader made of its upstream format (tuples included)
Row = dict[str, object]


@dataclass(frozen=True)
class ReplayStore:
    source: str
    rows: dict[Key, Row]

    # what the row holds is the suite's business (the module's docstring): it reads it as it likes
    def lookup(self, language: str | None, sample_id: str) -> Row | None:
        return self.rows.get((language, sample_id)) or self.rows.get((None, sample_id))


@dataclass(frozen=True)
class Recorded:
    """One recorded row and where it was read: the file, and its line (JSON Lines) or item (a JSON array, from
    0); a suite's reader that does not say gives the row's place in what it read ("row", from 1)."""

    row: Row
    path: Path
    unit: str  # "line", "item" or "row"
    number: int

    @property
    def key(self) -> Key:
        language = self.row.get("lang", self.row.get("language"))
        return (None if language is None else str(language), str(self.row["id"]))


def load_replay(path_text: str, readers: Sequence[ReplayReader] = ()) -> ReplayStore:
    path = Path(path_text).expanduser()
    where = f"--tooleval-model replay:{path_text}"
    if not path.exists():
        raise ToolevalUsageError(f"{where}: no such file or folder")
    folder = path.is_dir()
    text, document = (None, None) if folder else _read(path)  # a FIFO or a device is refused here, unopened
    for reader in readers:
        rows = reader(path, document)
        if rows is not None:
            return ReplayStore(str(path), _index(
                [Recorded(row, path, "row", number) for number, row in enumerate(rows, start=1)], where))
    if text is not None:
        recorded = _recorded(path, text, document)
    else:
        recorded = []
        for file in sorted(path.rglob("*.json*")):
            if not file.is_dir():
                recorded.extend(_recorded(file, *_read(file)))
        if not recorded:
            raise ToolevalUsageError(f"{where}: no recorded rows in that folder")
    return ReplayStore(str(path), _index(recorded, where))


def read_recorded(path: Path, language: str | None = None) -> list[Recorded]:
    """The rows of one JSON Lines (or JSON array) file, checked, each with where it was read and its "lang"
    (for suite readers, which pass what they gather to `unique_rows`)."""
    return [Recorded({**item.row, "lang": language}, item.path, item.unit, item.number)
            if language and "lang" not in item.row and "language" not in item.row else item
            for item in _recorded(path, *_read(path))]


def unique_rows(recorded: Iterable[Recorded], where: str) -> list[Row]:
    """The rows, one per id and language: a copy that repeats a row exactly is dropped, and two different rows
    for one id are a DataError naming the ids and where each copy is (`where` starts the line)."""
    return list(_index(recorded, where).values())


def _read(path: Path) -> tuple[str, JSONValue]:
    """The file's text, and its one JSON value when it holds a JSON array (not JSON Lines), else None."""
    text = read_text(path)
    return text, parse_json(text, path) if text.lstrip().startswith("[") else None


def _recorded(path: Path, text: str, document: JSONValue) -> list[Recorded]:
    """The rows of a JSON array document (numbered by item), or of the JSON Lines `text` (numbered by line)."""
    numbered: Sequence[tuple[int, object]]
    if isinstance(document, list):
        numbered, unit = list(enumerate(document)), "item"
    else:
        numbered, unit = json_lines(text, path), "line"
    recorded = []
    for number, row in numbered:
        if not isinstance(row, dict) or "id" not in row:
            place = f"{path}: item [{number}]" if unit == "item" else f"{path}:{number}"
            raise DataError(f"{place}: expected an object with an \"id\"")
        recorded.append(Recorded(row, path, unit, number))
    return recorded


def _index(recorded: Iterable[Recorded], where: str) -> dict[Key, Row]:
    copies: dict[Key, list[Recorded]] = {}
    for item in recorded:
        copies.setdefault(item.key, []).append(item)
    conflicts = {key: found for key, found in copies.items() if any(item.row != found[0].row for item in found)}
    if conflicts:
        raise DataError(_conflict_line(where, conflicts))
    return {key: found[0].row for key, found in copies.items()}


def _conflict_line(where: str, conflicts: dict[Key, list[Recorded]]) -> str:
    if len(conflicts) == 1:
        [(key, found)] = conflicts.items()
        head = f"id {_shown_id(key)} is recorded {_times(len(found))} with different contents ({_places(found)})"
    else:
        named = [f"{_shown_id(key)} ({_places(found)})" for key, found in list(conflicts.items())[:3]]
        more = f", and {len(conflicts) - 3} more" if len(conflicts) > 3 else ""
        head = (f"{counted(len(conflicts), 'id')} are recorded more than once with different contents: "
                f"{', '.join(named)}{more}")
    return f"{where}: {head}: keep one row per id (a row repeated exactly is read once)"


def _shown_id(key: Key) -> str:
    language, sample_id = key
    return repr(sample_id) if language is None else f"{sample_id!r} ({language})"


def _times(count: int) -> str:
    return {2: "twice", 3: "three times"}.get(count, f"{count} times")


def _places(found: list[Recorded]) -> str:
    """Where the copies are, file by file: `a.jsonl lines 1 and 4, b.jsonl line 2`."""
    by_file: dict[tuple[Path, str], list[int]] = {}
    for item in found:
        by_file.setdefault((item.path, item.unit), []).append(item.number)
    parts = []
    for (path, unit), numbers in by_file.items():
        shown = [f"[{number}]" if unit == "item" else str(number) for number in numbers]
        listed = shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"
        units = f"{unit}{'s' if len(shown) > 1 else ''}"
        parts.append(f"{units} {listed} of what its suite read from {path}" if unit == "row" else
                     f"{path} {units} {listed}")
    return ", ".join(parts)
