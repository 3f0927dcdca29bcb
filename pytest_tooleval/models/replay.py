"""Recorded outputs, scored without asking any model (`--tooleval-model replay:PATH`).

The generic formats: a JSON Lines file of rows, a JSON array of rows, or a folder of such files; a row is an
object with an "id" (and "lang"/"language" when ids repeat across languages; otherwise it serves every
language). What else a row holds is the suite's business ({"result"} for single answers, {"messages"} for
agent trajectories, {"episode"} for ToolAlpaca). A suite may read its own upstream formats first
(`SuitePlugin.replay_rows`: ACEBench's result folders, ToolAlpaca's generation output, GPT4Tools' prediction
files and chunk folders); the file is parsed once either way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..data.files import json_lines, parse_json, read_text
from ..errors import DataError, ToolevalUsageError

# (path, parsed JSON document or None) -> rows in the suite's own format, or None when it is not one
ReplayReader = Callable[[Path, Any], "list[dict[str, Any]] | None"]


@dataclass(frozen=True)
class ReplayStore:
    source: str
    rows: dict[tuple[str | None, str], dict[str, Any]]

    def lookup(self, language: str | None, sample_id: str) -> dict[str, Any] | None:
        return self.rows.get((language, sample_id)) or self.rows.get((None, sample_id))


def load_replay(path_text: str, readers: Sequence[ReplayReader] = ()) -> ReplayStore:
    path = Path(path_text).expanduser()
    if not path.exists():
        raise ToolevalUsageError(f"--tooleval-model replay:{path_text}: no such file or folder")
    folder = path.is_dir()  # anything else is read as a file: a FIFO or a device is refused, unopened
    document = None if folder else _json_document(path)
    for reader in readers:
        rows = reader(path, document)
        if rows is not None:
            return ReplayStore(str(path), _index(path, enumerate(rows, start=1), None))
    store: dict[tuple[str | None, str], dict[str, Any]] = {}
    if not folder:
        store.update(_index(path, _numbered(path, document), None))
    else:
        for file in sorted(path.rglob("*.json*")):
            if not file.is_dir():
                store.update(_index(file, _numbered(file, _json_document(file)), None))
        if not store:
            raise ToolevalUsageError(f"--tooleval-model replay:{path_text}: no recorded rows in that folder")
    return ReplayStore(str(path), store)


def read_rows(path: Path, language: str | None = None) -> list[dict[str, Any]]:
    """The rows of one JSON Lines (or JSON array) file, checked, each with its "lang" (for suite readers)."""
    numbered = _numbered(path, _json_document(path))
    return [{**row, "lang": language} if language and "lang" not in row and "language" not in row else row
            for row in _index(path, numbered, language).values()]


def _numbered(path: Path, document: Any) -> list[tuple[int, Any]]:
    """The rows of a JSON array document, or of the JSON Lines file at `path` (numbered by line)."""
    return list(enumerate(document, start=1)) if isinstance(document, list) else json_lines(read_text(path), path)


def _json_document(path: Path) -> Any:
    """The file's one JSON value when it holds a JSON array (not JSON Lines), else None."""
    text = read_text(path)
    return parse_json(text, path) if text.lstrip().startswith("[") else None


def _index(path: Path, numbered: Any, language: str | None) -> dict[tuple[str | None, str], dict[str, Any]]:
    rows: dict[tuple[str | None, str], dict[str, Any]] = {}
    for number, row in numbered:
        if not isinstance(row, dict) or "id" not in row:
            raise DataError(f"{path}:{number}: expected an object with an \"id\"")
        rows[(row.get("lang", row.get("language", language)), str(row["id"]))] = row
    return rows
