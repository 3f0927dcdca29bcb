"""Recorded outputs, scored without asking any model (`--tooleval-model replay:PATH`).

The generic formats: a JSON Lines file of rows, a JSON array of rows, or a folder of such files; a row is an
object with an "id" (and "lang"/"language" when ids repeat across languages; otherwise it serves every
language). What else a row holds is the suite's business ({"result"} for single answers, {"messages"} for
agent trajectories, {"episode"} for ToolAlpaca). A suite may read its own upstream formats first
(`SuitePlugin.replay_rows`: ACEBench's result folders, ToolAlpaca's generation output, GPT4Tools' prediction
files and chunk folders); the file is parsed once either way.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    document = _json_document(path) if path.is_file() else None
    for reader in readers:
        rows = reader(path, document)
        if rows is not None:
            return ReplayStore(str(path), _index(path, enumerate(rows, start=1), None))
    store: dict[tuple[str | None, str], dict[str, Any]] = {}
    if path.is_file():
        numbered = enumerate(document, start=1) if isinstance(document, list) else _json_lines(path)
        store.update(_index(path, numbered, None))
    else:
        for file in sorted(path.rglob("*.json*")):
            file_document = _json_document(file)
            numbered = enumerate(file_document, start=1) if isinstance(file_document, list) else _json_lines(file)
            store.update(_index(file, numbered, None))
        if not store:
            raise ToolevalUsageError(f"--tooleval-model replay:{path_text}: no recorded rows in that folder")
    return ReplayStore(str(path), store)


def read_rows(path: Path, language: str | None = None) -> list[dict[str, Any]]:
    """The rows of one JSON Lines (or JSON array) file, checked, each with its "lang" (for suite readers)."""
    document = _json_document(path)
    numbered = enumerate(document, start=1) if isinstance(document, list) else _json_lines(path)
    return [{**row, "lang": language} if language and "lang" not in row and "language" not in row else row
            for row in _index(path, numbered, language).values()]


def _json_document(path: Path) -> Any:
    """The file's one JSON value when it holds a JSON array or object (not JSON Lines), else None."""
    text = path.read_text(encoding="utf-8")
    if not text.lstrip().startswith("["):
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}: malformed JSON ({exc.msg})") from None


def _json_lines(path: Path) -> list[tuple[int, Any]]:
    numbered = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                numbered.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}:{number}: malformed JSON ({exc.msg})") from None
    return numbered


def _index(path: Path, numbered: Any, language: str | None) -> dict[tuple[str | None, str], dict[str, Any]]:
    rows: dict[tuple[str | None, str], dict[str, Any]] = {}
    for number, row in numbered:
        if not isinstance(row, dict) or "id" not in row:
            raise DataError(f"{path}:{number}: expected an object with an \"id\"")
        rows[(row.get("lang", row.get("language", language)), str(row["id"]))] = row
    return rows
