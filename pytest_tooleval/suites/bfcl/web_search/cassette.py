"""Cassettes: what each web search call of a live run returned, written down as it ran and answered again offline
(docs/bfcl.md#web-search).

A cassette is a JSON Lines file, one line a call: its scope (the sample's id), method, arguments (all of them,
defaults filled in, `api.canonical`), settings, occurrence (how many calls of the same key came before it in the
scope) and either what the method returned (`returned`) or the text of the exception it raised (`raised`). It
holds what the method returned, not what the services sent: a replay is then the recorded run's results to the
character whatever the versions of the libraries that made them, and needs none of them.

A replay answers a call from the line of the same scope, key and occurrence; failing that, from the first line
of the same key (another sample made the same call: the web's answer at the time of the recording); failing that,
the call is a miss. A miss returns `{"error": ...}` saying so, the form in which bfcl's methods report a page or
search that could not be had, so the model goes on as it would after a failed request; the counts tell a replay
that was exact from one that was not. `strict` makes a miss an error of the sample instead.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from ....errors import DataError, SampleError, ToolevalError
from ....json_value import JSONValue
from .api import Backend, Call, call_key, canonical

try:  # POSIX: lines appended by several processes (xdist workers) are written whole, one after another
    import fcntl
except ImportError:  # pragma: no cover - Windows: one process writes at a time there
    fcntl = None  # type: ignore[assignment]

PREFIX = "cassette:"


class CassetteMiss(SampleError):
    """A strict replay was asked a call the cassette does not hold."""


class RecordedError(Exception):
    """An exception the method raised in the recorded run: its text is the recorded one, and so is the result."""


def cassette_label(path: Path) -> str:
    """`cassette:<sha256 of the file>`, the label of the figures a replay of it makes."""
    return PREFIX + hashlib.sha256(path.read_bytes()).hexdigest()


def miss_result(call: Call) -> dict[str, str]:
    """What a miss returns to the model."""
    return {"error": f"No recorded result for {call.describe()} in the cassette: the recorded run made no such call, "
                     "so none can be replayed."}


class Recorder:
    """A live backend whose every answer is also appended to the cassette at `path` (made if missing).

    Exceptions of the plugin's own (an exhausted retry, a missing key) go through unrecorded: they are no answer.
    """

    def __init__(self, live: Backend, path: Path) -> None:
        self._live = live
        self._path = path
        self._lock = threading.Lock()

    @property
    def label(self) -> str:
        return self._live.label  # the figures are the live service's; the cassette's label is for its replays

    def answer(self, call: Call) -> object:
        try:
            value = self._live.answer(call)
        except ToolevalError:
            raise
        except Exception as exc:
            self._write(call, {"raised": str(exc), "type": type(exc).__name__})
            raise
        self._write(call, {"returned": value})
        return value

    def _write(self, call: Call, outcome: dict[str, object]) -> None:
        line = json.dumps({"scope": call.scope, "method": call.method, "arguments": canonical(call.arguments),
                           "settings": canonical(call.settings), "occurrence": call.occurrence, **outcome},
                          allow_nan=True) + "\n"  # ASCII: a lone surrogate from a service's JSON is kept too
        with self._lock, _locked(self._path) as out:
            out.write(line.encode("ascii"))


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[BinaryIO]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as out:
        if fcntl is not None:
            fcntl.flock(out, fcntl.LOCK_EX)
        try:
            yield out
            out.flush()
        finally:
            if fcntl is not None:
                fcntl.flock(out, fcntl.LOCK_UN)


@dataclass
class ReplayCounts:
    """How a replay went: calls answered by their own line, by another sample's line of the same call, or not."""

    exact: int = 0
    borrowed: int = 0
    missed: list[str] = field(default_factory=list)  # the calls, as Call.describe writes them

    @property
    def is_exact(self) -> bool:
        return not self.borrowed and not self.missed


class Cassette:
    """Answers calls from a recorded run's cassette, offline.

    Raises:
        DataError: the file cannot be read, or a line is not a recorded call.
    """

    def __init__(self, path: Path, *, strict: bool = False) -> None:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise DataError(f"{path}: cannot read the web search cassette ({exc.strerror or exc})") from None
        self._label = PREFIX + hashlib.sha256(data).hexdigest()
        self._strict = strict
        self._exact: dict[tuple[str, str, int], dict[str, JSONValue]] = {}
        self._first: dict[str, dict[str, JSONValue]] = {}
        self.counts = ReplayCounts()
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                raise DataError(f"{where}: not a recorded call (malformed JSON)") from None
            scope, method, occurrence = (record.get(name) if isinstance(record, dict) else None
                                         for name in ("scope", "method", "occurrence"))
            if not (isinstance(scope, str) and isinstance(method, str) and type(occurrence) is int
                    and ("returned" in record) != ("raised" in record)
                    and isinstance(record.get("raised", ""), str) and "arguments" in record):
                raise DataError(f"{where}: not a recorded call (scope, method, arguments, occurrence, and returned "
                                "or raised)")
            key = call_key(method, record["arguments"], record.get("settings", {"dict": []}))
            self._exact.setdefault((scope, key, occurrence), record)  # a call recorded twice: the first
            self._first.setdefault(key, record)

    @property
    def label(self) -> str:
        return self._label

    def answer(self, call: Call) -> object:
        record = self._exact.get((call.scope, call.key, call.occurrence))
        if record is not None:
            self.counts.exact += 1
        else:
            record = self._first.get(call.key)
            if record is None:
                self.counts.missed.append(call.describe())
                if self._strict:
                    raise CassetteMiss(f"{call.scope}: the cassette ({self._label}) holds no {call.describe()}")
                return miss_result(call)
            self.counts.borrowed += 1
        if "raised" in record:
            raise RecordedError(record["raised"])
        return _fresh(record["returned"])


def _fresh(value: JSONValue) -> JSONValue:
    """A copy of a recorded value, so that what one call's caller does to it reaches no other call."""
    return copy.deepcopy(value)
