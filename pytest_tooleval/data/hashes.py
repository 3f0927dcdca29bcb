"""sha256 of data files, each computed once and remembered by what a stat says of the file.

Checking a data folder against its pin reads some nine megabytes; a run checks it in every process (the
controller and each xdist worker). The digests are kept in one small JSON file in the cache folder, so after the
first run a check is a stat of each file. A file is read again when anything its stat shows changed: its size,
its modification time, its inode change time, its inode or its device. The modification time alone is not
enough: `touch -d` or `os.utime` sets it back after an edit. The change time cannot be set back (the kernel
sets it on every write and on every change of the other times), and a file replaced by a copy has a new inode.
The record is only a memo: it may be missing, damaged or unwritable (a read-only cache), and then the files are
simply hashed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from .files import FileRefused

RECORD_NAME = "file-hashes.json"
_CHUNK = 1 << 20


def file_sha256(path: Path) -> str:
    """The sha256 of the regular file at `path`; `FileRefused` (an OSError) for a FIFO, a device or a socket,
    which a read could wait on forever or never finish."""
    digest = hashlib.sha256()
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise FileRefused("not a regular file")
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def stamp(status: os.stat_result) -> list[int]:
    """What the record remembers of a file beside its digest: a digest is reused only while all of it holds."""
    return [status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino, status.st_dev]


def sha256_of(paths: Iterable[Path], record_folder: Path | None) -> dict[Path, str | None]:
    """The sha256 of each file (None for a file that is missing, cannot be read or is no regular file), reusing
    the record in `record_folder` for files whose `stamp` it saw, and adding the others to it."""
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
        if not stat.S_ISREG(status.st_mode):
            digests[path] = None
            continue
        now = stamp(status)
        seen = record.get(key)
        if isinstance(seen, list) and len(seen) == len(now) + 1 and seen[:-1] == now and isinstance(seen[-1], str):
            digests[path] = seen[-1]
            continue
        try:
            digests[path] = file_sha256(path)
        except OSError:
            digests[path] = None
            continue
        record[key] = [*now, digests[path]]
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
