"""Recorded outputs, scored without asking any model (`--tooleval-model replay:PATH`).

Accepted inputs:
- a JSON Lines file of {"id", "result"} rows (normal/special/GPT4Tools: the raw output text), or
  {"id", "messages": [...], "user_turns": [...]} rows (agent trajectories); a row may name its
  "lang"/"language", otherwise it serves every language;
- ToolAlpaca's generation output (a JSON list of API records with `Instances`): one row per instance, id
  `<API Name>/<instruction index>`, the instance under "episode";
- an upstream ACEBench result folder, `result_all/result_<lang>/<model>/data_<category>_result.json`
  (give the model folder, a result_<lang> folder holding one model, or result_all itself).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DataError, ToolevalUsageError


@dataclass(frozen=True)
class ReplayStore:
    source: str
    rows: dict[tuple[str | None, str], dict[str, Any]]

    def lookup(self, language: str | None, sample_id: str) -> dict[str, Any] | None:
        return self.rows.get((language, sample_id)) or self.rows.get((None, sample_id))


def load_replay(path_text: str) -> ReplayStore:
    path = Path(path_text).expanduser()
    if not path.exists():
        raise ToolevalUsageError(f"--tooleval-model replay:{path_text}: no such file or folder")
    rows: dict[tuple[str | None, str], dict[str, Any]] = {}
    if path.is_file():
        _read_rows(path, None, rows)
    else:
        for file, language in _result_files(path):
            _read_rows(file, language, rows)
        if not rows:
            raise ToolevalUsageError(f"--tooleval-model replay:{path_text}: no data_*_result.json files found")
    return ReplayStore(str(path), rows)


def _result_files(folder: Path) -> list[tuple[Path, str | None]]:
    found = []
    for file in sorted(folder.rglob("*.json*")):
        language = next((part[len("result_"):] for part in file.parts if part in ("result_en", "result_zh")), None)
        found.append((file, language))
    return found


def _read_rows(path: Path, language: str | None, rows: dict[tuple[str | None, str], dict[str, Any]]) -> None:
    text = path.read_text(encoding="utf-8")
    stripped = text.lstrip()
    if stripped.startswith("["):  # a JSON array of rows (GPT4Tools prediction files)
        try:
            items = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}:{exc.lineno}: malformed JSON ({exc.msg})") from None
        numbered = list(enumerate(_generation_rows(items) if _is_generation_output(items) else items, start=1))
    else:
        numbered = []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    numbered.append((number, json.loads(line)))
                except json.JSONDecodeError as exc:
                    raise DataError(f"{path}:{number}: malformed JSON ({exc.msg})") from None
    for number, row in numbered:
        if not isinstance(row, dict) or "id" not in row:
            raise DataError(f"{path}:{number}: expected an object with an \"id\"")
        row_language = row.get("lang", row.get("language", language))
        rows[(row_language, str(row["id"]))] = row


def _is_generation_output(items: Any) -> bool:
    return isinstance(items, list) and bool(items) and all(
        isinstance(item, dict) and isinstance(item.get("Name"), str) and isinstance(item.get("Instances"), list)
        for item in items
    )


def _generation_rows(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """ToolAlpaca's generation step writes the eval file back with `Instances` aligned to `Instructions`
    (toolalpaca-gpt4tools §3.1); each instance is one episode record (§2.10)."""
    return [
        {"id": f"{item['Name']}/{index}", "episode": instance}
        for item in items
        for index, instance in enumerate(item["Instances"])
    ]
