"""sha256 of data files, each computed once and remembered by its size and modification time.

Checking a data folder against its pin reads some nine megabytes; a run checks it in every process (the
controller and each xdist worker). The digests are kept in one small JSON file in the cache folder, so after the
first run a check is a stat of each file. A file whose size or mtime changed is read again. The record is only a
memo: it may be missing, damaged or unwritable (a read-only cache), and then the files are simply hashed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

RECORD_NAME = "file-hashes.json"
_CHUNK = 1 << 20


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def sha256_of(paths: Iterable[Path], record_folder: Path | None) -> dict[Path, str | None]:
    """The sha256 of each file (None for a file that is missing or cannot be read), reusing the record in
    `record_folder` for files whose size and mtime it saw, and adding the others to it."""
    record_path = record_folder / RECORD_NAME if record_folder is not None else None
    record = _read(record_path)
    changed = False
    digests: dict[Path, str | None] = {}
    for path in paths:
        key = str(path.absolute())
        try:
            status = path.stat()
        except OSError:
            digests[path] = None
            continue
        stamp = [status.st_size, status.st_mtime_ns]
        seen = record.get(key)
        if isinstance(seen, list) and len(seen) == 3 and seen[:2] == stamp and isinstance(seen[2], str):
            digests[path] = seen[2]
            continue
        try:
            digests[path] = file_sha256(path)
        except OSError:
            digests[path] = None
            continue
        record[key] = [*stamp, digests[path]]
        changed = True
    if changed and record_path is not None:
        _write(record_path, record)
    return digests


def _read(path: Path | None) -> dict[str, object]:
    if path is None:
        return {}
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _write(path: Path, record: dict[str, object]) -> None:
    """Replace the record whole (a temporary file renamed over it), so a concurrent reader sees the old or the new
    one; a process that cannot write it goes on without."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".file-hashes-", dir=path.parent)
    except OSError:
        return
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(record, out)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
