"""Reading a data file: every failure is a DataError naming the file, and the line and column where there is one.

Every file the plugin reads whole (data, replay files, reports, YAML files, the bfcl-eval wheel) is read through
`read_bytes`: a regular file only, with a bound on its size. A FIFO, a device or a socket named where a file is
expected would make a plain read wait forever (a FIFO nobody writes) or never end (/dev/zero); they are refused
before they are opened, in one line.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DataError
from ..json_value import JSONObject, JSONValue

if TYPE_CHECKING:
    import yaml

#: The most bytes read from one JSON, JSON Lines or text file (data, replay files, reports): a replay of every
#: sample of a benchmark with its transcripts is tens of megabytes.
FILE_LIMIT = 256 << 20
#: The most bytes read from one YAML file (tooleval.yaml, a quarantine file, a suite file), which pyyaml parses
#: in Python at a few megabytes a second.
YAML_FILE_LIMIT = 16 << 20
_CHUNK = 1 << 16  # read past the size a stat gave: a file that grows, or one whose size reads as 0 (/proc)


class FileRefused(OSError):
    """A path the plugin was to read whole that is no regular file, or holds more than it reads. The text says
    which, without the path (the caller's line names it). An OSError, so that a caller reporting files it cannot
    read reports this one too."""


def read_bytes(path: Path, limit: int = FILE_LIMIT) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them, else `FileRefused`: a folder, a FIFO, a
    device or a socket is refused before it is opened, a file larger than `limit` before it is read (and one that
    grows past it while it is read, after). FileNotFoundError and other OSErrors as opening and reading raise
    them."""
    _check_regular(os.stat(path), limit)
    # O_NONBLOCK: should the path have become a FIFO since the stat, opening it does not wait for a writer
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(descriptor, "rb", buffering=0) as handle:
        status = os.fstat(handle.fileno())
        _check_regular(status, limit)  # what was opened is what was checked
        parts: list[bytes] = []
        total = 0
        while chunk := handle.read(min(max(status.st_size - total, _CHUNK), limit + 1 - total)):
            parts.append(chunk)  # the size the stat gave at once, then a chunk more until the end
            total += len(chunk)
            if total > limit:
                raise FileRefused(f"more than {_size(limit)}, the most the plugin reads from one file")
    return b"".join(parts)


def _check_regular(status: os.stat_result, limit: int) -> None:
    mode = status.st_mode
    if stat.S_ISDIR(mode):
        raise FileRefused("a folder, not a file")
    if not stat.S_ISREG(mode):
        kind = ("a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a character device" if stat.S_ISCHR(mode)
                else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
                else "a special file")
        raise FileRefused(f"{kind}, not a regular file")
    if status.st_size > limit:
        raise FileRefused(f"{status.st_size:,} bytes, more than {_size(limit)}, the most the plugin reads from "
                          "one file")


def _size(limit: int) -> str:
    return f"{limit >> 20} MiB" if limit >= 1 << 20 else f"{limit:,} bytes"


def read_text(path: Path, limit: int = FILE_LIMIT) -> str:
    """The UTF-8 text of the file at `path` (`read_bytes`, at most `limit` bytes), with universal newlines."""
    try:
        data = read_bytes(path, limit)
    except FileNotFoundError:
        raise DataError(f"{path}: file is missing") from None
    except FileRefused as exc:
        raise DataError(f"{path}: {exc}") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DataError(f"{path}:{line}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")  # as open() reads text: universal newlines


def read_json(path: Path) -> Any:  # exported to suites (suite.py), which read it as their file's shape
    return parse_json(read_text(path), path)


def parse_json(text: str, path: Path) -> JSONValue:
    """One JSON document read from `path`."""
    try:
        value: JSONValue = json.loads(text)
        return value
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}:{exc.colno}: malformed JSON ({exc.msg})") from None
    except (RecursionError, ValueError) as exc:
        raise DataError(f"{path}:{_unreadable_line(text, exc)}: {unreadable_json(exc)}") from None


def json_lines(text: str, path: Path) -> list[tuple[int, JSONValue]]:
    """The values of JSON Lines text read from `path`, with their line numbers (blank lines skipped)."""
    values: list[tuple[int, JSONValue]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            values.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}:{number}:{exc.colno}: malformed JSON ({exc.msg})") from None
        except (RecursionError, ValueError) as exc:
            raise DataError(f"{path}:{number}: {unreadable_json(exc)}") from None
    return values


def unreadable_json(exc: BaseException) -> str:
    """What JSON that the decoder gave up on holds, from the error it raised besides a JSONDecodeError: lists and
    objects nested deeper than the decoder's recursion reaches, or an integer longer than Python converts."""
    if isinstance(exc, RecursionError):
        return "lists and objects nested too deeply to read"
    if "integer string conversion" in str(exc):
        return f"an integer of more than {sys.get_int_max_str_digits():,} digits, longer than Python reads"
    return f"malformed JSON ({exc})"


# the decoder's recursion runs out some hundreds of levels down (where depends on the stack it starts from):
# a document's line named is where its nesting first passes this
_DEEP = 500
_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_STRING_OR_BRACKET = re.compile(_STRING + r"|[\[\]{}]")
_STRING_OR_NUMBER = re.compile(_STRING + r"|-?(\d+)(\.\d+)?([eE][-+]?\d+)?")


def _unreadable_line(text: str, exc: BaseException) -> int:
    """The line of a JSON document where the decoder gave up (`unreadable_json`): where the nesting first passes
    `_DEEP` levels, or the first integer longer than Python converts. Everything before it was read, so the scan
    never meets an unterminated string before it stops."""
    depth = 0
    if isinstance(exc, RecursionError):
        for match in _STRING_OR_BRACKET.finditer(text):
            token = match.group()
            depth += 1 if token in "[{" else -1 if token in "]}" else 0
            if depth > _DEEP:
                return text.count("\n", 0, match.start()) + 1
    else:
        digits = sys.get_int_max_str_digits()
        for match in _STRING_OR_NUMBER.finditer(text):
            whole, fraction, exponent = match.groups()
            if whole is not None and fraction is None and exponent is None and len(whole) > digits > 0:
                return text.count("\n", 0, match.start()) + 1
    return 1


def read_jsonl(path: Path) -> list[JSONObject]:
    """JSON Lines, one object a line (blank lines skipped)."""
    rows: list[JSONObject] = []
    for number, row in json_lines(read_text(path), path):
        if not isinstance(row, dict):
            raise DataError(f"{path}:{number}: expected a JSON object, got {type(row).__name__}")
        rows.append(row)
    return rows


#: Most levels of nested lists and mappings a YAML file may have: a deeper one is refused before it is built
#: (pyyaml builds it by recursion, and 5,000 levels of `[` end in a RecursionError).
YAML_MAX_DEPTH = 100
#: Most values the aliases of one YAML document may bring in, all uses together, each counting every value of its
#: anchor (aliases within it included). Ten aliases of ten aliases of ... (a "billion laughs" of a kilobyte) stay
#: small for pyyaml, which shares the values, but not for what walks them after: the schema check, the copies.
YAML_MAX_ALIASED = 100_000


@dataclass
class _Open:
    """A list or mapping of a YAML text being read: its anchor, and the values it holds so far (itself included)."""

    anchor: str | None
    values: int = 1


def yaml_bounds_problem(text: str, *, recursive_aliases: bool = False) -> tuple[int, str] | None:
    """Where (the line) and why a YAML text exceeds what may be loaded from it: nesting deeper than
    `YAML_MAX_DEPTH`, aliases bringing in more than `YAML_MAX_ALIASED` values, or (unless `recursive_aliases`,
    for a caller that refuses them itself) an alias inside its own anchor. None: it may be loaded.

    Read from the parser's events, before anything is built, with no recursion: only the sizes of the anchors so
    far are kept. Malformed YAML raises pyyaml's error, as loading it would.
    """
    import yaml

    open_collections: list[_Open] = []  # each list or mapping being read
    sizes: dict[str, int] = {}  # anchor -> the values it holds, itself included
    open_anchors: list[str] = []
    aliased = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        line = event.start_mark.line + 1 if event.start_mark is not None else 1
        size = 0
        if isinstance(event, yaml.DocumentStartEvent):
            sizes.clear()  # anchors belong to their document
            aliased = 0
        elif isinstance(event, yaml.AliasEvent):
            if event.anchor in open_anchors:
                if not recursive_aliases:
                    return line, f"the alias *{event.anchor} is inside its own anchor: the value would contain itself"
                size = 1
            else:
                size = sizes.get(event.anchor or "", 1)  # an undefined alias: the loader names it
            aliased += size
            if aliased > YAML_MAX_ALIASED:
                return line, (f"its aliases bring in more than {YAML_MAX_ALIASED:,} values (an alias bomb?): write "
                              "the values out, or use fewer aliases")
        elif isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            if len(open_collections) >= YAML_MAX_DEPTH:
                return line, f"lists and mappings are nested more than {YAML_MAX_DEPTH} levels deep"
            open_collections.append(_Open(event.anchor))
            if event.anchor:
                open_anchors.append(event.anchor)
            continue
        elif isinstance(event, yaml.CollectionEndEvent):
            closed = open_collections.pop()
            anchor, size = closed.anchor, closed.values
            if anchor:
                sizes[anchor] = size
                open_anchors.remove(anchor)
        elif isinstance(event, yaml.ScalarEvent):
            size = 1
            if event.anchor:
                sizes[event.anchor] = 1
        if open_collections:
            open_collections[-1].values += size
    return None


def read_yaml(path: Path, where: str) -> object:  # YAML's values (dates, int keys too): callers check the shape
    """A configuration file's YAML value; a usage error (one line starting with `where`) when it cannot be one.
    Safe loading only (the file builds plain values, never objects), and a key given twice is an error: YAML
    would keep the last one silently, so one of two settings (or quarantined ids) would be lost. Nesting and
    aliases are bounded (`yaml_bounds_problem`), so a hostile file is refused at once instead of exhausting the
    stack or the memory."""
    import yaml

    from ..errors import ToolevalUsageError

    try:
        text = read_bytes(path, YAML_FILE_LIMIT).decode("utf-8")
        bounds = yaml_bounds_problem(text)
        if bounds is not None:
            raise ToolevalUsageError(f"{where} (line {bounds[0]}): {bounds[1]}")
        return yaml.load(text, Loader=_unique_keys_loader())  # a SafeLoader: plain values only
    except FileNotFoundError:
        raise ToolevalUsageError(f"{where}: no such file") from None
    except FileRefused as exc:
        raise ToolevalUsageError(f"{where}: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ToolevalUsageError(f"{where}: cannot be read ({exc})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or exc
        if "given twice" in str(problem):
            raise ToolevalUsageError(f"{where}{line}: {problem}: keep one") from None
        raise ToolevalUsageError(f"{where}: not YAML{line}: {problem}") from None


def _unique_keys_loader() -> type[yaml.SafeLoader]:
    """yaml.SafeLoader that refuses a mapping key given twice, naming it and the line of its second use."""
    import yaml

    class UniqueKeys(yaml.SafeLoader):
        def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, object]:
            seen: set[object] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                if isinstance(key, (str, int, float, bool)) or key is None:
                    if key in seen:
                        raise yaml.constructor.ConstructorError(
                            None, None, f"the key {key!r} is given twice", key_node.start_mark)
                    seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return UniqueKeys
