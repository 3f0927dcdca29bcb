"""Reading a data file: every failure is a DataError naming the file, and the line and column where there is one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import DataError


def read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{path}: file is missing") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DataError(f"{path}:{line}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")  # as open() reads text: universal newlines


def read_json(path: Path) -> Any:
    return parse_json(read_text(path), path)


def parse_json(text: str, path: Path) -> Any:
    """One JSON document read from `path`."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}:{exc.colno}: malformed JSON ({exc.msg})") from None


def json_lines(text: str, path: Path) -> list[tuple[int, Any]]:
    """The values of JSON Lines text read from `path`, with their line numbers (blank lines skipped)."""
    values = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            values.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}:{number}:{exc.colno}: malformed JSON ({exc.msg})") from None
    return values


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """JSON Lines, one object a line (blank lines skipped)."""
    rows = []
    for number, row in json_lines(read_text(path), path):
        if not isinstance(row, dict):
            raise DataError(f"{path}:{number}: expected a JSON object, got {type(row).__name__}")
        rows.append(row)
    return rows


def read_yaml(path: Path, where: str) -> Any:
    """A configuration file's YAML value; a usage error (one line starting with `where`) when it cannot be one.
    Safe loading only (the file builds plain values, never objects), and a key given twice is an error: YAML
    would keep the last one silently, so one of two settings (or quarantined ids) would be lost."""
    import yaml

    from .errors import ToolevalUsageError

    try:
        return yaml.load(path.read_text(encoding="utf-8"), Loader=_unique_keys_loader())  # a SafeLoader
    except FileNotFoundError:
        raise ToolevalUsageError(f"{where}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ToolevalUsageError(f"{where}: cannot be read ({exc})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or exc
        if "given twice" in str(problem):
            raise ToolevalUsageError(f"{where}{line}: {problem}: keep one") from None
        raise ToolevalUsageError(f"{where}: not YAML{line}: {problem}") from None


def _unique_keys_loader() -> Any:
    """yaml.SafeLoader that refuses a mapping key given twice, naming it and the line of its second use."""
    import yaml

    class UniqueKeys(yaml.SafeLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                if isinstance(key, (str, int, float, bool)) or key is None:
                    if key in seen:
                        raise yaml.constructor.ConstructorError(
                            None, None, f"the key {key!r} is given twice", key_node.start_mark)
                    seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return UniqueKeys
